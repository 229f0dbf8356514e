"""Moodle's Aiken format: a question line, choices `A. text` or `A) text`, then `ANSWER: A`.

Aiken holds no feedback, so an import has every explanation and reference to fill in, and an
export drops them (DROPS says so). A question may run over several lines before its first choice.
"""

import re
import string

from .. import text as quiz_text
from ..bank import Quiz
from ..question_types import Choice, Question, right_choice
from .common import FormatError, Source, check_size, decode

DROPS = (
    "every choice's explanation",
    "each question's explanation and sources",
    "the quiz's title and description",
    "line breaks in question text",
    "evidence links",
    "the quiz's slug",
)
CARRIES_FILES = False
"""Whether an export carries the files of the pictures its text shows."""
TYPES = frozenset({"single_choice"})
"""The question types (app/question_types/) this format reads and writes."""
CHOICE = re.compile(r"^([A-Z])[.)]\s+(.*\S)\s*$")
ANSWER = re.compile(r"^ANSWER:\s*([A-Z])\s*$")


def parse(data: bytes, source: str) -> Source:
    """The questions of an Aiken file; FormatError lists every malformed one."""
    check_size(data, source)
    lines = decode(data, source).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    questions, places, errors = [], [], []
    prompt: list[str] = []
    choices: list[tuple[str, str]] = []
    start = 0
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            continue
        where = f"{source}:{start or number}"
        if answer := ANSWER.match(stripped):
            letters = [letter for letter, _ in choices]
            if not prompt:
                errors.append(f"{source}:{number}: ANSWER: with no question before it")
            elif len(choices) < 2:
                errors.append(f"{where}: needs at least two choices (A. ..., B. ...)")
            elif answer.group(1) not in letters:
                errors.append(
                    f"{source}:{number}: ANSWER: {answer.group(1)} names no choice "
                    f"(the choices are {', '.join(letters)})"
                )
            else:
                questions.append(
                    Question(
                        id="",
                        prompt=quiz_text.from_plain("\n".join(prompt)),
                        choices=tuple(
                            Choice(
                                id=letter.lower(),
                                text=quiz_text.from_plain(text),
                                correct=letter == answer.group(1),
                                explanation="",
                            )
                            for letter, text in choices
                        ),  # fmt: skip
                        explanation="",
                        references=(),
                    )
                )
                places.append(where)
            prompt, choices, start = [], [], 0
        elif (choice := CHOICE.match(stripped)) and prompt:
            if len(choices) == len(string.ascii_uppercase):
                errors.append(f"{source}:{number}: a question has at most 26 choices, A to Z")
                continue
            expected = string.ascii_uppercase[len(choices)]
            if choice.group(1) != expected:
                errors.append(f"{source}:{number}: choice {choice.group(1)}, {expected} was due")
            choices.append((choice.group(1), choice.group(2)))
        elif choices:
            errors.append(
                f"{source}:{number}: expected the next choice or an ANSWER: line after the choices"
            )
        else:
            start = start or number
            prompt.append(stripped)
    if prompt or choices:
        errors.append(f"{source}:{start}: the last question has no ANSWER: line")
    if errors:
        raise FormatError(errors)
    return Source(tuple(questions), tuple(places))


def write(quiz: Quiz) -> bytes:
    """The quiz as Aiken: prompts, choices and keys only (Aiken has room for nothing else)."""
    if over := [q.id for q in quiz.questions if len(q.choices) > len(string.ascii_uppercase)]:
        raise FormatError([f'question "{over[0]}": Aiken has letters for 26 choices at most'])
    out = []
    for question in quiz.questions:
        # Aiken is plain text: the words a student reads, without Markdown's marks.
        out.append(quiz_text.plain(question.prompt))
        for letter, choice in zip(string.ascii_uppercase, question.choices, strict=False):
            out.append(f"{letter}. {quiz_text.plain(choice.text)}")
        right = string.ascii_uppercase[question.choices.index(right_choice(question))]
        out += [f"ANSWER: {right}", ""]
    return "\n".join(out).encode()
