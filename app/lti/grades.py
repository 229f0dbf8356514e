"""Assignment and Grade Services: grades written to the lti_scores outbox in the transaction
that finished the attempt, and sent to the platforms' line items by `flask lti send-scores`
(sending.py), which retries with backoff while a platform is down. No request waits on a
platform."""

from sqlalchemy import bindparam
from sqlalchemy.orm import joinedload

from ..attempts.service import quiz_of
from ..extensions import db
from ..models import Attempt, QuizVersion, now
from ..reports import PICK, Counting
from .models import LtiAttempt, LtiScore, LtiUser

# Built once: every attempt's last answer asks it, launched or not.
_LAUNCHED = (
    db.select(LtiAttempt.user_id, LtiAttempt.line_item_url, LtiUser.sub)
    .join(LtiUser, LtiUser.id == LtiAttempt.user_id)
    .where(LtiAttempt.attempt_id == bindparam("attempt"))
)


def record_grade(_sender, *, attempt_id: int, occasion: str) -> None:
    """Add the student's grade to the outbox if the attempt came from a launch with a line item;
    the grade_changed signal's receiver, inside the transaction that changed it, before its
    commit."""
    launched = db.session.execute(_LAUNCHED, {"attempt": attempt_id}).first()
    if launched is None or not launched.line_item_url:
        return
    counted = db.session.scalars(
        db.select(Attempt)
        .join(LtiAttempt, LtiAttempt.attempt_id == Attempt.id)
        .where(
            LtiAttempt.user_id == launched.user_id,
            LtiAttempt.line_item_url == launched.line_item_url,
            Attempt.finished_at.is_not(None),
            Attempt.voided_at.is_(None),
        )
        .options(joinedload(Attempt.quiz_version), joinedload(Attempt.assignment))
        .order_by(Attempt.started_at, Attempt.id)
        # The finishing attempt is loaded already, with its tally from before this answer.
        .execution_options(populate_existing=True)
    ).all()
    payload = {
        "userId": launched.sub,
        # Platforms keep the score with the latest timestamp: a late resend is harmless.
        "timestamp": now().isoformat(timespec="milliseconds"),
    }
    if counted:
        given, most = grade(counted, db.session.get(Attempt, attempt_id))
        payload |= {"scoreGiven": given, "scoreMaximum": most,
                    "activityProgress": "Completed", "gradingProgress": "FullyGraded"}  # fmt: skip
    else:
        # Every attempt voided: AGS clears the platform's grade with a score that has none.
        payload |= {"activityProgress": "Initialized", "gradingProgress": "NotReady"}
    if occasion != "finished":
        # An attempt may be voided and restored again and again; each change is sent once.
        earlier = db.select(db.func.count()).where(LtiScore.attempt_id == attempt_id)
        occasion = f"{occasion} {db.session.scalar(earlier)}"
    db.session.add(
        LtiScore(
            attempt_id=attempt_id,
            occasion=occasion,
            user_id=launched.user_id,
            line_item_url=launched.line_item_url,
            payload=payload,
        )
    )


def grade(finished: list[Attempt], this: Attempt) -> tuple[float, float]:
    """The student's grade in points over their finished attempts, as the assignment's "Grade
    from" counts them, out of this attempt's version's points."""
    counting = Counting(this.assignment.grade_from) if this.assignment else Counting.FIRST
    shares = {a.id: a.points / quiz_of(a).out_of for a in finished}
    counted = PICK[counting]([a.id for a in finished], shares)
    most = quiz_of(this).out_of
    return round(sum(shares[i] for i in counted) / len(counted) * most, 2), most


PASSBACK_LABELS = {"sent": "Sent to the LMS", "waiting": "Waiting to send"}


def passback(class_id: int, slug: str) -> dict[str, str]:
    """Each student's latest grade passback in the class at this quiz, as the class page says
    it, by student key; one query."""
    latest: dict[str, str] = {}
    rows = db.session.execute(
        db.select(Attempt.student_key, LtiScore.state, LtiScore.last_error)
        .join(Attempt, Attempt.id == LtiScore.attempt_id)
        .join(QuizVersion, QuizVersion.id == Attempt.quiz_version_id)
        .where(Attempt.class_id == class_id, QuizVersion.slug == slug)
        .order_by(LtiScore.id)
    )
    for key, state, error in rows:
        latest[key] = PASSBACK_LABELS.get(state) or f"Failed: {error}"
    return latest
