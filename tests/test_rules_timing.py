"""The rules of an attempt's clock and its feedback, as plain functions without an app."""

from datetime import UTC, datetime, timedelta

import pytest

from app.attempts.policy import (
    ANSWER_GRACE,
    CLOSE_GRACE,
    Ending,
    answer_deadline,
    attempt_finished,
    ended_at,
    feedback_visible,
    how_it_ended,
    may_answer,
    review_open_to_anyone,
)
from app.models import FeedbackWhen

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
EACH, AFTER_ATTEMPT, AFTER_CLOSE = FeedbackWhen


def test_the_time_limit_sets_the_deadline_with_a_few_seconds_of_grace():
    """A time limit ends the attempt, whatever the close: answers in flight get ANSWER_GRACE."""
    assert timedelta(seconds=10) == ANSWER_GRACE
    assert answer_deadline(NOON, None) == NOON + ANSWER_GRACE
    assert answer_deadline(NOON, NOON - 30 * MINUTE) == NOON + ANSWER_GRACE


def test_without_a_time_limit_the_close_plus_its_grace_is_the_deadline():
    assert timedelta(minutes=5) == CLOSE_GRACE
    assert answer_deadline(None, NOON) == NOON + CLOSE_GRACE
    assert answer_deadline(None, None) is None


@pytest.mark.parametrize(
    ("moment", "finished_at", "deadline", "allowed"),
    [
        (NOON, None, None, True),
        (NOON, None, NOON, True),
        (NOON + timedelta(microseconds=1), None, NOON, False),
        (NOON - MINUTE, NOON - 2 * MINUTE, None, False),
        (NOON - MINUTE, NOON - 2 * MINUTE, NOON, False),
    ],
)
def test_an_answer_is_saved_until_the_deadline_and_never_after_finishing(
    moment, finished_at, deadline, allowed
):
    assert may_answer(moment, finished_at, deadline) is allowed


def test_an_attempt_is_finished_by_its_button_its_last_answer_or_its_deadline():
    assert not attempt_finished(NOON, None, 3, 8, NOON)
    assert attempt_finished(NOON, NOON, 3, 8, None)
    assert attempt_finished(NOON, None, 8, 8, None)
    assert attempt_finished(NOON + MINUTE, None, 3, 8, NOON)


@pytest.mark.parametrize(
    ("moment", "finished_at", "answered", "ends_at", "closes_at", "ending"),
    [
        (NOON, None, 3, None, None, Ending.IN_PROGRESS),
        (NOON, None, 8, NOON - MINUTE, None, Ending.ANSWERED_ALL),
        # The last answer in the grace still answers everything.
        (NOON, NOON, 8, NOON - timedelta(seconds=5), None, Ending.ANSWERED_ALL),
        (NOON, NOON - MINUTE, 3, NOON, None, Ending.FINISHED),
        (NOON, NOON - MINUTE, 3, None, None, Ending.FINISHED),
        (NOON, NOON - MINUTE, 3, NOON - 2 * MINUTE, None, Ending.TIME_RAN_OUT),
        # Left open past the deadline: the time ran out even though nothing was written.
        (NOON, None, 3, NOON - MINUTE, None, Ending.TIME_RAN_OUT),
        (NOON, None, 3, NOON - timedelta(seconds=5), None, Ending.IN_PROGRESS),
        (NOON, None, 3, None, NOON - 10 * MINUTE, Ending.QUIZ_CLOSED),
        (NOON, None, 3, None, NOON - MINUTE, Ending.IN_PROGRESS),
        (NOON, NOON - 2 * MINUTE, 3, None, NOON - MINUTE, Ending.FINISHED),
        # A time limit outlasting the close is the one that ends the attempt.
        (NOON, None, 3, NOON + MINUTE, NOON - 10 * MINUTE, Ending.IN_PROGRESS),
    ],
)
def test_how_an_attempt_ended(moment, finished_at, answered, ends_at, closes_at, ending):
    assert how_it_ended(moment, finished_at, answered, 8, ends_at, closes_at) == ending


def test_an_attempt_ends_when_finished_or_once_its_deadline_has_passed():
    """Nobody need press anything when the time runs out: the deadline is the end."""
    assert ended_at(NOON, None, None) is None
    assert ended_at(NOON, None, NOON) is None
    assert ended_at(NOON, None, NOON - MINUTE) == NOON - MINUTE
    assert ended_at(NOON, NOON - 2 * MINUTE, NOON - MINUTE) == NOON - 2 * MINUTE
    assert ended_at(NOON, NOON - 2 * MINUTE, None) == NOON - 2 * MINUTE


def test_feedback_after_each_answer_always_shows():
    assert feedback_visible(EACH, False, NOON, None, None)
    assert review_open_to_anyone(EACH, False, NOON, NOON + MINUTE, None)


def test_feedback_after_the_attempt_shows_once_it_is_finished():
    assert not feedback_visible(AFTER_ATTEMPT, False, NOON, None, None)
    assert not feedback_visible(AFTER_ATTEMPT, False, NOON, NOON - MINUTE, NOON - MINUTE)
    assert feedback_visible(AFTER_ATTEMPT, True, NOON, NOON + MINUTE, None)


def test_feedback_after_the_close_needs_the_close_or_a_release_and_a_finished_attempt():
    assert not feedback_visible(AFTER_CLOSE, True, NOON, None, None)
    assert not feedback_visible(AFTER_CLOSE, True, NOON, NOON + MINUTE, None)
    assert feedback_visible(AFTER_CLOSE, True, NOON, NOON, None)
    assert feedback_visible(AFTER_CLOSE, True, NOON, NOON + MINUTE, NOON - MINUTE)
    assert feedback_visible(AFTER_CLOSE, True, NOON, None, NOON - MINUTE)
    assert not feedback_visible(AFTER_CLOSE, False, NOON, NOON - MINUTE, NOON - MINUTE)


@pytest.mark.parametrize("held", [AFTER_ATTEMPT, AFTER_CLOSE])
def test_a_shared_review_opens_only_once_feedback_is_released_or_the_quiz_closed(held):
    assert not review_open_to_anyone(held, True, NOON, None, None)
    assert not review_open_to_anyone(held, True, NOON, NOON + MINUTE, None)
    assert not review_open_to_anyone(held, False, NOON, None, NOON - MINUTE)
    assert review_open_to_anyone(held, True, NOON, None, NOON - MINUTE)
    assert review_open_to_anyone(held, True, NOON, NOON - MINUTE, None)
