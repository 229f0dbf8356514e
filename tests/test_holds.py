"""What an attacker review of issue 15 found held feedback leaking through, and that it holds
now: attempts outside any class, reviews opening while classmates still answer, retakes past a
roster, removed assignments, control characters in the bank and sign-in codes in the log."""

import threading
from datetime import UTC, datetime, timedelta

import factories
import pytest

from app.attempts import policy
from app.extensions import db
from app.models import Assignment, Attempt, Class, FeedbackWhen, RosterStudent
from app.question_types import right_choice
from app.roster import remove_student
from app.served import current_bank
from app.teach.assignments import AlreadyAssigned, Settings, save_assignment

from helpers import SLUG, Student, form_token, login, queries, text

pytestmark = pytest.mark.postgres

CODE = "ABCDEF"
NOW = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
NEEDS_CODE = "Enter your class code: this quiz is being taken as an assignment."


@pytest.fixture
def class_id(app):
    with app.app_context():
        return factories.class_(factories.instructor(), join_code=CODE).id


def assign(app, class_id, **settings) -> int:
    with app.app_context():
        scope = db.session.get(Class, class_id)
        return factories.assignment(scope, current_bank().quizzes[SLUG], **settings).id


def stored_attempts(app) -> int:
    with app.app_context():
        return db.session.scalar(db.select(db.func.count(Attempt.id)))


def student(app) -> Student:
    return Student(app.test_client())


# --- 1. An attempt outside any class shows no key a class is holding back --------------------


@pytest.mark.parametrize(
    ("feedback", "closes_at", "released_at", "holds"),
    [
        (FeedbackWhen.EACH_ANSWER, None, None, False),
        (FeedbackWhen.AFTER_ATTEMPT, None, None, True),
        # Closed an hour ago: none of its attempts can still be answered, so nobody is helped.
        (FeedbackWhen.AFTER_ATTEMPT, NOW - HOUR, None, False),
        (FeedbackWhen.AFTER_ATTEMPT, None, NOW, False),
        (FeedbackWhen.AFTER_CLOSE, None, None, True),
        (FeedbackWhen.AFTER_CLOSE, NOW + HOUR, None, True),
        (FeedbackWhen.AFTER_CLOSE, NOW - HOUR, None, False),
        (FeedbackWhen.AFTER_CLOSE, NOW + HOUR, NOW, False),
    ],
)
def test_which_assignments_hold_the_key_back(feedback, closes_at, released_at, holds):
    """Held until released or none of its attempts can still be answered; after each answer
    nothing is held."""
    assert policy.holds_back_key(feedback, NOW, closes_at, released_at) is holds


@pytest.mark.parametrize("feedback", [FeedbackWhen.AFTER_CLOSE, FeedbackWhen.AFTER_ATTEMPT])
def test_a_start_without_a_class_code_is_refused_while_a_class_holds_feedback(
    app, class_id, feedback
):
    """The attacker's way to the key: no class code, any name. Refused at the field, nothing
    stored; the home page still lists the quiz."""
    assign(app, class_id, feedback=feedback, closes_at=datetime.now(UTC) + HOUR)
    eve = student(app)
    refused = eve.start(name="anyone")
    assert refused.status_code == 400
    assert NEEDS_CODE in text(refused)
    assert stored_attempts(app) == 0
    assert "Gradient Checkpointing" in text(eve.client.get("/"))
    assert eve.start(name="Eve", class_code=CODE).status_code == 303


def test_a_start_without_a_class_code_is_free_once_nothing_is_held(app, class_id):
    """Feedback after each answer, released, or past its close: the quiz is for anyone again."""
    assignment_id = assign(app, class_id, feedback=FeedbackWhen.AFTER_CLOSE)
    with app.app_context():
        db.session.get(Assignment, assignment_id).feedback_released_at = datetime.now(UTC)
        db.session.commit()
    assert student(app).start(name="anyone").status_code == 303


def test_a_class_assigning_with_feedback_after_each_answer_holds_nothing(app, class_id):
    """The seed's experience: an assignment that shows verdicts at once keeps the quiz open."""
    assign(app, class_id, attempts_allowed=1)
    assert student(app).start(name="anyone").status_code == 303


def test_an_attempt_outside_a_class_cannot_be_retaken_while_a_class_holds_feedback(app, class_id):
    """An attempt from before the assignment does not become a way round the start form."""
    eve = student(app)
    assert eve.start(name="anyone").status_code == 303
    assign(app, class_id, feedback=FeedbackWhen.AFTER_CLOSE)
    refused = eve.post(f"/attempts/{eve.token}/retake")
    assert refused.status_code == 403 and NEEDS_CODE in text(refused)
    assert stored_attempts(app) == 1


def test_the_hold_costs_one_query_on_the_quiz_index(app, class_id):
    """However many classes assign quizzes, a start outside a class asks once, by quiz."""
    assign(app, class_id, feedback=FeedbackWhen.AFTER_CLOSE)
    eve = student(app)
    eve.csrf  # noqa: B018 - the form's token, fetched before counting
    with queries(app) as statements:
        assert eve.start(name="anyone").status_code == 400
    asked = [sql for sql in statements if "FROM assignments" in sql]
    assert len(asked) == 1 and "assignments.quiz_slug = " in asked[0]
    with app.app_context():
        if db.engine.dialect.name == "sqlite":  # PostgreSQL plans by table size: few rows here
            explain = f"EXPLAIN QUERY PLAN {asked[0]}"
            plan = db.session.connection().exec_driver_sql(explain, (SLUG, None, "x")).all()
            assert "ix_assignments_quiz_slug" in str(plan)
            assert "ix_attempts_changing" in str(plan)  # an exam's open attempts, not them all


OTHER_CODE = "GHJKMN"
HELD_ELSEWHERE = "Another class is still taking this quiz with its feedback held back"


@pytest.fixture
def other_class(app):
    """A colleague's class, which the attacker knows the code of."""
    with app.app_context():
        return factories.class_(factories.instructor("carol"), "Chemistry", OTHER_CODE).id


def opening(explanation: str) -> str:
    """An explanation's first words, as a page shows them whatever it escapes later."""
    return " ".join(explanation.split()[:6])


def shows_the_key(app, eve, quiz) -> bool:
    """Whether anything of the key reached Eve's browser: a verdict, an explanation, a score."""
    pages = [eve.client.get(eve.question_url(1), follow_redirects=True)]
    for number, question in enumerate(quiz.questions, 1):
        pages.append(eve.answer(number, question.choices[0].id))
        pages.append(eve.client.get(eve.question_url(number), follow_redirects=True))
    pages.append(eve.client.get(eve.results_url))
    seen = " ".join(text(page) for page in pages)
    explanations = [opening(choice.explanation) for q in quiz.questions for choice in q.choices]
    return (
        "Correct" in seen
        or "Incorrect" in seen
        or "scored" in seen
        or any(explanation in seen for explanation in explanations)
    )


@pytest.mark.parametrize("colleague", ["assigns nothing", "feedback after each answer"])
@pytest.mark.parametrize("feedback", [FeedbackWhen.AFTER_CLOSE, FeedbackWhen.AFTER_ATTEMPT])
def test_another_class_shows_no_key_a_class_is_holding_back(
    app, class_id, other_class, colleague, feedback
):
    """Attacker repro: while class A holds the quiz's feedback, class C's join code (a class
    with no assignment, or one with feedback after each answer) shows no verdict, explanation
    or score; the student is told why, and every answer is saved."""
    assign(app, class_id, feedback=feedback, closes_at=datetime.now(UTC) + HOUR)
    if colleague == "feedback after each answer":
        assign(app, other_class, feedback=FeedbackWhen.EACH_ANSWER)
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    eve = student(app)
    assert eve.start(name="Eve", class_code=OTHER_CODE).status_code == 303
    assert HELD_ELSEWHERE in text(eve.client.get(eve.question_url(1)))
    assert not shows_the_key(app, eve, quiz)
    assert app.test_client().get(eve.results_url).status_code == 403
    with app.app_context():
        saved = db.session.scalars(db.select(Attempt).filter_by(class_id=other_class)).one()
        assert saved.answered == len(quiz.questions)
    carol = app.test_client()
    login(carol, "carol", "correct horse")
    review = text(carol.get(f"/teach/attempts/{eve.token}"))
    assert opening(quiz.questions[0].choices[0].explanation) in review


def test_an_older_attempt_elsewhere_shows_the_key_again_once_the_hold_ends(
    app, class_id, other_class
):
    """An attempt taken before the hold, in another class, is held with the rest; the release
    (or the close) gives it back its own rule."""
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    eve = student(app)
    assert eve.start(name="Eve", class_code=OTHER_CODE).status_code == 303
    assignment_id = assign(app, class_id, feedback=FeedbackWhen.AFTER_CLOSE)
    assert not shows_the_key(app, eve, quiz)
    with app.app_context():
        db.session.get(Assignment, assignment_id).feedback_released_at = datetime.now(UTC)
        db.session.commit()
    assert "scored" in text(eve.client.get(eve.results_url))


def test_the_class_holding_the_key_keeps_its_own_rule(app, class_id, other_class):
    """The hold is on everyone else: under the holding assignment itself a finished attempt
    after the attempt shows its verdicts, as it always did."""
    assign(app, class_id, feedback=FeedbackWhen.AFTER_ATTEMPT, closes_at=datetime.now(UTC) + HOUR)
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    ada = student(app)
    assert ada.start(name="Ada", class_code=CODE).status_code == 303
    for number, question in enumerate(quiz.questions, 1):
        assert ada.answer(number, right_choice(question).id).status_code == 303
    ada.finish()
    assert "scored" in text(ada.client.get(ada.results_url))


# --- 2. Held feedback opens once no attempt can still be answered, not at the close ----------


def test_feedback_opens_once_the_last_attempt_can_no_longer_be_answered():
    """A 60-minute attempt started just before the close answers until close + 60 min + grace."""
    closes = NOW
    assert policy.feedback_opens_at(FeedbackWhen.AFTER_CLOSE, closes, 60) == (
        closes + timedelta(minutes=60) + policy.ANSWER_GRACE
    )
    assert policy.feedback_opens_at(FeedbackWhen.AFTER_CLOSE, closes, None) == (
        closes + policy.CLOSE_GRACE
    )
    assert policy.feedback_opens_at(FeedbackWhen.AFTER_CLOSE, None, 60) is None
    assert policy.feedback_opens_at(FeedbackWhen.AFTER_ATTEMPT, closes, 60) is None
    assert policy.feedback_opens_at(FeedbackWhen.EACH_ANSWER, closes, None) is None


class Clock:
    """The app's clock, moved on as waiting would move it."""

    def __init__(self, monkeypatch):
        self.ahead = timedelta()
        for where in ("app.attempts.service.now", "app.teach.assignments.now"):
            monkeypatch.setattr(where, self.now)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.ahead


def test_a_review_stays_shut_while_a_classmate_can_still_answer(app, class_id, monkeypatch):
    """Attacker repro 03: Alice finishes before the close, Bob starts before it with 60 minutes;
    at the close Alice's link must not show Bob the key, nor may the class page call it out."""
    closes = datetime.now(UTC) + timedelta(minutes=1)
    assign(
        app, class_id, feedback=FeedbackWhen.AFTER_CLOSE, time_limit_minutes=60, closes_at=closes
    )
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    alice, bob = student(app), student(app)
    assert alice.start(name="Alice", class_code=CODE).status_code == 303
    for number, question in enumerate(quiz.questions, 1):
        assert alice.answer(number, question.choices[0].id).status_code == 303
    assert bob.start(name="Bob", class_code=CODE).status_code == 303
    opens = closes + timedelta(minutes=60) + policy.ANSWER_GRACE
    teacher = app.test_client()
    login(teacher, "teacher", "correct horse")

    clock = Clock(monkeypatch)
    clock.ahead = timedelta(minutes=2)  # past the close; Bob's hour is not up
    assert app.test_client().get(alice.results_url).status_code == 403
    mine = text(alice.client.get(alice.results_url))
    assert "scored" not in mine and f'datetime="{opens:%Y-%m-%dT%H:%MZ}"' in mine
    assert bob.answer(1, right_choice(quiz.questions[0]).id).status_code == 303
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert "Release feedback" in page and "opens to students" in page

    clock.ahead = opens - datetime.now(UTC) + timedelta(seconds=1)
    assert app.test_client().get(alice.results_url).status_code == 200
    assert "Alice scored" in text(app.test_client().get(alice.results_url))
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert "Release feedback" not in page and "opened to students" in page


# --- 3. A roster is not got round by "Retake quiz", nor by answering on after removal --------


def test_a_typed_name_attempt_cannot_be_retaken_once_the_class_has_a_roster(app, class_id):
    """Attacker repro 06: an attempt from before the roster; "Retake quiz" gave typed-name
    attempts in the rostered class for ever. The button gives way to the sign-in link."""
    dana = student(app)
    assert dana.start(name="Dana Diaz", class_code=CODE).status_code == 303
    with app.app_context():
        factories.roster(class_id, "Dana Diaz, d42\nEve Real, e1")
    page = text(dana.client.get(dana.results_url))
    assert "Retake quiz" not in page
    assert "now signs students in with personal codes" in page and 'href="/s"' in page
    refused = dana.post(f"/attempts/{dana.token}/retake")
    assert refused.status_code == 403 and "sign in with the code from your card" in text(refused)
    assert stored_attempts(app) == 1


def signed_in(app, code) -> Student:
    """A roster student's browser that confirmed their personal link and started the quiz."""
    signing = student(app)
    signing.client.get(f"/s/{code}")
    started = signing.post(f"/s/{code}", quiz=SLUG)
    assert started.status_code == 303
    signing.token = started.location.split("/")[2]
    return signing


def answered(app) -> int:
    with app.app_context():
        return db.session.scalar(db.select(db.func.sum(Attempt.answered)))


def test_a_roster_students_retake_is_still_theirs(app, class_id):
    """The rule bars typed names only: a student still on the roster retakes as before."""
    with app.app_context():
        [dana] = factories.roster(class_id, "Dana Diaz, d42")
        code = dana.sign_in_code
    signing = signed_in(app, code)
    assert "Retake quiz" in text(signing.client.get(signing.results_url))
    assert signing.post(f"/attempts/{signing.token}/retake").status_code == 303
    assert stored_attempts(app) == 2


def test_an_archived_class_takes_no_more_answers(app, class_id):
    """An attempt open when its class was archived is read-only too: 409, nothing saved."""
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    ada = student(app)
    assert ada.start(name="Ada", class_code=CODE).status_code == 303
    assert ada.answer(1, right_choice(quiz.questions[0]).id).status_code == 303
    with app.app_context():
        db.session.get(Class, class_id).archived_at = datetime.now(UTC)
        db.session.commit()
    refused = ada.answer(2, right_choice(quiz.questions[1]).id)
    assert refused.status_code == 409
    page = text(refused)
    assert "Physics 101 has ended" in page and "This answer was not saved." in page
    assert answered(app) == 1


def test_an_archived_class_holds_no_key(app, class_id):
    """Re-review: an archived class's exam, whose answers can no longer change, held the key
    from every other class with no release to press (an archived class takes no change)."""
    assign(app, class_id, feedback=FeedbackWhen.AFTER_ATTEMPT)
    assert student(app).start(name="Ada", class_code=CODE).status_code == 303
    assert student(app).start(name="Eve").status_code == 400
    with app.app_context():
        db.session.get(Class, class_id).archived_at = datetime.now(UTC)
        db.session.commit()
    assert student(app).start(name="Eve").status_code == 303


def test_a_student_taken_off_the_roster_answers_no_more(app, class_id):
    """Removed mid-attempt, the student's answers stop: 409 with why, nothing saved."""
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        [dana] = factories.roster(class_id, "Dana Diaz, d42")
        code = dana.sign_in_code
    signing = signed_in(app, code)
    assert signing.answer(1, right_choice(quiz.questions[0]).id).status_code == 303
    with app.app_context():
        remove_student(db.session.get(RosterStudent, dana.id))
    refused = signing.answer(2, right_choice(quiz.questions[1]).id)
    assert refused.status_code == 409
    assert "You are no longer on the roster of Physics 101" in text(refused)
    assert answered(app) == 1
    # The next question offers no form whose answer would be refused, only why and the way out.
    shown = signing.client.get(signing.question_url(2))
    assert shown.status_code == 200 and "no longer on the roster" in text(shown)
    assert 'name="choice"' not in text(shown) and "was not saved" not in text(shown)
    # A question answered before still shows its feedback.
    assert "Correct" in text(signing.client.get(signing.question_url(1)))


# --- 4 and 5. "Remove" keeps an assignment's rules for its attempts; assigning again revives it


@pytest.fixture
def teacher(app, class_id):
    client = app.test_client()
    login(client, "teacher", "correct horse")
    return client


def post_form(client, url, **fields):
    """Send a class-page form as the instructor's browser would, CSRF token included."""
    return client.post(url, data={"csrf_token": form_token(client), **fields})


def assign_by_form(teacher, class_id, **fields):
    data = {"quiz": SLUG, "time_zone": "UTC", "grade_from": "first", "feedback": "each-answer"}
    return post_form(teacher, f"/teach/classes/{class_id}/assignments/new", **{**data, **fields})


def finished_attempt(app, **start) -> Student:
    """A student who answered every question of the quiz and finished, started with these start
    fields."""
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    taking = student(app)
    assert taking.start(**start).status_code == 303
    for number, question in enumerate(quiz.questions, 1):
        assert taking.answer(number, right_choice(question).id).status_code == 303
    taking.finish()
    return taking


def test_removing_an_assignment_keeps_its_held_reviews_held(app, class_id, teacher, caplog):
    """Attacker repro 04: "Remove" published every held review and lifted the limit. Now the
    review stays shut, the class page keeps "Release feedback" for it, and releasing opens it."""
    assignment_id = assign(
        app, class_id, feedback=FeedbackWhen.AFTER_CLOSE, attempts_allowed=1,
        closes_at=datetime.now(UTC) + timedelta(days=7),
    )  # fmt: skip
    held = finished_attempt(app, name="Held Student", class_code=CODE)
    removed = post_form(teacher, f"/teach/classes/{class_id}/assignments/{assignment_id}/remove")
    assert removed.status_code == 303
    assert f"assignment removed: class {class_id}, quiz {SLUG}" in caplog.text
    assert app.test_client().get(held.results_url).status_code == 403
    assert "scored" not in text(held.client.get(held.results_url))
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert ">Removed<" in page and "Release feedback" in page
    assert "No quiz is assigned now: the join link and class code offer every quiz." in page
    # Its one attempt is finished: nothing under it can change, so nothing is held elsewhere.
    assert student(app).start(name="anyone").status_code == 303
    assert f"/assignments/{assignment_id}/remove" not in page
    assert teacher.get(f"/teach/classes/{class_id}/assignments/{assignment_id}").status_code == 404
    released = post_form(teacher, f"/teach/classes/{class_id}/assignments/{assignment_id}/release")
    assert released.status_code == 303
    assert "Held Student scored" in text(app.test_client().get(held.results_url))
    assert ">Removed<" not in text(teacher.get(f"/teach/classes/{class_id}"))


def taking_an_exam(app) -> tuple[Student, object]:
    """A student in the middle of an exam in the class: question 1 answered, free to change."""
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    fay = student(app)
    assert fay.start(name="Fay", class_code=CODE).status_code == 303
    assert fay.post(fay.question_url(1), choice=quiz.questions[0].choices[0].id,
                    go="next").status_code == 303  # fmt: skip
    return fay, quiz


def test_removing_an_assignment_during_an_exam_keeps_the_key_from_its_students(
    app, class_id, teacher
):
    """Attacker review: removing an exam's assignment let its students read the key outside
    the class, or in it as unassigned, and change their open answers. It stays held until
    released, in the class too, while the exam's answers still change."""
    assignment_id = assign(app, class_id, feedback=FeedbackWhen.AFTER_ATTEMPT)
    fay, quiz = taking_an_exam(app)
    removed = post_form(teacher, f"/teach/classes/{class_id}/assignments/{assignment_id}/remove")
    assert removed.status_code == 303
    outside = student(app).start(name="Fay")
    assert outside.status_code == 400 and NEEDS_CODE in text(outside)
    eve = student(app)
    assert eve.start(name="Fay again", class_code=CODE).status_code == 303
    assert not shows_the_key(app, eve, quiz)
    assert "Release feedback" in text(teacher.get(f"/teach/classes/{class_id}"))
    post_form(teacher, f"/teach/classes/{class_id}/assignments/{assignment_id}/release")
    assert student(app).start(name="anyone").status_code == 303


def test_switching_an_exam_to_feedback_after_each_answer_holds_the_key_until_it_finishes(
    app, class_id, teacher
):
    """Attacker review: an exam switched to feedback after each answer showed the key outside
    the class while its students could still change their answers. Held until they finish."""
    assignment_id = assign(app, class_id, feedback=FeedbackWhen.AFTER_ATTEMPT)
    fay, _ = taking_an_exam(app)
    edited = post_form(
        teacher, f"/teach/classes/{class_id}/assignments/{assignment_id}",
        quiz=SLUG, time_zone="UTC", grade_from="first", feedback="each-answer",
    )  # fmt: skip
    assert edited.status_code == 303
    outside = student(app).start(name="Eve")
    assert outside.status_code == 400 and NEEDS_CODE in text(outside)
    # Re-review: the hold had no button then; it is offered until the exam is done.
    assert ">Release feedback…<" in text(teacher.get(f"/teach/classes/{class_id}"))
    assert fay.finish().status_code == 303
    assert student(app).start(name="Eve").status_code == 303
    assert ">Release feedback…<" not in text(teacher.get(f"/teach/classes/{class_id}"))


def test_an_exam_without_a_close_offers_to_release_its_hold(app, class_id, teacher):
    """New-instructor review: feedback after the attempt, no close, held the key from every
    other class for good, with no button to let it go. The class page offers the release, whose
    page says what it changes; after it the quiz is anyone's again."""
    assignment_id = assign(app, class_id, feedback=FeedbackWhen.AFTER_ATTEMPT)
    assert student(app).start(name="Eve").status_code == 400
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert ">Release feedback…<" in page
    url = f"/teach/classes/{class_id}/assignments/{assignment_id}/release"
    assert "already see their feedback as they finish" in text(teacher.get(url))
    assert post_form(teacher, url).status_code == 303
    assert student(app).start(name="Eve").status_code == 303
    assert ">Release feedback…<" not in text(teacher.get(f"/teach/classes/{class_id}"))


def test_the_class_whose_feedback_waits_on_another_is_told_why(app, class_id, other_class):
    """Carol's class page says its feedback waits on another class's hold; the holding class's
    page does not, and once the hold is released neither does hers."""
    assignment_id = assign(app, class_id, feedback=FeedbackWhen.AFTER_ATTEMPT)
    carol, owner = app.test_client(), app.test_client()
    login(carol, "carol", "correct horse")
    login(owner, "teacher", "correct horse")
    assert 'id="held-elsewhere"' in text(carol.get(f"/teach/classes/{other_class}?quiz={SLUG}"))
    assert 'id="held-elsewhere"' not in text(owner.get(f"/teach/classes/{class_id}"))
    post_form(owner, f"/teach/classes/{class_id}/assignments/{assignment_id}/release")
    assert 'id="held-elsewhere"' not in text(carol.get(f"/teach/classes/{other_class}?quiz={SLUG}"))


def test_a_removed_assignment_limits_no_new_start(app, class_id, teacher):
    """Its class offers the quiz as if unassigned: a new attempt follows no assignment."""
    assignment_id = assign(app, class_id, attempts_allowed=1)
    finished_attempt(app, name="Sam", class_code=CODE)
    post_form(teacher, f"/teach/classes/{class_id}/assignments/{assignment_id}/remove")
    again = student(app)
    assert again.start(name="Sam", class_code=CODE).status_code == 303
    with app.app_context():
        newest = db.session.scalars(db.select(Attempt).order_by(Attempt.id.desc())).first()
        assert newest.assignment_id is None
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert "No quiz is assigned" in page and ">Removed<" not in page


def test_assigning_a_removed_quiz_again_revives_it_with_its_attempts(app, class_id, teacher):
    """Attacker repro 05: remove, assign again, and every student had fresh attempts. Now the
    same assignment comes back with the new settings and the used attempt still counts."""
    assignment_id = assign(app, class_id, attempts_allowed=1)
    sam = finished_attempt(app, name="Sam Student", class_code=CODE)
    post_form(teacher, f"/teach/classes/{class_id}/assignments/{assignment_id}/remove")
    revived = assign_by_form(teacher, class_id, attempts_allowed="1", grade_from="best")
    assert revived.status_code == 303
    with app.app_context():
        [kept] = db.session.scalars(db.select(Assignment)).all()
        assert (kept.id, kept.removed_at, kept.grade_from) == (assignment_id, None, "best")
    refused = student(app).start(name="Sam Student", class_code=CODE)
    assert refused.status_code == 403 and "used the only attempt" in text(refused)
    assert "Retake quiz" not in text(sam.client.get(sam.results_url))
    assert stored_attempts(app) == 1
    again = assign_by_form(teacher, class_id, attempts_allowed="2")
    assert again.status_code == 400 and "assigns this quiz already" in text(again)


def test_the_gradebook_no_longer_counts_by_a_removed_assignment(app, class_id, teacher):
    """Reports' default counting follows the assignments in force, not removed ones."""
    assignment_id = assign(app, class_id, grade_from="best")
    gradebook = f"/teach/classes/{class_id}/gradebook.csv"
    assert "best-attempt" in teacher.get(gradebook).headers["Content-Disposition"]
    post_form(teacher, f"/teach/classes/{class_id}/assignments/{assignment_id}/remove")
    assert "first-attempt" in teacher.get(gradebook).headers["Content-Disposition"]


def test_a_removed_assignment_with_nothing_held_leaves_the_class_page(app, class_id, teacher):
    """Feedback after each answer holds nothing: once removed, it is no longer listed."""
    assignment_id = assign(app, class_id)
    post_form(teacher, f"/teach/classes/{class_id}/assignments/{assignment_id}/remove")
    page = text(teacher.get(f"/teach/classes/{class_id}"))
    assert f'id="assignment-{assignment_id}"' not in page


def test_saves_racing_to_revive_a_removed_assignment_revive_it_once(app, class_id, teacher):
    """Six "Assign a quiz" saves at once for a removed quiz: one revives it, the others are told
    it is assigned already, and it stays one row with its id."""
    assignment_id = assign(app, class_id, attempts_allowed=1)
    post_form(teacher, f"/teach/classes/{class_id}/assignments/{assignment_id}/remove")
    barrier = threading.Barrier(6)
    outcomes = []

    def save(allowed):
        with app.app_context():
            scope = db.session.get(Class, class_id)
            barrier.wait()
            try:
                save_assignment(scope, SLUG, Settings(attempts_allowed=allowed))
                outcomes.append("saved")
            except AlreadyAssigned:
                outcomes.append("assigned already")

    threads = [threading.Thread(target=save, args=(allowed,)) for allowed in range(1, 7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["assigned already"] * 5 + ["saved"]
    with app.app_context():
        [kept] = db.session.scalars(db.select(Assignment)).all()
        assert (kept.id, kept.removed_at) == (assignment_id, None)


# --- Issue 25: what the second attacker review found here -----------------------------------


def test_a_held_review_is_kept_by_no_browser(app, class_id, teacher):
    """The instructor's view of a results page whose feedback is held, and the student's own,
    say Cache-Control: no-store, as every instructor page does."""
    assign(app, class_id, feedback=FeedbackWhen.AFTER_CLOSE, closes_at=datetime.now(UTC) + HOUR)
    ada = student(app)
    assert ada.start(name="Ada", class_code=CODE).status_code == 303
    for browser in (teacher, ada.client):
        page = browser.get(ada.results_url)
        assert page.status_code == 200 and page.headers["Cache-Control"] == "no-store"


def test_a_voided_attempt_takes_no_more_answers(app, class_id):
    """Voided by the instructor mid-attempt: an answer sent is refused with the reason and
    nothing is saved."""
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    ada = student(app)
    assert ada.start(name="Ada", class_code=CODE).status_code == 303
    with app.app_context():
        db.session.execute(db.update(Attempt).values(voided_at=datetime.now(UTC), seat=None))
        db.session.commit()
    refused = ada.answer(1, right_choice(quiz.questions[0]).id)
    assert refused.status_code == 409 and "voided this attempt" in text(refused)
    with app.app_context():
        assert db.session.scalars(db.select(Attempt)).one().answered == 0
