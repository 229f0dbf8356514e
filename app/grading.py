"""Grading, kept apart from recording: what an answer earns, through its question's type."""

import math
from dataclasses import dataclass

from .question_types import Feedback, Question, type_of


@dataclass(frozen=True)
class Score:
    points: int
    out_of: int

    @property
    def percent(self) -> float:
        """Percent to one decimal, as every page and export gives it."""
        return percent(self.points, self.out_of)


def percent(points: float, out_of: float) -> float:
    """A share as a percent to one decimal, rounded half up as a gradebook would; whole
    percents come out whole (75, not 75.0), so that a page and a CSV read the same."""
    value = half_up(100 * points / out_of, 1) if out_of else 0
    return int(value) if value == int(value) else value


def half_up(value: float, digits: int = 0) -> float:
    """Round halves away from zero (62.5 -> 63), as people and gradebooks expect."""
    scale = 10**digits
    return math.floor(value * scale + 0.5) / scale


def grade(question: Question, response: str) -> Feedback | None:
    """Grade an answer as its type reads it; None when it answers nothing the question asks."""
    return type_of(question).grade(question, response)


def score(correct: list[bool], out_of: int) -> Score:
    """One point per correct answer; unanswered questions earn nothing."""
    return Score(sum(correct), out_of)
