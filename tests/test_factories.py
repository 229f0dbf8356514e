"""The factories write what the app writes: in bulk exactly as one answer at a time."""

import factories
import pytest

from app.extensions import db
from app.models import Answer, Attempt

pytestmark = pytest.mark.any_database


def stored(attempt_id):
    """An attempt's tallies and answers as the database holds them."""
    attempt = db.session.get(Attempt, attempt_id)
    answers = db.session.execute(
        db.select(Answer.question_id, Answer.response, Answer.is_correct)
        .filter_by(attempt_id=attempt_id)
        .order_by(Answer.question_id)
    ).all()
    return attempt.answered, attempt.points, attempt.last_answer_at is not None, answers


def test_bulk_attempts_store_what_answering_one_by_one_stores(app, quiz):
    """Same answers, same tallies; unanswered questions stay unanswered in both."""
    with app.app_context():
        marks = [1, 0, 1, 1, None, 0, 1, None]
        picks = factories.right_or_wrong(quiz, marks)
        one_by_one = factories.attempt(quiz, "Ada", answers=picks)
        [bulk] = factories.attempts(quiz, [picks], names=["Grace"])
        assert stored(one_by_one.id) == stored(bulk) != (0, 0, False, [])
        assert stored(bulk)[:2] == (6, 4)


def test_bulk_attempts_with_no_answer_yet(app, quiz):
    """Attempts only started, as the class-page fuzz makes them, are stored unanswered."""
    with app.app_context():
        (started,) = factories.attempts(quiz, [[None] * len(quiz.questions)], names=["Bo"])
        assert stored(started) == (0, 0, False, [])
