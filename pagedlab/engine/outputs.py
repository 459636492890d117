"""What the engine returns (vLLM's ``RequestOutput``, ``CompletionOutput`` and ``Logprob``, with vLLM's field names
as in ``vllm/outputs.py`` and ``vllm/logprobs.py``) and what it measures each step."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass


@dataclass(slots=True)
class Logprob:
    """The log-probability of one token at one position (vLLM's ``Logprob``).

    Attributes:
        logprob: ``log_softmax`` of the model's raw logits at that token. rank: its rank in the vocabulary (1: the
            most likely). decoded_token: its text alone (None without a tokenizer or with ``detokenize=False``).
    """

    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass(slots=True)
class CompletionOutput:
    """One completion of a prompt.

    Attributes:
        index: 0 .. n - 1. token_ids: the generated token ids (the prompt not included; a stop token is).
        finished: True once it has ``max_tokens`` tokens or stopped.
        text: its text, decoded as the tokens came (special tokens skipped, a stop string cut); "" without a
            tokenizer.
        finish_reason: ``"stop"`` (EOS, a stop token or string), ``"length"`` (``max_tokens``), None while running.
        stop_reason: the stop string or stop token id that ended it (None for EOS or length).
        cumulative_logprob: the sum of its tokens' log-probabilities, when ``logprobs`` was asked for (else None).
        logprobs: per token, ``{token id: Logprob}``: the chosen token first, then the ``logprobs`` most likely ones
            (the chosen one only once), when ``logprobs`` was asked for (else None).
    """

    index: int
    token_ids: list[int]
    finished: bool
    text: str = ""
    finish_reason: str | None = None
    stop_reason: int | str | None = None
    cumulative_logprob: float | None = None
    logprobs: list[dict[int, Logprob]] | None = None


@dataclass(slots=True)
class RequestMetrics:
    """When things happened to a request, in seconds on the engine's clock (vLLM's ``RequestMetrics``).

    Attributes:
        arrival_time: ``add_request``. first_scheduled_time: the first step it ran in.
        first_token_time: the end of the step that produced its first token.
        last_token_time: the end of the step that produced its latest token.
        finished_time: the end of the step it finished in. (None: not yet.)
    """

    arrival_time: float
    first_scheduled_time: float | None = None
    first_token_time: float | None = None
    last_token_time: float | None = None
    finished_time: float | None = None

    @property
    def time_to_first_token(self) -> float | None:
        """TTFT: ``first_token_time - arrival_time`` (queueing and prefill)."""
        return None if self.first_token_time is None else self.first_token_time - self.arrival_time


@dataclass(slots=True)
class RequestOutput:
    """A request's state after a step, or its result after ``generate``.

    Attributes:
        request_id: its id. prompt_token_ids: its prompt.
        outputs: its completions, by index. finished: True when every completion is.
        num_cached_tokens: prompt tokens whose prefill the prefix cache saved (at its first admission).
        metrics: its :class:`RequestMetrics`. prompt: the prompt's text when ``LLM`` was given text (else None).
        prompt_logprobs: with ``prompt_logprobs`` asked for, one entry per prompt token: None for the first, then
            ``{token id: Logprob}`` (the prompt's token first); else None.
    """

    request_id: Hashable
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool
    num_cached_tokens: int = 0
    metrics: RequestMetrics | None = None
    prompt: str | None = None
    prompt_logprobs: list[dict[int, Logprob] | None] | None = None

    def time_per_output_token(self, index: int = 0) -> float | None:
        """TPOT of completion ``index``: the time after its first token over the tokens after it (None before two)."""
        m, n = self.metrics, len(self.outputs[index].token_ids)
        if m is None or m.first_token_time is None or m.last_token_time is None or n < 2:
            return None
        return (m.last_token_time - m.first_token_time) / (n - 1)


@dataclass(frozen=True, slots=True)
class StepMetrics:
    """What one ``LLMEngine.step`` did, and the state it left (for the widget and the notebook).

    Attributes:
        step: 0, 1, 2, ...
        num_running, num_waiting, num_swapped: requests in each queue after the step.
        num_running_seqs: sequences decoded or prefilled this step (the batch).
        blocks_used, blocks_free, blocks_cached: the GPU pool after the step (referenced, on the free list,
            cached-free); ``cpu_blocks_used``: the CPU pool.
        num_prefill_tokens: prompt (or recomputed) tokens computed this step; num_decode_tokens: decoded ones.
        num_cached_tokens: prompt tokens admitted this step whose prefill the prefix cache saved.
        num_preemptions: requests preempted this step (by recomputation or swapping).
        num_finished: requests that finished this step.
        batch: ``(seq_id, tokens computed)`` of every sequence in the step, decodes first.
    """

    step: int
    num_running: int
    num_waiting: int
    num_swapped: int
    num_running_seqs: int
    blocks_used: int
    blocks_free: int
    blocks_cached: int
    cpu_blocks_used: int
    num_prefill_tokens: int
    num_decode_tokens: int
    num_cached_tokens: int
    num_preemptions: int
    num_finished: int
    batch: tuple[tuple[Hashable, int], ...] = ()
