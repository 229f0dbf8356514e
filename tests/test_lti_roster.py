"""Names and Role Provisioning: "Load roster from the LMS" on a course's class page puts the
course's learners on the roster, keyed by the platform's sub, from the test platform's
membership service."""

import re

import pytest
import requests
import test_lti
from test_lti import INSTRUCTOR, LEARNER, STUDENT, TEACHER, launch, page_text

from app.extensions import db
from app.lti.models import LtiLearner, LtiUser
from app.lti.roster import MOST_PAGES, learners
from app.models import RosterStudent

from helpers import csrf_token

pytestmark = pytest.mark.postgres
# The test platform and the tool under gunicorn, as the launch tests use them.
site, tool, bare_tool, world = test_lti.site, test_lti.tool, test_lti.bare_tool, test_lti.world

MEMBERS = [
    {"user_id": TEACHER.sub, "name": TEACHER.name, "roles": INSTRUCTOR, "status": "Active"},
    {"user_id": STUDENT.sub, "name": STUDENT.name, "roles": LEARNER, "status": "Active"},
    {"user_id": "never-7", "given_name": "Alan", "family_name": "Turing", "roles": LEARNER},
    {"user_id": "gone-9", "name": "Left Early", "roles": LEARNER, "status": "Inactive"},
]


def load(world, teacher, class_page):
    """Press "Load roster from the LMS" on the class page."""
    page = teacher.get(class_page)
    assert "Load roster from the LMS" in page_text(page)
    action = re.search(r'action="([^"]*/load-roster)"', page.text).group(1)
    return teacher.post(world.tool + action, data={"csrf_token": csrf_token(page.text)})


def roster(world) -> dict[str, str]:
    with world.app.app_context():
        rows = db.session.execute(
            db.select(LtiUser.sub, RosterStudent.name)
            .join(LtiLearner, LtiLearner.user_id == LtiUser.id)
            .join(RosterStudent, RosterStudent.id == LtiLearner.roster_student_id)
        ).all()
    return dict(rows)


def test_loading_the_roster_lists_learners_who_never_launched(world):
    """Active learners join the roster under the platform's names; instructors and inactive
    members do not; the gradebook says "Not started" for them; loading again adds nobody, and
    a learner's later launch finds their place on the roster."""
    world.platform.site.members = MEMBERS
    teacher = requests.Session()
    class_page = world.tool + launch(world.platform, teacher, TEACHER).response.headers["Location"]
    loaded = load(world, teacher, class_page)
    assert "Loaded 2 learners from Test platform: 2 new on the roster." in page_text(loaded)
    assert roster(world) == {STUDENT.sub: STUDENT.name, "never-7": "Alan Turing"}
    assert teacher.get(class_page).text.count(">Not started<") == 2

    assert "0 new on the roster" in page_text(load(world, teacher, class_page))
    launch(world.platform, requests.Session(), STUDENT)
    with world.app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(RosterStudent)) == 2


def test_a_platform_that_refuses_changes_nothing(world):
    """An error from the membership service is said on the class page; nothing is stored."""
    world.platform.site.members = MEMBERS
    world.platform.site.members_status = 500
    teacher = requests.Session()
    class_page = world.tool + launch(world.platform, teacher, TEACHER).response.headers["Location"]
    refused = load(world, teacher, class_page)
    assert "did not hand over the member list, so nothing changed" in page_text(refused)
    assert roster(world) == {}


def test_a_platform_paging_for_ever_is_read_up_to_a_limit(world):
    """A membership container that always names a next page is read MOST_PAGES times, then
    the learners found so far are loaded."""
    world.platform.site.members = MEMBERS
    world.platform.site.endless_members = True
    teacher = requests.Session()
    class_page = world.tool + launch(world.platform, teacher, TEACHER).response.headers["Location"]
    loaded = load(world, teacher, class_page)
    assert "2 new on the roster" in page_text(loaded)
    assert world.platform.site.member_pages == MOST_PAGES


def test_only_managers_may_load_the_roster(world):
    """A teaching assistant (view) sees no button and is refused the POST."""
    launch(world.platform, requests.Session(), TEACHER)
    assistant = requests.Session()
    who = test_lti.Person("ta-3", "Barbara", test_lti.TEACHING_ASSISTANT)
    class_page = world.tool + launch(world.platform, assistant, who).response.headers["Location"]
    page = assistant.get(class_page)
    assert "Load roster from the LMS" not in page_text(page)
    class_id = class_page.rsplit("/", 1)[1]
    refused = assistant.post(f"{world.tool}/lti/classes/{class_id}/load-roster",
                             data={"csrf_token": csrf_token(page.text)})  # fmt: skip
    assert refused.status_code == 403


def test_learners_are_the_active_members_with_a_learning_role():
    assert learners(MEMBERS) == [(STUDENT.sub, STUDENT.name), ("never-7", "Alan Turing")]


def test_a_forged_load_is_refused_and_changes_nothing(world):
    """Without this session's token the load is "form expired" and the roster stays empty."""
    world.platform.site.members = MEMBERS
    teacher = requests.Session()
    class_page = world.tool + launch(world.platform, teacher, TEACHER).response.headers["Location"]
    class_id = class_page.rsplit("/", 1)[1]
    theirs = csrf_token(requests.get(f"{world.tool}/login").text)
    for fields in ({}, {"csrf_token": "forged"}, {"csrf_token": theirs}):
        forged = teacher.post(f"{world.tool}/lti/classes/{class_id}/load-roster", data=fields)
        assert forged.status_code == 400 and "This form has expired" in page_text(forged)
    assert roster(world) == {}
    assert "2 new on the roster" in page_text(load(world, teacher, class_page))
