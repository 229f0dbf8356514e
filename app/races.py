"""Writes that race other requests: the database's unique constraints decide who wins, and the
loser rolls back and reads the winner or tries afresh."""

from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import IntegrityError

from .extensions import db

T = TypeVar("T")


class StillClashing(RuntimeError):
    """Every try clashed with a row another request had stored."""


def insert_or_get(row: object, find: Callable[[], T] | None = None) -> T | None:
    """Store `row` and commit; when another request stored its like first, keep theirs. Then
    what `find` reads: ours or the winner's."""
    db.session.add(row)
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
    return find() if find is not None else None


def commit_first_free(
    draw: Callable[[], T],
    tries: int,
    clash: str,
    winner: Callable[[], T | None] = lambda: None,
) -> T:
    """Commit what `draw` adds or changes, drawing afresh (a new code, the next free seat) while
    the commit clashes; after a clash, a row another request stored first (`winner`) is the
    answer. `draw` may raise to stop; `clash` names what ran out, for StillClashing."""
    for _ in range(tries):
        drawn = draw()
        try:
            db.session.commit()
            return drawn
        except IntegrityError:
            db.session.rollback()
            if (found := winner()) is not None:
                return found
    raise StillClashing(f"no free {clash} after {tries} tries")
