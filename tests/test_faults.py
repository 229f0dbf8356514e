"""Breaking it on purpose (issue 7): the database going away, killed workers, bad question banks,
full disks and refused commits.

Whatever breaks, an answer a student saw confirmed is stored, nothing half-written remains, the
student sees an error page rather than a feedback page, and the app recovers by itself once the
fault is gone.
"""

import contextlib
import ctypes
import http.client
import http.cookiejar
import json
import os
import queue
import random
import re
import selectors
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
import sqlalchemy
from sqlalchemy.orm import selectinload

from app.auth import create_instructor
from app.bank import quiz_from_snapshot
from app.config import PROJECT_ROOT, database_url_from, engine_options
from app.extensions import db
from app.models import Attempt, Class
from app.question_types import right_choice
from app.ratelimits import counts_engine
from app.served import current_bank

from helpers import (
    POSTGRES_URL,
    SCHEMA,
    SLUG,
    Student,
    csrf_token,
    form_token,
    free_port,
    gunicorn,
    login,
    make_app,
    server_database,
    shown,
    stored_rows,
    text,
)

pytestmark = pytest.mark.postgres

on_sqlite = pytest.mark.skipif(bool(POSTGRES_URL), reason="a fault of SQLite's files")
on_postgres = pytest.mark.skipif(not POSTGRES_URL, reason="a fault of PostgreSQL's connection")

OUTAGE = "Quizwright is unavailable for a moment"
REAL_BANK = PROJECT_ROOT / "questions.json"


# What the student sees, and what the database keeps.


def confirm(student, number, choice_id, quiz) -> bool:
    """Answer as a student does: True only if the answer is confirmed (see `confirms`)."""
    return confirms(student, student.answer(number, choice_id), number, choice_id, quiz)


def confirms(student, response, number, choice_id, quiz) -> bool:
    """Whether the response to an answer confirms it: a redirect to the question's feedback,
    which gives its verdict on this very choice."""
    if response.status_code != 303 or response.location != student.question_url(number):
        return False
    page = text(student.client.get(response.location))
    chosen = quiz.questions[number - 1].choice(choice_id)
    verdict = "<strong>Correct.</strong>" in page or "<strong>Incorrect.</strong>" in page
    return verdict and f"chose “{shown(chosen.text)}”" in page


def assert_outage_page(response):
    """A friendly 503 that proxies and monitors understand: no redirect, no traceback."""
    assert response.status_code == 503, response.status_code
    assert "Location" not in response.headers
    # 30 s from the app; the rate limiter may move it to the end of its own window.
    assert int(response.headers["Retry-After"]) > 0
    page = text(response)
    assert OUTAGE in page and "Traceback" not in page
    assert "Correct." not in page and "Incorrect." not in page


def stored_answers(app) -> dict[tuple[str, str], str]:
    """(attempt token, question id) -> the stored choice."""
    with app.app_context():
        attempts = db.session.scalars(db.select(Attempt).options(selectinload(Attempt.answers)))
        return {
            (a.token, answer.question_id): answer.response
            for a in attempts
            for answer in a.answers
        }


def inconsistent_attempts(app) -> list:
    """Attempts whose tallies disagree with their answers, or answers graded against the wrong
    key: what a half-written transaction would leave behind."""
    found = []
    with app.app_context():
        attempts = db.session.scalars(
            db.select(Attempt).options(
                selectinload(Attempt.answers), selectinload(Attempt.quiz_version)
            )
        )
        for attempt in attempts:
            quiz = quiz_from_snapshot(attempt.quiz_version.snapshot)
            questions = {question.id: question for question in quiz.questions}
            answers = attempt.answers
            said = (
                len(answers),
                sum(answer.is_correct for answer in answers),
                max((answer.answered_at for answer in answers), default=None),
            )
            if (attempt.answered, attempt.points, attempt.last_answer_at) != said:
                found.append((attempt.token, (attempt.answered, attempt.points), said[:2]))
            for answer in answers:
                right = questions[answer.question_id].choice(answer.response).correct
                if answer.is_correct != right:
                    found.append((attempt.token, answer.question_id, "graded wrong"))
    return found


def account(app, confirmed: dict[tuple[str, str], str], tally) -> None:
    """Every confirmed answer is stored as given: count them, and count and refuse any lost."""
    stored = stored_answers(app)
    lost = [key for key, choice in confirmed.items() if stored.get(key) != choice]
    tally["answers confirmed under faults"] += len(confirmed)
    tally["answers lost"] += len(lost)
    assert lost == []


def dispose(app):
    with app.app_context():
        db.engine.dispose()


# SQLite: the database file turns read-only.


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]  # fmt: skip


@contextlib.contextmanager
def file_modes_bind():
    """Make file modes bind this thread as they bind the app's user on a server.

    Root ignores modes (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), and tests often run as root, so
    this thread drops both from its effective set; Linux keeps capabilities per thread, and the
    test client runs the app in this thread. Everything is restored afterwards."""
    libc = ctypes.CDLL(None, use_errno=True)
    header, saved = _CapHeader(0x20080522, 0), (_CapData * 2)()  # version 3, this thread
    if libc.capget(ctypes.byref(header), saved) != 0:
        pytest.skip("this system has no Linux capabilities to drop")
    lowered = (_CapData * 2)(*saved)
    lowered[0].effective &= ~((1 << 1) | (1 << 2))
    assert libc.capset(ctypes.byref(header), lowered) == 0, os.strerror(ctypes.get_errno())
    try:
        yield
    finally:
        assert libc.capset(ctypes.byref(header), saved) == 0, os.strerror(ctypes.get_errno())


@contextlib.contextmanager
def read_only(folder: Path, names=("quiz.db", "quiz.db-wal", "quiz.db-shm")):
    """The database file, its -wal and -shm, and their folder read-only, as after a remount."""
    files = [folder / name for name in names if (folder / name).exists()]
    modes = {path: path.stat().st_mode for path in [*files, folder]}
    try:
        for path in files:
            path.chmod(0o444)
        folder.chmod(0o555)
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


@on_sqlite
def test_read_only_database_is_a_503_and_writing_resumes_by_itself(
    app, student, quiz, tmp_path, tally
):
    """With the database read-only, answering gets a 503 and stores nothing; once it is writable
    again, the same app stores the next answer, with no restart."""
    first, second = (right_choice(question).id for question in quiz.questions[:2])
    student.start()
    assert confirm(student, 1, first, quiz)
    with file_modes_bind(), read_only(tmp_path):
        tally["faults injected"] += 1
        # A connection open before the change keeps writing; the next one the app opens (a
        # restarted worker, a growing pool) is the one that meets the read-only file.
        dispose(app)
        # Reading still works: the student can see the question and what they answered so far.
        assert student.client.get(student.question_url(2)).status_code == 200
        assert_outage_page(student.answer(2, second))
        assert student.client.get("/livez").status_code == 200
    assert stored_answers(app) == {(student.token, quiz.questions[0].id): first}
    # Before the fix, SQLite's read-only connection stayed in the pool: 503s until a restart.
    assert confirm(student, 2, second, quiz)
    assert inconsistent_attempts(app) == []
    account(app, {(student.token, q.id): right_choice(q).id for q in quiz.questions[:2]}, tally)


# PostgreSQL: the connection is cut, or a COMMIT is lost on the wire.

COMMIT = b"Q\x00\x00\x00\x0bCOMMIT\x00"
"""A COMMIT as psycopg sends it: a simple Query message."""


class Relay:
    """A TCP relay between the app and PostgreSQL, run by one thread, that a test can cut (the
    listener and every connection closed, as when the database host drops off the network),
    restore, or set to lose the next COMMIT before or after PostgreSQL has run it."""

    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self.port = free_port()
        self.commits_lost = 0
        self._selector = selectors.DefaultSelector()
        self._bell, self._ring = socket.socketpair()
        self._selector.register(self._bell, selectors.EVENT_READ, "bell")
        self._orders: queue.SimpleQueue = queue.SimpleQueue()
        self._listener: socket.socket | None = None
        self._links: dict[socket.socket, tuple[socket.socket, bool]] = {}
        self._trap: str | None = None
        self._doomed: set[socket.socket] = set()
        self._stopped = False
        self._thread = threading.Thread(target=self._serve, name="postgres relay", daemon=True)

    def __enter__(self):
        self._listen()
        self._thread.start()
        return self

    def __exit__(self, *_):
        try:
            self._order("stop")
        finally:
            self._thread.join(timeout=10)
            self._ring.close()
        assert not self._thread.is_alive()

    def cut(self):
        self._order("cut")

    def restore(self):
        self._order("listen")

    def lose_next_commit(self, when: str):
        """Lose the next COMMIT on the wire: "before" PostgreSQL sees it, or "after" it has run
        it, when only the reply is lost."""
        self._order(when)

    def _order(self, order):
        done = threading.Event()
        self._orders.put((order, done))
        self._ring.send(b".")
        assert done.wait(10), f"the relay did not {order}"

    def _serve(self):
        while not self._stopped:
            for key, _ in self._selector.select():
                if key.data == "bell":
                    self._obey()
                    break  # sockets later in this batch may be closed now
                if key.data == "listener":
                    self._accept()
                elif key.fileobj in self._links:
                    self._pass_on(key.fileobj)
        self._selector.close()
        self._bell.close()

    def _obey(self):
        self._bell.recv(1024)
        while not self._orders.empty():
            order, done = self._orders.get()
            if order in ("cut", "stop"):
                if self._listener is not None:
                    self._selector.unregister(self._listener)
                    self._listener.close()
                    self._listener = None
                for sock in list(self._links):
                    if sock in self._links:
                        self._drop(sock)
                self._stopped = order == "stop"
            elif order == "listen":
                self._listen()
            else:
                self._trap = order
            done.set()

    def _listen(self):
        # create_server sets SO_REUSEADDR: the port can be taken again right after a cut.
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.setblocking(False)
        self._selector.register(self._listener, selectors.EVENT_READ, "listener")

    def _accept(self):
        try:
            app_side, _ = self._listener.accept()
        except BlockingIOError:
            return
        try:
            db_side = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            app_side.close()
            return
        for sock in (app_side, db_side):
            sock.setblocking(True)
        self._links[app_side] = (db_side, True)
        self._links[db_side] = (app_side, False)
        for sock in (app_side, db_side):
            self._selector.register(sock, selectors.EVENT_READ, "link")

    def _pass_on(self, sock):
        other, from_app = self._links[sock]
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            self._drop(sock)
            return
        if from_app and self._trap and COMMIT in data:
            when, self._trap = self._trap, None
            if when == "before":
                self.commits_lost += 1
                self._drop(sock)
                return
            self._doomed.add(other)
        elif sock in self._doomed:
            # PostgreSQL's "COMMIT done", lost on its way back to the app.
            self.commits_lost += 1
            self._drop(sock)
            return
        try:
            other.sendall(data)
        except OSError:
            self._drop(sock)

    def _drop(self, sock):
        other, _ = self._links.pop(sock)
        self._links.pop(other, None)
        for end in (sock, other):
            self._doomed.discard(end)
            self._selector.unregister(end)
            end.close()


@contextlib.contextmanager
def app_through_relay(tmp_path):
    """An app with the production pool (pre-pinged, 2 + 2 connections) whose database
    connections all pass through a Relay; both are closed afterwards, even on failure. Its
    rate-limit counts stay in memory, so that the COMMIT a fault hits is the page's own."""
    url = sqlalchemy.engine.make_url(database_url_from(POSTGRES_URL))
    with Relay((url.host or "127.0.0.1", url.port or 5432)) as relay:
        relayed = url.set(host="127.0.0.1", port=relay.port).render_as_string(hide_password=False)
        options = {
            **engine_options(relayed),
            "connect_args": {"options": f"-csearch_path={SCHEMA}", "connect_timeout": 5},
        }
        app = make_app(
            tmp_path,
            SQLALCHEMY_DATABASE_URI=relayed,
            SQLALCHEMY_ENGINE_OPTIONS=options,
            RATELIMIT_STORAGE_URI="memory://",
        )
        try:
            yield app, relay
        finally:
            dispose(app)


@on_postgres
def test_postgres_cut_off_is_a_503_and_service_resumes_by_itself(tmp_path, quiz, tally):
    """With PostgreSQL unreachable, pages that need it get a 503, /healthz says so and /livez
    does not; once it is back, the same app answers and stores again."""
    first, second = (right_choice(question).id for question in quiz.questions[:2])
    with app_through_relay(tmp_path) as (app, relay):
        student = Student(app.test_client())
        student.start()
        assert confirm(student, 1, first, quiz)
        latecomer = Student(app.test_client())
        latecomer.csrf  # noqa: B018 - the start page, opened before the outage
        before = stored_rows(app)

        relay.cut()
        tally["faults injected"] += 1
        assert_outage_page(student.answer(2, second))
        assert_outage_page(latecomer.start(name="Grace Hopper"))
        # The start page says when feedback shows, which a class holding the key decides.
        assert_outage_page(app.test_client().get(f"/quizzes/{quiz.slug}"))
        assert_outage_page(student.client.get(student.results_url))
        health = student.client.get("/healthz")
        assert (health.status_code, health.json["database"]) == (503, "unavailable")
        assert student.client.get("/livez").status_code == 200

        relay.restore()
        assert student.client.get("/healthz").status_code == 200
        assert stored_rows(app) == before
        assert confirm(student, 2, second, quiz)
        assert inconsistent_attempts(app) == []
        account(app, {(student.token, q.id): right_choice(q).id for q in quiz.questions[:2]}, tally)


@on_postgres
@pytest.mark.parametrize("lost", ["before", "after"])
def test_commit_lost_on_the_wire_stores_all_or_nothing(tmp_path, quiz, tally, lost):
    """A connection lost at COMMIT, before PostgreSQL ran it or after: the student gets a 503,
    the answer and its tally are stored together or not at all, and pressing the button again
    shows the feedback."""
    question = quiz.questions[0]
    choice = next(c for c in question.choices if not c.correct).id
    with app_through_relay(tmp_path) as (app, relay):
        student = Student(app.test_client())
        student.start()
        relay.lose_next_commit(lost)
        assert_outage_page(student.answer(1, choice))
        assert relay.commits_lost == 1
        tally["faults injected"] += 1

        committed = lost == "after"
        assert stored_answers(app) == ({(student.token, question.id): choice} if committed else {})
        assert inconsistent_attempts(app) == []
        with app.app_context():
            attempt = db.session.scalars(db.select(Attempt)).one()
            assert (attempt.answered, attempt.points) == (int(committed), 0)
        # The 503 page says to try again: the retry either stores it or finds it stored.
        assert confirm(student, 1, choice, quiz)
        account(app, {(student.token, question.id): choice}, tally)


# A refused COMMIT, as on a full disk, for every page that writes.


def disk_full(dialect) -> Exception:
    """The error the database driver raises when the disk is full."""
    if dialect.name == "sqlite":
        return sqlite3.OperationalError("database or disk is full")
    return psycopg.errors.DiskFull("could not extend file: No space left on device")


@contextlib.contextmanager
def commits_refused(app):
    """Every COMMIT fails in the driver, as on a full disk; yields the list of refusals."""
    with app.app_context():
        dialects = {db.engine.dialect, counts_engine(app).dialect}
        error = disk_full(db.engine.dialect)
    refused = []

    def refuse(_connection):
        refused.append(1)
        raise error

    for dialect in dialects:
        dialect.do_commit = refuse
    try:
        yield refused
    finally:
        for dialect in dialects:
            del dialect.do_commit  # the class's own do_commit again


def teaching(app):
    """A logged-in teacher with one class: (client, class id, join code)."""
    with app.app_context():
        create_instructor("teacher", "correct horse")
    teacher = app.test_client()
    assert login(teacher, "teacher", "correct horse").status_code == 303
    created = teacher.post("/teach", data={"csrf_token": form_token(teacher), "name": "Physics 1"})
    class_id = int(created.location.rsplit("/", 1)[1])
    with app.app_context():
        code = db.session.get(Class, class_id).join_code
    return teacher, class_id, code


WRITES = ["start a quiz", "answer", "retake", "create a class", "close a class", "log out"]


@pytest.mark.parametrize("action", WRITES)
def test_refused_commit_shows_an_error_and_stores_nothing(app, quiz, tally, action):
    """When the database refuses a COMMIT, the page is an error, never a redirect to a
    "saved" page; nothing of it is stored, and the same action works once the disk has room."""
    teacher, class_id, code = teaching(app)
    student = Student(app.test_client())
    student.start(class_code=code)
    newcomer = Student(app.test_client())
    right = right_choice(quiz.questions[0]).id
    teacher_token = form_token(teacher)
    # Each action, and the browser that follows its redirect.
    browser, act = {
        "start a quiz": (newcomer.client, lambda: newcomer.start(name="Grace", class_code=code)),
        "answer": (student.client, lambda: student.answer(1, right)),
        "retake": (student.client, lambda: student.post(f"/attempts/{student.token}/retake")),
        "create a class": (
            teacher,
            lambda: teacher.post("/teach", data={"csrf_token": teacher_token, "name": "Physics 2"}),
        ),
        "close a class": (
            teacher,
            lambda: teacher.post(
                f"/teach/classes/{class_id}/close", data={"csrf_token": teacher_token}
            ),
        ),
        "log out": (teacher, lambda: teacher.post("/logout", data={"csrf_token": teacher_token})),
    }[action]
    before = stored_rows(app)

    with commits_refused(app) as refused:
        response = act()
    assert refused, "the action never reached a COMMIT"
    tally["faults injected"] += len(refused)
    assert_outage_page(response)
    assert stored_rows(app) == before
    # Still logged in after a logout that was not saved: the page did not claim otherwise.
    assert teacher.get("/teach").status_code == 200

    again = act()
    assert again.status_code == 303
    assert stored_rows(app) != before
    page = browser.get(again.location)
    assert page.status_code == 200
    if action == "answer":
        assert "<strong>Correct.</strong>" in text(page)
        account(app, {(student.token, quiz.questions[0].id): right}, tally)
    assert inconsistent_attempts(app) == []


def test_full_disk_still_lets_teachers_log_in_and_read(app, quiz, tally, caplog):
    """Logging in and reading results write only the login's rate-limit counts, which count in
    memory instead when they cannot be stored, so a full disk does not lock anyone out.
    (The bank was published before the disk filled, as `quiz reload` does at every start.)"""
    _, class_id, _ = teaching(app)
    tally["faults injected"] += 1
    other = app.test_client()
    with commits_refused(app) as refused:
        assert login(other, "teacher", "correct horse").status_code == 303
        assert other.get(f"/teach/classes/{class_id}").status_code == 200
        assert other.get(f"/teach/classes/{class_id}/gradebook.csv").status_code == 200
    # The login counts its try against two limits; the first refusal switches both to memory.
    assert len(refused) <= 2
    assert "falling back to in-memory storage" in caplog.text


@on_sqlite
def test_disk_filling_up_during_a_class_loses_no_confirmed_answer(app, quiz, tally):
    """SQLite's page limit makes a real "database or disk is full" in the middle of a class:
    each answer is either confirmed and stored, or refused with an error and not stored; once
    there is room, every refused answer goes through."""
    students = [Student(app.test_client()) for _ in range(12)]
    for number, student in enumerate(students):
        assert student.start(name=f"Student {number}").status_code == 303
    with app.app_context():
        engine = db.engine
    with engine.connect() as connection:
        pages = connection.exec_driver_sql("PRAGMA page_count").scalar()

    def fill_up(dbapi_connection, _record):
        # Not one page more: the free room inside the pages holds a few dozen answers.
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages}")

    sqlalchemy.event.listen(engine, "connect", fill_up)
    engine.dispose()
    rng = random.Random(7)
    confirmed, refused = {}, []
    try:
        for number, question in enumerate(quiz.questions, 1):
            for student in students:
                choice = rng.choice(question.choices).id
                response = student.answer(number, choice)
                if response.status_code == 303:
                    assert confirms(student, response, number, choice, quiz)
                    confirmed[student.token, question.id] = choice
                else:
                    assert_outage_page(response)
                    refused.append((student, number, choice))
    finally:
        sqlalchemy.event.remove(engine, "connect", fill_up)
        engine.dispose()
    tally["faults injected"] += len(refused)
    assert refused, "the disk never filled up"
    assert confirmed, "the disk was full from the start"
    assert stored_answers(app) == confirmed
    assert inconsistent_attempts(app) == []

    for student, number, choice in refused:
        assert confirm(student, number, choice, quiz)
        confirmed[student.token, quiz.questions[number - 1].id] = choice
    assert len(confirmed) == 8 * len(students)
    assert inconsistent_attempts(app) == []
    account(app, confirmed, tally)


# gunicorn: workers killed with SIGKILL in the middle of a class.

CUT_OFF = (ConnectionError, http.client.HTTPException, urllib.error.URLError)
"""What a request to a worker killed mid-request raises: reset, empty reply, short body."""
VERDICT = re.compile(r"<strong>(Correct|Incorrect)\.</strong> You chose “([^”]*)”")


class Browser:
    """A student's browser on a real server: cookies, CSRF tokens from forms, redirects
    followed; a request cut off by a dying worker is sent again, as a student presses the
    button again."""

    def __init__(self, base: str, progress: "Progress"):
        self.base = base
        self.progress = progress
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        self.cut_off = 0

    def open(self, path: str, **fields) -> tuple[int, str, str]:
        data = urllib.parse.urlencode(fields).encode() if fields else None
        for _ in range(10):
            try:
                with self.opener.open(self.base + path, data=data, timeout=30) as response:
                    return response.status, response.geturl(), response.read().decode()
            except urllib.error.HTTPError as error:
                with error:
                    return error.code, error.geturl(), error.read().decode()
            except CUT_OFF:
                self.cut_off += 1
                self.progress.add(
                    cut_off=1, answers_cut_off=int("/questions/" in path and bool(data))
                )
        raise AssertionError(f"{path}: still cut off after 10 tries")


class Progress:
    """Answers confirmed and requests cut off so far, across every student thread, for the
    test to wait on."""

    def __init__(self):
        self.confirmed = self.cut_off = self.answers_cut_off = self.finished = 0
        self.changed = threading.Condition()

    def add(self, confirmed=0, cut_off=0, answers_cut_off=0, finished=0):
        with self.changed:
            self.finished += finished
            self.confirmed += confirmed
            self.cut_off += cut_off
            self.answers_cut_off += answers_cut_off
            self.changed.notify_all()

    def wait_for(self, target: int, students: int, timeout: float = 60) -> bool:
        """Wait until `target` answers are confirmed, or every student has stopped."""

        def done():
            return self.confirmed >= target or self.finished == students

        with self.changed:
            return self.changed.wait_for(done, timeout)


def take_quiz(base: str, name: str, quiz, progress: Progress) -> dict:
    """Take the whole quiz; an answer counts as confirmed when its feedback page says
    Correct or Incorrect about the choice sent."""
    browser, rng = Browser(base, progress), random.Random(name)
    try:
        _, _, page = browser.open(f"/quizzes/{SLUG}")
        token = csrf_token(page)
        status, url, _ = browser.open(f"/quizzes/{SLUG}", csrf_token=token, name=name)
        assert status == 200 and url.endswith("/questions/1"), (status, url)
        attempt = url.split("/")[-3]
        confirmed = {}
        for number, question in enumerate(quiz.questions, 1):
            path = f"/attempts/{attempt}/questions/{number}"
            status, _, page = browser.open(path)  # reading the question first, as students do
            assert status == 200 and shown(question.prompt) in page, (name, number, status)
            choice = rng.choice(question.choices)
            status, url, page = browser.open(path, csrf_token=token, choice=choice.id)
            verdict = VERDICT.search(page)
            if status == 200 and url.endswith(path) and verdict:
                assert verdict.group(2) == str(shown(choice.text)), (name, number)
                confirmed[question.id] = choice.id
                progress.add(confirmed=1)
        return {"attempt": attempt, "confirmed": confirmed, "cut_off": browser.cut_off}
    finally:
        progress.add(finished=1)


def workers(master: int) -> set[int]:
    """gunicorn's workers: the master's child processes."""
    return {int(pid) for pid in Path(f"/proc/{master}/task/{master}/children").read_text().split()}


def serving(pid: int, port: int) -> bool:
    """Whether this worker holds a browser's connection to the server now, mid-request."""
    inodes = []
    with contextlib.suppress(FileNotFoundError, ProcessLookupError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(FileNotFoundError):
                if found := re.fullmatch(r"socket:\[(\d+)\]", os.readlink(f"/proc/{pid}/fd/{fd}")):
                    inodes.append(found.group(1))
    # Thousands of closed connections wait out TIME_WAIT in this table: find lines, not parse.
    table = Path("/proc/net/tcp").read_text()
    for inode in inodes:
        at = table.find(f" {inode} ")
        if at >= 0:
            # sl local_address rem_address st ...: this port, ESTABLISHED (01).
            fields = table[table.rfind("\n", 0, at) + 1 : at].split()
            if int(fields[1].split(":")[1], 16) == port and fields[3] == "01":
                return True
    return False


def kill_mid_request(master: int, port: int) -> int | None:
    """SIGKILL a worker caught with a browser waiting on it; return its pid, or None if no
    worker is mid-request now."""
    return next((pid for pid in workers(master) if serving(pid, port) and caught(pid, port)), None)


def caught(pid: int, port: int) -> bool:
    """Freeze the worker (SIGSTOP), so that it cannot finish while we look; kill it if a
    browser is still waiting on it, or else let it go on."""
    os.kill(pid, signal.SIGSTOP)
    try:
        # A browser that already has the whole reply closes its end within moments, which the
        # frozen worker cannot; one still connected after that is waiting on this worker.
        if serving(pid, port) and not wait_until(lambda: not serving(pid, port), 0.1):
            os.kill(pid, signal.SIGKILL)
            return True
        return False
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def wait_until(condition, timeout: float = 30):
    """Poll a condition on other processes, which cannot notify us, every 10 ms; return its
    first true value, or None at the timeout."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            return None
        time.sleep(0.01)
    return value


STUDENTS = 60


@pytest.mark.load
def test_killed_workers_lose_no_confirmed_answer(tmp_path, quiz, tally):
    """gunicorn workers killed with SIGKILL mid-request while 60 students answer: every answer
    confirmed is stored, no attempt is half-written, a cut-off request works when sent again,
    and the master replaces the workers and keeps serving."""
    app = make_app(tmp_path)
    progress, killed = Progress(), []
    with gunicorn(tmp_path, workers=3) as server, ThreadPoolExecutor(max_workers=12) as pool:
        port = int(server.url.rsplit(":", 1)[1])

        def over():
            return "the class ended before the kill" if progress.finished == STUDENTS else None

        students = [
            pool.submit(take_quiz, server.url, f"Student {n}", quiz, progress)
            for n in range(STUDENTS)
        ]
        # Two kills, and more while no request has been cut off yet.
        for share in (0.1, 0.3, 0.5, 0.7):
            if len(killed) >= 2 and progress.cut_off:
                break
            assert progress.wait_for(int(share * 8 * STUDENTS), STUDENTS), "the class stalled"
            victim = wait_until(lambda: kill_mid_request(server.pid, port) or over())
            assert isinstance(victim, int), victim or "no worker was ever seen mid-request"
            killed.append(victim)
            tally["faults injected"] += 1
        outcomes = [student.result() for student in students]
        assert wait_until(lambda: len(workers(server.pid) - set(killed)) == 3)
        late = take_quiz(server.url, "Late Student", quiz, Progress())
    cut_off = sum(outcome["cut_off"] for outcome in outcomes)
    tally["requests cut off by a killed worker"] += cut_off
    tally["answers cut off by a killed worker"] += progress.answers_cut_off

    assert [o["attempt"] for o in outcomes if len(o["confirmed"]) != 8] == []
    assert len(late["confirmed"]) == 8
    confirmed = {
        (outcome["attempt"], question): choice
        for outcome in [*outcomes, late]
        for question, choice in outcome["confirmed"].items()
    }
    account(app, confirmed, tally)
    assert inconsistent_attempts(app) == []
    assert cut_off >= 1, "no request was in flight when the workers died"


# A bad questions.json deployed over a good one.


def _every_choice_right(good: bytes) -> bytes:
    data = json.loads(good)
    for choice in data["quizzes"][0]["questions"][0]["choices"]:
        choice["correct"] = True
    return json.dumps(data, ensure_ascii=False, indent=2).encode()


DEPLOY_ACCIDENTS = {
    "upload cut short": (lambda good: good[: len(good) // 2], "not valid JSON"),
    "empty file": (lambda good: b"", "not valid JSON: Expecting value (line 1, column 1)"),
    "merge conflict left in": (
        lambda good: good.replace(b"\n", b"\n<<<<<<< HEAD\n", 1),
        "not valid JSON",
    ),
    "saved as Windows-1252": (
        lambda good: good.decode().encode("cp1252", errors="replace"),
        "not UTF-8 text",
    ),
    "every choice marked right": (_every_choice_right, "needs exactly one correct choice, has 4"),
}
"""What goes wrong when a bank is copied to a server by hand, and what the app must say."""


def history(app, tokens: list[str], class_id: int) -> dict[str, str]:
    """What old attempts look like: their results pages as a classmate opens them, and the
    class's gradebook and responses as the teacher downloads them."""
    stranger, teacher = app.test_client(), app.test_client()
    assert login(teacher, "teacher", "correct horse").status_code == 303
    addresses = {token: (stranger, f"/attempts/{token}/results") for token in tokens}
    for kind in ("gradebook", "responses"):
        addresses[kind] = (teacher, f"/teach/classes/{class_id}/{kind}.csv")
    pages = {}
    for name, (browser, address) in addresses.items():
        # Read each page whole before the next: the responses export is streamed.
        with browser.get(address) as page:
            assert page.status_code == 200, address
            pages[name] = page.get_data(as_text=True)
    return pages


def wrong(question):
    return next(choice for choice in question.choices if not choice.correct)


def key_after_edit(question):
    """The choice after the right one, in the bank's order: the key once `reworded`."""
    right = question.choices.index(right_choice(question))
    return question.choices[(right + 1) % len(question.choices)]


def reworded(good: bytes) -> bytes:
    """A valid edit: question 1 reworded, question 2's key moved to the next choice."""
    data = json.loads(good)
    first, second = data["quizzes"][0]["questions"][:2]
    first["prompt"] = "Reworded: " + first["prompt"]
    right = next(index for index, choice in enumerate(second["choices"]) if choice["correct"])
    for index, choice in enumerate(second["choices"]):
        choice["correct"] = index == (right + 1) % len(second["choices"])
    return json.dumps(data, ensure_ascii=False, indent=2).encode()


def test_bad_bank_over_a_good_one_is_refused_and_history_survives(tmp_path, tally):
    """Each broken questions.json deployed over a good one: workers starting beside it keep
    serving the published bank, `flask quiz check` and `flask quiz reload` refuse it with the
    same located message, and the attempts taken so far stay exactly as they were, through the
    refusals and through a valid edit after them."""
    deployed = tmp_path / "questions.json"
    good = REAL_BANK.read_bytes()
    deployed.write_bytes(good)
    app = make_app(tmp_path, QUESTIONS_PATH=str(deployed))
    _, class_id, code = teaching(app)
    with app.app_context():
        quiz = current_bank().quizzes[SLUG]
    first, second, third = quiz.questions[:3]
    # Ada is all right; Grace picks question 2's choice that the edit below makes the key:
    # grading either again with the edited key would change their scores.
    tokens = []
    for name, choices in (
        ("Ada", [right_choice(question) for question in quiz.questions]),
        ("Grace", [wrong(first), key_after_edit(second), right_choice(third)]),
    ):
        student = Student(app.test_client())
        student.start(name=name, class_code=code)
        for number, choice in enumerate(choices, 1):
            assert confirm(student, number, choice.id, quiz)
        tokens.append(student.token)
    before, rows = history(app, tokens, class_id), stored_rows(app)
    dispose(app)

    for name, (damage, message) in DEPLOY_ACCIDENTS.items():
        deployed.write_bytes(damage(good))
        tally["faults injected"] += 1
        restarted = make_app(tmp_path, QUESTIONS_PATH=str(deployed))
        with restarted.app_context():
            assert current_bank().quizzes[SLUG] == quiz, name
        refused = restarted.test_cli_runner().invoke(args=["quiz", "reload"])
        assert refused.exit_code == 1, (name, refused.output)
        *errors, last = refused.stderr.splitlines()
        assert errors and all(error.startswith(f"{deployed}: ") for error in errors), name
        assert last == "Refused: the published bank is still the one served.", name
        assert message in refused.stderr, (name, errors)
        dispose(restarted)
    # The last accident, as an administrator deploying it meets it: the check and the server.
    settings = {**os.environ, "SECRET_KEY": "deployed", "DATABASE_URL": server_database(tmp_path),
                "QUESTIONS_PATH": str(deployed)}  # fmt: skip
    flask = Path(sys.executable).with_name("flask")
    check = subprocess.run(
        [flask, "--app", "wsgi", "quiz", "check"],
        cwd=PROJECT_ROOT, env=settings, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (check.returncode, check.stdout) == (1, "")
    assert check.stderr.splitlines() == errors
    with gunicorn(tmp_path, workers=1, QUESTIONS_PATH=str(deployed)) as server:
        page = urllib.request.urlopen(f"{server.url}/quizzes/{SLUG}", timeout=10)
        assert page.status == 200 and quiz.title in page.read().decode()
    assert stored_rows(app) == rows

    deployed.write_bytes(reworded(good))
    edited = make_app(tmp_path, QUESTIONS_PATH=str(deployed))
    try:
        assert edited.test_cli_runner().invoke(args=["quiz", "reload"]).exit_code == 0
        with edited.app_context():
            assert current_bank().quizzes[SLUG].version != quiz.version
        assert history(edited, tokens, class_id) == before
        # The reload adds a version, a publication and a release; every row that was there stays
        # as it was, but the quiz's own, which now names the new version as the one it serves.
        after = stored_rows(edited)
        kept = [table for table in rows if table != "quizzes"]
        assert all(row in after[table] for table in kept for row in rows[table])
        assert {table: after[table] for table in ("attempts", "answers")} == {
            table: rows[table] for table in ("attempts", "answers")
        }
    finally:
        dispose(edited)
