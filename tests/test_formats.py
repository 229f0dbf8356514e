"""Quiz formats: hand-written files in each format read as their authors meant, and the seed quiz
comes back from every export as it went in."""

import base64
import dataclasses
import io
import json
import re
import zipfile
from pathlib import Path

import pytest

from app import formats, images
from app.bank import UNFILLED, BankError, build_quiz, load_bank, problems
from app.config import PROJECT_ROOT
from app.formats import aiken, gift, moodle_xml, qti, qti3
from app.formats.common import Unsupported
from app.question_types import TYPES, Reference, type_of
from app.text import plain

pytestmark = pytest.mark.any_database

FIXTURES = Path(__file__).with_name("fixtures") / "formats"
SEED = load_bank(PROJECT_ROOT / "questions.json").quizzes["gradient-checkpointing"]


def canvas_package() -> bytes:
    """The hand-written Canvas export, zipped as Canvas ships it."""
    folder = FIXTURES / "canvas-qti"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            package.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def qti3_package() -> bytes:
    """The hand-written QTI 3.0 package, zipped with its manifest at the root."""
    folder = FIXTURES / "qti3"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            package.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def summary(source: formats.Source) -> list[tuple]:
    """Each question as (prompt, [(choice, right, feedback)], explanation, references)."""
    return [
        (
            q.prompt,
            [(c.text, c.correct, c.explanation) for c in q.choices],
            q.explanation,
            [(r.title, r.url) for r in q.references],
        )
        for q in source.questions
    ]


CELL = images.prepared((FIXTURES / "canvas-qti" / "web_resources" / "cell.png").read_bytes())[0]
"""The address here of the picture in the Canvas package."""
MITOCHONDRION = ("Mitochondrion", "https://en.wikipedia.org/wiki/Mitochondrion")


def test_gift_reads_every_feature_of_the_format():
    """Titles, comments, escapes, multi-line text, [html] and [markdown], per-answer and
    general feedback, Unicode and the missing-word form, each as its author meant."""
    source = gift.parse((FIXTURES / "features.gift").read_bytes(), "features.gift")
    assert source.title == "Cells and Energy"
    assert [q.id for q in source.questions] == [
        "mitochondria", "escapes", "multi line", "html", "markdown", "unicode", "", "sun",
        "short", "numeric", "partial", "moon",
    ]  # fmt: skip
    assert [q.type for q in source.questions].count("true_false") == 2
    assert summary(source) == [
        ("Which organelle makes most of a cell's ATP?",
         [("The mitochondrion", True, "Right: oxidative phosphorylation happens on its inner "
           "membrane."),
          ("The ribosome", False, "Ribosomes build proteins; they use ATP rather than make it."),
          ("The nucleus", False, "The nucleus keeps the DNA.")],
         "Cellular respiration ends in the mitochondria.", [MITOCHONDRION]),
        ("Which is written with GIFT's escapes: 1 = 1, {braces}, a ~tilde, a #hash and a colon: "
         "here?",
         [("All of them: = { } ~ #", True, "Each mark is preceded by a backslash."),
          ("None", False, "Wrong.")],
         "A backslash is written \\ too.", []),
        ("This prompt runs\nover two lines.",
         [("Wrong one", False, "No."), ("Right one", True, "Yes.")], "", []),
        # HTML comes in as the Markdown the editor shows: bold, italic and a link stay.
        ("Water is H2O & salt is **NaCl**.\n\nWhich is a compound?",
         [("*Both*", True, "Both combine elements."), ("Neither", False, "They are.")],
         "See [Chemical compound](https://en.wikipedia.org/wiki/Chemical_compound).",
         [("Chemical compound", "https://en.wikipedia.org/wiki/Chemical_compound")]),
        ("Which is **bold** in Markdown?",
         [("Two asterisks", True, "Yes."), ("One underscore", False, "That is italic.")], "", []),
        ("Ünïcödé: which Greek letter is π?",
         [("pi", True, "π ≈ 3.14159"), ("mu", False, "μ is mu."), ("日本語", False, "Not Greek.")],
         "", []),
        ("The missing word: a cell's _____ keeps its contents inside.",
         [("membrane", True, "It surrounds the cell."), ("wall", False, "Animal cells have none.")],
         "", []),
        # As Moodle reads {TRUE#a#b}: a is the feedback on the wrong answer, b on the right one.
        ("The sun is a star.",
         [("True", True, "Yes: a yellow dwarf."), ("False", False, "No: it is the star nearest "
          "to us.")],
         "It shines by fusion.", []),
        # Every answer = is a short answer; {#...} a number: answers, no choices.
        ("Name the powerhouse of the cell.", [], "", []),
        ("How many chromosomes do humans have?", [], "", []),
        # No = answer: several may be right, each with its weight, as Moodle reads it.
        ("Which are primes?", [("2", True, ""), ("3", True, ""), ("4", False, "")], "", []),
        ("The moon is a star.", [("True", False, ""), ("False", True, "")], "", []),
    ]  # fmt: skip
    short, numeric, partial = source.questions[8:11]
    assert [a.text for a in short.answers] == ["mitochondrion", "mitochondria"]
    assert [(a.value, a.tolerance) for a in numeric.answers] == [(46, 0)]
    assert partial.type == "multiple_answers"
    assert [c.fraction for c in partial.choices] == [0.5, 0.5, -1]
    assert [str(skip) for skip in source.skipped] == [
        "features.gift:44: skipped, an essay question",
        "features.gift:46: skipped, a matching question",
        "features.gift:50: skipped, 2 answers each fully right (=); a one-answer question has "
        "exactly one",
        "features.gift:52: skipped, a description with no answers",
    ]
    assert source.places[:2] == ("features.gift:5", "features.gift:13")


def test_moodle_xml_reads_cdata_html_plain_text_and_feedback():
    """CDATA and escaped HTML, plain_text, each answer's <feedback>, <generalfeedback> with
    its links as sources, the category as title and its info as description; feedback for any
    right or wrong answer follows the answers' own, unless it is Moodle's standard sentence."""
    source = moodle_xml.parse((FIXTURES / "features.xml").read_bytes(), "features.xml")
    assert (source.title, source.description, source.shuffle_choices) == (
        "Cells", "Questions about **cells**.", True,
    )  # fmt: skip
    assert [q.id for q in source.questions] == [
        "Mitochondria", "Unicode, plain text", "Several answers allowed", "With an image", "Sun",
        "Powerhouse",
    ]  # fmt: skip
    assert [q.type for q in source.questions[2:]] == [
        "multiple_answers", "single_choice", "true_false", "short_answer",
    ]  # fmt: skip
    assert [c.fraction for c in source.questions[2].choices] == [0.5, 0.5, -1]
    assert summary(source) == [
        ("Which organelle makes most of a cell's **ATP**?",
         [("The mitochondrion", True, "Right: on its inner membrane."),
          ("The ribosome", False, "Ribosomes build proteins."),
          ("The nucleus & its DNA", False, "")],
         "Cellular respiration ends there.\n\nRead [Mitochondrion](https://en.wikipedia.org/wiki/Mitochondrion).",
         [MITOCHONDRION]),
        ("Ünïcödé & plain text: which Greek letter is π?\nIt runs over two lines.",
         [("pi <π>", True, "π ≈ 3.14159\n\nWell done."),
          ("日本語", False, "Not Greek.\n\nNot quite.")],
         "π is pi; μ is mu.", []),
        ("Which are even?", [("2", True, ""), ("4", True, ""), ("3", False, "")], "", []),
        # A damaged picture is left out, its words in its place.
        ("Which cell is this? a cell", [("Plant", True, ""), ("Animal", False, "")], "", []),
        # True first, whatever order the file gives.
        ("The sun is a star.",
         [("True", True, "Yes: a yellow dwarf."),
          ("False", False, "No: it is the star nearest to us.")],
         "It shines by fusion; see [Sun](https://en.wikipedia.org/wiki/Sun).",
         [("Sun", "https://en.wikipedia.org/wiki/Sun")]),
        ("Name the powerhouse of the cell.", [], "", []),
    ]  # fmt: skip
    assert source.places == (
        "features.xml: /quiz/question[2]", "features.xml: /quiz/question[3]",
        "features.xml: /quiz/question[4]", "features.xml: /quiz/question[6]",
        "features.xml: /quiz/question[7]", "features.xml: /quiz/question[8]",
    )  # fmt: skip
    assert source.unshown == (
        'features.xml: /quiz/question[6]: the picture "cell.png" is left out; its words "a cell" '
        "stand in its place. This file is not a picture: upload a PNG, JPEG, GIF or WebP.",
    )
    assert [str(skip) for skip in source.skipped] == [
        "features.xml: /quiz/question[5]: skipped, partial credit (33.3333%) on answer 2",
        "features.xml: /quiz/question[9]: skipped, of type essay, not multiple choice, "
        "true/false, numerical or short answer",
        "features.xml: /quiz/question[10]: skipped, of type description, not multiple choice, "
        "true/false, numerical or short answer",
    ]


def test_qti_reads_a_canvas_package_with_item_feedback():
    """Canvas's package: the manifest leads to the assessment, itemfeedback to each choice's
    feedback and general_fb to the explanation; the comments for any right answer (correct_fb)
    and any wrong one (general_incorrect_fb) join the choices' own. Canvas's answer ids are
    kept."""
    source = qti.parse(canvas_package(), "canvas.zip")
    assert (source.title, source.description, source.shuffle_choices) == (
        "Cells & Energy (Canvas)", "A quiz exported from **Canvas**.", True,
    )  # fmt: skip
    assert [[c.id for c in q.choices] for q in source.questions] == [
        ["6158", "2473", "9931"], ["true", "false"], ["1", "2", "3"], ["a", "b"],
    ]  # fmt: skip
    assert [q.type for q in source.questions] == [
        "single_choice", "true_false", "multiple_answers", "single_choice",
    ]  # fmt: skip
    assert summary(source) == [
        ("Which organelle makes most of a cell's **ATP**?",
         [("The mitochondrion", True, "Right: on its inner membrane.\n\nWell done."),
          ("The ribosome", False, "Ribosomes build proteins.\n\nNot quite."),
          ("日本語 & π", False, "Not an organelle.\n\nNot quite.")],
         "Cellular respiration ends there.\n\nRead [Mitochondrion](https://en.wikipedia.org/wiki/Mitochondrion).",
         [MITOCHONDRION]),
        ("The sun is a star.",
         [("True", True, "Yes: a yellow dwarf."),
          ("False", False, "No: it is the star nearest to us.")],
         "It shines by fusion; see [Sun](https://en.wikipedia.org/wiki/Sun).",
         [("Sun", "https://en.wikipedia.org/wiki/Sun")]),
        # Canvas scores every right choice ticked and no other: those are the right ones.
        ("Which are even?", [("2", True, ""), ("4", True, ""), ("3", False, "")], "", []),
        # Its picture comes from the package's web_resources, where Canvas keeps course files.
        (f"Which cell is this? ![a cell]({CELL})", [("Plant", True, ""), ("Animal", False, "")],
         "", []),
    ]  # fmt: skip
    assert list(source.pictures) == [CELL] and source.unshown == ()
    where = "canvas.zip/g1a2b3c/g1a2b3c.xml: item"
    other = (
        "not multiple_choice_question, true_false_question, multiple_answers_question, "
        "numerical_question, short_answer_question"
    )
    assert [str(skip) for skip in source.skipped] == [
        f"{where}[4] ident='i0004': skipped, of type essay_question, {other}",
        f"{where}[5] ident='i0005': skipped, partial credit (50 of 100) on an answer",
    ]


def test_qti_never_takes_canvas_comment_on_wrong_answers_for_the_explanation():
    """Canvas puts its comment for wrong answers under an <other> condition too, as it does the
    general feedback: without a general_fb, that comment is not the question's explanation."""
    data = (FIXTURES / "canvas-qti" / "g1a2b3c" / "g1a2b3c.xml").read_text(encoding="utf-8")
    general = re.compile(
        r'<respcondition continue="Yes">\s*<conditionvar><other/></conditionvar>\s*'
        r'<displayfeedback feedbacktype="Response" linkrefid="general_fb"/>\s*</respcondition>'
        r'|<itemfeedback ident="general_fb">.*?</itemfeedback>',
        re.S,
    )
    data, removed = general.subn("", data)
    assert removed == 4  # the condition and the text, for each of the two questions
    first = qti.parse(data.encode(), "no-general.xml").questions[0]
    assert (first.explanation, first.choices[1].explanation) == (
        "", "Ribosomes build proteins.\n\nNot quite.",
    )  # fmt: skip


def test_qti_reads_a_bare_assessment_file_too():
    """An assessment XML without its package reads the same items."""
    data = (FIXTURES / "canvas-qti" / "g1a2b3c" / "g1a2b3c.xml").read_bytes()
    source = qti.parse(data, "g1a2b3c.xml")
    assert source.title == "Cells & Energy (Canvas)"
    packaged = summary(qti.parse(canvas_package(), "canvas.zip"))
    assert summary(source)[:-1] == packaged[:-1]
    # Without its package, the picture is not there: its words stand in, and the report says so.
    assert summary(source)[-1][0] == "Which cell is this? a cell"
    assert source.unshown == (
        "g1a2b3c.xml: item[6] ident='i0006': the picture \"cell.png\" is not in the file; its "
        'words "a cell" stand in its place',
    )


def test_qti3_reads_a_package_with_every_kind_of_feedback():
    """The manifest leads to the items and the test (title, and its rubric block as the
    description); a choice's feedback comes inline in it, or as modal feedback or a feedback
    block that the response processing shows for that choice, for the right answer or for a
    wrong one; feedback shown always is the explanation. The key may come from a mapping."""
    source = qti3.parse(qti3_package(), "cells.zip")
    assert (source.title, source.description, source.shuffle_choices) == (
        "Cells & Energy (QTI 3)", "Questions about cells and *where* they get energy.", False,
    )  # fmt: skip
    assert [(q.id, q.type) for q in source.questions] == [
        ("mitochondria", "single_choice"), ("sun", "true_false"), ("unicode", "single_choice"),
        ("membrane", "single_choice"), ("even", "multiple_answers"), ("picture", "single_choice"),
    ]  # fmt: skip
    assert [[c.id for c in q.choices] for q in source.questions][0] == ["ribo", "mito", "nucleus"]
    assert summary(source) == [
        ("Which organelle makes most of a cell’s ATP?",
         [("The ribosome", False, "Ribosomes build proteins."),
          ("The **mitochondrion**", True, "Right: on its inner membrane."),
          ("The nucleus & its DNA", False, "")],
         "Cellular respiration ends there.\n\nRead [Mitochondrion](https://en.wikipedia.org/wiki/Mitochondrion).",
         [MITOCHONDRION]),
        ("The sun is a star.\nTrue or false?",
         [("True", True, "Yes: a yellow dwarf."), ("False", False, "No: it is the star nearest "
          "to us.")], "", []),
        ("Ünïcödé & <markup>: which Greek letter is π?",
         [("π", True, "π ≈ 3.14159"), ("日本語", False, "")], "", []),
        ("What keeps a cell’s contents inside?",
         [("The membrane", True, "It surrounds the cell."),
          ("The wall", False, "Animal cells have none.")], "", []),
        # Several values in the correct response, and no mapping: each right one an equal share.
        ("Which are even?", [("2", True, ""), ("4", True, ""), ("3", False, "")], "", []),
        # The picture beside the item, named relative to it.
        (f"Which cell is this? ![A cell]({CELL})", [("Plant", True, ""), ("Animal", False, "")],
         "", []),
    ]  # fmt: skip
    assert list(source.pictures) == [CELL]
    assert [c.fraction for c in source.questions[4].choices] == [0.5, 0.5, -0.5]
    where = "cells.zip/items/{}.xml: qti-assessment-item identifier={!r}"
    assert source.places[1] == where.format("sun", "sun")
    assert [str(skip) for skip in source.skipped] == [
        f"{where.format('partial', 'pi')}: skipped, partial credit (0.5 of 1) on an answer",
        f"{where.format('essay', 'osmosis')}: skipped, it has qti-extended-text-interaction, not "
        "one choice or text entry interaction",
    ]


def test_qti3_reads_a_bare_item_file_too():
    data = (FIXTURES / "qti3" / "items" / "sun.xml").read_bytes()
    source = qti3.parse(data, "sun.xml")
    assert summary(source) == summary(qti3.parse(qti3_package(), "cells.zip"))[1:2]
    assert formats.guess_format(data) == "qti3"


def test_the_format_is_told_apart_by_namespace_and_manifest():
    """QTI 3.0 by its manifest's item type or its root element; QTI 1.2 by questestinterop."""
    assert formats.guess_format(qti3_package()) == "qti3"
    assert formats.guess_format(qti3.write(SEED)) == "qti3"
    assert formats.guess_format(canvas_package()) == "qti"
    assert formats.guess_format(qti.write(SEED)) == "qti"
    assert formats.guess_format(b"<?xml version='1.0'?><questestinterop/>") == "qti"
    assert formats.guess_format(b"<quiz/>") == "moodle-xml"


def qti3_item(processing: str, feedback: str, declaration: str = "") -> bytes:
    """A QTI 3.0 item with two choices, its key "a", and the given rules and feedback."""
    declaration = declaration or (
        '<qti-response-declaration identifier="RESPONSE" cardinality="single" '
        'base-type="identifier"><qti-correct-response><qti-value>a</qti-value>'
        "</qti-correct-response></qti-response-declaration>"
    )
    return (
        f'<qti-assessment-item xmlns="{qti3.NAMESPACE}" identifier="q">{declaration}'
        '<qti-item-body><p>Q?</p><qti-choice-interaction response-identifier="RESPONSE">'
        '<qti-simple-choice identifier="a">A</qti-simple-choice>'
        '<qti-simple-choice identifier="b">B</qti-simple-choice></qti-choice-interaction>'
        f"</qti-item-body><qti-response-processing>{processing}</qti-response-processing>"
        f"{feedback}</qti-assessment-item>"
    ).encode()


CONDITIONAL = (
    '<qti-response-condition><qti-response-if><qti-gte><qti-variable identifier="SCORE"/>'
    '<qti-base-value base-type="float">1</qti-base-value></qti-gte><qti-set-outcome-value '
    'identifier="FEEDBACK"><qti-base-value base-type="identifier">high</qti-base-value>'
    "</qti-set-outcome-value></qti-response-if></qti-response-condition>"
)
MODAL = (
    '<qti-modal-feedback outcome-identifier="FEEDBACK" identifier="{}" show-hide="{}">'
    "<qti-content-body>Why.</qti-content-body></qti-modal-feedback>"
)


@pytest.mark.parametrize(
    ("processing", "feedback", "why"),
    [
        (CONDITIONAL, MODAL.format("high", "show"), 'feedback "high" is shown on a condition the '
         "bank cannot express"),
        ("", MODAL.format("never-set", "show"), 'feedback "never-set" is shown on a condition the '
         "bank cannot express"),
        ('<qti-set-outcome-value identifier="FEEDBACK"><qti-base-value base-type="identifier">'
         "x</qti-base-value></qti-set-outcome-value>", MODAL.format("x", "hide"),
         'feedback "x" is shown on a condition the bank cannot express'),
        ('<qti-response-condition><qti-response-if/><qti-response-else><qti-set-outcome-value '
         'identifier="FEEDBACK"><qti-base-value base-type="identifier">e</qti-base-value>'
         "</qti-set-outcome-value></qti-response-else></qti-response-condition>",
         MODAL.format("e", "show"), 'feedback "e" is shown on a condition the bank cannot '
         "express"),
    ],
)  # fmt: skip
def test_qti3_feedback_the_bank_cannot_place_skips_the_item(processing, feedback, why):
    """Feedback shown on a score, never shown, or hidden by its outcome has no place in the
    bank: the item is skipped and says which feedback, rather than lose it."""
    source = qti3.parse(qti3_item(processing, feedback), "q.xml")
    assert [str(skip) for skip in source.skipped] == [
        f"q.xml: qti-assessment-item identifier='q': skipped, {why}"
    ]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (qti3_item("", "", '<qti-response-declaration identifier="OTHER"/>'),
         "q.xml: qti-assessment-item identifier='q': no <qti-response-declaration> for "
         "'RESPONSE'"),
        (qti3_item("", "", '<qti-response-declaration identifier="RESPONSE"><qti-correct-response>'
         "<qti-value>z</qti-value></qti-correct-response></qti-response-declaration>"),
         "q.xml: qti-assessment-item identifier='q': the correct response 'z' is none of the "
         "choices"),
        (b'<qti-assessment-test xmlns="http://www.imsglobal.org/xsd/imsqtiasi_v3p0"/>',
         "q.xml: /qti-assessment-test: a QTI 3.0 item's root is <qti-assessment-item>"),
        (qti3_item("", "").replace(b"<p>Q?</p>", b""),
         "q.xml: qti-assessment-item identifier='q': no question text"),
    ],
)  # fmt: skip
def test_qti3_mistakes_are_located(data, error):
    with pytest.raises(formats.FormatError) as raised:
        qti3.parse(data, "q.xml")
    assert raised.value.errors == [error]


def test_aiken_reads_questions_choices_and_keys():
    """Both choice styles, a question over two lines, questions with no blank line between,
    Unicode, a byte-order mark and Windows line ends."""
    source = aiken.parse((FIXTURES / "features.aiken").read_bytes(), "features.aiken")
    assert summary(source) == [
        ("What is the capital of France?",
         [("Berlin", False, ""), ("Paris", True, ""), ("Madrid", False, "")], "", []),
        ("Which unit measures force?\nIt is named after a physicist.",
         [("Newton", True, ""), ("Joule", False, "")], "", []),
        ("Ünïcödé: which letter is π?", [("pi", True, ""), ("rho", False, "")], "", []),
    ]  # fmt: skip
    assert source.places == ("features.aiken:1", "features.aiken:7", "features.aiken:12")
    crlf = aiken.parse((FIXTURES / "bom-crlf.aiken").read_bytes(), "bom-crlf.aiken")
    assert summary(crlf) == [
        ("With a byte-order mark and Windows line ends?", [("Yes", True, ""), ("No", False, "")],
         "", []),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Q?\nA. x\nB. y\n", "t.aiken:1: the last question has no ANSWER: line"),
        ("Q?\nA. x\nB. y\nANSWER: C\n", "t.aiken:4: ANSWER: C names no choice (the choices are "
         "A, B)"),
        ("Q?\nA. x\nANSWER: A\n", "t.aiken:1: needs at least two choices (A. ..., B. ...)"),
        ("Q?\nA. x\nC. y\nANSWER: A\n", "t.aiken:3: choice C, B was due"),
        ("ANSWER: A\n", "t.aiken:1: ANSWER: with no question before it"),
        ("Q?\n" + "".join(f"{chr(65 + n)}. c{n}\n" for n in range(26)) + "A. again\nANSWER: A\n",
         "t.aiken:28: a question has at most 26 choices, A to Z"),
    ],
)  # fmt: skip
def test_aiken_mistakes_are_located(text, error):
    with pytest.raises(formats.FormatError) as raised:
        aiken.parse(text.encode(), "t.aiken")
    assert raised.value.errors == [error]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Q? {=a ~b", "t.gift:1: the { of the answers is never closed by }"),
        ("Q? } {=a ~b}", "t.gift:1: a } closes no { (write \\} for a brace in text)"),
        ("Q? {=a {~b}", "t.gift:1: a { inside the answers (write \\{ for a brace in text)"),
        ("Q? {=a ~b} more {=c ~d}", "t.gift:1: more than one answer block, or an unescaped "
         "brace after it"),
        ("::title Q? {=a ~b}", "t.gift:1: the title opened with :: is never closed"),
        ("Q? {x =a ~b}", "t.gift:1: the answers must each start with = or ~"),
        ("{=a ~b}", "t.gift:1: the question has no text before its answers"),
        ("{T#no#yes}", "t.gift:1: the question has no text before its answers"),
    ],
)  # fmt: skip
def test_gift_mistakes_are_located(text, error):
    with pytest.raises(formats.FormatError) as raised:
        gift.parse(f"// a good question first\n\nok {{=a ~b}}\n\n{text}\n".encode(), "t.gift")
    assert raised.value.errors == [error.replace("t.gift:1", "t.gift:5")]


HINT = " (if an = or ~ in feedback was meant as text, write it \\= or \\~)"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Q? {=4 #Right: 2 + 2 = 4.\n~5 #No.}", "2 answers each fully right (=); a one-answer "
         "question has exactly one" + HINT),
        ("Q? {~4 #No: x ~ y.\n~5 #No.}", "no answer is right" + HINT),
        # Each answer on its own line: two right answers, and nothing to hint at.
        ("Q? {=4 #Yes.\n=5 #Also.\n~6 #No.}", "2 answers each fully right (=); a one-answer "
         "question has exactly one"),
    ],
)  # fmt: skip
def test_an_unescaped_mark_in_gift_feedback_is_pointed_at(text, why):
    """Feedback holding = or ~ splits into answers, in Moodle too: the skip says how to escape
    it when an answer began on the line of the feedback before it."""
    source = gift.parse(f"{text}\n".encode(), "t.gift")
    assert [str(skip) for skip in source.skipped] == [f"t.gift:1: skipped, {why}"]
    escaped = gift.parse(b"Q? {=4 #Right: 2 + 2 \\= 4.\n~5 #No.}\n", "t.gift")
    assert escaped.questions[0].choices[0].explanation == "Right: 2 + 2 = 4."


def test_gift_in_moodles_own_format_is_read_as_the_html_moodle_shows():
    """Moodle shows its default text format's tags as HTML: a lecturer's link in the general
    feedback is a source titled by its text, not literal `<a href=...>` and a host name; line
    breaks stay; [plain] text, a bare `<` and a generic type are text as written."""
    data = (
        "::a:: Which <b>organelle</b>\nmakes ATP? {=The mitochondrion #Right ~The ribosome #No\n"
        '####Read <a href\\="https://example.org/cells">Chapter 2</a>.}\n\n'
        "::b:: [plain]Is <b>x</b> < y? {=Yes #Right ~No #Wrong\n####See https://example.org/b}\n\n"
        "::c:: Is x < y and y > z? {=Yes #Right ~No #Wrong\n####See https://example.org/c}\n\n"
        "::d:: Is List<String> a <T>? {=Yes #Right ~No #Wrong\n####See https://example.org/d}\n"
    )
    a, b, c, d = gift.parse(data.encode(), "t.gift").questions
    assert (a.prompt, a.explanation) == (
        "Which **organelle**\nmakes ATP?", "Read [Chapter 2](https://example.org/cells)."
    )
    assert a.references == (Reference("Chapter 2", "https://example.org/cells"),)
    assert b.prompt == "Is <b>x</b> < y?"
    assert c.prompt == "Is x < y and y > z?"
    assert d.prompt == "Is List<String> a <T>?"  # no HTML element: text, as a programmer means it


def test_gift_html_in_moodles_format_shows_what_moodle_shows_and_no_more():
    """Character references decode, embedded media is left out and reported, a script's or
    style's text is dropped; an export from before [plain] reads its [moodle] text as written; a
    category of Moodle's roots only titles nothing."""
    data = (
        "$CATEGORY: $course$/top\n\n"
        "::a:: Caf&eacute;&nbsp;menu &mdash; is List&lt;String&gt; &amp; more? "
        "{=Yes #Right ~No #Wrong\n####See https://example.org/a}\n\n"
        '::b:: Watch <iframe src\\="https://example.org/v"></iframe> now? '
        "{=Yes #Right ~No #Wrong\n####See https://example.org/b}\n\n"
        "::c:: <b>Hi</b><script>alert(1)</script><style>p\\{color:red\\}</style>? "
        "{=Yes #Right ~No #Wrong\n####See https://example.org/c}\n"
    )
    source = gift.parse(data.encode(), "t.gift")
    a, b, c = source.questions
    assert a.prompt == "Caf\u00e9 menu \u2014 is List<String> & more?"
    assert (b.prompt, c.prompt) == ("Watch now?", "**Hi**?")
    assert source.skipped == ()
    assert source.unshown == (
        't.gift:6: an embedded page ("v") is left out: Quizwright shows pictures, not sound, '
        "video or embedded pages",
    )
    assert source.title is None
    mixed = b"Q? {=a #Yes ~b #No\n####Order is <i>transitive</i>.<br>Source\\: <https\\://example.org/t>}\n"
    [linked] = gift.parse(mixed, "t.gift").questions
    assert linked.references == (Reference("example.org/t", "https://example.org/t"),)
    old_export = (
        "// quizwright-slug: old\n\n"
        "::q:: [moodle]Is <b>x</b> &amp; y? {=Yes #Right: <p> stays. ~No #Wrong\n"
        '####[html]<p>See <a href\\="https://example.org/q">Q</a></p>}\n'
    )
    [q] = gift.parse(old_export.encode(), "old.gift").questions
    # As written: the bank's Markdown escapes what it would otherwise read as its own marks.
    assert (plain(q.prompt), q.choices[0].explanation) == (
        "Is <b>x</b> &amp; y?", "Right: <p> stays."
    )
    assert q.references == (Reference("Q", "https://example.org/q"),)


def test_general_feedback_that_was_only_a_source_is_said_to_be_kept_as_one():
    """A lecturer's "label: URL" line is the source; their only feedback, so the gap says where
    it went rather than that there was none."""
    data = b"::a:: Q? {=4 #Right ~5 #No\n####Chen et al. (2016)\\: https\\://arxiv.org/abs/1604.06174}\n"
    source = gift.parse(data, "s.gift")
    assert source.questions[0].references == (
        Reference("Chen et al. (2016)", "https://arxiv.org/abs/1604.06174"),
    )
    assert [str(gap) for gap in formats.to_quiz(source, "s", None, "d").gaps] == [
        's.gift:1: question "a" lacks general feedback (the explanation; its one line with a '
        "link became the source)"
    ]


def test_a_true_false_answer_moodle_cannot_read_is_located():
    """A truefalse question's answers must read true and false: anything else is an error, not a
    guess at which choice is which."""
    data = (
        b'<quiz><question type="truefalse"><questiontext><text>Sun?</text></questiontext>'
        b'<answer fraction="100"><text>yes</text></answer>'
        b'<answer fraction="0"><text>false</text></answer></question></quiz>'
    )
    with pytest.raises(formats.FormatError) as raised:
        moodle_xml.parse(data, "tf.xml")
    assert raised.value.errors == [
        'tf.xml: /quiz/question[1]/answer[1]: a true/false answer reads "yes", not "true" or '
        '"false"'
    ]


def test_a_gift_picture_written_as_a_data_address_comes_with_the_question():
    """GIFT carries no files, but HTML may hold a picture as a data: address: it comes along.
    One the file only names is reported, its words in its place; one without words is left
    out, as the bank shows no picture unsaid."""
    png = (FIXTURES / "canvas-qti" / "web_resources" / "cell.png").read_bytes()
    data = base64.b64encode(png).decode().replace("=", "\\=")
    text = (f'[html]Which cell? <img src\\="data:image/png;base64,{data}" alt\\="A cell"> '
            '{=Plant #<img src\\="plant.png" alt\\="a leaf">Yes ~Animal #<img src\\="x.png">No}')
    source = gift.parse(text.encode(), "m.gift")
    [question] = source.questions
    assert question.prompt == f"Which cell? ![A cell]({CELL})"
    assert [c.explanation for c in question.choices] == ["a leafYes", "No"]
    assert list(source.pictures) == [CELL]
    assert source.unshown == (
        'm.gift:1: the picture "plant.png" is not in the file; its words "a leaf" stand in its '
        "place",
        'm.gift:1: the picture "x.png" is not in the file',
    )


def test_every_malformed_question_is_reported_at_once():
    """Two broken questions, two located errors: the author fixes both in one go."""
    text = b"A? {=a ~b\n\nB? {=c ~d}\n\nC? } x\n"
    with pytest.raises(formats.FormatError) as raised:
        gift.parse(text, "two.gift")
    assert raised.value.errors == [
        "two.gift:1: the { of the answers is never closed by }",
        "two.gift:5: a } closes no { (write \\} for a brace in text)",
    ]


def comparable(quiz, ids=True) -> list[dict]:
    """A quiz's questions as plain values: what a round trip must keep."""
    return [
        {
            "id": q.id if ids else None,
            "prompt": q.prompt,
            "choices": [
                (c.id if ids else None, c.text, c.correct, c.explanation) for c in q.choices
            ],
            "explanation": q.explanation,
            "references": q.references,
            "evidence": q.evidence,
        }
        for q in quiz.questions
    ]


def round_trip(format_name: str, quiz=SEED, description=None):
    """Export a quiz, import the file again, and build the bank quiz it makes."""
    module = formats.FORMATS[format_name]
    source = module.parse(module.write(quiz), f"seed.{format_name}")
    imported = formats.to_quiz(source, quiz.slug, None, description or quiz.description)
    left = problems({"quizzes": [imported.quiz]})
    assert [problem for problem in left if not problem.endswith(UNFILLED)] == []
    return build_quiz(imported.quiz), imported, source


KEEPS_CHOICE_IDS = ("qti", "qti3")


@pytest.mark.parametrize("format_name", ["gift", "moodle-xml", "qti", "qti3"])
def test_the_seed_quiz_round_trips(format_name):
    """Question ids, prompts, choices, the key, every explanation and every source come back
    from an export; QTI keeps choice ids too, the others number them."""
    back, imported, source = round_trip(format_name)
    assert imported.gaps == [] and source.skipped == ()
    assert source.slug == SEED.slug
    assert {q.evidence for q in back.questions} == {"checkpointing", None}
    assert back.title == SEED.title
    keeps_choice_ids = format_name in KEEPS_CHOICE_IDS
    assert comparable(back, ids=keeps_choice_ids) == comparable(SEED, ids=keeps_choice_ids)
    assert [q.id for q in back.questions] == [q.id for q in SEED.questions]


@pytest.mark.parametrize("format_name", ["moodle-xml", "qti", "qti3"])
def test_xml_formats_carry_the_description_and_shuffling(format_name):
    back, _, source = round_trip(format_name, description="unused")
    assert source.description == SEED.description
    assert source.shuffle_choices is SEED.shuffle_choices is True


def test_aiken_round_trips_what_it_can_carry():
    """Prompts, choices and the key come back; every explanation becomes a gap to fill."""
    back, imported, _ = round_trip("aiken")
    assert [(q.prompt, [(c.text, c.correct) for c in q.choices]) for q in back.questions] == [
        (" ".join(q.prompt.split()), [(c.text, c.correct) for c in q.choices])
        for q in SEED.questions
    ]
    assert len(imported.gaps) == len(SEED.questions)
    # Four choices' feedback, the explanation, a reference's title and address, per question.
    unfilled = problems({"quizzes": [imported.quiz]})
    assert len(unfilled) == 7 * len(SEED.questions)
    assert unfilled[0] == (
        'quiz "gradient-checkpointing", question "q1", field "choices[0].explanation": ' + UNFILLED
    )
    assert imported.gaps[0].what == (
        'question "q1" lacks feedback on choices 1, 2, 3, 4; general feedback (the explanation); '
        "a source (an https:// link in the general feedback)"
    )
    assert set(aiken.DROPS) >= {"every choice's explanation", "the quiz's title and description"}


AWKWARD = build_quiz(
    {
        "slug": "awkward",
        "title": "Braces {and} ~tildes~ = # : \\ / ]]> <tags> & “quotes”",
        "description": "Line one.\nLine two.",
        "questions": [
            {
                "id": "marks",
                "prompt": "Is {this} = ~that~ #1: a \\ backslash, <b>not bold</b> & ]]> ok?\n"
                "A second line.\n\nA second paragraph.",
                "choices": [
                    {"id": "yes", "text": "Yes: = ~ # { } \\", "correct": True,
                     "explanation": "Every mark survives: ]]> <script>alert(1)</script>"},
                    {"id": "no", "text": "日本語 🙂", "correct": False,
                     "explanation": "Sources: is not a sources line here"},
                ],
                "explanation": "First paragraph.\n\nSecond, with a link-like <https://x>.",
                "references": [
                    {"title": "A; title <with> marks", "url": "https://example.org/a?b=1&c=2"},
                    {"title": "Second", "url": "https://example.org/b#frag"},
                ],
            }
        ],
    }
)  # fmt: skip


@pytest.mark.parametrize("format_name", ["gift", "moodle-xml", "qti", "qti3"])
def test_text_that_looks_like_markup_survives_a_round_trip(format_name):
    """Each format's special characters, HTML, CDATA's end, line breaks, paragraphs, emoji
    and sources with ; and & in them come back unchanged."""
    back, _, _ = round_trip(format_name, AWKWARD)
    ids = format_name in KEEPS_CHOICE_IDS
    assert comparable(back, ids=ids) == comparable(AWKWARD, ids=ids)


RICH = build_quiz(
    {
        "slug": "rich",
        "title": "Rich",
        "description": "Markdown *everywhere*.",
        "questions": [
            {
                "id": "md",
                "prompt": "Which call is **non-reentrant**: `checkpoint(f, use_reentrant=False)`?\n"
                "See [the docs](https://pytorch.org/docs/stable/checkpoint.html).",
                "choices": [
                    {"id": "a", "text": "*This* one", "correct": True,
                     "explanation": "Right:\n\n- it keeps **no** activations\n- it runs `f` "
                     "again\n\n1. first\n2. second"},
                    {"id": "b", "text": "`torch.cuda.empty_cache()`", "correct": False,
                     "explanation": "No: see <https://pytorch.org/docs/stable/notes/cuda.html>."
                     "\n\n```\nx = 1\n  y = 2\n```"},
                ],
                "explanation": "Recompute, as [Chen et al.](https://arxiv.org/abs/1604.06174) "
                "*showed*.\nA second line.",
                "references": [
                    {"title": "Chen et al. (2016)", "url": "https://arxiv.org/abs/1604.06174"},
                ],
            }
        ],
    }
)  # fmt: skip


@pytest.mark.parametrize("format_name", ["gift", "moodle-xml", "qti", "qti3"])
def test_rich_text_survives_a_round_trip(format_name):
    """Emphasis, code, links, line breaks, lists and code blocks come back as the same Markdown
    (QTI 3.0 writes a choice's feedback as a block for its lists and code)."""
    back, _, _ = round_trip(format_name, RICH)
    ids = format_name in KEEPS_CHOICE_IDS
    assert comparable(back, ids=ids) == comparable(RICH, ids=ids)


def test_html_links_in_feedback_become_sources():
    """An LMS's general feedback that links https pages gives the question its sources; an
    http link is not one the bank accepts."""
    text, references = formats.common.html_sources(
        '<p>See <a href="https://a.example/x">the paper</a> and <a href="http://b.example">b</a>.</p>'
    )
    assert (text, references) == (
        "See [the paper](https://a.example/x) and [b](http://b.example).",
        (Reference("the paper", "https://a.example/x"),),
    )  # fmt: skip


@pytest.mark.parametrize("format_name", ["gift", "moodle-xml", "qti", "qti3"])
def test_only_well_formed_carried_keys_are_read(format_name):
    """A slug or evidence key the bank would refuse, edited into an export by hand, is not
    carried: the import falls back to the title and no evidence, as for any other file."""
    question = dataclasses.replace(SEED.questions[0], evidence="bad key!")
    quiz = dataclasses.replace(SEED, slug="Not A Slug", questions=(question,))
    source = formats.FORMATS[format_name].parse(
        formats.FORMATS[format_name].write(quiz), f"edited.{format_name}"
    )
    assert source.slug is None
    assert source.questions[0].evidence is None


def test_the_marks_an_export_carries_are_documented_per_format():
    """Each module's docstring says where its exports carry the slug and evidence keys, and
    Aiken, which has no room, lists the evidence links among what it drops."""
    for module in (gift, moodle_xml, qti, qti3):
        assert "slug" in module.__doc__ and "evidence" in module.__doc__
    assert "evidence links" in aiken.DROPS


def unsourced(explanation: str, format_name: str) -> bytes:
    """A one-question file in a format whose general feedback is only explanation, with no
    "Sources:" line: as an author who pastes a link into Moodle's general feedback writes it."""
    question = dataclasses.replace(
        SEED.questions[0], explanation=explanation, references=(), evidence=None
    )
    data = formats.FORMATS[format_name].write(dataclasses.replace(SEED, questions=(question,)))
    if format_name in ("qti", "qti3"):
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            names = [n for n in package.namelist() if n.count("/") and "meta" not in n]
            data = package.read(names[0])
    # The writers' empty "Sources:" line, in each format's escaping.
    for empty in (b"<p>Sources\\: </p>", b"<p>Sources: </p>", b"&lt;p&gt;Sources: &lt;/p&gt;"):
        data = data.replace(empty, b"")
    assert b"Sources" not in data
    return data


@pytest.mark.parametrize("format_name", ["gift", "moodle-xml", "qti", "qti3"])
def test_plain_https_links_in_general_feedback_become_sources(format_name):
    """A link typed as plain text in the general feedback is a source, as README says, so the
    question lacks none: in a sentence it stays (titled by its host and path); alone on its
    line after a label, the label titles it and the line leaves the explanation."""
    explanation = (
        "General https://example.org/x\n\nChen et al. (2016): https://arxiv.org/abs/1604.06174"
    )
    data = unsourced(explanation, format_name)
    source = formats.FORMATS[format_name].parse(data, f"linked.{format_name}")
    (question,) = source.questions
    assert question.explanation == "General https://example.org/x"
    assert question.references == (
        Reference("example.org/x", "https://example.org/x"),
        Reference("Chen et al. (2016)", "https://arxiv.org/abs/1604.06174"),
    )
    imported = formats.to_quiz(source, "linked", None, "About links.")
    assert imported.gaps == []


def test_a_question_citing_more_sources_than_the_bank_holds_keeps_the_first_20_and_says_so():
    """Every https link of general feedback becomes a source, and a question holds 20: the
    import keeps the first 20 and notes it, and the quiz it makes passes the bank's check."""
    links = " ".join(f"https://e.org/{n}" for n in range(25))
    source = gift.parse(unsourced(f"Read {links}.", "gift"), "many.gift")
    assert len(source.questions[0].references) == 25
    imported = formats.to_quiz(source, "many", None, "About links.")
    (question,) = imported.quiz["questions"]
    assert [r["url"] for r in question["references"]] == [f"https://e.org/{n}" for n in range(20)]
    assert imported.noted == [
        "many.gift:5: kept the first 20 of its 25 sources, as many as a question holds"
    ]
    assert problems({"quizzes": [imported.quiz]}) == []
    uploaded = formats.draft_from(unsourced(f"Read {links}.", "gift"), "many.gift")
    assert uploaded.noted == imported.noted  # the browser's report says it too
    too_many = {**question, "references": question["references"] * 2}
    assert problems({"quizzes": [{**imported.quiz, "questions": [too_many]}]}) == [
        'quiz "many", question "the-trade", field "references": has 40; at most 20 are allowed'
    ]


@pytest.mark.parametrize(
    ("text", "explanation", "references"),
    [
        ("Read (https://a.example/p).", "Read (https://a.example/p).",
         [("a.example/p", "https://a.example/p")]),
        ("Why.\nSee: https://en.wikipedia.org/wiki/Cell_(biology).", "Why.",
         [("en.wikipedia.org/wiki/Cell_(biology)", "https://en.wikipedia.org/wiki/Cell_(biology)")]),
        ("Twice https://a.example/ and https://a.example/", "Twice https://a.example/ and "
         "https://a.example/", [("a.example", "https://a.example/")]),
        ("Not a source: http://a.example/x", "Not a source: http://a.example/x", []),
        ("Sources: Cell <https://c.example/>", "", [("Cell", "https://c.example/")]),
    ],
)  # fmt: skip
def test_plain_links_keep_the_sentence_and_lose_its_punctuation(text, explanation, references):
    """A sentence's punctuation is not part of its link, a link given twice is one source, a
    generic label ("See:") does not title it, and http is no source."""
    found = formats.common.split_sources(text)
    assert found == (explanation, tuple(Reference(t, u) for t, u in references))


def test_exports_name_no_external_entities_and_parse_as_xml():
    """The XML exports are well-formed UTF-8 with no DTD, so a hardened reader accepts them."""
    qti3_files = zipfile.ZipFile(io.BytesIO(qti3.write(SEED)))
    assert qti3_files.namelist()[:3] == ["imsmanifest.xml", "test.xml", "items/001-the-trade.xml"]
    for data in (
        moodle_xml.write(SEED),
        *zipfile_members(qti.write(SEED)),
        *(qti3_files.read(name) for name in qti3_files.namelist()),
    ):
        assert b"<!DOCTYPE" not in data
        formats.common.parse_xml(data, "export")


def zipfile_members(data: bytes) -> list[bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        assert sorted(package.namelist()) == [
            "imsmanifest.xml",
            "quizwright-gradient-checkpointing/assessment_meta.xml",
            "quizwright-gradient-checkpointing/quizwright-gradient-checkpointing.xml",
        ]
        return [package.read(name) for name in package.namelist()]


def test_aiken_refuses_a_question_with_more_choices_than_letters():
    many = build_quiz(
        {**json_of(SEED), "questions": [{**json_of(SEED)["questions"][0], "choices": [
            {"id": f"c{n}", "text": f"choice {n}", "correct": n == 0, "explanation": "x"}
            for n in range(27)
        ]}]}
    )  # fmt: skip
    with pytest.raises(BankError) as raised:
        aiken.write(many)
    assert raised.value.errors == ['question "the-trade": Aiken has letters for 26 choices at most']


def json_of(quiz) -> dict:
    return json.loads(quiz.snapshot)


TRAVELLER = build_quiz(
    {
        "slug": "gradient-checkpointing",
        "title": "Gradient Checkpointing Quiz",
        "description": "What checkpointing trades, and for what.",
        "questions": [
            {
                "id": "the-trade",
                "prompt": "What does gradient checkpointing trade to save memory?",
                "choices": [
                    {"id": "a", "text": "Extra compute for lower memory use", "correct": True,
                     "explanation": "Right: a checkpointed region runs its forward pass again."},
                    {"id": "b", "text": "Model accuracy for speed", "correct": False,
                     "explanation": "Wrong on both counts: it is slower, and the gradients are "
                     "the same."},
                ],
                "explanation": "Chen et al. (2016) called it trading computation for memory.\n\n"
                "About 30% more time bought a 1,000-layer ResNet 48 GB → 7 GB.",
                "references": [
                    {"title": "Chen, Xu, Zhang & Guestrin, “Training Deep Nets with Sublinear "
                     "Memory Cost” (2016)", "url": "https://arxiv.org/abs/1604.06174"},
                    {"title": "PyTorch documentation: torch.utils.checkpoint",
                     "url": "https://docs.pytorch.org/docs/stable/checkpoint.html"},
                ],
                "evidence": "checkpointing",
            },
            {
                "id": "why-stored",
                "prompt": "Why are activations kept during the forward pass?\nPick one.",
                "choices": [
                    {"id": "a", "text": "To show them to the user", "correct": False,
                     "explanation": "Tools can read them, but training keeps them for backward."},
                    {"id": "b", "text": "Backpropagation needs them", "correct": True,
                     "explanation": "Right: for Y = XW the weight gradient needs X."},
                ],
                "explanation": "Autograd keeps what backward reads.",
                "references": [
                    {"title": "PyTorch autograd notes: saved tensors",
                     "url": "https://docs.pytorch.org/docs/stable/notes/autograd.html#saved-tensors"},
                    {"title": "A search {with} ~marks~",
                     "url": "https://example.org/find?q=a+b&lang=en"},
                ],
            },
            {
                "id": "sqrt-n",
                "prompt": "What do checkpoints every √N layers of N achieve?",
                "choices": [
                    {"id": "a", "text": "Memory about 2√N layer outputs", "correct": True,
                     "explanation": "Right: √N boundaries, and one segment of √N at a time."},
                    {"id": "b", "text": "No recomputation at all", "correct": False,
                     "explanation": "No: each segment but the last runs forward twice."},
                ],
                "explanation": "The textbook schedule of Chen et al.",
                "references": [
                    {"title": "Chen et al. (2016), section 4",
                     "url": "https://arxiv.org/abs/1604.06174"},
                ],
                "evidence": "checkpointing",
            },
        ],
    }
)  # fmt: skip
"""A quiz with sources (titles with : & “ ”, URLs with # = & ?) and two evidence links, whose
GIFT export went through Moodle: moodle-4.5-export.gift."""

MOODLE_EXPORT = FIXTURES / "moodle-4.5-export.gift"
"""What a real Moodle 4.5 (Build 20241007, ../shared/tools/moodle) wrote, byte for byte, when it
exported as GIFT the category it made by importing `gift.write(TRAVELLER)`: it keeps the `[tag:...]`
line, drops every other comment, leaves out `[moodle]` (its default) but names `[html]` for the
general feedback, and lists the category's questions by name."""


def by_id(questions) -> list:
    return sorted(questions, key=lambda question: question.id)


def moodle_marks(data: bytes) -> list[str]:
    """The tag lines of a GIFT file, question by question in the order Moodle lists them."""
    return [line for line in data.decode().splitlines() if line.startswith("// [tag:")]


def test_gift_general_feedback_is_html_whose_links_moodle_shows():
    """Moodle's own text format drops `<https://...>` as an unknown HTML tag, which hid every
    source: the general feedback is HTML now, each source a link Moodle shows."""
    data = gift.write(TRAVELLER).decode()
    general = [line.strip() for line in data.splitlines() if line.strip().startswith("####")]
    assert len(general) == len(TRAVELLER.questions)
    for line, question in zip(general, TRAVELLER.questions, strict=True):
        assert line.startswith("####[html]<p>")
        html = gift._unescape(line.removeprefix("####[html]"))
        for reference in question.references:
            assert f'<a href="{reference.url.replace("&", "&amp;")}">' in html
        assert formats.common.html_sources(html) == (question.explanation, question.references)


def test_a_quiz_comes_back_from_moodle_with_its_slug_evidence_and_sources():
    """Moodle's GIFT export of our export keeps the slug and evidence tags and the HTML
    sources: reading it gives back every question as it went, in Moodle's order (by name)."""
    data = MOODLE_EXPORT.read_bytes()
    source = gift.parse(data, "moodle.gift")
    assert (source.slug, source.title, source.lost, source.skipped) == (
        TRAVELLER.slug, TRAVELLER.title, (), (),
    )  # fmt: skip
    assert [q.id for q in source.questions] == ["sqrt-n", "the-trade", "why-stored"]
    imported = formats.to_quiz(source, TRAVELLER.slug, None, TRAVELLER.description)
    back = build_quiz(imported.quiz)
    assert comparable(dataclasses.replace(back, questions=by_id(back.questions)), ids=False) == (
        comparable(dataclasses.replace(TRAVELLER, questions=by_id(TRAVELLER.questions)), ids=False)
    )
    # The fixture is Moodle's reading of what we write now: the marks it echoes are ours.
    ours = moodle_marks(gift.write(TRAVELLER))
    written = dict(zip((q.id for q in TRAVELLER.questions), ours, strict=True))
    assert moodle_marks(data) == [written[q.id] for q in source.questions]


def test_importing_moodle_s_export_into_the_bank_it_came_from_is_refused(tmp_path):
    """Moodle kept the slug, so the quiz is not added twice; elsewhere it comes in under its
    slug with both evidence links and nothing said lost."""
    bank = tmp_path / "questions.json"
    bank.write_bytes((PROJECT_ROOT / "questions.json").read_bytes())
    with pytest.raises(BankError) as refused:
        formats.import_quiz(MOODLE_EXPORT, bank, description=TRAVELLER.description)
    assert refused.value.errors == [
        f'{bank}: a quiz "gradient-checkpointing" exists already; choose another --slug'
    ]
    imported, made = formats.import_quiz(
        MOODLE_EXPORT, tmp_path / "new.json", description=TRAVELLER.description
    )
    assert imported.unmeasured == []
    assert [(q["id"], q.get("evidence")) for q in made["quizzes"][0]["questions"]] == [
        ("sqrt-n", "checkpointing"), ("the-trade", "checkpointing"), ("why-stored", None),
    ]  # fmt: skip
    assert made["quizzes"][0]["slug"] == "gradient-checkpointing"


def test_an_evidence_link_lost_on_the_way_is_reported(tmp_path):
    """A Quizwright export whose question lost its evidence tag (by hand in Moodle, say) says
    so in the import's report: the export said how many links its quiz has."""
    data = MOODLE_EXPORT.read_text(encoding="utf-8")
    edited = data.replace(" [tag:quizwright-evidence: checkpointing]", "", 1)
    assert edited != data
    path = tmp_path / "edited.gift"
    path.write_text(edited, encoding="utf-8")
    imported, made = formats.import_quiz(
        path, tmp_path / "new.json", description=TRAVELLER.description
    )
    assert imported.unmeasured == [
        f"{path}: its Quizwright export linked 2 questions to measured evidence and 1 came back "
        'linked: a question or its "quizwright-evidence" tag was lost on the way; link it again '
        "by hand"
    ]
    assert [q.get("evidence") for q in made["quizzes"][0]["questions"]] == [
        None, "checkpointing", None,
    ]  # fmt: skip


def moodle_cut(data: bytes) -> bytes:
    """A GIFT file with each tag cut to the 50 characters Moodle keeps (TAG_MAX_LENGTH)."""
    return re.sub(
        rb"\[tag:([^\]]*)\]",
        lambda tag: b"[tag:" + tag.group(1).decode()[:50].encode() + b"]",
        data,
    )


def test_marks_longer_than_moodle_keeps_are_not_taken_cut_and_are_reported():
    """Moodle cuts a tag to 50 characters: a slug or evidence key cut so is not taken as if it
    were whole, and the import says so; our own file, uncut, carries them whole. A mark of
    exactly 50 is written one shorter, so that Moodle keeps it and it is read as whole."""
    long = dataclasses.replace(
        TRAVELLER,
        slug="gradient-checkpointing-for-the-long-course",
        questions=(
            dataclasses.replace(TRAVELLER.questions[0], evidence="checkpointing_" + "x" * 20),
            *TRAVELLER.questions[1:],
        ),
    )
    data = gift.write(long)
    direct = gift.parse(data, "ours.gift")
    assert (direct.slug, direct.questions[0].evidence, direct.lost) == (
        long.slug, long.questions[0].evidence, (),
    )  # fmt: skip
    through = gift.parse(moodle_cut(data), "moodle.gift")
    assert (through.slug, [q.evidence for q in through.questions]) == (
        None, [None, None, "checkpointing"],
    )  # fmt: skip
    assert through.lost == (
        'moodle.gift:5: question "the-trade": left out its evidence link, since its tag '
        '"quizwright-evidence: checkpointing_xxxxxxxxxxxxxxx" is not a whole one (Moodle keeps '
        "50 characters of a tag); link it again by hand",
        'moodle.gift: its slug tag "quizwright-slug: gradient-checkpointing-for-the-lo" is not a '
        "whole slug (Moodle keeps 50 characters of a tag), so the import does not take it; give "
        "--slug",
    )
    fifty = dataclasses.replace(TRAVELLER, slug="gradient-checkpointing-" + "a" * 10)
    assert len(formats.common.marked("slug", fifty.slug)) == 50
    assert "[tag:quizwright-slug:gradient-checkpointing-aaaaaaaaaa]" in gift.write(fifty).decode()
    assert gift.parse(moodle_cut(gift.write(fifty)), "moodle.gift").slug == fifty.slug


def test_old_exports_carry_their_marks_in_comment_lines_still_read():
    """Files exported before the tags carry the slug and evidence in comment lines of their
    own, with the sources in Moodle's text format: they still import as they did."""
    data = (
        b"// Gradient Checkpointing Quiz: exported from Quizwright\n"
        b"// quizwright-slug: gradient-checkpointing\n"
        b"$CATEGORY: $course$/top/Gradient Checkpointing Quiz\n\n"
        b"// quizwright-evidence: checkpointing\n"
        b"::the-trade::[moodle]What does it trade? {\n"
        b"\t=Compute#Right.\n\t~Accuracy#No.\n"
        b"\t####It recomputes.\\n\\nSources\\: Chen et al. (2016) "
        b"<https\\://arxiv.org/abs/1604.06174>\n"
        b"}\n"
    )
    source = gift.parse(data, "old.gift")
    assert (source.slug, source.lost) == ("gradient-checkpointing", ())
    (question,) = source.questions
    assert (question.evidence, question.explanation, question.references) == (
        "checkpointing", "It recomputes.",
        (Reference("Chen et al. (2016)", "https://arxiv.org/abs/1604.06174"),),
    )  # fmt: skip


@pytest.mark.parametrize("format_name", ["moodle-xml", "qti", "qti3"])
@pytest.mark.parametrize("prompt", ["-", "1986. The year?", "What does this print?\n\n```\n1\n```"])
def test_a_prompt_is_exported_as_the_pages_show_it(format_name, prompt):
    """The question's first paragraph as the heading shows it, even one Markdown would read as a
    list, then its blocks: the file reads back to the same words."""
    quiz = dataclasses.replace(SEED, questions=(
        dataclasses.replace(SEED.questions[0], prompt=prompt),))  # fmt: skip
    back, _, _ = round_trip(format_name, quiz)
    assert plain(back.questions[0].prompt) == plain(prompt)


TYPED = build_quiz(
    {
        "slug": "typed",
        "title": "Typed",
        "description": "Each type.",
        "questions": [
            {"id": "sun", "type": "true_false", "prompt": "The sun is a *star*.", "answer": True,
             "if_true": "Yes: a yellow dwarf.", "if_false": "It is the nearest one.",
             "explanation": "It shines by fusion.",
             "references": [{"title": "Sun", "url": "https://en.wikipedia.org/wiki/Sun"}]},
            {"id": "moon", "type": "true_false", "prompt": "The moon is a star.", "answer": False,
             "if_true": "It reflects light.", "if_false": "Right: a satellite.",
             "explanation": "It has no fusion.",
             "references": [{"title": "Moon", "url": "https://en.wikipedia.org/wiki/Moon"}]},
            {"id": "primes", "type": "multiple_answers", "prompt": "Which are primes?",
             "points": 2.5,
             "choices": [
                 {"id": "a", "text": "2", "correct": True, "explanation": "Even, and prime."},
                 {"id": "b", "text": "3", "correct": True, "explanation": "Prime."},
                 {"id": "c", "text": "5", "correct": True, "explanation": "Prime."},
                 {"id": "d", "text": "9", "correct": False, "fraction": -0.5,
                  "explanation": "3 times 3."}],
             "explanation": "A prime has two divisors.",
             "references": [{"title": "Prime", "url": "https://en.wikipedia.org/wiki/Prime_number"}]},
        ],
    }
)  # fmt: skip


CARRIES = {
    "gift": {"fraction"},
    "moodle-xml": {"points", "fraction"},
    "qti": {"points"},
    "qti3": {"points", "fraction"},
}
"""What of a question's scoring each format carries (its DROPS say what it does not)."""


def entries(quiz, carried: set[str]) -> list[dict]:
    """Each question as the bank holds it, choice ids aside (formats number the choices), and
    its points and choices' fractions only where the format carries them."""
    found = []
    for question in quiz.questions:
        entry = type_of(question).data(question)
        if "points" not in carried:
            entry.pop("points", None)
        for choice in entry.get("choices", []):
            choice.pop("id")
            if "fraction" not in carried:
                choice.pop("fraction", None)
        found.append(entry)
    return found


@pytest.mark.parametrize("format_name", sorted(CARRIES))
def test_every_type_round_trips(format_name):
    """True/false with each answer's feedback, and select-all with its fractions (1/3 each, and
    an author's -50% where the format carries it), come back from an export as they were."""
    back, imported, source = round_trip(format_name, TYPED)
    assert source.skipped == () and imported.gaps == []
    carried = CARRIES[format_name]
    assert entries(back, carried) == entries(TYPED, carried)


def test_moodles_own_gift_fixture_imports_every_type_quizwright_holds():
    """Moodle's own GIFT fixture (tests/fixtures/formats/moodle/): its multiple choice, multiple
    response, numerical, short-answer and true/false questions come across, each answer's own
    [html] or [plain] read and a `*` answer's feedback said to any other answer; only its essay
    and matching questions are skipped, each named."""
    source = gift.parse(
        (FIXTURES / "moodle" / "questions.gift.txt").read_bytes(), "questions.gift.txt"
    )
    assert [(q.id, q.type) for q in source.questions] == [
        ("Q2", "single_choice"), ("colours", "multiple_answers"), ("Q5", "numerical"),
        ("Shortanswer", "short_answer"), ("Q1", "true_false"), ("2-08 TSL", "true_false"),
        ("2-08 TSL", "true_false"),
    ]  # fmt: skip
    number, words = source.questions[2], source.questions[3]
    assert [(a.value, a.tolerance, a.fraction) for a in number.answers] == [(3, 2, 1)]
    assert number.otherwise == "Completely wrong"
    assert [(a.text, a.fraction, a.feedback) for a in words.answers] == [
        ("Frog", 1, "Good!"), ("Cat", 0.5, "What is it with Moodlers and cats?"),
    ]  # fmt: skip
    assert words.otherwise == "Completely wrong"
    colours = source.questions[1]
    assert [(c.text, c.correct, c.fraction, c.explanation) for c in colours.choices] == [
        ("yellow", True, 0.5, "right; good!"), ("red", False, -1, "wrong"),
        ("off-beige", True, 0.5, "right; good!"), ("blue", False, -1, "wrong"),
    ]  # fmt: skip
    q1 = source.questions[4]
    assert [(c.text, c.correct, c.explanation) for c in q1.choices] == [
        ("True", False, "42 is the Ultimate Answer."),
        ("False", True, "You gave the right answer."),
    ]  # fmt: skip
    assert [str(skip).split(", ", 1)[1] for skip in source.skipped] == [
        "an essay question", "a matching question",
    ]  # fmt: skip


TYPED_ANSWERS = build_quiz(
    {
        "slug": "typed-answers",
        "title": "Typed answers",
        "description": "Numbers and words.",
        "questions": [
            {"id": "height", "type": "numerical", "prompt": "How tall, in metres?", "points": 2,
             "answers": [{"value": 1.5, "tolerance": 0.05, "feedback": "Yes."},
                         {"value": 0.00015, "fraction": 0.25, "feedback": "In km?"}],
             "units": [{"unit": "m"}, {"unit": "cm", "multiplier": 100}],
             "otherwise": "Measure *again*.", "explanation": "Metres.",
             "references": [{"title": "Metre", "url": "https://en.wikipedia.org/wiki/Metre"}]},
            {"id": "gas", "type": "short_answer", "prompt": "Which gas do plants take in?",
             "case_sensitive": True,
             "answers": [{"text": "CO2", "feedback": "Carbon dioxide."},
                         {"text": "carbon dio*ide", "fraction": 0.5},
                         {"text": "a: {b} = #c ~ \\*", "fraction": 0.1}],
             "otherwise": "It is CO2.", "explanation": "Plants fix carbon.",
             "references": [{"title": "Photosynthesis",
                             "url": "https://en.wikipedia.org/wiki/Photosynthesis"}]},
        ],
    }
)  # fmt: skip
TYPED_CARRIES = {
    "gift": {"wildcards"},
    "moodle-xml": {"points", "units", "case_sensitive", "wildcards"},
    "qti": {"points"},
    "qti3": {"points", "case_sensitive", "wildcards"},
}
"""What of a typed question each format carries beyond its answers (its DROPS say the rest)."""


@pytest.mark.parametrize("format_name", sorted(TYPED_CARRIES))
def test_typed_answers_round_trip(format_name):
    """Numbers with tolerances and shares, words with wildcards and GIFT's special characters,
    what any other answer is told: back from an export as they were."""
    back, imported, source = round_trip(format_name, TYPED_ANSWERS)
    assert source.skipped == () and imported.gaps == []
    carried = TYPED_CARRIES[format_name]

    def kept(quiz):
        found = []
        for question in quiz.questions:
            entry = type_of(question).data(question)
            for field in {"points", "units", "case_sensitive"} - carried:
                entry.pop(field, None)
            if "wildcards" not in carried:  # the format's star is a star, as the export wrote
                for answer in entry["answers"] if question.type == "short_answer" else ():
                    answer["text"] = re.sub(r"(?<!\\)\*", r"\\*", answer["text"])
            found.append(entry)
        return found

    assert kept(back) == kept(TYPED_ANSWERS)


@pytest.mark.parametrize("case_sensitive", [False, True])
def test_qti3_writes_wildcards_as_patterns_a_student_is_marked_by_alike(case_sensitive):
    """Moodle's * becomes an XML Schema pattern (letters as [xX] where capitals do not count),
    which reads back as the same answer; a pattern that is more than wildcards is skipped."""
    gas = dataclasses.replace(TYPED_ANSWERS.questions[1], case_sensitive=case_sensitive)
    quiz = dataclasses.replace(TYPED_ANSWERS, questions=(gas,))
    package = formats.FORMATS["qti3"].write(quiz)
    back = qti3.parse(package, "typed.zip").questions[0]
    assert (back.answers, back.case_sensitive) == (gas.answers, case_sensitive)
    short = TYPES["short_answer"]
    for typed in ("Carbon Dioxide", "carbon dioxide", "carbon diode"):
        assert short.grade(back, typed).mark == short.grade(gas, typed).mark
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    name = next(n for n in files if b"qti-pattern-match" in files[n])
    files[name] = re.sub(rb'pattern="[^"]*"', b'pattern="[a-z]+"', files[name], count=1)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    source = qti3.parse(buffer.getvalue(), "typed.zip")
    assert source.questions == () and "more than Moodle's * wildcards" in source.skipped[0].why


QTI3_TEXT_ENTRY = """<?xml version="1.0" encoding="UTF-8"?>
<qti-assessment-item xmlns="http://www.imsglobal.org/xsd/imsqtiasi_v3p0" identifier="capital"
    title="Capital" adaptive="false" time-dependent="false">
  <qti-response-declaration identifier="RESPONSE" cardinality="single" base-type="{base}">
    <qti-correct-response><qti-value>{right}</qti-value></qti-correct-response>
    <qti-mapping default-value="0">{entries}</qti-mapping>
  </qti-response-declaration>
  <qti-outcome-declaration identifier="SCORE" cardinality="single" base-type="float"/>
  <qti-item-body>
    <p>The river through <qti-text-entry-interaction response-identifier="RESPONSE"/> is the
      Seine.</p>
  </qti-item-body>
  <qti-response-processing
      template="https://purl.imsglobal.org/spec/qti/v3p0/rptemplates/map_response"/>
</qti-assessment-item>"""
"""A text entry scored by a mapping and the map_response template, as QTI 3.0's best-practice
guide writes its missing-word example (written here from its description)."""


def test_a_qti3_text_entry_scored_by_its_mapping_comes_across():
    """The gap shows where the answer goes; the correct response earns full marks and each
    mapping entry its share; entries that differ on capitals are a skip, named."""
    entry = '<qti-map-entry map-key="{}" mapped-value="{}"{}/>'
    lenient = QTI3_TEXT_ENTRY.format(base="string", right="Paris", entries=entry.format(
        "Paris", 1, "") + entry.format("Lutetia", 0.5, ""))  # fmt: skip
    [question] = qti3.parse(lenient.encode(), "capital.xml").questions
    assert question.prompt == "The river through _____ is the Seine."
    assert [(a.text, a.fraction) for a in question.answers] == [("Paris", 1), ("Lutetia", 0.5)]
    assert not question.case_sensitive and TYPES["short_answer"].grade(question, "PARIS").correct
    mixed = QTI3_TEXT_ENTRY.format(base="string", right="Paris", entries=entry.format(
        "Paris", 1, ' case-sensitive="true"') + entry.format("paris", 0.5, ""))  # fmt: skip
    source = qti3.parse(mixed.encode(), "capital.xml")
    assert [s.why for s in source.skipped] == ["some answers count capitals and others do not"]
    number = QTI3_TEXT_ENTRY.format(base="float", right="75", entries="")
    [depth] = qti3.parse(number.encode(), "depth.xml").questions
    assert (depth.type, [(a.value, a.tolerance) for a in depth.answers]) == ("numerical", [(75, 0)])


def test_moodles_own_xml_numerical_and_short_answer_come_across():
    """The numerical and short-answer questions Moodle's own XML tests import: a wrong number
    with its feedback stays an answer worth 0%, and a `*` answer is what any other is told."""
    source = moodle_xml.parse((FIXTURES / "moodle" / "typed.xml").read_bytes(), "typed.xml")
    number, words = source.questions
    assert [(a.value, a.tolerance, a.fraction, a.feedback) for a in number.answers] == [
        (42, 0.001, 1, "Well done!"), (13, 1, 0, "What were you thinking?!"),
    ]  # fmt: skip
    assert number.otherwise == "Completely wrong." and number.units == ()
    assert [(a.text, a.fraction) for a in words.answers] == [("Beta", 1)]
    assert (words.otherwise, words.case_sensitive) == ("Doh!", False)
    assert words.explanation == "The answer is Beta."
    marked = [TYPES["numerical"].grade(number, r).mark for r in ("42.0005", "13.9", "41")]
    assert marked == [1, 0, 0]


def test_moodles_own_xml_choice_and_true_false_come_across_with_their_pictures():
    """Moodle's own fixtures for pictures: every picture its fields carry (`@@PLUGINFILE@@` and
    a base64 `<file>`) comes, in the prompt, a choice and the feedback, with its words; the
    recording a link plays is left out and said, and the question kept."""
    truth = moodle_xml.parse((FIXTURES / "moodle" / "truefalse.xml").read_bytes(), "tf.xml")
    greeting = moodle_xml.parse((FIXTURES / "moodle" / "multichoice.xml").read_bytes(), "mc.xml")
    assert truth.skipped == greeting.skipped == () and truth.unshown == ()
    false, true = truth.questions
    logo, thumb_up = re.findall(r"\((/images/\S+)\)", false.prompt + false.choices[1].explanation)
    assert (false.prompt, true.prompt.endswith("Learning Environment.")) == (
        f"Moodle ![Moodle logo]({logo}) is an acronym for Modular Object-Oriented Dynamic "
        "Learning Education.", True,
    )  # fmt: skip
    assert false.choices[1].explanation == f"![Thumb up]({thumb_up}) Your answer is correct."
    assert false.explanation.startswith("![Informations](/images/")
    assert re.search(r"-48x48\.jpeg$", logo) and re.search(r"-24x24\.jpeg$", thumb_up)
    [question] = greeting.questions
    assert [re.sub(r"\(/images/[^)]+\)", "(...)", c.text) for c in question.choices] == [
        "![British Flag](...) English", "![French flag](...) French",
        "![German flag](...) German", "![Denmark flag](...) Danish",
    ]  # fmt: skip
    assert greeting.unshown == (
        'mc.xml: /quiz/question[2]: the link to "bonjour.mp3" (a sound) is left out, its words '
        "kept: a page here links only to other sites",
    )
    assert len(truth.pictures) == len(greeting.pictures) == 4
    for data in [*truth.pictures.values(), *greeting.pictures.values()]:
        assert images.read(data)[0] == "jpeg"


def moodle_question(body: str, kind: str = "multichoice") -> bytes:
    return (
        f'<quiz><question type="{kind}"><name><text>q</text></name>'
        "<questiontext><text>Which?</text></questiontext>"
        f"{body}</question></quiz>"
    ).encode()


@pytest.mark.parametrize(
    ("body", "kind", "why"),
    [
        # Points the bank cannot hold: too small to show, or none at all.
        ('<defaultgrade>1e-300</defaultgrade><answer fraction="100"><text>a</text></answer>'
         '<answer fraction="0"><text>b</text></answer>', "multichoice",
         "it is worth 1e-300 points; a question is worth 0.01 to 1000"),
        # <single> means nothing to true/false: a share of the points is not a key.
        ('<single>false</single><answer fraction="50"><text>true</text></answer>'
         '<answer fraction="50"><text>false</text></answer>', "truefalse",
         "partial credit (50%) on answer 1"),
    ],
)  # fmt: skip
def test_moodle_xml_skips_scoring_the_bank_cannot_hold(body, kind, why):
    source = moodle_xml.parse(moodle_question(body, kind), "q.xml")
    assert source.questions == () and [s.why for s in source.skipped] == [why]


@pytest.mark.parametrize("value", ["NaN", "1e999", "-inf"])
def test_qti3_refuses_a_mapping_that_is_no_number(value):
    """A NaN share once clamped to full marks for a wrong choice."""
    package = formats.FORMATS["qti3"].write(TYPED)
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    name = next(n for n in files if n.endswith(".xml") and b"qti-map-entry" in files[n])
    files[name] = re.sub(rb'mapped-value="-[^"]*"', f'mapped-value="{value}"'.encode(),
                         files[name], count=1)  # fmt: skip
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    with pytest.raises(formats.FormatError) as refused:
        qti3.parse(buffer.getvalue(), "typed.zip")
    assert f"{value!r} is not a number" in refused.value.errors[0]


def moodle_typed(kind: str, answers: str, extra: str = "") -> bytes:
    return (
        f'<quiz><question type="{kind}"><name><text>q</text></name>'
        f"<questiontext><text>How many?</text></questiontext>{answers}{extra}</question></quiz>"
    ).encode()


def test_typed_questions_a_file_cannot_make_the_bank_hold_are_skipped_at_their_place():
    """Attacker review: more answers than a question may have, units the bank cannot name,
    a numerical `*` worth marks and a range past any number are skipped with why, at their
    place; none reaches a draft, where the editor could not open it."""
    many = "::many::Which letter? {" + " ".join(f"=a{n}" for n in range(25)) + "}\n"
    imported = formats.to_quiz(gift.parse(many.encode(), "many.gift"), "many", None, None)
    assert imported.quiz["questions"] == []
    assert [str(s) for s in imported.skipped] == [
        'many.gift:1: skipped, field "answers": has 25; at most 20 are allowed'
    ]
    units = moodle_typed("numerical", '<answer fraction="100"><text>1</text></answer>',
                         "<units><unit><multiplier>0</multiplier><unit_name>m</unit_name></unit>"
                         "</units>")  # fmt: skip
    imported = formats.to_quiz(moodle_xml.parse(units, "u.xml"), "u", None, None)
    assert imported.quiz["questions"] == [] and "multiplier" in imported.skipped[0].why
    star = moodle_typed("numerical", '<answer fraction="100"><text>*</text></answer>')
    assert "for any number at all" in moodle_xml.parse(star, "s.xml").skipped[0].why
    anything = moodle_typed("shortanswer", '<answer fraction="100"><text>*</text></answer>')
    assert [a.text for a in moodle_xml.parse(anything, "a.xml").questions[0].answers] == ["*"]


def test_a_star_is_a_wildcard_only_where_the_format_says_so():
    """GIFT's \\* is Moodle's star that is no wildcard; Canvas compares whole answers, so its
    star is a star; a QTI 3.0 pattern is read only when it is Moodle's wildcards alone."""
    [star] = gift.parse(b"::s::Which key? {=\\* =a\\*b}", "s.gift").questions
    assert [a.text for a in star.answers] == ["\\*", "a\\*b"]
    short = TYPES["short_answer"]
    assert short.grade(star, "*").correct and not short.grade(star, "anything").correct
    canvas = qti.parse(formats.FORMATS["qti"].write(TYPED_ANSWERS), "t.zip").questions[1]
    assert [a.text for a in canvas.answers][1] == "carbon dio\\*ide"
    for pattern, why in (("[pP]aris.*", "counts capitals in some letters only"),
                         ("\\d+", "is more than Moodle's * wildcards")):  # fmt: skip
        with pytest.raises(Unsupported, match=re.escape(why)):
            qti3._wildcards(pattern)
    assert qti3._wildcards("[pP][aA][rR][iI][sS].*") == ("paris*", False)
    sharp = dataclasses.replace(TYPED_ANSWERS.questions[1], case_sensitive=False, answers=(
        dataclasses.replace(TYPED_ANSWERS.questions[1].answers[0], text="Stra*e ß"),))  # fmt: skip
    package = formats.FORMATS["qti3"].write(dataclasses.replace(TYPED_ANSWERS, questions=(sharp,)))
    [back] = qti3.parse(package, "s.zip").questions
    assert back.answers[0].text == "Stra*e ß"


def test_hostile_typed_items_are_skipped_not_crashed_on():
    """An empty branch in QTI 3.0 and a Canvas range wider than any float: skipped, with why."""
    package = formats.FORMATS["qti3"].write(TYPED_ANSWERS)
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    name = next(n for n in files if b"qti-response-if" in files[n])
    files[name] = re.sub(rb"<qti-response-if>.*?</qti-response-if>", b"<qti-response-if/>",
                         files[name], count=1, flags=re.S)  # fmt: skip
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    assert "tests nothing" in qti3.parse(buffer.getvalue(), "e.zip").skipped[0].why
    canvas = formats.FORMATS["qti"].write(TYPED_ANSWERS)
    with zipfile.ZipFile(io.BytesIO(canvas)) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    name = next(n for n in files if b"vargte" in files[n])
    wide = re.sub(rb"<vargte([^>]*)>[^<]*</vargte>", rb"<vargte\1>-1.7e308</vargte>", files[name])
    wide = re.sub(rb"<varlte([^>]*)>[^<]*</varlte>", rb"<varlte\1>1.7e308</varlte>", wide)
    wide = re.sub(rb"<varequal([^>]*)>1.5</varequal>", b"", wide)
    source = qti.parse(wide, "wide.xml")
    assert "past the numbers the bank holds" in source.skipped[0].why
