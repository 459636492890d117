"""LLMEngine: requests in, tokens out, one continuously batched step at a time (vLLM's API, in small)."""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable, Hashable, Mapping, Sequence as Seq

import torch

from pagedlab.engine.backends import select_backend
from pagedlab.engine.config import EngineConfig
from pagedlab.engine.model_runner import ModelRunner
from pagedlab.engine.outputs import CompletionOutput, Logprob, RequestMetrics, RequestOutput, StepMetrics
from pagedlab.engine.sampler import Row, TopLogprobs, nothing_to_draw, sample, top_logprobs
from pagedlab.engine.sampling import SamplingParams, per_prompt
from pagedlab.engine.scheduler import Scheduler, SchedulerOutput
from pagedlab.engine.sequence import Request, Sequence, Status
from pagedlab.engine.static import StaticScheduler
from pagedlab.paged import BlockManager, KVCache
from pagedlab.paged.events import add_subscriber, notify


DECODE_TABLE_AT = 64
"""Log-probability entries per position past which the engine decodes the whole vocabulary's texts once."""


class LLMEngine:
    """A continuous-batching engine over the paged KV cache.

    ``LLMEngine(model, num_blocks=64, block_size=16, ...)``: the keyword arguments are the settings of
    :class:`~pagedlab.engine.config.EngineConfig` (``max_model_len``, ``num_blocks`` or ``kv_cache_space`` /
    ``gpu_memory_utilization``, ``block_size``, ``num_cpu_blocks`` / ``swap_space``, ``max_num_seqs``,
    ``max_num_batched_tokens``, ``enable_chunked_prefill``, ``enable_prefix_caching``, ``preemption``,
    ``watermark``, ``attention_backend``, ``batching``, ``static_max_len``, ``seed``), or pass a built ``config``.

    Args:
        model: a :class:`~pagedlab.models.tiny_gpt.TinyGPT` or :class:`~pagedlab.models.llama.Llama` (any module with their
            ``config`` and call signature).
        config: the settings, built (None: from ``settings``).
        tokenizer: a Hugging Face tokenizer: completions get their ``text``, end at its EOS token, and may use
            stop strings and bad words (None: token ids only; a completion ends at ``max_tokens`` or a stop token).
        clock: the time source of each request's :class:`RequestMetrics` (seconds).
        generation_config: the model's ``generation_config.json`` as a dict (None: none). Its ``eos_token_id`` ids
            other than the tokenizer's end completions too, as vLLM's ``update_from_generation_config``
            (``vllm/sampling_params.py``) does: they join each request's ``stop_token_ids`` (so ``stop_reason`` is
            the id) unless ``ignore_eos``, and ``min_tokens`` masks them either way.

    Attributes:
        engine_config: the :class:`~pagedlab.engine.config.EngineConfig`. config: the model's config.
        block_manager: the :class:`~pagedlab.paged.BlockManager` (the scheduler's: read it, never change it).
        kv_cache: the :class:`~pagedlab.paged.KVCache`.
        scheduler: the :class:`~pagedlab.engine.scheduler.Scheduler` (its queues), or the
            :class:`~pagedlab.engine.static.StaticScheduler` with ``batching="static"``.
        metrics: a :class:`StepMetrics` per step so far.
        attention_backend: the :class:`~pagedlab.engine.backends.AttentionBackend` that runs (``.name``, ``.reason``).

    Raises:
        TypeError: an unknown setting, or one of the wrong kind (named). ValueError: as
            :class:`~pagedlab.engine.config.EngineConfig` and its ``for_model``.
    """

    def __init__(self, model: torch.nn.Module, config: EngineConfig | None = None, *, tokenizer=None,
                 clock: Callable[[], float] = time.perf_counter, generation_config: Mapping | None = None,
                 **settings) -> None:
        if config is None:
            config = EngineConfig.from_settings("LLMEngine", settings)
        elif not isinstance(config, EngineConfig) or settings:
            raise TypeError(f"LLMEngine takes its settings as keyword arguments (LLMEngine(model, num_blocks=64, "
                            f"block_size=16)) or one EngineConfig, got config={type(config).__name__}"
                            + (f" and {sorted(settings)}" if settings else ""))
        self.engine_config = c = config.for_model(model)
        self.attention_backend = select_backend(c.attention_backend)
        cfg = model.config
        self.model, self.config = model, cfg
        self.tokenizer, self.clock = tokenizer, clock
        self.eos_token_id = None if tokenizer is None else tokenizer.eos_token_id
        eos_ids = (generation_config or {}).get("eos_token_id")
        eos_ids = [] if eos_ids is None else [eos_ids] if isinstance(eos_ids, int) else eos_ids
        self.other_eos_ids = frozenset(eos_ids) - {self.eos_token_id}
        static = c.batching == "static"
        self.block_manager = BlockManager(c.num_blocks, c.block_size, c.num_cpu_blocks, c.enable_prefix_caching,
                                          0.0 if static else c.watermark, c.new_eviction_policy())
        param = next(model.parameters())
        self.kv_cache = KVCache(cfg.n_layers, c.num_blocks, c.block_size, cfg.n_kv_heads, cfg.head_dim,
                                c.num_cpu_blocks, dtype=param.dtype, device=param.device)
        self.scheduler: Scheduler = (StaticScheduler if static else Scheduler)(self.block_manager, c)
        self.runner = ModelRunner(model, self.kv_cache, self.attention_backend)
        self.metrics: list[StepMetrics] = []
        self._requests: dict[Hashable, Request] = {}
        self._num_arrivals = 0
        self._rng = random.Random(c.seed)
        self._subscribers: list[Callable[[StepMetrics], None]] = []
        self._vocab_texts: list[str] | None = None

    # ---- requests ------------------------------------------------------------------------------------

    def add_request(self, prompt: Seq[int], params: SamplingParams | None = None,
                    request_id: Hashable | None = None, arrival_time: float | None = None) -> Hashable:
        """Queue a prompt (token ids) to complete; returns its request id.

        The default id is the request's arrival number as a string (``"0"``, ``"1"``, ...; vLLM's ids are
        strings), or the next number not in use. A request that is refused changes nothing (it takes no arrival
        number). The engine keeps a checked copy of ``params`` (default: ``SamplingParams()``, which samples at
        temperature 1.0, as vLLM); ``max_tokens=None`` becomes what ``max_model_len`` leaves after the prompt.

        ``arrival_time`` (on the engine's clock, default now) is when the request reached the server, the start
        of its time to first token.

        Raises:
            TypeError: ``params`` is not a SamplingParams, the prompt is not a list of ints (bools are not
                token ids), an unhashable ``request_id``; a field of ``params`` of the wrong kind.
            ValueError: an empty prompt, a token outside the vocabulary (prompt, stop tokens, allowed tokens,
                logit bias), a request id in use, stop strings or bad words without a tokenizer, ``logprobs`` or
                ``prompt_logprobs`` past ``max_logprobs``, allowed tokens all masked, ``min_tokens`` past what
                ``max_tokens=None`` becomes (vLLM's ``min_tokens must be less than or equal to max_tokens``), or a
                request that could never run (:meth:`Scheduler.refusal
                <pagedlab.engine.scheduler.Scheduler.refusal>`: a prompt of ``max_model_len`` tokens or more, more
                sequences than ``max_num_seqs`` or blocks than the pool has). A prompt plus ``max_tokens`` past
                ``max_model_len`` is served, and ends at ``max_model_len`` (``"length"``), as in vLLM.
        """
        params = SamplingParams() if params is None else params
        if not isinstance(params, SamplingParams):
            raise TypeError(f"params must be a SamplingParams, got {type(params).__name__}")
        if isinstance(prompt, torch.Tensor):
            prompt = prompt.tolist()
        if not isinstance(prompt, (list, tuple)) or not all(isinstance(t, int) and not isinstance(t, bool)
                                                            for t in prompt):
            raise TypeError(f"prompt must be a list of token ids (ints, not bools), got {type(prompt).__name__}"
                            + (" (LLM.generate takes text)" if isinstance(prompt, str) else ""))
        if request_id is not None:
            try:
                hash(request_id)
            except TypeError:
                raise TypeError(f"request_id must be hashable (a str), got {type(request_id).__name__}") from None
        params = params.clone(self._rng)
        cfg, vocab = self.config, self.config.vocab_size
        arrival = self._num_arrivals
        if request_id is None:
            request_id = next(str(i) for i in itertools.count(arrival) if str(i) not in self._requests)
        if params.max_tokens is None:
            room = self.engine_config.max_model_len - len(prompt)
            # vLLM checks min_tokens only once max_tokens is known (vllm/v1/engine/input_processor.py); a prompt
            # with no room left is refused by the scheduler, naming its length.
            if room >= 1 and params.min_tokens > room:
                raise ValueError(f"cannot add request {request_id!r}: min_tokens={params.min_tokens} exceeds "
                                 f"max_tokens={room}, what max_model_len={self.engine_config.max_model_len} leaves "
                                 f"after the prompt's {len(prompt)} tokens (max_tokens=None); lower min_tokens or "
                                 f"shorten the prompt")
            params.max_tokens = max(1, room)
        outside = lambda ids: any(not 0 <= t < vocab for t in ids)     # noqa: E731
        problems = [
            (not prompt, "the prompt is empty"),
            (outside(prompt), f"a token id is outside 0 .. {vocab - 1}"),
            (request_id in self._requests, f"request id {request_id!r} is in use"),
            (params.stop and self.tokenizer is None, f"stop strings {list(params.stop)} need text: pass a tokenizer "
                                                     f"to the engine, or use stop_token_ids"),
            (params.bad_words and self.tokenizer is None, "bad_words need a tokenizer: pass one to the engine"),
            (outside(params.stop_token_ids), f"a stop token id is outside 0 .. {vocab - 1}"),
            (outside(params.allowed_token_ids or ()), f"an allowed token id is outside 0 .. {vocab - 1}"),
            (outside(params.logit_bias or {}), f"a logit_bias token id is outside 0 .. {vocab - 1}"),
        ] + [(self._over_max_logprobs(getattr(params, name)), f"{name}={getattr(params, name)} asks for more than "
              f"max_logprobs={self.engine_config.max_logprobs} (vLLM's limit; -1 is the whole vocabulary): raise "
              f"the engine's max_logprobs (-1: no limit)") for name in ("logprobs", "prompt_logprobs")]
        for bad, why in problems:
            if bad:
                raise ValueError(f"cannot add request {request_id!r}: {why}")
        if self.other_eos_ids and not params.ignore_eos:
            params.stop_token_ids = tuple(params.stop_token_ids) + tuple(
                sorted(self.other_eos_ids - set(params.stop_token_ids)))
        bad_words = self._bad_words(params.bad_words)
        self._check_some_token_allowed(request_id, params, bad_words)
        metrics = RequestMetrics(self.clock() if arrival_time is None else arrival_time)
        request = Request(request_id, list(prompt), params, arrival, self.tokenizer, self.eos_token_id, metrics,
                          bad_words)
        self.scheduler.add(request)                  # raises for a request that could never run
        self._num_arrivals += 1
        self._requests[request_id] = request
        return request_id

    def abort_request(self, request_id: Hashable) -> None:
        """Drop an unfinished request: it leaves its queue and every block it holds (GPU or CPU) is freed.

        An id of no unfinished request (finished already, never added) is ignored, as vLLM V1 ignores it
        (``vllm/v1/engine/output_processor.py``, ``abort_requests``): a request may finish between the caller's
        decision and the call.
        """
        try:
            request = self._requests.pop(request_id, None)
        except TypeError:           # unhashable: no request has it
            return
        if request is not None:
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

        Raises:
            ValueError: a request has nothing left to draw: its ``allowed_token_ids`` are all masked by a bad word
                its last tokens begin (``allowed_token_ids=[a]``, ``bad_words=["a a"]``, after one ``a``) or by
                ``min_tokens``; the message names the request and those parameters. The check comes before
                anything is scheduled, so the step changes nothing (no request, block or token): abort that
                request (:meth:`abort_request`) and step on; the others generate what they would have without it.
                vLLM V1 would draw token 0 there, a token the request forbade; it answers a request that cannot
                go on (a grammar that rejects every token) by finishing that one request and serving the rest,
                which is what aborting it does here, with the error said instead of a silent token.
        """
        self._check_something_to_draw()
        out = self.scheduler.schedule()
        seqs = out.seqs
        batch = tuple((s.seq_id, n) for s, n in zip(seqs, out.num_new_tokens))
        decode_tokens = sum(1 for s in seqs if s.is_decoding)
        prefill_tokens = out.num_batched_tokens - decode_tokens
        start = self.clock()
        for seq in seqs:
            if seq.request.metrics.first_scheduled_time is None:
                seq.request.metrics.first_scheduled_time = start
        new_tokens: list[list[int]] = [[] for _ in seqs]
        drawn: list[tuple[int, int, int, TopLogprobs | None]] = []
        if seqs:
            prompt_rows = [i for i, s in enumerate(seqs) if s.request.wants_prompt_logprobs]
            logits, row_logits = self.runner.execute(out, prompt_rows)
            for i, rows in zip(prompt_rows, row_logits):
                self._prompt_logprobs(seqs[i], rows)
            drawn = self._sample(out, logits)
            for i, _, token, _ in drawn:
                new_tokens[i].append(token)
        else:                   # nothing to run, but a preemption may have swapped blocks out
            self.runner.apply_moves(out)
        ran = self.scheduler.postprocess(out, new_tokens)
        for i, completion, token, top in drawn:
            if top is not None:       # after postprocess: a fork's completions exist now
                target = next(s for s in seqs[i].request.seqs if s.index == completion)
                target.logprobs.append(self._logprob_dict(top, token, target.request.params.detokenize))
                target.cumulative_logprob += top.token_logprob
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
                 use_tqdm: bool | Callable = True) -> list[RequestOutput]:
        """Complete every prompt; returns their outputs in the order of ``prompts``.

        Args:
            prompts: a list of prompts, each a list of token ids.
            params: one :class:`SamplingParams` for all (None: ``SamplingParams()``), or one per prompt.
            use_tqdm: show a progress bar of finished requests with the output tokens per second (vLLM's), or a
                tqdm-like class to draw it (pass False in notebooks compared by nbval: tqdm writes to stderr).

        Raises:
            TypeError: ``prompts`` is not a list of lists of ints (a string, bytes, an int, None), or as
                :meth:`add_request`. ValueError: a list of params whose length is not the number of prompts; as
                :meth:`add_request`. Either way nothing is left queued. ValueError: a request with nothing left
                to draw (:meth:`step`): every request this call added is aborted, so nothing is left queued either.
            RuntimeError: a step scheduled nothing and preempted nothing while requests wait (a scheduler bug:
                raised instead of looping forever).
        """
        if isinstance(prompts, (str, bytes)) or not isinstance(prompts, Seq) or any(
                isinstance(p, int) for p in prompts):
            raise TypeError(f"prompts must be a list of prompts, each a list of token ids, got "
                            f"{type(prompts).__name__}")
        if not (isinstance(use_tqdm, bool) or callable(use_tqdm)):
            raise TypeError(f"use_tqdm must be a bool or a tqdm-like class, got {type(use_tqdm).__name__}")
        params = per_prompt(params, len(prompts))
        ids: list[Hashable] = []
        try:
            for p, sp in zip(prompts, params):
                ids.append(self.add_request(p, sp))
        except (TypeError, ValueError):
            for request_id in ids:
                self.abort_request(request_id)
            raise
        results: dict[Hashable, RequestOutput] = {}
        with _progress(use_tqdm, len(ids)) as bar:
            start, generated = time.perf_counter(), 0
            while self.has_unfinished_requests():
                try:
                    outputs = self.step()
                except ValueError:
                    for request_id in ids:
                        self.abort_request(request_id)
                    raise
                for output in outputs:
                    if output.finished and output.request_id in ids:
                        results[output.request_id] = output
                        generated += sum(len(c.token_ids) for c in output.outputs)
                        bar.set_postfix_str(f"output {generated / (time.perf_counter() - start):.1f} toks/s",
                                            refresh=False)
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

    def _sample(self, out: SchedulerOutput, logits: torch.Tensor) -> list[tuple[int, int, int, TopLogprobs | None]]:
        """Draw the step's tokens: ``(index in the batch, completion index, token, log-probabilities or None)``;
        ``n`` draws from one row for a prompt just computed of a request not forked yet, else one."""
        rows, src = [], []
        for i, seq in enumerate(out.seqs):
            if not out.completes(i):
                continue
            request = seq.request
            fork = request.awaiting_fork
            for j in (range(request.params.n) if fork else [seq.index]):
                rows.append(Row(request.params, request.prompt, [] if fork else seq.output_ids, j,
                                self.eos_token_id, request.bad_words, self.other_eos_ids))
                src.append(i)
        if not rows:
            return []
        picked = logits[src] if src != list(range(len(logits))) else logits
        tokens = sample(picked, rows)
        want = [k for k, r in enumerate(rows) if r.params.logprobs is not None]
        tops: list[TopLogprobs | None] = [None] * len(rows)
        for k, top in zip(want, top_logprobs(picked[want], torch.tensor([tokens[k] for k in want],
                                                                        device=logits.device),
                                             [rows[k].params.logprobs for k in want])):
            tops[k] = top
        return list(zip(src, [r.completion for r in rows], tokens, tops))

    def _prompt_logprobs(self, seq: Sequence, logits: torch.Tensor) -> None:
        """Record the prompt log-probabilities that a chunk's ``(tokens, vocab)`` logits give (position ``p``'s
        logits score prompt token ``p + 1``)."""
        request, first = seq.request, seq.num_computed
        count = min(len(logits), request.prompt_len - 1 - first)
        if count <= 0:
            return
        targets = request.prompt[first + 1:first + 1 + count]
        tops = top_logprobs(logits[:count], torch.tensor(targets, device=logits.device),
                            [request.params.prompt_logprobs] * count)
        for p, (token, top) in enumerate(zip(targets, tops), start=first + 1):
            request.prompt_logprobs[p] = self._logprob_dict(top, token, request.params.detokenize)

    def _logprob_dict(self, top: TopLogprobs, token: int, detokenize: bool) -> dict[int, Logprob]:
        """vLLM's form: ``{token id: Logprob}``, the chosen token first, then the most likely ones; no texts with
        ``detokenize=False`` (vLLM gives such a request no tokenizer: ``vllm/v1/engine/output_processor.py``)."""
        texts = self._token_texts(len(top.top_ids) + 1) if detokenize else lambda t: None
        entries = {token: Logprob(top.token_logprob, top.rank, texts(token))}
        # One comprehension: with logprobs=-1 this runs once per vocabulary entry (1.7x faster than a loop).
        entries.update({t: Logprob(lp, rank, texts(t)) for rank, t, lp in
                        zip(range(1, len(top.top_ids) + 1), top.top_ids, top.top_logprobs) if t != token})
        return entries

    def _token_texts(self, count: int) -> Callable[[int], str | None]:
        """The text of one token id (``tokenizer.decode([id])``, vLLM's ``decoded_token``), for ``count`` of them.

        Past :data:`DECODE_TABLE_AT` entries (``logprobs=-1``: the whole vocabulary, per position), the whole
        vocabulary is decoded once, in one ``batch_decode``, and kept: decoding 49,152 entries one call at a time
        cost 0.7 s per position."""
        if self.tokenizer is None:
            return lambda t: None
        if self._vocab_texts is None and count > DECODE_TABLE_AT:
            self._vocab_texts = self.tokenizer.batch_decode([[t] for t in range(self.config.vocab_size)])
        if self._vocab_texts is not None:
            return self._vocab_texts.__getitem__
        decode = self.tokenizer.decode
        return lambda t: decode([t])

    def _over_max_logprobs(self, num: int | None) -> bool:
        """True when ``num`` log-probabilities per position (-1: the vocabulary) pass ``max_logprobs``."""
        limit, vocab = self.engine_config.max_logprobs, self.config.vocab_size
        return num is not None and (vocab if num == -1 else num) > (vocab if limit == -1 else limit)

    def _check_something_to_draw(self) -> None:
        """Raise, before a step changes anything, for an unfinished sequence whose next draw has no allowed token
        left (:func:`~pagedlab.engine.sampler.nothing_to_draw`; see :meth:`step`)."""
        for request in self._requests.values():
            params = request.params
            if not params.allowed_token_ids:
                continue
            for seq in request.live_seqs:
                if nothing_to_draw(Row(params, request.prompt, seq.output_ids, seq.index, self.eos_token_id,
                                       request.bad_words, self.other_eos_ids)):
                    raise ValueError(
                        f"request {request.request_id!r} cannot go on: after {seq.output_ids} every token of "
                        f"allowed_token_ids={list(params.allowed_token_ids)} is masked, by bad_words="
                        f"{list(params.bad_words or [])} or min_tokens={params.min_tokens} (EOS {self.eos_token_id}, "
                        f"stop_token_ids={list(params.stop_token_ids)}); the step changed nothing: abort the request "
                        f"(abort_request) and step on")

    def _check_some_token_allowed(self, request_id: Hashable, params: SamplingParams,
                                  bad_words: tuple[tuple[int, ...], ...]) -> None:
        """Refuse ``allowed_token_ids`` that ``min_tokens`` (EOS, stop tokens) and one-token bad words mask
        entirely from the first token (the sampler would have nothing to draw; vLLM V1 emits token 0)."""
        if nothing_to_draw(Row(params, (), (), 0, self.eos_token_id, bad_words, self.other_eos_ids)):
            raise ValueError(f"cannot add request {request_id!r}: every token of allowed_token_ids="
                             f"{list(params.allowed_token_ids)} is masked, by min_tokens={params.min_tokens} (EOS "
                             f"{self.eos_token_id}, stop_token_ids={list(params.stop_token_ids)}) or bad_words="
                             f"{list(params.bad_words)}: allow another token, or lower min_tokens")

    def _bad_words(self, words: Seq[str]) -> tuple[tuple[int, ...], ...]:
        """Each bad word's tokens, alone and after a space (vLLM's ``update_from_tokenizer`` rule: the spaced form
        is kept when it is another word of as many tokens)."""
        found: list[tuple[int, ...]] = []
        for word in words:
            plain = tuple(self.tokenizer.encode(word.lstrip(), add_special_tokens=False))
            spaced = tuple(self.tokenizer.encode(" " + word.lstrip(), add_special_tokens=False))
            if not plain:
                raise ValueError(f"bad word {word!r} is no token of this tokenizer")
            found.append(plain)
            if spaced and spaced[0] != plain[0] and len(spaced) == len(plain):
                found.append(spaced)
        return tuple(found)

    def _output(self, request: Request) -> RequestOutput:
        done = request.status == Status.FINISHED
        completions = [CompletionOutput(s.index, s.output_ids, s.finished, s.text, s.finish_reason, s.stop_reason,
                                        s.cumulative_logprob, None if s.logprobs is None else list(s.logprobs))
                       for s in request.seqs]
        prompt_logprobs = None if request.prompt_logprobs is None else list(request.prompt_logprobs)
        return RequestOutput(request.request_id, request.prompt, completions, done, request.num_cached_tokens or 0,
                             request.metrics, prompt_logprobs=prompt_logprobs)

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


class _NoBar:
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def set_postfix_str(self, *args, **kwargs) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None


def _progress(use_tqdm: bool | Callable, total: int):
    """The progress bar of :meth:`LLMEngine.generate`: tqdm, a tqdm-like class passed in, or none."""
    if callable(use_tqdm):
        return use_tqdm(total=total, desc="Processed prompts")
    if not use_tqdm:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="Processed prompts")
