"""Signing in over time: login limits that cannot lock an owner out, sessions, passwords."""

from datetime import timedelta

import pytest

from app.auth import create_instructor
from app.extensions import db
from app.models import Attempt, now
from app.question_types import right_choice

from helpers import Student, form_token, login, make_app, shown, text

pytestmark = pytest.mark.postgres


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
    monkeypatch.setattr("app.auth.views.now", lambda: start + timedelta(minutes=119))
    assert teacher.get("/teach").status_code == 200
    monkeypatch.setattr("app.auth.views.now", lambda: start + timedelta(minutes=119 + 121))
    response = teacher.get("/teach", follow_redirects=True)
    assert response.request.path == "/login"
    assert "You were logged out after a while without activity." in response.get_data(as_text=True)
    monkeypatch.setattr("app.auth.views.now", lambda: start + timedelta(minutes=119 + 122))
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

    assert student.answer(1, right_choice(quiz.questions[0]).id).status_code == 303
    assert student.client.get_cookie("browser").value == id_from_session
    with student.client.session_transaction() as session:
        assert "browser" not in session
    assert student.answer(2, right_choice(quiz.questions[1]).id).status_code == 303
    assert Student(app.test_client()).client.get(student.question_url(3)).status_code == 403


def change_password(client, current, new, repeat=None):
    fields = {"current_password": current, "new_password": new, "repeat_password": repeat or new}
    token = form_token(client, "/account/password")
    return client.post("/account/password", data={"csrf_token": token, **fields})


def test_changing_the_password_logs_out_everywhere_else(app, teacher, caplog):
    """The new password works, the old one not; this browser stays in, the other copy is out."""
    laptop = app.test_client()
    assert login(laptop, "teacher", "correct horse").status_code == 303

    response = change_password(teacher, "correct horse", "battery staple")
    assert response.status_code == 303 and response.location == "/teach"
    assert "Everywhere else you were logged in, you are logged out." in text(teacher.get("/teach"))
    assert laptop.get("/teach").location.startswith("/login")
    assert login(app.test_client(), "teacher", "correct horse").status_code == 400
    assert login(app.test_client(), "teacher", "battery staple").status_code == 303
    assert "password changed: user='teacher' ip=127.0.0.1 path=/account/password" in caplog.text


@pytest.mark.parametrize(
    ("current", "new", "repeat", "message"),
    [
        ("wrong horse", "battery staple", None, "This is not your current password."),
        ("correct horse", "short", None, "A password needs 8 to 1024 characters."),
        ("correct horse", "x" * 1025, None, "A password needs 8 to 1024 characters."),
        ("correct horse", "battery staple", "battery stable", "The two new passwords differ"),
        ("", "battery staple", None, "Enter your current password."),
    ],
)
def test_a_bad_password_change_says_why_and_changes_nothing(
    app, teacher, current, new, repeat, message
):
    """Each problem is named next to its field; the old password still works."""
    response = change_password(teacher, current, new, repeat)
    assert response.status_code == 400
    assert shown(message) in text(response)
    assert teacher.get("/teach").status_code == 200
    assert login(app.test_client(), "teacher", "correct horse").status_code == 303


def test_the_header_links_to_the_password_page(teacher):
    """A logged-in instructor finds "Change password" on every page."""
    assert 'href="/account/password">Change password</a>' in text(teacher.get("/teach"))
    page = text(teacher.get("/account/password"))
    for label in ("Current password", "New password", "Repeat new password"):
        assert f">{label}</label>" in page


def test_set_password_command_replaces_it_and_ends_sessions(app, teacher, caplog):
    """An admin resets a forgotten password from the shell; old sessions end, the new one works."""
    runner = app.test_cli_runner()
    result = runner.invoke(args=["set-password", " Teacher", "--password", "battery staple"])
    assert result.exit_code == 0, result.output
    assert "Set a new password for “teacher”" in result.output
    assert teacher.get("/teach").location.startswith("/login")
    assert login(app.test_client(), "teacher", "battery staple").status_code == 303
    assert "password set: user='teacher' by=command line" in caplog.text

    typed = runner.invoke(args=["set-password", "teacher"], input="new horse!\nnew horse!\n")
    assert typed.exit_code == 0, typed.output
    assert login(app.test_client(), "teacher", "new horse!").status_code == 303


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["set-password", "nobody", "--password", "battery staple"], "no instructor named"),
        (["set-password", "teacher", "--password", "short"], "8 to 1024 characters"),
        (["disable-instructor", "nobody"], "no instructor named"),
    ],
)
def test_account_commands_refuse_bad_input(app, teacher, args, message):
    """An unknown name or a short password is an error that changes nothing."""
    result = app.test_cli_runner().invoke(args=args)
    assert result.exit_code != 0 and message in result.output
    assert teacher.get("/teach").status_code == 200


def test_a_disabled_instructor_cannot_log_in_until_enabled(app, teacher, caplog):
    """Disabling ends every session and refuses the right password; --enable undoes it."""
    runner = app.test_cli_runner()
    result = runner.invoke(args=["disable-instructor", "teacher"])
    assert result.exit_code == 0, result.output
    assert teacher.get("/teach").location.startswith("/login")
    refused = login(app.test_client(), "teacher", "correct horse")
    assert refused.status_code == 400 and "This account is disabled." in text(refused)
    assert "This account is disabled." not in text(login(app.test_client(), "teacher", "wrong"))
    assert "instructor disabled: user='teacher' by=command line" in caplog.text

    assert runner.invoke(args=["disable-instructor", "teacher", "--enable"]).exit_code == 0
    assert login(app.test_client(), "teacher", "correct horse").status_code == 303


def test_a_forged_browser_cookie_gets_a_fresh_id(app):
    """A browser cookie the app never made (too long for the column, odd bytes) is replaced."""
    student = Student(app.test_client())
    student.client.set_cookie("browser", "x" * 500)
    assert student.start().status_code == 303
    fresh = student.client.get_cookie("browser").value
    assert len(fresh) == 22
    with app.app_context():
        assert db.session.scalars(db.select(Attempt.browser)).one() == fresh


def test_staying_logged_in_sends_no_new_cookie_each_request(teacher):
    """The idle clock moves once a minute, so downloads and pages do not each reset the cookie."""
    teacher.get("/teach")  # the first page's form puts a CSRF token in the fresh session
    assert "Set-Cookie" not in teacher.get("/teach").headers
    assert "Set-Cookie" not in teacher.get("/teach").headers


def test_a_login_from_before_the_upgrade_gets_the_idle_timeout_too(teacher, monkeypatch):
    """A session with no idle clock yet starts one, and a permanent one becomes a browser one."""
    with teacher.session_transaction() as session:
        del session["seen"]
        session.permanent = True
    assert teacher.get("/teach").status_code == 200
    assert teacher.get_cookie("session").expires is None
    later = now() + timedelta(minutes=121)
    monkeypatch.setattr("app.auth.views.now", lambda: later)
    assert teacher.get("/teach").location.startswith("/login")
