"""Does ``torch.compile`` of the model's forward pay on a CPU? SmolLM2's forward, eager against compiled.

vLLM compiles its model's forward with ``torch.compile`` and leaves the attention outside the graph (its "piecewise"
compilation): a layer's projections, norms, rotary embedding and activation become a few fused kernels, with no
Python between them. This script asks whether the same would pay for pagedlab's forward on this CPU. It times the
forward of the engine's own model (the converted SmolLM2-135M-Instruct, float32) on ``rows`` tokens, with the
attention replaced by a stand-in that Dynamo does not trace (so both sides do the same work outside the attention):

* ``eager``: the engine's forward as it runs, linear layers through the weights packed for oneDNN
  (``pack_linear_weights``);
* ``eager, F.linear``: the same without the packed weights (what ``torch.compile`` starts from);
* ``compiled``: ``torch.compile(forward, dynamic=True)`` (Inductor, one graph for every row count), without and with
  Inductor's ``freezing`` (weights folded into the graph as constants, packed by Inductor itself).

Each is the best of ``--repeats`` in this process's CPU time, one thread; the compile time (the first call) is
printed. Times depend on the machine: compare the rows of one run.

Usage::

    python benchmarks/compile_cpu.py
    python benchmarks/compile_cpu.py --rows 1 8 32 --repeats 5
"""

from __future__ import annotations

import argparse
import time

import pagedlab.kernels  # noqa: F401  (decides Triton's mode first)
import torch
import torch._inductor.config

from pagedlab import loader
from pagedlab.engine import LLM


@torch.compiler.disable
def stand_in_attention(layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The attention's output shape at the cost of a copy; outside any compiled graph, as vLLM's attention is."""
    return q.clone()


def best_ms(forward, rows: int, repeats: int) -> float:
    ids, positions = torch.randint(0, 49_000, (rows,)), torch.arange(rows) + 64
    best = float("inf")
    with torch.inference_mode():
        for _ in range(repeats):
            start = time.process_time()
            forward(ids, positions)
            best = min(best, time.process_time() - start)
    return best * 1e3


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 4, 32])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    model = LLM(loader.SMOLLM2, attention_backend="torch", dtype="float32", num_blocks=64).llm_engine.model

    def forward(ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return model(ids, positions, stand_in_attention)

    results = {"eager": [best_ms(forward, r, args.repeats) for r in args.rows]}
    for module in model.modules():            # undo pack_linear_weights: back to nn.Linear and the tied head
        module.__dict__.pop("forward", None)
    model.lm_head = None
    results["eager, F.linear"] = [best_ms(forward, r, args.repeats) for r in args.rows]
    for freezing in (False, True):
        torch._dynamo.reset()
        torch._inductor.config.freezing = freezing
        compiled = torch.compile(forward, dynamic=True)
        start = time.perf_counter()
        best_ms(compiled, 3, 1)
        name = f"compiled, freezing {'on' if freezing else 'off'}"
        print(f"{name}: compiled in {time.perf_counter() - start:.1f} s", flush=True)
        results[name] = [best_ms(compiled, r, args.repeats) for r in args.rows]
    print(f"\nSmolLM2 forward without attention, CPU ms (best of {args.repeats}, 1 thread, torch {torch.__version__})")
    print(f"{'rows':>28} " + " ".join(f"{r:>8}" for r in args.rows))
    for name, times in results.items():
        print(f"{name:>28} " + " ".join(f"{t:>8.1f}" for t in times))


if __name__ == "__main__":
    main()
