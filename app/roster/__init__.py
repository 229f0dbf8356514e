"""Rosters: students a class knows by name, who start attempts with a personal sign-in code
instead of typing a name. The rest of the app reaches rosters only through this module."""

from flask import Flask

from ..attempts.service import has_roster
from ..codes import SIGN_IN_CODE_LENGTH, spaced
from .parse import MOST_STUDENTS, Entry, RosterError, read_csv, read_text
from .signin import bp
from .store import (
    add_students,
    class_roster,
    find_student,
    give_new_code,
    remove_student,
    restore_student,
)

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
    app.register_blueprint(bp)
