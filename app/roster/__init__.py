"""Rosters: students a class knows by name, who start attempts with a personal sign-in code
instead of typing a name. The rest of the app reaches rosters only through this module."""

from flask import Blueprint, Flask

from .parse import MOST_STUDENTS, Entry, RosterError, read_csv, read_text
from .store import (
    SIGN_IN_CODE_LENGTH,
    add_students,
    class_roster,
    find_student,
    give_new_code,
    has_roster,
    remove_student,
    restore_student,
    spaced,
)

bp = Blueprint("roster", __name__)

__all__ = [
    "MOST_STUDENTS",
    "SIGN_IN_CODE_LENGTH",
    "Entry",
    "RosterError",
    "add_students",
    "bp",
    "class_roster",
    "find_student",
    "give_new_code",
    "has_roster",
    "init_app",
    "read_csv",
    "read_text",
    "remove_student",
    "restore_student",
    "spaced",
]


def init_app(app: Flask) -> None:
    """Add the students' sign-in pages."""
    from . import signin  # noqa: F401 - its routes join bp

    app.register_blueprint(bp)
