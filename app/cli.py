"""Command-line tools for the whole app: `flask quiz check` and `reload`, `flask backup` and
`restore`; instructor accounts have theirs in auth."""

import os
import sqlite3
from pathlib import Path

import click
from flask import Flask, current_app
from flask.cli import AppGroup, with_appcontext

from . import backups
from .bank import Bank, BankError, load_bank, plural
from .config import PROJECT_ROOT, questions_path
from .evidence import Evidence, evidence_for
from .extensions import db
from .models import Attempt
from .releases import latest_generation, publish, released_bank

quiz_cli = AppGroup("quiz", help="Check the question bank and serve it.")


def _checked(path) -> tuple[Bank, dict[str, Evidence]]:
    """The bank at path and its measurements, or exit 1 listing every located problem."""
    try:
        bank = load_bank(path)
        return bank, evidence_for(bank)
    except BankError as error:  # EvidenceError too
        for problem in error.errors:
            click.echo(problem, err=True)
        raise click.exceptions.Exit(1) from None


# Needs no app, so that a bank too broken to start the app with can still be checked.
@quiz_cli.command("check", with_appcontext=False)
@click.argument("path", required=False, type=click.Path(dir_okay=False))
def check(path):
    """Validate a question bank (default: the configured one) and the measurements it names;
    exit 1 listing every error."""
    path = path or questions_path()
    bank, measured = _checked(path)
    quizzes = plural(len(bank.quizzes), "quiz", "quizzes")
    questions = sum(len(quiz.questions) for quiz in bank.quizzes.values())
    click.echo(f"{path}: OK, {quizzes}, {plural(questions, 'question', 'questions')}")
    for name, evidence in measured.items():
        click.echo(f"evidence/{name}.json: OK, {len(evidence.runs)} runs, {evidence.measured_on}")


@quiz_cli.command("reload")
@click.option(
    "--if-unpublished",
    is_flag=True,
    help="Publish only if nothing is published yet: a restart keeps serving what was published.",
)
def reload(if_unpublished):
    """Check the configured bank like `quiz check` and, if it is sound, have every worker serve
    it; a bad one is refused and the running version stays."""
    path = current_app.config["QUESTIONS_PATH"]
    if if_unpublished and (generation := latest_generation()) is not None:
        click.echo(f"Serving release {generation}; `make reload` publishes {path} after an edit.")
        return
    try:
        bank, _ = _checked(path)
    except click.exceptions.Exit:
        if latest_generation() is not None:
            click.echo("Refused: the published bank is still the one served.", err=True)
        raise
    generation, new = publish(bank)
    for quiz in bank.quizzes.values():
        questions = plural(len(quiz.questions), "question", "questions")
        click.echo(f"{quiz.slug}: version {quiz.version[:12]}, {questions}")
    for quiz in released_bank(generation).retired.values():
        click.echo(f"{quiz.slug}: no longer offered; its attempts and reports stay")
    if new:
        seconds = current_app.config["BANK_CHECK_SECONDS"]
        click.echo(f"Published {path} as release {generation}: every worker serves it within "
                   f"{seconds} seconds.")  # fmt: skip
    else:
        click.echo(f"Release {generation} already serves {path}; nothing changed.")


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
    if not path.parent.is_dir():
        raise click.ClickException(f"There is no folder {path.parent}; make it first.")
    # Names and password hashes: readable by the one who made the copy, not by everyone.
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    target = sqlite3.connect(path)
    try:
        with db.engine.connect() as connection:
            # SQLite's online backup copies a consistent snapshot, page by page, between writes.
            connection.connection.driver_connection.backup(target)
    finally:
        target.close()
    attempts = db.session.scalar(db.select(db.func.count(Attempt.id)))
    click.echo(f"Backed up {plural(attempts, 'attempt', 'attempts')} to {path}")


@click.command("restore")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@with_appcontext
def restore_command(path: Path):
    """Replace the SQLite database with a backup made by `flask backup`; stop the server first."""
    from alembic.script import ScriptDirectory  # the command line's, never a worker's 11 MB

    database = backups.sqlite_path(db.engine.url.render_as_string(hide_password=False))
    if database is None:
        raise click.ClickException(
            "flask restore restores SQLite databases; for PostgreSQL use pg_restore "
            "(docs/deploy.md)."
        )
    script = ScriptDirectory(str(PROJECT_ROOT / "migrations"))
    try:
        found = backups.restore(path, database, {r.revision for r in script.walk_revisions()})
    except backups.RestoreError as error:
        raise click.ClickException(f"{error} Nothing was changed.") from None
    click.echo(backups.describe(found, database))
    if found.revision != script.get_current_head():
        click.echo("It was made by an older version: `flask db upgrade` brings it up to date.")


def init_app(app: Flask) -> None:
    """Add the bank, backup and restore commands."""
    for command in (quiz_cli, backup_command, restore_command):
        app.cli.add_command(command)
