"""Starting an attempt, as every way in shares it (a typed name, a roster code, an LMS launch):
which assignment a start follows, its limits, and the page that says why none may start."""

import re
from collections.abc import Callable

from flask import redirect, render_template, request, url_for

from ..auth import usable_slugs
from ..bank import Quiz
from ..extensions import db, limiter
from ..formatting import say_times_for
from ..models import Assignment, Attempt, Class, RosterStudent, now
from ..names import student_key
from ..ratelimits import note_code
from ..served import current_bank
from . import policy
from .browser import browser_id, sign_in_as, this_browser
from .service import (
    NoAttemptsLeft,
    attempts_of_student,
    changing_elsewhere,
    rules_of,
    start_attempt,
    take_turns_starting,
    unfinished_attempts,
)

# Each start adds a student to a class, so a script must not add hundreds. A browser starts a
# few a minute at most; one address may be a whole lecture hall behind a school's NAT.
STARTS_PER_BROWSER = "10 per minute"
STARTS_PER_ADDRESS = "300 per minute"

starts_per_browser = limiter.shared_limit(
    STARTS_PER_BROWSER,
    scope="starts per browser",
    key_func=this_browser,
    methods=["POST"],
    error_message="This browser has just started many quizzes. Wait a minute, then try again: "
    "your answers so far are saved.",
)
starts_per_address = limiter.shared_limit(
    STARTS_PER_ADDRESS,
    scope="starts per address",
    methods=["POST"],
    error_message="Many quizzes have just been started from your network. Wait a minute, then "
    "try again: your answers so far are saved.",
)


def unfinished_in_browser(quizzes: list[Quiz]) -> list[Attempt]:
    """This browser's attempts still in progress; no query for a browser never seen before."""
    browser = browser_id()
    return unfinished_attempts(browser, quizzes) if browser else []


starts_per_student = limiter.shared_limit(
    STARTS_PER_BROWSER,
    scope="starts per student",
    key_func=lambda: "code " + request.view_args["code"].upper(),
    methods=["POST"],
    error_message="This sign-in code has just started many quizzes. Wait a minute, then try "
    "again: your answers so far are saved.",
)


def limited_start(view):
    """Count a view's starts per browser, then per address: checked from the bottom up, so a
    browser over its own limit then uses none of its address's."""
    return starts_per_address(starts_per_browser(view))


def limited_signed_in_start(view):
    """Count a start by personal code per browser and per code, not per address: the code
    names the student, so a lecture hall behind one address is not one crowd (guessing codes
    is charged per address by charges_code_lookups)."""
    return starts_per_student(starts_per_browser(view))


def find_class(code: str) -> Class | None:
    """The class with this join code, however it was typed (case, spaces, dashes)."""
    normal = re.sub(r"[\s-]", "", code).upper()
    found = db.session.scalar(db.select(Class).filter_by(join_code=normal))
    note_code(found)  # counted against guessing (ratelimits.UNKNOWN_CODES_PER_ADDRESS)
    return found


NEEDS_CLASS_CODE = "Enter your class code: this quiz is being taken as an assignment."
NOT_ASSIGNED = "not assigned"
NO_ATTEMPTS_LEFT = "no attempts left"
STILL_OPEN = "still open"


def opening_refusal(class_: Class, slug: str) -> str | None:
    """ "closed" or "not yet open" when the class's assignment of this quiz takes no start now."""
    refusal = assignment_for(class_, slug)[1]
    return refusal if refusal in ("closed", "not yet open") else None


def assignment_for(
    class_: Class | None, slug: str, key: str | None = None
) -> tuple[Assignment | None, str | None]:
    """The assignment a start at this quiz in this class follows, and why none may start now:
    the class sets other quizzes, or the quiz is not open yet or closed (for the student with
    this key, when it is known: their exception may open it sooner or close it later)."""
    if class_ is None:
        return None, None
    assigned = {assignment.quiz_slug: assignment for assignment in class_.current_assignments}
    usable = () if assigned else usable_slugs(class_.instructor)
    if not policy.may_take(slug, assigned, usable):
        return None, NOT_ASSIGNED
    assignment = assigned.get(slug)
    if assignment is None:
        return None, None
    rules = policy.rules_for(assignment) if key is None else rules_of(assignment, key)
    return assignment, closed_to_starts(rules)


def closed_to_starts(rules: policy.Rules) -> str | None:
    """ "closed" or "not yet open" when these rules take no start now; None when they do."""
    window = rules.window(now())
    return None if window is policy.Window.OPEN else window.value


def refused_page(
    reason: str,
    quiz: Quiz,
    class_: Class,
    assignment: Assignment | None,
    roster_student: RosterStudent | None = None,
    key: str | None = None,
):
    """The page that says why no attempt starts, with a signed-in student's finished attempts:
    403 for a refused start, 200 for a look; in the student's own rules where their key is
    known."""
    offered = offered_quizzes(class_) if reason == NOT_ASSIGNED else []
    done = attempts_of_student(roster_student.id, [quiz])[1] if roster_student else []
    say_times_for(class_)
    key = roster_student.student_key if roster_student else key
    page = render_template(
        "quiz/unavailable.html",
        reason=reason,
        quiz=quiz,
        class_=class_,
        assignment=assignment,
        # Their own times and attempts, exception and all: nobody else's.
        rules=policy.rules_for(assignment) if key is None else rules_of(assignment, key),
        offered=offered,
        unfinished=unfinished_in_browser([quiz]),
        done=done,
    )
    return page, 403 if request.method == "POST" else 200


def start_in_class(
    quiz: Quiz,
    class_: Class | None,
    name: str,
    roster_student: RosterStudent | None = None,
    with_rows: Callable[[Attempt], None] | None = None,
):
    """Start an attempt under the class's assignment and go to its first question, or show the
    page that says why none may start now; `with_rows` as start_attempt takes it."""
    if roster_student is not None:
        sign_in_as(roster_student)
    key = roster_student.student_key if roster_student else student_key(name)
    assignment, refusal = assignment_for(class_, quiz.slug, key)
    if refusal:
        return refused_page(refusal, quiz, class_, assignment, roster_student, key)
    if assignment is not None:
        # Whether attempts move freely is the assignment's feedback rule: no exception changes it.
        if policy.rules_for(assignment).moves_freely:
            take_turns_starting(assignment)
        typed_as = roster_student.name if roster_student else None
        if changing_elsewhere(assignment, key, typed_as):
            return refused_page(STILL_OPEN, quiz, class_, assignment, roster_student, key)
    try:
        attempt = start_attempt(
            quiz,
            name,
            this_browser(),
            class_.id if class_ else None,
            assignment=assignment,
            roster_student=roster_student,
            with_rows=with_rows,
        )
    except NoAttemptsLeft:
        return refused_page(NO_ATTEMPTS_LEFT, quiz, class_, assignment, roster_student, key)
    return redirect(url_for("quiz.question", token=attempt.token, number=1), 303)


def offered_quizzes(class_: Class) -> list[Quiz]:
    """The quizzes a class's students may start: those it assigns, or the listed ones when it
    assigns none."""
    bank = current_bank()
    assigned = {assignment.quiz_slug for assignment in class_.current_assignments}
    slugs = bank.quizzes if assigned else [quiz.slug for quiz in bank.listed_quizzes()]
    return [bank.quizzes[slug] for slug in policy.offered(slugs, assigned)]
