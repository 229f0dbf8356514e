"""Instructors: accounts from the command line, classes, the class results page and exports."""

import csv
import functools
import html
import io
import json
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, unquote, urlsplit

import factories
import pytest
from flask import before_render_template, template_rendered
from sqlalchemy import event

from app.auth import create_instructor
from app.codes import CODE_ALPHABET
from app.config import PROJECT_ROOT, from_environment
from app.extensions import db
from app.models import Attempt, Class, Instructor
from app.question_types import right_choice
from app.served import current_bank
from app.teach.views import ROWS_A_PAGE, TablePage

from helpers import SLUG, Student, form_token, login, make_app, queries, text

pytestmark = pytest.mark.postgres


@pytest.fixture
def teacher(app):
    """A logged-in instructor's browser."""
    with app.app_context():
        create_instructor("Teacher", "correct horse")
    client = app.test_client()
    assert login(client, "teacher", "correct horse").status_code == 303
    return client


def create_class(client, name="Physics 101"):
    response = client.post("/teach", data={"csrf_token": form_token(client), "name": name})
    assert response.status_code == 303
    page = text(client.get(response.location))
    class_id = int(response.location.rsplit("/", 1)[1])
    code = re.search(r'class="join-code">(\w+)<', page).group(1)
    return class_id, code


def take(app, name, code, right, slug=SLUG):
    """A student takes the whole quiz in a class, getting the listed question numbers right."""
    student = Student(app.test_client())
    assert student.start(name=name, class_code=code).status_code == 303
    with app.app_context():
        quiz = current_bank().quizzes[slug]
    for number, question in enumerate(quiz.questions, 1):
        wrong = [c for c in question.choices if not c.correct][0]
        student.answer(number, (right_choice(question) if number in right else wrong).id)
    return student


def rows(response):
    """A CSV download read back as a spreadsheet would, byte-order mark and all; its first row
    must be the header."""
    assert response.mimetype == "text/csv"
    data = response.get_data().decode("utf-8-sig")
    assert not data.startswith(("#", '"#')), data[:80]
    return list(csv.DictReader(io.StringIO(data)))


def test_create_instructor_from_the_command_line(tmp_path):
    """The command stores a normalised username and, by default, a slow hash, never the
    password."""
    app = make_app(
        tmp_path, PASSWORD_HASH_METHOD=from_environment(str(tmp_path))["PASSWORD_HASH_METHOD"]
    )
    result = app.test_cli_runner().invoke(
        args=["create-instructor", "  Grace ", "--password", "long enough"]
    )
    assert result.exit_code == 0, result.output
    with app.app_context():
        grace = db.session.scalars(db.select(Instructor)).one()
    assert grace.username == "grace" and not grace.is_admin
    assert grace.password_hash.startswith("scrypt:")
    assert "long enough" not in grace.password_hash


def test_the_hash_method_is_a_setting(tmp_path, monkeypatch):
    """PASSWORD_HASH_METHOD names the method new passwords are hashed with (tests use a cheap
    one, in their servers too); unset, it is scrypt."""
    monkeypatch.setenv("PASSWORD_HASH_METHOD", " pbkdf2:sha256:1000 ")
    app = make_app(
        tmp_path, PASSWORD_HASH_METHOD=from_environment(str(tmp_path))["PASSWORD_HASH_METHOD"]
    )
    with app.app_context():
        assert create_instructor("grace", "long enough").password_hash.startswith(
            "pbkdf2:sha256:1000$"
        )


def test_create_instructor_prompts_twice_when_no_password_is_given(app, runner):
    """Without --password the password is asked for twice, and a short one is asked again."""
    typed = "short\nlong enough\nlong enough\n"
    result = runner.invoke(args=["create-instructor", "ada", "--admin"], input=typed)
    assert result.exit_code == 0, result.output
    assert "A password needs 8 to 1024 characters." in result.output
    with app.app_context():
        assert db.session.scalars(db.select(Instructor.is_admin)).one() is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["create-instructor", "ada", "--password", "short"], "8 to 1024 characters"),
        (["create-instructor", "   ", "--password", "long enough"], "Use 1 to 64 characters"),
    ],
)
def test_create_instructor_refuses_bad_input(app, runner, args, message):
    """A short password or an empty name is refused and nothing is stored."""
    result = runner.invoke(args=args)
    assert result.exit_code != 0 and message in result.output
    with app.app_context():
        assert db.session.scalars(db.select(Instructor)).all() == []


def test_usernames_are_unique_whatever_the_case(app, runner):
    """A second "ADA" is refused because "ada" exists."""
    runner.invoke(args=["create-instructor", "ada", "--password", "long enough"])
    result = runner.invoke(args=["create-instructor", "ADA ", "--password", "other password"])
    assert result.exit_code == 1 and "already exists" in result.output
    with app.app_context():
        assert len(db.session.scalars(db.select(Instructor)).all()) == 1


def test_long_passwords_work(app):
    """Passwords of 128 characters and more are accepted and checked."""
    with app.app_context():
        create_instructor("long", "p" * 200)
    assert login(app.test_client(), "long", "p" * 200).status_code == 303


def test_create_class_gives_a_join_code_link_and_qr(app, teacher):
    """A new class shows its 6-character code, its join link and a QR code of the link."""
    class_id, code = create_class(teacher)
    assert len(code) == 6 and set(code) <= set(CODE_ALPHABET)
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert f"http://localhost/join/{code}" in page
    assert re.search(
        rf'role="img" aria-label="QR code of the join link http://localhost/join/{code}"><svg',
        page,
    )
    assert "Physics 101" in text(teacher.get("/teach"))


def test_join_screen_shows_the_code_but_no_results(app, teacher):
    """The projector view has the code, link and QR code, and nobody's name or score."""
    class_id, code = create_class(teacher)
    take(app, "Ada", code, right={1})
    page = text(teacher.get(f"/teach/classes/{class_id}/join"))
    assert f'<p class="join-code">{code}</p>' in page and "<svg" in page
    assert "Ada" not in page and "1/8" not in page


LOOPBACK_WARNING = "Phones cannot open this link."


def on_host(app, host):
    """The teacher's browser reaching the server by another address, as a phone or LAN would."""
    client = app.test_client()
    client.open = functools.partial(client.open, base_url=f"http://{host}")
    assert login(client, "teacher", "correct horse").status_code == 303
    return client


@pytest.mark.parametrize("page", ["", "/join"])
@pytest.mark.parametrize(
    ("host", "warned"),
    [("localhost", True), ("127.0.0.1:8000", True), ("[::1]:8000", True),
     ("192.168.1.20:8000", False), ("quiz.example.edu", False)],
)  # fmt: skip
def test_class_page_and_projector_warn_of_a_link_phones_cannot_open(
    app, teacher, page, host, warned
):
    """A join link on localhost or 127.0.0.1 is this computer's own address: say how to fix it."""
    client = on_host(app, host)
    class_id, code = create_class(client)
    shown = text(client.get(f"/teach/classes/{class_id}{page}"))
    assert f"http://{host}/join/{code}" in shown
    assert (LOOPBACK_WARNING in shown) is warned
    if warned:
        assert "<code>HOST=0.0.0.0 make run</code>" in shown


@pytest.mark.parametrize(
    ("host", "command"),
    [("127.0.0.1:8000", "HOST=0.0.0.0 make run"),
     ("localhost:5107", "HOST=0.0.0.0 PORT=5107 make run")],
)  # fmt: skip
def test_the_class_page_says_once_and_first_how_to_let_phones_in(app, teacher, host, command):
    """On loopback the class page opens with the whole fix, its command set apart; the projector
    says it in one line (issue 27, item 17)."""
    client = on_host(app, host)
    class_id, code = create_class(client)
    take(app, "Ada", code, right={1})
    page = text(client.get(f"/teach/classes/{class_id}"))
    assert page.count('id="loopback-warning"') == 1 and page.count(f"<code>{command}</code>") == 1
    assert f'<p class="command"><code>{command}</code></p>' in page
    assert page.count("Students can open") == 1
    box = page.index('id="loopback-warning"')
    assert box < page.index('<nav class="page-parts"') < page.index('id="students-heading"')
    projector = text(client.get(f"/teach/classes/{class_id}/join"))
    assert f"Restart with <code>{command}</code>" in projector
    assert "Students can open" not in projector and 'class="command"' not in projector


@pytest.mark.parametrize("page", ["", "/join"])
def test_a_link_too_long_for_a_qr_code_is_still_shown(app, teacher, page):
    """A host name so long that no QR code holds the link: the link and code still show."""
    host = ".".join(["a" * 63] * 40)
    client = on_host(app, host)
    class_id, code = create_class(client)
    response = client.get(f"/teach/classes/{class_id}{page}")
    assert response.status_code == 200
    shown = text(response)
    assert f"http://{host}/join/{code}" in shown and code in shown
    assert "too long for a QR code" in shown and "<svg" not in shown


def test_class_needs_a_name(app, teacher):
    """An empty class name is a form error and creates nothing."""
    response = teacher.post("/teach", data={"csrf_token": form_token(teacher), "name": "  "})
    assert response.status_code == 400 and "Give the class a name." in text(response)
    with app.app_context():
        assert db.session.scalars(db.select(Class)).all() == []


def test_students_join_by_link_or_typed_code(app, teacher):
    """The join link fills in the code; a typed code works in any case; both land in the class."""
    class_id, code = create_class(teacher)
    student = Student(app.test_client())
    response = student.client.get(f"/join/{code.lower()}")
    assert response.status_code == 302
    page = text(student.client.get(response.location))
    assert f'value="{code}"' in page and "You are joining <strong>Physics 101</strong>" in page
    # The code is filled in and hidden: no field asks for it as if it were optional.
    assert "Optional: if your instructor gave you one" not in page
    assert f'id="class_code" name="class_code" type="hidden" value="{code}"' in page
    student.start(name="Ada", class_code=code)
    Student(app.test_client()).start(name="Bob", class_code=f" {code.lower()[:3]}-{code[3:]} ")
    with app.app_context():
        assert db.session.scalars(db.select(Attempt.class_id)).all() == [class_id, class_id]


def test_unknown_join_link_is_404(client):
    """A join link with a code no class has is a friendly 404."""
    assert client.get("/join/ZZZZZZ").status_code == 404


def test_closed_class_takes_no_new_attempts(app, teacher):
    """Closing a class stops new attempts and retakes; reopening lets them in again."""
    class_id, code = create_class(teacher)
    first = take(app, "Ada", code, right={1})
    teacher.post(f"/teach/classes/{class_id}/close", data={"csrf_token": form_token(teacher)})

    late = Student(app.test_client())
    assert "Physics 101 is closed" in text(late.client.get(f"/quizzes/{SLUG}?code={code}"))
    response = late.start(name="Late", class_code=code)
    assert response.status_code == 400
    assert text(response).count("is closed") == 1  # said once, on the field
    assert "is closed, so no new attempts can start" in text(response)
    assert first.post(f"/attempts/{first.token}/retake").status_code == 403

    teacher.post(f"/teach/classes/{class_id}/reopen", data={"csrf_token": form_token(teacher)})
    assert late.start(name="Late", class_code=code).status_code == 303
    with app.app_context():
        assert len(db.session.scalars(db.select(Attempt)).all()) == 2


def test_class_page_answers_what_the_class_did_not_get(app, teacher):
    """Scores, summary, distribution and the plain-language flags for a small class."""
    class_id, code = create_class(teacher)
    # Question 1: everyone right. Question 2: everyone wrong (a wrong choice wins).
    # Question 3: right only for the two weakest students: negative discrimination.
    take(app, "Ada", code, right={1, 4, 5, 6, 7, 8})
    take(app, "Bob", code, right={1, 4, 5, 6, 7})
    take(app, "Cy", code, right={1, 3, 4})
    take(app, "Di", code, right={1, 3})
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert "<dt>Students</dt><dd>4</dd>" in page
    assert "<dt>Attempts completed</dt><dd>4</dd>" in page
    assert "<dt>Mean score</dt><dd>4.0 / 8</dd>" in page  # (6 + 5 + 3 + 2) / 4
    assert "<dt>Median</dt><dd>4 / 8</dd>" in page
    assert "fewer than 10 counted attempts" in page
    flags = {
        int(number): re.findall(r'<p class="flag">⚑ (.*?)</p>', section)
        for number, section in re.findall(
            r'<section class="item" id="item-(\d)"(.*?)</section>', page
        )
    }
    assert flags == {
        1: ["Everyone got this right"],
        2: ["Most students chose “To display them to the user”"],
        3: ["Negative discrimination: check the key or the wording"],
        4: [], 5: [], 6: [], 7: [],
        8: ["Most students chose “Which training labels are removed”"],  # only Ada got it
    }  # fmt: skip
    items = rows(teacher.get(f"/teach/classes/{class_id}/items.csv"))
    assert float(items[2]["discrimination"]) < 0  # a number a spreadsheet can sort, not text
    # Name, finished attempts, unfinished ones, score.
    ada = '<th scope="row">Ada</th> <td class="num">1</td> <td class="num">0</td>'
    ada += ' <td class="num">6/8</td>'
    assert f'{ada} <td class="num">75%</td>' in page
    histogram = re.search(r"<th scope=\"row\">Attempts</th>(.*?)</tr>", page).group(1)
    assert re.findall(r">(\d+)<", histogram) == ["0", "0", "1", "1", "0", "1", "1", "0", "0"]
    assert 'role="img"' in page


CLASS_PAGE_PARTS = [
    "Students", "Downloads", "At a glance", "Join", "Roster", "Assignments", "Summary",
    "Score distribution", "Questions", "Voided attempts",
]  # fmt: skip


def test_class_page_opens_with_a_summary_links_to_its_parts_and_the_students(app, teacher):
    """The headline numbers and what is assigned come first, then a link to every part, then
    the students table; no part is lost and headings go down one level at a time (issue 27,
    item 16)."""
    class_id, code = create_class(teacher)
    take(app, "Ada", code, right={1, 2, 3, 4, 5, 6})
    take(app, "Bob", code, right={1, 2})
    take(app, "Cy", code, right={1})
    Student(app.test_client()).start(name="Di", class_code=code)  # started, never finished
    with app.app_context():
        factories.assignment(db.session.get(Class, class_id), current_bank().quizzes[SLUG])
        voided = db.session.scalars(db.select(Attempt).filter_by(student_name="Cy")).one()
        voided.voided_at, voided.seat = datetime.now(UTC), None
        db.session.commit()
    page = text(teacher.get(f"/teach/classes/{class_id}"))

    headlines = re.search(r'<ul class="headlines">(.*?)</ul>', page).group(1)
    words = re.sub(r"<[^>]+>", "", headlines)
    assert "Gradient Checkpointing Quiz: 3 students" in words  # Cy's attempt is void
    assert "2 attempts finished, 1 unfinished" in words
    assert "Mean score 4.0 / 8" in words  # (6 + 2) / 2, as in the summary
    assert "Assigned: Gradient Checkpointing Quiz (open now)" in words
    assert f"Join code {code}" in words

    nav = re.search(r'<nav class="page-parts" aria-label="On this page">(.*?)</nav>', page)
    links = re.findall(r'<a href="#([\w-]+)">([^<]+)</a>', nav.group(1))
    assert [name for _, name in links] == CLASS_PAGE_PARTS
    parts = re.findall(r'<h2 id="([\w-]+)">([^<]+)</h2>', page)
    assert links == parts  # each part has its link, in the page's order, and each link a part
    assert page.index('<ul class="headlines">') < nav.start() < page.index('id="students-heading"')
    assert page.index('id="students-heading"') < page.index('id="questions-heading"')
    levels = [int(level) for level in re.findall(r"<h([1-6])[ >]", page.split("<main", 1)[1])]
    assert levels[0] == 1 and all(b - a <= 1 for a, b in zip(levels, levels[1:], strict=False))


def retake(app, student, right):
    """The same browser retakes the quiz, getting the listed question numbers right."""
    student.token = student.post(f"/attempts/{student.token}/retake").location.split("/")[2]
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    for number, question in enumerate(quiz.questions, 1):
        wrong = [c for c in question.choices if not c.correct][0]
        student.answer(number, (right_choice(question) if number in right else wrong).id)


def test_counting_methods_pick_first_best_latest_or_all(app, teacher):
    """Three attempts scoring 3, 6 and 2 count as 3 (first), 6 (best), 2 (latest), mean (all)."""
    class_id, code = create_class(teacher)
    student = take(app, "Ada", code, right={1, 2, 3})
    retake(app, student, right={1, 2, 3, 4, 5, 6})
    retake(app, student, right={1, 2})

    def scores(count):
        gradebook = teacher.get(f"/teach/classes/{class_id}/gradebook.csv?count={count}")
        return [(row["student"], row["attempts"], row["score"]) for row in rows(gradebook)]

    assert scores("first") == [("Ada", "3", "3")]
    assert scores("best") == [("Ada", "3", "6")]
    assert scores("latest") == [("Ada", "3", "2")]
    assert scores("all") == [("Ada", "3", "3.67")]  # (3 + 6 + 2) / 3
    page = text(teacher.get(f"/teach/classes/{class_id}?count=all"))
    assert all(page.count(f">Attempt {n}<") == 1 for n in (1, 2, 3))


def test_best_attempt_ties_go_to_the_earlier_one(app, teacher):
    """Of two equal best scores, the earlier attempt is the one linked and counted."""
    class_id, code = create_class(teacher)
    student = take(app, "Ada", code, right={1, 2})
    retake(app, student, right={3, 4})
    page = text(teacher.get(f"/teach/classes/{class_id}?count=best"))
    assert ">Attempt 1<" in page and ">Attempt 2<" not in page


def test_students_are_names_whatever_the_case(app, teacher):
    """ "Ada" on a laptop and " ada " on a phone are one student with two attempts."""
    class_id, code = create_class(teacher)
    take(app, "Ada", code, right={1})
    take(app, " ada ", code, right={1, 2})
    assert rows(teacher.get(f"/teach/classes/{class_id}/gradebook.csv?count=latest")) == [
        {
            "student": "Ada",
            "student_id": "",
            "email": "",
            "state": "finished",
            "attempts": "2",
            "unfinished": "0",
            "score": "2",
            "max_score": "8",
            "percent": "25",
            "counted": "latest-attempt",
        }  # fmt: skip
    ]


def test_students_are_names_whatever_invisible_characters_they_hold(app, teacher):
    """A zero-width space or a joiner between letters does not make "Ada" a second student."""
    class_id, code = create_class(teacher)
    take(app, "Ada", code, right={1})
    take(app, "Ada\u200b", code, right={1, 2})
    take(app, "A\u200dda", code, right={1, 2, 3})
    assert rows(teacher.get(f"/teach/classes/{class_id}/gradebook.csv?count=latest")) == [
        {
            "student": "Ada",
            "student_id": "",
            "email": "",
            "state": "finished",
            "attempts": "3",
            "unfinished": "0",
            "score": "3",
            "max_score": "8",
            "percent": "37.5",
            "counted": "latest-attempt",
        }  # fmt: skip
    ]


def test_attempt_numbers_agree_between_page_and_responses(app, teacher):
    """An attempt left without answers still counts: the retake is attempt 2 everywhere."""
    class_id, code = create_class(teacher)
    student = Student(app.test_client())
    student.start(name="Ada", class_code=code)
    retake(app, student, right={1})
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert ">Attempt 2<" in page and "<dt>Attempts started</dt><dd>2</dd>" in page
    answers = rows(teacher.get(f"/teach/classes/{class_id}/responses.csv"))
    assert len(answers) == 8 and {row["attempt"] for row in answers} == {"2"}


def test_unknown_counting_method_is_a_clear_400(teacher):
    """A tampered selector gets a message, not a crash."""
    class_id, _ = create_class(teacher)
    response = teacher.get(f"/teach/classes/{class_id}?count=median&quiz=nope")
    assert response.status_code == 400
    assert "Choose a quiz and which attempts count" in text(response)


@pytest.mark.parametrize("count", ["first", "all"])
def test_in_progress_students_are_listed_without_a_score(app, teacher, count):
    """A student who has not finished shows progress and "Not finished", not a score or a blank,
    whichever attempts count."""
    class_id, code = create_class(teacher)
    student = Student(app.test_client())
    student.start(name="Slow", class_code=code)
    student.answer(1, "recompute")
    page = text(teacher.get(f"/teach/classes/{class_id}?count={count}"))
    assert "Not finished (1/8 answered)" in page
    assert "No completed attempts yet" in page
    [row] = rows(teacher.get(f"/teach/classes/{class_id}/gradebook.csv?count={count}"))
    assert {k: row[k] for k in ("student", "state", "attempts", "unfinished", "score")} == {
        "student": "Slow", "state": "not finished", "attempts": "0", "unfinished": "1",
        "score": "",
    }  # fmt: skip


def test_attempt_review_shows_answers_in_the_order_shown(app, teacher):
    """The instructor's review lists each question's choices as that student saw them."""
    class_id, code = create_class(teacher)
    student = take(app, "Ada", code, right={1, 2})
    with app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        quiz = current_bank().quizzes[SLUG]
        order = attempt.choice_order[quiz.questions[0].id]
    page = text(teacher.get(f"/teach/attempts/{student.token}"))
    assert "Scored <strong>2 out of 8</strong>" in page
    texts = [quiz.questions[0].choice(cid).text for cid in order]
    positions = [page.index(f'<span class="choice-text">{t}</span>') for t in texts]
    assert positions == sorted(positions)


def test_auto_refresh_is_off_by_default(teacher):
    """The class page refreshes itself only when asked to, with a plain meta refresh."""
    class_id, _ = create_class(teacher)
    assert "http-equiv" not in text(teacher.get(f"/teach/classes/{class_id}"))
    page = text(teacher.get(f"/teach/classes/{class_id}?refresh=on"))
    assert '<meta http-equiv="refresh" content="30">' in page
    assert "Stop refreshing" in page


def test_unassigned_attempts_show_to_admins_as_no_class(app):
    """Attempts started without a class code appear on the admin's "No class" page."""
    with app.app_context():
        create_instructor("boss", "boss password", is_admin=True)
    take(app, "Loner", "", right={1})
    admin = app.test_client()
    login(admin, "boss", "boss password")
    assert "Attempts without a class" in text(admin.get("/teach"))
    page = text(admin.get("/teach/no-class"))
    assert "Loner" in page and "1/8" in page
    assert rows(admin.get("/teach/no-class/responses.csv"))[0]["class"] == "No class"


def test_only_admins_get_a_way_to_the_lms_page_in_the_header(app, teacher):
    """Admins found /lti/admin only by its address: the header now leads there, for them."""
    with app.app_context():
        create_instructor("boss", "boss password", is_admin=True)
    admin = app.test_client()
    login(admin, "boss", "boss password")
    link = '<a href="/lti/admin">LMS connections</a>'
    assert link in text(admin.get("/teach"))
    assert link not in text(teacher.get("/teach"))


def test_exports_have_the_promised_columns(app, teacher):
    """Gradebook, responses and item statistics have the columns a gradebook import needs."""
    class_id, code = create_class(teacher)
    take(app, "Ada", code, right={1, 2, 3})
    base = f"/teach/classes/{class_id}"
    gradebook = rows(teacher.get(f"{base}/gradebook.csv"))
    # The header comes first, as every gradebook import and spreadsheet expects.
    assert gradebook == [
        {"student": "Ada", "student_id": "", "email": "", "state": "finished", "attempts": "1",
         "unfinished": "0", "score": "3", "max_score": "8", "percent": "37.5",
         "counted": "first-attempt"}
    ]  # fmt: skip
    responses = rows(teacher.get(f"{base}/responses.csv"))
    assert len(responses) == 8
    first = responses[0]
    assert {k: first[k] for k in ("student", "class", "attempt", "question", "correct")} == {
        "student": "Ada", "class": "Physics 101", "attempt": "1", "question": "the-trade",
        "correct": "true",
    }  # fmt: skip
    # The form spreadsheets read as a date and time, in UTC as the column says.
    answered = datetime.strptime(first["answered_at_utc"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - answered) < timedelta(minutes=5)
    items = rows(teacher.get(f"{base}/items.csv"))
    assert [item["question"] for item in items][:2] == ["the-trade", "why-activations-are-stored"]
    assert items[0]["n"] == "1" and items[0]["facility"] == "1"
    # Choices by their text, as the instructor wrote them, not their ids.
    assert (
        items[0]["choice_1"] == "Extra compute (recomputation) for lower memory use"
        and items[0]["choice_1_count"] == "1"
    )
    assert items[0]["right_choice"] == items[0]["choice_1"]
    response = teacher.get(f"{base}/gradebook.csv")
    assert response.headers["Content-Disposition"] == (
        'attachment; filename="Physics-101-gradient-checkpointing-gradebook-first-attempt.csv"; '
        "filename*=UTF-8''Physics%20101-gradient-checkpointing-gradebook-first-attempt.csv"
    )


@pytest.mark.parametrize("name", ['=HYPERLINK("http://evil")', "+1", "-2+3", "@SUM(A1)"])
def test_exports_neutralise_formulas(app, teacher, name):
    """A name a spreadsheet would run as a formula is exported as plain text."""
    class_id, code = create_class(teacher)
    take(app, name, code, right={1})
    for kind in ("gradebook", "responses"):
        [row] = rows(teacher.get(f"/teach/classes/{class_id}/{kind}.csv"))[:1]
        assert row["student"] == "'" + name


def test_export_names_keep_accents_and_lose_path_tricks(app, teacher):
    """A class called "../Année" downloads as Année, with an ASCII fallback and no path."""
    class_id, _ = create_class(teacher, name="../Année")
    disposition = teacher.get(f"/teach/classes/{class_id}/items.csv").headers["Content-Disposition"]
    assert 'filename="Ann-e-gradient-checkpointing-items.csv"' in disposition
    assert "filename*=UTF-8''Ann%C3%A9e-gradient-checkpointing-items.csv" in disposition


def test_exports_round_trip_commas_quotes_and_newlines(app, teacher):
    """Names with commas, quotes and line breaks come back exactly."""
    class_id, code = create_class(teacher, name='Year 9, "B"')
    take(app, 'Smith, "Jo"', code, right={1})
    with app.app_context():  # the forms fold line breaks away; older data may still hold them
        db.session.get(Class, class_id).name = 'Year 9, "B"\nset'
        db.session.commit()
    row = rows(teacher.get(f"/teach/classes/{class_id}/responses.csv"))[0]
    assert row["student"] == 'Smith, "Jo"' and row["class"] == 'Year 9, "B"\nset'


@pytest.mark.parametrize("kind", ["", "/gradebook.csv", "/responses.csv", "/items.csv"])
def test_class_pages_cost_the_same_queries_for_10_and_500_students(app, teacher, kind):
    """The database does the counting: class size does not change the number of queries."""
    class_id, _ = create_class(teacher)

    def counted_queries(students):
        seed(app, class_id, students)
        with queries(app) as statements:
            assert teacher.get(f"/teach/classes/{class_id}{kind}").status_code == 200
        return len(statements)

    small = counted_queries(10)
    # The class page also reads its voided attempts, the roster to list who has not started,
    # the grades passed back to an LMS and whether another class holds the quiz's key; each
    # reads the quizzes the instructor may use.
    assert counted_queries(490) == small <= (11 if kind == "" else 8)


def test_the_student_table_comes_a_page_at_a_time(app, teacher):
    """Forty rows a page, by name, every student on exactly one page; the page's weight does
    not grow with the class (issue 32: 500 students were 218 KB). A number past the last page
    leads to the last (the class shrank under a refreshing page); one that is no number is
    refused, with a way back to the class."""
    class_id, _ = create_class(teacher)
    seed(app, class_id, 100)
    url = f"/teach/classes/{class_id}"

    def names(page):
        return re.findall(r'<th scope="row">(Student \d+)</th>', page)

    pages = [text(teacher.get(url, query_string={"page": n})) for n in (1, 2, 3)]
    assert names(pages[0]) == names(text(teacher.get(url)))  # the first without a page
    assert [len(names(page)) for page in pages] == [40, 40, 20]
    everyone = [name for page in pages for name in names(page)]
    assert sorted(everyone) == sorted(f"Student {n}" for n in range(100))
    assert everyone == sorted(everyone)  # "Student 1", "Student 10", ... by name across pages
    # Said above the table and again with the links under it.
    assert pages[1].count("Students 41–80 of 100, by name") == 2
    nav = re.search(r'<nav class="table-pages".*?</nav>', pages[1], re.S).group(0)
    assert re.findall(r"page=(\d)[^\"]*#students-heading", nav) == ["1", "1", "2", "3", "3"]
    assert 'aria-current="page"><span class="visually-hidden">Page </span>2</a>' in nav
    assert 'rel="prev"' in nav and 'rel="next"' in nav
    assert 'rel="prev"' not in pages[0] and 'rel="next"' not in pages[2]

    # Refreshing keeps its page, and paging keeps the refresh.
    refreshing = text(teacher.get(url, query_string={"page": 2, "refresh": "on"}))
    assert re.search(r'href="[^"]*page=2[^"]*">Stop refreshing', refreshing)
    following = re.search(r'href="([^"]+)" rel="next"', refreshing).group(1)
    assert "page=3" in following and "refresh=on" in following

    for past in ("4", "0004", "9" * 5000):
        shrunk = teacher.get(url, query_string={"page": past, "refresh": "on", "count": "all"})
        assert shrunk.status_code == 303
        assert parse_qs(urlsplit(shrunk.location).query) == {
            "page": ["3"], "refresh": ["on"], "count": ["all"]
        }
    for wrong in ("0", "-1", "+2", " 2", "two", "", "1e3", "٣", "２"):
        refused = teacher.get(url, query_string={"page": wrong})
        assert refused.status_code == 400, wrong
        assert "Pages of the student table are numbered from 1." in text(refused)
        assert f'<a href="{url}">Back to the class</a>' in text(refused)

    seed(app, class_id, 100)  # twice the class: the page weighs what it did, give or take a link
    doubled = text(teacher.get(url))
    assert len(names(doubled)) == 40 and "Students 1–40 of 200, by name" in doubled
    assert abs(len(doubled) - len(pages[0])) < 600

    seed(app, class_id, 1)  # a last page of one row; counting all, a row is an attempt
    assert "Student 201 of 201, by name" in text(teacher.get(url, query_string={"page": 6}))
    every = text(teacher.get(url, query_string={"count": "all"}))
    assert "Rows 1–40 of 201 (a row for each attempt), by name" in every


def way_back(client, review: str) -> str:
    """Where a page's link back to the class page's table leads."""
    found = re.search(r'<p class="quiz-name">\s*<a href="([^"]+)"', text(client.get(review)))
    return html.unescape(found.group(1))


def test_a_review_leads_back_to_the_page_and_counting_it_came_from(app, teacher):
    """Going through the reviews on page 2 counting the latest attempt, refreshing, the way back
    is to page 2 counted so and still refreshing, not to the first page; what is not a counting,
    a page or the refresh is left out."""
    class_id, _ = create_class(teacher)
    seed(app, class_id, 100)
    url = f"/teach/classes/{class_id}"
    page = text(teacher.get(url, query_string={"page": 2, "count": "latest", "refresh": "on"}))
    review = html.unescape(re.search(r'href="(/teach/attempts/[^"]+)">Attempt 1', page).group(1))
    assert parse_qs(urlsplit(review).query) == {
        "count": ["latest"], "page": ["2"], "refresh": ["on"]
    }

    back = urlsplit(way_back(teacher, review))
    assert back.path == url and back.fragment == "students-heading"
    assert parse_qs(back.query) == {
        "quiz": [SLUG], "count": ["latest"], "page": ["2"], "refresh": ["on"]
    }
    plain = urlsplit(review).path
    for junk in ("count=evil&page=٣", "page=0", "count=&page=-2&refresh=off", ""):
        back = urlsplit(way_back(teacher, f"{plain}?{junk}"))
        assert (back.path, back.query, back.fragment) == (url, f"quiz={SLUG}", ""), junk


def test_voiding_restoring_and_marking_keep_the_way_back_to_the_page(app, teacher):
    """From a review opened on page 2 counting the latest attempt: its measurement's page,
    voiding it (asked, then confirmed), the class page's list of voided attempts, restoring it,
    and giving it a score by hand and taking it back each lead to a page whose way back is still
    page 2 counted so."""
    class_id, _ = create_class(teacher)
    seed(app, class_id, 100)
    page_url = f"/teach/classes/{class_id}?page=2&count=latest"
    page = text(teacher.get(page_url))
    review = html.unescape(re.search(r'href="(/teach/attempts/[^"]+)">Attempt 1', page).group(1))
    came_from = {"count": ["latest"], "page": ["2"]}

    def kept(address):
        asked = parse_qs(urlsplit(address).query)
        assert {key: asked.get(key) for key in came_from} == came_from, address
        return address

    def sent(shown, ending, **fields):
        """Send the form of the page shown that goes to `ending`, as its button would."""
        action = re.search(rf'<form method="post" action="([^"]*/{ending}\?[^"]*)"', shown)
        return teacher.post(
            kept(html.unescape(action.group(1))), data={"csrf_token": form_token(teacher), **fields}
        )

    opened = text(teacher.get(review))
    measured = re.search(r'<a href="/evidence/[^"?]+\?back=([^"]+)">What we measured', opened)
    kept(unquote(html.unescape(measured.group(1))))  # and back from what the review links
    asked = sent(opened, "void")
    kept(html.unescape(re.search(r'href="([^"]+)">Keep it counting', text(asked)).group(1)))
    voided = sent(text(asked), "void", confirm="yes")
    assert voided.status_code == 303
    assert "/teach/classes/" in kept(way_back(teacher, kept(voided.location)))
    listed = re.search(r'<li><a href="([^"]+)">[^<]+</a>: voided by', text(teacher.get(page_url)))
    kept(html.unescape(listed.group(1)))  # the class page's list of voided attempts
    restored = sent(text(teacher.get(voided.location)), "restore")
    assert restored.status_code == 303 and kept(restored.location)
    marks = re.search(r'href="([^"]+/marks\?[^"]+)"', text(teacher.get(restored.location)))
    marked = sent(text(teacher.get(kept(html.unescape(marks.group(1))))), "override", points="1")
    assert marked.status_code == 303 and "#score" in kept(marked.location)
    assert urlsplit(kept(way_back(teacher, marked.location))).path == urlsplit(review).path
    undone = sent(text(teacher.get(marked.location)), "override/undo")
    assert undone.status_code == 303 and kept(undone.location)


@pytest.mark.parametrize(
    "number, count, links",
    [
        (1, 1, [1]),
        (3, 9, [1, 2, 3, 4, 5, 6, 7, 8, 9]),
        (1, 20, [1, 2, 3, None, 20]),
        (4, 20, [1, 2, 3, 4, 5, 6, None, 20]),
        (5, 11, [1, 2, 3, 4, 5, 6, 7, None, 11]),  # page 2 itself where "…" would stand for it
        (10, 20, [1, None, 8, 9, 10, 11, 12, None, 20]),
        (20, 250, [1, None, 18, 19, 20, 21, 22, None, 250]),
        (248, 250, [1, None, 246, 247, 248, 249, 250]),
        (250, 250, [1, None, 248, 249, 250]),
    ],
)
def test_page_links_name_the_first_the_last_and_those_near(number, count, links):
    """Every page while there are few; else the ends and two each side of the current one."""
    assert TablePage([None] * count * ROWS_A_PAGE, number).links == links


def test_the_class_page_finds_voided_attempts_without_reading_every_attempt(app, teacher):
    """The list of voided attempts reads an index of them alone: it read every attempt of the
    class to find the few voided, 5 ms of each view at 12,500 attempts (issue 32)."""
    class_id, _ = create_class(teacher)
    seed(app, class_id, 3)
    sent = []
    with app.app_context():
        engine = db.engine

    def record(_connection, _cursor, statement, parameters, *_):
        if "voided_at IS NOT NULL" in statement:
            sent.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    try:
        assert teacher.get(f"/teach/classes/{class_id}").status_code == 200
    finally:
        event.remove(engine, "before_cursor_execute", record)
    [(statement, parameters)] = sent
    assert "attempts.class_id = " in statement  # the index's column, under its condition
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            plan = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
            assert "ix_attempts_voided" in str(plan.all())
        else:  # PostgreSQL's planner picks by the statistics of a few rows: the index is there
            index = connection.exec_driver_sql(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_attempts_voided'"
                " AND schemaname = current_schema()"  # the tests' schema, of several
            ).scalar_one()
            assert "(class_id) WHERE (voided_at IS NOT NULL)" in index


def seed(app, class_id, students):
    """Add completed attempts in bulk, through the statements answering runs."""
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        start = db.session.scalar(db.select(db.func.count(Attempt.id)))
        numbers = range(start, start + students)
        picks = [
            [
                question.choices[(n + j) % len(question.choices)].id
                for j, question in enumerate(quiz.questions)
            ]
            for n in numbers
        ]
        factories.attempts(quiz, picks, names=[f"Student {n}" for n in numbers], class_id=class_id)


def test_times_are_marked_up_for_the_readers_time_zone(app, teacher):
    """Start times in words in the page's one zone (UTC until one is known), labelled, inside a
    <time> that the page's script can restate in the browser's."""
    class_id, code = create_class(teacher)
    started = take(app, "Ada", code, right={1})
    with app.app_context():
        moment = db.session.scalars(db.select(Attempt.started_at)).one().replace(tzinfo=UTC)
    year = "" if moment.year == datetime.now(UTC).year else f" {moment.year}"
    stamp = (
        f'<time datetime="{moment:%Y-%m-%dT%H:%MZ}" data-zone="UTC">'
        f"{moment:%a %-d %b}{year}, {moment:%H:%M} UTC</time>"
    )
    assert stamp in text(teacher.get(f"/teach/classes/{class_id}"))
    assert stamp in text(teacher.get(f"/teach/attempts/{started.token}"))
    assert '<script src="/static/local-time.js" defer></script>' in text(teacher.get("/teach"))


@pytest.mark.parametrize("questions", [2, 8, 30])
def test_score_histogram_has_a_fixed_size_for_any_quiz(tmp_path, questions):
    """Each score gets 34 CSS px and the chart 150 px of height, whatever the quiz's length."""
    bank = json.loads((PROJECT_ROOT / "questions.json").read_text())
    first = {k: v for k, v in bank["quizzes"][0]["questions"][0].items() if k != "evidence"}
    bank["quizzes"][0]["questions"] = [{**first, "id": f"q{n}"} for n in range(questions)]
    path = tmp_path / "short.json"
    path.write_text(json.dumps(bank))
    short = make_app(tmp_path, QUESTIONS_PATH=str(path))
    with short.app_context():
        create_instructor("teacher", "correct horse")
    client = short.test_client()
    login(client, "teacher", "correct horse")
    class_id, code = create_class(client)
    take(short, "Ada", code, right={1})
    page = text(client.get(f"/teach/classes/{class_id}"))
    width = (questions + 1) * 34 + 10
    assert f'<svg class="histogram" width="{width}" height="150" viewBox="0 0 {width} 150"' in page


@pytest.mark.parametrize("count", ["first", "all"])
def test_the_class_page_runs_no_query_while_its_template_renders(app, teacher, count):
    """The report is fetched before rendering: a figure the template asks for costs no query."""
    class_id, code = create_class(teacher)
    take(app, "Ada", code, right={1, 2})
    take(app, "Grace", code, right={3})
    rendering = []

    def started(_app, template, **_):
        if template.name == "teach/class.html":
            rendering.append(len(statements))

    def finished(_app, template, **_):
        if template.name == "teach/class.html":
            rendering.append(len(statements))

    with (
        queries(app) as statements,
        before_render_template.connected_to(started, app),
        template_rendered.connected_to(finished, app),
    ):
        page = text(teacher.get(f"/teach/classes/{class_id}?count={count}"))
    assert "Cronbach’s alpha" in page and "Grace" in page
    assert len(rendering) == 2 and statements
    assert rendering[1] == rendering[0], statements[rendering[0] :]
