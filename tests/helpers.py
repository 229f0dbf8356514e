"""Helpers for the tests: an app on its own database, a student's browser, page reading."""

import atexit
import csv
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from jinja2 import BytecodeCache
from markupsafe import escape
from sqlalchemy import create_engine, event

from app import create_app
from app.authoring.imports import import_serializer
from app.config import PROJECT_ROOT, database_url_from
from app.extensions import db
from app.models import RateLimitCount
from app.ratelimits import counts_engine

SLUG = "gradient-checkpointing"


# Set TEST_DATABASE_URL to run the tests marked `postgres` on PostgreSQL, in a schema of this
# process's own: each pytest-xdist worker is a process, so each has its own.
POSTGRES_URL = os.environ.get("TEST_DATABASE_URL")
SCHEMA = f"quizwright_test_{os.getpid()}"
# A cheap hash for every app and server a test makes (PASSWORD_HASH_METHOD in README).
QUICK_HASH = "pbkdf2:sha256:1"


class Usage:
    """What the running test did with the database, read by conftest after it."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.wrote = False  # made an app or a server on the shared schema: rows to clear
        self.sql = False  # an app it made ran a query after its tables were made
        self.apps: list = []  # apps it made, whose connections are closed after it

    def note_sql(self, *_):
        self.sql = True


USAGE = Usage()


class SharedBytecode(BytecodeCache):
    """Compiled templates kept across the apps of a run: each app has its own Jinja
    environment, which would compile every template it renders again (a tenth of a second
    each for the big ones)."""

    def __init__(self):
        self.compiled: dict[str, bytes] = {}

    def load_bytecode(self, bucket):
        if bucket.key in self.compiled:
            bucket.bytecode_from_string(self.compiled[bucket.key])

    def dump_bytecode(self, bucket):
        self.compiled[bucket.key] = bucket.bytecode_to_string()


TEMPLATES = SharedBytecode()
BUILT: set[str] = set()
"""PostgreSQL schemas whose tables this process has made: made once, emptied after each test."""


def database(tmp_path, schema: str = SCHEMA) -> dict:
    """Settings for the test database: a SQLite file, or a PostgreSQL schema of this run's."""
    if not POSTGRES_URL:
        return {"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'quiz.db'}"}
    if schema == SCHEMA:
        USAGE.wrote = True
    return {
        "SQLALCHEMY_DATABASE_URI": database_url_from(POSTGRES_URL),
        "SQLALCHEMY_ENGINE_OPTIONS": {
            # A pool, closed after the test: a connection per request would cost a connect each.
            "pool_size": 5,
            "max_overflow": 25,
            "connect_args": {"options": f"-csearch_path={schema}"},
        },
    }


def make_app(tmp_path, schema: str = SCHEMA, **config):
    """An app on the test database, with the schema made from the models; a PostgreSQL schema
    gets its tables once and is emptied after each test (conftest.py)."""
    settings = {
        "TESTING": True,
        "SECRET_KEY": "test secret",
        "PASSWORD_HASH_METHOD": QUICK_HASH,
        # Query counts stay per page: a test that reloads the bank sets 0 to see it at once.
        "BANK_CHECK_SECONDS": 3600,
        **database(tmp_path, schema),
        **config,
    }
    own_file = tmp_path / "quiz.db"
    copied = not POSTGRES_URL and "SQLALCHEMY_DATABASE_URI" not in config and not own_file.exists()
    if copied:
        shutil.copyfile(empty_database(), own_file)
    app = create_app(settings)
    app.jinja_env.bytecode_cache = TEMPLATES
    USAGE.apps.append(app)
    with app.app_context():
        shared = db.engine.dialect.name == "postgresql" and "SQLALCHEMY_DATABASE_URI" not in config
        if not copied and (not shared or schema not in BUILT):
            db.create_all()
            stamp(db.engine)
        if shared:
            BUILT.add(schema)
        event.listen(db.engine, "before_cursor_execute", USAGE.note_sql)
    return app


@cache
def empty_database() -> Path:
    """A SQLite file with the models' tables, stamped, made once a process: each test's app
    starts from a copy, a millisecond where making the tables costs fifty."""
    folder = tempfile.mkdtemp(prefix="quizwright-empty-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = Path(folder) / "quiz.db"
    engine = create_engine(f"sqlite:///{path}")
    db.metadata.create_all(engine)
    stamp(engine)
    engine.dispose()
    return path


def stamp(engine) -> None:
    """Record the models' migration, as `flask db upgrade` would have: tables made from the
    models are that schema, and /healthz and the error pages check it."""
    from app.health import SCHEMA_REVISION

    with engine.begin() as connection:
        connection.exec_driver_sql(
            "CREATE TABLE IF NOT EXISTS alembic_version "
            "(version_num VARCHAR(32) NOT NULL PRIMARY KEY)"
        )
        connection.exec_driver_sql("DELETE FROM alembic_version")
        connection.exec_driver_sql(
            f"INSERT INTO alembic_version (version_num) VALUES ('{SCHEMA_REVISION}')"
        )


@contextmanager
def shared_schema(name: str):
    """A PostgreSQL schema for a world several tests share, which the per-test clearing of the
    test schema leaves alone; dropped afterwards. On SQLite the world's own file is enough."""
    if not POSTGRES_URL:
        yield SCHEMA
        return
    schema = f"{SCHEMA}_{name}"
    engine = create_engine(database_url_from(POSTGRES_URL))
    with engine.begin() as connection:
        connection.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        connection.exec_driver_sql(f"CREATE SCHEMA {schema}")
    try:
        yield schema
    finally:
        BUILT.discard(schema)
        with engine.begin() as connection:
            connection.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        engine.dispose()


def empty_rows(engine, keep=()) -> None:
    """Delete every row of every table but those named in `keep`, ids starting again at 1."""
    tables = [table for table in db.metadata.sorted_tables if table.name not in keep]
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            # DELETE, not TRUNCATE: a test leaves a few rows, and TRUNCATE gives each of the
            # tables new files, 100 ms a test where deleting the rows takes 15.
            connection.exec_driver_sql(
                "SET LOCAL lock_timeout = '20s';"
                + "".join(f'DELETE FROM "{table.name}";' for table in reversed(tables))
            )
            _count_ids_on(connection, tables)
            return
        for table in reversed(tables):
            connection.execute(table.delete())
        if connection.exec_driver_sql(
            "SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'"
        ).first():
            connection.exec_driver_sql("DELETE FROM sqlite_sequence")


def all_rows(app) -> dict:
    """Every row of every table, typed as the models read them: for `put_rows` into another."""
    with app.app_context(), db.engine.connect() as connection:
        return {
            table: [row._asdict() for row in connection.execute(table.select())]
            for table in db.metadata.sorted_tables
        }


def put_rows(app, rows: dict) -> None:
    """Copy `all_rows` of another app into this one's empty tables, ids and all; on PostgreSQL each
    table's counter moves past the ids copied."""
    with app.app_context(), db.engine.begin() as connection:
        for table, found in rows.items():
            if found:
                connection.execute(table.insert(), found)
        if db.engine.dialect.name == "postgresql":
            _count_ids_on(connection, [table for table, found in rows.items() if found])


def _count_ids_on(connection, tables) -> None:
    """PostgreSQL: each table's id counter to just past its highest id (1 in an empty table),
    in one round trip."""
    connection.exec_driver_sql("".join(
        f"SELECT setval(pg_get_serial_sequence('\"{table.name}\"', 'id'), "
        f"coalesce(max(id), 0) + 1, false) FROM \"{table.name}\";"
        for table in tables
        if "id" in table.c
    ))  # fmt: skip


def bank_with_copies(tmp_path, *slugs: str) -> str:
    """The path of a question bank holding the seed quiz and a copy of it under each slug,
    titled after it ("second-quiz": "Second Quiz")."""
    bank = json.loads((PROJECT_ROOT / "questions.json").read_text())
    seed = bank["quizzes"][0]
    for slug in slugs:
        bank["quizzes"].append({**seed, "slug": slug, "title": slug.replace("-", " ").title()})
    path = tmp_path / "copies.json"
    path.write_text(json.dumps(bank))
    return str(path)


def record_tables():
    """Every table but the rate-limit counts, which any counted request changes, refused or not."""
    return [table for table in db.metadata.sorted_tables if table is not RateLimitCount.__table__]


def stored_rows(app) -> dict[str, list[dict]]:
    """Every row of every table but the rate limits, in primary key order, as the driver gives
    them: "nothing changed" is equality of two. Read through one raw cursor (one query on
    PostgreSQL), since the access table and the fuzz read them around thousands of requests and
    the ORM's overhead per statement was half of their time."""
    with app.app_context():
        quote = db.engine.dialect.identifier_preparer.quote
        connection = db.engine.raw_connection()
        try:
            cursor, tables = connection.cursor(), record_tables()
            orders = [", ".join(quote(c.name) for c in table.primary_key) for table in tables]
            if db.engine.dialect.name == "postgresql":
                cursor.execute("SELECT " + ", ".join(
                    f"(SELECT json_agg(t ORDER BY {order}) FROM {quote(table.name)} AS t)"
                    for table, order in zip(tables, orders, strict=True)
                ))  # fmt: skip
                rows = cursor.fetchone()
                return {table.name: rows[n] or [] for n, table in enumerate(tables)}
            state = {}
            for table, order in zip(tables, orders, strict=True):
                cursor.execute(f"SELECT * FROM {quote(table.name)} ORDER BY {order}")
                names = [column[0] for column in cursor.description]
                state[table.name] = [dict(zip(names, row, strict=True)) for row in cursor]
            return state
        finally:
            connection.close()  # back to the pool, its read ended


def text(response):
    """The page's HTML with runs of white space folded, as a reader sees the words."""
    return " ".join(response.get_data(as_text=True).split())


def shown(words):
    """Words as they appear in the page's HTML."""
    return str(escape(words))


class Student:
    """A browser taking the quiz, filling in forms as a person would, CSRF token included."""

    def __init__(self, client):
        self.client = client
        self.token = None
        self._csrf = None

    @property
    def csrf(self):
        """The session's CSRF token, read once from a form as a browser would get it."""
        if self._csrf is None:
            page = self.client.get(f"/quizzes/{SLUG}").get_data(as_text=True)
            self._csrf = csrf_token(page)
        return self._csrf

    def post(self, url, **fields):
        return self.client.post(url, data={"csrf_token": self.csrf, **fields})

    def start(self, name="Ada Lovelace", slug=SLUG, **fields):
        """Start an attempt and remember its token; returns the response."""
        response = self.post(f"/quizzes/{slug}", name=name, **fields)
        if response.status_code == 303:
            self.token = response.location.split("/")[2]
        return response

    def question_url(self, number):
        return f"/attempts/{self.token}/questions/{number}"

    @property
    def results_url(self):
        return f"/attempts/{self.token}/results"

    def answer(self, number, choice_id):
        return self.post(self.question_url(number), choice=choice_id)

    def finish(self):
        """Press "Finish attempt", as one whose answers could change until then must."""
        return self.post(f"/attempts/{self.token}/finish")


def wrong_choice(question):
    return next(choice for choice in question.choices if not choice.correct)


@contextmanager
def _heard(app, name: str, record):
    """Call `record` on the engines' `name` event while the block runs."""
    with app.app_context():
        # On PostgreSQL the rate-limit counts have an engine of their own; they count too.
        engines = {db.engine, counts_engine(app)}
    for engine in engines:
        event.listen(engine, name, record)
    try:
        yield
    finally:
        for engine in engines:
            event.remove(engine, name, record)


@contextmanager
def queries(app):
    """Collect the SQL statements the app sends while the block runs."""
    statements = []
    with _heard(app, "before_cursor_execute", lambda _c, _k, sql, *_: statements.append(sql)):
        yield statements


@contextmanager
def executed(app):
    """Collect the statement objects the app executes while the block runs: the same object
    on every request is a statement built once."""
    statements = []
    with _heard(app, "before_execute", lambda _c, statement, *_: statements.append(statement)):
        yield statements


def login(client, username, password):
    """Log an instructor in through the form; returns the response."""
    page = client.get("/login").get_data(as_text=True)
    token = csrf_token(page)
    return client.post(
        "/login", data={"csrf_token": token, "username": username, "password": password}
    )


CSRF_FIELD = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"')


def csrf_token(html: str, missing: str | None = None) -> str:
    """The CSRF token a page's form carries; `missing` if it carries none, else a failure."""
    found = CSRF_FIELD.search(html)
    if found is None and missing is None:
        raise AssertionError("the page has no form with a CSRF token")
    return found.group(1) if found else missing


def form_token(client, url="/teach"):
    """The CSRF token from a page's form, for a client that is already logged in."""
    return csrf_token(client.get(url).get_data(as_text=True))


def server_database(tmp_path, schema: str = SCHEMA) -> str:
    """DATABASE_URL for a server process: the test's SQLite file or a schema of this run's."""
    if not POSTGRES_URL:
        return f"sqlite:///{tmp_path / 'quiz.db'}"
    if schema == SCHEMA:
        USAGE.wrote = True
    return f"{POSTGRES_URL}?options=" + urllib.parse.quote(f"-csearch_path={schema}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class Server:
    url: str
    pid: int
    """gunicorn's master process; its workers are its children."""


SERVE = ("-OO", "-m", "gunicorn", "-c", "gunicorn.conf.py")
"""Python's arguments for the app server, as `make run` and docs/deploy.md's service give them."""


@contextmanager
def gunicorn(tmp_path, workers=4, keep_alive=1, release=PROJECT_ROOT, **env):
    """A gunicorn server on a free port with the production config, until the block ends. It
    keeps an idle connection open for `keep_alive` seconds, which its graceful stop waits out;
    it serves the code in `release`, this checkout unless a test made a copy."""
    port = free_port()
    settings = {
        **os.environ,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_CONCURRENCY": str(workers),
        "SECRET_KEY": "shared by every server",
        "PASSWORD_HASH_METHOD": QUICK_HASH,
        "LOG_LEVEL": "warning",
        **env,
    }
    if "DATABASE_URL" not in env:
        settings["DATABASE_URL"] = server_database(tmp_path)
    log_path = tmp_path / f"gunicorn-{port}.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, *SERVE, f"--keep-alive={keep_alive}"],
        cwd=release, env=settings, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1)
                break
            except urllib.error.HTTPError:  # serving, and saying why it is not healthy
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError(f"gunicorn did not start: {log_path.read_text()}")
        yield Server(base, process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@contextmanager
def half_sent_requests(base: str, count: int, every: float = 1):
    """Connections that each sent a request line and half a header, adding a byte every `every`
    seconds: slow clients, as a weak network or an attacker makes them."""
    port = int(base.rsplit(":", 1)[1])
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
    for connection in held:
        connection.sendall(b"GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    done = threading.Event()

    def trickle():
        while not done.wait(every):
            for connection in held:
                with suppress(OSError):  # a server may give up on a client this slow
                    connection.sendall(b"a")

    thread = threading.Thread(target=trickle)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        for connection in held:
            connection.close()


def gradebook_rows(response) -> list[dict[str, str]]:
    """A gradebook CSV's rows by column: its first row is the header, as importers expect."""
    lines = response.get_data().decode("utf-8-sig").splitlines()
    assert lines[0].startswith("student,student_id,email,state,"), lines[0]
    return list(csv.DictReader(lines))


def previous_revision() -> str:
    """The migration before this release's, where a dump made before the upgrade is."""
    from alembic.script import ScriptDirectory

    from app.health import SCHEMA_REVISION

    script = ScriptDirectory(str(PROJECT_ROOT / "migrations"))
    return script.get_revision(SCHEMA_REVISION).down_revision


def flask_command(database_url: str, *args: str, release=PROJECT_ROOT):
    """`.venv/bin/flask --app wsgi ARGS` in a release (this checkout by default), as the docs
    run it; the release's code comes first, as its own venv's entry points (`flask quiz`) would
    import it on a server."""
    env = {
        **os.environ,
        "SECRET_KEY": "shared by every server",
        "DATABASE_URL": database_url,
        "PYTHONPATH": str(release),
    }
    command = [Path(sys.executable).with_name("flask"), "--app", "wsgi", *args]
    return subprocess.run(
        command, cwd=release, env=env, capture_output=True, text=True, timeout=120
    )


def signed_import(app) -> str:
    """What Import a file's report hands its second step: a parsed quiz, signed by the app."""
    quiz = {"slug": "imported", "title": "Imported", "description": "", "questions": []}
    with app.test_request_context():
        return import_serializer().dumps(quiz)
