"""A lecture hall: every student of a roster class, all behind one school address, opens their
personal link within the first seconds, starts the quiz, reads each question, answers it, reads
the feedback and at the end their results, as a browser would (cookies, forms, redirects).

Run by bench/run.py; alone, against a server already seeded by `seed`, call `take`."""

import random
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import factories
import requests
import scenarios
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

from app.bank import Quiz
from app.models import Answer, Attempt

from helpers import csrf_token

ADDRESS = "10.99.0.1"
"""The one address every student's requests come from, as a school's network shows them."""
ARRIVALS_SECONDS = 10  # the link goes up on the projector: everyone opens it within seconds
READING_SECONDS = (0.5, 3.0)  # a question or its feedback read, at random within this range
DEADLINE_SECONDS = 120
SAID_AFTER_ANSWERING = ("<strong>Correct.</strong>", "<strong>Incorrect.</strong>",
                        "Your answer is saved", "is saved.")  # fmt: skip


@dataclass
class Seen:
    """What the students' browsers met: every status and every request's time."""

    statuses: dict[int, int] = field(default_factory=dict)
    times: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def got(self, response: requests.Response, started: float) -> requests.Response:
        for hop in [*response.history, response]:
            self.statuses[hop.status_code] = self.statuses.get(hop.status_code, 0) + 1
        self.times.append(time.perf_counter() - started)
        return response


def seed(teacher, quiz: Quiz, students: int) -> list[str]:
    """A roster class of `students` with the quiz assigned; their personal codes."""
    class_ = factories.class_(teacher, "Lecture hall", join_code="HAPPY3")
    factories.assignment(class_, quiz, **scenarios.open_window())
    roster = factories.roster(class_.id, "\n".join(f"Hall {n:04d}" for n in range(students)))
    return [student.sign_in_code for student in roster]


def student(base: str, code: str, quiz: Quiz, seen: Seen, rng: random.Random) -> None:
    """One student's whole visit; what failed goes into `seen.failures`."""
    browser = requests.Session()
    # As a browser does, send again once when a kept-alive connection was closed as the request
    # went out (the server's keep-alive timeout met the student's reading time).
    again = Retry(total=1, connect=1, read=1, status=0, allowed_methods=None)
    browser.mount("http://", HTTPAdapter(max_retries=again))
    browser.headers.update({"User-Agent": "quizwright-hall", "X-Forwarded-For": ADDRESS})

    def get(path):
        started = time.perf_counter()
        return seen.got(browser.get(base + path, timeout=30), started)

    def post(path, form):
        started = time.perf_counter()
        return seen.got(browser.post(base + path, data=form, timeout=30), started)

    try:
        page = get(f"/s/{code}")
        form = {"csrf_token": csrf_token(page.text), "quiz": quiz.slug}
        page = post(f"/s/{code}", form)
        attempt = re.search(r"/attempts/([^/]+)/questions/1$", page.url)
        if attempt is None:
            raise AssertionError(f"the start led to {page.url} ({page.status_code})")
        questions = f"/attempts/{attempt.group(1)}/questions"
        for number, question in enumerate(quiz.questions, 1):
            if number > 1 and not page.url.endswith(f"{questions}/{number}"):
                page = get(f"{questions}/{number}")
            time.sleep(rng.uniform(*READING_SECONDS))
            choice = rng.choice(question.choices).id
            form = {"csrf_token": csrf_token(page.text), "choice": choice}
            feedback = post(f"{questions}/{number}", form)
            # A verdict, or only "saved" (and on to the next question) while another class's
            # assignment of the quiz holds its key back, as the benchmark's held class does.
            if not any(said in feedback.text for said in SAID_AFTER_ANSWERING):
                raise AssertionError(f"question {number} answered {feedback.status_code}")
            page = feedback
            time.sleep(rng.uniform(*READING_SECONDS))
        results = get(f"/attempts/{attempt.group(1)}/results")
        if results.status_code != 200:
            raise AssertionError(f"results answered {results.status_code}")
    except (requests.RequestException, AssertionError) as error:
        seen.failures.append(f"{code[:3]}…: {error}")


def take(base: str, codes: list[str], quiz: Quiz, count) -> dict:
    """The whole hall through the server at `base`; what it took and what was stored.
    `count(model)` counts a table's rows."""
    seen = Seen()
    before = count(Answer), count(Attempt)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(codes)) as hall:
        for n, code in enumerate(codes):
            rng = random.Random(n)
            arrival = started + rng.uniform(0, ARRIVALS_SECONDS)

            def visit(code=code, rng=rng, arrival=arrival):
                time.sleep(max(0.0, arrival - time.perf_counter()))
                student(base, code, quiz, seen, rng)

            hall.submit(visit)
    seconds = time.perf_counter() - started
    times = sorted(seen.times)
    return {
        "students": len(codes),
        "seconds": seconds,
        "requests": len(times),
        "p50": 1000 * times[len(times) // 2],
        "p99": 1000 * times[int(len(times) * 0.99)],
        "slowest": 1000 * times[-1],
        "statuses": dict(sorted(seen.statuses.items())),
        "failures": seen.failures,
        "attempts": count(Attempt) - before[1],
        "answers": count(Answer) - before[0],
        "expected": len(codes) * len(quiz.questions),
    }


def line(hall: dict) -> str:
    """The hall's figures as the report states them."""
    refused = sum(n for status, n in hall["statuses"].items() if status == 429)
    errors = sum(n for status, n in hall["statuses"].items() if status >= 500)
    within = "within" if hall["seconds"] <= DEADLINE_SECONDS else "**over**"
    return (
        f"Lecture hall: {hall['students']} roster students behind one address opened their "
        f"personal links within {ARRIVALS_SECONDS} s, then started, read and answered every "
        f"question ({READING_SECONDS[0]} to {READING_SECONDS[1]} s reading each question and "
        f"each feedback) and opened their results: all done in {hall['seconds']:.0f} s "
        f"({within} the {DEADLINE_SECONDS} s target); {hall['requests']:,} requests, p50 "
        f"{hall['p50']:.0f} ms, p99 {hall['p99']:.0f} ms, slowest {hall['slowest']:.0f} ms; "
        f"{refused} refused (429), {errors} server errors; {hall['attempts']} attempts and "
        f"{hall['answers']:,} of {hall['expected']:,} answers stored; statuses "
        + ", ".join(f"{status}: {n:,}" for status, n in hall["statuses"].items())
        + (f"; failed: {'; '.join(hall['failures'][:5])}" if hall["failures"] else "")
        + "."
    )
