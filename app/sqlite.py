"""SQLite as the app's connections use it: WAL, and a writer that waits for another's lock in
Python, where a gevent worker goes on serving its other requests meanwhile."""

import sqlite3
import threading
import time
from pathlib import Path
from urllib.parse import unquote

# As long as SQLite's own busy timeout waited before: then "database is locked" is an error.
LOCK_WAIT_SECONDS = 5.0
# Shorter than most writes here: a lock given back is taken again within a write's time.
PAUSE = 0.001
# One writer of this process waits for the lock at a time, the others queue behind it in
# order; without it a writer could lose the lock to newer ones for a second and more. A
# threading lock is gevent's in a gevent worker, which patches threading before the app loads.
_QUEUE = threading.Lock()


def _busy(error: sqlite3.Error) -> bool:
    """Plain SQLITE_BUSY: another connection holds the lock. Not its extended codes: a stale
    snapshot (SQLITE_BUSY_SNAPSHOT) stays stale however long one waits."""
    return getattr(error, "sqlite_errorcode", 0) == sqlite3.SQLITE_BUSY


def _waiting(run, connection: "WaitingConnection", args: tuple):
    """Run a statement; while another connection holds the lock it needs, queue and run it
    again until it gets it.

    SQLite's busy handler sleeps inside C, which gevent cannot switch away from: one request
    waiting there stopped every other request of its worker. time.sleep is gevent's in a gevent
    worker.
    """
    # Only a statement that opens its transaction may simply run again: SQLite gives back its
    # locks and snapshot when it is refused, as before calling its own busy handler. In a
    # transaction already under way it fails at once, as it always did.
    opens = not connection.in_transaction
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            return run(*args)
        except sqlite3.OperationalError as error:
            if not (opens and _busy(error)) or time.monotonic() > deadline:
                raise
        if not connection.queued:
            # Held until this connection's transaction ends (commit, rollback or close).
            if not _QUEUE.acquire(timeout=max(0.0, deadline - time.monotonic())):
                raise sqlite3.OperationalError("database is locked")
            connection.queued = True
            continue  # the writer ahead may have finished while this one queued
        time.sleep(PAUSE)


class WaitingCursor(sqlite3.Cursor):
    """A cursor whose statements wait for a lock held elsewhere without stopping the worker."""

    def execute(self, *args):
        return _waiting(super().execute, self.connection, args)

    def executemany(self, *args):
        return _waiting(super().executemany, self.connection, args)


class WaitingConnection(sqlite3.Connection):
    """A connection whose cursors are WaitingCursors; SQLite itself never waits (timeout 0)."""

    queued = False  # whether it holds this process's place in the queue

    def cursor(self, factory=WaitingCursor):
        return super().cursor(factory)

    # sqlite3's shortcuts would run the statement on a cursor without waiting.
    def execute(self, *args):
        return self.cursor().execute(*args)

    def executemany(self, *args):
        return self.cursor().executemany(*args)

    def _leave_queue(self) -> None:
        if self.queued:
            self.queued = False
            _QUEUE.release()

    def commit(self):
        try:
            return super().commit()
        finally:
            self._leave_queue()

    def rollback(self):
        try:
            return super().rollback()
        finally:
            self._leave_queue()

    def close(self):
        try:
            return super().close()
        finally:
            self._leave_queue()


# For create_engine: SQLAlchemy's SQLite dialect hands connect_args to sqlite3.connect.
CONNECT_ARGS = {"factory": WaitingConnection, "timeout": 0}


def tune(connection, _record) -> None:
    """WAL lets readers and one writer work at once; the rest keeps data safe. (How long a
    statement waits for a lock is CONNECT_ARGS's.)"""
    cursor = connection.cursor()
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def drop_read_only_connection(context) -> None:
    """SQLite opens a file it cannot write read-only, and the connection stays so after the
    disk or file is writable again: treat "readonly database" like a lost connection, so the
    pool replaces it and writing resumes without a restart."""
    error = context.original_exception
    if getattr(error, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_READONLY:
        context.is_disconnect = True
        # SQLAlchemy leaves a lost connection's cursor open, and SQLite defers closing a
        # connection with an open statement: its read-only -shm mapping, which every new
        # connection in this process shares, would outlive it until garbage collection.
        cursor = getattr(context.execution_context, "cursor", None)
        if cursor is not None:
            cursor.close()


# gunicorn's master reads this module on its own as it starts (gunicorn.conf.py): the standard
# library only, and nothing of the app package.
def sqlite_path(url: str, instance_path: str | Path) -> Path | None:
    """The database file a SQLAlchemy URL names (sqlite:///relative or sqlite:////absolute), or
    None when it is not a SQLite file."""
    scheme, _, rest = url.partition("://")
    # As SQLAlchemy reads it: after the host, which SQLite's URLs leave empty, up to any query;
    # a "#" is part of the path.
    database = unquote(rest.partition("/")[2].partition("?")[0])
    if scheme.split("+")[0] != "sqlite" or database in ("", ":memory:"):
        return None
    # Flask-SQLAlchemy takes a relative SQLite path inside the instance folder.
    return Path(instance_path) / database


def fold_write_ahead_log(database: Path) -> None:
    """Copy the write-ahead log into the database file and empty it, so that the file alone
    holds every committed answer; SQLite deletes the log when the last connection closes."""
    if not database.exists():
        return
    connection = sqlite3.connect(database, timeout=5)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
