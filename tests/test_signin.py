"""Signing in over time: login limits that cannot lock an owner out, sessions, passwords."""

from datetime import timedelta

import pytest

from app.auth import create_instructor
from app.extensions import db
from app.models import Attempt, now

from helpers import Student, login, make_app

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


@pytest.fixture
def teacher(app):
    """A browser where the instructor "teacher" has logged in."""
    with app.app_context():
        create_instructor("teacher", "correct horse")
    client = app.test_client()
    assert login(client, "teacher", "correct horse").status_code == 303
    return client


def test_trying_the_quiz_keeps_the_login_to_this_browser_session(teacher):
    """An instructor who starts a quiz still has a login that ends when the browser closes."""
    assert Student(teacher).start().status_code == 303
    assert teacher.get_cookie("session").expires is None
    browser = teacher.get_cookie("browser")
    assert browser.http_only and browser.same_site == "Lax" and browser.expires is not None


def test_a_moved_session_is_logged_out_even_after_taking_the_quiz(teacher, app):
    """The cookie from another address or browser is a logout, not a stale login."""
    assert Student(teacher).start().status_code == 303
    elsewhere = app.test_client()
    elsewhere.set_cookie("session", teacher.get_cookie("session").value)
    elsewhere.environ_base["REMOTE_ADDR"] = "198.51.100.7"
    assert elsewhere.get("/teach").location.startswith("/login")


def test_a_login_ends_after_the_idle_timeout(teacher, app, monkeypatch):
    """Active use keeps the login; INSTRUCTOR_IDLE_MINUTES without a request ends it."""
    start = now()
    monkeypatch.setattr("app.auth.now", lambda: start + timedelta(minutes=119))
    assert teacher.get("/teach").status_code == 200
    monkeypatch.setattr("app.auth.now", lambda: start + timedelta(minutes=119 + 121))
    response = teacher.get("/teach", follow_redirects=True)
    assert response.request.path == "/login"
    assert "You were logged out after a while without activity." in response.get_data(as_text=True)
    monkeypatch.setattr("app.auth.now", lambda: start + timedelta(minutes=119 + 122))
    assert teacher.get("/teach").location.startswith("/login")


def test_a_student_mid_attempt_keeps_it_after_the_upgrade(app, quiz):
    """A browser id in the session, where older versions kept it, moves to its own cookie."""
    student = Student(app.test_client())
    student.start()
    with app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        id_from_session = attempt.browser
    # As the old version left it: the id in the session, no cookie of its own.
    student.client.delete_cookie("browser")
    with student.client.session_transaction() as session:
        session["browser"] = id_from_session
        session.permanent = True

    assert student.answer(1, quiz.questions[0].right_choice.id).status_code == 303
    assert student.client.get_cookie("browser").value == id_from_session
    with student.client.session_transaction() as session:
        assert "browser" not in session
    assert student.answer(2, quiz.questions[1].right_choice.id).status_code == 303
    assert Student(app.test_client()).client.get(student.question_url(3)).status_code == 403
