"""The measurement behind the evidence panels, on small layers: what each strategy keeps."""

import functools
import importlib.util
import math
import re

import pytest

from app.bank import load_bank
from app.config import PROJECT_ROOT

from helpers import SLUG

torch = pytest.importorskip(
    "torch", reason="needs PyTorch: pip install -e '.[evidence]' (CI installs it)"
)

WIDTH, ROWS = 16, 4  # small, so the suite stays quick; the byte counts scale exactly
UNIT = WIDTH * ROWS * 4  # one layer's or block's input of float32, in bytes
LAYERS = (4, 16, 64)
BLOCKS = (4, 8, 16, 64)  # 8 blocks in round(√8) = 3 segments: 2 + 2, then the last 4 whole


def load_script():
    spec = importlib.util.spec_from_file_location(
        "checkpointing", PROJECT_ROOT / "evidence" / "checkpointing.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


script = load_script()
torch.set_num_threads(1)  # as the script does: spinning idle threads slow a busy machine


@pytest.fixture(scope="module")
def runs():
    """Every strategy on both chains, by (workload, strategy, length)."""
    measured = [
        {"workload": workload, **run}
        for workload, depths in (("layers", LAYERS), ("blocks", BLOCKS))
        for run in script.measure(workload, depths, WIDTH, ROWS, repeats=1)
    ]
    return {(run["workload"], run["strategy"], run["blocks"]): run for run in measured}


def units(run, field="peak_bytes") -> float:
    return run[field] / UNIT


@pytest.mark.parametrize("layers", LAYERS)
def test_in_chens_setting_sqrt_n_segments_peak_at_two_sqrt_n(runs, layers):
    """Layers that keep their output: N without checkpointing, about as many checkpointing
    every layer (its input is the output kept anyway), 2√N with √N segments."""
    plain = runs["layers", "none", layers]
    assert units(plain, "held_bytes") == units(plain) == layers
    every = runs["layers", "every block", layers]
    assert units(every) == layers + 2  # recomputing one layer: its Linear's output, then tanh's
    assert units(runs["layers", "sqrt(N) segments", layers]) == 2 * math.isqrt(layers)


def test_in_chens_setting_the_peak_grows_like_the_square_root(runs):
    """Four times the layers: four times the peak without checkpointing, twice with √N."""

    def growth(strategy):
        return (
            runs["layers", strategy, 64]["peak_bytes"] / runs["layers", strategy, 16]["peak_bytes"]
        )

    assert growth("none") == 4
    assert growth("sqrt(N) segments") == 2


@pytest.mark.parametrize("blocks", BLOCKS)
def test_blocks_keep_exactly_what_each_strategy_should(runs, blocks):
    """Per block: 9 inputs' worth without checkpointing (the input, then 4 + 4 inside); 1 when
    checkpointed, 8 more while one block is recomputed; 1 + 4 with the selective policy, 4 more
    while GELU is recomputed. √N segments keep their boundaries and the last segment whole."""
    plain = runs["blocks", "none", blocks]
    assert units(plain, "held_bytes") == units(plain) == 9 * blocks
    every = runs["blocks", "every block", blocks]
    assert (units(every, "held_bytes"), units(every)) == (blocks, blocks + 8)
    sqrt = runs["blocks", "sqrt(N) segments", blocks]
    sizes, last = sqrt["checkpointed_segments"], sqrt["last_segment"]
    assert len(sizes) + 1 == sqrt["segments"] == round(math.sqrt(blocks))
    assert sum(sizes) + last == blocks
    assert units(sqrt, "held_bytes") == len(sizes) + 9 * last
    selective = runs["blocks", "selective", blocks]
    assert (units(selective, "held_bytes"), units(selective)) == (5 * blocks, 5 * blocks + 4)


def test_the_segment_split_is_the_one_checkpoint_sequential_makes(runs):
    """8 blocks in 3 segments: two checkpointed segments of 2, the last 4 kept whole."""
    run = runs["blocks", "sqrt(N) segments", 8]
    assert (run["checkpointed_segments"], run["last_segment"]) == ([2, 2], 4)
    assert units(run, "held_bytes") == 2 + 9 * 4


def test_on_blocks_every_block_beats_sqrt_n_until_the_chain_is_long(runs):
    """1 input per block against √N boundaries plus a whole segment at 9: every block peaks
    lower at 64 blocks (72 against 79); at 100, √N segments peak lower (99 against 108)."""
    assert units(runs["blocks", "every block", 64]) < units(runs["blocks", "sqrt(N) segments", 64])
    model = script.chain("blocks", 100, WIDTH, seed=0)
    x = torch.randn(ROWS, WIDTH)
    every = script.activations(model, x, "every block")[1] / UNIT
    sqrt = script.activations(model, x, "sqrt(N) segments")[1] / UNIT
    assert (sqrt, every) == (99, 108)


def test_the_sweep_finds_the_segment_count_that_needs_least_memory():
    """k segments that divide N peak at k - 1 boundaries plus the last segment's 9 per block."""
    peaks = {
        split["segments"]: split["peak_bytes"] / UNIT for split in script.sweep(16, WIDTH, ROWS)
    }
    assert sorted(peaks) == list(range(2, 17))
    for segments in (2, 4, 8, 16):
        assert peaks[segments] == segments - 1 + 9 * 16 // segments
    assert min(peaks.values()) == 24 < peaks[round(math.sqrt(16))]


@pytest.mark.parametrize("workload, depths", [("layers", LAYERS), ("blocks", BLOCKS)])
def test_extra_matrix_work_is_at_most_one_forward_pass(runs, workload, depths):
    """Recomputing adds between nothing and one forward pass; selective adds nothing."""
    for blocks in depths:
        plain = runs[workload, "none", blocks]["flops"]
        for strategy in ("every block", "sqrt(N) segments"):
            run = runs[workload, strategy, blocks]
            assert 0 < run["flops"] - plain <= run["forward_flops"]
    if workload == "blocks":
        for blocks in depths:
            assert (
                runs[workload, "selective", blocks]["flops"]
                == runs[workload, "none", blocks]["flops"]
            )


def test_every_block_stops_recomputing_before_the_last_matrix_product(runs):
    """Non-reentrant checkpoint stops once backward has what it needs: half of each block."""
    run = runs["blocks", "every block", 16]
    assert run["flops"] - runs["blocks", "none", 16]["flops"] == run["forward_flops"] // 2


def test_the_selective_policy_saves_only_what_backward_reads():
    """The up-projection's output (GELU's input) is saved; the down-projection's is not."""
    policy = script.selective_policy(WIDTH)

    class Context:
        def __init__(self, columns):
            self.op_output = torch.empty(ROWS, columns)

    addmm = torch.ops.aten.addmm.default
    assert policy(Context(4 * WIDTH), addmm) == script.CheckpointPolicy.MUST_SAVE
    assert policy(Context(WIDTH), addmm) == script.CheckpointPolicy.PREFER_RECOMPUTE
    assert policy(Context(4 * WIDTH), torch.ops.aten.gelu.default).name == "PREFER_RECOMPUTE"


def test_every_strategy_gives_bit_for_bit_the_same_gradients(runs):
    """Checkpointing changes what is kept, never what is learned: torch.equal on CPU."""
    assert all(run["gradients_equal"] for run in runs.values())
    assert all(run["largest_difference"] == 0 for run in runs.values())


def test_the_selective_checkpointing_call_in_the_explanation_runs():
    """Q8 writes the context_fn argument out: copied into a non-reentrant checkpoint as it
    stands, it runs, and the policy it names is asked about the region's operations."""
    from torch.utils.checkpoint import (
        CheckpointPolicy,
        checkpoint,
        create_selective_checkpoint_contexts,
    )

    quiz = load_bank(PROJECT_ROOT / "questions.json").quizzes[SLUG]
    general = next(q for q in quiz.questions if q.id == "selective-checkpointing").explanation
    call = re.search(r"context_fn=functools\.partial\([^)]*\)", general).group(0)
    asked = []

    def policy_fn(ctx, op, *args, **kwargs):
        asked.append(op)
        return CheckpointPolicy.PREFER_RECOMPUTE

    namespace = {
        "functools": functools,
        "policy_fn": policy_fn,
        "create_selective_checkpoint_contexts": create_selective_checkpoint_contexts,
    }
    context_fn = eval(call.removeprefix("context_fn="), namespace)  # noqa: S307 - the quiz's own text
    weight = torch.randn(WIDTH, WIDTH, requires_grad=True)
    out = checkpoint(lambda x: torch.relu(x @ weight), torch.randn(ROWS, WIDTH),
                     use_reentrant=False, context_fn=context_fn)  # fmt: skip
    out.sum().backward()
    assert asked and weight.grad is not None


def test_dropout_matches_only_with_the_random_number_state_restored():
    """The RNG restore the quiz describes, exercised: with dropout in every block, checkpointing
    with the state restored gives bit-for-bit equal gradients; without it, other masks."""
    found = script.dropout_check(4, WIDTH, ROWS)
    assert found["restored_equal"] and found["restored_largest_difference"] == 0
    assert not found["not_restored_equal"] and found["not_restored_largest_difference"] > 0
    assert found["restored_relative_difference"] == 0 < found["not_restored_relative_difference"]


def test_the_policy_is_asked_about_every_operation_of_the_forward_pass():
    """The selective machinery's calls grow with the chain: the same number per block."""
    short = script.policy_cost(4, WIDTH, ROWS, repeats=1)
    long = script.policy_cost(8, WIDTH, ROWS, repeats=1)
    assert short["policy_calls"] > 0 and long["policy_calls"] == 2 * short["policy_calls"]
    assert len(short["every_block_ratios"]) == len(short["with_policy_ratios"]) == 1
