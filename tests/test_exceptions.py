"""Exceptions to an assignment's rules for some students: granted on the class page, in force
wherever the rules are, seen only by their student, and holding everyone's feedback until the
last of them can no longer be answered."""

import threading
from datetime import UTC, datetime, timedelta

import pytest
from test_timing import assign

from app.attempts.policy import ANSWER_GRACE, extended, rules_for
from app.extensions import db
from app.models import Accommodation, Assignment, Attempt, Class, FeedbackWhen
from app.names import student_key
from app.question_types import right_choice
from app.teach.assignments import Settings, save_assignment
from app.teach.exceptions import Said, save_exception

from helpers import Student, csrf_token, login, text

pytestmark = pytest.mark.postgres


def lecturer_of(app) -> object:
    client = app.test_client()
    assert login(client, "teacher", "correct horse").status_code == 303
    return client


def new_exception_url(app, assignment_id) -> str:
    with app.app_context():
        class_id = db.session.get(Assignment, assignment_id).class_id
    return f"/teach/classes/{class_id}/assignments/{assignment_id}/exceptions/new"


def started(client, name, code) -> Student:
    student = Student(client)
    assert student.start(name=name, class_code=code).status_code == 303, name
    return student


def code_of(app, class_id) -> str:
    with app.app_context():
        return db.session.get(Class, class_id).join_code


def grant(app, lecturer, assignment_id, names, **fields):
    """The lecturer's "Add an exception" form, sent for students (by typed name)."""
    url = new_exception_url(app, assignment_id)
    token = csrf_token(lecturer.get(url).get_data(as_text=True))
    form = {"csrf_token": token, "time_zone": "UTC", "students": [student_key(n) for n in names]}
    return lecturer.post(url, data=form | fields)


def test_a_student_with_half_as_long_again_keeps_everyones_feedback_held(app, quiz, course, clock):
    """Dana has ×1.5 on a 2-minute limit: her attempt runs 3 minutes, Ben's 2. Feedback held
    until the close opens for Ben only once Dana's last possible answer is in, not at his own
    time's end; the class page says so."""
    closes = datetime.now(UTC) + timedelta(minutes=10)
    held = assign(app, quiz, course, time_limit_minutes=2, closes_at=closes,
                  feedback=FeedbackWhen.AFTER_CLOSE)  # fmt: skip
    code = code_of(app, course)
    # A first attempt, finished: she is one the class has seen.
    started(app.test_client(), "Dana", code).finish()
    lecturer = lecturer_of(app)
    granted = grant(app, lecturer, held, ["Dana"], time_factor="×1.5")
    assert granted.status_code == 303, text(granted)
    page = text(lecturer.get(granted.location))
    assert "Dana: ×1.5 the time" in page
    ben, dana = started(app.test_client(), "Ben", code), started(app.test_client(), "Dana", code)
    with app.app_context():
        ends = {a.token: a.ends_at - a.started_at for a in db.session.scalars(db.select(Attempt))}
    assert (ends[ben.token], ends[dana.token]) == (timedelta(minutes=2), timedelta(minutes=3))
    for student in (ben, dana):
        assert student.answer(1, right_choice(quiz.questions[0]).id).status_code == 303
        student.post(f"/attempts/{student.token}/finish")
    clock.wait(timedelta(minutes=10) + timedelta(minutes=2) + ANSWER_GRACE + timedelta(seconds=5))
    # Past the close and Ben's whole time: Dana may still be answering, so nothing shows.
    assert "You scored" not in text(ben.client.get(ben.results_url))
    clock.wait(timedelta(minutes=1))
    assert "You scored" in text(ben.client.get(ben.results_url))


def test_an_exception_gives_more_attempts_a_later_close_and_is_theirs_alone(app, quiz, course):
    """One attempt allowed, closed an hour ago: Dana, with two attempts and a close tomorrow,
    starts twice; Ben is told the quiz closed. Ben's pages never name Dana or another time."""
    past = datetime.now(UTC) - timedelta(hours=1)
    one = assign(app, quiz, course, attempts_allowed=1, closes_at=past - timedelta(minutes=1),
                 opens_at=past - timedelta(days=1))  # fmt: skip
    with app.app_context():
        assignment = db.session.get(Assignment, one)
        save_exception(assignment, {student_key("Dana"): "Dana"},
                       Said(attempts_allowed=2, closes_at=past + timedelta(days=1)))  # fmt: skip
    code = code_of(app, course)
    dana = Student(app.test_client())
    assert dana.start(name="Dana", class_code=code).status_code == 303
    assert dana.start(name="Dana", class_code=code).status_code == 303
    refused = dana.start(name="Dana", class_code=code)
    assert refused.status_code == 403, text(refused)[-600:]
    assert "used all 2 attempts" in text(refused), text(refused)[300:1200]
    ben = Student(app.test_client()).start(name="Ben", class_code=code)
    assert ben.status_code == 403 and "has closed" in text(ben)
    assert "Dana" not in text(ben) and "2 attempts" not in text(ben)


@pytest.mark.parametrize(
    ("fields", "field", "said"),
    [
        ({"time_factor": "lots"}, "time_factor", "Enter how many times as long, like 1.5"),
        ({"time_factor": "1"}, "time_factor", "Enter a multiple above 1"),
        ({"time_limit": "45", "time_factor": "2"}, "time_limit", "not both"),
        ({"attempts_allowed": "1"}, "attempts_allowed", "The assignment allows 1: give more"),
        ({"closes": "2020-01-01T09:00"}, "closes", "Give a moment after the assignment closes"),
        ({"opens": "2020-01-01T09:00"}, "opens", "The assignment opens at once"),
        ({}, "time_limit", "Give at least one exception"),
        ({"students": []}, "students", "Choose at least one student"),
    ],
)  # fmt: skip
def test_a_wrong_exception_is_refused_beside_its_field_and_saves_nothing(
    app, quiz, course, fields, field, said
):
    closes = datetime.now(UTC) + timedelta(days=1)
    limited = assign(app, quiz, course, attempts_allowed=1, time_limit_minutes=30,
                     closes_at=closes)  # fmt: skip
    started(app.test_client(), "Dana", code_of(app, course))
    form = {"time_limit": "45"} if field not in ("time_limit", "students") else {}
    refused = grant(app, lecturer_of(app), limited, ["Dana"], **(form | fields))
    assert refused.status_code == 400
    page = refused.get_data(as_text=True)
    assert f'id="{field}-error"' in page and said in text(refused), text(refused)
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(Accommodation.id))) == 0


def test_an_exception_is_edited_and_removed_from_the_class_page(app, quiz, course):
    limited = assign(app, quiz, course, time_limit_minutes=30)
    started(app.test_client(), "Dana", code_of(app, course))
    lecturer = lecturer_of(app)
    assert grant(app, lecturer, limited, ["Dana"], time_limit="45").status_code == 303
    with app.app_context():
        row = db.session.scalar(db.select(Accommodation))
    base = new_exception_url(app, limited).removesuffix("new")
    page = lecturer.get(f"{base}{row.id}").get_data(as_text=True)
    assert 'value="45"' in page
    token = csrf_token(page)
    changed = lecturer.post(f"{base}{row.id}", data={
        "csrf_token": token, "time_zone": "UTC", "time_limit": "", "time_factor": "2",
        "attempts_allowed": "", "opens": "", "closes": ""})  # fmt: skip
    assert changed.status_code == 303
    assert "Dana: ×2 the time" in text(lecturer.get(changed.location))
    removed = lecturer.post(f"{base}{row.id}/remove", data={"csrf_token": token})
    assert removed.status_code == 303
    assert "Dana:" not in text(lecturer.get(removed.location))
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(Accommodation.id))) == 0


def test_a_changed_time_limit_moves_when_every_exception_ends(app, quiz, course):
    """×1.5 follows the assignment's limit: changing the limit changes when the last exception
    ends, which holds everyone's feedback."""
    closes = datetime.now(UTC) + timedelta(hours=1)
    held = assign(app, quiz, course, time_limit_minutes=20, closes_at=closes,
                  feedback=FeedbackWhen.AFTER_CLOSE)  # fmt: skip
    with app.app_context():
        assignment = db.session.get(Assignment, held)
        save_exception(assignment, {"dana": "Dana"}, Said(time_factor=1.5))
        assert rules_for(assignment).feedback_opens_at == closes + timedelta(minutes=30) + (
            ANSWER_GRACE)
        settings = Settings(time_limit_minutes=40, closes_at=closes,
                            feedback=FeedbackWhen.AFTER_CLOSE)  # fmt: skip
        save_assignment(assignment.class_, quiz.slug, settings, assignment)
    with app.app_context():
        assignment = db.session.get(Assignment, held)
        assert rules_for(assignment).feedback_opens_at == closes + timedelta(minutes=60) + (
            ANSWER_GRACE)
    assert extended(45, 1.5) == 68 and extended(40, 1.5) == 60


def test_granting_one_student_twice_at_once_keeps_one_exception(app, quiz, course):
    """Two saves racing for the same student (a double click) leave one row, the rules of one
    of them."""
    limited = assign(app, quiz, course, time_limit_minutes=30)
    barrier = threading.Barrier(2)
    errors = []

    def save(minutes):
        with app.app_context():
            assignment = db.session.get(Assignment, limited)
            barrier.wait()
            try:
                save_exception(assignment, {"dana": "Dana"}, Said(time_limit_minutes=minutes))
            except Exception as error:  # noqa: BLE001 - the test reports any
                errors.append(error)
            finally:
                db.session.remove()

    threads = [threading.Thread(target=save, args=(minutes,)) for minutes in (45, 60)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with app.app_context():
        rows = db.session.scalars(db.select(Accommodation)).all()
        assert [(row.student_key, row.time_limit_minutes in (45, 60)) for row in rows] == [
            ("dana", True)
        ]



def test_merging_a_spelling_keeps_the_seats_an_exception_gives(app, quiz, course):
    """Dana may take 3 attempts where the class allows 1: merging "Dana D" into her keeps each
    of her attempts seated, so merging never frees a seat she has used."""
    from app.teach.students import SeenStudent, merge_students

    one = assign(app, quiz, course, attempts_allowed=1)
    with app.app_context():
        save_exception(db.session.get(Assignment, one), {"dana": "Dana"}, Said(attempts_allowed=3))
    code = code_of(app, course)
    for name in ("Dana", "Dana", "Dana D"):
        started(app.test_client(), name, code)
    with app.app_context():
        merge_students(course, SeenStudent("dana", "Dana", None, False),
                       SeenStudent("dana d", "Dana D", None, False))  # fmt: skip
        db.session.commit()
        seats = sorted(a.seat for a in db.session.scalars(db.select(Attempt)))
    assert seats == [1, 2, 3]


def test_a_merged_spelling_brings_its_exception_along(app, quiz, course):
    """An exception granted to "Dana D" is Dana's once the two spellings are merged: a start
    under either spelling runs her 40 minutes, and her pages say them."""
    from app.attempts.service import rules_of_attempt
    from app.teach.students import SeenStudent, merge_students

    limited = assign(app, quiz, course, time_limit_minutes=10)
    code = code_of(app, course)
    started(app.test_client(), "Dana Diaz", code)
    started(app.test_client(), "Dana D", code)
    with app.app_context():
        save_exception(db.session.get(Assignment, limited), {"dana d": "Dana D"},
                       Said(time_limit_minutes=40))  # fmt: skip
        merge_students(course, SeenStudent("dana diaz", "Dana Diaz", None, False),
                       SeenStudent("dana d", "Dana D", None, False))  # fmt: skip
        db.session.commit()
    for spelling in ("Dana Diaz", "Dana D"):
        dana = started(app.test_client(), spelling, code)
        with app.app_context():
            attempt = db.session.scalar(db.select(Attempt).filter_by(token=dana.token))
            assert attempt.ends_at - attempt.started_at == timedelta(minutes=40)
            assert rules_of_attempt(attempt).time_limit_minutes == 40


def test_a_close_in_the_year_9999_is_no_server_error(app, quiz, course):
    """A close as far off as the picker allows, with a time limit, is saved: the hold it keeps
    never ends by itself, and the class page still shows."""
    closes = datetime.now(UTC) + timedelta(days=1)
    limited = assign(app, quiz, course, time_limit_minutes=30, closes_at=closes)
    started(app.test_client(), "Dana", code_of(app, course))
    lecturer = lecturer_of(app)
    assert grant(app, lecturer, limited, ["Dana"], closes="9999-12-31T23:59").status_code == 303
    assert lecturer.get(f"/teach/classes/{course}").status_code == 200


def test_adding_an_exception_for_one_who_has_one_is_refused_not_a_silent_replacement(
    app, quiz, course
):
    limited = assign(app, quiz, course, time_limit_minutes=30, attempts_allowed=1)
    started(app.test_client(), "Dana", code_of(app, course))
    lecturer = lecturer_of(app)
    assert grant(app, lecturer, limited, ["Dana"], time_factor="1.5").status_code == 303
    again = grant(app, lecturer, limited, ["Dana"], attempts_allowed="3")
    assert again.status_code == 400
    assert "Dana already has an exception here: change it from the class page" in text(again)
    with app.app_context():
        row = db.session.scalar(db.select(Accommodation))
        assert (row.time_factor, row.attempts_allowed) == (1.5, None)


def test_the_release_page_names_who_still_answers_under_an_exception(app, quiz, course):
    """Releasing early shows the key to whoever has a shared link: the page names the student
    whose exception lets them answer after the close, and until when."""
    closes = datetime.now(UTC) + timedelta(hours=1)
    held = assign(app, quiz, course, time_limit_minutes=30, closes_at=closes,
                  feedback=FeedbackWhen.AFTER_CLOSE)  # fmt: skip
    with app.app_context():
        save_exception(db.session.get(Assignment, held), {"dana": "Dana Diaz"},
                       Said(time_factor=2))  # fmt: skip
    release = new_exception_url(app, held).replace("/exceptions/new", "/release")
    words = text(lecturer_of(app).get(release))
    assert "Still answering under an exception:</strong> Dana Diaz (until" in words
