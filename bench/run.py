"""`make bench`: Quizwright under load, every figure a ratio to a trivial endpoint in the same run.

Starts gunicorn with the production config on a temporary database (SQLite, or PostgreSQL when
BENCH_DATABASE_URL is set), seeds a class of 500 students with 100,000 stored answers, and
drives each scenario with wrk from a separate process. Writes bench/results.md.
"""

import os
import platform
import random
import re
import runpy
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy
from flask import session
from flask_wtf.csrf import generate_csrf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import factories  # noqa: E402

from app import create_app  # noqa: E402
from app.attempts import start_attempt  # noqa: E402
from app.bank import current_bank  # noqa: E402
from app.extensions import db  # noqa: E402
from app.models import Attempt  # noqa: E402

from helpers import csrf_token, gunicorn, half_sent_requests  # noqa: E402

STUDENTS, ATTEMPTS_EACH = 500, 25  # 500 x 25 attempts x 8 answers = 100,000 answers
WORKERS = 2 * len(os.sched_getaffinity(0)) + 1
WORKER_CLASS = runpy.run_path(str(ROOT / "gunicorn.conf.py"))["worker_class"]
CONNECTIONS = 4 * WORKERS
SECONDS = 8
AGENT = "quizwright-bench"
SECRET = "benchmark secret"
TARGETS = {"answer": 0.35, "question": 0.5, "results": 0.4}
# Slowloris: connections that send half a request and then one more byte now and then.
SLOW_CLIENTS = 50


def seed(app) -> dict:
    """The class, its history, one logged-in instructor and fresh attempts to answer in."""
    rng = random.Random(2026)
    with app.app_context():
        db.create_all()
        teacher = factories.instructor("bench", "bench password")
        class_ = factories.class_(teacher, "Benchmark class", join_code="BENCH2")
        quiz = next(iter(current_bank().quizzes.values()))
        picks = []  # per attempt: a choice for each question
        for _ in range(STUDENTS * ATTEMPTS_EACH):
            skill = rng.random()
            mine = []
            for question in quiz.questions:
                right = rng.random() < 0.3 + 0.6 * skill
                wrong = [c for c in question.choices if not c.correct]
                mine.append((question.right_choice if right else rng.choice(wrong)).id)
            picks.append(mine)
        names = [f"Student {n % STUDENTS:03d}" for n in range(len(picks))]
        # Through the statements answering runs, in one transaction: the tallies are the app's.
        seeded = factories.attempts(quiz, picks, names=names, class_id=class_.id)

        # Fresh attempts for the answering scenario, each with its browser's id and session.
        signer = app.session_interface.get_signing_serializer(app)
        posts = []
        for n in range(1500):
            attempt = start_attempt(quiz, f"Answerer {n}", f"browser-{n:014d}")
            # A fresh app context too: Flask-WTF caches the token in g, which lives there.
            with app.app_context(), app.test_request_context():
                token = generate_csrf()
                cookie = f"browser=browser-{n:014d}; session={signer.dumps(dict(session))}"
            for number, question in enumerate(quiz.questions, 1):
                choice = rng.choice(question.choices).id
                body = urllib.parse.urlencode({"csrf_token": token, "choice": choice})
                posts.append((f"/attempts/{attempt.token}/questions/{number}", cookie, body))
        rng.shuffle(posts)
        reader = posts[0]  # its question pages are for the GET scenario
        return {
            "class_id": class_.id,
            "posts": posts[1:],
            "question": (reader[0].rsplit("/", 1)[0] + "/1", reader[1]),
            "results": f"/attempts/{db.session.get(Attempt, seeded[-1]).token}/results",
            "answers": len(picks) * len(quiz.questions),
        }


def login_cookie(base: str) -> str:
    """An instructor's session cookie, got through the login form with wrk's User-Agent."""
    jar = urllib.request.HTTPCookieProcessor()
    opener = urllib.request.build_opener(jar)
    opener.addheaders = [("User-Agent", AGENT)]
    page = opener.open(f"{base}/login").read().decode()
    token = csrf_token(page)
    form = {"csrf_token": token, "username": "bench", "password": "bench password"}
    opener.open(f"{base}/login", data=urllib.parse.urlencode(form).encode())
    return next(f"session={c.value}" for c in jar.cookiejar if c.name == "session")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def page_answers(base: str, path: str, cookie: str | None) -> None:
    """Stop the run unless the page answers 200 itself: a redirect or an error page would be
    measured in its place (the question page once was a 403, its browser cookie dropped)."""
    request = urllib.request.Request(base + path, headers={"User-Agent": AGENT})
    if cookie:
        request.add_header("Cookie", cookie)
    try:
        status = urllib.request.build_opener(_NoRedirect).open(request).status
    except urllib.error.HTTPError as error:
        status = error.code
    if status != 200:
        raise SystemExit(f"{path} answered {status}, not 200: nothing to measure")


def wrk(base, path, *, connections=CONNECTIONS, threads=2, script=None, cookie=None) -> dict:
    """Run wrk against one path; return requests/s, p50/p99 in ms and the error count."""
    if script is None:
        page_answers(base, path, cookie)
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{SECONDS}s", "--latency",
               "-H", f"User-Agent: {AGENT}"]  # fmt: skip
    if cookie:
        command += ["-H", f"Cookie: {cookie}"]
    if script:
        command += ["-s", str(script)]
    output = subprocess.run([*command, base + path], capture_output=True, text=True).stdout

    def ms(label):
        value, unit = re.search(rf"{label}%\s+([\d.]+)(us|ms|s)", output).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    failures = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        "p50": ms("50"),
        "p99": ms("99"),
        "errors": (int(errors.group(1)) if errors else 0)
        + (sum(map(int, failures.groups())) if failures else 0),
    }


def answer_script(folder: Path, posts) -> Path:
    """A wrk Lua script that sends each prepared answer once, so every request writes."""
    data = folder / "answers.txt"
    data.write_text("".join(f"{path}\t{cookie}\t{body}\n" for path, cookie, body in posts))
    script = folder / "answers.lua"
    script.write_text(f"""
local requests = {{}}
for line in io.lines("{data}") do
  local path, cookie, body = line:match("([^\\t]+)\\t([^\\t]+)\\t([^\\t]+)")
  requests[#requests + 1] = {{path, cookie, body}}
end
local counter = 0
local offset = 0
function setup(thread)
  thread:set("offset", counter)
  counter = counter + 1
end
local i = 0
function request()
  local r = requests[(offset + i * {2}) % #requests + 1]
  i = i + 1
  return wrk.format("POST", r[1], {{
    ["Cookie"] = r[2],
    ["Content-Type"] = "application/x-www-form-urlencoded",
  }}, r[3])
end
""")
    return script


def first_answer(base: str, path: str, deadline: float = 60) -> float:
    """Seconds until one ordinary request is answered; the deadline if it never is."""
    started = time.perf_counter()
    try:
        urllib.request.urlopen(base + path, timeout=deadline).read()
    except OSError:
        return deadline
    return time.perf_counter() - started


def worker_memory(master: int) -> list[int]:
    """Resident memory of each gunicorn worker, in MB."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    sizes = []
    for pid in children:
        status = Path(f"/proc/{pid}/status").read_text()
        sizes.append(int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) // 1024)
    return sizes


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="quizwright-bench-"))
    pg = os.environ.get("BENCH_DATABASE_URL")
    if not pg:
        run(folder, f"sqlite:///{folder / 'bench.db'}", None)
        return
    # A schema of this run's own, dropped afterwards, so any database will do.
    schema = f"quizwright_bench_{os.getpid()}"
    engine = sqlalchemy.create_engine(pg)
    with engine.begin() as connection:
        connection.exec_driver_sql(f"CREATE SCHEMA {schema}")
    try:
        options = urllib.parse.quote(f"-csearch_path={schema}")
        run(folder, f"{pg}{'&' if '?' in pg else '?'}options={options}", pg)
    finally:
        with engine.begin() as connection:
            connection.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")


def run(folder: Path, url: str, pg: str | None) -> None:
    app = create_app({"SECRET_KEY": SECRET, "SQLALCHEMY_DATABASE_URI": url})
    started = time.perf_counter()
    seeded = seed(app)
    print(f"Seeded {seeded['answers']:,} answers in {time.perf_counter() - started:.0f} s")
    # Its own access log stays in the server's log file, as in production.
    with gunicorn(folder, workers=WORKERS, SECRET_KEY=SECRET, DATABASE_URL=url) as server:
        base = server.url
        teacher = login_cookie(base)
        class_page = f"/teach/classes/{seeded['class_id']}"
        question_path, question_cookie = seeded["question"]
        rows = [("baseline: GET /livez", wrk(base, "/livez"), None)]
        baseline = rows[0][1]["rps"]
        rows += [
            # Two floors for reading the figures below: a page with no database, and one
            # query with no page.
            ("for reference: quiz list (template, no database)", wrk(base, "/"), None),
            ("for reference: /healthz (one query, no template)", wrk(base, "/healthz"), None),
            ("question page (GET)", wrk(base, question_path, cookie=question_cookie), "question"),
            ("answering (POST, each a new write)",
             wrk(base, "/", script=answer_script(folder, seeded["posts"])), "answer"),
            ("results page (GET)", wrk(base, seeded["results"]), "results"),
            ("class page, 500 students, 1 client",
             wrk(base, class_page, connections=1, threads=1, cookie=teacher), None),
        ]  # fmt: skip
        for kind in ("gradebook", "responses", "items"):
            rows.append((f"{kind}.csv, 1 client", wrk(base, f"{class_page}/{kind}.csv",
                         connections=1, threads=1, cookie=teacher), None))  # fmt: skip
        with half_sent_requests(base, SLOW_CLIENTS, every=2):
            time.sleep(1)  # let the server accept them all before measuring
            waited = first_answer(base, "/livez")
            rows += [
                (f"question page (GET), {SLOW_CLIENTS} slow clients held open",
                 wrk(base, question_path, cookie=question_cookie), "question"),
                (f"answering (POST), {SLOW_CLIENTS} slow clients held open",
                 wrk(base, "/", script=answer_script(folder, seeded["posts"][::-1])), "answer"),
            ]  # fmt: skip
        memory = worker_memory(server.pid)
    report(rows, baseline, memory, pg, waited)


def report(rows, baseline, memory, pg, waited) -> None:
    database = "PostgreSQL " + subprocess.run(["psql", "--version"], capture_output=True,
                                              text=True).stdout.split()[-1] if pg else (
        f"SQLite {sqlite3.sqlite_version} (WAL)")  # fmt: skip
    lines = [
        f"# Benchmark results ({database})",
        "",
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {len(os.sched_getaffinity(0))} cores; "
        f"Python {platform.python_version()}; {WORKERS} gunicorn {WORKER_CLASS} workers; wrk with "
        f"{CONNECTIONS} connections for {SECONDS} s unless marked 1 client; "
        f"{STUDENTS} students, {STUDENTS * ATTEMPTS_EACH * 8:,} stored answers.",
        "",
        "| scenario | req/s | ratio to baseline | target | p50 ms | p99 ms | errors |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for name, result, target in rows:
        ratio = result["rps"] / baseline
        goal = f">= {TARGETS[target]}" if target else ""
        if name.startswith("class page"):
            goal = "p50 < 50 ms"
        lines.append(
            f"| {name} | {result['rps']:.0f} | {ratio:.2f} | {goal} | {result['p50']:.1f} | "
            f"{result['p99']:.1f} | {result['errors']} |"
        )
    lines += ["", f"Worker resident memory after the run: {', '.join(f'{m} MB' for m in memory)} "
              "(target: under 80 MB each).", "",
              f"With {SLOW_CLIENTS} connections holding half-sent requests open, a new request "
              f"to /livez was answered after {waited:.2f} s (target: under 1 s; 60 s means "
              "never).", ""]  # fmt: skip
    analysis = ROOT / "bench" / "analysis.md"
    if analysis.exists():
        lines += [analysis.read_text()]
    text = "\n".join(lines)
    print(text)
    name = "results-postgresql.md" if pg else "results.md"
    (ROOT / "bench" / name).write_text(text)


if __name__ == "__main__":
    main()
