"""Measure what gradient checkpointing saves and what it costs: `make evidence`.

Trains (one forward and backward) a chain of N transformer-style MLP blocks under four
strategies and writes evidence/checkpointing.json, which the quiz's explanations show:

- none: autograd keeps what backward needs;
- every block: each block checkpointed with torch.utils.checkpoint;
- sqrt(N) segments: torch.utils.checkpoint.checkpoint_sequential with round(sqrt(N)) segments,
  which checkpoints every segment but the last (backward starts there, so it is kept);
- selective: every block checkpointed with a policy that saves the matrix multiplications'
  outputs and recomputes the pointwise operations (create_selective_checkpoint_contexts).

All use use_reentrant=False. For each run it records the activation bytes held for backward
when the forward pass ends, the floating-point operations of forward plus backward, the best
wall time of several runs, and whether the gradients equal those without checkpointing.

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
from torch.utils.checkpoint import (
    CheckpointPolicy,
    checkpoint,
    checkpoint_sequential,
    create_selective_checkpoint_contexts,
)
from torch.utils.flop_counter import FlopCounterMode

OUTPUT = Path(__file__).with_suffix(".json")
STRATEGIES = ("none", "every block", "sqrt(N) segments", "selective")
# Operations whose outputs the selective policy keeps: the matrix multiplications.
MATRIX_OPS = {torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default}


class Block(nn.Module):
    """Linear(d, 4d), GELU, Linear(4d, d), plus the residual: a transformer's MLP."""

    def __init__(self, width: int):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )

    def forward(self, x):
        return x + self.mlp(x)


class Held:
    """Counts the bytes kept for backward, each storage once, leaving out the parameters."""

    def __init__(self, model: nn.Module):
        self.parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
        self.storages: dict[int, int] = {}

    def keep(self, tensor: torch.Tensor) -> None:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in self.parameters:
            self.storages[storage.data_ptr()] = storage.nbytes()

    def pack(self, tensor):
        """saved_tensors_hooks: autograd is saving this tensor for backward."""
        self.keep(tensor)
        return tensor

    @property
    def bytes(self) -> int:
        return sum(self.storages.values())


def selective_policy(held: Held):
    """Save matrix multiplications, recompute the rest; note what is saved, for counting."""

    def policy(context, op, *args, **kwargs):
        if op in MATRIX_OPS:
            # Selective checkpointing keeps these outputs in its own cache, out of sight of
            # saved_tensors_hooks, so they are counted here, where the policy keeps them.
            held.keep(context.op_output)
            return CheckpointPolicy.MUST_SAVE
        return CheckpointPolicy.PREFER_RECOMPUTE

    return policy


def forward(model: nn.Sequential, x, strategy: str, held: Held):
    """One forward pass of the chain under a strategy."""
    blocks = list(model)
    if strategy == "none":
        return model(x)
    if strategy == "every block":
        for block in blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return x
    if strategy == "sqrt(N) segments":
        segments = round(math.sqrt(len(blocks)))
        return checkpoint_sequential(model, segments, x, use_reentrant=False)
    if strategy == "selective":
        contexts = functools.partial(create_selective_checkpoint_contexts, selective_policy(held))
        for block in blocks:
            x = checkpoint(block, x, use_reentrant=False, context_fn=contexts)
        return x
    raise ValueError(f"unknown strategy {strategy!r}")


def run(model: nn.Sequential, x, strategy: str) -> dict:
    """Forward and backward once; what was held, the FLOPs and the gradients."""
    model.zero_grad(set_to_none=True)
    x = x.detach().requires_grad_()
    held = Held(model)
    counter = FlopCounterMode(display=False)
    with counter:
        with torch.autograd.graph.saved_tensors_hooks(held.pack, lambda tensor: tensor):
            out = forward(model, x, strategy, held)
        held_bytes = held.bytes  # measured when the forward pass ends, before backward frees it
        out.sum().backward()
    gradients = [x.grad] + [p.grad for p in model.parameters()]
    return {"held": held_bytes, "flops": counter.get_total_flops(), "gradients": gradients}


def forward_flops(model: nn.Sequential, x) -> int:
    """The matrix FLOPs of one plain forward pass: the unit for extra work."""
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model(x)
    return counter.get_total_flops()


def once(model: nn.Sequential, x, strategy: str) -> float:
    """The wall time of one forward plus backward, in seconds."""
    model.zero_grad(set_to_none=True)
    inputs = x.detach().requires_grad_()
    start = time.perf_counter()
    forward(model, inputs, strategy, Held(model)).sum().backward()
    return time.perf_counter() - start


def best_times(model: nn.Sequential, x, repeats: int) -> dict[str, float]:
    """Each strategy's best time; the strategies take turns, so none runs on a warmer machine."""
    times = {strategy: [] for strategy in STRATEGIES}
    for _ in range(repeats):
        for strategy in STRATEGIES:
            times[strategy].append(once(model, x, strategy))
    return {strategy: min(seconds) for strategy, seconds in times.items()}


def measure(depths, width: int, rows: int, repeats: int, seed: int = 0) -> list[dict]:
    """Every strategy at every depth: bytes held, FLOPs, time, gradients checked."""
    results = []
    for depth in depths:
        torch.manual_seed(seed)
        model = nn.Sequential(*(Block(width) for _ in range(depth)))
        x = torch.randn(rows, width)
        measured = {strategy: run(model, x, strategy) for strategy in STRATEGIES}
        plain = measured["none"]
        one_forward = forward_flops(model, x)
        seconds = best_times(model, x, repeats)
        for strategy, found in measured.items():
            results.append({
                "strategy": strategy,
                "blocks": depth,
                "segments": round(math.sqrt(depth)) if strategy == "sqrt(N) segments" else None,
                "held_bytes": found["held"],
                "flops": found["flops"],
                "forward_flops": one_forward,
                "seconds": seconds[strategy],
                "time_ratio": seconds[strategy] / seconds["none"],
                "gradients_match": all(
                    torch.allclose(a, b, rtol=1e-4, atol=1e-5)
                    for a, b in zip(found["gradients"], plain["gradients"], strict=True)
                ),
            })  # fmt: skip
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=512, help="d, the block's width")
    parser.add_argument("--rows", type=int, default=128, help="rows in the batch (tokens)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs; the best counts")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    options = parser.parse_args()
    torch.set_num_threads(torch.get_num_threads())
    depths = (4, 8, 16, 32, 64)
    started = time.perf_counter()
    runs = measure(depths, options.width, options.rows, options.repeats)
    document = {
        "measured_on": datetime.now(UTC).strftime("%Y-%m-%d"),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {torch.get_num_threads()} threads, CPU",
        "width": options.width,
        "rows": options.rows,
        "dtype": "float32",
        "repeats": options.repeats,
        "runs": runs,
    }
    options.output.write_text(json.dumps(document, indent=2) + "\n")
    print(f"Measured {len(runs)} runs in {time.perf_counter() - started:.0f} s: {options.output}")


if __name__ == "__main__":
    main()
