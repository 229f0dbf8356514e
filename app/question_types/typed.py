"""What the types answered by typing share (numerical, short answer): accepted answers, each
with its fraction and feedback, tried in the author's order, and feedback for anything else.
The answer is what was typed, tidied as its type reads it."""

import re
from abc import abstractmethod
from collections import Counter
from dataclasses import dataclass
from random import Random

from flask_wtf import FlaskForm
from wtforms import StringField, ValidationError

from .base import Feedback, Question, QuestionType, Tally, common, common_data

MOST_TYPED = 200
"""The longest answer a student may type."""
MOST_LISTED = 5
"""The most frequent answers the class page lists; the rest share one line."""
_SPACES = re.compile(r"\s+")


def tidy_typed(text: str) -> str:
    """Surrounding spaces gone and inner runs of spaces made one, as Moodle compares them."""
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True)
class Accepted:
    """One answer the author accepts: what it is, its share of the points, what it says."""

    text: str
    fraction: float = 1
    feedback: str = ""


@dataclass(frozen=True)
class TypedQuestion(Question):
    answers: tuple[Accepted, ...] = ()
    otherwise: str = ""
    """Said to a student whose answer matches none of the accepted ones."""

    @property
    def best(self) -> Accepted:
        """The first answer that earns full marks, to name as the right one."""
        return max(self.answers, key=lambda answer: answer.fraction)


@dataclass(frozen=True)
class TypedFeedback(Feedback):
    """A verdict that also names the accepted answer it matched, if any."""

    matched: Accepted | None

    @property
    def said(self) -> str:
        """What the feedback says of this answer in particular."""
        return self.matched.feedback if self.matched else self.question.otherwise


class TypedForm(FlaskForm):
    """Reads one typed answer; the type's `read` tidies it or says what is wrong."""

    typed = StringField(filters=[lambda value: tidy_typed(value) if value else value])

    def __init__(self, kind: "TypedType", question: TypedQuestion, language: str, **kwargs):
        super().__init__(**kwargs)
        self.kind, self.question, self.language = kind, question, language

    def validate_typed(self, field) -> None:
        if not field.data:
            raise ValidationError(self.kind.empty)
        if len(field.data) > MOST_TYPED:
            raise ValidationError(f"Type at most {MOST_TYPED} characters.")
        self.read = self.kind.read(self.question, field.data, self.language)

    @property
    def response(self) -> str:
        return self.read

    @property
    def problems(self) -> list[str]:
        return self.typed.errors

    @property
    def blank(self) -> bool:
        """Nothing typed: a student moving on without answering."""
        return not self.typed.data


class TypedType(QuestionType):
    """A type answered by typing; its subclass says how an answer is read and matched."""

    question_class = TypedQuestion
    verb = "answered"
    partial_marks = True
    empty: str = "Type your answer."

    def read(self, question: TypedQuestion, typed: str, language: str = "en") -> str:
        """The answer as stored, from what was typed (tidied) in a browser of this language;
        ValidationError when it cannot be an answer at all."""
        return typed

    @abstractmethod
    def matches(self, question: TypedQuestion, accepted: Accepted, response: str) -> bool:
        """Whether a stored answer is this accepted one."""

    def accepted(self, data: dict) -> Accepted:
        """One accepted answer from its entry in a bank."""
        return Accepted(str(data["text"]), data.get("fraction", 1), data.get("feedback", ""))

    def accepted_data(self, accepted: Accepted) -> dict:
        written: dict = {"text": accepted.text}
        if accepted.fraction != 1:
            written["fraction"] = accepted.fraction
        return written | ({"feedback": accepted.feedback} if accepted.feedback else {})

    def own(self, data: dict) -> dict:
        """What this type adds to the question beyond its answers."""
        return {}

    def own_data(self, question: TypedQuestion) -> dict:
        return {}

    def build(self, data: dict) -> TypedQuestion:
        return self.question_class(
            **common(data),
            choices=(),
            type=self.name,
            answers=tuple(self.accepted(answer) for answer in data["answers"]),
            otherwise=data.get("otherwise", ""),
            **self.own(data),
        )

    def data(self, question: TypedQuestion) -> dict:
        own = self.own_data(question) | {
            "answers": [self.accepted_data(answer) for answer in question.answers]
        }
        if question.otherwise:
            own["otherwise"] = question.otherwise
        return common_data(question, own)

    def arrangement(self, question: Question, rng: Random) -> None:
        return None

    def answer_form(self, question: TypedQuestion, shown: list, language="en", **kwargs):
        return TypedForm(self, question, language, **kwargs)

    def saved_form(self, question: TypedQuestion, shown: list, response: str):
        return TypedForm(self, question, "en", formdata=None, typed=response)

    def grade(self, question: TypedQuestion, response: str) -> TypedFeedback | None:
        if not response:
            return None
        # As Moodle: the first accepted answer that matches, in the author's order.
        matched = next((a for a in question.answers if self.matches(question, a, response)), None)
        return TypedFeedback(question, response, matched.fraction if matched else 0.0, matched)

    def describe(self, question: Question, response: str) -> str:
        return response

    def same(self, question: TypedQuestion, response: str) -> str:
        """The form under which answers count as one in the statistics."""
        return response

    def tally(self, question: TypedQuestion, counts: Counter) -> list[Tally]:
        given: Counter = Counter()
        shown: dict[str, str] = {}
        for response, count in counts.items():
            key = self.same(question, response)
            given[key] += count
            shown.setdefault(key, response)
        lines = []
        for key, count in given.most_common(MOST_LISTED):
            feedback = self.grade(question, shown[key])
            lines.append(Tally(shown[key], count, feedback.correct, feedback.mark))
        rest = sum(given.values()) - sum(line.count for line in lines)
        if rest:
            lines.append(Tally("Other answers", rest, False, None))
        return lines

    def misread(self, question: TypedQuestion, counts: Counter) -> str | None:
        lines = [line for line in self.tally(question, counts) if line.mark is not None]
        if not lines:
            return None
        top = lines[0]
        # A wrong answer most of those who answered gave: "most" as the flag words it.
        if not top.mark and top.count * 2 > sum(counts.values()):
            return top.text
        return None
