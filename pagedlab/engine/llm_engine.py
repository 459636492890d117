"""LLMEngine: requests in, tokens out, one continuously batched step at a time (vLLM's API, in small)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Hashable, Sequence as Seq

import torch

from pagedlab.engine.backends import select_backend
from pagedlab.engine.model_runner import ModelRunner
from pagedlab.engine.outputs import CompletionOutput, RequestMetrics, RequestOutput, StepMetrics
from pagedlab.engine.sampling import SamplingParams, per_prompt, sample
from pagedlab.engine.scheduler import Preemption, Scheduler, SchedulerOutput
from pagedlab.engine.sequence import Request, Sequence, Status
from pagedlab.paged import BlockManager, KVCache
from pagedlab.paged.events import add_subscriber, notify
from pagedlab.validate import blocks_for, check_count


class LLMEngine:
    """A continuous-batching engine over the paged KV cache.

    Args:
        model: a :class:`~pagedlab.models.tiny_gpt.TinyGPT` or :class:`~pagedlab.models.llama.Llama` (any module with their
            ``config`` and call signature).
        num_blocks: GPU blocks in the KV pool. block_size: tokens per block.
        num_cpu_blocks: CPU blocks for preemption by swapping (0: none).
        max_num_seqs: most sequences in one step. max_num_batched_tokens: most tokens in one step, at least
            ``max_num_seqs`` (every running sequence decodes each step); without chunked prefill a sequence's
            whole prefill, a recomputation included, must fit in it (``add_request`` refuses one that cannot).
        enable_prefix_caching: reuse the K/V of full blocks whose whole prefix was computed before.
        preemption: ``"recompute"`` or ``"swap"`` (needs ``num_cpu_blocks``).
        watermark: fraction of the GPU pool that admission leaves free for running sequences to grow into
            (vLLM's default, 1%).
        enable_chunked_prefill: prefill in chunks of the token budget a step has left, mixed with the decodes
            (vLLM's name): one long prompt no longer stalls every decode for a step.
        tokenizer: a Hugging Face tokenizer: completions get their ``text``, end at its EOS token, and may use
            stop strings (None: token ids only, every completion runs to ``max_tokens`` or a stop token).
        attention_backend: ``"triton"`` (the course's kernels, the default), ``"torch"``, ``"auto"`` or a
            decode-attention function (:func:`~pagedlab.engine.backends.select_backend`).
        clock: the time source of each request's :class:`RequestMetrics` (seconds).

    Attributes:
        block_manager: the :class:`~pagedlab.paged.BlockManager` (the scheduler's: read it, never change it).
        kv_cache: the :class:`~pagedlab.paged.KVCache`.
        scheduler: the :class:`~pagedlab.engine.scheduler.Scheduler` (its queues).
        metrics: a :class:`StepMetrics` per step so far.
        attention_backend: the :class:`~pagedlab.engine.backends.AttentionBackend` that runs (``.name``, ``.reason``).

    Raises:
        ValueError / TypeError: sizes that are not positive ints, ``max_num_batched_tokens < max_num_seqs``, an
            unknown ``preemption``, ``"swap"`` without a CPU pool, a watermark outside [0, 1), an unknown
            attention backend.
    """

    def __init__(self, model: torch.nn.Module, num_blocks: int, block_size: int = 16, num_cpu_blocks: int = 0,
                 max_num_seqs: int = 64, max_num_batched_tokens: int = 2048, enable_prefix_caching: bool = False,
                 preemption: Preemption = "recompute", watermark: float = 0.01,
                 enable_chunked_prefill: bool = False, tokenizer=None, attention_backend: object = "triton",
                 clock: Callable[[], float] = time.perf_counter) -> None:
        check_count("max_num_seqs", max_num_seqs, 1)
        check_count("max_num_batched_tokens", max_num_batched_tokens, 1)
        if max_num_batched_tokens < max_num_seqs:
            raise ValueError(f"max_num_batched_tokens={max_num_batched_tokens} is smaller than max_num_seqs="
                             f"{max_num_seqs}: a step could not give every running sequence its token; raise it "
                             f"or lower max_num_seqs")
        if preemption not in ("recompute", "swap"):
            raise ValueError(f"preemption must be 'recompute' or 'swap', got {preemption!r}")
        if preemption == "swap" and not num_cpu_blocks:
            raise ValueError("preemption='swap' needs a CPU pool: pass num_cpu_blocks > 0")
        if not isinstance(enable_chunked_prefill, bool):
            raise TypeError(f"enable_chunked_prefill must be a bool, got {type(enable_chunked_prefill).__name__}")
        self.attention_backend = select_backend(attention_backend)
        cfg = model.config
        self.model, self.config = model, cfg
        self.tokenizer, self.clock = tokenizer, clock
        self.eos_token_id = None if tokenizer is None else tokenizer.eos_token_id
        self.block_manager = BlockManager(num_blocks, block_size, num_cpu_blocks, enable_prefix_caching, watermark)
        param = next(model.parameters())
        self.kv_cache = KVCache(cfg.n_layers, num_blocks, block_size, cfg.n_kv_heads, cfg.head_dim, num_cpu_blocks,
                                dtype=param.dtype, device=param.device)
        self.scheduler = Scheduler(self.block_manager, max_num_seqs, max_num_batched_tokens, preemption,
                                   enable_chunked_prefill)
        self.runner = ModelRunner(model, self.kv_cache, self.attention_backend)
        self.metrics: list[StepMetrics] = []
        self._requests: dict[Hashable, Request] = {}
        self._num_arrivals = 0
        self._subscribers: list[Callable[[StepMetrics], None]] = []

    # ---- requests ------------------------------------------------------------------------------------

    def add_request(self, prompt: Seq[int], params: SamplingParams | None = None,
                    request_id: Hashable | None = None, arrival_time: float | None = None) -> Hashable:
        """Queue a prompt (token ids) to complete; returns its request id.

        The default id is the request's arrival number (0, 1, ...), or the next number not in use when an
        explicit id took it. A request that is refused changes nothing (it takes no arrival number).

        ``arrival_time`` (on the engine's clock, default now) is when the request reached the server, the start
        of its time to first token.

        Raises:
            TypeError: ``params`` is not a SamplingParams, the prompt is not a list of ints (bools are not
                token ids), an unhashable ``request_id``.
            ValueError: an empty prompt, a token outside the vocabulary, a request id in use, or a request
                that could never run: longer than the model's positions, more sequences than
                ``max_num_seqs``, more blocks than the pool has (after the watermark), or, without chunked
                prefill, a sequence whose recomputation (prompt and all but its last token) would exceed
                ``max_num_batched_tokens``.
        """
        params = SamplingParams() if params is None else params
        if not isinstance(params, SamplingParams):
            raise TypeError(f"params must be a SamplingParams, got {type(params).__name__}")
        if isinstance(prompt, torch.Tensor):
            prompt = prompt.tolist()
        if not isinstance(prompt, (list, tuple)) or not all(isinstance(t, int) and not isinstance(t, bool)
                                                            for t in prompt):
            raise TypeError("prompt must be a list of token ids (ints, not bools)")
        if request_id is not None:
            try:
                hash(request_id)
            except TypeError:
                raise TypeError(f"request_id must be hashable (a str or an int), got {type(request_id).__name__}"
                                ) from None
        sched, cfg, bs = self.scheduler, self.config, self.block_manager.block_size
        arrival = self._num_arrivals
        if request_id is None:
            request_id = next(i for i in itertools.count(arrival) if i not in self._requests)
        total = len(prompt) + params.max_tokens
        usable = self.block_manager.num_blocks - self.block_manager.watermark_blocks
        budget = sched.max_num_batched_tokens
        problems = [
            (not prompt, "the prompt is empty"),
            (any(not 0 <= t < cfg.vocab_size for t in prompt), f"a token id is outside 0 .. {cfg.vocab_size - 1}"),
            (request_id in self._requests, f"request id {request_id!r} is in use"),
            (total > cfg.n_positions, f"prompt + max_tokens = {total} tokens, past the model's "
                                      f"n_positions={cfg.n_positions}"),
            # Preempted by recomputation, a sequence comes back with every token but the last sampled one.
            (not sched.enable_chunked_prefill and total - 1 > budget,
             f"its sequence of up to {total} tokens, if preempted by recomputation, would need a prefill of "
             f"{total - 1} tokens, more than max_num_batched_tokens={budget}; pass enable_chunked_prefill=True "
             f"or raise max_num_batched_tokens"),
            (params.n > sched.max_num_seqs, f"n={params.n} exceeds max_num_seqs={sched.max_num_seqs}"),
            # The last token is sampled, never stored: a sequence holds at most total - 1 tokens' K/V.
            (params.n * blocks_for(total - 1, bs) > usable, f"its {params.n} sequence(s) of up to {total} tokens need "
                                                        f"{params.n * blocks_for(total - 1, bs)} blocks; the pool has "
                                                        f"{usable} after the watermark, so it could never finish"),
            (params.stop and self.tokenizer is None, f"stop strings {list(params.stop)} need text: pass a tokenizer "
                                                     f"to the engine, or use stop_token_ids"),
            (any(not 0 <= t < cfg.vocab_size for t in params.stop_token_ids),
             f"a stop token id is outside 0 .. {cfg.vocab_size - 1}"),
        ]
        for bad, why in problems:
            if bad:
                raise ValueError(f"cannot add request {request_id!r}: {why}")
        self._num_arrivals += 1
        metrics = RequestMetrics(self.clock() if arrival_time is None else arrival_time)
        request = Request(request_id, list(prompt), params.with_seed(), arrival, self.tokenizer, self.eos_token_id,
                          metrics)
        self._requests[request_id] = request
        sched.add(request)
        return request_id

    def abort_request(self, request_id: Hashable) -> None:
        """Drop an unfinished request: it leaves its queue and every block it holds (GPU or CPU) is freed.

        Raises:
            KeyError: no unfinished request has this id.
        """
        try:
            request = self._requests.pop(request_id)
        except (KeyError, TypeError):
            raise KeyError(f"no unfinished request {request_id!r}; unfinished: {list(self._requests)[:8]}") from None
        self.scheduler.abort(request)

    def has_unfinished_requests(self) -> bool:
        """True while any request is waiting, running or swapped out."""
        s = self.scheduler
        return bool(s.waiting or s.running or s.swapped)

    # ---- the step loop -------------------------------------------------------------------------------

    def step(self) -> list[RequestOutput]:
        """Schedule, perform the K/V moves, run the model once on the batch, sample a token for every sequence
        whose tokens are all computed, and let the scheduler record it (forks, finished sequences).

        Returns:
            A :class:`RequestOutput` for every request that ran in this step (``finished`` says which are done).
        """
        out = self.scheduler.schedule()
        seqs = out.seqs
        batch = tuple((s.seq_id, n) for s, n in zip(seqs, out.num_new_tokens))
        decode_tokens = sum(1 for s, n in zip(seqs, out.num_new_tokens)
                            if n == 1 and len(s.token_ids) - s.num_computed == 1 and s.output_ids)
        prefill_tokens = out.num_batched_tokens - decode_tokens
        new_tokens: list[list[int]] = []
        start = self.clock()
        for seq in seqs:
            if seq.request.metrics.first_scheduled_time is None:
                seq.request.metrics.first_scheduled_time = start
        if seqs:
            logits = self.runner.execute(out)
            greedy = logits.argmax(dim=-1).tolist()
            for i, seq in enumerate(seqs):
                new_tokens.append(self._sample(seq, logits[i], greedy[i]) if out.completes(i) else [])
        else:                   # nothing to run, but a preemption may have swapped blocks out
            self.runner.apply_moves(out)
        ran = self.scheduler.postprocess(out, new_tokens)
        now = self.clock()
        for seq, tokens in zip(seqs, new_tokens):
            if tokens:
                m = seq.request.metrics
                m.last_token_time = now
                m.first_token_time = now if m.first_token_time is None else m.first_token_time
        finished = 0
        for request in ran:
            if request.status == Status.FINISHED:
                request.metrics.finished_time = now
                del self._requests[request.request_id]
                finished += 1
        self._record(out, batch, prefill_tokens, decode_tokens, finished)
        return [self._output(r) for r in ran]

    def generate(self, prompts: Seq[Seq[int]], params: SamplingParams | Seq[SamplingParams] | None = None,
                 use_tqdm: bool = True) -> list[RequestOutput]:
        """Complete every prompt; returns their outputs in the order of ``prompts``.

        Args:
            prompts: lists of token ids.
            params: one :class:`SamplingParams` for all (default greedy, 16 tokens), or one per prompt.
            use_tqdm: show a progress bar (pass False in notebooks compared by nbval: tqdm writes to stderr).

        Raises:
            ValueError: a list of params whose length is not the number of prompts; as :meth:`add_request`
                (the requests already added are aborted, so nothing is left queued).
            RuntimeError: a step scheduled nothing and preempted nothing while requests wait (a scheduler bug:
                raised instead of looping forever).
        """
        from tqdm.auto import tqdm

        ids: list[Hashable] = []
        try:
            for p, sp in zip(prompts, per_prompt(params, len(prompts))):
                ids.append(self.add_request(p, sp))
        except (TypeError, ValueError):
            for request_id in ids:
                self.abort_request(request_id)
            raise
        results: dict[Hashable, RequestOutput] = {}
        with tqdm(total=len(ids), desc="requests", disable=not use_tqdm) as bar:
            while self.has_unfinished_requests():
                for output in self.step():
                    if output.finished:
                        results[output.request_id] = output
                        bar.update(1)
                m = self.metrics[-1]
                if not m.batch and not m.num_preemptions:
                    s = self.scheduler
                    raise RuntimeError(f"a step scheduled nothing while requests wait (waiting "
                                       f"{[r.request_id for r in s.waiting]}, running {[r.request_id for r in s.running]}"
                                       f", swapped {[r.request_id for r in s.swapped]}): the scheduler cannot make "
                                       f"progress")
        return [results[i] for i in ids]

    def subscribe(self, callback: Callable[[StepMetrics], None]) -> Callable[[], None]:
        """Call ``callback(metrics)`` after every step; returns a function that unsubscribes.

        A callback that raises stops no other callback (the manager's rule, :func:`pagedlab.paged.events.notify`):
        the step is done and recorded, every subscriber is told, then the first exception propagates.

        Raises:
            TypeError: ``callback`` is not callable.
        """
        return add_subscriber(self._subscribers, callback)

    # ---- internals -----------------------------------------------------------------------------------

    def _sample(self, seq: Sequence, logits: torch.Tensor, greedy: int) -> list[int]:
        """The new tokens of ``seq`` from its logits: one per completion for a prompt not forked yet, else one."""
        request, params = seq.request, seq.request.params
        indices = range(params.n) if len(request.seqs) < params.n else [seq.index]
        position = len(seq.token_ids)
        return [greedy if params.greedy else sample(logits, params, j, position) for j in indices]

    def _output(self, request: Request) -> RequestOutput:
        done = request.status == Status.FINISHED
        return RequestOutput(request.request_id, request.prompt,
                             [CompletionOutput(s.index, s.output_ids, s.finished, s.text, s.finish_reason,
                                               s.stop_reason) for s in request.seqs],
                             done, request.num_cached_tokens or 0, request.metrics)

    def _record(self, out: SchedulerOutput, batch: tuple[tuple[Hashable, int], ...], prefill_tokens: int,
                decode_tokens: int, finished: int) -> None:
        alloc, cpu, s = self.block_manager.allocator, self.block_manager.cpu_allocator, self.scheduler
        m = StepMetrics(
            step=len(self.metrics), num_running=len(s.running), num_waiting=len(s.waiting),
            num_swapped=len(s.swapped), num_running_seqs=len(batch),
            blocks_used=alloc.num_blocks - alloc.num_free - alloc.num_cached, blocks_free=alloc.num_free,
            blocks_cached=alloc.num_cached, cpu_blocks_used=cpu.num_blocks - cpu.num_free if cpu else 0,
            num_prefill_tokens=prefill_tokens, num_decode_tokens=decode_tokens, num_cached_tokens=out.num_cached_tokens,
            num_preemptions=out.num_preemptions, num_finished=finished, batch=batch)
        self.metrics.append(m)
        notify(self._subscribers, [m])
