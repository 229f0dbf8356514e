"""Class reports: the database counts, stats.py does the arithmetic, nothing here renders."""

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from itertools import chain

from sqlalchemy import ColumnElement
from sqlalchemy.orm import undefer

from . import stats
from .bank import Question, Quiz, quiz_from_snapshot
from .extensions import db
from .grading import Score, half_up
from .models import Answer, Attempt, QuizVersion

COUNTING = {
    "first": "First attempt",
    "best": "Best attempt",
    "latest": "Latest attempt",
    "all": "All attempts",
}
"""Which completed attempts count for each student; first is Moodle's advice for statistics."""


@dataclass(frozen=True)
class AttemptRow:
    """One attempt as a report sees it: who, when, how far, how well."""

    id: int
    token: str
    student: str
    started_at: datetime
    last_answer_at: datetime | None
    answered: int
    points: int
    quiz: Quiz
    """The version of the quiz this attempt was taken against."""
    number: int
    """1 for a student's first attempt, 2 for the next, and so on."""

    @property
    def out_of(self) -> int:
        return len(self.quiz.questions)

    @property
    def complete(self) -> bool:
        return self.answered == self.out_of

    @property
    def score(self) -> Score:
        return Score(self.points, self.out_of)

    @property
    def time_taken(self) -> timedelta | None:
        return self.last_answer_at - self.started_at if self.complete else None


@dataclass(frozen=True)
class StudentRow:
    name: str
    """The name as the student first typed it."""
    attempts: int
    shown: AttemptRow
    """The counted attempt, or the latest one while none is complete."""


@dataclass(frozen=True)
class GradebookRow:
    student: str
    attempts: int
    score: float | None
    """The counted attempt's points, or their mean when all attempts count; None if none."""
    max_score: int

    @property
    def percent(self) -> float | None:
        return None if self.score is None else half_up(100 * self.score / self.max_score, 1)


@dataclass(frozen=True)
class ItemRow:
    """One question's statistics over the counted attempts."""

    question: Question
    number: int
    n: int
    facility: float | None
    discrimination: float | None
    counts: dict[str, int]
    """Choice id -> how many counted attempts chose it."""

    @property
    def flags(self) -> list[str]:
        """Plain-language warnings for the instructor."""
        right = self.question.right_choice
        popular = max(self.question.choices, key=lambda c: self.counts[c.id])
        found = []
        if self.n and not popular.correct and self.counts[popular.id] > self.counts[right.id]:
            found.append(f"Most students chose “{popular.text}”")
        if self.discrimination is not None and self.discrimination < 0:
            found.append("Negative discrimination: check the key or the wording")
        if self.n and self.facility == 1:
            found.append("Everyone got this right")
        return found


@dataclass
class ClassReport:
    """A class's students at one quiz; the statistics are worked out only if a page asks."""

    quiz: Quiz
    counting: str
    students: list[StudentRow]
    """A row per student (per counted attempt when all count), unfinished ones too."""
    student_count: int
    started: int
    completed: int
    scope: ColumnElement[bool]
    """Which attempts are the class's, for reading their answers."""

    @cached_property
    def counted(self) -> list[AttemptRow]:
        """The completed attempts that count, oldest first."""
        shown = [row.shown for row in self.students if row.shown.complete]
        return sorted(shown, key=lambda attempt: (attempt.started_at, attempt.id))

    @cached_property
    def gradebook(self) -> list[GradebookRow]:
        """A row per student: the counted attempt's score, or the mean when all count."""
        rows: dict[str, list[StudentRow]] = {}
        for row in self.students:
            rows.setdefault(row.name, []).append(row)
        top = len(self.quiz.questions)
        found = []
        for name, mine in rows.items():
            complete = [row.shown for row in mine if row.shown.complete]
            share = sum(a.points / a.out_of for a in complete) / len(complete) if complete else None
            score = None if share is None else share * top
            found.append(GradebookRow(name, mine[0].attempts, score, top))
        return found

    @cached_property
    def _matrix_and_counts(self) -> tuple[stats.Matrix, dict[str, Counter]]:
        questions = self.quiz.questions
        columns = {question.id: j for j, question in enumerate(questions)}
        rows = {attempt.id: [None] * len(questions) for attempt in self.counted}
        counts: dict[str, Counter] = {question.id: Counter() for question in questions}
        answers = db.select(
            Answer.attempt_id, Answer.question_id, Answer.choice_id, Answer.is_correct
        )
        if self.counting == "all":  # most of the class's answers: read them all, skip the rest
            answers = answers.join(Attempt).where(self.scope)
        else:
            answers = answers.where(Answer.attempt_id.in_(rows))
        for attempt_id, question_id, choice_id, is_correct in _rows(answers).all():
            if attempt_id in rows and question_id in columns:
                rows[attempt_id][columns[question_id]] = int(is_correct)
                counts[question_id][choice_id] += 1
        return list(rows.values()), counts

    @cached_property
    def summary(self) -> stats.Summary:
        """Scores on the current quiz's scale, so versions of another length compare."""
        top = len(self.quiz.questions)
        return stats.summary([a.points * top / a.out_of for a in self.counted])

    @cached_property
    def alpha(self) -> float | None:
        return stats.cronbach_alpha(self._matrix_and_counts[0])

    @cached_property
    def histogram(self) -> list[int]:
        top = len(self.quiz.questions)
        return stats.histogram([round(a.points * top / a.out_of) for a in self.counted], top)

    @cached_property
    def items(self) -> list[ItemRow]:
        matrix, counts = self._matrix_and_counts
        return [
            ItemRow(
                question=question,
                number=j + 1,
                n=sum(row[j] is not None for row in matrix),
                facility=stats.facility(matrix, j),
                discrimination=stats.discrimination(matrix, j),
                counts=counts[question.id],
            )
            for j, question in enumerate(self.quiz.questions)
        ]


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


def _in_scope(versions: dict[int, Quiz], class_id: int | None):
    """The attempts of a class (or of no class) at any version of the quiz."""
    return Attempt.quiz_version_id.in_(versions) & (
        Attempt.class_id.is_(None) if class_id is None else Attempt.class_id == class_id
    )


def _pick(complete: list[tuple], counting: str) -> list[tuple]:
    """A student's counted attempts among their completed ones, by Moodle's grading methods."""
    if counting == "all":
        return complete
    if counting == "first":
        return complete[:1]
    if counting == "latest":
        return complete[-1:]
    # Best: the highest share of the questions; max keeps the earliest of equals.
    return [max(complete, key=lambda outline: outline[2])]


def class_report(quiz: Quiz, class_id: int | None, counting: str = "first") -> ClassReport:
    """Everything the class page and exports show, in a fixed few queries whatever the size.

    Every attempt is read as a few small columns to pick the counted ones; only those are read
    in full (SQLite's window functions were slower at this than Python).
    """
    versions = _versions(quiz)
    out_of = {id_: len(version.questions) for id_, version in versions.items()}
    in_scope = _in_scope(versions, class_id)
    names: dict[str, str] = {}
    numbers: dict[int, int] = {}
    outlines: dict[str, list[tuple]] = {}  # student -> (id, complete?, share), oldest first
    attempts = _rows(
        db.select(
            Attempt.id, Attempt.student_key, Attempt.student_name, Attempt.quiz_version_id,
            Attempt.answered, Attempt.points,
        )
        .where(in_scope)
        .order_by(Attempt.started_at, Attempt.id)
    )  # fmt: skip
    # In batches: psycopg's row-by-row fetchone cost a third of the page, and one big fetch
    # left the worker holding the memory of 12,500 rows at once.
    for id_, key, name, version, answered, points in chain.from_iterable(attempts.partitions(1000)):
        names.setdefault(key, name)
        mine = outlines.setdefault(key, [])
        mine.append((id_, answered >= out_of[version], points / out_of[version]))
        numbers[id_] = len(mine)
    shown: dict[int, str] = {}  # attempt id -> its student's key
    for key, mine in outlines.items():
        complete = [outline for outline in mine if outline[1]]
        # A student with no completed attempt yet is listed with their latest one.
        for id_, _, _ in _pick(complete, counting) if complete else mine[-1:]:
            shown[id_] = key
    full = db.select(
        Attempt.id, Attempt.token, Attempt.started_at, Attempt.last_answer_at,
        Attempt.answered, Attempt.points, Attempt.quiz_version_id,
    )  # fmt: skip
    # Counting all may show thousands of attempts: too many to name one by one.
    full = full.where(in_scope) if counting == "all" else full.where(Attempt.id.in_(shown))
    students = []
    for id_, token, started, last, answered, points, version in _rows(full).all():
        if id_ in shown:
            key = shown[id_]
            attempt = AttemptRow(
                id_, token, names[key], started, last, answered, points, versions[version],
                numbers[id_],
            )  # fmt: skip
            students.append((key, StudentRow(names[key], len(outlines[key]), attempt)))
    students.sort(key=lambda pair: (pair[0], pair[1].shown.number))
    return ClassReport(
        quiz, counting, [row for _, row in students], len(outlines), len(numbers),
        sum(outline[1] for mine in outlines.values() for outline in mine), in_scope,
    )  # fmt: skip


def responses(quiz: Quiz, class_id: int | None) -> tuple[dict[int, Quiz], Iterator[tuple]]:
    """Every answer of the class, oldest attempt first, streamed rather than held in memory.

    Each row: student, attempt number, version id, question, choice, correct?, answered at.
    The query runs when the rows are first read: a streamed download reads them after its
    view has returned and the view's database session has closed.
    """
    versions = _versions(quiz)

    def numbered():
        if not versions:
            return
        rows = _rows(
            db.select(
                Attempt.id, Attempt.student_key, Attempt.student_name, Attempt.quiz_version_id,
                Answer.question_id, Answer.choice_id, Answer.is_correct, Answer.answered_at,
            )
            # Attempts without answers still take their number, as on the class page.
            .outerjoin(Answer)
            .where(_in_scope(versions, class_id))
            .order_by(Attempt.started_at, Attempt.id, Answer.answered_at),
            yield_per=1000,
        )  # fmt: skip
        numbers: Counter[str] = Counter()
        previous = None
        with rows:  # a server-side cursor on PostgreSQL: closed even if the download stops
            for attempt_id, key, name, version, question, choice, correct, answered_at in rows:
                if attempt_id != previous:
                    numbers[key] += 1
                    previous = attempt_id
                if question is not None:
                    yield name, numbers[key], version, question, choice, correct, answered_at

    return versions, numbered()
