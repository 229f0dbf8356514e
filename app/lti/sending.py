"""The outbox's sender: `flask lti send-scores` posts each waiting score to its platform's line
item as Assignment and Grade Services asks, in order per student and line item, retrying with
backoff while a platform is down. Only the sender and the roster's loader load this, and with
it the LTI library and the HTTP client."""

import json
from dataclasses import dataclass, field
from datetime import timedelta

import requests
from pylti1p3.exception import LtiServiceException
from pylti1p3.service_connector import ServiceConnector

from ..attempts import policy
from ..attempts.service import finish_attempt
from ..extensions import db
from ..models import Assignment, Attempt, FeedbackWhen, now
from ..zones import utc
from .config import DatabaseToolConf
from .launch import TimedSession
from .models import LtiAttempt, LtiPlatform, LtiScore, LtiUser
from .rules import retry_delay

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
SEND_TIMEOUT = 10
"""Seconds a platform may take to answer one request; the sender, not a page, waits for it."""
MOST_TRIES = 12
"""Tries before a score that keeps meeting a platform down is marked failed (about a day)."""
LEASE = timedelta(minutes=5)
"""How long a sender holds a score it is sending, so that two senders never send it both."""
LAST_ERROR_LENGTH = 300


def connector(platform: LtiPlatform) -> ServiceConnector:
    """pylti1p3's client of the platform's services, its token got with the tool's key."""
    registration = DatabaseToolConf().find_registration_by_params(
        platform.issuer, platform.client_id
    )
    session = TimedSession(SEND_TIMEOUT)
    session.headers["User-Agent"] = "Quizwright"
    return ServiceConnector(registration, requests_session=session)


class PlatformDown(Exception):
    """The platform could not be reached or answered 5xx: try again later."""


@dataclass
class Pass:
    """What one sending pass did."""

    sent: int = 0
    retrying: int = 0
    failed: int = 0
    held: int = 0
    down: set[str] = field(default_factory=set)


def _post(client: ServiceConnector, score: LtiScore) -> None:
    url = score.line_item_url.split("?", 1)
    scores = url[0].rstrip("/") + "/scores" + (f"?{url[1]}" if len(url) == 2 else "")
    try:
        client.make_service_request(
            [SCORE_SCOPE],
            scores,
            is_post=True,
            data=json.dumps(score.payload),
            content_type=SCORE_TYPE,
        )
    except requests.RequestException as error:
        raise PlatformDown(f"{type(error).__name__}: {error}") from error
    except LtiServiceException as error:
        status = error.response.status_code
        reason = f"{status} {error.response.reason or ''} {error.response.text}".strip()
        if status >= 500:
            raise PlatformDown(reason) from error
        raise
    except Exception as error:
        # An answer pylti1p3 cannot read (a token answer without access_token): retried as a
        # platform down, since a crash here would stop every pass at this score, and every
        # platform's scores queued after it would never go.
        raise PlatformDown(f"{type(error).__name__}: {error}") from error


def _held(row) -> bool:
    """Whether the assignment still holds the score back: feedback waits for the quiz to close."""
    rules = policy.rules_for(row)
    # As the student pages show it: once no attempt started before the close can still be
    # answered, not at the close itself.
    return rules.feedback == FeedbackWhen.AFTER_CLOSE and not rules.feedback_visible(True, now())


def finish_timed_out() -> int:
    """Finish the launched attempts whose time ran out with nobody coming back, at their
    deadline, so that their grades reach the outbox too; how many."""
    open_ = db.session.execute(
        policy.with_exception(
            db.select(Attempt, *policy.RULE_COLUMNS, *policy.EXCEPTION_COLUMNS)
            .join(LtiAttempt, LtiAttempt.attempt_id == Attempt.id)
            .join(Assignment, Assignment.id == Attempt.assignment_id)
        ).where(
            LtiAttempt.line_item_url.is_not(None),
            Attempt.finished_at.is_(None),
            Attempt.voided_at.is_(None),
            (Attempt.ends_at.is_not(None)) | (Assignment.closes_at.is_not(None)),
        )
    ).all()
    finished = 0
    for row in open_:
        deadline = policy.rules_for(row).answer_deadline(utc(row.Attempt.ends_at))
        if now() > deadline:
            finished += finish_attempt(row.Attempt, deadline)
    return finished


def send_due() -> Pass:
    """Send every waiting score whose time has come, oldest first. A student's scores for one
    line item go in order: none passes an earlier one still waiting (not due yet, or held), and
    a platform that is down is left for the next pass after its first failure."""
    done = Pass()
    finish_timed_out()
    waiting = db.session.execute(
        db.select(
            LtiScore.id,
            LtiScore.user_id,
            LtiScore.line_item_url,
            LtiScore.next_try_at,
            LtiUser.platform_id,
            *policy.RULE_COLUMNS,
        )
        .join(LtiUser, LtiUser.id == LtiScore.user_id)
        .join(Attempt, Attempt.id == LtiScore.attempt_id)
        .outerjoin(Assignment, Assignment.id == Attempt.assignment_id)
        .where(LtiScore.state == "waiting")
        .order_by(LtiScore.id)
    ).all()
    connectors: dict[int, ServiceConnector] = {}
    down: set[int] = set()
    blocked: set[tuple[int, str]] = set()
    for row in waiting:
        line = (row.user_id, row.line_item_url)
        if row.platform_id in down or line in blocked:
            continue
        if _held(row):
            done.held += 1
            blocked.add(line)
            continue
        moment = now()
        if utc(row.next_try_at) > moment:
            blocked.add(line)
            continue
        claimed = db.session.execute(
            db.update(LtiScore)
            .where(
                LtiScore.id == row.id,
                LtiScore.state == "waiting",
                LtiScore.next_try_at <= moment,
            )
            .values(next_try_at=moment + LEASE)
            .execution_options(synchronize_session=False)
        )
        db.session.commit()
        if claimed.rowcount != 1:
            blocked.add(line)  # another sender has it
            continue
        score = db.session.get(LtiScore, row.id, populate_existing=True)
        platform = db.session.get(LtiPlatform, row.platform_id)
        if row.platform_id not in connectors:
            connectors[row.platform_id] = connector(platform)
        score.tries += 1
        try:
            _post(connectors[row.platform_id], score)
        except PlatformDown as error:
            score.last_error = str(error)[:LAST_ERROR_LENGTH]
            down.add(row.platform_id)
            done.down.add(platform.name)
            if score.tries >= MOST_TRIES:
                score.state = "failed"
                done.failed += 1
            else:
                score.next_try_at = now() + retry_delay(score.tries)
                done.retrying += 1
        except LtiServiceException as error:
            response = error.response
            reason = f"{response.status_code} {response.reason or ''} {response.text}"
            score.state, score.last_error = "failed", " ".join(reason.split())[:LAST_ERROR_LENGTH]
            done.failed += 1
        else:
            score.state, score.sent_at, score.last_error = "sent", now(), None
            done.sent += 1
        db.session.commit()
    return done
