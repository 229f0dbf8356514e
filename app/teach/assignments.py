"""Assignments: a class sets quizzes with a window, a time limit, a number of attempts, which
attempt is graded and when feedback shows."""

from dataclasses import dataclass
from datetime import datetime

from flask import abort, redirect, render_template, url_for
from flask_login import current_user
from flask_wtf import FlaskForm
from markupsafe import Markup
from sqlalchemy.exc import IntegrityError
from wtforms import (
    DateTimeLocalField,
    IntegerField,
    RadioField,
    SelectChoice,
    SelectField,
    SubmitField,
)
from wtforms.validators import NumberRange, Optional, ValidationError
from wtforms.widgets import Select, html_params

from .. import zones
from ..attempts import policy
from ..attempts.service import holds_key
from ..audit import audit
from ..auth import class_or_404
from ..authoring import usable_slugs
from ..extensions import db
from ..formatting import page_zone, zone_chosen
from ..models import Accommodation, Assignment, Class, FeedbackWhen, Instructor, Role, now
from ..reports import Counting, class_roster
from ..served import current_bank
from .blueprint import bp

MOST_MINUTES = 1440
MOST_ATTEMPTS = 100

GRADE_FROM = {
    Counting.FIRST: "First attempt",
    Counting.BEST: "Best attempt",
    Counting.LATEST: "Latest attempt",
    Counting.ALL: "Average of attempts",
}
FEEDBACK = {
    FeedbackWhen.EACH_ANSWER: "After each answer",
    FeedbackWhen.AFTER_ATTEMPT: "After the attempt",
    FeedbackWhen.AFTER_CLOSE: "After the quiz closes",
}


class ZoneSelect(Select):
    """The zones grouped by area, each option its place's name ("Argentina, Buenos Aires")."""

    def __call__(self, field, **kwargs):
        kwargs.setdefault("id", field.id)
        if field.browser_default and not field.raw_data and not zone_chosen():
            # A new assignment, its dates still to type, whose zone nobody chose: the script
            # picks the browser's. Never on an edit, whose dates are filled in on this zone.
            kwargs["data-browser-default"] = True
        groups = [("Universal", [("UTC", "UTC")]), *zones.zone_groups()]
        return Markup("<select {}>{}</select>").format(
            html_params(name=field.name, **kwargs),
            Markup("").join(
                Markup('<optgroup label="{}">{}</optgroup>').format(
                    area,
                    Markup("").join(_option(zone, place, field.data) for zone, place in places),
                )
                for area, places in groups
            ),
        )


def _option(zone: str, place: str, chosen: str | None) -> Markup:
    selected = Markup(" selected") if zone == chosen else ""
    return Markup('<option{} value="{}">{}</option>').format(selected, zone, place)


class WholeNumber(IntegerField):
    """An optional whole number whose refusal names what it counts."""

    def __init__(self, label, unit, *, most, **kwargs):
        self.unit = unit
        message = f"Enter a whole number of {unit} from 1 to {most}, or leave it empty."
        super().__init__(label, validators=[Optional(), NumberRange(1, most, message)], **kwargs)

    def process_formdata(self, valuelist):
        try:
            super().process_formdata(valuelist)
        except ValueError as error:
            raise ValueError(f"Enter a whole number of {self.unit}, or leave it empty.") from error


class LocalTime(DateTimeLocalField):
    """A date and time on the instructor's clock, as a phone's or desktop's picker sends it."""

    def __init__(self, label, **kwargs):
        formats = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"]
        super().__init__(label, format=formats, validators=[Optional()], **kwargs)

    def process_formdata(self, valuelist):
        try:
            super().process_formdata(valuelist)
        except ValueError as error:
            raise ValueError("Enter a date and time, like 2026-12-07 09:00.") from error


class AssignmentForm(FlaskForm):
    """The settings of one assignment; all its problems are reported at once, by field."""

    quiz = SelectField("Quiz", validate_choice=False)
    opens = LocalTime("Opens")
    closes = LocalTime("Closes")
    time_zone = SelectField("Time zone", validate_choice=False, widget=ZoneSelect())
    time_limit = WholeNumber("Time limit (minutes)", "minutes", most=MOST_MINUTES)
    attempts_allowed = WholeNumber("Attempts allowed", "attempts", most=MOST_ATTEMPTS)
    grade_from = RadioField(
        "Grade from",
        choices=[SelectChoice(value, label) for value, label in GRADE_FROM.items()],
        default=Counting.FIRST.value,
        validate_choice=False,
    )
    feedback = RadioField(
        "Feedback",
        choices=[SelectChoice(value, label) for value, label in FEEDBACK.items()],
        default=FeedbackWhen.EACH_ANSWER.value,
        validate_choice=False,
    )
    submit = SubmitField("Save assignment")

    def __init__(self, class_: Class, editing: Assignment | None = None, **kwargs):
        super().__init__(**kwargs)
        self.class_ = class_
        self.editing = editing
        self.time_zone.browser_default = editing is None
        # The quizzes on offer that the instructor may use: theirs, shared with them, the site's.
        self.usable = usable_slugs() if editing is None else set()
        self.quiz.choices = [
            SelectChoice(quiz.slug, quiz.title)
            for quiz in current_bank().quizzes.values()
            if quiz.slug in self.usable
        ]

    def validate_quiz(self, field):
        if self.editing is not None:
            return  # an assignment keeps its quiz: its attempts were taken at it
        if field.data not in current_bank().quizzes or field.data not in self.usable:
            raise ValidationError("Choose one of the quizzes on offer.")
        if any(assigned.quiz_slug == field.data for assigned in self.class_.current_assignments):
            raise ValidationError(
                f"{self.class_.name} assigns this quiz already: edit that assignment instead."
            )

    def validate_time_zone(self, field):
        if field.data not in zones.known_zones():
            raise ValidationError("Choose a time zone from the list.")

    def validate_opens(self, field):
        self._on_the_clock(field)

    def validate_closes(self, field):
        self._on_the_clock(field)
        opens = self.opens.data
        if field.data is not None and opens is not None and field.data <= opens:
            raise ValidationError("Closes must be after Opens.")

    def _on_the_clock(self, field):
        if field.data is None or self.time_zone.data not in zones.known_zones():
            return
        try:
            zones.local_to_utc(field.data, self.time_zone.data)
        except zones.NoSuchLocalTime as error:
            raise ValidationError(
                f"The clocks skip this time in {self.time_zone.data}: choose another."
            ) from error

    def validate_grade_from(self, field):
        if field.data not in GRADE_FROM:
            raise ValidationError("Choose which attempt the gradebook uses.")

    def validate_feedback(self, field):
        if field.data not in FEEDBACK:
            raise ValidationError("Choose when students see feedback.")

    def settings(self) -> "Settings":
        """The validated settings, dates in UTC."""
        zone = self.time_zone.data

        def utc(wall: datetime | None) -> datetime | None:
            return None if wall is None else zones.local_to_utc(wall, zone)

        return Settings(
            opens_at=utc(self.opens.data),
            closes_at=utc(self.closes.data),
            time_limit_minutes=self.time_limit.data,
            attempts_allowed=self.attempts_allowed.data,
            grade_from=Counting(self.grade_from.data),
            feedback=FeedbackWhen(self.feedback.data),
        )


@dataclass(frozen=True)
class Settings:
    """An assignment's rules as plain values, dates in UTC."""

    opens_at: datetime | None = None
    closes_at: datetime | None = None
    time_limit_minutes: int | None = None
    attempts_allowed: int | None = None
    grade_from: Counting = Counting.FIRST
    feedback: FeedbackWhen = FeedbackWhen.EACH_ANSWER


class AlreadyAssigned(Exception):
    """The class assigns this quiz already: another save won the race."""


def save_assignment(
    class_: Class, slug: str, settings: Settings, editing: Assignment | None = None
) -> Assignment:
    """Store a new assignment of a quiz to a class, or new settings for an existing one; a quiz
    whose assignment was removed gets that one back with the new settings, so that its attempts
    still count against "Attempts allowed"."""
    values = {
        "opens_at": settings.opens_at,
        "closes_at": settings.closes_at,
        "time_limit_minutes": settings.time_limit_minutes,
        "attempts_allowed": settings.attempts_allowed,
        "grade_from": Counting(settings.grade_from).value,
        "feedback": FeedbackWhen(settings.feedback).value,
    }
    if editing is None:
        # One conditional statement: of two saves racing to revive it, one does, and the
        # other finds the quiz assigned. Its old release was for the old settings.
        revived = db.session.execute(
            db.update(Assignment)
            .where(
                Assignment.class_id == class_.id,
                Assignment.quiz_slug == slug,
                Assignment.removed_at.is_not(None),
            )
            .values(removed_at=None, feedback_released_at=None, **values)
        )
        if revived.rowcount:
            db.session.commit()
            kept = db.session.scalars(
                db.select(Assignment).filter_by(class_id=class_.id, quiz_slug=slug)
            ).one()
            refresh_ends(kept)
            return kept
    assignment = editing or Assignment(class_id=class_.id, quiz_slug=slug)
    for name, value in values.items():
        setattr(assignment, name, value)
    db.session.add(assignment)
    try:
        db.session.commit()
    except IntegrityError as error:
        db.session.rollback()
        raise AlreadyAssigned(slug) from error
    refresh_ends(assignment)
    return assignment


def refresh_ends(assignment: Assignment) -> None:
    """When each exception to its rules ends, again, after its close or time limit changed."""
    for row in db.session.scalars(db.select(Accommodation).filter_by(assignment_id=assignment.id)):
        row.ends_at = policy.exception_ends(assignment, row)
    db.session.commit()


def _assignment_or_404(
    class_id: int, assignment_id: int, removed_ok: bool = False
) -> tuple[Class, Assignment]:
    class_ = class_or_404(class_id, Role.MANAGE)
    found = db.session.get(Assignment, assignment_id)
    if found is None or found.class_id != class_.id:
        abort(404, description="This class has no such assignment.")
    if found.removed_at is not None and not removed_ok:
        abort(404, description="This assignment was removed: assign the quiz again to change it.")
    return class_, found


def _to_class(class_: Class, slug: str | None = None):
    return redirect(url_for(".class_page", class_id=class_.id, quiz=slug), 303)


def _form_page(class_: Class, form: AssignmentForm, editing: Assignment | None):
    title = quiz_title(editing.quiz_slug) if editing else None
    page = render_template(
        "teach/assignment.html", class_=class_, form=form, editing=editing, quiz_title=title
    )
    return page, 400 if form.errors else 200


def quiz_title(slug: str) -> str:
    """A quiz's title, offered or retired; its slug if the bank has forgotten it."""
    bank = current_bank()
    found = bank.quizzes.get(slug) or bank.retired.get(slug)
    return found.title if found else slug


@dataclass(frozen=True)
class Listed:
    """An assignment as the class page lists it."""

    assignment: Assignment
    title: str
    window: policy.Window
    held: bool
    """Whether its feedback waits for the close or "Release feedback", and neither came yet."""
    feedback_opens_at: datetime | None
    """When feedback after the close opens for everyone: once the last attempt's time is up."""
    exceptions: list[Accommodation]
    """The students whose rules differ, by name."""

    @property
    def grade_from(self) -> str:
        return GRADE_FROM[Counting(self.assignment.grade_from)]

    @property
    def feedback(self) -> str:
        return FEEDBACK[FeedbackWhen(self.assignment.feedback)]


def listing(class_: Class) -> list[Listed]:
    """The class's assignments with their quizzes' titles and where they stand now; removed
    ones only while they hold feedback back, so that it can still be released."""
    moment = now()
    found = []
    granted: dict[int, list[Accommodation]] = {}
    excepted = [assignment.id for assignment in class_.assignments if assignment.has_exceptions]
    for exception in db.session.scalars(
        db.select(Accommodation)
        .where(Accommodation.assignment_id.in_(excepted))
        .order_by(Accommodation.student_name)
    ) if excepted else ():
        granted.setdefault(exception.assignment_id, []).append(exception)
    for assignment in class_.assignments:
        rules = policy.rules_for(assignment)
        window = rules.window(moment)
        # Feedback that waits holds the quiz's key from every other class, with no close to end
        # it for an exam without one, as do exam attempts still open under a rule since changed:
        # "Release feedback" lets it go (each student of this class still sees theirs at their
        # own finish).
        held = holds_key(assignment, moment)
        opens_at = rules.feedback_opens_at
        # A removed one stays listed only while its attempts' feedback waits for a release.
        if assignment.removed_at is None or held:
            found.append(
                Listed(assignment, quiz_title(assignment.quiz_slug), window, held, opens_at,
                       granted.get(assignment.id, []))
            )  # fmt: skip
    return found


def _keep_time_zone(instructor: Instructor, zone: str) -> None:
    """Dates are typed in the instructor's zone: the one chosen last is offered next time."""
    instructor.time_zone = zone
    instructor.time_zone_chosen = True


@bp.route("/classes/<int:class_id>/assignments/new", methods=["GET", "POST"])
def assign(class_id):
    """The "Assign a quiz" form, and saving it."""
    class_ = class_or_404(class_id, Role.MANAGE)
    form = AssignmentForm(class_, time_zone=page_zone())
    if form.validate_on_submit():
        _keep_time_zone(current_user, form.time_zone.data)
        try:
            saved = save_assignment(class_, form.quiz.data, form.settings())
        except AlreadyAssigned:
            form.quiz.errors.append(
                f"{class_.name} assigns this quiz already: edit that assignment instead."
            )
        else:
            audit(f"assignment added: class {class_.id}, quiz {saved.quiz_slug}")
            return _to_class(class_, saved.quiz_slug)
    return _form_page(class_, form, None)


@bp.route("/classes/<int:class_id>/assignments/<int:assignment_id>", methods=["GET", "POST"])
def edit_assignment(class_id, assignment_id):
    """An assignment's settings, filled in for changing."""
    class_, assignment = _assignment_or_404(class_id, assignment_id)
    zone = page_zone()
    form = AssignmentForm(
        class_,
        assignment,
        quiz=assignment.quiz_slug,
        time_zone=zone,
        opens=_on_clock(assignment.opens_at, zone),
        closes=_on_clock(assignment.closes_at, zone),
        time_limit=assignment.time_limit_minutes,
        attempts_allowed=assignment.attempts_allowed,
        grade_from=assignment.grade_from,
        feedback=assignment.feedback,
    )
    if form.validate_on_submit():
        _keep_time_zone(current_user, form.time_zone.data)
        save_assignment(class_, assignment.quiz_slug, form.settings(), assignment)
        audit(f"assignment changed: class {class_.id}, quiz {assignment.quiz_slug}")
        return _to_class(class_, assignment.quiz_slug)
    return _form_page(class_, form, assignment)


def _on_clock(moment: datetime | None, zone: str) -> datetime | None:
    """A stored moment as the naive wall-clock time the form's picker shows."""
    return None if moment is None else zones.utc_to_local(moment, zone).replace(tzinfo=None)


@bp.post("/classes/<int:class_id>/assignments/<int:assignment_id>/remove")
def remove_assignment(class_id, assignment_id):
    """Stop assigning a quiz; the attempts taken under it stay with their scores, seats and
    feedback rule, so held feedback stays held until it is released or opens."""
    class_, assignment = _assignment_or_404(class_id, assignment_id)
    slug = assignment.quiz_slug
    db.session.execute(
        db.update(Assignment)
        .where(Assignment.id == assignment.id, Assignment.removed_at.is_(None))
        .values(removed_at=now())
    )
    db.session.commit()
    audit(f"assignment removed: class {class_.id}, quiz {slug}")
    return _to_class(class_, slug)


@bp.get("/classes/<int:class_id>/assignments/<int:assignment_id>/release")
def confirm_release(class_id, assignment_id):
    """What releasing held feedback gives away before the close, with the button that does it."""
    class_, assignment = _assignment_or_404(class_id, assignment_id)
    quiz = current_bank().quizzes.get(assignment.quiz_slug)
    roster = class_roster(quiz, class_.id, Counting.FIRST) if quiz else None
    moment = now()
    window = policy.rules_for(assignment).window(moment)
    # Those an exception lets answer after the close, who a release would show the answers to.
    answering = db.session.scalars(
        db.select(Accommodation)
        .where(Accommodation.assignment_id == assignment.id, Accommodation.ends_at > moment)
        .order_by(Accommodation.student_name)
    ).all()
    return render_template(
        "teach/release.html",
        answering=answering,
        class_=class_,
        assignment=assignment,
        quiz_title=quiz_title(assignment.quiz_slug),
        still_open=window is not policy.Window.CLOSED,
        # Each of them may still be answering while a classmate's results link shows the key.
        not_finished=sum(bool(row.unfinished) for row in roster.students) if roster else 0,
        not_started=roster.not_started if roster else 0,
    )


@bp.post("/classes/<int:class_id>/assignments/<int:assignment_id>/release")
def release_feedback(class_id, assignment_id):
    """Show held feedback now, before the quiz closes; releasing twice keeps the first moment.
    A removed assignment's attempts are released the same way."""
    class_, assignment = _assignment_or_404(class_id, assignment_id, removed_ok=True)
    db.session.execute(
        db.update(Assignment)
        .where(Assignment.id == assignment.id, Assignment.feedback_released_at.is_(None))
        .values(feedback_released_at=now())
    )
    db.session.commit()
    audit(f"feedback released: class {class_.id}, quiz {assignment.quiz_slug}")
    return _to_class(class_, assignment.quiz_slug)
