"""A timed attempt with feedback held until the end, in a real browser: the clock in the
student's own time zone, the countdown and what a screen reader hears, and no JavaScript."""

import re
from datetime import UTC
from zoneinfo import ZoneInfo

import factories
import pytest
from playwright.sync_api import expect

from app.extensions import db
from app.models import Assignment, FeedbackWhen
from app.question_types import right_choice
from app.zones import utc

from conftest import PHONE, fits
from helpers import gunicorn, make_app

BROWSER = "e2e-timed-browser-0000"  # 22 characters, as the browser cookie holds


@pytest.fixture(scope="module")
def timed(tmp_path_factory, quiz):
    """A server whose class has the quiz assigned with 30 minutes and feedback after the
    attempt; yields the app (to start attempts in) and the server's address."""
    folder = tmp_path_factory.mktemp("timed")
    url = f"sqlite:///{folder / 'timed.db'}"
    app = make_app(folder, SQLALCHEMY_DATABASE_URI=url, SQLALCHEMY_ENGINE_OPTIONS={})
    with app.app_context():
        course = factories.class_(factories.instructor("teacher"))
        factories.assignment(
            course, quiz, time_limit_minutes=30, feedback=FeedbackWhen.AFTER_ATTEMPT
        )
    with gunicorn(folder, workers=1, DATABASE_URL=url) as running:
        yield app, running.url


def attempt_page(chromium, timed, quiz, **options):
    """A student's browser with a fresh timed attempt of its own, at question 1."""
    app, base = timed
    with app.app_context():
        assignment = db.session.scalars(db.select(Assignment)).one()
        attempt = factories.attempt(
            quiz, "Ada", class_id=assignment.class_id, browser=BROWSER, assignment=assignment
        )
        token, ends_at = attempt.token, utc(attempt.ends_at)
    context = chromium.new_context(base_url=base, **options)
    context.add_cookies([{"name": "browser", "value": BROWSER, "url": base}])
    page = context.new_page()
    return page, token, ends_at


def test_the_end_shows_in_the_students_time_zone_with_a_countdown(chromium, timed, quiz):
    page, token, ends_at = attempt_page(
        chromium, timed, quiz, locale="en-GB", timezone_id="Asia/Kolkata"
    )
    page.goto(f"/attempts/{token}/questions/1")
    local = ends_at.astimezone(ZoneInfo("Asia/Kolkata"))
    # Said in the browser's zone, labelled as en-GB labels it, where the page said UTC.
    clock = page.locator(".attempt-clock time")
    expect(clock).to_have_text(f"{local:%H:%M} GMT+5:30")
    expect(clock).to_have_attribute("title", f"{ends_at:%H:%M} UTC")
    expect(page.get_by_role("timer")).to_have_text(re.compile(r"^(29:[0-5]\d|30:00) left$"))
    expect(page.get_by_role("button", name="Save and next")).to_be_visible()
    page.context.close()


def test_a_screen_reader_hears_the_time_left_at_marks_not_every_second(chromium, timed, quiz):
    page, token, _ = attempt_page(chromium, timed, quiz)
    page.clock.install()
    page.goto(f"/attempts/{token}/questions/1")
    status = page.locator(".attempt-clock [role=status]")
    expect(page.get_by_role("timer")).to_be_visible()
    left = int(page.locator("[data-seconds-left]").get_attribute("data-seconds-left"))
    page.clock.run_for(5_000)
    expect(status).to_have_text("")
    # Past the 15-minute mark: said once. Then past four marks at once: only the latest is said.
    page.clock.fast_forward((left - 5 - 899) * 1000)
    expect(status).to_have_text("15 minutes left.")
    page.clock.fast_forward((899 - 25) * 1000)
    expect(status).to_have_text("25 seconds left.")
    page.clock.fast_forward(30_000)
    expect(status).to_have_text("Time is up. Your saved answers count.")
    expect(page.get_by_role("timer")).to_have_text("Time is up")
    page.context.close()


def test_at_zero_the_answer_button_is_disabled_and_says_why(chromium, timed, quiz):
    """The server refuses answers once the time is up: the button stops offering to save one."""
    page, token, _ = attempt_page(chromium, timed, quiz)
    page.clock.install()
    page.goto(f"/attempts/{token}/questions/1")
    save = page.get_by_role("button", name="Save and next")
    expect(save).to_be_enabled()
    left = int(page.locator("[data-seconds-left]").get_attribute("data-seconds-left"))
    page.clock.fast_forward((left - 2) * 1000)
    expect(save).to_be_enabled()
    page.clock.fast_forward(3_000)
    expect(save).to_be_disabled()
    expect(page.get_by_text("Time is up, so no more answers can be saved.")).to_be_visible()
    page.context.close()


def test_an_answer_chosen_but_not_saved_at_zero_is_sent(chromium, timed, quiz):
    """At 0:00 an exam page sends the choice on it, within the server's grace, and lands on
    the summary with it saved."""
    page, token, _ = attempt_page(chromium, timed, quiz)
    page.clock.install()
    page.goto(f"/attempts/{token}/questions/1")
    page.get_by_role("radio", name=right_choice(quiz.questions[0]).text, exact=True).check()
    left = int(page.locator("[data-seconds-left]").get_attribute("data-seconds-left"))
    page.clock.fast_forward((left + 1) * 1000)
    expect(page.get_by_text("Your answers are saved: 1 of 8 answered.")).to_be_visible()
    page.context.close()


def test_an_answer_is_saved_without_its_verdict_and_the_student_moves_on(chromium, timed, quiz):
    page, token, _ = attempt_page(chromium, timed, quiz)
    page.goto(f"/attempts/{token}/questions/1")
    page.get_by_role("radio", name=right_choice(quiz.questions[0]).text, exact=True).check()
    page.get_by_role("button", name="Save and next").click()
    expect(page.get_by_role("heading", name="Question 2 of 8")).to_be_visible()
    expect(page.get_by_role("status").first).to_have_text("Your answer to question 1 is saved.")
    expect(page.get_by_text("Correct")).to_have_count(0)
    page.get_by_role("button", name="Save and finish…").click()
    expect(page.get_by_role("heading", name="Summary of your attempt")).to_be_visible()
    page.get_by_role("button", name="Finish attempt").first.click()
    expect(page.get_by_text("You scored 1 out of 8 (12.5%)")).to_be_visible()
    page.context.close()


def test_without_javascript_the_end_shows_in_utc(chromium, timed, quiz):
    page, token, ends_at = attempt_page(chromium, timed, quiz, java_script_enabled=False)
    page.goto(f"/attempts/{token}/questions/1")
    expect(page.locator(".attempt-clock p").first).to_have_text(
        f"This attempt ends at {ends_at.astimezone(UTC):%H:%M} UTC, 30 minutes after it started."
    )
    expect(page.get_by_role("timer")).to_be_hidden()
    page.context.close()


def test_the_clock_fits_a_phone(chromium, timed, quiz):
    page, token, _ = attempt_page(chromium, timed, quiz, viewport=PHONE)
    page.goto(f"/attempts/{token}/questions/1")
    expect(page.get_by_role("timer")).to_be_visible()
    fits(page)
    page.context.close()
