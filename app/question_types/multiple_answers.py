"""Several right answers ("select all that apply"): checkboxes, marked with Moodle's partial
credit (the chosen choices' fractions, summed, at least 0) or all or nothing. The answer is the
chosen choices' ids, in the question's order, joined by commas (no id holds one)."""

from collections import Counter
from dataclasses import dataclass
from random import Random

from flask_wtf import FlaskForm
from wtforms import SelectMultipleField, ValidationError

from ..text import plain
from .base import Choice, Feedback, Question, QuestionType, Tally, common, common_data
from .single_choice import choice_data

CHOOSE_SOME = "Choose at least one answer."
PARTIAL, ALL_OR_NOTHING = "partial", "all_or_nothing"


@dataclass(frozen=True)
class WeightedChoice(Choice):
    fraction: float = 0
    """Its share of the question's points when chosen, under partial scoring; below 0 for a
    wrong one."""


@dataclass(frozen=True)
class SeveralAnswers(Question):
    scoring: str = PARTIAL
    """PARTIAL or ALL_OR_NOTHING."""

    @property
    def right(self) -> tuple[Choice, ...]:
        return tuple(choice for choice in self.choices if choice.correct)


@dataclass(frozen=True)
class SeveralFeedback(Feedback):
    """A verdict that also names the chosen choices and the right ones, for the pages."""

    chosen: tuple[Choice, ...]

    @property
    def right(self) -> tuple[Choice, ...]:
        return self.question.right



def default_fractions(right: list[bool], given: list[float | None] | None = None) -> list[float]:
    """Each choice's fraction: the one the author gave, or else for a right choice an equal
    part of what the given ones leave of the points, and for a wrong one as much taken away as
    one right choice's share (Canvas's partial credit when none is given)."""
    given = given or [None] * len(right)
    share = 1 / (sum(right) or 1)
    left = 1 - sum(f for f, correct in zip(given, right, strict=True) if correct and f is not None)
    blanks = sum(1 for f, correct in zip(given, right, strict=True) if correct and f is None)
    return [
        f if f is not None else (left / blanks if correct else -share)
        for f, correct in zip(given, right, strict=True)
    ]


def _fraction(choice) -> float | None:
    value = choice.get("fraction") if isinstance(choice, dict) else None
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def chosen_ids(response: str | None) -> list[str]:
    """The ids a stored answer chose."""
    return response.split(",") if response else []


class AnswerForm(FlaskForm):
    """Validates the ticked choices; the type's answer macro draws them by hand."""

    choice = SelectMultipleField(validate_choice=False)

    def __init__(self, question: Question, shown: list[Choice], **kwargs):
        super().__init__(**kwargs)
        self.question, self.shown = question, {choice.id for choice in shown}

    def validate_choice(self, field) -> None:
        picked = field.data or []
        if not picked or not set(picked) <= self.shown or len(set(picked)) != len(picked):
            raise ValidationError(CHOOSE_SOME)

    @property
    def response(self) -> str:
        picked = set(self.choice.data or ())
        return ",".join(choice.id for choice in self.question.choices if choice.id in picked)

    @property
    def ticked(self) -> set[str]:
        """What was ticked, to tick again when the form comes back with a problem."""
        return set(self.choice.data or ())

    @property
    def problems(self) -> list[str]:
        return self.choice.errors

    @property
    def blank(self) -> bool:
        """Nothing ticked: a student moving on without answering."""
        return not self.choice.raw_data


class MultipleAnswers(QuestionType):
    name = "multiple_answers"
    question_class = SeveralAnswers
    partial_marks = True

    def build(self, data: dict) -> SeveralAnswers:
        choices = data["choices"]
        defaults = default_fractions(
            [choice["correct"] for choice in choices], [_fraction(c) for c in choices]
        )
        return SeveralAnswers(
            **common(data),
            choices=tuple(
                WeightedChoice(
                    id=choice["id"],
                    text=choice["text"],
                    correct=choice["correct"],
                    explanation=choice.get("explanation", ""),
                    fraction=choice.get("fraction", default),
                )
                for choice, default in zip(choices, defaults, strict=True)
            ),
            type=self.name,
            scoring=data.get("scoring", PARTIAL),
        )

    def problems(self, data: dict) -> list[tuple[list, str]]:
        choices = data.get("choices")
        if not isinstance(choices, list):
            return []
        found = []
        right = [isinstance(c, dict) and c.get("correct") is True for c in choices]
        given = [_fraction(choice) for choice in choices]
        for n, (correct, fraction) in enumerate(zip(right, given, strict=True)):
            if fraction is not None and correct and fraction <= 0:
                found.append((["choices", n, "fraction"], "a right choice earns more than 0"))
            if fraction is not None and not correct and fraction > 0:
                found.append((["choices", n, "fraction"], "a wrong choice earns 0 or less"))
        fractions = default_fractions(right, given)
        total = sum(f for f, correct in zip(fractions, right, strict=True) if correct)
        blank = any(f is None and correct for f, correct in zip(given, right, strict=True))
        if any(right) and not found and (abs(total - 1) > 1e-6 or (blank and min(
            f for f, correct in zip(fractions, right, strict=True) if correct) <= 0)):
            found.append((["choices"], f"the right choices' shares make {total * 100:.4g}%, "
                          "not 100%: full marks must be possible"))  # fmt: skip
        return found

    def data(self, question: SeveralAnswers) -> dict:
        defaults = default_fractions([choice.correct for choice in question.choices])
        choices = []
        for choice, default in zip(question.choices, defaults, strict=True):
            written = choice_data(choice)
            if abs(choice.fraction - default) > 1e-6:  # as the author wrote it, not the default
                written["fraction"] = choice.fraction
            choices.append(written)
        scoring = {"scoring": question.scoring} if question.scoring != PARTIAL else {}
        return common_data(question, scoring | {"choices": choices})

    def arrangement(self, question: Question, rng: Random) -> list[str]:
        return rng.sample([choice.id for choice in question.choices], len(question.choices))

    def answer_form(self, question: Question, shown: list[Choice], language="en", **kwargs):
        return AnswerForm(question, shown, **kwargs)

    def saved_form(self, question: Question, shown: list[Choice], response: str):
        return AnswerForm(question, shown, formdata=None, choice=chosen_ids(response))

    def grade(self, question: SeveralAnswers, response: str) -> SeveralFeedback | None:
        ids = chosen_ids(response)
        chosen = tuple(choice for choice in question.choices if choice.id in ids)
        if not ids or len(chosen) != len(ids):
            return None
        if question.scoring == ALL_OR_NOTHING:
            mark = float(set(chosen) == set(question.right))
        else:
            mark = min(max(sum(choice.fraction for choice in chosen), 0.0), 1.0)
            # As Moodle: within a millionth of full marks is full marks, so that three thirds
            # written with seven decimals (0.3333333) make a right answer.
            mark = 1.0 if mark > 0.999999 else round(mark, 7)
        return SeveralFeedback(question, response, mark, chosen)

    def describe(self, question: Question, response: str) -> str:
        ids = chosen_ids(response)
        return "; ".join(plain(choice.text) for choice in question.choices if choice.id in ids)

    def tally(self, question: Question, counts: Counter) -> list[Tally]:
        picked = self._picked(counts)
        return [Tally(plain(c.text), picked[c.id], c.correct) for c in question.choices]

    def misread(self, question: Question, counts: Counter) -> str | None:
        picked, answers = self._picked(counts), sum(counts.values())
        wrong = [choice for choice in question.choices if not choice.correct]
        top = max(wrong, key=lambda choice: picked[choice.id], default=None)
        # A wrong choice ticked by most of those who answered, and more often than every right one.
        most_right = max(picked[choice.id] for choice in question.right)
        if top is not None and picked[top.id] * 2 > answers and picked[top.id] > most_right:
            return plain(top.text)
        return None

    @staticmethod
    def _picked(counts: Counter) -> Counter:
        """How many answers ticked each choice, from counts of whole answers."""
        picked: Counter = Counter()
        for response, count in counts.items():
            for choice_id in chosen_ids(response):
                picked[choice_id] += count
        return picked
