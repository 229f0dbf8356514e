"""The students' side of a roster: a personal link or a typed code, a check of who they are,
then their class's quiz."""

from flask import Blueprint, abort, redirect, render_template, request, url_for
from flask_wtf import FlaskForm
from wtforms import HiddenField, RadioField, SelectChoice, StringField, SubmitField
from wtforms.validators import InputRequired

from ..attempts import policy
from ..attempts.browser import sign_in_as, this_browser
from ..attempts.policy import Window
from ..attempts.service import (
    attempts_of_student,
    exceptions_of_student,
    move_to_browser,
    new_attempt_shows,
    seats_by_assignment,
)

# The start form's own limits: starting by code is starting, and counts so.
from ..attempts.starts import (
    find_class,
    limited_signed_in_start,
    offered_quizzes,
    start_in_class,
    unfinished_in_browser,
)
from ..bank import Quiz
from ..formatting import say_times_for
from ..models import Class, RosterStudent, now
from ..names import tidy
from ..ratelimits import charges_code_lookups, note_code
from .store import find_student

bp = Blueprint("roster", __name__)


class CodeForm(FlaskForm):
    """The sign-in code typed from a card; a GET form, so it needs no CSRF token."""

    class Meta:
        csrf = False

    code = StringField("Your sign-in code", filters=[tidy])
    submit = SubmitField("Continue")


class ConfirmForm(FlaskForm):
    """ "I am Dana Diaz": the student confirms who they are, and picks one of several quizzes."""

    quiz = RadioField("Quiz", validators=[InputRequired("Choose a quiz.")])
    submit = SubmitField()

    def __init__(self, name: str, quizzes: list, **kwargs):
        super().__init__(**kwargs)
        self.quiz.choices = [SelectChoice(quiz.slug, quiz.title) for quiz in quizzes]
        if len(quizzes) == 1:
            self.quiz.data = quizzes[0].slug
        self.submit.label.text = f"I am {name}"


class ContinueForm(FlaskForm):
    """ "Continue your attempt" on this browser: one of the student's own unfinished attempts."""

    attempt = HiddenField()
    submit = SubmitField("Continue your attempt")


def _own_rules(student: RosterStudent) -> dict[str, tuple[int, policy.Rules]]:
    """Each assignment of the student's class by quiz, with the rules in force for them, their
    exceptions included: one query for those."""
    assignments = student.class_.assignments
    exceptions = exceptions_of_student(student.student_key, [a.id for a in assignments])
    return {a.quiz_slug: (a.id, policy.rules_for(a, exceptions.get(a.id))) for a in assignments}


def _rules_said(class_: Class, startable: list[Quiz]) -> dict[str, tuple]:
    """For each quiz the student may start under an assignment: the assignment, when its
    feedback would show for an attempt started now, and when held feedback opens."""
    assigned = {a.quiz_slug: a for a in class_.current_assignments}
    return {
        quiz.slug: (assignment, *new_attempt_shows(quiz.slug, assignment))
        for quiz in startable
        if (assignment := assigned.get(quiz.slug)) is not None
    }


def _used_up(student: RosterStudent, quizzes: list[Quiz], rules: dict) -> list[Quiz]:
    """The quizzes at which the student has used every attempt their rules allow."""
    limited = {
        slug: (id_, allowed)
        for slug, (id_, own) in rules.items()
        if (allowed := own.attempts_allowed)
    }
    if not limited:
        return []
    seats = seats_by_assignment(student.student_key, [id_ for id_, _ in limited.values()])
    return [
        quiz
        for quiz in quizzes
        if quiz.slug in limited
        and policy.free_seat(*seats[limited[quiz.slug][0]], limited[quiz.slug][1]) is None
    ]


def _closed(class_: Class) -> str | None:
    """Why no attempt can start in the class now, if none can."""
    if class_.archived_at is not None:
        return f"{class_.name} is archived, so no new attempts can start."
    if not class_.is_open:
        return f"{class_.name} is closed, so no new attempts can start. Ask your instructor."
    return None


def _student_with(code: str) -> RosterStudent | None:
    """find_student, counted against guessing as class codes are (charges_code_lookups)."""
    found = find_student(code)
    note_code(found)
    return found


@bp.get("/s")
@charges_code_lookups
def sign_in():
    """Type the code from your card; the personal link leads to the same place."""
    form = CodeForm(request.args)
    class_ = find_class(request.args["class"]) if request.args.get("class") else None
    if form.code.data:
        student = _student_with(form.code.data)
        if student is not None:
            return redirect(url_for(".personal", code=student.sign_in_code), 303)
        form.code.errors = [
            f"No student has the code “{form.code.data}”. Check it against your card, or ask "
            "your instructor."
        ]
    page = render_template("roster/sign_in.html", form=form, class_=class_)
    return page, 400 if form.code.errors else 200


@bp.route("/s/<code>", methods=["GET", "POST"])
@charges_code_lookups
@limited_signed_in_start
def personal(code):
    """A student's personal link: their name and class to confirm, then their quiz."""
    student = _student_with(code)
    if student is None:
        abort(404, description="No student has this sign-in link. Check it with your instructor.")
    class_ = student.class_
    quizzes = offered_quizzes(class_)
    # Found by the student, not the browser: a new phone or cleared cookies lose no attempt.
    own, done = attempts_of_student(student.id, quizzes)
    if request.method == "POST" and "continue-attempt" in request.form:
        going = ContinueForm(prefix="continue")
        if going.validate_on_submit() and going.attempt.data in {row.token for row in own}:
            move_to_browser(going.attempt.data, student.id, this_browser())
            sign_in_as(student)
            return redirect(url_for("quiz.resume", token=going.attempt.data), 303)
        abort(409, description="This attempt is over, so it cannot be continued. Reload the page.")
    if request.method == "POST" and "results-attempt" in request.form:
        reading = ContinueForm(prefix="results")
        if reading.validate_on_submit() and reading.attempt.data in {row.token for row in done}:
            sign_in_as(student)
            return redirect(url_for("quiz.results", token=reading.attempt.data), 303)
        abort(404, description="This attempt is not one of yours. Reload the page.")
    rules = _own_rules(student)
    used_up = _used_up(student, quizzes, rules)
    # Closed or not yet open: said before any "I am …", which could only lead to a refusal.
    moment = now()
    current = {a.quiz_slug for a in class_.current_assignments}
    shut = {
        quiz.slug: window.value
        for quiz in quizzes
        if quiz.slug in current and (window := rules[quiz.slug][1].window(moment)) != Window.OPEN
    }
    startable = [quiz for quiz in quizzes if quiz not in used_up and quiz.slug not in shut]
    form = ConfirmForm(student.name, startable)
    closed = _closed(class_)
    if request.method == "POST" and closed:
        abort(403, description=closed)
    if form.validate_on_submit():
        quiz = next(quiz for quiz in startable if quiz.slug == form.quiz.data)
        return start_in_class(quiz, class_, student.name, roster_student=student)
    tokens = {row.token for row in own}
    say_times_for(class_)
    page = render_template(
        "roster/confirm.html",
        student=student,
        class_=class_,
        form=form,
        quizzes=quizzes,
        startable=startable,
        # An unfinished attempt is theirs to continue: not a used-up quiz to tell them about.
        used_up=[quiz for quiz in used_up if quiz.slug not in {row.slug for row in own}],
        closed=closed,
        own=own,
        continuing=ContinueForm(prefix="continue"),
        done=done,
        reading=ContinueForm(prefix="results"),
        shut=shut,
        rules={slug: own for slug, (_, own) in rules.items()},
        said=_rules_said(class_, startable),
        unfinished=[row for row in unfinished_in_browser(quizzes) if row.token not in tokens],
    )
    return page, 400 if form.errors else 200
