"""Measured evidence in the feedback: the data file validates, the panels show its numbers."""

import json
import re
import shutil

import pytest
from click.testing import CliRunner

from app.bank import load_bank
from app.cli import quiz_cli
from app.evidence import FOLDER, EvidenceError, Spread, all_evidence, evidence_for, load_evidence
from app.question_types import right_choice
from app.served import current_bank

from helpers import SLUG, Student, make_app, text

pytestmark = pytest.mark.any_database

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
    student.answer(number, right_choice(question).id)
    return student.client.get(student.question_url(number))


def test_the_committed_measurements_validate_and_cover_every_strategy(data):
    """evidence/checkpointing.json passes its schema, with every strategy at every length."""
    evidence = load_evidence("checkpointing")
    assert evidence.depths("layers") == [4, 16, 64, 256]
    assert evidence.depths("blocks") == [4, 16, 36, 64, 100, 144]
    assert len(evidence.runs) == 4 * 3 + 6 * 4 == len(data["runs"])
    assert [split.segments for split in evidence.sweep] == list(range(2, 65))
    assert evidence.torch.startswith("2.13.0") and evidence.gradients_equal


def test_the_questions_the_numbers_speak_to_show_them(app, quiz):
    """The trade-off, √N, backward, overhead and selective questions name the measurement."""
    assert {q.id for q in quiz.questions if q.evidence == "checkpointing"} == MEASURED


def runs_of(data, workload, blocks):
    return {
        r["strategy"]: r for r in data["runs"] if (r["workload"], r["blocks"]) == (workload, blocks)
    }


def test_feedback_shows_the_files_numbers(app, quiz, data):
    """Bytes kept and at peak, times less, extra forward passes and times come from the file."""
    page = text(feedback(app, quiz, "sqrt-n-schedule"))
    table = runs_of(data, "blocks", data["sweep"]["blocks"])
    plain = table["none"]
    for run in table.values():
        assert f"{run['held_bytes'] / 1e6:.1f} MB" in page
        assert f"{run['peak_bytes'] / 1e6:.1f} MB" in page
        if run is not plain:  # each time a ratio to no checkpointing's, with its spread
            assert str(Spread(tuple(run["time_ratios"]))) in page
        if run is not plain:
            assert f"({plain['peak_bytes'] / run['peak_bytes']:.1f}× less)" in page
        extra = (run["flops"] - plain["flops"]) / run["forward_flops"]
        if extra > 0.005:
            assert f"{extra:.2f} forward passes" in page
    assert f"PyTorch {data['torch']}" in page and data["measured_on"] in page


def test_the_sqrt_n_panel_shows_sqrt_n_winning_where_chen_assumes_and_says_where_not(
    app, quiz, data
):
    """Chen's layers: √N segments peak far lower than every layer, and grow like √N. Blocks:
    every block is lower until the measured crossover; the memory-optimal count is named."""
    page = text(feedback(app, quiz, "sqrt-n-schedule"))
    layers = runs_of(data, "layers", 256)
    sqrt, every = layers["sqrt(N) segments"], layers["every block"]
    assert sqrt["peak_bytes"] * 4 < every["peak_bytes"]
    assert f"{layers['none']['peak_bytes'] / sqrt['peak_bytes']:.1f}× less" in page
    assert "√N = 16 segments: 15 checkpointed segments of 16 layers, the last 16 run whole" in page
    short = runs_of(data, "layers", 16)["sqrt(N) segments"]
    assert f"{sqrt['peak_bytes'] / short['peak_bytes']:.1f}× with √N segments: √16 is 4" in page
    assert "no saving, because the input a checkpoint keeps is the output" in page

    def lower(blocks):
        found = runs_of(data, "blocks", blocks)
        return found["every block"]["peak_bytes"] < found["sqrt(N) segments"]["peak_bytes"]

    depths = sorted({r["blocks"] for r in data["runs"] if r["workload"] == "blocks"})
    every_lower = max(b for b in depths if lower(b))
    sqrt_lower = min(b for b in depths if not lower(b))
    assert (every_lower, sqrt_lower) == (64, 100)
    assert (
        f"peaked lower up to {every_lower} MLP blocks; √N segments peaked lower from {sqrt_lower}"
        in page
    )
    best = min(data["sweep"]["peaks"], key=lambda split: (split["peak_bytes"], split["segments"]))
    assert f"the least memory came with {best['segments']} segments" in page
    assert f"{best['peak_bytes'] / 1e6:.1f} MB, against" in page
    assert "√(9N) = 24" in page


def test_the_panel_says_what_the_selective_policy_keeps(app, quiz):
    """5 tensors of the input's size per block instead of 9, and nothing backward never reads."""
    page = text(feedback(app, quiz, "selective-checkpointing"))
    assert "keeps nothing that no backward formula reads" in page
    assert "That is the equivalent of 5 tensors of the input’s size per block" in page
    assert "instead of 9" in page


def test_the_charts_are_drawn_from_the_file_and_described_in_words(app, quiz, data):
    """One inline SVG per chain, each with a title and a text alternative listing every value."""
    page = feedback(app, quiz, "the-trade").get_data(as_text=True)
    charts = re.findall(r'<svg class="chart".*?</svg>', page, re.S)
    assert len(charts) == 2
    # Blocks leave out no checkpointing: its height would flatten where the other two cross.
    drawn = (("layers", "none", 1, "layers"), ("blocks", "every block", 2, "MLP blocks"))
    for (workload, strategy, number, noun), chart in zip(drawn, charts, strict=True):
        assert 'role="img"' in chart and "<title" in chart
        runs = [r for r in data["runs"] if (r["workload"], r["strategy"]) == (workload, strategy)]
        for run in runs:
            assert f"{run['blocks']} {noun} {run['peak_bytes'] / 1e6:.1f} MB" in chart
        # The line ends where the axis says its bytes are: y = 0 is the top tick.
        top_tick = max(float(t) for t in re.findall(r'text-anchor="end">([\d.]+)<', chart))
        line = re.search(rf'class="line line-{number}" points="([^"]+)"', chart)
        points = line.group(1).split()
        last = float(points[-1].split(",")[1])
        assert len(points) == len(runs)
        expected = 180 * (1 - runs[-1]["peak_bytes"] / 1e6 / top_tick)
        assert last == pytest.approx(expected, abs=0.1)
    assert "No checkpointing" in charts[0] and "No checkpointing" not in charts[1]
    # ... and says so, with the figure it left out.
    plain = runs_of(data, "blocks", 144)["none"]["peak_bytes"] / 1e6
    assert f"No checkpointing is not drawn: at 144 MLP blocks it peaked at {plain:.1f} MB" in text(
        feedback(app, quiz, "the-trade")
    )
    # 4 and 16 layers would overlap at the left of a 256-layer axis: 16 keeps its label.
    x_ticks = re.findall(r'y="198" text-anchor="middle">(\d+)<', charts[0])
    assert x_ticks == ["16", "64", "256"]


def test_gradients_that_differ_are_reported_with_the_largest_difference(
    tmp_path, monkeypatch, quiz
):
    """torch.equal failed somewhere: the panel says so and gives the largest difference."""

    def one_differs(document):
        document["runs"][5].update(gradients_equal=False, largest_difference=3e-7)

    monkeypatch.setattr("app.evidence.FOLDER", broken(tmp_path, one_differs))
    page = text(feedback(make_app(tmp_path), quiz, "the-trade"))
    assert "the largest difference from no checkpointing was 3.0e-07" in page
    assert "the table gave gradients bit for bit equal" not in page


@pytest.mark.parametrize(
    "values, shown",
    [
        ((1.21, 1.25, 1.23), "1.23× (1.21–1.25)"),
        ((1.1, 1.6, 1.3), "1.3× (1.1–1.6)"),
        ((1.0, 2.4, 1.3), "1× (1–2)"),
        ((1.2, 1.2), "1.20×"),
        ((1.201, 1.204), "1.20×"),
    ],
)
def test_a_time_shows_the_spread_of_its_rounds_and_no_more_digits(values, shown):
    """A rerun gave 1.50× where the panel said 1.62×: each time is the median of its rounds
    with their range, to the digit where the rounds start to disagree."""
    assert str(Spread(values)) == shown


def test_the_panel_says_why_selective_checkpointing_takes_time_it_saves_no_work_for(
    tmp_path, monkeypatch, quiz, data
):
    """The policy's calls are counted and the machinery timed alone, in paired rounds: the panel
    says in how many the policy's run was slower, and when the ranges overlap anyway."""
    page = text(feedback(make_app(tmp_path), quiz, "selective-checkpointing"))
    cost = data["policy_cost"]
    assert f"({cost['policy_calls']} times a step at {cost['blocks']} MLP blocks)" in page
    assert str(Spread(tuple(cost["with_policy_ratios"]))) in page

    def separated(document):
        document["policy_cost"].update(every_block_ratios=[1.1, 1.2], with_policy_ratios=[1.5, 1.6])

    def overlapping(document):
        document["policy_cost"].update(every_block_ratios=[1.1, 1.4], with_policy_ratios=[1.3, 1.6])

    def mixed(document):
        document["policy_cost"].update(every_block_ratios=[1.1, 1.4], with_policy_ratios=[1.3, 1.2])

    for change, said, unsaid in (
        (separated, "slower in 2 of 2 paired rounds.", "overlap"),
        (overlapping, "slower in 2 of 2 paired rounds, though the ranges overlap", None),
        (mixed, "slower in 1 of 2 paired rounds.", "overlap"),
    ):
        folder = tmp_path / change.__name__
        folder.mkdir()
        monkeypatch.setattr("app.evidence.FOLDER", broken(folder, change))
        page = text(feedback(make_app(folder), quiz, "selective-checkpointing"))
        assert said in page and (unsaid is None or unsaid not in page)


def test_the_panel_reports_the_dropout_run_whatever_it_found(tmp_path, monkeypatch, quiz, data):
    """Dropout exercises the random-number state the quiz describes: restored, the gradients
    match bit for bit; not restored, they differ; and a failure would be said as plainly."""
    page = text(feedback(make_app(tmp_path), quiz, "backward-recomputation"))
    drop = data["dropout"]
    assert drop["restored_equal"] and not drop["not_restored_equal"]
    assert "the gradients were bit for bit equal to no checkpointing’s" in page
    relative = f"{100 * drop['not_restored_relative_difference']:.0f}% of their norm"
    assert f"differed from no checkpointing’s by {relative}" in page
    assert f"by up to {drop['not_restored_largest_difference']:.2g} in a single element" in page

    def restore_failed(document):
        failed = {"restored_largest_difference": 2e-3, "restored_relative_difference": 1e-4}
        document["dropout"].update(restored_equal=False, **failed)

    monkeypatch.setattr("app.evidence.FOLDER", broken(tmp_path, restore_failed))
    page = text(feedback(make_app(tmp_path), quiz, "backward-recomputation"))
    assert "differed from no checkpointing’s by up to 2.0e-03" in page


def test_other_questions_show_no_panel(app, quiz):
    """Only questions whose explanation the numbers speak to get the panel."""
    assert "What we measured" not in text(feedback(app, quiz, "pytorch-utility"))


def test_reviews_link_to_the_measurements_instead_of_repeating_them(app, quiz, client):
    """Feedback shows the panel; a results page of eight reviews links to it five times."""
    assert '<details class="measured" open>' in text(feedback(app, quiz, "the-trade"))
    student = Student(app.test_client())
    student.start()
    for number, question in enumerate(quiz.questions, 1):
        student.answer(number, right_choice(question).id)
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
    assert page.count(f'<a href="{review}">Back to the question</a>') == 2
    panel = page[page.index('<details class="measured"') : page.index("</details>")]
    assert "make evidence" not in panel
    assert "How this was measured" in page and "make evidence" in page
    for elsewhere in ("https://evil.example/", "//evil.example", "/\\evil.example"):
        page = text(client.get("/evidence/checkpointing", query_string={"back": elsewhere}))
        assert "Back to the question" not in page and "evil.example" not in page


def test_the_script_and_its_numbers_can_be_read(client):
    """A student can read what measured the numbers, and the numbers themselves."""
    script = client.get("/evidence/checkpointing/script")
    assert script.mimetype == "text/plain" and "TorchDispatchMode" in script.text
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
        (lambda d: d["runs"].pop(), 'runs: 144 blocks has "selective" 0 times, not once'),
        (
            lambda d: d["runs"].append({**d["runs"][0], "strategy": "selective"}),
            'runs: 4 layers has "selective", not measured there',
        ),
        (
            lambda d: d["runs"][2].update(segments=None),
            "runs[2].segments: None is not of type 'integer'",
        ),
        (lambda d: d["sweep"].pop("peaks"), "sweep: 'peaks' is a required property"),
        (
            lambda d: d["runs"][1].update(time_ratios=[]),
            "runs[1].time_ratios: [] should be non-empty",
        ),
        (lambda d: d.pop("dropout"), "'dropout' is a required property"),
        (lambda d: d["policy_cost"].update(policy_calls=0), "policy_calls: 0 is less than"),
        (lambda d: d["sweep"].update(blocks=65), "sweep: 65 blocks, a length runs lack"),
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


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("torch"), "'torch' is a required property"),
        (lambda d: d.pop("dropout"), "'dropout' is a required property"),
        (lambda d: d["sweep"].pop("peaks"), "sweep: 'peaks' is a required property"),
        (lambda d: d["runs"][0].update(extra=1), "runs[0]: Additional properties"),
    ],
)
def test_a_file_changed_since_its_check_still_stops_an_app_server_saying_where(
    tmp_path, change, message
):
    """App servers read the measurements without their schema, which `make evidence` and every
    `flask` command check; a file changed since, in a shape the app cannot read, still stops
    them at its spot, not with a KeyError."""
    with pytest.raises(EvidenceError) as error:
        all_evidence(broken(tmp_path, change), schema=False)
    assert any(message in problem for problem in error.value.errors), error.value.errors


def test_a_single_chain_length_still_shows(tmp_path, monkeypatch, quiz, data):
    """Measured at one length only: the panel leaves out the growth and still shows the rest."""

    LONGEST = {("layers", 256), ("blocks", 64)}  # 64 blocks: the table's, which the sweep tried

    def only_the_longest(document):
        document["runs"] = [
            run for run in document["runs"] if (run["workload"], run["blocks"]) in LONGEST
        ]

    monkeypatch.setattr("app.evidence.FOLDER", broken(tmp_path, only_the_longest))
    page = text(feedback(make_app(tmp_path), quiz, "the-trade"))
    plain = runs_of(data, "blocks", 64)["none"]
    assert "What we measured" in page and "grew" not in page and "peaked lower up to" not in page
    assert f"{plain['peak_bytes'] / 1e6:.1f} MB" in page


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


def test_quiz_check_names_a_broken_measurement_no_question_names(tmp_path, monkeypatch):
    """App servers load every measurement, so `flask quiz check` (and `make evidence`, which
    runs it) checks every one, not only those its bank names."""
    monkeypatch.setattr("app.evidence.FOLDER", broken(tmp_path, lambda d: d.update(width="256")))
    bank = json.loads((FOLDER.parent / "questions.json").read_text())
    for question in bank["quizzes"][0]["questions"]:
        question.pop("evidence", None)
    unmeasured = tmp_path / "unmeasured.json"
    unmeasured.write_text(json.dumps(bank))
    result = CliRunner().invoke(quiz_cli, ["check", str(unmeasured)])
    assert result.exit_code == 1
    assert "checkpointing.json: width: '256' is not of type 'integer'" in result.output


def test_a_measurement_read_again_is_validated_once(tmp_path):
    """The same bytes give the same measurements (a `flask` command's app, then `quiz check`);
    a file changed since is read anew."""
    folder = broken(tmp_path, lambda data: None)
    first = load_evidence("checkpointing", folder)
    assert load_evidence("checkpointing", folder) is first
    same = json.loads((folder / "checkpointing.json").read_text())
    (folder / "checkpointing.json").write_text(json.dumps(same, indent=1))  # other bytes
    again = load_evidence("checkpointing", folder)
    assert again is not first and again == first
