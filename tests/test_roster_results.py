"""A roster student's finished attempts follow them to any browser they sign in on, once the
rules let them see them; and a closed quiz says so before any "I am …"."""

import re
from datetime import UTC, datetime, timedelta

import factories
import pytest

from app import roster
from app.extensions import db
from app.models import Class, FeedbackWhen, RosterStudent
from app.question_types import right_choice
from app.served import current_bank

from helpers import SLUG, Student, text

pytestmark = pytest.mark.postgres


@pytest.fixture
def eli(app):
    """Eli Okafor on Physics 101's roster, one attempt allowed, and his sign-in code."""
    with app.app_context():
        made = factories.class_(factories.instructor())
        factories.assignment(made, current_bank().quizzes[SLUG], attempts_allowed=1)
        [student] = factories.roster(made.id, "Eli Okafor, 20230007")
        return student.sign_in_code


def finish(app, code) -> Student:
    """Eli's first browser: signs in with his code, answers every question and finishes."""
    phone = Student(app.test_client())
    response = phone.post(f"/s/{code}", quiz=SLUG)
    assert response.status_code == 303
    phone.token = response.location.split("/")[2]
    with app.app_context():
        questions = current_bank().quizzes[SLUG].questions
    for number, question in enumerate(questions, 1):
        assert phone.answer(number, right_choice(question).id).status_code == 303
    phone.finish()
    return phone


def see_results(client, code, token):
    """Press "See your results" on the sign-in link's page, for this attempt token."""
    page = client.get(f"/s/{code}").get_data(as_text=True)
    csrf = re.search(r'name="results-csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    return client.post(f"/s/{code}", data={"results-csrf_token": csrf, "results-attempt": token})


def test_a_second_browser_reaches_the_results_through_the_sign_in_link(app, eli):
    """From a laptop, the used-up link offers "See your results", which opens them as his own:
    "Your results", "You scored", never the third person or "Take this quiz yourself"."""
    phone = finish(app, eli)
    laptop = app.test_client()
    page = text(laptop.get(f"/s/{eli}"))
    assert "You have used every attempt" in page and "See your results" in page
    token = re.search(r'name="results-attempt" value="([^"]+)"', page).group(1)
    assert token == phone.token
    opened = see_results(laptop, eli, token)
    assert opened.status_code == 303 and opened.location == f"/attempts/{token}/results"
    results = text(laptop.get(opened.location))
    assert "Your results" in results and "You scored" in results
    assert "Eli Okafor scored" not in results and "Take this quiz yourself" not in results


def test_only_the_students_own_attempts_open_this_way(app, eli):
    """Another student's token posted to Eli's link opens nothing, and Eli's session shows no
    one else's held review."""
    with app.app_context():
        scope = db.session.scalars(db.select(Class)).one()
        [dana] = factories.roster(scope.id, "Dana Diaz, 20230008")
        dana_code = dana.sign_in_code
    dana_token = finish(app, dana_code).token
    finish(app, eli)
    laptop = app.test_client()
    refused = see_results(laptop, eli, dana_token)
    assert refused.status_code == 404


def test_held_results_stay_held_wherever_the_student_signs_in(app):
    """Feedback after the close: the second browser sees what the first does, no more."""
    with app.app_context():
        made = factories.class_(factories.instructor())
        closes = datetime.now(UTC) + timedelta(hours=1)
        factories.assignment(
            made, current_bank().quizzes[SLUG], feedback=FeedbackWhen.AFTER_CLOSE, closes_at=closes
        )
        [student] = factories.roster(made.id, "Eli Okafor")
        code = student.sign_in_code
    phone = finish(app, code)
    laptop = app.test_client()
    assert see_results(laptop, code, phone.token).status_code == 303
    results = text(laptop.get(f"/attempts/{phone.token}/results"))
    assert "Your answers are saved: 8 of 8 answered" in results and "You scored" not in results


def test_after_the_close_the_link_says_so_before_offering_any_start(app):
    """No "I am Zoë Müller" that could only lead to "has closed": the close is said first."""
    with app.app_context():
        made = factories.class_(factories.instructor())
        factories.assignment(
            made, current_bank().quizzes[SLUG], closes_at=datetime.now(UTC) - timedelta(minutes=1)
        )
        [student] = factories.roster(made.id, "Zoë Müller")
        code = student.sign_in_code
    page = text(app.test_client().get(f"/s/{code}"))
    assert "Gradient Checkpointing Quiz has closed</strong>" in page
    assert "I am Zoë Müller" not in page


def test_an_lms_style_refusal_lists_the_students_results(app, eli):
    """A used-up start by a signed-in roster student (code or LMS launch) links their results."""
    phone = finish(app, eli)
    refused = phone.post(f"/attempts/{phone.token}/retake")
    assert refused.status_code == 403
    page = text(refused)
    assert (
        f'<a href="/attempts/{phone.token}/results">Gradient Checkpointing Quiz, attempt 1</a>'
        in page
    )


@pytest.mark.parametrize("change", ["new code", "removed"])
def test_a_new_code_or_removal_ends_what_the_old_sign_in_opened(app, eli, change):
    """A classmate who signed in with Eli's lost card sees his results until the instructor
    gives him a new code (or takes him off the roster): then neither his results nor a retake
    answer to that session any more."""
    phone = finish(app, eli)
    classmate = app.test_client()
    page = classmate.get(f"/s/{eli}").get_data(as_text=True)
    csrf = re.search(r'name="results-csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    opened = see_results(classmate, eli, phone.token)
    assert "Your results" in text(classmate.get(opened.location))
    with app.app_context():
        student = db.session.scalars(db.select(RosterStudent)).one()
        if change == "new code":
            roster.give_new_code(student)
        else:
            roster.remove_student(student)
    assert "Your results" not in text(classmate.get(opened.location))
    retake = classmate.post(f"/attempts/{phone.token}/retake", data={"csrf_token": csrf})
    assert retake.status_code == 403
    assert "Only the browser that took this attempt can retake it." in text(retake)
    assert "Your results" in text(phone.client.get(opened.location))  # his own phone still
