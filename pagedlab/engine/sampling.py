"""What to generate and how to pick each token: :class:`SamplingParams` (vLLM's name) and :func:`sample`.

Greedy decoding takes the most likely token. Sampling draws from ``softmax(logits / temperature)``, first
restricted to the ``top_k`` most likely tokens and then to the smallest set whose probabilities reach
``top_p`` (nucleus sampling), with a generator seeded by ``(seed, completion index, position)``: the
generator never depends on the batch or on how often the request was preempted, so given the same logits a
completion draws the same token, and results are reproducible under continuous batching.

The logits themselves can depend on the batch on a GPU, in their last bits: the decode kernel's split count
is chosen from the whole batch (a different summation order), and a sequence preempted by recomputation comes
back through the prefill path (FlashAttention) where it had been decoded by the paged kernel. A draw near a
boundary of the distribution, or a greedy near-tie, can then come out differently. On the CPU (fp32 in the
interpreter, one split) the tests see identical tokens.

A completion ends after ``max_tokens`` tokens (finish reason ``"length"``), or earlier (``"stop"``) at the
model's end-of-sequence token (unless ``ignore_eos``), at one of ``stop_token_ids``, or when its text contains
one of the ``stop`` strings (cut from the text). The engine checks these after every token.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from pagedlab.validate import check_count, check_number


@dataclass(frozen=True)
class SamplingParams:
    """How to complete one prompt (the subset of vLLM's ``SamplingParams`` this engine implements).

    Attributes:
        n: completions per prompt; they share the prompt's blocks (fork, then copy-on-write).
        temperature: 0 for greedy decoding, else the softmax temperature.
        max_tokens: the most tokens to generate per completion.
        seed: makes sampling reproducible; None draws one when the request is added. Ignored when greedy.
        top_p: keep the most likely tokens whose probabilities sum to at least ``top_p`` (0 < top_p <= 1; 1: all).
        top_k: keep the ``top_k`` most likely tokens (0 or -1: all).
        stop: strings that end a completion when its text contains one (a string or a list; not in the text).
        stop_token_ids: token ids that end a completion (kept in its ``token_ids``).
        ignore_eos: do not stop at the model's end-of-sequence token.

    Raises:
        ValueError / TypeError: ``n`` or ``max_tokens`` not a positive int, a negative or non-finite
            temperature, a seed that is not an int, ``top_p`` outside (0, 1], ``top_k`` below -1, ``stop`` that
            is not a string or a list of non-empty strings, ``stop_token_ids`` that are not ints.
    """

    n: int = 1
    temperature: float = 0.0
    max_tokens: int = 16
    seed: int | None = None
    top_p: float = 1.0
    top_k: int = 0
    stop: str | Sequence[str] | None = None
    stop_token_ids: Sequence[int] | None = None
    ignore_eos: bool = False

    def __post_init__(self) -> None:
        for name in ("n", "max_tokens"):
            check_count(f"SamplingParams.{name}", getattr(self, name), 1)
        temperature = check_number("SamplingParams.temperature", self.temperature)
        if not (math.isfinite(temperature) and temperature >= 0):
            raise ValueError(f"SamplingParams.temperature must be a finite float >= 0, got {self.temperature!r}")
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)):
            raise TypeError(f"SamplingParams.seed must be an int or None, got {self.seed!r}")
        if not 0 < check_number("SamplingParams.top_p", self.top_p) <= 1:
            raise ValueError(f"SamplingParams.top_p must be in (0, 1], got {self.top_p!r}")
        check_count("SamplingParams.top_k", self.top_k, -1)  # 0 or -1: all tokens
        stop = [self.stop] if isinstance(self.stop, str) else self.stop
        if stop is not None and (not isinstance(stop, Sequence) or not all(isinstance(x, str) and x for x in stop)):
            raise TypeError(f"SamplingParams.stop must be a string or a list of non-empty strings, got {self.stop!r}")
        ids = self.stop_token_ids
        if ids is not None and (not isinstance(ids, Sequence) or not all(
                isinstance(t, int) and not isinstance(t, bool) for t in ids)):
            raise TypeError(f"SamplingParams.stop_token_ids must be a list of token ids (ints), got {ids!r}")
        if not isinstance(self.ignore_eos, bool):
            raise TypeError(f"SamplingParams.ignore_eos must be a bool, got {self.ignore_eos!r}")
        # Stored as tuples: the parameters are frozen, and shared by every request they are given to.
        object.__setattr__(self, "stop", tuple(stop or ()))
        object.__setattr__(self, "stop_token_ids", tuple(ids or ()))

    @property
    def greedy(self) -> bool:
        """True when decoding is greedy (``temperature == 0``)."""
        return self.temperature == 0

    def with_seed(self) -> SamplingParams:
        """These parameters with a seed: the given one, or a fresh random one when sampling without one."""
        if self.greedy or self.seed is not None:
            return self
        return dataclasses.replace(self, seed=random.getrandbits(63))


def per_prompt(params: SamplingParams | Sequence[SamplingParams] | None, num_prompts: int) -> list[SamplingParams]:
    """One :class:`SamplingParams` per prompt from one for all (None: the defaults) or a list of them.

    Raises:
        ValueError: a list whose length is not ``num_prompts``.
    """
    if params is None or isinstance(params, SamplingParams):
        return [params or SamplingParams()] * num_prompts
    params = list(params)
    if len(params) != num_prompts:
        raise ValueError(f"params has {len(params)} SamplingParams for {num_prompts} prompts; give one, or one each")
    return params


def sample(logits: torch.Tensor, params: SamplingParams, completion: int, position: int) -> int:
    """Draw the token at ``position`` of completion ``completion`` from one row of logits (``temperature > 0``;
    greedy decoding is one ``argmax`` over the whole batch, which the engine does itself).

    Args:
        logits: ``(vocab,)`` float logits of the previous position.
        params: the request's parameters, with a seed (:meth:`SamplingParams.with_seed`).
        completion: 0 .. n - 1. position: the index the new token will have in its sequence.

    Returns:
        The token id.
    """
    # Python hashes tuples of ints the same in every process, so the key is reproducible.
    generator = torch.Generator(device=logits.device).manual_seed(hash((params.seed, completion, position)) % 2**63)
    logits = logits.float() / params.temperature
    if 0 < params.top_k < logits.shape[-1]:
        kth = torch.topk(logits, params.top_k).values[-1]
        logits = logits.masked_fill(logits < kth, -math.inf)
    if params.top_p < 1:
        # Keep the most likely tokens until their probabilities reach top_p (the first always stays).
        sorted_logits, order = torch.sort(logits, descending=True)
        probs = torch.softmax(sorted_logits, dim=-1)
        drop = torch.cumsum(probs, dim=-1) - probs >= params.top_p
        logits = logits.masked_fill(torch.zeros_like(drop).scatter(0, order, drop), -math.inf)
    probs = torch.softmax(logits, dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator))
