"""A launch inside the course page of an LMS on another site (the platform on localhost, the
tool on 127.0.0.1), in Chromium with third-party cookies blocked, as a student may set it."""

import json

import pytest
import requests
from playwright.sync_api import expect
from test_lti import STUDENT, TEACHER, PlatformSite, launch, tool_for

from app.extensions import db
from app.models import Answer, Assignment, Attempt
from app.served import current_bank

from conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP
from helpers import SLUG

BLOCK_THIRD_PARTY_COOKIES = {"profile": {"cookie_controls_mode": 1}}
"""Chromium's preference behind "Block third-party cookies" in its settings."""
PROBE = "document.cookie = 'probe=1; SameSite=None; Secure'; document.cookie"
"""Store a cookie meant for cross-site use, and read back what the page may see."""

FRAME = """url => new Promise(loaded => {
    const frame = document.createElement("iframe");
    frame.id = "elsewhere";
    frame.src = url;
    frame.onload = loaded;
    document.body.append(frame);
})"""
"""Frame `url` in the course page, as a platform could; resolves once the frame has loaded."""
BLOCKED = "chrome-error://chromewebdata/"
"""Where Chromium's frame ends up when the page refuses to be framed."""
ONE_PROCESS = "--disable-site-isolation-trials"
"""The tool's frame in the course page's process. With a process of its own, Playwright lost the
frame when the launch swapped processes under it: 3 of 5 runs beside two busy cores hung past
every timeout. Cookies and storage, which these tests are about, are the same in one process."""


@pytest.fixture
def course(tmp_path):
    """The tool under gunicorn and a platform on localhost that registered it, with the
    course's instructor having opened the activity once, so that its class exists."""
    site = PlatformSite(host="localhost")
    site.people[STUDENT.sub] = STUDENT
    site.people[TEACHER.sub] = TEACHER
    try:
        with tool_for(tmp_path, site) as world:
            assert launch(world.platform, requests.Session(), TEACHER).response.status_code == 303
            yield world
    finally:
        site.close()


@pytest.fixture
def cookieless(chromium, tmp_path):
    """A Chromium profile with third-party cookies blocked in its settings, as a student's."""
    profile = tmp_path / "profile"
    (profile / "Default").mkdir(parents=True)
    (profile / "Default" / "Preferences").write_text(json.dumps(BLOCK_THIRD_PARTY_COOKIES))
    context = chromium.browser_type.launch_persistent_context(
        profile, executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, ONE_PROCESS], viewport=DESKTOP
    )
    yield context
    context.close()


def test_a_launch_in_the_course_page_answers_in_the_frame_on_partitioned_cookies(
    course, cookieless
):
    """A course page without client-side storage: the login keeps its state in a partitioned
    cookie, the one kind Chromium keeps in a cross-site frame with third-party cookies blocked,
    and the student answers inside the frame under their LMS name; the tool's other pages
    refuse the frame."""
    page = cookieless.new_page()
    page.goto(f"{course.platform.issuer}/course?member={STUDENT.sub}")
    activity = page.frame_locator("#activity")
    expect(activity.get_by_role("heading", name="Question 1 of 8")).to_be_visible()
    framed = next(frame for frame in page.frames if frame.url.startswith(course.tool))
    # Third-party cookies are blocked: the framed tool cannot keep an unpartitioned cookie.
    assert "probe=1" not in framed.evaluate(PROBE).split("; ")
    kept = {cookie["name"]: cookie for cookie in cookieless.cookies(course.tool)}
    assert kept["session"]["sameSite"] == "None" and kept["session"]["secure"]

    activity.get_by_role("radio").first.check()
    activity.get_by_role("button", name="Check answer").click()
    expect(activity.get_by_role("status")).to_be_visible()
    expect(activity.get_by_text("Question 1 of 8")).to_be_visible()
    assert [open.url for open in cookieless.pages if open.url != "about:blank"] == [page.url]
    with course.app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        assert attempt.student_name == STUDENT.name
        assert db.session.scalar(db.select(db.func.count()).select_from(Answer)) == 1

    # A page that is neither an LTI nor a student page keeps frame-ancestors 'none', even for
    # the platform: Chromium shows its error page in the frame instead.
    with page.expect_response(f"{course.tool}/login") as login:
        page.evaluate(FRAME, f"{course.tool}/login")
    assert "frame-ancestors 'none'" in login.value.header_value("Content-Security-Policy")
    assert page.locator("#elsewhere").element_handle().content_frame().url == BLOCKED


@pytest.mark.parametrize("storage", [False, True], ids=["partitioned cookie", "storage"])
def test_select_content_adds_the_quiz_without_leaving_the_course(course, cookieless, storage):
    """Moodle's "Select content": the deep linking launch opens in the activity form's dialog
    frame, the instructor chooses the quiz there, and the return page hands the chosen item to
    the form through its parent frame, with no window of its own."""
    page = cookieless.new_page()
    page.goto(f"{course.platform.issuer}/select?member={TEACHER.sub}" + "&storage=1" * storage)
    dialog = page.frame_locator("#activity")
    expect(dialog.get_by_role("heading", name="Choose a quiz for this activity")).to_be_visible()
    with course.app.app_context():
        title = current_bank().quizzes[SLUG].title
    dialog.get_by_label("Quiz", exact=True).select_option(SLUG)
    dialog.get_by_role("button", name="Add to the course").click()
    expect(page.locator("#chosen")).to_have_text(title)
    assert [open.url for open in cookieless.pages if open.url != "about:blank"] == [page.url]
    [[item]] = course.platform.site.deep_links
    assert item["custom"] == {"quiz": SLUG}
    with course.app.app_context():
        assert db.session.scalars(db.select(Assignment.quiz_slug)).all() == [SLUG]


def test_a_launch_keeps_its_state_in_the_platforms_frame(course, cookieless):
    """A course page offering LTI client-side storage: the login puts its state there, the
    launch reads it back, and the student answers inside the frame on partitioned cookies."""
    page = cookieless.new_page()
    page.goto(f"{course.platform.issuer}/course?member={STUDENT.sub}&storage=1")
    activity = page.frame_locator("#activity")
    # Login, two storage writes, the launch and a read, each a round trip through the platform's
    # page: past the 5 s default twice in full runs beside the other tests on two cores.
    expect(activity.get_by_role("heading", name="Question 1 of 8")).to_be_visible(timeout=20_000)
    assert page.evaluate("window.ltiMessages") == ["lti.put_data", "lti.put_data", "lti.get_data"]
    framed = next(frame for frame in page.frames if frame.url.startswith(course.tool))
    assert "probe=1" not in framed.evaluate(PROBE).split("; ")
    assert not any(c["name"].startswith("lti1p3-state") for c in cookieless.cookies())

    activity.get_by_role("radio").first.check()
    activity.get_by_role("button", name="Check answer").click()
    expect(activity.get_by_role("status")).to_be_visible()
    expect(activity.get_by_text("Question 1 of 8")).to_be_visible()
    with course.app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        assert attempt.student_name == STUDENT.name
        assert db.session.scalar(db.select(db.func.count()).select_from(Answer)) == 1
