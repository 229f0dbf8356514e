"""IMS QTI 1.2 as Canvas exports and imports it: a zip package whose imsmanifest.xml names an
assessment (`<questestinterop>`) of `multiple_choice_question` and `true_false_question` items
(Canvas writes both as one choice response), each choice's feedback in
an `<itemfeedback>` and the general feedback in `general_fb`. A bare assessment XML file is read
too. Packages are read in memory, never unpacked to disk, and checked for zip bombs and unsafe
names (zip slip). Quizwright's exports carry the quiz's slug in the assessment's identifier
(`quizwright-SLUG`) and each question's evidence key in an item metadata field
(`quizwright_evidence`)."""

import io
import lzma
import math
import re
import zipfile
import zlib
from xml.etree import ElementTree
from xml.etree.ElementTree import Element

from .. import text as quiz_text
from ..bank import Quiz
from ..question_types import TYPES as TYPES_BY_NAME
from ..question_types import Choice, Question, right_choice
from ..question_types.multiple_answers import WeightedChoice, default_fractions
from ..question_types.numerical import NumericAnswer, number_text, numeric_answer
from ..question_types.typed import Accepted
from .common import (
    CANVAS_FILES,
    MAX_BYTES,
    FormatError,
    Found,
    Source,
    Unsupported,
    check_size,
    checked_points,
    exported_slug,
    fits,
    from_html,
    html_sources,
    in_package,
    local,
    packed,
    parse_xml,
    picture,
    sources_html,
    to_html,
    true_first,
)

DROPS = (
    "a select-all question's own fractions and all-or-nothing scoring (Canvas shares the points "
    "equally among the right answers)",
    "a numerical question's units (its answers stay in the base unit)",
    "whether a short answer's capitals must match (Canvas ignores them)",
    "a short answer's * wildcards (Canvas compares whole answers: the star goes as a star)",
)
PICTURES = "quizwright-pictures"
"""The folder of a course's files, in Canvas, where an export puts its pictures."""
CARRIES_FILES = True
"""Whether an export carries the files of the pictures its text shows."""
TYPES = frozenset({"single_choice", "true_false", "multiple_answers", "numerical", "short_answer"})
"""The question types (app/question_types/) this format reads and writes."""
MAX_ENTRIES = 10_000
MAX_RATIO = 200
"""No honest XML compresses this well; a zip bomb does."""
QTI = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
MANIFEST = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
CANVAS = "http://canvas.instructure.com/xsd/cccv1p0"
CANVAS_TYPES = {
    "single_choice": "multiple_choice_question",
    "true_false": "true_false_question",
    "multiple_answers": "multiple_answers_question",
    "numerical": "numerical_question",
    "short_answer": "short_answer_question",
}
"""Canvas's question_type for each type here."""
KINDS = {canvas: kind for kind, canvas in CANVAS_TYPES.items()}
OUTCOME_FEEDBACK = {True: "correct_fb", False: "general_incorrect_fb"}
"""Canvas's comments for any right answer and for any wrong one, by whether the answer is right."""
EVIDENCE = "quizwright_evidence"
"""The item metadata field that carries a question's evidence key."""
UNSAFE_NAME = re.compile(r"(^[/\\])|(^[A-Za-z]:)|((^|[/\\])\.\.([/\\]|$))|\x00")


def _safe_members(archive: zipfile.ZipFile, source: str, packed: int) -> dict[str, bytes]:
    """Every file in a package of `packed` bytes, read within the size limits; FormatError for
    an unsafe one."""
    members = archive.infolist()
    if len(members) > MAX_ENTRIES:
        raise FormatError([f"{source}: holds {len(members)} files, more than {MAX_ENTRIES}"])
    errors = [
        f"{source}: {info.filename!r}: unsafe file name (an absolute path or '..' would write "
        "outside the package)"
        for info in members
        if UNSAFE_NAME.search(info.filename) or not info.filename
    ]
    if errors:
        raise FormatError(errors)
    files, total = {}, 0
    for info in members:
        if info.is_dir():
            continue
        if info.file_size > MAX_RATIO * max(info.compress_size, 1) and info.file_size > 1_000_000:
            raise FormatError(
                [f"{source}: {info.filename}: unpacks {info.file_size:,} bytes from "
                 f"{info.compress_size:,} (a zip bomb?)"]
            )  # fmt: skip
        with archive.open(info) as member:
            # The header's size may lie: read no more than what is left of the limit.
            data = member.read(MAX_BYTES - total + 1)
        total += len(data)
        if total > MAX_BYTES:
            raise FormatError(
                [f"{source}: unpacks to more than {MAX_BYTES // 1_000_000} MB (a zip bomb?)"]
            )
        # Many files each just small enough for the check above add up (attacker review).
        if total > MAX_RATIO * packed and total > 1_000_000:
            raise FormatError(
                [f"{source}: unpacks {total:,} bytes and more from {packed:,} (a zip bomb?)"]
            )
        files[info.filename] = data
    return files


def package_files(data: bytes, source: str) -> dict[str, bytes]:
    """Every file of a zip package by name, read in memory within the limits; FormatError for
    a damaged, unsafe or oversized package."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        return _safe_members(archive, source, len(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as error:
        raise FormatError([f"{source}: not a readable zip package: {error}"]) from None
    # A bad CRC, an encrypted member, or damaged compressed data (found by test_formats_attacks).
    except (ValueError, OSError, RuntimeError, zlib.error, lzma.LZMAError) as error:
        raise FormatError([f"{source}: a file in the package cannot be read: {error}"]) from None


def manifest_files(files: dict[str, bytes], source: str, kind: str) -> list[str]:
    """The XML files that the package's imsmanifest.xml lists as resources of a type starting
    with kind, in its order; FormatError when the package lacks one."""
    manifest = parse_xml(files["imsmanifest.xml"], f"{source}/imsmanifest.xml")
    names = []
    for resource in manifest.iter():
        if local(resource.tag) == "resource" and resource.get("type", "").startswith(kind):
            hrefs = [resource.get("href")] + [
                f.get("href") for f in resource if local(f.tag) == "file"
            ]
            names += [href for href in hrefs if href and href.endswith(".xml")]
    missing = [name for name in names if name not in files]
    if missing:
        raise FormatError(
            [f"{source}/imsmanifest.xml: names {name}, which the package lacks"
             for name in dict.fromkeys(missing)]
        )  # fmt: skip
    return list(dict.fromkeys(names))


def _package(data: bytes, source: str) -> list[tuple[str, bytes, bytes | None]]:
    """Each assessment XML in a package, with its name and its Canvas settings file if any."""
    files = package_files(data, source)
    if "imsmanifest.xml" in files:
        names = manifest_files(files, source, "imsqti_xml")
    else:
        names = [n for n in files if n.endswith(".xml") and b"questestinterop" in files[n]]
    if not names:
        raise FormatError([f"{source}: no QTI assessment (imsqti_xmlv1p2) in the package"])
    found = []
    for name in names:
        meta = name.rsplit("/", 1)[0] + "/assessment_meta.xml" if "/" in name else None
        settings = files.get(meta) if meta else None
        found.append((f"{source}/{name}", files[name], settings, in_package(files, name)))
    return found


def _find(element: Element, name: str) -> Element | None:
    return next((e for e in element.iter() if local(e.tag) == name), None)


def _all(element: Element, name: str) -> list[Element]:
    return [e for e in element.iter() if local(e.tag) == name]


def _mattext(element: Element | None) -> str:
    """The text of every mattext and matimage in an element, as Markdown."""
    if element is None:
        return ""
    parts = []
    for material in element.iter():
        if local(material.tag) == "matimage":
            parts.append(picture(material.get("uri", ""), material.get("label", "")))
        elif local(material.tag) != "mattext":
            continue
        elif material.get("texttype", "text/plain") == "text/html":
            parts.append(from_html(material.text or ""))
        else:
            parts.append(quiz_text.from_plain((material.text or "").strip()))
    return "\n\n".join(part for part in parts if part)


def _metadata(item: Element) -> dict[str, str]:
    return {
        (field.findtext("{*}fieldlabel") or field.findtext("fieldlabel") or ""): (
            field.findtext("{*}fieldentry") or field.findtext("fieldentry") or ""
        )
        for field in _all(item, "qtimetadatafield")
    }


def _question(where: str, item: Element) -> Question:
    metadata = _metadata(item)
    canvas_kind = metadata.get("question_type", "multiple_choice_question")
    if canvas_kind not in CANVAS_TYPES.values():
        raise Unsupported(f"of type {canvas_kind}, not {', '.join(CANVAS_TYPES.values())}")
    presentation = _find(item, "presentation")
    if presentation is None:
        raise FormatError([f"{where}: no <presentation>"])
    typed = _all(presentation, "response_str")
    if len(typed) == 1 and not _all(presentation, "response_lid"):
        return _typed(where, item, metadata, presentation, canvas_kind)
    responses = _all(presentation, "response_lid")
    if len(responses) != 1:
        raise Unsupported("not one choice response (fill-in, essay or several parts)")
    several = responses[0].get("rcardinality", "Single") == "Multiple"
    kind = "multiple_answers" if several else KINDS.get(canvas_kind, "single_choice")
    prompt = _prompt(where, presentation)
    labels = _all(responses[0], "response_label")
    decvar = _find(item, "decvar")
    top = _score(where, decvar.get("maxvalue", "100")) if decvar is not None else 100.0
    scores: dict[str, float] = {}
    rights: set[str] = set()  # the choices to tick, when several may be
    feedback: dict[str, str] = {}
    general = None
    for condition in _all(item, "respcondition"):
        conditionvar = _find(condition, "conditionvar")
        negated = {id(e) for n in _all(condition, "not") for e in n.iter()}
        equal = [e for e in _all(condition, "varequal") if id(e) not in negated]
        setvars = _all(condition, "setvar")
        links = [e.get("linkrefid") for e in _all(condition, "displayfeedback")]
        links = [link for link in links if link not in OUTCOME_FEEDBACK.values()]
        if conditionvar is not None and _find(conditionvar, "other") is not None:
            general = general or (links[0] if links and not setvars else None)
            continue
        if len(equal) > 1 and setvars:
            if not several:
                raise Unsupported("a combination of answers scores, not one choice")
            rights |= {(e.text or "").strip() for e in equal}  # Canvas: these, and no other
            continue
        if len(equal) != 1:
            continue
        ident = (equal[0].text or "").strip()
        for setvar in setvars:
            scores[ident] = scores.get(ident, 0) + _score(where, setvar.text or "0")
        for link in links:
            feedback.setdefault(ident, link)
    texts = {e.get("ident"): _mattext(e) for e in _all(item, "itemfeedback")}
    if "general_fb" in texts:
        general = "general_fb"
    partial = [score for score in scores.values() if 0 < score < top]
    if partial and not several:
        raise Unsupported(f"partial credit ({partial[0]:g} of {top:g}) on an answer")
    choices = []
    for number, label in enumerate(labels, 1):
        ident = label.get("ident", "")
        text = _mattext(label)
        correct = ident in rights or scores.get(ident, 0) >= (1e-9 if several else top)
        # Canvas shows its comment for any right (or wrong) answer beside the answer's own.
        whys = [texts.get(feedback.get(ident), ""), texts.get(OUTCOME_FEEDBACK[correct])]
        if not text:
            raise FormatError([f"{where}/response_label[{number}]: no answer text"])
        explanation = "\n\n".join(why for why in whys if why)
        choices.append(Choice(id=ident, text=text, correct=correct, explanation=explanation))
    right = sum(choice.correct for choice in choices)
    if right == 0 or (right != 1 and not several):
        raise Unsupported(
            f"{right} answers score full marks; a one-answer question has exactly one right"
        )
    if kind == "true_false":
        choices = true_first(where, choices)
    if several:  # Canvas's partial credit: the right ones share the points equally
        shares = default_fractions([choice.correct for choice in choices])
        choices = [
            WeightedChoice(**vars(choice), fraction=share)
            for choice, share in zip(choices, shares, strict=True)
        ]
    explanation, references = _general(item, general) if general else ("", ())
    title = item.get("title", "")
    return TYPES_BY_NAME[kind].question_class(
        id="" if title.strip().lower() in ("", "question") else title,
        prompt=prompt, choices=tuple(choices), explanation=explanation, references=references,
        evidence=fits("evidence", metadata.get(EVIDENCE)), type=kind,
        points=_points(where, metadata.get("points_possible")),
    )  # fmt: skip


def _prompt(where: str, presentation: Element) -> str:
    """The question's text: its presentation's materials."""
    prompt = ""
    for part in presentation:
        text = _mattext(part) if local(part.tag) == "material" else ""
        prompt = (prompt + "\n\n" + text).strip()
    if not prompt:
        raise FormatError([f"{where}/presentation: no question text"])
    return prompt


def _general(item: Element, ident: str = "general_fb") -> tuple[str, tuple]:
    """An item feedback as explanation and sources (general_fb: the general feedback)."""
    found = next((e for e in _all(item, "itemfeedback") if e.get("ident") == ident), None)
    if found is None:
        return "", ()
    markup = "".join(
        (m.text or "") if m.get("texttype") == "text/html"
        else to_html(quiz_text.from_plain(m.text or ""))
        for m in _all(found, "mattext")
    )  # fmt: skip
    return html_sources(markup)


def _typed(where: str, item: Element, metadata: dict, presentation: Element, canvas_kind: str):
    """A fill-in item: Canvas's numerical_question (an exact number with a margin, or a range)
    or short_answer_question (words), each answer a condition that scores and links feedback."""
    kind = "numerical" if canvas_kind == "numerical_question" else "short_answer"
    prompt = _prompt(where, presentation)
    decvar = _find(item, "decvar")
    top = _score(where, decvar.get("maxvalue", "100")) if decvar is not None else 100.0
    texts = {e.get("ident"): _mattext(e) for e in _all(item, "itemfeedback")}
    accepted = []
    for condition in _all(item, "respcondition"):
        conditionvar = _find(condition, "conditionvar")
        if conditionvar is None or _find(conditionvar, "other") is not None:
            continue
        if _find(conditionvar, "not") is not None:
            raise Unsupported("an answer is accepted for what was not typed")
        scored = sum(_score(where, s.text or "0") for s in _all(condition, "setvar"))
        links = [e.get("linkrefid") for e in _all(condition, "displayfeedback")]
        said = next((texts[link] for link in links if link in texts), "")
        fraction = min(max(scored / top, 0.0), 1.0) if top else 0.0
        if kind == "numerical":
            accepted.append(_numeric(where, conditionvar, fraction, said))
        else:
            # Canvas compares whole answers: a star in one is a star, not Moodle's wildcard.
            words = [(e.text or "").strip() for e in _all(conditionvar, "varequal")]
            accepted += [
                Accepted(word.replace("*", "\\*"), fraction, said) for word in words if word
            ]
    if not any(answer.fraction == 1 for answer in accepted):
        raise Unsupported("no answer earns full marks")
    otherwise = texts.get(OUTCOME_FEEDBACK[False], "")
    explanation, references = _general(item)
    title = item.get("title", "")
    return TYPES_BY_NAME[kind].question_class(
        id="" if title.strip().lower() in ("", "question") else title,
        prompt=prompt, choices=(), explanation=explanation, references=references,
        evidence=fits("evidence", metadata.get(EVIDENCE)), type=kind,
        points=_points(where, metadata.get("points_possible")),
        answers=tuple(accepted), otherwise=otherwise,
    )  # fmt: skip


def _numeric(where: str, conditionvar: Element, fraction: float, said: str) -> NumericAnswer:
    """One answer of a numerical item: exact (varequal, with a margin as vargte and varlte
    beside it) or a range (vargte and varlte alone), as Canvas writes them."""
    if len(_all(conditionvar, "varequal")) > 1:
        raise Unsupported("a numerical answer that is one of several numbers")
    equal = _find(conditionvar, "varequal")
    low, high = _find(conditionvar, "vargte"), _find(conditionvar, "varlte")
    bounds = [_score(where, e.text or "") for e in (low, high) if e is not None]
    if equal is not None:
        value = _score(where, equal.text or "")
        margin = max(abs(b - value) for b in bounds) if bounds else 0.0
    elif len(bounds) == 2:
        value, margin = (bounds[0] + bounds[1]) / 2, abs(bounds[1] - bounds[0]) / 2
    else:
        raise Unsupported("a numerical answer that is neither a number nor a range")
    if not (math.isfinite(value) and math.isfinite(margin)):
        raise Unsupported("a numerical answer past the numbers the bank holds")
    return numeric_answer(value, round(margin, 12), fraction, said)


def _score(where: str, written: str) -> float:
    """A score the file gives, a finite number."""
    try:
        value = float(written)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise FormatError([f"{where}: score {written!r} is not a number"])
    return value


def _points(where: str, written: str | None) -> float:
    """A question's points_possible, 1 when not given (Canvas's own default)."""
    try:
        points = float(written) if written else 1.0
    except ValueError:
        raise FormatError([f"{where}: points_possible {written!r} is not a number"]) from None
    return checked_points(points)


def _assessment(name: str, data: bytes, meta: bytes | None):
    root = parse_xml(data, name)
    if local(root.tag) != "questestinterop":
        found = local(root.tag)
        raise FormatError([f"{name}: /{found}: a QTI 1.2 file's root is <questestinterop>"])
    assessment = _find(root, "assessment")
    title = assessment.get("title") if assessment is not None else None
    slug = exported_slug(assessment.get("ident")) if assessment is not None else None
    description, shuffle = None, False
    if meta is not None:
        settings = parse_xml(meta, name.rsplit("/", 1)[0] + "/assessment_meta.xml")
        title = settings.findtext("{*}title") or title
        description = from_html(settings.findtext("{*}description") or "") or None
        shuffle = (settings.findtext("{*}shuffle_answers") or "").strip() == "true"
    return root, title, description, shuffle, slug


def parse(data: bytes, source: str) -> Source:
    """The multiple-choice items of a QTI package or assessment file; FormatError lists every
    malformed one."""
    check_size(data, source)
    alone = [(source, data, None, lambda src: None)]
    files = _package(data, source) if data.startswith(b"PK") else alone
    found = Found()
    title = description = slug = None
    shuffle = False
    for name, xml, meta, find in files:
        root, title_here, description_here, shuffle, slug_here = _assessment(name, xml, meta)
        title, description = title or title_here, description or description_here
        slug = slug or slug_here
        for number, item in enumerate(_all(root, "item"), 1):
            where = f"{name}: item[{number}] ident={item.get('ident', '?')!r}"
            found.read(where, _question, item, find=find)
    return found.source(title=title, description=description, shuffle_choices=shuffle, slug=slug)


def _sub(parent: Element, tag: str, text: str | None = None, **attributes: str) -> Element:
    element = ElementTree.SubElement(parent, tag, attributes)
    element.text = text
    return element


def _material(parent: Element, html: str) -> None:
    _sub(_sub(parent, "material"), "mattext", html, texttype="text/html")


def _item(section: Element, question: Question) -> None:
    item = _sub(section, "item", ident=question.id, title=question.id)
    fields = _sub(_sub(item, "itemmetadata"), "qtimetadata")
    for label, entry in (
        ("question_type", CANVAS_TYPES[question.type]),
        ("points_possible", f"{float(question.points)}"),
        ("original_answer_ids", ",".join(c.id for c in question.choices)),
        *([(EVIDENCE, question.evidence)] if question.evidence else []),
    ):
        field = _sub(fields, "qtimetadatafield")
        _sub(field, "fieldlabel", label)
        _sub(field, "fieldentry", entry)
    presentation = _sub(item, "presentation")
    _material(presentation, quiz_text.prompt_html(question.prompt))
    if question.type in ("numerical", "short_answer"):
        _typed_item(item, presentation, question)
        return
    several = question.type == "multiple_answers"
    cardinality = "Multiple" if several else "Single"
    response = _sub(presentation, "response_lid", ident="response1", rcardinality=cardinality)
    render = _sub(response, "render_choice")
    for choice in question.choices:
        label = _sub(render, "response_label", ident=choice.id)
        _material(label, str(quiz_text.phrase(choice.text)))
    processing = _processing(item)
    for choice in question.choices:
        condition = _sub(processing, "respcondition", **{"continue": "Yes"})
        _sub(_sub(condition, "conditionvar"), "varequal", choice.id, respident="response1")
        _sub(condition, "displayfeedback", feedbacktype="Response", linkrefid=f"{choice.id}_fb")
    right = _sub(processing, "respcondition", **{"continue": "No"})
    if several:  # as Canvas writes it: every right choice, and none of the others
        every = _sub(_sub(right, "conditionvar"), "and")
        for choice in question.choices:
            parent = every if choice.correct else _sub(every, "not")
            _sub(parent, "varequal", choice.id, respident="response1")
    else:
        right_id = right_choice(question).id
        _sub(_sub(right, "conditionvar"), "varequal", right_id, respident="response1")
    _sub(right, "setvar", "100", action="Set", varname="SCORE")
    _general_feedback(item, question)
    for choice in question.choices:
        _feedback(item, f"{choice.id}_fb", choice.explanation)


def _processing(item: Element) -> Element:
    """An item's response processing: a score out of 100, and the general feedback shown
    whatever the answer."""
    processing = _sub(item, "resprocessing")
    _sub(_sub(processing, "outcomes"), "decvar", maxvalue="100", minvalue="0", varname="SCORE",
         vartype="Decimal")  # fmt: skip
    # "continue" is a Python keyword, hence the dict.
    general = _sub(processing, "respcondition", **{"continue": "Yes"})
    _sub(_sub(general, "conditionvar"), "other")
    _sub(general, "displayfeedback", feedbacktype="Response", linkrefid="general_fb")
    return processing


def _general_feedback(item: Element, question: Question) -> None:
    markup = to_html(question.explanation) + sources_html(question.references)
    _material(_sub(_sub(item, "itemfeedback", ident="general_fb"), "flow_mat"), markup)


def _feedback(item: Element, ident: str, text: str) -> None:
    """An item feedback with the Markdown text as HTML."""
    _material(_sub(_sub(item, "itemfeedback", ident=ident), "flow_mat"), to_html(text))


def _typed_item(item: Element, presentation: Element, question) -> None:
    """A fill-in response, then a condition per accepted answer that scores its share and links
    its feedback; what any other answer is told as Canvas's feedback for a wrong answer."""
    numerical = question.type == "numerical"
    response = _sub(presentation, "response_str", ident="response1", rcardinality="Single")
    blank = {"fibtype": "Decimal"} if numerical else {}
    _sub(_sub(response, "render_fib", **blank), "response_label", ident="answer1", rshuffle="No")
    processing = _processing(item)
    for number, answer in enumerate(question.answers, 1):
        condition = _sub(processing, "respcondition", **{"continue": "No"})
        test = _sub(condition, "conditionvar")
        if numerical and answer.tolerance:  # Canvas's exact answer with a margin
            either = _sub(test, "or")
            _sub(either, "varequal", answer.text, respident="response1")
            within = _sub(either, "and")
            _sub(within, "vargte", number_text(answer.value - answer.tolerance),
                 respident="response1")  # fmt: skip
            _sub(within, "varlte", number_text(answer.value + answer.tolerance),
                 respident="response1")  # fmt: skip
        else:  # Canvas has no wildcard: a star is a star (DROPS says a wildcard's loss)
            _sub(test, "varequal", answer.text.replace("\\*", "*"), respident="response1")
        _sub(condition, "setvar", number_text(round(answer.fraction * 100, 7)), action="Set",
             varname="SCORE")  # fmt: skip
        _sub(condition, "displayfeedback", feedbacktype="Response", linkrefid=f"answer{number}_fb")
    wrong = _sub(processing, "respcondition", **{"continue": "Yes"})
    _sub(_sub(wrong, "conditionvar"), "other")
    _sub(wrong, "displayfeedback", feedbacktype="Response", linkrefid=OUTCOME_FEEDBACK[False])
    _general_feedback(item, question)
    for number, answer in enumerate(question.answers, 1):
        _feedback(item, f"answer{number}_fb", answer.feedback)
    if question.otherwise:
        _feedback(item, OUTCOME_FEEDBACK[False], question.otherwise)


def _xml(root: Element) -> bytes:
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)


def write(quiz: Quiz, pictures: dict[str, bytes] | None = None) -> bytes:
    """The quiz as a QTI 1.2 package (zip) that Canvas imports with every choice's feedback,
    and the files of `pictures` its text shows, where Canvas keeps a course's files."""
    ident = f"quizwright-{quiz.slug}"
    root = Element("questestinterop", xmlns=QTI)
    assessment = _sub(root, "assessment", ident=ident, title=quiz.title)
    fields = _sub(_sub(assessment, "qtimetadata"), "qtimetadatafield")
    _sub(fields, "fieldlabel", "cc_maxattempts")
    _sub(fields, "fieldentry", "1")
    section = _sub(assessment, "section", ident="root_section")
    for question in quiz.questions:
        _item(section, question)
    meta = Element("quiz", identifier=ident, xmlns=CANVAS)
    _sub(meta, "title", quiz.title)
    _sub(meta, "description", to_html(quiz.description))
    _sub(meta, "shuffle_answers", "true" if quiz.shuffle_choices else "false")
    _sub(meta, "scoring_policy", "keep_highest")
    _sub(meta, "quiz_type", "assignment")
    _sub(meta, "points_possible", f"{float(quiz.out_of)}")
    _sub(meta, "allowed_attempts", "1")
    manifest = Element("manifest", identifier=f"{ident}-manifest", xmlns=MANIFEST)
    metadata = _sub(manifest, "metadata")
    _sub(metadata, "schema", "IMS Content")
    _sub(metadata, "schemaversion", "1.1.3")
    _sub(manifest, "organizations")
    resources = _sub(manifest, "resources")
    resource = _sub(resources, "resource", identifier=ident, type="imsqti_xmlv1p2")
    _sub(resource, "file", href=f"{ident}/{ident}.xml")
    _sub(resource, "dependency", identifierref=f"{ident}-meta")
    meta_resource = _sub(
        resources, "resource", identifier=f"{ident}-meta",
        type="associatedcontent/imscc_xmlv1p1/learning-application-resource",
        href=f"{ident}/assessment_meta.xml",
    )  # fmt: skip
    _sub(meta_resource, "file", href=f"{ident}/assessment_meta.xml")
    items, files = packed(_xml(root).decode(), pictures or {}, f"{CANVAS_FILES}/{PICTURES}")
    for name in sorted(files):
        _sub(_sub(resources, "resource", identifier=f"picture-{name.split('-')[0][:16]}",
                  type="webcontent", href=f"web_resources/{PICTURES}/{name}"),
             "file", href=f"web_resources/{PICTURES}/{name}")  # fmt: skip
    written = [
        ("imsmanifest.xml", _xml(manifest)),
        (f"{ident}/{ident}.xml", items.encode()),
        (f"{ident}/assessment_meta.xml", _xml(meta)),
        *((f"web_resources/{PICTURES}/{name}", files[name]) for name in sorted(files)),
    ]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in written:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            package.writestr(info, data)
    return buffer.getvalue()
