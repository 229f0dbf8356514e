"""`flask quiz check` and `flask quiz reload`, as someone at a terminal runs them."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.bank import BankError, load_bank
from app.cli import quiz_cli
from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import QuizVersion
from app.served import current_bank

from helpers import QUICK_HASH, SERVE, SLUG, make_app

pytestmark = pytest.mark.any_database

REAL_PATH = PROJECT_ROOT / "questions.json"


def flask(runner, *args):
    """Run `flask ARGS` on the test app."""
    return runner.invoke(args=list(args))


def bad_bank(tmp_path) -> tuple[Path, list[str]]:
    """The real bank with two mistakes, and the two messages they should produce."""
    data = json.loads(REAL_PATH.read_text(encoding="utf-8"))
    del data["quizzes"][0]["title"]
    data["quizzes"][0]["questions"][0]["choices"][1]["correct"] = "yes"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path, [
        f'{path}: quiz "{SLUG}", field "title": missing',
        f'{path}: quiz "{SLUG}", question "the-trade", field "choices[1].correct": '
        "expected true or false, got a string",
    ]


def assert_real_bank_ok(result):
    assert result.exit_code == 0, result.output
    bank, evidence = result.stdout.splitlines()
    assert bank == f"{REAL_PATH}: OK, 1 quiz, 8 questions"
    assert evidence.startswith("evidence/checkpointing.json: OK, 36 runs")
    assert result.stderr == ""


def assert_failed_with(result, messages):
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert sorted(result.stderr.splitlines()) == sorted(messages)


def test_check_passes_the_real_bank(runner):
    """`flask quiz check questions.json` says OK with the counts and exits 0."""
    assert_real_bank_ok(flask(runner, "quiz", "check", str(REAL_PATH)))


def test_check_lists_every_problem_and_fails(runner, tmp_path):
    """A bank with two mistakes prints both to stderr and exits 1."""
    path, messages = bad_bank(tmp_path)
    assert_failed_with(flask(runner, "quiz", "check", str(path)), messages)


def test_check_names_a_missing_file(runner, tmp_path):
    """A mistyped path is reported as unreadable, exit 1."""
    path = tmp_path / "nope.json"
    result = flask(runner, "quiz", "check", str(path))
    assert_failed_with(result, [f"{path}: cannot be read: No such file or directory"])


def test_check_works_when_the_app_cannot_serve(tmp_path):
    """The bank a new database cannot be started with can still be checked, every message."""
    path, messages = bad_bank(tmp_path)
    app = make_app(tmp_path, QUESTIONS_PATH=str(path))
    with app.app_context(), pytest.raises(BankError):
        current_bank()
    assert_failed_with(CliRunner().invoke(quiz_cli, ["check", str(path)]), messages)


def test_check_without_a_path_checks_questions_path(monkeypatch, tmp_path):
    """Plain `flask quiz check` checks the bank QUESTIONS_PATH points at."""
    path, messages = bad_bank(tmp_path)
    monkeypatch.setenv("QUESTIONS_PATH", str(path))
    assert_failed_with(CliRunner().invoke(quiz_cli, ["check"]), messages)


def test_check_without_a_path_defaults_to_the_projects_bank(monkeypatch):
    """With no QUESTIONS_PATH, `flask quiz check` checks the project's questions.json."""
    monkeypatch.delenv("QUESTIONS_PATH", raising=False)
    assert_real_bank_ok(CliRunner().invoke(quiz_cli, ["check"]))


def versions(app) -> list[tuple[str, str]]:
    with app.app_context():
        return [(v.slug, v.digest) for v in db.session.scalars(db.select(QuizVersion))]


def served(app) -> tuple[int, str]:
    """The release and the quiz version a freshly started worker on this database serves."""
    with app.app_context():
        bank = current_bank()
        return bank.generation, bank.quizzes[SLUG].version


def test_reload_records_each_quiz_once(app, runner):
    """`flask quiz reload` stores and publishes the bank; running it again changes nothing."""
    first = flask(runner, "quiz", "reload")
    assert first.exit_code == 0, first.output
    version = load_bank(REAL_PATH).quizzes[SLUG].version
    assert first.stdout.splitlines() == [
        f"{SLUG}: version {version[:12]}, 8 questions",
        f"Published {REAL_PATH} as release 1: every worker serves it within 3600 seconds.",
    ]
    again = flask(runner, "quiz", "reload")
    assert (
        again.stdout.splitlines()[-1] == f"Release 1 already serves {REAL_PATH}; nothing changed."
    )
    assert versions(app) == [(SLUG, version)]


def test_reload_after_an_edit_keeps_the_old_version(app, runner, quiz, tmp_path):
    """Reloading an edited bank adds its version beside the old one, which stays for old
    attempts, and every worker serves the new one."""
    data = json.loads(REAL_PATH.read_text(encoding="utf-8"))
    data["quizzes"][0]["title"] += " (revised)"
    edited_path = tmp_path / "edited.json"
    edited_path.write_text(json.dumps(data), encoding="utf-8")
    edited = make_app(tmp_path, QUESTIONS_PATH=str(edited_path))
    try:
        assert flask(edited.test_cli_runner(), "quiz", "reload").exit_code == 0
        generation, new = served(make_app(tmp_path))
        assert versions(edited) == [(SLUG, quiz.version), (SLUG, new)]
        assert generation == 2 and new != quiz.version
    finally:
        with edited.app_context():
            db.engine.dispose()


def test_reload_refuses_a_bad_bank_with_the_checks_messages(app, runner, quiz, tmp_path):
    """A bad bank is refused with exactly `quiz check`'s located messages, exit 1, and the
    release being served stays."""
    path, messages = bad_bank(tmp_path)
    broken = make_app(tmp_path, QUESTIONS_PATH=str(path))
    result = flask(broken.test_cli_runner(), "quiz", "reload")
    refused = "Refused: the published bank is still the one served."
    assert_failed_with(result, [*messages, refused])
    assert result.stderr == flask(runner, "quiz", "check", str(path)).stderr + refused + "\n"
    assert served(broken) == (1, quiz.version)
    assert versions(app) == [(SLUG, quiz.version)]


def test_a_restart_serves_what_was_published_even_with_a_broken_file(app, quiz, tmp_path):
    """`make run`'s `quiz reload --if-unpublished` publishes only into an empty database, so a
    restart with a half-edited file (or without QUESTIONS_PATH) keeps serving the last release."""
    path, _ = bad_bank(tmp_path)
    broken = make_app(tmp_path, QUESTIONS_PATH=str(path))
    result = flask(broken.test_cli_runner(), "quiz", "reload", "--if-unpublished")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"Serving release 1; `make reload` publishes {path} after an edit.\n"
    assert served(broken) == (1, quiz.version)


def test_the_first_start_publishes_the_bank(tmp_path):
    """On an empty database `quiz reload --if-unpublished` publishes the file like `quiz reload`."""
    fresh = make_app(tmp_path)
    result = flask(fresh.test_cli_runner(), "quiz", "reload", "--if-unpublished")
    assert result.exit_code == 0, result.output
    assert "as release 1" in result.stdout


# A worker serving a student and an instructor, as a server's worker does, run apart from the
# test process, which has loaded everything by now.
SERVED = """
import sys
sys.path.insert(0, "tests")
import wsgi
from app.auth import create_instructor
from app.codes import new_join_code
from app.extensions import db
from app.models import Class
from app.question_types import right_choice
from app.served import current_bank
from helpers import SLUG, Student, login

app = wsgi.app
with app.app_context():
    ada = create_instructor("ada", "a password")
    year_9 = Class(name="Year 9", instructor_id=ada.id, join_code=new_join_code())
    db.session.add(year_9)
    db.session.commit()
    class_page = f"/teach/classes/{year_9.id}"
    question = current_bank().quizzes[SLUG].questions[0]
student = Student(app.test_client())
pages = [student.start(), student.client.get(student.question_url(1)),
         student.answer(1, right_choice(question).id), student.client.get(student.results_url)]
students_only = [name for name in sys.argv[1:] if name in sys.modules]
teacher = app.test_client()
login(teacher, "ada", "a password")
pages.append(teacher.get(class_page))  # the LMS's side of it included
assert [page.status_code for page in pages] == [303, 200, 303, 200, 200], pages
print(students_only)
print([name for name in sys.argv[1:] if name in sys.modules])
"""


def test_servers_leave_out_migrations_and_the_command_line_has_them(tmp_path):
    """`flask --app wsgi db` works; a gunicorn worker serving students and instructors never
    loads Alembic (11 MB each), nor what only uploads and imports need (Pillow, markdownify
    with BeautifulSoup: 4 MB), nor the LTI library and what it brings (14.5 MB) until an LMS
    launches; one serving students alone, neither jsonschema (3 MB: `flask db upgrade` checked
    the measurements) nor the QR codes of the class page."""
    env = {**os.environ, "SECRET_KEY": "test", "DATABASE_URL": f"sqlite:///{tmp_path / 'q.db'}",
           "PASSWORD_HASH_METHOD": QUICK_HASH}  # fmt: skip
    flask = Path(sys.executable).with_name("flask")
    for command in (["db", "upgrade"], ["quiz", "reload", "--if-unpublished"]):  # as `make run`
        done = subprocess.run([flask, "--app", "wsgi", *command], cwd=PROJECT_ROOT, env=env,
                              capture_output=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
    unused = ("alembic", "PIL", "markdownify", "bs4", "requests", "pylti1p3", "jwt", "jwcrypto",
              "cryptography")  # fmt: skip
    worker = subprocess.run(
        [sys.executable, "-c", SERVED, *unused, "jsonschema", "segno"],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert worker.stdout.strip().splitlines()[-2:] == ["[]", "['segno']"], worker.stderr


def test_make_run_and_the_service_start_the_server_as_the_tests_do():
    """`make run` and docs/deploy.md's service start gunicorn with `-OO`, as every test's server
    (helpers.gunicorn) does: docstrings stay on disk, 5 MB less in each worker."""
    command = " ".join(SERVE)
    assert f"\t$(BIN)/python {command}\n" in (PROJECT_ROOT / "Makefile").read_text()
    service = (PROJECT_ROOT / "docs" / "deploy.md").read_text()
    assert f"\nExecStart=/srv/quizwright/app/.venv/bin/python {command}\n" in service


def test_make_instructor_without_a_name_says_how_to_call_it():
    """`make instructor` alone explains NAME= instead of showing Flask's usage error."""
    env = {key: value for key, value in os.environ.items() if key not in ("NAME", "ADMIN")}
    made = subprocess.run(
        ["make", "--no-print-directory", "instructor"],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert made.returncode != 0
    assert "make instructor NAME=ada" in made.stdout
    assert "Usage:" not in made.stdout + made.stderr
