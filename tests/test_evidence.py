"""Measured evidence in the feedback: the data file validates, the panels show its numbers."""

import json
import re
import shutil

import pytest
from click.testing import CliRunner

from app.bank import current_bank, load_bank
from app.cli import quiz_cli
from app.evidence import FOLDER, EvidenceError, evidence_for, load_evidence

from helpers import SLUG, Student, make_app, text

MEASURED = {
    "the-trade",
    "sqrt-n-schedule",
    "runtime-overhead",
    "backward-recomputation",
    "selective-checkpointing",
}


@pytest.fixture
def data():
    """The committed measurements, as the script wrote them."""
    return json.loads((FOLDER / "checkpointing.json").read_text())


def feedback(app, quiz, question_id):
    """The feedback page of one question, answered right."""
    student = Student(app.test_client())
    student.start()
    number, question = next((n, q) for n, q in enumerate(quiz.questions, 1) if q.id == question_id)
    student.answer(number, question.right_choice.id)
    return student.client.get(student.question_url(number))


def test_the_committed_measurements_validate_and_cover_every_strategy(data):
    """evidence/checkpointing.json passes its schema, with every strategy at every length."""
    evidence = load_evidence("checkpointing")
    assert evidence.depths == [4, 8, 16, 32, 64]
    assert len(evidence.runs) == 5 * 4 == len(data["runs"])
    assert evidence.torch.startswith("2.13.0") and evidence.gradients_match


def test_the_questions_the_numbers_speak_to_show_them(app, quiz):
    """The trade-off, √N, backward, overhead and selective questions name the measurement."""
    assert {q.id for q in quiz.questions if q.evidence == "checkpointing"} == MEASURED


def test_feedback_shows_the_files_numbers(app, quiz, data):
    """Bytes kept, times fewer, extra forward passes and times come from the data file."""
    page = text(feedback(app, quiz, "sqrt-n-schedule"))
    deepest = [run for run in data["runs"] if run["blocks"] == 64]
    plain = next(run for run in deepest if run["strategy"] == "none")
    for run in deepest:
        assert f"{run['held_bytes'] / 1e6:.1f} MB" in page
        assert f"{run['time_ratio']:.2f}×" in page
        if run is not plain:
            assert f"{plain['held_bytes'] / run['held_bytes']:.1f}× fewer" in page
        extra = (run["flops"] - plain["flops"]) / run["forward_flops"]
        if extra > 0.005:
            assert f"{extra:.2f} forward passes" in page
    assert f"PyTorch {data['torch']}" in page and data["measured_on"] in page


def test_the_chart_is_drawn_from_the_file_and_described_in_words(app, quiz, data):
    """An inline SVG with a title and a text alternative listing every plotted value."""
    page = feedback(app, quiz, "the-trade").get_data(as_text=True)
    chart = re.search(r'<svg class="chart".*?</svg>', page, re.S).group()
    assert 'role="img"' in chart and "<title" in chart
    plain = [run for run in data["runs"] if run["strategy"] == "none"]
    for run in plain:
        assert f"{run['blocks']} blocks {run['held_bytes'] / 1e6:.1f} MB" in chart
    # The no-checkpointing line ends where the axis says its bytes are: y = 0 is the top tick.
    top_tick = max(float(t) for t in re.findall(r'text-anchor="end">([\d.]+)<', chart))
    points = re.search(r'class="line line-1" points="([^"]+)"', chart).group(1).split()
    last = float(points[-1].split(",")[1])
    assert len(points) == len(plain)
    assert last == pytest.approx(180 * (1 - plain[-1]["held_bytes"] / 1e6 / top_tick), abs=0.1)


def test_other_questions_show_no_panel(app, quiz):
    """Only questions whose explanation the numbers speak to get the panel."""
    assert "What we measured" not in text(feedback(app, quiz, "pytorch-utility"))


def test_reviews_link_to_the_measurements_instead_of_repeating_them(app, quiz, client):
    """Feedback shows the panel; a results page of eight reviews links to it five times."""
    assert '<details class="measured" open>' in text(feedback(app, quiz, "the-trade"))
    student = Student(app.test_client())
    student.start()
    for number, question in enumerate(quiz.questions, 1):
        student.answer(number, question.right_choice.id)
    results = text(student.client.get(student.results_url))
    assert 'class="measured"' not in results
    # Each link carries the way back to its own review.
    back = re.findall(
        r'<a href="/evidence/checkpointing\?back=([^"]+)">What we measured</a>', results
    )
    assert len(back) == len(MEASURED)
    assert all(link.startswith(f"/attempts/{student.token}/results%23review-") for link in back)
    assert '<details class="measured" open>' in text(client.get("/evidence/checkpointing"))


def test_the_panel_is_folded_where_it_repeats(app, quiz):
    """The first question with the measurement opens it; the four after it start folded."""
    first, *later = [q.id for q in quiz.questions if q.id in MEASURED]
    assert '<details class="measured" open>' in text(feedback(app, quiz, first))
    for question_id in later:
        page = text(feedback(app, quiz, question_id))
        assert '<details class="measured">' in page and 'measured" open' not in page


def test_the_evidence_page_leads_back_and_keeps_developer_notes_apart(client):
    """Opened from a review it links back there; `make evidence` lives under its own heading."""
    review = "/attempts/abc/results#review-3"
    page = text(client.get("/evidence/checkpointing", query_string={"back": review}))
    assert page.count(f'<a href="{review}">Back to the review</a>') == 2
    panel = page[page.index('<details class="measured"') : page.index("</details>")]
    assert "make evidence" not in panel
    assert "How this was measured" in page and "make evidence" in page
    for elsewhere in ("https://evil.example/", "//evil.example", "/\\evil.example"):
        page = text(client.get("/evidence/checkpointing", query_string={"back": elsewhere}))
        assert "Back to the review" not in page and "evil.example" not in page


def test_the_script_and_its_numbers_can_be_read(client):
    """A student can read what measured the numbers, and the numbers themselves."""
    script = client.get("/evidence/checkpointing/script")
    assert script.mimetype == "text/plain" and "saved_tensors_hooks" in script.text
    assert client.get("/evidence/checkpointing/data").json["runs"]
    for path in ("/evidence/nothing", "/evidence/nothing/script", "/evidence/..%2Fwsgi/data"):
        assert client.get(path).status_code == 404


def broken(tmp_path, change) -> str:
    """The committed file with one change, in a folder of its own."""
    folder = tmp_path / "evidence"
    folder.mkdir()
    data = json.loads((FOLDER / "checkpointing.json").read_text())
    change(data)
    (folder / "checkpointing.json").write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda d: d["runs"][3].update(held_bytes="many"),
            "runs[3].held_bytes: 'many' is not of type",
        ),
        (lambda d: d.pop("torch"), "'torch' is a required property"),
        (lambda d: d["runs"].pop(), 'runs: 64 blocks has "selective" 0 times, not once'),
        (
            lambda d: d["runs"][0].update(strategy="magic"),
            "runs[0].strategy: 'magic' is not one of",
        ),
    ],
)
def test_a_broken_file_stops_the_app_saying_where(tmp_path, monkeypatch, change, message):
    """Like a bad question bank, bad measurements refuse to start, naming the spot."""
    monkeypatch.setattr("app.evidence.FOLDER", broken(tmp_path, change))
    with pytest.raises(EvidenceError) as error:
        make_app(tmp_path)
    assert any(
        message in problem and "checkpointing.json" in problem for problem in error.value.errors
    )


def test_a_single_chain_length_still_shows(tmp_path, monkeypatch, quiz, data):
    """Measured at one length only: the panel leaves out the growth and still shows the rest."""

    def only_the_longest(document):
        document["runs"] = [run for run in document["runs"] if run["blocks"] == 64]

    monkeypatch.setattr("app.evidence.FOLDER", broken(tmp_path, only_the_longest))
    page = text(feedback(make_app(tmp_path), quiz, "the-trade"))
    plain = next(r for r in data["runs"] if r["blocks"] == 64 and r["strategy"] == "none")
    assert "What we measured" in page and "grew" not in page
    assert f"{plain['held_bytes'] / 1e6:.1f} MB" in page


def test_unreadable_or_missing_files_are_named(tmp_path):
    """Not JSON, or not there: the message says which file."""
    (tmp_path / "garbled.json").write_bytes(b"\xff{")
    with pytest.raises(EvidenceError, match="garbled.json: not valid JSON"):
        load_evidence("garbled", tmp_path)
    bank = load_bank(FOLDER.parent / "questions.json")
    with pytest.raises(EvidenceError, match="checkpointing.json: cannot be read"):
        evidence_for(bank, tmp_path)


def test_a_bank_without_measurements_needs_no_evidence_folder(tmp_path, monkeypatch):
    """A self-hoster's own quiz that names no measurement starts without the folder."""
    bank = json.loads((FOLDER.parent / "questions.json").read_text())
    for question in bank["quizzes"][0]["questions"]:
        question.pop("evidence", None)
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(bank))
    shutil.rmtree(tmp_path / "missing", ignore_errors=True)
    monkeypatch.setattr("app.evidence.FOLDER", tmp_path / "missing")
    app = make_app(tmp_path, QUESTIONS_PATH=str(path))
    assert app.extensions["quizwright.evidence"] == {}
    with app.app_context():
        assert current_bank().quizzes[SLUG]


def test_quiz_check_names_broken_measurements(tmp_path, monkeypatch):
    """`flask quiz check` finds them before a deploy does, and exits 1."""
    monkeypatch.setattr("app.evidence.FOLDER", broken(tmp_path, lambda d: d.pop("runs")))
    result = CliRunner().invoke(quiz_cli, ["check", str(FOLDER.parent / "questions.json")])
    assert result.exit_code == 1
    assert "checkpointing.json: 'runs' is a required property" in result.output
