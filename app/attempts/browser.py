"""Which browser is the student's: a random id in a cookie of its own, which owns the attempts
it starts, and the roster students its session signed in as."""

import hashlib
import re
import secrets
from datetime import timedelta

from flask import abort, after_this_request, g, request, session

from .. import cookies
from ..audit import audit
from ..models import Attempt, RosterStudent

BROWSER_COOKIE = "browser"
# Students come back to an unfinished attempt after closing the browser.
BROWSER_LIFETIME = timedelta(days=30)
# What secrets.token_urlsafe(16) makes; a cookie is the browser's to forge, the column is short.
BROWSER_ID = re.compile(r"[A-Za-z0-9_-]{22}")


def _keep_browser(browser: str) -> None:
    """Send this browser its id in a cookie of its own, apart from an instructor's login."""
    g.browser = browser

    @after_this_request
    def remember(response):
        response.set_cookie(
            BROWSER_COOKIE,
            browser,
            max_age=BROWSER_LIFETIME,
            httponly=True,
            **cookies.attributes(),
        )
        return response


def browser_id() -> str | None:
    """This browser's id, if it has one yet."""
    if "browser" in g:
        return g.browser
    if BROWSER_ID.fullmatch(request.cookies.get(BROWSER_COOKIE, "")):
        return request.cookies[BROWSER_COOKIE]
    if "browser" in session:
        # Before its own cookie the id lived in the session: move it, so attempts stay theirs.
        _keep_browser(session.pop("browser"))
        return g.browser
    return None


def this_browser() -> str:
    """This browser's random id, made on its first attempt; each attempt keeps it a month more."""
    browser = browser_id()
    if "browser" not in g:  # else this response sends it already
        _keep_browser(browser or secrets.token_urlsafe(16))
    return g.browser


def owns(attempt: Attempt) -> bool:
    """Whether this browser started the attempt."""
    return secrets.compare_digest(attempt.browser, browser_id() or "")


# Roster students this browser's session has signed in as, with their code or an LMS launch:
# their finished attempts' results are theirs here too. Answering stays with one browser.
SIGNED_IN_AS = "students"


def _proof(student: RosterStudent) -> str:
    """What a session keeps of the code a student signed in with: a new code ends it."""
    return hashlib.sha256(student.sign_in_code.encode()).hexdigest()[:16]


def sign_in_as(student: RosterStudent) -> None:
    """Remember, for this session, that its student proved to be this roster student."""
    kept = session.get(SIGNED_IN_AS, [])
    known = [pair for pair in kept if isinstance(pair, list) and pair[0] != student.id]
    session[SIGNED_IN_AS] = [*known[-19:], [student.id, _proof(student)]]


def signed_in_as(attempt: Attempt) -> bool:
    """Whether this session signed in as the attempt's roster student, with their code as it is
    now, and they are still on the roster."""
    student = attempt.roster_student
    return (
        student is not None
        and student.removed_at is None
        and [student.id, _proof(student)] in session.get(SIGNED_IN_AS, [])
    )


def only_its_browser(attempt: Attempt, may: str) -> None:
    """Refuse, with a 403 in the audit log, any browser but the one that started the attempt:
    it alone may answer in it, finish it or continue it (`may`: "answer in it")."""
    if not owns(attempt):
        audit("access denied")
        abort(403, description=f"Only the browser that started this attempt can {may}.")
