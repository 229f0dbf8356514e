"""Command-line tools: `flask quiz check` and `flask quiz load`."""

import click
from flask.cli import AppGroup

from .attempts import record_version
from .bank import BankError, current_bank, load_bank, plural
from .config import questions_path

quiz_cli = AppGroup("quiz", help="Check and load the question bank.")


# Needs no app, so that a bank too broken to start the app with can still be checked.
@quiz_cli.command("check", with_appcontext=False)
@click.argument("path", required=False, type=click.Path(dir_okay=False))
def check(path):
    """Validate a question bank (default: the configured one); exit 1 listing every error."""
    path = path or questions_path()
    try:
        bank = load_bank(path)
    except BankError as error:
        for problem in error.errors:
            click.echo(problem, err=True)
        raise click.exceptions.Exit(1) from None
    quizzes = plural(len(bank.quizzes), "quiz", "quizzes")
    questions = sum(len(quiz.questions) for quiz in bank.quizzes.values())
    click.echo(f"{path}: OK, {quizzes}, {plural(questions, 'question', 'questions')}")


@quiz_cli.command("load")
def load():
    """Store the current version of every quiz now; starting an attempt would also do it."""
    for quiz in current_bank().quizzes.values():
        version = record_version(quiz)
        click.echo(f"{quiz.slug}: version {version.digest[:12]}, {len(quiz.questions)} questions")
