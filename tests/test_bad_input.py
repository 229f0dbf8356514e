"""Bad input gets a clear answer and changes nothing; a stored answer is never replaced."""

import re
import threading

import pytest

from app.attempts import record_answer
from app.extensions import db
from app.grading import grade
from app.models import Answer, Attempt

from helpers import SLUG, text, wrong_choice


def stored(app, model):
    with app.app_context():
        return db.session.scalars(db.select(model)).all()


@pytest.mark.parametrize("fields", [{}, {"choice": ""}, {"choice": "z"}, {"choice": "a" * 5000}])
def test_missing_or_unknown_choice_asks_again(app, student, fields):
    """No choice or a choice not on the page: status 400, "Choose one answer", nothing stored."""
    student.start()
    response = student.post(student.question_url(1), **fields)
    assert response.status_code == 400
    page = text(response)
    assert "Choose one answer." in page
    assert ">Check answer</button>" in page
    assert stored(app, Answer) == []


def test_focus_goes_to_the_first_choice_only_after_an_error(student):
    """A fresh question page leaves focus alone; after "Choose one answer" it is on choice one."""
    student.start()
    assert "autofocus" not in text(student.client.get(student.question_url(1)))
    page = text(student.post(student.question_url(1)))
    assert page.count("autofocus") == 1
    assert re.search(r'<input autofocus id="choice-0"', page)


def test_focus_goes_to_the_first_field_to_fix(student):
    """With both fields wrong, only the name field takes focus."""
    page = text(student.start(name="", class_code="NOPE"))
    assert page.count("autofocus") == 1
    assert re.search(r'<input[^>]*autofocus[^>]*id="name"', page)


def test_second_answer_to_a_question_changes_nothing(app, student, quiz):
    """Replaying or double-clicking shows the feedback again; the first answer stands."""
    student.start()
    question = quiz.questions[0]
    student.answer(1, wrong_choice(question).id)
    response = student.answer(1, question.right_choice.id)
    assert response.status_code == 303
    assert "Incorrect." in text(student.client.get(response.location))
    [answer] = stored(app, Answer)
    assert (answer.choice_id, answer.is_correct) == (wrong_choice(question).id, False)


def test_the_database_keeps_one_answer_per_question(app, student, quiz):
    """Even when the view's check is raced past, the unique constraint keeps the first answer."""
    student.start()
    question = quiz.questions[0]
    with app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        record_answer(attempt, grade(question, wrong_choice(question).id))
        record_answer(attempt, grade(question, question.right_choice.id))
    [answer] = stored(app, Answer)
    assert answer.is_correct is False


def test_concurrent_submissions_store_exactly_one_answer(app, student, quiz):
    """50 tabs released together by a barrier: one answer stored, no request fails."""
    student.start()
    question = quiz.questions[0]
    cookie = student.client.get_cookie("session").value
    barrier = threading.Barrier(50)
    statuses = []

    def submit(choice_id):
        tab = app.test_client()
        tab.set_cookie("session", cookie)
        tab.set_cookie("browser", student.client.get_cookie("browser").value)
        form = {"csrf_token": student.csrf, "choice": choice_id}
        barrier.wait()
        statuses.append(tab.post(student.question_url(1), data=form).status_code)

    threads = [
        threading.Thread(target=submit, args=(question.choices[n % 4].id,)) for n in range(50)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(statuses) == 50 and all(200 <= s < 400 or s == 409 for s in statuses), statuses
    assert len(stored(app, Answer)) == 1
    [attempt] = stored(app, Attempt)
    assert attempt.answered == 1  # the losers' tallies rolled back with their answers


@pytest.mark.parametrize(
    "url",
    [
        "/quizzes/no-such-quiz",
        "/attempts/not-a-real-token/questions/1",
        "/attempts/not-a-real-token/results",
    ],
)
def test_unknown_addresses_are_404_pages(client, url):
    """Unknown quizzes and attempts get the app's own 404 page."""
    response = client.get(url)
    assert response.status_code == 404
    page = text(response)
    assert "Quizwright" in page and "<h1>" in page


@pytest.mark.parametrize("number", ["0", "9", "-1", "x"])
def test_unknown_question_numbers_are_404(student, number):
    """Question numbers outside 1..8 are not found."""
    student.start()
    assert student.client.get(f"/attempts/{student.token}/questions/{number}").status_code == 404


def test_missing_or_bad_csrf_token_says_the_form_expired(app, student, quiz):
    """A form without a valid token is refused with a page that says it expired."""
    student.start()
    for data in ({"choice": "a"}, {"choice": "a", "csrf_token": "forged"}):
        response = student.client.post(student.question_url(1), data=data)
        assert response.status_code == 400
        assert "This form has expired" in text(response)
    response = student.client.post(f"/quizzes/{SLUG}", data={"name": "Eve"})
    assert response.status_code == 400
    assert len(stored(app, Attempt)) == 1
    assert stored(app, Answer) == []


def test_oversized_body_is_413(app, student):
    """A request body beyond the limit is refused before it reaches the form."""
    student.start()
    response = student.post(student.question_url(1), choice="a", padding="x" * 100_000)
    assert response.status_code == 413
    assert "Too much data" in text(response)
    assert stored(app, Answer) == []


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "Enter your name."),
        ("   ", "Enter your name."),
        ("x" * 81, "Use at most 80 characters for your name."),
    ],
)
def test_bad_names_are_form_errors(app, student, name, message):
    """An empty or over-long name is pointed out next to the field; no attempt starts."""
    response = student.start(name=name)
    assert response.status_code == 400
    page = text(response)
    assert message in page
    assert 'aria-invalid="true"' in page
    assert stored(app, Attempt) == []


def test_eighty_character_name_is_accepted(app, student):
    """Exactly 80 characters, after trimming, is allowed."""
    assert student.start(name=" " + "x" * 80 + " ").status_code == 303
    assert [a.student_name for a in stored(app, Attempt)] == ["x" * 80]


def test_unknown_class_code_is_a_form_error(app, student):
    """A class code that matches no class is explained on the form, not a crash."""
    response = student.start(class_code="ABC123")
    assert response.status_code == 400
    assert "No class has the code “ABC123”" in text(response)
    assert stored(app, Attempt) == []


def test_wrong_method_is_a_friendly_405(client):
    """Using a page the wrong way gets the app's 405 page."""
    response = client.get("/attempts/whatever/retake")
    assert response.status_code == 405
    assert "Not allowed" in text(response)


def test_crash_is_a_friendly_500_without_traceback(app, caplog):
    """An unexpected error shows an apology in the layout; the traceback goes to the log."""
    app.config["PROPAGATE_EXCEPTIONS"] = False

    def explode():
        raise RuntimeError("secret internals")

    app.add_url_rule("/explode", view_func=explode)
    response = app.test_client().get("/explode")
    assert response.status_code == 500
    page = text(response)
    assert "Something went wrong on our side" in page
    assert "secret internals" not in page and "Traceback" not in page
    assert "RuntimeError: secret internals" in caplog.text
