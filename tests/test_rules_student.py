"""The rules in force for one student are resolved once (policy.rules_for), and the moment held
feedback opens is worked out in one place that every caller asks."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import factories
import pytest

from app.attempts import policy
from app.attempts.service import answers_held_back, find_attempt, quiz_of, standing
from app.extensions import db
from app.lti.sending import _held
from app.models import Assignment, FeedbackWhen
from app.question_types import right_choice
from app.teach.assignments import listing

from helpers import text

pytestmark = pytest.mark.postgres

HOUR = timedelta(hours=1)


def test_no_assignment_means_no_limits_and_feedback_at_once():
    assert policy.rules_for(None) == policy.UNASSIGNED
    assert policy.UNASSIGNED.feedback == FeedbackWhen.EACH_ANSWER
    assert policy.UNASSIGNED.feedback_opens_at is None
    assert policy.UNASSIGNED.attempts_allowed is None


@pytest.mark.parametrize("limit", [None, 20])
@pytest.mark.parametrize("feedback", list(FeedbackWhen))
def test_the_rules_say_what_the_pure_functions_say(feedback, limit):
    """A Rules value answers as the rules over its fields do, never differently."""
    closes = datetime(2026, 12, 7, 9, tzinfo=UTC)
    rules = policy.Rules(feedback=feedback, closes_at=closes, time_limit_minutes=limit)
    assert rules.feedback_opens_at == policy.feedback_opens_at(feedback, closes, limit)
    for moment in (closes - HOUR, closes + HOUR):
        assert rules.holds_back_key(moment) == policy.holds_back_key(
            feedback, moment, policy.key_hold_ends(closes, limit), None
        )
        assert rules.window(moment) == policy.window(moment, None, closes)


def test_every_caller_asks_the_one_moment_feedback_opens(app, quiz, monkeypatch):
    """Feedback after the close, closed two hours ago: the results, the key other attempts may
    show, the class page's "held" and grade passback all agree it is open, and all agree it is
    held once the one moment (Rules.last_answer_possible) moves a day on."""
    with app.app_context():
        scope = factories.class_(factories.instructor())
        closes = datetime.now(UTC) + HOUR
        assigned = factories.assignment(
            scope, quiz, feedback=FeedbackWhen.AFTER_CLOSE.value, closes_at=closes
        )
        answers = [right_choice(question).id for question in quiz.questions]
        token = factories.attempt(
            quiz, class_id=scope.id, assignment=assigned, answers=answers
        ).token
        assigned.closes_at = datetime.now(UTC) - 2 * HOUR  # the clock has moved on
        db.session.commit()

        def asked():
            attempt = find_attempt(token)
            row = db.session.execute(
                db.select(*policy.RULE_COLUMNS).where(Assignment.id == assigned.id)
            ).one()
            return (
                standing(attempt, quiz_of(attempt)).feedback_shown,
                answers_held_back(quiz.slug),
                listing(db.session.get(type(scope), scope.id))[0].held,
                _held(row),
            )

        assert asked() == (True, False, False, False)
        later = datetime.now(UTC) + 24 * HOUR
        monkeypatch.setattr(policy.Rules, "last_answer_possible", property(lambda _: later))
        assert asked() == (False, True, True, True)


def test_the_student_pages_say_the_rules_rules_for_resolves(app, quiz, monkeypatch):
    """The start page says the time limit and attempts the student's Rules hold, not the
    assignment's columns: where an override changes them, the page follows."""
    with app.app_context():
        scope = factories.class_(factories.instructor(), join_code="RULESX")
        factories.assignment(scope, quiz, time_limit_minutes=20, attempts_allowed=1)
    resolved = policy.rules_for
    monkeypatch.setitem(
        app.jinja_env.globals,
        "rules_for",
        lambda assignment: replace(resolved(assignment), time_limit_minutes=45, attempts_allowed=3),
    )
    page = text(app.test_client().get(f"/quizzes/{quiz.slug}?code=RULESX"))
    assert "a time limit of 45 minutes" in page and "3 attempts allowed" in page
