"""Moodle's GIFT text format: `::title:: prompt {=right #why ~wrong #why ####explanation}`.

Follows Moodle's description of GIFT: questions apart by blank lines, `//` comment lines,
`$CATEGORY:` lines, `[html]`/`[moodle]`/`[plain]`/`[markdown]` text formats, the escapes
\\~ \\= \\# \\{ \\} \\: \\\\ and \\n, `%weight%` answers and the missing-word form (text after
the answers). Single-answer multiple choice and true/false (as the choices "True" and "False")
become bank questions. Quizwright's exports carry the quiz's slug and each question's evidence
key as Moodle question tags, which Moodle reads from a question's comment lines and writes back
(`// [tag:quizwright-slug: ...] [tag:quizwright-evidence: ...]`), with how many of the quiz's
questions link evidence, so that an import can say when links were lost; the general feedback is
HTML, so that Moodle shows the sources as links. Files exported before carry the slug and
evidence in comment lines of their own (`// quizwright-slug: ...`), which are still read.
"""

import math
import re
import textwrap
from dataclasses import replace

from .. import text as quiz_text
from ..bank import Quiz
from ..question_types import TYPES as TYPES_BY_NAME
from ..question_types import Choice, Question
from ..question_types.multiple_answers import WeightedChoice
from ..question_types.numerical import NumericAnswer, number_text, numeric_answer
from ..question_types.typed import MOST_TYPED, Accepted
from .common import (
    LINKED,
    MARK,
    FormatError,
    Found,
    Source,
    Unsupported,
    carried,
    check_size,
    decode,
    from_html,
    html_sources,
    marked,
    sources_html,
    split_sources,
    to_html,
)

DROPS = (
    "the quiz's description",
    "whether choices are shuffled",
    "each question's points (Moodle gives each 1)",
    "all-or-nothing scoring, written as partial credit",
    "a numerical question's units (its answers stay in the base unit)",
    "whether a short answer's capitals must match",
)
CARRIES_FILES = False
"""Whether an export carries the files of the pictures its text shows."""
TYPES = frozenset({"single_choice", "true_false", "multiple_answers", "numerical", "short_answer"})
"""The question types (app/question_types/) this format reads and writes."""
SPECIAL = "~=#{}:"
ESCAPE = re.compile(r"\\(.)", re.S)
WEIGHT = re.compile(r"^%(-?\d+(?:\.\d+)?)%")
FORMAT = re.compile(r"^\[(html|moodle|plain|markdown)\]", re.I)
TAG_LIKE = re.compile(
    r"</?(?:a|abbr|article|audio|b|big|blockquote|br|caption|center|cite|code|dd|del|details"
    r"|div|dl|dt|em|embed|figcaption|figure|font|h[1-6]|hr|i|iframe|img|ins|kbd|label|li|mark"
    r"|math|object|ol|p|pre|q|s|samp|script|section|small|source|span|strike|strong|style|sub"
    r"|summary|sup|svg|table|tbody|td|th|thead|tr|tt|u|ul|var|video)(?:\s[^<>]*)?/?>"
    r"|&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#x[0-9A-Fa-f]{1,6});",
    re.I,
)
"""An HTML element or character reference, which Moodle's own text format shows as HTML (its
line breaks as <br>); not `<T>` or `List<String>`, which a programming question means as text."""
TRUTH = re.compile(r"(T|F|TRUE|FALSE)\s*(?:#(.*))?", re.S | re.I)
TAG = re.compile(r"\[tag:((?:\\\]|\\(?!\])|[^\]\[<>`\\\x00-\x1f\x7f])*+)\]")
"""A Moodle tag in a comment line, `]` in it written `\\]`. Unlike Moodle, a tag with `[` in it is
not read: none of ours has one, and stopping at `[` (and never backtracking) keeps a line of
unclosed tags linear."""
TAG_LIMIT = 50
"""The characters of a tag Moodle keeps (TAG_MAX_LENGTH): it cuts a longer one to this length."""
LINKS = "evidence-links"
"""The mark of how many of the exported quiz's questions link evidence."""


def _unescape(text: str) -> str:
    return ESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def _unescape_answer(text: str) -> str:
    """An accepted answer unescaped, but for `\\*`: Moodle's star that is no wildcard."""
    return ESCAPE.sub(lambda m: {"n": "\n", "*": "\\*"}.get(m.group(1), m.group(1)), text)


def _escape(text: str) -> str:
    text = text.replace("\\", "\\\\")
    for mark in SPECIAL:
        text = text.replace(mark, "\\" + mark)
    return text.replace("\r\n", "\n").replace("\n", "\\n")


def _find(text: str, mark: str, start: int = 0) -> int:
    """The index of the first unescaped mark at or after start, or -1."""
    index = start
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text.startswith(mark, index):
            return index
        index += 1
    return -1


def _split_answers(block: str) -> list[str]:
    """The answers of an answer block, each still starting with its = or ~."""
    answers, index, start = [], 0, None
    while index < len(block):
        if block[index] == "\\":
            index += 2
            continue
        if block[index] in "=~":
            if start is not None:
                answers.append(block[start:index])
            start = index
        index += 1
    if start is not None:
        answers.append(block[start:])
    return answers


def _escape_hint(answers: list[str]) -> str:
    """What to say when answers do not add up and one began on the line of the feedback before
    it: an = or ~ in feedback starts a new answer, as Moodle reads it too."""
    for previous in answers[:-1]:
        feedback_at = _find(previous, "#")
        if feedback_at >= 0 and "\n" not in previous[feedback_at:].rstrip(" \t"):
            return " (if an = or ~ in feedback was meant as text, write it \\= or \\~)"
    return ""


def _blocks(
    text: str,
) -> tuple[list[tuple[int, str, str | None, list[str]]], str | None, str | None]:
    """The questions' text, each with its first line's number, the evidence key a comment before
    it carries and the tags its comment lines give (as Moodle reads them: from the comment lines
    between the blank lines around the question); the last category named; and the slug a
    comment carries."""
    blocks, lines, first, category, tags = [], [], 0, None, []
    evidence = slug = None
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if stripped.startswith("//"):
            comment = stripped.removeprefix("//")
            slug = carried(comment, "slug") or slug
            evidence = carried(comment, "evidence") or evidence
            tags += [tag.replace("\\]", "]").strip() for tag in TAG.findall(comment)]
            continue
        if stripped.startswith("$CATEGORY:"):
            category = stripped.removeprefix("$CATEGORY:").strip().rstrip("/").rsplit("/", 1)[-1]
            # Moodle's roots ($course$, $system$, top) name no quiz.
            category = None if category.startswith("$") or category == "top" else category
            continue
        if not stripped:
            if lines:
                blocks.append((first, "\n".join(lines), evidence, tags))
                lines, evidence = [], None
            tags = []
            continue
        if not lines:
            first = number
        lines.append(line)
    if lines:
        blocks.append((first, "\n".join(lines), evidence, tags))
    return blocks, category or None, slug


def _tagged(tags: list[str], kind: str) -> tuple[str | None, str | None]:
    """The value of the first tag of a kind of mark, if the bank takes it; or else that tag, if
    it is as long as Moodle keeps one, and so may be cut short."""
    for tag in tags:
        if tag.startswith(f"{MARK}-{kind}:"):
            if len(tag) == TAG_LIMIT:
                return None, tag
            return carried(tag, kind), None
    return None, None


def _tally(tags: list[str]) -> int | None:
    """How many of its quiz's questions the export said link evidence, if a tag says it."""
    for tag in tags:
        if tag.startswith(f"{MARK}-{LINKS}:"):
            count = tag.removeprefix(f"{MARK}-{LINKS}:").strip()
            # Short, since int() refuses a string of thousands of digits (and no quiz is so big).
            return int(count) if count.isascii() and count.isdigit() and len(count) < 6 else None
    return None


def _as_html(text: str, markup: str) -> str | None:
    """The text as the HTML Moodle shows: [html] as it is, Moodle's own format when it holds a
    tag (its line breaks then as <br>); None for text Moodle shows as it is written."""
    if markup == "html":
        return text
    if markup == "moodle" and TAG_LIKE.search(text):
        # A source written <https://...> is a link to its author, not a tag to drop.
        text = LINKED.sub(lambda link: f"&lt;{link[1]}&gt;", text)
        return text.replace("\n", "<br>\n")
    return None


def _text(raw: str, markup: str) -> str:
    """Source text as the bank's Markdown: a picture it shows from a data: address, at its
    address here."""
    text = _unescape(raw.strip())
    if found := FORMAT.match(text):  # an answer or its feedback may name its own format
        markup, text = found.group(1).lower(), text[found.end() :].lstrip()
    if (markup_html := _as_html(text, markup)) is not None:
        return from_html(markup_html)
    first, _, rest = text.partition("\n")
    if markup == "markdown":
        # Indentation is Markdown's own (a code block, a nested list), beyond the file's layout.
        rest = textwrap.dedent(rest)
        return "\n".join(line.rstrip() for line in [first, *rest.split("\n")]).strip()
    return quiz_text.from_plain("\n".join(line.strip() for line in text.split("\n")))


def _question(where: str, raw: str, exported: bool = False) -> Question:
    """One GIFT question as a bank question; Unsupported or FormatError otherwise."""
    title = ""
    if raw.startswith("::"):
        end = _find(raw, "::", 2)
        if end < 0:
            raise FormatError([f"{where}: the title opened with :: is never closed"])
        title, raw = _unescape(raw[2:end]).strip(), raw[end + 2 :].lstrip()
    markup = "moodle"
    if found := FORMAT.match(raw):
        markup, raw = found.group(1).lower(), raw[found.end() :]
    if exported and markup == "moodle":
        markup = "plain"  # the bank's plain text, which exports before [plain] called [moodle]
    opening, stray = _find(raw, "{"), _find(raw, "}")
    if 0 <= stray < opening or (opening < 0 <= stray):
        raise FormatError([f"{where}: a }} closes no {{ (write \\}} for a brace in text)"])
    if opening < 0:
        raise Unsupported("a description with no answers")
    closing = _find(raw, "}", opening)
    if closing < 0:
        raise FormatError([f"{where}: the {{ of the answers is never closed by }}"])
    if 0 <= _find(raw, "{", opening + 1) < closing:
        raise FormatError([f"{where}: a {{ inside the answers (write \\{{ for a brace in text)"])
    after = raw[closing + 1 :]
    if _find(after, "{") >= 0 or _find(after, "}") >= 0:
        raise FormatError([f"{where}: more than one answer block, or an unescaped brace after it"])
    before_text, after_text = _text(raw[:opening], markup), _text(after, markup)
    prompt = f"{before_text} _____ {after_text}".strip() if after_text else before_text
    block = raw[opening + 1 : closing].strip()
    general_at = _find(block, "####")
    general = ""
    if general_at >= 0:
        general, block = block[general_at + 4 :], block[:general_at].strip()
    if not block:
        raise Unsupported("an essay question")
    if block.startswith("#"):
        answers, otherwise = _numbers(where, block[1:], markup)
        return _finish(title, prompt, (), general, markup, "numerical", answers, otherwise)
    if truth := TRUTH.fullmatch(block.strip()):
        choices = _true_false(truth.group(1).upper().startswith("T"), truth.group(2) or "", markup)
        if not prompt:
            raise FormatError([f"{where}: the question has no text before its answers"])
        return _finish(title, prompt, choices, general, markup, "true_false")
    answers = _split_answers(block)
    if not answers or block[: block.find(answers[0][0])].strip():
        raise FormatError([f"{where}: the answers must each start with = or ~"])
    if any(_find(answer, "->") >= 0 for answer in answers):
        raise Unsupported("a matching question")
    if all(answer.startswith("=") for answer in answers):
        accepted, otherwise = _typed(where, answers, markup, _words)
        return _finish(title, prompt, (), general, markup, "short_answer", accepted, otherwise)
    # As Moodle reads GIFT: with no = answer, several may be right, each earning its weight.
    several = not any(answer.startswith("=") for answer in answers)
    choices = []
    for index, answer in enumerate(answers):
        body = answer[1:].strip()
        weight = 100.0 if answer.startswith("=") else 0.0
        if found := WEIGHT.match(body):
            weight, body = float(found.group(1)), body[found.end() :]
        hash_at = _find(body, "#")
        feedback = body[hash_at + 1 :] if hash_at >= 0 else ""
        text = _text(body[:hash_at] if hash_at >= 0 else body, markup)
        why = _text(feedback, markup)
        if not several and weight not in (0.0, 100.0):
            raise Unsupported(f"partial credit ({weight:g}%) on an answer of a one-answer question")
        if not -100 <= weight <= 100:
            raise FormatError([f"{where}: answer {index + 1} weighs {weight:g}%, past 100%"])
        if not text:
            raise FormatError([f"{where}: answer {index + 1} has no text{_escape_hint(answers)}"])
        choices.append(
            WeightedChoice(id="", text=text, correct=weight > 0, explanation=why,
                           fraction=weight / 100)
            if several
            else Choice(id="", text=text, correct=weight == 100.0, explanation=why)
        )  # fmt: skip
    right = sum(choice.correct for choice in choices)
    if right > 1 and not several:
        raise Unsupported(
            f"{right} answers each fully right (=); a one-answer question has exactly one"
            f"{_escape_hint(answers)}"
        )
    if right == 0:
        raise Unsupported(f"no answer is right{_escape_hint(answers)}")
    if len(choices) < 2:
        raise Unsupported("fewer than two answers")
    if not prompt:
        raise FormatError([f"{where}: the question has no text before its answers"])
    kind = "multiple_answers" if several else "single_choice"
    return _finish(title, prompt, tuple(choices), general, markup, kind)


def _typed(where: str, answers: list[str], markup: str, read) -> tuple[tuple, str]:
    """Accepted answers (`=%50%answer#feedback`, full marks unless weighed) read by `read`, and
    what a `*` answer, Moodle's "anything else", says."""
    accepted, otherwise = [], ""
    for index, answer in enumerate(answers):
        body = answer[1:].strip()
        weight = 100.0
        if found := WEIGHT.match(body):
            weight, body = float(found.group(1)), body[found.end() :].strip()
        hash_at = _find(body, "#")
        said = _text(body[hash_at + 1 :], markup) if hash_at >= 0 else ""
        body = body[:hash_at].strip() if hash_at >= 0 else body
        if body == "*" and weight == 0:
            otherwise = said
            continue
        if not 0 <= weight <= 100:
            raise Unsupported(f"an answer weighs {weight:g}%: a typed answer earns 0 to 100%")
        accepted.append(read(where, index, _unescape_answer(body), weight / 100, said))
    if not any(answer.fraction == 1 for answer in accepted):
        raise Unsupported("no answer earns full marks")
    return tuple(accepted), otherwise


def _words(where: str, index: int, body: str, fraction: float, said: str) -> Accepted:
    if not body or len(body) > MOST_TYPED:
        raise FormatError([f"{where}: answer {index + 1} has no text, or more than {MOST_TYPED}"])
    return Accepted(body, fraction, said)


def _number(where: str, index: int, body: str, fraction: float, said: str) -> NumericAnswer:
    """`value:tolerance`, `low..high` or `value`, as Moodle reads a numerical answer."""
    low, dots, high = body.partition("..")
    value, colon, tolerance = body.partition(":")
    try:
        if dots and low.strip():
            low_value, high_value = float(low), float(high)
            middle = (low_value + high_value) / 2
            number, margin = middle, high_value - middle
        else:
            number, margin = float(value), float(tolerance) if colon else 0.0
    except ValueError:
        raise FormatError([f"{where}: answer {index + 1}, “{body}”, is not a number"]) from None
    if not (math.isfinite(number) and math.isfinite(margin)) or margin < 0:
        raise FormatError([f"{where}: answer {index + 1}, “{body}”, is not a number we can hold"])
    return numeric_answer(number, margin, fraction, said)


def _numbers(where: str, body: str, markup: str) -> tuple[tuple, str]:
    """A numerical answer block after its #: answers apart by =, then `~` and what any other
    answer is told, as Moodle reads it."""
    otherwise = ""
    if (wrong_at := _find(body, "~")) >= 0:
        body, wrong = body[:wrong_at], body[wrong_at + 1 :]
        hash_at = _find(wrong, "#")
        otherwise = _text(wrong[hash_at + 1 :], markup) if hash_at >= 0 else ""
    body = body.strip()
    answers = _split_answers(body if body.startswith("=") else "=" + body)
    accepted, star = _typed(where, answers, markup, _number)
    return accepted, otherwise or star


def _true_false(true: bool, feedback: str, markup: str) -> tuple[Choice, ...]:
    """A true/false answer as the choices "True" and "False". As Moodle reads `{T#a#b}`, the
    first feedback is for a wrong answer and the second for the right one."""
    wrong, right = feedback, ""
    if (second := _find(feedback, "#")) >= 0:
        wrong, right = feedback[:second], feedback[second + 1 :]
    wrong_text, right_text = _text(wrong, markup), _text(right, markup)
    return (
        Choice(id="true", text="True", correct=true,
               explanation=right_text if true else wrong_text),
        Choice(id="false", text="False", correct=not true,
               explanation=wrong_text if true else right_text),
    )  # fmt: skip


def _with_evidence(where: str, raw: str, evidence: tuple[str, ...], exported: bool) -> Question:
    """The question with the evidence keys its Quizwright export carried."""
    return replace(_question(where, raw, exported), evidence=evidence)


def _finish(
    title: str,
    prompt: str,
    choices: tuple[Choice, ...],
    general: str,
    markup: str,
    kind: str = "single_choice",
    answers: tuple = (),
    otherwise: str = "",
) -> Question:
    """The question with its general feedback read as explanation and sources, in the text format
    the feedback names (`####[html]...`) or else the question's, as Moodle reads it."""
    if found := FORMAT.match(general):
        markup, general = found.group(1).lower(), general[found.end() :]
    if (general_html := _as_html(_unescape(general.strip()), markup)) is not None:
        explanation, references = html_sources(general_html)
    else:
        explanation, references = split_sources(_text(general, markup))
    typed = {"answers": answers, "otherwise": otherwise} if answers else {}
    return TYPES_BY_NAME[kind].question_class(
        id=title,
        prompt=prompt,
        choices=choices,
        explanation=explanation,
        references=references,
        type=kind,
        **typed,
    )


def parse(data: bytes, source: str) -> Source:
    """The multiple-choice questions in a GIFT file; FormatError lists every malformed one."""
    check_size(data, source)
    text = decode(data, source).replace("\r\n", "\n").replace("\r", "\n")
    blocks, category, slug = _blocks(text)
    exported = f"{MARK}-slug" in text  # a Quizwright export, or Moodle's export of one
    found, lost, cut_slug, expected, linked = Found(), [], None, None, 0
    for line, raw, commented, tags in blocks:
        where = f"{source}:{line}"
        tagged, doubtful = _tagged(tags, "evidence")
        evidence = commented or tagged
        if not found.read(where, _with_evidence, raw, evidence, exported):
            continue
        if not slug:
            slug, cut = _tagged(tags, "slug")
            cut_slug = cut_slug or cut
        expected = expected if expected is not None else _tally(tags)
        linked += bool(evidence or doubtful)
        if doubtful and not evidence:
            lost.append(
                f'{where}: question "{found.questions[-1].id}": left out its evidence link, '
                f'since its tag "{doubtful}" is not a whole one (Moodle keeps {TAG_LIMIT} '
                "characters of a tag); link it again by hand"
            )
    if cut_slug and not slug:
        lost.append(
            f'{source}: its slug tag "{cut_slug}" is not a whole slug (Moodle keeps {TAG_LIMIT} '
            "characters of a tag), so the import does not take it; give --slug"
        )
    if expected is not None and linked < expected:
        lost.append(
            f"{source}: its Quizwright export linked {expected} "
            f"{'question' if expected == 1 else 'questions'} to measured evidence and {linked} "
            'came back linked: a question or its "quizwright-evidence" tag was lost on the way; '
            "link it again by hand"
        )
    # A Quizwright export names its quiz in its category; another file's last category is
    # often a week or a topic, so the report says where the title came from.
    title_from = None if slug or not category else "the last part of its last $CATEGORY line"
    return found.source(title=category, slug=slug, lost=tuple(lost), title_from=title_from)


def _tag(mark: str) -> str:
    """A mark as a Moodle tag. One exactly as long as Moodle keeps loses the space after its
    colon, so that a tag of that length is always one Moodle cut; a longer one Moodle cuts, and
    the import says so."""
    if len(mark) == TAG_LIMIT:
        mark = mark.replace(": ", ":", 1)
    return f"[tag:{mark}]"


def write(quiz: Quiz) -> bytes:
    """The quiz as GIFT, each choice with its explanation and the general feedback last, in HTML
    so that Moodle shows each source as a link; the slug and evidence as tags Moodle keeps."""
    lines = [
        f"// {quiz.title}: exported from Quizwright",
        f"$CATEGORY: $course$/top/{quiz.title.replace('/', '-')}",
        "",
    ]
    linked = sum(1 for question in quiz.questions if question.evidence)
    for question in quiz.questions:
        # On every question, since Moodle keeps tags per question and one may be moved or lost.
        marks = [marked("slug", quiz.slug)]
        if question.evidence:
            marks.append(marked("evidence", question.evidence))
        if linked:
            marks.append(f"{MARK}-{LINKS}: {linked}")
        lines.append("// " + " ".join(_tag(mark) for mark in marks))
        # Markdown, as the bank's text is: Moodle's own format would show a "<b>" in it as bold.
        opening = "{#" if question.type == "numerical" else "{"  # a number's block, as Moodle
        lines.append(f"::{_escape(question.id)}::[markdown]{_escape(question.prompt)} {opening}")
        lines += _answers(question)
        # Moodle's own text format drops "<https://...>" as an unknown HTML tag; HTML keeps links.
        general = to_html(question.explanation) + sources_html(question.references)
        lines.append(f"\t####[html]{_escape(general)}")
        lines += ["}", ""]
    return "\n".join(lines).encode()


def _answers(question: Question) -> list[str]:
    """A question's answer lines: T or F with the wrong and then the right answer's feedback;
    = and ~ for one right choice; ~%weight% for each choice of several."""
    if question.type == "true_false":
        true, false = question.choices
        right, wrong = (true, false) if true.correct else (false, true)
        said = f"#{_escape(wrong.explanation)}#{_escape(right.explanation)}"
        return [f"\t{'TRUE' if true.correct else 'FALSE'}{said}"]
    if question.type in ("numerical", "short_answer"):
        return _typed_answers(question)
    lines = []
    for choice in question.choices:
        if question.type == "multiple_answers":
            mark = f"~%{_weight(choice.fraction)}%"
        else:
            mark = "=" if choice.correct else "~"
        lines.append(f"\t{mark}{_escape(choice.text)}#{_escape(choice.explanation)}")
    return lines


def _typed_answers(question) -> list[str]:
    """`=%weight%answer#feedback` lines, numbers as `value:tolerance`; what any other answer is
    told as Moodle writes it: `~#feedback` for a number, a `*` answer worth 0% for words."""
    lines = []
    for answer in question.answers:
        shown = (
            f"{answer.text}:{number_text(answer.tolerance)}"
            if question.type == "numerical"
            else _escape(answer.text)
        )
        lines.append(f"\t=%{_weight(answer.fraction)}%{shown}#{_escape(answer.feedback)}")
    if question.otherwise:
        star = "~" if question.type == "numerical" else "=%0%*"
        lines.append(f"\t{star}#{_escape(question.otherwise)}")
    return lines


def _weight(fraction: float) -> str:
    """A fraction as a GIFT weight: 1/3 as 33.33333, Moodle's seven decimals of a fraction."""
    return f"{fraction * 100:.5f}".rstrip("0").rstrip(".")
