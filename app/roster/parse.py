"""Reading a roster an instructor pastes or uploads: pure functions over text and bytes, which
find every problem at once, each with its line number, and store nothing."""

import csv
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..names import student_key, tidy, tidy_name

MOST_STUDENTS = 2000
"""Most students one paste or file may add: a whole year group, not a directory dump."""
MOST_BYTES = 1024 * 1024
"""Most a list may be, in UTF-8 with one byte a line break: 2,000 students with long email
addresses, and other columns besides."""
MOST_COLUMNS = 40
"""Most columns a list may have: a registrar's export, not a whole spreadsheet of marks."""
PREVIEW_ROWS = 5
"""Rows shown when the instructor says which column is which: enough to recognise them."""
NAME_LENGTH = 80
"""As long as a typed name may be (Attempt.student_name)."""
NUMBER_LENGTH = 254
"""As long as an email address may be."""
# Cells a spreadsheet would run as a formula when the roster comes back out (OWASP).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

ROLES = {
    "name": "Full name",
    "first": "First name",
    "last": "Last name",
    "number": "Student ID or email",
    "ignore": "Ignore",
}
"""What a column may hold, as the instructor chooses it, and its label."""

# Column names a header row may use, as _heading writes them (no case, accents or punctuation),
# by what the column holds. The app speaks English; German, French and Spanish exports are common.
_HEADINGS = {
    "name": [
        "name", "names", "full name", "fullname", "student", "students", "student name",
        "student names", "display name", "learner", "participant", "pupil",
        "vollstandiger name", "nom complet", "nom et prenom", "nombre completo",
        "nombre y apellidos",
    ],
    "first": [
        "first name", "firstname", "first names", "given name", "given names", "givenname",
        "forename", "forenames", "vorname", "vornamen", "rufname", "prenom", "prenoms",
        "nombre", "nombres",
    ],
    "last": [
        "last name", "lastname", "last names", "surname", "surnames", "family name",
        "familyname", "nachname", "familienname", "nom", "nom de famille", "apellido",
        "apellidos", "primer apellido", "segundo apellido",
    ],
    "id": [
        "id", "student id", "studentid", "student number", "student no", "student nr",
        "student num", "student code", "id number", "idnumber", "identifier",
        "matriculation number", "matriculation no", "matric number", "matric no",
        "registration number", "username", "user name", "userid", "user id", "login",
        "sis user id", "sis id", "matrikelnummer", "matrikel nr", "matrikel no", "matrikel",
        "numero etudiant", "numero d etudiant", "identifiant", "matricula",
        "numero de matricula", "numero de estudiante", "matrikel nummer", "matrikelnr",
        "student username", "student login",
    ],
    "email": [
        "email", "emails", "e mail", "email address", "e mail address", "mail",
        "emailadresse", "email adresse", "e mail adresse", "courriel", "adresse email",
        "adresse e mail", "adresse electronique", "correo", "correo electronico",
        "student email", "student e mail", "student email address",
    ],
}  # fmt: skip
HEADINGS = {heading: kind for kind, names in _HEADINGS.items() for heading in names}
"""Each column name a header row may use, and what its column holds."""
# An id and an email both tell students apart; an id is the school's own and lasts longer.
KIND_ROLES = {"name": "name", "first": "first", "last": "last", "id": "number", "email": "number"}
NOT_SURE = (
    "The columns cannot be told apart: name them in a first row (Name, or First name and Last "
    "name; Student ID or Email), or choose which is which on the roster page."
)
ID_OVER_EMAIL = (
    "The list has both a student ID and an email column: the student ID is kept as each "
    "student’s id, and the email is not stored."
)


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


@dataclass(frozen=True)
class Table:
    """A list read into cells: its rows with their line numbers (a header row included), whether
    the first row names the columns, a role for each column, and whether those roles are sure
    (read from a header, or a plain list of names and ids) or only a guess to confirm."""

    text: str
    rows: tuple[tuple[int, tuple[str, ...]], ...]
    header: bool
    roles: tuple[str, ...]
    sure: bool
    plain: bool
    """A list without a header of at most two columns: a name, then an id or email."""
    notes: tuple[str, ...] = ()

    @property
    def width(self) -> int:
        """How many columns the list has."""
        return len(self.roles)

    def headings(self, header: bool | None = None) -> tuple[str, ...]:
        """The first row's cells, one a column, when it names the columns (as `header` says,
        or as read); empty otherwise."""
        named = self.header if header is None else header
        return _padded(self.rows[0][1], self.width) if named else ()

    def data(self, header: bool | None = None) -> list[tuple[int, tuple[str, ...]]]:
        """The rows of students with their lines, each as wide as the list, after the first
        row when it names the columns (as `header` says, or as read)."""
        skip = self.header if header is None else header
        return [(line, _padded(cells, self.width)) for line, cells in self.rows[int(skip) :]]


class RosterError(ValueError):
    """A roster that cannot be added; `problems` holds every problem, each with its line."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


def read_text(text: str) -> list[Entry]:
    """Students from pasted text, one a line: a name, optionally a comma and an id or email."""
    return _sure(read_table(text))


def read_csv(data: bytes) -> list[Entry]:
    """Students from an uploaded CSV file: UTF-8 (a byte-order mark is fine), the columns name
    and, optionally, student id or email; a header row may name them, in any order."""
    return _sure(read_table(csv_text(data)))


def _sure(table: Table) -> list[Entry]:
    """The students of a list whose columns need no choosing; refused otherwise."""
    if not table.sure:
        raise RosterError([NOT_SURE])
    return entries(table)


def csv_text(data: bytes) -> str:
    """An uploaded file's text, or why it is no CSV file: UTF-8 only, with or without a BOM."""
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
    return text


def read_table(text: str) -> Table:
    """A list split into rows and cells, with each column's role read from its header row, or
    guessed: refused whole if it cannot be read, is empty, or is too long."""
    lines = text.splitlines()
    # A line break counts one byte, whichever it is: a browser may send it back as two.
    if sum(len(line.encode()) + 1 for line in lines) > MOST_BYTES + 1:
        raise RosterError(
            [
                f"The list is larger than {MOST_BYTES // 1024 // 1024} MB: add at most "
                f"{MOST_STUDENTS:,} students at a time, and leave out columns it does not need."
            ]
        )
    delimiter = _delimiter(lines)
    mixed = _mixed(lines, delimiter)
    if mixed:
        raise RosterError(mixed)
    reader = csv.reader(lines, delimiter=delimiter, skipinitialspace=True)
    rows: list[tuple[int, tuple[str, ...]]] = []
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                rows.append((reader.line_num, _trimmed(row)))
    except csv.Error:
        raise RosterError([f"Line {reader.line_num + 1}: this line cannot be read."]) from None
    kinds = [HEADINGS.get(_heading(cell)) for cell in rows[0][1]] if rows else []
    header = bool(kinds) and all(kinds)
    # A first row naming some of its columns is a header too, unless a cell looks like an id.
    partial = not header and any(kinds) and not any(map(_looks_like_id, rows[0][1]))
    _check_size(rows[int(header or partial) :])
    plain = not (header or partial) and len(rows[0][1]) <= 2
    width = max(len(cells) for _, cells in rows[: 1 if header or partial else None])
    if width > MOST_COLUMNS and not plain:
        raise RosterError(
            [f"The list has {width} columns; keep at most {MOST_COLUMNS}, with the names in them."]
        )
    if header or partial:
        roles, notes = _roles_of(kinds)
        sure = header and not _column_problems(roles) and _one_each(kinds)
    elif plain:
        roles, notes = ("name", "number"), ()
        sure = not _ids_first([cells for _, cells in rows])
        if not sure:
            roles = ("number", "name")
    else:
        roles, notes, sure = _guess([cells for _, cells in rows], width), (), False
    return Table(text, tuple(rows), header or partial, roles, sure, plain, notes)


def _check_size(rows: list) -> None:
    """Refuse an empty list, or one with more students than may be added at once."""
    if not rows:
        raise RosterError(["The list is empty: give one student a line."])
    if len(rows) > MOST_STUDENTS:
        raise RosterError(
            [
                f"The list has {len(rows):,} students; add at most {MOST_STUDENTS:,} at a time, "
                "then the rest."
            ]
        )


def _trimmed(row: list[str]) -> tuple[str, ...]:
    """A row's cells without the empty ones a spreadsheet leaves at its end."""
    cells = [cell.strip() for cell in row]
    while cells and not cells[-1]:
        cells.pop()
    return tuple(cells)


def _padded(cells: tuple[str, ...], width: int) -> tuple[str, ...]:
    """A row's cells, one a column: empty ones added, and those past the last column left out
    (their row is refused)."""
    return (cells + ("",) * width)[:width]


def _heading(cell: str) -> str:
    """A cell as a column name to look up: no case, accents, punctuation or extra spaces, so
    that "E-Mail:", " Prénom " and "student_id" are "e mail", "prenom" and "student id"."""
    letters = unicodedata.normalize("NFKD", cell.casefold())
    kept = "".join(
        char if char.isalnum() else " " for char in letters if not unicodedata.combining(char)
    )
    return " ".join(kept.split())


def _looks_like_id(cell: str) -> bool:
    """Whether a cell looks like a student id or email rather than a name or a column name."""
    return "@" in cell or any(char.isdigit() for char in cell)


def _ids_first(rows: list[tuple[str, ...]]) -> bool:
    """Whether a plain list has its ids before its names: every first cell an id, no second."""
    pairs = [cells for cells in rows if len(cells) == 2]
    return bool(pairs) and all(
        _looks_like_id(first) and not _looks_like_id(second) for first, second in pairs
    )


def _roles_of(kinds: list[str | None]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Each column's role from its header, with what the instructor should know: with both an
    id and an email, the id is the student's number and the email is left out."""
    roles = [KIND_ROLES[kind] if kind else "ignore" for kind in kinds]
    notes = ()
    if "id" in kinds and "email" in kinds:
        roles = [
            "ignore" if kind == "email" else role for kind, role in zip(kinds, roles, strict=True)
        ]
        notes = (ID_OVER_EMAIL,)
    # A guess keeps the first column of a role that only one column may have.
    for role in ("name", "number"):
        taken = [index for index, chosen in enumerate(roles) if chosen == role]
        for index in taken[1:]:
            roles[index] = "ignore"
    if "name" in roles:
        roles = ["ignore" if role in ("first", "last") else role for role in roles]
    return tuple(roles), notes


def _one_each(kinds: list[str | None]) -> bool:
    """Whether a header names each kind of column once (first and last names may be in parts),
    and a full name not beside first or last names, so that no column need be chosen."""
    single = [kind for kind in kinds if kind in ("name", "id", "email")]
    return len(single) == len(set(single)) and not (
        "name" in kinds and ("first" in kinds or "last" in kinds)
    )


def _guess(rows: list[tuple[str, ...]], width: int) -> tuple[str, ...]:
    """Roles to offer for a list without a header: the first column of ids (rather than emails)
    as the number, the first column of words as the name (or, with a second beside it, the
    first and last names), the rest ignored."""
    columns = [[cells[i] for cells in rows if i < len(cells) and cells[i]] for i in range(width)]
    ids = [i for i, cells in enumerate(columns) if cells and all(map(_looks_like_id, cells))]
    numbers = [i for i in ids if not any("@" in cell for cell in columns[i])] or ids
    names = [i for i, cells in enumerate(columns) if cells and i not in ids]
    roles = ["ignore"] * width
    if numbers:
        roles[numbers[0]] = "number"
    if len(names) > 1 and names[1] == names[0] + 1:
        # Two columns of words side by side: a registrar's first and last names.
        roles[names[0]], roles[names[1]] = "first", "last"
    elif names:
        roles[names[0]] = "name"
    return tuple(roles)


def column_problems(roles: Sequence[str]) -> list[tuple[int | None, str]]:
    """What is wrong with the roles chosen for a list's columns, each with its column's index,
    or None for a problem of the whole choice; empty when they can be read."""
    found: list[tuple[int | None, str]] = []
    names = [i for i, role in enumerate(roles) if role == "name"]
    numbers = [i for i, role in enumerate(roles) if role == "number"]
    for index, role in enumerate(roles):
        if role not in ROLES:
            found.append((index, "Choose what this column holds."))
        elif role == "name" and index != names[0]:
            found.append(
                (index, f"Column {names[0] + 1} is the full name already: choose Ignore here.")
            )
        elif role == "number" and index != numbers[0]:
            found.append(
                (
                    index,
                    f"Column {numbers[0] + 1} is the student ID or email already: choose "
                    "Ignore here.",
                )
            )
        elif role in ("first", "last") and names:
            found.append(
                (
                    index,
                    f"Column {names[0] + 1} is the full name already: choose Ignore here, or "
                    "First name and Last name for the parts there.",
                )
            )
    if not any(role in ("name", "first", "last") for role in roles):
        found.append(
            (None, "Choose the column with the students’ names: Full name, or First name and "
             "Last name.")
        )  # fmt: skip
    return found


def _column_problems(roles: Sequence[str]) -> list[str]:
    """The problems of chosen roles as messages that say their column."""
    return [
        f"Column {index + 1}: {problem}" if index is not None else problem
        for index, problem in column_problems(roles)
    ]


def entries(
    table: Table, roles: Sequence[str] | None = None, header: bool | None = None
) -> list[Entry]:
    """The students of a list, its columns read as `roles` (the table's own by default), after
    its first row if `header`: every problem at once, by line, or the students."""
    roles = tuple(table.roles if roles is None else roles)
    if len(roles) != table.width:
        raise RosterError(["The list has changed: paste or upload it again."])
    if wrong := _column_problems(roles):
        raise RosterError(wrong)
    rows = table.rows[int(table.header if header is None else header) :]
    _check_size(rows)
    problems: list[tuple[int, str]] = []
    students = []
    for line, cells in rows:
        found = _wider(line, cells, table)
        entry = _entry(line, _padded(cells, table.width), roles)
        found += _problems(entry)
        problems += [(line, problem) for problem in found]
        if not found:
            students.append(entry)
    problems += _duplicates(students)
    if problems:
        # In the order of the list, as the instructor will fix them; sorted() keeps a line's own.
        raise RosterError([problem for _, problem in sorted(problems, key=lambda p: p[0])])
    return students


def _wider(line: int, cells: tuple[str, ...], table: Table) -> list[str]:
    """A row with more columns than its list: a name's unquoted comma, which would shift the
    columns after it."""
    if len(cells) <= table.width:
        return []
    if table.plain:
        return [
            f"Line {line}: use at most two columns, a name and a student id or email "
            "(put names with commas in double quotes)."
        ]
    return [
        f"Line {line}: {len(cells)} columns, but the list has {table.width} (put names with "
        "commas in double quotes)."
    ]


def _entry(line: int, cells: tuple[str, ...], roles: Sequence[str]) -> Entry:
    """One row as a student: the full name, or first names then last names, and the number."""
    chosen = {
        role: [cell for cell, is_ in zip(cells, roles, strict=True) if is_ == role]
        for role in ROLES
    }
    parts = chosen["name"] or chosen["first"] + chosen["last"]
    number = tidy(chosen["number"][0]) if chosen["number"] else ""
    return Entry(line, tidy_name(" ".join(parts)), number or None)


def _problems(entry: Entry) -> list[str]:
    """What is wrong with one student, if anything."""
    line, name, number = entry.line, entry.name, entry.student_number or ""
    found = []
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
