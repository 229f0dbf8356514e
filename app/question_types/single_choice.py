"""Single choice: several choices, exactly one right; the answer is the chosen choice's id."""

from collections import Counter
from dataclasses import dataclass
from random import Random

from flask_wtf import FlaskForm
from wtforms import RadioField, SelectChoice
from wtforms.validators import AnyOf, InputRequired

from ..text import plain
from .base import Choice, Feedback, Question, QuestionType, Tally, common, common_data

CHOOSE_ONE = "Choose one answer."


@dataclass(frozen=True)
class ChoiceFeedback(Feedback):
    """A verdict that also names the chosen choice and the right one, for the pages."""

    chosen: Choice

    @property
    def right(self) -> Choice:
        return right_choice(self.question)


def choice_data(choice: Choice) -> dict:
    """A choice as a bank's JSON holds it; an explanation left empty is left out."""
    data = {"id": choice.id, "text": choice.text, "correct": choice.correct}
    return data | ({"explanation": choice.explanation} if choice.explanation else {})


def right_choice(question: Question) -> Choice:
    """The one correct choice."""
    return next(choice for choice in question.choices if choice.correct)


class AnswerForm(FlaskForm):
    """Validates a choice; the type's answer macro draws it by hand, for speed."""

    choice = RadioField(validate_choice=False)

    def __init__(self, shown: list[Choice], **kwargs):
        super().__init__(**kwargs)
        self.choice.choices = [SelectChoice(choice.id, plain(choice.text)) for choice in shown]
        self.choice.validators = [
            InputRequired(CHOOSE_ONE),
            AnyOf([choice.id for choice in shown], message=CHOOSE_ONE),
        ]

    @property
    def response(self) -> str:
        return self.choice.data

    @property
    def problems(self) -> list[str]:
        """What is wrong with the answer sent, for the page's title and its alert."""
        return self.choice.errors

    @property
    def blank(self) -> bool:
        """Nothing chosen: a student moving on without answering."""
        return not self.choice.raw_data


class SingleChoice(QuestionType):
    name = "single_choice"

    def build(self, data: dict) -> Question:
        return Question(
            **common(data),
            choices=tuple(Choice(**{"explanation": "", **choice}) for choice in data["choices"]),
            type=self.name,
        )

    def data(self, question: Question) -> dict:
        return common_data(question, {"choices": [choice_data(c) for c in question.choices]})

    def arrangement(self, question: Question, rng: Random) -> list[str]:
        return rng.sample([choice.id for choice in question.choices], len(question.choices))

    def answer_form(self, question: Question, shown: list[Choice], language="en", **kwargs):
        return AnswerForm(shown, **kwargs)

    def saved_form(self, question: Question, shown: list[Choice], response: str):
        return AnswerForm(shown, formdata=None, choice=response)

    def grade(self, question: Question, response: str) -> ChoiceFeedback | None:
        chosen = question.choice(response)
        if chosen is None:
            return None
        return ChoiceFeedback(question, chosen.id, float(chosen.correct), chosen)

    def describe(self, question: Question, response: str) -> str:
        return plain(question.choice(response).text)

    def tally(self, question: Question, counts: Counter) -> list[Tally]:
        return [Tally(plain(c.text), counts[c.id], c.correct) for c in question.choices]

    def misread(self, question: Question, counts: Counter) -> str | None:
        top = max(counts[choice.id] for choice in question.choices)
        leaders = [choice for choice in question.choices if counts[choice.id] == top]
        # One choice, and a wrong one, chosen more than any other: a tie names no single choice.
        if len(leaders) == 1 and top > counts[right_choice(question).id]:
            return plain(leaders[0].text)
        return None
