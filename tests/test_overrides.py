"""Overriding: a class's manager gives one answer of a finished attempt another mark, or the
attempt another score, with a comment the student reads in their review; undone as easily;
audit-logged; the grade goes to the LMS again; a refused one says why beside its field."""

import csv
import io

import factories
import pytest

from app import signals
from app.extensions import db
from app.models import Answer, Attempt, Class, Instructor, QuizRecord
from app.served import current_bank
from app.teach import regrades

from helpers import Student, csrf_token, login, text

pytestmark = pytest.mark.postgres

SLUG = "owners-quiz"


@pytest.fixture
def finished(app):
    """The class's owner logged in; Ada, whose finished attempt at a two-question quiz has
    question 1 wrong and question 2 right; and what the grade_changed signal sent."""
    with app.app_context():
        teacher = factories.instructor("teacher")
        join = factories.class_(teacher).join_code
        factories.owned_quiz(teacher, SLUG)
    ada = Student(app.test_client())
    assert ada.start(name="Ada", slug=SLUG, class_code=join).status_code == 303
    ada.answer(1, "b")
    ada.answer(2, "a")
    lecturer = app.test_client()
    assert login(lecturer, "teacher", "correct horse").status_code == 303
    sent = []

    def heard(_sender, **said):
        sent.append(said["occasion"])

    with signals.grade_changed.connected_to(heard):
        yield lecturer, ada, sent


def stored(app, token) -> tuple[float, dict[str, Answer], Attempt]:
    with app.app_context():
        attempt = db.session.scalars(db.select(Attempt).filter_by(token=token)).one()
        return attempt.points, {a.question_id: a for a in attempt.answers}, attempt


def send(lecturer, token, path="override", **fields):
    page = lecturer.get(f"/teach/attempts/{token}").get_data(as_text=True)
    return lecturer.post(f"/teach/attempts/{token}/{path}",
                         data={"csrf_token": csrf_token(page), **fields})  # fmt: skip


def student_view(ada) -> str:
    """The review as Ada reads it in her browser."""
    return text(ada.client.get(ada.results_url))


def test_an_answer_marked_again_by_hand_counts_says_why_and_can_be_undone(app, finished, caplog):
    """Question 1, wrong, given half its point with a comment: the score is 1.5, the review
    says who marked it and why, the log and the LMS hear of it; undo puts back 1 point."""
    lecturer, ada, sent = finished
    token = ada.token
    done = send(lecturer, token, question="q1", points="0,5", comment="Right idea, wrong unit.")
    assert done.status_code == 303 and done.location == f"/teach/attempts/{token}/marks#mark-1"
    points, answers, _ = stored(app, token)
    assert points == 1.5 and answers["q1"].override_mark == 0.5
    review = student_view(ada)
    assert "You scored <strong>1.5 out of 2</strong>" in review
    assert "Marked by your instructor: 0.5 of 1 point" in review
    assert "Right idea, wrong unit." in review
    assert "question 1 marked 0.5 of 1" in caplog.text and sent == ["overridden"]
    lecturer_review = text(lecturer.get(f"/teach/attempts/{token}"))
    assert "Marked by an instructor: 0.5 of 1 point" in lecturer_review
    marks = text(lecturer.get(done.location))
    assert "the key gives 0 of 1; marked by hand 0.5." in marks
    assert "Undo: the key’s mark counts again" in marks

    with app.app_context():
        class_id = stored(app, token)[2].class_id
    csv_page = lecturer.get(f"/teach/classes/{class_id}/responses.csv?quiz={SLUG}")
    rows = list(csv.DictReader(io.StringIO(csv_page.get_data().decode("utf-8-sig"))))
    first = next(row for row in rows if row["question"] == "q1")
    assert (first["mark"], first["mark_by_hand"]) == ("0", "0.5")
    assert first["comment_by_hand"] == "Right idea, wrong unit."
    stats = text(lecturer.get(f"/teach/classes/{class_id}?quiz={SLUG}"))
    assert "0% right" in stats.split('id="item-1"')[1].split("</p>")[0]  # the key's verdict
    overview = review.split("Question by question")[1].split("</ol>")[0]
    assert "Marked by hand: 0.5 of 1" in overview
    undone = send(lecturer, token, path="override/undo", question="q1")
    assert undone.status_code == 303
    points, answers, _ = stored(app, token)
    assert points == 1 and answers["q1"].override_mark is None
    assert "Marked by your instructor" not in student_view(ada)
    assert sent == ["overridden", "overridden"]


def test_a_score_set_by_hand_stands_until_undone(app, finished):
    """The whole attempt set to 2 of 2 with a comment: the gradebook and the review follow;
    undone, the answers' marks make the score again."""
    lecturer, ada, _ = finished
    token = ada.token
    assert send(lecturer, token, points="2", comment="Full marks: the key was unclear.").location
    assert stored(app, token)[0] == 2
    review = student_view(ada)
    assert "You scored <strong>2 out of 2</strong>" in review
    assert "Your instructor set this score" in review and "the key was unclear" in review
    with app.app_context():
        class_id = stored(app, token)[2].class_id
    gradebook = lecturer.get(f"/teach/classes/{class_id}/gradebook.csv?quiz={SLUG}")
    assert "Ada,,,finished,1,0,2,2,100," in gradebook.get_data(as_text=True)
    assert send(lecturer, token, path="override/undo").status_code == 303
    assert stored(app, token)[0] == 1
    assert "set this score" not in student_view(ada)


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"question": "q1", "points": "2"}, "Give a number of points from 0 to 1."),
        ({"question": "q1", "points": ""}, "Give a number of points from 0 to 1."),
        ({"points": "three"}, "Give a number of points from 0 to 2."),
        ({"points": "-1"}, "Give a number of points from 0 to 2."),
        ({"points": "1", "comment": "x" * 2001}, "Keep the comment to 2,000 characters."),
    ],
)
def test_a_refused_override_says_why_beside_it_and_changes_nothing(app, finished, fields, said):
    lecturer, ada, sent = finished
    token = ada.token
    refused = send(lecturer, token, **fields)
    assert refused.status_code == 400 and said in text(refused)
    assert text(refused).count('aria-invalid="true"') == 1
    assert stored(app, token)[0] == 1 and sent == []


def test_an_attempt_still_being_answered_or_an_unanswered_question_is_not_overridden(app, finished):
    """Marks exist once an attempt is finished, and only for questions it answered."""
    lecturer, ada, sent = finished
    token = ada.token
    assert send(lecturer, token, question="q9", points="1").status_code == 404
    student = Student(app.test_client())
    with app.app_context():
        join = db.session.scalars(db.select(Class.join_code)).one()
    assert student.start(name="Ben", slug=SLUG, class_code=join).status_code == 303
    going = send(lecturer, student.token, points="1")
    assert going.status_code == 409 and "still being answered" in text(going)
    # Its page leads back to the attempt, and on to the class page's table it came from.
    review = f"/teach/attempts/{student.token}"
    assert f'<a href="{review}">Back to the attempt</a>' in text(going)
    going = send(lecturer, student.token, path="override?count=best&page=2", points="1")
    assert f'<a href="{review}?count=best&amp;page=2">Back to the attempt</a>' in text(going)
    page = text(lecturer.get(f"/teach/attempts/{student.token}/marks"))
    assert "its marks can be changed once it is finished" in page and "Save mark" not in page
    assert sent == []


def test_an_expired_form_leads_back_to_the_attempt_or_the_class_it_came_from(app, finished):
    """A form sent with a stale token (the session ended, the page was old) is refused as
    expired, and its page links back to where the form was, not to the students' quizzes."""
    lecturer, ada, sent = finished
    review = f"/teach/attempts/{ada.token}"
    stale = {"csrf_token": "stale", "question": "q1", "points": "1"}
    refused = lecturer.post(f"{review}/override?count=best&page=2", data=stale)
    assert refused.status_code == 400 and "This form has expired" in text(refused)
    assert f'<a href="{review}?count=best&amp;page=2">Back to the attempt</a>' in text(refused)
    with app.app_context():
        class_id = db.session.scalars(db.select(Class.id)).one()
    refused = lecturer.post(f"/teach/classes/{class_id}/close", data={"csrf_token": "stale"})
    assert refused.status_code == 400 and "This form has expired" in text(refused)
    assert f'<a href="/teach/classes/{class_id}">Back to the class</a>' in text(refused)
    assert stored(app, ada.token)[0] == 1 and sent == []


def test_a_regrade_leaves_a_mark_given_by_hand(app, finished):
    """Question 1's key corrected after the lecturer marked Ada's answer by hand: the regrade
    marks it again for its review, but the mark the lecturer gave, and the score, stand."""
    lecturer, ada, _ = finished
    send(lecturer, ada.token, question="q1", points="0.25")
    with app.app_context():
        teacher = db.session.scalars(db.select(Instructor).filter_by(username="teacher")).one()
        record = db.session.scalars(db.select(QuizRecord).filter_by(slug=SLUG)).one()
        factories.correct_first_key(record, teacher)
        class_id = db.session.scalars(db.select(Class.id)).one()
    url = f"/teach/classes/{class_id}/quizzes/{SLUG}/regrade"
    token = csrf_token(lecturer.get(url).get_data(as_text=True))
    assert lecturer.post(url, data={"csrf_token": token, "question": "q1"}).status_code == 303
    points, answers, _ = stored(app, ada.token)
    assert answers["q1"].regraded_at is not None and answers["q1"].mark == 1
    assert points == 1.25 and answers["q1"].override_mark == 0.25


def test_an_undo_with_nothing_to_undo_changes_nothing_and_tells_no_one(app, finished, caplog):
    lecturer, ada, sent = finished
    undone = send(lecturer, ada.token, path="override/undo", question="q1")
    assert undone.status_code == 303
    assert "Nothing changed" in text(lecturer.get(undone.location))
    assert sent == [] and "restored" not in caplog.text


def test_a_score_set_while_a_regrade_was_worked_out_stands(app, finished, monkeypatch):
    """The regrade read Ada's score before a co-manager set it by hand: its write counts the
    score afresh under her attempt's hold, so the score set by hand stands everywhere."""
    lecturer, ada, _ = finished
    with app.app_context():
        teacher = db.session.scalars(db.select(Instructor).filter_by(username="teacher")).one()
        record = db.session.scalars(db.select(QuizRecord).filter_by(slug=SLUG)).one()
        factories.correct_first_key(record, teacher)
        class_id = db.session.scalars(db.select(Class.id)).one()
        stale = regrades.corrections(class_id, current_bank().quizzes[SLUG])
    monkeypatch.setattr(regrades, "corrections", lambda *_: stale)
    send(lecturer, ada.token, points="0", comment="Copied.")
    url = f"/teach/classes/{class_id}/quizzes/{SLUG}/regrade"
    token = csrf_token(lecturer.get(url).get_data(as_text=True))
    assert lecturer.post(url, data={"csrf_token": token, "question": "q1"}).status_code == 303
    points, answers, attempt = stored(app, ada.token)
    assert answers["q1"].regraded_at is not None and attempt.score_override == 0 and points == 0
