"""Rosters: adding students, their sign-in codes and cards, signing in by code, and the roster
in the class page and gradebook."""

import csv
import html
import io
import logging
import re
import threading

import factories
import pytest
from test_bad_input import other_browser
from test_exceptions import new_exception_url
from test_teach import create_class, on_host, rows
from werkzeug.datastructures import FileStorage
from werkzeug.test import encode_multipart

from app.codes import CODE_ALPHABET
from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import Attempt, FeedbackWhen, RosterStudent
from app.question_types import right_choice
from app.roster import store as roster_store
from app.served import current_bank

from helpers import (
    SLUG,
    Student,
    csrf_token,
    form_token,
    login,
    queries,
    shown,
    text,
    wrong_choice,
)

pytestmark = pytest.mark.postgres


@pytest.fixture
def teacher(app):
    """A logged-in instructor's browser."""
    with app.app_context():
        factories.instructor("teacher", "correct horse")
    client = app.test_client()
    assert login(client, "teacher", "correct horse").status_code == 303
    return client


def roster_url(class_id):
    return f"/teach/classes/{class_id}/roster"


def add(client, class_id, students="", upload=None, token=None):
    """Send the "Add students" form: pasted text, or a file as (bytes, file name)."""
    data = {"csrf_token": token or form_token(client, roster_url(class_id)), "students": students}
    if upload is not None:
        data["upload"] = (io.BytesIO(upload[0]), upload[1])
    return client.post(roster_url(class_id), data=data, content_type="multipart/form-data")


def stored(app, class_id=None):
    """The roster as stored: (name, student id, code, removed?) by name."""
    with app.app_context():
        found = db.session.scalars(db.select(RosterStudent).order_by(RosterStudent.name))
        return [
            (s.name, s.student_number, s.sign_in_code, s.removed_at is not None)
            for s in found
            if class_id is None or s.class_id == class_id
        ]


def code_of(app, name):
    return next(code for student, _, code, _ in stored(app) if student == name)


def test_adding_a_pasted_list_gives_each_student_a_code(app, teacher, caplog):
    """Names and ids are stored, each with 8 characters of the look-alike-free alphabet."""
    class_id, _ = create_class(teacher)
    with caplog.at_level(logging.WARNING):
        response = add(teacher, class_id, "Dana Diaz, 20231234\nEli Ek\n")
    assert response.status_code == 303
    assert response.location == f"{roster_url(class_id)}?added=2"
    assert "roster: 2 students added to class" in caplog.text
    students = stored(app)
    assert [(name, number) for name, number, _, _ in students] == [
        ("Dana Diaz", "20231234"),
        ("Eli Ek", None),
    ]
    codes = [code for _, _, code, _ in students]
    assert all(len(code) == 8 and set(code) <= set(CODE_ALPHABET) for code in codes)
    page = text(teacher.get(response.location))
    assert "2 students added, each with a sign-in code." in page
    assert f"{codes[0][:4]} {codes[0][4:]}" in page
    assert f"http://localhost/s/{codes[0]}" in page
    summary = text(teacher.get(f"/teach/classes/{class_id}"))
    assert "2 students sign in with personal codes; typed names are refused." in summary


def test_a_csv_upload_with_a_header_and_byte_order_mark_is_added(app, teacher):
    """A spreadsheet's "CSV UTF-8" file: header row, BOM, quoted names with commas."""
    class_id, _ = create_class(teacher)
    data = '\ufeffName,Email\r\n"Diaz, Dana",dana@school.example\r\nZoë Zander,\r\n'.encode()
    assert add(teacher, class_id, upload=(data, "class.csv")).status_code == 303
    assert [(name, number) for name, number, _, _ in stored(app)] == [
        ("Diaz, Dana", "dana@school.example"),
        ("Zoë Zander", None),
    ]


@pytest.mark.parametrize(
    ("students", "upload", "message"),
    [
        ("", None, "Paste a list of students, or choose a CSV file."),
        ("Dana Diaz", (b"Eli Ek", "x.csv"), "Paste a list or upload a file, not both."),
        ("Dana Diaz\nEli Ek\nDana Diaz", None, "Line 3: Dana Diaz is also on line 1."),
        ("", ("Zoë\n".encode("latin-1"), "x.csv"), "The file is not UTF-8 text."),
        ("", (b"=1+1, 2\n", "x.csv"), "Line 1: “=1+1” begins with &#39;=&#39;"),
        ("\n".join(f"S{n}" for n in range(2001)), None, "add at most 2,000 at a time"),
    ],
    ids=["nothing", "both", "duplicate names", "not utf-8", "formula", "too many"],
)
def test_a_bad_list_is_refused_next_to_its_field_and_nothing_is_stored(
    app, teacher, students, upload, message
):
    """A clear message beside the field that holds the problem, a 400, and no student added."""
    class_id, _ = create_class(teacher)
    response = add(teacher, class_id, students, upload)
    assert response.status_code == 400
    page = text(response)
    field = "upload" if upload and not students else "students"
    error = re.search(rf'<div class="error" id="{field}-error">(.*?)</div>', page).group(1)
    assert message in error
    assert f'aria-describedby="{field}-hint {field}-error"' in page
    assert stored(app) == []


def test_every_problem_of_a_list_is_shown_at_once_in_line_order(app, teacher):
    """Three bad lines, three located messages in the list's order, and the count of them."""
    class_id, _ = create_class(teacher)
    page = text(add(teacher, class_id, "Dana Diaz\n, 1\nDana Diaz\n@Eve"))
    assert "3 problems; nothing was added." in page
    found = re.findall(r"<li>(Line \d+)", page)
    assert found == ["Line 2", "Line 3", "Line 4"]


def test_students_already_on_the_roster_are_not_added_twice(app, teacher):
    """A second paste naming the same student, or the same id, is refused whole."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz, 1\nEli Ek")
    page = text(add(teacher, class_id, "Fay Fox\nEli Ek\nGus Gray, 1"))
    assert "Line 2: Eli Ek is on the roster already." in page
    assert shown("Line 3: the student id 1 belongs to Dana Diaz, already on this class's") in page
    assert len(stored(app)) == 2


def test_a_whole_year_group_fits_in_one_paste(app, teacher):
    """2,000 students with email addresses are far more than a form's 64 kB, and are added."""
    class_id, _ = create_class(teacher)
    pasted = "\n".join(
        f"Student Number {n}, student.number.{n}@a-long-school-name.example" for n in range(2000)
    )
    assert len(pasted.encode()) > 64 * 1024
    assert add(teacher, class_id, pasted).status_code == 303
    assert len(stored(app)) == 2000


def test_adding_students_still_needs_the_csrf_token(app, teacher):
    """The larger form is read before its token is checked, but the token is still required."""
    class_id, _ = create_class(teacher)
    assert add(teacher, class_id, "Dana Diaz", token="forged").status_code == 400
    assert stored(app) == []


def test_a_code_clash_draws_new_codes(app, teacher, monkeypatch):
    """If a drawn code is taken, the unique constraint refuses it and new codes are drawn."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz")
    taken = code_of(app, "Dana Diaz")
    drawn = iter([taken, "ZZZZ2222"])
    monkeypatch.setattr("app.roster.store.new_sign_in_code", lambda: next(drawn))
    assert add(teacher, class_id, "Eli Ek").status_code == 303
    assert code_of(app, "Eli Ek") == "ZZZZ2222"


def test_another_instructor_cannot_see_or_change_the_roster(app, teacher):
    """Codes let anyone answer as a student: another instructor gets 404s and changes nothing."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz")
    with app.app_context():
        factories.instructor("other", "other password")
        student_id = db.session.scalar(db.select(RosterStudent.id))
    other = app.test_client()
    login(other, "other", "other password")
    token = form_token(other)
    for url in ("", "/cards", "/codes.csv"):
        assert other.get(roster_url(class_id) + url).status_code == 404
    assert add(other, class_id, "Eve", token=token).status_code == 404
    for action in ("remove", "new-code"):
        url = f"{roster_url(class_id)}/{student_id}/{action}"
        assert other.post(url, data={"csrf_token": token}).status_code == 404
    assert [name for name, _, _, removed in stored(app) if not removed] == ["Dana Diaz"]


def test_a_student_of_another_class_cannot_be_changed_through_this_one(app, teacher):
    """The student id must belong to the class in the address."""
    first, _ = create_class(teacher, "First")
    second, _ = create_class(teacher, "Second")
    add(teacher, second, "Dana Diaz")
    with app.app_context():
        student_id = db.session.scalar(db.select(RosterStudent.id))
    url = f"{roster_url(first)}/{student_id}/remove"
    assert teacher.post(url, data={"csrf_token": form_token(teacher)}).status_code == 404
    assert stored(app)[0][3] is False


def sign_in(app, code, confirm=True):
    """A student's browser opening their personal link and confirming who they are."""
    student = Student(app.test_client())
    page = student.client.get(f"/s/{code}")
    if not confirm or page.status_code != 200:
        return student, page
    response = student.post(f"/s/{code}", quiz=SLUG)
    if response.status_code == 303:
        student.token = response.location.split("/")[2]
    return student, response


def test_a_typed_name_added_to_the_roster_is_offered_to_merge(app, teacher):
    """New-instructor review: Dana typed her name, then the roster listed her: two rows, and
    the LMS's gradebook had no grade for her. The roster page offers to count the typed name as
    the roster's Dana; after that one row holds her score. A name two roster students share is
    not offered, nor is a typed name the roster does not list."""
    class_id, code = create_class(teacher)
    with app.app_context():
        right = [right_choice(question).id for question in current_bank().quizzes[SLUG].questions]
    for name in ("dana  DIAZ", "Jo Li", "Kim Wu"):
        typed = Student(app.test_client())
        assert typed.start(name=name, class_code=code).status_code == 303
        for number, choice in enumerate(right, 1):
            typed.answer(number, choice)
    assert add(teacher, class_id, "Dana Diaz, 20231234\nJo Li, 1\nJo Li, 2").status_code == 303
    page = teacher.get(roster_url(class_id))
    offered = re.findall(r"Count the typed “([^”]+)” as ([^<]+) of the roster", text(page))
    assert offered == [("dana DIAZ", "Dana Diaz")]
    fields = re.findall(r'name="(csrf_token|first|second)" value="([^"]*)"', page.text)
    assert teacher.post(f"/teach/classes/{class_id}/merge", data=dict(fields)).status_code == 303
    moodle = teacher.get(f"/teach/classes/{class_id}/gradebook-moodle.csv").text
    dana = [row for row in csv.DictReader(io.StringIO(moodle)) if "Diaz" in str(row)]
    assert [(row["ID number"], row["Gradient Checkpointing Quiz"]) for row in dana] == [
        ("20231234", "8")
    ]
    assert "Typed names that are on the roster" not in text(teacher.get(roster_url(class_id)))


def test_a_personal_link_says_the_assignments_rules_before_the_clock_starts(app, teacher):
    """New-instructor review: "I am …" started a 20-minute attempt without a word of its
    rules. The page says the student's own (an exception's half as long again included)."""
    with app.app_context():
        class_ = factories.class_(db.session.scalars(db.select(factories.Instructor)).first())
        assignment_id = factories.assignment(
            class_, current_bank().quizzes[SLUG], time_limit_minutes=20, attempts_allowed=2,
            feedback=FeedbackWhen.AFTER_ATTEMPT,
        ).id  # fmt: skip
        sam, dana = factories.roster(class_.id, "Sam O'Neil\nDana Diaz")
        sam_code, dana_code, dana_key = sam.sign_in_code, dana.sign_in_code, dana.student_key
    page = text(app.test_client().get(f"/s/{sam_code}"))
    assert "a time limit of 20 minutes from the start; 2 attempts allowed." in page
    assert "shows once you finish the attempt" in page
    url = new_exception_url(app, assignment_id)
    form = {"csrf_token": form_token(teacher, url), "time_zone": "UTC", "students": [dana_key],
            "time_factor": "×1.5"}  # fmt: skip
    assert teacher.post(url, data=form).status_code == 303
    assert "a time limit of 30 minutes" in text(app.test_client().get(f"/s/{dana_code}"))


def test_a_personal_link_shows_the_name_and_class_then_starts_the_quiz(app, teacher):
    """ "I am Dana Diaz": confirmed, the attempt carries the roster student and their name."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz, 20231234")
    code = code_of(app, "Dana Diaz")
    student, response = sign_in(app, code, confirm=False)
    page = text(response)
    assert "Are you Dana Diaz?" in page and "Physics 101" in page
    assert 'value="I am Dana Diaz"' in page
    student, response = sign_in(app, code)
    assert response.status_code == 303
    assert response.location.endswith("/questions/1")
    with app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        dana = db.session.scalars(db.select(RosterStudent)).one()
        assert attempt.roster_student_id == dana.id and attempt.class_id == class_id
        assert attempt.student_name == "Dana Diaz" and attempt.student_key == dana.student_key


def test_a_retake_stays_the_roster_students(app, teacher):
    """ "Retake quiz" starts the roster student's next attempt, not a typed name's; once they are
    removed, it is refused."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz, 1")
    student, _ = sign_in(app, code_of(app, "Dana Diaz"))
    response = student.post(f"/attempts/{student.token}/retake")
    assert response.status_code == 303
    with app.app_context():
        keys = db.session.scalars(db.select(Attempt.student_key)).all()
        dana = db.session.scalars(db.select(RosterStudent)).one()
        assert keys == [dana.student_key] * 2
    [row] = rows(teacher.get(f"/teach/classes/{class_id}/gradebook.csv"))
    assert (row["student"], row["unfinished"]) == ("Dana Diaz", "2")
    remove(teacher, class_id, app, "Dana Diaz")
    assert student.post(f"/attempts/{student.token}/retake").status_code == 403


@pytest.mark.parametrize("typed", ["{}", "{lower}", "{half} {rest}", "{half}-{rest}"])
def test_a_typed_code_leads_to_the_personal_link_however_it_is_typed(app, teacher, typed):
    """Lower case, a space or a dash in the middle: the same student."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz")
    code = code_of(app, "Dana Diaz")
    entered = typed.format(code, lower=code.lower(), half=code[:4], rest=code[4:])
    response = app.test_client().get("/s", query_string={"code": entered})
    assert response.status_code == 303 and response.location == f"/s/{code}"


def test_an_unknown_code_is_refused_with_a_message(app):
    """The typed code gets a message beside its field; an unknown link a 404."""
    response = app.test_client().get("/s?code=ABCD2345")
    assert response.status_code == 400
    assert "No student has the code “ABCD2345”" in text(response)
    assert app.test_client().get("/s/ABCD2345").status_code == 404


def test_guessing_sign_in_codes_counts_against_the_unknown_code_limit(app, teacher):
    """Unknown sign-in codes and unknown class codes share one allowance per address; past it
    an unknown code waits, while a student's own code still works."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz")
    code = code_of(app, "Dana Diaz")
    guesser = other_browser(app)
    misses = [guesser.client.get(f"/s/GUESS{n:03}").status_code for n in range(75)]
    misses += [guesser.client.get(f"/s?code=GUESS{n:03}").status_code for n in range(50)]
    misses += [guesser.client.get(f"/join/GUESS{n}").status_code for n in range(25)]
    assert misses == [404] * 75 + [400] * 50 + [404] * 25
    refused = guesser.client.get("/s/GUESS999")
    assert refused.status_code == 429
    assert guesser.client.get(f"/s/{code}").status_code == 200
    assert other_browser(app, "198.51.100.7").client.get("/s/GUESS999").status_code == 404


def test_a_roster_class_refuses_typed_names(app, teacher):
    """The start form asks for the code; the join link leads to the sign-in page."""
    class_id, join_code = create_class(teacher)
    add(teacher, class_id, "Dana Diaz")
    student = Student(app.test_client())
    response = student.start(name="Dana Diaz", class_code=join_code)
    assert response.status_code == 400
    page = text(response)
    assert "Physics 101 signs students in with personal codes" in page
    assert '<a href="/s">Sign in with your code</a>' in page
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(Attempt.id))) == 0
    joined = app.test_client().get(f"/join/{join_code}")
    assert joined.status_code == 302 and joined.location == f"/s?class={join_code}"
    assert "<strong>Physics 101</strong> signs its students in with personal codes" in text(
        app.test_client().get(joined.location)
    )


def test_a_class_without_a_roster_still_takes_typed_names(app, teacher):
    """Nothing changes for a class that never added students."""
    _, join_code = create_class(teacher)
    assert Student(app.test_client()).start(name="Ada", class_code=join_code).status_code == 303


def test_a_closed_class_does_not_start_by_code(app, teacher):
    """The page says the class is closed, and a POST anyway is refused."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz")
    teacher.post(f"/teach/classes/{class_id}/close", data={"csrf_token": form_token(teacher)})
    code = code_of(app, "Dana Diaz")
    student, page = sign_in(app, code, confirm=False)
    assert "Physics 101 is closed, so no new attempts can start." in text(page)
    assert "I am Dana Diaz" not in text(page)
    assert student.post(f"/s/{code}", quiz=SLUG).status_code == 403


def remove(teacher, class_id, app, name, action="remove"):
    with app.app_context():
        student_id = db.session.scalar(db.select(RosterStudent.id).filter_by(name=name))
    url = f"{roster_url(class_id)}/{student_id}/{action}"
    return teacher.post(url, data={"csrf_token": form_token(teacher)})


def test_a_new_code_stops_the_old_one_at_once(app, teacher, caplog):
    """The old code and link are unknown from then on; the new one signs the student in."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz")
    old = code_of(app, "Dana Diaz")
    with caplog.at_level(logging.WARNING):
        response = remove(teacher, class_id, app, "Dana Diaz", "new-code")
    assert response.status_code == 303
    assert response.location.startswith(roster_url(class_id) + "#student-")
    assert "roster: new sign-in code for student" in caplog.text
    new = code_of(app, "Dana Diaz")
    assert new != old
    assert sign_in(app, old, confirm=False)[1].status_code == 404
    assert sign_in(app, new)[1].status_code == 303


def test_a_removed_student_keeps_their_attempts_marked_removed(app, teacher, caplog):
    """Their code stops working; the class page and gradebook show their attempt as removed."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz, 1\nEli Ek, 2\nFay Fox, 3")
    dana = code_of(app, "Dana Diaz")
    student, _ = sign_in(app, dana)
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    for number, question in enumerate(quiz.questions, 1):
        student.answer(number, right_choice(question).id)
    with caplog.at_level(logging.WARNING):
        assert remove(teacher, class_id, app, "Dana Diaz").status_code == 303
        assert remove(teacher, class_id, app, "Eli Ek").status_code == 303
    assert "roster: student" in caplog.text and "removed from class" in caplog.text
    assert sign_in(app, dana, confirm=False)[1].status_code == 404
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert '<th scope="row">Dana Diaz (removed)</th>' in page
    assert "Eli Ek" not in page  # removed before starting: nothing to report
    gradebook = rows(teacher.get(f"/teach/classes/{class_id}/gradebook.csv"))
    assert [
        (row["student"], row["student_id"], row["state"], row["score"]) for row in gradebook
    ] == [
        ("Dana Diaz (removed)", "1", "finished", "8"),
        ("Fay Fox", "3", "not started", ""),
    ]
    roster_page = text(teacher.get(roster_url(class_id)))
    assert "Removed (2)" in roster_page and "Students (1)" in roster_page


def test_a_removed_student_can_be_restored_with_their_code_and_attempts(app, teacher, caplog):
    """Restore undoes Remove: the same code signs them in again; restoring twice changes nothing."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz, 1")
    code = code_of(app, "Dana Diaz")
    sign_in(app, code)
    remove(teacher, class_id, app, "Dana Diaz")
    assert 'Restore<span class="visually-hidden"> Dana Diaz</span>' in text(
        teacher.get(roster_url(class_id))
    )
    with caplog.at_level(logging.WARNING):
        response = remove(teacher, class_id, app, "Dana Diaz", "restore")
    assert response.status_code == 303 and "restored to class" in caplog.text
    assert stored(app) == [("Dana Diaz", "1", code, False)]
    assert sign_in(app, code, confirm=False)[1].status_code == 200
    assert remove(teacher, class_id, app, "Dana Diaz", "restore").status_code == 303
    [row] = rows(teacher.get(f"/teach/classes/{class_id}/gradebook.csv"))
    assert (row["student"], row["unfinished"]) == ("Dana Diaz", "1")


def test_a_student_whose_name_was_taken_meanwhile_is_not_restored(app, teacher):
    """Another Dana Diaz without an id was added after the removal: restoring is refused."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz")
    remove(teacher, class_id, app, "Dana Diaz")
    add(teacher, class_id, "Dana Diaz")
    with app.app_context():
        removed = db.session.scalar(
            db.select(RosterStudent.id).where(RosterStudent.removed_at.is_not(None))
        )
    url = f"{roster_url(class_id)}/{removed}/restore"
    response = teacher.post(url, data={"csrf_token": form_token(teacher)})
    assert response.status_code == 400
    assert "Dana Diaz cannot be restored: another student on the roster has the same name." in (
        text(response)
    )
    assert sorted(removed for _, _, _, removed in stored(app)) == [False, True]


def test_the_class_page_lists_who_started_before_who_has_not(app, teacher):
    """In a live class the first page of a long roster shows who has started: those first,
    each part by name; the gradebook stays by name alone."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "\n".join(f"Student {n:02d}" for n in range(60)))
    with app.app_context():
        question = current_bank().quizzes[SLUG].questions[0]
    for name in ("Student 59", "Student 07"):
        sign_in(app, code_of(app, name))[0].answer(1, right_choice(question).id)
    first = text(teacher.get(f"/teach/classes/{class_id}"))
    listed = re.findall(r'<th scope="row">(Student \d+)</th>', first)
    assert listed[:4] == ["Student 07", "Student 59", "Student 00", "Student 01"]
    assert "Students 1–40 of 60, by name, those not started last" in first
    gradebook = rows(teacher.get(f"/teach/classes/{class_id}/gradebook.csv"))
    assert [row["student"] for row in gradebook] == [f"Student {n:02d}" for n in range(60)]


def test_the_gradebook_lists_every_roster_student(app, teacher):
    """Not started, not finished and finished roster students, by name, with their ids."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Cy Cole, c@x.example\nAl Abe, a@x.example\nBo Bee, b@x.example")
    finished, _ = sign_in(app, code_of(app, "Al Abe"))
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    for number, question in enumerate(quiz.questions, 1):
        finished.answer(
            number, (right_choice(question) if number <= 6 else wrong_choice(question)).id
        )
    started, _ = sign_in(app, code_of(app, "Bo Bee"))
    started.answer(1, right_choice(quiz.questions[0]).id)
    gradebook = teacher.get(f"/teach/classes/{class_id}/gradebook.csv?count=best")
    assert gradebook.get_data().decode("utf-8-sig").splitlines()[0].startswith("student,")
    disposition = gradebook.headers["Content-Disposition"]
    assert 'filename="Physics-101-gradient-checkpointing-gradebook-best-attempt.csv"' in disposition
    listed = [
        (
            row["student"],
            row["email"],
            row["state"],
            row["attempts"],
            row["unfinished"],
            row["score"],
        )
        for row in rows(gradebook)
    ]
    assert listed[1:] == [
        ("Bo Bee", "b@x.example", "not finished", "0", "1", ""),
        ("Cy Cole", "c@x.example", "not started", "0", "0", ""),
    ]
    assert listed[0][:5] == ("Al Abe", "a@x.example", "finished", "1", "0")
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert '<th scope="col">Student id</th>' in page
    assert (
        '<th scope="row">Cy Cole</th> <td>c@x.example</td> <td class="num">0</td> '
        '<td class="num">0</td> <td colspan="5">Not started</td>' in page
    )
    assert "<dt>Not started (of 3 on the roster)</dt><dd>1</dd>" in page


def test_without_ids_the_class_page_has_no_id_column(app, teacher):
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz")
    [row] = rows(teacher.get(f"/teach/classes/{class_id}/gradebook.csv"))
    assert row["student_id"] == row["email"] == row["score"] == ""
    assert "Student id" not in text(teacher.get(f"/teach/classes/{class_id}"))


def test_two_roster_students_of_one_name_stay_two_students(app, teacher):
    """Told apart by their ids, their attempts never merge as typed names would."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz, 1\nDana Diaz, 2")
    codes = [code for _, _, code, _ in stored(app)]
    sign_in(app, codes[0])
    sign_in(app, codes[1])
    gradebook = rows(teacher.get(f"/teach/classes/{class_id}/gradebook.csv"))
    assert sorted(row["student_id"] for row in gradebook) == ["1", "2"]


def test_sign_in_cards_print_one_whole_card_per_student(app, teacher):
    """Name, class, code, personal link and its QR code; cards never split across pages."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Dana Diaz\nEli Ek\nFay Fox")
    remove(teacher, class_id, app, "Fay Fox")
    # The test client's localhost is loopback: the cards wait for "Print anyway".
    page = text(teacher.get(f"{roster_url(class_id)}/cards?confirm=1"))
    cards = re.findall(r'<li class="card">(.*?)</li>', page)
    assert len(cards) == 2
    code = code_of(app, "Dana Diaz")
    dana = cards[0]
    assert '<p class="card-name">Dana Diaz</p>' in dana and "Physics 101" in dana
    assert f"{code[:4]} {code[4:]}" in dana and f"http://localhost/s/{code}" in dana
    assert "<svg" in dana and 'aria-label="QR code of Dana Diaz’s sign-in link"' in dana
    css = (PROJECT_ROOT / "app" / "static" / "quizwright.css").read_text()
    assert re.search(r"\.card \{[^}]*break-inside: avoid", css)
    assert re.search(r"@media print \{[^@]*\.site-header[^}]*display: none", css)


def test_sign_in_codes_download_as_a_formula_safe_csv(app, teacher, caplog):
    """One row per current student; a class name a spreadsheet would run is defused."""
    class_id, _ = create_class(teacher, name="=HYPERLINK(1)")
    add(teacher, class_id, "Dana Diaz, 1\nEli Ek")
    with caplog.at_level(logging.WARNING):
        response = teacher.get(f"{roster_url(class_id)}/codes.csv")
    assert "sign-in codes of class" in caplog.text
    assert "sign-in-codes.csv" in response.headers["Content-Disposition"]
    found = list(csv.DictReader(io.StringIO(response.get_data().decode("utf-8-sig"))))
    code = code_of(app, "Dana Diaz")
    assert found[0] == {
        "student": "Dana Diaz",
        "student_id": "1",
        "class": "'=HYPERLINK(1)",
        "sign_in_code": code,
        "personal_link": f"http://localhost/s/{code}",
    }
    assert [row["student"] for row in found] == ["Dana Diaz", "Eli Ek"]


@pytest.mark.parametrize("kind", ["", "/gradebook.csv"])
def test_class_pages_cost_the_same_queries_with_a_roster_of_500(app, teacher, kind):
    """10 or 500 of a 500-student roster started: the same number of queries."""
    class_id, _ = create_class(teacher)
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        pasted = "\n".join(f"Student {n}, {n}" for n in range(500))
        students = factories.roster(class_id, pasted)
        signed = [(s.id, s.name) for s in students]

    def counted_queries(start, stop):
        with app.app_context():
            who = [db.session.get(RosterStudent, id_) for id_, _ in signed[start:stop]]
            picks = [[right_choice(q).id for q in quiz.questions]] * len(who)
            names = [name for _, name in signed[start:stop]]
            factories.attempts(quiz, picks, names=names, class_id=class_id, roster_students=who)
        with queries(app) as statements:
            response = teacher.get(f"/teach/classes/{class_id}{kind}")
            assert response.status_code == 200
            body = response.get_data(as_text=True)
        return len(statements), body

    small, first = counted_queries(0, 10)
    if kind:
        assert first.lower().count("not started") >= 490
    else:  # the table comes a page at a time; the headline counts them all
        assert "(490 of 500 on the roster not started)" in first
    large, second = counted_queries(10, 500)
    # The class page alone also reads voided attempts, the grades passed back to an LMS and
    # whether another class holds the quiz's key; each reads the quizzes the instructor may
    # use, for its quiz list.
    assert large == small <= (11 if kind == "" else 8)
    assert ">Not started<" not in second


@pytest.mark.parametrize(
    "pasted", ["Dana Diaz\nEli Ek", "Dana Diaz, 1\nEli Ek, 2"], ids=["names only", "with ids"]
)
def test_a_double_clicked_add_stores_the_list_once(app, teacher, monkeypatch, pasted):
    """Two requests with the same list both pass the check before either stores: the database's
    unique indexes refuse the second, which then reports the students as already there."""
    class_id, _ = create_class(teacher)
    url = roster_url(class_id)
    token = form_token(teacher, url)
    both_checked = threading.Barrier(2, timeout=10)
    first_check = threading.local()
    check = roster_store.clashes

    def clashes_in_step(entries, roster):
        found = check(entries, roster)
        if not getattr(first_check, "done", False):
            first_check.done = True
            both_checked.wait()
        return found

    monkeypatch.setattr(roster_store, "clashes", clashes_in_step)
    statuses = []

    def send():
        data = {"csrf_token": token, "students": pasted}
        statuses.append(teacher.post(url, data=data).status_code)

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [303, 400]
    assert [name for name, _, _, _ in stored(app)] == ["Dana Diaz", "Eli Ek"]


@pytest.mark.parametrize("page", ["", "/cards?confirm=1", "/codes.csv"])
def test_roster_pages_cost_the_same_queries_for_10_and_500_students(app, teacher, page):
    """The roster page, the cards and the codes file read the roster in one query."""
    class_id, _ = create_class(teacher)

    def counted_queries(first, count):
        with app.app_context():
            factories.roster(class_id, "\n".join(f"Student {n}" for n in range(first, count)))
        with queries(app) as statements:
            response = teacher.get(roster_url(class_id) + page)
            assert response.status_code == 200
            assert response.get_data(as_text=True).count(f"Student {count - 1}") >= 1
        return len(statements)

    small = counted_queries(0, 10)
    assert counted_queries(10, 500) == small <= 4


def assign_once(app, class_id):
    """The class's quiz assigned with one attempt allowed."""
    with app.app_context():
        made = db.session.get(factories.Class, class_id)
        factories.assignment(made, current_bank().quizzes[SLUG], attempts_allowed=1)


def test_a_roster_student_continues_their_attempt_in_another_browser(app, teacher, quiz):
    """A new phone: the personal link offers the unfinished attempt, not "No attempts left";
    continuing moves it to this browser, and the old one may answer no more."""
    class_id, _ = create_class(teacher)
    assign_once(app, class_id)
    add(teacher, class_id, "Dana Diaz, 1\nBo Bee, 2")
    old, _ = sign_in(app, code_of(app, "Dana Diaz"))
    assert old.answer(1, right_choice(quiz.questions[0]).id).status_code == 303
    new, page = sign_in(app, code_of(app, "Dana Diaz"), confirm=False)
    page = text(page)
    assert "Continue your attempt" in page and "1 of 8 answered" in page
    assert "I am Dana Diaz" not in page and "used every attempt" not in page
    # Bo's link cannot take Dana's attempt, even with its token.
    bo = Student(app.test_client())
    fields = {"continue-csrf_token": bo.csrf, "continue-attempt": old.token}
    taken = bo.client.post(f"/s/{code_of(app, 'Bo Bee')}", data=fields)
    assert taken.status_code == 409
    fields = {"continue-csrf_token": new.csrf, "continue-attempt": old.token}
    moved = new.client.post(f"/s/{code_of(app, 'Dana Diaz')}", data=fields)
    assert moved.status_code == 303 and moved.location.endswith(f"/attempts/{old.token}/continue")
    assert new.client.get(moved.location).location.endswith("/questions/2")
    new.token = old.token
    assert new.answer(2, right_choice(quiz.questions[1]).id).status_code == 303
    assert old.answer(3, right_choice(quiz.questions[2]).id).status_code == 403
    with app.app_context():
        assert db.session.scalars(db.select(Attempt.answered)).all() == [2]


def test_a_roster_student_with_no_attempt_left_is_told_before_confirming(app, teacher, quiz):
    """Every allowed attempt used and none unfinished: the page says so and sends them to their
    instructor, with no "I am …" that would only lead to a refusal."""
    class_id, _ = create_class(teacher)
    assign_once(app, class_id)
    add(teacher, class_id, "Dana Diaz, 1")
    student, _ = sign_in(app, code_of(app, "Dana Diaz"))
    for number, question in enumerate(quiz.questions, 1):
        assert student.answer(number, right_choice(question).id).status_code == 303
    _, page = sign_in(app, code_of(app, "Dana Diaz"), confirm=False)
    page = text(page)
    assert "You have used every attempt you are allowed at" in page
    assert "ask your instructor" in page
    assert "I am Dana Diaz" not in page and "Continue your attempt" not in page


@pytest.mark.parametrize("page", ["", "/cards?confirm=1"])
@pytest.mark.parametrize(
    ("host", "warned"), [("127.0.0.1:8000", True), ("192.168.1.20:8000", False)]
)
def test_roster_and_cards_warn_of_personal_links_phones_cannot_open(
    app, teacher, page, host, warned
):
    """Cards printed with links on this computer's own address would reach no phone: say so on
    the cards and on the roster page, where the codes CSV is downloaded."""
    client = on_host(app, host)
    class_id, _ = create_class(client)
    add(client, class_id, "Dana Diaz, 1")
    shown = text(client.get(roster_url(class_id) + page))
    assert f"http://{host}/s/{code_of(app, 'Dana Diaz')}" in shown
    assert ("Phones cannot open these links." in shown) is warned
    if warned:
        assert "<code>HOST=0.0.0.0 make run</code>" in shown


@pytest.mark.parametrize("page", ["", "/cards"])
def test_roster_and_cards_say_the_fix_in_a_line_pointing_to_the_class_page(app, teacher, page):
    """The class page explains the loopback fix in full; the roster and the cards say it in one
    line with the command and a link there (issue 27, item 17)."""
    client = on_host(app, "127.0.0.1:8000")
    class_id, _ = create_class(client)
    add(client, class_id, "Dana Diaz, 1")
    shown = text(client.get(roster_url(class_id) + page))
    assert shown.count('id="loopback-warning"') == 1
    assert "Restart with <code>HOST=0.0.0.0 make run</code>" in shown
    assert f'<a href="/teach/classes/{class_id}#loopback-warning">why and how</a>' in shown
    assert "Students can open" not in shown  # the full explanation is the class page's


def test_cards_with_links_phones_cannot_open_wait_for_print_anyway(app, teacher):
    """On loopback the cards page shows the warning and "Print anyway" instead of the cards,
    printing the refusal rather than a blank page; confirmed, the cards come with the warning
    kept off the paper. Elsewhere the cards come at once (issue 27, item 17)."""
    client = on_host(app, "127.0.0.1:8000")
    class_id, _ = create_class(client)
    add(client, class_id, "Dana Diaz, 1\nEli Ek")
    cards = roster_url(class_id) + "/cards"
    held = text(client.get(cards))
    assert "Phones cannot open these links." in held and "The 2 cards are held back" in held
    assert f'<a class="button secondary" href="{cards}?confirm=1">Print anyway</a>' in held
    assert '<li class="card">' not in held and "/s/" not in held and "<svg" not in held
    assert '<div class="no-print">' not in held

    confirmed = text(client.get(f"{cards}?confirm=1"))
    assert len(re.findall(r'<li class="card">', confirmed)) == 2
    assert f"http://127.0.0.1:8000/s/{code_of(app, 'Dana Diaz')}" in confirmed
    kept = re.search(r'<div class="no-print">(.*?)</div> <ul class="cards">', confirmed).group(1)
    assert "Phones cannot open these links." in kept and "Print anyway" not in kept

    reachable = text(on_host(app, "192.168.1.20:8000").get(cards))
    assert len(re.findall(r'<li class="card">', reachable)) == 2
    assert "Print anyway" not in reachable and "loopback-warning" not in reachable


# Lists whose columns are named, or must be chosen (issue 27, items 7 and 8).

REGISTRAR = "First name,Last name,Student ID,Email\r\nDana,Diaz,2023001,dana@school.example\r\n"


def hidden(page, name):
    """The value of a hidden field of the page, unescaped as the browser would post it."""
    found = re.search(rf'<input id="{name}" name="{name}" type="hidden" value="([^"]*)"', page)
    return html.unescape(found.group(1))


def choose(client, class_id, page, choices, header=False, token=None, **changed):
    """Post the page's "Which column is which?" form with a role chosen for each column, the
    header box ticked or not, and any field `changed` from what the page holds."""
    data = {
        "columns-csrf_token": token or csrf_token(page),
        "columns-step": "columns",
        "columns-pending": hidden(page, "columns-pending"),
        "columns-pasted": hidden(page, "columns-pasted"),
        **{f"columns-roles-{index}": role for index, role in enumerate(choices)},
        **{f"columns-{name}": value for name, value in changed.items()},
    }
    if header:
        data["columns-header"] = "y"
    return post_encoded(client, class_id, {k: v for k, v in data.items() if v is not None})


def post_encoded(client, class_id, fields):
    """Post a multipart form encoded in memory: the test client would spool a large body to a
    temporary file it never closes."""
    boundary, body = encode_multipart(fields)
    content_type = f"multipart/form-data; boundary={boundary}"
    return client.post(roster_url(class_id), data=body, content_type=content_type)


def test_a_header_row_is_never_a_student_and_its_columns_are_read_by_name(app, teacher):
    """ "Email,Full name" names two columns, in that order: no student "Email" whose id is
    "Full name"."""
    class_id, _ = create_class(teacher)
    data = b"Email,Full name\r\ndana@school.example,Dana Diaz\r\n"
    assert add(teacher, class_id, upload=(data, "class.csv")).status_code == 303
    assert [(name, number) for name, number, _, _ in stored(app)] == [
        ("Dana Diaz", "dana@school.example")
    ]


def test_a_registrars_export_is_added_with_names_joined_and_the_id_kept(app, teacher):
    """First name, Last name, Student ID, Email: "Dana Diaz", with the student ID as her id."""
    class_id, _ = create_class(teacher)
    response = add(teacher, class_id, upload=(REGISTRAR.encode(), "export.csv"))
    assert response.status_code == 303
    assert [(name, number) for name, number, _, _ in stored(app)] == [("Dana Diaz", "2023001")]


def columns_page(teacher, class_id, students="", upload=None):
    """The "Which column is which?" page a list leads to: shown, and nothing stored yet."""
    response = add(teacher, class_id, students, upload)
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert "<title>Which column is which · Roster" in page
    assert "Nothing has been added yet." in page
    return page


def selected(page):
    """The role each column's select has chosen, in column order."""
    return re.findall(
        r'<select[^>]*name="columns-roles-\d+">.*?<option selected value="(\w+)"', page
    )


def test_columns_that_cannot_be_told_apart_are_chosen_before_anything_is_stored(app, teacher):
    """No header and four columns: a select above each column of the first rows, with a guess;
    the instructor says which is which, and only then are the students added."""
    class_id, _ = create_class(teacher)
    rows_ = [f"Given{c},Family{c},2023{n:03},{c}@school.example" for n, c in enumerate("ABCDEFG")]
    page = columns_page(teacher, class_id, upload=("\n".join(rows_).encode(), "export.csv"))
    assert stored(app) == []
    # Two columns of words side by side are guessed as first and last names, not one and lost.
    assert selected(page) == ["first", "last", "number", "ignore"]
    assert '<label for="columns-roles-3">Column 4</label>' in page
    options = re.findall(r'<option(?: selected)? value="\w+">([^<]+)</option>', page)
    assert options[:5] == ["Full name", "First name", "Last name", "Student ID or email", "Ignore"]
    # The first five rows, each with its line, and how many there are.
    assert "The first 5 of 7 students are shown." in page
    shown_rows = page.split("<tbody>")[1].split("</tbody>")[0]
    assert "<td>GivenE</td>" in shown_rows and "GivenF" not in shown_rows
    assert '<tr><th scope="row">1</th><td>GivenA</td><td>FamilyA</td><td>2023000</td>' in page
    response = choose(teacher, class_id, page, ["first", "last", "number", "ignore"])
    assert response.status_code == 303 and response.location.endswith("?added=7")
    assert [(name, number) for name, number, _, _ in stored(app)][:2] == [
        ("GivenA FamilyA", "2023000"),
        ("GivenB FamilyB", "2023001"),
    ]


def test_a_header_naming_ids_and_emails_twice_asks_which_and_says_the_id_is_kept(app, teacher):
    """Two id columns are ambiguous: the page asks, guessing the first id, and says that of an
    id and an email the id is kept."""
    class_id, _ = create_class(teacher)
    data = "Name,Username,Student ID,Email\nDana Diaz,ddiaz,2023001,d@school.example\n"
    page = columns_page(teacher, class_id, upload=(data.encode(), "export.csv"))
    assert selected(page) == ["name", "number", "ignore", "ignore"]
    assert '<label for="columns-roles-2">Column 3 (“Student ID”)</label>' in page
    assert 'id="columns-header" name="columns-header" type="checkbox" value="y"' in page
    assert re.search(r'<input checked id="columns-header"', page)
    assert "the student ID is kept as each student’s id, and the email is not stored." in page
    response = choose(teacher, class_id, page, ["name", "ignore", "number", "ignore"], True)
    assert response.status_code == 303
    assert [(name, number) for name, number, _, _ in stored(app)] == [("Dana Diaz", "2023001")]


def test_a_pasted_list_with_ids_first_is_previewed_and_kept_to_change(app, teacher):
    """ "20231234, Dana Diaz" reads as an id then a name: the page asks, and the paste stays in
    its box below, to be changed instead."""
    class_id, _ = create_class(teacher)
    pasted = "20231234, Dana Diaz\n20231235, Eli Ek"
    page = columns_page(teacher, class_id, pasted)
    assert selected(page) == ["number", "name"]
    assert re.search(r'<textarea [^>]*name="students"[^>]*>\s*20231234, Dana Diaz', page)
    assert choose(teacher, class_id, page, ["number", "name"]).status_code == 303
    assert [(name, number) for name, number, _, _ in stored(app)] == [
        ("Dana Diaz", "20231234"),
        ("Eli Ek", "20231235"),
    ]


def test_the_header_box_says_whether_the_first_row_is_a_student(app, teacher):
    """A header of names the app does not know is a first row like any other, until the
    instructor ticks the box."""
    class_id, _ = create_class(teacher)
    data = "Apodo,Grupo,Teléfono\nDana Diaz,A,555 0100\n"
    page = columns_page(teacher, class_id, upload=(data.encode(), "x.csv"))
    assert '<tr><th scope="row">1</th><td>Apodo</td>' in page
    assert not re.search(r'<input checked id="columns-header"', page)
    assert choose(teacher, class_id, page, ["name", "ignore", "ignore"], True).status_code == 303
    assert [name for name, _, _, _ in stored(app)] == ["Dana Diaz"]


def test_a_bad_choice_of_columns_is_refused_next_to_each_column(app, teacher):
    """Two columns as the id and none as the name: each problem beside its select, the choices
    kept, a 400, and nothing stored."""
    class_id, _ = create_class(teacher)
    page = columns_page(teacher, class_id, upload=(b"Dana,Diaz,1,d@x.example\n", "x.csv"))
    response = choose(teacher, class_id, page, ["ignore", "ignore", "number", "number"])
    assert response.status_code == 400
    refused = text(response)
    assert "<title>Check the list · Roster" in refused
    assert (
        '<p class="error" id="columns-roles-3-error">Column 3 is the student ID or email '
        "already: choose Ignore here.</p>"
    ) in refused
    assert 'aria-describedby="columns-roles-3-error" aria-invalid="true"' in refused
    whole = re.search(r'<div class="error" id="columns-pending-error">(.*?)</div>', refused)
    assert whole.group(1).strip() == shown(
        "Choose the column with the students’ names: Full name, or First name and Last name."
    )
    assert selected(refused) == ["ignore", "ignore", "number", "number"]
    assert stored(app) == []
    unknown = choose(teacher, class_id, page, ["ignore", "nickname", "number", "ignore"])
    assert "Choose what this column holds." in text(unknown)
    assert stored(app) == []


def test_problems_of_the_chosen_columns_rows_are_listed_by_line(app, teacher):
    """Once chosen, every row is checked as a paste is: each problem with its line, beside the
    rows shown, and nothing stored; students already on the roster too."""
    class_id, _ = create_class(teacher)
    add(teacher, class_id, "Fay Fox, 3")
    data = b"Dana,Diaz,1\n,,2\nEli,Ek,1\nFay,Fox,3\n"
    page = columns_page(teacher, class_id, upload=(data, "x.csv"))
    response = choose(teacher, class_id, page, ["first", "last", "number"])
    assert response.status_code == 400
    whole = re.search(r'<div class="error" id="columns-pending-error">(.*?)</div>', text(response))
    assert "2 problems; nothing was added." in whole.group(1)
    assert re.findall(r"<li>(.*?)</li>", whole.group(1)) == [
        "Line 2: the name is empty.",
        "Line 3: the student id 1 is also on line 1.",
    ]
    # The list comes back from the page and is read again, so a changed one is checked anew.
    response = choose(teacher, class_id, page, ["first", "last", "number"],
                      pending="Dana,Diaz,1\nFay,Fox,3\n")  # fmt: skip
    assert response.status_code == 400
    clash = shown("Line 2: the student id 3 belongs to Fay Fox, already on this class's")
    assert clash in text(response)
    assert [name for name, _, _, _ in stored(app)] == ["Fay Fox"]


@pytest.mark.parametrize(
    ("pending", "where", "message"),
    [
        (None, "students", "The list was lost on the way: paste or upload it again."),
        ("a;b\nc\td", "students", "Line 2: separated by a tab, but line 1 by a semicolon."),
        ("Dana,Diaz,1\n", "columns-pending", "The list has changed: paste or upload it again."),
    ],
    ids=["lost", "unreadable", "other columns"],
)
def test_a_lost_or_changed_list_is_refused_and_nothing_is_stored(
    app, teacher, pending, where, message
):
    """The list comes back from the page: missing or unreadable, the add form says so; with
    other columns than those chosen, the columns' step does."""
    class_id, _ = create_class(teacher)
    page = columns_page(teacher, class_id, upload=(b"Dana,Diaz,1,d@x.example\n", "x.csv"))
    roles = ["first", "last", "number", "ignore"]
    response = choose(teacher, class_id, page, roles, pending=pending)
    assert response.status_code == 400
    found = re.search(rf'<div class="error" id="{where}-error">(.*?)</div>', text(response))
    assert message in found.group(1)
    assert stored(app) == []


def test_choosing_columns_still_needs_the_csrf_token(app, teacher):
    """The second step is a form post like the first: without its token nothing is added."""
    class_id, _ = create_class(teacher)
    page = columns_page(teacher, class_id, upload=(b"Dana,Diaz,1,d@x.example\n", "x.csv"))
    response = choose(teacher, class_id, page, ["first", "last", "number", "ignore"], token="x")
    assert response.status_code == 400
    assert stored(app) == []


def test_a_list_near_the_size_limit_comes_back_from_its_preview_whole(app, teacher):
    """2,000 students with long ignored columns, near 1 MB, their line breaks coming back as
    CRLF as browsers send them: previewed, then added; a larger list is refused by name."""
    class_id, _ = create_class(teacher)
    filler = "x" * 450
    lines = [f"Given{n},Family{n},{n},{filler}" for n in range(2000)]
    data = "\n".join(lines).encode()
    assert 900 * 1024 < len(data) < 1024 * 1024
    fields = {
        "csrf_token": form_token(teacher, roster_url(class_id)),
        "upload": FileStorage(io.BytesIO(data), "big.csv", content_type="text/csv"),
    }
    page = post_encoded(teacher, class_id, fields).get_data(as_text=True)
    assert "Which column is which?" in page and stored(app) == []
    crlf = hidden(page, "columns-pending").replace("\n", "\r\n")
    response = choose(teacher, class_id, page, ["first", "last", "number", "ignore"],
                      pending=crlf)  # fmt: skip
    assert response.status_code == 303
    assert len(stored(app)) == 2000
    larger = "\n".join(f"Student {n}, {n}, {filler}{filler}" for n in range(1400)).encode()
    fields["upload"] = FileStorage(io.BytesIO(larger), "bigger.csv", content_type="text/csv")
    response = post_encoded(teacher, class_id, fields)
    assert response.status_code == 400
    assert "The list is larger than 1 MB" in text(response)


def test_a_single_problem_is_one_marked_line(app, teacher):
    """The marker ("⚠", before the error box) starts the problem's own line: no list under a
    marker standing alone."""
    class_id, _ = create_class(teacher)
    response = add(teacher, class_id, "Dana Diaz\n@Eve")
    found = re.search(r'<div class="error" id="students-error">(.*?)</div>', text(response))
    assert found.group(1) == shown(
        "Line 2: “@Eve” begins with '@', which spreadsheets run as a formula; remove it."
    )
