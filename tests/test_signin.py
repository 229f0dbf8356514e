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


@pytest.mark.parametrize(
    ("proxies", "forged"),
    [
        # No proxy: the header is the thief's own invention.
        ("0", "203.0.113.5"),
        # Behind nginx, which appends the address it saw to whatever the client sent.
        ("1", "203.0.113.5, 198.51.100.7"),
    ],
)
def test_a_copied_cookie_fails_from_another_address_despite_forged_headers(
    tmp_path, monkeypatch, proxies, forged
):
    """The login is bound to the real client address, not to X-Forwarded-For as sent."""
    monkeypatch.setenv("TRUSTED_PROXIES", proxies)
    app = make_app(tmp_path)
    with app.app_context():
        create_instructor("teacher", "correct horse")
    teacher = app.test_client()
    teacher.environ_base.update({"REMOTE_ADDR": "203.0.113.5", "HTTP_USER_AGENT": "Firefox"})
    if proxies == "1":
        teacher.environ_base.update(
            {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "203.0.113.5"}
        )
    assert login(teacher, "teacher", "correct horse").status_code == 303
    assert teacher.get("/teach").status_code == 200

    thief = app.test_client()
    thief.set_cookie("session", teacher.get_cookie("session").value)
    thief.environ_base.update({
        "REMOTE_ADDR": "198.51.100.7" if proxies == "0" else "10.0.0.2",
        "HTTP_USER_AGENT": "Firefox",
        "HTTP_X_FORWARDED_FOR": forged,
    })  # fmt: skip
    response = thief.get("/teach")
    assert response.status_code == 302 and response.location.startswith("/login")
