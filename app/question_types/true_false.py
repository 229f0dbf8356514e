"""True or false: a statement, the two answers always in that order, each with what it says."""

from random import Random

from .base import Choice, Question, common, common_data
from .single_choice import SingleChoice


class TrueFalse(SingleChoice):
    """Answered, graded and counted as a single choice between "true" and "false"."""

    name = "true_false"

    def build(self, data: dict) -> Question:
        return Question(
            **common(data),
            choices=(
                Choice("true", "True", data["answer"] is True, data.get("if_true", "")),
                Choice("false", "False", data["answer"] is False, data.get("if_false", "")),
            ),
            type=self.name,
        )

    def data(self, question: Question) -> dict:
        true, false = question.choices
        said = {"if_true": true.explanation, "if_false": false.explanation}
        own = {"answer": true.correct} | {key: words for key, words in said.items() if words}
        return common_data(question, own)

    def arrangement(self, question: Question, rng: Random) -> None:
        return None  # True comes first, as everyone expects
