"""Choice order per attempt, and attempts that outlive edits to questions.json."""

import json
import re

from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import Attempt, QuizVersion

from helpers import SLUG, Student, make_app, shown, text


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
        student.answer(number, question.right_choice.id)
        feedback = text(student.client.get(student.question_url(number)))
        assert review_order(feedback, question) == order[question.id]
    results = text(student.client.get(student.results_url))
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
        bank_order = [
            c.id for c in app.extensions["quizwright.bank"].quizzes[SLUG].questions[2].choices
        ]
    assert radio_order(text(student.client.get(student.question_url(3)))) == bank_order
    with app.app_context():
        assert db.session.scalars(db.select(Attempt)).one().choice_order is None


def test_editing_the_bank_does_not_rewrite_history(tmp_path):
    """After the key and wording change, an old attempt keeps its score and its questions."""
    app = make_app(tmp_path)
    student = Student(app.test_client())
    with app.app_context():
        old = app.extensions["quizwright.bank"].quizzes["gradient-checkpointing"]
    student.start(name="Ada")
    finished = student.token
    for number, question in enumerate(old.questions, 1):
        student.answer(number, question.right_choice.id)
    student.start(name="Ada")
    unfinished = student.token
    student.answer(1, old.questions[0].right_choice.id)

    def rekey(quiz):
        first = quiz["questions"][0]
        first["prompt"] = "Reworded: what is traded?"
        for choice in first["choices"]:
            choice["correct"] = choice["id"] == "accuracy"

    # The server restarts on the edited bank; the student's browser keeps its cookie.
    app = make_app(tmp_path, QUESTIONS_PATH=str(edited_bank(tmp_path, rekey)))
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
