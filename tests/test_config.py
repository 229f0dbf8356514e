"""Settings from the environment, the instance secret, and SQLite's connection pragmas."""

import os
import runpy
import stat

import pytest

from app import create_app
from app.config import PROJECT_ROOT, instance_secret
from app.extensions import db

from helpers import POSTGRES_URL

pytestmark = pytest.mark.any_database


def test_database_url_and_secret_key_come_from_the_environment(monkeypatch, tmp_path):
    """DATABASE_URL and SECRET_KEY override the defaults."""
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("SECRET_KEY", "from the environment")
    app = create_app()
    assert app.config["SQLALCHEMY_DATABASE_URI"] == url
    assert app.config["SECRET_KEY"] == "from the environment"


def test_default_database_lives_in_the_instance_folder(monkeypatch):
    """Without DATABASE_URL the app uses instance/quiz.db."""
    monkeypatch.delenv("DATABASE_URL", raising=False)
    app = create_app({"SECRET_KEY": "x"})
    assert app.config["SQLALCHEMY_DATABASE_URI"].endswith("/instance/quiz.db")


def test_instance_secret_is_made_once_and_kept_private(tmp_path):
    """The generated key is reused on every start and readable by its owner only."""
    first = instance_secret(str(tmp_path))
    assert len(first) == 64
    assert instance_secret(str(tmp_path)) == first
    assert stat.S_IMODE((tmp_path / "secret_key").stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["secret_key"]


@pytest.mark.skipif(POSTGRES_URL is not None, reason="SQLite's pragmas; this run is on PostgreSQL")
def test_sqlite_connections_are_tuned(app):
    """Every connection runs in WAL mode with foreign keys and NORMAL sync; the app, not SQLite,
    waits for a lock (app/sqlite.py)."""
    with app.app_context(), db.engine.connect() as connection:
        pragma = lambda name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
        assert pragma("journal_mode") == "wal"
        assert pragma("synchronous") == 1
        assert pragma("busy_timeout") == 0  # app/sqlite.py waits instead
        assert pragma("foreign_keys") == 1


@pytest.mark.parametrize(
    ("database", "concurrency", "expected"),
    [("", "", "cores"), ("sqlite:////srv/quiz.db", "", "cores"),
     ("postgresql://db/quiz", "", "cores"), ("sqlite:///quiz.db", "7", "7")],
)  # fmt: skip
def test_gunicorn_runs_a_worker_per_core_on_either_database(
    monkeypatch, database, concurrency, expected
):
    """A gevent worker waits on the database while serving its other requests, so a worker more
    than the cores only takes turns on them (a longer answering tail on both databases), but
    never one alone. WEB_CONCURRENCY decides when set."""
    monkeypatch.setenv("DATABASE_URL", database)
    monkeypatch.setenv("WEB_CONCURRENCY", concurrency)
    settings = runpy.run_path(str(PROJECT_ROOT / "gunicorn.conf.py"))
    cores = len(os.sched_getaffinity(0))
    assert settings["workers"] == (max(2, cores) if expected == "cores" else int(expected))
