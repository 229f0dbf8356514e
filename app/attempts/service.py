"""Recording, kept apart from grading: starting, answering and finishing attempts; the only
code that writes answers."""

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from sqlalchemy import Connection, Row, bindparam, case, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import joinedload, undefer

from .. import signals
from ..bank import Quiz, quiz_from_snapshot
from ..extensions import db
from ..grading import Score, earned, grade, score
from ..models import (
    CAN_CHANGE,
    Accommodation,
    Answer,
    Assignment,
    Attempt,
    Class,
    FeedbackWhen,
    MergedStudent,
    QuizVersion,
    ReplacedAnswer,
    RosterStudent,
    now,
    roster_key,
    student_key,
)
from ..question_types import Choice, Feedback, Question, type_of
from ..races import commit_first_free, insert_or_get
from ..served import current_bank
from ..zones import utc
from . import policy


def grade_changed(attempt_id: int, occasion: str) -> None:
    """Send the grade_changed signal, inside the caller's transaction."""
    signals.grade_changed.send(attempt_id=attempt_id, occasion=occasion)


def has_roster(class_id: int) -> bool:
    """Whether the class signs its students in by personal code: it has a current roster."""
    found = db.select(RosterStudent.id).filter_by(class_id=class_id, removed_at=None).limit(1)
    return db.session.scalar(found) is not None


def record_version(quiz: Quiz) -> QuizVersion:
    """The stored copy of this version of the quiz, made on first use."""
    find = db.select(QuizVersion).filter_by(slug=quiz.slug, digest=quiz.version)
    version = db.session.scalar(find)
    if version is None:  # another request may store it first; theirs is identical
        version = insert_or_get(
            QuizVersion(slug=quiz.slug, digest=quiz.version, snapshot=quiz.snapshot),
            lambda: db.session.scalars(find).one(),
        )
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
    time_limit: int | None = None,
    moves_freely: bool = False,
) -> Attempt:
    """An attempt not yet stored, with the order its questions and choices will be shown in
    and, under a time limit (the student's own, in minutes), the moment it ends fixed."""
    rng = random.SystemRandom()
    order = (
        {q.id: type_of(q).arrangement(q, rng) for q in quiz.questions}
        if quiz.shuffle_choices
        else None
    )
    asked = quiz.draw(rng)
    if quiz.shuffle_questions:
        rng.shuffle(asked)
    started = now()
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
        question_order=asked if quiz.shuffle_questions or quiz.pools else None,
        moves_freely=moves_freely,
        started_at=started,
        ends_at=started + timedelta(minutes=time_limit) if time_limit else None,
    )


class NoAttemptsLeft(Exception):
    """The student has started every attempt their assignment allows."""

    def __init__(self, allowed: int):
        super().__init__(f"all {allowed} attempts used")
        self.allowed = allowed


def start_attempt(
    quiz: Quiz,
    student_name: str,
    browser: str,
    class_id: int | None = None,
    *,
    assignment: Assignment | None = None,
    roster_student: RosterStudent | None = None,
    with_rows: Callable[[Attempt], None] | None = None,
) -> Attempt:
    """Begin a new attempt, fixing the order its choices will be shown in; under a limit of
    attempts it takes a free seat or raises NoAttemptsLeft. `with_rows` adds rows that belong
    with the attempt (its LTI launch) to the same transaction; without it, the
    attempt_starting signal may."""
    version = record_version(quiz)

    def fresh() -> Attempt:
        attempt = new_attempt(
            quiz,
            version,
            student_name,
            browser,
            class_id,
            assignment=assignment,
            roster_student=roster_student,
            time_limit=rules.time_limit_minutes,
            moves_freely=rules.moves_freely,
        )
        counts_as_merged(attempt)  # before its seats are looked up under its key
        return attempt

    def add(attempt: Attempt) -> None:
        db.session.add(attempt)
        # Only now: a row added earlier would be flushed, seatless, by the seats' lookup.
        if with_rows is not None:
            with_rows(attempt)
        else:
            signals.attempt_starting.send(attempt=attempt)

    key = roster_student.student_key if roster_student else student_key(student_name)
    rules = rules_of(assignment, key)
    allowed = rules.attempts_allowed
    if allowed is None:
        attempt = fresh()
        add(attempt)
        db.session.commit()
        return attempt

    # Starts racing for the last seat meet at the unique constraint: a loser looks again, with
    # a new attempt, as a rolled-back one keeps the id its insert was given.
    def seated() -> Attempt:
        attempt = fresh()
        taken, unseated = used_seats(assignment.id, attempt.student_key)
        attempt.seat = policy.free_seat(taken, unseated, allowed)
        if attempt.seat is None:
            raise NoAttemptsLeft(allowed)
        add(attempt)
        return attempt

    return commit_first_free(seated, allowed + 1, "seat settled")


def exception_of(assignment: Assignment | None, key: str) -> Accommodation | None:
    """The exception to an assignment's rules its student (by key, merged or not) has."""
    if assignment is None:
        return None
    return db.session.scalar(
        db.select(Accommodation).where(
            Accommodation.assignment_id == assignment.id,
            Accommodation.student_key.in_([key, merged_key(assignment.class_id, key)]),
        )
    )


def merged_key(class_id: int | None, key: str) -> str:
    """The student a key counts as in a class: the one it was merged into, else itself."""
    merged = db.session.get(MergedStudent, (class_id, key)) if class_id is not None else None
    return merged.into_key if merged else key


def exceptions_of_student(key: str, assignment_ids: list[int]) -> dict[int, Accommodation]:
    """A student's exceptions under these assignments, by assignment, in one query."""
    found = db.session.scalars(
        db.select(Accommodation).where(
            Accommodation.student_key == key, Accommodation.assignment_id.in_(assignment_ids)
        )
    )
    return {exception.assignment_id: exception for exception in found}


def changing_elsewhere(assignment: Assignment, key: str, name: str | None = None) -> bool:
    """Whether the student (by key, merged or not; a roster student by their `name` typed too,
    theirs until merged) has an attempt under the assignment whose answers can still change:
    while one can, another of theirs must not start, finish and show them the key to change
    it by."""
    keys = {key, merged_key(assignment.class_id, key)}
    if name is not None:  # typed before the class had its roster (re-review)
        keys.add(student_key(name))
    ends = db.session.scalars(
        db.select(Attempt.ends_at).where(
            Attempt.assignment_id == assignment.id,
            Attempt.student_key.in_(keys),
            *CAN_CHANGE,
        )
    ).all()
    rules, moment = rules_of(assignment, key), now()
    return any(policy.may_answer(moment, None, rules.answer_deadline(utc(end))) for end in ends)


def take_turns_starting(assignment: Assignment) -> None:
    """Lock the assignment's row (PostgreSQL) or the database (SQLite) until the commit, so that
    starts under it run one after another from their look for an attempt still open to their
    own insert: two starts sent at once must not both find none."""
    db.session.execute(
        update(Assignment)
        .where(Assignment.id == assignment.id)
        .values(feedback=Assignment.feedback)
        .execution_options(synchronize_session=False)
    )


def rules_of(assignment: Assignment | None, key: str) -> policy.Rules:
    """The rules in force for one student (by key) under an assignment, their exception's
    included."""
    return policy.rules_for(assignment, exception_of(assignment, key))


def used_seats(assignment_id: int, key: str) -> tuple[set[int], int]:
    """A student's seats taken under an assignment, and how many of their counted attempts hold
    none (started while attempts were unlimited); voided attempts hold none and count for none."""
    return seats_by_assignment(key, [assignment_id])[assignment_id]


# Built once: nearly every student page asks it, and building it anew each time (and its key
# in SQLAlchemy's statement cache) cost more than running it.
_HOLDING = (
    db.select(
        Assignment.id,
        Assignment.removed_at,
        Assignment.has_changing_attempts,
        *policy.RULE_COLUMNS,
    )
    .join(Assignment.class_)
    .where(
        Assignment.quiz_slug == bindparam("slug"),
        # An archived class takes no more answers: it has nothing left to hold the key for.
        Class.archived_at.is_(None),
        Assignment.id.is_distinct_from(bindparam("besides", type_=Assignment.id.type)),
        Assignment.feedback_released_at.is_(None),
        # Removed, or switched to feedback after each answer, an assignment holds the key still
        # while answers under it can change: none of its students may read it elsewhere first.
        ((Assignment.feedback != FeedbackWhen.EACH_ANSWER.value) & Assignment.removed_at.is_(None))
        | Assignment.has_changing_attempts,
    )
)
# The exam attempts still open under assignments whose rule no longer holds the key, with their
# rules and their students' exceptions, for their deadlines.
_STILL_CHANGING = policy.with_exception(
    db.select(Attempt.ends_at, *policy.RULE_COLUMNS, *policy.EXCEPTION_COLUMNS)
    .join(Attempt.assignment)
    .where(Attempt.assignment_id.in_(bindparam("switched", expanding=True)), *CAN_CHANGE)
)


def answers_held_back(slug: str, besides: int | None = None) -> bool:
    """Whether an assignment of this quiz (other than `besides`) still holds its key back, in
    any class, so that no other attempt may show it: its rule holds it, or, whatever its rule
    says now, an exam attempt under it can still change. One query, on the quiz's index; a
    second only where a rule was changed under an exam still running."""
    moment = now()
    waiting = db.session.execute(_HOLDING, {"slug": slug, "besides": besides}).all()
    if any(
        row.removed_at is None and policy.rules_for(row).holds_back_key(moment) for row in waiting
    ):
        return True
    return _still_changing([row.id for row in waiting if _left_changing(row)], moment)


def holds_key(assignment: Assignment, moment: datetime) -> bool:
    """Whether this assignment holds feedback back now, its own attempts' or its quiz's key from
    every other attempt: for the class page's "Release feedback", which lets both go."""
    if policy.rules_for(assignment).holds_back_key(moment):
        return True
    return _left_changing(assignment) and _still_changing([assignment.id], moment)


def _left_changing(assignment) -> bool:
    """An assignment (or a row of _HOLDING) whose rule no longer holds the key, removed or now
    showing each answer, not released, with exam attempts open from before."""
    return (
        (assignment.removed_at is not None or assignment.feedback == FeedbackWhen.EACH_ANSWER)
        and assignment.feedback_released_at is None
        and bool(assignment.has_changing_attempts)
    )


def _still_changing(assignment_ids: list[int], moment: datetime) -> bool:
    """Whether an exam attempt under these assignments can still be answered now."""
    if not assignment_ids:
        return False
    still_open = db.session.execute(_STILL_CHANGING, {"switched": assignment_ids})
    return any(
        policy.may_answer(moment, None, policy.rules_for(row).answer_deadline(utc(row.ends_at)))
        for row in still_open
    )


# Built once, like _BY_TOKEN below. Only the browser (or the roster student) is asked in SQL,
# so that the planner takes its index and reads a handful of rows, rather than starting from a
# quiz version and reading every attempt at it; the version is matched in Python.
# Plain rows, not attempts: the home page of a returning student is as busy as any page.
_IN_PROGRESS = policy.with_exception(
    db.select(
        Attempt.token,
        Attempt.student_name,
        Attempt.answered,
        Attempt.finished_at,
        Attempt.ends_at,
        Attempt.moves_freely,
        *policy.RULE_COLUMNS,
        *policy.EXCEPTION_COLUMNS,
        QuizVersion.slug,
        QuizVersion.digest,
    )
    .join(Attempt.quiz_version)
    .outerjoin(Attempt.assignment)
).order_by(Attempt.started_at.desc())
_BY_BROWSER = _IN_PROGRESS.where(Attempt.browser == bindparam("browser"))
# A voided attempt is out of the student's count: it is not theirs to carry on elsewhere.
_BY_ROSTER_STUDENT = _IN_PROGRESS.where(
    Attempt.roster_student_id == bindparam("student"), Attempt.voided_at.is_(None)
)


def _can_go_on(rows, quizzes: list[Quiz]) -> list[Row]:
    """The rows whose attempt is at a current version of these quizzes and can still be answered."""
    sizes = {(quiz.slug, quiz.version): quiz.asked for quiz in quizzes}
    moment = now()
    return [
        row
        for row in rows
        if (row.slug, row.digest) in sizes
        and not policy.attempt_finished(
            moment,
            row.finished_at,
            row.answered,
            sizes[row.slug, row.digest],
            policy.rules_for(row).answer_deadline(utc(row.ends_at)),
            row.moves_freely,
        )
    ]


def unfinished_attempts(browser: str, quizzes: list[Quiz]) -> list[Row]:
    """This browser's attempts at the current version of these quizzes that can still be
    answered, newest first: token, student_name, answered and slug."""
    return _can_go_on(db.session.execute(_BY_BROWSER, {"browser": browser}), quizzes)


def unfinished_of_student(student_id: int, quizzes: list[Quiz]) -> list[Row]:
    """A roster student's attempts at these quizzes that can still be answered, whichever
    browser started them, newest first; the same columns as unfinished_attempts."""
    return _can_go_on(db.session.execute(_BY_ROSTER_STUDENT, {"student": student_id}), quizzes)


def attempts_of_student(student_id: int, quizzes: list[Quiz]) -> tuple[list[Row], list[Row]]:
    """A roster student's attempts at these quizzes, whichever browser took them, newest first:
    those that can still be answered (as unfinished_of_student) and those that are over."""
    rows = db.session.execute(_BY_ROSTER_STUDENT, {"student": student_id}).all()
    going = _can_go_on(rows, quizzes)
    slugs, tokens = {quiz.slug for quiz in quizzes}, {row.token for row in going}
    return going, [row for row in rows if row.slug in slugs and row.token not in tokens]


def move_to_browser(token: str, student_id: int, browser: str) -> bool:
    """Hand a roster student's attempt to the browser they signed in on with their code: the
    code is their proof, and the browser that started it (a lost phone) may answer no more.
    False when the token is not this student's attempt."""
    moved = db.session.execute(
        update(Attempt)
        .where(Attempt.token == token, Attempt.roster_student_id == student_id)
        .values(browser=browser)
    )
    db.session.commit()
    return moved.rowcount == 1


def seats_by_assignment(key: str, assignment_ids: list[int]) -> dict[int, tuple[set[int], int]]:
    """used_seats for each of these assignments, in one query."""
    found: dict[int, tuple[set[int], int]] = {id_: (set(), 0) for id_ in assignment_ids}
    rows = db.session.execute(
        db.select(Attempt.assignment_id, Attempt.seat).where(
            Attempt.assignment_id.in_(assignment_ids),
            Attempt.student_key == key,
            Attempt.voided_at.is_(None),
        )
    )
    for assignment_id, seat in rows:
        taken, unseated = found[assignment_id]
        if seat is None:
            found[assignment_id] = (taken, unseated + 1)
        else:
            taken.add(seat)
    return found


# Built once: answering is the busiest write, and building its statements cost as much as
# running them.
_ADD_ANSWER = Answer.__table__.insert()
_ATTEMPTS = Attempt.__table__
_MOMENT = bindparam("moment", type_=_ATTEMPTS.c.last_answer_at.type)
# Only an attempt not yet finished moves: a "Finish attempt" or a timed-out answer that got in
# first leaves this matching no row, and the answer is rolled back with it. The last answer
# finishes the attempt in the same statement.
_TALLY = (
    _ATTEMPTS.update()
    .where(_ATTEMPTS.c.id == bindparam("attempt"), _ATTEMPTS.c.finished_at.is_(None))
    .values(
        answered=_ATTEMPTS.c.answered + 1,
        points=_ATTEMPTS.c.points + bindparam("point"),
        last_answer_at=_MOMENT,
        finished_at=case((_ATTEMPTS.c.answered + 1 >= bindparam("questions"), _MOMENT)),
    )
)
_FINISH = (
    _ATTEMPTS.update()
    .where(_ATTEMPTS.c.id == bindparam("attempt"), _ATTEMPTS.c.finished_at.is_(None))
    .values(finished_at=_MOMENT)
)
# "Finish attempt" now: never before an answer saved while this statement waited for it.
_FINISH_NOW = _FINISH.values(
    finished_at=case((_ATTEMPTS.c.last_answer_at > _MOMENT, _ATTEMPTS.c.last_answer_at),
                     else_=_MOMENT)  # fmt: skip
)


def store_answers(
    connection: Connection, answers: list[tuple[int, Feedback, datetime]], questions: int
) -> int:
    """Add answers (attempt id, verdict, when) to attempts at a quiz of this many questions and
    move their tallies, uncommitted; returns how many tallies moved, which is fewer than the
    answers when an attempt was already finished (exact for one answer).

    The unique constraint speaks at the INSERT, before the tallies move.
    """
    connection.execute(
        _ADD_ANSWER,
        [
            {
                "attempt_id": attempt_id,
                "question_id": feedback.question.id,
                "choice_id": feedback.response,  # Answer.response's column
                "is_correct": feedback.correct,
                "mark": feedback.mark,
                "answered_at": moment,
            }
            for attempt_id, feedback, moment in answers
        ],
    )
    moved = connection.execute(
        _TALLY,
        [
            {
                "attempt": attempt_id,
                "point": feedback.points,
                "moment": moment,
                "questions": questions,
            }
            for attempt_id, feedback, moment in answers
        ],
    )
    return moved.rowcount


def _answering_now(attempt: Attempt) -> datetime | None:
    """Now, while the attempt takes answers; None once it is over, finishing it at its deadline
    if that has passed, scored on what was answered."""
    moment = now()
    deadline = answer_deadline(attempt)
    if policy.may_answer(moment, utc(attempt.finished_at), deadline):
        return moment
    if deadline is not None and moment > deadline:
        finish_attempt(attempt, deadline)
    return None


def record_answer(attempt: Attempt, feedback: Feedback) -> bool:
    """Store and lock an answer while the attempt may still be answered; if the question was
    answered meanwhile, the first answer stands. False when the attempt was over: finished, or
    past its deadline, in which case it is finished now and scored on what was answered."""
    moment = _answering_now(attempt)
    if moment is None:
        return False
    questions = len(quiz_of(attempt).questions)
    answered = attempt.answered  # read before the tally moves it
    try:
        # Plain statements on the session's connection: the page redirects, so no ORM objects.
        moved = store_answers(db.session.connection(), [(attempt.id, feedback, moment)], questions)
        if not moved:  # finished meanwhile by the student's other tab
            db.session.rollback()
            return False
        if answered + 1 >= questions:  # this answer finished it
            grade_changed(attempt.id, "finished")
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        # Only "answered meanwhile" is expected here; any other broken rule is a real error.
        already = db.select(Answer.id).filter_by(
            attempt_id=attempt.id, question_id=feedback.question.id
        )
        if db.session.scalar(already) is None:
            raise
    return True


# Changes nothing, but locks the attempt's row (PostgreSQL) or the database (SQLite) for the
# rest of the transaction, so that changes to one attempt run one after another.
_HOLD_ANY = (
    _ATTEMPTS.update()
    .where(_ATTEMPTS.c.id == bindparam("attempt"))
    .values(answered=_ATTEMPTS.c.answered)
)
# A save's hold, which reads its flags as they are then; it matches no row once the attempt is
# finished.
_HOLD = _HOLD_ANY.where(_ATTEMPTS.c.finished_at.is_(None)).returning(_ATTEMPTS.c.flagged)


def save_freely(
    attempt: Attempt, feedback: Feedback | None, question: Question, flag: bool
) -> bool:
    """Save the answer (if any) of a student who moves between questions, replacing the one
    before, which is kept with when it was replaced, and whether the question is flagged; False
    when the attempt was over, as record_answer."""
    moment = _answering_now(attempt)
    if moment is None:
        return False
    held = db.session.execute(_HOLD, {"attempt": attempt.id}).first()
    if held is None:
        db.session.rollback()
        return False
    flagged = [q for q in held.flagged or () if q != question.id] + ([question.id] if flag else [])
    changes: dict = {"flagged": flagged or None}
    if feedback is not None and (change := _replace_answer(attempt.id, feedback, moment)):
        added, points = change
        changes |= {
            "answered": Attempt.answered + added,
            "points": Attempt.points + points,
            "last_answer_at": moment,
        }
    db.session.execute(update(Attempt).where(Attempt.id == attempt.id).values(changes))
    db.session.commit()
    return True


def _replace_answer(
    attempt_id: int, feedback: Feedback, moment: datetime
) -> tuple[int, float] | None:
    """Store an answer to its question, keeping the one it replaces: how many answers that adds
    (0 or 1) and the points it gains; None when the answer is the one already saved."""
    old = db.session.scalar(
        db.select(Answer)
        .filter_by(attempt_id=attempt_id, question_id=feedback.question.id)
        # Read afresh: the page loaded it before the hold, and another save may have changed it.
        .execution_options(populate_existing=True)
    )
    if old is None:
        old, added, lost = Answer(attempt_id=attempt_id, question_id=feedback.question.id), 1, 0.0
        db.session.add(old)
    elif old.response == feedback.response:
        return None
    else:
        added, lost = 0, earned(feedback.question.points, old.mark, old.is_correct)
        db.session.add(
            ReplacedAnswer(
                attempt_id=attempt_id,
                question_id=old.question_id,
                response=old.response,
                is_correct=old.is_correct,
                mark=old.mark,
                answered_at=old.answered_at,
                replaced_at=moment,
            )
        )
    old.response, old.is_correct, old.mark = feedback.response, feedback.correct, feedback.mark
    old.answered_at = moment
    return added, feedback.points - lost


def hold(attempt_id: int) -> None:
    """Lock the attempt's row until the commit, so that no other change to it runs between."""
    db.session.execute(_HOLD_ANY, {"attempt": attempt_id})


def rescore(attempt_id: int) -> bool:
    """Hold the attempt's row and set its points afresh, uncommitted: the score an instructor
    set, else what its answers' marks earn (theirs where they gave one); whether they changed.
    Read under the hold, so a save, a regrade or another override in between is counted."""
    hold(attempt_id)
    attempt = db.session.scalars(
        db.select(Attempt).filter_by(id=attempt_id).execution_options(populate_existing=True)
    ).one()
    db.session.scalars(
        db.select(Answer).filter_by(attempt_id=attempt_id).execution_options(populate_existing=True)
    ).all()
    db.session.expire(attempt, ["answers"])
    points = attempt.score_override
    if points is None:
        worth = {question.id: question.points for question in quiz_of(attempt).questions}
        points = sum(earned(worth[a.question_id], a.mark_given, a.is_correct)
                     for a in attempt.answers if a.question_id in worth)  # fmt: skip
    changed = points != attempt.points
    attempt.points = points
    return changed


def finish_attempt(attempt: Attempt, moment: datetime | None = None) -> bool:
    """Mark an attempt finished at this moment (by default now, or its deadline once that has
    passed) unless it already was, in one conditional statement that a racing answer cannot slip
    past; whether this call finished it."""
    if moment is None and (deadline := answer_deadline(attempt)) is not None and now() > deadline:
        moment = deadline  # nobody finished it in time: its time ran out
    finished = db.session.connection().execute(
        _FINISH if moment else _FINISH_NOW, {"attempt": attempt.id, "moment": moment or now()}
    )
    if finished.rowcount == 1:
        grade_changed(attempt.id, "finished")
    db.session.commit()
    return finished.rowcount == 1


# One query, built once: every student page starts here.
_BY_TOKEN = (
    db.select(Attempt)
    .where(Attempt.token == bindparam("token"))
    .options(
        joinedload(Attempt.quiz_version),
        joinedload(Attempt.answers),
        # The rules it follows, its class (archived?) and who signed in for it. What the class
        # sets for retakes is read on the results page only, by its owner.
        joinedload(Attempt.assignment),
        # Its instructor's zone says the page's times to a browser that has not told its own.
        joinedload(Attempt.class_).joinedload(Class.instructor),
        joinedload(Attempt.roster_student),
        joinedload(Attempt.accommodation),
    )
)


# The results page and a retake also ask what the class sets now: whether another attempt may
# start, and whether its students sign in by code.
_WITH_CLASS_RULES = _BY_TOKEN.options(
    joinedload(Attempt.class_).options(
        joinedload(Class.assignments), undefer(Class.signs_in_by_code)
    )
)


def find_attempt(token: str, class_rules: bool = False) -> Attempt | None:
    """The attempt with this token, its version and answers loaded (and with `class_rules`,
    what its class sets for retakes)."""
    query = _WITH_CLASS_RULES if class_rules else _BY_TOKEN
    return db.session.scalars(query, {"token": token}).unique().one_or_none()


def quiz_of(attempt: Attempt) -> Quiz:
    """The quiz as it was when the attempt began, its questions in the order the attempt asks
    them, but a question its answer was regraded by, as corrected then (teach/regrades.py)."""
    version = attempt.quiz_version
    current = current_bank().quizzes.get(version.slug)
    if current is not None and current.version == version.digest:
        quiz = current
    else:
        quiz = quiz_from_snapshot(version.snapshot)
    if attempt.question_order:  # its own order, or its own draw from the quiz's pools
        by_id = {question.id: question for question in quiz.questions}
        quiz = replace(quiz, questions=tuple(by_id[q] for q in attempt.question_order), pools=())
    corrected = {a.question_id: a.regraded_version for a in attempt.answers if a.regraded_at}
    if not corrected:
        return quiz
    by = {v.id: quiz_from_snapshot(v.snapshot) for v in corrected.values()}
    return replace(quiz, questions=tuple(
        next(q for q in by[corrected[question.id].id].questions if q.id == question.id)
        if question.id in corrected else question
        for question in quiz.questions
    ))  # fmt: skip


def shown_choices(attempt: Attempt, question: Question) -> list[Choice]:
    """The question's choices in the order this attempt shows them."""
    order = (attempt.choice_order or {}).get(question.id)
    if order is None:  # not shuffled, or of a type with nothing to shuffle
        return list(question.choices)
    return [question.choice(choice_id) for choice_id in order]


@dataclass(frozen=True)
class Progress:
    """How far an attempt has got against its quiz."""

    feedback: dict[str, Feedback]
    """Question id -> the verdict on its answer, for answered questions only."""
    score: Score
    next_number: int | None
    """The first unanswered question's number; None once every question is answered."""
    time_taken: timedelta | None
    """From start to the last answer, once every question is answered; for an attempt whose
    student moves freely, to its finish."""
    regraded: dict[str, datetime] = field(default_factory=dict)
    """Question id -> when its answer was marked again, after its key was corrected."""
    overridden: dict[str, Answer] = field(default_factory=dict)
    """Question id -> its answer, where an instructor gave it another mark."""


def progress(attempt: Attempt, quiz: Quiz) -> Progress:
    """Grade what an attempt has answered so far."""
    answers = {answer.question_id: answer for answer in attempt.answers}
    unanswered = [n for n, q in enumerate(quiz.questions, 1) if q.id not in answers]
    last = attempt.answers[-1].answered_at if attempt.answers else None
    return Progress(
        feedback={
            question.id: grade(question, answers[question.id].response)
            for question in quiz.questions
            if question.id in answers
        },
        # The marks stored, so the score changes only by a regrade or an instructor's override.
        score=Score(attempt.score_override, quiz.out_of)
        if attempt.score_override is not None
        else score(
            [
                earned(question.points, answers[q].mark_given, answers[q].is_correct)
                for question in quiz.questions
                if (q := question.id) in answers
            ],
            quiz.out_of,
        ),
        next_number=unanswered[0] if unanswered else None,
        time_taken=_time_taken(attempt, last if not unanswered else None),
        regraded={a.question_id: a.regraded_at for a in attempt.answers if a.regraded_at},
        overridden={a.question_id: a for a in attempt.answers if a.override_mark is not None},
    )


def _time_taken(attempt: Attempt, last_of_all: datetime | None) -> timedelta | None:
    """From start to finish: to the last answer of all, or to "Finish attempt" where answers
    could change until then."""
    ended = attempt.finished_at if attempt.moves_freely else last_of_all
    return None if ended is None else ended - attempt.started_at


def answer_deadline(attempt: Attempt) -> datetime | None:
    """The last moment this attempt takes an answer, under its assignment's rules."""
    return rules_of_attempt(attempt).answer_deadline(utc(attempt.ends_at))


def rules_of_attempt(attempt: Attempt) -> policy.Rules:
    """The rules an attempt is under: its assignment's, as its student's exception changes them."""
    return policy.rules_for(attempt.assignment, attempt.accommodation)


@dataclass(frozen=True)
class Standing:
    """Where an attempt stands under its assignment's rules at one moment."""

    deadline: datetime | None
    """The last moment an answer is saved; None when nothing ends the attempt."""
    ending: policy.Ending
    finished: bool
    feedback_opens_at: datetime | None
    """When held feedback opens for everyone without a release; None when only a release does."""
    feedback_shown: bool
    """Whether its student may see verdicts, explanations, right answers and the score."""
    shows: policy.Shows
    """When they show, as every sentence about feedback says it."""
    held_elsewhere: bool
    """Whether only another assignment's hold on the quiz's key keeps its feedback back."""
    open_to_anyone: bool
    """Whether its results link shows the review to whoever has the link."""
    finishable: bool
    """Whether "Finish attempt" is offered: under a time limit or feedback held until the end."""
    seconds_left: int | None
    """Whole seconds until the time limit ends, for the countdown; None without a time limit."""
    seconds_to_deadline: int | None
    """Whole seconds until no answer is saved any more; None when nothing ends the attempt."""
    closes_first: datetime | None
    """The quiz's close, when it comes before this attempt's time limit ends (the attempt
    keeps its whole time); None otherwise."""


def standing(attempt: Attempt, quiz: Quiz) -> Standing:
    """Ask the rules about this attempt now, from what attempt_or_404 loaded, and whether any
    other assignment of its quiz holds the key."""
    moment = now()
    rules = rules_of_attempt(attempt)
    closes_at = rules.closes_at
    finished_at, ends_at = utc(attempt.finished_at), utc(attempt.ends_at)
    answered, questions = len(attempt.answers), len(quiz.questions)
    deadline = rules.answer_deadline(ends_at)
    free = attempt.moves_freely
    finished = policy.attempt_finished(moment, finished_at, answered, questions, deadline, free)
    # Answers that may still change show nothing, even if the rule became "after each answer".
    early = free and not finished
    shown = rules.feedback_visible(finished, moment) and not early
    # Another assignment's hold on the key outranks this attempt's own rule. Asked whatever the
    # rule, so that every page costs the same query, on the quiz's index.
    held = answers_held_back(quiz.slug, besides=attempt.assignment_id)
    held_elsewhere = held and shown
    own = rules.shows(moment, held_elsewhere=held)
    return Standing(
        deadline=deadline,
        ending=policy.how_it_ended(
            moment, finished_at, answered, questions, ends_at, closes_at, free
        ),
        finished=finished,
        feedback_opens_at=rules.feedback_opens_at,
        feedback_shown=shown and not held_elsewhere,
        shows=policy.Shows.AT_FINISH if early and own is policy.Shows.EACH_ANSWER else own,
        held_elsewhere=held_elsewhere,
        open_to_anyone=not (held_elsewhere or early)
        and rules.review_open_to_anyone(finished, moment),
        finishable=ends_at is not None or rules.feedback != FeedbackWhen.EACH_ANSWER or free,
        seconds_left=None if ends_at is None else _seconds(ends_at - moment),
        seconds_to_deadline=None if deadline is None else _seconds(deadline - moment),
        closes_first=closes_at if closes_at and ends_at and closes_at < ends_at else None,
    )


def _seconds(span: timedelta) -> int:
    return max(0, int(span.total_seconds()))


def new_attempt_shows(
    slug: str, assignment: Assignment | None, held: bool | None = None
) -> tuple[policy.Shows, datetime | None]:
    """When feedback would show for an attempt started now (under the assignment, if any), and
    when held feedback opens without a release, for the start page to say; `held` is
    answers_held_back's answer for this start, when the caller has already asked it."""
    rules = policy.rules_for(assignment)
    if held is None:
        held = answers_held_back(slug, besides=assignment.id if assignment else None)
    return rules.shows(now(), held_elsewhere=held), rules.feedback_opens_at


def counts_as_merged(attempt: Attempt) -> None:
    """Give a new attempt the student its name was merged into in its class, if any, so a start
    under a merged-away spelling joins the kept student."""
    if attempt.class_id is None:
        return
    merged = db.session.get(MergedStudent, (attempt.class_id, attempt.student_key))
    if merged is None:
        return
    attempt.student_key = merged.into_key
    attempt.student_name = _spelling(attempt.class_id, merged.into_key) or attempt.student_name


def _spelling(class_id: int, key: str) -> str | None:
    """How a class shows a student: the roster's name, otherwise their first attempt's."""
    if key.startswith(ROSTER_KEY_PREFIX):
        roster = db.session.get(RosterStudent, int(key.removeprefix(ROSTER_KEY_PREFIX)))
        return roster.name if roster else None
    return db.session.scalar(
        db.select(Attempt.student_name)
        .filter_by(class_id=class_id, student_key=key)
        .order_by(Attempt.started_at, Attempt.id)
        .limit(1)
    )


ROSTER_KEY_PREFIX = roster_key(0).removesuffix("0")
