"""Real gunicorn servers under load: nothing lost, and two servers acting as one."""

import http.cookiejar
import importlib.util
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import types
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress

import psutil
import pytest
from sqlalchemy import text

from app.auth import create_instructor
from app.config import PROJECT_ROOT
from app.extensions import db
from app.grading import grade
from app.models import Answer, Attempt
from app.served import current_bank

from helpers import SLUG, csrf_token, gunicorn, half_sent_requests, make_app, previous_revision

pytestmark = pytest.mark.any_database

STUDENTS = 200


class Browser:
    """A student's browser: cookies, CSRF tokens from forms, redirects followed."""

    def __init__(self, timeout=30):
        self.timeout = timeout
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def get(self, url) -> tuple[str, str]:
        with self.opener.open(url, timeout=self.timeout) as response:
            return response.geturl(), response.read().decode()

    def post(self, url, **fields) -> tuple[int, str, str]:
        data = urllib.parse.urlencode(fields).encode()
        try:
            with self.opener.open(url, data=data, timeout=self.timeout) as response:
                return response.status, response.geturl(), response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, url, error.read().decode()


def take_quiz(servers: list[str], name: str, timeout=30) -> dict:
    """Take the whole quiz, each request going to the next server in turn; report outcomes."""
    browser, rng, turn = Browser(timeout), random.Random(name), iter(range(10**6))
    server = lambda: servers[next(turn) % len(servers)]  # noqa: E731
    _, page = browser.get(f"{server()}/quizzes/{SLUG}")
    token = csrf_token(page)
    status, url, _ = browser.post(f"{server()}/quizzes/{SLUG}", csrf_token=token, name=name)
    assert status == 200 and "/questions/1" in url, (status, url)
    attempt = url.split("/")[-3]
    saved, failures = {}, []
    for number in range(1, 9):
        _, page = browser.get(f"{server()}/attempts/{attempt}/questions/{number}")
        choice = rng.choice(re.findall(r'type="radio" value="([^"]+)"', page))
        status, _, feedback = browser.post(
            f"{server()}/attempts/{attempt}/questions/{number}", csrf_token=token, choice=choice
        )
        if status == 200 and ("Correct." in feedback or "Incorrect." in feedback):
            saved[number] = choice
        else:
            failures.append((number, status))
    _, results = browser.get(f"{server()}/attempts/{attempt}/results")
    score = re.search(r"You scored\s+<strong>(\d+) out of 8</strong>", results)
    return {"attempt": attempt, "saved": saved, "failures": failures,
            "score": int(score.group(1)) if score else None}  # fmt: skip


def check_nothing_lost(app, outcomes):
    """Every answer reported saved is stored as given, and every score matches its answers."""
    assert [o["failures"] for o in outcomes if o["failures"]] == []
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
        for outcome in outcomes:
            attempt = db.session.scalars(
                db.select(Attempt).filter_by(token=outcome["attempt"])
            ).one()
            stored = {a.question_id: a for a in attempt.answers}
            for number, choice in outcome["saved"].items():
                question = quiz.questions[number - 1]
                assert stored[question.id].response == choice
                assert stored[question.id].is_correct == grade(question, choice).correct
            assert outcome["score"] == sum(a.is_correct for a in attempt.answers)
            assert (attempt.answered, attempt.points) == (
                len(attempt.answers),
                sum(a.is_correct for a in attempt.answers),
            )
        assert db.session.scalar(db.select(db.func.count(Answer.id))) == 8 * len(outcomes)


@pytest.mark.load
def test_two_hundred_students_at_once_lose_nothing(tmp_path):
    """200 students take the quiz concurrently against 4 workers: every answer is kept."""
    app = make_app(tmp_path)
    with gunicorn(tmp_path) as server, ThreadPoolExecutor(max_workers=24) as pool:
        outcomes = list(
            pool.map(lambda n: take_quiz([server.url], f"Student {n}"), range(STUDENTS))
        )
    check_nothing_lost(app, outcomes)


def test_two_servers_share_one_database_and_one_redis(tmp_path, redis_url):
    """A student moves between two servers freely; failed logins count across both."""
    app = make_app(tmp_path)
    with app.app_context():
        create_instructor("teacher", "correct horse")
    shared = {"RATELIMIT_STORAGE_URI": redis_url}
    with gunicorn(tmp_path, workers=2, **shared) as a, gunicorn(tmp_path, workers=2, **shared) as b:
        a, b = a.url, b.url
        outcomes = [take_quiz([a, b], f"Roaming {n}") for n in range(3)]
        check_nothing_lost(app, outcomes)

        statuses = []
        for n in range(11):
            browser = Browser()
            server = (a, b)[n % 2]
            _, page = browser.get(f"{server}/login")
            token = csrf_token(page)
            status, _, _ = browser.post(
                f"{server}/login", csrf_token=token, username="teacher", password="wrong"
            )
            statuses.append(status)
    assert statuses == [400] * 10 + [429]


def test_fifty_slow_clients_do_not_stop_a_student(tmp_path):
    """50 connections that send half a request and trickle the rest hold no worker: a student
    still takes the whole quiz. A sync worker waits on each, so the student waited 30 s or more."""
    app = make_app(tmp_path)
    with gunicorn(tmp_path, workers=2) as server, half_sent_requests(server.url, 50):
        outcome = take_quiz([server.url], "Ada", timeout=10)
    check_nothing_lost(app, [outcome])


def test_a_worker_takes_turns_between_its_connections(tmp_path):
    """A client whose requests keep arriving does not keep a worker to itself: one request on
    another connection is answered among them, not after them all. Without the turn each
    request gives, that request waited for all 2,000 (the p99 of bench/analysis.md)."""
    make_app(tmp_path)
    burst = 2000
    with gunicorn(tmp_path, workers=1) as server:
        port = int(server.url.rsplit(":", 1)[1])
        busy = socket.create_connection(("127.0.0.1", port), timeout=30)
        other = socket.create_connection(("127.0.0.1", port), timeout=30)
        answered = {}

        def read_busy():
            received = b""
            while received.count(b"HTTP/1.1 200") < burst:
                received += busy.recv(65536)
            answered["busy"] = time.perf_counter()

        with busy, other, ThreadPoolExecutor(1) as reader:
            done = reader.submit(read_busy)
            busy.sendall(b"GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * burst)
            other.sendall(b"GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert other.recv(4096).startswith(b"HTTP/1.1 200")
            answered["other"] = time.perf_counter()
            done.result()
    assert answered["other"] < answered["busy"]


def test_stopping_the_server_finishes_the_answer_in_flight(tmp_path):
    """SIGTERM while an answer is still arriving: the worker stops taking new connections, and
    finishes that answer before it exits, so a student pressing the button then loses nothing."""
    app = make_app(tmp_path)
    # The production keep-alive: the stop must finish the answer whatever the idle connections.
    with gunicorn(tmp_path, workers=1, keep_alive=5) as server:
        browser = Browser()
        _, page = browser.get(f"{server.url}/quizzes/{SLUG}")
        token = csrf_token(page)
        _, url, page = browser.post(f"{server.url}/quizzes/{SLUG}", csrf_token=token, name="Ada")
        choice = re.findall(r'type="radio" value="([^"]+)"', page)[0]
        body = urllib.parse.urlencode({"csrf_token": token, "choice": choice}).encode()
        cookie = "; ".join(f"{c.name}={c.value}" for c in browser.cookies)
        port = int(server.url.rsplit(":", 1)[1])
        path = urllib.parse.urlsplit(url).path
        with socket.create_connection(("127.0.0.1", port), timeout=30) as answer:
            answer.sendall(
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n"
                "Content-Type: application/x-www-form-urlencoded\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body[:10]
            )
            # Stopped before its worker took the connection, the answer would never have begun.
            assert taken_by_a_worker(server.pid, answer), "no worker took the answer's connection"
            os.kill(server.pid, signal.SIGTERM)
            assert wait_for_refusal(port), "the server kept taking new connections"
            answer.sendall(body[10:])
            reply = answer.recv(4096).decode()
    assert reply.startswith("HTTP/1.1 303"), reply
    with app.app_context():
        stored = db.session.scalars(db.select(Answer)).one()
    assert stored.response == choice


def taken_by_a_worker(master: int, client: socket.socket) -> bool:
    """Whether a worker of this server has accepted the client's connection, within 20 s: on a
    busy machine it may still wait in the listening socket's queue."""
    ours = client.getsockname()
    for _ in range(200):
        for worker in psutil.Process(master).children():
            with suppress(psutil.Error):
                if any(c.raddr and c.raddr == ours for c in worker.net_connections("tcp")):
                    return True
        time.sleep(0.1)
    return False


def wait_for_refusal(port: int) -> bool:
    """Whether the server stops accepting connections within 20 s."""
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except ConnectionRefusedError:
            return True
        time.sleep(0.1)
    return False


def test_a_body_that_stops_arriving_is_dropped(tmp_path):
    """A client that sends headers and half a form is answered 408 after a while, instead of
    holding its connection (and, with enough of them, the worker) for ever."""
    make_app(tmp_path)
    with gunicorn(tmp_path, workers=1) as server:
        port = int(server.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=60) as slow:
            slow.sendall(
                b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 60000\r\n"
                b"Content-Type: application/x-www-form-urlencoded\r\n\r\nusername=a"
            )
            answer = b"".join(iter(lambda: slow.recv(4096), b""))  # until the server closes
        assert answer.startswith(b"HTTP/1.1 408 ")
        assert b"The request took too long to arrive." in answer


def test_ctrl_c_stops_the_workers_quietly(tmp_path):
    """Ctrl-C (SIGINT to the server) stops every worker as SIGTERM would: no traceback in the
    terminal of someone who just ran `make run`."""
    make_app(tmp_path)
    with gunicorn(tmp_path, workers=2, LOG_LEVEL="info") as server:
        # A terminal sends Ctrl-C to every process of the foreground job: workers and server.
        for process in [*psutil.Process(server.pid).children(), psutil.Process(server.pid)]:
            process.send_signal(signal.SIGINT)
        for _ in range(100):
            with suppress(OSError):
                urllib.request.urlopen(f"{server.url}/livez", timeout=1)
                time.sleep(0.1)
                continue
            break
        port = server.url.rsplit(":", 1)[1]
        time.sleep(1)  # the workers' last words reach the log
        log = next(tmp_path.glob(f"gunicorn-{port}.log")).read_text()
    assert "Handling signal: int" in log and "Shutting down: Master" in log
    assert "Traceback" not in log and "SystemExit" not in log


def test_listening_on_every_interface_prints_the_addresses_to_open(tmp_path):
    """HOST=0.0.0.0 logs a link for each network address, and each one answers."""
    ipv4 = [a.address for found in psutil.net_if_addrs().values() for a in found
            if a.family == socket.AF_INET and not a.address.startswith("127.")]  # fmt: skip
    if not ipv4:
        pytest.skip("this machine has no network interface besides loopback")
    make_app(tmp_path)
    with gunicorn(tmp_path, workers=1, HOST="0.0.0.0", LOG_LEVEL="info") as server:
        port = server.url.rsplit(":", 1)[1]
        log = next(tmp_path.glob(f"gunicorn-{port}.log")).read_text()
        links = re.findall(rf"Students can open (http://\S+:{port}) \(", log)
        assert sorted(links) == sorted(f"http://{address}:{port}" for address in ipv4)
        for link in links:
            with urllib.request.urlopen(f"{link}/livez", timeout=10) as response:
                assert response.status == 200


def test_listening_on_loopback_says_how_to_let_phones_in(tmp_path):
    """The default HOST is this computer only; the log says so and gives the fix."""
    make_app(tmp_path)
    with gunicorn(tmp_path, workers=1, LOG_LEVEL="info") as server:
        port = server.url.rsplit(":", 1)[1]
        log = next(tmp_path.glob(f"gunicorn-{port}.log")).read_text()
    assert "Only this computer can open" in log
    assert f"to let phones in: HOST=0.0.0.0 PORT={port} make run" in log
    assert "Students can open" not in log


def test_the_access_log_keeps_sign_in_codes_out(tmp_path):
    """A personal link, a typed code, an LTI hand-over link and the Referer a personal link
    leaves are logged with the code replaced: whoever reads the log cannot sign in with it."""
    make_app(tmp_path)
    code = "QWER2345"
    with gunicorn(tmp_path, workers=1) as server:
        for path in (f"/s/{code}", f"/s?code={code}&class=ABCDEF", f"/lti/window/{code}"):
            request = urllib.request.Request(
                server.url + path, headers={"Referer": f"{server.url}/s/{code}"}
            )
            with suppress(urllib.error.HTTPError):
                urllib.request.urlopen(request, timeout=5)
        port = server.url.rsplit(":", 1)[1]
        time.sleep(0.5)  # the worker writes its access log line after the response
        log = next(tmp_path.glob(f"gunicorn-{port}.log")).read_text()
    assert '"GET /s/[code] HTTP/1.1" 404' in log
    assert '"GET /s?code=[code]&class=ABCDEF HTTP/1.1"' in log
    assert '"GET /lti/window/[code] HTTP/1.1" 403' in log
    assert f'"{server.url}/s/[code]"' in log
    assert code not in log


def test_a_stopping_worker_closes_its_database_connections(tmp_path, monkeypatch):
    """gunicorn.conf.py's worker_exit disposes the app's engine, which post_worker_init had
    hidden behind the body wrapper: it looked for the app on the wrapper and never found it."""
    path = PROJECT_ROOT / "gunicorn.conf.py"
    spec = importlib.util.spec_from_file_location("gunicorn_conf", path)
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    app = make_app(tmp_path)
    worker = types.SimpleNamespace(wsgi=app)
    monkeypatch.setattr(conf.gc, "freeze", lambda: None)  # the test process is not a worker
    conf.post_worker_init(worker)
    assert worker.wsgi is not app  # wrapped, as in a real worker
    disposed = []
    with app.app_context():
        monkeypatch.setattr(type(db.engine), "dispose", lambda engine: disposed.append(engine))
    conf.worker_exit(None, worker)
    assert len(disposed) == 1


def test_a_worker_keeps_the_pages_it_read_with_its_code_while_an_upgrade_replaces_them(tmp_path):
    """Sysadmin repro: between `git pull` and the restart, a running worker read the new class
    page template, which names a route the old code lacks, and answered 500; in CI a worker
    still booting when the pull landed did the same. The pages are read as the package is
    imported, before any view module, and never again: a pull landing after the import, or
    while the first request renders, leaves a worker its own release's pages."""
    release = tmp_path / "release"
    shutil.copytree(PROJECT_ROOT / "app", release / "app")
    booting = (
        "import pathlib, app\n"
        "folder = pathlib.Path(app.__file__).parent\n"
        "for page in folder.joinpath('templates').rglob('*.html'):\n"
        "    page.write_text(\"{{ url_for('teach.a_page_of_the_next_release') }}\")\n"
        "folder.joinpath('static', 'quizwright.css').write_text('.next-release {}')\n"
        "made = app.create_app({'SECRET_KEY': 'x', 'SQLALCHEMY_DATABASE_URI': 'sqlite://'})\n"
        "app.read_every_template(made)\n"
        "print(made.jinja_loader.get_source(made.jinja_env, 'teach/class.html')[0][:40])\n"
        "print(b'.next-release' in made.test_client().get('/static/quizwright.css').data)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(release)}
    done = subprocess.run(
        [sys.executable, "-c", booting], cwd=release, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    page = (PROJECT_ROOT / "app/templates/teach/class.html").read_text()[:40]
    assert done.stdout == f"{page}\nFalse\n"


def test_a_worker_on_a_schema_behind_its_release_says_so(tmp_path):
    """Sysadmin repro: after restoring a pre-upgrade dump, the servers started and looked
    healthy. Each worker now logs that the schema is behind, and /healthz answers 503."""
    app = make_app(tmp_path)
    with app.app_context():
        db.session.execute(
            text("UPDATE alembic_version SET version_num = :old"), {"old": previous_revision()}
        )
        db.session.commit()
    with gunicorn(tmp_path, workers=1) as server:
        with pytest.raises(urllib.error.HTTPError) as health:
            urllib.request.urlopen(server.url + "/healthz", timeout=5)
        port = server.url.rsplit(":", 1)[1]
        log = next(tmp_path.glob(f"gunicorn-{port}.log")).read_text()
    assert health.value.code == 503
    health.value.close()
    assert (
        f"The database is behind this release: the database's schema is at {previous_revision()}"
        in log
    )
