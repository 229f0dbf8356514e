"""Our formats against implementations we did not write: a Canvas package made by text2qti
imports with its key and feedback, and pygiftparser reads our GIFT export as we meant it. Where a
peer departs from the format's published description, the test says so."""

import io
import re
import warnings

import pytest
from text2qti.config import Config
from text2qti.qti import QTI
from text2qti.quiz import Quiz as Text2qtiQuiz

from app import formats
from app.formats import gift, qti
from app.formats.common import html_sources
from app.question_types import TYPES

from test_formats import FIXTURES, MITOCHONDRION, SEED, summary

pytestmark = pytest.mark.any_database

with warnings.catch_warnings():
    # pygiftparser 1.1 (2017) asks for the locale with a call Python deprecates.
    warnings.simplefilter("ignore", DeprecationWarning)
    from pygiftparser import parser as pygift
    from pygiftparser.answer import SelectSet, ShortSet, TrueFalseSet
    from pygiftparser.utils import transformSpecials

TEXT2QTI_QUIZ = """\
Quiz title: Cells & Energy
Quiz description: Where a cell gets its energy.
Shuffle answers: true

Title: mitochondria
1.  Which organelle makes most of a cell's ATP?
... Cellular respiration ends there. See [Mitochondrion](https://en.wikipedia.org/wiki/Mitochondrion).
a)  The ribosome
... Ribosomes build proteins.
*b) The mitochondrion
... Right: on its inner membrane.
c)  日本語 & π
... Not an organelle.

Title: sun
2.  The sun is a star.
*a) True
... Yes: a yellow dwarf.
b)  False
... No: it is the star nearest to us.

Title: membrane
3.  What keeps a cell's contents inside?
... Every cell has one.
*a) The membrane
... It surrounds the cell.
b)  The wall
... Animal cells have none.

4.  Which are even?
[*] 2
[*] 4
[ ] 3
"""


FOURTH = (
    r"cells\.zip/text2qti_assessment_\w+/text2qti_assessment_\w+\.xml: item\[4\] ident='\w+'"
)


def text2qti_package(text: str) -> bytes:
    """The Canvas QTI zip that text2qti writes for a quiz in its text format."""
    config = Config()
    config.load()
    return QTI(Text2qtiQuiz(text, config=config, source_name="cells.txt")).zip_bytes()


def test_a_text2qti_package_imports_with_its_key_and_feedback():
    """text2qti's package: its manifest, Canvas settings, item feedback per choice and general
    feedback, its true/false question and its question with several right answers, all read as
    text2qti's author wrote them."""
    source = qti.parse(text2qti_package(TEXT2QTI_QUIZ), "cells.zip")
    assert (source.title, source.description, source.shuffle_choices) == (
        "Cells & Energy", "Where a cell gets its energy.", True,
    )  # fmt: skip
    assert [(q.id, q.type) for q in source.questions] == [
        ("mitochondria", "single_choice"), ("sun", "true_false"), ("membrane", "single_choice"),
        ("", "multiple_answers"),
    ]  # fmt: skip
    # text2qti typesets Markdown, turning the apostrophe into a typographic one.
    assert summary(source) == [
        ("Which organelle makes most of a cell’s ATP?",
         [("The ribosome", False, "Ribosomes build proteins."),
          ("The mitochondrion", True, "Right: on its inner membrane."),
          ("日本語 & π", False, "Not an organelle.")],
         # The Markdown text2qti was given comes back as Markdown, its link a source too.
         "Cellular respiration ends there. See "
         "[Mitochondrion](https://en.wikipedia.org/wiki/Mitochondrion).", [MITOCHONDRION]),
        ("The sun is a star.",
         [("True", True, "Yes: a yellow dwarf."),
          ("False", False, "No: it is the star nearest to us.")], "", []),
        ("What keeps a cell’s contents inside?",
         [("The membrane", True, "It surrounds the cell."),
          ("The wall", False, "Animal cells have none.")],
         "Every cell has one.", []),
        ("Which are even?", [("2", True, ""), ("4", True, ""), ("3", False, "")], "", []),
    ]  # fmt: skip
    assert source.skipped == ()
    assert re.fullmatch(FOURTH, source.places[3])
    imported = formats.to_quiz(source, "cells", None, None)
    assert [str(gap) for gap in imported.gaps] == [
        f'{source.places[1]}: question "sun" lacks general feedback (the explanation); a source '
        "(an https:// link in the general feedback)",
        f'{source.places[2]}: question "membrane" lacks a source (an https:// link in the general '
        "feedback)",
        f'{source.places[3]}: question "q4" lacks feedback on choices 1, 2, 3; general feedback '
        "(the explanation); a source (an https:// link in the general feedback)",
    ]


def peer_reading(data: bytes) -> list:
    """What pygiftparser makes of a GIFT file, as plain values, its escapes undone as it would
    render them."""
    return pygift.parseFile(io.StringIO(data.decode("utf-8")))


def test_pygiftparser_reads_our_gift_export_as_we_wrote_it():
    """Every question of the seed quiz's GIFT export: pygiftparser finds the same title, prompt,
    choices, key, each choice's feedback and the general feedback, as HTML whose links are its
    sources (pygiftparser takes the feedback's own `[html]` off, as Moodle does)."""
    peer = peer_reading(gift.write(SEED))
    assert len(peer) == len(SEED.questions)
    for read, question in zip(peer, SEED.questions, strict=True):
        assert isinstance(read.answers, SelectSet)
        assert (transformSpecials(read.title), transformSpecials(read.text)) == (
            question.id, question.prompt,
        )  # fmt: skip
        assert [
            (transformSpecials(a.answer), a.select, transformSpecials(a.feedback))
            for a in read.answers.answers
        ] == [(c.text, c.correct, c.explanation) for c in question.choices]
        general = transformSpecials(read.generalFeedback)
        assert html_sources(general) == (question.explanation, question.references)


def test_pygiftparser_reads_true_false_feedback_the_way_we_do():
    """Moodle reads `{TRUE#a#b}` with a as the feedback on a wrong answer and b on the right one;
    pygiftparser agrees with our reading of the fixture."""
    peer = {q.title: q for q in peer_reading((FIXTURES / "features.gift").read_bytes())}
    ours = {
        q.id: q
        for q in gift.parse((FIXTURES / "features.gift").read_bytes(), "features.gift").questions
    }
    for title in ("sun", "moon"):
        answers = peer[title].answers
        assert isinstance(answers, TrueFalseSet)
        true, false = ours[title].choices
        right, wrong = (true, false) if answers.answer else (false, true)
        assert (true.text, false.text, right.correct) == ("True", "False", True)
        assert (answers.feedbackCorrect, answers.feedbackWrong) == (
            right.explanation, wrong.explanation,
        )  # fmt: skip


def test_pygiftparser_ends_an_answer_block_at_an_escaped_brace_which_moodle_does_not():
    """Moodle's GIFT lets `\\}` stand for a brace in an answer; pygiftparser 1.1 ends the block
    there, reading the fixture's escapes question as short answer with a cut-off answer. Ours
    reads the two choices the author wrote."""
    data = (FIXTURES / "features.gift").read_bytes()
    peer = {q.title: q for q in peer_reading(data)}["escapes"]
    assert isinstance(peer.answers, ShortSet)
    assert [a.answer for a in peer.answers.answers] == ["All of them\\: \\= \\{"]
    ours = gift.parse(data, "features.gift").questions[1]
    assert [(c.text, c.correct) for c in ours.choices] == [
        ("All of them: = { } ~ #", True), ("None", False),
    ]  # fmt: skip


TEXT2QTI_TYPED = """\
Quiz title: Typed
Quiz description: Numbers and words.

Title: height
1.  How tall is the seedling, in metres?
... Seedlings grow.
=   1.5 +- 0.05

Title: range
2.  Give a number from 1 to 5.
=   [1, 5]

Title: exact
3.  How many chromosomes do humans have?
=   46

Title: words
4.  Who is buried in Grant's tomb?
*   Grant
*   Ulysses S. Grant
"""


def test_text2qti_numerical_and_short_answer_items_import_as_canvas_marks_them():
    """text2qti's numerical items (a margin, a range, an exact number) and its short answer
    come across with their answers, and a student is marked as Canvas would mark them."""
    source = qti.parse(text2qti_package(TEXT2QTI_TYPED), "typed.zip")
    assert source.skipped == ()
    height, span, exact, words = source.questions
    assert [(q.type, q.explanation) for q in source.questions] == [
        ("numerical", "Seedlings grow."), ("numerical", ""), ("numerical", ""),
        ("short_answer", ""),
    ]  # fmt: skip
    ranges = [[(a.value, a.tolerance) for a in q.answers] for q in (height, span, exact)]
    assert ranges == [[(1.5, 0.05)], [(3, 2)], [(46, 0)]]
    assert [a.text for a in words.answers] == ["Grant", "Ulysses S. Grant"]
    numerical, short = TYPES["numerical"], TYPES["short_answer"]
    assert [numerical.grade(span, r).correct for r in ("1", "5", "5.01")] == [True, True, False]
    assert short.grade(words, "ulysses s.  grant").correct
