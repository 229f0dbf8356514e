"""SQLite backups that restore: a clean stop leaves one self-contained file, and a restore
checks the backup and replaces the database only while nothing has it open."""

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from .bank import plural
from .config import INSTANCE_PATH, from_environment
from .sqlite import fold_write_ahead_log, sqlite_path  # noqa: F401 (see configured_database)

# What makes a file a Quizwright database, whatever migration it was made at.
TABLES = {"alembic_version", "quiz_versions", "attempts", "answers"}


class RestoreError(Exception):
    """A restore refused; the message says why, and the database is unchanged."""


@dataclass(frozen=True)
class Backup:
    path: Path
    revision: str
    attempts: int


def configured_database() -> Path | None:
    """The SQLite file the environment's settings name."""
    # With fold_write_ahead_log, what a server started before gunicorn.conf.py's on_starting
    # calls as it stops: kept for the first restart after an upgrade from such a release.
    url = from_environment(str(INSTANCE_PATH))["SQLALCHEMY_DATABASE_URI"]
    return sqlite_path(url, INSTANCE_PATH)


def open_backup(path: Path, revisions: set[str]) -> tuple[sqlite3.Connection, Backup]:
    """The backup at path opened read-only, once it proves to be a sound Quizwright database."""
    if not path.is_file():
        raise RestoreError(f"{path} is not a file.")
    # Immutable: reading a backup must not create -wal or -shm files beside it.
    backup = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        # A file made to look like a backup must not run anything: no SQL function in its
        # schema is trusted, and triggers or views (Quizwright has none) refuse the file.
        backup.execute("PRAGMA trusted_schema=OFF")
        kinds = dict(backup.execute("SELECT name, type FROM sqlite_master"))
        if not set(kinds) >= TABLES:
            raise RestoreError(f"{path} is a SQLite database but not a Quizwright backup.")
        if made := sorted(name for name, kind in kinds.items() if kind in ("trigger", "view")):
            raise RestoreError(
                f"{path} is not a Quizwright backup: it has triggers or views ({', '.join(made)})."
            )
        revision = backup.execute("SELECT version_num FROM alembic_version").fetchone()
        if revision is None or revision[0] not in revisions:
            raise RestoreError(f"{path} was made by an unknown version of Quizwright.")
        if backup.execute("PRAGMA integrity_check").fetchall() != [("ok",)]:
            raise RestoreError(f"{path} is damaged: SQLite's integrity check fails.")
        attempts = backup.execute("SELECT count(*) FROM attempts").fetchone()[0]
    except sqlite3.DatabaseError as error:
        backup.close()
        raise RestoreError(f"{path} is not a SQLite database ({error}).") from None
    except RestoreError:
        backup.close()
        raise
    return backup, Backup(path, revision[0], attempts)


def restore(path: Path, database: Path, revisions: set[str]) -> Backup:
    """Replace the database with the backup at path, or raise RestoreError changing nothing."""
    backup, found = open_backup(path, revisions)
    try:
        if not database.parent.is_dir():
            raise RestoreError(f"{database.parent} does not exist.")
        live = sqlite3.connect(database, timeout=0)
        try:
            # Leaving WAL mode needs the only connection: any server or command that has the
            # database open makes this fail, before anything is written.
            live.execute("PRAGMA journal_mode=DELETE")
        except sqlite3.OperationalError:
            live.close()
            raise RestoreError(
                f"{database} is in use: stop the server (and any flask command) first."
            ) from None
        try:
            backup.backup(live)
            # The app's next connection turns WAL on again; until then no -wal or -shm exists.
            live.execute("PRAGMA journal_mode=DELETE")
        finally:
            live.close()
    finally:
        backup.close()
    return found


def describe(found: Backup, database: Path) -> str:
    """What a restore did, in one line."""
    attempts = plural(found.attempts, "attempt", "attempts")
    return f"Restored {attempts} from {found.path} into {database} (revision {found.revision})."
