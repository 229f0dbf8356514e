"""A writer waiting for SQLite's write lock waits in Python (app/sqlite.py), where a gevent
worker serves its other requests meanwhile, and gets the lock once it is free; the file a
database URL names."""

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from app import sqlite


def connect(path):
    connection = sqlite3.connect(path, isolation_level="", **sqlite.CONNECT_ARGS)
    assert connection.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    return connection


@pytest.fixture
def two(tmp_path):
    """Two connections to one database with a table; the first holds the write lock."""
    path = tmp_path / "locks.db"
    holder, waiter = connect(path), connect(path)
    holder.execute("CREATE TABLE answers (n INTEGER)")
    holder.commit()
    holder.execute("INSERT INTO answers VALUES (1)")  # the write lock, until it commits
    yield holder, waiter
    holder.close()
    waiter.close()


def test_a_writer_sleeps_in_python_until_the_lock_is_free(two, monkeypatch):
    """SQLite's own busy handler is off (it sleeps in C, stopping a gevent worker); the waiter
    sleeps through time.sleep, which gevent makes a switch, and writes once the holder commits."""
    holder, waiter = two
    assert waiter.execute("PRAGMA busy_timeout").fetchone() == (0,)
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        if len(slept) == 3:
            holder.commit()

    monkeypatch.setattr(sqlite.time, "sleep", sleep)
    waiter.execute("INSERT INTO answers VALUES (2)")
    waiter.commit()
    assert slept == [sqlite.PAUSE] * 3
    assert waiter.execute("SELECT n FROM answers ORDER BY n").fetchall() == [(1,), (2,)]


def test_a_writer_gives_up_after_the_wait_and_leaves_the_queue(two, monkeypatch):
    """A lock never given back is "database is locked" after LOCK_WAIT_SECONDS, as before; the
    waiter's place in the queue is given up with its transaction, so the next writer waits."""
    holder, waiter = two
    monkeypatch.setattr(sqlite, "LOCK_WAIT_SECONDS", 0.05)
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        waiter.execute("INSERT INTO answers VALUES (2)")
    assert waiter.queued
    waiter.rollback()
    assert not waiter.queued and sqlite._QUEUE.acquire(blocking=False)
    sqlite._QUEUE.release()


def test_a_statement_inside_a_transaction_is_not_run_again(two):
    """Only a statement that opens its transaction is retried: one inside a transaction that
    already read fails at once, as SQLite's busy handler would, for the caller to roll back."""
    holder, waiter = two
    waiter.execute("BEGIN")
    waiter.execute("SELECT count(*) FROM answers").fetchall()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        waiter.execute("INSERT INTO answers VALUES (2)")
    assert not waiter.queued
    waiter.rollback()


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:////srv/quizwright/quiz.db",
        "sqlite:////srv/quiz#2/instance/quiz.db",
        "sqlite:///quiz.db?mode=rw#x",
        "sqlite:///quiz.db",
        "sqlite:///folder/quiz.db?timeout=5",
        "sqlite+pysqlite:////srv/a%20b.db",
        "sqlite://",
        "sqlite:///:memory:",
        "postgresql+psycopg://quizwright@localhost/quizwright",
    ],
)
def test_the_file_a_url_names_is_the_one_sqlalchemy_opens(url):
    """gunicorn's master reads the URL without SQLAlchemy: it finds the same file."""
    parsed = make_url(url)
    opened = parsed.database if parsed.get_backend_name() == "sqlite" else None
    expected = None if opened in (None, "", ":memory:") else Path("/instance") / opened
    assert sqlite.sqlite_path(url, "/instance") == expected
