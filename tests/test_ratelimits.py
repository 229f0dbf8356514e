"""Rate-limit counts in the app's database: atomic, one count for every worker, kept on restart."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from test_serving import Browser

from app.auth import create_instructor
from app.extensions import db
from app.ratelimits import DatabaseStorage

from helpers import csrf_token, gunicorn, make_app

pytestmark = pytest.mark.postgres


@pytest.fixture
def storage(app):
    with app.app_context():
        return DatabaseStorage("database://", engine=db.engine)


def test_concurrent_counts_each_see_their_own_total(storage):
    """Forty workers counting at once get 1 to 40, each once: no count is lost or shared."""
    start = threading.Barrier(40)

    def count(_):
        start.wait()
        return storage.incr("login/198.51.100.7", 60)

    with ThreadPoolExecutor(40) as pool:
        totals = sorted(pool.map(count, range(40)))
    assert totals == list(range(1, 41))
    assert storage.get("login/198.51.100.7") == 40


def test_a_count_starts_again_when_its_window_ends(storage, monkeypatch):
    """A minute after its first count a key counts from 1; a give-back never goes below 0."""
    moment = time.time()
    monkeypatch.setattr(time, "time", lambda: moment)
    assert [storage.incr("key", 60) for _ in range(3)] == [1, 2, 3]
    assert storage.get_expiry("key") == moment + 60
    monkeypatch.setattr(time, "time", lambda: moment + 60)
    assert storage.get("key") == 0
    assert storage.incr("key", 60, amount=-1) == 0
    assert storage.incr("key", 60) == 1


def test_any_typed_key_is_stored(storage):
    """A username of any length, or with a NUL, still counts, and apart from others."""
    long, longer, nul = "user:" + "a" * 5000, "user:" + "a" * 5001, "user:a\x00b"
    assert [storage.incr(long, 60), storage.incr(long, 60), storage.incr(longer, 60)] == [1, 2, 1]
    assert [storage.incr(nul, 60), storage.incr(nul, 60)] == [1, 2]


def try_password(base, address, password, start=None) -> int:
    """Log in as "teacher" from `address` (as the proxy reports it); the final status code."""
    browser = Browser()
    browser.opener.addheaders = [("X-Forwarded-For", address)]
    _, page = browser.get(f"{base}/login")
    if start:
        start.wait()
    status, url, _ = browser.post(
        f"{base}/login",
        csrf_token=csrf_token(page),
        username="teacher",
        password=password,
    )
    return 303 if url.endswith("/teach") else status


@pytest.mark.parametrize("shared", ["database", "redis"])
def test_failed_logins_count_once_across_workers_and_restarts(tmp_path, request, shared):
    """Thirty wrong passwords at once to four workers: ten are checked, and a restart forgets
    none of them; the owner, elsewhere, logs in all along."""
    env = {"TRUSTED_PROXIES": "1"}
    if shared == "redis":
        env["RATELIMIT_STORAGE_URI"] = request.getfixturevalue("redis_url")
    app = make_app(tmp_path)
    with app.app_context():
        create_instructor("teacher", "correct horse")
    with gunicorn(tmp_path, workers=4, **env) as server:
        start = threading.Barrier(30)
        with ThreadPoolExecutor(30) as pool:
            statuses = list(
                pool.map(
                    lambda _: try_password(server.url, "198.51.100.7", "wrong", start), range(30)
                )
            )
        assert sorted(statuses) == [400] * 10 + [429] * 20
        assert try_password(server.url, "203.0.113.5", "correct horse") == 303
    with gunicorn(tmp_path, workers=2, **env) as server:
        assert try_password(server.url, "198.51.100.7", "wrong") == 429
        assert try_password(server.url, "203.0.113.5", "correct horse") == 303
