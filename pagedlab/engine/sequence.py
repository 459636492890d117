"""A request and its sequences, as the scheduler sees them.

A :class:`Request` (vLLM v0's *sequence group*) is one prompt with its :class:`SamplingParams`. It starts
with one :class:`Sequence`; after the prompt's prefill it forks into ``n`` (one per completion), which
share the prompt's blocks until each writes its own tokens (copy-on-write).

A sequence's ``token_ids`` are its prompt and the tokens generated so far; the K/V of the first
``num_computed`` of them are in the cache. Between steps exactly one token (the last one sampled) is not
computed yet while the sequence decodes; after admission or a recomputation, many are.
"""

from __future__ import annotations

from collections.abc import Hashable
from enum import Enum
from typing import TYPE_CHECKING

from pagedlab.engine.detokenizer import IncrementalDetokenizer
from pagedlab.engine.outputs import RequestMetrics
from pagedlab.paged.block_table import BlockTable

if TYPE_CHECKING:       # the scheduler's side of the engine imports no torch; sampling does
    from pagedlab.engine.sampling import SamplingParams


class Status(Enum):
    """Where a request is: which queue of the scheduler, or finished."""

    WAITING = "waiting"      # not admitted yet, or preempted by recomputation
    RUNNING = "running"      # its sequences' K/V are in the GPU pool
    SWAPPED = "swapped"      # preempted by swapping: its K/V are in the CPU pool
    FINISHED = "finished"


class Sequence:
    """One completion of a request.

    Attributes:
        seq_id: ``(request_id, index)``, the id the block manager knows it by.
        request: the request it belongs to. index: its completion index, 0 .. n - 1.
        token_ids: prompt then generated tokens. prompt_len: how many of them are the prompt.
        num_computed: tokens at the start of ``token_ids`` whose K/V are in the cache.
        table: its :class:`~pagedlab.paged.BlockTable` while it holds blocks (the block manager's live object).
        max_len: its longest length (its request's ``max_len``).
        finish_reason: ``"stop"`` or ``"length"`` once finished, else None. stop_reason: the stop string or
            stop token id that ended it (None for EOS and length).
        detokenizer: its text so far (an :class:`~pagedlab.engine.detokenizer.IncrementalDetokenizer`), when
            the request has a tokenizer and ``params.detokenize``.
        logprobs: per generated token, ``{token id: Logprob}`` (the chosen token first), when the request asked
            for them (else None). cumulative_logprob: the sum of the chosen tokens' log-probabilities (None alike).
    """

    __slots__ = ("seq_id", "request", "index", "token_ids", "prompt_len", "num_computed", "table",
                 "finish_reason", "stop_reason", "detokenizer", "logprobs", "cumulative_logprob")

    def __init__(self, request: Request, index: int, token_ids: list[int], num_computed: int = 0) -> None:
        self.seq_id = (request.request_id, index)
        self.request, self.index = request, index
        self.token_ids = token_ids
        self.prompt_len = request.prompt_len
        self.num_computed = num_computed
        self.table: BlockTable | None = None
        self.finish_reason: str | None = None
        self.stop_reason: int | str | None = None
        params = request.params
        self.detokenizer = None if request.tokenizer is None or not params.detokenize else IncrementalDetokenizer(
            request.tokenizer, request.prompt, params.stop, params.include_stop_str_in_output, params.min_tokens,
            params.skip_special_tokens, params.spaces_between_special_tokens)
        self.logprobs: list[dict] | None = None if params.logprobs is None else []
        self.cumulative_logprob: float | None = None if params.logprobs is None else 0.0

    @property
    def max_len(self) -> int:
        """Its longest length (its request's)."""
        return self.request.max_len

    @property
    def output_ids(self) -> list[int]:
        """The generated tokens."""
        return self.token_ids[self.prompt_len:]

    @property
    def is_decoding(self) -> bool:
        """True when the one token left to compute is the last one sampled: the next step decodes it. The engine's
        one definition of a decode (the scheduler serves decodes first; the step metrics count them). A prefill's
        last token, or a one-token chunk, is no decode, although the model runner sends every one-token
        computation through the decode kernel (a kernel choice, not this)."""
        return len(self.token_ids) - self.num_computed == 1 and len(self.token_ids) > self.prompt_len

    @property
    def finished(self) -> bool:
        """True once it stopped or has ``max_tokens`` tokens."""
        return self.finish_reason is not None

    @property
    def text(self) -> str:
        """The generated text so far ("" without a tokenizer)."""
        return "" if self.detokenizer is None else self.detokenizer.text

    def append(self, token_id: int) -> None:
        """Add a sampled token, then decide whether the sequence is finished, in vLLM V1's order
        (``vllm/v1/core/sched/utils.py``, ``check_stop``): once it has ``min_tokens`` tokens, EOS (unless
        ``ignore_eos``) or a stop token ends it (``"stop"``); ``max_tokens`` tokens end it (``"length"``). Then the
        text grows (the stopping token's text left out unless ``include_stop_str_in_output``) and a stop string
        found in it ends it too (``"stop"``, the string as ``stop_reason``, whatever ended it before, as vLLM's
        output processor does)."""
        self.token_ids.append(token_id)
        request, params = self.request, self.request.params
        if len(self.token_ids) - self.prompt_len >= params.min_tokens:
            if token_id == request.eos_token_id and not params.ignore_eos:
                self.finish_reason = "stop"
            elif token_id in params.stop_token_ids:
                self.finish_reason, self.stop_reason = "stop", token_id
        if self.finish_reason is None and len(self.token_ids) >= self.max_len:
            self.finish_reason = "length"
        if self.detokenizer is not None:
            self.detokenizer.add(token_id, stopped=self.finish_reason == "stop")
            if self.detokenizer.stop_string is not None:
                self.finish_reason, self.stop_reason = "stop", self.detokenizer.stop_string

    def __repr__(self) -> str:
        return f"Sequence({self.seq_id}, tokens={len(self.token_ids)}, computed={self.num_computed})"


class Request:
    """One prompt to complete ``params.n`` times.

    Attributes:
        request_id: its id. prompt: the prompt's token ids. params: its :class:`SamplingParams` (seeded).
        arrival: order of arrival (the scheduler preempts the newest, i.e. the highest arrival).
        seqs: its sequences: one until the prompt is computed, then ``n``.
        status: its :class:`Status`.
        num_cached_tokens: prompt tokens the prefix cache held at its first admission (None before).
        tokenizer: decodes its completions' text (None: no text, no stop strings).
        eos_token_id: the token that ends a completion (None: none).
        max_len: the longest a sequence gets, ``prompt_len + max_tokens`` (the scheduler cuts it at
            ``max_model_len``).
        metrics: its :class:`~pagedlab.engine.outputs.RequestMetrics` (None when the engine keeps no times).
        bad_words: the token sequences of ``params.bad_words`` (tokenized by the engine).
        prompt_logprobs: when ``params.prompt_logprobs`` is set, one entry per prompt token: None for the first,
            then ``{token id: Logprob}`` (None until computed); else None.
    """

    __slots__ = ("request_id", "prompt", "params", "arrival", "seqs", "status", "num_cached_tokens", "tokenizer",
                 "eos_token_id", "metrics", "bad_words", "prompt_logprobs", "max_len")

    def __init__(self, request_id: Hashable, prompt: list[int], params: SamplingParams, arrival: int,
                 tokenizer=None, eos_token_id: int | None = None, metrics: RequestMetrics | None = None,
                 bad_words: tuple[tuple[int, ...], ...] = ()) -> None:
        self.request_id, self.prompt, self.params, self.arrival = request_id, prompt, params, arrival
        self.tokenizer, self.eos_token_id, self.metrics = tokenizer, eos_token_id, metrics
        self.bad_words = bad_words
        self.max_len = len(prompt) + params.max_tokens
        self.prompt_logprobs: list[dict | None] | None = None if params.prompt_logprobs is None else \
            [None] * len(prompt)
        self.seqs = [Sequence(self, 0, list(prompt))]
        self.status = Status.WAITING
        self.num_cached_tokens: int | None = None

    @property
    def wants_prompt_logprobs(self) -> bool:
        """True while prompt log-probabilities are asked for and some are missing."""
        p = self.prompt_logprobs
        return p is not None and len(p) > 1 and p[-1] is None

    @property
    def prompt_len(self) -> int:
        """Tokens in the prompt."""
        return len(self.prompt)

    @property
    def live_seqs(self) -> list[Sequence]:
        """Its unfinished sequences (the ones that hold blocks)."""
        return [s for s in self.seqs if not s.finished]

    @property
    def awaiting_fork(self) -> bool:
        """True until its ``n`` completions exist: its first sequence's next sampled tokens are ``n``, one per
        completion (the engine draws them from one row of logits, the scheduler forks the others from them). The
        one statement of the fork rule."""
        return len(self.seqs) < self.params.n

    @property
    def max_num_seqs(self) -> int:
        """Sequences it will run at once: ``n`` before the fork, its live ones after."""
        return self.params.n if len(self.seqs) == 1 else len(self.live_seqs)

    def __repr__(self) -> str:
        return f"Request({self.request_id!r}, {self.status.value}, seqs={len(self.seqs)})"
