"""Rules that decide, as pure functions over plain values: no Flask, no database. Views and
storage ask them, and never re-implement them."""

from collections.abc import Collection, Iterable
from datetime import UTC, datetime
from enum import StrEnum
from zoneinfo import ZoneInfo

# --- Assignments (i15-assign): the window, the attempts allowed, the zone dates are typed in ---


class Window(StrEnum):
    """Where a moment falls against an assignment's opening and closing."""

    NOT_YET_OPEN = "not yet open"
    OPEN = "open"
    CLOSED = "closed"


def window(moment: datetime, opens_at: datetime | None, closes_at: datetime | None) -> Window:
    """Whether an assignment takes new attempts at this moment: it opens at opens_at and is
    closed from closes_at on; either may be missing."""
    if opens_at is not None and moment < utc(opens_at):
        return Window.NOT_YET_OPEN
    if closes_at is not None and moment >= utc(closes_at):
        return Window.CLOSED
    return Window.OPEN


def free_seat(taken: Collection[int], unseated: int, allowed: int) -> int | None:
    """The seat a new attempt takes among 1..allowed, or None when every attempt is used.

    taken: the seats the student's attempts hold; unseated: their attempts that count but hold
    no seat, started while the assignment allowed unlimited attempts.
    """
    free = [seat for seat in range(1, allowed + 1) if seat not in taken]
    return free[0] if len(free) > unseated else None


def attempts_left(used: int, allowed: int | None) -> int | None:
    """How many more attempts a student may start; None when unlimited."""
    return None if allowed is None else max(allowed - used, 0)


def offered(slugs: Iterable[str], assigned: Collection[str]) -> list[str]:
    """The quizzes a class offers, in the bank's order: its assigned ones, or every quiz when
    it assigns none, as classes did before assignments."""
    slugs = list(slugs)
    return [slug for slug in slugs if slug in assigned] if assigned else slugs


def may_take(slug: str, assigned: Collection[str]) -> bool:
    """Whether a class lets its students start this quiz at all."""
    return not assigned or slug in assigned


class NoSuchLocalTime(ValueError):
    """A wall-clock time the zone skips, when clocks go forward."""


def local_to_utc(wall: datetime, zone: str) -> datetime:
    """A time as typed on a clock in the zone (naive), in UTC; the earlier of a repeated hour,
    and NoSuchLocalTime for an hour the clocks skip."""
    place = ZoneInfo(zone)
    moment = wall.replace(tzinfo=place)
    # A skipped time does not survive the trip to UTC and back unchanged.
    if moment.astimezone(UTC).astimezone(place).replace(tzinfo=None) != wall:
        raise NoSuchLocalTime(f"{wall:%d %b %Y %H:%M} does not exist in {zone}")
    return moment.astimezone(UTC)


def utc_to_local(moment: datetime, zone: str) -> datetime:
    """A stored moment on the zone's clocks."""
    return utc(moment).astimezone(ZoneInfo(zone))


def utc(moment: datetime) -> datetime:
    """A stored moment as an aware UTC datetime: SQLite hands back stored UTC without its zone."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
