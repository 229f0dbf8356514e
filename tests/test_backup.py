"""flask backup: a consistent copy of a live SQLite database that restores every attempt."""

import sqlite3
import subprocess
import threading

import pytest
import sqlalchemy

from app.bank import current_bank
from app.extensions import db
from app.models import Answer, Attempt

from helpers import POSTGRES_URL, SCHEMA, Student, make_app

sqlite_only = pytest.mark.skipif(
    POSTGRES_URL is not None, reason="SQLite's backup; PostgreSQL uses pg_dump (docs/deploy.md)"
)


@sqlite_only
def test_backup_while_serving_restores_every_attempt(tmp_path):
    """A backup taken while students answer opens as a sound database with their attempts."""
    app = make_app(tmp_path)
    students = [Student(app.test_client()) for _ in range(5)]
    for student in students:
        student.start()
        student.answer(1, "recompute")
    with app.app_context():
        quiz = current_bank().quizzes["gradient-checkpointing"]

    def keep_answering():
        for number, question in enumerate(quiz.questions[1:], 2):
            for student in students:
                student.answer(number, question.right_choice.id)

    worker = threading.Thread(target=keep_answering)
    worker.start()
    result = app.test_cli_runner().invoke(args=["backup", str(tmp_path / "backup.db")])
    worker.join()
    assert result.exit_code == 0, result.output
    assert result.output == f"Backed up 5 attempts to {tmp_path / 'backup.db'}\n"

    with sqlite3.connect(tmp_path / "backup.db") as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    restored = make_app(
        tmp_path / "restored", SQLALCHEMY_DATABASE_URI=f"sqlite:///{tmp_path / 'backup.db'}"
    )
    with restored.app_context():
        tokens = set(db.session.scalars(db.select(Attempt.token)))
        assert tokens == {student.token for student in students}
        # Whatever was saved by the time of the copy, and at least the answers from before it.
        assert 5 <= db.session.scalar(db.select(db.func.count(Answer.id))) <= 40


@sqlite_only
def test_backup_never_overwrites(tmp_path):
    """An existing file is left alone and the command says why."""
    app = make_app(tmp_path)
    (tmp_path / "taken.db").write_text("precious")
    result = app.test_cli_runner().invoke(args=["backup", str(tmp_path / "taken.db")])
    assert result.exit_code == 1 and "exists already" in result.output
    assert (tmp_path / "taken.db").read_text() == "precious"


@pytest.mark.skipif(POSTGRES_URL is None, reason="pg_dump needs TEST_DATABASE_URL")
def test_pg_dump_and_pg_restore_bring_back_every_attempt(tmp_path, postgres):
    """The backup and restore commands of docs/deploy.md, run for real."""
    app = make_app(tmp_path)
    students = [Student(app.test_client()) for _ in range(3)]
    for student in students:
        student.start()
        student.answer(1, "recompute")
    libpq = postgres.url.set(drivername="postgresql").render_as_string(hide_password=False)
    dump = tmp_path / "quizwright.dump"
    subprocess.run(
        ["pg_dump", "--format=custom", f"--schema={SCHEMA}", f"--file={dump}", libpq], check=True
    )
    restored = f"{SCHEMA}_restored"
    with postgres.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {restored}")
    target = postgres.url.set(drivername="postgresql", database=restored)
    try:
        subprocess.run(
            ["pg_restore", "--no-owner", f"--dbname={target.render_as_string(False)}", str(dump)],
            check=True,
        )
        engine = sqlalchemy.create_engine(target.set(drivername="postgresql+psycopg"))
        with engine.connect() as connection:
            tokens = set(
                connection.exec_driver_sql(f"SELECT token FROM {SCHEMA}.attempts").scalars()
            )
            answers = connection.exec_driver_sql(f"SELECT count(*) FROM {SCHEMA}.answers").scalar()
        engine.dispose()
    finally:
        with postgres.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {restored}")
    assert tokens == {student.token for student in students} and answers == 3
