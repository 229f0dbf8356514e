"""flask backup and restore: a consistent copy of a live SQLite database that restores exactly
what it held; a clean stop that leaves one self-contained file; pg_dump and pg_restore."""

import http.cookiejar
import re
import shutil
import sqlite3
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from contextlib import closing
from pathlib import Path

import psutil
import pytest
import sqlalchemy
from alembic.script import ScriptDirectory
from sqlalchemy.pool import NullPool

from app import create_app
from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import Answer, Attempt
from app.question_types import right_choice
from app.served import current_bank

from helpers import (
    POSTGRES_URL,
    SCHEMA,
    SLUG,
    Student,
    csrf_token,
    flask_command,
    gunicorn,
    make_app,
)

pytestmark = pytest.mark.postgres

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
                student.answer(number, right_choice(question).id)

    worker = threading.Thread(target=keep_answering)
    worker.start()
    result = app.test_cli_runner().invoke(args=["backup", str(tmp_path / "backup.db")])
    worker.join()
    assert result.exit_code == 0, result.output
    assert result.output == f"Backed up 5 attempts to {tmp_path / 'backup.db'}\n"
    # It holds names and password hashes: only its owner may read it.
    assert (tmp_path / "backup.db").stat().st_mode & 0o777 == 0o600

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


@sqlite_only
def test_backup_into_a_missing_folder_says_so(tmp_path):
    """A folder that does not exist is a one-line message, not a traceback."""
    app = make_app(tmp_path)
    result = app.test_cli_runner().invoke(args=["backup", str(tmp_path / "backups" / "q.db")])
    assert result.exit_code == 1
    assert result.output == f"Error: There is no folder {tmp_path / 'backups'}; make it first.\n"


@pytest.mark.skipif(POSTGRES_URL is None, reason="pg_dump needs TEST_DATABASE_URL")
def test_pg_dump_and_pg_restore_bring_back_every_attempt(tmp_path, postgres):
    """The backup and restore commands of docs/deploy.md, run for real: the restored database
    serves every attempt from before the dump, and none from after it."""
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
    late = Student(app.test_client())
    late.start(name="Late Larry")
    restored = f"{SCHEMA}_restored"
    with postgres.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {restored}")
    target = postgres.url.set(drivername="postgresql", database=restored)
    try:
        subprocess.run(
            ["pg_restore", "--no-owner", f"--dbname={target.render_as_string(False)}", str(dump)],
            check=True,
        )
        served_url = target.set(drivername="postgresql+psycopg")
        engine = sqlalchemy.create_engine(served_url)
        with engine.connect() as connection:
            tokens = set(
                connection.exec_driver_sql(f"SELECT token FROM {SCHEMA}.attempts").scalars()
            )
            answers = connection.exec_driver_sql(f"SELECT count(*) FROM {SCHEMA}.answers").scalar()
        engine.dispose()
        served = create_app({
            "SECRET_KEY": "restored",
            "SQLALCHEMY_DATABASE_URI": served_url.render_as_string(hide_password=False),
            "SQLALCHEMY_ENGINE_OPTIONS": {
                "poolclass": NullPool, "connect_args": {"options": f"-csearch_path={SCHEMA}"}
            },
        })  # fmt: skip
        browser = served.test_client()
        pages = {s.token: browser.get(s.results_url).status_code for s in [*students, late]}
        with served.app_context():
            db.engine.dispose()
    finally:
        with postgres.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {restored}")
    assert tokens == {student.token for student in students} and answers == 3
    assert pages == {**{student.token: 200 for student in students}, late.token: 404}


def take_first_question(base: str, name: str) -> str:
    """A student starts the quiz on a real server and answers question 1; the attempt's token."""
    browser = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    page = browser.open(f"{base}/quizzes/{SLUG}", timeout=30).read().decode()
    csrf = csrf_token(page)
    form = urllib.parse.urlencode({"csrf_token": csrf, "name": name}).encode()
    with browser.open(f"{base}/quizzes/{SLUG}", data=form, timeout=30) as question:
        token = question.geturl().split("/")[-3]
        choice = re.search(r'type="radio" value="([^"]+)"', question.read().decode()).group(1)
    form = urllib.parse.urlencode({"csrf_token": csrf, "choice": choice}).encode()
    browser.open(f"{base}/attempts/{token}/questions/1", data=form, timeout=30).read()
    return token


def stored_tokens(database: Path) -> set[str]:
    with closing(sqlite3.connect(database)) as connection:
        return {token for (token,) in connection.execute("SELECT token FROM attempts")}


def sqlite_file(tmp_path) -> str:
    """DATABASE_URL of the test's SQLite database, as `flask` commands are given it."""
    return f"sqlite:///{tmp_path / 'quiz.db'}"


def status(url: str) -> int:
    try:
        return urllib.request.urlopen(url, timeout=30).status
    except urllib.error.HTTPError as error:
        return error.code


@sqlite_only
def test_a_clean_stop_leaves_every_answer_in_quiz_db(tmp_path):
    """Once the server has stopped, copying quiz.db alone copies every attempt: nothing is left
    behind in the write-ahead log."""
    assert flask_command(sqlite_file(tmp_path), "db", "upgrade").returncode == 0
    with gunicorn(tmp_path, workers=2) as server:
        tokens = {take_first_question(server.url, f"Student {n}") for n in range(4)}
    assert not (tmp_path / "quiz.db-wal").exists()
    (tmp_path / "copy").mkdir()
    shutil.copy(tmp_path / "quiz.db", tmp_path / "copy" / "quiz.db")
    assert stored_tokens(tmp_path / "copy" / "quiz.db") == tokens


@sqlite_only
def test_a_stop_that_kills_a_stuck_worker_still_leaves_every_answer_in_quiz_db(tmp_path):
    """A worker killed at the stop never closes its connection, so no close folds what it
    wrote into the database file: the server's own exit does."""
    assert flask_command(sqlite_file(tmp_path), "db", "upgrade").returncode == 0
    stop_waits_a_second = {"GUNICORN_CMD_ARGS": "--graceful-timeout=1"}
    with gunicorn(tmp_path, workers=1, **stop_waits_a_second) as server:
        token = take_first_question(server.url, "Ada")
        # Stuck: it cannot answer the stop, and the server kills it when the wait is over.
        psutil.Process(server.pid).children()[0].suspend()
    assert not (tmp_path / "quiz.db-wal").exists()
    (tmp_path / "copy").mkdir()
    shutil.copy(tmp_path / "quiz.db", tmp_path / "copy" / "quiz.db")
    assert stored_tokens(tmp_path / "copy" / "quiz.db") == {token}


@sqlite_only
def test_restore_brings_back_exactly_what_the_backup_held(tmp_path):
    """docs/deploy.md's steps: back up while serving, write more, stop, restore, start. What
    was there before the backup is back, what came after is gone; while the server runs the
    restore is refused and changes nothing."""
    database, backup = tmp_path / "quiz.db", tmp_path / "backups" / "quiz-2026-12-01.db"
    backup.parent.mkdir()
    assert flask_command(sqlite_file(tmp_path), "db", "upgrade").returncode == 0
    with gunicorn(tmp_path, workers=2) as server:
        before = {take_first_question(server.url, name) for name in ("Ada", "Grace")}
        made = flask_command(sqlite_file(tmp_path), "backup", str(backup))
        assert made.stdout == f"Backed up 2 attempts to {backup}\n", made.stderr
        after = take_first_question(server.url, "Late Larry")
        refused = flask_command(sqlite_file(tmp_path), "restore", str(backup))
        assert refused.returncode == 1
        assert f"Error: {database} is in use: stop the server" in refused.stderr
        assert stored_tokens(database) == before | {after}

    restored = flask_command(sqlite_file(tmp_path), "restore", str(backup))
    assert restored.returncode == 0, restored.stderr
    assert sorted(path.name for path in tmp_path.glob("quiz.db*")) == ["quiz.db"]
    revision = ScriptDirectory(str(PROJECT_ROOT / "migrations")).get_current_head()
    assert restored.stdout == (
        f"Restored 2 attempts from {backup} into {database} (revision {revision}).\n"
    )
    assert flask_command(sqlite_file(tmp_path), "db", "upgrade").returncode == 0
    with gunicorn(tmp_path, workers=2) as server:
        for token in before:
            assert status(f"{server.url}/attempts/{token}/results") == 200
        assert status(f"{server.url}/attempts/{after}/results") == 404


@sqlite_only
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda path: path.write_text("precious notes"), "is not a SQLite database"),
        (
            lambda path: sqlite3.connect(path).execute("CREATE TABLE notes (text)"),
            "is a SQLite database but not a Quizwright backup",
        ),
        ("future", "was made by an unknown version of Quizwright"),
        ("trigger", "is not a Quizwright backup: it has triggers or views (persist)"),
    ],
)
def test_restore_refuses_what_is_not_a_backup(tmp_path, make, message):
    """A file that is not a Quizwright backup is refused, saying why, and changes nothing."""
    app = make_app(tmp_path)
    Student(app.test_client()).start()
    with app.app_context():
        db.engine.dispose()
    candidate = tmp_path / "candidate.db"
    if callable(make):
        make(candidate)
    else:  # a real backup, then from a future version, or with a trigger that would run later
        app.test_cli_runner().invoke(args=["backup", str(candidate)])
        head = ScriptDirectory(str(PROJECT_ROOT / "migrations")).get_current_head()
        with closing(sqlite3.connect(candidate)) as connection, connection:
            revision = "f00000000000" if make == "future" else head
            connection.execute("UPDATE alembic_version SET version_num = ?", (revision,))
            if make == "trigger":
                connection.execute(
                    "CREATE TRIGGER persist AFTER INSERT ON attempts BEGIN DELETE FROM answers; END"
                )
    tokens = stored_tokens(tmp_path / "quiz.db")
    result = app.test_cli_runner().invoke(args=["restore", str(candidate)])
    assert result.exit_code == 1
    assert (
        f"Error: {candidate} {message}" in result.output and "Nothing was changed." in result.output
    )
    assert stored_tokens(tmp_path / "quiz.db") == tokens and len(tokens) == 1
