"""Assigning quizzes to a class: the form, its checks, the list in words, edit, remove, release,
and the class page and exports grading as the assignment says."""

import csv
import io
import logging
import re
import threading
from datetime import UTC, datetime, timedelta

import factories
import pytest
from sqlalchemy.exc import IntegrityError

from app.auth import create_instructor
from app.extensions import db
from app.models import Assignment, Attempt, Class, Instructor
from app.question_types import right_choice
from app.served import current_bank

from helpers import (
    SLUG,
    Student,
    bank_with_copies,
    form_token,
    gradebook_rows,
    login,
    make_app,
    queries,
    text,
)

pytestmark = pytest.mark.postgres

SECOND, THIRD = "second-quiz", "third-quiz"


@pytest.fixture
def app(tmp_path):
    made = make_app(tmp_path, QUESTIONS_PATH=bank_with_copies(tmp_path, SECOND, THIRD))
    yield made
    with made.app_context():
        db.engine.dispose()


@pytest.fixture
def teacher(app):
    """A logged-in instructor's browser."""
    with app.app_context():
        create_instructor("teacher", "correct horse")
    client = app.test_client()
    assert login(client, "teacher", "correct horse").status_code == 303
    return client


@pytest.fixture
def class_id(app, teacher):
    with app.app_context():
        mine = db.session.scalars(db.select(Instructor)).one()
        return factories.class_(mine, join_code="ABCDEF").id


def assign(client, class_id, **fields):
    """Fill in and send the "Assign a quiz" form; returns the response."""
    url = f"/teach/classes/{class_id}/assignments/new"
    data = {"quiz": SLUG, "time_zone": "UTC", "grade_from": "first", "feedback": "each-answer"}
    data.update(fields, csrf_token=form_token(client, url))
    return client.post(url, data=data)


def stored(app) -> list[Assignment]:
    with app.app_context():
        found = db.session.scalars(db.select(Assignment).order_by(Assignment.id)).all()
        db.session.expunge_all()
        return found


def test_the_class_page_offers_the_form_and_the_form_has_every_field(teacher, class_id):
    """ "Assign a quiz" leads to a form with each setting, labelled, the bank's quizzes listed."""
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert "No quiz is assigned: the join link and class code offer every quiz" in page
    link = f'href="/teach/classes/{class_id}/assignments/new">Assign a quiz</a>'
    assert link in page
    form = text(teacher.get(f"/teach/classes/{class_id}/assignments/new"))
    for label in (
        '<label for="quiz">Quiz</label>',
        '<label for="opens">Opens</label>',
        '<label for="closes">Closes</label>',
        '<label for="time_zone">Time zone</label>',
        '<label for="time_limit">Time limit (minutes)</label>',
        '<label for="attempts_allowed">Attempts allowed</label>',
        "<legend>Grade from</legend>",
        "<legend>Feedback</legend>",
    ):
        assert label in form
    assert 'type="datetime-local"' in form and 'type="number"' in form
    for choice in ("First attempt", "Best attempt", "Latest attempt", "Average of attempts",
                   "After each answer", "After the attempt", "After the quiz closes",
                   "Second Quiz", "Europe/Berlin"):  # fmt: skip
        assert choice in form
    # As today unless the instructor says otherwise: feedback after each answer.
    assert re.search(
        r'checked id="feedback-0" name="feedback" type="radio" value="each-answer"', form
    )


def test_saving_lists_the_assignment_with_its_settings_in_words(app, teacher, class_id, caplog):
    """Dates typed on Berlin's clocks are stored in UTC and shown again on Berlin's clocks."""
    caplog.set_level(logging.WARNING)
    response = assign(
        teacher, class_id, quiz=SECOND, time_zone="Europe/Berlin",
        opens="2026-12-07T09:00", closes="2026-12-11T17:30", time_limit="30",
        attempts_allowed="1", grade_from="best", feedback="after-close",
    )  # fmt: skip
    assert response.status_code == 303
    assert response.location == f"/teach/classes/{class_id}?quiz={SECOND}"
    [saved] = stored(app)
    assert saved.quiz_slug == SECOND
    assert saved.opens_at.replace(tzinfo=UTC) == datetime(2026, 12, 7, 8, 0, tzinfo=UTC)
    assert saved.closes_at.replace(tzinfo=UTC) == datetime(2026, 12, 11, 16, 30, tzinfo=UTC)
    assert (saved.time_limit_minutes, saved.attempts_allowed) == (30, 1)
    assert (saved.grade_from, saved.feedback) == ("best", "after-close")
    assert f"assignment added: class {class_id}, quiz {SECOND}" in caplog.text
    with app.app_context():
        assert db.session.scalars(db.select(Instructor.time_zone)).one() == "Europe/Berlin"

    page = text(teacher.get(response.location))
    year = "" if datetime.now(UTC).year == 2026 else " 2026"
    assert f'data-zone="Europe/Berlin">Mon 7 Dec{year}, 09:00 CET</time>' in page
    assert f'data-zone="Europe/Berlin">Fri 11 Dec{year}, 17:30 CET</time>' in page
    for words in ("Second Quiz", "Time limit 30 minutes", "1 attempt allowed",
                  "Grade from: best attempt", "Feedback: after the quiz closes",
                  ">Edit<", ">Remove…<", ">Release feedback…<"):  # fmt: skip
        assert words in page
    # The next form starts in the zone the instructor chose last.
    again = text(teacher.get(f"/teach/classes/{class_id}/assignments/new"))
    assert '<optgroup label="Europe">' in again
    assert '<option selected value="Europe/Berlin">Berlin</option>' in again


def test_an_assignment_without_limits_says_so(app, teacher, class_id):
    """Empty fields mean no window, no time limit and unlimited attempts, in words."""
    assert assign(teacher, class_id).status_code == 303
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    for words in ("No opening date; no closing date", "No time limit", "Unlimited attempts",
                  "Grade from: first attempt", "Feedback: after each answer"):  # fmt: skip
        assert words in page
    assert "Release feedback" not in page  # nothing is held


BAD = [
    ({"opens": "2026-12-07T09:00", "closes": "2026-12-07T08:00"}, "closes",
     "Closes must be after Opens."),
    ({"opens": "2026-12-07T09:00", "closes": "2026-12-07T09:00"}, "closes",
     "Closes must be after Opens."),
    ({"time_limit": "0"}, "time_limit", "Enter a whole number of minutes from 1 to 1440"),
    ({"time_limit": "-5"}, "time_limit", "Enter a whole number of minutes from 1 to 1440"),
    ({"time_limit": "1441"}, "time_limit", "Enter a whole number of minutes from 1 to 1440"),
    ({"time_limit": "ten"}, "time_limit", "Enter a whole number of minutes, or leave it empty."),
    ({"attempts_allowed": "0"}, "attempts_allowed",
     "Enter a whole number of attempts from 1 to 100"),
    ({"attempts_allowed": "101"}, "attempts_allowed",
     "Enter a whole number of attempts from 1 to 100"),
    ({"attempts_allowed": "2.5"}, "attempts_allowed",
     "Enter a whole number of attempts, or leave it empty."),
    ({"quiz": "no-such-quiz"}, "quiz", "Choose one of the quizzes on offer."),
    ({"time_zone": "Mars/Olympus"}, "time_zone", "Choose a time zone from the list."),
    ({"opens": "next tuesday"}, "opens", "Enter a date and time, like 2026-12-07 09:00."),
    ({"time_zone": "Europe/Berlin", "opens": "2026-03-29T02:30"}, "opens",
     "The clocks skip this time in Europe/Berlin: choose another."),
    ({"grade_from": "median"}, "grade_from", "Choose which attempt the gradebook uses."),
    ({"feedback": "never"}, "feedback", "Choose when students see feedback."),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "field", "message"), BAD)
def test_bad_settings_are_refused_next_to_their_field(
    app, teacher, class_id, fields, field, message
):
    """400, the message beside the field that needs it, and nothing stored."""
    response = assign(teacher, class_id, **fields)
    assert response.status_code == 400
    page = text(response)
    assert f'<p class="error" id="{field}-error">{message}' in page
    assert "Nothing was saved" in page
    assert stored(app) == []


def test_every_problem_is_reported_at_once(app, teacher, class_id):
    """Four wrong fields: four messages in one answer, the first wrong field focused."""
    response = assign(
        teacher, class_id, opens="2026-12-07T09:00", closes="2026-12-01T09:00",
        time_limit="5000", attempts_allowed="500", quiz="nope",
    )  # fmt: skip
    page = text(response)
    assert response.status_code == 400
    for field in ("quiz", "closes", "time_limit", "attempts_allowed"):
        assert f'id="{field}-error"' in page
    assert re.search(
        r'<select aria-describedby="quiz-hint quiz-error" aria-invalid="true" autofocus', page
    )
    assert stored(app) == []


def test_a_quiz_is_assigned_to_a_class_once(app, teacher, class_id):
    """Assigning the same quiz again is refused beside the quiz, pointing at Edit."""
    assert assign(teacher, class_id).status_code == 303
    response = assign(teacher, class_id, attempts_allowed="3")
    assert response.status_code == 400
    assert "Physics 101 assigns this quiz already: edit that assignment instead." in text(response)
    assert [a.attempts_allowed for a in stored(app)] == [None]


def test_concurrent_saves_of_one_quiz_store_one_assignment(app, teacher, class_id):
    """Ten saves of the same quiz released together: one stored, the rest told on the form."""
    url = f"/teach/classes/{class_id}/assignments/new"
    token = form_token(teacher, url)
    cookie = teacher.get_cookie("session").value
    barrier = threading.Barrier(10)
    statuses = []

    def save():
        tab = app.test_client()
        tab.set_cookie("session", cookie)
        data = {"csrf_token": token, "quiz": SLUG, "time_zone": "UTC", "grade_from": "first",
                "feedback": "each-answer"}  # fmt: skip
        barrier.wait()
        statuses.append(tab.post(url, data=data).status_code)

    threads = [threading.Thread(target=save) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [303] + [400] * 9
    assert len(stored(app)) == 1


@pytest.mark.parametrize(
    "values",
    [
        {
            "closes_at": datetime(2026, 1, 1, tzinfo=UTC),
            "opens_at": datetime(2026, 1, 2, tzinfo=UTC),
        },
        {"time_limit_minutes": 0},
        {"time_limit_minutes": 1441},
        {"attempts_allowed": 101},
        {"attempts_allowed": 0},
        {"grade_from": "median"},
        {"feedback": "never"},
    ],
)
def test_the_database_refuses_what_the_form_would(app, class_id, values):
    """The check constraints are the last line, whatever code writes the row."""
    with app.app_context():
        db.session.add(Assignment(class_id=class_id, quiz_slug=SLUG, **values))
        with pytest.raises(IntegrityError):
            db.session.commit()


def test_edit_shows_the_settings_and_saves_new_ones(app, teacher, class_id, caplog):
    """The edit form is filled in on the instructor's clock; saving changes the assignment."""
    caplog.set_level(logging.WARNING)
    assign(teacher, class_id, time_zone="America/New_York", opens="2026-12-07T09:00",
           attempts_allowed="2")  # fmt: skip
    [saved] = stored(app)
    url = f"/teach/classes/{class_id}/assignments/{saved.id}"
    form = text(teacher.get(url))
    assert "Edit assignment: Gradient Checkpointing" in form
    assert 'value="2026-12-07T09:00"' in form and 'value="2"' in form
    assert 'id="quiz"' not in form  # an assignment keeps its quiz
    response = teacher.post(url, data={
        "csrf_token": form_token(teacher, url), "time_zone": "America/New_York",
        "opens": "2026-12-07T10:00", "attempts_allowed": "", "time_limit": "45",
        "grade_from": "latest", "feedback": "after-attempt",
    })  # fmt: skip
    assert response.status_code == 303
    [changed] = stored(app)
    assert changed.opens_at.replace(tzinfo=UTC) == datetime(2026, 12, 7, 15, 0, tzinfo=UTC)
    assert (changed.attempts_allowed, changed.time_limit_minutes) == (None, 45)
    assert (changed.grade_from, changed.feedback, changed.quiz_slug) == (
        "latest",
        "after-attempt",
        SLUG,
    )
    assert f"assignment changed: class {class_id}, quiz {SLUG}" in caplog.text


def test_bad_edits_change_nothing(app, teacher, class_id):
    """An edit with a wrong field is refused beside it, and the stored settings stay."""
    assign(teacher, class_id, attempts_allowed="2")
    [saved] = stored(app)
    url = f"/teach/classes/{class_id}/assignments/{saved.id}"
    response = teacher.post(url, data={
        "csrf_token": form_token(teacher, url), "time_zone": "UTC", "attempts_allowed": "0",
        "grade_from": "best", "feedback": "each-answer",
    })  # fmt: skip
    assert response.status_code == 400
    assert 'id="attempts_allowed-error"' in text(response)
    [same] = stored(app)
    assert (same.attempts_allowed, same.grade_from) == (2, "first")


def test_removing_an_assignment_keeps_its_attempts(app, teacher, class_id, caplog):
    """The attempt stays with its score and its assignment, which is marked removed."""
    caplog.set_level(logging.WARNING)
    assign(teacher, class_id, attempts_allowed="1")
    [saved] = stored(app)
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        right = [right_choice(question).id for question in quiz.questions]
        made = factories.attempt(quiz, "Ada", answers=right, class_id=class_id,
                                 assignment=db.session.get(Assignment, saved.id))  # fmt: skip
        token = made.token
    url = f"/teach/classes/{class_id}/assignments/{saved.id}/remove"
    response = teacher.post(url, data={"csrf_token": form_token(teacher)})
    assert response.status_code == 303
    [removed] = stored(app)
    assert removed.id == saved.id and removed.removed_at is not None
    with app.app_context():
        kept = db.session.scalars(db.select(Attempt)).one()
        assert (kept.token, kept.assignment_id, kept.points) == (token, saved.id, len(right))
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert "Ada" in page and f"{len(right)}/{len(right)}" in page
    assert f"assignment removed: class {class_id}, quiz {SLUG}" in caplog.text


def test_release_feedback_sets_the_moment_once(app, teacher, class_id, caplog):
    """ "Release feedback" records when; the button goes, and a second release keeps the first."""
    caplog.set_level(logging.WARNING)
    assign(teacher, class_id, feedback="after-close")
    [saved] = stored(app)
    url = f"/teach/classes/{class_id}/assignments/{saved.id}/release"
    assert teacher.post(url, data={"csrf_token": form_token(teacher)}).status_code == 303
    [released] = stored(app)
    assert released.feedback_released_at is not None
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert "Feedback: after the quiz closes, released" in page
    assert "Release feedback" not in page
    assert teacher.post(url, data={"csrf_token": form_token(teacher)}).status_code == 303
    [again] = stored(app)
    assert again.feedback_released_at == released.feedback_released_at
    assert f"feedback released: class {class_id}, quiz {SLUG}" in caplog.text


def test_feedback_held_until_the_close_needs_no_release_after_it(app, teacher, class_id):
    """Once the quiz has closed its feedback is out: no button, and the list says so."""
    with app.app_context():
        factories.assignment(
            db.session.get(Class, class_id), current_bank().quizzes[SLUG], feedback="after-close",
            opens_at=datetime.now(UTC) - timedelta(days=2),
            closes_at=datetime.now(UTC) - timedelta(days=1),
        )  # fmt: skip
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert "opened to students" in page and "Release feedback" not in page
    assert ">Closed<" in page


def test_assignment_actions_need_the_forms_token(app, teacher, class_id):
    """A forged POST (no CSRF token) changes nothing."""
    assign(teacher, class_id, feedback="after-close")
    [saved] = stored(app)
    base = f"/teach/classes/{class_id}/assignments"
    for url in (f"{base}/new", f"{base}/{saved.id}", f"{base}/{saved.id}/remove",
                f"{base}/{saved.id}/release"):  # fmt: skip
        assert teacher.post(url, data={"quiz": SECOND, "time_zone": "UTC"}).status_code == 400
    [same] = stored(app)
    assert same.feedback_released_at is None and same.quiz_slug == SLUG


def test_another_classes_assignment_is_not_reached_through_your_class(app, teacher, class_id):
    """An assignment id of someone else's class, under your class's address, is a 404."""
    with app.app_context():
        other = factories.instructor("other", "other password")
        theirs = factories.class_(other, "Chemistry")
        foreign = factories.assignment(theirs, current_bank().quizzes[SLUG]).id
    base = f"/teach/classes/{class_id}/assignments/{foreign}"
    assert teacher.get(base).status_code == 404
    token = form_token(teacher)
    assert teacher.post(f"{base}/remove", data={"csrf_token": token}).status_code == 404
    assert teacher.post(f"{base}/release", data={"csrf_token": token}).status_code == 404
    assert len(stored(app)) == 1


def gradebook(client, class_id, **args):
    response = client.get(f"/teach/classes/{class_id}/gradebook.csv", query_string=args)
    return {row["student"]: row for row in gradebook_rows(response)}


@pytest.mark.parametrize(("grade_from", "score"), [("first", "2"), ("best", "8"), ("latest", "5")])
def test_reports_grade_as_the_assignment_says(app, teacher, class_id, grade_from, score):
    """Class page, gradebook and statistics count the assignment's attempt; the selector still
    explores the others."""
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        factories.assignment(db.session.get(Class, class_id), quiz, grade_from=grade_from)
        for right in (2, 8, 5):
            marks = [n < right for n in range(len(quiz.questions))]
            factories.attempt(quiz, "Ada", answers=factories.right_or_wrong(quiz, marks),
                              class_id=class_id)  # fmt: skip
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert f'<option selected value="{grade_from}">' in page
    assert f'<td class="num">{score}/8</td>' in page
    assert gradebook(teacher, class_id)["Ada"]["score"] == score
    assert gradebook(teacher, class_id, quiz=SLUG, count="first")["Ada"]["score"] == "2"
    explored = text(teacher.get(f"/teach/classes/{class_id}", query_string={"count": "first"}))
    assert '<td class="num">2/8</td>' in explored
    items = teacher.get(f"/teach/classes/{class_id}/items.csv").get_data().decode("utf-8-sig")
    sixth = list(csv.DictReader(io.StringIO(items)))[5]
    # Only the attempt with 8 right got question 6 right.
    assert (sixth["n"], float(sixth["facility"])) == ("1", 1.0 if score == "8" else 0.0)


def test_average_of_attempts_grades_the_mean(app, teacher, class_id):
    """ "Average of attempts" makes the gradebook give the mean of the student's attempts."""
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        factories.assignment(db.session.get(Class, class_id), quiz, grade_from="all")
        for right in (2, 8):
            marks = [n < right for n in range(len(quiz.questions))]
            factories.attempt(quiz, "Ada", answers=factories.right_or_wrong(quiz, marks),
                              class_id=class_id)  # fmt: skip
    assert gradebook(teacher, class_id)["Ada"]["score"] == "5"


def test_the_class_page_shows_the_first_assigned_quiz(app, teacher, class_id):
    """A class that assigns only the second quiz opens on its report, not the bank's first."""
    assign(teacher, class_id, quiz=SECOND)
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert f'<option selected value="{SECOND}">Second Quiz</option>' in page


def test_class_page_with_assignments_costs_the_same_queries_for_10_and_500(app, teacher, class_id):
    """Listing assignments and taking their defaults costs no query per student."""
    assign(teacher, class_id, attempts_allowed="3", grade_from="best")
    assign(teacher, class_id, quiz=SECOND, feedback="after-close")

    def counted_queries(students):
        with app.app_context():
            quiz = current_bank().quizzes[SLUG]
            picks = [[right_choice(q).id for q in quiz.questions]] * students
            start = db.session.scalar(db.select(db.func.count(Attempt.id)))
            names = [f"Student {n}" for n in range(start, start + students)]
            factories.attempts(quiz, picks, names=names, class_id=class_id)
        with queries(app) as statements:
            assert teacher.get(f"/teach/classes/{class_id}").status_code == 200
        return len(statements)

    small = counted_queries(10)
    # The login, the class with its assignments, versions, roster, attempts twice, answers,
    # voided attempts, the grades passed back to an LMS, whether another class holds the
    # quiz's key and the quizzes the instructor may use (for the quiz list): fixed, whatever
    # the class's size.
    assert counted_queries(490) == small <= 11


def test_a_student_sees_no_instructor_form(app, class_id):
    """The form is for the class's instructors: a student's browser is sent to log in."""
    student = Student(app.test_client())
    response = student.client.get(f"/teach/classes/{class_id}/assignments/new")
    assert response.status_code == 302 and response.location.startswith("/login")


def test_another_instructor_cannot_assign_in_your_class(app, class_id):
    """Someone else's class is a 404 to the form and to its save; nothing is stored."""
    with app.app_context():
        factories.instructor("other", "other password")
    other = app.test_client()
    assert login(other, "other", "other password").status_code == 303
    url = f"/teach/classes/{class_id}/assignments/new"
    assert other.get(url).status_code == 404
    data = {"csrf_token": form_token(other), "quiz": SLUG, "time_zone": "UTC",
            "grade_from": "first", "feedback": "each-answer"}  # fmt: skip
    assert other.post(url, data=data).status_code == 404
    assert stored(app) == []


def test_release_and_remove_each_take_a_second_step_that_says_what_happens(app, teacher, class_id):
    """No one-click release or removal: release opens a page that counts who is still answering
    while the quiz is open; remove's real button waits inside a <details> with its consequence."""
    assign(teacher, class_id, feedback="after-close")
    [saved] = stored(app)
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        held = db.session.get(Assignment, saved.id)
        for name in ("Ada", "Bo"):  # one answer each: neither has finished
            factories.attempt(quiz, name, answers=[right_choice(quiz.questions[0]).id],
                              class_id=class_id, assignment=held)  # fmt: skip
    raw = teacher.get(f"/teach/classes/{class_id}").get_data(as_text=True)
    release = f"/teach/classes/{class_id}/assignments/{saved.id}/release"
    remove = f"/teach/classes/{class_id}/assignments/{saved.id}/remove"
    assert f'action="{release}"' not in raw and f'href="{release}"' in raw
    details = raw.split('<details class="confirm">')[1].split("</details>")[0]
    assert f'action="{remove}"' in details and raw.count(f'action="{remove}"') == 1
    assert "with unlimited attempts and feedback after each answer" in " ".join(details.split())
    assert "Attempts already taken are kept." in details
    confirm = text(teacher.get(release))
    assert "2 students have not finished" in confirm
    assert "a results link shared with them would show the answers" in confirm
    assert stored(app)[0].feedback_released_at is None  # looking released nothing
    assert f'<form method="post" action="{release}"' in confirm


def test_assign_a_quiz_goes_once_every_quiz_is_assigned(teacher, class_id):
    """The form would offer no quiz: the page says to edit an assignment instead."""
    for quiz in (SLUG, SECOND):
        assert assign(teacher, class_id, quiz=quiz).status_code == 303
        assert "Assign a quiz" in text(teacher.get(f"/teach/classes/{class_id}"))
    assert assign(teacher, class_id, quiz=THIRD).status_code == 303
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert "Assign a quiz" not in page and "Every quiz is assigned" in page
