"""The student pages: choose a quiz, answer each question, read the feedback, see the results."""

import re
import secrets
from datetime import timedelta

from flask import (
    Blueprint,
    Flask,
    abort,
    after_this_request,
    current_app,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_wtf import FlaskForm

from .attempts import (
    attempt_or_404,
    progress,
    quiz_of,
    record_answer,
    shown_choices,
    start_attempt,
    unfinished_attempts,
)
from .audit import audit
from .bank import Quiz, current_bank, quiz_or_404
from .extensions import limiter
from .forms import AnswerForm, StartForm, find_class
from .grading import grade
from .models import Attempt
from .roster import has_roster

bp = Blueprint("quiz", __name__)


def init_app(app: Flask) -> None:
    """Add the student pages."""
    app.register_blueprint(bp)


# Each start adds a student to a class, so a script must not add hundreds. A browser starts a
# few a minute at most; one address may be a whole lecture hall behind a school's NAT.
STARTS_PER_BROWSER = "10 per minute"
STARTS_PER_ADDRESS = "300 per minute"
# Join codes are 6 of 31 characters, about 887 million: counting the unknown codes one address
# tries makes guessing one take years, while a hall's typing mistakes still fit.
UNKNOWN_CODES_PER_ADDRESS = "150 per 10 minutes"


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
            secure=current_app.config["SESSION_COOKIE_SECURE"],
            httponly=True,
            samesite="Lax",
        )
        return response


def _browser_id() -> str | None:
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


def _browser() -> str:
    """This browser's random id, made on its first attempt; each attempt keeps it a month more."""
    browser = _browser_id()
    if "browser" not in g:  # else this response sends it already
        _keep_browser(browser or secrets.token_urlsafe(16))
    return g.browser


def _owns(attempt: Attempt) -> bool:
    return secrets.compare_digest(attempt.browser, _browser_id() or "")


def _status(form: FlaskForm) -> int:
    return 400 if form.errors else 200


def _code_missed(_response) -> bool:
    return g.get("unknown_class_code", False)


def _no_code() -> bool:
    """Nothing to look up: no code in the join link, the address or the start form."""
    in_link = (request.view_args or {}).get("code")
    return not (in_link or request.args.get("code") or request.form.get("class_code"))


_starts_per_browser = limiter.shared_limit(
    STARTS_PER_BROWSER,
    scope="starts per browser",
    key_func=_browser,
    methods=["POST"],
    error_message="This browser has just started many quizzes. Wait a minute, then try again: "
    "your answers so far are saved.",
)
_starts_per_address = limiter.shared_limit(
    STARTS_PER_ADDRESS,
    scope="starts per address",
    methods=["POST"],
    error_message="Many quizzes have just been started from your network. Wait a minute, then "
    "try again: your answers so far are saved.",
)
_unknown_codes = limiter.shared_limit(
    UNKNOWN_CODES_PER_ADDRESS,
    scope="unknown class codes per address",
    deduct_when=_code_missed,
    exempt_when=_no_code,
    error_message="Many class codes that match no class have been tried from your network. "
    "Check the code with your instructor and try again in ten minutes.",
)


def _unfinished(quizzes: list[Quiz]) -> list[Attempt]:
    """This browser's attempts still in progress; no query for a browser never seen before."""
    browser = _browser_id()
    return unfinished_attempts(browser, quizzes) if browser else []


@bp.get("/")
def index():
    """List the quizzes on offer, and the attempts this browser can continue."""
    quizzes = list(current_bank().quizzes.values())
    return render_template("quiz/index.html", quizzes=quizzes, unfinished=_unfinished(quizzes))


@bp.route("/quizzes/<slug>", methods=["GET", "POST"])
# Checked from the bottom up: a browser over its own limit then uses none of its address's.
@_unknown_codes
@_starts_per_address
@_starts_per_browser
def start(slug):
    """Introduce a quiz and start an attempt at it."""
    quiz = quiz_or_404(slug)
    form = StartForm(class_code=request.args.get("code", ""))
    valid = form.validate_on_submit()
    by_code = valid and _needs_personal_code(form)
    if valid and not by_code:
        class_id = form.class_.id if form.class_ else None
        attempt = start_attempt(quiz, form.name.data, _browser(), class_id)
        return redirect(url_for(".question", token=attempt.token, number=1), 303)
    code = form.class_code.data
    joining = form.class_ or (find_class(code) if code and request.method == "GET" else None)
    page = render_template(
        "quiz/start.html",
        quiz=quiz,
        form=form,
        joining=joining,
        unfinished=_unfinished([quiz]),
        by_code=by_code,
    )
    return page, _status(form)


def _needs_personal_code(form: StartForm) -> bool:
    """Refuse a typed name in a class with a roster, whose students sign in by their code."""
    if form.class_ is None or not has_roster(form.class_.id):
        return False
    form.name.errors.append(
        f"{form.class_.name} signs students in with personal codes: enter the code from your "
        "card instead of a name."
    )
    return True


@bp.get("/join/<code>")
@_unknown_codes
def join(code):
    """A class's join link: straight to the quiz with the class code filled in."""
    joining = find_class(code)
    if joining is None:
        abort(404, description="No class has this join link. Check it with your instructor.")
    if has_roster(joining.id):
        return redirect(url_for("roster.sign_in", **{"class": joining.join_code}))
    quizzes = list(current_bank().quizzes.values())
    if len(quizzes) == 1:
        return redirect(url_for(".start", slug=quizzes[0].slug, code=joining.join_code))
    return render_template(
        "quiz/index.html", quizzes=quizzes, joining=joining, unfinished=_unfinished(quizzes)
    )


def _browser_or_address() -> str:
    return _browser_id() or request.remote_addr or "unknown"


@bp.route("/attempts/<token>/questions/<int:number>", methods=["GET", "POST"])
# Generous: a whole class may share one school address, so count per browser.
@limiter.limit("60 per minute", methods=["POST"], key_func=_browser_or_address)
def question(token, number):
    """Ask one question; once it is answered, show the feedback instead."""
    attempt = attempt_or_404(token)
    quiz = quiz_of(attempt)
    if not 1 <= number <= len(quiz.questions):
        abort(404, description=f"This quiz has questions 1 to {len(quiz.questions)}.")
    if not _owns(attempt):
        audit("access denied")
        abort(403, description="Only the browser that started this attempt can answer in it.")
    question = quiz.questions[number - 1]
    choices = shown_choices(attempt, question)
    so_far = progress(attempt, quiz)
    feedback = so_far.feedback.get(question.id)
    here = url_for(".question", token=token, number=number)
    form = None if feedback else AnswerForm(choices)
    if request.method == "POST" and feedback:
        return redirect(here, 303)  # answered already: the first answer stands
    if form and form.validate_on_submit():
        record_answer(attempt, grade(question, form.choice.data))
        return redirect(here, 303)
    page = render_template(
        "quiz/question.html",
        attempt=attempt,
        quiz=quiz,
        number=number,
        question=question,
        choices=choices,
        answered=len(so_far.feedback),
        feedback=feedback,
        form=form,
    )
    return page, (_status(form) if form else 200)


@bp.get("/attempts/<token>/continue")
def resume(token):
    """Back to the first question this attempt has not answered, or to its results."""
    attempt = attempt_or_404(token)
    if not _owns(attempt):
        audit("access denied")
        abort(403, description="Only the browser that started this attempt can continue it.")
    number = progress(attempt, quiz_of(attempt)).next_number
    if number is None:
        return redirect(url_for(".results", token=token), 303)
    return redirect(url_for(".question", token=token, number=number), 303)


@bp.get("/attempts/<token>/results")
def results(token):
    """Score and review an attempt; anyone with the link may read it."""
    attempt = attempt_or_404(token)
    quiz = quiz_of(attempt)
    return render_template(
        "quiz/results.html",
        attempt=attempt,
        quiz=quiz,
        progress=progress(attempt, quiz),
        choices={question.id: shown_choices(attempt, question) for question in quiz.questions},
        is_owner=_owns(attempt),
        offered=quiz.slug in current_bank().quizzes,
    )


@bp.post("/attempts/<token>/retake")
@_starts_per_address
@_starts_per_browser
def retake(token):
    """Start a fresh attempt at the current version of the same quiz, under the same name."""
    attempt = attempt_or_404(token)
    if not _owns(attempt):
        audit("access denied")
        abort(403, description="Only the browser that took this attempt can retake it.")
    if attempt.class_ and not attempt.class_.is_open:
        abort(403, description="Your class is closed, so no new attempts can start.")
    student = attempt.roster_student
    if student is not None and student.removed_at is not None:
        abort(403, description="You are no longer on your class's roster. Ask your instructor.")
    quiz = quiz_or_404(attempt.quiz_version.slug)
    # A roster student's retake is theirs too, not a typed name's.
    fresh = start_attempt(
        quiz, attempt.student_name, _browser(), attempt.class_id, roster_student=student
    )
    return redirect(url_for(".question", token=fresh.token, number=1), 303)
