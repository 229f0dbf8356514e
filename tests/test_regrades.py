"""Regrading: a question's key corrected after a class answered it, the scores that changes
shown before anything changes, then applied once, with the LMS told and each review saying so."""

import threading

import factories
import pytest

from app import signals
from app.authoring import drafts
from app.extensions import db
from app.lti.models import LtiAttempt, LtiPlatform, LtiScore, LtiUser
from app.models import Answer, Attempt
from app.served import current_bank, recheck_bank
from app.teach import regrades

from helpers import csrf_token, login, text

pytestmark = pytest.mark.postgres

SLUG = "keys"


@pytest.fixture
def corrected(app):
    """A class whose two students answered question 1 of a quiz whose key was then corrected:
    Ada chose b (wrong then, right now) and Ben a (right then, wrong now)."""
    with app.app_context():
        teacher = factories.instructor("teacher")
        class_id = factories.class_(teacher).id
        record = factories.owned_quiz(teacher, SLUG)
        quiz = current_bank().quizzes[SLUG]
        for name, first in (("Ada", "b"), ("Ben", "a")):
            factories.attempt(quiz, name, answers=[first, "a"], class_id=class_id)
        factories.correct_first_key(record, teacher)
    client = app.test_client()
    assert login(client, "teacher", "correct horse").status_code == 303
    return client, f"/teach/classes/{class_id}/quizzes/{SLUG}/regrade"


def points(app) -> dict[str, float]:
    with app.app_context():
        return {a.student_name: a.points for a in db.session.scalars(db.select(Attempt))}


def test_a_regrade_shows_whose_scores_change_then_marks_again_once(app, corrected):
    """Before: Ada 1 of 2, Ben 2 of 2; the page shows both changes and changes nothing; the
    button swaps them, tells the LMS of each once, and a second press marks nothing again."""
    teacher, url = corrected
    sent = []
    signals.grade_changed.connect(lambda sender, **kw: sent.append(kw), weak=False)
    page = teacher.get(url)
    words = text(page)
    assert "Question 1." in words and "marking again changes 2 scores" in words
    for row in ("Ada</th> <td>1 of 2 (50%)</td> <td>2 of 2 (100%)",
                "Ben</th> <td>2 of 2 (100%)</td> <td>1 of 2 (50%)"):  # fmt: skip
        assert row in words
    assert "Question 2." not in words  # its key did not change
    assert "Each of their reviews then shows the corrected key" in words
    assert points(app) == {"Ada": 1, "Ben": 2}
    token = csrf_token(page.get_data(as_text=True))
    done = teacher.post(url, data={"csrf_token": token, "question": "q1"})
    assert done.status_code == 303 and done.location == url  # back here, for the next question
    assert "Question 1: marked 2 answers again; 2 scores changed." in text(teacher.get(url))
    assert points(app) == {"Ada": 2, "Ben": 1}
    assert sorted(kw["occasion"] for kw in sent) == ["regraded", "regraded"]
    again = teacher.post(url, data={"csrf_token": token, "question": "q1"})
    assert again.status_code == 303 and points(app) == {"Ada": 2, "Ben": 1}
    assert "nothing to regrade" in text(teacher.get(url))
    signals.grade_changed.receivers.clear()


def test_one_answer_to_regrade_is_told_of_in_the_singular(app):
    """One student's answer: "1 answer", "1 score" and "Its review", not "1 answer' reviews"."""
    with app.app_context():
        teacher = factories.instructor("teacher")
        class_id = factories.class_(teacher).id
        record = factories.owned_quiz(teacher, SLUG)
        factories.attempt(current_bank().quizzes[SLUG], "Ada", answers=["b", "a"],
                          class_id=class_id)  # fmt: skip
        factories.correct_first_key(record, teacher)
    client = app.test_client()
    assert login(client, "teacher", "correct horse").status_code == 303
    words = text(client.get(f"/teach/classes/{class_id}/quizzes/{SLUG}/regrade"))
    assert "1 answer given under an older version; marking again changes 1 score:" in words
    assert "Its review then shows the corrected key" in words


def test_a_regraded_review_shows_the_corrected_key_and_says_when(app, corrected):
    teacher, url = corrected
    token = csrf_token(teacher.get(url).get_data(as_text=True))
    assert teacher.post(url, data={"csrf_token": token, "question": "q1"}).status_code == 303
    with app.app_context():
        ada = db.session.scalar(db.select(Attempt).filter_by(student_name="Ada"))
        regraded = db.session.scalar(db.select(Answer).filter_by(attempt_id=ada.id,
                                                                 question_id="q1"))  # fmt: skip
        assert regraded.is_correct and regraded.regraded_at is not None
    review = text(teacher.get(f"/teach/attempts/{ada.token}"))
    assert "Regraded" in review and "its key was corrected after this answer was given" in review
    # Its first question as corrected: the choice now right is the one marked so.
    first = teacher.get(f"/teach/attempts/{ada.token}").get_data(as_text=True)
    first = first[first.index('id="review-1"'):first.index('id="review-2"')]
    [right] = [item for item in first.split("<li") if "Right answer" in item]
    assert "That one" in right and "This one" not in right


def test_a_question_whose_points_changed_is_not_regraded(app):
    with app.app_context():
        teacher = factories.instructor("teacher")
        class_id = factories.class_(teacher).id
        record = factories.owned_quiz(teacher, SLUG)
        factories.attempt(current_bank().quizzes[SLUG], "Ada", answers=["b"], class_id=class_id)

        def heavier(draft):
            draft["questions"][0]["points"] = 2
            draft["questions"][0]["choices"][1]["correct"] = True
            draft["questions"][0]["choices"][0]["correct"] = False

        drafts.save(record, heavier, teacher.id)
        drafts.publish(record, teacher.id)
        recheck_bank()
    client = app.test_client()
    assert login(client, "teacher", "correct horse").status_code == 303
    url = f"/teach/classes/{class_id}/quizzes/{SLUG}/regrade"
    page = client.get(url)
    assert "Its points changed from 1 to 2" in text(page)
    token = csrf_token(page.get_data(as_text=True))
    assert client.post(url, data={"csrf_token": token, "question": "q1"}).status_code == 303
    assert points(app) == {"Ada": 0}


def test_regrades_racing_move_each_score_once(app, corrected):
    """Two presses at once (two tabs): each answer is marked again once, each score moved
    once."""
    teacher, url = corrected
    token = csrf_token(teacher.get(url).get_data(as_text=True))
    barrier = threading.Barrier(2)
    statuses = []

    def press():
        tab = app.test_client()
        tab.set_cookie("session", teacher.get_cookie("session").value)
        barrier.wait()
        statuses.append(tab.post(url, data={"csrf_token": token, "question": "q1"}).status_code)

    threads = [threading.Thread(target=press) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [303, 303]
    assert points(app) == {"Ada": 2, "Ben": 1}


def test_a_key_changed_back_is_regraded_back_and_voided_attempts_are_left(app, corrected):
    """Regraded under the corrected key, then the key restored as it was: the answers are
    marked again by the restored one. A voided attempt is neither listed nor moved."""
    from app.teach import regrades

    teacher, url = corrected
    with app.app_context():
        ben = db.session.scalar(db.select(Attempt).filter_by(student_name="Ben"))
        ben.voided_at = db.func.now()
        db.session.commit()
        class_id = ben.class_id
        [found] = regrades.corrections(class_id, current_bank().quizzes[SLUG])
        assert [change.student for change in found.changes] == ["Ada"]
        assert [c.student for c in regrades.regrade(class_id, current_bank().quizzes[SLUG],
                                                    "q1")] == ["Ada"]  # fmt: skip
        owner = db.session.scalar(db.select(factories.Instructor))
        record = db.session.scalar(db.select(factories.QuizRecord).filter_by(slug=SLUG))
        factories.correct_first_key(record, owner)  # swapped back: Ada's b is wrong again
        restored = current_bank().quizzes[SLUG]
        [back] = regrades.corrections(class_id, restored)
        assert [(c.student, c.before, c.after) for c in back.changes] == [("Ada", 2, 1)]
        regrades.regrade(class_id, restored, "q1")
    assert points(app) == {"Ada": 1, "Ben": 2}


def test_a_regrade_worked_out_before_another_one_changes_nothing_twice(app, corrected,
                                                                      monkeypatch):  # fmt: skip
    """A regrade read under one version, applied after another version's regrade (two workers
    between two publications), finds its answers marked since and moves no score twice."""
    from app.teach import regrades

    with app.app_context():
        class_id = db.session.scalar(db.select(Attempt.class_id).limit(1))
        corrected_quiz = current_bank().quizzes[SLUG]
        stale = regrades.corrections(class_id, corrected_quiz)
        owner = db.session.scalar(db.select(factories.Instructor))
        record = db.session.scalar(db.select(factories.QuizRecord).filter_by(slug=SLUG))
        drafts.save(record, lambda draft: draft["questions"][0].update(prompt="Reworded?"),
                    owner.id)  # fmt: skip
        drafts.publish(record, owner.id)
        recheck_bank()
        assert len(regrades.regrade(class_id, current_bank().quizzes[SLUG], "q1")) == 2
        monkeypatch.setattr(regrades, "corrections", lambda *_: stale)
        assert regrades.regrade(class_id, corrected_quiz, "q1") == []
    assert points(app) == {"Ada": 2, "Ben": 1}


def test_a_regrade_of_three_students_queues_each_new_grade_for_the_lms_once(app):
    """Three launched students whose answer to question 1 the corrected key marks otherwise:
    one regrade queues one new grade each in the LMS outbox, with the new score; a second
    press queues nothing."""
    with app.app_context():
        teacher = factories.instructor("teacher")
        class_id = factories.class_(teacher).id
        record = factories.owned_quiz(teacher, SLUG)
        quiz = current_bank().quizzes[SLUG]
        platform = LtiPlatform(issuer="https://lms.example", client_id="tool", name="LMS",
                               auth_login_url="https://lms.example/auth",
                               auth_token_url="https://lms.example/token",
                               key_set_url="https://lms.example/jwks")  # fmt: skip
        db.session.add(platform)
        db.session.flush()
        for n, (name, first) in enumerate((("Ada", "b"), ("Ben", "a"), ("Cy", "b"))):
            attempt = factories.attempt(quiz, name, answers=[first, "a"], class_id=class_id)
            user = LtiUser(platform_id=platform.id, sub=f"user-{n}", name=name)
            db.session.add(user)
            db.session.flush()
            db.session.add(LtiAttempt(attempt_id=attempt.id, user_id=user.id, resource_link_id="l",
                                      line_item_url=f"https://lms.example/items/{n}"))  # fmt: skip
        db.session.commit()
        factories.correct_first_key(record, teacher)
    teacher_client = app.test_client()
    login(teacher_client, "teacher", "correct horse")
    url = f"/teach/classes/{class_id}/quizzes/{SLUG}/regrade"
    token = csrf_token(teacher_client.get(url).get_data(as_text=True))
    for _ in range(2):
        assert teacher_client.post(url, data={"csrf_token": token, "question": "q1"}).location
    with app.app_context():
        queued = db.session.scalars(
            db.select(LtiScore).where(LtiScore.occasion.like("regraded%"))
        ).all()
        given = {score.line_item_url: score.payload["scoreGiven"] for score in queued}
    assert given == {"https://lms.example/items/0": 2, "https://lms.example/items/1": 1,
                     "https://lms.example/items/2": 2}  # fmt: skip


def test_an_answer_changed_while_a_regrade_was_worked_out_is_left_for_the_next(
    app, corrected, monkeypatch
):
    """The regrade read Ada's answer b; before it wrote, she (still moving through her exam)
    changed it to a. It marks nothing of hers, and her score stays what her answers earn."""
    teacher, url = corrected
    with app.app_context():
        class_id = db.session.scalars(db.select(Attempt.class_id)).first()
        stale = regrades.corrections(class_id, current_bank().quizzes[SLUG])
        ada = db.session.scalars(db.select(Attempt).filter_by(student_name="Ada")).one()
        mine = next(a for a in ada.answers if a.question_id == "q1")
        mine.response, mine.mark, mine.is_correct = "a", 1.0, True
        ada.points = 2
        db.session.commit()
    monkeypatch.setattr(regrades, "corrections", lambda *_: stale)
    token = csrf_token(teacher.get(url).get_data(as_text=True))
    assert teacher.post(url, data={"csrf_token": token, "question": "q1"}).status_code == 303
    with app.app_context():
        ada = db.session.scalars(db.select(Attempt).filter_by(student_name="Ada")).one()
        mine = next(a for a in ada.answers if a.question_id == "q1")
        assert (mine.response, mine.regraded_at, ada.points) == ("a", None, 2)
    assert points(app) == {"Ada": 2, "Ben": 1}
