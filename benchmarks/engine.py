"""Benchmark the serving engine: its own bookkeeping per sequence per step, and throughput against static batching.

1. **Bookkeeping** (CPU, any machine): ``LLMEngine.step`` with the model replaced by a no-op
   (``pagedlab.engine.bench.NoOpModel``), at 16, 256 and 1024 running sequences: scheduling, the block manager,
   the step's tensors (token ids, positions, slot mapping, block tables, context lengths) and picking tokens.
   Reported per running sequence per step, median over the timed steps, in this process's CPU time (other
   processes on a shared machine do not inflate it; torch runs on one thread) and in wall time. Target
   (``design.md``): <= 25 µs, flat from 16 to 1024.
2. **Throughput** (``--throughput``): the same random requests through ``LLMEngine`` and through
   ``StaticBatchingEngine`` (contiguous reservation of ``max_len`` tokens per request, fixed batches) with the
   same KV memory, on a randomly initialised ``TinyGPT``: most sequences at once, model steps, tokens/s. In
   Triton's interpreter (no GPU) the kernels run one program at a time, so tokens/s there says little about a
   GPU; the concurrency and step counts do not depend on the device.

Usage::

    python benchmarks/engine.py                         # bookkeeping at 16, 256, 1024 sequences: about a minute
    python benchmarks/engine.py --sizes 16 1024 --steps 50
    python benchmarks/engine.py --throughput            # adds the static-batching comparison
"""

from __future__ import annotations

import argparse
import sys
import time

import pagedlab.kernels  # noqa: F401  (decides Triton's mode first)
import torch

from pagedlab import device
from pagedlab.engine.bench import bookkeeping_cost, compare_with_static, random_requests
from pagedlab.model import GPTConfig, TinyGPT

TARGET_US = 25.0


def bookkeeping(sizes: list[int], steps: int) -> bool:
    """Print µs per running sequence per step at each size (CPU and wall time); return whether the target is met."""
    torch.set_num_threads(1)
    print(f"{'sequences':>10} {'CPU µs/seq/step':>16} {'wall µs/seq/step':>17}")
    cpu = {}
    for n in sizes:
        cpu[n] = bookkeeping_cost(n, steps) * 1e6
        wall = bookkeeping_cost(n, steps, clock=time.perf_counter) * 1e6
        print(f"{n:>10} {cpu[n]:>16.1f} {wall:>17.1f}", flush=True)
    growth = max(cpu.values()) / min(cpu.values())
    ok = max(cpu.values()) <= TARGET_US
    print(f"\nbookkeeping <= {TARGET_US:g} µs per sequence per step (CPU time) at every size: {ok}")
    print(f"largest / smallest cost: {growth:.2f}x (flat means about 1)")
    return ok


def throughput(num_requests: int, num_blocks: int, block_size: int) -> None:
    """Print concurrency, steps and tokens/s of continuous vs static batching at the same KV memory."""
    config = GPTConfig(vocab_size=256, n_positions=128, d_model=64, n_layers=2, n_heads=4)
    model = TinyGPT.random(config).to(device.DEVICE, device.DTYPE)
    prompts, params = random_requests(num_requests, config.vocab_size, (8, 48), (4, 48))
    results = compare_with_static(model, prompts, params, num_blocks, block_size)
    same = results["continuous"].token_ids == results["static"].token_ids
    print(f"\n{num_requests} requests, {num_blocks} blocks of {block_size} tokens, static reservation "
          f"{config.n_positions} tokens per request ({device.describe()}):")
    print(f"{'policy':>11} {'max seqs':>9} {'steps':>6} {'tokens':>7} {'seconds':>8} {'tokens/s':>9}")
    for name, r in results.items():
        print(f"{name:>11} {r.max_concurrency:>9} {r.steps:>6} {r.tokens:>7} {r.seconds:>8.2f} {r.tokens_per_s:>9.1f}")
    c, s = results["continuous"], results["static"]
    print(f"continuous / static: {c.max_concurrency / s.max_concurrency:.1f}x sequences at once, "
          f"{s.steps / c.steps:.1f}x fewer steps, {c.tokens_per_s / s.tokens_per_s:.2f}x tokens/s; "
          f"same greedy tokens: {same}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 256, 1024], help="running sequences")
    parser.add_argument("--steps", type=int, default=20, help="decode steps timed per size")
    parser.add_argument("--throughput", action="store_true", help="also compare with static batching")
    parser.add_argument("--requests", type=int, default=device.size(24, 256))
    parser.add_argument("--num-blocks", type=int, default=device.size(64, 1024))
    parser.add_argument("--block-size", type=int, default=16)
    args = parser.parse_args(argv)
    bookkeeping(args.sizes, args.steps)
    if args.throughput:
        throughput(args.requests, args.num_blocks, args.block_size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
