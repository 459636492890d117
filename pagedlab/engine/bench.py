"""Measure the engine: its own bookkeeping per sequence per step, and throughput against static batching.

* :func:`bookkeeping_cost`: the engine's time per running sequence per step with the model replaced by a
  no-op (:class:`NoOpModel`): scheduling, the block manager, building the step's tensors (token ids,
  positions, slot mapping, block tables, context lengths) and picking each token. What is left of a step
  when the model costs nothing.
* :func:`compare_with_static`: the same requests through :class:`~pagedlab.engine.LLMEngine` and through
  :class:`~pagedlab.engine.static.StaticBatchingEngine` with the same KV memory: most sequences at once, model
  steps, generated tokens per second.
* :func:`prefill_stall`: what one long prompt arriving among decoding requests costs them, with and without
  chunked prefill: the longest step's tokens and the longest a decoding sequence waited for its next token.

Times vary by machine and by what else runs on it: report them, never assert them.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from pagedlab.engine.llm_engine import LLMEngine
from pagedlab.engine.sampling import SamplingParams
from pagedlab.engine.static import StaticBatchingEngine
from pagedlab.models.tiny_gpt import GPTConfig
from pagedlab.validate import blocks_for


class NoOpModel(torch.nn.Module):
    """A stand-in with a model's ``config`` and call signature that computes nothing: it returns a view of
    all-zero logits allocated once (up to ``max_tokens`` tokens per step), so greedy decoding picks token 0."""

    def __init__(self, config: GPTConfig, max_tokens: int) -> None:
        super().__init__()
        self.config = config
        self.anchor = torch.nn.Parameter(torch.zeros(1))   # gives the engine a dtype and a device
        self.logits = torch.zeros(max_tokens, config.vocab_size)

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, attention=None,
                rows: torch.Tensor | None = None) -> torch.Tensor:
        return self.logits[:input_ids.shape[0] if rows is None else len(rows)]


def bookkeeping_cost(num_seqs: int, steps: int = 20, prompt_len: int = 32, block_size: int = 16,
                     clock: Callable[[], float] = time.process_time) -> float:
    """Median seconds per running sequence per decode step, model excluded, with ``num_seqs`` sequences running.

    All ``num_seqs`` requests are admitted in the first step (a pool large enough, no preemption), then
    ``steps`` decode steps are timed one by one. The default clock is this process's CPU time, which other
    processes on a shared machine do not inflate (run torch on one thread, ``torch.set_num_threads(1)``, so
    CPU time is the time the step takes); pass ``time.perf_counter`` for wall time.
    """
    max_tokens = steps + 2
    config = GPTConfig(vocab_size=256, n_positions=prompt_len + max_tokens, d_model=16, n_layers=1, n_heads=1)
    per_seq = blocks_for(prompt_len + max_tokens, block_size)
    engine = LLMEngine(NoOpModel(config, num_seqs * prompt_len), num_blocks=num_seqs * per_seq + 1,
                       block_size=block_size,
                       max_num_seqs=num_seqs, max_num_batched_tokens=num_seqs * prompt_len, watermark=0.0)
    rng = random.Random(0)
    for _ in range(num_seqs):
        engine.add_request([rng.randrange(256) for _ in range(prompt_len)], SamplingParams(max_tokens=max_tokens))
    engine.step()
    times = []
    for _ in range(steps):
        start = clock()
        engine.step()
        times.append(clock() - start)
        assert engine.metrics[-1].num_running_seqs == num_seqs
    return statistics.median(times) / num_seqs


def random_requests(num_requests: int, vocab_size: int, prompt_lens: tuple[int, int], max_tokens: tuple[int, int],
                    seed: int = 0) -> tuple[list[list[int]], list[SamplingParams]]:
    """Prompts and greedy :class:`SamplingParams` with lengths drawn uniformly from the given ``(low, high)`` ranges."""
    rng = random.Random(seed)
    prompts = [[rng.randrange(vocab_size) for _ in range(rng.randint(*prompt_lens))] for _ in range(num_requests)]
    params = [SamplingParams(max_tokens=rng.randint(*max_tokens)) for _ in range(num_requests)]
    return prompts, params


@dataclass(frozen=True)
class ThroughputResult:
    """One policy on one workload.

    Attributes:
        max_concurrency: most sequences in one step. steps: model steps. tokens: tokens generated.
        seconds: wall time. tokens_per_s: ``tokens / seconds``. token_ids: every request's completion.
        computed_tokens: tokens the model computed (prompts, recomputations and decodes): a step's cost grows
            with them, so steps alone undercount a policy that packs more prefill into its steps.
    """

    max_concurrency: int
    steps: int
    tokens: int
    seconds: float
    tokens_per_s: float
    token_ids: list[list[int]]
    computed_tokens: int


def compare_with_static(model: torch.nn.Module, prompts: list[list[int]], params: list[SamplingParams],
                        num_blocks: int, block_size: int, max_len: int | None = None,
                        attention_backend: object = "triton") -> dict[str, ThroughputResult]:
    """Run the requests through both policies with ``num_blocks`` blocks of KV memory each.

    ``attention_backend`` is passed to both engines (see :class:`~pagedlab.engine.LLMEngine`): the steps, the
    concurrency and the tokens computed do not depend on it, only the time does.

    Returns:
        ``{"continuous": ..., "static": ...}``.
    """
    engine = LLMEngine(model, num_blocks, block_size, max_num_seqs=len(prompts),
                       max_num_batched_tokens=sum(len(p) for p in prompts), attention_backend=attention_backend)
    start = time.perf_counter()
    outputs = engine.generate(prompts, params, use_tqdm=False)
    seconds = time.perf_counter() - start
    results = {"continuous": _result(outputs, seconds, len(engine.metrics),
                                     max(m.num_running_seqs for m in engine.metrics),
                                     sum(m.num_prefill_tokens + m.num_decode_tokens for m in engine.metrics))}
    static = StaticBatchingEngine(model, num_blocks, block_size, max_len, attention_backend=attention_backend)
    start = time.perf_counter()
    outputs = static.generate(prompts, params)
    results["static"] = _result(outputs, time.perf_counter() - start, static.steps,
                                min(static.batch_size, len(prompts)), static.computed_tokens)
    return results


def _result(outputs, seconds: float, steps: int, concurrency: int, computed: int) -> ThroughputResult:
    token_ids = [o.outputs[0].token_ids for o in outputs]
    tokens = sum(len(t) for t in token_ids)
    return ThroughputResult(concurrency, steps, tokens, seconds, tokens / seconds, token_ids, computed)


@dataclass(frozen=True)
class StallResult:
    """Decodes around one long prompt (:func:`prefill_stall`).

    Attributes:
        step_tokens: tokens computed in each step after the long prompt arrived.
        longest_step_tokens: ``max(step_tokens)``.
        decode_stall_s: the longest wall time between two tokens of a decoding sequence after the arrival.
        decode_step_s: the median wall time of a step before the arrival (decodes only), for scale.
        token_ids: every request's completion (the same with and without chunks, greedy).
    """

    step_tokens: list[int]
    longest_step_tokens: int
    decode_stall_s: float
    decode_step_s: float
    token_ids: list[list[int]]


def prefill_stall(model: torch.nn.Module, prompt_len: int, num_decodes: int = 4, budget: int = 64,
                  chunked: bool = True, block_size: int = 16, decode_tokens: int = 24,
                  attention_backend: object = "triton") -> StallResult:
    """``num_decodes`` short requests decode; after a few steps a ``prompt_len``-token prompt arrives.

    Without chunks its whole prefill shares one step with the decodes (the budget is raised to fit it); with
    ``enable_chunked_prefill`` it goes in chunks of what the ``budget`` leaves. Tokens per step are the same on
    every machine; times are wall times here, so report them, never assert them. ``attention_backend`` is the
    engine's (see :class:`~pagedlab.engine.LLMEngine`).
    """
    cfg = model.config
    blocks = blocks_for(prompt_len + 2, block_size) + num_decodes * blocks_for(8 + decode_tokens, block_size) + 1
    engine = LLMEngine(model, num_blocks=blocks, block_size=block_size, max_num_seqs=num_decodes + 1,
                       max_num_batched_tokens=budget if chunked else max(budget, prompt_len + num_decodes + 2),
                       enable_chunked_prefill=chunked, watermark=0.0, attention_backend=attention_backend)
    rng = random.Random(1)
    ids = [engine.add_request([rng.randrange(cfg.vocab_size) for _ in range(8)],
                              SamplingParams(max_tokens=decode_tokens)) for _ in range(num_decodes)]
    warmup = []
    for _ in range(4):
        start = time.perf_counter()
        engine.step()
        warmup.append(time.perf_counter() - start)
    ids.append(engine.add_request([rng.randrange(cfg.vocab_size) for _ in range(prompt_len)],
                                  SamplingParams(max_tokens=2)))
    first = len(engine.metrics)
    results, stall = {}, 0.0
    while engine.has_unfinished_requests():
        start = time.perf_counter()
        outputs = engine.step()
        seconds = time.perf_counter() - start
        if engine.metrics[-1].num_decode_tokens:
            stall = max(stall, seconds)
        results.update({o.request_id: o for o in outputs if o.finished})
    tokens = [m.num_prefill_tokens + m.num_decode_tokens for m in engine.metrics[first:]]
    return StallResult(tokens, max(tokens), stall, statistics.median(warmup[1:]),
                       [results[i].outputs[0].token_ids for i in ids])
