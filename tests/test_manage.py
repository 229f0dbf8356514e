"""Managing a class: rename, new join code, archive and restore, delete, void and restore
attempts, merge students, and sharing with other instructors."""

import re
import threading

import factories
import pytest

from app.attempts.service import new_attempt, record_version
from app.extensions import db
from app.models import (
    Answer,
    Assignment,
    Attempt,
    Class,
    ClassShare,
    Instructor,
    MergedStudent,
    Role,
    RosterStudent,
    now,
)
from app.question_types import right_choice
from app.served import current_bank

from helpers import (
    SLUG,
    Student,
    form_token,
    gradebook_rows,
    login,
    queries,
    shown,
    stored_rows,
    text,
)

pytestmark = pytest.mark.postgres


@pytest.fixture
def owner(app):
    """The logged-in browser of the instructor who owns "Physics 101"."""
    with app.app_context():
        factories.instructor("owner", "owner password")
    client = app.test_client()
    assert login(client, "owner", "owner password").status_code == 303
    return client


@pytest.fixture
def class_id(app, owner):
    with app.app_context():
        current_bank()  # published at its first use: before any snapshot of the tables
        teacher = db.session.scalar(db.select(Instructor).filter_by(username="owner"))
        return factories.class_(teacher, "Physics 101", join_code="PHYS11").id


def post(client, url, **fields):
    """Send a form from a logged-in instructor's browser, CSRF token included."""
    return client.post(url, data={"csrf_token": form_token(client), **fields})


def take(app, name, code="PHYS11", right=(1, 2, 3)):
    """A student starts in the class by its code and answers every question."""
    student = Student(app.test_client())
    assert student.start(name=name, class_code=code).status_code == 303
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    for number, question in enumerate(quiz.questions, 1):
        wrong = next(c for c in question.choices if not c.correct)
        student.answer(number, (right_choice(question) if number in right else wrong).id)
    return student


def gradebook(client, class_id):
    response = client.get(f"/teach/classes/{class_id}/gradebook.csv")
    assert response.status_code == 200
    return gradebook_rows(response)


def the_class(app, class_id):
    with app.app_context():
        return db.session.get(Class, class_id)


# Rename and join code


def test_rename_shows_the_new_name_everywhere_and_is_logged(app, owner, class_id, caplog):
    """A renamed class keeps its code and attempts; its page, list and files use the new name."""
    take(app, "Ada")
    response = post(owner, f"/teach/classes/{class_id}/rename", name="  Physics   102 ")
    assert response.status_code == 303
    assert "The class is now called Physics 102." in text(owner.get(response.location))
    assert "Physics 102" in text(owner.get("/teach"))
    assert "<h1>Physics 102</h1>" in text(owner.get(f"/teach/classes/{class_id}"))
    download = owner.get(f"/teach/classes/{class_id}/gradebook.csv")
    assert "Physics-102-" in download.headers["Content-Disposition"]
    assert the_class(app, class_id).join_code == "PHYS11"
    assert "renamed from 'Physics 101' to 'Physics 102'" in caplog.text


@pytest.mark.parametrize(
    ("name", "message"),
    [("   ", "Give the class a name."), ("x" * 101, "Use at most 100 characters.")],
)
def test_a_bad_new_name_is_refused_next_to_its_field(app, owner, class_id, name, message):
    """An empty or overlong name: 400, the message by the field, and the name unchanged."""
    before = stored_rows(app)
    response = post(owner, f"/teach/classes/{class_id}/rename", name=name)
    assert response.status_code == 400
    page = text(response)
    assert f'<p class="error" id="name-error">{message}</p>' in page
    assert 'aria-invalid="true"' in page
    assert stored_rows(app) == before


def test_a_new_join_code_stops_the_old_code_and_link_at_once(app, owner, class_id, caplog):
    """After "New join code" the old code is refused in the start form and its link is a 404."""
    response = post(owner, f"/teach/classes/{class_id}/join-code")
    assert response.status_code == 303
    code = the_class(app, class_id).join_code
    assert code != "PHYS11" and len(code) == 6
    assert f"The new join code is {code}" in text(owner.get(response.location))

    late = Student(app.test_client())
    refused = late.start(name="Ada", class_code="PHYS11")
    assert refused.status_code == 400
    assert "No class has the code “PHYS11”" in text(refused)
    assert late.client.get("/join/PHYS11").status_code == 404
    assert late.client.get(f"/join/{code}").status_code == 302
    assert late.start(name="Ada", class_code=code).status_code == 303
    assert f"join code PHYS11 replaced by {code}" in caplog.text


# Archive, restore and delete


def test_archived_class_is_hidden_read_only_and_closed_to_students(app, owner, class_id):
    """Archiving hides the class under "Show archived classes", refuses changes with a 409 and
    stops its join link and code; "Restore class" undoes all of it."""
    ada = take(app, "Ada")
    assert "Show archived classes" not in text(owner.get("/teach"))  # there is none to show
    response = post(owner, f"/teach/classes/{class_id}/archive")
    assert (response.status_code, response.location) == (303, "/teach")
    assert "Physics 101 is archived: read-only" in text(owner.get("/teach"))
    listed = text(owner.get("/teach"))
    assert "Physics 101" not in listed and "Show archived classes" in listed
    archived = text(owner.get("/teach?archived=on"))
    assert "<h1>Archived classes</h1>" in archived and "Physics 101" in archived
    page = text(owner.get(f"/teach/classes/{class_id}"))
    assert "This class is archived" in page and "Restore class" in page
    assert "Close class" not in page
    assert "Ada" in page  # read-only, not emptied

    before = stored_rows(app)
    refused = post(owner, f"/teach/classes/{class_id}/rename", name="Renamed")
    assert refused.status_code == 409
    assert "Physics 101 is archived, so it is read-only" in text(refused)
    assert post(owner, f"/teach/attempts/{ada.token}/void", confirm="yes").status_code == 409
    assert stored_rows(app) == before

    student = Student(app.test_client())
    gone = student.client.get("/join/PHYS11")
    assert gone.status_code == 410
    assert "Physics 101 has ended: its instructor archived it" in text(gone)
    typed = student.start(name="Bo", class_code="PHYS11")
    assert typed.status_code == 400
    assert "Physics 101 has ended" in text(typed)
    assert ada.post(f"/attempts/{ada.token}/retake").status_code == 403
    assert stored_rows(app) == before

    restored = post(owner, f"/teach/classes/{class_id}/restore")
    assert (restored.status_code, restored.location) == (303, f"/teach/classes/{class_id}")
    assert "Physics 101" in text(owner.get("/teach"))
    assert student.start(name="Bo", class_code="PHYS11").status_code == 303


def test_delete_asks_for_the_name_then_removes_the_class_and_its_attempts(
    app, owner, class_id, caplog
):
    """A wrong name deletes nothing; the right one removes the class, its attempts, answers,
    shares and merges, and leaves other classes' attempts alone."""
    take(app, "Ada")
    take(app, "Bo")
    loose = take(app, "Grace", code="")
    with app.app_context():
        factories.share(db.session.get(Class, class_id), factories.instructor("vera", "pw pw pw"))
    assert (
        post(owner, f"/teach/classes/{class_id}/merge", first="ada", second="bo").status_code == 303
    )

    before = stored_rows(app)
    manage = owner.get(f"/teach/classes/{class_id}/manage").get_data(as_text=True)
    assert re.search(r'<input class="button danger"[^>]*value="Delete class', manage)
    wrong = post(owner, f"/teach/classes/{class_id}/delete", confirm="Physics")
    assert wrong.status_code == 400
    assert "Type “Physics 101” exactly to delete this class." in text(wrong)
    assert stored_rows(app) == before

    response = post(owner, f"/teach/classes/{class_id}/delete", confirm="Physics 101")
    assert (response.status_code, response.location) == (303, "/teach")
    assert "Physics 101 is deleted, with its 2 attempts." in text(owner.get("/teach"))
    with app.app_context():
        assert db.session.get(Class, class_id) is None
        assert [a.student_name for a in db.session.scalars(db.select(Attempt))] == ["Grace"]
        left = db.session.scalars(db.select(Answer.attempt_id)).all()
        quiz = current_bank().quizzes[SLUG]
        assert left == [db.session.scalar(db.select(Attempt.id))] * len(quiz.questions)
        for model in (ClassShare, MergedStudent):
            assert db.session.scalars(db.select(model)).all() == []
    assert owner.get(f"/teach/classes/{class_id}").status_code == 404
    assert app.test_client().get(loose.results_url).status_code == 200
    assert "'Physics 101' deleted with 2 attempts" in caplog.text


def test_an_archived_class_can_still_be_deleted(app, owner, class_id):
    """Archive first, delete later: the manage page of an archived class offers both."""
    post(owner, f"/teach/classes/{class_id}/archive")
    page = text(owner.get(f"/teach/classes/{class_id}/manage"))
    assert "Restore class" in page and "Delete class" in page and "Rename class" not in page
    response = post(owner, f"/teach/classes/{class_id}/delete", confirm="Physics 101")
    assert response.status_code == 303
    assert the_class(app, class_id) is None


# Void and restore attempts


def test_a_voided_attempt_leaves_every_number_and_can_be_restored(app, owner, class_id):
    """Void: out of the summary, students table and gradebook, listed as voided with who and
    when, marked on its review; restore: back as it was."""
    take(app, "Ada", right=(1, 2, 3))
    junk = take(app, "asdf", right=())
    page = text(owner.get(f"/teach/classes/{class_id}"))
    assert "<dt>Students</dt><dd>2</dd>" in page

    # The first press asks, and changes nothing; the confirmation voids.
    before = stored_rows(app)
    asked = post(owner, f"/teach/attempts/{junk.token}/void")
    assert asked.status_code == 200 and "Void asdf’s attempt?" in text(asked)
    assert stored_rows(app) == before
    response = post(owner, f"/teach/attempts/{junk.token}/void", confirm="yes")
    assert (response.status_code, response.location) == (303, f"/teach/attempts/{junk.token}")
    review = text(owner.get(response.location))
    assert "Voided by owner" in review and "Restore attempt" in review
    assert "Void attempt" not in review
    page = text(owner.get(f"/teach/classes/{class_id}"))
    assert "<dt>Students</dt><dd>1</dd>" in page
    assert "<dt>Attempts started</dt><dd>1</dd>" in page
    assert "Voided attempts" in page and "asdf</a>: voided by owner on" in page
    assert [row["student"] for row in gradebook(owner, class_id)] == ["Ada"]
    responses = owner.get(f"/teach/classes/{class_id}/responses.csv").get_data(as_text=True)
    assert "asdf" not in responses
    assert '<td class="num">1</td>' in text(owner.get("/teach"))  # the class list's count

    restored = post(owner, f"/teach/attempts/{junk.token}/restore")
    assert restored.status_code == 303
    assert "Voided by" not in text(owner.get(restored.location))
    assert sorted(row["student"] for row in gradebook(owner, class_id)) == ["Ada", "asdf"]
    assert "Voided attempts" not in text(owner.get(f"/teach/classes/{class_id}"))


def seated(app, class_id, allowed, names):
    """An assignment allowing `allowed` attempts, and an attempt by each name on the next free
    seat, as a start under the assignment takes one."""
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        assignment = Assignment(class_id=class_id, quiz_slug=SLUG, attempts_allowed=allowed)
        db.session.add(assignment)
        version = record_version(quiz)
        tokens, seats = [], {}
        for name in names:
            attempt = new_attempt(quiz, version, name, "seat", class_id, assignment=assignment)
            seats[attempt.student_key] = seats.get(attempt.student_key, 0) + 1
            attempt.seat = seats[attempt.student_key]
            db.session.add(attempt)
            tokens.append(attempt)
        db.session.commit()
        return [attempt.token for attempt in tokens]


def seats(app):
    with app.app_context():
        return {
            a.token: (a.seat, a.voided_at is not None)
            for a in db.session.scalars(db.select(Attempt))
        }


def test_voiding_frees_the_seat_and_restore_is_refused_when_none_is_left(app, owner, class_id):
    """With one attempt allowed, a voided attempt's seat goes to the retake; restoring the
    voided one is then refused with a message, and it stays voided."""
    [first] = seated(app, class_id, 1, ["Ada"])
    assert post(owner, f"/teach/attempts/{first}/void", confirm="yes").status_code == 303
    assert seats(app)[first] == (None, True)
    with app.app_context():
        assignment = db.session.scalar(db.select(Assignment))
        quiz = current_bank().quizzes[SLUG]
        retake = new_attempt(
            quiz, record_version(quiz), "Ada", "seat", class_id, assignment=assignment
        )
        retake.seat = 1
        db.session.add(retake)
        db.session.commit()
        retake_token = retake.token

    before = stored_rows(app)
    refused = post(owner, f"/teach/attempts/{first}/restore")
    assert refused.status_code == 409
    assert "Ada has used every attempt this assignment allows" in text(refused)
    assert stored_rows(app) == before

    assert post(owner, f"/teach/attempts/{retake_token}/void", confirm="yes").status_code == 303
    assert post(owner, f"/teach/attempts/{first}/restore").status_code == 303
    assert seats(app) == {first: (1, False), retake_token: (None, True)}


def test_restores_racing_for_the_last_seat_restore_exactly_one(app, owner, class_id):
    """Ten voided attempts of one student, two seats, one taken: ten restores released together
    restore exactly one, and the others are refused."""
    tokens = seated(app, class_id, 2, ["Ada"])
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        assignment = db.session.scalar(db.select(Assignment))
        version = record_version(quiz)
        voided = []
        for _ in range(10):
            attempt = new_attempt(quiz, version, "Ada", "seat", class_id, assignment=assignment)
            attempt.voided_at = now()
            db.session.add(attempt)
            voided.append(attempt)
        db.session.commit()
        voided = [attempt.token for attempt in voided]
    csrf = form_token(owner)
    cookie = owner.get_cookie("session").value
    barrier = threading.Barrier(10)
    statuses = []

    def restore(token):
        tab = app.test_client()
        tab.set_cookie("session", cookie)
        barrier.wait()
        statuses.append(
            tab.post(f"/teach/attempts/{token}/restore", data={"csrf_token": csrf}).status_code
        )

    threads = [threading.Thread(target=restore, args=(token,)) for token in voided]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [303] + [409] * 9
    taken = seats(app)
    assert taken[tokens[0]] == (1, False)
    assert sorted((taken[token] for token in voided), key=repr) == [(2, False)] + [(None, True)] * 9


# Merge students


def test_merged_students_appear_once_under_the_first_spelling_everywhere(app, owner, class_id):
    """ "Dana Diaz" then "Dana Dias": after the merge, one student with two attempts on the page
    and in every CSV, and a later start as "Dana Dias" counts for Dana Diaz too."""
    take(app, "Dana Diaz", right=(1,))
    take(app, "Bo")
    take(app, "Dana Dias", right=(1, 2, 3))
    page = text(owner.get(f"/teach/classes/{class_id}/manage"))
    assert '<option value="dana dias">Dana Dias (typed name)</option>' in page

    response = post(
        owner, f"/teach/classes/{class_id}/merge", first="dana dias", second="dana diaz"
    )
    assert response.status_code == 303
    assert "Dana Dias now counts as Dana Diaz: 1 attempt moved." in text(
        owner.get(response.location)
    )
    take(app, "dana  DIAS", right=())

    page = text(owner.get(f"/teach/classes/{class_id}?count=best"))
    assert "<dt>Students</dt><dd>2</dd>" in page and "Dana Dias" not in page
    book = gradebook(owner, class_id)
    assert [(row["student"], row["attempts"]) for row in book] == [("Bo", "1"), ("Dana Diaz", "3")]
    for kind in ("responses", "gradebook"):
        download = owner.get(f"/teach/classes/{class_id}/{kind}.csv").get_data(as_text=True)
        assert "Dana Dias" not in download and "dana  DIAS" not in download
    with app.app_context():
        names = {a.student_name for a in db.session.scalars(db.select(Attempt))}
    assert names == {"Dana Diaz", "Bo"}


def test_merging_again_follows_earlier_merges(app, owner, class_id):
    """B merged into A, then A into an earlier C: a later start as B counts for C."""
    take(app, "Cy")
    take(app, "Al")
    take(app, "Bea")
    post(owner, f"/teach/classes/{class_id}/merge", first="bea", second="al")
    post(owner, f"/teach/classes/{class_id}/merge", first="al", second="cy")
    take(app, "Bea")
    with app.app_context():
        assert {a.student_name for a in db.session.scalars(db.select(Attempt))} == {"Cy"}
        merged = {(m.student_key, m.into_key) for m in db.session.scalars(db.select(MergedStudent))}
    assert merged == {("bea", "cy"), ("al", "cy")}


def test_merging_into_a_roster_student_keeps_the_roster_spelling(app, owner, class_id):
    """A typed name merged with a roster student takes the roster's name and key."""
    take(app, "Dana D")
    with app.app_context():
        roster = RosterStudent(class_id=class_id, name="Dana Diaz", sign_in_code="ABCDEFGH")
        db.session.add(roster)
        db.session.commit()
        key = roster.student_key
    response = post(owner, f"/teach/classes/{class_id}/merge", first="dana d", second=key)
    assert response.status_code == 303
    with app.app_context():
        [attempt] = db.session.scalars(db.select(Attempt))
        assert (attempt.student_name, attempt.student_key) == ("Dana Diaz", key)
        assert attempt.roster_student_id == int(key.rsplit(":", 1)[1])


@pytest.mark.parametrize(
    ("first", "second", "field", "message"),
    [
        ("ada", "ada", "second", "Choose two different students."),
        ("", "ada", "first", "Choose a student from the list."),
        ("ada", "nobody", "second", "Choose a student from the list."),
    ],
)
def test_a_bad_merge_is_refused_next_to_its_field(
    app, owner, class_id, first, second, field, message
):
    """The same student twice, or one not in the class: 400, the message by the field."""
    take(app, "Ada")
    take(app, "Bo")
    before = stored_rows(app)
    response = post(owner, f"/teach/classes/{class_id}/merge", first=first, second=second)
    assert response.status_code == 400
    assert f'<p class="error" id="{field}-error">{message}</p>' in text(response)
    assert stored_rows(app) == before


def test_merging_keeps_each_assignment_seat_taken_once(app, owner, class_id):
    """Two spellings each with their one allowed attempt: merged, one keeps the seat and the
    student has no attempt left."""
    first, second = seated(app, class_id, 1, ["Ada", "Ada L"])
    assert (
        post(owner, f"/teach/classes/{class_id}/merge", first="ada", second="ada l").status_code
        == 303
    )
    assert sorted(seats(app).values(), key=repr) == [(1, False), (None, False)]
    assert seats(app)[first] == (1, False)


# Sharing


def test_sharing_lets_a_viewer_see_and_a_manager_change(app, owner, class_id, caplog):
    """Shared to view: listed as "Shared by owner", pages and files open, changes refused.
    Upgraded to manage: changes work. Stopped: the class is gone from their list."""
    ada = take(app, "Ada")
    with app.app_context():
        factories.instructor("vera", "vera password")
    vera = app.test_client()
    assert login(vera, "vera", "vera password").status_code == 303

    response = post(owner, f"/teach/classes/{class_id}/shares", username=" Vera ", role="view")
    assert response.status_code == 303
    manage = text(owner.get(response.location))
    assert "vera can view Physics 101 now." in manage
    assert '<th scope="row">vera</th> <td>Can view</td>' in manage
    assert '<th scope="col">They can</th>' in manage and "<legend>They can</legend>" in manage
    assert "shared with 'vera': can view" in caplog.text

    assert "Shared by owner (can view)" in text(vera.get("/teach"))
    page = text(vera.get(f"/teach/classes/{class_id}"))
    assert "Shared with you by owner: you can view" in page
    assert "Manage class" not in page and "Close class" not in page
    assert vera.get(f"/teach/classes/{class_id}/gradebook.csv").status_code == 200
    review = text(vera.get(f"/teach/attempts/{ada.token}"))
    assert "Ada" in review and "Void attempt" not in review
    refused = post(vera, f"/teach/classes/{class_id}/rename", name="Mine now")
    assert refused.status_code == 403
    assert "Physics 101 is shared with you to view it, not to do this." in text(refused)

    post(owner, f"/teach/classes/{class_id}/shares", username="vera", role="manage")
    assert "Shared by owner (can manage)" in text(vera.get("/teach"))
    assert post(vera, f"/teach/classes/{class_id}/rename", name="Physics 102").status_code == 303
    assert post(vera, f"/teach/classes/{class_id}/archive").status_code == 403

    with app.app_context():
        vera_id = db.session.scalar(db.select(ClassShare.instructor_id))
    stopped = post(owner, f"/teach/classes/{class_id}/shares/stop", instructor=vera_id)
    assert stopped.status_code == 303
    assert "Physics 102 is no longer shared with vera." in text(owner.get(stopped.location))
    assert "Physics 102" not in text(vera.get("/teach"))
    assert vera.get(f"/teach/classes/{class_id}").status_code == 404


@pytest.mark.parametrize("role", [Role.VIEW, Role.MANAGE])
def test_a_viewer_is_offered_no_action_their_role_refuses(app, owner, class_id, role):
    """ "Can view" sees the class's assignments and roster, not the buttons that end in a 403;
    "Can manage" sees them all. A refusal leads back to the class."""
    with app.app_context():
        made = db.session.get(Class, class_id)
        factories.assignment(made, current_bank().quizzes[SLUG], feedback="after-close")
        factories.roster(class_id, "Dana Diaz, 1")
        factories.share(made, factories.instructor("vera", "vera password"), role)
    vera = app.test_client()
    assert login(vera, "vera", "vera password").status_code == 303
    page = text(vera.get(f"/teach/classes/{class_id}"))
    assert "Feedback: after the quiz closes" in page and "1 student sign in" in page
    # The bank holds one quiz, assigned above: a manager reads that, not "Assign a quiz".
    actions = ["Every quiz is assigned", "Add students", "Print sign-in codes", ">Edit<",
               ">Remove…<", ">Release feedback…<", "Close class"]  # fmt: skip
    for action in actions:
        assert (action in page) is (role is Role.MANAGE), action
    refused = post(vera, f"/teach/classes/{class_id}/archive")
    assert refused.status_code == 403
    assert f'<a href="/teach/classes/{class_id}">Back to the class</a>' in text(refused)
    assert "Back to the quizzes" not in text(refused)


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("", "Enter the username of the instructor to share with."),
        ("nobody", "No instructor here has the username “nobody”."),
        ("owner", "That is the class's owner, who has it already."),
    ],
)
def test_a_bad_share_is_refused_next_to_its_field(app, owner, class_id, username, message):
    """An empty, unknown or owner's username: 400 with the message by the field, nothing stored."""
    before = stored_rows(app)
    response = post(owner, f"/teach/classes/{class_id}/shares", username=username, role="view")
    assert response.status_code == 400
    assert f'<p class="error" id="username-error">{shown(message)}</p>' in text(response)
    assert stored_rows(app) == before


def test_sharing_with_a_disabled_instructor_is_refused(app, owner, class_id, runner):
    """A disabled account cannot log in, so a share with it is refused like an unknown name."""
    with app.app_context():
        factories.instructor("gone", "gone password")
    assert runner.invoke(args=["disable-instructor", "gone"]).exit_code == 0
    response = post(owner, f"/teach/classes/{class_id}/shares", username="gone", role="view")
    assert response.status_code == 400


def test_the_class_list_costs_the_same_queries_for_3_and_30_classes(app, owner):
    """Own and shared classes and their attempt counts come from a fixed number of queries."""
    with app.app_context():
        me = db.session.scalar(db.select(Instructor.id).filter_by(username="owner"))
        them = factories.instructor("them", "their password").id

    def counted(classes):
        with app.app_context():
            for n in range(classes):
                mine = factories.class_(db.session.get(Instructor, me), f"Mine {n}")
                theirs = factories.class_(db.session.get(Instructor, them), f"Theirs {n}")
                factories.share(theirs, db.session.get(Instructor, me), Role.MANAGE)
                factories.attempt(current_bank().quizzes[SLUG], "Ada", class_id=mine.id)
        with queries(app) as statements:
            assert owner.get("/teach").status_code == 200
        return len(statements)

    assert counted(3) == counted(27)


def test_the_manage_page_costs_the_same_queries_for_10_and_500_students(app, owner, class_id):
    """The merge lists come from a fixed number of queries, however many students there are."""

    def counted(students):
        with app.app_context():
            quiz = current_bank().quizzes[SLUG]
            start = db.session.scalar(db.select(db.func.count(Attempt.id)))
            names = [f"Student {n}" for n in range(start, start + students)]
            first = [quiz.questions[0].choices[0].id]
            factories.attempts(quiz, [first] * students, names=names, class_id=class_id)
        with queries(app) as statements:
            page = owner.get(f"/teach/classes/{class_id}/manage")
        assert page.status_code == 200
        return len(statements)

    assert counted(10) == counted(490)


def test_a_roster_class_offers_the_merges_that_can_succeed(app, owner, class_id):
    """Typed before the roster came: the typed name is offered to merge into a roster student,
    and never a roster student into another (which is always refused)."""
    take(app, "Dana Dias")
    with app.app_context():
        factories.roster(class_id, "Dana Diaz, 1\nEli Ek, 2")
    page = text(owner.get(f"/teach/classes/{class_id}/manage"))
    first = re.search(r'<select id="first" name="first">(.*?)</select>', page).group(1)
    assert re.findall(r"<option[^>]*>([^<]*)</option>", first) == [
        "Choose a typed name", "Dana Dias (typed name)",
    ]  # fmt: skip
    roster_key = re.search(r'<option value="([^"]+)">Dana Diaz \(roster\)</option>', page).group(1)
    merged = post(owner, f"/teach/classes/{class_id}/merge", first="dana dias", second=roster_key)
    assert merged.status_code == 303
    assert "Dana Dias now counts as Dana Diaz" in text(owner.get(merged.location))
    page = text(owner.get(f"/teach/classes/{class_id}/manage"))
    assert "Every student here is on the roster" in page and 'name="first"' not in page
