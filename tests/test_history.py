"""Choice order per attempt, and attempts that outlive edits to questions.json."""

import json
import re

import factories
import pytest

from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import Attempt, QuizVersion
from app.question_types import right_choice
from app.served import current_bank

from helpers import SLUG, Student, login, make_app, shown, text

pytestmark = pytest.mark.any_database


def radio_order(page):
    return re.findall(r'type="radio" value="([^"]+)"', page)


def review_order(page, question):
    """The order in which a page explains the question's choices."""
    positions = {c.id: page.index(shown(c.explanation)) for c in question.choices}
    return sorted(positions, key=positions.get)


def test_shuffled_order_is_stored_and_stable(app, student, quiz):
    """Each attempt fixes its own order; the question, feedback and review all show it."""
    assert quiz.shuffle_choices
    student.start()
    with app.app_context():
        order = db.session.scalars(db.select(Attempt)).one().choice_order
    for number, question in enumerate(quiz.questions, 1):
        first = radio_order(text(student.client.get(student.question_url(number))))
        again = radio_order(text(student.client.get(student.question_url(number))))
        assert first == again == order[question.id]
        student.answer(number, right_choice(question).id)
        feedback = text(student.client.get(student.question_url(number)))
        assert review_order(feedback, question) == order[question.id]
    owner = app.test_client()  # the same browser, on a worker that serves the new release
    owner.set_cookie("browser", student.client.get_cookie("browser").value)
    results = text(owner.get(student.results_url))
    review = results[results.index(shown(quiz.questions[-1].prompt)) :]
    assert review_order(review, quiz.questions[-1]) == order[quiz.questions[-1].id]


def test_attempts_get_their_own_order(app, quiz):
    """Two attempts almost surely differ somewhere (odds of a tie: 24 to the power -8)."""
    orders = []
    for _ in range(2):
        Student(app.test_client()).start()
    with app.app_context():
        orders = [a.choice_order for a in db.session.scalars(db.select(Attempt))]
    assert orders[0] != orders[1]
    for order in orders:
        for question in quiz.questions:
            assert sorted(order[question.id]) == sorted(c.id for c in question.choices)


def edited_bank(tmp_path, edit):
    """Write a copy of questions.json changed by `edit` and return its path."""
    data = json.loads((PROJECT_ROOT / "questions.json").read_text())
    edit(data["quizzes"][0])
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return path


def test_unshuffled_quiz_keeps_bank_order(tmp_path):
    """A quiz that does not shuffle shows choices in the order questions.json lists them."""
    path = edited_bank(tmp_path, lambda quiz: quiz.update(shuffle_choices=False))
    app = make_app(tmp_path, QUESTIONS_PATH=str(path))
    student = Student(app.test_client())
    student.start()
    with app.app_context():
        bank_order = [c.id for c in current_bank().quizzes[SLUG].questions[2].choices]
    assert radio_order(text(student.client.get(student.question_url(3)))) == bank_order
    with app.app_context():
        assert db.session.scalars(db.select(Attempt)).one().choice_order is None


def test_editing_the_bank_does_not_rewrite_history(tmp_path):
    """After the key and wording change, an old attempt keeps its score and its questions."""
    app = make_app(tmp_path)
    student = Student(app.test_client())
    with app.app_context():
        old = current_bank().quizzes["gradient-checkpointing"]
    student.start(name="Ada")
    finished = student.token
    for number, question in enumerate(old.questions, 1):
        student.answer(number, right_choice(question).id)
    student.start(name="Ada")
    unfinished = student.token
    student.answer(1, right_choice(old.questions[0]).id)

    def rekey(quiz):
        first = quiz["questions"][0]
        first["prompt"] = "Reworded: what is traded?"
        for choice in first["choices"]:
            choice["correct"] = choice["id"] == "accuracy"

    # The edited bank is reloaded and served; the student's browser keeps its cookie.
    app = make_app(tmp_path, QUESTIONS_PATH=str(edited_bank(tmp_path, rekey)))
    assert app.test_cli_runner().invoke(args=["quiz", "reload"]).exit_code == 0
    browser = app.test_client()
    browser.set_cookie("session", student.client.get_cookie("session").value)
    browser.set_cookie("browser", student.client.get_cookie("browser").value)
    student.client = browser

    page = text(browser.get(f"/attempts/{finished}/results"))
    assert "You scored <strong>8 out of 8</strong>" in page
    assert shown(old.questions[0].prompt) in page
    assert "Reworded" not in page

    page = text(browser.get(f"/attempts/{unfinished}/questions/1"))
    assert shown(old.questions[0].prompt) in page and "Correct." in page

    student.start(name="Ada")
    assert "Reworded: what is traded?" in text(browser.get(student.question_url(1)))
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(QuizVersion.id))) == 2


def test_a_removed_quiz_keeps_its_history(tmp_path):
    """Taking a quiz out of the bank hides nothing: its class results, attempt reviews and the
    three exports still open from the stored versions, listed as no longer offered."""
    second = json.loads((PROJECT_ROOT / "questions.json").read_text())
    extra = dict(second["quizzes"][0], slug="retired-quiz", title="The Retired Quiz")
    second["quizzes"].append(extra)
    both = tmp_path / "both.json"
    both.write_text(json.dumps(second))
    app = make_app(tmp_path, QUESTIONS_PATH=str(both))
    with app.app_context():
        year_9 = factories.class_(factories.instructor(), "Year 9")
        class_id, code = year_9.id, year_9.join_code
        retired = current_bank().quizzes["retired-quiz"]
    teacher = app.test_client()
    login(teacher, "teacher", "correct horse")
    student = Student(app.test_client())
    student.start(name="Ada", slug="retired-quiz", class_code=code)
    for number, question in enumerate(retired.questions, 1):
        student.answer(number, right_choice(question).id)

    only_first = tmp_path / "first.json"
    only_first.write_text(json.dumps(dict(second, quizzes=second["quizzes"][:1])))
    app = make_app(tmp_path, QUESTIONS_PATH=str(only_first))
    reload = app.test_cli_runner().invoke(args=["quiz", "reload"])
    assert "retired-quiz: no longer offered; its attempts and reports stay" in reload.output
    teacher = app.test_client()
    login(teacher, "teacher", "correct horse")
    assert Student(app.test_client()).start(slug="retired-quiz").status_code == 404

    base = f"/teach/classes/{class_id}"
    choices = text(teacher.get(base))
    assert '<option value="retired-quiz">The Retired Quiz (no longer offered)</option>' in choices
    page = teacher.get(f"{base}?quiz=retired-quiz")
    assert page.status_code == 200
    assert "The Retired Quiz is no longer offered" in text(page) and "Ada" in text(page)
    review = teacher.get(f"/teach/attempts/{student.token}")
    assert review.status_code == 200 and "The Retired Quiz (no longer offered)" in text(review)
    owner = app.test_client()  # the same browser, on a worker that serves the new release
    owner.set_cookie("browser", student.client.get_cookie("browser").value)
    results = text(owner.get(student.results_url))
    assert "You scored <strong>8 out of 8</strong>" in results
    assert "This quiz is no longer offered, so it cannot be retaken." in results
    assert "Retake quiz" not in results
    shared = text(app.test_client().get(student.results_url))
    assert "8 out of 8" in shared and "Take this quiz yourself" not in shared
    exports = {}
    for kind in ("gradebook", "responses", "items"):
        # Read each whole before the next: the responses export is streamed.
        with teacher.get(f"{base}/{kind}.csv?quiz=retired-quiz") as export:
            assert export.status_code == 200, kind
            named = "gradebook-first-attempt" if kind == "gradebook" else kind
            assert export.headers["Content-Disposition"].endswith(f"retired-quiz-{named}.csv")
            exports[kind] = export.get_data(as_text=True).splitlines()
    # After the header: no id or email, finished, attempts, unfinished, score.
    assert exports["gradebook"][1] == "Ada,,,finished,1,0,8,8,100,first-attempt"
    assert len(exports["responses"]) == 1 + 8 and len(exports["items"]) == 1 + 8
