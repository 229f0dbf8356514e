"""The gradebook downloads as the tools that read them read them: spreadsheets, Moodle's grade
import and Canvas's gradebook import, against files written from their documentation."""

import csv
import io
import re

import factories
import pytest

from app.served import current_bank

from helpers import SLUG, login, text

pytestmark = pytest.mark.postgres

FIXTURES = "tests/fixtures/gradebooks"


@pytest.fixture
def course(app):
    """Physics 101: three roster students (one never starts) and one typed-name student."""
    with app.app_context():
        teacher = factories.instructor()
        made = factories.class_(teacher)
        quiz = current_bank().quizzes[SLUG]
        dana, eli, _ = factories.roster(
            made.id, "Dana Diaz, 007\nEli Okafor, eli@school.example\nFay Fox, 20230003"
        )
        marks = [[True] * 6 + [False] * 2, [True] * 3 + [False] * 5, [True] * 8]
        factories.attempts(
            quiz,
            [factories.right_or_wrong(quiz, m) for m in marks],
            names=["Dana Diaz", "Eli Okafor", "Gil Gray"],
            class_id=made.id,
            roster_students=[dana, eli, None],
        )
        class_id = made.id
    client = app.test_client()
    assert login(client, "teacher", "correct horse").status_code == 303
    return client, f"/teach/classes/{class_id}"


def table(response) -> list[list[str]]:
    assert response.status_code == 200 and response.mimetype == "text/csv"
    return list(csv.reader(io.StringIO(response.get_data().decode("utf-8-sig"), newline="")))


def test_the_gradebook_starts_with_its_header_and_holds_numbers_where_numbers_go(course):
    """pandas, LibreOffice and every LMS take the first row as the header: it is; a score
    is a number or empty, and the state has its own column."""
    teacher, base = course
    header, *rows = table(teacher.get(f"{base}/gradebook.csv"))
    assert header[:4] == ["student", "student_id", "email", "state"]
    found = {row[0]: dict(zip(header, row, strict=True)) for row in rows}
    assert {name: (r["state"], r["score"], r["percent"]) for name, r in found.items()} == {
        "Dana Diaz": ("finished", "6", "75"),
        "Eli Okafor": ("finished", "3", "37.5"),
        "Fay Fox": ("not started", "", ""),
        "Gil Gray": ("finished", "8", "100"),
    }
    assert (found["Eli Okafor"]["student_id"], found["Eli Okafor"]["email"]) == (
        "", "eli@school.example",
    )  # fmt: skip
    assert {r["counted"] for r in found.values()} == {"first-attempt"}


def test_an_id_with_leading_zeros_stays_text_in_a_spreadsheet(course):
    """007 would open as 7: it is written as the text formula spreadsheets keep, and only ids
    of digits are, so no name or id can smuggle in a formula of its own."""
    teacher, base = course
    header, *rows = table(teacher.get(f"{base}/gradebook.csv"))
    ids = {row[0]: row[header.index("student_id")] for row in rows}
    assert ids == {"Dana Diaz": '="007"', "Eli Okafor": "", "Fay Fox": "20230003", "Gil Gray": ""}


def test_the_page_and_the_gradebook_give_one_percent(course):
    """3 of 8 is 37.5% on the class page and 37.5 in the file, not 38% and 37.5."""
    teacher, base = course
    page = text(teacher.get(base))
    assert re.search(
        r"Eli Okafor</th>.*?<td class=\"num\">3/8</td> <td class=\"num\">37.5%</td>", page
    )


@pytest.mark.parametrize("lms", ["moodle", "canvas"])
def test_the_lms_gradebook_is_the_file_its_import_documents(course, lms):
    """Byte for byte the file written from the LMS's documentation (see the fixtures' README):
    students it can match only, grades in points, nothing where there is no grade."""
    teacher, base = course
    response = teacher.get(f"{base}/gradebook-{lms}.csv")
    with open(f"{FIXTURES}/{lms}.csv", "rb") as fixture:
        assert response.get_data() == fixture.read()
    name = f"Physics-101-gradient-checkpointing-gradebook-{lms}-first-attempt.csv"
    assert response.headers["Content-Disposition"].startswith(f'attachment; filename="{name}"')


def moodle_import(
    rows: list[list[str]], identify_by: str, grade_column: str
) -> dict[str, float | None]:
    """Moodle's CSV grade import, as its documentation gives its rules: the header row names
    the columns, every row must name a user, a grade is a number or empty (no grade)."""
    header, *rows = rows
    who, grade = header.index(identify_by), header.index(grade_column)
    imported = {}
    for line, row in enumerate(rows, 2):
        assert row[who], f"line {line}: user mapping error, no {identify_by}"
        value = row[grade].strip()
        assert value == "" or re.fullmatch(r"-?\d+(\.\d+)?", value), f"line {line}: bad grade"
        imported[row[who]] = float(value) if value else None
    return imported


def test_moodle_reads_grades_by_email_and_by_id_number(course):
    """Each identifier Moodle offers finds only rows that carry it; the mapping picks one."""
    teacher, base = course
    rows = table(teacher.get(f"{base}/gradebook-moodle.csv"))
    with_ids = [rows[0]] + [row for row in rows[1:] if row[1]]
    assert moodle_import(with_ids, "ID number", rows[0][3]) == {"007": 6, "20230003": None}
    with_emails = [rows[0]] + [row for row in rows[1:] if row[2]]
    assert moodle_import(with_emails, "Email address", rows[0][3]) == {"eli@school.example": 3}


def test_lms_gradebooks_are_offered_only_when_the_roster_gives_ids(app, course):
    """A class of typed names has nothing an LMS could match a row to: no such links."""
    teacher, base = course
    page = text(teacher.get(base))
    assert "gradebook-moodle.csv" in page and "gradebook-canvas.csv" in page
    with app.app_context():
        other = factories.class_(factories.instructor("other"), "Chemistry")
        other_id = other.id
    other_teacher = app.test_client()
    login(other_teacher, "other", "correct horse")
    page = text(other_teacher.get(f"/teach/classes/{other_id}"))
    assert "Download gradebook (CSV)" in page and "gradebook-moodle.csv" not in page


def test_responses_say_whose_answer_by_id_and_when_as_a_date(course):
    """Each answer row carries the roster's id or email, and a time spreadsheets read."""
    teacher, base = course
    header, *rows = table(teacher.get(f"{base}/responses.csv"))
    assert header[:4] == ["student", "student_id", "email", "class"]
    assert header[-4:] == ["answered_at_utc", "replaced_at_utc", "mark_by_hand", "comment_by_hand"]
    ids = {(row[0], row[1], row[2]) for row in rows}
    assert ids == {
        ("Dana Diaz", '="007"', ""), ("Eli Okafor", "", "eli@school.example"), ("Gil Gray", "", ""),
    }  # fmt: skip
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", row[-4]) for row in rows)
