"""Issue 15's "Done means", in real browsers against the app under gunicorn: an instructor runs
a timed, one-attempt, feedback-after-close quiz for a rostered class, three students sign in by
their codes, one runs out of time, feedback is released and the gradebook holds every student."""

import csv
import io
import re
from datetime import timedelta
from pathlib import Path

import factories
import pytest
from playwright.sync_api import Page, expect

from app.extensions import db
from app.models import Attempt
from app.question_types import right_choice

from conftest import PHONE, TEACHER, fits
from helpers import gunicorn, make_app
from test_instructor import create_class, log_in

CLASS = "Physics 101"
# Dana is on the roster but never starts: the gradebook must still list her.
ROSTER = {
    "Ada Lovelace": "20230001",
    "Grace Hopper": "20230002",
    "Alan Turing": "20230003",
    "Dana Diaz": "20230004",
}


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    """A server of its own with one instructor and no classes; yields the app, which shares the
    server's database, and the server's address."""
    folder = tmp_path_factory.mktemp("story")
    url = f"sqlite:///{folder / 'story.db'}"
    app = make_app(folder, SQLALCHEMY_DATABASE_URI=url, SQLALCHEMY_ENGINE_OPTIONS={})
    with app.app_context():
        factories.instructor(*TEACHER)
    with gunicorn(folder, workers=2, DATABASE_URL=url) as running:
        yield app, running.url


@pytest.fixture
def browser(chromium, story):
    """Open a page in a browser context of its own (its own cookies) on the story's server."""
    contexts = []

    def open_page(**options) -> Page:
        context = chromium.new_context(base_url=story[1], **options)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


def sign_in(page: Page, name: str, link: str | None = None, code: str | None = None) -> None:
    """Open the personal link, or type the code at /s, then confirm the name on the card."""
    if link:
        page.goto(link)
    else:
        page.goto("/s")
        page.get_by_label("Your sign-in code").fill(code)
        page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name=f"Are you {name}?")).to_be_visible()
    page.get_by_role("button", name=f"I am {name}").click()
    expect(page.get_by_role("heading", name="Question 1 of 8")).to_be_visible()


def save_answers(page: Page, quiz, numbers, right: set[int]) -> None:
    """Answer these questions in turn, right for the numbers in `right`; each answer is only
    said to be saved, never whether it was right."""
    for number in numbers:
        question = quiz.questions[number - 1]
        expect(page.get_by_role("heading", name=f"Question {number} of 8")).to_be_visible()
        wrong = next(c for c in question.choices if not c.correct)
        choice = right_choice(question) if number in right else wrong
        page.get_by_role("radio", name=choice.text, exact=True).check()
        last = number == len(quiz.questions)
        page.get_by_role("button", name="Save and see summary" if last else "Save and next").click()
        saved = page.get_by_text(f"Your answer to question {number} is saved.")
        expect(saved).to_be_visible()
        expect(page.get_by_text(re.compile(r"\b(Correct|Incorrect)\b"))).to_have_count(0)


def finish(page: Page) -> None:
    """Press "Finish attempt" on the summary the last question leads to."""
    expect(page.get_by_role("heading", name="Summary of your attempt")).to_be_visible()
    page.get_by_role("button", name="Finish attempt").first.click()


def expect_held_results(page: Page, answered: int) -> None:
    """The results page of a finished attempt whose feedback is held: no score, no retake."""
    expect(page.get_by_role("heading", name="Your results")).to_be_visible()
    summary = page.locator(".summary .score")
    expect(summary).to_have_text(
        f"Your answers are saved: {answered} of 8 answered, attempt finished."
    )
    expect(page.get_by_text("once your instructor releases feedback").first).to_be_visible()
    expect(page.get_by_text(re.compile(r"You scored|\b(Correct|Incorrect)\b"))).to_have_count(0)
    expect(page.get_by_role("heading", name="Review")).to_have_count(0)
    expect(page.get_by_role("button", name="Retake quiz")).to_have_count(0)
    expect(page.get_by_text("You have used your only attempt").first).to_be_visible()


def test_a_timed_one_attempt_quiz_graded_after_the_close(browser, story, quiz):
    app = story[0]
    # The instructor sets up the class, its roster and the assignment.
    teacher = browser(viewport={"width": 1280, "height": 800})
    log_in(teacher)
    create_class(teacher, CLASS)
    class_url = teacher.url
    teacher.get_by_role("link", name="Add students").click()
    pasted = "\n".join(f"{name}, {number}" for name, number in ROSTER.items())
    teacher.get_by_label("Paste students").fill(pasted)
    teacher.get_by_role("button", name="Add students").click()
    added = teacher.get_by_role("status")
    expect(added).to_have_text("4 students added, each with a sign-in code.")
    with teacher.expect_download() as download:
        teacher.get_by_role("link", name="Download sign-in codes (CSV)").click()
    codes = csv.DictReader(io.StringIO(Path(download.value.path()).read_text("utf-8-sig")))
    cards = {row["student"]: row for row in codes}
    assert set(cards) == set(ROSTER)

    teacher.goto(class_url)
    teacher.get_by_role("link", name="Assign a quiz").click()
    teacher.get_by_label("Quiz", exact=True).select_option(label=quiz.title)
    teacher.get_by_label("Time limit (minutes)").fill("30")
    teacher.get_by_label("Attempts allowed").fill("1")
    teacher.get_by_role("radio", name="After the quiz closes").check()
    teacher.get_by_role("button", name="Save assignment").click()
    assigned = teacher.locator(".assignments > li")
    expect(assigned).to_contain_text("Time limit 30 minutes")
    expect(assigned).to_contain_text("1 attempt allowed")
    expect(assigned).to_contain_text("Feedback: after the quiz closes")

    # Three students sign in in their own browsers: two by their personal links, one on a phone
    # by typing the code from the card as a person might, in lower case.
    ada = browser()
    sign_in(ada, "Ada Lovelace", link=cards["Ada Lovelace"]["personal_link"])
    grace = browser(viewport=PHONE, has_touch=True, is_mobile=True)
    sign_in(grace, "Grace Hopper", code=cards["Grace Hopper"]["sign_in_code"].lower())
    fits(grace)
    alan = browser()
    sign_in(alan, "Alan Turing", link=cards["Alan Turing"]["personal_link"])
    expect(alan.get_by_text(re.compile(r"This attempt ends at"))).to_be_visible()

    save_answers(ada, quiz, range(1, 9), right={1, 2, 3, 4, 5, 6})
    finish(ada)
    expect_held_results(ada, answered=8)
    save_answers(grace, quiz, range(1, 9), right=set(range(1, 9)))
    finish(grace)
    expect_held_results(grace, answered=8)
    fits(grace)

    # Alan answers two questions, then his 30 minutes run out. The server's clock cannot be
    # faked from here (it runs in gunicorn's processes), so his attempt is moved 31 minutes into
    # the past in the server's database instead: started 31 minutes ago, ended a minute ago.
    save_answers(alan, quiz, [1, 2], right={1})
    token = alan.url.split("/")[4]
    with app.app_context():
        attempt = db.session.scalars(db.select(Attempt).filter_by(token=token)).one()
        attempt.started_at -= timedelta(minutes=31)
        attempt.ends_at -= timedelta(minutes=31)
        db.session.commit()
    # Most students whose time runs out never press anything again: the instructor, looking
    # meanwhile, sees the attempt over and scored on what was answered.
    teacher.goto(class_url)
    students = teacher.get_by_role("region", name="Students")
    expect(students.get_by_role("row", name=re.compile("Alan Turing"))).to_contain_text("1/8")
    alan.get_by_role("radio", name=right_choice(quiz.questions[2]).text, exact=True).check()
    alan.get_by_role("button", name="Save and next").click()
    expect(alan.get_by_role("heading", name="Time is up")).to_be_visible()
    expect(alan.get_by_text("so this answer was not saved")).to_be_visible()
    alan.get_by_role("link", name="See results").click()
    expect(alan.get_by_text("Your time ran out at")).to_be_visible()
    expect_held_results(alan, answered=2)

    # A results link passed to another browser shows nothing before feedback is released.
    stranger = browser()
    response = stranger.goto(ada.url)
    assert response.status == 403
    expect(stranger.get_by_role("heading", name="This review is not open yet")).to_be_visible()

    teacher.goto(class_url)
    expect(students.get_by_role("row", name=re.compile("Dana Diaz"))).to_contain_text("Not started")
    teacher.get_by_role("link", name=re.compile("^Release feedback")).click()
    expect(teacher.locator("#release-warning")).to_contain_text("1 on the roster has not started")
    teacher.get_by_role("button", name="Release feedback now").click()
    expect(assigned).to_contain_text("Feedback: after the quiz closes, released")
    expect(teacher.get_by_role("link", name=re.compile("^Release feedback"))).to_have_count(0)

    # Now every student reads their score and review; retaking is still not offered.
    for student, scored in [(ada, "6 out of 8 (75%)"), (grace, "8 out of 8 (100%)"),
                            (alan, "1 out of 8 (12.5%)")]:  # fmt: skip
        student.reload()
        expect(student.get_by_text(f"You scored {scored}")).to_be_visible()
        expect(student.get_by_role("heading", name="Review")).to_be_visible()
        expect(student.get_by_role("button", name="Retake quiz")).to_have_count(0)
    expect(alan.get_by_text("Your time ran out at")).to_be_visible()
    # Released, the shared link opens to anyone, as the instructor has said the answers may go.
    assert stranger.reload().status == 200
    expect(stranger.get_by_text("Ada Lovelace scored 6 out of 8 (75%)")).to_be_visible()

    # The gradebook, as the instructor would upload it to the LMS.
    teacher.goto(class_url)
    with teacher.expect_download() as download:
        teacher.get_by_role("link", name="Download gradebook (CSV)").click()
    assert download.value.suggested_filename == (
        f"{CLASS}-gradient-checkpointing-gradebook-first-attempt.csv"
    )
    lines = Path(download.value.path()).read_text("utf-8-sig").splitlines()
    table = list(csv.reader(lines))
    header = ["student", "student_id", "email", "state", "attempts", "unfinished", "score",
              "max_score", "percent", "counted"]  # fmt: skip
    assert table[0] == header
    grades = {row[0]: row[1:] for row in table[1:]}
    assert grades == {
        "Ada Lovelace": ["20230001", "", "finished", "1", "0", "6", "8", "75", "first-attempt"],
        "Grace Hopper": ["20230002", "", "finished", "1", "0", "8", "8", "100", "first-attempt"],
        "Alan Turing": ["20230003", "", "finished", "1", "0", "1", "8", "12.5", "first-attempt"],
        "Dana Diaz": ["20230004", "", "not started", "0", "0", "", "8", "", "first-attempt"],
    }
    # And as Moodle's grade import takes it: matched by ID number, no grade for Dana.
    with teacher.expect_download() as download:
        teacher.get_by_role("link", name="Moodle’s grade import").click()
    moodle = list(csv.reader(Path(download.value.path()).read_text("utf-8-sig").splitlines()))
    assert moodle[0] == ["Full name", "ID number", "Email address", quiz.title]
    assert {row[1]: row[3] for row in moodle[1:]} == {
        "20230001": "6", "20230002": "8", "20230003": "1", "20230004": "",
    }  # fmt: skip
