"""CSV exports of a class's results: each export is a header and rows, and one function streams
any of them as a download."""

import csv
import io
import re
import unicodedata
from collections.abc import Iterable, Iterator
from datetime import datetime
from urllib.parse import quote

from flask import Response, stream_with_context

from .. import reports
from ..bank import Quiz
from ..grading import earned, stored_mark
from ..question_types import type_of
from ..reports import ClassReport, Counting, Roster
from ..text import plain

Table = tuple[list[str], Iterable[list]]
"""A header and its rows."""


class Formula(str):
    """A cell this module wrote as a formula on purpose, from digits only: left as it is."""


def cell(value):
    """Neutralise text a spreadsheet would run as a formula (OWASP's CSV injection advice)."""
    if isinstance(value, Formula):
        return value
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def number(value: float | None, digits: int) -> float | int | str:
    """A figure for a spreadsheet: rounded, whole numbers without ".0", blank when undefined."""
    if value is None:
        return ""
    rounded = round(value, digits)
    return int(rounded) if rounded == int(rounded) else rounded


def utc(moment: datetime | None) -> str:
    """A UTC time as spreadsheets read a date and time (ISO 8601's space form)."""
    return moment.strftime("%Y-%m-%d %H:%M:%S") if moment else ""


def identifiers(student_number: str | None) -> tuple[str, str]:
    """The roster's student id or email, as the id column and the email column."""
    if not student_number:
        return "", ""
    return ("", student_number) if "@" in student_number else (student_number, "")


def kept_as_text(student_id: str) -> str:
    """An id a spreadsheet would turn into a number (losing "007"'s zeros, or a long id's last
    digits), written as the text formula Excel, LibreOffice and Google Sheets keep as text."""
    digits = student_id.isascii() and student_id.isdigit()
    if digits and (len(student_id) > 1 and student_id[0] == "0" or len(student_id) > 15):
        return Formula(f'="{student_id}"')
    return student_id


def spreadsheet_identifiers(student_number: str | None) -> tuple[str, str]:
    """The id and email columns of a file meant for spreadsheets: ids of digits kept whole."""
    student_id, email = identifiers(student_number)
    return kept_as_text(student_id), email


# What each way of counting makes of a student's grade: for the file's name and its column.
GRADE_RULES = {
    Counting.FIRST: "first-attempt",
    Counting.BEST: "best-attempt",
    Counting.LATEST: "latest-attempt",
    Counting.ALL: "average-of-attempts",
}


def gradebook_kind(roster: Roster, lms: str = "") -> str:
    """The gradebook's file kind, naming the LMS it is for and which attempts counted."""
    return f"gradebook-{lms + '-' if lms else ''}{GRADE_RULES[roster.counting]}"


STATES = {None: "finished", "Not finished": "not finished", "Not started": "not started"}


def gradebook(roster: Roster) -> Table:
    """One row per student: the counted attempt's score, or the mean when all count; a score
    only when there is one, the state in its own column."""
    header = [
        "student", "student_id", "email", "state", "attempts", "unfinished", "score",
        "max_score", "percent", "counted",
    ]  # fmt: skip
    rows = []
    for row in reports.gradebook(roster.quiz, roster.students):
        rows.append(
            [
                f"{row.student} (removed)" if row.removed else row.student,
                *spreadsheet_identifiers(row.student_number),
                STATES[row.status],
                row.attempts,
                row.unfinished,
                number(row.score, 2),
                number(row.max_score, 2),
                number(row.percent, 1),
                GRADE_RULES[roster.counting],
            ]
        )
    return header, rows


def moodle_gradebook(roster: Roster) -> Table:
    """Moodle's "Import grades, CSV file": a header row, then one row per student it can
    identify (by ID number or email address), the grade in points, empty for no grade."""
    header = ["Full name", "ID number", "Email address", roster.quiz.title]
    rows = []
    for row in reports.gradebook(roster.quiz, roster.students):
        student_id, email = identifiers(row.student_number)
        # A row Moodle cannot match to a user stops its whole import.
        if not row.removed and (student_id or email):
            rows.append([row.student, student_id, email, number(row.score, 2)])
    return header, rows


def canvas_gradebook(roster: Roster) -> Table:
    """Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID and Section, then the
    assignment's column; a "Points Possible" row gives a new assignment its points."""
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", roster.quiz.title]
    rows: list[list] = [["Points Possible", "", "", "", "", number(roster.quiz.out_of, 2)]]
    for row in reports.gradebook(roster.quiz, roster.students):
        student_id, email = identifiers(row.student_number)
        # Canvas finds a student by an id and cannot use a row without one.
        if not row.removed and (student_id or email):
            rows.append([row.student, "", student_id, email, "", number(row.score, 2)])
    return header, rows


def responses(class_name: str, versions: dict[int, Quiz], answers: Iterable[tuple]) -> Table:
    """One row per answer, with the question and choice as the student saw them."""
    prompts = {(v, q.id): plain(q.prompt) for v, quiz in versions.items() for q in quiz.questions}
    questions = {(v, q.id): q for v, quiz in versions.items() for q in quiz.questions}
    header = [
        "student",
        "student_id",
        "email",
        "class",
        "attempt",
        "question",
        "question_text",
        "choice",
        "choice_text",
        "correct",
        "mark",
        "points",
        "question_points",
        "answered_at_utc",
        "replaced_at_utc",
        "mark_by_hand",
        "comment_by_hand",
    ]
    rows = (
        [
            student,
            *spreadsheet_identifiers(identifier),
            class_name,
            attempt,
            question,
            prompts[version, question],
            choice,
            type_of(questions[version, question]).in_a_cell(questions[version, question], choice),
            "true" if correct else "false",
            number(stored_mark(mark, correct), 4),
            number(earned(questions[version, question].points, mark, correct), 2),
            number(questions[version, question].points, 2),
            utc(answered_at),
            utc(replaced_at),
            "" if by_hand is None else number(by_hand, 4),
            comment or "",
        ]
        for (student, identifier, attempt, version, question, choice, correct, mark, answered_at,
             replaced_at, by_hand, comment) in answers  # fmt: skip
    )
    return header, rows


def item_statistics(report: ClassReport) -> Table:
    """One row per question: facility, discrimination and how many chose each choice, the
    choices named by their text."""
    most = max(len(item.tally) for item in report.items)
    header = [
        "question", "question_text", "points", "n", "not_answered", "facility", "discrimination",
        "right_choice",
    ]  # fmt: skip
    for k in range(1, most + 1):
        header += [f"choice_{k}", f"choice_{k}_count"]
    rows = []
    for item in report.items:
        tally = item.tally
        row = [
            item.question.id,
            plain(item.question.prompt),
            number(item.question.points, 2),
            item.n,
            item.not_answered,
            number(item.facility, 3),
            number(item.discrimination, 3),
            "; ".join(line.text for line in tally if line.right),
        ]
        for line in tally:
            row += [line.text, line.count]
        rows.append(row)
    return header, rows


def csv_chunks(header: list[str], rows: Iterable[list]) -> Iterator[str]:
    """UTF-8 CSV text in pieces of about 64 kB, the header first; numbers stay numbers,
    formula-like text is defused."""
    out = io.StringIO()
    # The byte-order mark makes Excel read UTF-8 names correctly; other tools skip it.
    out.write("\ufeff")
    writer = csv.writer(out)
    writer.writerow(header)
    for row in rows:
        writer.writerow([cell(value) for value in row])
        if out.tell() > 64_000:
            yield out.getvalue()
            out.seek(0)
            out.truncate()
    yield out.getvalue()


def file_names(class_name: str, slug: str, kind: str) -> tuple[str, str]:
    """The download's file name, and its plain ASCII stand-in for older browsers."""
    # No folders, control characters or leading dots can come from a class name, nor the
    # invisible characters (bidi overrides, zero-width, line separators) that disguise a name:
    # those become NUL first, and every control character then becomes "-".
    name = "".join(
        "\x00" if unicodedata.category(char) in ("Cf", "Zl", "Zp") else char for char in class_name
    )
    name = re.sub(r'[\\/:*?"<>|\x00-\x1f\x7f-\x9f]+', "-", name)
    filename = f"{name.strip(' .-') or 'class'}-{slug}-{kind}.csv"
    return filename, re.sub(r"[^A-Za-z0-9.]+", "-", filename).strip("-.")


def download(class_name: str, slug: str, kind: str, table: Table) -> Response:
    """Stream a table as a CSV download named after the class, the quiz and the export."""
    filename, ascii_name = file_names(class_name, slug, kind)
    return Response(
        stream_with_context(csv_chunks(*table)),
        mimetype="text/csv",
        headers={
            "Content-Disposition": f'attachment; filename="{ascii_name}"; '
            f"filename*=UTF-8''{quote(filename, safe='')}"
        },
    )
