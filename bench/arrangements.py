"""Server arrangements side by side in one run, on the answering tail: each serves the same
database in turn (SQLite, or PostgreSQL with BENCH_DATABASE_URL as in bench/run.py), and wrk
measures /livez, the question page, answering (each request a new answer) and the question page
with slow clients held, at 20 connections, in two rounds.

    .venv/bin/python bench/arrangements.py [earlier checkout]

An earlier checkout (for example `git worktree add /tmp/before <commit>`) is measured too, as
the first arrangement. Prints a Markdown table for bench/analysis.md.
"""

import os
import random
import sys
import tempfile
import time
from pathlib import Path

import run  # bench/run.py: seeding helpers, wrk and its parsing
import scenarios

from app import create_app
from app.attempts.service import start_attempt
from app.extensions import db
from app.models import Answer
from app.served import current_bank

from helpers import gunicorn, half_sent_requests, stamp

CONNECTIONS = 20
ROUNDS = 2
# Answers each arrangement may send in a round, at most: wrk stops early when they run out.
ANSWERS_EACH = 800 * run.SECONDS

THIS = run.ROOT
ARRANGEMENTS = [
    # name, checkout, workers, gunicorn arguments
    ("gevent, 5 workers (2 x cores + 1)", THIS, 5, "--worker-class gevent"),
    ("gevent, 2 workers (the cores: the default)", THIS, 2, "--worker-class gevent"),
    ("gthread, 2 workers x 8 threads", THIS, 2, "--worker-class gthread --threads 8"),
]
# On PostgreSQL workers wait on the database server, not on one file's lock: how many is the
# question (2 x cores + 1 was the default there until these ran).
ON_POSTGRESQL = [
    ("gevent, 5 workers (2 x cores + 1)", THIS, 5, "--worker-class gevent"),
    ("gevent, 3 workers", THIS, 3, "--worker-class gevent"),
    ("gevent, 2 workers (the cores: the default)", THIS, 2, "--worker-class gevent"),
]


def main() -> None:
    arrangements = list(ON_POSTGRESQL if os.environ.get("BENCH_DATABASE_URL") else ARRANGEMENTS)
    if len(sys.argv) > 1:
        before = Path(sys.argv[1]).resolve()
        arrangements.insert(0, ("the earlier checkout: gevent, 5 workers", before, 5,
                                "--worker-class gevent"))  # fmt: skip
    folder = Path(tempfile.mkdtemp(prefix="quizwright-arrangements-"))
    with run.database(folder) as url:
        measure(arrangements, folder, url)


def measure(arrangements: list, folder: Path, url: str) -> None:
    """Seed the database, then each arrangement serves it in turn, in two rounds."""
    app = create_app({"SECRET_KEY": run.SECRET, "SQLALCHEMY_DATABASE_URI": url})
    rng = random.Random(2026)
    with app.app_context():
        db.create_all()
        stamp(db.engine)
        quiz = next(iter(current_bank().quizzes.values()))
        per_run = -(-ANSWERS_EACH // len(quiz.questions))
        started = [start_attempt(quiz, f"Answerer {n}", scenarios.browser_id("arrange-", n))
                   for n in range(per_run * len(arrangements) * ROUNDS + 1)]  # fmt: skip
        reader = started.pop()
        _, cookie = scenarios.browser_cookie(app, reader.browser)
        posts = scenarios.answer_posts(app, quiz, started, rng)
    pools = iter(scenarios.split(posts, len(arrangements) * ROUNDS))
    question = f"/attempts/{reader.token}/questions/1"
    answers = run.count(app, Answer)
    rows: dict[str, list[dict]] = {name: [] for name, *_ in arrangements}
    for round_ in range(ROUNDS):
        # The other way round in the second round, so no arrangement always runs first.
        order = arrangements if round_ == 0 else arrangements[::-1]
        for name, checkout, workers, arguments in order:
            settings = {**run.server_settings(url), "GUNICORN_CMD_ARGS": arguments}
            with gunicorn(folder, workers=workers, release=checkout, **settings) as server:
                base = server.url
                time.sleep(1)  # every worker booted
                measured = {
                    "livez": run.wrk(base, "/livez", connections=CONNECTIONS),
                    "question": run.wrk(base, question, connections=CONNECTIONS, cookie=cookie),
                    "answer": writes(base, folder, next(pools), answers),
                }
                with half_sent_requests(base, run.SLOW_CLIENTS, every=2):
                    time.sleep(1)
                    measured["waited"] = run.first_answer(base, "/livez")
                    measured["question slow"] = run.wrk(base, question, connections=CONNECTIONS,
                                                        cookie=cookie)  # fmt: skip
                measured["memory"] = run.worker_memory(server.pid)
            rows[name].append(measured)
            print(f"round {round_ + 1}: {name} measured", flush=True)
    print(table(rows))


def writes(base, folder, pool, answers) -> dict:
    """The answering run, at this script's connection count."""
    saved = run.CONNECTIONS
    run.CONNECTIONS = CONNECTIONS  # run.writes calls run.wrk with its module's default
    try:
        return run.writes(base, folder, "answers", pool, answers)
    finally:
        run.CONNECTIONS = saved


def table(rows: dict[str, list[dict]]) -> str:
    """One line per arrangement, each cell its two rounds."""
    columns = {
        "/livez req/s": lambda r: f"{r['livez']['rps']:.0f}",
        "question page": lambda r: f"{r['question']['rps'] / r['livez']['rps']:.2f}",
        "answering": lambda r: f"{r['answer']['rps'] / r['livez']['rps']:.2f}",
        "answering p99 ms": lambda r: f"{r['answer']['p99']:.0f}",
        "answering errors": lambda r: str(r["answer"]["errors"]),
        "stored / answered": lambda r: f"{r['answer']['stored']} / {r['answer']['requests']}",
        "question page, slow clients held (share kept)":
            lambda r: f"{r['question slow']['rps'] / max(r['question']['rps'], 1e-9):.2f}",
        "/livez waited, slow clients held": lambda r: f"{r['waited']:.2f} s",
        "worker RSS MB": lambda r: " ".join(str(rss) for rss, _ in r["memory"]),
    }  # fmt: skip
    lines = [
        "| arrangement | " + " | ".join(columns) + " |",
        "| --- |" + " ---: |" * len(columns),
    ]
    for name, runs in rows.items():
        cells = [", ".join(cell(r) for r in runs) for cell in columns.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
