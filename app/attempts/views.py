"""The student pages: choose a quiz, answer each question, read the feedback, see the results."""

from dataclasses import dataclass

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from flask_wtf import FlaskForm

from ..audit import audit
from ..auth import role_in
from ..extensions import limiter
from ..formatting import say_times_for
from ..models import Attempt, Class
from ..question_types import type_of
from ..ratelimits import charges_code_lookups, limited_answers
from ..served import current_bank
from . import policy
from .browser import browser_id, only_its_browser, owns, signed_in_as
from .forms import StartForm
from .lookup import attempt_or_404, quiz_or_404
from .policy import Ending
from .service import (
    Standing,
    answers_held_back,
    finish_attempt,
    has_roster,
    new_attempt_shows,
    progress,
    quiz_of,
    record_answer,
    rules_of,
    save_freely,
    shown_choices,
    standing,
    used_seats,
)
from .starts import (
    NEEDS_CLASS_CODE,
    NO_ATTEMPTS_LEFT,
    NOT_ASSIGNED,
    assignment_for,
    closed_to_starts,
    find_class,
    limited_start,
    offered_quizzes,
    refused_page,
    start_in_class,
    unfinished_in_browser,
)

bp = Blueprint("quiz", __name__)


def _status(form: FlaskForm) -> int:
    return 400 if form.errors else 200


@bp.get("/")
def index():
    """List the quizzes their owners list here, and the attempts this browser can continue."""
    served = list(current_bank().quizzes.values())
    return render_template(
        "quiz/index.html",
        quizzes=current_bank().listed_quizzes(),
        # An unlisted quiz's link brought them: they find their way back to it here all the same.
        served=served,
        unfinished=unfinished_in_browser(served),
    )


@bp.route("/quizzes/<slug>", methods=["GET", "POST"])
@charges_code_lookups
@limited_start
def start(slug):
    """Introduce a quiz and start an attempt at it."""
    quiz = quiz_or_404(slug)
    form = StartForm(class_code=request.args.get("code", ""))
    valid = form.validate_on_submit()
    by_code = valid and _needs_personal_code(form)
    held = None  # asked once: whether a class holds this quiz's key from starts outside one
    if valid and form.class_ is None and (held := answers_held_back(slug)):
        form.class_code.errors.append(NEEDS_CLASS_CODE)
        valid = False
    if valid and not by_code:
        assignment, refusal = assignment_for(form.class_, slug)
        if refusal == NOT_ASSIGNED:
            form.class_code.errors.append(
                f"{form.class_.name} does not set this quiz. Open its join link to see the "
                "quizzes it sets."
            )
        else:
            return start_in_class(quiz, form.class_, form.name.data)
    code = form.class_code.data
    class_ = form.class_ or (find_class(code) if code and request.method == "GET" else None)
    assignment, refusal = assignment_for(class_, slug)
    if refusal and request.method == "GET":
        return refused_page(refusal, quiz, class_, assignment)
    shows, opens_at = new_attempt_shows(slug, assignment, held if assignment is None else None)
    say_times_for(class_)
    page = render_template(
        "quiz/start.html",
        quiz=quiz,
        form=form,
        class_=class_,
        assignment=assignment,
        shows=shows,
        opens_at=opens_at,
        unfinished=unfinished_in_browser([quiz]),
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
@charges_code_lookups
def join(code):
    """A class's join link: straight to the quiz with the class code filled in."""
    class_ = find_class(code)
    if class_ is None:
        abort(404, description="No class has this join link. Check it with your instructor.")
    if class_.archived_at is not None:
        abort(
            410,
            description=f"{class_.name} has ended: its instructor archived it, so this join "
            "link no longer works. Ask your instructor for the link of your current class.",
        )
    if has_roster(class_.id):
        return redirect(url_for("roster.sign_in", **{"class": class_.join_code}))
    quizzes = offered_quizzes(class_)
    if len(quizzes) == 1:
        return redirect(url_for(".start", slug=quizzes[0].slug, code=class_.join_code))
    return render_template(
        "quiz/index.html",
        quizzes=quizzes,
        class_=class_,
        unfinished=unfinished_in_browser(quizzes),
    )


READING = {"quiz.question", "quiz.results", "quiz.resume"}
"""Student pages whose GET no limit counts; answering, a POST, counts in memory
(ratelimits.limited_answers)."""


@limiter.request_filter
def _uncounted() -> bool:
    """Reading a question or results, or answering: Flask-Limiter has nothing to count there,
    and working that out on every request cost those pages a tenth of their time."""
    reading = request.method in ("GET", "HEAD") and request.endpoint in READING
    return reading or request.endpoint == "quiz.question"


def _browser_or_address() -> str:
    return browser_id() or request.remote_addr or "unknown"


@bp.route("/attempts/<token>/questions/<int:number>", methods=["GET", "POST"])
# Per browser: a whole class may share one school address.
@limited_answers(_browser_or_address)
def question(token, number):
    """Ask one question; once it is answered, show the feedback, or that the answer is saved
    while the assignment holds feedback back."""
    attempt = attempt_or_404(token)
    say_times_for(attempt)
    quiz = quiz_of(attempt)
    if not 1 <= number <= len(quiz.questions):
        abort(404, description=f"This quiz has questions 1 to {len(quiz.questions)}.")
    only_its_browser(attempt, "answer in it")
    question = quiz.questions[number - 1]
    choices = shown_choices(attempt, question)
    so_far = progress(attempt, quiz)
    state = standing(attempt, quiz)
    answer = next((a for a in attempt.answers if a.question_id == question.id), None)
    here = url_for(".question", token=token, number=number)
    if attempt.moves_freely and not state.finished:
        return _moving(attempt, quiz, number, question, choices, answer, state, so_far)
    if attempt.moves_freely and request.method == "POST":
        # A change after the finish: it is not saved, and the page says so.
        if state.deadline is not None and attempt.finished_at is None:
            finish_attempt(attempt, state.deadline)
        return _over(attempt, state)
    if request.method == "POST" and answer:
        return redirect(here, 303)  # answered already: the first answer stands
    if answer is None and (stopped := _answers_stopped(attempt)):
        return _stopped(attempt, stopped)
    if answer is None and state.finished:
        if request.method == "POST":
            if state.deadline is not None and attempt.finished_at is None:
                finish_attempt(attempt, state.deadline)
            return _over(attempt, state)
        return redirect(url_for(".results", token=token), 303)
    # Only an answer sent needs checking: a question read gets its token from csrf_token().
    kind = type_of(question)
    posted = answer is None and request.method == "POST"
    form = None
    if posted:  # the browser's first language says how it writes a number (3,5 in German)
        form = kind.answer_form(question, choices, request.accept_languages.best or "en")
    if form and form.validate_on_submit():
        if not record_answer(attempt, kind.grade(question, form.response)):
            return _over(attempt, standing(attempt_or_404(token), quiz))
        if state.feedback_shown:
            return redirect(here, 303)
        # Held feedback: nothing to read here, so straight on to the next open question.
        flash(f"Your answer to question {number} is saved.")
        following = next(
            (
                n
                for n, q in enumerate(quiz.questions, 1)
                if n > number and q.id not in so_far.feedback
            ),
            None,
        )
        if following is None:
            return redirect(url_for(".resume", token=token), 303)
        return redirect(url_for(".question", token=token, number=following), 303)
    page = render_template(
        "quiz/question.html",
        attempt=attempt,
        quiz=quiz,
        number=number,
        question=question,
        choices=choices,
        answered=len(so_far.feedback),
        next_number=so_far.next_number,
        feedback=so_far.feedback.get(question.id) if state.feedback_shown else None,
        saved=kind.describe(question, answer.response) if answer else None,
        verb=kind.verb,
        state=state,
        form=form,
    )
    return page, (_status(form) if form else 200)


def _moving(attempt: Attempt, quiz, number, question, choices, answer, state, so_far):
    """A question of an attempt whose student moves freely: answered, changed or left blank,
    flagged or not, then on to the question or summary the button pressed names."""
    if stopped := _answers_stopped(attempt):
        return _stopped(attempt, stopped)
    kind = type_of(question)
    flagged = set(attempt.flagged or ())
    if request.method == "POST":
        form = kind.answer_form(question, choices, request.accept_languages.best or "en")
        # Only an answer given is checked (CSRFProtect checked every POST): moving on without
        # one is allowed.
        if form.blank or form.validate():
            verdict = None if form.blank else kind.grade(question, form.response)
            token = attempt.token  # read before the save's commit expires it
            if not save_freely(attempt, verdict, question, flag=bool(request.form.get("flag"))):
                return _over(attempt, standing(attempt_or_404(token), quiz))
            if verdict is not None:
                flash(f"Your answer to question {number} is saved.")
            return redirect(_destination(token, number, len(quiz.questions)), 303)
        status = 400
    else:
        form = kind.saved_form(question, choices, answer.response) if answer else None
        status = 200
    page = render_template(
        "quiz/question.html",
        attempt=attempt,
        quiz=quiz,
        number=number,
        question=question,
        choices=choices,
        answered=len(so_far.feedback),
        so_far=so_far,
        flagged=flagged,
        state=state,
        form=form,
        moving=True,
    )
    return page, status


def _destination(token: str, number: int, questions: int) -> str:
    """Where a moving student's button goes: a question's number, previous, next, or the
    summary (after the last question too)."""
    go = request.form.get("go", "next")
    target = {"previous": number - 1, "next": number + 1}.get(go)
    if target is None and go.isdecimal() and go.isascii() and len(go) <= 3:
        target = int(go)
    if target is None or not 1 <= target <= questions:
        return url_for(".results", token=token)
    return url_for(".question", token=token, number=target)


def _stopped(attempt: Attempt, reason: str):
    """No form to fill in that could not be saved; an answer sent anyway is refused."""
    posted = request.method == "POST"
    page = render_template("quiz/stopped.html", attempt=attempt, reason=reason, posted=posted)
    return page, 409 if posted else 200


def _answers_stopped(attempt: Attempt) -> str | None:
    """Why an attempt takes no more answers though its time is not up: it was voided, its class
    archived, or its student taken off the roster (from what attempt_or_404 loaded, no query)."""
    if attempt.voided_at is not None:
        return "Your instructor voided this attempt, so answers are no longer saved in it."
    if attempt.class_ is not None and attempt.class_.archived_at is not None:
        return (
            f"{attempt.class_.name} has ended: its instructor archived it, so answers are no "
            "longer saved."
        )
    student = attempt.roster_student
    if student is not None and student.removed_at is not None:
        return (
            f"You are no longer on the roster of {attempt.class_.name}, so answers are no "
            "longer saved. Ask your instructor."
        )
    return None


def _over(attempt: Attempt, state: Standing):
    """The page for an answer that came too late: nothing saved, and why."""
    page = render_template("quiz/over.html", attempt=attempt, state=state, Ending=Ending)
    return page, 409


@bp.post("/attempts/<token>/finish")
def finish(token):
    """End an attempt before its time: nothing more can be answered, and it is scored on what
    was answered."""
    attempt = attempt_or_404(token)
    only_its_browser(attempt, "finish it")
    finish_attempt(attempt)
    return redirect(url_for(".results", token=token), 303)


@bp.get("/attempts/<token>/continue")
def resume(token):
    """Back to the first question this attempt has not answered, or to its results once it is
    over."""
    attempt = attempt_or_404(token)
    only_its_browser(attempt, "continue it")
    quiz = quiz_of(attempt)
    number = progress(attempt, quiz).next_number
    if number is None or standing(attempt, quiz).finished:
        return redirect(url_for(".results", token=token), 303)
    return redirect(url_for(".question", token=token, number=number), 303)


def _teaches(attempt: Attempt) -> bool:
    """Whether the logged-in instructor may see the attempt's class."""
    return (
        current_user.is_authenticated
        and attempt.class_ is not None
        and role_in(attempt.class_) is not None
    )


@bp.get("/attempts/<token>/results")
def results(token):
    """Score and review an attempt: for anyone with the link, unless its assignment holds
    feedback back, when only its own browser and its class's instructors may open it."""
    attempt = attempt_or_404(token, class_rules=True)
    say_times_for(attempt)
    quiz = quiz_of(attempt)
    state = standing(attempt, quiz)
    # Their own, in the browser that took it or wherever they signed in since, once it is over.
    is_owner = owns(attempt) or (state.finished and signed_in_as(attempt))
    as_instructor = not is_owner and not state.open_to_anyone and _teaches(attempt)
    if not (is_owner or state.open_to_anyone or as_instructor):
        page = render_template(
            "errors.html",
            code=403,
            title="This review is not open yet",
            message="It opens when the instructor releases feedback or the quiz closes.",
        )
        return page, 403
    moving = attempt.moves_freely and not state.finished
    page = render_template(
        "quiz/results.html",
        attempt=attempt,
        quiz=quiz,
        progress=progress(attempt, quiz),
        choices={question.id: shown_choices(attempt, question) for question in quiz.questions},
        is_owner=is_owner,
        state=state,
        feedback_shown=state.feedback_shown or as_instructor,
        as_instructor=as_instructor,
        Ending=Ending,
        offered=quiz.slug in current_bank().quizzes,
        retake=_retake_chance(attempt) if is_owner else None,
        moving=moving,
        flagged=set(attempt.flagged or ()) if is_owner and moving else set(),
    )
    if as_instructor or not state.open_to_anyone:
        # Held feedback, or an instructor's view of it: no browser or proxy may keep the page.
        return page, 200, {"Cache-Control": "no-store"}
    return page


@dataclass(frozen=True)
class RetakeChance:
    """Whether the class's rules let this attempt's student start another, and how many remain."""

    refusal: str | None
    allowed: int | None
    left: int | None


SIGN_IN_WITH_CODE = "sign in with code"


def _sign_in_to_retake(class_: Class) -> str:
    return (
        f"{class_.name} now signs students in with personal codes: sign in with the code from "
        "your card to start another attempt."
    )


def _retake_chance(attempt: Attempt) -> RetakeChance:
    if attempt.roster_student_id is None and attempt.class_ and attempt.class_.signs_in_by_code:
        return RetakeChance(SIGN_IN_WITH_CODE, None, None)
    slug, key = attempt.quiz_version.slug, attempt.student_key
    assignment, refusal = assignment_for(attempt.class_, slug)
    # The student's own rules: the exception loaded with the attempt, when it is the same
    # assignment's (as it almost always is).
    if assignment is not None and assignment.id == attempt.assignment_id:
        rules = policy.rules_for(assignment, attempt.accommodation)
    else:
        rules = rules_of(assignment, key)
    if assignment is not None:
        refusal = closed_to_starts(rules)
    allowed = rules.attempts_allowed
    if allowed is None:
        return RetakeChance(refusal, None, None)
    taken, unseated = used_seats(assignment.id, attempt.student_key)
    left = policy.attempts_left(len(taken) + unseated, allowed)
    return RetakeChance(refusal or (None if left else NO_ATTEMPTS_LEFT), allowed, left)


@bp.post("/attempts/<token>/retake")
@limited_start
def retake(token):
    """Start a fresh attempt at the current version of the same quiz, under the same name."""
    attempt = attempt_or_404(token, class_rules=True)
    if not (owns(attempt) or signed_in_as(attempt)):
        audit("access denied")
        abort(403, description="Only the browser that took this attempt can retake it.")
    if attempt.class_ and attempt.class_.archived_at is not None:
        abort(403, description="Your class has ended, so no new attempts can start.")
    if attempt.class_ and not attempt.class_.is_open:
        abort(403, description="Your class is closed, so no new attempts can start.")
    student = attempt.roster_student
    if student is not None and student.removed_at is not None:
        abort(403, description="You are no longer on your class's roster. Ask your instructor.")
    if student is None and attempt.class_ and attempt.class_.signs_in_by_code:
        abort(403, description=_sign_in_to_retake(attempt.class_))
    quiz = quiz_or_404(attempt.quiz_version.slug)
    if attempt.class_ is None and answers_held_back(quiz.slug):
        abort(403, description=f"{NEEDS_CLASS_CODE} Start it again with the code from your class.")
    return start_in_class(quiz, attempt.class_, attempt.student_name, roster_student=student)
