"""Every sentence a student reads about feedback says the rule in force now: before starting,
while answering and on the results page, held, released, or held by another class."""

from datetime import UTC, datetime, timedelta

import factories
import pytest

from app.extensions import db
from app.models import Assignment, Class, FeedbackWhen
from app.question_types import right_choice
from app.served import current_bank

from helpers import SLUG, Student, text

pytestmark = pytest.mark.postgres

CODE, OTHER_CODE = "ABCDEF", "GHJKMN"
HOUR = timedelta(hours=1)
EACH_ANSWER = "After each answer you see whether it was right"
AT_RELEASE = "once your instructor releases feedback"


@pytest.fixture
def classes(app):
    """Physics (CODE) and a colleague's Chemistry (OTHER_CODE)."""
    with app.app_context():
        physics = factories.class_(factories.instructor(), join_code=CODE).id
        chemistry = factories.class_(factories.instructor("carol"), "Chemistry", OTHER_CODE).id
    return physics, chemistry


def assign(app, class_id, **settings) -> int:
    with app.app_context():
        scope = db.session.get(Class, class_id)
        return factories.assignment(scope, current_bank().quizzes[SLUG], **settings).id


def start_page(app, code="") -> str:
    return text(app.test_client().get(f"/quizzes/{SLUG}" + (f"?code={code}" if code else "")))


def finished(app, code) -> Student:
    ada = Student(app.test_client())
    assert ada.start(name="Ada", class_code=code).status_code == 303
    with app.app_context():
        questions = current_bank().quizzes[SLUG].questions
    for number, question in enumerate(questions, 1):
        assert ada.answer(number, right_choice(question).id).status_code == 303
    ada.finish()
    return ada


def test_no_page_promises_feedback_after_each_answer_while_a_class_holds_it(app, classes):
    """Without a class code, and with the code of a class that assigns nothing, the start page
    says what will happen: a code is needed, or another class's hold decides."""
    physics, _ = classes
    assign(app, physics, feedback=FeedbackWhen.AFTER_CLOSE, closes_at=datetime.now(UTC) + HOUR)
    alone = start_page(app)
    assert EACH_ANSWER not in alone and "appear as you take the quiz" not in alone
    assert "A class is taking this quiz as an assignment: start with your class code" in alone
    elsewhere = start_page(app, OTHER_CODE)
    assert EACH_ANSWER not in elsewhere
    assert "Another class is taking this quiz with its feedback held back" in elsewhere


def test_after_a_release_a_new_attempt_is_told_it_sees_feedback_at_its_finish(app, classes):
    """Released, the rule for a new attempt is "once you finish": not "or when your instructor
    releases feedback", which has happened."""
    physics, _ = classes
    assignment_id = assign(app, physics, feedback=FeedbackWhen.AFTER_CLOSE)
    assert AT_RELEASE in start_page(app, CODE)
    with app.app_context():
        db.session.get(Assignment, assignment_id).feedback_released_at = datetime.now(UTC)
        db.session.commit()
    page = start_page(app, CODE)
    assert AT_RELEASE not in page and "releases feedback" not in page
    assert "shows once you finish the attempt, not after each answer" in page
    ada = Student(app.test_client())
    assert ada.start(name="Ada", class_code=CODE).status_code == 303
    asked = text(ada.client.get(ada.question_url(1)))
    assert "Whether they were right shows once you finish the attempt." in asked


def test_a_close_with_a_time_limit_names_the_moment_feedback_really_opens(app, classes):
    """Feedback after the close opens when the last attempt started before it runs out: the
    sentence gives that time and why, not the close alone."""
    physics, _ = classes
    closes = datetime.now(UTC) + HOUR
    assign(app, physics, feedback=FeedbackWhen.AFTER_CLOSE, closes_at=closes, time_limit_minutes=20)
    page = start_page(app, CODE)
    assert "once the quiz has closed and the last attempt's time is up (" in page
    assert ": the close, then a last start's 20 minutes)" in page


def test_a_results_page_that_shows_the_score_says_who_else_may_open_it(app, classes):
    """After the attempt, unreleased: the score shows, and the sharing sentence says why the
    link stays private, without "until feedback is released" (it is, to this student)."""
    physics, _ = classes
    assign(app, physics, feedback=FeedbackWhen.AFTER_ATTEMPT)
    ada = finished(app, CODE)
    page = text(ada.client.get(ada.results_url))
    assert "You scored" in page
    assert "Until feedback is released" not in page
    assert (
        "Only this browser and your instructors can open this page, while classmates may still "
        "be taking the quiz: once your instructor releases feedback, anyone with its address can."
    ) in page
