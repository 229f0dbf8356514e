"""Issue 31's proof in real browsers against the app under gunicorn: a timed exam whose
feedback waits for the close, one student on 1.5× time; students move between questions,
change an answer and flag one, with and without JavaScript; a pool of 6 drawing 3; and a
lecturer's own mark for one answer, which the student reads."""

import re
from datetime import UTC, datetime, timedelta

import factories
import pytest
from playwright.sync_api import Page, expect

from app.authoring import drafts
from app.extensions import db
from app.models import Attempt, FeedbackWhen
from app.question_types import right_choice
from app.served import current_bank, recheck_bank

from conftest import TEACHER
from helpers import gunicorn, make_app
from test_instructor import log_in

CLOSES = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(hours=2)


@pytest.fixture(scope="module")
def exam(tmp_path_factory, quiz):
    """A server of its own: a class with Dana and Ben on its roster, the quiz assigned with 2
    minutes and feedback after the close; another class assigned a pool of 6 drawing 3. Yields
    the app (sharing the server's database), its address, and each student's sign-in code."""
    folder = tmp_path_factory.mktemp("exam")
    url = f"sqlite:///{folder / 'exam.db'}"
    app = make_app(folder, SQLALCHEMY_DATABASE_URI=url, SQLALCHEMY_ENGINE_OPTIONS={})
    with app.app_context():
        teacher = factories.instructor(*TEACHER)
        course = factories.class_(teacher, "Exam class")
        factories.assignment(course, quiz, time_limit_minutes=2, closes_at=CLOSES,
                             feedback=FeedbackWhen.AFTER_CLOSE)  # fmt: skip
        codes = {s.name: s.sign_in_code for s in factories.roster(course.id, "Dana Diaz\nBen Bo")}
        record = factories.owned_quiz(teacher, "pool", questions=6)

        def pooled(draft):
            draft["pools"] = [{"name": "Basics", "draw": 3}]
            for question in draft["questions"]:
                question["pool"] = "Basics"

        drafts.save(record, pooled, teacher.id)
        drafts.publish(record, teacher.id)
        recheck_bank()
        pool_class = factories.class_(teacher, "Pool class", join_code="POOLPO")
        factories.assignment(pool_class, current_bank().quizzes["pool"],
                             feedback=FeedbackWhen.AFTER_ATTEMPT)  # fmt: skip
    with gunicorn(folder, workers=2, DATABASE_URL=url) as running:
        yield app, running.url, codes


@pytest.fixture
def open_page(chromium, exam):
    contexts = []

    def opened(**options) -> Page:
        context = chromium.new_context(base_url=exam[1], **options)
        contexts.append(context)
        return context.new_page()

    yield opened
    for context in contexts:
        context.close()


def sign_in(page: Page, code: str, name: str) -> None:
    page.goto(f"/s/{code}")
    page.get_by_role("button", name=f"I am {name}").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Question 1 of \d+$"))).to_be_visible()


def choose(page: Page, text: str) -> None:
    page.get_by_role("radio", name=text, exact=True).check()


def test_extra_time_moving_flagging_and_a_mark_given_by_hand(open_page, exam, quiz):
    app, _, codes = exam
    # The lecturer gives Dana half as long again.
    teacher = open_page()
    log_in(teacher)
    teacher.get_by_role("link", name="Exam class").click()
    teacher.get_by_role("link", name=re.compile("^Add an exception")).click()
    teacher.get_by_role("checkbox", name="Dana Diaz").check()
    teacher.get_by_label("Or times the assignment's time limit").fill("×1.5")
    teacher.get_by_role("button", name="Save exception").click()
    expect(teacher.get_by_text("Dana Diaz: ×1.5 the time")).to_be_visible()

    # Dana works without JavaScript: 3 minutes, her own; Ben has the class's 2.
    dana = open_page(java_script_enabled=False)
    sign_in(dana, codes["Dana Diaz"], "Dana Diaz")
    expect(dana.get_by_text(re.compile(r"3 minutes after it started"))).to_be_visible()
    ben = open_page()
    sign_in(ben, codes["Ben Bo"], "Ben Bo")
    expect(ben.get_by_text(re.compile(r"2 minutes after it started"))).to_be_visible()
    expect(ben.get_by_text("3 minutes")).to_have_count(0)

    first, second, third = quiz.questions[:3]
    wrong = next(c for c in first.choices if not c.correct)
    # Dana answers question 1 wrong, flags question 2 without answering, moves on.
    choose(dana, wrong.text)
    dana.get_by_role("button", name="Save and next").click()
    expect(dana.get_by_role("heading", name="Question 2 of 8")).to_be_visible()
    expect(dana.get_by_text("Your answer to question 1 is saved.")).to_be_visible()
    dana.get_by_label("Flag this question to come back to").check()
    dana.get_by_role("button", name="Save and next").click()
    choose(dana, right_choice(third).text)
    # Back to question 1 from the map, where her choice is still ticked; she changes it.
    dana.get_by_role("button", name="Question 1, answered").click()
    expect(dana.get_by_role("radio", name=wrong.text, exact=True)).to_be_checked()
    choose(dana, right_choice(first).text)
    dana.get_by_role("button", name="Save and finish…").click()
    # The summary: what is answered, what is flagged, each a link back.
    expect(dana.get_by_role("heading", name="Summary of your attempt")).to_be_visible()
    overview = dana.locator(".overview li")
    expect(overview.nth(0)).to_contain_text("Answer saved")
    expect(overview.nth(1)).to_contain_text("Not answered, flagged")
    expect(overview.nth(2)).to_contain_text("Answer saved")  # leaving by the map saved it
    dana.get_by_role("link", name=re.compile(r"^2\.")).click()
    choose(dana, right_choice(second).text)
    dana.get_by_label("Flag this question to come back to").uncheck()
    dana.get_by_role("button", name="Save and finish…").click()
    expect(overview.nth(1)).to_contain_text("Answer saved")
    expect(dana.get_by_text("flagged")).to_have_count(0)
    dana.get_by_role("button", name="Finish attempt").first.click()
    done = "Your answers are saved: 3 of 8 answered, attempt finished."
    expect(dana.get_by_text(done)).to_be_visible()

    # Ben finishes at once. His feedback waits for the close and for Dana's longer time too:
    # the moment given is the close plus her 3 minutes (and the grace), not his 2.
    ben.get_by_role("button", name="Save and finish…").click()
    ben.get_by_role("button", name="Finish attempt").first.click()
    opens = CLOSES + timedelta(minutes=3, seconds=10)
    held = ben.get_by_text(re.compile("once the quiz has closed and the last attempt's time is up"))
    expect(held.first).to_contain_text(f"{opens:%H:%M}")
    expect(ben.get_by_text(re.compile("You scored|Correct|Incorrect"))).to_have_count(0)

    # Released, Dana reads her score; the lecturer gives her answer to question 1 the mark by
    # hand with a comment, which she then reads in her review.
    with app.app_context():
        dana_s = db.select(Attempt.token).filter_by(student_name="Dana Diaz")
        token = db.session.scalars(dana_s).one()
    teacher.goto(teacher.url.split("#")[0])
    teacher.get_by_role("link", name=re.compile("^Release feedback")).click()
    teacher.get_by_role("button", name="Release feedback now").click()
    teacher.goto(f"/teach/attempts/{token}")
    teacher.get_by_role("link", name="Change marks by hand…").click()
    marking = teacher.locator("#mark-1")
    marking.get_by_label("Points, from 0 to 1").fill("0.5")
    marking.get_by_label(re.compile("^Comment for Dana Diaz")).fill("Half: see the unit.")
    marking.get_by_role("button", name="Save mark").click()
    expect(teacher.get_by_text("Saved: question 1 marked 0.5 of 1.")).to_be_visible()
    dana.reload()
    expect(dana.get_by_text("You scored 2.5 out of 8")).to_be_visible()
    expect(dana.get_by_text("Marked by your instructor: 0.5 of 1 point")).to_be_visible()
    expect(dana.get_by_text("Half: see the unit.")).to_be_visible()


def test_a_pool_of_six_draws_three_for_each_student(open_page):
    """Two students of the pool class are asked three questions each, their own draws."""
    asked = []
    for name in ("Cy", "Di"):
        page = open_page()
        page.goto("/join/POOLPO")
        page.get_by_label("Your name").fill(name)
        page.get_by_role("button", name="Start quiz").click()
        prompts = []
        for number in (1, 2, 3):
            expect(page.get_by_role("heading", name=f"Question {number} of 3")).to_be_visible()
            prompts.append(page.locator("legend.prompt").inner_text())
            choose(page, "This one")
            page.get_by_role("button", name=re.compile("^Save and (next|see summary)$")).click()
        expect(page.get_by_role("heading", name="Summary of your attempt")).to_be_visible()
        page.get_by_role("button", name="Finish attempt").first.click()
        expect(page.get_by_text("You scored 3 out of 3")).to_be_visible()
        asked.append(prompts)
    assert all(len(set(prompts)) == 3 for prompts in asked)
