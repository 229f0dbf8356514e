"""A student's attempt under an assignment's rules: the clock, late answers, "Finish attempt",
and feedback held until the attempt ends or the quiz closes."""

import csv
import io
import re
import threading
from datetime import UTC, datetime, timedelta

import factories
import pytest

from app.attempts.lookup import attempt_or_404
from app.attempts.policy import ANSWER_GRACE, CLOSE_GRACE
from app.attempts.service import finish_attempt, record_answer
from app.extensions import db
from app.grading import grade
from app.models import Answer, Assignment, Attempt, Class, FeedbackWhen
from app.question_types import right_choice
from app.zones import utc

from helpers import Student, login, queries, shown, text, wrong_choice

pytestmark = pytest.mark.postgres

BROWSER = "timed-browser-00000000"  # 22 characters, as the browser cookie holds


def assign(app, quiz, class_id, **settings) -> int:
    with app.app_context():
        return factories.assignment(db.session.get(Class, class_id), quiz, **settings).id


def taking(app, client, quiz, assignment_id, answers=(), browser=BROWSER, name="Ada") -> Student:
    """A student whose browser started an attempt under the assignment, with these answers."""
    with app.app_context():
        assignment = db.session.get(Assignment, assignment_id)
        token = factories.attempt(
            quiz,
            name,
            answers=answers,
            class_id=assignment.class_id,
            browser=browser,
            assignment=assignment,
        ).token
    client.set_cookie("browser", browser)
    student = Student(client)
    student.token = token
    return student


def stored_attempt(app) -> Attempt:
    with app.app_context():
        return db.session.scalars(db.select(Attempt)).one()


def held_back(quiz, number, chosen=None):
    """What must not reach a student before feedback shows, for a question they answered."""
    question = quiz.questions[number - 1]
    strings = [shown(c.explanation) for c in question.choices]
    strings += [shown(question.explanation), "Right answer", "Correct", "Incorrect", "scored"]
    if chosen is not None and not chosen.correct:
        strings.append(shown(right_choice(question).text))
    return strings


def sent(app, response) -> str:
    """Everything a response hands the browser: page, headers, and its cookies decoded."""
    session = app.session_interface.get_signing_serializer(app)
    cookies = [
        str(session.loads(value.split(";")[0].split("=", 1)[1]))
        for value in response.headers.getlist("Set-Cookie")
        if value.startswith("session=") and value.split(";")[0] != "session="
    ]
    return " ".join([response.get_data(as_text=True), str(response.headers), *cookies])


def assert_nothing_given_away(app, response, strings):
    everything = sent(app, response)
    for string in strings:
        assert string not in everything, string


# --- The clock --------------------------------------------------------------------------------


def test_a_timed_question_says_when_the_attempt_ends_and_counts_down(app, client, quiz, course):
    """The end in the page's zone inside <time>, for the script to restate in the browser's;
    the seconds left."""
    timed = assign(app, quiz, course, time_limit_minutes=30)
    student = taking(app, client, quiz, timed)
    ends = utc(stored_attempt(app).ends_at)
    page = text(client.get(student.question_url(1)))
    assert (
        f'This attempt ends at <time datetime="{ends:%Y-%m-%dT%H:%M:%SZ}" data-zone="UTC" '
        f'class="clock">{ends:%H:%M} UTC</time>, 30 minutes after it started.' in page
    )
    seconds = int(re.search(r'data-seconds-left="(\d+)"', page).group(1))
    assert 1790 <= seconds <= 1800
    assert '<span class="countdown" role="timer" hidden></span>' in page
    assert '<p class="visually-hidden" role="status"></p>' in page
    assert '<script src="/static/countdown.js" defer></script>' in page


def test_a_start_just_before_the_close_is_told_it_keeps_its_whole_time(app, client, quiz, course):
    """Closing at 02:35 and ending at 02:37 disagree only until the page says why."""
    closes = datetime.now(UTC) + timedelta(minutes=1)
    timed = assign(app, quiz, course, time_limit_minutes=2, closes_at=closes)
    student = taking(app, client, quiz, timed)
    page = text(client.get(student.question_url(1)))
    assert (
        "2 minutes after it started: the quiz closes to new attempts at <time "
        f'datetime="{closes:%Y-%m-%dT%H:%M:%SZ}" data-zone="UTC" class="clock">{closes:%H:%M} '
        "UTC</time>, and one started before then keeps its whole time." in page
    )
    start = text(client.get(f"/quizzes/{quiz.slug}?code={quiz_code(app, course)}"))
    assert "closes to new attempts <time" in start


def quiz_code(app, class_id) -> str:
    with app.app_context():
        return db.session.get(Class, class_id).join_code


def test_the_question_page_goes_to_the_results_once_time_is_up(app, client, quiz, course, clock):
    """With or without JavaScript: once no answer can be saved (the limit and its grace), the
    page refreshes to the results instead of leaving disabled buttons on screen."""
    timed = assign(app, quiz, course, time_limit_minutes=2)
    student = taking(app, client, quiz, timed)
    page = client.get(student.question_url(1)).get_data(as_text=True)
    refresh = re.search(r'<meta http-equiv="refresh" content="(\d+);url=([^"]+)">', page)
    assert refresh and refresh.group(2) == f"/attempts/{student.token}/results"
    assert 120 + ANSWER_GRACE.seconds - 2 <= int(refresh.group(1)) <= 120 + ANSWER_GRACE.seconds + 1
    clock.wait(timedelta(minutes=2) + ANSWER_GRACE + timedelta(seconds=1))
    assert client.get(refresh.group(2)).status_code == 200
    with app.app_context():
        other_class = factories.class_(factories.instructor("colleague"), "Chemistry").id
    untimed = assign(app, quiz, other_class)
    other = taking(app, app.test_client(), quiz, untimed, browser="untimed-browser-0000000")
    assert "http-equiv" not in other.client.get(other.question_url(1)).get_data(as_text=True)


def test_time_taken_past_the_limit_says_it_is_the_grace(app, client, quiz, course, clock):
    """2 min 5 s on a 2-minute limit is the grace for an answer already on its way."""
    timed = assign(app, quiz, course, time_limit_minutes=2, feedback=FeedbackWhen.EACH_ANSWER)
    student = taking(
        app, client, quiz, timed, answers=[right_choice(q).id for q in quiz.questions[:-1]]
    )
    clock.wait(timedelta(minutes=2, seconds=5))
    assert (
        student.answer(len(quiz.questions), right_choice(quiz.questions[-1]).id).status_code == 303
    )
    page = text(client.get(student.results_url))
    # 5 s of the clock's, and the real seconds a loaded machine took between the steps.
    assert re.search(
        r"Time taken: 2 min [5-9] s: over the 2-minute limit by the few seconds of grace", page
    )


def test_an_untimed_attempt_has_no_clock_and_behaves_as_before(app, client, quiz, course):
    """Feedback after each answer and no time limit: the verdict at once, no clock or finish."""
    plain = assign(app, quiz, course)
    student = taking(app, client, quiz, plain)
    page = text(client.get(student.question_url(1)))
    assert "data-seconds-left" not in page and "countdown.js" not in page
    assert "Finish attempt" not in page and ">Check answer</button>" in page
    question = quiz.questions[0]
    assert student.answer(1, right_choice(question).id).location == student.question_url(1)
    feedback = text(client.get(student.question_url(1)))
    assert "Correct." in feedback and shown(question.explanation) in feedback


def test_the_countdown_script_is_served_from_this_site(client):
    with client.get("/static/countdown.js") as response:
        script = response.get_data(as_text=True)
    assert "data-seconds-left" in script and "performance.now()" in script


# --- Late answers -----------------------------------------------------------------------------


def test_an_answer_after_the_time_and_its_grace_is_refused_and_the_attempt_finished(
    app, client, quiz, course, clock
):
    """Within the grace an answer counts; after it, a page says the time ran out, and the
    attempt is scored on what was answered."""
    timed = assign(app, quiz, course, time_limit_minutes=30)
    student = taking(app, client, quiz, timed)
    first, second, third = quiz.questions[:3]
    assert student.answer(1, right_choice(first).id).status_code == 303
    clock.wait(timedelta(minutes=30) + ANSWER_GRACE - timedelta(seconds=2))
    assert student.answer(2, right_choice(second).id).status_code == 303
    clock.wait(timedelta(seconds=3))

    late = student.answer(3, right_choice(third).id)
    assert late.status_code == 409
    page = text(late)
    assert "<h1>Time is up</h1>" in page and "so this answer was not saved" in page
    attempt = stored_attempt(app)
    assert attempt.answered == 2
    assert utc(attempt.finished_at) == utc(attempt.ends_at) + ANSWER_GRACE

    results = text(client.get(student.results_url))
    assert "Your time ran out at" in results
    assert "You scored <strong>2 out of 8</strong>" in results
    assert "Finish attempt" not in results and "Continue quiz" not in results
    assert client.get(student.question_url(4)).location == student.results_url
    assert client.get(f"/attempts/{student.token}/continue").location == student.results_url


def test_an_attempt_left_open_past_its_time_is_over_without_another_answer(
    app, client, quiz, course, clock
):
    """Nobody pressed anything when the time ran out: the pages say so all the same."""
    timed = assign(app, quiz, course, time_limit_minutes=5)
    student = taking(app, client, quiz, timed, answers=[right_choice(quiz.questions[0]).id])
    assert "Continue your attempt" in text(client.get("/"))
    clock.wait(timedelta(minutes=6))
    assert "Continue your attempt" not in text(client.get("/"))
    results = text(client.get(student.results_url))
    assert "Your time ran out at" in results and "You scored <strong>1 out of 8</strong>" in results


@pytest.mark.parametrize(
    ("settings", "waited", "time_taken"),
    [
        ({"time_limit_minutes": 5}, timedelta(minutes=6), "5 min 10 s"),
        ({"closes_in": timedelta(minutes=10)}, timedelta(minutes=16), "15 min 0 s"),
    ],
    ids=["time limit", "close"],
)
def test_the_class_page_and_gradebook_score_an_attempt_its_deadline_ended(
    app, client, quiz, course, clock, settings, waited, time_taken
):
    """The student walked away and never pressed anything: once the deadline passes, the
    instructor sees the attempt over and scored on what was answered, not "Not finished"."""
    closes_in = settings.get("closes_in")
    if closes_in is not None:
        settings = {"closes_at": datetime.now(UTC) + closes_in}
    assignment = assign(app, quiz, course, **settings)
    taking(app, client, quiz, assignment, answers=[right_choice(quiz.questions[0]).id])
    # Counted from the start itself, which a loaded machine may reach seconds late.
    if closes_in is not None:
        with app.app_context():
            started_at = db.session.scalars(db.select(Attempt.started_at)).one()
            db.session.get(Assignment, assignment).closes_at = utc(started_at) + closes_in
            db.session.commit()
    teacher = app.test_client()
    login(teacher, "teacher", "correct horse")
    gradebook = f"/teach/classes/{course}/gradebook.csv"
    assert "Not finished (1/8 answered)" in text(teacher.get(f"/teach/classes/{course}"))
    assert gradebook_row(teacher.get(gradebook))[3:7] == ["not finished", "0", "1", ""]

    clock.wait(waited)
    page = text(teacher.get(f"/teach/classes/{course}"))
    assert "Not finished" not in page
    assert '<td class="num">1/8</td> <td class="num">12.5%</td>' in page
    assert f"<td>{time_taken}</td>" in page
    assert gradebook_row(teacher.get(gradebook))[:9] == [
        "Ada", "", "", "finished", "1", "0", "1", "8", "12.5"
    ]  # fmt: skip
    assert stored_attempt(app).finished_at is None  # read as over, not written as over
    # Its statistics count the questions the time cut off as wrong, as its score does.
    assert "(1 answered) · discrimination" in page and "(0 answered, 1 not)" in page
    assert '<td>Not answered</td> <td class="num">1</td>' in page
    items = teacher.get(f"/teach/classes/{course}/items.csv").get_data().decode("utf-8-sig")
    second = list(csv.DictReader(io.StringIO(items)))[1]
    assert (second["n"], second["not_answered"], second["facility"]) == ("1", "1", "0")


def gradebook_row(response) -> list[str]:
    """The only student's row of a gradebook download, after its header."""
    lines = response.get_data().decode("utf-8-sig").splitlines()
    assert lines[1:] == lines[1:2], lines
    return lines[1].split(",")


def test_without_a_time_limit_the_close_ends_the_attempt_after_its_grace(
    app, client, quiz, course, clock
):
    closes = datetime.now(UTC) + timedelta(minutes=10)
    closing = assign(app, quiz, course, closes_at=closes)
    student = taking(app, client, quiz, closing)
    clock.wait(timedelta(minutes=10) + CLOSE_GRACE - timedelta(seconds=30))
    assert student.answer(1, right_choice(quiz.questions[0]).id).status_code == 303
    clock.wait(timedelta(minutes=1))
    late = student.answer(2, right_choice(quiz.questions[1]).id)
    assert late.status_code == 409 and "<h1>The quiz has closed</h1>" in text(late)
    assert "The quiz closed at" in text(client.get(student.results_url))
    assert stored_attempt(app).answered == 1


# --- Finish attempt ---------------------------------------------------------------------------


def test_finish_attempt_ends_it_and_later_answers_are_refused(app, client, quiz, course):
    timed = assign(app, quiz, course, time_limit_minutes=30)
    student = taking(app, client, quiz, timed, answers=[right_choice(quiz.questions[0]).id])
    question_page = text(client.get(student.question_url(2)))
    assert f'<a href="{student.results_url}">Finish attempt…</a>' in question_page
    summary = text(client.get(student.results_url))
    assert f'action="/attempts/{student.token}/finish"' in summary
    assert "Questions you have not answered score nothing" in summary

    finished = student.post(f"/attempts/{student.token}/finish")
    assert finished.status_code == 303 and finished.location == student.results_url
    assert stored_attempt(app).finished_at is not None
    results = text(client.get(student.results_url))
    assert "You scored <strong>1 out of 8</strong>" in results
    assert "ran out" not in results and "Finish attempt" not in results

    refused = student.answer(2, right_choice(quiz.questions[1]).id)
    assert refused.status_code == 409
    assert "<h1>This attempt is finished</h1>" in text(refused)
    assert stored_attempt(app).answered == 1


def test_only_the_browser_that_took_it_finishes_an_attempt_with_a_form_token(
    app, client, quiz, course
):
    timed = assign(app, quiz, course, time_limit_minutes=30)
    student = taking(app, client, quiz, timed)
    stranger = Student(app.test_client())
    assert stranger.post(f"/attempts/{student.token}/finish").status_code == 403
    assert client.post(f"/attempts/{student.token}/finish").status_code == 400  # no CSRF token
    assert stored_attempt(app).finished_at is None


def test_finishing_twice_keeps_the_first_moment(app, client, quiz, course):
    timed = assign(app, quiz, course, time_limit_minutes=30)
    student = taking(app, client, quiz, timed)
    student.post(f"/attempts/{student.token}/finish")
    first = stored_attempt(app).finished_at
    assert student.post(f"/attempts/{student.token}/finish").status_code == 303
    assert stored_attempt(app).finished_at == first


def test_the_last_answer_finishes_an_attempt_answered_in_one_pass(app, client, quiz, course):
    timed = assign(app, quiz, course, time_limit_minutes=30)
    student = taking(
        app, client, quiz, timed, answers=[right_choice(q).id for q in quiz.questions[:7]]
    )
    assert stored_attempt(app).finished_at is None
    student.answer(8, right_choice(quiz.questions[7]).id)
    attempt = stored_attempt(app)
    assert attempt.finished_at == attempt.last_answer_at


def test_with_held_feedback_only_finishing_ends_the_attempt(app, client, quiz, course):
    """Every question answered leaves it open to changes until "Finish attempt"."""
    held = assign(app, quiz, course, feedback=FeedbackWhen.AFTER_ATTEMPT)
    student = taking(
        app, client, quiz, held, answers=[right_choice(q).id for q in quiz.questions[:7]]
    )
    assert student.answer(8, right_choice(quiz.questions[7]).id).location == student.results_url
    assert stored_attempt(app).finished_at is None
    assert "Summary of your attempt" in text(client.get(student.results_url))
    student.post(f"/attempts/{student.token}/finish")
    assert stored_attempt(app).finished_at is not None


def test_an_answer_read_before_a_finish_is_refused_by_the_database(app, quiz, course):
    """The gap the page cannot close: the answer's request read the attempt unfinished, then
    another tab finished it. The tally's WHERE finished_at IS NULL refuses the answer."""
    timed = assign(app, quiz, course, time_limit_minutes=30)
    with app.app_context():
        assignment = db.session.get(Assignment, timed)
        token = factories.attempt(
            quiz, class_id=assignment.class_id, browser=BROWSER, assignment=assignment
        ).token
    question = quiz.questions[0]
    with app.app_context():
        stale = attempt_or_404(token)
        with app.app_context():  # another request, with a session of its own
            assert finish_attempt(attempt_or_404(token))
        assert stale.finished_at is None
        assert record_answer(stale, grade(question, right_choice(question).id)) is False
    attempt = stored_attempt(app)
    assert (attempt.answered, attempt.points, attempt.last_answer_at) == (0, 0, None)
    with app.app_context():
        assert db.session.scalars(db.select(Answer)).all() == []


def race(app, client, student, browser, *posts) -> list[int]:
    """Send these posts (address, fields) from tabs of one browser, released together."""
    barrier = threading.Barrier(len(posts))
    statuses = [None] * len(posts)

    def run(index, url, fields):
        tab = app.test_client()
        tab.set_cookie("session", client.get_cookie("session").value)
        tab.set_cookie("browser", browser)
        barrier.wait()
        statuses[index] = tab.post(url, data={"csrf_token": student.csrf, **fields}).status_code

    threads = [threading.Thread(target=run, args=(n, *post)) for n, post in enumerate(posts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_finish_and_the_last_answer_race_safely(app, quiz, course):
    """Released together, a finish and an answer leave a consistent attempt: every stored answer
    counted, none after the finish, and a refused answer told so."""
    timed = assign(app, quiz, course, time_limit_minutes=30)
    for round_ in range(8):
        browser = f"racing-browser-{round_:07d}"
        client = app.test_client()
        student = taking(
            app,
            client,
            quiz,
            timed,
            browser=browser,
            answers=[right_choice(q).id for q in quiz.questions[:7]],
        )
        student.csrf  # noqa: B018 - fetch the form token before the race
        finish, answer = race(
            app, client, student, browser,
            (f"/attempts/{student.token}/finish", {}),
            (student.question_url(8), {"choice": right_choice(quiz.questions[7]).id}),
        )  # fmt: skip
        with app.app_context():
            attempt = db.session.scalars(db.select(Attempt).filter_by(token=student.token)).one()
            answers = db.session.scalars(db.select(Answer).filter_by(attempt_id=attempt.id)).all()
            assert attempt.answered == len(answers) and attempt.points == len(answers)
            assert attempt.finished_at is not None
            assert all(utc(a.answered_at) <= utc(attempt.finished_at) for a in answers)
        assert finish == 303
        assert (answer, len(answers)) in ((303, 8), (409, 7)), (answer, len(answers))


# --- Feedback held back -----------------------------------------------------------------------


def test_feedback_after_the_attempt_gives_nothing_away_until_it_is_finished(
    app, client, quiz, course
):
    held = assign(app, quiz, course, feedback=FeedbackWhen.AFTER_ATTEMPT)
    student = taking(app, client, quiz, held)
    first = quiz.questions[0]
    asked = text(client.get(student.question_url(1)))
    assert ">Save and next</button>" in asked
    assert "Whether they were right shows once you finish the attempt." in asked

    chosen = wrong_choice(first)
    saved = student.answer(1, chosen.id)
    assert saved.location == student.question_url(2)
    assert_nothing_given_away(app, saved, held_back(quiz, 1, chosen))
    following = client.get(student.question_url(2))
    assert "Your answer to question 1 is saved." in text(following)
    assert_nothing_given_away(app, following, held_back(quiz, 1, chosen))
    again = client.get(student.question_url(1))
    ticked = rf' checked id="choice-\d" name="choice" [^>]*value="{chosen.id}"'
    assert re.search(ticked, text(again))
    assert_nothing_given_away(app, again, held_back(quiz, 1))  # every choice is offered again
    summary = client.get(student.results_url)
    assert "Your answers are saved: 1 of 8 answered." in text(summary)
    assert_nothing_given_away(app, summary, held_back(quiz, 1, chosen))

    student.post(f"/attempts/{student.token}/finish")
    results = text(client.get(student.results_url))
    assert "You scored <strong>0 out of 8</strong>" in results
    assert shown(first.explanation) in results and "Incorrect." in results
    assert "Incorrect." in text(client.get(student.question_url(1)))


def test_feedback_after_the_close_is_held_until_the_close_or_a_release(
    app, client, quiz, course, clock
):
    """Finished is not enough: the student, a shared link and the headers see no verdict
    until the quiz closes or feedback is released; the class's instructors see everything."""
    closes = datetime.now(UTC) + timedelta(days=1)
    held = assign(app, quiz, course, feedback=FeedbackWhen.AFTER_CLOSE, closes_at=closes)
    choices = [wrong_choice(q).id for q in quiz.questions[:4]] + [
        right_choice(q).id for q in quiz.questions[4:]
    ]
    student = taking(app, client, quiz, held, answers=choices[:7])
    last = student.answer(8, choices[7])
    student.post(f"/attempts/{student.token}/finish")
    strings = [
        s
        for n in range(1, 9)
        for s in held_back(quiz, n, quiz.questions[n - 1].choice(choices[n - 1]))
    ]
    assert_nothing_given_away(app, last, strings)
    mine = client.get(student.results_url)
    assert mine.status_code == 200
    assert "Your answers are saved: 8 of 8 answered, attempt finished." in text(mine)
    assert "Only this browser and your instructors can open this page until" in text(mine)
    assert_nothing_given_away(app, mine, strings)
    for number in range(1, 9):
        assert_nothing_given_away(app, client.get(student.question_url(number)), strings)

    shared = app.test_client().get(student.results_url)
    assert shared.status_code == 403 and "not open yet" in text(shared)
    assert_nothing_given_away(app, shared, strings)

    with app.app_context():
        factories.instructor("stranger")
        factories.instructor("boss", admin=True)
    other = app.test_client()
    login(other, "stranger", "correct horse")
    assert other.get(student.results_url).status_code == 403
    admin = app.test_client()
    login(admin, "boss", "correct horse")
    assert "Ada scored <strong>4 out of 8</strong>" in text(admin.get(student.results_url))
    teacher = app.test_client()
    login(teacher, "teacher", "correct horse")
    as_teacher = text(teacher.get(student.results_url))
    assert "You read this as an instructor of Physics 101" in as_teacher
    assert "Ada scored <strong>4 out of 8</strong>" in as_teacher
    review = text(teacher.get(f"/teach/attempts/{student.token}"))
    assert "Scored <strong>4 out of 8</strong>" in review and "Incorrect." in review

    # At the close attempts may still be answered for CLOSE_GRACE: the review waits for them.
    clock.wait(timedelta(days=1))
    assert app.test_client().get(student.results_url).status_code == 403
    clock.wait(CLOSE_GRACE)
    assert "You scored <strong>4 out of 8</strong>" in text(client.get(student.results_url))
    opened = app.test_client().get(student.results_url)
    assert opened.status_code == 200 and "Ada scored <strong>4 out of 8</strong>" in text(opened)


def test_released_feedback_opens_the_review_before_the_close(app, client, quiz, course):
    held = assign(app, quiz, course, feedback=FeedbackWhen.AFTER_CLOSE)
    student = taking(app, client, quiz, held, answers=[right_choice(q).id for q in quiz.questions])
    assert app.test_client().get(student.results_url).status_code == 403
    assert "scored" not in text(client.get(student.results_url))
    with app.app_context():
        db.session.get(Assignment, held).feedback_released_at = datetime.now(UTC)
        db.session.commit()
    assert "You scored <strong>8 out of 8</strong>" in text(client.get(student.results_url))
    assert app.test_client().get(student.results_url).status_code == 200


def test_an_unfinished_attempt_keeps_its_feedback_after_a_release(app, client, quiz, course):
    """Released feedback shows to those who have finished; one still answering sees none."""
    held = assign(app, quiz, course, feedback=FeedbackWhen.AFTER_CLOSE, released=True)
    student = taking(app, client, quiz, held, answers=[right_choice(quiz.questions[0]).id])
    assert_nothing_given_away(app, client.get(student.results_url), held_back(quiz, 1))
    assert app.test_client().get(student.results_url).status_code == 403


# --- Query budgets ----------------------------------------------------------------------------


@pytest.mark.parametrize("feedback", list(FeedbackWhen))
def test_assigned_question_pages_cost_the_same_queries_as_any(app, client, quiz, course, feedback):
    """The assignment comes with the attempt's one query, and whether another class holds the
    key is one more whatever the rule: asking, answering and the results cost what they cost
    without an assignment; but where answers may change until the finish, saving one holds the
    attempt and reads the answer it replaces, two more."""
    rules = assign(app, quiz, course, time_limit_minutes=30, feedback=feedback)
    student = taking(app, client, quiz, rules)
    student.csrf  # noqa: B018 - fetch the form token before counting
    with queries(app) as asking:
        client.get(student.question_url(1))
    with queries(app) as answering:
        student.answer(1, right_choice(quiz.questions[0]).id)
    with queries(app) as answered:
        client.get(student.question_url(1))
    with queries(app) as results:
        client.get(student.results_url)
    saving = 4 if feedback == FeedbackWhen.EACH_ANSWER else 6
    assert (len(asking), len(answering), len(answered), len(results)) == (2, saving, 2, 2)
