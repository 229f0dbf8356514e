"""`make bench`: Quizwright under load, every figure a ratio to a trivial endpoint in the same run.

Starts gunicorn with the production config on a temporary database (SQLite, or PostgreSQL when
BENCH_DATABASE_URL is set), seeds a roster class of 500 students with 100,000 stored answers and
the classes, roster and LTI platform the rules, sign-in and grade passback scenarios need, and
drives each scenario with wrk from a separate process, twice; then a lecture hall, and one app
server against two on the same database. Writes bench/results.md.

Environment: BENCH_SECONDS (per wrk run, default 6), BENCH_STUDENTS (default 500),
BENCH_WORKERS (default gunicorn.conf.py's rule), BENCH_WORKER_CLASS (gevent, sync or gthread;
default gunicorn.conf.py's), BENCH_THREADS (gthread's threads per worker, default 4),
BENCH_HALL (students in the lecture hall, default 300), BENCH_CONNECTIONS (wrk's, default 20).
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
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import factories  # noqa: E402
import hall  # noqa: E402
import scenarios  # noqa: E402

from app import create_app  # noqa: E402
from app.attempts.service import start_attempt  # noqa: E402
from app.extensions import db  # noqa: E402
from app.lti.models import LtiScore  # noqa: E402
from app.models import Answer, Attempt  # noqa: E402
from app.served import current_bank  # noqa: E402

from helpers import csrf_token, gunicorn, half_sent_requests, login, queries, stamp  # noqa: E402

CONF = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
SECONDS = int(os.environ.get("BENCH_SECONDS") or 6)
STUDENTS, ATTEMPTS_EACH = int(os.environ.get("BENCH_STUDENTS") or 500), 25  # x 8 answers
WORKERS = int(os.environ.get("BENCH_WORKERS") or CONF["workers"])  # gunicorn.conf.py's rule
WORKER_CLASS = os.environ.get("BENCH_WORKER_CLASS") or CONF["worker_class"]
THREADS = int(os.environ.get("BENCH_THREADS") or 4) if WORKER_CLASS == "gthread" else 1
CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS") or 20)
ROUNDS = 2  # every wrk scenario runs once per round: the spread between them is in the report
AGENT = "quizwright-bench"
SECRET = "benchmark secret"
TARGETS = {"answer": 0.32, "question": 0.45, "results": 0.40}
ANSWER_P99_MS = 100
CLASS_PAGE_P50_MS = 50
SLOW_KEPT = 0.8  # of the question page's rate without slow clients
# Slowloris: connections that send half a request and then one more byte now and then.
SLOW_CLIENTS = 50
# Write scenarios send each prepared request once; a pool lasts a run at up to this many
# requests a second, and a run that uses its pool up stops early and is timed as it ran.
POOL_RATES = {"answer": 800, "assigned": 600, "start": 300, "launch": 150, "finish": 200}
MEMORY_MB = 90
HALL = int(os.environ.get("BENCH_HALL") or 300)


def seed(app) -> dict:
    """The roster class and its history, one logged-in instructor, and for each write scenario
    its prepared requests, one pool per wrk run."""
    rng = random.Random(2026)
    with app.app_context():
        db.create_all()
        stamp(db.engine)  # made from the models, at this release's migration: /healthz says so
        teacher = factories.instructor("bench", "bench password")
        class_ = factories.class_(teacher, "Benchmark class", join_code="BENCH2")
        quiz = next(iter(current_bank().quizzes.values()))
        # Students sign in by personal code, so the class page shows a roster of 500.
        roster = []
        for first in range(0, STUDENTS, 2000):  # the most one paste may add
            last = min(first + 2000, STUDENTS)
            roster += factories.roster(
                class_.id, "\n".join(f"Student {n:03d}" for n in range(first, last))
            )
        picks = scenarios.random_picks(quiz, STUDENTS * ATTEMPTS_EACH, rng)
        signed_in = [roster[n % STUDENTS] for n in range(len(picks))]
        # Through the statements answering runs, in one transaction: the tallies are the app's.
        factories.attempts(quiz, picks, names=[s.name for s in signed_in], class_id=class_.id,
                           roster_students=signed_in)  # fmt: skip
        small = scenarios.small_roster_class(teacher, quiz, 5, ATTEMPTS_EACH, rng)
        # A finished attempt's results, read from its own browser (a roster student's need
        # their sign-in).
        own = scenarios.browser_id("finished-", 0)
        [finished] = factories.attempts(quiz, picks[:1], names=["Reader"], browser=own)

        # A fresh attempt of the quiz of every type, its question pages read as question 1's.
        types = current_bank().quizzes[scenarios.TYPES_SLUG]
        typed = start_attempt(types, "Typist", scenarios.browser_id("typist-", 0))
        typed_cookie = scenarios.browser_cookie(app, typed.browser)[1]

        # Fresh attempts for the answering scenario, each with its browser's id and session:
        # a run with and without slow clients in each round, then one against one app server
        # and one against two (`servers_side_by_side`), each its own answers.
        runs = 2 * ROUNDS + 2
        fresh = -(-POOL_RATES["answer"] * SECONDS * runs // len(quiz.questions))
        started = [start_attempt(quiz, f"Answerer {n}", scenarios.browser_id("browser-", n))
                   for n in range(fresh + 1)]  # fmt: skip
        reader = started.pop()  # its question page is for the GET scenario
        token, cookie = scenarios.browser_cookie(app, reader.browser)
        posts = scenarios.answer_posts(app, quiz, started, rng)
        rng.shuffle(posts)
        assigned = -(-POOL_RATES["assigned"] * SECONDS * ROUNDS // len(quiz.questions))
        lti = scenarios.Lti()
        lti.register()
        return {
            "hall": hall.seed(teacher, quiz, HALL),
            "class_id": class_.id,
            "small_class_id": small,
            "posts": scenarios.split(posts, runs),
            "assigned": scenarios.assigned_answers(app, teacher, quiz, rng, assigned, ROUNDS),
            "held": scenarios.held_results(teacher, quiz),
            "starts": scenarios.personal_starts(
                app, teacher, quiz, POOL_RATES["start"] * SECONDS * ROUNDS, ROUNDS
            ),
            "question": (f"/attempts/{reader.token}/questions/1", cookie),
            "types": {kind: (f"/attempts/{typed.token}/questions/{n}", typed_cookie)
                      for n, kind in enumerate(scenarios.TYPES, 1)},  # fmt: skip
            "results": (f"/attempts/{db.session.get(Attempt, finished).token}/results",
                        scenarios.browser_cookie(app, own)[1]),
            "answers": len(picks) * len(quiz.questions),
            "lti": lti,
            "quiz": quiz,
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


# A server whose every worker is held by slow clients (sync, gthread) may never answer.
NO_ANSWER_SECONDS = 20
UNANSWERED = {"rps": 0.0, "p50": 0.0, "p99": 0.0, "errors": 0, "requests": 0,
              "seconds": SECONDS, "unanswered": True}  # fmt: skip


def page_answers(base: str, path: str, cookie: str | None) -> bool:
    """Stop the run unless the page answers 200 itself: a redirect or an error page would be
    measured in its place (the question page once was a 403, its browser cookie dropped).
    False if the server did not answer at all."""
    status = send(base, ("GET", path, "", (f"Cookie: {cookie}",) if cookie else ()))
    if status is None:
        return False
    if status != 200:
        raise SystemExit(f"{path} answered {status}, not 200: nothing to measure")
    return True


def wrk(base, path, *, connections=CONNECTIONS, threads=2, script=None, cookie=None) -> dict:
    """Run wrk against one path, or with `script` (a requests file) each of its requests once;
    return requests/s, p50/p99 in ms, the error count and how many requests were answered."""
    if script is None and not page_answers(base, path, cookie):
        return dict(UNANSWERED)
    # A request slower than wrk's default 2 s timeout would count as a socket error, though
    # the server answered it: the latencies keep it instead.
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{SECONDS}s", "--latency",
               "--timeout", "10s", "-H", f"User-Agent: {AGENT}"]  # fmt: skip
    if cookie:
        command += ["-H", f"Cookie: {cookie}"]
    if script:
        command += ["-s", str(ROOT / "bench" / "requests.lua")]
    command.append(base + path)
    if script:
        # Each thread keeps one request in reserve for each of its connections still in flight.
        command += ["--", str(script), str(threads), str(-(-connections // threads))]
    output = subprocess.run(command, capture_output=True, text=True).stdout

    def ms(label):
        value, unit = re.search(rf"{label}%\s+([\d.]+)(us|ms|s)", output).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    failures = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    answered = int(re.search(r"(\d+) requests in", output).group(1))
    used_up = re.search(r"Used up after: ([\d.]+) s", output)
    return {
        # wrk divides by the whole duration even when the pool ran out sooner.
        "rps": answered / float(used_up.group(1))
        if used_up
        else float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        "p50": ms("50"),
        "p99": ms("99"),
        "errors": (int(errors.group(1)) if errors else 0)
        + (sum(map(int, failures.groups())) if failures else 0),
        "requests": answered,
        "seconds": float(used_up.group(1)) if used_up else SECONDS,
    }


def send(base: str, request: scenarios.Request) -> int | None:
    """Send one prepared request as wrk would; its status, None if none came in time."""
    method, path, body, headers = request
    sent = urllib.request.Request(base + path, data=body.encode() or None, method=method)
    for header in (f"User-Agent: {AGENT}", *headers):
        name, value = header.split(": ", 1)
        sent.add_header(name, value)
    try:
        return urllib.request.build_opener(_NoRedirect).open(sent, timeout=NO_ANSWER_SECONDS).status
    except urllib.error.HTTPError as error:
        return error.code
    except (TimeoutError, urllib.error.URLError):
        return None


def writes(base, folder: Path, name: str, pool, rows, expect=303, **options) -> dict:
    """wrk sending each prepared request of the pool once, after the first alone answered
    `expect` (a 429 or 409 would be measured in its place); `rows` counts what each request
    should store, and the result says how many were stored. `options` go to wrk."""
    status = send(base, pool[0])
    if status is None:
        return {**UNANSWERED, "stored": 0}
    if status != expect:
        raise SystemExit(f"{name}: {pool[0][1]} answered {status}, not {expect}: nothing to "
                         "measure")  # fmt: skip
    data = folder / f"{name}.txt"
    data.write_text("".join("\t".join([m, p, b, *h]) + "\n" for m, p, b, h in pool[1:]))
    before = rows()
    result = wrk(base, "/", script=data, **options)
    time.sleep(1)  # requests still in flight when wrk stopped are stored too
    result["stored"] = rows() - before
    return result


def servers_side_by_side(folder: Path, url: str, base: str, seeded: dict, answers) -> dict:
    """The question page and answering against this app server alone, then against it and a
    second one like it on the same database, wrk's connections shared between the two; and the
    second one's worker memory."""
    path, cookie = seeded["question"]
    one_pool, two_pool = seeded["posts"][-2:]
    one = {"question": wrk(base, path, cookie=cookie),
           "answer": writes(base, folder, "answers-one-server", one_pool, answers)}  # fmt: skip
    half = {"connections": CONNECTIONS // 2, "threads": 1}
    with gunicorn(folder, workers=WORKERS, **server_settings(url)) as second:
        bases = (base, second.url)
        with ThreadPoolExecutor(len(bases)) as pool:
            questions = list(pool.map(lambda b: wrk(b, path, cookie=cookie, **half), bases))
            before = answers()
            writing = list(pool.map(
                lambda b, p, n: writes(b, folder, n, p, answers, **half),
                bases, scenarios.split(two_pool, 2), ("answers-server-a", "answers-server-b"),
            ))  # fmt: skip
            # Less each server's first answer, which writes() sends alone before wrk starts.
            stored = answers() - before - len(bases)
        # Workers that served question pages and answers alone: no LMS, no instructor.
        memory = worker_memory(second.pid)
    two = {"question": together(questions), "answer": {**together(writing), "stored": stored}}
    return {"one": one, "two": two, "memory": memory}


def together(runs: list[dict]) -> dict:
    """wrk runs made at once, as one: their rates, requests and errors added, the worse p99."""
    total = {key: sum(run[key] for run in runs) for key in ("rps", "requests", "errors")}
    return {**total, "p99": max(run["p99"] for run in runs)}


def count(app, model):
    """A function that counts the rows of a table, for the writes a scenario makes."""

    def rows() -> int:
        with app.app_context():
            return db.session.scalar(db.select(db.func.count()).select_from(model))

    return rows


def first_answer(base: str, path: str, deadline: float = NO_ANSWER_SECONDS) -> float:
    """Seconds until one ordinary request is answered; the deadline if it never is."""
    started = time.perf_counter()
    try:
        urllib.request.urlopen(base + path, timeout=deadline).read()
    except OSError:
        return deadline
    return time.perf_counter() - started


def worker_memory(master: int) -> list[tuple[int, int]]:
    """Resident and proportional set size (PSS: shared pages divided among the processes that
    share them) of each gunicorn worker, in MB."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    sizes = []
    for pid in children:
        status = Path(f"/proc/{pid}/status").read_text()
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        rss = int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))
        pss = int(re.search(r"^Pss:\s+(\d+) kB", rollup, re.M).group(1))
        sizes.append((rss // 1024, pss // 1024))
    return sizes


def class_page_queries(app, class_ids: dict[str, int]) -> dict[str, int]:
    """The statements the class page sends, in process, for classes of different sizes."""
    client = app.test_client()
    with app.app_context():
        login(client, "bench", "bench password")
    counted = {}
    for name, class_id in class_ids.items():
        client.get(f"/teach/classes/{class_id}")  # the first view fills the caches
        with queries(app) as statements:
            status = client.get(f"/teach/classes/{class_id}").status_code
        if status != 200:
            raise SystemExit(f"the class page of {name} answered {status}")
        counted[name] = len(statements)
    return counted


def drain(url: str, app, lti: scenarios.Lti) -> dict:
    """Time `flask lti send-scores` sending every waiting score to the test platform; one more
    pass, with nothing left to send, measures what starting the command costs."""
    with app.app_context():
        waiting = db.session.scalar(
            db.select(db.func.count()).select_from(LtiScore).where(LtiScore.state == "waiting")
        )
    env = {**os.environ, "DATABASE_URL": url, "SECRET_KEY": SECRET, "LOG_LEVEL": "warning"}
    command = [sys.executable, "-m", "flask", "--app", "wsgi", "lti", "send-scores"]
    seconds = []
    for _ in range(2):
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds.append(time.perf_counter() - started)
        if done.returncode:
            raise SystemExit(f"flask lti send-scores failed: {done.stdout}{done.stderr}")
    sending = max(seconds[0] - seconds[1], 1e-3)
    return {"waiting": waiting, "received": lti.scores_received(), "seconds": seconds[0],
            "startup": seconds[1], "rate": waiting / sending}  # fmt: skip


def main() -> None:
    """Run the benchmark on SQLite, or on PostgreSQL in a schema of its own."""
    folder = Path(tempfile.mkdtemp(prefix="quizwright-bench-"))
    with database(folder) as url:
        run(folder, url, os.environ.get("BENCH_DATABASE_URL"))


@contextmanager
def database(folder: Path):
    """The database a run serves: SQLite in the folder, or with BENCH_DATABASE_URL a schema of
    this run's own on PostgreSQL, dropped afterwards, so any database will do."""
    pg = os.environ.get("BENCH_DATABASE_URL")
    if not pg:
        yield f"sqlite:///{folder / 'bench.db'}"
        return
    schema = f"quizwright_bench_{os.getpid()}"
    engine = sqlalchemy.create_engine(pg)
    with engine.begin() as connection:
        connection.exec_driver_sql(f"CREATE SCHEMA {schema}")
    try:
        options = urllib.parse.quote(f"-csearch_path={schema}")
        yield f"{pg}{'&' if '?' in pg else '?'}options={options}"
    finally:
        with engine.begin() as connection:
            connection.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")


def server_settings(url: str) -> dict:
    """The server's environment: the production config, with the arrangement asked for."""
    arrangement = f"--worker-class {WORKER_CLASS}"
    if WORKER_CLASS == "gthread":
        arrangement += f" --threads {THREADS}"
    return {
        "SECRET_KEY": SECRET,
        "DATABASE_URL": url,
        # gunicorn lets its command line arguments from the environment override the file's.
        "GUNICORN_CMD_ARGS": arrangement,
        # As behind a reverse proxy: the personal-code starts come from many school addresses.
        "TRUSTED_PROXIES": "1",
    }


def run(folder: Path, url: str, pg: str | None) -> None:
    """Seed, serve, run every scenario once per round, send the scores, report."""
    # Query counts stay per page: the bank's freshness check is left out of them.
    bank = scenarios.bank_with_every_type(folder)
    app = create_app({"SECRET_KEY": SECRET, "SQLALCHEMY_DATABASE_URI": url,
                      "QUESTIONS_PATH": bank, "BANK_CHECK_SECONDS": 3600})  # fmt: skip
    started = time.perf_counter()
    seeded = seed(app)
    print(f"Seeded {seeded['answers']:,} answers in {time.perf_counter() - started:.0f} s")
    lti: scenarios.Lti = seeded["lti"]
    # Its own access log stays in the server's log file, as in production.
    with gunicorn(folder, workers=WORKERS, **server_settings(url)) as server:
        base = server.url
        with app.app_context():
            lti.open_course(base, seeded["quiz"])
            started = time.perf_counter()
            finishing = lti.finishing_answers(
                app, seeded["quiz"], random.Random(7),
                POOL_RATES["finish"] * SECONDS * ROUNDS, ROUNDS,
            )  # fmt: skip
            print(f"Launched attempts to finish made in {time.perf_counter() - started:.0f} s")
        teacher = login_cookie(base)
        class_page = f"/teach/classes/{seeded['class_id']}"
        question_path, question_cookie = seeded["question"]
        held_path, held_cookie = seeded["held"]
        results_path, results_cookie = seeded["results"]
        answers, attempts, scores = count(app, Answer), count(app, Attempt), count(app, LtiScore)
        rounds = []
        for round_ in range(ROUNDS):
            started = time.perf_counter()
            launches = lti.launches(POOL_RATES["launch"] * SECONDS)
            print(f"Round {round_ + 1} of {ROUNDS}: {len(launches)} LTI logins made in "
                  f"{time.perf_counter() - started:.0f} s")  # fmt: skip
            rows = {
                "livez": wrk(base, "/livez"),
                # Two floors for reading the figures below: a page with no database, and one
                # query with no page.
                "index": wrk(base, "/"),
                "healthz": wrk(base, "/healthz"),
                "question": wrk(base, question_path, cookie=question_cookie),
                **{kind: wrk(base, path, cookie=cookie)
                   for kind, (path, cookie) in seeded["types"].items()},  # fmt: skip
                "answer": writes(base, folder, "answers", seeded["posts"][2 * round_], answers),
                "results": wrk(base, results_path, cookie=results_cookie),
                "assigned": writes(base, folder, "assigned", seeded["assigned"][round_], answers),
                "held": wrk(base, held_path, cookie=held_cookie),
                "start": writes(base, folder, "starts", seeded["starts"][round_], attempts),
                "launch": writes(base, folder, "launches", launches, attempts),
                "finish": writes(base, folder, "finishing", finishing[round_], scores),
                "class": wrk(base, class_page, connections=1, threads=1, cookie=teacher),
            }
            for kind in ("gradebook", "responses", "items"):
                rows[kind] = wrk(base, f"{class_page}/{kind}.csv", connections=1, threads=1,
                                 cookie=teacher)  # fmt: skip
            with half_sent_requests(base, SLOW_CLIENTS, every=2):
                time.sleep(1)  # let the server accept them all before measuring
                rows["waited"] = first_answer(base, "/livez")
                rows["question slow"] = wrk(base, question_path, cookie=question_cookie)
                rows["answer slow"] = writes(base, folder, "answers-slow",
                                             seeded["posts"][2 * round_ + 1], answers)  # fmt: skip
            rounds.append(rows)
            print(f"Round {round_ + 1} took {time.perf_counter() - started:.0f} s")
        hall_taken = hall.take(base, seeded["hall"], seeded["quiz"],
                               lambda model: count(app, model)())  # fmt: skip
        print(hall.line(hall_taken))
        memory = {"after the run": worker_memory(server.pid)}
        servers = servers_side_by_side(folder, url, base, seeded, answers)
        memory["the second server's, which served students only"] = servers.pop("memory")
        started = time.perf_counter()
        drained = drain(url, app, lti)
        print(f"Scores sent in {time.perf_counter() - started:.0f} s")
        fetches = lti.key_set_fetches()
        lti.close()
    counted = class_page_queries(app, {f"{STUDENTS} students": seeded["class_id"],
                                       "5 students": seeded["small_class_id"]})  # fmt: skip
    report(rounds, memory, pg, drained, fetches, counted, hall_taken, servers)


SCENARIOS = [
    # key, what is measured, target
    ("livez", "baseline: GET /livez", None),
    ("index", "for reference: quiz list (template, no database)", None),
    ("healthz", "for reference: /healthz (one query, no template)", None),
    ("question", "question page (GET)", "question"),
    *((kind, f"question page (GET), {kind}", "question") for kind in scenarios.TYPES),
    ("answer", "answering (POST, each a new write)", "answer"),
    ("results", "results page (GET)", "results"),
    ("assigned", "answering under an assignment's rules (window, time limit, attempts)", "answer"),
    ("held", "results page, feedback held until the close, the owner's browser", "results"),
    ("start", "starting by personal code (POST of its page, under the rules)", None),
    ("launch", "LTI launch, a new learner each, platform keys cached", None),
    ("finish", "LTI last answer: finishes the attempt, grade written to the outbox", "answer"),
    ("class", f"class page, {STUDENTS}-student roster, 1 client", "class"),
    ("gradebook", "gradebook.csv, 1 client", None),
    ("responses", "responses.csv, 1 client", None),
    ("items", "items.csv, 1 client", None),
    ("question slow", f"question page (GET), {SLOW_CLIENTS} slow clients held open", "question"),
    ("answer slow", f"answering (POST), {SLOW_CLIENTS} slow clients held open", "answer"),
]


def goal(target: str | None) -> str:
    """A scenario's target as the report states it."""
    if target == "class":
        return f"p50 < {CLASS_PAGE_P50_MS} ms"
    if target == "answer":
        return f">= {TARGETS[target]}, p99 < {ANSWER_P99_MS} ms"
    return f">= {TARGETS[target]}" if target else ""


def arrangement() -> str:
    """The server arrangement measured, as the report's header states it."""
    threads = f" x {THREADS} threads" if WORKER_CLASS == "gthread" else ""
    return f"{WORKERS} gunicorn {WORKER_CLASS} workers{threads}"


def side_by_side_lines(servers: dict) -> list[str]:
    """The table of one app server against two on the same database."""
    lines = [
        f"One app server, then two like it on the same database ({WORKERS} workers each, on "
        f"this machine's cores, wrk's {CONNECTIONS} connections shared between them):",
        "",
        "| app servers | question page req/s | its p99 ms | answering req/s | its p99 ms | "
        "errors | answers stored / answered |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in servers.items():
        question, answer = row["question"], row["answer"]
        lines.append(
            f"| {name} | {question['rps']:.0f} | {question['p99']:.1f} | {answer['rps']:.0f} | "
            f"{answer['p99']:.1f} | {question['errors'] + answer['errors']} | "
            f"{answer['stored']} / {answer['requests'] - answer['errors']} |"
        )
    return lines


def report(rounds, memory, pg, drained, fetches, counted, hall_taken, servers) -> None:
    """Write bench/results.md (or results-postgresql.md) with bench/analysis.md after it."""
    database = f"SQLite {sqlite3.sqlite_version} (WAL)"
    if pg:
        # "psql (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)": its first version number.
        psql = subprocess.run(["psql", "--version"], capture_output=True, text=True).stdout
        database = "PostgreSQL " + re.search(r"\d+(\.\d+)+", psql).group()
    runs = range(1, len(rounds) + 1)
    lines = [
        f"# Benchmark results ({database})",
        "",
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {len(os.sched_getaffinity(0))} cores; "
        f"Python {platform.python_version()}; {arrangement()} (BENCH_WORKERS, "
        f"BENCH_WORKER_CLASS), behind no proxy but trusting one (TRUSTED_PROXIES=1); wrk on the "
        f"same machine with {CONNECTIONS} connections for {SECONDS} s unless marked 1 client; "
        f"{STUDENTS} students, {STUDENTS * ATTEMPTS_EACH * 8:,} stored answers. Every scenario "
        f"ran {len(rounds)} times, in {len(rounds)} rounds of all of them; ratios are to the "
        "same round's /livez. Spread: the two ratios' difference over their mean.",
        "",
        "| scenario | target | "
        + " | ".join(f"ratio, run {n}" for n in runs)
        + " | spread | req/s | p50 ms | p99 ms | errors | stored / answered |",
        "| --- | --- | " + " | ".join("---:" for _ in runs) + " | ---: | ---: | ---: | ---: "
        "| ---: | ---: |",
    ]
    for key, name, target in SCENARIOS:
        results = [rows[key] for rows in rounds]
        baselines = [rows["livez"]["rps"] for rows in rounds]
        ratios = [r["rps"] / b for r, b in zip(results, baselines, strict=True)]
        spread = (max(ratios) - min(ratios)) / (sum(ratios) / len(ratios)) if all(ratios) else 0

        def each(field, form, results=results):
            return ", ".join("no answer" if result.get("unanswered") else form.format(result[field])
                             for result in results)  # fmt: skip

        stored = ""
        if "stored" in results[0]:
            stored = ", ".join(f"{r['stored']} / {r['requests'] - r['errors']}" for r in results)
        lines.append(
            f"| {name} | {goal(target)} | "
            + " | ".join(f"{r:.2f}" for r in ratios)
            + f" | {spread:.0%} | {each('rps', '{:.0f}')} | {each('p50', '{:.1f}')} | "
            f"{each('p99', '{:.1f}')} | {each('errors', '{}')} | {stored} |"
        )
    kept = [rows["question slow"]["rps"] / max(rows["question"]["rps"], 1e-9) for rows in rounds]
    waited = ", ".join(f"{rows['waited']:.2f} s" for rows in rounds)
    short = [f"{key} in round {n} ({rows[key]['seconds']:.1f} s)" for n, rows in
             enumerate(rounds, 1) for key, *_ in SCENARIOS
             if rows[key]["seconds"] < SECONDS - 0.5]  # fmt: skip
    lines += [
        "",
        f"Question page with {SLOW_CLIENTS} slow clients held open, as a share of its rate "
        f"without them in the same round: {', '.join(f'{k:.2f}' for k in kept)} (target: at "
        f"least {SLOW_KEPT}). A new request to /livez with them held was answered after "
        f"{waited} (target: under 1 s; "
        f"{NO_ANSWER_SECONDS} s means never).",
        "",
        hall.line(hall_taken),
        "",
        *side_by_side_lines(servers),
        "",
        "Worker memory, resident (proportional: shared pages divided among the processes sharing "
        "them), "
        + "; ".join(f"{when}: " + ", ".join(f"{rss} MB ({pss} MB)" for rss, pss in sizes)
                    for when, sizes in memory.items())  # fmt: skip
        + f" (target: under {MEMORY_MB} MB each).",
        "",
        "Class page statements, in process: "
        + ", ".join(f"{n} for {name}" for name, n in counted.items())
        + " (target: the same for any class size).",
        "",
        f"LTI: the platform's key set was fetched {fetches} time(s) in the whole run (by the "
        "instructor's first launch), and cached for every learner's launch. Grade passback: "
        f"`flask lti send-scores` sent {drained['waiting']} waiting scores to the test platform "
        f"(which received {drained['received']}) in {drained['seconds']:.1f} s, of which "
        f"{drained['startup']:.1f} s is starting the command (a pass with nothing to send): "
        f"**{drained['rate']:.0f} scores/s**.",
        "",
        "Write scenarios send each prepared request once (a new answer, a new start, a new "
        "launch); stored / answered compares the rows they added with the requests answered "
        "without error (requests still in flight when wrk stopped may add a few more). "
        + (f"These ran out of prepared requests early and are timed as they ran: "
           f"{', '.join(short)}." if short else "None ran out of prepared requests.")
        + (f" No answer: the server answered no request within {NO_ANSWER_SECONDS} s, every "
           "worker held by the slow clients." if any(r.get("unanswered") for rows in rounds
                                                    for r in rows.values()
                                                    if isinstance(r, dict)) else ""),
        "",
    ]  # fmt: skip
    analysis = ROOT / "bench" / "analysis.md"
    if analysis.exists():
        lines += [analysis.read_text()]
    text = "\n".join(lines)
    print(text)
    name = "results-postgresql.md" if pg else "results.md"
    (ROOT / "bench" / name).write_text(text)


if __name__ == "__main__":
    main()
