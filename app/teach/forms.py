"""The instructor's forms: each validates its own input, so views only ask whether it is valid."""

from flask import request
from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from wtforms import Field, SelectChoice, SelectField, StringField, SubmitField, TextAreaField
from wtforms.validators import DataRequired, Length

from ..bank import current_bank
from ..forms import tidy
from ..reports import Counting
from ..roster import Entry, RosterError, read_csv, read_text


class ClassForm(FlaskForm):
    name = StringField(
        "Class name",
        filters=[tidy],
        validators=[
            DataRequired("Give the class a name."),
            Length(max=100, message="Use at most 100 characters."),
        ],
    )
    submit = SubmitField("Create class")


class ReportForm(FlaskForm):
    """Which quiz and which attempts the class page counts; read from the query string."""

    class Meta:
        csrf = False

    quiz = SelectField("Quiz")
    count = SelectField(
        "Attempts that count",
        choices=[SelectChoice(counting.value, counting.label) for counting in Counting],
        default=Counting.FIRST.value,
    )
    submit = SubmitField("Show")

    def __init__(self):
        super().__init__(request.args)
        bank = current_bank()
        # Quizzes taken out of the bank keep their reports, listed after the ones on offer.
        offered = [SelectChoice(quiz.slug, quiz.title) for quiz in bank.quizzes.values()]
        retired = [
            SelectChoice(quiz.slug, f"{quiz.title} (no longer offered)")
            for quiz in bank.retired.values()
        ]
        self.quiz.choices = offered + retired
        self.quiz.data = self.quiz.data or self.quiz.choices[0].value
        self.count.data = self.count.data or Counting.FIRST.value


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
