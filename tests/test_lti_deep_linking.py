"""Deep Linking 2.0 against the test platform: an instructor's deep linking launch chooses a
quiz and its assignment settings, and the platform receives a signed LtiDeepLinkingResponse."""

import html
import re

import pytest
import requests
import test_lti
from test_lti import STUDENT, TEACHER, launch, page_text

from app.extensions import db
from app.models import Assignment
from app.served import current_bank

from helpers import SLUG, csrf_token

pytestmark = pytest.mark.any_database
# The test platform and the tool under gunicorn, as the launch tests use them.
site, tool, bare_tool, world = test_lti.site, test_lti.tool, test_lti.bare_tool, test_lti.world

SETTINGS = {
    "quiz": SLUG,
    "time_zone": "UTC",
    "attempts_allowed": "2",
    "grade_from": "best",
    "feedback": "after-attempt",
}


def choose(world, browser, **changes):
    """Open the deep linking page a launch led to and send the choice."""
    page = browser.get(f"{world.tool}/lti/deep-link")
    assert page.status_code == 200
    fields = {"csrf_token": csrf_token(page.text), **SETTINGS, **changes}
    return browser.post(f"{world.tool}/lti/deep-link", data=fields, allow_redirects=False)


def test_deep_linking_answers_with_one_resource_link_for_the_chosen_quiz(world):
    """The platform's library accepts the signed answer: one ltiResourceLink titled as the
    quiz, opening /lti/launch with the quiz's slug, its line item out of the quiz's questions;
    the class assigns the quiz with the chosen settings."""
    browser = requests.Session()
    sent = launch(world.platform, browser, TEACHER, deep_link=True).response
    assert sent.status_code == 303 and sent.headers["Location"] == "/lti/deep-link"
    form = browser.get(f"{world.tool}/lti/deep-link")
    assert "Choose a quiz for this activity" in page_text(form)
    assert "Grade from" in page_text(form)

    answer = choose(world, browser)
    assert answer.status_code == 200
    return_url = f"{world.platform.issuer}/deep-link-return"
    assert f'action="{return_url}"' in answer.text
    assert (
        f"form-action 'self' {world.platform.issuer}" in answer.headers["Content-Security-Policy"]
    )
    token = html.unescape(re.search(r'name="JWT" value="([^"]+)"', answer.text).group(1))
    [item] = world.platform.config().validate_deeplinking_resp({"JWT": token})
    with world.app.app_context():
        quiz = current_bank().quizzes[SLUG]
        assignment = db.session.scalars(db.select(Assignment)).one()
        assert (assignment.quiz_slug, assignment.attempts_allowed) == (SLUG, 2)
        assert (assignment.grade_from, assignment.feedback) == ("best", "after-attempt")
    assert item["type"] == "ltiResourceLink"
    assert item["title"] == quiz.title
    assert item["url"] == f"{world.tool}/lti/launch"
    assert item["custom"] == {"quiz": SLUG}
    assert item["lineItem"]["scoreMaximum"] == len(quiz.questions)

    # Answered once: sending the page again finds no request to answer.
    fields = {"csrf_token": csrf_token(form.text), **SETTINGS}
    again = browser.post(f"{world.tool}/lti/deep-link", data=fields, allow_redirects=False)
    assert again.status_code == 404
    with world.app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(Assignment)) == 1


def test_choosing_an_assigned_quiz_again_changes_its_settings(world):
    """Linking a quiz the class assigns already edits that assignment rather than refusing."""
    first = requests.Session()
    launch(world.platform, first, TEACHER, deep_link=True)
    choose(world, first)
    second = requests.Session()
    launch(world.platform, second, TEACHER, deep_link=True)
    assert choose(world, second, attempts_allowed="5").status_code == 200
    with world.app.app_context():
        assert db.session.scalars(db.select(Assignment.attempts_allowed)).one() == 5


def test_bad_settings_are_refused_next_to_the_field_and_nothing_is_stored(world):
    browser = requests.Session()
    launch(world.platform, browser, TEACHER, deep_link=True)
    refused = choose(world, browser, attempts_allowed="0")
    assert refused.status_code == 400
    assert "Nothing was saved" in page_text(refused)
    assert 'name="JWT"' not in refused.text
    with world.app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(Assignment)) == 0


def test_a_learner_cannot_answer_a_deep_linking_request(world):
    launch(world.platform, requests.Session(), TEACHER)
    refused = launch(world.platform, requests.Session(), STUDENT, deep_link=True).response
    assert refused.status_code == 403
    assert "Only the course's instructors choose" in page_text(refused)


def test_the_deep_linking_page_needs_a_request(world):
    """Logged in but with no deep linking request in this browser: a 404 that says so."""
    browser = requests.Session()
    launch(world.platform, browser, TEACHER)
    missing = browser.get(f"{world.tool}/lti/deep-link")
    assert missing.status_code == 404
    assert "no deep linking request" in page_text(missing)


def test_a_forged_choice_is_refused_and_stores_nothing(world):
    """The choice is an instructor's form like any other: without this session's token it is
    "form expired" and nothing is assigned; with it the same fields go through."""
    browser = requests.Session()
    launch(world.platform, browser, TEACHER, deep_link=True)
    stranger = requests.Session()
    theirs = csrf_token(stranger.get(f"{world.tool}/login").text)
    for token in (None, "forged", theirs):
        fields = {**SETTINGS, **({"csrf_token": token} if token else {})}
        forged = browser.post(f"{world.tool}/lti/deep-link", data=fields, allow_redirects=False)
        assert forged.status_code == 400 and "This form has expired" in page_text(forged)
    with world.app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(Assignment)) == 0
    assert choose(world, browser).status_code == 200
