"""Command-line tools: `flask quiz check`/`load`, instructor accounts and `flask backup`."""

import sqlite3
from pathlib import Path

import click
from flask import current_app
from flask.cli import AppGroup, with_appcontext
from sqlalchemy.exc import IntegrityError

from .attempts import record_version
from .auth import (
    check_password,
    create_instructor,
    end_sessions,
    find_instructor,
    normal_username,
    set_password,
)
from .bank import BankError, current_bank, load_bank, plural
from .config import questions_path
from .evidence import evidence_for
from .extensions import db
from .models import Attempt, Instructor

quiz_cli = AppGroup("quiz", help="Check and load the question bank.")


# Needs no app, so that a bank too broken to start the app with can still be checked.
@quiz_cli.command("check", with_appcontext=False)
@click.argument("path", required=False, type=click.Path(dir_okay=False))
def check(path):
    """Validate a question bank (default: the configured one) and the measurements it names;
    exit 1 listing every error."""
    path = path or questions_path()
    try:
        bank = load_bank(path)
        measured = evidence_for(bank)
    except BankError as error:  # EvidenceError too
        for problem in error.errors:
            click.echo(problem, err=True)
        raise click.exceptions.Exit(1) from None
    quizzes = plural(len(bank.quizzes), "quiz", "quizzes")
    questions = sum(len(quiz.questions) for quiz in bank.quizzes.values())
    click.echo(f"{path}: OK, {quizzes}, {plural(questions, 'question', 'questions')}")
    for name, evidence in measured.items():
        click.echo(f"evidence/{name}.json: OK, {len(evidence.runs)} runs, {evidence.measured_on}")


@quiz_cli.command("load")
def load():
    """Store the current version of every quiz now; starting an attempt would also do it."""
    for quiz in current_bank().quizzes.values():
        version = record_version(quiz)
        click.echo(f"{quiz.slug}: version {version.digest[:12]}, {len(quiz.questions)} questions")


def _acceptable_password(password: str) -> str:
    problem = check_password(password)
    if problem:
        raise click.BadParameter(problem)
    return password


@click.command("create-instructor")
@click.argument("username")
@click.option("--admin", is_flag=True, help="May see every class and attempts without a class.")
@click.option("--password", help="Without it, you are asked twice, with the typing hidden.")
@with_appcontext
def create_instructor_command(username, admin, password):
    """Create an instructor account; there is no sign-up page."""
    name = normal_username(username)
    if not name or len(name) > 64:
        raise click.BadParameter("Use 1 to 64 characters.", param_hint="USERNAME")
    password = _asked_password(password)
    try:
        create_instructor(name, password, is_admin=admin)
    except IntegrityError:
        raise click.ClickException(f"An instructor named “{name}” already exists.") from None
    click.echo(f"Created {'admin' if admin else 'instructor'} “{name}”. They can log in at /login.")


def _asked_password(password: str | None) -> str:
    """The --password given, checked, or one typed twice with the typing hidden."""
    if password is None:
        return click.prompt(
            "Password", hide_input=True, confirmation_prompt=True, value_proc=_acceptable_password
        )
    return _acceptable_password(password)


def _instructor_named(username: str) -> Instructor:
    instructor = find_instructor(username)
    if instructor is None:
        raise click.ClickException(f"There is no instructor named “{normal_username(username)}”.")
    return instructor


def _log(event: str, username: str) -> None:
    """Log an account change from the command line, as audit() logs those made in the app."""
    current_app.logger.warning("%s: user=%r by=command line", event, username)


@click.command("set-password")
@click.argument("username")
@click.option("--password", help="Without it, you are asked twice, with the typing hidden.")
@with_appcontext
def set_password_command(username, password):
    """Give an instructor a new password and log them out everywhere."""
    instructor = _instructor_named(username)
    set_password(instructor, _asked_password(password))
    _log("password set", instructor.username)
    click.echo(f"Set a new password for “{instructor.username}”; their sessions have ended.")


@click.command("disable-instructor")
@click.argument("username")
@click.option("--enable", is_flag=True, help="Let a disabled instructor log in again.")
@with_appcontext
def disable_instructor_command(username, enable):
    """Stop an instructor logging in and end their sessions; their classes stay."""
    instructor = _instructor_named(username)
    instructor.is_active = enable
    end_sessions(instructor)
    _log("instructor enabled" if enable else "instructor disabled", instructor.username)
    if enable:
        click.echo(f"“{instructor.username}” can log in again.")
    else:
        click.echo(f"“{instructor.username}” can no longer log in; their sessions have ended.")


@click.command("backup")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@with_appcontext
def backup_command(path: Path):
    """Copy the SQLite database to PATH, consistently, while the app keeps serving."""
    if db.engine.url.get_backend_name() != "sqlite":
        raise click.ClickException(
            "flask backup copies SQLite databases; for PostgreSQL use pg_dump (docs/deploy.md)."
        )
    if path.exists():
        raise click.ClickException(f"{path} exists already; choose a new file name.")
    target = sqlite3.connect(path)
    try:
        with db.engine.connect() as connection:
            # SQLite's online backup copies a consistent snapshot, page by page, between writes.
            connection.connection.driver_connection.backup(target)
    finally:
        target.close()
    attempts = db.session.scalar(db.select(db.func.count(Attempt.id)))
    click.echo(f"Backed up {plural(attempts, 'attempt', 'attempts')} to {path}")
