"""Measured evidence in the explanations: evidence/<name>.json, validated at start-up.

A question that names a measurement ("evidence" in questions.json) shows what evidence/<name>.py
measured when it was last run. Every number and word on the panel comes from the data file;
the app never imports PyTorch.
"""

import json
import math
import statistics
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from flask import Blueprint, Response, abort, current_app, render_template, request

from .auth import safe_next
from .bank import Bank, BankError, schema_checker
from .config import PROJECT_ROOT

FOLDER = PROJECT_ROOT / "evidence"
SCHEMA_PATH = Path(__file__).with_name("evidence.schema.json")
# What each chain was measured under: Chen's layers need no selective policy.
STRATEGIES = {
    "layers": ("none", "every block", "sqrt(N) segments"),
    "blocks": ("none", "every block", "sqrt(N) segments", "selective"),
}
CHART = (320, 180)
"""The plot area in SVG units, inside the axes that _macros.html draws around it."""
TICK_GAP = 24
"""Closer x tick labels than this, in SVG units, would overlap; the nearer one is left out."""

bp = Blueprint("evidence", __name__)


class EvidenceError(BankError):
    """A measurement the bank names that cannot be shown; `errors` locates every problem."""


@dataclass(frozen=True)
class Run:
    """One strategy on one chain: what it kept for backward and what it cost."""

    workload: str
    strategy: str
    blocks: int
    segments: int | None
    checkpointed_segments: tuple[int, ...] | None
    last_segment: int | None
    held_bytes: int
    peak_bytes: int
    flops: int
    forward_flops: int
    time_ratios: tuple[float, ...]
    """Processor time over no checkpointing's, in each timed round."""
    gradients_equal: bool
    largest_difference: float

    @property
    def unit(self) -> str:
        return _unit(self.workload)

    @property
    def split(self) -> str:
        return _split(self.checkpointed_segments, self.last_segment, self.unit)

    @property
    def time(self) -> "Spread":
        return Spread(self.time_ratios)


@dataclass(frozen=True)
class Spread:
    """One ratio measured in several rounds: shown as their median and range, rounded to the
    decimal the range allows."""

    values: tuple[float, ...]

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def digits(self) -> int:
        """Decimals up to the first one the rounds disagree on (two at most)."""
        width = self.high - self.low
        return 2 if width <= 0 else max(0, min(2, -math.floor(math.log10(width))))

    def __str__(self) -> str:
        d = self.digits
        low, high = f"{self.low:.{d}f}", f"{self.high:.{d}f}"
        return f"{self.median:.{d}f}×" if low == high else f"{self.median:.{d}f}× ({low}–{high})"


@dataclass(frozen=True)
class PolicyCost:
    """The selective machinery alone: every block checkpointed, with and without a policy
    that recomputes everything (timed in the same rounds, so paired), and how often that
    policy is asked in one step."""

    blocks: int
    policy_calls: int
    every_block: Spread
    with_policy: Spread

    @property
    def rounds(self) -> int:
        return len(self.with_policy.values)

    @property
    def slower_rounds(self) -> int:
        """Rounds in which the policy's run took longer than the one without, timed beside it."""
        pairs = zip(self.with_policy.values, self.every_block.values, strict=True)
        return sum(with_policy > every for with_policy, every in pairs)


@dataclass(frozen=True)
class Dropout:
    """Every block checkpointed with dropout, next to no checkpointing: the gradients with the
    random-number state restored before recomputing, and without."""

    blocks: int
    p: float
    restored_equal: bool
    restored_largest_difference: float
    restored_relative_difference: float
    """The difference of all gradients from no checkpointing's, over their norm."""
    not_restored_equal: bool
    not_restored_largest_difference: float
    not_restored_relative_difference: float


@dataclass(frozen=True)
class Finding:
    """One strategy on one chain, next to no checkpointing."""

    run: Run
    fewer: float
    """How many times less activation memory than no checkpointing at the backward peak."""
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
                return f"Checkpointing each of the {run.blocks} {run.unit}s"
            case "sqrt(N) segments":
                return f"√N = {run.segments} segments: {run.split}"
            case _:
                return "Selective: saving the up-projection's output, recomputing GELU"


@dataclass(frozen=True)
class Split:
    """checkpoint_sequential with one segment count, tried on the blocks for least memory."""

    blocks: int
    segments: int
    peak_bytes: int

    @property
    def split(self) -> str:
        size = self.blocks // self.segments
        last = self.blocks - size * (self.segments - 1)
        return _split((size,) * (self.segments - 1), last, "block")


def _unit(workload: str) -> str:
    return "layer" if workload == "layers" else "MLP block"


def _split(sizes: tuple[int, ...], last: int, unit: str) -> str:
    """checkpoint_sequential's segments in words, exactly as it cut the chain."""
    each = " or ".join(str(n) for n in sorted(set(sizes)))
    plural = "s" if len(sizes) != 1 else ""
    return f"{len(sizes)} checkpointed segment{plural} of {each} {unit}s, the last {last} run whole"


@dataclass(frozen=True)
class Line:
    """One strategy drawn on a chart: peak bytes against the chain's length."""

    strategy: str
    label: str
    number: int
    """The line's style, the same for a strategy on every chart."""
    points: str
    """SVG polyline points."""
    values: tuple[tuple[int, float], ...]
    """(length, megabytes) for the chart's text alternative."""


@dataclass(frozen=True)
class Chart:
    """A chart of one chain: its lines, y ticks as (y, label) and x ticks as (x, label)."""

    lines: list[Line]
    y_ticks: list[tuple[float, str]]
    x_ticks: list[tuple[float, int]]


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
    boundary_bytes: int
    """One layer's or block's input (or output): the unit of the schedules' arithmetic."""
    repeats: int
    runs: tuple[Run, ...]
    sweep: tuple[Split, ...]
    policy_cost: PolicyCost
    dropout: Dropout

    # Cached: the measurements never change while the app runs, and feedback pages read them.
    @cached_property
    def _depths(self) -> dict[str, list[int]]:
        return {w: sorted({r.blocks for r in self.runs if r.workload == w}) for w in STRATEGIES}

    def depths(self, workload: str) -> list[int]:
        return self._depths[workload]

    def deepest(self, workload: str) -> int:
        return self.depths(workload)[-1]

    def run(self, workload: str, strategy: str, blocks: int) -> Run:
        return next(
            r
            for r in self.runs
            if r.workload == workload and r.strategy == strategy and r.blocks == blocks
        )

    def findings(self, workload: str, blocks: int) -> list[Finding]:
        """Every strategy on one chain, in the order STRATEGIES lists them."""
        plain = self.run(workload, "none", blocks)
        return [
            Finding(
                run,
                fewer=plain.peak_bytes / run.peak_bytes,
                extra_forwards=(run.flops - plain.flops) / run.forward_flops,
            )
            for run in (self.run(workload, s, blocks) for s in STRATEGIES[workload])
        ]

    def growth(self, workload: str, strategy: str) -> tuple[int, int, float] | None:
        """From a sixteenth (or failing that, a quarter) of the longest chain to all of it:
        (from, to, peak grew by); None when no chain that short was measured."""
        deepest = self.deepest(workload)
        for part in (16, 4):
            if deepest // part in self.depths(workload) and deepest % part == 0:
                start = self.run(workload, strategy, deepest // part)
                end = self.run(workload, strategy, deepest)
                return start.blocks, end.blocks, end.peak_bytes / start.peak_bytes
        return None

    def per_block(self, run: Run) -> float:
        """Tensors of a block's input size that a run keeps per layer or block, forward done."""
        return run.held_bytes / run.blocks / self.boundary_bytes

    def in_boundaries(self, run: Run) -> float:
        """A run's peak, in tensors of a block's input size."""
        return run.peak_bytes / self.boundary_bytes

    @cached_property
    def crossover(self) -> tuple[int | None, int | None]:
        """On the blocks: the longest chain where every block peaked lower than √N segments,
        and the shortest where √N segments peaked lower; None where there was none."""
        every_lower, sqrt_lower = [], []
        for blocks in self.depths("blocks"):
            every = self.run("blocks", "every block", blocks).peak_bytes
            sqrt = self.run("blocks", "sqrt(N) segments", blocks).peak_bytes
            (every_lower if every < sqrt else sqrt_lower if sqrt < every else []).append(blocks)
        return max(every_lower, default=None), min(sqrt_lower, default=None)

    @cached_property
    def best_split(self) -> Split:
        """The segment count that needed least memory on the swept chain (the fewest, if tied)."""
        return min(self.sweep, key=lambda split: (split.peak_bytes, split.segments))

    @property
    def gradients_equal(self) -> bool:
        return all(run.gradients_equal for run in self.runs)

    @property
    def largest_difference(self) -> float:
        return max(run.largest_difference for run in self.runs)

    def undrawn(self, workload: str) -> tuple[int, float, float] | None:
        """No checkpointing where a chart leaves it out: at the longest chain, its peak in MB
        and how many times the highest line drawn; None where it is drawn."""
        lines = self.charts[workload].lines
        if any(line.strategy == "none" for line in lines):
            return None
        deepest = self.deepest(workload)
        plain = self.run(workload, "none", deepest).peak_bytes / 1e6
        return deepest, plain, plain / max(mb for line in lines for _, mb in line.values)

    @cached_property
    def charts(self) -> dict[str, Chart]:
        """Each chain's chart."""
        return {workload: self._chart(workload) for workload in STRATEGIES}

    def _chart(self, workload: str) -> Chart:
        """Peak activation megabytes against the chain's length, for the full-recompute lines;
        on the blocks without no checkpointing, whose height would hide where the others cross."""
        width, height = CHART
        drawn = (
            ("none", "No checkpointing", 1),
            ("every block", f"Every {_unit(workload)}", 2),
            ("sqrt(N) segments", "√N segments", 3),
        )[0 if workload == "layers" else 1 :]
        depths, deepest = self.depths(workload), self.deepest(workload)
        top = max(self.run(workload, s, n).peak_bytes for s, *_ in drawn for n in depths) / 1e6
        step = _tick(top)
        ceiling = step * math.ceil(top / step)
        lines = []
        for strategy, label, number in drawn:
            values = tuple(
                (blocks, self.run(workload, strategy, blocks).peak_bytes / 1e6) for blocks in depths
            )
            points = " ".join(
                f"{width * blocks / deepest:.1f},{height * (1 - mb / ceiling):.1f}"
                for blocks, mb in values
            )
            lines.append(Line(strategy, label, number, points, values))
        y_ticks = [
            (height * (1 - n * step / ceiling), f"{n * step:g}")
            for n in range(round(ceiling / step) + 1)
        ]
        x_ticks = []
        for blocks in reversed(depths):  # the longest chains are far apart; keep those labels
            x = width * blocks / deepest
            if not x_ticks or x_ticks[-1][0] - x >= TICK_GAP:
                x_ticks.append((x, blocks))
        return Chart(lines, y_ticks, x_ticks[::-1])


def _tick(top: float) -> float:
    """The largest round step (1, 2 or 5 times a power of ten) that cuts 0..top in 3 or more."""
    step = 10 ** math.floor(math.log10(top))
    for factor in (5, 2, 1, 0.5, 0.2):
        if top / (step * factor) >= 3:
            return step * factor
    return step * 0.1


def load_evidence(name: str, folder: Path | None = None, *, schema: bool = True) -> Evidence:
    """Read and validate evidence/<name>.json, against its schema unless the command line
    already did (`schema` False: docs/evidence.md); raise EvidenceError listing every
    problem."""
    path = (folder or FOLDER) / f"{name}.json"
    try:
        content = path.read_bytes()
    except OSError as error:
        raise EvidenceError([f"{path}: cannot be read: {error.strerror}"]) from None
    return _evidence_in(name, str(path), content, schema)


@lru_cache(maxsize=8)
def _evidence_in(name: str, path: str, content: bytes, schema: bool) -> Evidence:
    """The measurements these bytes hold; an Evidence is frozen, so a file read again (a
    `flask` command's app, then `quiz check`) is validated once."""
    try:
        data = json.loads(content)
    except (UnicodeDecodeError, ValueError) as error:  # JSONDecodeError is a ValueError
        raise EvidenceError([f"{path}: not valid JSON: {error}"]) from None
    if not schema:
        try:
            return _evidence(name, path, data, ())
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # a file changed since it was checked: the schema says where it is wrong
    return _evidence(name, path, data, schema_checker(SCHEMA_PATH).iter_errors(data))


def _evidence(name: str, path: str, data, refused) -> Evidence:
    """The measurements in a file's data, given what its schema refused of it."""
    errors = [f"{path}: {_where(error.absolute_path)}{error.message}" for error in refused]
    if not errors:
        problems = _incomplete(data["runs"])
        blocks = {run["blocks"] for run in data["runs"] if run["workload"] == "blocks"}
        if data["sweep"]["blocks"] not in blocks:
            problems.append(f"sweep: {data['sweep']['blocks']} blocks, a length runs lack")
        errors = [f"{path}: {problem}" for problem in problems]
    if errors:
        raise EvidenceError(errors)
    parts = ("runs", "sweep", "policy_cost", "dropout")
    fields = {key: value for key, value in data.items() if key not in parts}
    runs = []
    for run in data["runs"]:
        sizes = run["checkpointed_segments"]
        runs.append(
            Run(
                **{
                    **run,
                    "checkpointed_segments": sizes and tuple(sizes),
                    "time_ratios": tuple(run["time_ratios"]),
                }
            )  # fmt: skip
        )
    cost = data["policy_cost"]
    return Evidence(
        name,
        runs=tuple(runs),
        sweep=tuple(Split(data["sweep"]["blocks"], **split) for split in data["sweep"]["peaks"]),
        policy_cost=PolicyCost(
            cost["blocks"],
            cost["policy_calls"],
            Spread(tuple(cost["every_block_ratios"])),
            Spread(tuple(cost["with_policy_ratios"])),
        ),  # fmt: skip
        dropout=Dropout(**data["dropout"]),
        **fields,
    )


def _where(path) -> str:
    place = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)
    return f"{place.lstrip('.')}: " if place else ""


def _incomplete(runs: list[dict]) -> list[str]:
    """Every chain needs each of its strategies exactly once, to compare them."""
    problems = []
    for workload, strategies in STRATEGIES.items():
        measured = [run for run in runs if run["workload"] == workload]
        if not measured:
            problems.append(f'runs: no "{workload}" chain was measured')
        for blocks in sorted({run["blocks"] for run in measured}):
            found = [run["strategy"] for run in measured if run["blocks"] == blocks]
            for strategy in sorted(set(found) - set(strategies)):
                problems.append(f'runs: {blocks} {workload} has "{strategy}", not measured there')
            for strategy in strategies:
                if (times := found.count(strategy)) != 1:
                    problems.append(
                        f'runs: {blocks} {workload} has "{strategy}" {times} times, not once'
                    )
    return problems


def evidence_for(
    bank: Bank, folder: Path | None = None, *, every: bool = False
) -> dict[str, Evidence]:
    """Every measurement the bank's questions name (with `every`, each in the folder too, as app
    servers load them all), loaded and checked."""
    names = {q.evidence for quiz in bank.quizzes.values() for q in quiz.questions if q.evidence}
    return _loaded(names | (_stored(folder) if every else set()), folder)


def all_evidence(folder: Path | None = None, *, schema: bool = True) -> dict[str, Evidence]:
    """Every measurement in the evidence folder, loaded and checked: any release may name one."""
    return _loaded(_stored(folder), folder, schema=schema)


def _stored(folder: Path | None) -> set[str]:
    return {path.stem for path in (folder or FOLDER).glob("*.json")}


def _loaded(names: set[str], folder: Path | None, schema: bool = True) -> dict[str, Evidence]:
    """The named measurements, each loaded once; EvidenceError lists every file's problems."""
    found, errors = {}, []
    for name in sorted(names):
        try:
            found[name] = load_evidence(name, folder, schema=schema)
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
