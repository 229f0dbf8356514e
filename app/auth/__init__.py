"""Instructor accounts: log in, log out, passwords, and who may see a class."""

import functools
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Flask,
    abort,
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
from sqlalchemy.orm import joinedload
from werkzeug.security import check_password_hash, generate_password_hash

from ..audit import audit
from ..extensions import db, limiter, login_manager
from ..forms import ChangePasswordForm, LoginForm
from ..models import PASSWORD_LENGTH, Class, ClassShare, Instructor, Role, new_token, now

bp = Blueprint("auth", __name__)

# Failed logins allowed per minute from one address (a school's staff may share one), and for one
# username from one address. Never per username alone: anyone could then lock its owner out.
ADDRESS_FAILURES = "30 per minute"
USERNAME_FAILURES = "10 per minute"


def init_app(app: Flask) -> None:
    """Add the login pages and the account commands."""
    from .commands import (
        create_instructor_command,
        disable_instructor_command,
        grant_instructor_command,
        set_password_command,
    )

    app.register_blueprint(bp)
    for command in (
        create_instructor_command,
        set_password_command,
        disable_instructor_command,
        grant_instructor_command,
    ):
        app.cli.add_command(command)


def normal_username(username: str) -> str:
    """Usernames compare trimmed and case-folded."""
    return username.strip().casefold()


def check_password(password: str) -> str | None:
    """What is wrong with a new password, or None."""
    low, high = PASSWORD_LENGTH
    if not low <= len(password) <= high:
        return f"A password needs {low} to {high} characters."
    return None


def password_hash(password: str) -> str:
    """The password's hash by the configured method (PASSWORD_HASH_METHOD)."""
    return generate_password_hash(password, method=current_app.config["PASSWORD_HASH_METHOD"])


@functools.cache
def _nobody(method: str) -> str:
    """Compared against when the username is unknown, so a wrong name takes as long as a wrong
    password."""
    return generate_password_hash("not anyone's password", method=method)


def create_instructor(username: str, password: str, is_admin: bool = False) -> Instructor:
    """Store a new instructor with a slow hash of the password."""
    instructor = Instructor(
        username=normal_username(username),
        password_hash=password_hash(password),
        is_admin=is_admin,
    )
    db.session.add(instructor)
    db.session.commit()
    return instructor


def set_password(instructor: Instructor, password: str) -> None:
    """Store a new password and end every session of the instructor's but the one that asked."""
    instructor.password_hash = password_hash(password)
    end_sessions(instructor)


def end_sessions(instructor: Instructor) -> None:
    """Log the instructor out everywhere: every session cookie carries the old token."""
    instructor.session_token = new_token()
    db.session.commit()


def find_instructor(username: str) -> Instructor | None:
    return db.session.scalar(db.select(Instructor).filter_by(username=normal_username(username)))


@login_manager.user_loader
def load_instructor(session_token: str) -> Instructor | None:
    return db.session.scalar(
        db.select(Instructor).filter_by(session_token=session_token, is_active=True)
    )


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


_RANK = {Role.VIEW: 1, Role.MANAGE: 2, Role.OWN: 3}


def may(role: Role | None, need: Role) -> bool:
    """Whether a role in a class is enough for what it is asked to do."""
    return role is not None and _RANK[role] >= _RANK[need]


def role_in(found: Class) -> Role | None:
    """What the logged-in instructor may do with a class: everything as its owner or an admin,
    what it was shared with them for, or nothing."""
    if current_user.is_admin or found.instructor_id == current_user.id:
        return Role.OWN
    share = db.session.get(ClassShare, (found.id, current_user.id))
    return Role(share.role) if share else None


def class_or_404(class_id: int, need: Role = Role.VIEW, *, archived_ok: bool = False) -> Class:
    """A class the logged-in instructor may see and, as `need` says, change; others get a 404,
    so that a class's existence is not given away. Those it is shared with for less get a 403,
    and an archived class refuses every change but those marked `archived_ok` with a 409."""
    # Its assignments come along: every class page and export reads them for its defaults.
    found = db.session.get(Class, class_id, options=[joinedload(Class.assignments)])
    role = role_in(found) if found is not None else None
    if role is None:
        audit("access denied")
        abort(404, description="There is no class of yours at this address.")
    if not may(role, need):
        audit("access denied")
        what = "view it" if role is Role.VIEW else "view and manage it"
        abort(403, description=f"{found.name} is shared with you to {what}, not to do this.")
    if need is not Role.VIEW and found.archived_at is not None and not archived_ok:
        abort(
            409,
            description=f"{found.name} is archived, so it is read-only. "
            "Its owner can restore it to change it again.",
        )
    return found


def share_class(class_id: int, instructor_id: int, role: Role) -> None:
    """Share a class with an instructor as `role`, or change what an earlier share allows."""
    db.session.merge(ClassShare(class_id=class_id, instructor_id=instructor_id, role=role.value))
    db.session.commit()


def require_admin():
    """Refuse anyone but an admin; for pages that span every instructor."""
    if not current_user.is_admin:
        audit("access denied")
        abort(404)


def require_author():
    """Refuse an account an LMS launch made, which reaches only its courses' classes: quizzes'
    keys and new classes belong to accounts an admin made or granted, never to a role claim."""
    if not current_user.may_author:
        audit("access denied")
        abort(
            403,
            description="Your account comes from your LMS course, so it reaches that course's "
            "class only. An admin can grant it the rest (flask grant-instructor).",
        )


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
            else _nobody(current_app.config["PASSWORD_HASH_METHOD"])
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
