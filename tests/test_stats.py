"""Item analysis statistics, checked against values worked out by hand."""

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.stats import Summary, cronbach_alpha, discrimination, facility, histogram, summary

# Five attempts at three questions; totals 3, 2, 2, 1, 0.
SMALL = [
    [1, 1, 1],
    [1, 1, 0],
    [1, 0, 1],
    [0, 1, 0],
    [0, 0, 0],
]

# Attempt 0 was not asked question 2, attempt 3 was not asked question 1.
GAPPY = [
    [1, 1, None],
    [1, 0, 1],
    [0, 0, 0],
    [1, None, 1],
    [0, 1, 0],
    [1, 1, 1],
]


def test_summary_of_totals():
    """Mean, median and sample SD of the small quiz's totals."""
    # totals 3,2,2,1,0: mean 8/5; squared deviations 1.96+.16+.16+.36+2.56 = 5.2; /(5-1) = 1.3
    assert summary([3, 2, 2, 1, 0]) == Summary(5, pytest.approx(1.6), 2, pytest.approx(1.3**0.5))


def test_summary_empty_and_single():
    """No attempts gives no figures; one attempt has a mean but no spread."""
    assert summary([]) == Summary(0, None, None, None)
    assert summary([7]) == Summary(1, 7.0, 7, None)


def test_facility_small():
    """Facility is the share right: 3/5, 3/5, 2/5."""
    assert [facility(SMALL, j) for j in range(3)] == pytest.approx([0.6, 0.6, 0.4])


def test_discrimination_small():
    """Item-rest correlations for the small quiz match the hand working."""
    # Q0: x 1,1,1,0,0 (mean 3/5); rest 2,1,1,1,0 (mean 1)
    #     sxy = .4*1 + .4*0 + .4*0 + (-.6)*0 + (-.6)*(-1) = 1; sxx = 3*.16 + 2*.36 = 1.2; syy = 2
    #     r = 1 / sqrt(1.2 * 2) = sqrt(5/12)
    assert discrimination(SMALL, 0) == pytest.approx((5 / 12) ** 0.5)
    # Q1: x 1,1,0,1,0 (mean 3/5); rest 2,1,2,0,0 (mean 1)
    #     sxy = .4*1 + .4*0 + (-.6)*1 + .4*(-1) + (-.6)*(-1) = 0 -> r = 0
    assert discrimination(SMALL, 1) == pytest.approx(0.0, abs=1e-12)
    # Q2: x 1,0,1,0,0 (mean 2/5); rest 2,2,1,1,0 (mean 6/5)
    #     sxy = .48 - .32 - .12 + .08 + .48 = .6; sxx = 1.2; syy = .64+.64+.04+.04+1.44 = 2.8
    #     r = .6 / sqrt(1.2 * 2.8) = 3 / sqrt(84)
    assert discrimination(SMALL, 2) == pytest.approx(3 / 84**0.5)


def test_alpha_small():
    """Cronbach's alpha of the small quiz is 6/13."""
    # totals 3,2,2,1,0 -> mean 1.6, pvariance 5.2/5 = 1.04
    # item pvariances p(1-p): .6*.4 + .6*.4 + .4*.6 = .72
    # alpha = 3/2 * (1 - .72/1.04) = 3/2 * 4/13 = 6/13
    assert cronbach_alpha(SMALL) == pytest.approx(6 / 13)


def test_one_attempt():
    """With a single attempt there is a facility but no discrimination or alpha."""
    one = [[1, 0, 1]]
    assert facility(one, 0) == 1.0 and facility(one, 1) == 0.0
    assert [discrimination(one, j) for j in range(3)] == [None, None, None]
    assert cronbach_alpha(one) is None


def test_everyone_same_total():
    """When every attempt scores the same, alpha is undefined."""
    same = [[1, 0], [0, 1], [1, 0], [0, 1]]
    assert cronbach_alpha(same) is None


def test_everyone_right():
    """A quiz everyone aced: facility 1, no discrimination, no alpha."""
    aced = [[1, 1, 1]] * 4
    assert [facility(aced, j) for j in range(3)] == [1.0, 1.0, 1.0]
    assert [discrimination(aced, j) for j in range(3)] == [None, None, None]
    assert cronbach_alpha(aced) is None
    assert summary([3, 3, 3, 3]).sd == 0.0


def test_item_everyone_got_right():
    """A question nobody missed cannot discriminate, but the others still can."""
    matrix = [[1, 1, 0], [1, 0, 0], [1, 1, 1], [1, 0, 1]]
    assert facility(matrix, 0) == 1.0
    assert discrimination(matrix, 0) is None
    # Q1: x 1,0,1,0; rest (Q0+Q2) 1,1,2,2 -> sxy = .5*-.5 + -.5*-.5 + .5*.5 + -.5*.5 = 0
    assert discrimination(matrix, 1) == pytest.approx(0.0, abs=1e-12)


def test_single_question_has_no_alpha():
    """Alpha needs at least two questions."""
    assert cronbach_alpha([[1], [0], [1]]) is None


def test_perfect_and_negative_discrimination():
    """A question that tracks the rest scores 1.0; one that opposes it scores -1.0."""
    # Q0: x 1,1,0,0; rest 1,1,0,0 mirrors x exactly
    tracks = [[1, 1, 0], [1, 0, 1], [0, 0, 0], [0, 0, 0]]
    assert discrimination(tracks, 0) == pytest.approx(1.0)
    # Q0: x 1,1,0,0; rest 0,0,2,2 = 2 - 2x
    opposes = [[1, 0, 0], [1, 0, 0], [0, 1, 1], [0, 1, 1]]
    assert discrimination(opposes, 0) == pytest.approx(-1.0)
    # Strong students miss Q0 in the small quiz turned upside down: r = -sqrt(5/12)
    flipped = [[1 - row[0], *row[1:]] for row in SMALL]
    assert discrimination(flipped, 0) == pytest.approx(-((5 / 12) ** 0.5))


def test_unanswered_question():
    """Questions not asked are left out, not counted as wrong."""
    # Q0: 4 of 6 right; Q1: A,B,C,E,F -> 3 of 5; Q2: B,C,D,E,F -> 3 of 5
    assert [facility(GAPPY, j) for j in range(3)] == pytest.approx([4 / 6, 3 / 5, 3 / 5])
    # Q2 over rows B..F: x 1,0,1,0,1 (mean 3/5); rest 1,0,1(Q1 not asked),1,2 (mean 1)
    #   sxy = .4*0 + (-.6)*(-1) + .4*0 + (-.6)*0 + .4*1 = 1; sxx = 1.2; syy = 2 -> sqrt(5/12)
    assert discrimination(GAPPY, 2) == pytest.approx((5 / 12) ** 0.5)
    # alpha over complete rows B,C,E,F: totals 2,0,1,3 -> mean 1.5, pvariance 5/4
    #   items 1,0,0,1 / 0,0,1,1 / 1,0,0,1 each pvariance 1/4 -> sum 3/4
    #   alpha = 3/2 * (1 - (3/4)/(5/4)) = 3/2 * 2/5 = 3/5
    assert cronbach_alpha(GAPPY) == pytest.approx(0.6)


def test_question_nobody_was_asked():
    """A question absent from every version has no statistics at all."""
    matrix = [[None, 1], [None, 0]]
    assert facility(matrix, 0) is None and discrimination(matrix, 0) is None
    assert cronbach_alpha(matrix) is None
    assert facility([], 0) is None and cronbach_alpha([]) is None


@pytest.mark.parametrize(
    ("scores", "max_score", "bins"),
    [
        ([0, 1, 1, 3], 3, [1, 2, 0, 1]),
        ([], 2, [0, 0, 0]),
        ([-1, 5, 2], 3, [1, 0, 1, 1]),  # -1 clamps to 0, 5 clamps to 3
        ([0, 0, 2], 0, [3]),
    ],
)
def test_histogram(scores, max_score, bins):
    """Each attempt lands in exactly one score bar, out-of-range scores at the ends."""
    assert histogram(scores, max_score) == bins


def _assert_sane(matrix):
    items = len(matrix[0]) if matrix else 0
    for j in range(items):
        f, d = facility(matrix, j), discrimination(matrix, j)
        assert f is None or (math.isfinite(f) and 0 <= f <= 1)
        assert d is None or (math.isfinite(d) and -1 - 1e-9 <= d <= 1 + 1e-9)
    a = cronbach_alpha(matrix)
    assert a is None or (math.isfinite(a) and a <= 1 + 1e-9)


@pytest.mark.parametrize(("rows", "items"), [(r, k) for r in range(4) for k in range(1, 4)])
def test_every_small_matrix_is_sane(rows, items):
    """Every 0/1/None matrix up to 3x3 gives finite figures in range or None."""
    for cells in itertools.product([0, 1, None], repeat=rows * items):
        _assert_sane([list(cells[i * items : (i + 1) * items]) for i in range(rows)])


CELLS = st.sampled_from([0, 1, None])


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda k: st.lists(st.lists(CELLS, min_size=k, max_size=k), max_size=12)
    )
)
def test_random_matrices_are_sane(matrix):
    """Random larger matrices never give NaN, infinities or out-of-range figures."""
    _assert_sane(matrix)
