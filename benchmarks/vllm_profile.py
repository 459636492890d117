"""vLLM's side of ``profile_step.py``: run inside vLLM's environment (imports vLLM, torch and ``vllm_side`` only).

Reads ``{"requests", "warmup", "steps"}`` as JSON on stdin, prints the milliseconds per step of each category as
one JSON line. vLLM compiles its model's forward (``torch.compile``): the compiled graph does not call the
modules' ``forward`` methods, so its leaves (projections, norms, rotary, activation) cannot be timed one by one and
count together as "rest of the forward"; its attention runs outside the graph and is timed on its own.
"""

from __future__ import annotations

import json
import os
import sys
import time

from vllm_side import drive, profile_steps


def main(model: str, threads: int) -> int:
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ["OMP_NUM_THREADS"] = str(threads)
    out, sys.stdout = sys.stdout, sys.stderr
    job = json.loads(sys.stdin.read())
    from vllm import LLM, SamplingParams

    llm = LLM(model=model, dtype="float32", seed=0, max_model_len=4096)
    engine = llm.llm_engine

    def add(rid, prompt, max_tokens, ignore_eos):
        engine.add_request(rid, {"prompt_token_ids": prompt}, SamplingParams(temperature=0, max_tokens=max_tokens,
                                                                           ignore_eos=ignore_eos))

    def step():
        return [(o.request_id, o.outputs[0].token_ids, o.finished) for o in engine.step()]

    drive(add, step, engine.has_unfinished_requests, [[[1, 2, 3, 4], 4, True]])
    for i, (prompt, max_tokens, ignore_eos) in enumerate(job["requests"]):
        add(f"p{i}", prompt, max_tokens, ignore_eos)
    started: set[str] = set()
    while len(started) < len(job["requests"]):
        started |= {rid for rid, ids, _ in step() if len(ids)}
    for _ in range(job["warmup"]):
        step()
    core = engine.engine_core.engine_core
    runner = core.model_executor.driver_worker.worker.model_runner
    model_ = runner.model
    attention_impls = {type(m.impl) for m in model_.modules() if hasattr(m, "impl")}
    labels = {
        "attention (K/V write + paged read)": [(cls, "forward") for cls in attention_impls],
        "rest of the forward (Python, residual adds, views)": [(model_, "forward")],
        "embedding + LM head": [(model_, "compute_logits")],
        "input tensors of the step": [(runner, "_prepare_inputs")],
        "sampling": [(runner, "sample_tokens")] if hasattr(runner, "sample_tokens") else [(runner.sampler, "forward")],
        "scheduling + bookkeeping": [(core.scheduler, "schedule"), (core.scheduler, "update_from_output")],
        "detokenization + outputs": [(engine.output_processor, "process_outputs")],
    }
    result = profile_steps(step, labels, job["steps"], time.process_time)
    while engine.has_unfinished_requests():
        step()
    out.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
