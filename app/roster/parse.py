"""Reading a roster an instructor pastes or uploads: pure functions over text and bytes, which
find every problem at once, each with its line number, and store nothing."""

import csv
from collections.abc import Iterable
from dataclasses import dataclass

from ..forms import tidy, tidy_name
from ..models import student_key

MOST_STUDENTS = 2000
"""Most students one paste or file may add: a whole year group, not a directory dump."""
NAME_LENGTH = 80
"""As long as a typed name may be (Attempt.student_name)."""
NUMBER_LENGTH = 254
"""As long as an email address may be."""
# Cells a spreadsheet would run as a formula when the roster comes back out (OWASP).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A first row naming its columns instead of a student: "Name, Student ID" and the like.
NAME_HEADERS = {"name", "names", "student", "student name", "full name", "students"}


@dataclass(frozen=True)
class Entry:
    """One student to add: their line, name, and student id or email if given."""

    line: int
    name: str
    student_number: str | None


@dataclass(frozen=True)
class Listed:
    """A student already on the roster, as the clash check needs them."""

    name: str
    student_number: str | None
    removed: bool = False


class RosterError(ValueError):
    """A roster that cannot be added; `problems` holds every problem, each with its line."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


def read_text(text: str) -> list[Entry]:
    """Students from pasted text, one a line: a name, optionally a comma and an id or email."""
    return _entries(text.splitlines())


def read_csv(data: bytes) -> list[Entry]:
    """Students from an uploaded CSV file: UTF-8 (a byte-order mark is fine), the columns name
    and, optionally, student id or email; a header row may name them."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RosterError(
            [
                "The file is not UTF-8 text. In your spreadsheet, save it as “CSV UTF-8” "
                "and upload it again."
            ]
        ) from None
    if "\x00" in text:
        raise RosterError(["The file is not a CSV file: upload a spreadsheet saved as CSV."])
    return _entries(text.splitlines())


def _entries(lines: list[str]) -> list[Entry]:
    delimiter = _delimiter(lines)
    mixed = _mixed(lines, delimiter)
    if mixed:
        raise RosterError(mixed)
    reader = csv.reader(lines, delimiter=delimiter, skipinitialspace=True)
    rows = []
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                rows.append((reader.line_num, row))
    except csv.Error:
        raise RosterError([f"Line {reader.line_num + 1}: this line cannot be read."]) from None
    if rows and tidy(rows[0][1][0]).casefold() in NAME_HEADERS:
        rows = rows[1:]
    if len(rows) > MOST_STUDENTS:
        raise RosterError(
            [
                f"The list has {len(rows):,} students; add at most {MOST_STUDENTS:,} at a time, "
                "then the rest."
            ]
        )
    problems: list[tuple[int, str]] = []
    entries = []
    for line, row in rows:
        found = _problems(line, row)
        problems += [(line, problem) for problem in found]
        if not found:
            number = tidy(row[1]) if len(row) > 1 else ""
            entries.append(Entry(line, tidy_name(row[0]), number or None))
    if not entries and not problems:
        raise RosterError(["The list is empty: give one student a line."])
    problems += _duplicates(entries)
    if problems:
        # In the order of the list, as the instructor will fix them; sorted() keeps a line's own.
        raise RosterError([problem for _, problem in sorted(problems, key=lambda p: p[0])])
    return entries


def _separated(lines: list[str]) -> tuple[int, str]:
    """The first line that separates columns, by number, and that line: a list's first lines
    may be names alone."""
    numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    found = next((pair for pair in numbered if any(sep in pair[1] for sep in SEPARATORS)), None)
    return found or (numbered[0] if numbered else (0, ""))


def _delimiter(lines: list[str]) -> str:
    """Commas, or what the first separated line shows instead: tabs when pasted from a
    spreadsheet, semicolons from a spreadsheet that writes decimal commas."""
    first = _separated(lines)[1]
    if "\t" in first:
        return "\t"
    return ";" if ";" in first and "," not in first else ","


SEPARATORS = {",": "a comma", ";": "a semicolon", "\t": "a tab"}


def _mixed(lines: list[str], delimiter: str) -> list[str]:
    """Lines separated otherwise than the first separated one, which would glue an id into a
    name: a tab in a comma or semicolon list, a semicolon alone in a comma list. (A comma alone
    in a tab list may be a name's, as in "Diaz, Dana".)"""
    first = _separated(lines)[0]
    found = []
    for n, line in enumerate(lines, 1):
        other = None
        if n <= first or not line.strip():
            continue
        if delimiter != "\t" and "\t" in line.strip():
            other = "\t"
        elif delimiter == "," and ";" in line and "," not in line:
            other = ";"
        if other:
            found.append(
                f"Line {n}: separated by {SEPARATORS[other]}, but line {first} by "
                f"{SEPARATORS[delimiter]}. Use the same separator on every line."
            )
    return found


def _problems(line: int, row: list[str]) -> list[str]:
    """What is wrong with one line, if anything."""
    cells = [cell.strip() for cell in row]
    while len(cells) > 2 and not cells[-1]:
        cells.pop()
    found = []
    if len(cells) > 2:
        found.append(
            f"Line {line}: use at most two columns, a name and a student id or email "
            "(put names with commas in double quotes)."
        )
    name = tidy_name(cells[0])
    number = tidy(cells[1]) if len(cells) > 1 else ""
    if not name:
        found.append(f"Line {line}: the name is empty.")
    elif len(name) > NAME_LENGTH:
        found.append(f"Line {line}: the name is longer than {NAME_LENGTH} characters.")
    if len(number) > NUMBER_LENGTH:
        found.append(f"Line {line}: the student id or email is longer than {NUMBER_LENGTH}.")
    for cell in (name, number):
        if cell.startswith(FORMULA_STARTS):
            found.append(
                f"Line {line}: “{cell}” begins with {cell[0]!r}, which spreadsheets run as a "
                "formula; remove it."
            )
    return found


def _duplicates(entries: list[Entry]) -> list[tuple[int, str]]:
    """Students the list names twice: the same id, or the same name without ids to tell apart;
    each problem with its line."""
    found = []
    by_name: dict[str, Entry] = {}
    by_number: dict[str, Entry] = {}
    for entry in entries:
        same = by_name.setdefault(student_key(entry.name), entry)
        if same is not entry and not (same.student_number and entry.student_number):
            found.append(
                (
                    entry.line,
                    f"Line {entry.line}: {entry.name} is also on line {same.line}. Give each a "
                    "student id or email, so their results can be told apart.",
                )
            )
        if entry.student_number:
            twin = by_number.setdefault(entry.student_number.casefold(), entry)
            if twin is not entry:
                found.append(
                    (
                        entry.line,
                        f"Line {entry.line}: the student id {entry.student_number} is also on "
                        f"line {twin.line}.",
                    )
                )
    return found


def clashes(entries: list[Entry], roster: Iterable[Listed]) -> list[str]:
    """Students of the list the roster has already: the same id, or the same name where either
    has no id. Removed students keep their ids, so their ids are taken too."""
    names: dict[str, Listed] = {}
    numbers: dict[str, Listed] = {}
    for listed in roster:
        if listed.student_number:
            numbers[listed.student_number.casefold()] = listed
        if not listed.removed:
            names.setdefault(student_key(listed.name), listed)
    found = []
    for entry in entries:
        holder = numbers.get((entry.student_number or "").casefold())
        if holder is not None:
            found.append(
                f"Line {entry.line}: the student id {entry.student_number} belongs to "
                f"{holder.name}{', removed from' if holder.removed else ', already on'} "
                "this class's roster."
            )
            continue
        same = names.get(student_key(entry.name))
        if same is not None and not (same.student_number and entry.student_number):
            found.append(f"Line {entry.line}: {entry.name} is on the roster already.")
    return found
