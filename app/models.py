"""The stored record of quizzing: quiz versions, attempts and their answers."""

import secrets
from datetime import UTC, datetime

from sqlalchemy import JSON, DateTime, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .extensions import db


def now() -> datetime:
    return datetime.now(UTC)


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


class Attempt(db.Model):
    """One sitting of a quiz by one student, addressed by an unguessable token."""

    __tablename__ = "attempts"

    id: Mapped[int] = mapped_column(primary_key=True)
    token: Mapped[str] = mapped_column(
        String(43), unique=True, default=lambda: secrets.token_urlsafe(24)
    )
    quiz_version_id: Mapped[int] = mapped_column(ForeignKey("quiz_versions.id"), index=True)
    student_name: Mapped[str] = mapped_column(String(80))
    # The random id in the session of the browser that started it: only it may answer.
    browser: Mapped[str] = mapped_column(String(43))
    # Question id -> choice ids in the order shown, for quizzes that shuffle; None otherwise.
    choice_order: Mapped[dict[str, list[str]] | None] = mapped_column(JSON)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)

    quiz_version: Mapped[QuizVersion] = relationship()
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
