"""On PostgreSQL, a request that only read ends its transaction with COMMIT, not ROLLBACK.

psycopg prepares a statement the fifth time a connection runs it, and forgets every prepared
statement when it sends a ROLLBACK (the objects they name may have been dropped), which is how
every request ended. So each page's queries were planned anew each time: the question page's
query for the attempt, seven tables joined, spent 2.5 ms of the page's 7 being planned
(bench/analysis.md). For a transaction that ran nothing but SELECTs a commit is the same as a
rollback. It is sent on the connection itself: the session's own rollback then finds nothing to
undo and sends nothing, and the session's objects stay as they were (a commit through the
session would expire them). A transaction that ran anything else ends with the rollback."""

from contextlib import suppress

from flask import Flask
from sqlalchemy import event
from sqlalchemy.exc import SQLAlchemyError

from .extensions import db

WROTE = "quizwright.wrote"
"""Set in a connection's info when its transaction runs a statement other than a SELECT."""
CONNECTION = "quizwright.connection"
"""The connection a session's transaction began on, in the session's info."""


def init_app(app: Flask) -> None:
    """Watch a psycopg engine's statements, and end each request that only read with COMMIT."""
    with app.app_context():
        if db.engine.dialect.driver != "psycopg":
            return
        event.listen(db.engine, "before_cursor_execute", _note_writes)
        event.listen(db.session, "after_begin", _remember_connection)
    # Registered after Flask-SQLAlchemy's teardown, so it runs before it.
    app.teardown_appcontext(_commit_reads)


def _note_writes(connection, cursor, statement, parameters, context, executemany) -> None:
    if statement.lstrip()[:6].upper() != "SELECT":
        connection.info[WROTE] = True


def _remember_connection(session, transaction, connection) -> None:
    """A session's transaction begins on a connection that has written nothing yet."""
    connection.info.pop(WROTE, None)
    session.info[CONNECTION] = connection


def _commit_reads(error: BaseException | None) -> None:
    """Commit a transaction that only read; leave any other to the session's rollback, and any
    connection that failed to the session's teardown, which follows and discards it."""
    session = db.session()
    connection = session.info.pop(CONNECTION, None)
    transaction = session.get_transaction()
    if error is not None or connection is None or transaction is None:
        return
    if not transaction.is_active or connection.closed or connection.invalidated:
        return
    with suppress(SQLAlchemyError, connection.dialect.loaded_dbapi.Error):
        if not connection.info.get(WROTE):
            connection.connection.dbapi_connection.commit()
