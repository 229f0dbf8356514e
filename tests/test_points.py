"""Points per question: a question earns its points for a full mark, and the quiz's maximum,
the results, the class page, the gradebooks and the LMS's grade are in points."""

import json

import pytest

from app.auth import create_instructor
from app.config import PROJECT_ROOT
from app.extensions import db
from app.lti.grades import grade
from app.models import Attempt
from app.question_types import right_choice

from helpers import Student, gradebook_rows, login, make_app, text, wrong_choice

pytestmark = pytest.mark.postgres

WORTH = {0: 2, 1: 0.5}
"""Question index -> its points; the other six are worth 1: 8.5 in all."""


@pytest.fixture
def app(tmp_path):
    bank = json.loads((PROJECT_ROOT / "questions.json").read_text())
    for index, points in WORTH.items():
        bank["quizzes"][0]["questions"][index]["points"] = points
    path = tmp_path / "points.json"
    path.write_text(json.dumps(bank))
    return make_app(tmp_path, QUESTIONS_PATH=str(path))


def test_a_question_earns_its_points_and_the_quiz_is_out_of_their_sum(app, quiz):
    """Right on the 2-point and the half-point question, wrong on the rest: 2.5 of 8.5, on the
    student's results, the class page and the gradebook, in the attempt's stored points
    and in the grade the LMS is sent."""
    student = Student(app.test_client())
    student.start()
    for number, question in enumerate(quiz.questions, 1):
        choice = right_choice(question) if number - 1 in WORTH else wrong_choice(question)
        assert student.answer(number, choice.id).status_code == 303
        if number == 1:
            page = text(student.client.get(student.results_url))
            assert "answered, 2 of 8.5 points so far" in page
    results = text(student.client.get(student.results_url))
    assert "You scored <strong>2.5 out of 8.5</strong> (29.4%)" in results
    with app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        assert attempt.points == 2.5
        assert grade([attempt], attempt) == (2.5, 8.5)


    with app.app_context():
        create_instructor("boss", "boss password", is_admin=True)
    admin = app.test_client()
    login(admin, "boss", "boss password")
    assert "2.5/8.5" in text(admin.get("/teach/no-class"))
    [row] = gradebook_rows(admin.get("/teach/no-class/gradebook.csv"))
    assert (row["score"], row["max_score"], row["percent"]) == ("2.5", "8.5", "29.4")
