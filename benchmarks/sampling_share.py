"""Sampling's share of a decode step: SmolLM2-135M-Instruct, a batch of 16, ``temperature=0.8, top_p=0.95``.

The engine's sampling call (``pagedlab.engine.llm_engine.sample``) is wrapped with a timer; the script runs
``--steps`` decode steps with 16 sequences running and prints the median step time, the median time spent
sampling per step, and their ratio. Run it on a commit before the vectorized sampler to get the "before" figure
(the wrapped name exists there too: the per-row sampler). Times depend on the machine: report them with it.

Usage::

    python benchmarks/sampling_share.py --threads 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import pagedlab.kernels  # noqa: F401  (decides Triton's mode first)
import torch

from pagedlab import device, loader
from pagedlab.engine import LLM, SamplingParams
from pagedlab.engine import llm_engine


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    llm = LLM(loader.SMOLLM2, attention_backend="torch", num_blocks=256, block_size=16)
    engine = llm.llm_engine
    spent: list[float] = []
    inner = llm_engine.sample

    def timed(*a, **k):
        start = time.perf_counter()
        result = inner(*a, **k)
        spent.append(time.perf_counter() - start)
        return result

    llm_engine.sample = timed
    prompt = llm.get_tokenizer().encode("Tell me a long story about a cat who learns to sail.")
    params = SamplingParams(temperature=0.8, top_p=0.95, max_tokens=args.steps + 5, ignore_eos=True, seed=0)
    for _ in range(args.batch):
        engine.add_request(prompt, params)
    engine.step()                                             # the prefills
    steps, sampling = [], []
    for _ in range(args.steps):
        spent.clear()
        start = time.perf_counter()
        engine.step()
        steps.append(time.perf_counter() - start)
        sampling.append(sum(spent))
        assert engine.metrics[-1].num_running_seqs == args.batch
    step, samp = statistics.median(steps), statistics.median(sampling)
    print(f"{device.describe()}, torch {torch.__version__}, {torch.get_num_threads()} threads; batch {args.batch}, "
          f"top_p=0.95, median of {args.steps} decode steps:")
    print(f"step {step * 1e3:.1f} ms, sampling {samp * 1e3:.1f} ms: {samp / step:.1%} of the step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
