"""Class reports: fetched in one explicit function, then worked out by pure ones; nothing here
renders, and nothing a template asks of a report runs a query."""

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from enum import StrEnum
from functools import cached_property
from itertools import chain
from typing import NamedTuple

from sqlalchemy import ColumnElement, case, func, null, union_all
from sqlalchemy.orm import undefer

from . import stats, zones
from .attempts import policy
from .bank import Quiz, quiz_from_snapshot
from .extensions import db
from .grading import Score, percent
from .models import (
    Accommodation,
    Answer,
    Assignment,
    Attempt,
    QuizVersion,
    ReplacedAnswer,
    RosterStudent,
    now,
    roster_key,
    student_key,
)
from .question_types import Question, type_of


class Counting(StrEnum):
    """Which completed attempts count for each student; first is Moodle's advice for statistics."""

    FIRST = "first"
    BEST = "best"
    LATEST = "latest"
    ALL = "all"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Counting.FIRST: "First attempt",
    Counting.BEST: "Best attempt",
    Counting.LATEST: "Latest attempt",
    Counting.ALL: "All attempts",
}


def _best(complete: list[int], shares: dict[int, float]) -> list[int]:
    # The highest share of the questions; max keeps the earliest of equals.
    return [max(complete, key=shares.__getitem__)]


PICK: dict[Counting, Callable[[list[int], dict[int, float]], list[int]]] = {
    Counting.FIRST: lambda complete, _: complete[:1],
    Counting.BEST: _best,
    Counting.LATEST: lambda complete, _: complete[-1:],
    Counting.ALL: lambda complete, _: complete,
}
"""A student's counted attempts among their completed ones (ids, oldest first), given each
completed attempt's share of right answers: Moodle's grading methods."""


@dataclass(frozen=True)
class AttemptRow:
    """One attempt as a report sees it: who, when, how far, how well."""

    id: int
    token: str
    student: str
    started_at: datetime
    last_answer_at: datetime | None
    answered: int
    points: float
    quiz: Quiz
    """The version of the quiz this attempt was taken against."""
    number: int
    """1 for a student's first attempt, 2 for the next, and so on."""
    finished_at: datetime | None = None
    """When "Finish attempt" or the time limit ended it, if it ended before every answer, even
    with nobody there to press anything when the time ran out."""
    moves_freely: bool = False
    """Whether its answers could change until it was finished: every answer given does not
    end it."""
    drawn: frozenset[str] | None = None
    """The questions it drew from its quiz's pools, and those in none; None without pools."""

    @property
    def out_of(self) -> float:
        return self.quiz.out_of

    @property
    def complete(self) -> bool:
        """Finished: every question answered (in one pass), or ended and scored on what was
        answered."""
        return self._every_answer or self.finished_at is not None

    @property
    def _every_answer(self) -> bool:
        """Every question answered in one pass, which ends the attempt at the last answer."""
        return self.answered == self.quiz.asked and not self.moves_freely

    @property
    def score(self) -> Score:
        return Score(self.points, self.out_of)

    @property
    def time_taken(self) -> timedelta | None:
        every = self._every_answer
        ended = self.last_answer_at if every else self.finished_at
        # A deadline comes from the rules in UTC; the database may hand back naive UTC.
        return zones.utc(ended) - zones.utc(self.started_at) if self.complete and ended else None


@dataclass(frozen=True)
class StudentRow:
    name: str
    """The roster's name, or the name as the student first typed it."""
    attempts: int
    """Finished attempts."""
    shown: AttemptRow | None
    """The counted attempt, or the latest one while none is finished; None if not started."""
    unfinished: int = 0
    """Attempts started and not finished."""
    key: str = ""
    """Who the row is about: rows with the same key are one student's."""
    student_number: str | None = None
    """The student id or email the roster gives."""
    removed: bool = False
    """Taken off the roster: their attempts stay, marked as removed."""

    @property
    def status(self) -> str | None:
        """Why there is no score: "Not started", "Not finished", or None when there is one."""
        if self.shown is None:
            return "Not started"
        return None if self.shown.complete else "Not finished"


class AnswerRow(NamedTuple):
    """One stored answer of a counted attempt."""

    attempt_id: int
    question_id: str
    response: str
    is_correct: bool
    mark: float | None = None
    """The share of the question's points; None from a release before marks (is_correct says)."""


@dataclass(frozen=True)
class GradebookRow:
    student: str
    attempts: int
    score: float | None
    """The counted attempt's points, or their mean when all attempts count; None if none."""
    max_score: float
    unfinished: int = 0
    student_number: str | None = None
    removed: bool = False
    status: str | None = None
    """"Not started" or "Not finished" when there is no score."""

    @property
    def percent(self) -> float | None:
        return None if self.score is None else percent(self.score, self.max_score)


@dataclass(frozen=True)
class ItemRow:
    """One question's statistics over the counted attempts."""

    question: Question
    number: int
    n: int
    facility: float | None
    discrimination: float | None
    counts: dict[str, int]
    """Stored response -> how many counted attempts gave it."""

    @property
    def tally(self) -> list:
        """How many gave each answer, as the question's type lists them."""
        return type_of(self.question).tally(self.question, self.counts)

    @property
    def facility_words(self) -> str:
        """What facility counts, after its percent: the right answers, or the mean mark where
        an answer may earn part of the points (Moodle's facility)."""
        return "of the points on average" if type_of(self.question).partial_marks else "right"

    @property
    def not_answered(self) -> int:
        """Counted attempts that were asked the question and left it unanswered."""
        return self.n - sum(self.counts.values())

    @property
    def warned(self) -> bool:
        """Whether something may be wrong with the question: a wrong choice beats the right one,
        or stronger students did worse on it."""
        return bool(self.flags) and self.flags != ["Everyone got this right"]

    @property
    def flags(self) -> list[str]:
        """Plain-language warnings for the instructor."""
        found = []
        kind = type_of(self.question)
        if self.n and (misread := kind.misread(self.question, self.counts)):
            found.append(f"Most students {kind.verb} “{misread}”")
        if self.discrimination is not None and self.discrimination < 0:
            found.append("Negative discrimination: check the key or the wording")
        if self.n and self.facility == 1:
            found.append("Everyone got this right")
        return found


@dataclass(frozen=True)
class Roster:
    """A class's students at one quiz, as plain values: enough for a gradebook."""

    quiz: Quiz
    counting: Counting
    students: list[StudentRow]
    """A row per student (per counted attempt when all count), unfinished ones too, and the
    roster's students who have not started."""
    student_count: int
    started: int
    completed: int
    roster_size: int = 0
    """Students on the class's roster, not counting removed ones."""
    not_started: int = 0
    """Roster students without an attempt."""
    with_ids: bool = False
    """Whether the roster gives any student id or email: the gradebook then has their column."""


def counted(students: list[StudentRow]) -> list[AttemptRow]:
    """The completed attempts that count, oldest first."""
    shown = [row.shown for row in students if row.shown and row.shown.complete]
    return sorted(shown, key=lambda attempt: (attempt.started_at, attempt.id))


def gradebook(quiz: Quiz, students: list[StudentRow]) -> list[GradebookRow]:
    """A row per student: the counted attempt's score, or the mean when all count."""
    rows: dict[str, list[StudentRow]] = {}
    for row in students:
        rows.setdefault(row.key or row.name, []).append(row)
    top = quiz.out_of
    found = []
    for mine in rows.values():
        complete = [row.shown for row in mine if row.shown and row.shown.complete]
        share = sum(a.points / a.out_of for a in complete) / len(complete) if complete else None
        score = None if share is None else share * top
        first = mine[0]
        found.append(
            GradebookRow(
                first.name,
                first.attempts,
                score,
                top,
                unfinished=first.unfinished,
                student_number=first.student_number,
                removed=first.removed,
                status=first.status,
            )
        )
    return found


def glance(items: list[ItemRow], hardest: int = 3) -> list[ItemRow]:
    """The questions an instructor should look at first: the few hardest, then every other
    question with a warning, in the quiz's order."""
    answered = [item for item in items if item.facility is not None and item.facility < 1]
    first = sorted(answered, key=lambda item: item.facility)[:hardest]
    return first + [item for item in items if item.warned and item not in first]


def answer_matrix(
    quiz: Quiz, attempts: list[AttemptRow], answers: Sequence[AnswerRow]
) -> tuple[stats.Matrix, dict[str, Counter]]:
    """The counted attempts' marks by question (1 right, 0 wrong or unanswered, a fraction for
    partial credit, None where it was not asked), in the current quiz's order, and how many
    gave each response; answers of other attempts are left out."""
    columns = {question.id: j for j, question in enumerate(quiz.questions)}
    # A counted attempt is finished: a question it was asked and left unanswered (the time ran
    # out, or "Finish attempt") scores 0 here as in its score. None stays for a question its
    # version of the quiz did not ask.
    blanks: dict[str, list[int | None]] = {}
    for version in {attempt.quiz.version: attempt.quiz for attempt in attempts}.values():
        asked = {question.id for question in version.questions}
        blanks[version.version] = [0 if q.id in asked else None for q in quiz.questions]
    rows = {attempt.id: blanks[attempt.quiz.version].copy() for attempt in attempts}
    for attempt in attempts:  # a question its draw left out was not asked either
        if attempt.drawn is not None:
            row = rows[attempt.id]
            for j, question in enumerate(quiz.questions):
                if question.id not in attempt.drawn:
                    row[j] = None
    counts: dict[str, Counter] = {question.id: Counter() for question in quiz.questions}
    # Unpacked, not read by name: counting all attempts reads 100,000 answers here.
    for attempt_id, question_id, response, is_correct, mark in answers:
        if attempt_id in rows and question_id in columns:
            # grading.stored_mark, inline: this loop runs once per answer of the class.
            rows[attempt_id][columns[question_id]] = int(is_correct) if mark is None else mark
            counts[question_id][response] += 1
    return list(rows.values()), counts


def item_rows(quiz: Quiz, matrix: stats.Matrix, counts: dict[str, Counter]) -> list[ItemRow]:
    """Each question's facility, discrimination and choice counts."""
    return [
        ItemRow(
            question=question,
            number=j + 1,
            n=sum(row[j] is not None for row in matrix),
            facility=stats.facility(matrix, j),
            discrimination=stats.discrimination(matrix, j),
            counts=counts[question.id],
        )
        for j, question in enumerate(quiz.questions)
    ]


@dataclass(frozen=True)
class ClassReport(Roster):
    """A roster and its counted attempts' answers; every figure is worked out from these values,
    without the database."""

    answers: Sequence[AnswerRow] = ()
    """AnswerRows, or the database's rows with the same fields in the same order."""

    @cached_property
    def counted(self) -> list[AttemptRow]:
        return counted(self.students)

    @cached_property
    def gradebook(self) -> list[GradebookRow]:
        return gradebook(self.quiz, self.students)

    @cached_property
    def _matrix_and_counts(self) -> tuple[stats.Matrix, dict[str, Counter]]:
        return answer_matrix(self.quiz, self.counted, self.answers)

    @cached_property
    def summary(self) -> stats.Summary:
        """Scores on the current quiz's scale, so versions of another length compare."""
        top = self.quiz.out_of
        return stats.summary([a.points * top / a.out_of for a in self.counted])

    @cached_property
    def alpha(self) -> float | None:
        return stats.cronbach_alpha(self._matrix_and_counts[0])

    @cached_property
    def histogram(self) -> list[int]:
        top = round(self.quiz.out_of)  # a bar per whole point
        return stats.histogram([round(a.points * top / a.out_of) for a in self.counted], top)

    @cached_property
    def items(self) -> list[ItemRow]:
        return item_rows(self.quiz, *self._matrix_and_counts)

    @cached_property
    def glance(self) -> list[ItemRow]:
        return glance(self.items)


def _rows(statement, **options):
    """Plain rows on the session's connection: the ORM's per-row bookkeeping is wasted on them."""
    return db.session.connection().execute(statement, execution_options=options)


def _versions(quiz: Quiz) -> dict[int, Quiz]:
    """Every stored version of this quiz, by id: attempts may have begun any of them."""
    return {
        v.id: quiz if v.digest == quiz.version else quiz_from_snapshot(v.snapshot)
        for v in db.session.scalars(
            db.select(QuizVersion).filter_by(slug=quiz.slug).options(undefer(QuizVersion.snapshot))
        )
    }


def _in_scope(versions: dict[int, Quiz], class_id: int | None) -> ColumnElement[bool]:
    """The attempts of a class (or of no class) at any version of the quiz; voided ones are out
    of every report and export."""
    return (
        Attempt.quiz_version_id.in_(versions)
        & (Attempt.class_id.is_(None) if class_id is None else Attempt.class_id == class_id)
        & Attempt.voided_at.is_(None)
    )


_FINISHED = Attempt.finished_at.is_not(None)
_OUTLINE = policy.with_exception(
    db.select(
        Attempt.id,
        Attempt.student_key,
        Attempt.student_name,
        Attempt.quiz_version_id,
        Attempt.answered,
        Attempt.points,
        _FINISHED,
        Attempt.moves_freely,
        # What ends an attempt nobody finished: its time limit, or its quiz's close. Only for
        # those: reading a moment costs a parse on SQLite, and 12,500 of them a tenth of the page.
        case((~_FINISHED, Attempt.ends_at)),
        # The student's own close, when an exception gives them a later one.
        case((~_FINISHED, func.coalesce(Accommodation.closes_at, Assignment.closes_at))),
    )
    .outerjoin(Attempt.assignment)
).order_by(Attempt.started_at, Attempt.id)
_FULL = db.select(
    Attempt.id,
    Attempt.token,
    Attempt.started_at,
    Attempt.last_answer_at,
    Attempt.answered,
    Attempt.points,
    Attempt.quiz_version_id,
    Attempt.finished_at,
    Attempt.moves_freely,
    Attempt.question_order,
)
_ROSTER = db.select(
    RosterStudent.id, RosterStudent.name, RosterStudent.student_number, RosterStudent.removed_at
).order_by(RosterStudent.id)


class Listed(NamedTuple):
    """A roster student as reports show them."""

    name: str
    student_number: str | None
    removed: bool


def _listed(class_id: int | None) -> dict[str, Listed]:
    """The class's roster, removed students too, by the student key their attempts carry."""
    if class_id is None:
        return {}
    rows = _rows(_ROSTER.where(RosterStudent.class_id == class_id))
    return {
        roster_key(id_): Listed(name, number, removed is not None)
        for id_, name, number, removed in rows
    }


# The key's marks, not an instructor's by hand: statistics say how the question did.
_ANSWERS = db.select(
    Answer.attempt_id, Answer.question_id, Answer.response, Answer.is_correct, Answer.mark
)


def _roster(
    quiz: Quiz, class_id: int | None, counting: Counting
) -> tuple[Roster, ColumnElement[bool]]:
    """The roster, and which attempts are the class's, for reading their answers.

    Every attempt is read as a few small columns to pick the counted ones; only those are read
    in full (SQLite's window functions were slower at this than Python).
    """
    versions = _versions(quiz)
    listed = _listed(class_id)
    sizes = {id_: version.asked for id_, version in versions.items()}
    out_of = {id_: version.out_of for id_, version in versions.items()}
    in_scope = _in_scope(versions, class_id)
    names: dict[str, str] = {key: student.name for key, student in listed.items()}
    numbers: dict[int, int] = {}
    mine: dict[str, list[int]] = {}  # student key -> their attempt ids, oldest first
    shares: dict[int, float] = {}  # completed attempt id -> its share of right answers
    lapsed: dict[int, datetime] = {}  # attempt id -> the deadline that ended it, left open
    moment = now()
    attempts = _rows(_OUTLINE.where(in_scope))
    # In batches: psycopg's row-by-row fetchone cost a third of the page, and one big fetch
    # left the worker holding the memory of 12,500 rows at once. Plain ints and dicts: an
    # object per attempt cost the page a few milliseconds.
    for id_, key, name, version, answered, points, finished, free, ends, closes in (
        chain.from_iterable(attempts.partitions(1000))
    ):
        names.setdefault(key, name)
        ids = mine.setdefault(key, [])
        ids.append(id_)
        numbers[id_] = len(ids)
        # Every question answered ends an attempt, unless answers could change until its finish.
        if (answered >= sizes[version] and not free) or finished:
            shares[id_] = points / out_of[version]
        elif ends is not None or closes is not None:
            # Most students whose time runs out never press anything again: their attempt is
            # over all the same, and scored on what they answered.
            deadline = policy.answer_deadline(zones.utc(ends), zones.utc(closes))
            ended = policy.ended_at(moment, None, deadline)
            if ended is not None:
                lapsed[id_] = ended
                shares[id_] = points / out_of[version]
    shown: dict[int, str] = {}  # attempt id -> its student's key
    pick = PICK[counting]
    for key, ids in mine.items():
        complete = [id_ for id_ in ids if id_ in shares]
        # A student with no completed attempt yet is listed with their latest one.
        for id_ in pick(complete, shares) if complete else ids[-1:]:
            shown[id_] = key
    # Counting all may show thousands of attempts: too many to name one by one.
    full = _FULL.where(in_scope if counting is Counting.ALL else Attempt.id.in_(shown))
    finished = {key: sum(id_ in shares for id_ in ids) for key, ids in mine.items()}

    def row(key: str, attempt: AttemptRow | None) -> StudentRow:
        student = listed.get(key)
        return StudentRow(
            names[key],
            finished.get(key, 0),
            attempt,
            unfinished=len(mine.get(key, ())) - finished.get(key, 0),
            key=key,
            student_number=student.student_number if student else None,
            removed=student.removed if student else False,
        )

    students = []
    for id_, token, started, last, answered, points, version, ended, free, order in _rows(
        full
    ).all():
        if id_ in shown:
            key = shown[id_]
            attempt = AttemptRow(
                id=id_,
                token=token,
                student=names[key],
                started_at=started,
                last_answer_at=last,
                answered=answered,
                points=points,
                quiz=versions[version],
                number=numbers[id_],
                finished_at=ended or lapsed.get(id_),
                moves_freely=free,
                drawn=frozenset(order) if versions[version].pools else None,
            )
            students.append(row(key, attempt))
    waiting = [key for key, student in listed.items() if key not in mine and not student.removed]
    students += [row(key, None) for key in waiting]
    # By name as people read it; a student's own rows (all counted) in attempt order.
    students.sort(key=lambda r: (student_key(r.name), r.key, r.shown.number if r.shown else 0))
    roster = Roster(
        quiz=quiz,
        counting=counting,
        students=students,
        student_count=len(mine),
        started=len(numbers),
        completed=len(shares),
        roster_size=sum(not student.removed for student in listed.values()),
        not_started=len(waiting),
        with_ids=any(student.student_number for student in listed.values()),
    )
    return roster, in_scope


def class_roster(quiz: Quiz, class_id: int | None, counting: Counting) -> Roster:
    """Who took the quiz in the class and which of their attempts count, in a fixed few queries."""
    return _roster(quiz, class_id, Counting(counting))[0]


def class_report(quiz: Quiz, class_id: int | None, counting: Counting) -> ClassReport:
    """Everything the class page and the item statistics show, fetched here in a fixed few
    queries whatever the class's size, so that reading the report later runs none."""
    roster, in_scope = _roster(quiz, class_id, Counting(counting))
    shown = [row.shown.id for row in roster.students if row.shown and row.shown.complete]
    if roster.counting is Counting.ALL:  # most of the class's answers: read them all, skip the rest
        answers = _ANSWERS.join(Attempt).where(in_scope)
    else:
        answers = _ANSWERS.where(Answer.attempt_id.in_(shown))
    # The database's rows carry AnswerRow's names already; copying 100,000 of them costs.
    fetched = _rows(answers).all()
    return ClassReport(**{f.name: getattr(roster, f.name) for f in fields(roster)}, answers=fetched)


def _answer_columns(kind) -> tuple:
    """An answer's columns, of one that counts or one replaced, for the responses' union."""
    return (kind.attempt_id, kind.question_id, kind.response.label("response"), kind.is_correct,
            kind.mark, kind.answered_at)  # fmt: skip


def responses(quiz: Quiz, class_id: int | None) -> tuple[dict[int, Quiz], Iterator[tuple]]:
    """Every answer of the class, oldest attempt first, streamed rather than held in memory:
    those that count, and those their student changed before finishing.

    Each row: student, their roster id or email, attempt number, version id, question, choice,
    correct?, the key's mark, answered at, replaced at (None for an answer that counts), the mark
    and comment an instructor gave it by hand (None without).
    The query runs when the rows are first read: a streamed download reads them after its
    view has returned and the view's database session has closed.
    """
    versions = _versions(quiz)
    given = union_all(  # the replaced first: the union's columns take their types from it
        db.select(*_answer_columns(ReplacedAnswer), ReplacedAnswer.replaced_at,
                  null().label("override_mark"), null().label("override_comment")),
        db.select(*_answer_columns(Answer), null().label("replaced_at"), Answer.override_mark,
                  Answer.override_comment),  # fmt: skip
    ).subquery()

    def numbered():
        if not versions:
            return
        rows = _rows(
            db.select(
                Attempt.id,
                Attempt.student_key,
                Attempt.student_name,
                RosterStudent.student_number,
                Attempt.quiz_version_id,
                given.c.question_id,
                given.c.response,
                given.c.is_correct,
                given.c.mark,
                given.c.answered_at,
                given.c.replaced_at,
                given.c.override_mark,
                given.c.override_comment,
            )
            # Attempts without answers still take their number, as on the class page.
            .outerjoin(given, given.c.attempt_id == Attempt.id)
            .outerjoin(RosterStudent, RosterStudent.id == Attempt.roster_student_id)
            .where(_in_scope(versions, class_id))
            .order_by(Attempt.started_at, Attempt.id, given.c.answered_at),
            yield_per=1000,
        )
        numbers: Counter[str] = Counter()
        previous = None
        with rows:  # a server-side cursor on PostgreSQL: closed even if the download stops
            for attempt_id, key, name, number, version, *answer in rows:
                if attempt_id != previous:
                    numbers[key] += 1
                    previous = attempt_id
                if answer[0] is not None:
                    yield name, number, numbers[key], version, *answer

    return versions, numbered()
