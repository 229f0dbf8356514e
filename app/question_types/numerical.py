"""Numerical: a number typed, right within an accepted answer's tolerance (absolute, as
Moodle's), in the question's base unit or one of its other units. Students type it as they
write numbers: `3.5`, `1e-3`, or `3,5` where their browser's language writes a decimal comma.
The answer is stored as the number read, with the unit typed after a space."""

import math
import re
from dataclasses import dataclass

from wtforms import ValidationError

from .typed import Accepted, TypedQuestion, TypedType

NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
"""A number as programs write it, which every student may type whatever their language."""
DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")
"""A number whose decimals follow a comma, as where a student's language does not write so."""


@dataclass(frozen=True)
class Unit:
    name: str
    multiplier: float = 1
    """How many of this unit make one of the base unit, as Moodle's: cm is 100 where m is 1."""


@dataclass(frozen=True)
class NumericAnswer(Accepted):
    value: float = 0
    tolerance: float = 0


@dataclass(frozen=True)
class NumericalQuestion(TypedQuestion):
    units: tuple[Unit, ...] = ()
    """The first is the base unit, assumed when a student types none."""


def as_written(number: float) -> float:
    """A whole number as people write one in a bank: 46, not 46.0."""
    return int(number) if number == int(number) else number


def numeric_answer(value: float, tolerance: float = 0, fraction: float = 1, feedback: str = ""):
    """An accepted number as every reader makes one, whatever notation its file had."""
    return NumericAnswer(
        number_text(value), fraction, feedback, as_written(value), as_written(abs(tolerance))
    )


def number_text(value: float) -> str:
    """A number as short as it reads back exactly: 3.5, 150, 0.001, 1e-07."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _local_number(text: str, language: str) -> float | None:
    """A number as the student's language writes it (3,5 in German, 1 000,5 in French)."""
    from decimal import DecimalException

    from babel import Locale, UnknownLocaleError  # only for what plain notation does not read
    from babel.numbers import NumberFormatError, parse_decimal

    try:
        locale = Locale.parse(language.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        return None
    # French groups with a narrow no-break space, which students type as a plain one.
    for spelled in (text.replace(" ", "\u202f"), text):
        try:
            # Strict: "1,000" in English is a thousand, never one; a grouping out of place is
            # refused. Decimal's own errors too: "1,0E1000" overflows Babel's context.
            return float(parse_decimal(spelled, locale=locale, strict=True))
        except (NumberFormatError, ValueError, DecimalException):
            continue
    return None


def spellings(unit: Unit) -> list[str]:
    """A unit as a student may type it: its name, with either µ (the micro sign or the Greek
    letter), or u for it, as keyboards without µ write it (15 um for 15 µm)."""
    names = [unit.name]
    for micro in ("µ", "μ"):
        if micro in unit.name:
            names += [unit.name.replace(micro, other) for other in ("µ", "μ", "u")]
    return list(dict.fromkeys(names))


def split_unit(question: NumericalQuestion, typed: str) -> tuple[str, Unit | None]:
    """The number's text and the unit typed after it, if it is one of the question's."""
    typed_as = [(name, unit) for unit in question.units for name in spellings(unit)]
    for name, unit in sorted(typed_as, key=lambda pair: -len(pair[0])):
        if typed.endswith(name) and typed[: -len(name)].strip():
            return typed[: -len(name)].strip(), unit
    return typed, None


class Numerical(TypedType):
    name = "numerical"
    question_class = NumericalQuestion
    empty = "Type a number."

    def accepted(self, data: dict) -> NumericAnswer:
        return numeric_answer(
            data["value"], data.get("tolerance", 0), data.get("fraction", 1),
            data.get("feedback", ""),
        )  # fmt: skip

    def accepted_data(self, accepted: NumericAnswer) -> dict:
        written: dict = {"value": accepted.value}
        if accepted.tolerance:
            written["tolerance"] = accepted.tolerance
        if accepted.fraction != 1:
            written["fraction"] = accepted.fraction
        return written | ({"feedback": accepted.feedback} if accepted.feedback else {})

    def own(self, data: dict) -> dict:
        units = tuple(Unit(u["unit"], u.get("multiplier", 1)) for u in data.get("units", ()))
        return {"units": units}

    def own_data(self, question: NumericalQuestion) -> dict:
        if not question.units:
            return {}
        return {"units": [
            {"unit": u.name} | ({"multiplier": u.multiplier} if u.multiplier != 1 else {})
            for u in question.units
        ]}  # fmt: skip

    def problems(self, data: dict) -> list[tuple[list, str]]:
        units = data.get("units")
        if not isinstance(units, list) or not all(isinstance(u, dict) for u in units):
            return []
        found = []
        if units and units[0].get("multiplier", 1) != 1:
            found.append((["units", 0, "multiplier"], "the first unit is the base unit: 1"))
        names = [unit.get("unit") for unit in units]
        found += [
            (["units", n, "unit"], "another unit has this name")
            for n, name in enumerate(names)
            if name in names[:n]
        ]
        return found

    def read(self, question: NumericalQuestion, typed: str, language: str = "en") -> str:
        text, unit = split_unit(question, typed)
        value = float(text) if NUMBER.fullmatch(text) else _local_number(text, language)
        if value is None or not math.isfinite(value):
            if DECIMAL_COMMA.fullmatch(text):  # 7,2 where the browser's language writes 7.2
                raise ValidationError("Write the decimals after a point, not a comma: 3.5.")
            if question.units:
                names = ", ".join(unit.name for unit in question.units)
                raise ValidationError(
                    f"Type a number, such as 3.5, and a unit if you like: {names}."
                )
            raise ValidationError("Type a number, such as 3.5 or 1e-3.")
        return number_text(value) + (f" {unit.name}" if unit else "")

    def in_a_cell(self, question: NumericalQuestion, response: str) -> str | float:
        """A number a spreadsheet sums (-5, not the text '-5'; 3 as typed, not 3.0); with a
        unit, the words."""
        return as_written(float(response)) if NUMBER.fullmatch(response) else response

    def in_base_unit(self, question: NumericalQuestion, response: str) -> float | None:
        """The stored answer's number in the question's base unit."""
        text, unit = split_unit(question, response)
        if not NUMBER.fullmatch(text):
            return None
        return float(text) / (unit.multiplier if unit else 1)

    def matches(self, question: NumericalQuestion, accepted: NumericAnswer, response: str) -> bool:
        value = self.in_base_unit(question, response)
        if value is None:
            return False
        # A float's rounding must not fail an answer exactly on the tolerance's edge.
        slack = 1e-12 * max(1.0, abs(accepted.value))
        return abs(value - accepted.value) <= accepted.tolerance + slack

    def same(self, question: NumericalQuestion, response: str) -> str:
        value = self.in_base_unit(question, response)
        return response if value is None else number_text(value)
