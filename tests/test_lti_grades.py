"""Grade passback over Assignment and Grade Services: the outbox written with the answer that
finished the attempt, and `flask lti send-scores` posting to the test platform's line item
with a token it obtained by a signed JWT assertion."""

import re
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import jwt
import pytest
import requests
import test_lti
from test_lti import (
    LEARNER,
    STUDENT,
    TEACHER,
    Person,
    answer_all,
    assign,
    csrf_token,
    launch,
    page_text,
)

from app import signals
from app.attempts.policy import ANSWER_GRACE
from app.extensions import db
from app.lti.keys import signing_key
from app.lti.models import LtiAttempt, LtiScore
from app.lti.rules import retry_delay
from app.lti.sending import MOST_TRIES, send_due
from app.lti.storage import aware
from app.models import Assignment, Attempt, FeedbackWhen, RosterStudent, now
from app.question_types import right_choice
from app.reports import Counting
from app.served import current_bank

from helpers import SLUG, free_port, make_app

pytestmark = pytest.mark.postgres
# The test platform and the tool under gunicorn, as the launch tests use them.
site, tool, bare_tool, world = test_lti.site, test_lti.tool, test_lti.bare_tool, test_lti.world


def send(world, *args) -> str:
    """One `flask lti send-scores` pass, as cron runs it."""
    result = world.app.test_cli_runner().invoke(args=["lti", "send-scores", *args])
    assert result.exit_code == 0, result.output
    return result.output


def take_quiz(world, who=STUDENT) -> str:
    """A learner launches and answers every question; the attempt's token."""
    browser = requests.Session()
    location = launch(world.platform, browser, who).response.headers["Location"]
    answer_all(world, browser, location)
    return location.split("/")[2]


def scores(world) -> list[LtiScore]:
    with world.app.app_context():
        return db.session.scalars(db.select(LtiScore).order_by(LtiScore.id)).all()


def test_a_finished_attempt_sends_its_score_once(world):
    """The last answer writes one waiting score; one sending pass posts it to the launch's line
    item with the AGS fields and the learner's sub, after a client-credentials token whose
    assertion the tool signed; a second pass sends nothing more."""
    launch(world.platform, requests.Session(), TEACHER)
    take_quiz(world)
    [waiting] = scores(world)
    assert waiting.state == "waiting"
    assert world.platform.site.scores == []  # no request waited on the platform

    assert "Sent 1 score;" in send(world)
    [(path, body)] = world.platform.site.scores
    assert path == f"/lineitems/{STUDENT.link}/scores"
    with world.app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        kid = signing_key().kid
    assert body["userId"] == STUDENT.sub
    assert body["scoreGiven"] == attempt.points and body["scoreMaximum"] == attempt.answered
    assert body["activityProgress"] == "Completed"
    assert body["gradingProgress"] == "FullyGraded"
    assert body["timestamp"].endswith("+00:00")
    [token] = world.platform.site.token_requests
    assert token["grant_type"] == "client_credentials"
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in token["scope"].split()
    assert jwt.get_unverified_header(token["client_assertion"])["kid"] == kid

    assert "Sent 0 scores;" in send(world)
    assert len(world.platform.site.scores) == 1
    assert scores(world)[0].state == "sent"


def test_scores_queue_while_the_platform_is_down_then_arrive_in_order(world):
    """While the platform answers 503 the scores wait, with the reason and a later next try;
    once it is back they arrive, once each, in the order the attempts finished."""
    launch(world.platform, requests.Session(), TEACHER)
    world.platform.site.score_status = 503
    take_quiz(world)
    take_quiz(world)
    output = send(world)
    assert "Sent 0 scores; 1 waiting to retry" in output
    first, second = scores(world)
    assert (first.state, first.tries, second.tries) == ("waiting", 1, 0)
    assert first.last_error.startswith("503")
    assert first.next_try_at.replace(tzinfo=now().tzinfo) > now()

    # Not due yet, so nothing is tried: not even the second score, which may not pass the first.
    assert "Sent 0 scores; 0 waiting" in send(world)
    assert [s.tries for s in scores(world)] == [1, 0]
    world.platform.site.score_status = 200
    with world.app.app_context():
        db.session.execute(db.update(LtiScore).values(next_try_at=now()))
        db.session.commit()
    assert "Sent 2 scores;" in send(world)
    sent = [body for _, body in world.platform.site.scores]
    assert [body["timestamp"] for body in sent] == [s.payload["timestamp"] for s in scores(world)]
    assert sent[0]["timestamp"] < sent[1]["timestamp"]
    assert [s.state for s in scores(world)] == ["sent", "sent"]
    send(world)
    assert len(world.platform.site.scores) == 2


def test_a_refused_score_is_failed_with_the_reason_on_the_class_page(world):
    """A 4xx is not retried: the score is failed with the platform's reason, which the class
    page shows next to the student, as it shows sent and waiting ones."""
    teacher = requests.Session()
    class_page = world.tool + launch(world.platform, teacher, TEACHER).response.headers["Location"]
    take_quiz(world)
    assert "Waiting to send" in page_text(teacher.get(class_page))
    world.platform.site.score_status = 400
    assert "1 failed" in send(world)
    [failed] = scores(world)
    assert failed.state == "failed" and failed.last_error.startswith("400")
    assert "Failed: 400" in page_text(teacher.get(class_page))
    world.platform.site.score_status = 200
    send(world)
    assert world.platform.site.scores == []


def test_the_class_page_says_sent_to_the_lms(world):
    teacher = requests.Session()
    class_page = world.tool + launch(world.platform, teacher, TEACHER).response.headers["Location"]
    take_quiz(world)
    send(world)
    assert "Sent to the LMS" in page_text(teacher.get(class_page))


def test_the_grade_follows_the_assignments_grade_from(world):
    """With "Best attempt" the second score is the better of the two attempts, whatever the
    later attempt scored."""
    launch(world.platform, requests.Session(), TEACHER)
    assign(world, grade_from=Counting.BEST)
    take_quiz(world)
    with world.app.app_context():
        db.session.execute(db.update(Attempt).values(points=7))
        db.session.commit()
    take_quiz(world)
    first, second = scores(world)
    with world.app.app_context():
        latest = db.session.scalars(db.select(Attempt).order_by(Attempt.id.desc())).first()
    assert latest.points < 7
    assert second.payload["scoreGiven"] == 7


def answer_right(world, browser, token) -> None:
    """Answer every question of an attempt with its right choice."""
    with world.app.app_context():
        quiz = current_bank().quizzes[SLUG]
    for number, question in enumerate(quiz.questions, 1):
        here = f"{world.tool}/attempts/{token}/questions/{number}"
        fields = {
            "csrf_token": csrf_token(browser.get(here).text),
            "choice": right_choice(question).id,
        }
        assert browser.post(here, data=fields, allow_redirects=False).status_code == 303


@pytest.mark.parametrize("way", ["Retake quiz", "their sign-in code"])
def test_every_attempt_of_a_launched_student_reaches_the_lms(world, way):
    """Attacker repro: a launched student's retake from the results page, or a start by their
    roster code, carries the launch's user, resource link and line item: graded from the
    latest attempt, the LMS gets the 8/8 Quizwright shows, not the first attempt's score."""
    launch(world.platform, requests.Session(), TEACHER)
    assign(world, grade_from=Counting.LATEST)
    browser = requests.Session()
    first = launch(world.platform, browser, STUDENT).response.headers["Location"]
    answer_all(world, browser, first)
    token = first.split("/")[2]
    if way == "Retake quiz":
        results = browser.get(f"{world.tool}/attempts/{token}/results")
        retake_at = f"{world.tool}/attempts/{token}/retake"
        fields = {"csrf_token": csrf_token(results.text)}
        again = browser.post(retake_at, data=fields, allow_redirects=False)
    else:
        with world.app.app_context():
            code = db.session.scalars(db.select(RosterStudent.sign_in_code)).one()
        card = browser.get(f"{world.tool}/s/{code}")
        again = browser.post(f"{world.tool}/s/{code}", data={"csrf_token": csrf_token(card.text),
                             "quiz": SLUG}, allow_redirects=False)  # fmt: skip
    assert again.status_code == 303, page_text(again)
    retake = again.headers["Location"].split("/")[2]
    assert retake != token
    answer_right(world, browser, retake)
    with world.app.app_context():
        quiz = current_bank().quizzes[SLUG]
        links = db.session.scalars(db.select(LtiAttempt).order_by(LtiAttempt.attempt_id)).all()
        assert [(link.resource_link_id, link.line_item_url) for link in links] == [
            (links[0].resource_link_id, links[0].line_item_url)
        ] * 2
    last = scores(world)[-1]
    assert last.payload["scoreGiven"] == len(quiz.questions)
    send(world)
    assert world.platform.site.scores[-1][1]["scoreGiven"] == len(quiz.questions)


def test_voiding_and_restoring_an_attempt_sends_the_grade_again(world):
    """Voiding the best attempt sends the grade without it, restoring it sends it back, and
    voiding every attempt clears the LMS grade; each change goes once, in order."""
    teacher = requests.Session()
    launch(world.platform, teacher, TEACHER)
    assign(world, grade_from=Counting.BEST)
    best = take_quiz(world)
    with world.app.app_context():
        db.session.execute(db.update(Attempt).values(points=7))
        db.session.commit()
    other = take_quiz(world)
    with world.app.app_context():
        points = db.session.scalars(db.select(Attempt).filter_by(token=other)).one().points

    def change(token, action):
        review = teacher.get(f"{world.tool}/teach/attempts/{token}")
        token_field = csrf_token(review.text)
        changed = teacher.post(f"{world.tool}/teach/attempts/{token}/{action}",
                               data={"csrf_token": token_field, "confirm": "yes"},
                               allow_redirects=False)  # fmt: skip
        assert changed.status_code == 303, page_text(changed)

    change(best, "void")
    change(best, "restore")
    change(best, "void")
    change(other, "void")
    change(other, "void")  # voided already: nothing to send
    send(world)
    given = [body.get("scoreGiven") for _, body in world.platform.site.scores]
    assert given[1:] == [7, points, 7, points, None]  # the first: the first attempt's own
    cleared = world.platform.site.scores[-1][1]
    assert cleared["gradingProgress"] == "NotReady" and cleared["userId"] == STUDENT.sub
    occasions = [score.occasion for score in scores(world)]
    assert occasions == ["finished", "finished", "voided 1", "restored 2", "voided 3", "voided 1"]


def test_an_attempt_whose_time_ran_out_sends_its_grade(world):
    """A student who answered one question and never came back: once the time limit has
    passed, the sending pass finishes the attempt at its deadline and sends what it scored."""
    launch(world.platform, requests.Session(), TEACHER)
    assign(world, time_limit_minutes=20)
    browser = requests.Session()
    location = launch(world.platform, browser, STUDENT).response.headers["Location"]
    page = browser.get(world.tool + location)
    choice = re.findall(r'type="radio"[^>]*value="([^"]+)"', page.text)[0]
    browser.post(
        world.tool + location, data={"csrf_token": csrf_token(page.text), "choice": choice}
    )
    assert "Sent 0 scores;" in send(world)  # still answering
    with world.app.app_context():
        db.session.execute(db.update(Attempt).values(ends_at=now() - timedelta(minutes=1)))
        db.session.commit()
    assert "Sent 1 score;" in send(world)
    with world.app.app_context():
        attempt = db.session.scalars(db.select(Attempt)).one()
        assert aware(attempt.finished_at) == aware(attempt.ends_at) + ANSWER_GRACE
    [(_, body)] = world.platform.site.scores
    assert body["scoreGiven"] == attempt.points and attempt.answered == 1
    assert "Sent 0 scores;" in send(world)


def test_held_feedback_holds_the_score_until_release(world):
    """With feedback held until the quiz closes the score waits, unsent, until "Release
    feedback", then goes."""
    teacher = requests.Session()
    launch(world.platform, teacher, TEACHER)
    assign(world, feedback=FeedbackWhen.AFTER_CLOSE, closes_at=now() + timedelta(days=1))
    take_quiz(world)
    assert "1 held until feedback is released" in send(world)
    assert world.platform.site.scores == []
    with world.app.app_context():
        db.session.execute(db.update(Assignment).values(feedback_released_at=now()))
        db.session.commit()
    assert "Sent 1 score;" in send(world)


def test_held_feedback_holds_the_score_until_the_last_attempt_can_end(world):
    """Feedback held until the quiz closes opens once no attempt can still be answered (an
    attempt started just before the close runs its time limit): the score waits as long as the
    student pages do, not just until the close."""
    launch(world.platform, requests.Session(), TEACHER)
    assign(world, feedback=FeedbackWhen.AFTER_CLOSE, closes_at=now() + timedelta(days=1),
           time_limit_minutes=20)  # fmt: skip
    take_quiz(world)
    with world.app.app_context():
        # Closed a minute ago: a classmate who started just before may answer 19 minutes more.
        db.session.execute(db.update(Assignment).values(closes_at=now() - timedelta(minutes=1)))
        db.session.commit()
    assert "1 held until feedback is released" in send(world)
    assert world.platform.site.scores == []
    with world.app.app_context():
        db.session.execute(db.update(Assignment).values(closes_at=now() - timedelta(minutes=21)))
        db.session.commit()
    assert "Sent 1 score;" in send(world)


def test_retry_delay_doubles_up_to_six_hours():
    assert [retry_delay(n) for n in (1, 2, 3)] == [timedelta(seconds=s) for s in (30, 60, 120)]
    assert retry_delay(MOST_TRIES) == timedelta(hours=6)


def test_the_unique_constraint_refuses_a_second_score_for_one_finish(world):
    """The outbox holds one score per attempt and occasion, whatever code path tried twice."""
    launch(world.platform, requests.Session(), TEACHER)
    take_quiz(world)
    [first] = scores(world)
    with world.app.app_context(), pytest.raises(Exception, match="(?i)unique"):
        db.session.add(
            LtiScore(
                attempt_id=first.attempt_id,
                occasion="finished",
                user_id=first.user_id,
                line_item_url=first.line_item_url,
                payload={},
            )  # fmt: skip
        )
        db.session.commit()


def test_an_unreachable_line_item_is_retried(world):
    """A connection refused counts as the platform down: the score waits with the reason."""
    launch(world.platform, requests.Session(), TEACHER)
    take_quiz(world)
    with world.app.app_context():
        db.session.execute(
            db.update(LtiScore).values(line_item_url=f"http://127.0.0.1:{free_port()}/items/1")
        )
        db.session.commit()
    assert "1 waiting to retry" in send(world)
    [waiting] = scores(world)
    assert waiting.state == "waiting" and "ConnectionError" in waiting.last_error


def test_a_token_answer_without_a_token_is_retried(world):
    """A platform whose token endpoint answers 200 without an access token is treated as down:
    the pass ends normally and the score waits with the reason, rather than the sender
    crashing on it at every pass and holding back every platform's scores queued after it."""
    launch(world.platform, requests.Session(), TEACHER)
    take_quiz(world)

    class NoToken:
        def config(self):
            return self

        def get_access_token(self, form):
            return {"token_type": "Bearer"}

    world.platform.site.platform = NoToken()
    assert "1 waiting to retry" in send(world)
    [waiting] = scores(world)
    assert waiting.state == "waiting" and "access_token" in waiting.last_error


def test_two_senders_at_once_send_each_score_once(world):
    """Cron's pass and a `--loop` sender running together claim each score once."""
    launch(world.platform, requests.Session(), TEACHER)
    for n in range(3):
        take_quiz(world, Person(f"learner-{n}", f"Learner {n}", LEARNER))

    def one_pass(_):
        with world.app.app_context():
            return send_due().sent

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert sum(pool.map(one_pass, range(2))) == 3
    assert sorted(body["userId"] for _, body in world.platform.site.scores) == [
        f"learner-{n}" for n in range(3)
    ]


def test_every_app_in_one_process_shares_one_connection_of_each_lti_receiver(tmp_path):
    """Tests and servers make many apps in one process: a second connection of LTI's receivers
    would queue every grade twice and tie every retake to its launch twice."""
    make_app(tmp_path)
    make_app(tmp_path)
    for signal in (signals.grade_changed, signals.attempt_starting, signals.class_page):
        assert len(signal.receivers) == 1, signal.name
