"""Fixtures in the flaskr style: a fresh app and database per test, and a student's browser."""

import functools
import os
from collections import Counter

import pytest
import redis
import sqlalchemy
from werkzeug.security import generate_password_hash

from app.bank import current_bank
from app.config import database_url_from
from app.extensions import db

from helpers import POSTGRES_URL, SCHEMA, SLUG, Student, make_app

TALLY: Counter[str] = Counter()
"""What the robustness suites tried (requests fuzzed, payloads, faults) and what they lost."""


@pytest.fixture
def tally() -> Counter[str]:
    """Count what a robustness test tried, for the summary at the end of the run."""
    return TALLY


def pytest_terminal_summary(terminalreporter):
    if TALLY:
        terminalreporter.section("robustness: what was tried, and what was lost")
        for name, count in sorted(TALLY.items()):
            terminalreporter.write_line(f"{name}: {count:,}")


@pytest.fixture(scope="session")
def postgres():
    """This run's own PostgreSQL schema, dropped at the end; None when testing on SQLite."""
    if not POSTGRES_URL:
        yield None
        return
    engine = sqlalchemy.create_engine(database_url_from(POSTGRES_URL))
    with engine.begin() as connection:
        connection.exec_driver_sql(f"CREATE SCHEMA {SCHEMA}")
    yield engine
    with engine.begin() as connection:
        connection.exec_driver_sql(f"DROP SCHEMA {SCHEMA} CASCADE")
    engine.dispose()


# The settings README lists: an admin's shell may hold production values for them.
SETTINGS = ("SECRET_KEY", "DATABASE_URL", "QUESTIONS_PATH", "RATELIMIT_STORAGE_URI",
            "TRUSTED_PROXIES", "TRUSTED_HOSTS", "SESSION_COOKIE_SECURE", "INSTRUCTOR_IDLE_MINUTES",
            "LOG_LEVEL",
            "HOST", "PORT", "WEB_CONCURRENCY", "FLASK_DEBUG")  # fmt: skip


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """Tests see the documented defaults, whatever the shell running them has set."""
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def fresh_database(postgres):
    """Every test starts from empty tables; on SQLite each test has its own file anyway."""
    yield
    if postgres is not None:
        with postgres.begin() as connection:
            connection.exec_driver_sql(f"DROP SCHEMA {SCHEMA} CASCADE")
            connection.exec_driver_sql(f"CREATE SCHEMA {SCHEMA}")


@pytest.fixture
def app(tmp_path):
    app = make_app(tmp_path)
    yield app
    with app.app_context():
        db.engine.dispose()


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
def quick_passwords(monkeypatch):
    """Cheap password hashes: scrypt's slowness protects real accounts and only slows tests."""
    cheap = functools.partial(generate_password_hash, method="pbkdf2:sha256:1")
    monkeypatch.setattr("app.auth.generate_password_hash", cheap)


@pytest.fixture
def redis_url():
    """The local Redis, emptied; CI must have it, elsewhere its absence skips the test."""
    url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/9")
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
