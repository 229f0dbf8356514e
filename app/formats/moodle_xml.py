"""Moodle XML: `<quiz>` of `<question type="multichoice">` with per-answer `<feedback>` and
`<generalfeedback>`, as Moodle's question bank exports and imports it; a `truefalse` question
becomes the choices "True" and "False", each with its answer's feedback. A multichoice question's
`<correctfeedback>` and `<incorrectfeedback>` follow the right and the wrong answers' feedback.
Quizwright's exports carry the quiz's slug as the category's `<idnumber>` and each question's
evidence key as a tag (`quizwright-slug: ...`, `quizwright-evidence: ...`), both of which Moodle
keeps."""

import base64
import binascii
import functools
from dataclasses import replace
from urllib.parse import unquote
from xml.etree.ElementTree import Element

from .. import text as quiz_text
from ..bank import Quiz
from ..question_types import TYPES as TYPES_BY_NAME
from ..question_types import Choice, Question
from ..question_types.multiple_answers import WeightedChoice
from ..question_types.numerical import Unit, as_written, number_text, numeric_answer
from ..question_types.typed import MOST_TYPED, Accepted
from .common import (
    FormatError,
    Found,
    Source,
    Unsupported,
    carried,
    checked_points,
    from_html,
    html_sources,
    local,
    marked,
    packed,
    parse_xml,
    sources_html,
    to_html,
    true_first,
)

DROPS = ("all-or-nothing scoring, written as partial credit",)
CARRIES_FILES = True
"""Whether an export carries the files of the pictures its text shows."""
TYPES = frozenset({"single_choice", "true_false", "multiple_answers", "numerical", "short_answer"})
MOODLE_KINDS = {
    "multichoice": "single_choice",
    "truefalse": "true_false",
    "numerical": "numerical",
    "shortanswer": "short_answer",
}
"""Moodle's question types this format reads, and the bank's type each becomes (a multichoice
with several right answers becomes multiple_answers)."""
WRITTEN_AS = {"true_false": "truefalse", "numerical": "numerical", "short_answer": "shortanswer"}
"""The Moodle type a bank type is written as; the choice types are multichoice."""
"""The question types (app/question_types/) this format reads and writes."""
TRUE = {"true", "1"}
PLUGINFILE = "@@PLUGINFILE@@"
"""How a Moodle field's text names a file the field carries."""
STANDARD_FEEDBACK = ("Your answer is correct.", "Your answer is incorrect.")
"""What Moodle writes in correctfeedback and incorrectfeedback unless the author changes it."""
TRUTHS = {"true": "True", "false": "False"}
"""A truefalse question's answers as Moodle writes them, and the choices they become."""


def _child(element: Element, name: str) -> Element | None:
    return next((child for child in element if local(child.tag) == name), None)


def _children(element: Element, name: str) -> list[Element]:
    return [child for child in element if local(child.tag) == name]


def _raw(element: Element | None) -> tuple[str, str]:
    """A text field's markup and its format."""
    if element is None:
        return "", "html"
    text = _child(element, "text")
    return (text.text or "") if text is not None else "", element.get("format", "html")


def _markdown(markup: str, form: str) -> str:
    """A field that is not HTML as Markdown: Markdown as it is, Moodle's plain and automatic
    formats as the text they show."""
    return markup.strip() if form == "markdown" else quiz_text.from_plain(markup.strip())


def _plain(element: Element | None) -> str:
    """A text field as Markdown."""
    markup, form = _raw(element)
    return from_html(markup) if form == "html" else _markdown(markup, form)


def _files(question: Element):
    """The files a question's fields carry (`<file name path encoding="base64">`), found by
    the address its text gives them: `@@PLUGINFILE@@/` and the path and name, URL-encoded."""
    carried = {
        (file.get("path") or "/").rstrip("/") + "/" + (file.get("name") or ""): file.text or ""
        for file in question.iter()
        if local(file.tag) == "file" and file.get("encoding", "base64") == "base64"
    }

    def find(src: str) -> bytes | None:
        text = carried.get(unquote(src.removeprefix(PLUGINFILE)))
        if not src.startswith(PLUGINFILE) or text is None:
            return None
        try:
            return base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError):
            return None

    return find


def _with_outcome_feedback(element: Element, choice: Choice) -> Choice:
    """A choice with the question's feedback for any right (or wrong) answer after its own,
    unless it is Moodle's standard sentence, which says only what the student already sees."""
    name = "correctfeedback" if choice.correct else "incorrectfeedback"
    text = _plain(_child(element, name))
    if not text or text in STANDARD_FEEDBACK:
        return choice
    explanation = f"{choice.explanation}\n\n{text}" if choice.explanation else text
    return replace(choice, explanation=explanation)


def _question(where: str, element: Element) -> Question:
    moodle_kind = element.get("type", "")
    if moodle_kind not in MOODLE_KINDS:
        raise Unsupported(
            f"of type {moodle_kind or 'none'}, not multiple choice, true/false, numerical or "
            "short answer"
        )
    single = _child(element, "single")
    several = (
        moodle_kind == "multichoice"
        and single is not None
        and (single.text or "").strip().lower() not in TRUE
    )
    kind = "multiple_answers" if several else MOODLE_KINDS[moodle_kind]
    prompt = _plain(_child(element, "questiontext"))
    if not prompt:
        raise FormatError([f"{where}/questiontext: no question text"])
    if kind in ("numerical", "short_answer"):
        own, choices = _typed(where, element, kind), []
    else:
        own, choices = {}, _choices(where, element, kind, several)
    markup, form = _raw(_child(element, "generalfeedback"))
    if form == "html":
        explanation, references = html_sources(markup)
    else:
        explanation, references = html_sources(to_html(_markdown(markup, form)))
    name = _child(element, "name")
    title = (name.findtext("{*}text") or "") if name is not None else ""
    tags = _child(element, "tags")
    tagged = [] if tags is None else _children(tags, "tag")
    marks = [carried(tag.findtext("{*}text"), "evidence") for tag in tagged]
    grade = element.findtext("{*}defaultgrade")
    written = 1.0 if grade is None else _number(where, "defaultgrade", "grade", grade)
    points = checked_points(written)
    return TYPES_BY_NAME[kind].question_class(
        id=title, prompt=prompt, choices=tuple(choices), explanation=explanation,
        references=references, evidence=next((m for m in marks if m), None), type=kind,
        points=points, **own,
    )  # fmt: skip


def _choices(where: str, element: Element, kind: str, several: bool) -> list[Choice]:
    """A choice question's answers as choices, each with its feedback."""
    choices = []
    for number, answer in enumerate(_children(element, "answer"), 1):
        fraction = _number(where, f"answer[{number}]", "fraction", answer.get("fraction", "0"))
        if not several and fraction not in (0.0, 100.0):
            raise Unsupported(f"partial credit ({fraction:g}%) on answer {number}")
        if not -100 <= fraction <= 100:
            raise FormatError([f"{where}/answer[{number}]: fraction {fraction:g} is past 100%"])
        text, why = _plain(answer), _plain(_child(answer, "feedback"))
        if not text:
            raise FormatError([f"{where}/answer[{number}]: no answer text"])
        if kind == "true_false":
            if text.lower() not in TRUTHS:
                raise FormatError(
                    [f'{where}/answer[{number}]: a true/false answer reads "{text}", not '
                     '"true" or "false"']
                )  # fmt: skip
            text = TRUTHS[text.lower()]
        if several:
            choices.append(WeightedChoice(id="", text=text, correct=fraction > 0,
                                          explanation=why, fraction=fraction / 100))  # fmt: skip
        else:
            choices.append(Choice(id="", text=text, correct=fraction == 100.0, explanation=why))
    right = sum(choice.correct for choice in choices)
    if right == 0 or (right > 1 and not several):
        raise Unsupported(f"{right} answers are worth 100%; a one-answer question has exactly one")
    if len(choices) < 2:
        raise Unsupported("fewer than two answers")
    if kind == "true_false":
        choices = true_first(where, choices)
    return [_with_outcome_feedback(element, choice) for choice in choices]


def _typed(where: str, element: Element, kind: str) -> dict:
    """A numerical or short-answer question's accepted answers, what a `*` answer (Moodle's
    "anything else") says, its units or whether capitals count."""
    accepted, otherwise = [], ""
    for number, answer in enumerate(_children(element, "answer"), 1):
        place = f"answer[{number}]"
        fraction = _number(where, place, "fraction", answer.get("fraction", "0")) / 100
        written = (answer.findtext("{*}text") or "").strip()
        said = _plain(_child(answer, "feedback"))
        if written == "*" and fraction == 0:  # Moodle's "any other answer"
            otherwise = otherwise or said
            continue
        if written == "*" and kind == "numerical":
            raise Unsupported(f"answer {number} gives {fraction * 100:g}% for any number at all")
        if not 0 <= fraction <= 1:
            raise Unsupported(f"answer {number} earns {fraction * 100:g}%, not 0 to 100%")
        if kind == "numerical":
            value = _number(where, place, "answer", written)
            margin = _number(where, place, "tolerance", answer.findtext("{*}tolerance") or "0")
            accepted.append(numeric_answer(value, margin, fraction, said))
        elif not written or len(written) > MOST_TYPED:
            raise FormatError([f"{where}/{place}: no answer text, or more than {MOST_TYPED}"])
        else:
            accepted.append(Accepted(written, fraction, said))
    if not any(answer.fraction == 1 for answer in accepted):
        raise Unsupported("no answer earns full marks")
    own: dict = {"answers": tuple(accepted), "otherwise": otherwise}
    if kind == "short_answer":
        own["case_sensitive"] = (element.findtext("{*}usecase") or "0").strip() in TRUE
    else:
        units = element.find("{*}units")
        own["units"] = tuple(
            Unit((unit.findtext("{*}unit_name") or "").strip(), as_written(_number(
                where, "units", "multiplier", unit.findtext("{*}multiplier") or "1")))
            for unit in ([] if units is None else _children(units, "unit"))
        )  # fmt: skip
    return own


def _number(where: str, field: str, what: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise FormatError([f'{where}/{field}: {what} "{text}" is not a number']) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise FormatError([f'{where}/{field}: {what} "{text}" is not a number'])
    return value


def parse(data: bytes, source: str) -> Source:
    """The multiple-choice questions in a Moodle XML file; FormatError lists every bad one."""
    root = parse_xml(data, source)
    if local(root.tag) != "quiz":
        raise FormatError([f"{source}: /{local(root.tag)}: a Moodle XML file's root is <quiz>"])
    found = Found()
    title = description = slug = None
    shuffles = []
    for number, element in enumerate(_children(root, "question"), 1):
        where = f"{source}: /quiz/question[{number}]"
        if element.get("type") == "category":
            path = element.findtext("{*}category/{*}text") or ""
            title = title or path.rstrip("/").rsplit("/", 1)[-1].strip() or None
            description = description or _plain(_child(element, "info")) or None
            slug = slug or carried(element.findtext("{*}idnumber"), "slug")
            continue
        if found.read(where, _question, element, find=_files(element)):
            shuffle = _child(element, "shuffleanswers")
            shuffles.append(shuffle is None or (shuffle.text or "").strip().lower() in TRUE)
    return found.source(title=title, description=description,
                        shuffle_choices=bool(shuffles) and all(shuffles), slug=slug)  # fmt: skip


def _cdata(markup: str) -> str:
    # "]]>" would end the section early: split it across two sections.
    return "<![CDATA[" + markup.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def _attribute(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def _field(name: str, markup: str, indent: str = "    ", pictures=None, **extra: str) -> str:
    """A text field in HTML, with the files of the pictures it shows (of `pictures`, by their
    address here), as Moodle writes them."""
    attributes = "".join(f' {key}="{_attribute(value)}"' for key, value in extra.items())
    markup, files = packed(markup, pictures or {}, PLUGINFILE)
    carried = "".join(
        f'<file name="{file_name}" path="/" encoding="base64">{base64.b64encode(data).decode()}'
        "</file>"
        for file_name, data in files.items()
    )
    return f'{indent}<{name} format="html"{attributes}><text>{_cdata(markup)}</text>{carried}'


def write(quiz: Quiz, pictures: dict[str, bytes] | None = None) -> bytes:
    """The quiz as Moodle XML: a category named after it, then one question each, its fields
    carrying the files of `pictures` they show."""
    field = functools.partial(_field, pictures=pictures)
    shuffle = "true" if quiz.shuffle_choices else "false"
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        "<quiz>",
        '  <question type="category">',
        f"    <category><text>{_cdata('$course$/top/' + quiz.title.replace('/', '-'))}"
        "</text></category>",
        field("info", to_html(quiz.description)) + "</info>",
        f"    <idnumber>{_cdata(marked('slug', quiz.slug))}</idnumber>",
        "  </question>",
    ]
    for question in quiz.questions:
        general = to_html(question.explanation) + sources_html(question.references)
        moodle_kind = WRITTEN_AS.get(question.type, "multichoice")
        single = "false" if question.type == "multiple_answers" else "true"
        out += [
            f'  <question type="{moodle_kind}">',
            f"    <name><text>{_cdata(question.id)}</text></name>",
            field("questiontext", quiz_text.prompt_html(question.prompt)) + "</questiontext>",
            field("generalfeedback", general) + "</generalfeedback>",
            f"    <defaultgrade>{question.points:g}</defaultgrade>",
            "    <penalty>0</penalty>",
            "    <hidden>0</hidden>",
            f"    <idnumber>{_cdata(question.id)}</idnumber>",
        ]
        if question.type in ("numerical", "short_answer"):
            out += _typed_lines(question, field)
        else:
            out += [
                f"    <single>{single}</single>",
                f"    <shuffleanswers>{shuffle}</shuffleanswers>",
                "    <answernumbering>abc</answernumbering>",
                "    <showstandardinstruction>0</showstandardinstruction>",
            ]
        if question.evidence:
            tag = _cdata(marked("evidence", question.evidence))
            out.append(f"    <tags><tag><text>{tag}</text></tag></tags>")
        for choice in question.choices:
            if question.type == "multiple_answers":
                fraction = f"{choice.fraction * 100:.5f}".rstrip("0").rstrip(".")
            else:
                fraction = "100" if choice.correct else "0"
            # Moodle reads a true/false answer by its words "true" and "false".
            words = choice.text.lower() if question.type == "true_false" else choice.text
            out += [
                field("answer", str(quiz_text.phrase(words)), fraction=fraction),
                field("feedback", to_html(choice.explanation), indent="      ") + "</feedback>",
                "    </answer>",
            ]
        out.append("  </question>")
    out.append("</quiz>\n")
    return "\n".join(out).encode()


def _typed_lines(question, field) -> list[str]:
    """A numerical or short-answer question's answers, a `*` answer for what any other is told,
    and its units (optional, typed after the number) or whether capitals count."""
    numerical = question.type == "numerical"
    out = [] if numerical else [f"    <usecase>{int(question.case_sensitive)}</usecase>"]
    answers = [
        (a.text, a.fraction, a.feedback, getattr(a, "tolerance", 0)) for a in question.answers
    ]
    if question.otherwise:
        answers.append(("*", 0, question.otherwise, 0))
    for text, fraction, feedback, tolerance in answers:
        share = f"{fraction * 100:.5f}".rstrip("0").rstrip(".")
        out += [
            f'    <answer fraction="{share}" format="moodle_auto_format">'
            f"<text>{_cdata(text)}</text>",
            field("feedback", to_html(feedback), indent="      ") + "</feedback>",
        ]
        if numerical:
            out.append(f"      <tolerance>{number_text(tolerance)}</tolerance>")
        out.append("    </answer>")
    if numerical and question.units:
        out.append("    <units>")
        for unit in question.units:
            out.append(f"      <unit><multiplier>{number_text(unit.multiplier)}</multiplier>"
                       f"<unit_name>{_cdata(unit.name)}</unit_name></unit>")  # fmt: skip
        out.append("    </units>")
        # Units optional, typed after the number, no penalty: as the bank marks them.
        out += ["    <unitgradingtype>0</unitgradingtype>", "    <unitpenalty>0</unitpenalty>",
                "    <showunits>0</showunits>", "    <unitsleft>0</unitsleft>"]  # fmt: skip
    return out
