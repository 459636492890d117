"""The baseline continuous batching replaces: static batching over contiguous max-length reservations.

Before paged KV caches, a server reserved for every request one contiguous region of K/V memory big enough
for the longest sequence it might become (``max_len`` tokens), and ran requests in fixed batches: a batch
starts together and the next one starts only when its last request has finished. With the same KV memory
as an :class:`~pagedlab.engine.LLMEngine` of ``num_blocks`` blocks, that fits ``num_blocks * block_size //
max_len`` requests at a time, however short they turn out to be.

This runs that policy on the same model, kernels and :class:`~pagedlab.paged.KVCache`: request ``i`` of a batch
owns the contiguous blocks ``i * r .. (i + 1) * r - 1`` (``r = ceil(max_len / block_size)``), written as a block
table, so the comparison with the engine measures the scheduling and the memory policy, nothing else.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Hashable, Sequence as Seq

import torch

from pagedlab.engine.backends import select_backend
from pagedlab.engine.model_runner import ModelRunner
from pagedlab.engine.outputs import CompletionOutput, RequestMetrics, RequestOutput
from pagedlab.engine.sampling import SamplingParams, per_prompt, sample
from pagedlab.engine.scheduler import SchedulerOutput
from pagedlab.engine.sequence import Request
from pagedlab.paged import BlockTable, KVCache
from pagedlab.validate import blocks_for, check_count


class StaticBatchingEngine:
    """Static batches over contiguous reservations of ``max_len`` tokens (see the module docstring).

    The same request API as :class:`~pagedlab.engine.LLMEngine` (``add_request``, ``step``,
    ``has_unfinished_requests``, ``generate``): a step with no batch running starts the next one with up to
    ``batch_size`` waiting requests, in arrival order; the batch then runs until its last request finishes,
    each finished request keeping its reservation until then.

    Args:
        model: as for :class:`~pagedlab.engine.LLMEngine`.
        num_blocks, block_size: the same KV memory as the engine it is compared with.
        max_len: tokens reserved per request (default: the model's ``n_positions``, the longest it can be).
        tokenizer, attention_backend, clock: as for :class:`~pagedlab.engine.LLMEngine`.

    Attributes:
        batch_size: requests that run at once. kv_cache: the pool. steps: model steps run so far.
        computed_tokens: tokens the model computed so far (prompts and decodes).

    Raises:
        ValueError: not even one reservation of ``max_len`` tokens fits in the pool.
    """

    def __init__(self, model: torch.nn.Module, num_blocks: int, block_size: int = 16,
                 max_len: int | None = None, tokenizer=None, attention_backend: object = "triton",
                 clock: Callable[[], float] = time.perf_counter) -> None:
        check_count("num_blocks", num_blocks, 1)
        check_count("block_size", block_size, 1)
        cfg = model.config
        self.max_len = cfg.n_positions if max_len is None else check_count("max_len", max_len, 1)
        self.blocks_per_request = blocks_for(self.max_len, block_size)
        self.batch_size = num_blocks // self.blocks_per_request
        if self.batch_size == 0:
            raise ValueError(f"a reservation of max_len={self.max_len} tokens takes {self.blocks_per_request} blocks "
                             f"of {block_size}; the pool has only {num_blocks}")
        self.block_size, self.config, self.tokenizer, self.clock = block_size, cfg, tokenizer, clock
        param = next(model.parameters())
        self.kv_cache = KVCache(cfg.n_layers, num_blocks, block_size, cfg.n_kv_heads, cfg.head_dim,
                                dtype=param.dtype, device=param.device)
        self.runner = ModelRunner(model, self.kv_cache, select_backend(attention_backend))
        self.steps = 0
        self.computed_tokens = 0
        self.waiting: deque[Request] = deque()
        self.batch: list[Request] = []
        self._num_arrivals = 0

    def add_request(self, prompt: Seq[int], params: SamplingParams | None = None, request_id: Hashable | None = None,
                    arrival_time: float | None = None) -> Hashable:
        """Queue a prompt (token ids); returns its request id (default: its arrival number).

        Raises:
            ValueError: an empty prompt, a token outside the vocabulary, ``n > 1``, or a prompt that with its
                ``max_tokens`` is longer than ``max_len``.
        """
        sp = (params or SamplingParams()).with_seed()
        if not prompt or any(not 0 <= t < self.config.vocab_size for t in prompt):
            raise ValueError(f"the prompt must be token ids in 0 .. {self.config.vocab_size - 1}, and not empty")
        if sp.n != 1:
            raise ValueError("the static baseline generates one completion per prompt (n=1)")
        if len(prompt) + sp.max_tokens > self.max_len:
            raise ValueError(f"a prompt of {len(prompt)} tokens plus max_tokens={sp.max_tokens} exceeds "
                             f"max_len={self.max_len}")
        request_id = self._num_arrivals if request_id is None else request_id
        metrics = RequestMetrics(self.clock() if arrival_time is None else arrival_time)
        eos = None if self.tokenizer is None else self.tokenizer.eos_token_id
        self.waiting.append(Request(request_id, list(prompt), sp, self._num_arrivals, self.tokenizer, eos, metrics))
        self._num_arrivals += 1
        return request_id

    def has_unfinished_requests(self) -> bool:
        """True while a batch runs or requests wait."""
        return bool(self.waiting or self.batch)

    def step(self) -> list[RequestOutput]:
        """Start a batch if none runs, then one model step on its unfinished requests; returns their outputs."""
        if not self.batch:
            r = self.blocks_per_request
            while self.waiting and len(self.batch) < self.batch_size:
                req = self.waiting.popleft()
                req.seqs[0].table = BlockTable(list(range(len(self.batch) * r, (len(self.batch) + 1) * r)), 0,
                                               self.block_size)
                req.metrics.first_scheduled_time = self.clock()
                self.batch.append(req)
        seqs = [req.seqs[0] for req in self.batch if not req.seqs[0].finished]
        if not seqs:
            return []
        for seq in seqs:
            seq.table.num_tokens = len(seq.token_ids)
        batch = SchedulerOutput(seqs, [len(s.token_ids) - s.num_computed for s in seqs])
        logits = self.runner.execute(batch)
        self.computed_tokens += batch.num_batched_tokens
        greedy = logits.argmax(dim=-1).tolist()
        self.steps += 1
        now = self.clock()
        for i, seq in enumerate(seqs):
            seq.num_computed = len(seq.token_ids)
            sp, m = seq.request.params, seq.request.metrics
            seq.append(greedy[i] if sp.greedy else sample(logits[i], sp, 0, len(seq.token_ids)))
            m.first_token_time = m.first_token_time or now
            m.last_token_time = now
            if seq.finished:
                m.finished_time = now
        outputs = [RequestOutput(s.request.request_id, s.request.prompt,
                                 [CompletionOutput(0, s.output_ids, s.finished, s.text, s.finish_reason, s.stop_reason)],
                                 s.finished, 0, s.request.metrics) for s in seqs]
        # The whole batch runs until its longest request is done; finished requests keep their reservation.
        if all(req.seqs[0].finished for req in self.batch):
            self.batch = []
        return outputs

    def generate(self, prompts: Seq[Seq[int]], params: SamplingParams | Seq[SamplingParams] | None = None
                 ) -> list[RequestOutput]:
        """Complete every prompt once, ``batch_size`` requests at a time, in order.

        Args:
            prompts: lists of token ids. params: one :class:`SamplingParams` for all, or one per prompt (n = 1).

        Raises:
            ValueError: as :meth:`add_request` (nothing is queued then).
        """
        params = per_prompt(params, len(prompts))
        ids, waiting = [], len(self.waiting)
        try:
            ids = [self.add_request(p, sp) for p, sp in zip(prompts, params)]
        except ValueError:
            while len(self.waiting) > waiting:
                self.waiting.pop()
            raise
        results = {}
        while self.has_unfinished_requests():
            results.update((o.request_id, o) for o in self.step() if o.finished)
        return [results[i] for i in ids]
