"""A request that only read ends its transaction with COMMIT instead of ROLLBACK.

psycopg prepares a statement the fifth time a connection runs it, and forgets every prepared
statement at each rollback (the objects they name may have been dropped), which is how every
request ended. So on PostgreSQL each page's queries were planned anew each time: the question
page's one query for the attempt, seven tables joined, spent 2.5 ms of its 7 being planned
(bench/analysis.md). For a transaction that wrote nothing a commit is the same as a rollback, and
its statements stay prepared. Anything that may have written still ends with the rollback."""

from contextlib import suppress

from flask import Flask
from sqlalchemy import event
from sqlalchemy.exc import SQLAlchemyError

from .extensions import db

WROTE = "quizwright.wrote"
"""Set in a connection's info when its transaction runs a statement other than a SELECT."""


def init_app(app: Flask) -> None:
    with app.app_context():
        event.listen(db.engine, "begin", _forget_writes)
        event.listen(db.engine, "before_cursor_execute", _note_writes)
    # After Flask-SQLAlchemy's own teardown in registration, so before it when they run.
    app.teardown_appcontext(_commit_reads)


def _forget_writes(connection) -> None:
    connection.info.pop(WROTE, None)


def _note_writes(connection, cursor, statement, parameters, context, executemany) -> None:
    if statement.lstrip()[:6].upper() != "SELECT":
        connection.info[WROTE] = True


def _commit_reads(error: BaseException | None) -> None:
    """End a transaction that only read with a commit; leave any other to the rollback."""
    session = db.session()
    if error is not None or not session.in_transaction():
        return
    if session.new or session.dirty or session.deleted:  # changes not yet sent: not a read
        return
    if session.connection().info.get(WROTE):
        return
    # If the connection failed, Flask-SQLAlchemy's teardown that follows discards it.
    with suppress(SQLAlchemyError):
        session.commit()
