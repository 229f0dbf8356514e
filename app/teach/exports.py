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
from ..reports import ClassReport, Counting, Roster

Table = tuple[list[str], Iterable[list]]
"""A header and its rows."""


def cell(value):
    """Neutralise text a spreadsheet would run as a formula (OWASP's CSV injection advice)."""
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
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else ""


# What each way of counting makes of a student's grade: for the file's name and first row.
GRADE_RULES = {
    Counting.FIRST: ("first-attempt", "each student's first finished attempt"),
    Counting.BEST: ("best-attempt", "each student's best finished attempt"),
    Counting.LATEST: ("latest-attempt", "each student's latest finished attempt"),
    Counting.ALL: ("average-of-attempts", "the average of each student's finished attempts"),
}


def gradebook_rule(roster: Roster) -> tuple[str, str]:
    """The gradebook's file kind, naming its rule, and the comment row that explains it."""
    kind, rule = GRADE_RULES[roster.counting]
    return f"gradebook-{kind}", f"# {roster.quiz.title}: score from {rule}."


def gradebook(roster: Roster) -> Table:
    """One row per student: the counted attempt's score, or the mean when all count; roster
    students who have not started or finished say so where the score would be."""
    header = ["student", "attempts", "unfinished", "score", "max_score", "percent"]
    if roster.with_ids:
        header.insert(1, "student_id")
    rows = []
    for row in reports.gradebook(roster.quiz, roster.students):
        found = [
            f"{row.student} (removed)" if row.removed else row.student,
            row.attempts,
            row.unfinished,
            row.status or number(row.score, 2),
            row.max_score,
            number(row.percent, 1),
        ]
        if roster.with_ids:
            found.insert(1, row.student_number or "")
        rows.append(found)
    return header, rows


def responses(class_name: str, versions: dict[int, Quiz], answers: Iterable[tuple]) -> Table:
    """One row per answer, with the question and choice as the student saw them."""
    prompts = {(v, q.id): q.prompt for v, quiz in versions.items() for q in quiz.questions}
    texts = {
        (v, q.id, c.id): c.text
        for v, quiz in versions.items()
        for q in quiz.questions
        for c in q.choices
    }
    header = [
        "student",
        "class",
        "attempt",
        "question",
        "question_text",
        "choice",
        "choice_text",
        "correct",
        "answered_at",
    ]
    rows = (
        [
            student,
            class_name,
            attempt,
            question,
            prompts[version, question],
            choice,
            texts[version, question, choice],
            "true" if correct else "false",
            utc(answered_at),
        ]
        for student, attempt, version, question, choice, correct, answered_at in answers
    )
    return header, rows


def item_statistics(report: ClassReport) -> Table:
    """One row per question: facility, discrimination and how many chose each choice."""
    most = max(len(item.question.choices) for item in report.items)
    header = [
        "question", "question_text", "n", "not_answered", "facility", "discrimination",
        "right_choice",
    ]  # fmt: skip
    for k in range(1, most + 1):
        header += [f"choice_{k}", f"choice_{k}_count"]
    rows = []
    for item in report.items:
        row = [
            item.question.id,
            item.question.prompt,
            item.n,
            item.not_answered,
            number(item.facility, 3),
            number(item.discrimination, 3),
            item.question.right_choice.id,
        ]
        for choice in item.question.choices:
            row += [choice.id, item.counts[choice.id]]
        rows.append(row)
    return header, rows


def csv_chunks(
    header: list[str], rows: Iterable[list], comment: str | None = None
) -> Iterator[str]:
    """UTF-8 CSV text in pieces of about 64 kB; numbers stay numbers, formula-like text is
    defused. A comment, if any, is the first row, a single cell starting with "#"."""
    out = io.StringIO()
    # The byte-order mark makes Excel read UTF-8 names correctly; other tools skip it.
    out.write("\ufeff")
    writer = csv.writer(out)
    if comment is not None:
        writer.writerow([comment])
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


def download(
    class_name: str, slug: str, kind: str, table: Table, comment: str | None = None
) -> Response:
    """Stream a table as a CSV download named after the class, the quiz and the export."""
    filename, ascii_name = file_names(class_name, slug, kind)
    return Response(
        stream_with_context(csv_chunks(*table, comment=comment)),
        mimetype="text/csv",
        headers={
            "Content-Disposition": f'attachment; filename="{ascii_name}"; '
            f"filename*=UTF-8''{quote(filename, safe='')}"
        },
    )
