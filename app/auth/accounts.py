"""Instructor accounts: usernames, passwords, and the session token a login carries."""

import functools

from flask import current_app
from werkzeug.security import generate_password_hash

from ..extensions import db, login_manager
from ..models import PASSWORD_LENGTH, Instructor, new_token


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
def nobody(method: str) -> str:
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
