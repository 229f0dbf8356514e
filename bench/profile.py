"""`make profile PAGE=question`: where one page's time goes, in process, with no server or network.

Seeds a temporary SQLite database as `make bench` does, serves the page a few thousand times
through the WSGI app while py-spy samples the process, then prints the share of the samples spent
under each part of a request. bench/analysis.md quotes its tables.
"""

import collections
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("question", "answer", "results", "class")
STUDENTS, ATTEMPTS_EACH = 500, 25
FORM = "application/x-www-form-urlencoded"
PARTS = {
    "loading the attempt (one query, through the ORM)": "attempt_or_404",
    "the class report's queries and counting": "class_report",
    "rendering the template": "render_template",
    "the answer form and its CSRF token": "AnswerForm",
    "recording the answer (two statements, one commit)": "record_answer",
    "the rate limiter": "_check_request_limit",
    "reading the session cookie": "open_session",
    "writing the session cookie": "save_session",
    "security headers (Talisman)": "Talisman",
    "building addresses (url_for)": "url_for",
    "ending the request (session and connection back)": "do_teardown",
}
"""What each row of the table counts: samples with this function anywhere on their stack."""


def serve(page: str, requests: int) -> None:
    """Seed, then answer `requests` requests for the page; py-spy watches this."""
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]
    import factories
    from flask import session
    from flask_wtf.csrf import generate_csrf

    from app import create_app
    from app.attempts.service import start_attempt
    from app.extensions import db
    from app.models import Attempt
    from app.served import current_bank

    from helpers import csrf_token

    folder = Path(tempfile.mkdtemp(prefix="quizwright-profile-"))
    app = create_app(
        {"SECRET_KEY": "profile", "SQLALCHEMY_DATABASE_URI": f"sqlite:///{folder}/p.db"}
    )
    with app.app_context():
        db.create_all()
        quiz = next(iter(current_bank().quizzes.values()))
        # The class of `make bench`: 500 students, 25 attempts each, every question answered.
        teacher = factories.instructor("bench", "bench password")
        class_id = factories.class_(teacher, "Profiled class").id
        picks = [[q.choices[(n + i) % len(q.choices)].id for i, q in enumerate(quiz.questions)]
                 for n in range(STUDENTS * ATTEMPTS_EACH)]  # fmt: skip
        names = [f"Student {n % STUDENTS:03d}" for n in range(len(picks))]
        last = factories.attempts(quiz, picks, names=names, class_id=class_id)[-1]
        results = f"/attempts/{db.session.get(Attempt, last).token}/results"
        signer = app.session_interface.get_signing_serializer(app)
        posts = []
        for n in range(requests // len(quiz.questions) + 1):
            browser = f"profile-{n:014d}"  # as long as a real browser's id
            attempt = start_attempt(quiz, f"Profiled {n}", browser)
            # A fresh app context too: Flask-WTF keeps the token in g, which lives there.
            with app.app_context(), app.test_request_context():
                token = generate_csrf()
                cookie = f"browser={browser}; session={signer.dumps(dict(session))}"
            for number, question in enumerate(quiz.questions, 1):
                body = urllib.parse.urlencode(
                    {"csrf_token": token, "choice": question.choices[0].id}
                )
                posts.append((f"/attempts/{attempt.token}/questions/{number}", cookie, body))

    # The class page's client carries the instructor's login, which is bound to its address and
    # browser. The test client's own work is in the time printed, not in the shares.
    client = app.test_client()
    page_html = client.get("/login").get_data(as_text=True)
    form = {"csrf_token": csrf_token(page_html), "username": "bench", "password": "bench password"}
    client.post("/login", data=form)
    reader = posts[-1]  # never answered below: its first question stays a form
    made = {
        "question": lambda i: (reader[0].rsplit("/", 1)[0] + "/1", reader[1], None),
        "answer": lambda i: posts[i],
        "results": lambda i: (results, None, None),
        "class": lambda i: (f"/teach/classes/{class_id}", None, None),
    }[page]
    count = requests if page != "class" else max(requests // 100, 20)
    sent = [made(i) for i in range(count)]
    # A student's pages carry their own cookies: not the instructor's jar.
    client = client if page == "class" else app.test_client(use_cookies=False)
    started = time.process_time()
    for path, cookie, body in sent:
        headers = {"Cookie": cookie} if cookie else {}
        if body:
            client.post(path, data=body, headers=headers, content_type=FORM)
        else:
            client.get(path, headers=headers)
    spent = (time.process_time() - started) / count * 1000
    print(f"{page}: {spent:.2f} ms of CPU per request with the test client's, {count} requests",
          file=sys.stderr)  # fmt: skip


def shares(raw: Path) -> list[tuple[str, float]]:
    """Share of the in-request samples under each part, from py-spy's raw output."""
    total, under = 0, collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if "wsgi_app" not in stack:
            continue  # seeding, not serving
        total += int(count)
        for part, function in PARTS.items():
            if function in stack:
                under[part] += int(count)
    return [(part, under[part] / total) for part in PARTS if under[part]]


def main() -> None:
    page = sys.argv[1] if len(sys.argv) > 1 else "question"
    if page not in PAGES:
        raise SystemExit(f"PAGE must be one of {', '.join(PAGES)}")
    if os.environ.get("PROFILE_SERVING"):
        serve(page, 3000)
        return
    raw = Path(tempfile.mkdtemp(prefix="quizwright-profile-")) / f"{page}.txt"
    spy = Path(sys.executable).parent / "py-spy"
    subprocess.run(
        [spy, "record", "--rate", "500", "--format", "raw", "--output", raw,
         "--", sys.executable, __file__, page],
        env={**os.environ, "PROFILE_SERVING": "1"}, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    print(f"| {page} page: part of the request | share of its time |\n| --- | ---: |")
    for part, share in shares(raw):
        print(f"| {part} | {share:.0%} |")


if __name__ == "__main__":
    main()
