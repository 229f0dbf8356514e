"""The quizzes on offer: each quiz record's published version, served from the database, so
that every worker on every app server serves the same release and none reads the file.
`flask quiz reload` publishes questions.json's site quizzes; instructors publish their own."""

import threading
import time
from pathlib import Path

from flask import current_app
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from .attempts.service import record_version
from .bank import Bank, BankError, load_bank, quiz_from_snapshot
from .extensions import db
from .models import OfferedQuiz, Publication, QuizRecord, QuizVersion, Release, now


def latest_generation() -> int | None:
    """The newest release's number, or None before anything was published; one indexed read."""
    return db.session.scalar(db.select(db.func.max(Release.id)))


def offered_versions(generation: int) -> list[tuple[int, bool]]:
    """The quiz version ids a release offers, in the bank's order, each with its listing."""
    return [
        tuple(row)
        for row in db.session.execute(
            db.select(OfferedQuiz.quiz_version_id, OfferedQuiz.listed)
            .where(OfferedQuiz.release_id == generation)
            .order_by(OfferedQuiz.position)
        )
    ]


def _one_release_at_a_time() -> None:
    """Hold other releases back until this transaction ends, so that each reads the records
    every earlier one committed. SQLite's one writer: a write that changes nothing takes its
    lock now, not at the first insert, after the records were read."""
    if db.session.get_bind().dialect.name == "postgresql":
        db.session.execute(text("SELECT pg_advisory_xact_lock(hashtext('quizwright.release'))"))
    else:
        db.session.execute(text("UPDATE releases SET id = id WHERE 0"))


def release() -> tuple[int, bool]:
    """Serve what the quiz records say now, and commit: the release serving it, and whether it
    is new (what the newest release offers already is not released twice)."""
    _one_release_at_a_time()
    served = [
        tuple(row)
        for row in db.session.execute(
            db.select(QuizRecord.published_version_id, QuizRecord.listed)
            .where(QuizRecord.published_version_id.is_not(None), QuizRecord.archived_at.is_(None))
            .order_by(
                QuizRecord.position.is_(None),
                QuizRecord.position,
                QuizRecord.created_at,
                QuizRecord.id,
            )
        )
    ]
    latest = latest_generation()
    if latest is not None and offered_versions(latest) == served:
        db.session.commit()
        return latest, False
    made = Release(
        offered=[
            OfferedQuiz(position=n, quiz_version_id=version, listed=listed)
            for n, (version, listed) in enumerate(served)
        ]
    )
    db.session.add(made)
    db.session.commit()
    return made.id, True


def publish_version(record: QuizRecord, version: QuizVersion, by_id: int | None) -> None:
    """Make a stored version the one a quiz serves, and keep the publication in its history."""
    if record.published_version_id != version.id:
        record.published_version_id = version.id
        db.session.add(Publication(quiz_id=record.id, quiz_version_id=version.id,
                                   published_by_id=by_id))  # fmt: skip


def publish(bank: Bank) -> tuple[int, bool]:
    """Offer exactly this bank's quizzes as the site quizzes from now on, beside the quizzes
    instructors publish; a site quiz the file no longer holds is retired."""
    _refuse_addresses_taken(bank)
    # Stored before the hold on releases: storing a version commits, which ended the hold, and
    # a second worker's publish then waited on the records this one had changed: a deadlock.
    versions = {slug: record_version(quiz) for slug, quiz in bank.quizzes.items()}
    _one_release_at_a_time()
    records = _refuse_addresses_taken(bank)
    for position, quiz in enumerate(bank.quizzes.values()):
        record = records.get(quiz.slug)
        if record is None:
            record = QuizRecord(slug=quiz.slug, title=quiz.title, listed=True)
            db.session.add(record)
            db.session.flush()
        record.title, record.position, record.archived_at = quiz.title, position, None
        publish_version(record, versions[quiz.slug], None)
    for record in records.values():
        if record.from_file and record.slug not in bank.quizzes and record.archived_at is None:
            record.archived_at, record.position = now(), None
    return release()


def _refuse_addresses_taken(bank: Bank) -> dict[str, QuizRecord]:
    """Every quiz record by address; BankError if an instructor's quiz has one of the file's."""
    records = {record.slug: record for record in db.session.scalars(db.select(QuizRecord))}
    taken = [
        f'quiz "{slug}": an instructor\'s quiz has this address; give the file\'s quiz another slug'
        for slug in bank.quizzes
        if slug in records and not records[slug].from_file
    ]
    if taken:
        db.session.rollback()
        raise BankError(taken)
    return records


def released_bank(generation: int) -> Bank:
    """A release's quizzes, rebuilt from their stored versions, and the quizzes it leaves out."""
    rows = db.session.execute(
        db.select(QuizVersion.snapshot, OfferedQuiz.listed)
        .join(OfferedQuiz, OfferedQuiz.quiz_version_id == QuizVersion.id)
        .where(OfferedQuiz.release_id == generation)
        .order_by(OfferedQuiz.position)
    ).all()
    offered, listed = {}, set()
    for row in rows:
        quiz = quiz_from_snapshot(row.snapshot)
        offered[quiz.slug] = quiz
        if row.listed:
            listed.add(quiz.slug)
    # Archived quizzes, each as it last served. A deleted one, which nobody took, has no record:
    # its versions stay for old releases, and nobody reaches them through its freed address.
    retired = db.session.scalars(
        db.select(QuizVersion.snapshot)
        .join(QuizRecord, QuizRecord.published_version_id == QuizVersion.id)
        .where(QuizRecord.archived_at.is_not(None), QuizRecord.slug.not_in(offered))
        .order_by(QuizRecord.slug)
    )
    return Bank(
        offered,
        generation=generation,
        retired={quiz.slug: quiz for quiz in map(quiz_from_snapshot, retired)},
        listed=frozenset(listed),
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

    def recheck(self) -> None:
        """Look for a new release at the next request: this worker has just made one."""
        self._checked = float("-inf")

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
