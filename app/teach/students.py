"""A class's students as its instructors manage them: voiding and restoring attempts, merging
two spellings of one student, and clearing a deleted class's attempts."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, update
from sqlalchemy.exc import IntegrityError

from ..attempts import policy
from ..attempts.service import ROSTER_KEY_PREFIX, grade_changed, rules_of_attempt, used_seats
from ..extensions import db
from ..models import (
    Accommodation,
    Answer,
    Assignment,
    Attempt,
    Instructor,
    MergedStudent,
    RosterStudent,
    now,
)


@dataclass(frozen=True)
class SeenStudent:
    """A student of a class as a merge sees them: their key, spelling and first attempt."""

    key: str
    name: str
    first_seen: datetime | None
    """When their first attempt started; None for a roster student who never started."""
    on_roster: bool


def kept_student(one: SeenStudent, other: SeenStudent) -> tuple[SeenStudent, SeenStudent] | None:
    """Which of two students a merge keeps and which it folds in: the roster's spelling, otherwise
    the first seen; None when both are on the roster (two records, so not one student)."""
    if one.on_roster and other.on_roster:
        return None
    if one.on_roster != other.on_roster:
        return (one, other) if one.on_roster else (other, one)
    order = sorted((one, other), key=lambda seen: (seen.first_seen, seen.key))
    return order[0], order[1]


def void_attempt(attempt: Attempt, instructor: Instructor) -> None:
    """Take an attempt out of statistics, gradebook and attempt limits, noting who and when."""
    attempt.voided_at = now()
    attempt.voided_by_id = instructor.id
    attempt.seat = None  # its place under "Attempts allowed" is free for a retake
    grade_changed(attempt.id, "voided")
    db.session.commit()


def restore_attempt(attempt: Attempt) -> bool:
    """Count a voided attempt again; False, and nothing changed, when its student has used every
    attempt its assignment allows meanwhile."""
    allowed = rules_of_attempt(attempt).attempts_allowed
    # A start racing for the same seat wins or loses at the unique constraint; then look again.
    for _ in range(allowed or 1):
        seat = None
        if allowed:
            taken, unseated = used_seats(attempt.assignment_id, attempt.student_key)
            seat = policy.free_seat(taken, unseated, allowed)
            if seat is None:
                return False
        attempt.voided_at, attempt.voided_by_id, attempt.seat = None, None, seat
        try:
            grade_changed(attempt.id, "restored")
            db.session.commit()
            return True
        except IntegrityError:
            db.session.rollback()
    return False


def seen_students(class_id: int) -> list[SeenStudent]:
    """Everyone who started an attempt in a class, and its roster, in name order: two queries."""
    first = (
        db.select(
            Attempt.student_key,
            func.min(Attempt.started_at).label("first_seen"),
        )
        .where(Attempt.class_id == class_id)
        .group_by(Attempt.student_key)
        .subquery()
    )
    spelled = db.session.execute(
        db.select(first.c.student_key, func.min(Attempt.student_name), first.c.first_seen)
        .join(
            Attempt,
            (Attempt.student_key == first.c.student_key)
            & (Attempt.started_at == first.c.first_seen)
            & (Attempt.class_id == class_id),
        )
        .group_by(first.c.student_key, first.c.first_seen)
    )
    seen = {key: SeenStudent(key, name, at, False) for key, name, at in spelled}
    roster = db.session.scalars(
        db.select(RosterStudent).filter_by(class_id=class_id, removed_at=None)
    )
    for student in roster:
        at = seen[student.student_key].first_seen if student.student_key in seen else None
        seen[student.student_key] = SeenStudent(student.student_key, student.name, at, True)
    return sorted(seen.values(), key=lambda student: (student.name.casefold(), student.key))


def merge_students(class_id: int, kept: SeenStudent, folded: SeenStudent) -> int:
    """Make a class count `folded` as `kept`: their attempts move under one key and spelling,
    and later starts under the folded spelling join the kept student. Returns attempts moved."""
    attempts = Attempt.__table__.c
    roster_id = int(kept.key.removeprefix(ROSTER_KEY_PREFIX)) if kept.on_roster else None
    both = (attempts.class_id == class_id) & attempts.student_key.in_([kept.key, folded.key])
    limited = both & attempts.assignment_id.is_not(None)
    # Seats are renumbered below: two students' first attempts would both hold seat 1.
    db.session.execute(update(Attempt.__table__).where(limited).values(seat=None))
    moved = db.session.execute(
        update(Attempt.__table__)
        .where((attempts.class_id == class_id) & (attempts.student_key == folded.key))
        .values(student_key=kept.key, student_name=kept.name, roster_student_id=roster_id)
    ).rowcount
    _move_exceptions(class_id, kept.key, folded.key)
    _renumber_seats(class_id, kept.key)
    # Earlier merges into the folded student now lead to the kept one.
    db.session.execute(
        update(MergedStudent)
        .where(MergedStudent.class_id == class_id, MergedStudent.into_key == folded.key)
        .values(into_key=kept.key)
    )
    db.session.merge(MergedStudent(class_id=class_id, student_key=folded.key, into_key=kept.key))
    db.session.commit()
    return moved


def _move_exceptions(class_id: int, kept: str, folded: str) -> None:
    """The folded spelling's exceptions become the kept student's, where the kept one has none
    under that assignment (theirs stands where both have one)."""
    in_class = db.select(Assignment.id).where(Assignment.class_id == class_id)
    theirs = db.select(Accommodation.assignment_id).where(Accommodation.student_key == kept)
    db.session.execute(
        update(Accommodation)
        .where(Accommodation.student_key == folded, Accommodation.assignment_id.in_(in_class),
               Accommodation.assignment_id.not_in(theirs))  # fmt: skip
        .values(student_key=kept)
    )
    db.session.execute(
        db.delete(Accommodation).where(
            Accommodation.student_key == folded, Accommodation.assignment_id.in_(in_class)
        )
    )


def _renumber_seats(class_id: int, key: str) -> None:
    """Seat a student's counted attempts 1, 2, ... per assignment, oldest first; attempts past
    their limit (the assignment's, or the student's exception's) keep no seat, and every seat
    stays taken."""
    allowed_here = db.func.coalesce(Accommodation.attempts_allowed, Assignment.attempts_allowed)
    rows = db.session.execute(
        policy.with_exception(
            db.select(Attempt.id, Attempt.assignment_id, allowed_here)
            .select_from(Attempt)
            .join(Assignment, Assignment.id == Attempt.assignment_id)
        )
        .where(
            Attempt.class_id == class_id,
            Attempt.student_key == key,
            Attempt.voided_at.is_(None),
            Assignment.attempts_allowed.is_not(None),
        )
        .order_by(Attempt.started_at, Attempt.id)
    ).all()
    seats: dict[int, int] = {}
    for attempt_id, assignment_id, allowed in rows:
        seats[assignment_id] = seats.get(assignment_id, 0) + 1
        if seats[assignment_id] <= allowed:
            db.session.execute(
                update(Attempt).where(Attempt.id == attempt_id).values(seat=seats[assignment_id])
            )


def delete_class_attempts(class_id: int) -> int:
    """Delete a class's attempts and their answers, uncommitted; returns how many attempts."""
    mine = db.select(Attempt.id).filter_by(class_id=class_id)
    db.session.execute(db.delete(Answer).where(Answer.attempt_id.in_(mine)))
    return db.session.execute(db.delete(Attempt).filter_by(class_id=class_id)).rowcount
