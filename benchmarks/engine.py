"""Benchmark the serving engine: its own bookkeeping per sequence per step, and throughput against static batching.

1. **Bookkeeping** (CPU, any machine): ``LLMEngine.step`` with the model replaced by a no-op
   (``pagedlab.engine.bench.NoOpModel``), at 16, 256 and 1024 running sequences: scheduling, the block manager,
   the step's tensors (token ids, positions, slot mapping, block tables, context lengths) and picking tokens.
   Reported per running sequence per step, median over the timed steps, in this process's CPU time (other
   processes on a shared machine do not inflate it; torch runs on one thread) and in wall time. Target
   (the course's): <= 25 µs, flat from 16 to 1024.
2. **Throughput** (``--throughput``): the same random requests through ``LLMEngine`` and through
   ``StaticBatchingEngine`` (contiguous reservation of ``max_len`` tokens per request, fixed batches) with the
   same KV memory, on a randomly initialised ``TinyGPT``: most sequences at once, model steps, tokens/s. In
   Triton's interpreter (no GPU) the kernels run one program at a time, so tokens/s there says little about a
   GPU; the concurrency and step counts do not depend on the device.
3. **Prefill stall** (``--stall``): a few requests decode on a randomly initialised ``TinyGPT``; one long prompt
   arrives. Without chunked prefill its whole prefill shares one step with the decodes; with it, chunks of the
   token budget do. Printed: the longest step's tokens (the same on every device) and the longest wall time a
   decoding sequence waited for its next token, against a decode-only step.

Usage::

    python benchmarks/engine.py                         # bookkeeping at 16, 256, 1024 sequences: about a minute
    python benchmarks/engine.py --sizes 16 1024 --steps 50
    python benchmarks/engine.py --throughput            # adds the static-batching comparison
    python benchmarks/engine.py --sizes 16 --stall --prompt-len 512 --budget 64
"""

from __future__ import annotations

import argparse
import sys
import time

import pagedlab.kernels  # noqa: F401  (decides Triton's mode first)
import torch

from pagedlab import device
from pagedlab.engine.bench import bookkeeping_cost, compare_with_static, prefill_stall, random_requests
from pagedlab.models.tiny_gpt import GPTConfig, TinyGPT

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


def stall(prompt_len: int, budget: int) -> None:
    """Print the longest step and the decode stall with and without chunked prefill."""
    config = GPTConfig(vocab_size=256, n_positions=prompt_len + 64, d_model=64, n_layers=2, n_heads=4)
    torch.manual_seed(0)
    model = TinyGPT.random(config).to(device.DEVICE, device.DTYPE)
    print(f"\nfour decoding requests, then one prompt of {prompt_len} tokens; token budget {budget} "
          f"({device.describe()}):")
    print(f"{'chunked prefill':>16} {'longest step (tokens)':>22} {'decode stall (ms)':>18} {'decode step (ms)':>17}")
    tokens = {}
    for chunked in (False, True):
        r = prefill_stall(model, prompt_len, budget=budget, chunked=chunked)
        tokens[chunked] = r.token_ids
        print(f"{str(chunked):>16} {r.longest_step_tokens:>22} {r.decode_stall_s * 1e3:>18.1f} "
              f"{r.decode_step_s * 1e3:>17.1f}")
    print(f"same greedy tokens with and without chunks: {tokens[False] == tokens[True]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 256, 1024], help="running sequences")
    parser.add_argument("--steps", type=int, default=20, help="decode steps timed per size")
    parser.add_argument("--throughput", action="store_true", help="also compare with static batching")
    parser.add_argument("--requests", type=int, default=device.size(24, 256))
    parser.add_argument("--num-blocks", type=int, default=device.size(64, 1024))
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--stall", action="store_true", help="also measure the prefill stall of decodes")
    parser.add_argument("--prompt-len", type=int, default=device.size(256, 4096))
    parser.add_argument("--budget", type=int, default=device.size(64, 512))
    args = parser.parse_args(argv)
    bookkeeping(args.sizes, args.steps)
    if args.throughput:
        throughput(args.requests, args.num_blocks, args.block_size)
    if args.stall:
        stall(args.prompt_len, args.budget)
    return 0


if __name__ == "__main__":
    sys.exit(main())
