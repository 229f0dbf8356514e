"""An instructor in a real browser: a class, a student joining it, results, reviews, exports."""

import csv
import io
import re
from pathlib import Path

from playwright.sync_api import expect

from conftest import TEACHER
from student import start, take_quiz


def log_in(page) -> None:
    page.goto("/login")
    page.get_by_label("Username").fill(TEACHER[0])
    page.get_by_label("Password").fill(TEACHER[1])
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Your classes")).to_be_visible()


def create_class(page, name) -> str:
    """Create a class from the dashboard; return its join code."""
    page.get_by_label("Class name").fill(name)
    page.get_by_role("button", name="Create class").click()
    expect(page.get_by_role("heading", name=name)).to_be_visible()
    return page.locator(".join-code").inner_text()


def test_a_class_from_join_link_to_gradebook(browse, quiz):
    """The instructor watches a student's score arrive, reviews the attempt, downloads CSVs."""
    teacher = browse()
    log_in(teacher)
    code = create_class(teacher, "Browser class")
    expect(teacher.get_by_role("img", name=re.compile("QR code of the join link"))).to_be_visible()
    class_url = teacher.url

    student = browse()
    start(student, "Ada Lovelace", code=code)
    take_quiz(student, quiz, right={1, 2, 3, 4, 5, 6})
    expect(student.get_by_text("You scored 6 out of 8 (75%)")).to_be_visible()

    teacher.goto(class_url)
    row = teacher.get_by_role("row", name=re.compile("Ada Lovelace"))
    expect(row).to_contain_text("6/8")
    expect(row).to_contain_text("75%")
    row.get_by_role("link", name=re.compile("Attempt 1")).click()
    expect(teacher.get_by_role("heading", name="Ada Lovelace", exact=True)).to_be_visible()
    expect(teacher.get_by_text("Scored 6 out of 8 (75%)")).to_be_visible()
    expect(teacher.get_by_text("Ada Lovelace chose").first).to_be_visible()

    teacher.goto(class_url)
    for link, first_column, rows in [
        ("Download gradebook (CSV)", "student", 1),
        ("Download responses (CSV)", "student", 8),
        ("Download item statistics (CSV)", "question", 8),
    ]:
        with teacher.expect_download() as download:
            teacher.get_by_role("link", name=link).click()
        text = Path(download.value.path()).read_text(encoding="utf-8-sig")
        table = list(csv.reader(io.StringIO(text)))
        assert table[0][0] == first_column and len(table) - 1 == rows, (link, table[:2])
        assert download.value.suggested_filename.startswith("Browser class-gradient-checkpointing")
