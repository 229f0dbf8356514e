"""Grading, kept apart from recording: what a choice earns and what to say about it."""

import math
from dataclasses import dataclass

from .bank import Choice, Question


@dataclass(frozen=True)
class Feedback:
    """What a student sees after answering: their choice against the right one."""

    question: Question
    chosen: Choice

    @property
    def correct(self) -> bool:
        return self.chosen.correct

    @property
    def right(self) -> Choice:
        return self.question.right_choice


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


def grade(question: Question, choice_id: str) -> Feedback | None:
    """Grade a choice by id; None when the question has no such choice."""
    chosen = question.choice(choice_id)
    return Feedback(question, chosen) if chosen else None


def score(correct: list[bool], out_of: int) -> Score:
    """One point per correct answer; unanswered questions earn nothing."""
    return Score(sum(correct), out_of)
