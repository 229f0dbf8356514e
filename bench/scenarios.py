"""The benchmark's data and prepared requests for the rules, sign-in and LTI scenarios, each made
through the app's own code (factories, start_attempt, the LTI people functions) as a user's
actions would make it. Call the seeding functions inside an app context."""

import json
import random
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import factories
import requests
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from flask import session
from flask_wtf.csrf import generate_csrf
from test_lti import CLIENT_ID, DEPLOYMENT, LEARNER, TEACHER, Person, Platform, PlatformSite
from test_lti import launch as full_launch
from test_question_types import typed_bank as choice_types_bank
from test_typed_answers import CAPITAL, DISTANCE

from app.attempts.service import record_version, start_attempt, store_answers
from app.bank import Quiz
from app.config import PROJECT_ROOT
from app.extensions import db
from app.grading import grade
from app.lti.models import LtiCourse, LtiPlatform
from app.lti.people import launched_from, roster_student_for, user_for
from app.lti.platforms import PlatformDetails, save_platform
from app.models import Class, FeedbackWhen, now
from app.question_types import right_choice

Request = tuple[str, str, str, tuple[str, ...]]
"""What wrk sends: method, path, body and headers ("Name: value")."""

FORM = "Content-Type: application/x-www-form-urlencoded"
# A quiz window open around the whole run, as a class's assignment would be on the day.
RULES = {"time_limit_minutes": 60, "attempts_allowed": 3}
STUDENTS_PER_ADDRESS = 100
"""Personal-code starts and LTI logins come from this many students per school address
(X-Forwarded-For): the app allows 300 starts and 600 LTI logins per address a minute, which one
address would pass in seconds."""


TYPES_SLUG = "one-of-each-type"
TYPES = ("numerical", "short answer", "true or false", "select all")
"""The question types beyond single choice, in the order of the quiz `bank_with_every_type` adds."""


def bank_with_every_type(folder: Path) -> str:
    """questions.json with a second quiz of one question of each type beyond single choice, as
    the tests write them; the path of the bank written in `folder`."""
    bank = json.loads((PROJECT_ROOT / "questions.json").read_text())
    choices = json.loads(Path(choice_types_bank(folder)).read_text())["quizzes"][0]["questions"]
    true_false, select_all = choices[:2]
    bank["quizzes"].append({
        "slug": TYPES_SLUG, "title": "One of each type",
        "description": "A question of each type a student types or ticks.",
        "questions": [DISTANCE, CAPITAL, true_false, select_all],
    })  # fmt: skip
    path = folder / "bench-bank.json"
    path.write_text(json.dumps(bank))
    return str(path)


def school_address(n: int) -> str:
    """The address the nth student's requests come from, STUDENTS_PER_ADDRESS to a school."""
    school = n // STUDENTS_PER_ADDRESS
    return f"10.{school // 256 % 256}.{school % 256}.1"


def open_window() -> dict:
    """Opened an hour ago, closing tomorrow: every rule is checked and none refuses."""
    return {"opens_at": now() - timedelta(hours=1), "closes_at": now() + timedelta(days=1)}


def browser_id(prefix: str, n: int) -> str:
    """A browser id of the shape the app accepts from its cookie (22 URL-safe characters)."""
    return f"{prefix}{n:0{22 - len(prefix)}d}"


def browser_cookie(app, browser: str) -> tuple[str, str]:
    """The CSRF token and cookies of a browser that has its id and a session, as a browser has
    after opening its first form."""
    signer = app.session_interface.get_signing_serializer(app)
    # A fresh app context too: Flask-WTF caches the token in g, which lives there.
    with app.app_context(), app.test_request_context():
        token = generate_csrf()
        return token, f"browser={browser}; session={signer.dumps(dict(session))}"


def answer_posts(app, quiz: Quiz, attempts, rng: random.Random, numbers=None) -> list[Request]:
    """A POST of a random choice for each question (or those `numbers`) of each attempt, from
    its own browser, so no two answers are the same request."""
    posts = []
    for attempt in attempts:
        token, cookie = browser_cookie(app, attempt.browser)
        for number, question in enumerate(quiz.questions, 1):
            if numbers is None or number in numbers:
                choice = rng.choice(question.choices).id
                body = urllib.parse.urlencode({"csrf_token": token, "choice": choice})
                path = f"/attempts/{attempt.token}/questions/{number}"
                posts.append(("POST", path, body, (f"Cookie: {cookie}", FORM)))
    return posts


def split(items: list, parts: int) -> list[list]:
    """`items` in `parts` runs of equal size, one for each wrk run, so no run repeats another's."""
    size = len(items) // parts
    return [items[k * size : (k + 1) * size] for k in range(parts)]


def assigned_answers(app, teacher, quiz: Quiz, rng, attempts: int, runs: int) -> list[list]:
    """Answering under an assignment's rules: a class that opens, closes, limits time and
    attempts and shows feedback after each answer; each student's fresh attempt to answer."""
    class_ = factories.class_(teacher, "Assigned class", join_code="BENCH3")
    assignment = factories.assignment(class_, quiz, **open_window(), **RULES)
    started = [
        start_attempt(quiz, f"Assigned {n}", browser_id("assigned-", n), class_.id,
                      assignment=assignment)
        for n in range(attempts)
    ]  # fmt: skip
    posts = answer_posts(app, quiz, started, rng)
    rng.shuffle(posts)
    return split(posts, runs)


def held_results(teacher, quiz: Quiz) -> tuple[str, str]:
    """A finished attempt whose assignment holds feedback until the quiz closes (tomorrow), and
    the cookie of the browser that took it: the results page it sees."""
    class_ = factories.class_(teacher, "Held class", join_code="BENCH4")
    assignment = factories.assignment(
        class_, quiz, **open_window(), feedback=FeedbackWhen.AFTER_CLOSE
    )
    browser = browser_id("held-", 0)
    marks = [n % 3 != 0 for n in range(len(quiz.questions))]
    taken = factories.attempt(
        quiz, "Held Student", answers=factories.right_or_wrong(quiz, marks), class_id=class_.id,
        browser=browser, assignment=assignment,
    )  # fmt: skip
    return f"/attempts/{taken.token}/results", f"browser={browser}"


def personal_starts(app, teacher, quiz: Quiz, students: int, runs: int) -> list[list]:
    """A roster class whose students sign in by personal code under the assignment's rules:
    for each student, the POST of "I am <name>" on their code's page from their own browser."""
    class_ = factories.class_(teacher, "Codes class", join_code="BENCH5")
    factories.assignment(class_, quiz, **open_window(), **RULES)
    roster = []
    for first in range(0, students, 2000):  # the most one paste may add
        names = "\n".join(f"Coder {n:05d}" for n in range(first, min(first + 2000, students)))
        roster += factories.roster(class_.id, names)
    starts = []
    for n, student in enumerate(roster):
        token, cookie = browser_cookie(app, browser_id("coder-", n))
        body = urllib.parse.urlencode({"csrf_token": token, "quiz": quiz.slug})
        address = school_address(n)
        starts.append(("POST", f"/s/{student.sign_in_code}", body,
                       (f"Cookie: {cookie}", FORM, f"X-Forwarded-For: {address}")))  # fmt: skip
    return split(starts, runs)


@dataclass
class QuickPlatform(Platform):
    """The test platform with its key loaded once: loading an RSA private key checks it, tens of
    milliseconds that tests/test_lti.py's platform spends on every login, launch and score it
    answers, which would time the test platform instead of the tool."""

    registrations: dict = field(default_factory=dict)

    def registration(self, target: str):
        if target not in self.registrations:
            made = super().registration(target)
            kid = made.get_kid()
            made.get_kid = lambda: kid
            private = load_pem_private_key(self.key.encode(), password=None)
            made.set_platform_private_key(private)  # PyJWT signs with the loaded key as well
            made.set_platform_public_key(private.public_key())
            self.registrations[target] = made
        return self.registrations[target]


@dataclass
class Lti:
    """The test platform of tests/test_lti.py, served in this process on its own port, with its
    course's class in the tool (made by an instructor's launch) assigning the quiz."""

    site: PlatformSite = field(default_factory=PlatformSite)
    platform: QuickPlatform | None = None
    slug: str = ""
    class_id: int | None = None
    prepared: int = 0

    def __post_init__(self):
        # The test platform writes a response's head and body in two packets; with Nagle's
        # algorithm on, the second waits for the tool's delayed ACK, 40 ms a score, which
        # would time the test platform rather than the sender.
        self.site.server.RequestHandlerClass.disable_nagle_algorithm = True

    def register(self) -> None:
        """Register the platform, as `flask lti add-platform` does."""
        save_platform(
            PlatformDetails(self.site.url, CLIENT_ID, f"{self.site.url}/auth",
                            f"{self.site.url}/token", f"{self.site.url}/jwks.json",
                            (DEPLOYMENT,), "Bench platform")
        )  # fmt: skip

    def open_course(self, base: str, quiz: Quiz) -> None:
        """An instructor's whole launch, which makes the course's class (and fetches the
        platform's keys the first time); the class then assigns the quiz."""
        self.platform = QuickPlatform(self.site, base)
        sent = full_launch(self.platform, requests.Session(), TEACHER)
        if sent.response.status_code != 303:
            raise SystemExit(f"the instructor's launch answered {sent.response.status_code}")
        course = db.session.scalars(db.select(LtiCourse)).one()
        self.class_id = course.class_id
        factories.assignment(db.session.get(Class, self.class_id), quiz, **open_window(), **RULES)
        self.slug = quiz.slug

    @property
    def target(self) -> str:
        return f"{self.platform.tool}/lti/launch"

    def launches(self, count: int) -> list[Request]:
        """Learners' launches ready to post: each learner's login at the tool over HTTP (its
        state cookie and nonce), then the platform's id_token signed here. A nonce lasts ten
        minutes and an id_token five, so make them just before they are sent."""
        tag = self.prepared
        self.prepared += count
        with ThreadPoolExecutor(4) as pool:
            return list(pool.map(lambda n: self._launch(f"{tag + n:06d}"), range(count)))

    def _launch(self, n: str) -> Request:
        # The link names its quiz, as one made by deep linking does: the site offers two.
        who = Person(f"bench-learner-{n}", f"Learner {n}", LEARNER, custom={"quiz": self.slug})
        login = urllib.request.Request(
            self.platform.login_url(who.sub, self.target),
            headers={"X-Forwarded-For": school_address(int(n))},
        )
        try:
            urllib.request.build_opener(_NoRedirect).open(login)
            raise SystemExit("the LTI login did not redirect to the platform")
        except urllib.error.HTTPError as answer:
            if answer.code != 302:
                raise SystemExit(f"the LTI login answered {answer.code}") from answer
            cookies = [c.split(";", 1)[0] for c in answer.headers.get_all("Set-Cookie")]
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(answer.headers["Location"])
                                                .query))  # fmt: skip
        form = self.platform.authorize(query, self.target, who)
        body = urllib.parse.urlencode({"id_token": form["id_token"], "state": form["state"]})
        return ("POST", "/lti/launch", body, ("Cookie: " + "; ".join(cookies), FORM))

    def finishing_answers(self, app, quiz: Quiz, rng, attempts: int, runs: int) -> list[list]:
        """Launched attempts with every question answered but the last, made as a learner's
        launch makes them; for each, the POST of its last answer, which finishes it and writes
        its grade to the outbox in the same transaction."""
        platform = db.session.scalars(db.select(LtiPlatform)).one()
        assignment = db.session.get(Class, self.class_id).current_assignments[0]
        line_item = f"{self.site.url}/lineitems/resource-link-1"
        started = []
        for n in range(attempts):
            user = user_for(platform, f"bench-finisher-{n:06d}", f"Finisher {n}")
            student = roster_student_for(user, self.class_id)
            started.append(
                start_attempt(quiz, student.name, browser_id("finisher-", n), self.class_id,
                              assignment=assignment, roster_student=student,
                              with_rows=launched_from(user.id, "resource-link-1", line_item))
            )  # fmt: skip
        # All but the last answer, through the statements answering runs, in one transaction.
        record_version(quiz)
        moment = now()
        answered = [
            (attempt.id, grade(question, rng.choice(question.choices).id), moment)
            for attempt in started
            for question in quiz.questions[:-1]
        ]
        store_answers(db.session.connection(), answered, len(quiz.questions))
        db.session.commit()
        posts = answer_posts(app, quiz, started, rng, numbers={len(quiz.questions)})
        return split(posts, runs)

    def key_set_fetches(self) -> int:
        return self.site.key_set_fetches

    def scores_received(self) -> int:
        return len(self.site.scores)

    def close(self) -> None:
        self.site.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def small_roster_class(teacher, quiz: Quiz, students: int, attempts_each: int, rng) -> int:
    """A roster class like the benchmark's but of few students, for its class page's query
    count."""
    class_ = factories.class_(teacher, "Small class", join_code="BENCH6")
    roster = factories.roster(class_.id, "\n".join(f"Small {n}" for n in range(students)))
    picks = random_picks(quiz, students * attempts_each, rng)
    signed_in = [roster[n % students] for n in range(len(picks))]
    factories.attempts(quiz, picks, names=[s.name for s in signed_in], class_id=class_.id,
                       roster_students=signed_in)  # fmt: skip
    return class_.id


def random_picks(quiz: Quiz, count: int, rng) -> list[Sequence[str]]:
    """Choices for `count` attempts, by students whose skill varies as in a real class."""
    picks = []
    for _ in range(count):
        skill = rng.random()
        mine = []
        for question in quiz.questions:
            right = rng.random() < 0.3 + 0.6 * skill
            wrong = [c for c in question.choices if not c.correct]
            mine.append((right_choice(question) if right else rng.choice(wrong)).id)
        picks.append(mine)
    return picks
