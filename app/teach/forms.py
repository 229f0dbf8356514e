"""The instructor's forms: each validates its own input, so views only ask whether it is valid."""

from flask import request
from flask_wtf import FlaskForm
from wtforms import SelectChoice, SelectField, StringField, SubmitField
from wtforms.validators import DataRequired, Length

from ..bank import current_bank
from ..forms import tidy
from ..reports import Counting


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
