"""The assignment rules, as plain values: no app, no database."""

from datetime import UTC, datetime, timedelta

import pytest

from app import zones
from app.attempts import policy
from app.attempts.policy import Window

OPENS = datetime(2026, 12, 7, 8, 0, tzinfo=UTC)
CLOSES = OPENS + timedelta(days=4)


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (OPENS - timedelta(seconds=1), Window.NOT_YET_OPEN),
        (OPENS, Window.OPEN),
        (CLOSES - timedelta(seconds=1), Window.OPEN),
        (CLOSES, Window.CLOSED),
    ],
)
def test_window_opens_at_opens_and_closes_at_closes(moment, expected):
    """Open from the opening moment itself; closed from the closing moment itself."""
    assert policy.window(moment, OPENS, CLOSES) is expected


def test_a_missing_date_leaves_that_side_open():
    """No opening date: open until the close; no closing date: open for good after opening."""
    long_ago, far_ahead = OPENS - timedelta(days=999), CLOSES + timedelta(days=999)
    assert policy.window(long_ago, None, CLOSES) is Window.OPEN
    assert policy.window(far_ahead, OPENS, None) is Window.OPEN
    assert policy.window(far_ahead, None, None) is Window.OPEN


def test_window_reads_dates_sqlite_gave_back_without_a_zone():
    """SQLite returns stored UTC without its zone: it is still UTC, not local time."""
    naive = OPENS.replace(tzinfo=None)
    assert policy.window(OPENS - timedelta(minutes=1), naive, None) is Window.NOT_YET_OPEN
    assert policy.window(OPENS, naive, None) is Window.OPEN


@pytest.mark.parametrize(
    ("taken", "unseated", "allowed", "seat"),
    [
        (set(), 0, 1, 1),
        ({1}, 0, 1, None),
        ({1}, 0, 3, 2),
        ({2}, 0, 3, 1),  # a voided first attempt gave its seat back
        ({1, 2, 3}, 0, 3, None),
        (set(), 2, 3, 1),  # two attempts from before the limit use two of the three
        ({1}, 2, 3, None),
        (set(), 5, 3, None),
    ],
)
def test_free_seat_is_the_lowest_left_once_unseated_attempts_are_counted(
    taken, unseated, allowed, seat
):
    """A start takes the lowest free seat; attempts without one still use up the allowance."""
    assert policy.free_seat(taken, unseated, allowed) == seat


@pytest.mark.parametrize(
    ("used", "allowed", "left"), [(0, None, None), (9, None, None), (0, 2, 2), (2, 2, 0), (5, 2, 0)]
)
def test_attempts_left(used, allowed, left):
    """Unlimited stays unlimited; a limit never goes below nothing left."""
    assert policy.attempts_left(used, allowed) == left


def test_a_class_offers_its_assigned_quizzes_in_the_banks_order():
    """Only assigned quizzes, in the bank's order; when nothing is assigned, every quiz on
    offer, and starts at those its instructor may use (not another's, started by its link)."""
    bank = ["alpha", "beta", "gamma"]
    assert policy.offered(bank, {"gamma", "alpha"}) == ["alpha", "gamma"]
    assert policy.offered(bank, set()) == bank
    assert policy.offered(bank, {"retired"}) == []
    usable = ["alpha", "beta"]
    assert policy.may_take("beta", {"alpha"}, usable) is False
    assert policy.may_take("gamma", {"gamma"}, usable) is True
    assert policy.may_take("beta", set(), usable) is True
    assert policy.may_take("gamma", set(), usable) is False


def test_local_times_are_read_on_the_zones_clocks():
    """09:00 in Berlin in December is 08:00 UTC; in July (summer time) it is 07:00 UTC."""
    winter = zones.local_to_utc(datetime(2026, 12, 7, 9, 0), "Europe/Berlin")
    summer = zones.local_to_utc(datetime(2026, 7, 7, 9, 0), "Europe/Berlin")
    assert winter == datetime(2026, 12, 7, 8, 0, tzinfo=UTC)
    assert summer == datetime(2026, 7, 7, 7, 0, tzinfo=UTC)
    assert zones.utc_to_local(winter, "Europe/Berlin").hour == 9
    assert zones.local_to_utc(datetime(2026, 12, 7, 9, 0), "UTC").hour == 9


def test_a_time_the_clocks_skip_is_refused_and_a_repeated_one_is_the_first():
    """02:30 on 29 March 2026 never happens in Berlin; 02:30 on 25 October happens twice."""
    with pytest.raises(zones.NoSuchLocalTime):
        zones.local_to_utc(datetime(2026, 3, 29, 2, 30), "Europe/Berlin")
    twice = zones.local_to_utc(datetime(2026, 10, 25, 2, 30), "Europe/Berlin")
    assert twice == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # still summer time (UTC+2)
