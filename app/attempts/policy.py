"""The student side's rules, as pure functions over plain values: no Flask and no database, so
that views and storage ask them, never re-implement them, and tests check them without an app."""

import math
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from ..models import Accommodation, Assignment, Attempt, FeedbackWhen
from ..zones import utc

# --- An assignment: its window, the attempts allowed, the quizzes a class offers ------------


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


def may_take(slug: str, assigned: Collection[str], usable: Collection[str]) -> bool:
    """Whether a class lets its students start this quiz at all: one it assigns, or, when it
    assigns none, one its instructor may use (never another's quiz, known by its link)."""
    return slug in (assigned or usable)


# --- An attempt's clock, its end, and when its feedback shows ---------------------------------

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
    moves_freely: bool = False,
) -> bool:
    """Whether nothing more can be answered: finished, every question answered (unless its
    student may still change answers until they finish), or past the deadline (an attempt left
    open when the time ran out is finished all the same)."""
    if answered >= questions and not moves_freely:
        return True
    return not may_answer(moment, finished_at, deadline)


def ended_at(
    moment: datetime, finished_at: datetime | None, deadline: datetime | None
) -> datetime | None:
    """When an attempt stopped taking answers: when it was finished, else its deadline once that
    has passed (nobody need press anything when the time runs out); None while it is open."""
    if finished_at is None and deadline is not None and moment > deadline:
        return deadline
    return finished_at


def how_it_ended(
    moment: datetime,
    finished_at: datetime | None,
    answered: int,
    questions: int,
    ends_at: datetime | None,
    closes_at: datetime | None,
    moves_freely: bool = False,
) -> Ending:
    """Why an attempt is over, or that it is not: every question answered comes first (where
    that ends it); an end after the time limit is the time running out, and without one, after
    the close the quiz closing."""
    if answered >= questions and not moves_freely:
        return Ending.ANSWERED_ALL
    end = ended_at(moment, finished_at, answer_deadline(ends_at, closes_at))
    if end is None:
        return Ending.IN_PROGRESS
    if ends_at is not None and end > ends_at:
        return Ending.TIME_RAN_OUT
    if ends_at is None and closes_at is not None and end > closes_at:
        return Ending.QUIZ_CLOSED
    return Ending.FINISHED


def feedback_opens_at(
    feedback: FeedbackWhen, closes_at: datetime | None, time_limit_minutes: int | None
) -> datetime | None:
    """When feedback held "after the quiz closes" opens for everyone: not at the close, but once
    no attempt can still be answered (one started just before the close runs its time limit,
    plus ANSWER_GRACE; without a limit CLOSE_GRACE), so that no review a classmate can open
    shows the key to a student still answering. None when only a release opens it."""
    if feedback != FeedbackWhen.AFTER_CLOSE or closes_at is None:
        return None
    if time_limit_minutes:
        return closes_at + timedelta(minutes=time_limit_minutes) + ANSWER_GRACE
    return closes_at + CLOSE_GRACE


def key_hold_ends(closes_at: datetime | None, time_limit_minutes: int | None) -> datetime | None:
    """When an assignment whose feedback waits stops holding its quiz's key from every other
    attempt: once none of its own attempts can still be answered (as feedback_opens_at after the
    close); None when only a release ends it."""
    try:
        return feedback_opens_at(FeedbackWhen.AFTER_CLOSE, closes_at, time_limit_minutes)
    except OverflowError:  # a close in the year 9999: the hold never ends by itself
        return datetime.max.replace(tzinfo=closes_at.tzinfo)


def holds_back_key(
    feedback: FeedbackWhen,
    moment: datetime,
    ends_at: datetime | None,
    released_at: datetime | None,
) -> bool:
    """Whether an assignment still keeps its quiz's key from students yet to answer: its
    feedback waits (after the attempt or the close), is not released, and some of its attempts
    can still be answered (ends_at, from key_hold_ends). While one does, no attempt under any
    other assignment, in any class or none, shows that quiz's verdicts."""
    if feedback == FeedbackWhen.EACH_ANSWER or released_at is not None:
        return False
    return ends_at is None or moment < ends_at


def _released(moment: datetime, opens_at: datetime | None, released_at: datetime | None) -> bool:
    return released_at is not None or (opens_at is not None and moment >= opens_at)


class Shows(StrEnum):
    """When an attempt's verdicts, explanations and score show, as of now: the one answer
    that every page's sentence about feedback words."""

    EACH_ANSWER = "each answer"
    AT_FINISH = "at the finish"
    AT_CLOSE = "once the quiz closed and time is up, or at a release"
    AT_RELEASE = "at a release"
    ELSEWHERE = "once another class's hold on the key ends"


def feedback_shows(
    feedback: FeedbackWhen,
    moment: datetime,
    opens_at: datetime | None,
    released_at: datetime | None,
    held_elsewhere: bool = False,
) -> Shows:
    """When feedback shows under an assignment's rule now: after each answer; after the
    attempt, or after the close once its feedback opened (opens_at, from feedback_opens_at) or
    the instructor released it, at the finish; otherwise at the close or a release. Another
    class's hold on the key (held_elsewhere) outranks a rule that would show it sooner."""
    if feedback == FeedbackWhen.EACH_ANSWER:
        own = Shows.EACH_ANSWER
    elif feedback == FeedbackWhen.AFTER_ATTEMPT or _released(moment, opens_at, released_at):
        own = Shows.AT_FINISH
    else:
        own = Shows.AT_CLOSE if opens_at else Shows.AT_RELEASE
    if held_elsewhere and own in (Shows.EACH_ANSWER, Shows.AT_FINISH):
        return Shows.ELSEWHERE
    return own


def feedback_visible(
    feedback: FeedbackWhen,
    finished: bool,
    moment: datetime,
    opens_at: datetime | None,
    released_at: datetime | None,
) -> bool:
    """Whether the student may see verdicts, explanations, right answers and the score now, by
    their assignment's own rule: after each answer always, otherwise once the attempt is
    finished and feedback shows at the finish (feedback_shows)."""
    shows = feedback_shows(feedback, moment, opens_at, released_at)
    return shows is Shows.EACH_ANSWER or (finished and shows is Shows.AT_FINISH)


def review_open_to_anyone(
    feedback: FeedbackWhen,
    finished: bool,
    moment: datetime,
    opens_at: datetime | None,
    released_at: datetime | None,
) -> bool:
    """Whether a shared results link shows the review to anyone who has it: at once with
    feedback after each answer, as without an assignment; otherwise only once the student's own
    feedback shows and the instructor released it or it opened for everyone (opens_at), so that
    a finished student cannot hand the answers to one still to start or still answering."""
    if feedback == FeedbackWhen.EACH_ANSWER:
        return True
    return feedback_visible(feedback, finished, moment, opens_at, released_at) and _released(
        moment, opens_at, released_at
    )


# --- The rules in force for one student, resolved once ----------------------------------------


@dataclass(frozen=True)
class Rules:
    """The rules in force for one student under one assignment: its window, time limit,
    attempts and feedback, resolved once by rules_for. Starting, answering, results, the class
    page, grade passback and the release page ask this value, never an assignment's columns, so
    that a rule changed for one student (extra time, another attempt) is changed in rules_for."""

    feedback: FeedbackWhen = FeedbackWhen.EACH_ANSWER
    opens_at: datetime | None = None
    closes_at: datetime | None = None
    time_limit_minutes: int | None = None
    attempts_allowed: int | None = None
    released_at: datetime | None = None
    """When the instructor released held feedback; None until then."""
    exceptions_end_at: datetime | None = None
    """When the last attempt under any student's exception can no longer be answered."""

    @property
    def last_answer_possible(self) -> datetime | None:
        """When no attempt under the assignment can still be answered after the close, any
        student's exception included: the one moment feedback that waits for the close opens
        and a key held back is let go, for every student alike. None without a close."""
        own = key_hold_ends(self.closes_at, self.time_limit_minutes)
        if own is None or self.exceptions_end_at is None:
            return own
        return max(own, utc(self.exceptions_end_at))

    @property
    def feedback_opens_at(self) -> datetime | None:
        """When held feedback opens for everyone without a release; None when only a release
        opens it (or nothing holds it)."""
        if self.feedback != FeedbackWhen.AFTER_CLOSE:
            return None
        return self.last_answer_possible

    @property
    def moves_freely(self) -> bool:
        """Whether an attempt started under these rules lets its student move between questions
        and change answers until they finish: its feedback waits until the end."""
        return self.feedback != FeedbackWhen.EACH_ANSWER

    def window(self, moment: datetime) -> Window:
        return window(moment, self.opens_at, self.closes_at)

    def answer_deadline(self, ends_at: datetime | None) -> datetime | None:
        """The last moment an attempt ending at ends_at (its time limit) takes an answer."""
        return answer_deadline(ends_at, self.closes_at)

    def holds_back_key(self, moment: datetime) -> bool:
        """Whether these rules still keep the quiz's key from every other attempt."""
        return holds_back_key(self.feedback, moment, self.last_answer_possible, self.released_at)

    def shows(self, moment: datetime, held_elsewhere: bool = False) -> Shows:
        return feedback_shows(
            self.feedback, moment, self.feedback_opens_at, self.released_at, held_elsewhere
        )

    def feedback_visible(self, finished: bool, moment: datetime) -> bool:
        return feedback_visible(
            self.feedback, finished, moment, self.feedback_opens_at, self.released_at
        )

    def review_open_to_anyone(self, finished: bool, moment: datetime) -> bool:
        return review_open_to_anyone(
            self.feedback, finished, moment, self.feedback_opens_at, self.released_at
        )


UNASSIGNED = Rules()
"""An attempt outside any assignment: no window, no limits, feedback after each answer."""
RULE_COLUMNS = (
    Assignment.feedback,
    Assignment.opens_at,
    Assignment.closes_at,
    Assignment.time_limit_minutes,
    Assignment.attempts_allowed,
    Assignment.feedback_released_at,
    Assignment.exceptions_end_at,
    Assignment.open_attempts_end_at,
)
"""What rules_for reads, for a query that selects rows rather than assignments."""
EXCEPTION_COLUMNS = (
    Accommodation.time_limit_minutes.label("exception_time_limit_minutes"),
    Accommodation.time_factor.label("exception_time_factor"),
    Accommodation.attempts_allowed.label("exception_attempts_allowed"),
    Accommodation.opens_at.label("exception_opens_at"),
    Accommodation.closes_at.label("exception_closes_at"),
)
"""What rules_for reads of a student's exception, for a query of attempts that outer-joins
it (with_exception)."""


def with_exception(query):
    """A query of attempts and their assignments, with each attempt's student's exception."""
    return query.outerjoin(
        Accommodation,
        (Accommodation.assignment_id == Assignment.id)
        & (Accommodation.student_key == Attempt.student_key),
    )


def rules_for(assignment, exception=None) -> Rules:
    """The rules an assignment (or a row of RULE_COLUMNS) sets, as a student's exception (an
    Accommodation, or a row with EXCEPTION_COLUMNS) changes them; UNASSIGNED for None."""
    if assignment is None or assignment.feedback is None:  # an outer join that found none
        return UNASSIGNED
    if exception is None and hasattr(assignment, "exception_closes_at"):
        exception = _Exception(*(getattr(assignment, column.name) for column in EXCEPTION_COLUMNS))
    limit, allowed = assignment.time_limit_minutes, assignment.attempts_allowed
    closes_at, opens_at = utc(assignment.closes_at), utc(assignment.opens_at)
    # An exception only ever grants more: where the assignment was made more generous since
    # (a longer limit, more attempts, none at all, a later close), the assignment's stands.
    if exception is not None:
        if exception.time_limit_minutes and limit:
            limit = max(limit, exception.time_limit_minutes)
        elif exception.time_factor and limit:
            limit = extended(limit, exception.time_factor)
        if exception.attempts_allowed and allowed:
            allowed = max(allowed, exception.attempts_allowed)
        if exception.closes_at and closes_at:
            closes_at = max(closes_at, utc(exception.closes_at))
        if exception.opens_at and opens_at:
            opens_at = min(opens_at, utc(exception.opens_at))
    return Rules(
        feedback=FeedbackWhen(assignment.feedback),
        opens_at=opens_at,
        closes_at=closes_at,
        time_limit_minutes=limit,
        attempts_allowed=allowed,
        released_at=utc(assignment.feedback_released_at),
        exceptions_end_at=_latest(utc(assignment.exceptions_end_at),
                                  _plus_grace(utc(assignment.open_attempts_end_at))),  # fmt: skip
    )


def _plus_grace(ends_at: datetime | None) -> datetime | None:
    return None if ends_at is None else ends_at + ANSWER_GRACE


def _latest(*moments: datetime | None) -> datetime | None:
    known = [moment for moment in moments if moment is not None]
    return max(known) if known else None


@dataclass(frozen=True)
class _Exception:
    """A student's exception as a row of EXCEPTION_COLUMNS holds it (all None: none)."""

    time_limit_minutes: int | None
    time_factor: float | None
    attempts_allowed: int | None
    opens_at: datetime | None
    closes_at: datetime | None


def extended(minutes: int, factor: float) -> int:
    """A time limit made longer by a factor (45 minutes × 1.5 is 68), rounded up to the
    minute: extra time is never cut short."""
    return math.ceil(minutes * factor - 1e-9)


def exception_ends(assignment, exception) -> datetime | None:
    """When an attempt under a student's exception can no longer be answered after the close
    (their close, then their time limit); None without a close."""
    own = rules_for(assignment, exception)
    return key_hold_ends(own.closes_at, own.time_limit_minutes)
