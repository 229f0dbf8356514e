"""Exceptions and assignments changed while students answer: held feedback waits for every
attempt still running, an exception never leaves a student worse off than the assignment, and
time granted mid-attempt lengthens it. (From the attacker review of exceptions.)"""

from datetime import UTC, datetime, timedelta

import pytest
from test_exceptions import code_of, lecturer_of, started
from test_timing import assign

from app.attempts.policy import ANSWER_GRACE, rules_for
from app.attempts.service import rules_of
from app.extensions import db
from app.models import Accommodation, Answer, Assignment, Attempt, FeedbackWhen
from app.question_types import right_choice
from app.teach.assignments import Settings, save_assignment
from app.teach.exceptions import Said, save_exception

from helpers import Student, csrf_token, text

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize("change", ["remove", "shorten"])
def test_an_exception_ended_mid_attempt_keeps_the_key_held_while_she_answers(
    app, quiz, course, clock, change
):
    """Dana started with 60 minutes; her exception is removed, or cut to 15, while she answers.
    Her attempt keeps its 60 minutes, and Ben's held feedback waits for them."""
    closes = datetime.now(UTC) + timedelta(minutes=5)
    held = assign(app, quiz, course, time_limit_minutes=10, closes_at=closes,
                  feedback=FeedbackWhen.AFTER_CLOSE)  # fmt: skip
    with app.app_context():
        save_exception(db.session.get(Assignment, held), {"dana": "Dana"},
                       Said(time_limit_minutes=60))  # fmt: skip
    code = code_of(app, course)
    dana, ben = started(app.test_client(), "Dana", code), started(app.test_client(), "Ben", code)
    for number in range(1, len(quiz.questions) + 1):
        ben.answer(number, right_choice(quiz.questions[number - 1]).id)
    if change == "remove":
        lecturer = lecturer_of(app)
        with app.app_context():
            row = db.session.scalar(db.select(Accommodation))
        base = f"/teach/classes/{course}/assignments/{held}/exceptions/{row.id}"
        token = csrf_token(lecturer.get(base).get_data(as_text=True))
        assert lecturer.post(f"{base}/remove", data={"csrf_token": token}).status_code == 303
    else:
        with app.app_context():
            save_exception(db.session.get(Assignment, held), {"dana": "Dana"},
                           Said(time_limit_minutes=15))  # fmt: skip
    clock.wait(timedelta(minutes=5 + 15) + ANSWER_GRACE + timedelta(seconds=30))
    key_shown = "You scored" in text(ben.client.get(ben.results_url))
    assert dana.answer(1, right_choice(quiz.questions[0]).id).status_code == 303
    with app.app_context():
        saved = db.session.scalar(db.select(db.func.count(Answer.id)).join(Attempt)
                                  .where(Attempt.token == dana.token))  # fmt: skip
    assert saved == 1 and not key_shown, "key shown to Ben while Dana still answers"


def test_an_assignment_made_unlimited_is_unlimited_for_the_excepted_student_too(app, quiz, course):
    one = assign(app, quiz, course, attempts_allowed=1)
    with app.app_context():
        a = db.session.get(Assignment, one)
        save_exception(a, {"dana": "Dana"}, Said(attempts_allowed=2))
        save_assignment(a.class_, quiz.slug, Settings(attempts_allowed=None), a)
    code = code_of(app, course)
    for _ in range(3):
        Student(app.test_client()).start(name="Ben", class_code=code)
    results = [Student(app.test_client()).start(name="Dana", class_code=code).status_code
               for _ in range(3)]
    assert results == [303, 303, 303]


def test_an_assignment_given_more_attempts_than_an_exception_gives_them_to_all(app, quiz, course):
    one = assign(app, quiz, course, attempts_allowed=1)
    with app.app_context():
        a = db.session.get(Assignment, one)
        save_exception(a, {"dana": "Dana"}, Said(attempts_allowed=2))
        save_assignment(a.class_, quiz.slug, Settings(attempts_allowed=5), a)
        a = db.session.get(Assignment, one)
        assert rules_of(a, "dana").attempts_allowed >= 5


def test_an_assignment_closing_later_than_an_exception_closes_later_for_all(app, quiz, course):
    closes = datetime.now(UTC) + timedelta(hours=1)
    a_id = assign(app, quiz, course, closes_at=closes, time_limit_minutes=30)
    with app.app_context():
        a = db.session.get(Assignment, a_id)
        save_exception(a, {"dana": "Dana"}, Said(closes_at=closes + timedelta(hours=1),
                                                 time_limit_minutes=45))
        # The instructor extends everyone by a day, and everyone's limit to 90 minutes.
        save_assignment(a.class_, quiz.slug,
                        Settings(closes_at=closes + timedelta(days=1), time_limit_minutes=90), a)
        a = db.session.get(Assignment, a_id)
        dana, ben = rules_of(a, "dana"), rules_for(a)
        assert dana.closes_at >= ben.closes_at and dana.time_limit_minutes >= ben.time_limit_minutes


def test_an_assignment_that_no_longer_closes_closes_for_nobody(app, quiz, course):
    closes = datetime.now(UTC) - timedelta(hours=2)
    a_id = assign(app, quiz, course, closes_at=closes)
    with app.app_context():
        a = db.session.get(Assignment, a_id)
        save_exception(a, {"dana": "Dana"}, Said(closes_at=closes + timedelta(hours=1)))
        save_assignment(a.class_, quiz.slug, Settings(), a)  # no close at all now
    code = code_of(app, course)
    ben = Student(app.test_client()).start(name="Ben", class_code=code)
    dana = Student(app.test_client()).start(name="Dana", class_code=code)
    assert (ben.status_code, dana.status_code) == (303, 303)


def test_an_exception_granted_after_she_started_lengthens_her_attempt(
    app, quiz, course, clock
):
    a_id = assign(app, quiz, course, time_limit_minutes=10)
    code = code_of(app, course)
    dana = started(app.test_client(), "Dana", code)
    with app.app_context():
        save_exception(db.session.get(Assignment, a_id), {"dana": "Dana"},
                       Said(time_limit_minutes=30))
    clock.wait(timedelta(minutes=15))
    assert dana.answer(1, right_choice(quiz.questions[0]).id).status_code == 303
    with app.app_context():
        saved = db.session.scalar(db.select(db.func.count(Answer.id)))
    assert saved == 1
    # Her page says the time her attempt now has, from its own start and end.
    assert "30 minutes after it started" in text(dana.client.get(dana.question_url(2)))
