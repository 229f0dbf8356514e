"""Class reports: the database counts, stats.py does the arithmetic, nothing here renders."""

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property

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


def student_key(name: str) -> str:
    """Students have no accounts: within a class, a name is a student, whatever its case."""
    return " ".join(name.split()).casefold()


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


def counted(attempts: list[AttemptRow], counting: str) -> list[AttemptRow]:
    """The completed attempts that count, by Moodle's grading methods; pure."""
    complete = [attempt for attempt in attempts if attempt.complete]
    if counting == "all":
        return complete
    by_student: dict[str, list[AttemptRow]] = {}
    for attempt in complete:
        by_student.setdefault(student_key(attempt.student), []).append(attempt)
    pick = {
        "first": lambda rows: min(rows, key=lambda a: a.started_at),
        "latest": lambda rows: max(rows, key=lambda a: a.started_at),
        # The best share of the questions; of equal scores, the earlier attempt.
        "best": lambda rows: max(rows, key=lambda a: (a.points / a.out_of, -a.number)),
    }[counting]
    return sorted((pick(rows) for rows in by_student.values()), key=lambda a: a.started_at)


@dataclass
class ClassReport:
    """A class's attempts at one quiz; the statistics are worked out only if a page asks."""

    quiz: Quiz
    counting: str
    attempts: list[AttemptRow]

    @cached_property
    def counted(self) -> list[AttemptRow]:
        return counted(self.attempts, self.counting)

    @cached_property
    def _by_student(self) -> dict[str, list[AttemptRow]]:
        """Each student's attempts, oldest first, keyed by the normalised name."""
        found: dict[str, list[AttemptRow]] = {}
        for attempt in self.attempts:
            found.setdefault(student_key(attempt.student), []).append(attempt)
        return found

    @property
    def student_count(self) -> int:
        return len(self._by_student)

    @property
    def completed(self) -> int:
        return sum(attempt.complete for attempt in self.attempts)

    @cached_property
    def students(self) -> list[StudentRow]:
        """A row per student (per counted attempt when all count); unfinished ones too."""
        counted_by_student: dict[str, list[AttemptRow]] = {}
        for attempt in self.counted:
            counted_by_student.setdefault(student_key(attempt.student), []).append(attempt)
        rows = []
        for key, attempts in self._by_student.items():
            # A student with no completed attempt yet is listed with their latest one.
            for shown in counted_by_student.get(key, attempts[-1:]):
                rows.append(StudentRow(attempts[0].student, len(attempts), shown))
        return sorted(rows, key=lambda row: (student_key(row.name), row.shown.number))

    @cached_property
    def gradebook(self) -> list[GradebookRow]:
        """A row per student: the counted attempt's score, or the mean when all count."""
        rows: dict[str, list[AttemptRow]] = {}
        for row in self.students:
            rows.setdefault(row.name, []).append(row.shown)
        found = []
        for name, shown in rows.items():
            complete = [attempt for attempt in shown if attempt.complete]
            share = sum(a.points / a.out_of for a in complete) / len(complete) if complete else None
            top = len(self.quiz.questions)
            attempts = len(self._by_student[student_key(name)])
            found.append(GradebookRow(name, attempts, None if share is None else share * top, top))
        return found

    @cached_property
    def _matrix_and_counts(self) -> tuple[stats.Matrix, dict[str, Counter]]:
        questions = self.quiz.questions
        columns = {question.id: j for j, question in enumerate(questions)}
        rows = {attempt.id: [None] * len(questions) for attempt in self.counted}
        counts: dict[str, Counter] = {question.id: Counter() for question in questions}
        for attempt_id, question_id, choice_id, is_correct, _ in answers_of(self.counted):
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


def class_report(quiz: Quiz, class_id: int | None, counting: str = "first") -> ClassReport:
    """Everything the class page and exports show, in a fixed few queries whatever the size."""
    versions = {
        v.id: quiz if v.digest == quiz.version else quiz_from_snapshot(v.snapshot)
        for v in db.session.scalars(
            db.select(QuizVersion).filter_by(slug=quiz.slug).options(undefer(QuizVersion.snapshot))
        )
    }
    in_scope = Attempt.quiz_version_id.in_(versions) & (
        Attempt.class_id.is_(None) if class_id is None else Attempt.class_id == class_id
    )
    rows = db.session.execute(
        db.select(
            Attempt.id,
            Attempt.token,
            Attempt.student_name,
            Attempt.started_at,
            Attempt.quiz_version_id,
            Attempt.answered,
            Attempt.points,
            Attempt.last_answer_at,
        )
        .where(in_scope)
        .order_by(Attempt.started_at, Attempt.id)
    ).all()
    numbers: Counter[str] = Counter()
    attempts = []
    for id_, token, student, started, version_id, answered, points, last in rows:
        numbers[student_key(student)] += 1
        attempts.append(
            AttemptRow(
                id_, token, student, started, last, answered, points, versions[version_id],
                numbers[student_key(student)],
            )
        )  # fmt: skip
    return ClassReport(quiz, counting, attempts)


def answers_of(attempts: list[AttemptRow]) -> list:
    """The answers of these attempts, oldest attempt first, in one query."""
    if not attempts:
        return []
    return db.session.execute(
        db.select(
            Answer.attempt_id,
            Answer.question_id,
            Answer.choice_id,
            Answer.is_correct,
            Answer.answered_at,
        )
        .join(Attempt)
        .where(Answer.attempt_id.in_([attempt.id for attempt in attempts]))
        .order_by(Attempt.started_at, Attempt.id, Answer.answered_at)
    ).all()
