"""Rules that decide, as pure functions over plain values: no Flask and no database here, so
views and storage ask them and tests check them without an app."""

from dataclasses import dataclass
from datetime import datetime

# M: class management (void and restore attempts, merge students)


def free_seat(taken: set[int], allowed: int | None) -> int | None:
    """The lowest of a student's allowed attempts not yet taken under an assignment: None when
    all are taken, and no seat at all (None) when attempts are unlimited."""
    if allowed is None:
        return None
    return next((seat for seat in range(1, allowed + 1) if seat not in taken), None)


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
