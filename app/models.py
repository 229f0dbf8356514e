"""The stored record of quizzing: quiz versions, attempts and their answers."""

import secrets
from datetime import UTC, datetime
from enum import StrEnum

from flask_login import UserMixin
from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    exists,
    false,
    func,
    select,
    text,
    true,
)
from sqlalchemy.orm import Mapped, column_property, mapped_column, relationship

from .extensions import db
from .names import student_key

PASSWORD_LENGTH = (8, 1024)
"""Fewest and most characters in an instructor's password."""


def now() -> datetime:
    return datetime.now(UTC)


def _key_of_name(context) -> str:
    return student_key(context.get_current_parameters()["student_name"])


def new_token() -> str:
    """An unguessable URL-safe token (192 random bits)."""
    return secrets.token_urlsafe(24)


class QuizVersion(db.Model):
    """A quiz exactly as an attempt began it, so editing the bank never rewrites history."""

    __tablename__ = "quiz_versions"
    __table_args__ = (UniqueConstraint("slug", "digest"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64))
    digest: Mapped[str] = mapped_column(String(64))
    # Only attempts against an edited-away version need it; the current one is in memory.
    snapshot: Mapped[str] = mapped_column(Text, deferred=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class Image(db.Model):
    """A picture quiz text shows, kept by its content's digest: a quiz version that names it
    shows it for as long as the version is kept, whoever edits the quiz after."""

    __tablename__ = "images"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    """The SHA-256 of its bytes, in hex: its address, which nobody guesses."""
    kind: Mapped[str] = mapped_column(String(8))
    """png, jpeg, gif or webp: its file's extension and media type."""
    width: Mapped[int]
    height: Mapped[int]
    data: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class Instructor(UserMixin, db.Model):
    """Someone who runs classes and reads their results; created from the command line."""

    __tablename__ = "instructors"

    id: Mapped[int] = mapped_column(primary_key=True)
    # Trimmed and case-folded, so "Ada" and " ada" cannot both exist.
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    is_admin: Mapped[bool] = mapped_column(default=False)
    # What the session cookie holds instead of the id; replacing it logs out every copy.
    session_token: Mapped[str] = mapped_column(String(43), unique=True, default=new_token)
    # A disabled instructor cannot log in (Flask-Login reads is_active); their classes stay.
    is_active: Mapped[bool] = mapped_column(default=True, server_default=true())
    # Made by an LMS launch: a role claim gives rights in that course's class and nowhere else.
    # Previews, exports, the quiz list and new classes wait until an admin grants the account.
    course_only: Mapped[bool] = mapped_column(default=False, server_default=false())
    # An IANA name ("Europe/Berlin"): assignment dates are typed in it, stored in UTC. Once the
    # instructor has chosen it, their pages say every time in it; until then, their browser's.
    time_zone: Mapped[str] = mapped_column(String(64), default="UTC", server_default="UTC")
    time_zone_chosen: Mapped[bool] = mapped_column(default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    classes: Mapped[list["Class"]] = relationship(back_populates="instructor")

    def get_id(self) -> str:
        return self.session_token

    @property
    def may_author(self) -> bool:
        """Whether they may read quizzes' keys and create classes, beyond their courses."""
        return self.is_admin or not self.course_only


class Class(db.Model):
    """A group of students an instructor runs through quizzes, joined with a short code."""

    __tablename__ = "classes"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    join_code: Mapped[str] = mapped_column(String(6), unique=True)
    instructor_id: Mapped[int] = mapped_column(ForeignKey("instructors.id"), index=True)
    is_open: Mapped[bool] = mapped_column(default=True)
    # An archived class is read-only and hidden from "Your classes"; its join link stops working.
    archived_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    instructor: Mapped[Instructor] = relationship(back_populates="classes")
    # Removed ones too: their attempts keep following them (feedback rule, seats).
    assignments: Mapped[list["Assignment"]] = relationship(
        back_populates="class_", order_by="Assignment.id", cascade="all, delete-orphan"
    )

    @property
    def current_assignments(self) -> list["Assignment"]:
        """The assignments not removed: what the class offers and how its reports count now."""
        return [assignment for assignment in self.assignments if assignment.removed_at is None]


class Role(StrEnum):
    """What a shared class lets another instructor do; the owner and admins may do everything."""

    VIEW = "view"
    MANAGE = "manage"
    OWN = "own"


class ClassShare(db.Model):
    """A class shared with another instructor, who may view it or also manage it."""

    __tablename__ = "class_shares"
    __table_args__ = (CheckConstraint("role IN ('view', 'manage')", name="known_share_role"),)

    class_id: Mapped[int] = mapped_column(
        ForeignKey("classes.id", ondelete="CASCADE"), primary_key=True
    )
    instructor_id: Mapped[int] = mapped_column(
        ForeignKey("instructors.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    role: Mapped[str] = mapped_column(String(8))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class FeedbackWhen(StrEnum):
    """When an assignment's students see verdicts, explanations and scores."""

    EACH_ANSWER = "each-answer"
    AFTER_ATTEMPT = "after-attempt"
    AFTER_CLOSE = "after-close"


class Assignment(db.Model):
    """A quiz a class is set, with its window, time and attempt limits and feedback rule."""

    __tablename__ = "assignments"
    # One assignment per quiz and class: the join link then knows which rules a start follows.
    __table_args__ = (
        UniqueConstraint("class_id", "quiz_slug"),
        CheckConstraint("closes_at IS NULL OR opens_at IS NULL OR closes_at > opens_at",
                        name="closes_after_opens"),
        CheckConstraint("time_limit_minutes IS NULL OR time_limit_minutes BETWEEN 1 AND 1440",
                        name="time_limit_within_a_day"),
        CheckConstraint("attempts_allowed IS NULL OR attempts_allowed BETWEEN 1 AND 100",
                        name="attempts_allowed_1_to_100"),
        CheckConstraint("grade_from IN ('first', 'best', 'latest', 'all')",
                        name="known_grade_from"),
        CheckConstraint("feedback IN ('each-answer', 'after-attempt', 'after-close')",
                        name="known_feedback"),
    )  # fmt: skip

    id: Mapped[int] = mapped_column(primary_key=True)
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"))
    # Indexed: a start outside any class asks whether some class holds this quiz's feedback.
    quiz_slug: Mapped[str] = mapped_column(String(64), index=True)
    opens_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    closes_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    time_limit_minutes: Mapped[int | None]
    # None: as many attempts as the student likes.
    attempts_allowed: Mapped[int | None]
    # A reports.Counting value: which attempts the gradebook uses ("all" is their average).
    grade_from: Mapped[str] = mapped_column(String(8), default="first")
    feedback: Mapped[str] = mapped_column(String(16), default=FeedbackWhen.EACH_ANSWER.value)
    # Set by "Release feedback"; held feedback is also released once the quiz closes.
    feedback_released_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # "Remove" keeps the row, so that its attempts keep their feedback rule and seats; a removed
    # assignment offers nothing and limits no new start, and assigning the quiz again revives it.
    removed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    class_: Mapped[Class] = relationship(back_populates="assignments")


class Accommodation(db.Model):
    """An exception to an assignment's rules for one student: another time limit (or a share
    more of it), more attempts, a later close or an earlier open. Unset, a rule is the
    assignment's."""

    __tablename__ = "accommodations"
    __table_args__ = (
        UniqueConstraint("assignment_id", "student_key"),
        CheckConstraint("time_limit_minutes IS NULL OR time_limit_minutes BETWEEN 1 AND 14400",
                        name="exception_time_within_ten_days"),
        CheckConstraint("time_factor IS NULL OR time_factor BETWEEN 1 AND 10",
                        name="exception_factor_1_to_10"),
        CheckConstraint("time_limit_minutes IS NULL OR time_factor IS NULL",
                        name="exception_time_said_once"),
        CheckConstraint("attempts_allowed IS NULL OR attempts_allowed BETWEEN 1 AND 100",
                        name="exception_attempts_1_to_100"),
    )  # fmt: skip

    id: Mapped[int] = mapped_column(primary_key=True)
    assignment_id: Mapped[int] = mapped_column(
        ForeignKey("assignments.id", ondelete="CASCADE"), index=True
    )
    # Whose exception: their attempts' student key, and the name the class shows them by.
    student_key: Mapped[str] = mapped_column(String(240))
    student_name: Mapped[str] = mapped_column(String(80))
    time_limit_minutes: Mapped[int | None]
    # The assignment's time limit times this (1.5: half as long again), however it changes.
    time_factor: Mapped[float | None] = mapped_column(Float)
    attempts_allowed: Mapped[int | None]
    opens_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    closes_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # When an attempt under it can no longer be answered (its close, then its time limit):
    # kept with it, and again when the assignment changes, so that the assignment knows when
    # the last one ends in the query that loads it (Assignment.exceptions_end_at).
    ends_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    assignment: Mapped[Assignment] = relationship()


# When the last attempt under any student's exception can no longer be answered: feedback held
# until the close waits for it, for every student alike. None without exceptions.
Assignment.exceptions_end_at = column_property(
    select(func.max(Accommodation.ends_at))
    .where(Accommodation.assignment_id == Assignment.id)
    .correlate_except(Accommodation)
    .scalar_subquery()
)
# Whether any student has an exception: the class page lists them only then, so that a class
# without any costs no query more.
Assignment.has_exceptions = column_property(
    exists().where(Accommodation.assignment_id == Assignment.id), deferred=False
)


def _key_of_roster_name(context) -> str:
    return student_key(context.get_current_parameters()["name"])


# Without an id, a current student's name is all that tells them apart.
_WITHOUT_ID = text("student_number IS NULL AND removed_at IS NULL")


class RosterStudent(db.Model):
    """A student on a class's roster, who starts attempts with a personal sign-in code."""

    __tablename__ = "roster_students"
    __table_args__ = (
        UniqueConstraint("class_id", "student_number"),
        # So a double-clicked "Add students" cannot put Dana Diaz on the roster twice.
        Index(
            "uq_roster_students_name_without_id", "class_id", "name_key", unique=True,
            sqlite_where=_WITHOUT_ID, postgresql_where=_WITHOUT_ID,
        ),
    )  # fmt: skip

    id: Mapped[int] = mapped_column(primary_key=True)
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(80))
    # The name as a student key (case, spaces and invisible characters folded).
    name_key: Mapped[str] = mapped_column(String(240), default=_key_of_roster_name)
    # The student id or email the instructor gave, if any: the gradebook's key for the LMS.
    student_number: Mapped[str | None] = mapped_column(String(254))
    # 8 characters without look-alikes; a new code replaces it, and the old one stops working.
    sign_in_code: Mapped[str] = mapped_column(String(8), unique=True)
    # Removed students keep their attempts, which reports mark as removed.
    removed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    class_: Mapped[Class] = relationship()

    @property
    def student_key(self) -> str:
        """Their attempts' student key: roster students are told apart by record, not name."""
        return roster_key(self.id)


# Whether a class signs its students in by personal code, read with the attempt a student page
# loads (deferred elsewhere): a retake of a typed-name attempt must not get past a roster.
Class.signs_in_by_code = column_property(
    exists().where(RosterStudent.class_id == Class.id, RosterStudent.removed_at.is_(None)),
    deferred=True,
)


def roster_key(roster_student_id: int) -> str:
    """The student key of a roster student's attempts; no typed name can produce it."""
    return f"#roster:{roster_student_id}"


class MergedStudent(db.Model):
    """Within a class, a student key that counts as another student: "Dana  Diaz" as "Dana Diaz"."""

    __tablename__ = "merged_students"

    class_id: Mapped[int] = mapped_column(
        ForeignKey("classes.id", ondelete="CASCADE"), primary_key=True
    )
    student_key: Mapped[str] = mapped_column(String(240), primary_key=True)
    into_key: Mapped[str] = mapped_column(String(240))


_VOIDED = text("voided_at IS NOT NULL")
# Exam attempts whose answers can still change, as each database's queries write the test.
_CHANGING_ON_SQLITE = text("moves_freely = 1 AND finished_at IS NULL AND voided_at IS NULL")
_CHANGING_ON_POSTGRESQL = text("moves_freely AND finished_at IS NULL AND voided_at IS NULL")


class Attempt(db.Model):
    """One sitting of a quiz by one student, addressed by an unguessable token."""

    __tablename__ = "attempts"
    # A class report reads one class's attempts at one quiz in start order: this covers it.
    # The class page also lists the few voided ones, which it found by reading them all.
    __table_args__ = (
        Index("ix_attempts_class_report", "class_id", "quiz_version_id", "started_at"),
        Index("ix_attempts_voided", "class_id", sqlite_where=_VOIDED, postgresql_where=_VOIDED),
        # Every student page asks whether an assignment of its quiz has such attempts.
        # Its test's columns too: SQLite then prefers it to ix_attempts_assignment_id every time.
        Index(
            "ix_attempts_changing",
            "assignment_id",
            "moves_freely",
            "finished_at",
            "voided_at",
            sqlite_where=_CHANGING_ON_SQLITE,
            postgresql_where=_CHANGING_ON_POSTGRESQL,
        ),
        UniqueConstraint("assignment_id", "student_key", "seat"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    token: Mapped[str] = mapped_column(String(43), unique=True, default=new_token)
    quiz_version_id: Mapped[int] = mapped_column(ForeignKey("quiz_versions.id"), index=True)
    student_name: Mapped[str] = mapped_column(String(80))
    # Who the attempt belongs to in reports, which group by it in SQL; casefold can triple
    # a name's length ("ß" -> "ss" and the like).
    student_key: Mapped[str] = mapped_column(String(240), default=_key_of_name)
    class_id: Mapped[int | None] = mapped_column(ForeignKey("classes.id"))
    # The random id in the cookie of the browser that started it: only it may answer.
    # Indexed: the home and start pages look up this browser's unfinished attempts.
    browser: Mapped[str] = mapped_column(String(43), index=True)
    # Question id -> choice ids in the order shown, for quizzes that shuffle; None otherwise.
    choice_order: Mapped[dict[str, list[str]] | None] = mapped_column(JSON)
    # The ids of the questions it asks, in the order asked, for quizzes that shuffle their
    # questions or draw them from pools; None otherwise (every question, in the quiz's order).
    question_order: Mapped[list[str] | None] = mapped_column(JSON)
    # Fixed at the start: feedback waits until the end, so its student may move between
    # questions and change answers until they finish (Moodle's deferred feedback).
    moves_freely: Mapped[bool] = mapped_column(default=False, server_default=false())
    # The question ids its student flagged to come back to before finishing.
    flagged: Mapped[list[str] | None] = mapped_column(JSON)
    # The score an instructor set for it, in points, overriding its answers' marks, and why, as
    # its student reads it; None while its answers make its score (teach/overrides.py).
    score_override: Mapped[float | None] = mapped_column(Float)
    override_comment: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    # Kept up to date by record_answer in each answer's own transaction, so that reports read
    # one row per attempt instead of counting its answers.
    answered: Mapped[int] = mapped_column(default=0, server_default="0")
    # Partial credit makes fractions. SQLite keeps a fraction as it is in a column declared
    # INTEGER, so that column stays: retyping it would rebuild a table other rows refer to.
    points: Mapped[float] = mapped_column(
        Float().with_variant(Integer(), "sqlite"), default=0, server_default="0"
    )
    last_answer_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The assignment it was started under, removed or not; deleting the class deletes both.
    assignment_id: Mapped[int | None] = mapped_column(
        ForeignKey("assignments.id", ondelete="SET NULL"), index=True
    )
    roster_student_id: Mapped[int | None] = mapped_column(
        ForeignKey("roster_students.id", ondelete="SET NULL"), index=True
    )
    # Which of the assignment's allowed attempts this is (1..attempts_allowed): the unique
    # constraint lets exactly that many starts through, however many race. None when unlimited
    # or voided.
    seat: Mapped[int | None]
    # When the time limit runs out, fixed at the start; None without a time limit.
    ends_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # "Finish attempt", the last answer or the time running out: nothing can be answered after.
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # A voided attempt leaves statistics, gradebook and attempt limits, and can be restored.
    voided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    voided_by_id: Mapped[int | None] = mapped_column(ForeignKey("instructors.id"))

    quiz_version: Mapped[QuizVersion] = relationship()
    class_: Mapped[Class | None] = relationship()
    assignment: Mapped["Assignment | None"] = relationship()
    roster_student: Mapped["RosterStudent | None"] = relationship()
    voided_by: Mapped[Instructor | None] = relationship()
    # The exception to its assignment's rules its student has, if any.
    accommodation: Mapped["Accommodation | None"] = relationship(
        primaryjoin="and_(foreign(Attempt.assignment_id) == Accommodation.assignment_id, "
        "foreign(Attempt.student_key) == Accommodation.student_key)",
        viewonly=True,
        uselist=False,
    )
    answers: Mapped[list["Answer"]] = relationship(
        back_populates="attempt", order_by="Answer.answered_at"
    )

    @property
    def minutes_given(self) -> int | None:
        """The time limit it runs under, in minutes: fixed at its start, or lengthened since by
        an exception; None without one."""
        if self.ends_at is None:
            return None
        return round((self.ends_at - self.started_at).total_seconds() / 60)


# When the last attempt still open under it ends by its time limit, fixed when it started: an
# exception removed or cut short must not open everyone's feedback while its student still
# answers under the time she was given.
Assignment.open_attempts_end_at = column_property(
    select(func.max(Attempt.ends_at))
    .where(Attempt.assignment_id == Assignment.id, Attempt.finished_at.is_(None),
           Attempt.voided_at.is_(None))  # fmt: skip
    .correlate_except(Attempt)
    .scalar_subquery()
)
# Whether an exam attempt under it can still change, but for its deadline (ix_attempts_changing):
# such an attempt keeps the quiz's key held whatever the assignment's rule says now.
CAN_CHANGE = (Attempt.moves_freely, Attempt.finished_at.is_(None), Attempt.voided_at.is_(None))
"""An exam attempt whose answers can still change, but for its deadline, read in Python."""
Assignment.has_changing_attempts = column_property(
    exists().where(Attempt.assignment_id == Assignment.id, *CAN_CHANGE).correlate_except(Attempt)
)


class Answer(db.Model):
    """A student's locked-in answer to one question, graded when it was given."""

    __tablename__ = "answers"
    # One answer per question: a double click or a replay loses the race here, not in Python.
    __table_args__ = (UniqueConstraint("attempt_id", "question_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    attempt_id: Mapped[int] = mapped_column(ForeignKey("attempts.id", ondelete="CASCADE"))
    question_id: Mapped[str] = mapped_column(String(64))
    # What the question's type stores: a choice's id, the ids chosen, or what was typed. Its
    # column kept its name and, on SQLite, which ignores a length, its type (see points).
    response: Mapped[str] = mapped_column(
        "choice_id", Text().with_variant(String(64), "sqlite")
    )
    is_correct: Mapped[bool]
    """Fully right."""
    mark: Mapped[float | None] = mapped_column(Float)
    """The share of the question's points earned, 0 to 1; None from a release before marks,
    whose answers were right or wrong (grading.earned)."""
    answered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    # Marked again after its question's key was corrected: when, and the quiz version whose
    # question marked it, which its review shows (teach/regrades.py).
    regraded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    regraded_version_id: Mapped[int | None] = mapped_column(ForeignKey("quiz_versions.id"))

    attempt: Mapped[Attempt] = relationship(back_populates="answers")
    # The mark an instructor gave it instead, 0 to 1, and why, as its student reads it; None
    # while its own mark stands (teach/overrides.py).
    override_mark: Mapped[float | None] = mapped_column(Float)
    override_comment: Mapped[str | None] = mapped_column(Text)

    regraded_version: Mapped[QuizVersion | None] = relationship()

    @property
    def mark_given(self) -> float | None:
        """The mark it earns: an instructor's override, else its own."""
        return self.mark if self.override_mark is None else self.override_mark


class ReplacedAnswer(db.Model):
    """An answer its student changed before finishing: what it was, and when it was replaced."""

    __tablename__ = "replaced_answers"

    id: Mapped[int] = mapped_column(primary_key=True)
    attempt_id: Mapped[int] = mapped_column(
        ForeignKey("attempts.id", ondelete="CASCADE"), index=True
    )
    question_id: Mapped[str] = mapped_column(String(64))
    response: Mapped[str] = mapped_column(Text)
    is_correct: Mapped[bool]
    mark: Mapped[float | None] = mapped_column(Float)
    answered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    replaced_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Release(db.Model):
    """One publication of the bank: its id is the generation, and the newest one is served."""

    __tablename__ = "releases"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    offered: Mapped[list["OfferedQuiz"]] = relationship(order_by="OfferedQuiz.position")


class OfferedQuiz(db.Model):
    """A quiz version a release offers, in the bank's order."""

    __tablename__ = "offered_quizzes"

    release_id: Mapped[int] = mapped_column(ForeignKey("releases.id"), primary_key=True)
    position: Mapped[int] = mapped_column(primary_key=True)
    quiz_version_id: Mapped[int] = mapped_column(ForeignKey("quiz_versions.id"))
    # On the home page; part of the release, so that every worker lists the same quizzes.
    listed: Mapped[bool] = mapped_column(default=True, server_default=true())


class QuizRole(StrEnum):
    """What a quiz lets an instructor do: use it (preview, key, assign), edit it, or own it."""

    USE = "use"
    EDIT = "edit"
    OWN = "own"


class QuizRecord(db.Model):
    """A quiz as the database keeps it: who owns it, the draft being written, the version served.

    A site quiz has no owner: questions.json writes it, and every instructor may use it."""

    __tablename__ = "quizzes"

    id: Mapped[int] = mapped_column(primary_key=True)
    # Its address, /quizzes/<slug>; fixed once published, since links and assignments name it.
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("instructors.id", ondelete="SET NULL"), index=True
    )
    # Shown on the home page; the others are reached through a class or a link.
    listed: Mapped[bool] = mapped_column(default=False, server_default=false())
    # A site quiz's place in questions.json; instructors' quizzes come after, oldest first.
    position: Mapped[int | None]
    # The quiz as its editors left it, in the bank's JSON; None when it is the published one.
    draft: Mapped[str | None] = mapped_column(Text, deferred=True)
    # Counts saves: a save that read an older draft loses the race and is merged or refused.
    draft_revision: Mapped[int] = mapped_column(default=0, server_default="0")
    draft_saved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    draft_saved_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("instructors.id", ondelete="SET NULL")
    )
    published_version_id: Mapped[int | None] = mapped_column(ForeignKey("quiz_versions.id"))
    # Deleting a quiz with attempts archives it: no longer served, its reports and reviews stay.
    archived_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    owner: Mapped[Instructor | None] = relationship(foreign_keys=[owner_id])
    draft_saved_by: Mapped[Instructor | None] = relationship(foreign_keys=[draft_saved_by_id])
    published_version: Mapped[QuizVersion | None] = relationship()

    @property
    def from_file(self) -> bool:
        """Whether questions.json writes it: edited there, or in the browser only as a copy."""
        return self.owner_id is None


class QuizShare(db.Model):
    """A quiz shared with another instructor, who may use it or also edit and publish it."""

    __tablename__ = "quiz_shares"
    __table_args__ = (CheckConstraint("role IN ('use', 'edit')", name="known_quiz_share_role"),)

    quiz_id: Mapped[int] = mapped_column(
        ForeignKey("quizzes.id", ondelete="CASCADE"), primary_key=True
    )
    instructor_id: Mapped[int] = mapped_column(
        ForeignKey("instructors.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    role: Mapped[str] = mapped_column(String(8))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    instructor: Mapped[Instructor] = relationship()


class Publication(db.Model):
    """One "Publish" of a quiz: the version it made the served one, who did it and when."""

    __tablename__ = "publications"

    id: Mapped[int] = mapped_column(primary_key=True)
    quiz_id: Mapped[int] = mapped_column(ForeignKey("quizzes.id", ondelete="CASCADE"), index=True)
    quiz_version_id: Mapped[int] = mapped_column(ForeignKey("quiz_versions.id"))
    # None for questions.json's publications, which `flask quiz reload` makes.
    published_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("instructors.id", ondelete="SET NULL")
    )
    published_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    quiz_version: Mapped[QuizVersion] = relationship()
    published_by: Mapped[Instructor | None] = relationship()


class RateLimitCount(db.Model):
    """A rate limit's count in its current window, shared by every worker (app/ratelimits.py)."""

    __tablename__ = "rate_limit_counts"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    count: Mapped[int]
    # Seconds since the epoch, as the limits library counts time.
    expires_at: Mapped[float] = mapped_column(index=True)
