"""The class-management rules, without an app: which spelling a merge of two students keeps."""

from datetime import UTC, datetime

from app.teach.students import SeenStudent, kept_student

MONDAY, TUESDAY = datetime(2026, 3, 2, 9, tzinfo=UTC), datetime(2026, 3, 3, 9, tzinfo=UTC)


def seen(key, at, on_roster=False):
    return SeenStudent(key, key.title(), at, on_roster)


def test_merge_keeps_the_first_seen_spelling():
    """Of two typed names, the one whose first attempt came first stays, whichever is chosen
    first."""
    early, late = seen("dana diaz", MONDAY), seen("dana dias", TUESDAY)
    assert kept_student(late, early) == (early, late)
    assert kept_student(early, late) == (early, late)


def test_merge_keeps_the_roster_spelling_even_if_seen_later():
    """A roster student stays, even one who never started, over a name typed earlier."""
    typed, roster = seen("dana d", MONDAY), seen("#roster:4", None, on_roster=True)
    assert kept_student(typed, roster) == (roster, typed)


def test_two_roster_students_are_not_merged():
    """Two roster records are two students: no merge."""
    assert kept_student(seen("#roster:1", MONDAY, True), seen("#roster:2", None, True)) is None


def test_same_moment_is_decided_by_key():
    """Two first attempts in the same second: the order is still fixed."""
    one, other = seen("b", MONDAY), seen("a", MONDAY)
    assert kept_student(one, other) == (other, one)
