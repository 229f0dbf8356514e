"""Grading is pure: the verdict on a choice, and the score of an attempt."""

import pytest

from app.bank import load_bank
from app.config import PROJECT_ROOT
from app.grading import Score, grade, score
from app.question_types import right_choice

from helpers import SLUG


@pytest.fixture
def quiz():
    """The seed quiz as the file holds it: grading needs no app and no database."""
    return load_bank(PROJECT_ROOT / "questions.json").quizzes[SLUG]


def test_right_choice_is_correct(quiz):
    """The keyed choice is graded correct and is its own right answer."""
    question = quiz.questions[0]
    feedback = grade(question, right_choice(question).id)
    assert feedback.correct and feedback.right == feedback.chosen


def test_wrong_choice_points_to_the_right_one(quiz):
    """A wrong choice is graded incorrect and names the right choice."""
    question = quiz.questions[1]
    wrong = next(c for c in question.choices if not c.correct)
    feedback = grade(question, wrong.id)
    assert not feedback.correct
    assert feedback.chosen == wrong and feedback.right == right_choice(question)


def test_unknown_choice_is_not_graded(quiz):
    """A choice id the question does not have gets no verdict."""
    assert grade(quiz.questions[0], "z") is None


@pytest.mark.parametrize(
    ("correct", "out_of", "points", "percent"),
    [
        ([True] * 5 + [False] * 3, 8, 5, 62.5),  # one decimal, as every page and export
        ([True, False], 8, 1, 12.5),  # unanswered questions count against the score
        ([], 8, 0, 0),
        ([True] * 8, 8, 8, 100),
        ([True, True], 3, 2, 66.7),  # 66.66… rounds half up at the decimal
        ([], 0, 0, 0),
    ],
)
def test_score_counts_correct_answers(correct, out_of, points, percent):
    """One point per correct answer, out of every question, with a whole percentage."""
    assert score(correct, out_of) == Score(points, out_of)
    assert score(correct, out_of).percent == percent
