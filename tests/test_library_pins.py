"""What the app relies on inside its libraries beyond their documented API, each pinned to a
version range in pyproject.toml and held here, so that an upgrade that changes it fails a test
rather than a login, a limit or a launch."""

import pytest
from flask import g, session
from flask_login import current_user, login_user

from app.auth import create_instructor
from app.extensions import _address_and_browser, db, limiter, login_manager
from app.lti.launch import FrameCookies
from app.models import RateLimitCount

from helpers import login, make_app

pytestmark = pytest.mark.any_database


def test_flask_login_keeps_the_user_in_g_and_asks_our_identifier(app, monkeypatch):
    """Flask-Login reads the request's user from g._login_user (set for a student's request
    so that nothing is loaded) and fingerprints a login with _session_identifier_generator
    (ours, which trusts only ProxyFix's address)."""
    assert login_manager._session_identifier_generator is _address_and_browser
    monkeypatch.setattr(login_manager, "_user_callback", lambda _: pytest.fail("loaded a user"))
    with app.test_request_context("/", headers={"User-Agent": "pinned"}):
        g._login_user = login_manager.anonymous_user()
        assert not current_user.is_authenticated
    with app.app_context():
        teacher = create_instructor("pinned", "correct horse battery")
        db.session.commit()
        with app.test_request_context("/", headers={"User-Agent": "pinned"}):
            login_user(teacher)
            assert session["_id"] == _address_and_browser()


def test_flask_limiter_forgets_a_dead_storage_for_a_new_app(tmp_path):
    """The one limiter remembers a dead storage in _storage_dead; a new app resets it, so its
    counts go to its own database, not to the in-memory fallback."""
    limiter._storage_dead = True
    app = make_app(tmp_path)
    assert limiter._storage_dead is False
    login(app.test_client(), "nobody", "wrong")
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(RateLimitCount)) > 0


def test_pylti1p3_keeps_the_cookies_it_will_set_by_their_full_names(app):
    """FrameCookies sends pylti1p3's cookies itself, from _cookie_data_to_set."""
    with app.test_request_context("/"):
        cookies = FrameCookies(None)
        cookies.set_cookie("state-abc", "value", exp=60)
        assert cookies._cookie_data_to_set == {"lti1p3-state-abc": {"value": "value", "exp": 60}}
