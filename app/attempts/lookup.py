"""A quiz or an attempt for a page, by its slug or token: the student's pages and the
instructor's review answer a 404 when there is none."""

from flask import abort

from ..bank import Quiz
from ..models import Attempt
from ..served import current_bank
from .service import find_attempt


def attempt_or_404(token: str, class_rules: bool = False) -> Attempt:
    """The attempt with this token (see find_attempt), or the 404 page."""
    attempt = find_attempt(token, class_rules)
    if attempt is None:
        abort(404, description="There is no attempt at this address. Check the link.")
    return attempt


def quiz_or_404(slug: str) -> Quiz:
    """The current quiz with this slug, or the 404 page."""
    quiz = current_bank().quizzes.get(slug)
    if quiz is None:
        abort(404, description="There is no quiz at this address.")
    return quiz
