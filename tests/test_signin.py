"""Signing in over time: login limits that cannot lock an owner out, sessions, passwords."""

import pytest

from app.auth import create_instructor

from helpers import login, make_app

pytestmark = pytest.mark.usefixtures("quick_passwords")


def from_address(app, address):
    """A browser whose requests come from `address`, as a proxy in front reports it."""
    client = app.test_client()
    client.environ_base["HTTP_X_FORWARDED_FOR"] = address
    return client


@pytest.fixture
def proxied(tmp_path, monkeypatch):
    """An app behind one trusted proxy, with the instructor "teacher"."""
    monkeypatch.setenv("TRUSTED_PROXIES", "1")
    app = make_app(tmp_path)
    with app.app_context():
        create_instructor("teacher", "correct horse")
    return app


def test_failures_from_elsewhere_never_refuse_the_right_password(proxied):
    """Thirty wrong passwords for an account from one address leave its owner free to log in."""
    attacker = from_address(proxied, "198.51.100.7")
    statuses = [login(attacker, "teacher", "wrong guess").status_code for _ in range(30)]
    assert statuses == [400] * 10 + [429] * 20
    owner = from_address(proxied, "203.0.113.5")
    assert login(owner, "Teacher", "correct horse").status_code == 303


def test_failures_count_per_address_across_usernames(proxied):
    """Trying thirty usernames from one address is stopped there, whatever the names."""
    guesser = from_address(proxied, "198.51.100.7")
    statuses = [login(guesser, f"user{n}", "wrong guess").status_code for n in range(31)]
    assert statuses == [400] * 30 + [429]
    assert login(guesser, "teacher", "correct horse").status_code == 429
