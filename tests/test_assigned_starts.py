"""Students under assignments: which quizzes a class offers, when they may start, and how many
attempts they get, held by the database however many starts race."""

import secrets
import threading
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import factories
import pytest

from app.extensions import db
from app.models import Assignment, Attempt, Class, Instructor
from app.served import current_bank

from helpers import SLUG, Student, bank_with_copies, make_app, text

pytestmark = pytest.mark.postgres

SECOND, THIRD = "second-quiz", "third-quiz"
CODE = "ABCDEF"


@pytest.fixture
def app(tmp_path):
    made = make_app(tmp_path, QUESTIONS_PATH=bank_with_copies(tmp_path, SECOND, THIRD))
    yield made
    with made.app_context():
        db.engine.dispose()


@pytest.fixture
def class_id(app):
    with app.app_context():
        teacher = factories.instructor()
        teacher.time_zone = "Europe/Berlin"
        return factories.class_(teacher, join_code=CODE).id


def assign(app, class_id, slug=SLUG, **settings) -> int:
    with app.app_context():
        scope = db.session.get(Class, class_id)
        return factories.assignment(scope, current_bank().quizzes[slug], **settings).id


def attempts(app) -> list[Attempt]:
    with app.app_context():
        found = db.session.scalars(db.select(Attempt).order_by(Attempt.id)).all()
        db.session.expunge_all()
        return found


def student(app) -> Student:
    return Student(app.test_client())


def test_a_class_without_assignments_offers_every_quiz(app, class_id):
    """As before assignments: the join link lists the whole bank."""
    page = text(student(app).client.get(f"/join/{CODE}"))
    for title in ("Gradient Checkpointing", "Second Quiz", "Third Quiz"):
        assert title in page


def test_one_assigned_quiz_is_where_the_join_link_leads(app, class_id):
    """With one quiz assigned, the join link goes straight to it, class code filled in."""
    assign(app, class_id, SECOND)
    response = student(app).client.get(f"/join/{CODE}")
    assert response.status_code == 302
    assert response.location == f"/quizzes/{SECOND}?code={CODE}"


def test_the_join_link_lists_only_assigned_quizzes(app, class_id):
    """Two assigned quizzes of three: those two, in the bank's order, and not the third."""
    assign(app, class_id, THIRD)
    assign(app, class_id, SLUG)
    page = text(student(app).client.get(f"/join/{CODE}"))
    assert "Gradient Checkpointing" in page and "Third Quiz" in page
    assert "Second Quiz" not in page
    assert page.index("Gradient Checkpointing") < page.index("Third Quiz")


def test_a_quiz_the_class_does_not_set_is_refused_by_code(app, class_id):
    """Typing the class code on another quiz's page: a message on the code, nothing stored."""
    assign(app, class_id, SECOND)
    response = student(app).start(name="Ada", slug=THIRD, class_code=CODE)
    assert response.status_code == 400
    assert (
        '<p class="error" id="class_code-error">Physics 101 does not set this quiz. Open its '
        "join link to see the quizzes it sets." in text(response)
    )
    assert attempts(app) == []
    # Without a class the quiz is open to anyone, as before.
    assert student(app).start(name="Ada", slug=THIRD).status_code == 303


def test_a_link_to_a_quiz_the_class_does_not_set_points_to_its_quizzes(app, class_id):
    """Following an old link with the class code: a page naming the quizzes the class sets."""
    assign(app, class_id, SECOND)
    page = text(student(app).client.get(f"/quizzes/{THIRD}?code={CODE}"))
    assert "Physics 101 does not set this quiz" in page
    assert f'href="/quizzes/{SECOND}?code={CODE}">Second Quiz</a>' in page


def test_before_opens_the_page_says_when_it_opens(app, class_id):
    """A date on the class instructor's clocks, labelled, and in no other zone; no start."""
    opens = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(days=3)
    assign(app, class_id, opens_at=opens)
    visitor = student(app)
    page = visitor.client.get(f"/quizzes/{SLUG}?code={CODE}")
    assert page.status_code == 200
    words = text(page)
    assert "Gradient Checkpointing Quiz is not open yet" in words
    local = opens.astimezone(ZoneInfo("Europe/Berlin"))
    assert f'data-zone="Europe/Berlin">{local:%a %-d %b}' in words
    assert f"{local:%H:%M} {local.tzname()}</time>" in words
    assert " UTC</time>" not in words
    refused = visitor.start(name="Ada", class_code=CODE)
    assert refused.status_code == 403
    assert "is not open yet" in text(refused)
    assert attempts(app) == []


def test_after_closes_the_page_says_it_closed(app, class_id):
    """From the closing moment on, starting is refused with a page that says so."""
    closed = datetime.now(UTC) - timedelta(minutes=1)
    assign(app, class_id, opens_at=closed - timedelta(days=1), closes_at=closed)
    refused = student(app).start(name="Ada", class_code=CODE)
    assert refused.status_code == 403
    assert "Gradient Checkpointing Quiz has closed" in text(refused)
    assert "No new attempts can start" in text(refused)
    assert attempts(app) == []


def test_an_open_assignment_starts_attempts_under_its_rules(app, class_id):
    """Inside the window the start works, the attempt knows its assignment and its end."""
    now = datetime.now(UTC)
    assignment_id = assign(
        app, class_id, opens_at=now - timedelta(hours=1), closes_at=now + timedelta(hours=1),
        time_limit_minutes=30, attempts_allowed=2,
    )  # fmt: skip
    assert student(app).start(name="Ada", class_code=CODE).status_code == 303
    [made] = attempts(app)
    assert (made.assignment_id, made.seat) == (assignment_id, 1)
    assert made.ends_at - made.started_at == timedelta(minutes=30)


def test_attempts_allowed_counts_one_student_however_the_name_is_typed(app, class_id):
    """Two attempts allowed: "Ada" and " ada " share them; a third is refused; Grace has her own."""
    assign(app, class_id, attempts_allowed=2)
    assert student(app).start(name="Ada", class_code=CODE).status_code == 303
    assert student(app).start(name=" ada ", class_code=CODE).status_code == 303
    third = student(app).start(name="ADA", class_code=CODE)
    assert third.status_code == 403
    assert "You have used all 2 attempts that Physics 101 allows" in text(third)
    assert student(app).start(name="Grace", class_code=CODE).status_code == 303
    assert [a.seat for a in attempts(app)] == [1, 2, 1]


def test_unlimited_attempts_take_no_seat(app, class_id):
    """An assignment without a limit lets students start as often as they like."""
    assign(app, class_id)
    for _ in range(3):
        assert student(app).start(name="Ada", class_code=CODE).status_code == 303
    assert [a.seat for a in attempts(app)] == [None, None, None]


def test_attempts_from_before_a_limit_count_against_it(app, class_id):
    """Two attempts while unlimited, then a limit of 3: one more start, then no more."""
    assignment_id = assign(app, class_id)
    for _ in range(2):
        assert student(app).start(name="Ada", class_code=CODE).status_code == 303
    with app.app_context():
        db.session.get(Assignment, assignment_id).attempts_allowed = 3
        db.session.commit()
    assert student(app).start(name="Ada", class_code=CODE).status_code == 303
    assert student(app).start(name="Ada", class_code=CODE).status_code == 403
    assert len(attempts(app)) == 3


def test_results_say_how_many_attempts_are_left_and_retake_goes_at_the_last(app, class_id):
    """1 of 2 left: "Retake quiz"; none left: no button, and the page says all are used."""
    assign(app, class_id, attempts_allowed=2)
    ada = student(app)
    assert ada.start(name="Ada", class_code=CODE).status_code == 303
    first = text(ada.client.get(ada.results_url))
    assert "Retake quiz" in first and "1 of 2 attempts left" in first
    retaken = ada.post(f"/attempts/{ada.token}/retake")
    assert retaken.status_code == 303
    ada.token = retaken.location.split("/")[2]
    last = text(ada.client.get(ada.results_url))
    assert "Retake quiz" not in last
    assert "You have used all 2 attempts, so the quiz cannot be retaken." in last
    refused = ada.post(f"/attempts/{ada.token}/retake")
    assert refused.status_code == 403
    assert "You have used all 2 attempts" in text(refused)
    assert len(attempts(app)) == 2


def test_retake_is_refused_once_the_quiz_closes(app, class_id):
    """An attempt started while open cannot be retaken after the close; the page says so."""
    assignment_id = assign(app, class_id)
    ada = student(app)
    assert ada.start(name="Ada", class_code=CODE).status_code == 303
    with app.app_context():
        db.session.get(Assignment, assignment_id).closes_at = datetime.now(UTC)
        db.session.commit()
    assert "This quiz has closed, so it cannot be retaken." in text(ada.client.get(ada.results_url))
    refused = ada.post(f"/attempts/{ada.token}/retake")
    assert refused.status_code == 403 and "has closed" in text(refused)
    assert len(attempts(app)) == 1


def test_retake_is_refused_once_the_class_sets_other_quizzes(app, class_id):
    """A quiz taken before the class assigned another cannot be retaken in the class."""
    ada = student(app)
    assert ada.start(name="Ada", class_code=CODE).status_code == 303
    assign(app, class_id, SECOND)
    page = text(ada.client.get(ada.results_url))
    assert "Physics 101 does not set this quiz now, so it cannot be retaken." in page
    assert ada.post(f"/attempts/{ada.token}/retake").status_code == 403
    assert len(attempts(app)) == 1


def test_ten_concurrent_starts_create_exactly_the_allowed_attempts(app, class_id):
    """Ten browsers start as the same student at once, three attempts allowed: three stored."""
    assign(app, class_id, attempts_allowed=3)
    tabs = [student(app) for _ in range(10)]
    for tab in tabs:
        tab.csrf  # noqa: B018 - fetch each form's token before the race
    barrier = threading.Barrier(10)
    statuses = []

    def start(tab):
        barrier.wait()
        statuses.append(tab.start(name="Ada", class_code=CODE).status_code)

    race(start, tabs)
    assert sorted(statuses) == [303] * 3 + [403] * 7
    assert sorted(a.seat for a in attempts(app)) == [1, 2, 3]


def test_ten_concurrent_retakes_create_exactly_the_allowed_attempts(app, class_id):
    """Ten retakes of one attempt released together, four attempts allowed: four in all."""
    assignment_id = assign(app, class_id, attempts_allowed=4)
    browser = secrets.token_urlsafe(16)
    with app.app_context():
        first = factories.attempt(
            current_bank().quizzes[SLUG], "Ada", class_id=class_id, browser=browser,
            assignment=db.session.get(Assignment, assignment_id),
        )  # fmt: skip
        token = first.token
    ada = student(app)
    ada.client.set_cookie("browser", browser)
    csrf = ada.csrf
    cookie = ada.client.get_cookie("session").value
    barrier = threading.Barrier(10)
    statuses = []

    def retake(_):
        tab = app.test_client()
        tab.set_cookie("session", cookie)
        tab.set_cookie("browser", browser)
        barrier.wait()
        response = tab.post(f"/attempts/{token}/retake", data={"csrf_token": csrf})
        statuses.append(response.status_code)

    race(retake, range(10))
    assert sorted(statuses) == [303] * 3 + [403] * 7
    assert sorted(a.seat for a in attempts(app)) == [1, 2, 3, 4]


def race(work, items):
    threads = [threading.Thread(target=work, args=(item,)) for item in items]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_the_opening_is_said_in_the_class_instructors_zone(app, class_id):
    """The instructor's zone names the local time a student reads, whatever zone is stored."""
    with app.app_context():
        db.session.scalars(db.select(Instructor)).one().time_zone = "Asia/Tokyo"
        db.session.commit()
    opens = datetime(2099, 1, 5, 0, 0, tzinfo=UTC)
    assign(app, class_id, opens_at=opens)
    page = text(student(app).client.get(f"/quizzes/{SLUG}?code={CODE}"))
    assert 'data-zone="Asia/Tokyo">Mon 5 Jan 2099, 09:00 JST</time>' in page


def test_attempts_from_before_the_quiz_was_assigned_do_not_count(app, class_id):
    """Practice before the assignment is free: one attempt allowed still means one more."""
    assert student(app).start(name="Ada", class_code=CODE).status_code == 303
    assign(app, class_id, attempts_allowed=1)
    assert student(app).start(name="Ada", class_code=CODE).status_code == 303
    assert student(app).start(name="Ada", class_code=CODE).status_code == 403
    assert [a.seat for a in attempts(app)] == [None, 1]


def test_the_start_page_says_what_the_assignment_asks(app, class_id):
    """Before starting, a student reads the close, the time limit and the attempts allowed."""
    closes = datetime(2099, 1, 5, 16, 0, tzinfo=UTC)
    assign(app, class_id, closes_at=closes, time_limit_minutes=20, attempts_allowed=1)
    page = text(student(app).client.get(f"/join/{CODE}", follow_redirects=True))
    assert "Set by <strong>Physics 101</strong>: closes to new attempts <time" in page
    assert 'data-zone="Europe/Berlin">Mon 5 Jan 2099, 17:00 CET</time>;' in page
    assert "a time limit of 20 minutes from the start; 1 attempt allowed." in page
    assert 'name="name"' in page  # and the form to start is there


@pytest.mark.parametrize(
    ("feedback", "said"),
    [
        ("each-answer", "After each answer you see whether it was right"),
        ("after-attempt", "shows once you finish the attempt, not after each answer"),
        ("after-close", "shows once the quiz has closed and the last attempt's time is up (<time"),
    ],
)
def test_the_start_page_says_when_feedback_shows(app, class_id, feedback, said):
    """Held feedback is said before the start, not contradicted by the default's promise."""
    closes = datetime(2099, 1, 5, 16, 0, tzinfo=UTC)
    assign(app, class_id, closes_at=closes, feedback=feedback)
    page = text(student(app).client.get(f"/join/{CODE}", follow_redirects=True))
    rules = page.split('id="assignment-rules"')[1].split("</p>")[0]
    assert said in rules
    assert ("After each answer you see" in page) is (feedback == "each-answer")


def test_a_low_score_is_told_to_retake_only_when_a_retake_is_left(app, class_id):
    """ "Then retake the quiz" is no advice above "You have used your only attempt"."""
    for allowed, advised in [(2, True), (1, False)]:
        with app.app_context():
            db.session.execute(db.delete(Attempt))
            db.session.execute(db.delete(Assignment))
            db.session.commit()
        assign(app, class_id, attempts_allowed=allowed, feedback="after-attempt")
        taking = student(app)
        assert taking.start(name="Ada", class_code=CODE).status_code == 303
        assert taking.post(f"/attempts/{taking.token}/finish").status_code == 303
        page = text(taking.client.get(taking.results_url))
        assert "You scored <strong>0 out of 8</strong>" in page
        assert ("Then retake the quiz to see how much sticks." in page) is advised
        assert ("You have used your only attempt" in page) is not advised


def test_one_attempt_allowed_is_said_as_one(app, class_id):
    """With a single attempt the pages say "your only attempt", not "all 1 attempts"."""
    assign(app, class_id, attempts_allowed=1)
    ada = student(app)
    assert ada.start(name="Ada", class_code=CODE).status_code == 303
    page = text(ada.client.get(ada.results_url))
    assert "You have used your only attempt, so the quiz cannot be retaken." in page
    refused = text(student(app).start(name="Ada", class_code=CODE))
    assert "You have used the only attempt that Physics 101 allows" in refused
