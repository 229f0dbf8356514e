"""The class report's arithmetic on plain values: no app, no database."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from app import stats
from app.bank import build_quiz
from app.reports import (
    PICK,
    AnswerRow,
    AttemptRow,
    ClassReport,
    Counting,
    ItemRow,
    StudentRow,
    glance,
    gradebook,
)

pytestmark = pytest.mark.postgres

QUIZ = build_quiz(
    {
        "slug": "tiny",
        "title": "Tiny",
        "description": "Three questions.",
        "questions": [
            {
                "id": f"q{n}",
                "prompt": f"Question {n}?",
                "choices": [
                    {"id": "a", "text": "Right", "correct": True, "explanation": "Yes."},
                    {"id": "b", "text": "Wrong", "correct": False, "explanation": "No."},
                ],
                "explanation": "Because.",
                "references": [{"title": "A book", "url": "https://example.org/"}],
            }
            for n in (1, 2, 3)
        ],
    }
)
START = datetime(2026, 1, 1, tzinfo=UTC)
# test_stats' SMALL in three questions: alpha = 3/2 * (1 - .72/1.04) = 0.46
SMALL = [[1, 1, 1], [1, 1, 0], [1, 0, 1], [0, 1, 0], [0, 0, 0]]


def report(marks: list[list[int | None]], counting=Counting.FIRST, quiz=QUIZ) -> ClassReport:
    """A report of one completed attempt per student at this version of the quiz, right (1),
    wrong (0) or left unanswered (None, the attempt ended by its time limit) on each question."""
    students, answers = [], []
    for n, row in enumerate(marks):
        attempt = AttemptRow(
            id=n,
            token=f"t{n}",
            student=f"Student {n}",
            started_at=START + timedelta(minutes=n),
            last_answer_at=START + timedelta(minutes=n + 5),
            answered=sum(mark is not None for mark in row),
            points=sum(filter(None, row)),
            quiz=quiz,
            number=1,
            finished_at=START + timedelta(minutes=n + 30) if None in row else None,
        )
        students.append(StudentRow(name=f"Student {n}", attempts=1, shown=attempt))
        for question, mark in zip(quiz.questions, row, strict=True):
            if mark is not None:
                answers.append(AnswerRow(n, question.id, "a" if mark else "b", bool(mark)))
    return ClassReport(
        quiz=QUIZ,
        counting=counting,
        students=students,
        student_count=len(marks),
        started=len(marks),
        completed=len(marks),
        answers=answers,
    )


def test_figures_come_from_the_values_given():
    """Alpha, facility, choice counts, histogram and gradebook from rows built by hand."""
    small = report(SMALL)
    assert small.alpha == pytest.approx(stats.cronbach_alpha(SMALL)) == pytest.approx(0.4615, 1e-3)
    assert [item.facility for item in small.items] == [0.6, 0.6, 0.4]
    assert small.items[2].counts == {"a": 2, "b": 3}
    assert small.items[2].flags == ["Most students chose “Wrong”"]
    assert small.histogram == [1, 1, 2, 1]
    assert [(row.student, row.score, row.percent) for row in small.gradebook][:2] == [
        ("Student 0", 3, 100.0),
        ("Student 1", 2, 66.7),
    ]
    assert small.summary.count == 5 and small.summary.mean == pytest.approx(1.6)


def test_answers_of_attempts_that_do_not_count_are_left_out():
    """An answer whose attempt is not among the counted ones changes no figure."""
    small = report(SMALL)
    stray = ClassReport(
        **{**vars(small), "answers": [*small.answers, AnswerRow(99, "q1", "b", False)]}
    )
    assert stray.items[0].counts == small.items[0].counts == {"a": 3, "b": 2}


SHARES = {1: 0.5, 2: 1.0, 3: 1.0}


@pytest.mark.parametrize(
    ("counting", "ids"),
    [("first", [1]), ("best", [2]), ("latest", [3]), ("all", [1, 2, 3])],
)
def test_each_counting_rule_picks_its_attempts(counting, ids):
    """First, best (the earliest of equals), latest and all, as Moodle's grading methods."""
    assert PICK[Counting(counting)]([1, 2, 3], SHARES) == ids


def test_an_unknown_counting_rule_is_an_error():
    """Not a silent "best", as an unmatched string once was."""
    assert set(PICK) == set(Counting)
    with pytest.raises(ValueError):
        Counting("highest")


THREE_CHOICES = build_quiz(
    {
        "slug": "three",
        "title": "Three choices",
        "description": "One question.",
        "questions": [
            {
                "id": "q1",
                "prompt": "Question?",
                "choices": [
                    {"id": "a", "text": "Right", "correct": True, "explanation": "Yes."},
                    {"id": "b", "text": "Wrong", "correct": False, "explanation": "No."},
                    {"id": "c", "text": "Other", "correct": False, "explanation": "No."},
                ],
                "explanation": "Because.",
                "references": [{"title": "A book", "url": "https://example.org/"}],
            }
        ],
    }
)


@pytest.mark.parametrize(
    ("counts", "flagged"),
    [
        ({"a": 2, "b": 5, "c": 3}, "Most students chose “Wrong”"),
        ({"a": 2, "b": 3, "c": 5}, "Most students chose “Other”"),
        ({"a": 2, "b": 4, "c": 4}, None),  # two wrong choices tie: neither is "most students"
        ({"a": 4, "b": 4, "c": 2}, None),  # a wrong choice ties the right one: it does not beat it
    ],
)
def test_only_a_single_most_chosen_wrong_choice_is_flagged(counts, flagged):
    """ "Most students chose …" names one choice, so a tie at the top earns no such flag."""
    item = ItemRow(THREE_CHOICES.questions[0], 1, 10, 0.2, None, counts)
    most = [flag for flag in item.flags if flag.startswith("Most students chose")]
    assert most == ([flagged] if flagged else [])


def test_at_a_glance_lists_the_hardest_then_every_warned_question():
    """Beyond the three hardest, any question with a warning is listed; an easy clean one is not.

    Six questions: q1..q3 hard, q4 and q5 easier but warned, q6 easy and clean."""
    items = [
        ItemRow(QUIZ.questions[0], number, n, facility, discrimination, counts)
        for number, n, facility, discrimination, counts in [
            (1, 10, 0.1, 0.2, {"a": 1, "b": 9}),
            (2, 10, 0.2, 0.2, {"a": 2, "b": 8}),
            (3, 10, 0.3, 0.1, {"a": 3, "b": 7}),
            (4, 10, 0.8, -0.3, {"a": 8, "b": 2}),  # stronger students did worse
            (5, 10, 0.4, 0.3, {"a": 4, "b": 6}),  # a wrong choice beats the right one
            (6, 10, 0.9, 0.4, {"a": 9, "b": 1}),
            (7, 10, 1.0, None, {"a": 10, "b": 0}),  # everyone right: not a warning
        ]
    ]
    assert [item.number for item in glance(items)] == [1, 2, 3, 4, 5]


def test_a_question_left_unanswered_when_the_time_ran_out_counts_as_wrong():
    """As in the score, so that the statistics do not call question 3 easy because only those
    who reached it answered it; a question an attempt's version did not ask stays out."""
    timed_out = report([[1, 1, 1], [1, 1, 1], [1, 0, None], [0, None, None]])
    assert timed_out.items[2].facility == 0.5
    assert (timed_out.items[2].n, timed_out.items[2].not_answered) == (4, 2)
    assert timed_out.items[1].flags == []
    assert [item.number for item in timed_out.glance] == [2, 3, 1]
    assert timed_out.alpha is not None  # every attempt was asked every question
    seed = json.loads(QUIZ.snapshot)
    shorter = build_quiz({**seed, "questions": seed["questions"][:2]})
    older = report([[1, 1], [1, 0]], quiz=shorter)
    assert (older.items[2].n, older.items[2].facility, older.items[2].not_answered) == (0, None, 0)


def test_an_attempt_ended_by_its_time_limit_is_finished_and_scored():
    """Finished with questions unanswered: it counts, scored on what was answered."""
    ended = AttemptRow(
        id=1, token="t", student="Dana", started_at=START, last_answer_at=START + timedelta(1),
        answered=1, points=1, quiz=QUIZ, number=1, finished_at=START + timedelta(minutes=20),
    )  # fmt: skip
    going = AttemptRow(**{**vars(ended), "finished_at": None})
    assert ended.complete and ended.time_taken == timedelta(minutes=20)
    assert not going.complete and going.time_taken is None
    rows = gradebook(
        QUIZ,
        [
            StudentRow("Dana", 1, ended, key="#roster:1"),
            StudentRow("Dana", 0, going, unfinished=1, key="#roster:2"),
            StudentRow("Eli", 0, None, key="#roster:3", student_number="E1"),
        ],
    )
    assert [(row.student, row.score, row.status, row.student_number) for row in rows] == [
        ("Dana", 1, None, None),
        ("Dana", None, "Not finished", None),
        ("Eli", None, "Not started", "E1"),
    ]
