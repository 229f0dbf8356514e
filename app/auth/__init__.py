"""Instructor accounts: log in, log out, passwords, and who may see a class. The rest of the app
reaches them through this front door."""

from flask import Flask

from .accounts import create_instructor, find_instructor
from .commands import account_commands
from .permissions import (
    class_or_404,
    may,
    require_admin,
    require_author,
    role_in,
    share_class,
    usable_slugs,
    visible_records,
)
from .views import bp, idle_minute, no_store, safe_next

__all__ = [
    "class_or_404",
    "create_instructor",
    "find_instructor",
    "idle_minute",
    "init_app",
    "may",
    "no_store",
    "require_admin",
    "require_author",
    "role_in",
    "safe_next",
    "share_class",
    "usable_slugs",
    "visible_records",
]


def init_app(app: Flask) -> None:
    """Add the login pages and the account commands."""
    app.register_blueprint(bp)
    for command in account_commands:
        app.cli.add_command(command)
