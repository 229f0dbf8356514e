"""Running for real: settings, headers, health checks, outages, rate limits and logs."""

import gzip
import logging
import re
import shutil

import pytest
import sqlalchemy
from flask import Response

from app import create_app, headers, health
from app.auth import create_instructor
from app.config import POOL_OVERFLOW, POOL_SIZE, ConfigError, engine_options
from app.extensions import db
from app.health import SCHEMA_REVISION

from helpers import (
    PROJECT_ROOT,
    SLUG,
    Student,
    database,
    form_token,
    login,
    make_app,
    previous_revision,
    shared_schema,
    text,
)

pytestmark = pytest.mark.any_database


def test_refuses_to_start_without_a_secret_key(monkeypatch):
    """Outside debug, a missing SECRET_KEY stops the app with a reason, not a random key."""
    monkeypatch.delenv("SECRET_KEY", raising=False)
    monkeypatch.delenv("FLASK_DEBUG", raising=False)
    with pytest.raises(ConfigError, match="SECRET_KEY is not set"):
        create_app()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("TRUSTED_PROXIES", "two", "TRUSTED_PROXIES must be a whole number"),
        ("SESSION_COOKIE_SECURE", "maybe", "SESSION_COOKIE_SECURE must be true or false"),
        ("INSTRUCTOR_IDLE_MINUTES", "0", "INSTRUCTOR_IDLE_MINUTES must be a whole number"),
        ("PASSWORD_HASH_METHOD", "md5", "PASSWORD_HASH_METHOD must be a method werkzeug hashes"),
    ],
)
def test_bad_settings_are_named(monkeypatch, name, value, message):
    """A setting that makes no sense is refused at start-up, naming the variable."""
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=message):
        create_app({"SECRET_KEY": "x"})


def test_postgres_urls_use_psycopg_3(monkeypatch):
    """postgres:// URLs from hosting panels are read as psycopg 3 URLs with a checked pool."""
    monkeypatch.setenv("DATABASE_URL", "postgres://quiz@db.internal/quiz")
    app = create_app({"SECRET_KEY": "x"})
    assert app.config["SQLALCHEMY_DATABASE_URI"] == "postgresql+psycopg://quiz@db.internal/quiz"
    assert app.config["SQLALCHEMY_ENGINE_OPTIONS"]["pool_pre_ping"] is True


def test_every_response_carries_the_security_headers(client):
    """CSP without inline script, no framing, no sniffing, no referrer to other sites."""
    response = client.get("/")
    csp = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert "Strict-Transport-Security" not in response.headers
    assert "Strict-Transport-Security" in client.get("/", base_url="https://localhost").headers


def test_a_page_widens_its_own_policy_and_no_other(app):
    """What a view allows (framing by a platform, posting back to it) is in that response's
    one policy, built from the start, and in no later response."""
    with app.test_request_context("/"):
        headers.allow_framing("https://lms.example")
        headers.allow_posting_to("https://lms.example")
        widened = headers.set_headers(Response()).headers
    assert widened["Content-Security-Policy"] == (
        "default-src 'self'; frame-ancestors 'self' https://lms.example; "
        "form-action 'self' https://lms.example; base-uri 'none'; object-src 'none'"
    )
    assert "X-Frame-Options" not in widened
    with app.test_request_context("/"):
        plain = headers.set_headers(Response()).headers
    assert "frame-ancestors 'none'" in plain["Content-Security-Policy"]
    assert plain["X-Frame-Options"] == "DENY"


def test_an_lti_page_refused_before_its_view_still_shows_in_the_platforms_frame(client):
    """A request an earlier check refuses (a NUL in the query) gets its error page with the
    LTI page's framing, as the page itself would have: the platform shows why, not a blank."""
    refused = client.get("/lti/login?x=%00")
    assert refused.status_code == 400
    assert "frame-ancestors 'self'" in refused.headers["Content-Security-Policy"]
    assert "X-Frame-Options" not in refused.headers
    assert client.get("/?x=%00").headers["X-Frame-Options"] == "DENY"


def test_session_cookie_is_httponly_lax_and_secure_when_asked(tmp_path, monkeypatch):
    """The cookie is never readable by scripts, and only sent over HTTPS when configured."""
    monkeypatch.setenv("SESSION_COOKIE_SECURE", "true")
    student = Student(make_app(tmp_path).test_client())
    cookie = student.start().headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" in cookie


@pytest.mark.parametrize(("proxies", "logged"), [("0", "127.0.0.1"), ("1", "203.0.113.9")])
def test_proxy_headers_are_believed_only_when_trusted(
    tmp_path, monkeypatch, caplog, proxies, logged
):
    """Only with TRUSTED_PROXIES set does X-Forwarded-For become the client's address."""
    monkeypatch.setenv("TRUSTED_PROXIES", proxies)
    client = make_app(tmp_path).test_client()
    client.environ_base["HTTP_X_FORWARDED_FOR"] = "203.0.113.9"
    login(client, "nobody", "wrong password")
    messages = [record.getMessage() for record in caplog.records]
    assert f"login failed: user='nobody' ip={logged} path=/login" in messages


def test_join_link_uses_the_public_address_behind_a_proxy(tmp_path, monkeypatch):
    """Behind nginx the QR code and join link carry the public scheme, host and port."""
    monkeypatch.setenv("TRUSTED_PROXIES", "1")
    app = make_app(tmp_path)
    with app.app_context():
        create_instructor("teacher", "correct horse")
    client = app.test_client()
    client.environ_base.update({
        "HTTP_X_FORWARDED_FOR": "203.0.113.9",
        "HTTP_X_FORWARDED_PROTO": "https",
        "HTTP_X_FORWARDED_HOST": "quiz.example.edu",
        "HTTP_X_FORWARDED_PORT": "8443",
        # Flask-WTF checks that an HTTPS form came from this same site.
        "HTTP_REFERER": "https://quiz.example.edu:8443/login",
    })  # fmt: skip
    assert login(client, "teacher", "correct horse").status_code == 303
    client.environ_base["HTTP_REFERER"] = "https://quiz.example.edu:8443/teach"
    response = client.post("/teach", data={"csrf_token": form_token(client), "name": "P"})
    page = text(client.get(response.location))
    assert re.search(r"https://quiz\.example\.edu:8443/join/[A-Z0-9]{6}", page)
    assert "Strict-Transport-Security" in client.get("/").headers


def test_untrusted_host_is_refused(tmp_path, monkeypatch):
    """With TRUSTED_HOSTS set, a request for another host name gets 400."""
    monkeypatch.setenv("TRUSTED_HOSTS", "quiz.example.edu")
    app = make_app(tmp_path)
    assert app.test_client().get("/", base_url="http://evil.example").status_code == 400
    assert app.test_client().get("/", base_url="http://quiz.example.edu").status_code == 200


def test_the_stylesheet_is_sent_without_its_comments_and_spacing(client):
    """Every rule, in a fifth fewer bytes than the file: each page's first visit downloads it.
    A browser that has it revalidates by its tag and gets nothing again."""
    source = (PROJECT_ROOT / "app" / "static" / "quizwright.css").read_text()
    sent = client.get("/static/quizwright.css")
    assert sent.status_code == 200 and sent.mimetype == "text/css"
    assert len(sent.data) < 0.8 * len(source.encode())
    rules = re.sub(r"/\*.*?\*/", "", source, flags=re.DOTALL)
    assert sent.text.count("{") == rules.count("{") and "/*" not in sent.text
    assert ".skip-link:focus{top:0.5rem}" in sent.text
    again = client.get("/static/quizwright.css", headers={"If-None-Match": sent.headers["ETag"]})
    assert again.status_code == 304 and not again.data
    with client.get("/static/favicon.svg") as other_file:  # served from the folder, as before
        assert other_file.status_code == 200 and other_file.mimetype == "image/svg+xml"


def test_the_stylesheet_is_gzipped_for_browsers_that_take_it(client):
    """A quarter of the bytes to a browser that accepts gzip, the same rules once unpacked, under
    a tag of its own; one that refuses gzip gets the sheet as it is. Either says it varies."""
    plain = client.get("/static/quizwright.css")
    zipped = client.get("/static/quizwright.css", headers={"Accept-Encoding": "gzip, deflate, br"})
    assert zipped.headers["Content-Encoding"] == "gzip" and zipped.mimetype == "text/css"
    assert gzip.decompress(zipped.data) == plain.data
    assert int(zipped.headers["Content-Length"]) == len(zipped.data) < 0.35 * len(plain.data)
    assert zipped.headers["ETag"] != plain.headers["ETag"]
    assert all("Accept-Encoding" in sent.headers["Vary"] for sent in (plain, zipped))
    again = client.get("/static/quizwright.css", headers={
        "Accept-Encoding": "gzip", "If-None-Match": zipped.headers["ETag"]})  # fmt: skip
    assert again.status_code == 304 and not again.data
    refused = client.get("/static/quizwright.css", headers={"Accept-Encoding": "gzip;q=0"})
    assert "Content-Encoding" not in refused.headers and refused.data == plain.data


def test_liveness_needs_no_database(tmp_path):
    """/livez answers 200 even when the database is down: the process itself is alive."""
    response = unreachable(tmp_path).test_client().get("/livez")
    assert response.status_code == 200 and response.json == {"status": "ok"}


def test_health_check_says_ok(client):
    """/healthz answers 200 with the database reachable."""
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json == {"status": "ok", "database": "ok", "schema": "ok"}


@pytest.mark.parametrize(
    ("stamped", "healthy"),
    [("next1", True), ("stray", False)],
    ids=["a newer release's migration", "a revision no migration names"],
)
def test_a_schema_a_newer_release_upgraded_is_served_until_the_restart(
    tmp_path, monkeypatch, stamped, healthy
):
    """docs/deploy.md §7: `git pull` brings the next release's migration and `db upgrade` runs
    it before this server restarts. Its workers stay healthy on that schema, which only adds,
    while a load balancer would otherwise take every server out at once; a revision no
    migration on disk names is still refused."""
    versions = tmp_path / "versions"
    shutil.copytree(health.VERSIONS, versions)
    (versions / "9999_next.py").write_text(
        f'revision = "next1"\ndown_revision = "{SCHEMA_REVISION}"\n'
    )
    monkeypatch.setattr(health, "VERSIONS", versions)
    monkeypatch.setattr(health, "_NEWER", set())
    app = make_app(tmp_path)
    with app.app_context():
        db.session.execute(
            sqlalchemy.text("UPDATE alembic_version SET version_num = :r"), {"r": stamped}
        )
        db.session.commit()
    answer = app.test_client().get("/healthz")
    if healthy:
        assert (answer.status_code, answer.json["schema"]) == (200, "ok")
    else:
        assert answer.status_code == 503
        assert answer.json["schema"] == (
            f"the database's schema is at stray, which this release ({SCHEMA_REVISION}) does "
            "not know: is DATABASE_URL this Quizwright's database?"
        )


@pytest.mark.postgres  # the missing column is each database's own error
def test_a_schema_behind_the_code_is_not_healthy_and_pages_say_upgrading(tmp_path):
    """Sysadmin repro: a restored pre-upgrade dump gave 500s (`column classes.archived_at does
    not exist`) while /healthz said ok. Now /healthz answers 503 with the reason, and a page
    that meets the missing column says Quizwright is being upgraded, not that it crashed."""
    with shared_schema("behind") as schema:  # a schema of its own: this test breaks it
        app = make_app(tmp_path, schema)
        with app.app_context():
            create_instructor("teacher", "correct horse")
        teacher = app.test_client()
        login(teacher, "teacher", "correct horse")
        with app.app_context():
            db.session.execute(
                sqlalchemy.text("UPDATE alembic_version SET version_num = :old"),
                {"old": previous_revision()},
            )
            db.session.commit()
        health = app.test_client().get("/healthz")
        assert health.status_code == 503
        assert health.json["schema"] == (
            f"the database's schema is at {previous_revision()}, this release needs "
            f"{SCHEMA_REVISION}: "
            "run `flask db upgrade`"
        )
        with app.app_context():  # the restored dump predates classes.archived_at
            db.session.execute(sqlalchemy.text("ALTER TABLE classes DROP COLUMN archived_at"))
            db.session.commit()
        page = teacher.get("/teach")
        assert page.status_code == 503 and "Quizwright is being upgraded" in text(page)
        with app.app_context():
            db.engine.dispose()


def unreachable(tmp_path):
    """An app whose database cannot be opened, as when the server is down."""
    return create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "x",
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'missing' / 'quiz.db'}",
        }
    )


def test_health_check_reports_an_unreachable_database(tmp_path):
    """/healthz answers 503 when the database cannot be reached."""
    response = unreachable(tmp_path).test_client().get("/healthz")
    assert response.status_code == 503
    assert response.json["database"] == "unavailable"


def test_database_outage_is_a_503_page(tmp_path, caplog):
    """Opening a quiz while the database is down gets a friendly 503, logged, no traceback: the
    bank on offer is in the database too."""
    response = unreachable(tmp_path).test_client().get(f"/quizzes/{SLUG}")
    assert response.status_code == 503
    # 30 s from the app; the start limits may move it to the end of their own window.
    assert int(response.headers["Retry-After"]) >= 30
    page = text(response)
    assert "Quizwright is unavailable for a moment" in page and "Traceback" not in page
    assert "database unavailable: OperationalError" in caplog.text


def test_eleventh_failed_login_in_a_minute_gets_429(app, client):
    """Ten wrong passwords are answered; the eleventh gets a friendly 429 page."""
    with app.app_context():
        create_instructor("teacher", "correct horse")
    statuses = [login(client, "teacher", "wrong guess").status_code for _ in range(11)]
    assert statuses == [400] * 10 + [429]
    page = text(login(client, "teacher", "correct horse"))
    assert "Too many tries" in page and "Wait a minute, then try again." in page
    assert "per 1 minute" not in page


def test_successful_logins_are_not_limited(app):
    """A teacher who types the password right is never locked out."""
    with app.app_context():
        create_instructor("teacher", "correct horse")
    assert all(login(app.test_client(), "teacher", "correct horse").status_code == 303
               for _ in range(12))  # fmt: skip


def test_logins_still_work_when_redis_is_down(tmp_path, monkeypatch):
    """With the shared counter store unreachable, limits fall back to memory, not to a 500."""
    monkeypatch.setenv("RATELIMIT_STORAGE_URI", "redis://127.0.0.1:1/0")
    app = make_app(tmp_path)
    with app.app_context():
        create_instructor("teacher", "correct horse")
    assert login(app.test_client(), "teacher", "wrong").status_code == 400
    assert login(app.test_client(), "teacher", "correct horse").status_code == 303


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [("LOG_LEVEL", "verbose", "LOG_LEVEL must be one of debug, info, warning, error")],
)
def test_bad_log_level_is_named(monkeypatch, name, value, message):
    """An unknown log level is refused at start-up, naming the variable."""
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=message):
        create_app({"SECRET_KEY": "x"})


def test_answer_submissions_are_limited_per_browser(app, student):
    """A script hammering "Check answer" is slowed; the limit is far above any student's pace."""
    student.start()
    responses = [student.answer(1, "z") for _ in range(61)]
    assert [r.status_code for r in responses[:60]] == [400] * 60
    assert responses[60].status_code == 429
    assert "your answers so far are saved" in text(responses[60])
    # The minute began with the first answer: a client told when it ends waits no longer.
    assert 1 <= int(responses[60].headers["Retry-After"]) <= 60


def test_security_events_are_logged_without_forged_lines(app, caplog):
    """Logins, failures and denials are logged with user and address; newlines cannot forge."""
    caplog.set_level(logging.WARNING)
    with app.app_context():
        create_instructor("teacher", "correct horse")
    client = app.test_client()
    login(client, "evil\nlogin: user='admin'", "whatever")
    login(client, "teacher", "correct horse")
    client.get("/teach/classes/999")
    messages = [record.getMessage() for record in caplog.records]
    assert not any("\n" in message for message in messages)
    assert any(m.startswith("login failed: user=\"evil?login: user='admin'\"") for m in messages)
    assert "login: user='teacher' ip=127.0.0.1 path=/login" in messages
    assert "access denied: user='teacher' ip=127.0.0.1 path=/teach/classes/999" in messages


def test_building_the_app_opens_no_connection(tmp_path):
    """create_app never connects, so no connection is made before gunicorn forks its workers."""
    opened = []

    def record(*_):
        opened.append(1)

    sqlalchemy.event.listen(sqlalchemy.pool.Pool, "connect", record)
    try:
        create_app({"SECRET_KEY": "x", **database(tmp_path)})
    finally:
        sqlalchemy.event.remove(sqlalchemy.pool.Pool, "connect", record)
    assert opened == []


def test_pools_stay_under_postgres_connection_limit():
    """Default workers x pool on an 8-core server stays well under PostgreSQL's 100."""
    workers = 2 * 8 + 1
    assert workers * (POOL_SIZE + POOL_OVERFLOW) <= 70
    assert engine_options("postgresql+psycopg://db/quiz")["pool_pre_ping"] is True
