"""Measured evidence in the explanations: evidence/<name>.json, validated at start-up.

A question that names a measurement ("evidence" in questions.json) shows what evidence/<name>.py
measured when it was last run. Every number and word on the panel comes from the data file;
the app never imports PyTorch.
"""

import json
import math
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from flask import Blueprint, Response, abort, current_app, render_template, request
from jsonschema import Draft202012Validator

from .auth import safe_next
from .bank import Bank, BankError
from .config import PROJECT_ROOT

FOLDER = PROJECT_ROOT / "evidence"
SCHEMA_PATH = Path(__file__).with_name("evidence.schema.json")
STRATEGIES = ("none", "every block", "sqrt(N) segments", "selective")
CHART = (320, 180)
"""The plot area in SVG units, inside the axes that _macros.html draws around it."""

bp = Blueprint("evidence", __name__)


class EvidenceError(BankError):
    """A measurement the bank names that cannot be shown; `errors` locates every problem."""


@dataclass(frozen=True)
class Run:
    """One strategy on one chain: what it kept for backward and what it cost."""

    strategy: str
    blocks: int
    segments: int | None
    held_bytes: int
    flops: int
    forward_flops: int
    seconds: float
    time_ratio: float
    gradients_match: bool


@dataclass(frozen=True)
class Finding:
    """One strategy on the longest chain, next to no checkpointing."""

    run: Run
    fewer: float
    """How many times fewer activation bytes than no checkpointing kept."""
    extra_forwards: float
    """Extra matrix work, in forward passes of the whole chain."""

    @property
    def name(self) -> str:
        """The strategy in plain words."""
        run = self.run
        match run.strategy:
            case "none":
                return "No checkpointing"
            case "every block":
                return f"Checkpointing each of the {run.blocks} blocks"
            case "sqrt(N) segments":
                size = round(run.blocks / run.segments)
                return f"Checkpointing {run.segments} segments of about {size} blocks (√N)"
            case _:
                return "Selective: saving the matrix products, recomputing GELU"


@dataclass(frozen=True)
class Line:
    """One strategy drawn on the chart: bytes kept against the number of blocks."""

    strategy: str
    label: str
    points: str
    """SVG polyline points."""
    values: tuple[tuple[int, float], ...]
    """(blocks, megabytes) for the chart's text alternative."""


@dataclass(frozen=True)
class Evidence:
    """What evidence/<name>.py measured, and when, with what."""

    name: str
    measured_on: str
    torch: str
    python: str
    machine: str
    width: int
    rows: int
    dtype: str
    repeats: int
    runs: tuple[Run, ...]

    # Cached: the measurements never change while the app runs, and feedback pages read them.
    @cached_property
    def deepest(self) -> int:
        return max(run.blocks for run in self.runs)

    def run(self, strategy: str, blocks: int) -> Run:
        return next(r for r in self.runs if r.strategy == strategy and r.blocks == blocks)

    @cached_property
    def findings(self) -> list[Finding]:
        """Every strategy on the longest chain measured."""
        plain = self.run("none", self.deepest)
        return [
            Finding(
                run,
                fewer=plain.held_bytes / run.held_bytes,
                extra_forwards=(run.flops - plain.flops) / run.forward_flops,
            )
            for run in (self.run(strategy, self.deepest) for strategy in STRATEGIES)
        ]

    def growth(self, strategy: str) -> tuple[int, int, float] | None:
        """From a quarter of the longest chain to all of it: (from, to, bytes grew by); None
        when no chain that short was measured."""
        shorter = [blocks for blocks in self.depths if blocks <= self.deepest // 4]
        if not shorter:
            return None
        start, end = self.run(strategy, shorter[-1]), self.run(strategy, self.deepest)
        return start.blocks, end.blocks, end.held_bytes / start.held_bytes

    @cached_property
    def depths(self) -> list[int]:
        return sorted({run.blocks for run in self.runs})

    @property
    def gradients_match(self) -> bool:
        return all(run.gradients_match for run in self.runs)

    @cached_property
    def chart(self) -> tuple[list[Line], list[tuple]]:
        """Lines for bytes kept against blocks, and the y axis ticks as (y, label)."""
        width, height = CHART
        drawn = (
            ("none", "No checkpointing"),
            ("every block", "Every block"),
            ("sqrt(N) segments", "√N segments"),
        )
        top = max(self.run("none", blocks).held_bytes for blocks in self.depths) / 1e6
        step = _tick(top)
        ceiling = step * math.ceil(top / step)
        lines = []
        for strategy, label in drawn:
            values = tuple(
                (blocks, self.run(strategy, blocks).held_bytes / 1e6) for blocks in self.depths
            )
            points = " ".join(
                f"{width * blocks / self.deepest:.1f},{height * (1 - mb / ceiling):.1f}"
                for blocks, mb in values
            )
            lines.append(Line(strategy, label, points, values))
        ticks = [
            (height * (1 - n * step / ceiling), f"{n * step:g}")
            for n in range(round(ceiling / step) + 1)
        ]
        return lines, ticks


def _tick(top: float) -> float:
    """The largest round step (1, 2 or 5 times a power of ten) that cuts 0..top in 3 or more."""
    step = 10 ** math.floor(math.log10(top))
    for factor in (5, 2, 1, 0.5, 0.2):
        if top / (step * factor) >= 3:
            return step * factor
    return step * 0.1


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))


def load_evidence(name: str, folder: Path | None = None) -> Evidence:
    """Read and validate evidence/<name>.json; raise EvidenceError listing every problem."""
    path = (folder or FOLDER) / f"{name}.json"
    try:
        data = json.loads(path.read_bytes())
    except OSError as error:
        raise EvidenceError([f"{path}: cannot be read: {error.strerror}"]) from None
    except (UnicodeDecodeError, ValueError) as error:  # JSONDecodeError is a ValueError
        raise EvidenceError([f"{path}: not valid JSON: {error}"]) from None
    errors = [
        f"{path}: {_where(error.absolute_path)}{error.message}"
        for error in _validator().iter_errors(data)
    ]
    if not errors:
        errors = [f"{path}: {problem}" for problem in _incomplete(data["runs"])]
    if errors:
        raise EvidenceError(errors)
    fields = {key: value for key, value in data.items() if key != "runs"}
    return Evidence(name, runs=tuple(Run(**run) for run in data["runs"]), **fields)


def _where(path) -> str:
    place = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)
    return f"{place.lstrip('.')}: " if place else ""


def _incomplete(runs: list[dict]) -> list[str]:
    """Every chain needs every strategy exactly once, to compare them."""
    problems = []
    for blocks in sorted({run["blocks"] for run in runs}):
        strategies = [run["strategy"] for run in runs if run["blocks"] == blocks]
        for strategy in STRATEGIES:
            if strategies.count(strategy) != 1:
                times = strategies.count(strategy)
                problems.append(f'runs: {blocks} blocks has "{strategy}" {times} times, not once')
    return problems


def evidence_for(bank: Bank, folder: Path | None = None) -> dict[str, Evidence]:
    """Every measurement the bank's questions name, loaded and checked."""
    names = {q.evidence for quiz in bank.quizzes.values() for q in quiz.questions if q.evidence}
    found, errors = {}, []
    for name in sorted(names):
        try:
            found[name] = load_evidence(name, folder)
        except EvidenceError as error:
            errors += error.errors
    if errors:
        raise EvidenceError(errors)
    return found


def all_evidence(folder: Path | None = None) -> dict[str, Evidence]:
    """Every measurement in the evidence folder, loaded and checked: any release may name one."""
    found, errors = {}, []
    for path in sorted((folder or FOLDER).glob("*.json")):
        try:
            found[path.stem] = load_evidence(path.stem, folder)
        except EvidenceError as error:
            errors += error.errors
    if errors:
        raise EvidenceError(errors)
    return found


def current_evidence() -> dict[str, Evidence]:
    """The measurements the running app shows."""
    return current_app.extensions["quizwright.evidence"]


def _evidence_or_404(name: str) -> Evidence:
    found = current_evidence().get(name)
    if found is None:
        abort(404, description="There is no such measurement.")
    return found


@bp.get("/evidence/<name>")
def page(name):
    """The whole panel on a page of its own, for reviews that only link to it."""
    return render_template(
        "evidence.html", evidence=_evidence_or_404(name), back=safe_next(request.args.get("back"))
    )


@bp.get("/evidence/<name>/script")
def script(name):
    """The script that measured, so that a student can read it and run it again."""
    _evidence_or_404(name)
    return Response((FOLDER / f"{name}.py").read_text(), mimetype="text/plain")


@bp.get("/evidence/<name>/data")
def data(name):
    """The numbers the script wrote, as it wrote them."""
    _evidence_or_404(name)
    return Response((FOLDER / f"{name}.json").read_text(), mimetype="application/json")
