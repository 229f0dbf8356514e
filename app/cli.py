"""Command-line tools for the whole app: `flask quiz check`, `reload`, `import`, `export` and
`new`, `flask backup` and `restore`; instructor accounts have theirs in auth."""

import json
import os
import sqlite3
from pathlib import Path

import click
from flask import Flask, current_app
from flask.cli import AppGroup, with_appcontext

from . import backups, formats
from .bank import UNFILLED, Bank, BankError, load_bank, plural
from .config import PROJECT_ROOT, questions_path
from .evidence import Evidence, evidence_for
from .extensions import db
from .models import Attempt, QuizRecord
from .releases import latest_generation, publish
from .sqlite import sqlite_path

quiz_cli = AppGroup("quiz", help="Check the question bank and serve it.")


def _checked(path, every_measurement=False) -> tuple[Bank, dict[str, Evidence]]:
    """The bank at path and its measurements (with `every_measurement`, each in evidence/, as
    app servers load them), or exit 1 listing every located problem."""
    try:
        bank = load_bank(path)
        return bank, evidence_for(bank, every=every_measurement)
    except BankError as error:  # EvidenceError too
        for problem in error.errors:
            click.echo(problem, err=True)
        raise click.exceptions.Exit(1) from None


# Needs no app, so that a bank too broken to start the app with can still be checked.
@quiz_cli.command("check", with_appcontext=False)
@click.argument("path", required=False, type=click.Path(dir_okay=False))
def check(path):
    """Validate a question bank (default: the configured one) and every measurement, named by
    it or not, as app servers load them all; exit 1 listing every error."""
    path = path or questions_path()
    bank, measured = _checked(path, every_measurement=True)
    quizzes = plural(len(bank.quizzes), "quiz", "quizzes")
    questions = sum(len(quiz.questions) for quiz in bank.quizzes.values())
    click.echo(f"{path}: OK, {quizzes}, {plural(questions, 'question', 'questions')}")
    for name, evidence in measured.items():
        click.echo(f"evidence/{name}.json: OK, {len(evidence.runs)} runs, {evidence.measured_on}")


def _refuse(error: BankError) -> None:
    """Exit 1 listing every located problem: nothing was written."""
    for problem in error.errors:
        click.echo(problem, err=True)
    click.echo("Nothing was written.", err=True)
    raise click.exceptions.Exit(1)


def _check_after_writing(path: Path) -> None:
    """`quiz check` on the bank just written; placeholders are reported as what to write next."""
    try:
        bank, _ = _checked_quietly(path)
    except BankError as error:
        if not all(problem.endswith(UNFILLED) for problem in error.errors):
            for problem in error.errors:
                click.echo(problem, err=True)
            raise click.exceptions.Exit(1) from None
        click.echo(
            f"{path}: `flask quiz check` lists {len(error.errors)} placeholders, and refuses this "
            "bank (`make reload` will not publish it) until they are written.",
            err=True,
        )
        return
    questions = sum(len(quiz.questions) for quiz in bank.quizzes.values())
    click.echo(
        f"{path}: OK, {plural(len(bank.quizzes), 'quiz', 'quizzes')}, "
        f"{plural(questions, 'question', 'questions')}. `make reload` publishes it."
    )


def _checked_quietly(path) -> tuple[Bank, dict[str, Evidence]]:
    bank = load_bank(path)
    return bank, evidence_for(bank)


BANK_OPTION = click.option(
    "--into",
    "bank_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The bank file to add to (default: the configured one, QUESTIONS_PATH).",
)


@quiz_cli.command("import", with_appcontext=False)
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format", "format_name", type=click.Choice(list(formats.FORMATS)),
    help="The source's format (default: guessed from its name and first bytes).",
)  # fmt: skip
@click.option(
    "--slug",
    help="The new quiz's address (default: the one a Quizwright export carries, else from its "
    "title).",
)
@click.option("--title", help="The new quiz's title (default: the source's, if it has one).")
@click.option("--description", help="What the quiz covers, shown before starting.")
@BANK_OPTION
@click.option(
    "--allow-gaps", is_flag=True,
    help="Write placeholders for what the source lacks; the bank is refused until they are "
    "written.",
)  # fmt: skip
@click.option("--dry-run", is_flag=True, help="Print the quiz's JSON instead of writing it.")
def import_command(source, format_name, slug, title, description, bank_path, allow_gaps, dry_run):
    """Add the multiple-choice questions of a GIFT, Moodle XML, Aiken or QTI file to the bank
    as a new quiz; list what was skipped and what the bank still needs, each located."""
    bank_path = bank_path or Path(questions_path())
    try:
        imported, bank = formats.import_quiz(
            source, bank_path, format_name=format_name, slug=slug, title=title,
            # A dry run reports what an import with placeholders would make, gaps and all.
            description=description, allow_gaps=allow_gaps or dry_run,
        )  # fmt: skip
    except BankError as error:
        _refuse(error)
    for skip in imported.skipped:
        click.echo(str(skip), err=True)
    for gap in imported.gaps:
        click.echo(f"{gap}: a placeholder to write", err=True)
    for note in imported.unmeasured + imported.unshown:
        click.echo(note, err=True)
    for note in imported.noted:  # a question's note names its place, the file included
        click.echo(note if note.startswith(f"{source}:") else f"{source}: {note}", err=True)
    quiz = imported.quiz
    counted = plural(len(quiz["questions"]), "question", "questions")
    skipped = plural(len(imported.skipped), "question", "questions")
    if dry_run:
        click.echo(json.dumps(quiz, indent=2, ensure_ascii=False))
        if imported.gaps and not allow_gaps:
            click.echo("Importing it needs the gaps above written in the source, or "
                       "--allow-gaps for placeholders to write in the bank.", err=True)  # fmt: skip
        click.echo(f"Dry run: {counted} would be quiz \"{quiz['slug']}\", {skipped} skipped; "
                   "nothing was written.", err=True)  # fmt: skip
        return
    formats.write_bank(bank_path, bank)
    done = f'Imported {counted} from {source} into {bank_path} as quiz "{quiz["slug"]}"'
    click.echo(f"{done}; {skipped} skipped.")
    _check_after_writing(bank_path)


@quiz_cli.command("export", with_appcontext=False)
@click.argument("slug")
@click.option("--format", "format_name", required=True, type=click.Choice(list(formats.FORMATS)))
@click.argument("target", metavar="FILE", type=click.File("wb", atomic=True))
@click.option(
    "--bank", "bank_path", type=click.Path(dir_okay=False, path_type=Path),
    help="The bank file to read (default: the configured one, QUESTIONS_PATH).",
)  # fmt: skip
def export_command(slug, format_name, target, bank_path):
    """Write one quiz of the bank in a format another system imports (FILE - for stdout)."""
    bank_path = bank_path or Path(questions_path())
    bank, _ = _checked(bank_path)
    if slug not in bank.quizzes:
        known = ", ".join(bank.quizzes)
        raise click.ClickException(f'{bank_path} has no quiz "{slug}"; it has {known}.')
    try:
        data = formats.export_quiz(bank.quizzes[slug], format_name)
    except BankError as error:
        _refuse(error)
    target.write(data)
    if dropped := formats.dropped(format_name, bank.quizzes[slug], files=False):
        click.echo(f"{format_name} has no room for {', '.join(dropped)}: they are not in "
                   f"{target.name}.", err=True)  # fmt: skip
    click.echo(f"Wrote {slug} as {format_name} to {target.name}.", err=True)


@quiz_cli.command("new", with_appcontext=False)
@click.argument("slug")
@BANK_OPTION
def new_command(slug, bank_path):
    """Add a skeleton quiz to the bank: one complete example question to rewrite."""
    bank_path = bank_path or Path(questions_path())
    try:
        bank = formats.new_quiz(bank_path, slug)
    except BankError as error:
        _refuse(error)
    formats.write_bank(bank_path, bank)
    # The skeleton is fit to serve, so the steps to make it the author's own are said here.
    click.echo(f'Added quiz "{slug}" to {bank_path} with one example question, about the bank '
               f"itself. Next: write your own title, description and questions in {bank_path}, "
               "then `flask quiz check`.")  # fmt: skip
    _check_after_writing(bank_path)


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
    try:
        generation, new = publish(bank)
    except BankError as error:
        for problem in error.errors:
            click.echo(f"{path}: {problem}", err=True)
        click.echo("Refused: the published bank is still the one served.", err=True)
        raise click.exceptions.Exit(1) from None
    for quiz in bank.quizzes.values():
        questions = plural(len(quiz.questions), "question", "questions")
        click.echo(f"{quiz.slug}: version {quiz.version[:12]}, {questions}")
    retired = db.select(QuizRecord.slug).where(
        QuizRecord.owner_id.is_(None), QuizRecord.archived_at.is_not(None)
    )
    for slug in db.session.scalars(retired.order_by(QuizRecord.slug)):
        click.echo(f"{slug}: no longer offered; its attempts and reports stay")
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

    url = db.engine.url.render_as_string(hide_password=False)
    database = sqlite_path(url, current_app.instance_path)
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
