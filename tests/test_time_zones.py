"""Every time on a page in one zone, labelled: the instructor's chosen zone, else the browser's
(told by static/local-time.js in a cookie), else the class instructor's, else UTC."""

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import factories
import pytest

from app import zones
from app.extensions import db
from app.models import Class, Instructor
from app.served import current_bank

from helpers import SLUG, Student, form_token, login, make_app, text

pytestmark = pytest.mark.postgres

CODE = "ABCDEF"
CLOSES = datetime(2099, 1, 5, 16, 0, tzinfo=UTC)  # a Monday: 17:00 in Berlin, 21:30 in Kolkata
TIMES = re.compile(r'<time datetime="[^"]+" data-zone="([^"]+)"[^>]*>([^<]+)</time>')


@pytest.fixture
def app(tmp_path):
    made = make_app(tmp_path)
    yield made
    with made.app_context():
        db.engine.dispose()


def a_class(app, zone: str | None) -> int:
    """Physics 101, assigning the quiz until CLOSES, by an instructor whose zone is `zone`, as
    an older release kept it, or who has chosen none yet."""
    with app.app_context():
        teacher = factories.instructor()
        teacher.time_zone = zone or "UTC"
        scope = factories.class_(teacher, join_code=CODE)
        factories.assignment(scope, current_bank().quizzes[SLUG], closes_at=CLOSES)
        return scope.id


def times(page: str) -> list[tuple[str, str]]:
    """Each time a page says, as (the zone it is in, what it reads)."""
    return TIMES.findall(page)


def browser(app, zone: str | None = None):
    """A browser whose script has told the server its zone, encoded as the script writes it."""
    client = app.test_client()
    if zone is not None:
        client.set_cookie("zone", quote(zone, safe=""))
    return client


def test_a_student_reads_the_close_in_their_browsers_zone_and_no_other(app):
    """The cookie the page's script set names the zone; the instructor's is not said too."""
    a_class(app, "Europe/Berlin")
    page = text(browser(app, "Asia/Kolkata").get(f"/quizzes/{SLUG}?code={CODE}"))
    assert times(page) == [("Asia/Kolkata", "Mon 5 Jan 2099, 21:30 IST")]


@pytest.mark.parametrize("told", [None, "Mars/Olympus_Mons", '"><script>', "US/Eastern"])
def test_without_a_zone_it_knows_a_student_reads_the_class_instructors(app, told):
    """No cookie, or one naming no zone of the list, is the class's zone, not UTC."""
    a_class(app, "Europe/Berlin")
    page = text(browser(app, told).get(f"/quizzes/{SLUG}?code={CODE}"))
    assert times(page) == [("Europe/Berlin", "Mon 5 Jan 2099, 17:00 CET")]


def test_with_no_zone_anywhere_times_are_utc_and_say_so(app):
    a_class(app, None)
    page = text(browser(app).get(f"/quizzes/{SLUG}?code={CODE}"))
    assert times(page) == [("UTC", "Mon 5 Jan 2099, 16:00 UTC")]


def test_an_attempts_pages_say_its_class_zone(app):
    """A timed attempt's end, on its question page, in the class instructor's zone."""
    with app.app_context():
        teacher = factories.instructor()
        teacher.time_zone = "Asia/Tokyo"
        scope = factories.class_(teacher, join_code=CODE)
        factories.assignment(scope, current_bank().quizzes[SLUG], time_limit_minutes=30)
    student = Student(browser(app))
    assert student.start(name="Ada", class_code=CODE).status_code == 303
    [(zone, shown)] = times(text(student.client.get(student.question_url(1))))
    assert zone == "Asia/Tokyo" and shown.endswith(" JST")


def test_an_instructor_who_chose_no_zone_sees_their_browsers_everywhere(app):
    """The class page's assignment dates and start times in one zone, the browser's; the form
    starts on it, marked for the script to correct on a browser that has not told it yet."""
    class_id = a_class(app, None)
    Student(app.test_client()).start(name="Ada", class_code=CODE)
    teacher = browser(app, "Asia/Kolkata")
    login(teacher, "teacher", "correct horse")
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    said = times(page)
    assert len(said) >= 2 and {zone for zone, _ in said} == {"Asia/Kolkata"}
    assert ("Asia/Kolkata", "Mon 5 Jan 2099, 21:30 IST") in said
    assert all(shown.endswith(" IST") for _, shown in said)
    assert "Times are in <span data-zone-name>Asia/Kolkata</span>." in page
    assert "data-zone-chosen" not in page
    form = text(teacher.get(f"/teach/classes/{class_id}/assignments/new"))
    assert '<option selected value="Asia/Kolkata">Kolkata</option>' in form
    assert "data-browser-default" in form
    # An edit's dates are filled in on the page's zone: the script must not change it under them.
    with app.app_context():
        assignment_id = db.session.get(Class, class_id).assignments[0].id
    edit = text(teacher.get(f"/teach/classes/{class_id}/assignments/{assignment_id}"))
    assert 'value="2099-01-05T21:30"' in edit and "data-browser-default" not in edit


def test_a_chosen_zone_rules_the_instructors_pages_whatever_the_browser(app):
    """Saving an assignment in Berlin keeps Berlin: a Tokyo browser changes no time."""
    class_id = a_class(app, None)
    teacher = browser(app, "Asia/Tokyo")
    login(teacher, "teacher", "correct horse")
    with app.app_context():
        assignment_id = db.session.get(Class, class_id).assignments[0].id
    url = f"/teach/classes/{class_id}/assignments/{assignment_id}"
    saved = teacher.post(url, data={
        "csrf_token": form_token(teacher, url), "time_zone": "Europe/Berlin",
        "closes": "2099-01-05T17:00", "grade_from": "first", "feedback": "each-answer",
    })  # fmt: skip
    assert saved.status_code == 303
    with app.app_context():
        assert db.session.scalars(db.select(Instructor.time_zone)).one() == "Europe/Berlin"
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert times(page) == [("Europe/Berlin", "Mon 5 Jan 2099, 17:00 CET")]
    assert '<html lang="en" data-zone-chosen>' in page
    form = text(teacher.get(url))
    assert '<option selected value="Europe/Berlin">Berlin</option>' in form
    assert "data-browser-default" not in form


def test_summer_time_is_labelled_as_such(app):
    """The label is the zone's own for that day: CEST in July, CET in January."""
    with app.app_context():
        teacher = factories.instructor()
        teacher.time_zone = "Europe/Berlin"
        scope = factories.class_(teacher, join_code=CODE)
        july = datetime(2099, 7, 6, 16, 0, tzinfo=UTC)
        factories.assignment(scope, current_bank().quizzes[SLUG], closes_at=july)
    page = text(browser(app).get(f"/quizzes/{SLUG}?code={CODE}"))
    assert times(page) == [("Europe/Berlin", "Mon 6 Jul 2099, 18:00 CEST")]


def test_this_years_dates_leave_the_year_out(app):
    soon = (datetime.now(UTC) + timedelta(days=2)).replace(hour=12, minute=0)
    if soon.year != datetime.now(UTC).year:
        soon -= timedelta(days=4)
    with app.app_context():
        scope = factories.class_(factories.instructor(), join_code=CODE)
        factories.assignment(scope, current_bank().quizzes[SLUG], closes_at=soon)
    page = text(browser(app).get(f"/quizzes/{SLUG}?code={CODE}"))
    assert times(page) == [("UTC", f"{soon:%a %-d %b}, 12:00 UTC")]


def test_zones_are_offered_by_area_and_place():
    """Each zone once, under its area, by the place people write: no raw IANA names."""
    groups = dict(zones.zone_groups())
    assert ("America/Argentina/Buenos_Aires", "Argentina, Buenos Aires") in groups["America"]
    assert ("Europe/Berlin", "Berlin") in groups["Europe"]
    listed = [zone for places in groups.values() for zone, _ in places]
    assert sorted(listed) == sorted(zones.time_zones()[1:]) and len(set(listed)) == len(listed)
    assert all("_" not in place for places in groups.values() for _, place in places)
