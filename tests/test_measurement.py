"""The measurement behind the evidence panels, on small layers: what each strategy keeps."""

import importlib.util
import math

import pytest

from app.config import PROJECT_ROOT

torch = pytest.importorskip(
    "torch", reason="needs PyTorch: pip install -e '.[evidence]' (CI installs it)"
)

WIDTH, ROWS = 16, 4  # small, so the suite stays quick; the byte counts scale exactly
UNIT = WIDTH * ROWS * 4  # one block input of float32, in bytes
DEPTHS = (4, 16, 64)


def load_script():
    spec = importlib.util.spec_from_file_location(
        "checkpointing", PROJECT_ROOT / "evidence" / "checkpointing.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def runs():
    """Every strategy at 4, 16 and 64 blocks, by (strategy, blocks)."""
    measured = load_script().measure(DEPTHS, WIDTH, ROWS, repeats=1)
    return {(run["strategy"], run["blocks"]): run for run in measured}


def last_segment(blocks: int) -> int:
    """checkpoint_sequential's last segment, which it keeps whole: backward starts there."""
    segments = round(math.sqrt(blocks))
    return blocks - (segments - 1) * (blocks // segments)


@pytest.mark.parametrize("blocks", DEPTHS)
def test_bytes_kept_are_exactly_what_each_strategy_should_keep(runs, blocks):
    """Per block: 9 inputs' worth without checkpointing (the input, then 4 + 4 inside), 1 when
    the block is checkpointed, 1 + 5 when the matrix products are saved (4 + 1)."""
    assert runs["none", blocks]["held_bytes"] == 9 * blocks * UNIT
    assert runs["every block", blocks]["held_bytes"] == blocks * UNIT
    segments = round(math.sqrt(blocks))
    kept = (segments - 1) + 9 * last_segment(blocks)
    assert runs["sqrt(N) segments", blocks]["held_bytes"] == kept * UNIT
    assert runs["selective", blocks]["held_bytes"] == 6 * blocks * UNIT


@pytest.mark.parametrize("blocks", DEPTHS)
def test_full_recompute_schedules_keep_fewer_bytes(runs, blocks):
    """Both schedules that recompute whole blocks keep less than no checkpointing."""
    plain = runs["none", blocks]["held_bytes"]
    assert runs["every block", blocks]["held_bytes"] < plain
    assert runs["sqrt(N) segments", blocks]["held_bytes"] < plain


def test_sqrt_n_segments_grow_like_the_square_root(runs):
    """Four times the blocks: four times the bytes without checkpointing, twice with √N."""

    def growth(strategy):
        return runs[strategy, 64]["held_bytes"] / runs[strategy, 16]["held_bytes"]

    assert growth("none") == pytest.approx(4)
    assert growth("every block") == pytest.approx(4)
    assert 1.8 < growth("sqrt(N) segments") < 2.2


def test_at_64_blocks_sqrt_n_keeps_more_than_every_block_with_these_blocks(runs):
    """The last segment is kept whole and each block holds 9 inputs' worth, so √N segments
    (7 boundaries + 8 x 9) keep more than one input per block (64) until about 100 blocks."""
    assert runs["sqrt(N) segments", 64]["held_bytes"] == 79 * UNIT
    assert runs["every block", 64]["held_bytes"] == 64 * UNIT


@pytest.mark.parametrize("blocks", DEPTHS)
def test_extra_matrix_work_is_at_most_one_forward_pass(runs, blocks):
    """Recomputing adds between nothing and one forward pass; selective adds nothing."""
    plain = runs["none", blocks]["flops"]
    for strategy in ("every block", "sqrt(N) segments"):
        run = runs[strategy, blocks]
        assert 0 < run["flops"] - plain <= run["forward_flops"]
    assert runs["selective", blocks]["flops"] == plain


def test_every_block_stops_recomputing_before_the_last_matrix_product(runs):
    """Non-reentrant checkpoint stops once backward has what it needs: half of each block."""
    run = runs["every block", 16]
    assert run["flops"] - runs["none", 16]["flops"] == run["forward_flops"] // 2


@pytest.mark.parametrize("strategy", ["none", "every block", "sqrt(N) segments", "selective"])
def test_every_strategy_gives_the_same_gradients(runs, strategy):
    """Checkpointing changes what is kept, never what is learned."""
    assert all(runs[strategy, blocks]["gradients_match"] for blocks in DEPTHS)
