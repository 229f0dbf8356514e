"""The question bank: every mistake a question writer can make is reported, located, at once."""

import copy
import functools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from app.bank import BankError, load_bank, problems
from app.config import PROJECT_ROOT
from app.extensions import db
from app.models import QuizVersion, Release
from app.question_types import right_choice
from app.releases import ServedBank
from app.served import current_bank

from helpers import SLUG, empty_rows, gunicorn, make_app, queries, server_database

pytestmark = pytest.mark.any_database

REAL_PATH = PROJECT_ROOT / "questions.json"
REAL = json.loads(REAL_PATH.read_text(encoding="utf-8"))
# A copy of the seed text the quiz was written from (shared/seed/), kept so CI always checks it.
SEED_PATH = Path(__file__).parent / "data" / "gradient-checkpointing-quiz.txt"
DROP = object()
QUIZ = f'quiz "{SLUG}"'
Q1 = f'{QUIZ}, question "the-trade"'


def keys(dotted: str) -> list:
    return [int(key) if key.isdigit() else key for key in dotted.split(".")]


def walk(node, path: list):
    for key in path:
        node = node[key]
    return node


def bank(*edits) -> dict:
    """A copy of the real bank with (dotted path, value) edits applied; DROP deletes the key."""
    data = copy.deepcopy(REAL)
    for dotted, value in edits:
        *parents, last = keys(dotted)
        node = walk(data, parents)
        if value is DROP:
            del node[last]
        elif isinstance(node, list) and last == len(node):
            node.append(copy.deepcopy(value))
        else:
            node[last] = copy.deepcopy(value)
    return data


def write(tmp_path, data, **dump) -> Path:
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(data, **({"indent": 2} | dump)), encoding="utf-8")
    return path


def errors(path) -> list[str]:
    with pytest.raises(BankError) as caught:
        load_bank(path)
    return caught.value.errors


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        pytest.param([REAL], "expected an object, got a list", id="not-an-object"),
        pytest.param({"$schema": "x"}, 'field "quizzes": missing', id="no-quizzes-$schema-is-fine"),
        pytest.param({"quizzes": {}}, 'field "quizzes": expected a list, got an object', id="dict"),
        pytest.param(REAL | {"quizes": []}, 'field "quizes": unknown field', id="unknown-key"),
    ],
)
def test_top_level_problem_is_named(tmp_path, data, problem):
    """A bank whose outer shape is wrong says what is wrong with it."""
    path = write(tmp_path, data)
    assert errors(path) == [f"{path}: {problem}"]


@pytest.mark.parametrize(
    ("dotted", "value", "problem"),
    [
        ("quizzes.0.title", DROP, f'{QUIZ}, field "title": missing'),
        ("quizzes.0.questions.0.prompt", DROP, f'{Q1}, field "prompt": missing'),
        (
            "quizzes.0.questions.0.choices.1.correct",
            DROP,
            f'{Q1}, field "choices[1].correct": missing',
        ),
        (
            "quizzes.0.questions.0.references.0.url",
            DROP,
            f'{Q1}, field "references[0].url": missing',
        ),
        ("quizzes.0.slug", DROP, 'quiz #1, field "slug": missing'),
        ("quizzes.0.questions.1.id", DROP, f'{QUIZ}, question #2, field "id": missing'),
        (
            "quizzes.0.questions.0.choices.1.correct",
            "yes",
            f'{Q1}, field "choices[1].correct": expected true or false, got a string',
        ),
        (
            "quizzes.0.questions.0.choices",
            "a",
            f'{Q1}, field "choices": expected a list, got a string',
        ),
        ("quizzes.0.title", 5, f'{QUIZ}, field "title": expected a string, got a whole number'),
        (
            "quizzes.0.shuffle_choices",
            0.5,
            f'{QUIZ}, field "shuffle_choices": expected true or false, got a number',
        ),
        ("quizzes.0.colour", "red", f'{QUIZ}, field "colour": unknown field'),
        ("quizzes.0.questions.0.hint", "x", f'{Q1}, field "hint": unknown field'),
        (
            "quizzes.0.questions.0.choices.0.hint",
            "x",
            f'{Q1}, field "choices[0].hint": unknown field',
        ),
        (
            "quizzes.0.questions.0.references.0.note",
            "x",
            f'{Q1}, field "references[0].note": unknown field',
        ),
        (
            "quizzes.1",
            REAL["quizzes"][0],
            f'{QUIZ}, field "slug": "{SLUG}" is used by another quiz',
        ),
        (
            "quizzes.0.questions.1.id",
            "the-trade",
            f'{Q1}, field "id": "the-trade" is used by another question',
        ),
        (
            "quizzes.0.questions.0.choices.1.id",
            "recompute",
            f'{Q1}, field "choices[1].id": "recompute" is used by another choice',
        ),
        (
            "quizzes.0.questions.0.choices",
            REAL["quizzes"][0]["questions"][0]["choices"][:1],
            f'{Q1}, field "choices": needs at least 2 entries',
        ),
        (
            "quizzes.0.questions.0.references",
            [],
            f'{Q1}, field "references": needs at least 1 entry',
        ),
        ("quizzes.0.title", "x" * 201, f'{QUIZ}, field "title": must be at most 200 characters'),
        # Limits that keep a page usable: a text, a question's choices, a quiz's questions.
        (
            "quizzes.0.questions.0.explanation",
            "x" * 20001,
            f'{Q1}, field "explanation": must be at most 20000 characters',
        ),
        (
            "quizzes.0.questions.0.choices",
            [
                {"id": f"c{n}", "text": f"Choice {n}", "correct": n == 0, "explanation": "Why."}
                for n in range(21)
            ],
            f'{Q1}, field "choices": has 21; at most 20 are allowed',
        ),
        (
            "quizzes.0.questions.0.choices.0.correct",
            False,
            f'{Q1}, field "choices": needs exactly one correct choice, has 0',
        ),
        (
            "quizzes.0.questions.0.choices.1.correct",
            True,
            f'{Q1}, field "choices": needs exactly one correct choice, has 2',
        ),
        ("quizzes.0.questions.0.prompt", "", f'{Q1}, field "prompt": must not be empty'),
        ("quizzes.0.questions.0.prompt", " \n\t ", f'{Q1}, field "prompt": must not be empty'),
        (
            "quizzes.0.questions.0.choices.2.text",
            " ",
            f'{Q1}, field "choices[2].text": must not be empty',
        ),
        ("quizzes.0.description", "", f'{QUIZ}, field "description": must not be empty'),
        (
            "quizzes.0.questions.0.references.0.url",
            "javascript:alert(1)",
            f'{Q1}, field "references[0].url": must be an https:// address',
        ),
        (
            "quizzes.0.questions.0.references.0.url",
            "http://arxiv.org/abs/1604.06174",
            f'{Q1}, field "references[0].url": must be an https:// address',
        ),
        (
            "quizzes.0.slug",
            "Check Pointing",
            'quiz "Check Pointing", field "slug": \'Check Pointing\' is not allowed: '
            "The quiz's address: /quizzes/SLUG. Lower-case words joined by '-'.",
        ),
        (
            "quizzes.0.questions.0.id",
            "the trade",
            f'{QUIZ}, question "the trade", field "id": \'the trade\' is not allowed: '
            "Letters, digits, '-' and '_', at most 64 characters.",
        ),
    ],
)
def test_mistake_is_reported_once_with_its_place(tmp_path, dotted, value, problem):
    """One mistake gives one message naming its quiz, question and field."""
    path = write(tmp_path, bank((dotted, value)))
    assert errors(path) == [f"{path}: {problem}"]


def test_a_quiz_of_more_than_500_questions_is_refused_at_its_list(tmp_path):
    """500 questions keep the question pages, the class page and the editor usable."""
    first = REAL["quizzes"][0]["questions"][0]
    many = [{**first, "id": f"q{n}"} for n in range(501)]
    path = write(tmp_path, bank(("quizzes.0.questions", many)))
    assert errors(path) == [f'{path}: {QUIZ}, field "questions": has 501; at most 500 are allowed']


def test_every_mistake_is_reported_at_once(tmp_path):
    """A writer with three mistakes sees all three, not just the first."""
    path = write(
        tmp_path,
        bank(
            ("quizzes.0.title", DROP),
            ("quizzes.0.questions.0.choices.1.correct", "yes"),
            ("quizzes.0.questions.7.references.0.url", "http://example.org"),
        ),
    )
    assert sorted(errors(path)) == sorted(
        [
            f'{path}: {QUIZ}, field "title": missing',
            f'{path}: {Q1}, field "choices[1].correct": expected true or false, got a string',
            f'{path}: {QUIZ}, question "selective-checkpointing", field "references[0].url": '
            "must be an https:// address",
        ]
    )


def test_not_json_names_line_and_column(tmp_path):
    """A missing comma is reported with the line and column to look at."""
    text = REAL_PATH.read_text(encoding="utf-8").replace('"the-trade",', '"the-trade"', 1)
    line = next(n for n, s in enumerate(text.splitlines(), 1) if '"the-trade"' in s) + 1
    column = text.splitlines()[line - 1].index('"') + 1
    path = tmp_path / "questions.json"
    path.write_text(text, encoding="utf-8")
    expected = f"{path}: not valid JSON: Expecting ',' delimiter (line {line}, column {column})"
    assert errors(path) == [expected]


def test_not_utf8_is_reported(tmp_path):
    """A file saved as Latin-1 is refused with a message, not a traceback."""
    path = tmp_path / "questions.json"
    path.write_bytes(REAL_PATH.read_bytes().replace(b"Quiz", b"Qu\xefz ", 1))
    assert errors(path) == [f"{path}: not UTF-8 text: invalid continuation byte"]


def test_repeated_key_is_reported(tmp_path):
    """A key written twice in one object is refused rather than silently overwritten."""
    path = tmp_path / "questions.json"
    path.write_text('{"quizzes": [{"slug": "a", "slug": "b"}]}', encoding="utf-8")
    assert errors(path) == [f'{path}: the key "slug" appears twice in one object']


def test_missing_file_is_reported(tmp_path):
    """A wrong QUESTIONS_PATH says the file cannot be read."""
    path = tmp_path / "nope.json"
    assert errors(path) == [f"{path}: cannot be read: No such file or directory"]


@pytest.mark.parametrize(
    ("dotted", "value", "field"),
    [
        ("quizzes.0.slug", f"{SLUG}\n", 'field "slug"'),
        ("quizzes.0.questions.0.id", "the-trade\n", 'field "id"'),
        ("quizzes.0.questions.0.choices.0.id", "a\n", 'field "choices[0].id"'),
        (
            "quizzes.0.questions.0.references.0.url",
            "https://arxiv.org/\n",
            'field "references[0].url"',
        ),
    ],
)
def test_trailing_newline_in_id_or_url_is_refused(tmp_path, dotted, value, field):
    """A slug, id or url ending in a stray newline is refused like any other bad character."""
    path = write(tmp_path, bank((dotted, value)))
    assert [field in error for error in errors(path)] == [True]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param(
            json.dumps(bank(("quizzes.0.questions.0.prompt", "\ud800"))),
            f'{Q1}, field "prompt": contains half a surrogate pair (\\ud800 to \\udfff)',
            id="lone-surrogate",
        ),
        pytest.param(
            json.dumps(REAL).replace('"shuffle_choices": true', '"shuffle_choices": ' + "9" * 5000),
            "not usable JSON: Exceeds the limit (4300 digits) for integer string conversion: "
            "value has 5000 digits; use sys.set_int_max_str_digits() to increase the limit",
            id="huge-number",
        ),
        pytest.param("[" * 100_000, "nested too deeply to be a question bank", id="deep-nesting"),
    ],
)
def test_odd_file_is_reported_not_crashed_on(tmp_path, text, problem):
    """A file JSON can parse but the bank cannot use gets a BankError naming it, not a traceback."""
    path = tmp_path / "questions.json"
    path.write_text(text, encoding="utf-8")
    assert errors(path) == [f"{path}: {problem}"]


def test_control_characters_are_refused_where_they_are(tmp_path):
    """NUL, BEL or ESC from a damaged file are each reported at their field; tabs and line
    breaks (CR LF too), which lay text out, are not."""
    edited = bank(
        ("quizzes.0.questions.0.prompt", "What is x\x00y?\tReally\nnow?"),
        ("quizzes.0.questions.0.choices.0.explanation", "Right \x07because\x1b."),
        ("quizzes.0.questions.1.prompt", "Laid out\twith a tab\r\nand a Windows newline"),
    )
    path = write(tmp_path, edited)
    assert errors(path) == [
        f'{path}: {Q1}, field "prompt": contains the control character U+0000, which no page '
        "shows: remove it",
        f'{path}: {Q1}, field "choices[0].explanation": contains the control characters '
        "U+0007, U+001B, which no page shows: remove it",
    ]


def test_real_bank_loads_with_its_answer_key():
    """The shipped bank is the one quiz, eight questions, answers a b c d a b c d."""
    quizzes = load_bank(REAL_PATH).quizzes
    assert list(quizzes) == [SLUG]
    quiz = quizzes[SLUG]
    assert quiz.title == "Gradient Checkpointing Quiz"
    key = ["abcd"[q.choices.index(right_choice(q))] for q in quiz.questions]
    assert key == list("abcdabcd")
    for question in quiz.questions:
        assert all(choice.explanation.strip() for choice in question.choices), question.id
        assert any(ref.url.startswith("https://") for ref in question.references), question.id


def seed_questions() -> list[tuple[str, list[str]]]:
    """(prompt, options) in the order of the seed file the quiz was written from."""
    questions = []
    for number, line in enumerate(SEED_PATH.read_text(encoding="utf-8").splitlines()):
        if prompt := re.fullmatch(r"(\d+)\. (.+)", line):
            assert int(prompt[1]) == len(questions) + 1, f"seed line {number + 1}"
            questions.append((prompt[2], []))
        elif option := re.fullmatch(r"   • (.+)", line):
            questions[-1][1].append(option[1])
    return questions


def test_real_bank_matches_the_seed_word_for_word():
    """Prompts and options read exactly as in the seed file, options in seed order."""
    quiz = load_bank(REAL_PATH).quizzes[SLUG]
    seed = seed_questions()
    assert len(seed) == 8
    assert [(q.prompt, [c.text for c in q.choices]) for q in quiz.questions] == seed


def test_the_seed_quiz_explains_every_choice_and_cites_every_question():
    """What makes a Quizwright quiz: however lax publishing becomes for a lecturer's gaps, the
    first quiz keeps an explanation for every choice and question, and a source for each."""
    quiz = load_bank(REAL_PATH).quizzes[SLUG]
    for question in quiz.questions:
        assert len(question.explanation.split()) >= 10 and question.references, question.id
        for choice in question.choices:
            assert len(choice.explanation.split()) >= 5, (question.id, choice.id)


# Every source the explanations may cite, by the name the text uses for it, at an address
# checked by hand (the facts sheet in shared/guides lists them). A typo such as the FSDP2
# tutorial's "FSDP2_tutorial.html", which does not exist, matches none of them.
SOURCES = {
    "Chen": r"https://arxiv\.org/abs/1604\.06174",
    "ZeRO": r"https://arxiv\.org/abs/1910\.02054",
    "Korthikanti": r"https://arxiv\.org/abs/2205\.05198",
    "FlashAttention": r"https://arxiv\.org/abs/2205\.14135",
    "Revolve": r"https://doi\.org/10\.1145/347837\.347846",
    "Hugging Face": r"https://huggingface\.co/docs/transformers/"
    r"(grad_checkpointing|model_memory_anatomy)",
    "PyTorch": r"https://(docs\.pytorch\.org/docs/stable/(checkpoint|notes/autograd)\.html"
    r"|docs\.pytorch\.org/tutorials/intermediate/FSDP_tutorial\.html"
    r"|pytorch\.org/blog/activation-checkpointing-techniques/)",
}


def test_every_reference_is_a_known_good_address():
    """No network in tests: each url must be one of the addresses checked by hand."""
    quiz = load_bank(REAL_PATH).quizzes[SLUG]
    for question in quiz.questions:
        for reference in question.references:
            assert any(re.fullmatch(url, reference.url) for url in SOURCES.values()), (
                question.id,
                reference.url,
            )


def test_every_source_a_question_names_is_in_its_references():
    """A figure from ZeRO or Hugging Face in an explanation comes with that source, linked."""
    quiz = load_bank(REAL_PATH).quizzes[SLUG]
    for question in quiz.questions:
        words = " ".join([question.explanation] + [c.explanation for c in question.choices])
        for name, url in SOURCES.items():
            if re.search(rf"\b{name}\b", words):
                linked = [r.url for r in question.references if re.fullmatch(url, r.url)]
                assert linked, f"{question.id} names {name} without citing it"


def version(tmp_path, data, **dump) -> str:
    return load_bank(write(tmp_path, data, **dump)).quizzes[SLUG].version


def reverse_keys(node):
    if isinstance(node, dict):
        return {key: reverse_keys(node[key]) for key in reversed(node)}
    return [reverse_keys(item) for item in node] if isinstance(node, list) else node


@pytest.mark.parametrize(
    ("data", "dump"),
    [
        pytest.param(REAL, {"indent": None, "separators": (",", ":")}, id="compact"),
        pytest.param(REAL, {"indent": "\t", "ensure_ascii": False}, id="tabs-and-utf8"),
        pytest.param(reverse_keys(REAL), {}, id="key-order"),
    ],
)
def test_version_ignores_formatting(tmp_path, data, dump):
    """Reformatting the file does not make a new quiz version."""
    assert version(tmp_path, data, **dump) == load_bank(REAL_PATH).quizzes[SLUG].version


@pytest.mark.parametrize(
    "dotted",
    [
        "quizzes.0.title",
        "quizzes.0.description",
        "quizzes.0.questions.3.id",
        "quizzes.0.questions.3.prompt",
        "quizzes.0.questions.3.explanation",
        "quizzes.0.questions.3.choices.2.text",
        "quizzes.0.questions.3.choices.2.explanation",
        "quizzes.0.questions.3.references.0.title",
        "quizzes.0.questions.3.references.0.url",
    ],
)
def test_version_changes_with_any_text(tmp_path, dotted):
    """Editing any text of a quiz, even one character, makes a new version."""
    edited = version(tmp_path, bank((dotted, walk(REAL, keys(dotted)) + "-x")))
    assert edited != load_bank(REAL_PATH).quizzes[SLUG].version


def test_a_new_database_refuses_a_bad_bank(tmp_path):
    """With nothing published yet, a broken bank fails its first use, saying where, and puts
    nothing in the database."""
    bad = write(tmp_path, bank(("quizzes.0.questions.0.choices.1.correct", "yes")))
    app = make_app(tmp_path, QUESTIONS_PATH=str(bad))
    with app.app_context(), pytest.raises(BankError) as caught:
        current_bank()
    assert caught.value.errors == [
        f'{bad}: {Q1}, field "choices[1].correct": expected true or false, got a string'
    ]
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(QuizVersion.id))) == 0
        assert db.session.scalar(db.select(db.func.count(Release.id))) == 0


def title_served(app) -> str:
    with app.app_context():
        return current_bank().quizzes[SLUG].title


def test_a_restarted_worker_serves_the_release_not_the_file(tmp_path):
    """A worker started after the file was edited in place serves what the others serve."""
    path = write(tmp_path, REAL)
    first = make_app(tmp_path, QUESTIONS_PATH=str(path))
    assert title_served(first) == REAL["quizzes"][0]["title"]
    write(tmp_path, bank(("quizzes.0.title", "Edited in place")))
    restarted = make_app(tmp_path, QUESTIONS_PATH=str(path))
    assert title_served(restarted) == title_served(first) == REAL["quizzes"][0]["title"]


def test_a_bad_bank_on_disk_never_stops_a_worker(tmp_path):
    """A worker starting beside a broken file starts, and serves the last good release."""
    path = write(tmp_path, REAL)
    title_served(make_app(tmp_path, QUESTIONS_PATH=str(path)))
    path.write_text('{"quizzes": [', encoding="utf-8")
    restarted = make_app(tmp_path, QUESTIONS_PATH=str(path))
    assert title_served(restarted) == REAL["quizzes"][0]["title"]
    page = restarted.test_client().get("/")
    assert page.status_code == 200 and REAL["quizzes"][0]["title"] in page.get_data(as_text=True)


@pytest.mark.postgres
def test_workers_starting_at_once_on_a_new_database_all_serve_the_file(tmp_path):
    """Workers whose first requests come at once each find no release and publish the file:
    one release results, and none of them fails (on PostgreSQL they deadlocked one time in two,
    so the workers start on five new databases in turn)."""
    path = write(tmp_path, REAL)
    workers = [make_app(tmp_path, QUESTIONS_PATH=str(path)) for _ in range(12)]

    def first_request(worker) -> None:
        with worker.app_context():
            barrier.wait()
            try:
                served.append(current_bank().quizzes[SLUG].title)
            except Exception as error:  # a failed start fails the test below, with its cause
                errors.append(error)

    for _ in range(5):
        with workers[0].app_context():
            empty_rows(db.engine)
        for worker in workers:  # each a worker just started
            worker.extensions["quizwright.served"] = ServedBank(path, check_seconds=3600)
        barrier, served, errors = threading.Barrier(len(workers)), [], []
        threads = [threading.Thread(target=first_request, args=(w,)) for w in workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == [] and served == [REAL["quizzes"][0]["title"]] * len(workers)
        with workers[0].app_context():
            assert db.session.scalar(db.select(db.func.count(Release.id))) == 1


def test_a_reload_reaches_every_worker(tmp_path):
    """After `flask quiz reload`, every running worker serves the new bank, and only then."""
    path = write(tmp_path, REAL)
    workers = [make_app(tmp_path, QUESTIONS_PATH=str(path), BANK_CHECK_SECONDS=0) for _ in range(3)]
    old = REAL["quizzes"][0]["title"]
    assert [title_served(worker) for worker in workers] == [old] * 3
    write(tmp_path, bank(("quizzes.0.title", "Reloaded")))
    assert [title_served(worker) for worker in workers] == [old] * 3
    result = workers[0].test_cli_runner().invoke(args=["quiz", "reload"])
    assert result.exit_code == 0, result.output
    pages = [
        worker.test_client().get(f"/quizzes/{SLUG}").get_data(as_text=True) for worker in workers
    ]
    assert all("Reloaded" in page for page in pages)


def test_workers_look_for_a_new_release_at_most_every_few_seconds(tmp_path, monkeypatch):
    """Between checks a worker reads nothing from the database for the bank; after the
    interval, one query finds that nothing changed."""
    app = make_app(tmp_path, BANK_CHECK_SECONDS=2)
    clock = [1000.0]
    monkeypatch.setattr("app.releases.time.monotonic", lambda: clock[0])
    title_served(app)
    client = app.test_client()
    with queries(app) as soon:
        client.get("/")
    clock[0] += 2
    with queries(app) as later:
        client.get("/")
    assert len(soon) == 0 and len(later) == 1 and "max" in later[0].lower()


def titles(base: str, requests: int = 12) -> set[str]:
    """The quiz titles the home page shows over several requests, which the workers share;
    "none" when a page shows neither."""
    found = set()
    for _ in range(requests):
        page = urllib.request.urlopen(f"{base}/", timeout=30).read().decode()
        shown = [title for title in (REAL["quizzes"][0]["title"], "Edited") if title in page]
        found.add(shown[0] if len(shown) == 1 else "none")
    return found


def replace_workers(master: int, count: int) -> None:
    """SIGKILL `count` of gunicorn's workers and wait until the master has replaced them."""
    children = Path(f"/proc/{master}/task/{master}/children")
    running = {int(pid) for pid in children.read_text().split()}
    for pid in sorted(running)[:count]:
        os.kill(pid, signal.SIGKILL)
    for _ in range(300):
        now = {int(pid) for pid in children.read_text().split()}
        if len(now) == len(running) and now != running and len(now - running) >= count:
            return
        time.sleep(0.1)
    raise AssertionError("gunicorn did not replace its killed workers")


@pytest.mark.load
def test_a_running_server_changes_its_bank_only_when_reloaded(tmp_path):
    """gunicorn with four workers: an edit in place and a broken file change nothing, even for
    workers started after them; a bad reload is refused saying where; a good one reaches every
    worker."""
    path = write(tmp_path, REAL)
    app = make_app(tmp_path, QUESTIONS_PATH=str(path))
    old = title_served(app)
    with app.app_context():
        db.engine.dispose()
    settings = {"QUESTIONS_PATH": str(path)}
    env = {**os.environ, "SECRET_KEY": "x", "DATABASE_URL": server_database(tmp_path), **settings}
    reload = functools.partial(
        subprocess.run,
        [Path(sys.executable).with_name("flask"), "--app", "wsgi", "quiz", "reload"],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
    )  # fmt: skip
    with gunicorn(tmp_path, workers=4, **settings) as server:
        assert titles(server.url) == {old}
        write(tmp_path, bank(("quizzes.0.title", "Edited")))
        replace_workers(server.pid, 4)  # as a crash, an OOM kill or a timeout would
        assert titles(server.url) == {old}

        path.write_text('{"quizzes": [', encoding="utf-8")
        replace_workers(server.pid, 4)
        assert titles(server.url) == {old}
        refused = reload()
        assert refused.returncode == 1
        assert refused.stderr == (
            f"{path}: not valid JSON: Expecting value (line 1, column 14)\n"
            "Refused: the published bank is still the one served.\n"
        )
        assert titles(server.url) == {old}

        write(tmp_path, bank(("quizzes.0.title", "Edited")))
        published = reload()
        assert published.returncode == 0, published.stderr
        assert "as release 2: every worker serves it within 2 seconds" in published.stdout
        # Each worker looks for a new release every 2 seconds: wait until a sample large enough
        # to reach all four says so (a small one could miss the last worker, then fail below).
        for _ in range(100):
            if titles(server.url, requests=24) == {"Edited"}:
                break
            time.sleep(0.1)
        assert titles(server.url, requests=24) == {"Edited"}


def test_a_bank_check_in_progress_holds_up_no_other_request(tmp_path):
    """A request that finds another checking for a new release serves the bank it has: under
    load the checker waited for a database connection that the waiting requests held."""
    app = make_app(tmp_path, BANK_CHECK_SECONDS=0)
    offer = app.extensions["quizwright.served"]
    served = title_served(app)
    pages = []
    with offer._lock:  # another request is checking
        waiter = threading.Thread(target=lambda: pages.append(app.test_client().get("/")))
        waiter.start()
        waiter.join(timeout=20)
        assert not waiter.is_alive(), "the request waited for the other's check"
    assert pages[0].status_code == 200 and served in pages[0].text


def test_select_all_shares_that_contradict_the_key_or_miss_full_marks_are_refused(tmp_path):
    """A right choice with a share of nothing, a wrong one that earns, right shares that do not
    make 100%: each named at its field; a share left out takes what the others leave."""
    bank = copy.deepcopy(REAL)
    question = bank["quizzes"][0]["questions"][0]
    question["type"] = "multiple_answers"
    for choice, fraction in zip(question["choices"], (-0.2, 0.3, None, None), strict=False):
        if fraction is not None:
            choice["fraction"] = fraction
    where = f'quiz "{SLUG}", question "{question["id"]}", field "choices'
    right = [n for n, c in enumerate(question["choices"]) if c["correct"]]
    assert right == [0] and problems(bank) == [
        f'{where}[0].fraction": a right choice earns more than 0',
        f'{where}[1].fraction": a wrong choice earns 0 or less',
    ]
    question["choices"][0]["fraction"], question["choices"][1]["fraction"] = 0.6, -1
    assert problems(bank) == [
        f"{where}\": the right choices' shares make 60%, not 100%: full marks must be possible"
    ]
