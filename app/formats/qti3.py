"""IMS QTI 3.0: a content package whose imsmanifest.xml lists `<qti-assessment-item>` files
(resource type imsqti_item_xmlv3p0) and an optional `<qti-assessment-test>` that names the quiz.

An item the bank can hold has one `<qti-choice-interaction>` with max-choices 1 and one value in
its `<qti-correct-response>` (or a `<qti-mapping>` giving full marks to one choice). A choice's
feedback is a `<qti-feedback-inline>` inside its `<qti-simple-choice>`, or a `<qti-modal-feedback>`
or `<qti-feedback-block>` that the response processing shows for that choice; feedback it shows
always is the general feedback, feedback for a right or wrong answer goes to the right choice or
to every wrong one; exports write a choice's feedback as a `<qti-feedback-block>` shown for it,
which holds lists and code, as inline feedback cannot. Packages are read as qti.py reads QTI 1.2
ones: in memory, within size limits, refusing unsafe names; a bare item XML file is read too.
Quizwright's exports carry the quiz's slug in the test's identifier (`quizwright-SLUG`) and each
question's evidence key in its item's `label`, which QTI leaves to authoring tools
(`quizwright-evidence: ...`).
"""

import io
import math
import re
import zipfile
from html import escape
from xml.etree import ElementTree
from xml.etree.ElementTree import Element

from .. import text as quiz_text
from ..bank import Quiz
from ..question_types import TYPES as TYPES_BY_NAME
from ..question_types import Choice, Question, Reference
from ..question_types.multiple_answers import WeightedChoice, default_fractions
from ..question_types.numerical import number_text, numeric_answer
from ..question_types.typed import MOST_TYPED, Accepted
from .common import (
    FormatError,
    Found,
    Source,
    Unsupported,
    carried,
    check_size,
    checked_points,
    exported_slug,
    from_html,
    html_sources,
    in_package,
    local,
    marked,
    packed,
    parse_xml,
    true_first,
)
from .qti import manifest_files, package_files

DROPS = (
    "all-or-nothing scoring, written as partial credit",
    "a numerical question's units (its answers stay in the base unit)",
)
CARRIES_FILES = True
"""Whether an export carries the files of the pictures its text shows."""
TYPES = frozenset({"single_choice", "true_false", "multiple_answers", "numerical", "short_answer"})
"""The question types (app/question_types/) this format reads and writes."""
NAMESPACE = "http://www.imsglobal.org/xsd/imsqtiasi_v3p0"
MANIFEST = "http://www.imsglobal.org/xsd/qti/qtiv3p0/imscp_v1p1"
ITEM_TYPE = "imsqti_item_xmlv3p0"
TEST_TYPE = "imsqti_test_xmlv3p0"
FEEDBACK = ("qti-feedback-inline", "qti-feedback-block", "qti-modal-feedback")
"""Content shown only when an outcome has a value: never part of a prompt or a choice's text."""
CONTAINERS = {"qti-prompt": "div", "qti-content-body": "div"}
"""QTI's wrappers of flow content, as the HTML block they render as."""


def is_qti3(data: bytes) -> bool:
    """Whether data is a QTI 3.0 package or item, from its manifest or its root element."""
    if data.startswith(b"PK"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                info = archive.getinfo("imsmanifest.xml")
                if info.file_size > 1_000_000:
                    return False
                manifest = archive.read(info)
        except (KeyError, zipfile.BadZipFile, ValueError, OSError, RuntimeError, EOFError):
            return False
        return ITEM_TYPE.encode() in manifest
    head = data[:4096]
    return b"<qti-assessment-item" in head or b"<qti-assessment-test" in head


def _children(element: Element, name: str) -> list[Element]:
    return [child for child in element if local(child.tag) == name]


def _all(element: Element, name: str) -> list[Element]:
    return [e for e in element.iter() if local(e.tag) == name]


def _html(element: Element, interaction: Element | None = None) -> str:
    """The HTML an element's content renders as, leaving out feedback and, of the interaction,
    all but its prompt."""
    parts = [escape(element.text or "", quote=False)]
    for child in element:
        name = local(child.tag)
        if child is interaction and name == "qti-text-entry-interaction":
            parts.append("_____")  # the gap the answer fills, as GIFT's missing word shows it
        elif child is interaction:
            parts += [f"<div>{_html(p)}</div>" for p in _children(child, "qti-prompt")]
        elif name not in FEEDBACK:
            tag = CONTAINERS.get(name, name)
            kept = "".join(
                f' {local(key)}="{escape(value)}"'
                for key, value in child.attrib.items()
                if local(key) in ("href", "src", "alt", "data")
            )
            parts.append(f"<{tag}{kept}>{_html(child, interaction)}</{tag}>")
        parts.append(escape(child.tail or "", quote=False))
    return "".join(parts)


def _text(element: Element, interaction: Element | None = None) -> str:
    """An element's text as a student reads it."""
    return from_html(_html(element, interaction))


def _number(text: str | None, where: str) -> float:
    try:
        value = float((text or "").strip())
    except ValueError:
        raise FormatError([f"{where}: {text!r} is not a number"]) from None
    if not math.isfinite(value):
        raise FormatError([f"{where}: {text!r} is not a number"])
    return value


def _keys(item: Element, response: str, where: str) -> tuple[list[str], dict[str, float], bool]:
    """The right choices' identifiers, each choice's mapped score, and whether several may be
    chosen, from the response's declaration."""
    declaration = next(
        (e for e in _all(item, "qti-response-declaration") if e.get("identifier") == response),
        None,
    )
    if declaration is None:
        raise FormatError([f"{where}: no <qti-response-declaration> for {response!r}"])
    cardinality = declaration.get("cardinality", "single")
    if cardinality not in ("single", "multiple"):
        raise Unsupported(f"its answer is {cardinality}, not one choice or several")
    several = cardinality == "multiple"
    right = [
        (value.text or "").strip()
        for correct in _children(declaration, "qti-correct-response")
        for value in _children(correct, "qti-value")
    ]
    scores = {
        entry.get("map-key", ""): _number(entry.get("mapped-value"), f"{where}: map-entry")
        for mapping in _children(declaration, "qti-mapping")
        for entry in _children(mapping, "qti-map-entry")
    }
    if scores and not several:
        top = max(scores.values())
        partial = [score for score in scores.values() if 0 < score < top]
        if partial:
            raise Unsupported(f"partial credit ({partial[0]:g} of {top:g}) on an answer")
        right = right or [key for key, score in scores.items() if score == top > 0]
    if several:
        right = right or [key for key, score in scores.items() if score > 0]
    if not right or (len(right) != 1 and not several):
        raise Unsupported(f"{len(right)} right answers; a one-answer question has exactly one")
    return right, scores, several


def _condition(expression: Element, response: str) -> str | tuple[str, str]:
    """When a response-if's expression holds: "right", ("choice", id), or "other"."""
    if local(expression.tag) != "qti-match":
        return "other"
    names = [local(e.tag) for e in expression]
    variables = [e.get("identifier") for e in expression if local(e.tag) == "qti-variable"]
    if variables != [response]:
        return "other"
    if "qti-correct" in names:
        return "right"
    values = [(e.text or "").strip() for e in expression if local(e.tag) == "qti-base-value"]
    return ("choice", values[0]) if len(values) == 1 else "other"


def _settings(rules: list[Element], when, response: str, found: dict) -> None:
    """Each outcome value the rules set, with when: found[(outcome, value)] gets every
    occasion ("always", "right", "wrong", ("choice", id), "other", or "response" for an
    outcome that takes the answer's identifier)."""
    for rule in rules:
        name = local(rule.tag)
        if name == "qti-set-outcome-value":
            outcome = rule.get("identifier", "")
            for value in _all(rule, "qti-base-value"):
                found.setdefault((outcome, (value.text or "").strip()), []).append(when)
            if any(v.get("identifier") == response for v in _all(rule, "qti-variable")):
                found.setdefault((outcome, None), []).append("response")
        elif name == "qti-response-condition":
            previous = None
            for branch in rule:
                branch_name = local(branch.tag)
                if branch_name == "qti-response-else":
                    occasion = "wrong" if previous == "right" else "other"
                    body = list(branch)
                else:
                    expression, *body = list(branch) or [None]
                    occasion = "other" if expression is None else _condition(expression, response)
                    previous = occasion if branch_name == "qti-response-if" else "other"
                _settings(body, occasion if when == "always" else "other", response, found)


def _feedback(
    item: Element, body: Element, choices: list[Element], response: str, right: list[str]
) -> tuple[dict[str, list[str]], list[str]]:
    """Each choice's feedback markup by identifier, and the general feedback's."""
    ids = [choice.get("identifier", "") for choice in choices]
    per_choice: dict[str, list[str]] = {i: [] for i in ids}
    general: list[str] = []
    inside = set()
    for choice in choices:
        for inline in _all(choice, "qti-feedback-inline"):
            per_choice[choice.get("identifier", "")].append(_html(inline))
            inside.add(id(inline))
    found: dict = {}
    for processing in _children(item, "qti-response-processing"):
        _settings(list(processing), "always", response, found)
    shown = [e for e in body.iter() if local(e.tag) in FEEDBACK[:2] and id(e) not in inside]
    shown += _children(item, "qti-modal-feedback")
    for element in shown:
        outcome, ident = element.get("outcome-identifier", ""), element.get("identifier", "")
        occasions = set(found.get((outcome, ident), []))
        if ident in per_choice and (outcome, None) in found:
            occasions.add(("choice", ident))
        unknown = [o for o in occasions if isinstance(o, tuple) and o[1] not in per_choice]
        if element.get("show-hide", "show") != "show" or not occasions or "other" in occasions:
            unknown.append(ident)
        if unknown:
            raise Unsupported(f'feedback "{ident}" is shown on a condition the bank cannot express')
        markup = _html(element)
        for occasion in sorted(occasions, key=str):
            if occasion == "always":
                general.append(markup)
            elif occasion == "right":
                for choice_id in right:
                    per_choice[choice_id].append(markup)
            elif occasion == "wrong":
                for choice_id in ids:
                    if choice_id not in right:
                        per_choice[choice_id].append(markup)
            else:
                per_choice[occasion[1]].append(markup)
    return per_choice, general


def _question(where: str, item: Element) -> Question:
    """One QTI 3.0 item as a bank question; Unsupported or FormatError otherwise."""
    body = next(iter(_children(item, "qti-item-body")), None)
    if body is None:
        raise FormatError([f"{where}: no <qti-item-body>"])
    interactions = [e for e in body.iter() if local(e.tag).endswith("-interaction")]
    kinds = [local(e.tag) for e in interactions]
    if kinds == ["qti-text-entry-interaction"]:
        return _typed_question(where, item, body, interactions[0])
    if kinds != ["qti-choice-interaction"]:
        raise Unsupported(
            f"it has {', '.join(kinds) or 'no interaction'}, not one choice or text entry "
            "interaction"
        )
    interaction = interactions[0]
    response = interaction.get("response-identifier", "RESPONSE")
    right, scores, several = _keys(item, response, where)
    if not several and interaction.get("max-choices", "1").strip() != "1":
        raise Unsupported(
            f"several answers may be chosen (max-choices {interaction.get('max-choices')})"
        )
    choices = _children(interaction, "qti-simple-choice")
    ids = [choice.get("identifier", "") for choice in choices]
    if missing := [key for key in right if key not in ids]:
        raise FormatError([f"{where}: the correct response {missing[0]!r} is none of the choices"])
    points = _points(item, where)
    prompt = _text(body, interaction)
    if not prompt:
        raise FormatError([f"{where}: no question text"])
    per_choice, general = _feedback(item, body, choices, response, right)
    bank_choices = []
    for number, (choice, ident) in enumerate(zip(choices, ids, strict=True), 1):
        text = _text(choice)
        if not text:
            raise FormatError([f"{where}/qti-simple-choice[{number}]: no answer text"])
        why = from_html("<br><br>".join(per_choice[ident]))
        bank_choices.append(Choice(id=ident, text=text, correct=ident in right, explanation=why))
    explanation, references = html_sources("".join(f"<div>{g}</div>" for g in general))
    kind = "single_choice"
    if several:
        kind, bank_choices = "multiple_answers", _weighted(bank_choices, scores, points)
    elif sorted(choice.text for choice in bank_choices) == ["False", "True"]:
        kind = "true_false"  # as QTI has no true/false of its own, and exports write it
        bank_choices = true_first(where, bank_choices)
    return TYPES_BY_NAME[kind].question_class(
        id=item.get("identifier", ""), prompt=prompt, choices=tuple(bank_choices),
        explanation=explanation, references=references,
        evidence=carried(item.get("label"), "evidence"), type=kind, points=points,
    )  # fmt: skip


def _points(item: Element, where: str) -> float:
    """The item's points: its SCORE's normal-maximum, 1 when not given."""
    score = next(
        (e for e in _all(item, "qti-outcome-declaration") if e.get("identifier") == "SCORE"), None
    )
    most = score.get("normal-maximum") if score is not None else None
    return checked_points(_number(most, f"{where}: normal-maximum") if most else 1.0)


def _weighted(choices: list[Choice], scores: dict[str, float], points: float) -> list[Choice]:
    """Several-answer choices with their fractions: the mapping's scores as shares of the
    points, or else each right choice an equal share. With a mapping, the choices it scores
    above nothing are the right ones, whatever the correct response says."""
    if scores:
        fractions = [round(scores.get(c.id, 0) / points, 7) for c in choices]
        if any(not -1 <= fraction <= 1 for fraction in fractions):
            raise Unsupported("a choice scores more than the question's points")
        if not any(fraction > 0 for fraction in fractions):
            raise Unsupported("no choice scores anything")
        return [
            WeightedChoice(**{**vars(c), "correct": fraction > 0}, fraction=fraction)
            for c, fraction in zip(choices, fractions, strict=True)
        ]
    shares = default_fractions([choice.correct for choice in choices])
    return [
        WeightedChoice(**vars(choice), fraction=share)
        for choice, share in zip(choices, shares, strict=True)
    ]


def _items(data: bytes, source: str) -> tuple[list[tuple], list[tuple[str, bytes]]]:
    """The item files, each with how to find the files it names, and the test files of a
    package or a bare XML file, by name."""
    if not data.startswith(b"PK"):
        return [(source, data, lambda src: None)], []
    files = package_files(data, source)
    if "imsmanifest.xml" in files:
        items = manifest_files(files, source, ITEM_TYPE)
        tests = manifest_files(files, source, TEST_TYPE)
    else:
        xml = sorted(name for name in files if name.endswith(".xml"))
        items = [name for name in xml if b"<qti-assessment-item" in files[name]]
        tests = [name for name in xml if b"<qti-assessment-test" in files[name]]
    if not items:
        raise FormatError([f"{source}: no QTI 3.0 item ({ITEM_TYPE}) in the package"])
    return (
        [(f"{source}/{name}", files[name], in_package(files, name)) for name in items],
        [(f"{source}/{name}", files[name]) for name in tests],
    )


def parse(data: bytes, source: str) -> Source:
    """The single-choice items of a QTI 3.0 package or item file; FormatError lists every
    malformed one."""
    check_size(data, source)
    items, tests = _items(data, source)
    title = description = slug = None
    for name, xml in tests:
        test = parse_xml(xml, name)
        title = title or test.get("title") or None
        slug = slug or exported_slug(test.get("identifier"))
        for rubric in _all(test, "qti-rubric-block"):
            description = description or _text(rubric) or None
    found, shuffles = Found(), []
    for name, xml, find in items:
        root = parse_xml(xml, name)
        if local(root.tag) != "qti-assessment-item":
            found.errors.append(f"{name}: /{local(root.tag)}: a QTI 3.0 item's root is "
                                "<qti-assessment-item>")  # fmt: skip
            continue
        where = f"{name}: qti-assessment-item identifier={root.get('identifier', '?')!r}"
        if found.read(where, _question, root, find=find):
            shuffles += [e.get("shuffle") == "true" for e in _all(root, "qti-choice-interaction")]
    return found.source(title=title, description=description,
                        shuffle_choices=bool(shuffles) and all(shuffles), slug=slug)  # fmt: skip


def _sub(parent: Element, tag: str, text: str | None = None, **attributes: str) -> Element:
    element = ElementTree.SubElement(parent, tag, attributes)
    element.text = text
    return element


def _content(parent: Element, markup: str) -> None:
    """Cleaned HTML (app/text.py) as XHTML content at the end of parent, as QTI 3 keeps text."""
    # br and img are the subset's void elements (QTI's img has no lazy loading), and &nbsp; the
    # one reference XML does not define.
    xhtml = re.sub(r'<img ([^<>]*?)(?: loading="lazy")?>', r"<img \1/>", markup)
    xhtml = xhtml.replace("<br>", "<br/>").replace("&nbsp;", "&#160;")
    fragment = ElementTree.fromstring(f"<div>{xhtml}</div>")
    if len(parent):
        parent[-1].tail = (parent[-1].tail or "") + (fragment.text or "")
    else:
        parent.text = (parent.text or "") + (fragment.text or "")
    parent.extend(fragment)


def _paragraphs(parent: Element, text: str) -> None:
    """Quiz text as block content: paragraphs, lists and code blocks."""
    _content(parent, str(quiz_text.rich(text)))


def _lines(parent: Element, text: str) -> None:
    """A choice as inline content, as a choice is a phrase."""
    _content(parent, str(quiz_text.phrase(text)))


def _sources(parent: Element, references: tuple[Reference, ...]) -> None:
    """The sources as a paragraph of links that common.split_sources reads back."""
    if not references:
        return
    paragraph = _sub(parent, "p", "Sources: ")
    last = None
    for number, reference in enumerate(references):
        before = ("; " if number else "") + f"{reference.title} <"
        if last is None:
            paragraph.text += before
        else:
            last.tail += before
        last = _sub(paragraph, "a", reference.url, href=reference.url)
        last.tail = ">"


def _item(question: Question, shuffle: bool) -> Element:
    item = Element(
        "qti-assessment-item", xmlns=NAMESPACE, identifier=question.id, title=question.id,
        adaptive="false", **{"time-dependent": "false"},
    )  # fmt: skip
    if question.evidence:
        item.set("label", marked("evidence", question.evidence))
    if question.type in ("numerical", "short_answer"):
        _typed_item(item, question)
        return item
    several = question.type == "multiple_answers"
    declaration = _sub(item, "qti-response-declaration", identifier="RESPONSE",
                       cardinality="multiple" if several else "single",
                       **{"base-type": "identifier"})  # fmt: skip
    correct = _sub(declaration, "qti-correct-response")
    for choice in question.choices:
        if choice.correct:
            _sub(correct, "qti-value", choice.id)
    if several:  # each choice's share of the points, summed, between nothing and all of them
        mapping = _sub(declaration, "qti-mapping", **{"default-value": "0", "lower-bound": "0",
                       "upper-bound": f"{question.points:g}"})  # fmt: skip
        for choice in question.choices:
            _sub(mapping, "qti-map-entry", **{"map-key": choice.id,
                 "mapped-value": f"{choice.fraction * question.points:.7g}"})  # fmt: skip
    score = _sub(item, "qti-outcome-declaration", identifier="SCORE", cardinality="single",
                 **{"base-type": "float", "normal-maximum": f"{question.points:g}"})  # fmt: skip
    _sub(_sub(score, "qti-default-value"), "qti-value", "0")
    for outcome in ("FEEDBACK", "GENERAL"):
        # FEEDBACK takes the response: the choices ticked, when several may be.
        cardinality = "multiple" if several and outcome == "FEEDBACK" else "single"
        _sub(item, "qti-outcome-declaration", identifier=outcome, cardinality=cardinality,
             **{"base-type": "identifier"})  # fmt: skip
    body = _sub(item, "qti-item-body")
    _content(body, quiz_text.prompt_html(question.prompt))
    interaction = _sub(
        body, "qti-choice-interaction", **{"response-identifier": "RESPONSE",
        "shuffle": "true" if shuffle else "false", "max-choices": "0" if several else "1"},
    )  # fmt: skip
    for choice in question.choices:
        _lines(_sub(interaction, "qti-simple-choice", identifier=choice.id), choice.text)
    # A block, not inline feedback inside the choice, so an explanation keeps its lists and code.
    for choice in (choice for choice in question.choices if choice.explanation):
        feedback = _sub(body, "qti-feedback-block", identifier=choice.id,
                        **{"outcome-identifier": "FEEDBACK", "show-hide": "show"})  # fmt: skip
        _paragraphs(_sub(feedback, "qti-content-body"), choice.explanation)
    processing = _sub(item, "qti-response-processing")
    # The chosen answer's identifier shows its inline feedback; GENERAL shows the explanation.
    _sub(_sub(processing, "qti-set-outcome-value", identifier="FEEDBACK"), "qti-variable",
         identifier="RESPONSE")  # fmt: skip
    _sub(_sub(processing, "qti-set-outcome-value", identifier="GENERAL"), "qti-base-value",
         "explanation", **{"base-type": "identifier"})  # fmt: skip
    if several:
        _sub(_sub(processing, "qti-set-outcome-value", identifier="SCORE"), "qti-map-response",
             identifier="RESPONSE")  # fmt: skip
    else:
        condition = _sub(_sub(processing, "qti-response-condition"), "qti-response-if")
        match = _sub(condition, "qti-match")
        _sub(match, "qti-variable", identifier="RESPONSE")
        _sub(match, "qti-correct", identifier="RESPONSE")
        _sub(_sub(condition, "qti-set-outcome-value", identifier="SCORE"), "qti-base-value",
             f"{question.points:g}", **{"base-type": "float"})  # fmt: skip
    modal = _sub(item, "qti-modal-feedback", identifier="explanation",
                 **{"outcome-identifier": "GENERAL", "show-hide": "show"})  # fmt: skip
    content = _sub(modal, "qti-content-body")
    _paragraphs(content, question.explanation)
    _sources(content, question.references)
    return item


def _xml(root: Element) -> bytes:
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)


def write(quiz: Quiz, pictures: dict[str, bytes] | None = None) -> bytes:
    """The quiz as a QTI 3.0 package: one item per question, and a test with its title, its
    description as a rubric block for candidates, and its items in order; the files of
    `pictures` an item shows in images/, listed as the item's own."""
    ident = f"quizwright-{quiz.slug}"
    test = Element("qti-assessment-test", xmlns=NAMESPACE, identifier=ident, title=quiz.title)
    part = _sub(test, "qti-test-part", identifier="part", **{"navigation-mode": "linear",
                "submission-mode": "individual"})  # fmt: skip
    section = _sub(part, "qti-assessment-section", identifier="section", title=quiz.title,
                   visible="true")  # fmt: skip
    _paragraphs(_sub(section, "qti-rubric-block", view="candidate", use="instructions"),
                quiz.description)  # fmt: skip
    manifest = Element("manifest", xmlns=MANIFEST, identifier=f"{ident}-manifest")
    metadata = _sub(manifest, "metadata")
    _sub(metadata, "schema", "QTI Package")
    _sub(metadata, "schemaversion", "3.0.0")
    _sub(manifest, "organizations")
    resources = _sub(manifest, "resources")
    files = []
    for number, question in enumerate(quiz.questions, 1):
        name = f"items/{number:03d}-{question.id}.xml"
        _sub(section, "qti-assessment-item-ref", identifier=question.id, href=name)
        resource = _sub(resources, "resource", identifier=f"item-{number:03d}", type=ITEM_TYPE,
                        href=name)  # fmt: skip
        _sub(resource, "file", href=name)
        item, shown = packed(_xml(_item(question, quiz.shuffle_choices)).decode(), pictures or {},
                             "../images")  # fmt: skip
        files.append((name, item.encode()))
        for picture_name, data in sorted(shown.items()):
            _sub(resource, "file", href=f"images/{picture_name}")
            files.append((f"images/{picture_name}", data))
    test_resource = _sub(resources, "resource", identifier=ident, type=TEST_TYPE, href="test.xml")
    _sub(test_resource, "file", href="test.xml")
    for number in range(1, len(quiz.questions) + 1):
        _sub(test_resource, "dependency", identifierref=f"item-{number:03d}")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        written = [("imsmanifest.xml", _xml(manifest)), ("test.xml", _xml(test)), *files]
        for name, data in dict(written).items():  # a picture two items show, packed once
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            package.writestr(info, data)
    return buffer.getvalue()


# Typed answers: a text entry whose response processing tries each accepted answer in turn.

XSD_SPECIAL = set("\\|.-^?*+{}()[]$")
"""What XML Schema's regular expressions, which qti-pattern-match takes, give a meaning."""
_PATTERN_TOKEN = re.compile(r"\.\*|\[(\w)(\w)\]|\\(.)|(.)", re.S)


def _pattern(text: str, case_sensitive: bool) -> str | None:
    """A short answer with Moodle's `*` as an XML Schema pattern (whole-string, as XSD's are),
    each letter as [xX] where capitals do not count; None when a plain comparison says it."""
    parts = re.split(r"(\\\*|\*)", text)
    if "*" not in parts:
        return None
    out = []
    for part in parts:
        if part == "*":
            out.append(".*")
            continue
        for char in "*" if part == "\\*" else part:
            if not case_sensitive and _cased(char):  # as written first, then its other case
                out.append(f"[{char}{char.swapcase()}]")
            else:
                out.append("\\" + char if char in XSD_SPECIAL else char)
    return "".join(out)


def _cased(char: str) -> bool:
    """A letter with one capital and one small form, which [xX] can say (not ß, whose capital
    is SS)."""
    return char.lower() != char.upper() and len(char.lower()) == len(char.upper()) == 1


def _wildcards(pattern: str) -> tuple[str, bool]:
    """A pattern _pattern wrote, back as the answer and whether capitals count; Unsupported for
    any other regular expression, which Moodle's wildcards cannot say."""
    text, folded = [], []
    for token in _PATTERN_TOKEN.finditer(pattern):
        first, other, escaped, plain = token.groups()
        if token.group() == ".*":
            text.append("*")
        elif first and _cased(first) and other == first.swapcase():
            text.append(first)
            folded.append(True)
        elif escaped is not None and escaped in XSD_SPECIAL:  # \d or \w are classes, not letters
            text.append("\\*" if escaped == "*" else escaped)
        elif plain is not None and plain not in XSD_SPECIAL:
            text.append(plain)
            if _cased(plain):
                folded.append(False)
        else:
            raise Unsupported(f"the pattern {pattern!r} is more than Moodle's * wildcards")
    if True in folded and False in folded:
        raise Unsupported(f"the pattern {pattern!r} counts capitals in some letters only")
    return "".join(text), folded == [False] * len(folded) and bool(folded)


def _test(answer, numerical: bool, case_sensitive: bool) -> Element:
    """The expression that holds when the response is this accepted answer."""
    if numerical:
        margin = number_text(answer.tolerance)  # as far below as above
        within = {"tolerance-mode": "absolute", "tolerance": f"{margin} {margin}"}
        test = Element("qti-equal", **within)
        value, base = answer.text, "float"
    elif (pattern := _pattern(answer.text, case_sensitive)) is not None:
        test = Element("qti-pattern-match", pattern=pattern)
        _sub(test, "qti-variable", identifier="RESPONSE")
        return test
    else:
        test = Element("qti-string-match", **{"case-sensitive": str(case_sensitive).lower()})
        value, base = answer.text.replace("\\*", "*"), "string"
    _sub(test, "qti-variable", identifier="RESPONSE")
    _sub(test, "qti-base-value", value, **{"base-type": base})
    return test


def _typed_item(item: Element, question) -> None:
    """A text entry after the prompt; each accepted answer a branch that scores its share and
    shows its feedback, tried in order; the else branch shows what any other answer is told."""
    numerical = question.type == "numerical"
    case_sensitive = getattr(question, "case_sensitive", False)
    base_type = "float" if numerical else "string"
    declaration = _sub(item, "qti-response-declaration", identifier="RESPONSE",
                       cardinality="single", **{"base-type": base_type})  # fmt: skip
    correct = _sub(declaration, "qti-correct-response")
    _sub(correct, "qti-value", question.best.text.replace("\\*", "*"))
    score = _sub(item, "qti-outcome-declaration", identifier="SCORE", cardinality="single",
                 **{"base-type": "float", "normal-maximum": f"{question.points:g}"})  # fmt: skip
    _sub(_sub(score, "qti-default-value"), "qti-value", "0")
    for outcome in ("FEEDBACK", "GENERAL"):
        _sub(item, "qti-outcome-declaration", identifier=outcome, cardinality="single",
             **{"base-type": "identifier"})  # fmt: skip
    body = _sub(item, "qti-item-body")
    _content(body, quiz_text.prompt_html(question.prompt))
    entry = _sub(_sub(body, "p"), "qti-text-entry-interaction", **{
        "response-identifier": "RESPONSE", "expected-length": "20"})  # fmt: skip
    entry.tail = None
    said = [(f"answer{n}", a.feedback) for n, a in enumerate(question.answers, 1)]
    for ident, words in [*said, ("other", question.otherwise)]:
        if words:
            feedback = _sub(body, "qti-feedback-block", identifier=ident,
                            **{"outcome-identifier": "FEEDBACK", "show-hide": "show"})  # fmt: skip
            _paragraphs(_sub(feedback, "qti-content-body"), words)
    processing = _sub(item, "qti-response-processing")
    _sub(_sub(processing, "qti-set-outcome-value", identifier="GENERAL"), "qti-base-value",
         "explanation", **{"base-type": "identifier"})  # fmt: skip
    condition = _sub(processing, "qti-response-condition")
    for number, answer in enumerate(question.answers, 1):
        branch = _sub(condition, "qti-response-if" if number == 1 else "qti-response-else-if")
        branch.append(_test(answer, numerical, case_sensitive))
        _sub(_sub(branch, "qti-set-outcome-value", identifier="SCORE"), "qti-base-value",
             f"{answer.fraction * question.points:.7g}", **{"base-type": "float"})  # fmt: skip
        _sub(_sub(branch, "qti-set-outcome-value", identifier="FEEDBACK"), "qti-base-value",
             f"answer{number}", **{"base-type": "identifier"})  # fmt: skip
    otherwise = _sub(condition, "qti-response-else")
    _sub(_sub(otherwise, "qti-set-outcome-value", identifier="FEEDBACK"), "qti-base-value",
         "other", **{"base-type": "identifier"})  # fmt: skip
    modal = _sub(item, "qti-modal-feedback", identifier="explanation",
                 **{"outcome-identifier": "GENERAL", "show-hide": "show"})  # fmt: skip
    content = _sub(modal, "qti-content-body")
    _paragraphs(content, question.explanation)
    _sources(content, question.references)


def _branch(where: str, expression: Element, numerical: bool) -> tuple[str, float, bool | None]:
    """One branch's accepted answer: its text, its tolerance, and whether capitals count (None
    where the branch does not say)."""
    name = local(expression.tag)
    values = [(e.text or "").strip() for e in expression if local(e.tag) == "qti-base-value"]
    if name == "qti-pattern-match" and not numerical:
        text, case_sensitive = _wildcards(expression.get("pattern", ""))
        return text, 0, case_sensitive
    if len(values) != 1 or name not in ("qti-equal", "qti-match", "qti-string-match"):
        raise Unsupported(f"an answer is tested by {name}, which the bank cannot express")
    if numerical:
        spans = (expression.get("tolerance") or "0").split()
        mode = expression.get("tolerance-mode", "exact")
        if mode not in ("exact", "absolute") or len(set(spans)) > 1:
            raise Unsupported("a tolerance that is relative or not the same both ways")
        margin = _number(spans[0], f"{where}: tolerance") if spans else 0
        return values[0], margin if expression.get("tolerance-mode") == "absolute" else 0, None
    sensitive = expression.get("case-sensitive")
    text = values[0].replace("*", "\\*")
    return text, 0, None if sensitive is None else sensitive.strip() == "true"


def _typed_question(where: str, item: Element, body: Element, interaction: Element) -> Question:
    """A text entry item: numerical when its response is a number, else short answer."""
    response = interaction.get("response-identifier", "RESPONSE")
    declaration = next(
        (e for e in _all(item, "qti-response-declaration") if e.get("identifier") == response),
        None,
    )
    if declaration is None:
        raise FormatError([f"{where}: no <qti-response-declaration> for {response!r}"])
    numerical = declaration.get("base-type") in ("float", "integer")
    kind = "numerical" if numerical else "short_answer"
    points = _points(item, where)
    # A gap alone after the question, as exports write the field, marks no place in it.
    prompt = _text(body, interaction).removesuffix("\n\n_____")
    if not prompt:
        raise FormatError([f"{where}: no question text"])
    blocks = {e.get("identifier", ""): e for e in body.iter() if local(e.tag) in FEEDBACK[:2]}
    accepted, otherwise, cases = [], "", set()
    for condition in _all(item, "qti-response-condition"):
        for branch in condition:
            if local(branch.tag) != "qti-response-else" and not len(branch):
                raise Unsupported("an answer's branch tests nothing")
            sets = {s.get("identifier"): (s.findtext("{*}qti-base-value") or "").strip()
                    for s in _children(branch, "qti-set-outcome-value")}  # fmt: skip
            said = _text(blocks[sets["FEEDBACK"]]) if sets.get(
                "FEEDBACK") in blocks else ""  # fmt: skip
            if local(branch.tag) == "qti-response-else":
                otherwise = said
                continue
            text, margin, case = _branch(where, branch[0], numerical)
            fraction = _number(sets.get("SCORE", "0"), f"{where}: score") / points
            if not 0 <= fraction <= 1 + 1e-9:
                raise Unsupported("an answer scores more than the question's points or below 0")
            cases.add(case)
            accepted.append(_accepted(where, text, min(fraction, 1.0), said, margin, numerical))
    if not accepted:  # no processing of its own: the correct response, or the mapping
        entries = [e for m in _children(declaration, "qti-mapping")
                   for e in _children(m, "qti-map-entry")]  # fmt: skip
        scores = {e.get("map-key", ""): _number(e.get("mapped-value"), f"{where}: map-entry")
                  for e in entries}  # fmt: skip
        # A string mapping is not case-sensitive unless an entry says so (QTI 3.0's default).
        cases |= {e.get("case-sensitive", "false").strip() == "true" for e in entries}
        right = [(v.text or "").strip() for c in _children(declaration, "qti-correct-response")
                 for v in _children(c, "qti-value")]  # fmt: skip
        for key in dict.fromkeys([*right, *scores]):
            share = 1.0 if key in right else min(max(scores[key] / points, 0.0), 1.0)
            text = key if numerical else key.replace("*", "\\*")
            accepted.append(_accepted(where, text, share, "", 0, numerical))
    if not any(answer.fraction >= 1 - 1e-9 for answer in accepted):
        raise Unsupported("no answer earns full marks")
    if len(cases - {None}) > 1:
        raise Unsupported("some answers count capitals and others do not")
    general = [_html(e) for e in _children(item, "qti-modal-feedback")
               if e.get("outcome-identifier") == "GENERAL"]  # fmt: skip
    explanation, references = html_sources("".join(f"<div>{g}</div>" for g in general))
    own = {} if numerical else {"case_sensitive": True in cases}
    return TYPES_BY_NAME[kind].question_class(
        id=item.get("identifier", ""), prompt=prompt, choices=(), explanation=explanation,
        references=references, evidence=carried(item.get("label"), "evidence"), type=kind,
        points=points, answers=tuple(accepted), otherwise=otherwise, **own,
    )  # fmt: skip


def _accepted(where: str, text: str, fraction: float, said: str, margin: float, numerical: bool):
    fraction = 1.0 if fraction > 1 - 1e-9 else round(fraction, 7)
    if not numerical:
        if not text or len(text) > MOST_TYPED:
            raise FormatError([f"{where}: an accepted answer is empty or over {MOST_TYPED}"])
        return Accepted(text, fraction, said)
    return numeric_answer(_number(text, f"{where}: an accepted number"), margin, fraction, said)
