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

    @property
    def best(self) -> Accepted:
        """The first answer earning full marks, one without a wildcard where there is one: a
        student reads "colour" better than "colo*r"."""
        full = [answer for answer in self.answers if answer.fraction >= 1] or list(self.answers)
        return next((a for a in full if len(parts(a.text, True)) == 1), full[0])


def readable(accepted: str) -> str:
    """An accepted answer as a student reads it: a wildcard as "…", an escaped star as "*"."""
    pieces = re.split(r"(\\\*|\*)", accepted)
    return "".join({"*": "…", "\\*": "*"}.get(piece, piece) for piece in pieces)


@lru_cache(maxsize=1024)
def parts(accepted: str, case_sensitive: bool) -> tuple[str, ...]:
    """An accepted answer's literal parts, apart where it has a `*` (`\\*` is a star)."""
    found, current = [], ""
    for piece in re.split(r"(\\\*|\*)", tidy_typed(accepted)):
        if piece == "*":
            found.append(current)
            current = ""
        else:
            current += "*" if piece == "\\*" else piece
    found.append(current)
    return tuple(found if case_sensitive else (part.casefold() for part in found))


def wildcard_match(literal: tuple[str, ...], text: str) -> bool:
    """Whether text is the parts with anything between them. Each part is found leftmost, in
    order, which is enough for `*` alone: linear in the answer, where a regular expression of
    many `*` backtracks for as long as a student cares to make it."""
    if len(literal) == 1:
        return text == literal[0]
    first, *middle, last = literal
    if len(text) < len(first) + len(last) or not (text.startswith(first) and text.endswith(last)):
        return False
    at, end = len(first), len(text) - len(last)
    for part in middle:
        found = text.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


class ShortAnswer(TypedType):
    name = "short_answer"
    question_class = ShortAnswerQuestion

    def own(self, data: dict) -> dict:
        return {"case_sensitive": data.get("case_sensitive", False)}

    def own_data(self, question: ShortAnswerQuestion) -> dict:
        return {"case_sensitive": True} if question.case_sensitive else {}

    def matches(self, question: ShortAnswerQuestion, accepted: Accepted, response: str) -> bool:
        typed = tidy_typed(response)
        typed = typed if question.case_sensitive else typed.casefold()
        return wildcard_match(parts(accepted.text, question.case_sensitive), typed)

    def same(self, question: ShortAnswerQuestion, response: str) -> str:
        return response if question.case_sensitive else response.casefold()
