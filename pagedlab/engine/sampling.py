"""What to generate and how to pick each token: :class:`SamplingParams` (vLLM's name) and :func:`sample`.

Greedy decoding takes the most likely token. Sampling draws from ``softmax(logits / temperature)`` with a
generator seeded by ``(seed, completion index, position)``: the generator never depends on the batch or on how
often the request was preempted, so given the same logits a completion draws the same token, and results are
reproducible under continuous batching.

The logits themselves can depend on the batch on a GPU, in their last bits: the decode kernel's split count
is chosen from the whole batch (a different summation order), and a sequence preempted by recomputation comes
back through the prefill path (FlashAttention) where it had been decoded by the paged kernel. A draw near a
boundary of the distribution, or a greedy near-tie, can then come out differently. On the CPU (fp32 in the
interpreter, one split) the tests see identical tokens.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class SamplingParams:
    """How to complete one prompt (the subset of vLLM's ``SamplingParams`` this engine implements).

    Attributes:
        n: completions per prompt; they share the prompt's blocks (fork, then copy-on-write).
        temperature: 0 for greedy decoding, else the softmax temperature.
        max_tokens: tokens to generate per completion (no stop tokens: every completion gets exactly this many).
        seed: makes sampling reproducible; None draws one when the request is added. Ignored when greedy.

    Raises:
        ValueError / TypeError: ``n`` or ``max_tokens`` not a positive int, a negative or non-finite
            temperature, a seed that is not an int.
    """

    n: int = 1
    temperature: float = 0.0
    max_tokens: int = 16
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("n", "max_tokens"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"SamplingParams.{name} must be a positive int, got {value!r}")
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)) or not (
                math.isfinite(self.temperature) and self.temperature >= 0):
            raise ValueError(f"SamplingParams.temperature must be a finite float >= 0, got {self.temperature!r}")
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)):
            raise TypeError(f"SamplingParams.seed must be an int or None, got {self.seed!r}")

    @property
    def greedy(self) -> bool:
        """True when decoding is greedy (``temperature == 0``)."""
        return self.temperature == 0

    def with_seed(self) -> SamplingParams:
        """These parameters with a seed: the given one, or a fresh random one when sampling without one."""
        if self.greedy or self.seed is not None:
            return self
        return SamplingParams(self.n, self.temperature, self.max_tokens, random.getrandbits(63))


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
    probs = torch.softmax(logits.float() / params.temperature, dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator))
