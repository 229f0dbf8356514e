"""Grading, kept apart from recording: what an answer earns, through its question's type."""

import math
from dataclasses import dataclass

from .question_types import Feedback, Question, type_of


@dataclass(frozen=True)
class Score:
    points: float
    out_of: float

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


def score(earned: list[float], out_of: float) -> Score:
    """The points each answer earned; unanswered questions earn nothing."""
    return Score(sum(earned), out_of)


def stored_mark(mark: float | None, is_correct: bool) -> float:
    """A stored answer's mark: a release before marks stored whether it was right, and nothing
    else."""
    return float(is_correct) if mark is None else mark


def earned(points: float, mark: float | None, is_correct: bool) -> float:
    """What a stored answer to a question worth `points` earns."""
    return points * stored_mark(mark, is_correct)


def in_points(value: float) -> str:
    """Points as pages and CSVs give them: 2, 2.5, 0.33 (two decimals at most, half up)."""
    rounded = half_up(value, 2)
    return f"{rounded:.2f}".rstrip("0").rstrip(".")
