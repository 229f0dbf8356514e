"""An instructor in a real browser: a class, a student joining it, results, reviews, exports."""

import csv
import io
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from conftest import NEWCOMER, PHONE, TEACHER, fits
from student import start, take_quiz


def log_in(page, account=TEACHER) -> None:
    page.goto("/login")
    page.get_by_label("Username").fill(account[0])
    page.get_by_label("Password").fill(account[1])
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
        if table[0][0].startswith("#"):  # the gradebook's comment row, naming its rule
            table = table[1:]
        assert table[0][0] == first_column and len(table) - 1 == rows, (link, table[:2])
        assert download.value.suggested_filename.startswith("Browser class-gradient-checkpointing")


@pytest.mark.parametrize(
    "screen", [(1024, 768), (1280, 800), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}"
)
def test_projector_screen_fits_without_scrolling(browse, screen):
    """The join screen shows code, link and the whole QR code on one screen, no navigation."""
    width, height = screen
    teacher = browse(viewport={"width": width, "height": height})
    log_in(teacher)
    create_class(teacher, f"Projected {width}")
    teacher.get_by_role("link", name="Show the code full screen").click()
    teacher.wait_for_url("**/join")  # measure the new page, not the one it replaces
    size = teacher.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    )
    assert size == [width, height], size
    expect(teacher.get_by_role("navigation")).to_have_count(0)
    expect(teacher.get_by_role("link", name="Your classes")).to_be_hidden()
    qr = teacher.get_by_role("img", name=re.compile("QR code of the join link")).bounding_box()
    assert qr["y"] >= 0 and qr["y"] + qr["height"] <= height
    # The code scales with the screen: at least half its height is QR code on any of them.
    assert qr["height"] >= 0.5 * height
    code = teacher.locator(".join-code").bounding_box()
    assert code["height"] >= 0.1 * height


def controls_fit(page, name):
    """No form control reaches past the page's content column (a select as wide as its
    longest option does without making the page scroll)."""
    past = page.evaluate(
        """() => {
            const main = document.querySelector("main");
            const right = main.getBoundingClientRect().right
                - parseFloat(getComputedStyle(main).paddingRight);
            return [...main.querySelectorAll("input, select, button")]
                .filter(c => c.getBoundingClientRect().right > right + 0.5)
                .map(c => c.name || c.id || c.textContent.trim());
        }"""
    )
    assert past == [], f"{name}: {past} reach past the content column"


def test_no_page_scrolls_sideways_on_a_phone(browse, quiz):
    """At 375 px every page fits the width; wide tables scroll inside labelled regions."""
    teacher = browse(viewport=PHONE)
    teacher.goto("/login")
    fits(teacher)
    # The password field is drawn like the username field, not as a tiny unstyled box.
    heights = [teacher.get_by_label(f).bounding_box()["height"] for f in ("Username", "Password")]
    assert heights[0] == heights[1] >= 44, heights
    log_in(teacher)
    fits(teacher)
    code = create_class(teacher, "A class with a long name to see how it wraps on a phone")
    class_url = teacher.url
    student = browse(viewport=PHONE)
    student.goto(f"/join/{code}")
    fits(student)
    start(student, "Ada Lovelace-Byron, Countess", code=code)
    take_quiz(student, quiz, right={1, 2})
    fits(student)
    student.get_by_role("link", name="What we measured").first.click()
    fits(student)
    student.get_by_role("link", name="Back to the question").first.click()
    assert "/results#review-" in student.url
    student.goto("/no/such/page")
    fits(student)

    teacher.goto(class_url)
    fits(teacher)
    for name in ("Students", "Attempts by score"):
        region = teacher.get_by_role("region", name=name)
        assert region.get_attribute("tabindex") == "0"
    teacher.get_by_role("link", name="Show the code full screen").click()
    fits(teacher)
    teacher.goto(class_url)
    teacher.get_by_role("link", name=re.compile("Attempt 1")).click()
    fits(teacher)
    teacher.goto(class_url)
    teacher.get_by_role("link", name=re.compile("^Preview")).click()
    fits(teacher)
    teacher.goto(class_url)
    teacher.get_by_role("link", name="Assign a quiz").click()
    fits(teacher)
    controls_fit(teacher, "assign a quiz")


@pytest.mark.parametrize("script", [True, False], ids=["with JavaScript", "without"])
def test_times_show_in_the_readers_time_zone(browse, quiz, script):
    """An instructor who chose no zone reads every time in their browser's, which the page's
    script tells the server, and the assignment form starts on it; without JavaScript, UTC."""
    teacher = browse(timezone_id="Asia/Tokyo", locale="en-GB", java_script_enabled=script)
    log_in(teacher, NEWCOMER)
    code = create_class(teacher, f"Time zones {script}")
    class_url = teacher.url
    student = browse()
    start(student, "Tokyo", code=code)
    teacher.goto(class_url)
    shown = teacher.locator("td time").first
    stamp = shown.get_attribute("datetime")
    if script:
        hour = (int(stamp[11:13]) + 9) % 24
        expect(shown).to_contain_text(re.compile(rf"{hour:02d}:{stamp[14:16]} (GMT\+9|JST)$"))
        expect(shown).to_have_attribute("data-zone", "Asia/Tokyo")
    else:
        expect(shown).to_contain_text(re.compile(rf"{stamp[11:16]} UTC$"))
    teacher.get_by_role("link", name="Assign a quiz").click()
    expect(teacher.get_by_label("Time zone")).to_have_value("Asia/Tokyo" if script else "UTC")
