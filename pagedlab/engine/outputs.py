"""What the engine returns (vLLM's ``RequestOutput`` / ``CompletionOutput``) and what it measures each step."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass


@dataclass(slots=True)
class CompletionOutput:
    """One completion of a prompt.

    Attributes:
        index: 0 .. n - 1. token_ids: the generated token ids (the prompt not included).
        finished: True once it has ``max_tokens`` tokens.
    """

    index: int
    token_ids: list[int]
    finished: bool


@dataclass(slots=True)
class RequestOutput:
    """A request's state after a step, or its result after ``generate``.

    Attributes:
        request_id: its id. prompt_token_ids: its prompt.
        outputs: its completions, by index. finished: True when every completion is.
        num_cached_tokens: prompt tokens whose prefill the prefix cache saved (at its first admission).
    """

    request_id: Hashable
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool
    num_cached_tokens: int = 0


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
