"""The instructor's forms: each validates its own input, so views only ask whether it is valid."""

from flask import request
from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from wtforms import (
    Field,
    HiddenField,
    RadioField,
    SelectChoice,
    SelectField,
    StringField,
    SubmitField,
    TextAreaField,
)
from wtforms.validators import DataRequired, Length, ValidationError

from ..auth import find_instructor
from ..bank import current_bank
from ..forms import tidy
from ..models import Class, Role
from ..reports import Counting
from ..roster import Entry, RosterError, read_csv, read_text
from ..rules import SeenStudent


def _class_name():
    return StringField(
        "Class name",
        filters=[tidy],
        validators=[
            DataRequired("Give the class a name."),
            Length(max=100, message="Use at most 100 characters."),
        ],
    )


class ClassForm(FlaskForm):
    name = _class_name()
    submit = SubmitField("Create class")


class ReportForm(FlaskForm):
    """Which quiz and which attempts the class page counts; read from the query string."""

    class Meta:
        csrf = False

    quiz = SelectField("Quiz")
    count = SelectField(
        "Attempts that count",
        choices=[SelectChoice(counting.value, counting.label) for counting in Counting],
    )
    submit = SubmitField("Show")

    def __init__(self, assigned: dict[str, str] | None = None):
        """Without a choice in the address, the class's first assigned quiz, counted as its
        assignment grades it (`assigned`: quiz slug -> a Counting value)."""
        super().__init__(request.args)
        assigned = assigned or {}
        bank = current_bank()
        # Quizzes taken out of the bank keep their reports, listed after the ones on offer.
        offered = [SelectChoice(quiz.slug, quiz.title) for quiz in bank.quizzes.values()]
        retired = [
            SelectChoice(quiz.slug, f"{quiz.title} (no longer offered)")
            for quiz in bank.retired.values()
        ]
        self.quiz.choices = offered + retired
        known = [choice.value for choice in self.quiz.choices]
        first = next((slug for slug in assigned if slug in known), known[0])
        self.quiz.data = self.quiz.data or first
        self.count.data = self.count.data or assigned.get(self.quiz.data, Counting.FIRST.value)


# Managing a class. Each form posts to its own address, so field names differ between them.


class RenameForm(FlaskForm):
    name = _class_name()
    submit = SubmitField("Rename class")


class DeleteForm(FlaskForm):
    """Deleting asks for the class's name, typed, so that no stray click deletes a class."""

    confirm = StringField("Type the class name to delete it", filters=[tidy])
    submit = SubmitField("Delete class and its attempts")

    def __init__(self, scope: Class, **kwargs):
        super().__init__(**kwargs)
        self.scope = scope

    def validate_confirm(self, field):
        if field.data != tidy(self.scope.name):
            raise ValidationError(f"Type “{self.scope.name}” exactly to delete this class.")


class MergeForm(FlaskForm):
    """Two spellings of one student; the kept spelling is the roster's, otherwise the first seen."""

    # Checked against the class's students below, with a message that says what to do.
    first = SelectField("Typed name", validate_choice=False)
    second = SelectField("Same student as", validate_choice=False)
    submit = SubmitField("Merge students")

    def __init__(self, students: list[SeenStudent], **kwargs):
        super().__init__(**kwargs)
        self.students = {student.key: student for student in students}
        label = {s.key: f"{s.name} ({'roster' if s.on_roster else 'typed name'})" for s in students}
        typed = [s for s in students if not s.on_roster]
        # Two roster students never merge: the first is a typed name wherever there is a roster.
        self.first.choices = [SelectChoice("", "Choose a typed name")] + [
            SelectChoice(s.key, label[s.key]) for s in typed
        ]
        self.second.choices = [SelectChoice("", "Choose a student")] + [
            SelectChoice(s.key, label[s.key]) for s in students
        ]
        self.mergeable = bool(typed) and len(students) >= 2

    def validate_first(self, field):
        if field.data not in self.students:
            raise ValidationError("Choose a student from the list.")
        if self.students[field.data].on_roster:
            raise ValidationError("Choose a typed name: a roster student is merged into, not away.")

    def validate_second(self, field):
        if field.data not in self.students:
            raise ValidationError("Choose a student from the list.")
        if field.data == self.first.data:
            raise ValidationError("Choose two different students.")
        one, other = self.students.get(self.first.data), self.students[field.data]
        if one and one.on_roster and other.on_roster:
            raise ValidationError(
                "Both are on the roster, so they are two students: remove one from the roster."
            )


SHARE_ROLES = {Role.VIEW: "Can view", Role.MANAGE: "Can manage"}


class ShareForm(FlaskForm):
    username = StringField(
        "Instructor's username",
        filters=[tidy],
        validators=[DataRequired("Enter the username of the instructor to share with.")],
        render_kw={"autocomplete": "off"},
    )
    role = RadioField(
        "They can",
        choices=[SelectChoice(role.value, label) for role, label in SHARE_ROLES.items()],
        default=Role.VIEW.value,
        validators=[DataRequired("Choose what they may do.")],
    )
    submit = SubmitField("Share class")

    def __init__(self, scope: Class, **kwargs):
        super().__init__(**kwargs)
        self.scope = scope
        self.instructor = None

    def validate_username(self, field):
        found = find_instructor(field.data)
        if found is None or not found.is_active:
            raise ValidationError(f"No instructor here has the username “{field.data}”.")
        if found.id == self.scope.instructor_id:
            raise ValidationError("That is the class's owner, who has it already.")
        self.instructor = found


class StopSharingForm(FlaskForm):
    instructor = HiddenField(validators=[DataRequired()])


class RosterForm(FlaskForm):
    """Students to add to a class's roster: a pasted list or a CSV file, read whole, so that
    every problem is reported at once, by line."""

    entries: list[Entry] = []
    """The students to add, once the form has validated."""

    students = TextAreaField("Paste students", render_kw={"rows": 10, "spellcheck": "false"})
    upload = FileField("Or upload a CSV file", render_kw={"accept": ".csv,text/csv,text/plain"})
    submit = SubmitField("Add students")

    @property
    def source(self) -> Field:
        """The field the students came from, where problems with them are shown."""
        return self.upload if self.upload.data else self.students

    def validate(self, extra_validators=None) -> bool:
        if not super().validate(extra_validators):
            return False
        pasted = (self.students.data or "").strip()
        if pasted and self.upload.data:
            self.students.errors.append("Paste a list or upload a file, not both.")
            return False
        if not pasted and not self.upload.data:
            self.students.errors.append("Paste a list of students, or choose a CSV file.")
            return False
        try:
            if self.upload.data:
                self.entries = read_csv(self.upload.data.read())
            else:
                self.entries = read_text(self.students.data)
        except RosterError as error:
            self.source.errors.extend(error.problems)
            return False
        return True
