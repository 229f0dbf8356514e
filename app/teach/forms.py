"""The instructor's forms: each validates its own input, so views only ask whether it is valid."""

from collections.abc import Iterable

from flask import request
from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from wtforms import (
    BooleanField,
    Field,
    FieldList,
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
from ..authoring import usable_slugs
from ..models import Class, Role
from ..names import tidy
from ..reports import Counting
from ..roster import Entry, RosterError
from ..roster.parse import (
    MOST_COLUMNS,
    ROLES,
    Table,
    column_problems,
    csv_text,
    entries,
    read_table,
)
from ..served import current_bank
from .students import SeenStudent


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

    def __init__(self, assigned: dict[str, str] | None = None, others: Iterable[str] = ()):
        """Without a choice in the address, the class's first assigned quiz, counted as its
        assignment grades it (`assigned`: quiz slug -> a Counting value; `others`, the quizzes
        its removed assignments set)."""
        super().__init__(request.args)
        assigned = assigned or {}
        bank = current_bank()
        # The class's quizzes and those the instructor may use; nobody learns of another's.
        seen = usable_slugs() | set(assigned) | set(others)
        # Quizzes taken out of the bank keep their reports, listed after the ones on offer.
        offered = [
            SelectChoice(quiz.slug, quiz.title)
            for quiz in bank.quizzes.values()
            if quiz.slug in seen
        ]
        retired = [
            SelectChoice(quiz.slug, f"{quiz.title} (no longer offered)")
            for quiz in bank.retired.values()
            if quiz.slug in seen
        ]
        self.quiz.choices = offered + retired
        known = [choice.value for choice in self.quiz.choices]
        first = next((slug for slug in assigned if slug in known), known[0] if known else None)
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

    def __init__(self, class_: Class, **kwargs):
        super().__init__(**kwargs)
        self.class_ = class_

    def validate_confirm(self, field):
        if field.data != tidy(self.class_.name):
            raise ValidationError(f"Type “{self.class_.name}” exactly to delete this class.")


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

    def __init__(self, class_: Class, **kwargs):
        super().__init__(**kwargs)
        self.class_ = class_
        self.instructor = None

    def validate_username(self, field):
        found = find_instructor(field.data)
        if found is None or not found.is_active:
            raise ValidationError(f"No instructor here has the username “{field.data}”.")
        if found.id == self.class_.instructor_id:
            raise ValidationError("That is the class's owner, who has it already.")
        self.instructor = found


class StopSharingForm(FlaskForm):
    instructor = HiddenField(validators=[DataRequired()])


class RosterForm(FlaskForm):
    """Students to add to a class's roster: a pasted list or a CSV file, read whole, so that
    every problem is reported at once, by line."""

    entries: list[Entry] = []
    """The students to add, once the form has validated and its columns are sure."""
    table: Table | None = None
    """The list as read, once the form has validated: its columns may need choosing."""

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
            text = csv_text(self.upload.data.read()) if self.upload.data else self.students.data
            self.table = read_table(text)
            if self.table.sure:
                self.entries = entries(self.table)
        except RosterError as error:
            self.source.errors.extend(error.problems)
            return False
        return True


ROLE_CHOICES = [SelectChoice(role, label) for role, label in ROLES.items()]


class ColumnsForm(FlaskForm):
    """Which column of a list is which, when the list does not say. The list travels in a hidden
    field and is read again, checked as a paste is (its size too), so nothing is kept between
    the preview and the confirmation."""

    entries: list[Entry] = []
    """The students to add, once the form has validated."""
    table: Table | None = None
    """The posted list as read, when it could be read."""

    step = HiddenField(default="columns")
    pending = HiddenField(
        validators=[DataRequired("The list was lost on the way: paste or upload it again.")]
    )
    # Where the list came from, so that the add form offers a paste back to be corrected.
    pasted = HiddenField()
    header = BooleanField("The first row names the columns: it is not a student")
    # Checked below, with a message that says what to choose.
    roles = FieldList(
        SelectField(choices=ROLE_CHOICES, validate_choice=False), max_entries=MOST_COLUMNS
    )
    submit = SubmitField("Add these students")

    def __init__(self, *args, **kwargs):
        # Its fields' names and ids differ from the add form's, which the same page shows.
        kwargs.setdefault("prefix", "columns")
        super().__init__(*args, **kwargs)
        self.choice_errors: list[str] = []
        """Problems of the columns' roles as a whole, as no name column chosen."""

    @classmethod
    def preview(cls, table: Table, pasted: bool) -> "ColumnsForm":
        """The form that asks which column is which, with the table's guesses chosen."""
        form = cls(
            formdata=None,
            data={
                "pending": table.text,
                "pasted": "1" if pasted else "",
                "header": table.header,
                "roles": list(table.roles),
            },
        )
        form.table = table
        return form

    @property
    def refused(self) -> bool:
        """Whether anything posted was refused, by column, by line or as a whole."""
        return bool(self.errors or self.choice_errors) or any(r.errors for r in self.roles)

    def validate(self, extra_validators=None) -> bool:
        if not super().validate(extra_validators):
            return False
        try:
            self.table = read_table(self.pending.data)
        except RosterError as error:
            self.pending.errors.extend(error.problems)
            return False
        roles = [role.data for role in self.roles]
        if len(roles) != self.table.width:
            self.pending.errors.append("The list has changed: paste or upload it again.")
            return False
        found = column_problems(roles)
        for index, problem in found:
            errors = self.roles[index].errors if index is not None else self.choice_errors
            errors.append(problem)
        if found:
            return False
        try:
            self.entries = entries(self.table, roles, self.header.data)
        except RosterError as error:
            self.pending.errors.extend(error.problems)
            return False
        return True
