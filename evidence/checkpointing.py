"""Measure what gradient checkpointing saves and what it costs: `make evidence`.

Trains (one forward and backward) two kinds of chain and writes evidence/checkpointing.json,
which the quiz's explanations show:

- layers, Chen et al.'s setting: N similar layers, Linear(d, d) then tanh, each keeping about
  its output's size for backward (tanh keeps its output, which the next Linear reads);
- blocks, a transformer's MLP: N blocks of Linear(d, 4d), GELU, Linear(4d, d) and a residual
  add, each keeping 9 tensors the size of its input (its input, then 4 + 4 inside).

Each chain runs under these strategies, all with use_reentrant=False:

- none: autograd keeps what backward needs;
- every block: each layer or block checkpointed with torch.utils.checkpoint;
- sqrt(N) segments: checkpoint_sequential with round(sqrt(N)) segments, which checkpoints all
  segments but the last, N // segments long each, and runs the last (the rest) whole;
- selective (blocks only): every block checkpointed with a policy that saves the up-projection's
  output, which GELU's backward reads, and recomputes GELU; nothing else is kept.

The blocks are only a transformer layer's MLP half: no attention, no normalisation.

For each run it records the activation bytes alive when the forward pass ends and their peak
during backward, the matrix FLOPs of forward plus backward, the processor time of each of
several runs as a ratio to no checkpointing's in the same round, and how the gradients compare
with those without checkpointing. On the blocks it also tries every segment count at one
length, to find the split that needs least memory; times the selective machinery alone (a
policy that recomputes everything, as checkpointing every block does) and counts its policy's
calls; and checks dropout: each block with dropout after GELU, checkpointed with PyTorch's
random-number state restored before recomputing (the default) and without.

Activation bytes are counted by watching storages: a TorchDispatchMode notes every tensor that
the forward pass or a recomputation creates (backward runs its gradient formulas with grad mode
off, its recomputations with it on) and drops it when PyTorch frees its storage. The parameters,
the chain's input and the gradients are left out. CPU PyTorch has no allocator statistics, so
this is the peak of live activation tensors, read after every operation.

Run with the evidence extra installed: `pip install -e '.[evidence]'`, then
`python evidence/checkpointing.py` (or `make evidence`). PyTorch is needed only here.
"""

import argparse
import functools
import json
import math
import platform
import time
from datetime import UTC, datetime
from pathlib import Path

import torch
from torch import nn
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.checkpoint import (
    CheckpointPolicy,
    checkpoint,
    checkpoint_sequential,
    create_selective_checkpoint_contexts,
)
from torch.utils.flop_counter import FlopCounterMode

OUTPUT = Path(__file__).with_suffix(".json")
STRATEGIES = {
    "layers": ("none", "every block", "sqrt(N) segments"),
    "blocks": ("none", "every block", "sqrt(N) segments", "selective"),
}
DEPTHS = {"layers": (4, 16, 64, 256), "blocks": (4, 16, 36, 64, 100, 144)}
SWEEP_BLOCKS = 64
BEST_OF = 3
"""Runs of a strategy within a timed round, of which the quickest counts."""
DROPOUT_BLOCKS = 16
MATRIX_OPS = {torch.ops.aten.mm.default, torch.ops.aten.addmm.default}


class Layer(nn.Sequential):
    """Linear(d, d) then tanh: keeps about its output's size for backward, as Chen assumes."""

    def __init__(self, width: int):
        super().__init__(nn.Linear(width, width), nn.Tanh())


class Block(nn.Module):
    """Linear(d, 4d), GELU, Linear(4d, d), plus the residual: a transformer's MLP."""

    def __init__(self, width: int):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )

    def forward(self, x):
        return x + self.mlp(x)


class Activations(TorchDispatchMode):
    """Live bytes of the tensors the forward pass and recomputations create, and their peak."""

    def __init__(self, model: nn.Module, inputs: torch.Tensor):
        super().__init__()
        self.ignored = {p.untyped_storage()._cdata for p in model.parameters()}
        self.ignored.add(inputs.untyped_storage()._cdata)
        self.storages: dict[int, tuple[StorageWeakRef, int]] = {}
        self.in_backward = False
        self.peak = 0

    @property
    def bytes(self) -> int:
        """Bytes alive now."""
        self._forget_freed()
        return sum(size for _, size in self.storages.values())

    def _forget_freed(self) -> None:
        """Drop freed storages first, so that a new one at a reused address is not missed."""
        for key, (storage, _) in list(self.storages.items()):
            if storage.expired():
                del self.storages[key]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        # In backward, grad mode is on only while checkpointing recomputes a forward pass.
        if not self.in_backward or torch.is_grad_enabled():
            self._forget_freed()
            for tensor in tree_leaves(out):
                if isinstance(tensor, torch.Tensor):
                    storage = tensor.untyped_storage()
                    if storage._cdata not in self.ignored | self.storages.keys():
                        self.storages[storage._cdata] = (StorageWeakRef(storage), storage.nbytes())
            if self.in_backward:
                self.peak = max(self.peak, sum(size for _, size in self.storages.values()))
        return out


def selective_policy(width: int):
    """Save the up-projection's output (GELU's backward reads it); recompute everything else."""

    def policy(context, op, *args, **kwargs):
        if op in MATRIX_OPS and context.op_output.shape[-1] == 4 * width:
            return CheckpointPolicy.MUST_SAVE
        return CheckpointPolicy.PREFER_RECOMPUTE

    return policy


def segment_split(blocks: int, segments: int) -> tuple[list[int], int]:
    """checkpoint_sequential's split: the checkpointed segments' lengths, and the last one's."""
    size = blocks // segments
    return [size] * (segments - 1), blocks - size * (segments - 1)


def forward(model: nn.Sequential, x, strategy: str, segments: int | None = None):
    """One forward pass of the chain under a strategy."""
    blocks = list(model)
    if strategy == "none":
        return model(x)
    if strategy == "every block":
        for block in blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return x
    if strategy == "sqrt(N) segments":
        segments = segments or round(math.sqrt(len(blocks)))
        return checkpoint_sequential(model, segments, x, use_reentrant=False)
    if strategy in ("selective", "policy recomputing all"):
        width = x.shape[-1]
        policy = selective_policy(width) if strategy == "selective" else recompute_all
        contexts = functools.partial(create_selective_checkpoint_contexts, policy)
        for block in blocks:
            x = checkpoint(block, x, use_reentrant=False, context_fn=contexts)
        return x
    raise ValueError(f"unknown strategy {strategy!r}")


class Counted:
    """A policy that counts its calls: PyTorch asks it once per operation of the forward pass."""

    def __init__(self):
        self.calls = 0

    def __call__(self, context, op, *args, **kwargs):
        self.calls += 1
        return CheckpointPolicy.PREFER_RECOMPUTE


recompute_all = Counted()
"""The selective machinery with nothing to select: checkpointing every block, plus a policy."""


def activations(model: nn.Sequential, x, strategy: str, segments: int | None = None):
    """Forward and backward once: activation bytes alive when forward ends, and their peak."""
    model.zero_grad(set_to_none=True)
    x = x.detach().requires_grad_()
    watch = Activations(model, x)
    with watch:
        out = forward(model, x, strategy, segments)
        held = watch.bytes
    # The loss and the gradient backward starts from are made outside the watch: no activations.
    loss = out.sum()
    seed = torch.ones_like(loss)
    watch.in_backward = True
    with watch:
        loss.backward(seed)
    return held, max(watch.peak, held), [x.grad] + [p.grad for p in model.parameters()]


def flops(model: nn.Sequential, x, strategy: str) -> int:
    """The matrix FLOPs of one forward and backward."""
    model.zero_grad(set_to_none=True)
    counter = FlopCounterMode(display=False)
    with counter:
        forward(model, x.detach().requires_grad_(), strategy).sum().backward()
    return counter.get_total_flops()


def forward_flops(model: nn.Sequential, x) -> int:
    """The matrix FLOPs of one plain forward pass: the unit for extra work."""
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model(x)
    return counter.get_total_flops()


def once(model: nn.Sequential, x, strategy: str) -> float:
    """The processor time of one forward plus backward, in seconds."""
    model.zero_grad(set_to_none=True)
    inputs = x.detach().requires_grad_()
    # Processor time, not wall time: other programs on a shared machine take turns on the cores
    # and would stretch wall time by their load, but this process's own work stays the same.
    start = time.process_time()
    forward(model, inputs, strategy).sum().backward()
    return time.process_time() - start


def time_ratios(model: nn.Sequential, x, strategies, repeats: int) -> dict[str, list[float]]:
    """Each strategy's processor time in each round, as a ratio to no checkpointing's in that
    round. The strategies take turns, so a round's ratios share the machine's state; within a
    round each time is the best of BEST_OF, which leaves out a stray interruption; a first
    round untimed warms the caches."""
    for strategy in ("none", *strategies):
        once(model, x, strategy)
    ratios = {strategy: [] for strategy in strategies}
    for _ in range(repeats):
        best = {s: min(once(model, x, s) for _ in range(BEST_OF)) for s in ("none", *strategies)}
        for strategy in strategies:
            ratios[strategy].append(best[strategy] / best["none"])
    return ratios


def chain(workload: str, depth: int, width: int, seed: int) -> nn.Sequential:
    torch.manual_seed(seed)
    unit = Layer if workload == "layers" else Block
    return nn.Sequential(*(unit(width) for _ in range(depth)))


def measure(workload: str, depths, width: int, rows: int, repeats: int, seed: int = 0):
    """Every strategy at every depth: bytes alive and at peak, FLOPs, time, gradients."""
    results = []
    strategies = STRATEGIES[workload]
    for depth in depths:
        model = chain(workload, depth, width, seed)
        x = torch.randn(rows, width)
        kept = {strategy: activations(model, x, strategy) for strategy in strategies}
        plain = kept["none"][2]
        one_forward = forward_flops(model, x)
        ratios = time_ratios(model, x, strategies, repeats)
        for strategy, (held, peak, gradients) in kept.items():
            segments = round(math.sqrt(depth)) if strategy == "sqrt(N) segments" else None
            checkpointed, last = segment_split(depth, segments) if segments else (None, None)
            results.append({
                "strategy": strategy,
                "blocks": depth,
                "segments": segments,
                "checkpointed_segments": checkpointed,
                "last_segment": last,
                "held_bytes": held,
                "peak_bytes": peak,
                "flops": flops(model, x, strategy),
                "forward_flops": one_forward,
                "time_ratios": [round(ratio, 4) for ratio in ratios[strategy]],
                "gradients_equal": all(
                    torch.equal(a, b) for a, b in zip(gradients, plain, strict=True)
                ),
                "largest_difference": max(
                    (a - b).abs().max().item() for a, b in zip(gradients, plain, strict=True)
                ),
            })  # fmt: skip
    return results


def sweep(depth: int, width: int, rows: int, seed: int = 0) -> list[dict]:
    """Peak activation bytes of checkpoint_sequential on the blocks, for every segment count."""
    model = chain("blocks", depth, width, seed)
    x = torch.randn(rows, width)
    return [
        {"segments": segments, "peak_bytes": activations(model, x, "sqrt(N) segments", segments)[1]}
        for segments in range(2, depth + 1)
    ]


def policy_cost(depth: int, width: int, rows: int, repeats: int, seed: int = 0) -> dict:
    """The selective machinery's own cost on the blocks: checkpointing every block with and
    without a policy that recomputes everything, and the policy's calls in one step."""
    model = chain("blocks", depth, width, seed)
    x = torch.randn(rows, width)
    ratios = time_ratios(model, x, ("every block", "policy recomputing all"), repeats)
    recompute_all.calls = 0
    once(model, x, "policy recomputing all")
    return {
        "blocks": depth,
        "policy_calls": recompute_all.calls,
        "every_block_ratios": [round(ratio, 4) for ratio in ratios["every block"]],
        "with_policy_ratios": [round(ratio, 4) for ratio in ratios["policy recomputing all"]],
    }


class DropoutBlock(Block):
    """A block with dropout after GELU, whose recomputation must draw the same mask."""

    def __init__(self, width: int, p: float):
        super().__init__(width)
        self.mlp.insert(2, nn.Dropout(p))


def dropout_gradients(model: nn.Sequential, x, preserve: bool | None, seed: int) -> list:
    """Gradients of one step with the random numbers seeded alike; every block checkpointed
    (preserve_rng_state=`preserve`), or none when `preserve` is None."""
    model.zero_grad(set_to_none=True)
    inputs = x.detach().requires_grad_()
    torch.manual_seed(seed)
    out = inputs
    for block in model:
        out = block(out) if preserve is None else checkpoint(
            block, out, use_reentrant=False, preserve_rng_state=preserve
        )  # fmt: skip
    out.sum().backward()
    return [inputs.grad] + [p.grad for p in model.parameters()]


def dropout_check(depth: int, width: int, rows: int, p: float = 0.1, seed: int = 0) -> dict:
    """Checkpointing every block with dropout: the gradients next to no checkpointing's, with
    the random-number state restored before recomputing and without."""
    torch.manual_seed(seed)
    model = nn.Sequential(*(DropoutBlock(width, p) for _ in range(depth))).train()
    x = torch.randn(rows, width)
    plain = dropout_gradients(model, x, None, seed + 1)
    found = {"blocks": depth, "p": p}
    for name, preserve in (("restored", True), ("not_restored", False)):
        grads = dropout_gradients(model, x, preserve, seed + 1)
        pairs = list(zip(grads, plain, strict=True))
        found[f"{name}_equal"] = all(torch.equal(a, b) for a, b in pairs)
        found[f"{name}_largest_difference"] = max((a - b).abs().max().item() for a, b in pairs)
        # Against the gradients' own size: the difference of all of them over their norm.
        apart = math.sqrt(sum(((a - b) ** 2).sum().item() for a, b in pairs))
        found[f"{name}_relative_difference"] = apart / math.sqrt(
            sum((b**2).sum().item() for b in plain)
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=256, help="d, the layers' width")
    parser.add_argument("--rows", type=int, default=32, help="rows in the batch (tokens)")
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds of each strategy")
    parser.add_argument("--threads", type=int, default=1, help="PyTorch's CPU threads")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    options = parser.parse_args()
    # One thread by default: on a busy machine, idle threads spinning in OpenMP slow it tenfold.
    torch.set_num_threads(options.threads)
    threads = torch.get_num_threads()
    # Bitwise-equal gradients are expected only from kernels that always give the same result.
    torch.use_deterministic_algorithms(True)
    started = time.perf_counter()
    width, rows = options.width, options.rows
    document = {
        "measured_on": datetime.now(UTC).strftime("%Y-%m-%d"),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {threads} thread{'s' if threads > 1 else ''}, CPU",
        "width": width,
        "rows": rows,
        "dtype": "float32",
        "boundary_bytes": rows * width * 4,
        "repeats": options.repeats,
        "runs": [
            {"workload": workload, **run}
            for workload, depths in DEPTHS.items()
            for run in measure(workload, depths, width, rows, options.repeats)
        ],
        "sweep": {"blocks": SWEEP_BLOCKS, "peaks": sweep(SWEEP_BLOCKS, width, rows)},
        "policy_cost": policy_cost(SWEEP_BLOCKS, width, rows, options.repeats),
        "dropout": dropout_check(DROPOUT_BLOCKS, width, rows),
    }
    options.output.write_text(json.dumps(document, indent=2) + "\n")
    runs = len(document["runs"])
    print(f"Measured {runs} runs in {time.perf_counter() - started:.0f} s: {options.output}")


if __name__ == "__main__":
    main()
