"""Rules that decide, as pure functions over plain values: no Flask and no database, so that
views and storage ask them and tests check them without an app."""

from datetime import datetime, timedelta
from enum import StrEnum

from .models import FeedbackWhen

# --- T (i15-timing): an attempt's clock, its end, and when its feedback shows ------------------

ANSWER_GRACE = timedelta(seconds=10)
"""After a time limit ends, answers still on their way (a slow network, a click at 0:00) count."""
CLOSE_GRACE = timedelta(minutes=5)
"""Without a time limit, an attempt in progress when its quiz closes may be answered this long
after the close: the student clicking through the last question is not cut off mid-way."""


class Ending(StrEnum):
    """How an attempt stands or ended, as its results page says it."""

    IN_PROGRESS = "in progress"
    ANSWERED_ALL = "answered all"
    FINISHED = "finished"
    TIME_RAN_OUT = "time ran out"
    QUIZ_CLOSED = "quiz closed"


def answer_deadline(ends_at: datetime | None, closes_at: datetime | None) -> datetime | None:
    """The last moment an answer is saved: the time limit's end plus ANSWER_GRACE, else the
    quiz's close plus CLOSE_GRACE; None when nothing ends the attempt."""
    if ends_at is not None:
        return ends_at + ANSWER_GRACE
    if closes_at is not None:
        return closes_at + CLOSE_GRACE
    return None


def may_answer(moment: datetime, finished_at: datetime | None, deadline: datetime | None) -> bool:
    """Whether an answer given at this moment is saved: not once the attempt is finished or its
    deadline has passed."""
    return finished_at is None and (deadline is None or moment <= deadline)


def attempt_finished(
    moment: datetime,
    finished_at: datetime | None,
    answered: int,
    questions: int,
    deadline: datetime | None,
) -> bool:
    """Whether nothing more can be answered: finished, every question answered, or past the
    deadline (an attempt left open when the time ran out is finished all the same)."""
    return answered >= questions or not may_answer(moment, finished_at, deadline)


def how_it_ended(
    moment: datetime,
    finished_at: datetime | None,
    answered: int,
    questions: int,
    ends_at: datetime | None,
    closes_at: datetime | None,
) -> Ending:
    """Why an attempt is over, or that it is not: every question answered comes first; an end
    after the time limit is the time running out, and without one, after the close the quiz
    closing."""
    if answered >= questions:
        return Ending.ANSWERED_ALL
    deadline = answer_deadline(ends_at, closes_at)
    end = finished_at
    if end is None and deadline is not None and moment > deadline:
        end = deadline
    if end is None:
        return Ending.IN_PROGRESS
    if ends_at is not None and end > ends_at:
        return Ending.TIME_RAN_OUT
    if ends_at is None and closes_at is not None and end > closes_at:
        return Ending.QUIZ_CLOSED
    return Ending.FINISHED


def _released(moment: datetime, closes_at: datetime | None, released_at: datetime | None) -> bool:
    return released_at is not None or (closes_at is not None and moment >= closes_at)


def feedback_visible(
    feedback: FeedbackWhen,
    finished: bool,
    moment: datetime,
    closes_at: datetime | None,
    released_at: datetime | None,
) -> bool:
    """Whether the student may see verdicts, explanations, right answers and the score now:
    after each answer always; after the attempt once it is finished; after the close once it is
    finished and the quiz has closed or the instructor released feedback."""
    if feedback == FeedbackWhen.EACH_ANSWER:
        return True
    if not finished:
        return False
    return feedback == FeedbackWhen.AFTER_ATTEMPT or _released(moment, closes_at, released_at)


def review_open_to_anyone(
    feedback: FeedbackWhen,
    finished: bool,
    moment: datetime,
    closes_at: datetime | None,
    released_at: datetime | None,
) -> bool:
    """Whether a shared results link shows the review to anyone who has it: at once with
    feedback after each answer, as without an assignment; otherwise only once the student's own
    feedback shows and the instructor released it or the quiz closed, so that a finished student
    cannot hand the answers to one still to start."""
    if feedback == FeedbackWhen.EACH_ANSWER:
        return True
    return feedback_visible(feedback, finished, moment, closes_at, released_at) and _released(
        moment, closes_at, released_at
    )
