"""Moving between questions while feedback waits: any question in any order, answers changed
until the finish with every change kept, flags and the summary; the deadline and the finish
end changes as they end answers, under concurrent saves too; and a quiz that shuffles asks each
attempt its questions in an order of its own."""

import csv
import io
import re
from datetime import timedelta

import factories
import pytest
from test_authoring import EDITOR, base_of, publish, write_quiz
from test_timing import assign, race, taking

from app.attempts.policy import ANSWER_GRACE
from app.authoring import drafts
from app.extensions import db
from app.grading import earned
from app.models import Answer, Assignment, Attempt, FeedbackWhen, Instructor, ReplacedAnswer
from app.question_types import right_choice
from app.served import current_bank, recheck_bank
from app.zones import utc

from helpers import SLUG, Student, login, queries, shown, text, wrong_choice

pytestmark = pytest.mark.postgres


def stored(app, token) -> tuple[Attempt, dict[str, Answer], list[ReplacedAnswer]]:
    """The attempt, its answers by question, and the answers it replaced, oldest first."""
    with app.app_context():
        attempt = db.session.scalars(db.select(Attempt).filter_by(token=token)).one()
        answers = {a.question_id: a for a in attempt.answers}
        replaced = db.session.scalars(
            db.select(ReplacedAnswer)
            .filter_by(attempt_id=attempt.id)
            .order_by(ReplacedAnswer.replaced_at)
        ).all()
        return attempt, answers, replaced


def save(student, number, go="next", **fields):
    """Press a button of a moving question's form: its answer, flag and where to go."""
    return student.post(student.question_url(number), go=go, **fields)


def checked(page) -> list[str]:
    """The choices a question page shows ticked."""
    return re.findall(r' checked id="choice-\d+" name="choice" [^>]*value="([^"]+)"', page)


@pytest.fixture
def held(app, quiz, course):
    return assign(app, quiz, course, feedback=FeedbackWhen.AFTER_ATTEMPT)


def test_a_student_goes_back_changes_an_answer_and_the_change_is_kept(
    app, client, quiz, course, held
):
    """A wrong answer to question 1, then question 2, then back to change the first: the score
    counts the change, the first answer is kept with its replacement's time, and the responses
    CSV lists both."""
    student = taking(app, client, quiz, held)
    first, second = quiz.questions[:2]
    assert save(student, 1, choice=wrong_choice(first).id).location == student.question_url(2)
    assert save(student, 2, go="previous", choice=right_choice(second).id).location == (
        student.question_url(1)
    )
    assert checked(text(client.get(student.question_url(1)))) == [wrong_choice(first).id]
    assert save(student, 1, choice=right_choice(first).id).status_code == 303
    assert checked(text(client.get(student.question_url(1)))) == [right_choice(first).id]
    attempt, answers, [replaced] = stored(app, student.token)
    assert (attempt.answered, attempt.points, attempt.finished_at) == (2, 2, None)
    assert answers[first.id].response == right_choice(first).id
    assert (replaced.question_id, replaced.response) == (first.id, wrong_choice(first).id)
    assert replaced.replaced_at == answers[first.id].answered_at
    # Saving the same answer again is no change.
    save(student, 1, choice=right_choice(first).id)
    assert len(stored(app, student.token)[2]) == 1

    student.finish()
    assert "You scored <strong>2 out of 8</strong>" in text(client.get(student.results_url))
    lecturer = app.test_client()
    login(lecturer, "teacher", "correct horse")
    csv_page = lecturer.get(f"/teach/classes/{course}/responses.csv?quiz={quiz.slug}")
    rows = list(csv.DictReader(io.StringIO(csv_page.get_data().decode("utf-8-sig"))))
    ones = [
        (row["choice"], row["replaced_at_utc"] != "") for row in rows if row["question"] == first.id
    ]
    assert ones == [(wrong_choice(first).id, True), (right_choice(first).id, False)]


def test_moving_on_without_an_answer_saves_nothing_and_a_bad_one_is_refused(
    app, client, quiz, held
):
    """Any button moves on with no answer given; an answer that is no choice is told so in
    place and nothing is stored. Buttons name the previous, the next, a number or the summary."""
    student = taking(app, client, quiz, held)
    assert save(student, 1).location == student.question_url(2)
    refused = save(student, 3, choice="not-a-choice")
    assert refused.status_code == 400 and "Choose one answer." in text(refused)
    assert stored(app, student.token)[1] == {}
    assert save(student, 3, go="previous").location == student.question_url(2)
    assert save(student, 3, go="5").location == student.question_url(5)
    assert save(student, 8).location == student.results_url
    for beyond in ("summary", "9", "0", "-1", "٣"):
        assert save(student, 3, go=beyond).location == student.results_url, beyond


def test_a_flag_shows_on_the_map_and_the_summary_until_it_is_taken_off(app, client, quiz, held):
    """Question 2 flagged without an answer; question 1 answered: the map and the summary say
    which is which, with a link back; unticking the flag takes it off."""
    student = taking(app, client, quiz, held)
    save(student, 1, choice=right_choice(quiz.questions[0]).id)
    save(student, 2, flag="1")
    page = text(client.get(student.question_url(3)))
    assert 'aria-label="Question 1, answered"' in page
    assert 'aria-label="Question 2, not answered, flagged"' in page
    assert '<strong aria-current="step" aria-label="Question 3, this one">3</strong>' in page
    assert 'name="flag" value="1" checked' in text(client.get(student.question_url(2)))
    summary = text(client.get(student.results_url))
    assert "Summary of your attempt" in summary
    assert "Not answered, <strong>flagged</strong>" in summary
    assert f'href="{student.question_url(2)}"' in summary and "Finish attempt" in summary
    save(student, 2)
    assert ", flagged" not in text(client.get(student.results_url))
    assert stored(app, student.token)[0].flagged is None


def test_finishing_ends_changes(app, client, quiz, held):
    """After "Finish attempt" an answer stays as it was and an unanswered question takes none."""
    student = taking(app, client, quiz, held)
    first = quiz.questions[0]
    save(student, 1, choice=wrong_choice(first).id)
    student.finish()
    assert save(student, 1, choice=right_choice(first).id).status_code == 409
    assert save(student, 2, choice=right_choice(quiz.questions[1]).id).status_code == 409
    attempt, answers, replaced = stored(app, student.token)
    assert answers[first.id].response == wrong_choice(first).id and replaced == []
    assert attempt.answered == 1


def test_the_time_limit_ends_changes(app, client, quiz, course, clock):
    """Past the limit and its grace, a change is refused, nothing moves, and the attempt is
    finished at its deadline."""
    timed = assign(app, quiz, course, feedback=FeedbackWhen.AFTER_ATTEMPT, time_limit_minutes=2)
    student = taking(app, client, quiz, timed)
    first = quiz.questions[0]
    save(student, 1, choice=wrong_choice(first).id)
    clock.wait(timedelta(minutes=2) + ANSWER_GRACE + timedelta(seconds=1))
    late = save(student, 1, choice=right_choice(first).id)
    assert late.status_code == 409 and "Time is up" in text(late)
    attempt, answers, replaced = stored(app, student.token)
    assert answers[first.id].response == wrong_choice(first).id and replaced == []
    assert attempt.finished_at is not None


def test_answers_given_after_each_answer_stay_locked(app, client, quiz, course):
    """With feedback after each answer nothing moves freely: no map, no flag, and the first
    answer stands."""
    plain = assign(app, quiz, course, time_limit_minutes=30)
    student = taking(app, client, quiz, plain)
    page = text(client.get(student.question_url(1)))
    assert "Flag this question" not in page and 'class="question-map"' not in page
    first = quiz.questions[0]
    student.answer(1, wrong_choice(first).id)
    student.answer(1, right_choice(first).id)
    attempt, answers, replaced = stored(app, student.token)
    assert not attempt.moves_freely and replaced == []
    assert answers[first.id].response == wrong_choice(first).id


def test_concurrent_changes_to_one_question_keep_the_last_consistently(app, quiz, course, held):
    """Two tabs save different answers to one question at once: one answer stands, the other
    is kept as replaced (or was never stored first), and the tally is the standing answer's."""
    first = quiz.questions[0]
    choices = [right_choice(first).id, wrong_choice(first).id]
    for round_ in range(6):
        browser = f"moving-browser-{round_:07d}"  # 22 characters, as the cookie holds
        client = app.test_client()
        student = taking(app, client, quiz, held, browser=browser)
        student.csrf  # noqa: B018 - fetch the form token before the race
        url = student.question_url(1)
        statuses = race(app, client, student, browser, *[(url, {"choice": c}) for c in choices])
        assert statuses == [303, 303]
        attempt, answers, replaced = stored(app, student.token)
        standing = answers[first.id].response
        assert [r.response for r in replaced] == [c for c in choices if c != standing]
        assert attempt.answered == 1
        assert attempt.points == earned(1, answers[first.id].mark, answers[first.id].is_correct)


def test_a_change_racing_the_finish_is_saved_before_it_or_refused(app, quiz, course, held):
    """Released together, a change and "Finish attempt" leave the answer as it stood when the
    finish went in: saved before it (and counted), or refused and told so."""
    first = quiz.questions[0]
    for round_ in range(6):
        browser = f"finish-browser-{round_:07d}"
        client = app.test_client()
        student = taking(app, client, quiz, held, answers=[wrong_choice(first).id], browser=browser)
        student.csrf  # noqa: B018 - fetch the form token before the race
        finish, change = race(
            app, client, student, browser,
            (f"/attempts/{student.token}/finish", {}),
            (student.question_url(1), {"choice": right_choice(first).id}),
        )  # fmt: skip
        attempt, answers, replaced = stored(app, student.token)
        assert finish == 303 and attempt.finished_at is not None
        now_standing = answers[first.id]
        assert now_standing.answered_at <= attempt.finished_at
        assert attempt.points == earned(1, now_standing.mark, now_standing.is_correct)
        expected = (
            (303, right_choice(first).id, 1) if replaced else (409, wrong_choice(first).id, 0)
        )
        assert (change, now_standing.response, len(replaced)) == expected


def test_a_quiz_that_shuffles_asks_each_attempt_its_own_order(app, course):
    """Six questions shuffled: each attempt keeps its own order, its pages number the questions
    in it, and its review lists them in it."""
    with app.app_context():
        owner = db.session.scalars(db.select(Instructor)).one()
        record = factories.owned_quiz(owner, "shuffled", questions=6)
        drafts.save(record, lambda draft: draft.update(shuffle_questions=True), owner.id)
        drafts.publish(record, owner.id)
        recheck_bank()
        quiz = current_bank().quizzes["shuffled"]
    assert quiz.shuffle_questions
    held = assign(app, quiz, course, feedback=FeedbackWhen.AFTER_ATTEMPT)
    orders = set()
    for n in range(8):
        client = app.test_client()
        student = taking(app, client, quiz, held, browser=f"shuffle-browser-{n:06d}")
        order = stored(app, student.token)[0].question_order
        assert sorted(order) == [q.id for q in quiz.questions]
        orders.add(tuple(order))
    prompts = {q.id: q.prompt for q in quiz.questions}
    assert f'<legend class="prompt">{prompts[order[0]]}' in text(
        client.get(student.question_url(1))
    )
    student.finish()
    review = text(client.get(student.results_url))
    places = [review.index(prompts[question_id]) for question_id in order]
    assert places == sorted(places)
    assert len(orders) > 1  # eight attempts in one order: a chance of one in 720**7


def test_the_editor_sets_question_shuffling(app, client):
    """The quiz's settings have the box; saved and published, the quiz shuffles."""
    with app.app_context():
        factories.instructor("author")
    login(client, "author", "correct horse")
    token = write_quiz(client, questions=("First?", "Second?"))
    page = text(client.get(EDITOR))
    assert "Shuffle the questions: each attempt asks them in an order of its own" in page
    settings = {
        "csrf_token": token,
        "base": base_of(client.get(EDITOR)),
        "title": "Photosynthesis",
        "slug": "photosynthesis",
        "description": "Plants.",
        "shuffle_questions": "y",
    }
    assert client.post(EDITOR, data=settings).status_code == 303
    assert publish(client, token).status_code == 303
    with app.app_context():
        recheck_bank()
        assert current_bank().quizzes["photosynthesis"].shuffle_questions


def test_every_question_answered_is_not_finished_until_the_student_says_so(
    app, client, quiz, course, held
):
    """The class page and the gradebook list an attempt whose every question is answered as not
    finished, scoreless, until "Finish attempt"."""
    student = taking(app, client, quiz, held)
    for number, question in enumerate(quiz.questions, 1):
        save(student, number, choice=right_choice(question).id)
    lecturer = app.test_client()
    login(lecturer, "teacher", "correct horse")
    page = f"/teach/classes/{course}?quiz={quiz.slug}"
    gradebook = f"/teach/classes/{course}/gradebook.csv?quiz={quiz.slug}"
    assert "Not finished" in text(lecturer.get(page))
    assert "Ada,,,not finished," in lecturer.get(gradebook).get_data(as_text=True)
    student.finish()
    assert "Not finished" not in text(lecturer.get(page))
    assert "Ada,,,finished,1,0,8,8," in lecturer.get(gradebook).get_data(as_text=True)


def test_a_rule_changed_to_each_answer_mid_exam_shows_nothing_until_the_finish(
    app, client, quiz, held
):
    """The lecturer switches the assignment to feedback after each answer while Ada may still
    change her answers: her pages, and her results link, keep the key until she finishes."""
    student = taking(app, client, quiz, held)
    first = quiz.questions[0]
    save(student, 1, choice=wrong_choice(first).id)
    with app.app_context():
        db.session.get(Assignment, held).feedback = FeedbackWhen.EACH_ANSWER.value
        db.session.commit()
    right = shown(right_choice(first).text)
    for page in (text(client.get(student.results_url)), text(client.get(student.question_url(1)))):
        assert "Incorrect" not in page and right not in page.split("<legend")[0]
    assert "Finish attempt" in text(client.get(student.results_url))
    assert app.test_client().get(student.results_url).status_code == 403
    student.finish()
    assert "Incorrect." in text(client.get(student.results_url))


def test_a_finish_pressed_after_the_time_ran_out_ends_the_attempt_at_its_deadline(
    app, client, quiz, course, clock
):
    """Three hours late, "Finish attempt" stamps the deadline, not the press: the time taken is
    the limit and its grace."""
    timed = assign(app, quiz, course, feedback=FeedbackWhen.AFTER_ATTEMPT, time_limit_minutes=10)
    student = taking(app, client, quiz, timed)
    save(student, 1, choice=right_choice(quiz.questions[0]).id)
    clock.wait(timedelta(hours=3))
    student.finish()
    attempt = stored(app, student.token)[0]
    assert utc(attempt.finished_at) == utc(attempt.ends_at) + ANSWER_GRACE


def test_a_question_number_too_long_to_read_leads_to_the_summary(app, client, quiz, held):
    student = taking(app, client, quiz, held)
    sent = save(student, 1, go="9" * 5000, choice=right_choice(quiz.questions[0]).id)
    assert sent.status_code == 303 and sent.location == student.results_url


def test_starts_sent_at_once_open_one_attempt_that_can_change(app, quiz, course):
    """Four starts of one student released together, attempts unlimited: one attempt starts,
    the others are refused as one still open, so none can be finished to read the key."""
    unlimited = assign(app, quiz, course, feedback=FeedbackWhen.AFTER_ATTEMPT)
    with app.app_context():
        code = db.session.get(Assignment, unlimited).class_.join_code
    for round_ in range(4):
        browser = f"starting-browser-{round_:07d}"
        client = app.test_client()
        client.set_cookie("browser", browser)
        student = Student(client)
        student.csrf  # noqa: B018 - fetch the form token before the race
        start = (f"/quizzes/{SLUG}", {"name": f"Eve {round_}", "class_code": code})
        statuses = race(app, client, student, browser, *[start] * 4)
        assert sorted(statuses) == [303, 403, 403, 403]
        with app.app_context():
            started = db.select(db.func.count()).where(Attempt.student_name == f"Eve {round_}")
            assert db.session.scalar(started) == 1


def test_a_roster_student_cannot_start_beside_their_typed_attempt_still_open(app, quiz, course):
    """Re-review: Dana typed her name and began the exam; then the roster listed her, and her
    sign-in started a second attempt to finish for the key. Her typed one counts as hers."""
    unlimited = assign(app, quiz, course, feedback=FeedbackWhen.AFTER_ATTEMPT)
    with app.app_context():
        code = db.session.get(Assignment, unlimited).class_.join_code
    typed = Student(app.test_client())
    assert typed.start(name="dana  SMITH", class_code=code).status_code == 303
    save(typed, 1, choice=wrong_choice(quiz.questions[0]).id)
    with app.app_context():
        [dana] = factories.roster(course, "Dana Smith")
        sign_in = f"/s/{dana.sign_in_code}"
    roster = Student(app.test_client())
    roster.client.get(sign_in)
    refused = roster.post(sign_in, quiz=SLUG)
    assert refused.status_code == 403 and "Finish your attempt" in text(refused)
    typed.finish()
    assert roster.post(sign_in, quiz=SLUG).status_code == 303


def test_no_second_attempt_starts_while_the_first_can_still_change(app, quiz, course):
    """With two attempts allowed, finishing a second to read the key and then changing the
    first is refused at the start: the summary offers no retake, and one asked for anyway is
    refused with the reason; once the first is finished, the second starts."""
    twice = assign(app, quiz, course, feedback=FeedbackWhen.AFTER_ATTEMPT, attempts_allowed=2)
    with app.app_context():
        code = db.session.get(Assignment, twice).class_.join_code
    student = Student(app.test_client())
    assert student.start(name="Eve", class_code=code).status_code == 303
    save(student, 1, choice=wrong_choice(quiz.questions[0]).id)
    assert "Retake quiz" not in text(student.client.get(student.results_url))
    refused = student.post(f"/attempts/{student.token}/retake")
    assert refused.status_code == 403 and "Your attempt is still open" in text(refused)
    again = student.start(name="Eve", class_code=code)
    assert again.status_code == 403 and "Finish your attempt" in text(again)
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(Attempt)) == 1
    student.finish()
    assert student.post(f"/attempts/{student.token}/retake").status_code == 303


def test_an_exams_pages_cost_a_fixed_number_of_statements(app, client, quiz, course, held):
    """A question read costs what it costs on a one-pass quiz; an answer costs two statements
    more, which changes need: the attempt's row locked first, so that two saves of one question
    take turns, then the answer it replaces read under that lock."""
    student = taking(app, client, quiz, held)
    first = quiz.questions[0]
    student.csrf  # noqa: B018 - fetch the form token before counting
    with queries(app) as asking:
        assert client.get(student.question_url(1)).status_code == 200
    with queries(app) as answering:
        assert save(student, 1, choice=wrong_choice(first).id).status_code == 303
    with queries(app) as changing:
        assert save(student, 1, choice=right_choice(first).id).status_code == 303

    # Reads: the attempt with its answers, its assignment's rules (with the student's exception).
    def tables(statements):
        return [sql.split()[1].split(".")[0] for sql in statements]

    assert tables(asking) == tables(answering[:2]) == ["attempts", "assignments"]
    assert [" ".join(sql.split()[:3]) for sql in answering[2:]] == [
        "UPDATE attempts SET", "SELECT answers.id, answers.attempt_id,", "INSERT INTO answers",
        "UPDATE attempts SET",
    ]  # fmt: skip
    # A change updates the answer and keeps the one it replaced.
    assert len(changing) == len(answering) + 1
