"""The login pages: log in, log out, change a password, and the idle timeout."""

from urllib.parse import urlsplit

from flask import (
    Blueprint,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_login import current_user, login_required, login_user, logout_user
from werkzeug.security import check_password_hash

from ..audit import audit
from ..extensions import limiter, login_manager
from ..models import now
from .accounts import end_sessions, find_instructor, nobody, normal_username, set_password
from .forms import ChangePasswordForm, LoginForm

bp = Blueprint("auth", __name__)

# Failed logins allowed per minute from one address (a school's staff may share one), and for one
# username from one address. Never per username alone: anyone could then lock its owner out.
ADDRESS_FAILURES = "30 per minute"
USERNAME_FAILURES = "10 per minute"


@bp.before_app_request
def end_idle_login() -> None:
    """End an instructor's login after INSTRUCTOR_IDLE_MINUTES without a request."""
    if "_user_id" not in session:
        # No login in this session (a student's): nobody to load. Flask-Login's strong
        # protection would find no login fingerprint in it and rewrite its cookie, and delete a
        # remember cookie never set, on every page. g._login_user is where it keeps the user.
        g._login_user = login_manager.anonymous_user()
        return
    if session.permanent:
        # A login from before it ended with the browser: Flask-Login's strong protection only
        # marks a permanent session stale instead of ending it, and its cookie lasts a month.
        session.permanent = False
    moment = idle_minute()
    seen = session.get("seen", moment)  # logged in before the timeout existed: from now
    if moment - seen > current_app.config["INSTRUCTOR_IDLE_MINUTES"]:
        audit("idle logout")
        logout_user()
        session.clear()
        flash("You were logged out after a while without activity.")
    elif session.get("seen") != moment:
        session["seen"] = moment  # once a minute at most: each change is a new cookie


def idle_minute() -> int:
    """Minutes since the epoch: the idle timeout's clock."""
    return int(now().timestamp() // 60)


def safe_next(target: str | None) -> str | None:
    """A `next` address only if it is a path on this site (no scheme, host or backslash)."""
    if not target or not target.startswith("/") or target.startswith("//"):
        return None
    # Browsers read a backslash as a slash and drop tabs and newlines: "/\\evil", "/\t/evil".
    if any(char == "\\" or ord(char) < 0x20 or ord(char) == 0x7F for char in target):
        return None
    parts = urlsplit(target)
    return target if not parts.scheme and not parts.netloc else None


def _username_tried() -> str:
    return f"user:{normal_username(request.form.get('username', ''))}@{request.remote_addr}"


def _uncount_try() -> None:
    """Give back the tries a right password took: only failures count against the limits."""
    for counted in limiter.current_limits:
        limiter.limiter.storage.incr(counted.key, counted.limit.get_expiry(), amount=-1)


@bp.after_request
def no_store(response):
    """Instructors' pages and exports hold grades and names: no browser or proxy may keep them."""
    response.cache_control.no_store = True
    return response


@bp.route("/login", methods=["GET", "POST"])
# Every try is counted before the password is checked, so that guesses sent all at once cannot
# slip past a limit together; a right password is given back (_uncount_try).
@limiter.limit(ADDRESS_FAILURES, methods=["POST"])
@limiter.limit(USERNAME_FAILURES, methods=["POST"], key_func=_username_tried)
def login():
    """Log an instructor in, then go where they were heading."""
    if current_user.is_authenticated:
        return redirect(url_for("teach.dashboard"))
    form = LoginForm()
    failed = disabled = False
    if form.validate_on_submit():
        instructor = find_instructor(form.username.data)
        stored = (
            instructor.password_hash
            if instructor
            else nobody(current_app.config["PASSWORD_HASH_METHOD"])
        )
        right = check_password_hash(stored, form.password.data) and instructor is not None
        if right and instructor.is_active:
            _uncount_try()
            session.clear()  # a fresh session at login: nothing set before it survives
            login_user(instructor)
            session["seen"] = idle_minute()
            audit("login", instructor.username)
            return redirect(safe_next(request.args.get("next")) or url_for("teach.dashboard"), 303)
        # Only someone who knows the password learns that the account is disabled.
        disabled, failed = right, not right
        audit("login refused, account disabled" if right else "login failed", form.username.data)
    status = 400 if form.errors or failed or disabled else 200
    page = render_template("auth/login.html", form=form, failed=failed, disabled=disabled)
    return page, status


@bp.route("/account/password", methods=["GET", "POST"])
@login_required
# Someone who finds a logged-in browser must not be able to guess the password here either.
@limiter.limit(USERNAME_FAILURES, methods=["POST"])
def change_password():
    """Change the logged-in instructor's password; their other sessions end."""
    instructor = current_user._get_current_object()
    form = ChangePasswordForm(instructor)
    if form.validate_on_submit():
        set_password(instructor, form.new_password.data)
        login_user(instructor)  # this browser takes the new token; every other copy is out
        audit("password changed")
        flash("Your password is changed. Everywhere else you were logged in, you are logged out.")
        return redirect(url_for("teach.dashboard"), 303)
    return render_template("auth/password.html", form=form), 400 if form.errors else 200


@bp.post("/logout")
@login_required
def logout():
    """Log out here and everywhere else this account's cookie was copied to."""
    audit("logout")
    end_sessions(current_user)
    logout_user()
    session.clear()
    flash("You are logged out.")
    return redirect(url_for("auth.login"), 303)
