"""Fixtures in the flaskr style: a fresh app and database per test, and a student's browser.

Which database runs a test is said by its marks; README.md beside this file says how to choose."""

import itertools
import os
from collections import Counter
from datetime import UTC, datetime, timedelta

import factories
import jwt.algorithms
import pytest
import redis
import sqlalchemy
from cryptography.hazmat.primitives import serialization
from werkzeug.routing.rules import Rule

from app.config import database_url_from
from app.extensions import db
from app.lti import keys
from app.lti.models import LtiToolKey
from app.served import current_bank

from helpers import (
    POSTGRES_URL,
    SCHEMA,
    SLUG,
    USAGE,
    Student,
    database,
    empty_rows,
    login,
    make_app,
    shared_schema,
)

pytest_plugins = ["pytester"]


def _parse_each_private_key_once() -> None:
    """The LTI tests sign thousands of tokens with a handful of RSA keys, and PyJWT and jwcrypto
    parse the PEM again for each one; a parse checks the key (about 70 ms), a quarter of those
    tests' time. Parsed keys are immutable, so each PEM is parsed once per test process."""
    parse, parsed = serialization.load_pem_private_key, {}

    def parse_once(data, password=None, *args, **kwargs):
        key = (bytes(data), password)
        if key not in parsed:
            parsed[key] = parse(data, password, *args, **kwargs)
        return parsed[key]

    serialization.load_pem_private_key = parse_once
    jwt.algorithms.load_pem_private_key = parse_once


_parse_each_private_key_once()


def _compile_each_url_builder_once() -> None:
    """Werkzeug writes and compiles a Python function to build each rule's URLs as an app adds
    the rule (about a millisecond each, a hundred rules an app, an app a test). The function
    depends only on the rule, so each is compiled once per test process."""
    compile_builder, compiled = Rule._compile_builder, {}

    def compile_once(self, append_unknown=True):
        defaults = sorted((self.defaults or {}).items())
        key = (self.rule, self.subdomain, self.host, tuple(self._trace), repr(defaults),
               self.merge_slashes, append_unknown)  # fmt: skip
        if key not in compiled:
            compiled[key] = compile_builder(self, append_unknown)
        return compiled[key]

    Rule._compile_builder = compile_once


_compile_each_url_builder_once()


TOOL_KEYS: list[tuple[str, str]] = []
"""The LTI tool's key pairs (kid, PEM), made as the tests first need them: RSA, 100 ms each."""


@pytest.fixture(autouse=True)
def tool_keys_made_once(monkeypatch):
    """An app makes the LTI tool's key on first use, and many tests' worlds do; each test takes
    this process's keys in order, so a rotation within a test still gets a new one."""
    make_key, taken = keys._new_key, itertools.count()

    def new_key():
        made = next(taken)
        if made == len(TOOL_KEYS):
            key = make_key()
            TOOL_KEYS.append((key.kid, key.private_key))
        kid, private_key = TOOL_KEYS[made]
        return LtiToolKey(kid=kid, private_key=private_key)

    monkeypatch.setattr(keys, "_new_key", new_key)


TALLY: Counter[str] = Counter()
"""What the robustness suites tried (requests fuzzed, payloads, faults) and what they lost."""


@pytest.fixture
def tally() -> Counter[str]:
    """Count what a robustness test tried, for the summary at the end of the run."""
    return TALLY


def pytest_sessionfinish(session):
    """A pytest-xdist worker hands its tallies to the controller, which prints the sum."""
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["tally"] = dict(TALLY)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    TALLY.update(node.workeroutput.get("tally", {}))


def pytest_terminal_summary(terminalreporter):
    if TALLY:
        terminalreporter.section("robustness: what was tried, and what was lost")
        for name, count in sorted(TALLY.items()):
            terminalreporter.write_line(f"{name}: {count:,}")


# Module fixtures that cost seconds to make and to stop: the LTI tool's server, the measured runs.
MADE_ONCE_A_MODULE = ("tool", "runs")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """The PostgreSQL pass runs only the tests whose outcome can depend on the database, and
    the load tests, which run there alone, one after another on one worker. The tests of a
    module sharing a costly fixture run on one worker too, which then makes it once, not twice."""
    later = pytest.mark.skip(reason="a load test: it runs in the PostgreSQL pass")
    for item in items:
        if item.get_closest_marker("load"):
            item.add_marker(pytest.mark.xdist_group("load"))
            if not POSTGRES_URL:
                item.add_marker(later)
        elif any(name in item.fixturenames for name in MADE_ONCE_A_MODULE):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    if not POSTGRES_URL:
        return
    kept = [
        item
        for item in items
        if item.get_closest_marker("postgres") or item.get_closest_marker("load")
    ]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept


@pytest.fixture(scope="session")
def postgres():
    """This process's own PostgreSQL schema, dropped at the end; None when testing on SQLite."""
    if not POSTGRES_URL:
        yield None
        return
    engine = sqlalchemy.create_engine(
        database_url_from(POSTGRES_URL), connect_args={"options": f"-csearch_path={SCHEMA}"}
    )
    with engine.begin() as connection:
        connection.exec_driver_sql(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        connection.exec_driver_sql(f"CREATE SCHEMA {SCHEMA}")
    yield engine
    with engine.begin() as connection:
        connection.exec_driver_sql(f"DROP SCHEMA {SCHEMA} CASCADE")
    engine.dispose()


# The settings README lists: an admin's shell may hold production values for them.
SETTINGS = ("SECRET_KEY", "DATABASE_URL", "QUESTIONS_PATH", "RATELIMIT_STORAGE_URI",
            "TRUSTED_PROXIES", "TRUSTED_HOSTS", "SESSION_COOKIE_SECURE", "INSTRUCTOR_IDLE_MINUTES",
            "PASSWORD_HASH_METHOD", "LOG_LEVEL", "LTI_PRIVATE_PLATFORMS",
            "HOST", "PORT", "WEB_CONCURRENCY", "FLASK_DEBUG")  # fmt: skip


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """Tests see the documented defaults, whatever the shell running them has set."""
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)


DATABASE_MARKS = ("postgres", "any_database", "load")


@pytest.fixture(autouse=True)
def fresh_database(request, postgres):
    """Every test starts from empty tables: on SQLite each test has its own file; on PostgreSQL
    the rows a test wrote are cleared after it. A test whose app ran SQL says by its marks
    whether its outcome can depend on the database (README.md beside this file)."""
    USAGE.reset()
    yield
    for app in USAGE.apps:
        with app.app_context():
            db.engine.dispose()
    if postgres is not None and USAGE.wrote:
        empty_rows(postgres)
    marked = any(request.node.get_closest_marker(name) for name in DATABASE_MARKS)
    if USAGE.sql and not marked:
        pytest.fail(
            "this test's app ran SQL, but the test is marked neither `postgres` nor "
            "`any_database`: tests/README.md says which it is",
            pytrace=False,
        )


@pytest.fixture
def app(tmp_path):
    return make_app(tmp_path)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def quiz(app):
    """The Gradient Checkpointing Quiz as the app serves it."""
    with app.app_context():
        return current_bank().quizzes[SLUG]


@pytest.fixture
def student(client):
    return Student(client)


@pytest.fixture
def blank_database(tmp_path):
    """Settings for a database with no tables at all, for the migrations to build."""
    with shared_schema("blank") as schema:
        yield database(tmp_path, schema)


def _worker_number() -> int:
    """0 without pytest-xdist, else the worker's number (gw0, gw1, ...)."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))


@pytest.fixture
def redis_url():
    """The local Redis, emptied: a database of its own per xdist worker. CI must have it;
    elsewhere its absence skips the test."""
    base = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/9")
    head, _, number = base.rpartition("/")
    url = f"{head}/{int(number or 0) + _worker_number()}"
    client = redis.Redis.from_url(url)
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        if os.environ.get("CI"):
            pytest.fail(f"Redis is not reachable at {url}")
        pytest.skip(f"Redis is not reachable at {url}")
    client.flushdb()
    yield url
    client.flushdb()


@pytest.fixture
def lecturer(app):
    """Logged-in Ada, who has no shell: only the browser (the quiz editor's tests)."""
    with app.app_context():
        factories.instructor("ada", "ada password")
        factories.instructor("bo", "bo password")
        current_bank()  # the file's quizzes are published first, as on any running server
    client = app.test_client()
    assert login(client, "ada", "ada password").status_code == 303
    return client


class Clock:
    """The app's clock for attempts, moved on as waiting would move it."""

    def __init__(self):
        self.ahead = timedelta()

    def now(self) -> datetime:
        return datetime.now(UTC) + self.ahead

    def wait(self, delta: timedelta) -> None:
        self.ahead += delta


@pytest.fixture
def clock(monkeypatch):
    moved = Clock()
    monkeypatch.setattr("app.attempts.service.now", moved.now)
    monkeypatch.setattr("app.reports.now", moved.now)
    return moved


@pytest.fixture
def course(app):
    """An instructor's class, by id (the rules' tests)."""
    with app.app_context():
        teacher = factories.instructor("teacher")
        return factories.class_(teacher, "Physics 101").id
