"""Short answer: a word or phrase typed, matched against the accepted answers as Moodle does
(case-insensitive unless the author says otherwise, `*` for any run of characters, spaces around
and repeated inside ignored)."""

import re
from dataclasses import dataclass
from functools import lru_cache

from .typed import Accepted, TypedQuestion, TypedType, tidy_typed


@dataclass(frozen=True)
class ShortAnswerQuestion(TypedQuestion):
    case_sensitive: bool = False


@lru_cache(maxsize=1024)
def pattern(accepted: str, case_sensitive: bool) -> re.Pattern:
    """An accepted answer as a pattern: `*` stands for any characters, `\\*` for a star."""
    parts = re.split(r"(\\\*|\*)", tidy_typed(accepted))
    body = "".join(
        ".*" if part == "*" else re.escape("*" if part == "\\*" else part) for part in parts
    )
    return re.compile(body, re.DOTALL if case_sensitive else re.DOTALL | re.IGNORECASE)


class ShortAnswer(TypedType):
    name = "short_answer"
    question_class = ShortAnswerQuestion

    def own(self, data: dict) -> dict:
        return {"case_sensitive": data.get("case_sensitive", False)}

    def own_data(self, question: ShortAnswerQuestion) -> dict:
        return {"case_sensitive": True} if question.case_sensitive else {}

    def matches(self, question: ShortAnswerQuestion, accepted: Accepted, response: str) -> bool:
        compiled = pattern(accepted.text, question.case_sensitive)
        return compiled.fullmatch(tidy_typed(response)) is not None

    def same(self, question: ShortAnswerQuestion, response: str) -> str:
        return response if question.case_sensitive else response.casefold()
