"""What every question type provides, and the frozen question it builds from a bank."""

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass
from random import Random
from typing import ClassVar, NamedTuple

from flask_wtf import FlaskForm


@dataclass(frozen=True)
class Reference:
    title: str
    url: str


@dataclass(frozen=True)
class Choice:
    id: str
    text: str
    correct: bool
    explanation: str


@dataclass(frozen=True)
class Question:
    id: str
    prompt: str
    choices: tuple[Choice, ...]
    explanation: str
    references: tuple[Reference, ...]
    evidence: str | None = None
    """The name of a measurement whose numbers the feedback shows (app/evidence.py)."""
    type: str = "single_choice"
    """The name its question type is registered under (app/question_types/__init__.py)."""
    points: float = 1
    """What a full mark earns; the quiz's maximum is the sum over the questions it asks."""
    pool: str | None = None
    """The quiz's pool it belongs to, from which each attempt draws some; None: always asked."""

    def choice(self, choice_id: str) -> Choice | None:
        """The choice with this id, or None."""
        return next((choice for choice in self.choices if choice.id == choice_id), None)


def common_data(question: Question, own: dict) -> dict:
    """A question's entry in a bank, the inverse of common, with the type's `own` fields after
    its prompt and points, as people write them; parts left empty are left out."""
    data: dict = {"id": question.id}
    if question.type != "single_choice":
        data["type"] = question.type
    data["prompt"] = question.prompt
    if question.points != 1:
        data["points"] = question.points
    if question.pool:
        data["pool"] = question.pool
    data |= own
    if question.explanation:
        data["explanation"] = question.explanation
    data["references"] = [{"title": r.title, "url": r.url} for r in question.references]
    if question.evidence:
        data["evidence"] = question.evidence
    return data


def common(data: dict) -> dict:
    """What every type's question takes from its entry in a validated bank."""
    return {
        "id": data["id"],
        "prompt": data["prompt"],
        # A quiz published from the browser may lack explanations: "" shows none.
        "explanation": data.get("explanation", ""),
        "references": tuple(Reference(**ref) for ref in data.get("references", ())),
        "evidence": data.get("evidence"),
        "points": data.get("points", 1),
        "pool": data.get("pool"),
    }


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: what was answered, as stored, and the share of the question's
    points it earns."""

    question: Question
    response: str
    """The answer as the database keeps it (Answer.response), read back by the type's grade."""
    mark: float
    """From 0 (nothing right) to 1 (all right), as Moodle's fractions."""

    @property
    def correct(self) -> bool:
        """Fully right."""
        return self.mark >= 1

    @property
    def partial(self) -> bool:
        """Partly right: earns some of the points."""
        return 0 < self.mark < 1

    @property
    def points(self) -> float:
        """The points it earns."""
        return self.mark * self.question.points

    @property
    def outcome(self) -> str:
        """The verdict's class on the pages: is-right, is-partial or is-wrong."""
        return "is-right" if self.correct else "is-partial" if self.partial else "is-wrong"

    @property
    def sign(self) -> str:
        """The verdict's sign beside its words: ✓, ◐ or ✗."""
        return "✓" if self.correct else "◐" if self.partial else "✗"

    @property
    def words(self) -> str:
        """The verdict's first word or two, as a page's title and its results list say it."""
        return "Correct" if self.correct else "Partly correct" if self.partial else "Incorrect"


class Tally(NamedTuple):
    """One line of a question's answer counts on the class page and in the statistics CSV."""

    text: str
    count: int
    right: bool
    mark: float | None = None
    """The share of the points it earns, where answers are typed and may earn part."""


class QuestionType(ABC):
    """A kind of question: how it is built from a bank, answered, graded and counted.

    The pages draw it with the macros in templates/questions/<name>.html (answer, verdict,
    review); docs/development.md says what a new type must provide.
    """

    name: ClassVar[str]
    """Its "type" in questions.json, and its template's name."""
    question_class: ClassVar[type[Question]] = Question
    """The frozen question it builds, which a format's reader makes too."""
    verb: ClassVar[str] = "chose"
    """What a student did, as a sentence about their answer says it."""
    partial_marks: ClassVar[bool] = False
    """Whether an answer may earn part of the points, so that facility is an average mark."""

    @abstractmethod
    def build(self, data: dict) -> Question:
        """Freeze one question of a validated bank."""

    @abstractmethod
    def data(self, question: Question) -> dict:
        """The question as a bank's JSON holds it: what build reads back to the same question."""

    def problems(self, data: dict) -> list[tuple[list, str]]:
        """What the schema cannot say is wrong with an entry of this type: each a path within
        the question and the words; the entry may be malformed in other ways too."""
        return []

    @abstractmethod
    def arrangement(self, question: Question, rng: Random) -> list[str] | None:
        """The order a shuffling quiz shows this question's parts in for one attempt; None
        when the type has nothing to shuffle."""

    @abstractmethod
    def answer_form(
        self, question: Question, shown: list, language: str = "en", **kwargs
    ) -> FlaskForm:
        """The form that reads and checks one answer; its `response` is what grade takes.
        `language` is the browser's, which says how a typed number is written."""

    @abstractmethod
    def saved_form(self, question: Question, shown: list, response: str) -> FlaskForm:
        """The answer form filled in with a saved answer, for a student back to change it."""

    @abstractmethod
    def grade(self, question: Question, response: str) -> Feedback | None:
        """The verdict on a stored or submitted answer; None when it answers nothing asked."""

    @abstractmethod
    def describe(self, question: Question, response: str) -> str:
        """An answer in words, as the saved-answer page and the responses CSV give it."""

    def in_a_cell(self, question: Question, response: str) -> str | float:
        """An answer as a spreadsheet cell: in words, unless the type's answers are numbers."""
        return self.describe(question, response)

    @abstractmethod
    def tally(self, question: Question, counts: Counter) -> list[Tally]:
        """How many gave each answer, from counts of stored responses, in the order shown."""

    @abstractmethod
    def misread(self, question: Question, counts: Counter) -> str | None:
        """A wrong answer given more than any other, in words, for the item's warning."""
