"""Exceptions to an assignment's rules for some students (Moodle's user overrides): more time,
or a share more of it, more attempts, a later close, an earlier open. Each is decided with the
student's other rules in one place (attempts/policy.py, rules_for); here they are written."""

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from flask import abort, redirect, render_template, url_for
from flask_login import current_user
from flask_wtf import FlaskForm
from sqlalchemy.exc import IntegrityError
from wtforms import SelectChoice, SelectField, SelectMultipleField, StringField, SubmitField
from wtforms.validators import ValidationError
from wtforms.widgets import CheckboxInput, ListWidget

from .. import zones
from ..attempts import policy
from ..audit import audit
from ..extensions import db
from ..formatting import page_zone
from ..models import Accommodation, Assignment, Attempt, Class, RosterStudent, now
from .assignments import (
    MOST_ATTEMPTS,
    MOST_MINUTES,
    LocalTime,
    WholeNumber,
    ZoneSelect,
    _assignment_or_404,
    _keep_time_zone,
    _on_clock,
    quiz_title,
)
from .blueprint import bp

MOST_FACTOR = 10
"""The most a time limit may be multiplied by: ten times as long."""


@dataclass(frozen=True)
class Said:
    """An exception's rules as plain values, dates in UTC; None keeps the assignment's."""

    time_limit_minutes: int | None = None
    time_factor: float | None = None
    attempts_allowed: int | None = None
    opens_at: datetime | None = None
    closes_at: datetime | None = None


def students_of(class_: Class) -> list[SelectChoice]:
    """Whom a class may grant an exception: its roster, then the typed names it has seen."""
    roster = db.session.scalars(
        db.select(RosterStudent)
        .where(RosterStudent.class_id == class_.id, RosterStudent.removed_at.is_(None))
        .order_by(RosterStudent.name)
    )
    typed = db.session.execute(
        db.select(Attempt.student_key, db.func.min(Attempt.student_name))
        .where(Attempt.class_id == class_.id, Attempt.roster_student_id.is_(None))
        .group_by(Attempt.student_key)
        .order_by(db.func.min(Attempt.student_name))
    )
    return [SelectChoice(student.student_key, student.name) for student in roster] + [
        SelectChoice(key, name) for key, name in typed
    ]


def save_exception(assignment: Assignment, students: dict[str, str], said: Said) -> None:
    """Give each student (key: name) these rules under the assignment, in place of any they
    had: one row each, which a save racing for the same student updates rather than doubles."""
    values = vars(said) | {"ends_at": policy.exception_ends(assignment, said), "updated_at": now()}
    for key, name in students.items():
        change = (
            db.update(Accommodation)
            .where(Accommodation.assignment_id == assignment.id, Accommodation.student_key == key)
            .values(student_name=name, **values)
        )
        if db.session.execute(change).rowcount == 0:
            db.session.add(Accommodation(assignment_id=assignment.id, student_key=key,
                                         student_name=name, **values))  # fmt: skip
            try:
                db.session.flush()
            except IntegrityError:  # another save inserted this student first: change theirs
                db.session.rollback()
                if db.session.execute(change).rowcount == 0:
                    raise
        _lengthen_running(assignment, key, policy.rules_for(assignment, said).time_limit_minutes)
        db.session.commit()


def _lengthen_running(assignment: Assignment, key: str, limit: int | None) -> None:
    """Give an attempt the student has under way the longer time granted, as if it had been
    theirs at the start; a shorter one never cuts an attempt short."""
    if not limit:
        return
    running = db.session.scalars(
        db.select(Attempt).where(
            Attempt.assignment_id == assignment.id, Attempt.student_key == key,
            Attempt.finished_at.is_(None), Attempt.voided_at.is_(None),
            Attempt.ends_at.is_not(None),
        )
    )  # fmt: skip
    for attempt in running:
        longer = zones.utc(attempt.started_at) + timedelta(minutes=limit)
        if longer > zones.utc(attempt.ends_at):
            attempt.ends_at = longer


def in_words(row: Accommodation) -> str:
    """What an exception grants, as the class page lists it: "45 minutes, 3 attempts"."""
    parts = []
    if row.time_limit_minutes:
        parts.append(f"{row.time_limit_minutes} minute{'s' if row.time_limit_minutes != 1 else ''}")
    if row.time_factor:
        parts.append(f"×{row.time_factor:g} the time")
    if row.attempts_allowed:
        parts.append(f"{row.attempts_allowed} attempt{'s' if row.attempts_allowed != 1 else ''}")
    return ", ".join(parts)


class Factor(StringField):
    """A multiple of the time limit as instructors write it: 1.5, ×1.5, 1,5 or 1.5x."""

    def process_formdata(self, valuelist):
        self.data = None
        written = (valuelist[0] if valuelist else "").strip()
        if not written:
            return
        self.raw = written
        number = re.fullmatch(r"[×xX*]?\s*(\d{1,2}(?:[.,]\d{1,3})?)\s*[×xX]?", written)
        if number is None:
            raise ValueError("Enter how many times as long, like 1.5 or ×2, or leave it empty.")
        self.data = float(number[1].replace(",", "."))

    def _value(self):
        return getattr(self, "raw", "") or (f"{self.data:g}" if self.data else "")


class ExceptionForm(FlaskForm):
    """An exception for one or more students; every problem is reported at once, by field."""

    students = SelectMultipleField(
        "Students", validate_choice=False, widget=ListWidget(prefix_label=False),
        option_widget=CheckboxInput(),
    )  # fmt: skip
    time_zone = SelectField("Time zone", validate_choice=False, widget=ZoneSelect())
    time_limit = WholeNumber("Time limit (minutes)", "minutes", most=MOST_MINUTES)
    time_factor = Factor("Or times the assignment's time limit")
    attempts_allowed = WholeNumber("Attempts allowed", "attempts", most=MOST_ATTEMPTS)
    opens = LocalTime("Opens earlier, at")
    closes = LocalTime("Closes later, at")
    submit = SubmitField("Save exception")

    def __init__(self, assignment: Assignment, editing: Accommodation | None = None, **kwargs):
        super().__init__(**kwargs)
        self.assignment, self.editing = assignment, editing
        self.time_zone.browser_default = False
        self.students.choices = students_of(assignment.class_)

    def validate_students(self, field):
        if self.editing is not None:
            return  # an exception keeps its student
        known = {choice.value: choice.label for choice in field.choices}
        if not field.data or not set(field.data) <= set(known):
            raise ValidationError("Choose at least one student of the class.")
        excepted = db.session.scalars(
            db.select(Accommodation.student_key).where(
                Accommodation.assignment_id == self.assignment.id,
                Accommodation.student_key.in_(field.data),
            )
        ).all()
        if excepted:  # adding would replace what they have: say so rather than lose it
            names = ", ".join(sorted(known[key] for key in excepted))
            has = "has" if len(excepted) == 1 else "have"
            raise ValidationError(
                f"{names} already {has} an exception here: change it from the class page instead."
            )

    def validate_time_zone(self, field):
        if field.data not in zones.known_zones():
            raise ValidationError("Choose a time zone from the list.")

    def validate_time_limit(self, field):
        if field.data and self.time_factor.data:
            raise ValidationError("Give a time limit or a multiple of it, not both.")
        limit = self.assignment.time_limit_minutes
        if field.data and not limit:
            raise ValidationError("The assignment has no time limit: there is no more to give.")
        if field.data and field.data <= limit:
            raise ValidationError(f"The assignment gives {limit} minutes: give more, or leave "
                                  "it empty.")  # fmt: skip

    def validate_time_factor(self, field):
        if field.data is None:
            return
        if not self.assignment.time_limit_minutes:
            raise ValidationError("The assignment has no time limit to multiply: give minutes.")
        if not 1 < field.data <= MOST_FACTOR:
            raise ValidationError(f"Enter a multiple above 1 and at most {MOST_FACTOR}.")

    def validate_attempts_allowed(self, field):
        allowed = self.assignment.attempts_allowed
        if field.data is None:
            return
        if allowed is None:
            raise ValidationError("The assignment allows as many attempts as a student likes.")
        if field.data <= allowed:
            raise ValidationError(f"The assignment allows {allowed}: give more, or leave it empty.")

    def validate_opens(self, field):
        opens = self._utc(field)
        if opens is None:
            return
        if self.assignment.opens_at is None:
            raise ValidationError("The assignment opens at once: there is no earlier opening.")
        if opens >= zones.utc(self.assignment.opens_at):
            raise ValidationError("Give a moment before the assignment opens.")

    def validate_closes(self, field):
        closes = self._utc(field)
        if closes is None:
            return
        if self.assignment.closes_at is None:
            raise ValidationError("The assignment never closes: there is no later close.")
        if closes <= zones.utc(self.assignment.closes_at):
            raise ValidationError("Give a moment after the assignment closes.")

    def validate(self, extra_validators=None) -> bool:
        valid = super().validate(extra_validators)
        said = [self.time_limit, self.time_factor, self.attempts_allowed, self.opens, self.closes]
        if valid and all(field.data is None for field in said):
            self.time_limit.errors.append(
                "Give at least one exception: time, attempts, an earlier opening or a later close."
            )
            return False
        return valid

    def _utc(self, field) -> datetime | None:
        if field.data is None or self.time_zone.data not in zones.known_zones():
            return None
        try:
            return zones.local_to_utc(field.data, self.time_zone.data)
        except zones.NoSuchLocalTime as error:
            raise ValidationError(
                f"The clocks skip this time in {self.time_zone.data}: choose another."
            ) from error

    def said(self) -> Said:
        return Said(
            time_limit_minutes=self.time_limit.data,
            time_factor=self.time_factor.data,
            attempts_allowed=self.attempts_allowed.data,
            opens_at=self._utc(self.opens),
            closes_at=self._utc(self.closes),
        )


def _exception_or_404(assignment: Assignment, exception_id: int) -> Accommodation:
    found = db.session.get(Accommodation, exception_id)
    if found is None or found.assignment_id != assignment.id:
        abort(404, description="This assignment has no such exception.")
    return found


def _form_page(class_: Class, assignment: Assignment, form: ExceptionForm):
    page = render_template(
        "teach/exception.html", class_=class_, assignment=assignment, form=form,
        quiz_title=quiz_title(assignment.quiz_slug),
    )  # fmt: skip
    return page, 400 if form.errors else 200


def _back(class_: Class, assignment: Assignment):
    return redirect(
        url_for(".class_page", class_id=class_.id, quiz=assignment.quiz_slug,
                _anchor=f"assignment-{assignment.id}"), 303,
    )  # fmt: skip


@bp.route(
    "/classes/<int:class_id>/assignments/<int:assignment_id>/exceptions/new",
    methods=["GET", "POST"],
)
def new_exception(class_id, assignment_id):
    """Grant one or more students an exception to the assignment's rules."""
    class_, assignment = _assignment_or_404(class_id, assignment_id)
    form = ExceptionForm(assignment, time_zone=page_zone())
    if form.validate_on_submit():
        _keep_time_zone(current_user, form.time_zone.data)
        names = {choice.value: choice.label for choice in form.students.choices}
        chosen = {key: names[key] for key in form.students.data}
        save_exception(assignment, chosen, form.said())
        audit(f"exception granted: class {class_.id}, quiz {assignment.quiz_slug}, "
              f"{len(chosen)} students")  # fmt: skip
        return _back(class_, assignment)
    return _form_page(class_, assignment, form)


@bp.route(
    "/classes/<int:class_id>/assignments/<int:assignment_id>/exceptions/<int:exception_id>",
    methods=["GET", "POST"],
)
def edit_exception(class_id, assignment_id, exception_id):
    """An exception, filled in for changing."""
    class_, assignment = _assignment_or_404(class_id, assignment_id)
    exception = _exception_or_404(assignment, exception_id)
    zone = page_zone()
    form = ExceptionForm(
        assignment, exception, time_zone=zone, time_limit=exception.time_limit_minutes,
        time_factor=exception.time_factor, attempts_allowed=exception.attempts_allowed,
        opens=_on_clock(exception.opens_at, zone), closes=_on_clock(exception.closes_at, zone),
    )  # fmt: skip
    if form.validate_on_submit():
        _keep_time_zone(current_user, form.time_zone.data)
        save_exception(assignment, {exception.student_key: exception.student_name}, form.said())
        audit(f"exception changed: class {class_.id}, quiz {assignment.quiz_slug}, "
              f"exception {exception.id}")  # fmt: skip
        return _back(class_, assignment)
    return _form_page(class_, assignment, form)


@bp.post(
    "/classes/<int:class_id>/assignments/<int:assignment_id>/exceptions/<int:exception_id>/remove"
)
def remove_exception(class_id, assignment_id, exception_id):
    """End an exception: the student is under the assignment's own rules again."""
    class_, assignment = _assignment_or_404(class_id, assignment_id)
    exception = _exception_or_404(assignment, exception_id)
    db.session.execute(db.delete(Accommodation).where(Accommodation.id == exception.id))
    db.session.commit()
    audit(f"exception removed: class {class_.id}, quiz {assignment.quiz_slug}, "
          f"exception {exception_id}")  # fmt: skip
    return _back(class_, assignment)
