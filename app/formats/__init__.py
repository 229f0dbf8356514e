"""Quiz formats other systems speak: GIFT, Moodle XML, Aiken, QTI 1.2 and QTI 3.0, both ways.

Each format is a module with `parse(data, source) -> Source` and `write(quiz) -> bytes` over the
bank's dataclasses; the rest of the app reaches them only through this front door, which turns a
parsed source into a bank quiz, lists what it had to skip and what the author must still write,
and fills placeholders that the bank refuses to serve (app/bank.py, PLACEHOLDER).
"""

import json
import os
import re
import tempfile
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..bank import (
    MOST_CHOICES,
    MOST_QUESTIONS,
    MOST_SOURCES,
    PLACEHOLDER,
    PLACEHOLDER_URL,
    UNFILLED,
    BankError,
    Quiz,
    problems,
)
from ..evidence import FOLDER as EVIDENCE_FOLDER
from ..question_types import Question, Reference, type_of
from . import aiken, gift, moodle_xml, qti, qti3
from .common import MAX_BYTES, FormatError, Skip, Source, check_size, read_limited

FORMATS = {"gift": gift, "moodle-xml": moodle_xml, "aiken": aiken, "qti": qti, "qti3": qti3}
"""Each format's name on the command line and its module."""
EXTENSIONS = {
    "gift": "gift.txt", "moodle-xml": "moodle.xml", "aiken": "aiken.txt", "qti": "qti.zip",
    "qti3": "qti3.zip",
}  # fmt: skip
"""The file name ending each export gets: LMS upload forms look at it."""

__all__ = ["FORMATS", "MAX_BYTES", "FormatError", "Imported", "Skip", "Source", "read_limited"]


@dataclass(frozen=True)
class Gap:
    """Something the bank needs that the source did not have."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


@dataclass
class Imported:
    """A source turned into one bank quiz, with what was skipped and what is still missing."""

    quiz: dict
    skipped: list[Skip] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    unmeasured: list[str] = field(default_factory=list)
    """Evidence links left out, each saying why: the source lost them on the way, or they name
    measurements this install does not have."""
    noted: list[str] = field(default_factory=list)
    """What the import chose that the author may want otherwise, with how to choose."""
    pictures: dict[str, bytes] = field(default_factory=dict)
    """The pictures the quiz shows, by their address here (app/images.py), to store with it."""
    unshown: list[str] = field(default_factory=list)
    """The media the questions showed that the import left out, each located, and why."""

    @property
    def pictures_shown(self) -> int:
        """How many pictures the questions show, a file shown twice counted twice."""
        return json.dumps(self.quiz["questions"]).count("](/images/")


def guess_format(data: bytes) -> str:
    """The format a file is in, from its first bytes: --format says it when this guesses wrong."""
    if qti3.is_qti3(data):
        return "qti3"
    if data.startswith(b"PK"):
        return "qti"
    head = data[:4096].removeprefix(b"\xef\xbb\xbf").lstrip()
    if head.startswith(b"<"):
        return "qti" if b"<questestinterop" in head else "moodle-xml"
    if re.search(rb"^ANSWER:", data, re.M) and not re.search(rb"(?<!\\)[{}]", data):
        return "aiken"
    return "gift"


def slugify(text: str, limit: int = 64) -> str:
    """Lower-case ASCII words joined by '-', as bank slugs and ids are."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = "-".join(words)[:limit].strip("-")
    return slug


def _question_ids(questions: tuple[Question, ...]) -> list[str]:
    """Each question's id: its name in the source made an id, else q1, q2, ..., all distinct."""
    ids, seen = [], set()
    for number, question in enumerate(questions, 1):
        base = slugify(question.id, 60) or f"q{number}"
        candidate, n = base, 2
        while candidate in seen:
            candidate, n = f"{base}-{n}", n + 1
        seen.add(candidate)
        ids.append(candidate)
    return ids


def _choice_id(index: int, given: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", given):
        return given
    return "abcdefghijklmnopqrstuvwxyz"[index] if index < 26 else f"choice-{index + 1}"


def to_quiz(source: Source, slug: str, title: str | None, description: str | None) -> Imported:
    """The bank's JSON for a parsed source, each gap listed and filled with a placeholder."""
    gaps: list[Gap] = []
    questions = []
    noted = []
    skipped, beyond = list(source.skipped), set()
    if not title and source.title and source.title_from:
        noted.append(f'the title "{source.title}" is {source.title_from}; give --title for another')
    title = title or source.title or slug
    description = description or source.description
    if not description:
        gaps.append(Gap("quiz", "no description (--description)"))
        description = f"{PLACEHOLDER} what this quiz is about."
    for question, qid, where in zip(
        source.questions, _question_ids(source.questions), source.places, strict=True
    ):
        missing, unexplained = [], []
        choices = []
        for index, choice in enumerate(question.choices):
            explanation = choice.explanation
            if not explanation.strip():
                unexplained.append(str(index + 1))
                explanation = f"{PLACEHOLDER} why this choice is right or wrong."
            chosen_id = _choice_id(index, choice.id)
            choices.append(replace(choice, id=chosen_id, explanation=explanation))
        if len({c.id for c in choices}) < len(choices):  # a source's own ids may repeat
            choices = [replace(c, id=_choice_id(index, "")) for index, c in enumerate(choices)]
        if unexplained:
            numbers = ", ".join(unexplained)
            missing.append(
                f"feedback on {'choice' if len(unexplained) == 1 else 'choices'} {numbers}"
            )
        explanation = question.explanation
        if not explanation.strip():
            # A label and a link, alone in the general feedback, became the source: say so, or
            # the lecturer looks for where their feedback went.
            what = "the explanation; its one line with a link became the source"
            missing.append(
                f"general feedback ({what if question.references else 'the explanation'})"
            )
            explanation = f"{PLACEHOLDER} the explanation shown after any answer."
        references = question.references
        if len(references) > MOST_SOURCES:
            noted.append(f"{where}: kept the first {MOST_SOURCES} of its {len(references)} "
                         "sources, as many as a question holds")  # fmt: skip
            references = references[:MOST_SOURCES]
        if not references:
            missing.append("a source (an https:// link in the general feedback)")
            references = (Reference(f"{PLACEHOLDER} a source for this question", PLACEHOLDER_URL),)
        whole = replace(
            question, id=qid, choices=tuple(choices), explanation=explanation, references=references
        )
        entry = type_of(whole).data(whole)
        if why := _beyond_the_bank(entry):
            skipped.append(Skip(where, why))
            beyond.add(where)
            continue
        if missing:
            gaps.append(Gap(where, f'question "{qid}" lacks {"; ".join(missing)}'))
        questions.append(entry)
    quiz = {
        "slug": slug,
        "title": title[:200],
        "description": description,
        "shuffle_choices": source.shuffle_choices,
        "questions": questions,
    }
    shown = json.dumps(questions)
    kept = tuple(f"{place}: " for place in source.places if place not in beyond)
    return Imported(
        quiz=quiz,
        skipped=skipped,
        gaps=gaps,
        unmeasured=list(source.lost),
        noted=noted,
        pictures={at: data for at, data in source.pictures.items() if at in shown},
        unshown=[note for note in source.unshown if note.startswith(kept)],
    )


def _beyond_the_bank(entry: dict) -> str | None:
    """What of a read question the bank cannot hold, which its reader did not check (more
    answers or units than a question may have, a unit it cannot name), in words; or None."""
    quiz = {"slug": "import", "title": "Import", "description": "-", "questions": [entry]}
    found = [p for p in problems({"quizzes": [quiz]}, gaps_allowed=True) if UNFILLED not in p]
    # 'quiz "import", question "q1", field "answers": ...': the file's place says the rest.
    return "; ".join(problem.split(", ", 2)[-1] for problem in found) or None


def parse_file(path: Path, format_name: str | None = None) -> Source:
    """Read and parse a source file; FormatError lists every located problem."""
    data = read_limited(path)
    return FORMATS[format_name or guess_format(data)].parse(data, str(path))


def import_quiz(
    path: Path,
    bank_path: Path,
    *,
    format_name: str | None = None,
    slug: str | None = None,
    title: str | None = None,
    description: str | None = None,
    allow_gaps: bool = False,
    evidence_folder: Path = EVIDENCE_FOLDER,
) -> tuple[Imported, dict]:
    """A source file as a new quiz in the bank at bank_path, and the whole bank it makes; raises
    FormatError, or BankError when the result would not pass `quiz check`. Writes nothing."""
    source = parse_file(path, format_name)
    slug = slug or source.slug or slugify(source.title or path.stem) or "imported-quiz"
    bank = _read_bank(bank_path)
    # Said first: a taken address makes every other answer about this import moot.
    if any(q.get("slug") == slug for q in bank["quizzes"]):
        raise BankError([f'{bank_path}: a quiz "{slug}" exists already; choose another --slug'])
    imported = to_quiz(source, slug, title, description)
    _measured_only(imported, evidence_folder)
    if not imported.quiz["questions"]:
        raise FormatError(
            [f"{path}: no question could be imported"] + [str(skip) for skip in imported.skipped]
        )
    if imported.pictures:  # a bank file holds text only: the database keeps pictures
        imported.quiz["questions"] = _said(imported.quiz["questions"])
        count = len(imported.pictures)
        imported.noted.append(
            ("its picture is written as its words" if count == 1 else
             f"its {count} pictures are written as their words")
            + ", since a bank file holds no pictures: import it in the browser to keep them"
        )  # fmt: skip
        imported.pictures = {}
    if imported.gaps and not allow_gaps:
        raise FormatError(
            [str(skip) for skip in imported.skipped]
            + imported.unshown
            + [f"{gap}" for gap in imported.gaps]
            + [
                f"{path}: the bank needs these; write them in the source, or import with "
                "--allow-gaps to fill placeholders that `quiz check` refuses until written"
            ]
        )
    bank["quizzes"].append(imported.quiz)
    found = [p for p in problems(bank) if not p.endswith(UNFILLED)]
    if found:
        raise BankError([f"{bank_path}: {problem}" for problem in found])
    return imported, bank


def _measured_only(imported: Imported, evidence_folder: Path) -> None:
    """A link to a measurement this install lacks would fail `quiz check`: leave it out, aloud."""
    for question in imported.quiz["questions"]:
        name = question.get("evidence")
        if name and not (evidence_folder / f"{name}.json").is_file():
            del question["evidence"]
            imported.unmeasured.append(
                f'question "{question["id"]}": left out its evidence link "{name}", since '
                f"{evidence_folder.name}/{name}.json is not here"
            )


def draft_from(
    data: bytes, name: str, format_name: str | None = None, limit: int = MAX_BYTES
) -> Imported:
    """An uploaded file as a draft for the quiz editor: what the source lacks is left empty for
    the editor's checklist, not filled with placeholders. FormatError lists every problem."""
    check_size(data, name, limit)
    source = FORMATS[format_name or guess_format(data)].parse(data, name)
    too_many = [
        f"{where}: {len(question.choices)} choices; a question holds at most {MOST_CHOICES}"
        for question, where in zip(source.questions, source.places, strict=True)
        if len(question.choices) > MOST_CHOICES
    ]
    if len(source.questions) > MOST_QUESTIONS:
        too_many.append(
            f"{name}: {len(source.questions)} questions; a quiz holds at most {MOST_QUESTIONS}: "
            "split the file"
        )
    if too_many:
        raise FormatError(too_many)
    slug = source.slug or slugify(source.title or Path(name).stem) or "imported-quiz"
    imported = to_quiz(source, slug, None, None)
    _measured_only(imported, EVIDENCE_FOLDER)
    if not imported.quiz["questions"]:
        raise FormatError(
            [f"{name}: no question could be imported"] + [str(skip) for skip in imported.skipped]
        )
    imported.quiz = _unfilled(imported.quiz)
    # The page that shows the report asks for the title and description itself.
    imported.gaps = [gap for gap in imported.gaps if gap.where != "quiz"]
    # The page asks for the title itself: to_quiz's first note, about --title, is said its way.
    titled = bool(source.title_from and source.title)
    imported.noted = (
        [
            f'The title "{source.title}" is {source.title_from}: change it below if it is not the '
            "quiz's."
        ]
        if titled
        else []
    ) + imported.noted[titled:]
    return imported


def _unfilled(quiz: dict) -> dict:
    """The quiz with every placeholder taken out again: a draft shows its gaps as gaps."""

    def filled(text) -> bool:
        return isinstance(text, str) and not text.startswith((PLACEHOLDER, PLACEHOLDER_URL))

    for question in quiz["questions"]:
        for part in (question, *question.get("choices", ())):
            if not filled(part.get("explanation")):
                part.pop("explanation", None)
        for said in ("if_true", "if_false"):  # a true/false question's feedback on each answer
            if said in question and not filled(question[said]):
                del question[said]
        question["references"] = [r for r in question["references"] if filled(r["url"])]
    if not filled(quiz["description"]):
        quiz["description"] = ""
    return quiz


def _read_bank(bank_path: Path) -> dict:
    """The bank file's JSON, or a new bank if there is no file yet."""
    if not bank_path.exists():
        return {"$schema": "./app/questions.schema.json", "quizzes": []}
    try:
        data = json.loads(bank_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise BankError([f"{bank_path}: cannot be read as a question bank: {error}"]) from None
    if not isinstance(data, dict) or not isinstance(data.get("quizzes"), list):
        raise BankError([f'{bank_path}: not a question bank (no "quizzes" list)'])
    return data


def write_bank(bank_path: Path, bank: dict) -> None:
    """Replace the bank file whole, so a crash never leaves half a file."""
    text = json.dumps(bank, indent=2, ensure_ascii=False) + "\n"
    folder = bank_path.resolve().parent
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".questions-", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        if bank_path.exists():
            os.chmod(temporary, bank_path.stat().st_mode & 0o777)
        else:
            os.chmod(temporary, 0o644)
        os.replace(temporary, bank_path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def export_quiz(
    quiz: Quiz, format_name: str, pictures: Callable[[str], bytes | None] | None = None
) -> bytes:
    """The quiz in a format another system imports, each picture's file inside it where the
    format carries files and `pictures` gives them (by address), else written as its words;
    FormatError names each question of a type the format cannot hold."""
    module = FORMATS[format_name]
    if unwritable := [q for q in quiz.questions if q.type not in module.TYPES]:
        raise FormatError(
            [f'question "{q.id}" is {q.type}, which {format_name} cannot hold' for q in unwritable]
        )
    if pictures is None or not module.CARRIES_FILES:
        return module.write(_in_words(quiz, {}))
    shown = {
        address: data
        for address in dict.fromkeys(found[2] for found in _PICTURE.finditer(_text_of(quiz)))
        if (data := pictures(address)) is not None
    }
    return module.write(_in_words(quiz, shown), shown)


PICTURES = "pictures (each is written as its words: the format carries no files)"
"""What an export leaves out where it cannot carry a picture's file."""
_PICTURE = re.compile(
    r"!\[((?:\\.|[^\]\\])*)\]\(\s*<?(/images/[0-9a-f]{64}-[0-9]+x[0-9]+\.[a-z]+)[^)]*\)"
)
"""A picture as quiz text writes it: its words, then its address, bare or in <>, and a title."""


def _text_of(quiz: Quiz) -> str:
    """Every text of the quiz, as JSON: where its pictures are named."""
    return json.dumps([type_of(q).data(q) for q in quiz.questions], ensure_ascii=False)


def _said(value, kept: dict | None = None):
    """Quiz text (or the bank's JSON of it) with each picture written as its words, marked as
    a picture's ("(picture: a red cell)"), but those `kept`."""

    def words(found: re.Match) -> str:
        if kept and found[2] in kept:
            return found[0]
        return "(picture: " + found[1].replace("\\]", "]") + ")"

    if isinstance(value, str):
        return _PICTURE.sub(words, value)
    if isinstance(value, dict):
        return {key: _said(item, kept) for key, item in value.items()}
    return [_said(item, kept) for item in value] if isinstance(value, list) else value


def _in_words(quiz: Quiz, kept: dict) -> Quiz:
    """The quiz with each picture but those `kept` written as its words: its address is this
    app's own, which another system would show as a broken picture."""

    def in_words(question: Question) -> Question:
        entry = type_of(question).data(question)
        pictured = "](/images/" in json.dumps(entry)
        return type_of(question).build(_said(entry, kept)) if pictured else question

    return replace(quiz, questions=tuple(in_words(q) for q in quiz.questions))


def dropped(format_name: str, quiz: Quiz | None = None, files: bool = True) -> tuple[str, ...]:
    """What an export in this format cannot carry (of this quiz, where it is given; without
    pictures' files, where `files` is false, as a bank file has none)."""
    module = FORMATS[format_name]
    shows = quiz is None or bool(_PICTURE.search(_text_of(quiz)))
    return (*module.DROPS, *([PICTURES] if shows and not (files and module.CARRIES_FILES) else []))


def skeleton(slug: str, bank_name: str) -> dict:
    """A new quiz with one example question that passes `quiz check` and is true if served: it
    asks where this very quiz is kept, so no author's note ever reaches a student."""
    title = " ".join(word.capitalize() for word in slug.split("-"))
    return {
        "slug": slug,
        "title": title,
        "description": f"{title}, a new quiz. Its first question asks where the quiz itself is "
        "kept.",
        "shuffle_choices": True,
        "questions": [
            {
                "id": "which-file",
                "prompt": "Which file holds the quiz bank, the questions this quiz serves?",
                "choices": [
                    {
                        "id": "bank-file",
                        "text": f"The bank file, {bank_name}",
                        "correct": True,
                        "explanation": f"Right: every question of this quiz is written in "
                        f"{bank_name}; `flask quiz check` checks it and `flask quiz reload` "
                        "publishes it.",
                    },
                    {
                        "id": "database",
                        "text": "The database",
                        "correct": False,
                        "explanation": "The database keeps the published versions and the "
                        f"students' attempts; the questions themselves are written in {bank_name}.",
                    },
                    {
                        "id": "browser",
                        "text": "The student's browser",
                        "correct": False,
                        "explanation": "The browser only shows the pages; the questions come from "
                        f"{bank_name} on the server.",
                    },
                ],  # fmt: skip
                "explanation": f"A quiz bank is one JSON file, here {bank_name}: each quiz in it "
                "has a title, a description and questions, each question its choices, exactly one "
                "right, with why each is right or wrong, an explanation and its sources.",
                "references": [
                    {
                        "title": "Introducing JSON, the bank's file format",
                        "url": "https://www.json.org/json-en.html",
                    }
                ],  # fmt: skip
            }
        ],
    }


def new_quiz(bank_path: Path, slug: str) -> dict:
    """The bank with a skeleton quiz added at slug; BankError if it would not pass the check."""
    bank = _read_bank(bank_path)
    if any(q.get("slug") == slug for q in bank["quizzes"]):
        raise BankError([f'{bank_path}: a quiz "{slug}" exists already; choose another slug'])
    bank["quizzes"].append(skeleton(slug, bank_path.name))
    found = [p for p in problems(bank) if not p.endswith(UNFILLED)]
    if found:
        raise BankError([f"{bank_path}: {problem}" for problem in found])
    return bank
