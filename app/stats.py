"""Pure statistics for item analysis, after Moodle's quiz statistics: no Flask, no database.

An answer matrix has one row per attempt and one column per question: 1 right, 0 wrong,
None when that attempt's version of the quiz did not ask the question.
"""

import math
import statistics
from dataclasses import dataclass

Matrix = list[list[int | None]]

FEW_ATTEMPTS = 10
"""Below this many attempts, alpha and discrimination say little (Moodle warns likewise)."""


@dataclass(frozen=True)
class Summary:
    count: int
    mean: float | None
    median: float | None
    sd: float | None
    """Sample standard deviation; None for fewer than two scores."""


def summary(scores: list[float]) -> Summary:
    """Count, mean, median and standard deviation of some scores."""
    if not scores:
        return Summary(0, None, None, None)
    sd = statistics.stdev(scores) if len(scores) > 1 else None
    return Summary(len(scores), statistics.fmean(scores), statistics.median(scores), sd)


def _column(matrix: Matrix, item: int) -> list[int]:
    return [row[item] for row in matrix if row[item] is not None]


def facility(matrix: Matrix, item: int) -> float | None:
    """Share of attempts that got the item right; None if nobody was asked it."""
    column = _column(matrix, item)
    return sum(column) / len(column) if column else None


def _correlation(xs: list[int], ys: list[int]) -> float | None:
    """Pearson's r, from integer sums so that no correlation is exact zero plus rounding noise."""
    n = len(xs)
    if n < 2:
        return None
    sx, sy = sum(xs), sum(ys)
    sxy = n * sum(x * y for x, y in zip(xs, ys, strict=True)) - sx * sy
    sxx = n * sum(x * x for x in xs) - sx * sx
    syy = n * sum(y * y for y in ys) - sy * sy
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def discrimination(matrix: Matrix, item: int) -> float | None:
    """Correlation between the item and the rest of the test; None when either never varies."""
    rows = [row for row in matrix if row[item] is not None]
    item_scores = [row[item] for row in rows]
    rest = [sum(filter(None, row)) - row[item] for row in rows]
    return _correlation(item_scores, rest)


def cronbach_alpha(matrix: Matrix) -> float | None:
    """Internal consistency over attempts that were asked every item; None if undefined."""
    rows = [row for row in matrix if None not in row]
    items = len(rows[0]) if rows else 0
    if len(rows) < 2 or items < 2:
        return None
    totals = statistics.pvariance([sum(row) for row in rows])
    if totals == 0:
        return None
    spread = sum(statistics.pvariance([row[j] for row in rows]) for j in range(items))
    return items / (items - 1) * (1 - spread / totals)


def histogram(scores: list[int], max_score: int) -> list[int]:
    """How many attempts got each score from 0 to max_score."""
    bins = [0] * (max_score + 1)
    for score in scores:
        bins[min(max(score, 0), max_score)] += 1
    return bins
