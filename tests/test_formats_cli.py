"""`flask quiz import`, `export` and `new`, as an author at a terminal runs them."""

import json
import re
import shutil

import pytest
from click.testing import CliRunner

from app import formats
from app.bank import PLACEHOLDER, UNFILLED, BankError, load_bank
from app.cli import quiz_cli
from app.config import PROJECT_ROOT
from app.extensions import db
from app.question_types import right_choice
from app.served import current_bank

from helpers import SLUG, make_app
from test_formats import FIXTURES, SEED, canvas_package, comparable

pytestmark = pytest.mark.any_database

REAL_PATH = PROJECT_ROOT / "questions.json"


def quiz_command(*args):
    """Run `flask quiz ARGS` without an app, as `quiz check` runs."""
    return CliRunner().invoke(quiz_cli, [str(arg) for arg in args])


@pytest.fixture
def bank(tmp_path):
    """A copy of the real bank to import into."""
    path = tmp_path / "questions.json"
    shutil.copy(REAL_PATH, path)
    return path


def test_import_with_gaps_writes_placeholders_that_check_and_reload_refuse(bank, tmp_path):
    """The GIFT fixture imports its 12 questions (7 single choice, 2 true/false, 1 select-all,
    1 short answer, 1 numerical), lists the 4 it skipped and the gaps with their lines; the
    bank is written, then refused until filled."""
    result = quiz_command(
        "import", FIXTURES / "features.gift", "--into", bank, "--slug", "cells", "--allow-gaps"
    )
    assert result.exit_code == 0, result.output
    source = FIXTURES / "features.gift"
    assert result.stdout == (
        f'Imported 12 questions from {source} into {bank} as quiz "cells"; 4 questions skipped.\n'
    )
    errors = result.stderr.splitlines()
    assert errors[0] == f"{source}:44: skipped, an essay question"
    assert f"{source}:52: skipped, a description with no answers" in errors
    assert "quiz: no description (--description): a placeholder to write" in errors
    assert (
        f'{source}:13: question "escapes" lacks a source (an https:// link in the general '
        "feedback): a placeholder to write"
    ) in errors
    assert errors[-1].startswith(f"{bank}: `flask quiz check` lists ")
    data = json.loads(bank.read_text(encoding="utf-8"))
    assert [quiz["slug"] for quiz in data["quizzes"]] == [SLUG, "cells"]
    cells = data["quizzes"][1]
    assert cells["title"] == "Cells and Energy"
    assert cells["description"].startswith(PLACEHOLDER)
    assert [q["id"] for q in cells["questions"]] == [
        "mitochondria", "escapes", "multi-line", "html", "markdown", "unicode", "q7", "sun",
        "short", "numeric", "partial", "moon",
    ]  # fmt: skip
    assert [q.get("type") for q in cells["questions"][7:]] == [
        "true_false", "short_answer", "numerical", "multiple_answers", "true_false",
    ]  # fmt: skip

    check = quiz_command("check", bank)
    assert check.exit_code == 1
    assert f'{bank}: quiz "cells", field "description": {UNFILLED}' in check.stderr.splitlines()
    assert (
        f'{bank}: quiz "cells", question "escapes", field "references[0].url": {UNFILLED}'
        in check.stderr.splitlines()
    )

    app = make_app(tmp_path, QUESTIONS_PATH=str(bank))
    try:
        with app.app_context(), pytest.raises(BankError):
            current_bank()  # a first start refuses to publish it
        refused = app.test_cli_runner().invoke(args=["quiz", "reload"])
        assert refused.exit_code == 1
        assert UNFILLED in refused.stderr
    finally:
        with app.app_context():
            db.engine.dispose()


def test_filling_the_placeholders_makes_the_bank_pass(bank):
    """Once an author writes every placeholder, `quiz check` passes."""
    quiz_command("import", FIXTURES / "features.aiken", "--into", bank, "--allow-gaps")
    text = bank.read_text(encoding="utf-8")
    text = text.replace("https://to-write.invalid/", "https://example.org/source")
    text = text.replace(f"{PLACEHOLDER} ", "Written: ")
    bank.write_text(text, encoding="utf-8")
    result = quiz_command("check", bank)
    assert result.exit_code == 0, result.output
    assert load_bank(bank).quizzes["features"].questions[0].explanation == (
        "Written: the explanation shown after any answer."
    )


def test_import_without_allow_gaps_lists_the_gaps_and_writes_nothing(bank):
    """Every question it would skip, then every gap, each located: the whole report, so the
    author fixes the file once."""
    before = bank.read_bytes()
    result = quiz_command("import", FIXTURES / "features.xml", "--into", bank, "--description", "x")
    assert result.exit_code == 1
    source = FIXTURES / "features.xml"
    assert result.stderr.splitlines() == [
        f"{source}: /quiz/question[5]: skipped, partial credit (33.3333%) on answer 2",
        f"{source}: /quiz/question[9]: skipped, of type essay, not multiple choice, true/false, "
        "numerical or short answer",
        f"{source}: /quiz/question[10]: skipped, of type description, not multiple choice, "
        "true/false, numerical or short answer",
        f'{source}: /quiz/question[6]: the picture "cell.png" is left out; its words "a cell" '
        "stand in its place. This file is not a picture: upload a PNG, JPEG, GIF or WebP.",
        f'{source}: /quiz/question[2]: question "mitochondria" lacks feedback on choice 3',
        f'{source}: /quiz/question[3]: question "unicode-plain-text" lacks a source (an https:// '
        "link in the general feedback)",
        f'{source}: /quiz/question[4]: question "several-answers-allowed" lacks feedback on '
        "choices 1, 2, 3; general feedback (the explanation); a source (an https:// link in the "
        "general feedback)",
        f'{source}: /quiz/question[6]: question "with-an-image" lacks feedback on choices 1, 2; '
        "general feedback (the explanation); a source (an https:// link in the general feedback)",
        f'{source}: /quiz/question[8]: question "powerhouse" lacks general feedback (the '
        "explanation); a source (an https:// link in the general feedback)",
        f"{source}: the bank needs these; write them in the source, or import with --allow-gaps "
        "to fill placeholders that `quiz check` refuses until written",
        "Nothing was written.",
    ]
    assert bank.read_bytes() == before


@pytest.mark.parametrize(
    ("format_name", "name"),
    [("gift", "gc.gift"), ("moodle-xml", "gc.xml"), ("qti", "gc.zip"), ("qti3", "gc3.zip")],
)
def test_export_then_import_gives_back_the_seed_quiz(tmp_path, format_name, name):
    """`quiz export` writes a file that `quiz import` (guessing its format) turns back into the
    same questions, choices, key, explanations and sources, in a bank that passes the check."""
    exported = tmp_path / name
    result = quiz_command("export", SLUG, "--format", format_name, exported, "--bank", REAL_PATH)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1] == f"Wrote {SLUG} as {format_name} to {exported}."
    new_bank = tmp_path / "new.json"
    imported = quiz_command(
        "import", exported, "--into", new_bank, "--slug", "copy", "--description", SEED.description
    )
    assert imported.exit_code == 0, imported.output
    assert imported.stdout.splitlines()[-1] == f"{new_bank}: OK, 1 quiz, 8 questions. `make " \
        "reload` publishes it."  # fmt: skip
    back = load_bank(new_bank).quizzes["copy"]
    ids = format_name in ("qti", "qti3")
    assert comparable(back, ids=ids) == comparable(SEED, ids=ids)


@pytest.mark.parametrize("format_name", ["gift", "moodle-xml", "qti", "qti3"])
def test_an_export_comes_back_under_its_own_slug_with_its_evidence(bank, tmp_path, format_name):
    """Without --slug the import takes the slug the export carried, so a round trip into the
    bank it came from is refused rather than adding a second quiz; elsewhere it comes back as
    it was, evidence links included; --slug still chooses another."""
    exported = tmp_path / f"gc.{format_name}"
    written = quiz_command("export", SLUG, "--format", format_name, exported, "--bank", bank)
    assert written.exit_code == 0, written.output
    before = bank.read_bytes()
    again = quiz_command("import", exported, "--into", bank, "--description", SEED.description)
    assert again.exit_code == 1
    assert again.stderr.splitlines()[0] == (
        f'{bank}: a quiz "{SLUG}" exists already; choose another --slug'
    )
    assert bank.read_bytes() == before
    elsewhere = tmp_path / "elsewhere.json"
    result = quiz_command(
        "import", exported, "--into", elsewhere, "--description", SEED.description
    )
    assert result.exit_code == 0, result.output
    back = load_bank(elsewhere).quizzes[SLUG]
    assert [q.evidence for q in back.questions] == [q.evidence for q in SEED.questions]
    renamed = quiz_command("import", exported, "--into", bank, "--slug", "gc-copy",
                           "--description", SEED.description)  # fmt: skip
    assert renamed.exit_code == 0, renamed.output
    assert set(load_bank(bank).quizzes) == {SLUG, "gc-copy"}


def test_an_evidence_link_this_install_cannot_show_is_left_out_aloud(tmp_path):
    """A measurement the export named but this install lacks would fail the check: the import
    leaves the link out and says so for each question, instead of refusing the quiz."""
    exported = tmp_path / "gc.gift"
    exported.write_bytes(formats.export_quiz(SEED, "gift"))
    imported, bank = formats.import_quiz(
        exported, tmp_path / "new.json", description=SEED.description,
        evidence_folder=tmp_path / "evidence",
    )  # fmt: skip
    linked = [q.id for q in SEED.questions if q.evidence]
    assert imported.unmeasured == [
        f'question "{qid}": left out its evidence link "checkpointing", since '
        "evidence/checkpointing.json is not here"
        for qid in linked
    ]
    assert not any("evidence" in q for q in bank["quizzes"][0]["questions"])


def test_export_says_what_a_format_drops(tmp_path):
    out = tmp_path / "gc.txt"
    result = quiz_command("export", SLUG, "--format", "aiken", out, "--bank", REAL_PATH)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        "aiken has no room for every choice's explanation, each question's explanation and "
        "sources, the quiz's title and description, line breaks in question text, evidence links, "
        f"the quiz's slug: they are not in {out}."
    )
    assert out.read_text(encoding="utf-8").startswith(
        "What does gradient checkpointing primarily trade in order to save memory?\nA. "
    )


def test_export_of_an_unknown_quiz_writes_no_file(tmp_path):
    out = tmp_path / "nothing.xml"
    result = quiz_command("export", "nope", "--format", "moodle-xml", out, "--bank", REAL_PATH)
    assert result.exit_code == 1
    assert f'has no quiz "nope"; it has {SLUG}.' in result.stderr
    assert not out.exists()


def test_dry_run_prints_the_quiz_and_writes_nothing(bank, tmp_path):
    package = tmp_path / "canvas.zip"
    package.write_bytes(canvas_package())
    before = bank.read_bytes()
    result = quiz_command("import", package, "--into", bank, "--dry-run")
    assert result.exit_code == 0, result.output
    quiz = json.loads(result.stdout)
    assert quiz["slug"] == "cells-energy-canvas"
    assert [c["id"] for c in quiz["questions"][0]["choices"]] == ["6158", "2473", "9931"]
    assert result.stderr.splitlines()[-1] == (
        'Dry run: 4 questions would be quiz "cells-energy-canvas", 2 questions skipped; nothing '
        "was written."
    )
    # The bank file holds text only: the package's picture is written as its words.
    assert quiz["questions"][3]["prompt"] == "Which cell is this? (picture: a cell)"
    assert f"{package}: its picture is written as its words" in result.stderr
    assert bank.read_bytes() == before


def test_a_dry_run_reports_gaps_too_and_says_what_importing_needs(bank):
    """With gaps and no --allow-gaps a dry run still shows the quiz, its skips and its gaps,
    and says what a real import needs; a taken slug is said before anything else."""
    before = bank.read_bytes()
    source = FIXTURES / "features.xml"
    result = quiz_command("import", source, "--into", bank, "--dry-run")
    assert result.exit_code == 0, result.output
    quiz = json.loads(result.stdout)
    assert [q["id"] for q in quiz["questions"]][:2] == ["mitochondria", "unicode-plain-text"]
    lines = result.stderr.splitlines()
    assert f"{source}: /quiz/question[9]: skipped, of type essay, not multiple choice, " \
        "true/false, numerical or short answer" in lines  # fmt: skip
    assert f'{source}: /quiz/question[2]: question "mitochondria" lacks feedback on choice 3: ' \
        "a placeholder to write" in lines  # fmt: skip
    assert lines[-2:] == [
        "Importing it needs the gaps above written in the source, or --allow-gaps for "
        "placeholders to write in the bank.",
        'Dry run: 6 questions would be quiz "cells", 3 questions skipped; nothing was written.',
    ]
    taken = quiz_command("import", source, "--into", bank, "--slug", SLUG)
    assert taken.stderr.splitlines() == [
        f'{bank}: a quiz "{SLUG}" exists already; choose another --slug',
        "Nothing was written.",
    ]
    assert bank.read_bytes() == before


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--slug", SLUG], f'a quiz "{SLUG}" exists already; choose another --slug'),
        (["--slug", "Not A Slug"], 'quiz "Not A Slug", field "slug": \'Not A Slug\' is not '
         "allowed: The quiz's address: /quizzes/SLUG. Lower-case words joined by '-'."),
    ],
)  # fmt: skip
def test_import_refuses_a_result_that_would_not_pass_the_check(bank, options, message):
    before = bank.read_bytes()
    result = quiz_command(
        "import", FIXTURES / "features.aiken", "--into", bank, "--allow-gaps", *options
    )
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"{bank}: {message}", "Nothing was written."]
    assert bank.read_bytes() == before


def test_a_malformed_source_gets_a_located_error_and_nothing_is_written(bank, tmp_path):
    source = tmp_path / "broken.gift"
    source.write_text("Fine? {=a ~b}\n\n::x::Broken? {=a ~b\n", encoding="utf-8")
    before = bank.read_bytes()
    result = quiz_command("import", source, "--into", bank, "--allow-gaps")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"{source}:3: the {{ of the answers is never closed by }}",
        "Nothing was written.",
    ]
    assert bank.read_bytes() == before


def test_new_writes_a_skeleton_that_passes_the_check(bank):
    """`quiz new` adds one complete example question, so the check passes at once, and prints
    what the author does next."""
    result = quiz_command("new", "photosynthesis", "--into", bank)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f'Added quiz "photosynthesis" to {bank} with one example question, about the bank itself. '
        f"Next: write your own title, description and questions in {bank}, then "
        "`flask quiz check`.",
        f"{bank}: OK, 2 quizzes, 9 questions. `make reload` publishes it.",
    ]
    quiz = load_bank(bank).quizzes["photosynthesis"]
    assert quiz.title == "Photosynthesis" and len(quiz.questions) == 1
    assert quiz_command("check", bank).exit_code == 0
    again = quiz_command("new", "photosynthesis", "--into", bank)
    assert again.exit_code == 1
    assert again.stderr.splitlines()[0] == (
        f'{bank}: a quiz "photosynthesis" exists already; choose another slug'
    )


def served_texts(quiz):
    """Every text of a quiz that a student may read."""
    yield quiz.title
    yield quiz.description
    for question in quiz.questions:
        yield question.prompt
        yield question.explanation
        for choice in question.choices:
            yield choice.text
            yield choice.explanation
        for reference in question.references:
            yield reference.title


def test_the_skeleton_is_true_if_served_as_it_is(tmp_path):
    """The skeleton passes the check, so it may be published before it is rewritten: none of its
    texts is a note to the author, and its example is right about the bank it was written to."""
    path = tmp_path / "biology.json"
    assert quiz_command("new", "cells", "--into", path).exit_code == 0
    quiz = load_bank(path).quizzes["cells"]
    notes = re.compile(r"replace|rewrite|your own|example|TO WRITE", re.I)
    assert [text for text in served_texts(quiz) if notes.search(text)] == []
    assert right_choice(quiz.questions[0]).text == "The bank file, biology.json"
    assert all(
        "biology.json" in text
        for text in (quiz.questions[0].explanation, right_choice(quiz.questions[0]).explanation)
    )


def test_the_documented_commands_name_real_commands_and_options():
    """Every `flask quiz ...` line in README and docs/ names a command and options that exist."""
    documents = [PROJECT_ROOT / "README.md", *(PROJECT_ROOT / "docs").glob("*.md")]
    text = "\n".join(document.read_text(encoding="utf-8") for document in documents)
    used = re.findall(r"flask (?:--app wsgi )?quiz ([a-z-]+)([^\n`#]*)", text)
    assert {"import", "export", "new", "check", "reload"} <= {name for name, _ in used}
    for name, rest in used:
        command = quiz_cli.commands[name]
        known = {option for param in command.params for option in param.opts}
        assert set(re.findall(r"--[a-z-]+", rest)) <= known, (name, rest)


def test_control_characters_in_an_imported_file_are_refused_and_nothing_is_written(bank, tmp_path):
    """Attacker repro 07: a NUL and a BEL in a GIFT file reached the bank; the import now skips
    the question, naming them at its line and their fields, and writes nothing."""
    source = tmp_path / "controls.gift"
    source.write_text(
        "::Q1:: What is x\x00y? {=a#right because a\x07 ~b#wrong because b ####General.}\n",
        encoding="utf-8",
    )
    before = bank.read_bytes()
    result = quiz_command(
        "import", source, "--into", bank, "--slug", "controls", "--description", "d",
        "--allow-gaps",
    )  # fmt: skip
    assert result.exit_code == 1
    refusals = result.stderr.splitlines()
    assert refusals[-1] == "Nothing was written."
    # Skipped where the file has it, each character at its field: no question is left.
    assert refusals[:2] == [
        f"{source}: no question could be imported",
        f'{source}:1: skipped, field "prompt": contains the control character U+0000, which no '
        'page shows: remove it; field "choices[0].explanation": contains the control character '
        "U+0007, which no page shows: remove it",
    ]
    assert bank.read_bytes() == before


def test_a_title_taken_from_a_gift_category_is_said(bank, tmp_path):
    """A lecturer's last $CATEGORY is often a week, not the quiz: the import says the title
    came from there and how to choose another; --title and a Quizwright export say nothing."""
    source = tmp_path / "week3.gift"
    source.write_text(
        "$CATEGORY: $course$/top/Biology/Week 3\n\n"
        "::organelle:: Where is most ATP made? {=The mitochondrion #Right. ~The ribosome #No: "
        "proteins.####See https://en.wikipedia.org/wiki/Mitochondrion}\n"
    )
    args = ("import", source, "--into", bank, "--description", "Cells.", "--dry-run")
    said = quiz_command(*args)
    assert json.loads(said.stdout)["title"] == "Week 3"
    assert (
        f'{source}: the title "Week 3" is the last part of its last $CATEGORY line; give --title '
        "for another" in said.stderr.splitlines()
    )
    chosen = quiz_command(*args, "--title", "Cells")
    assert json.loads(chosen.stdout)["title"] == "Cells" and "$CATEGORY" not in chosen.stderr
    # A question's own note names its place, the file with it, once.
    links = " ".join(f"https://e.org/{n}" for n in range(25))
    source.write_text(source.read_text().replace("See https://en.wikipedia.org/wiki/Mitochondrion",
                                                 f"See {links}"))  # fmt: skip
    noted = quiz_command(*args).stderr.splitlines()
    assert f"{source}:3: kept the first 20 of its 25 sources, as many as a question holds" in noted
    exported = tmp_path / "gc.gift"
    quiz_command("export", SLUG, "--format", "gift", exported, "--bank", bank)
    again = quiz_command("import", exported, "--into", tmp_path / "new.json", "--dry-run")
    assert "$CATEGORY" not in again.stderr
