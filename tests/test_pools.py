"""Question pools: a quiz names groups of its questions and how many of each an attempt draws;
each attempt is asked its own draw, stored with it, so that its pages, score and review, the
gradebook and the statistics know what it was asked."""

import random

import factories
import pytest
from test_authoring import EDITOR, QUIZ, base_of, publish, question_fields, write_quiz
from test_timing import assign, taking

from app.authoring import drafts
from app.bank import build_quiz, problems
from app.extensions import db
from app.models import Attempt, FeedbackWhen, Instructor
from app.served import current_bank, recheck_bank

from helpers import login, text

pytestmark = pytest.mark.postgres


def pooled(questions, pools) -> dict:
    """A quiz whose questions are (id, pool or None, points)."""
    written = []
    for question_id, pool, points in questions:
        question = factories.written_question(int(question_id[1:])) | {"id": question_id}
        if pool:
            question["pool"] = pool
        if points != 1:
            question["points"] = points
        written.append(question)
    return {"slug": "pooled", "title": "Pooled", "description": "Draws.", "pools": pools,
            "questions": written}  # fmt: skip


def test_a_quiz_draws_as_many_as_its_pools_say_and_asks_the_rest_always():
    """Two always asked and 3 of a pool of 6: five questions, out of five points."""
    quiz = build_quiz(pooled([("q1", None, 1), ("q2", None, 1)]
                             + [(f"q{n}", "Basics", 1) for n in range(3, 9)],
                             [{"name": "Basics", "draw": 3}]))  # fmt: skip
    assert (quiz.asked, quiz.out_of) == (5, 5)
    draws = {tuple(quiz.draw(random.Random(seed))) for seed in range(20)}
    assert all(d[:2] == ("q1", "q2") and len(d) == 5 for d in draws)
    assert all(set(d[2:]) <= {f"q{n}" for n in range(3, 9)} for d in draws)
    assert len(draws) > 1


@pytest.mark.parametrize(
    ("questions", "pools", "said"),
    [
        ([("q1", "Basics", 1)], [{"name": "Basics", "draw": 2}],
         'field "pools[0].draw": the pool "Basics" draws 2 questions, but 1 question names it'),
        ([("q1", "Basic", 1)], [{"name": "Basics", "draw": 1}],
         'names the pool "Basic", which the quiz\'s pools do not list'),
        ([("q1", "Basics", 1), ("q2", "Basics", 2)], [{"name": "Basics", "draw": 1}],
         "has questions worth different points"),
        ([("q1", "Basics", 1)], [{"name": "Basics", "draw": 1}, {"name": "Basics", "draw": 1}],
         '"Basics" is used by another pool'),
        ([("q1", None, 1)], [{"name": "Basics", "draw": 0}], "draw"),
    ],
)  # fmt: skip
def test_a_pool_that_cannot_be_drawn_is_refused_where_it_is(questions, pools, said):
    found = problems({"quizzes": [pooled(questions, pools)]})
    assert any(said in problem for problem in found), found


@pytest.fixture
def pool_quiz(app):
    """Two questions always asked, and a pool of 6 drawing 3, published by its owner."""
    with app.app_context():
        owner = db.session.scalars(db.select(Instructor)).one()
        record = factories.owned_quiz(owner, "pooled", questions=8)

        def pool(draft):
            draft["pools"] = [{"name": "Basics", "draw": 3}]
            for question in draft["questions"][2:]:
                question["pool"] = "Basics"

        drafts.save(record, pool, owner.id)
        drafts.publish(record, owner.id)
        recheck_bank()
        return current_bank().quizzes["pooled"]


def test_each_attempt_is_asked_its_own_draw_and_is_scored_on_it(app, course, pool_quiz):
    """Eight students: each asked five questions, the pool's three their own; the pages number
    them 1 to 5 and know no sixth; the finished attempt is scored out of 5."""
    held = assign(app, pool_quiz, course, feedback=FeedbackWhen.AFTER_ATTEMPT)
    draws = set()
    for n in range(8):
        client = app.test_client()
        student = taking(app, client, pool_quiz, held, browser=f"pooled-browser-{n:07d}")
        with app.app_context():
            asked = db.session.scalars(db.select(Attempt.question_order).filter_by(
                token=student.token)).one()  # fmt: skip
        assert asked[:2] == ["q1", "q2"] and len(asked) == 5
        draws.add(tuple(asked))
    assert len(draws) > 1
    prompts = {q.id: q.prompt for q in pool_quiz.questions}
    page = text(client.get(student.question_url(5)))
    assert "Question 5 of 5" in page and prompts[asked[4]] in page
    assert client.get(student.question_url(6)).status_code == 404
    for number in range(1, 6):
        student.post(student.question_url(number), choice="a")
    student.finish()
    review = text(client.get(student.results_url))
    assert "You scored <strong>5 out of 5</strong>" in review
    assert all(prompts[q] in review for q in asked)
    assert not any(prompts[q] in review for q in prompts if q not in asked)


def test_the_class_page_counts_each_question_over_the_attempts_that_drew_it(
    app, course, pool_quiz
):
    """Six students finish: a pooled question's statistics count those whose draw asked it,
    and say how many of the six that was; the gradebook is out of the five points asked."""
    held = assign(app, pool_quiz, course, feedback=FeedbackWhen.AFTER_ATTEMPT)
    drawn: dict[str, int] = {}
    for n in range(6):
        client = app.test_client()
        browser = f"counted-browser-{n:06d}"
        student = taking(app, client, pool_quiz, held, browser=browser, name=f"Student {n}")
        for number in range(1, 6):
            student.post(student.question_url(number), choice="a")
        student.finish()
        with app.app_context():
            asked = db.session.scalars(db.select(Attempt.question_order).filter_by(
                token=student.token)).one()  # fmt: skip
            for question_id in asked:
                drawn[question_id] = drawn.get(question_id, 0) + 1
    lecturer = app.test_client()
    login(lecturer, "teacher", "correct horse")
    page = text(lecturer.get(f"/teach/classes/{course}?quiz=pooled"))
    for number in range(3, 9):
        times = drawn.get(f"q{number}", 0)
        said = f"drawn from the pool “Basics” by {times} of 6 attempts"
        assert said in page, (number, said)
    assert "drawn from the pool" not in page.split('id="item-3"')[0]
    gradebook = lecturer.get(f"/teach/classes/{course}/gradebook.csv?quiz=pooled")
    assert ",finished,1,0,5,5,100," in gradebook.get_data(as_text=True)
    preview = text(lecturer.get("/teach/quizzes/pooled/preview"))
    said = ("Each attempt draws 3 of the questions in the pool “Basics”. So each is asked 5 of "
            "these 8 questions, for 5 points.")  # fmt: skip
    assert said in preview


def test_the_editor_writes_pools_and_says_what_is_wrong_with_them(app, client):
    """Pools in the settings, a pool on each question, refused lines located; publishing a pool
    that draws more than it has is refused with the reason."""
    with app.app_context():
        factories.instructor("author")
    login(client, "author", "correct horse")
    token = write_quiz(client, questions=("First?", "Second?"))
    settings = {"csrf_token": token, "base": base_of(client.get(EDITOR)), "title": "Photosynthesis",
                "slug": "photosynthesis", "description": "Plants."}  # fmt: skip
    bad = client.post(EDITOR, data=settings | {"pools": "Basics: 2\nAdvanced"})
    assert bad.status_code == 400
    assert "Line 2: write one pool a line, its name, a colon and how many" in text(bad)
    one_line = client.post(EDITOR, data=settings | {"pools": "Basics: 2, Extra: 1"})
    assert one_line.status_code == 400 and "Line 1: write one pool a line" in text(one_line)
    assert client.post(EDITOR, data=settings | {"pools": "Basics: 2"}).status_code == 303
    assert "Basics: 2</textarea>" in text(client.get(EDITOR))
    fields = {"csrf_token": token, "base": "", **question_fields("Third?"), "pool": "Basic"}
    typo = client.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields)
    assert typo.status_code == 400
    assert "The quiz has no pool named “Basic”: its pools are “Basics”." in text(typo)
    fields["pool"] = "Basics"
    assert client.post(f"/teach/quizzes/{QUIZ}/new-question", data=fields).status_code == 303
    refused = publish(client, token)
    assert refused.status_code == 409
    assert "the pool &#34;Basics&#34; draws 2 questions, but 1 question names it" in text(refused)
