"""The stored record of quizzing: quiz versions, attempts and their answers."""

import secrets
import unicodedata
from datetime import UTC, datetime

from flask_login import UserMixin
from sqlalchemy import JSON, DateTime, ForeignKey, Index, String, Text, UniqueConstraint, true
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .extensions import db

PASSWORD_LENGTH = (8, 1024)
"""Fewest and most characters in an instructor's password."""


def now() -> datetime:
    return datetime.now(UTC)


# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt): characters that
# show nothing, among them the Hangul fillers and variation selectors, which are not all "Cf".
_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip


def ignorable(char: str) -> bool:
    """Whether a character shows nothing at all: a format character or a default-ignorable one."""
    point = ord(char)
    return unicodedata.category(char) == "Cf" or any(lo <= point <= hi for lo, hi in _IGNORABLE)


def student_key(name: str) -> str:
    """Students have no accounts: within a class, a name is a student, whatever its case and
    invisible characters (a joiner the name form keeps, a zero-width space in an older name)."""
    shown = "".join(char for char in name if not ignorable(char))
    return " ".join(shown.split()).casefold()


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
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    classes: Mapped[list["Class"]] = relationship(back_populates="instructor")

    def get_id(self) -> str:
        return self.session_token


class Class(db.Model):
    """A group of students an instructor runs through quizzes, joined with a short code."""

    __tablename__ = "classes"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    join_code: Mapped[str] = mapped_column(String(6), unique=True)
    instructor_id: Mapped[int] = mapped_column(ForeignKey("instructors.id"), index=True)
    is_open: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    instructor: Mapped[Instructor] = relationship(back_populates="classes")


class Attempt(db.Model):
    """One sitting of a quiz by one student, addressed by an unguessable token."""

    __tablename__ = "attempts"
    # A class report reads one class's attempts at one quiz in start order: this covers it.
    __table_args__ = (
        Index("ix_attempts_class_report", "class_id", "quiz_version_id", "started_at"),
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
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    # Kept up to date by record_answer in each answer's own transaction, so that reports read
    # one row per attempt instead of counting its answers.
    answered: Mapped[int] = mapped_column(default=0, server_default="0")
    points: Mapped[int] = mapped_column(default=0, server_default="0")
    last_answer_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    quiz_version: Mapped[QuizVersion] = relationship()
    class_: Mapped[Class | None] = relationship()
    answers: Mapped[list["Answer"]] = relationship(
        back_populates="attempt", order_by="Answer.answered_at"
    )


class Answer(db.Model):
    """A student's locked-in choice for one question, graded when it was given."""

    __tablename__ = "answers"
    # One answer per question: a double click or a replay loses the race here, not in Python.
    __table_args__ = (UniqueConstraint("attempt_id", "question_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    attempt_id: Mapped[int] = mapped_column(ForeignKey("attempts.id", ondelete="CASCADE"))
    question_id: Mapped[str] = mapped_column(String(64))
    choice_id: Mapped[str] = mapped_column(String(64))
    is_correct: Mapped[bool]
    answered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    attempt: Mapped[Attempt] = relationship(back_populates="answers")


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


class RateLimitCount(db.Model):
    """A rate limit's count in its current window, shared by every worker (app/ratelimits.py)."""

    __tablename__ = "rate_limit_counts"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    count: Mapped[int]
    # Seconds since the epoch, as the limits library counts time.
    expires_at: Mapped[float] = mapped_column(index=True)
