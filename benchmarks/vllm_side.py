"""The clock both engines are timed with, and the vLLM side of ``vs_vllm_cpu.py``.

This file imports the standard library only at its top, so that two Pythons can run it: ``vs_vllm_cpu.py`` imports
:func:`drive` to time pagedlab, and vLLM's own environment (which has no pagedlab) runs it as a script to time vLLM
with the same function. As a script it is a small server on stdin/stdout, one JSON object per line:

* it starts ``vllm.LLM`` on the model folder and the thread count given on its command line, then prints
  ``{"ready": ..., "load_s": ..., "versions": {...}}``;
* for every line ``{"name": ..., "requests": [[prompt_ids, max_tokens, ignore_eos], ...]}`` it runs the requests
  through :func:`drive` and prints the result; for ``{"profile": true, "requests", "warmup", "steps"}`` it prints
  :func:`profile_steps` of that decode batch (``profile_step.py``);
* an empty line or the end of stdin ends it.

Everything vLLM logs goes to stderr, so stdout carries only the replies.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable


def drive(add: Callable[[str, list[int], int, bool], None],
          step: Callable[[], Iterable[tuple[str, list[int], bool]]],
          unfinished: Callable[[], bool], requests: list, clock: Callable[[], float] = time.perf_counter) -> dict:
    """Submit every request at once, step the engine until all are done, and time it.

    Args:
        add: ``add(request_id, prompt_ids, max_tokens, ignore_eos)`` queues one greedy request.
        step: one engine step; yields ``(request_id, token_ids so far, finished)`` for the requests it advanced.
        unfinished: whether any request is still queued or running.
        requests: ``[prompt_ids, max_tokens, ignore_eos]`` per request.

    Returns:
        ``{"seconds", "cpu_seconds", "steps", "tokens", "ttft", "tpot", "step_log"}``: the wall time from the first
        submission to the last token, the CPU time this process used meanwhile (all its threads: on a shared machine
        it counts the work, not the waiting), the engine steps, each request's generated token ids, each one's time
        to first token (from the submission of all requests) and time per output token after the first (None for a
        one-token answer), and ``(requests advanced, wall seconds)`` of every step.
    """
    start, cpu = clock(), time.process_time()
    for i, (prompt, max_tokens, ignore_eos) in enumerate(requests):
        add(str(i), list(prompt), int(max_tokens), bool(ignore_eos))
    first: dict[str, float] = {}
    done: dict[str, tuple[float, list[int]]] = {}
    step_log: list[tuple[int, float]] = []
    while unfinished():
        before = clock()
        advanced = list(step())
        now = clock()
        step_log.append((len(advanced), now - before))
        for rid, ids, finished in advanced:
            if len(ids) and rid not in first:
                first[rid] = now
            if finished:
                done[rid] = (now, list(ids))
    cpu = time.process_time() - cpu
    ids = [str(i) for i in range(len(requests))]
    tokens = [done[r][1] for r in ids]
    tpot = [(done[r][0] - first[r]) / (len(t) - 1) if len(t) > 1 else None for r, t in zip(ids, tokens)]
    return {"seconds": max(t for t, _ in done.values()) - start, "cpu_seconds": cpu, "steps": len(step_log),
            "tokens": tokens, "ttft": [first[r] - start for r in ids], "tpot": tpot, "step_log": step_log}


# Where a step's time goes: each engine's leaf modules and functions are timed under one of these names.
CATEGORIES = ("linear layers (QKV, O, MLP)", "attention (K/V write + paged read)", "RMSNorm", "rotary embedding",
              "SiLU x up", "embedding + LM head", "rest of the forward (Python, residual adds, views)",
              "input tensors of the step", "sampling", "scheduling + bookkeeping", "detokenization + outputs")


def profile_steps(step: Callable[[], object], labels: dict[str, list[tuple[object, str]]], steps: int,
                  clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Milliseconds per step in each of :data:`CATEGORIES`, over ``steps`` calls of ``step``.

    Args:
        labels: ``{category: [(owner, attribute), ...]}``: each ``owner.attribute`` (a method, a function of a
            module, or a module's ``forward``) is wrapped so that the time spent in it counts for ``category``.
            Times are exclusive: a labelled call inside another counts for its own category only, so the
            model's forward (labelled "rest of the forward") keeps what its labelled leaves do not take.

    Returns:
        ``{category: ms per step}`` on ``clock`` (on a shared machine, ``time.process_time`` at one thread counts
        the work and not the waiting) plus ``"step"`` (the time per step) and ``"other"`` (the step less
        every category: the engine loop's own Python).
    """
    spent = dict.fromkeys(CATEGORIES, 0.0)
    originals, stack = [], []              # stack: [category, time spent in labelled calls inside it]

    def wrap(owner, attr, name):
        original = getattr(owner, attr)
        originals.append((owner, attr, vars(owner).get(attr)))

        def timed(*args, **kwargs):
            stack.append([name, 0.0])
            start = clock()
            try:
                return original(*args, **kwargs)
            finally:
                took = clock() - start
                _, inner = stack.pop()
                spent[name] += took - inner
                if stack:
                    stack[-1][1] += took
        setattr(owner, attr, timed)

    for name, places in labels.items():
        for owner, attr in places:
            wrap(owner, attr, name)
    try:
        start = clock()
        for _ in range(steps):
            step()
        total = clock() - start
    finally:
        for owner, attr, before in reversed(originals):
            if before is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, before)
    out = {k: v / steps * 1e3 for k, v in spent.items()}
    out["step"] = total / steps * 1e3
    out["other"] = out["step"] - sum(out[c] for c in CATEGORIES)
    return out


def warm_batch(add, step, requests: list, warmup: int) -> None:
    """Submit ``requests`` and step until each has its first token, then ``warmup`` decode steps more."""
    for i, (prompt, max_tokens, ignore_eos) in enumerate(requests):
        add(f"p{i}", list(prompt), int(max_tokens), bool(ignore_eos))
    started: set[str] = set()
    while len(started) < len(requests):
        started |= {rid for rid, ids, _ in step() if len(ids)}
    for _ in range(warmup):
        list(step())


def vllm_labels(engine) -> dict[str, list[tuple[object, str]]]:
    """:func:`profile_steps`'s labels for vLLM's in-process engine. vLLM compiles its model's forward
    (``torch.compile``): the compiled graph calls no module's ``forward``, so the projections, norms, rotary and
    activation cannot be timed one by one and count together under "rest of the forward"; the attention runs
    outside the graph and is timed on its own, and so is the LM head (``compute_logits``)."""
    core = engine.engine_core.engine_core
    runner = core.model_executor.driver_worker.worker.model_runner
    model = runner.model
    impls = {type(m.impl) for m in model.modules() if hasattr(m, "impl")}
    return {
        "attention (K/V write + paged read)": [(cls, "forward") for cls in impls],
        "rest of the forward (Python, residual adds, views)": [(model, "forward")],
        "embedding + LM head": [(model, "compute_logits")],
        "input tensors of the step": [(runner, "_prepare_inputs")],
        "sampling": [(runner, "sample_tokens")],
        "scheduling + bookkeeping": [(core.scheduler, "schedule"), (core.scheduler, "update_from_output")],
        "detokenization + outputs": [(engine.output_processor, "process_outputs")],
    }


def serve_vllm(model: str, threads: int) -> int:
    """The server of the module docstring (runs inside vLLM's environment)."""
    # The engine core and its one worker in this process, as pagedlab's: one process whose CPU time is all of the
    # engine's work, with OMP_NUM_THREADS threads (vLLM's default instead starts a process for the engine core and
    # one for the worker, whose threads it pins to cores).
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ["OMP_NUM_THREADS"] = str(threads)
    out, sys.stdout = sys.stdout, sys.stderr           # vLLM's prints go to stderr; replies to the real stdout
    start = time.perf_counter()
    import torch
    import vllm
    from vllm import LLM, SamplingParams

    llm = LLM(model=model, dtype="float32", seed=0, max_model_len=4096)
    engine = llm.llm_engine

    def add(rid: str, prompt: list[int], max_tokens: int, ignore_eos: bool) -> None:
        params = SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=ignore_eos, detokenize=True)
        engine.add_request(rid, {"prompt_token_ids": prompt}, params)

    def step():
        return [(o.request_id, o.outputs[0].token_ids, o.finished) for o in engine.step()]

    def reply(obj: dict) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    # One short request first, as pagedlab gets: the first steps allocate and pick kernels.
    drive(add, step, engine.has_unfinished_requests, [[[1, 2, 3, 4], 4, True]])
    reply({"ready": True, "load_s": time.perf_counter() - start,
           "versions": {"vllm": vllm.__version__, "torch": torch.__version__,
                        "threads": torch.get_num_threads()}})
    for line in sys.stdin:
        if not line.strip():
            break
        job = json.loads(line)
        if job.get("profile"):             # {"profile": true, "requests", "warmup", "steps"}: profile_steps
            warm_batch(add, step, job["requests"], job["warmup"])
            result = profile_steps(step, vllm_labels(engine), job["steps"], time.process_time)
            while engine.has_unfinished_requests():
                step()
            reply(result)
            continue
        result = drive(add, step, engine.has_unfinished_requests, job["requests"])
        reply(dict(result, name=job["name"]))
    return 0


if __name__ == "__main__":
    sys.exit(serve_vllm(sys.argv[1], int(sys.argv[2])))
