"""Instructor accounts: log in, log out, passwords, and who may see a class. The rest of the app
reaches them through this front door."""

from flask import Flask

from .accounts import (
    check_password,
    create_instructor,
    end_sessions,
    find_instructor,
    normal_username,
    password_hash,
    set_password,
)
from .commands import account_commands
from .permissions import (
    class_or_404,
    may,
    require_admin,
    require_author,
    role_in,
    share_class,
)
from .views import ADDRESS_FAILURES, USERNAME_FAILURES, bp, idle_minute, no_store, safe_next

__all__ = [
    "ADDRESS_FAILURES",
    "USERNAME_FAILURES",
    "check_password",
    "class_or_404",
    "create_instructor",
    "end_sessions",
    "find_instructor",
    "idle_minute",
    "init_app",
    "may",
    "no_store",
    "normal_username",
    "password_hash",
    "require_admin",
    "require_author",
    "role_in",
    "safe_next",
    "set_password",
    "share_class",
]


def init_app(app: Flask) -> None:
    """Add the login pages and the account commands."""
    app.register_blueprint(bp)
    for command in account_commands:
        app.cli.add_command(command)
