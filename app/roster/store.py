"""Keeping a roster: adding students with fresh sign-in codes, new codes, removing students,
and finding a student by code."""

import re

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import joinedload

from ..codes import SIGN_IN_CODE_LENGTH, SIGN_IN_TRIES, new_sign_in_code
from ..extensions import db
from ..models import RosterStudent, now
from ..races import commit_first_free
from .parse import Entry, Listed, RosterError, clashes


def class_roster(class_id: int) -> list[RosterStudent]:
    """Every student of the class's roster, removed ones too, in name order."""
    return list(
        db.session.scalars(
            db.select(RosterStudent)
            .filter_by(class_id=class_id)
            .order_by(RosterStudent.name, RosterStudent.id)
        )
    )


def add_students(class_id: int, entries: list[Entry]) -> list[RosterStudent]:
    """Add the students to the roster, each with a fresh sign-in code, all or none.

    The clash check runs again on every try, so that students another instructor added
    meanwhile are reported rather than duplicated; the database's unique constraints are the
    last word on ids and codes.
    """

    def draw() -> list[RosterStudent]:
        roster = [
            Listed(student.name, student.student_number, student.removed_at is not None)
            for student in class_roster(class_id)
        ]
        if problems := clashes(entries, roster):
            raise RosterError(problems)
        added = [
            RosterStudent(
                class_id=class_id,
                name=entry.name,
                student_number=entry.student_number,
                sign_in_code=new_sign_in_code(),
            )
            for entry in entries
        ]
        db.session.add_all(added)
        return added

    return commit_first_free(draw, SIGN_IN_TRIES, "sign-in codes")


def give_new_code(student: RosterStudent) -> None:
    """Replace a student's sign-in code: the old code and link stop working at once."""

    def draw() -> None:
        student.sign_in_code = new_sign_in_code()

    commit_first_free(draw, SIGN_IN_TRIES, "sign-in code")


def remove_student(student: RosterStudent) -> None:
    """Take a student off the roster; their attempts stay, and their code stops working."""
    if student.removed_at is None:
        student.removed_at = now()
        db.session.commit()


def restore_student(student: RosterStudent) -> str | None:
    """Put a removed student back on the roster with their code and attempts, or say why not:
    another student now has their id, or their name without an id to tell them apart."""
    others = [
        Listed(other.name, other.student_number, other.removed_at is not None)
        for other in class_roster(student.class_id)
        if other.id != student.id
    ]
    refusal = (
        f"{student.name} cannot be restored: another student on the roster has the same "
        f"{'student id' if student.student_number else 'name'}."
    )
    if clashes([Entry(0, student.name, student.student_number)], others):
        return refusal
    student.removed_at = None
    try:
        db.session.commit()
    except IntegrityError:  # added meanwhile
        db.session.rollback()
        return refusal
    return None


def find_student(code: str) -> RosterStudent | None:
    """The current roster student with this sign-in code, however it was typed (case, spaces,
    dashes), with their class."""
    normal = re.sub(r"[\s-]", "", code).upper()
    found = None
    if len(normal) == SIGN_IN_CODE_LENGTH:
        found = db.session.scalar(
            db.select(RosterStudent)
            .options(joinedload(RosterStudent.class_))
            .where(RosterStudent.sign_in_code == normal, RosterStudent.removed_at.is_(None))
        )
    return found
