"""Recording, kept apart from grading: the only code that writes attempts and answers."""

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from flask import abort
from sqlalchemy import Connection, Row, bindparam
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import joinedload

from .bank import Choice, Question, Quiz, current_bank, quiz_from_snapshot
from .extensions import db
from .grading import Feedback, Score, grade, score
from .models import (
    Answer,
    Assignment,
    Attempt,
    QuizVersion,
    RosterStudent,
    now,
    student_key,
)


def record_version(quiz: Quiz) -> QuizVersion:
    """The stored copy of this version of the quiz, made on first use."""
    find = db.select(QuizVersion).filter_by(slug=quiz.slug, digest=quiz.version)
    version = db.session.scalar(find)
    if version is None:
        db.session.add(QuizVersion(slug=quiz.slug, digest=quiz.version, snapshot=quiz.snapshot))
        try:
            db.session.commit()
        except IntegrityError:
            db.session.rollback()  # another request stored it first; theirs is identical
        version = db.session.scalars(find).one()
    return version


def new_attempt(
    quiz: Quiz,
    version: QuizVersion,
    student_name: str,
    browser: str,
    class_id: int | None = None,
    *,
    assignment: Assignment | None = None,
    roster_student: RosterStudent | None = None,
) -> Attempt:
    """An attempt not yet stored, with the order its choices will be shown in and, under a time
    limit, the moment it ends fixed."""
    shuffle = random.SystemRandom().sample
    order = (
        {q.id: shuffle([c.id for c in q.choices], len(q.choices)) for q in quiz.questions}
        if quiz.shuffle_choices
        else None
    )
    started = now()
    limit = assignment.time_limit_minutes if assignment else None
    return Attempt(
        quiz_version=version,
        student_name=roster_student.name if roster_student else student_name,
        # Roster students are told apart by record: two may share a name.
        student_key=roster_student.student_key if roster_student else student_key(student_name),
        browser=browser,
        class_id=class_id,
        assignment=assignment,
        roster_student=roster_student,
        choice_order=order,
        started_at=started,
        ends_at=started + timedelta(minutes=limit) if limit else None,
    )


def start_attempt(
    quiz: Quiz,
    student_name: str,
    browser: str,
    class_id: int | None = None,
    *,
    roster_student: RosterStudent | None = None,
) -> Attempt:
    """Begin a new attempt, fixing the order its choices will be shown in."""
    attempt = new_attempt(
        quiz, record_version(quiz), student_name, browser, class_id, roster_student=roster_student
    )
    db.session.add(attempt)
    db.session.commit()
    return attempt


# Built once, like _BY_TOKEN below. Only the browser is asked in SQL, so that the planner takes
# the browser's index and reads a handful of rows, rather than starting from a quiz version
# and reading every attempt at it; the version is matched in Python.
# Plain rows, not attempts: the home page of a returning student is as busy as any page.
_BY_BROWSER = (
    db.select(
        Attempt.token, Attempt.student_name, Attempt.answered, QuizVersion.slug, QuizVersion.digest
    )
    .join(Attempt.quiz_version)
    .where(Attempt.browser == bindparam("browser"))
    .order_by(Attempt.started_at.desc())
)


def unfinished_attempts(browser: str, quizzes: list[Quiz]) -> list[Row]:
    """This browser's attempts at the current version of these quizzes that still have
    questions to answer, newest first: token, student_name, answered and slug."""
    sizes = {(quiz.slug, quiz.version): len(quiz.questions) for quiz in quizzes}
    rows = db.session.execute(_BY_BROWSER, {"browser": browser})
    return [row for row in rows if row.answered < sizes.get((row.slug, row.digest), 0)]


# Built once: answering is the busiest write, and building its statements cost as much as
# running them.
_ADD_ANSWER = Answer.__table__.insert()
_TALLY = (
    Attempt.__table__.update()
    .where(Attempt.__table__.c.id == bindparam("attempt"))
    .values(
        answered=Attempt.__table__.c.answered + 1,
        points=Attempt.__table__.c.points + bindparam("point"),
        last_answer_at=bindparam("moment"),
    )
)


def store_answers(connection: Connection, answers: list[tuple[int, Feedback, datetime]]) -> None:
    """Add answers (attempt id, verdict, when) and move their attempts' tallies, uncommitted.

    The unique constraint speaks at the INSERT, before the tallies move.
    """
    connection.execute(
        _ADD_ANSWER,
        [
            {
                "attempt_id": attempt_id,
                "question_id": feedback.question.id,
                "choice_id": feedback.chosen.id,
                "is_correct": feedback.correct,
                "answered_at": moment,
            }
            for attempt_id, feedback, moment in answers
        ],
    )
    connection.execute(
        _TALLY,
        [
            {"attempt": attempt_id, "point": int(feedback.correct), "moment": moment}
            for attempt_id, feedback, moment in answers
        ],
    )


def record_answer(attempt: Attempt, feedback: Feedback) -> None:
    """Store and lock an answer; if the question was answered meanwhile, the first answer stands."""
    try:
        # Plain statements on the session's connection: the page redirects, so no ORM objects.
        store_answers(db.session.connection(), [(attempt.id, feedback, now())])
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        # Only "answered meanwhile" is expected here; any other broken rule is a real error.
        already = db.select(Answer.id).filter_by(
            attempt_id=attempt.id, question_id=feedback.question.id
        )
        if db.session.scalar(already) is None:
            raise


# One query, built once: every student page starts here.
_BY_TOKEN = (
    db.select(Attempt)
    .where(Attempt.token == bindparam("token"))
    .options(joinedload(Attempt.quiz_version), joinedload(Attempt.answers))
)


def attempt_or_404(token: str) -> Attempt:
    """The attempt with this token, its version and answers loaded, or a 404 page."""
    attempt = db.session.scalars(_BY_TOKEN, {"token": token}).unique().one_or_none()
    if attempt is None:
        abort(404, description="There is no attempt at this address. Check the link.")
    return attempt


def quiz_of(attempt: Attempt) -> Quiz:
    """The quiz as it was when the attempt began."""
    version = attempt.quiz_version
    current = current_bank().quizzes.get(version.slug)
    if current is not None and current.version == version.digest:
        return current
    return quiz_from_snapshot(version.snapshot)


def shown_choices(attempt: Attempt, question: Question) -> list[Choice]:
    """The question's choices in the order this attempt shows them."""
    if attempt.choice_order is None:
        return list(question.choices)
    return [question.choice(choice_id) for choice_id in attempt.choice_order[question.id]]


@dataclass(frozen=True)
class Progress:
    """How far an attempt has got against its quiz."""

    feedback: dict[str, Feedback]
    """Question id -> the verdict on its answer, for answered questions only."""
    score: Score
    next_number: int | None
    """The first unanswered question's number; None once every question is answered."""
    time_taken: timedelta | None
    """From start to the last answer, once every question is answered."""


def progress(attempt: Attempt, quiz: Quiz) -> Progress:
    """Grade what an attempt has answered so far."""
    answers = {answer.question_id: answer for answer in attempt.answers}
    unanswered = [n for n, q in enumerate(quiz.questions, 1) if q.id not in answers]
    last = attempt.answers[-1].answered_at if attempt.answers else None
    return Progress(
        feedback={
            question.id: grade(question, answers[question.id].choice_id)
            for question in quiz.questions
            if question.id in answers
        },
        # The correctness stored at answer time, so the score never changes after the fact.
        score=score([answer.is_correct for answer in answers.values()], len(quiz.questions)),
        next_number=unanswered[0] if unanswered else None,
        time_taken=None if unanswered or last is None else last - attempt.started_at,
    )
