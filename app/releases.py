"""The bank on offer: published from the file by `flask quiz reload`, served from the database,
so that every worker on every app server serves the same release and none reads the file."""

import threading
import time
from pathlib import Path

from flask import current_app
from sqlalchemy.exc import SQLAlchemyError

from .attempts.service import record_version
from .bank import Bank, load_bank, quiz_from_snapshot
from .extensions import db
from .models import OfferedQuiz, QuizVersion, Release


def latest_generation() -> int | None:
    """The newest release's number, or None before anything was published; one indexed read."""
    return db.session.scalar(db.select(db.func.max(Release.id)))


def offered_versions(generation: int) -> list[int]:
    """The quiz version ids a release offers, in the bank's order."""
    return list(
        db.session.scalars(
            db.select(OfferedQuiz.quiz_version_id)
            .where(OfferedQuiz.release_id == generation)
            .order_by(OfferedQuiz.position)
        )
    )


def publish(bank: Bank) -> tuple[int, bool]:
    """Offer exactly this bank's quizzes from now on: the release serving it, and whether it is
    new (a bank the newest release already offers is not published twice)."""
    versions = [record_version(quiz).id for quiz in bank.quizzes.values()]
    latest = latest_generation()
    if latest is not None and offered_versions(latest) == versions:
        return latest, False
    release = Release(
        offered=[OfferedQuiz(position=n, quiz_version_id=v) for n, v in enumerate(versions)]
    )
    db.session.add(release)
    db.session.commit()
    return release.id, True


def released_bank(generation: int) -> Bank:
    """A release's quizzes, rebuilt from their stored versions, and the quizzes it leaves out."""
    snapshots = db.session.scalars(
        db.select(QuizVersion.snapshot)
        .join(OfferedQuiz, OfferedQuiz.quiz_version_id == QuizVersion.id)
        .where(OfferedQuiz.release_id == generation)
        .order_by(OfferedQuiz.position)
    )
    offered = {quiz.slug: quiz for quiz in map(quiz_from_snapshot, snapshots)}
    newest = db.select(db.func.max(QuizVersion.id)).group_by(QuizVersion.slug)
    retired = db.session.scalars(
        db.select(QuizVersion.snapshot)
        .where(QuizVersion.id.in_(newest), QuizVersion.slug.not_in(offered))
        .order_by(QuizVersion.slug)
    )
    return Bank(
        offered,
        generation=generation,
        retired={quiz.slug: quiz for quiz in map(quiz_from_snapshot, retired)},
    )


class ServedBank:
    """What one worker serves: the newest release, looked for at most every `check_seconds`."""

    def __init__(self, questions_path: str | Path, check_seconds: float):
        self.questions_path = questions_path
        self.check_seconds = check_seconds
        self._bank: Bank | None = None
        self._checked = 0.0
        self._lock = threading.Lock()

    def bank(self) -> Bank:
        """The bank to serve now; on a database with no release yet, the file, published."""
        if self._bank is not None and time.monotonic() - self._checked < self.check_seconds:
            return self._bank
        # A request that finds another one checking serves the bank it has: waiting here while
        # holding a database connection, for a checker that waits for one, stalled a whole
        # worker until the pool gave up. Only a worker with no bank yet has to wait.
        if not self._lock.acquire(blocking=self._bank is None):
            return self._bank
        try:
            self._check()
        finally:
            self._lock.release()
        return self._bank

    def _check(self) -> None:
        """Take the newest release if it is not the one served."""
        try:
            generation = latest_generation()
        except SQLAlchemyError:
            if self._bank is None:
                raise
            # The page's own queries will say the database is gone; the bank stays valid.
            db.session.rollback()
            return
        if generation is None:
            # First start: BankError, with every located problem, if the file is bad.
            generation, _ = publish(load_bank(self.questions_path))
        if self._bank is None or self._bank.generation != generation:
            self._bank = released_bank(generation)
            current_app.logger.info("serving release %d of the question bank", generation)
        self._checked = time.monotonic()
