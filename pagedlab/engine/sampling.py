"""What to generate and how to pick each token: :class:`SamplingParams`, vLLM's class with vLLM's defaults.

The fields, their meaning and their defaults follow vLLM's ``vllm/sampling_params.py`` (read at commit
00388f6 of vllm-project/vllm, the 0.11-0.12 line): ``temperature=1.0`` samples (``temperature=0`` is greedy),
``max_tokens=16`` (None: up to the model's length), the penalties of the OpenAI API (``presence_penalty``,
``frequency_penalty``, over the generated tokens) and of Hugging Face (``repetition_penalty``, over the prompt
and the generated tokens). :mod:`pagedlab.engine.sampler` applies them to a whole batch at once.

Sampling is reproducible whatever the batch *given the same logits*: a request without a seed gets a random one
when it is added, and the draw of completion ``j`` at position ``p`` uses a generator seeded by ``(seed, j, p)``,
so a completion draws the same token in any batch, after any preemption. The logits themselves are not batch
invariant, on a GPU (the decode kernel's split count depends on the batch) nor on a CPU (the matrix products
block differently for 1 row and for 8): one request's log-probabilities alone and in a batch of 8 differ by up to
1.5e-5 (SmolLM2, float32, 1,134 positions; the issue's fuzz saw up to 2.8e-5). A seeded draw that falls that
close to a boundary of the cumulative distribution picks the neighbouring token, and the completion goes its
own way from there. Measured: 0 of 48 seeded completions (temperature 1.0, top_p 0.95, 24 tokens) differed
alone and in batches of 8; the issue's larger fuzz found 8 of 1,315 (0.6%), each with its draw within 3e-8 of a
boundary. Greedy decoding flips only where the top two logits are that close (0.027 apart at the least on the
course's prompts). vLLM makes the same promise and no more, unless its batch-invariant kernels are turned on.

A completion ends after ``max_tokens`` tokens (finish reason ``"length"``), or earlier (``"stop"``) at the
model's end-of-sequence token (unless ``ignore_eos``), at one of ``stop_token_ids``, or when its text contains
one of the ``stop`` strings. ``min_tokens`` forbids EOS and the stop tokens until that many tokens are
generated, and stop strings are only searched for in the text after them. As in vLLM V1
(``vllm/v1/engine/detokenizer.py``), the stop string and the text of the token that stopped the completion (EOS
or a stop token, ``<|im_end|>`` when ``skip_special_tokens=False``) are left out of the text unless
``include_stop_str_in_output``; the token itself stays in ``token_ids``.

Differences from vLLM: ``n > 1`` with greedy decoding is allowed (vLLM refuses it; here the completions are equal,
and the course uses them to show forked blocks sharing the prompt's blocks), and the fields of vLLM's structured
outputs, beam search and streaming kinds are absent. A NaN anywhere in the parameters is refused, ``logit_bias``
values included (vLLM 0.32 accepts a NaN bias). ``logprobs`` and ``prompt_logprobs`` past the engine's
``max_logprobs`` (vLLM's default, 20; ``-1``, the whole vocabulary, needs ``max_logprobs=-1``) are refused when the
request is added, as vLLM refuses them.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pagedlab.validate import check_count, check_number


def _check_range(name: str, value: object, low: float, high: float, low_open: bool = False) -> float:
    x = check_number(f"SamplingParams.{name}", value)
    if not (math.isfinite(x) and (low < x if low_open else low <= x) and x <= high):
        raise ValueError(f"SamplingParams.{name} must be in {'(' if low_open else '['}{low}, {high}], got {value!r}")
    return x


def _token_ids(name: str, ids: object) -> tuple[int, ...]:
    if ids is None:
        return ()
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence) or not all(
            isinstance(t, int) and not isinstance(t, bool) for t in ids):
        raise TypeError(f"SamplingParams.{name} must be a list of token ids (ints), got {ids!r}")
    return tuple(dict.fromkeys(ids))


def _strings(name: str, value: object) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if items is None:
        return ()
    if not isinstance(items, Sequence) or not all(isinstance(x, str) for x in items):
        raise TypeError(f"SamplingParams.{name} must be a string or a list of non-empty strings, got {value!r}")
    if not all(items):              # the right kind, a wrong value (an empty string matches everywhere)
        raise ValueError(f"SamplingParams.{name} must not contain an empty string, got {value!r}")
    return tuple(dict.fromkeys(items))


Role = Literal["logits", "draw", "output"]


def _field(default: object, role: Role) -> object:
    """A field of :class:`SamplingParams` with its role (``dataclasses.fields(...)[i].metadata["role"]``):

    * ``"logits"``: it can change the logits before the draw, so a greedy row's argmax too (processors, penalties);
    * ``"draw"``: it changes only how a sampled row draws (temperature, top-k/p, min-p, seed);
    * ``"output"``: it changes neither (what is returned, when a completion ends).

    The sampler's fast path for plain greedy rows is derived from the roles; a field without one fails at import.
    """
    return dataclasses.field(default=default, metadata={"role": role})


@dataclass
class SamplingParams:
    """How to complete one prompt (vLLM's ``SamplingParams``, the fields a single device needs).

    Attributes:
        n: completions per prompt; they share the prompt's blocks (fork, then copy-on-write). ``n > 1`` with
            ``temperature=0`` is allowed (vLLM refuses it): ``n`` equal completions, forked from one prompt.
        presence_penalty: subtracted once from the logit of every token already generated (OpenAI's), in [-2, 2].
        frequency_penalty: subtracted from a token's logit once per time it was generated (OpenAI's), in [-2, 2].
        repetition_penalty: a token of the prompt or the output has its logit divided by it when positive, multiplied
            when negative (Hugging Face's ``RepetitionPenaltyLogitsProcessor``); > 0, 1 is off.
        temperature: 0 for greedy decoding, else the softmax temperature (default 1.0, as vLLM).
        top_p: keep the most likely tokens whose probabilities sum to at least ``top_p`` (0 < top_p <= 1; 1: all).
        top_k: keep the ``top_k`` most likely tokens (0 or -1: all).
        min_p: drop tokens less likely than ``min_p`` times the most likely one (0: off).
        seed: makes sampling reproducible; None draws one when the request is added. Ignored when greedy.
        stop: strings that end a completion when its text contains one (a string or a list).
        stop_token_ids: token ids that end a completion (kept in its ``token_ids``).
        bad_words: words never generated: the last token of a word's tokens is forbidden when the tokens before
            it were just generated (vLLM's rule; each word is tokenized with and without a leading space).
        include_stop_str_in_output: keep the stop string, or the text of the stop token or EOS that ended the
            completion, at the end of the text.
        ignore_eos: do not stop at the model's end-of-sequence token.
        max_tokens: the most tokens to generate per completion (None: up to the model's ``max_model_len``).
        min_tokens: tokens to generate before EOS or a stop token may be; stop strings are searched for only
            in the text after them.
        logprobs: return, at each generated position, the log-probabilities of the chosen token and of the
            ``logprobs`` most likely ones (0: the chosen one only; -1: the whole vocabulary; None: none).
        prompt_logprobs: the same for every prompt token after the first.
        detokenize: produce the text (False: token ids only; stop strings then cannot be used).
        skip_special_tokens: leave special tokens out of the text.
        spaces_between_special_tokens: the tokenizer's option of that name, when special tokens are kept.
        logit_bias: ``{token id: bias}`` added to the logits (each bias clipped to [-100, 100], as vLLM).
        allowed_token_ids: only these tokens may be generated.

    Raises:
        TypeError: a field of the wrong kind (a str where a list of ints is due, a bool where a number is).
        ValueError: a value out of its range (the message names the field and the range).
    """

    n: int = _field(1, 'output')
    presence_penalty: float = _field(0.0, 'logits')
    frequency_penalty: float = _field(0.0, 'logits')
    repetition_penalty: float = _field(1.0, 'logits')
    temperature: float = _field(1.0, 'draw')
    top_p: float = _field(1.0, 'draw')
    top_k: int = _field(0, 'draw')
    min_p: float = _field(0.0, 'draw')
    seed: int | None = _field(None, 'draw')
    stop: str | Sequence[str] | None = _field(None, 'output')
    stop_token_ids: Sequence[int] | None = _field(None, 'output')
    bad_words: Sequence[str] | None = _field(None, 'logits')
    include_stop_str_in_output: bool = _field(False, 'output')
    ignore_eos: bool = _field(False, 'output')
    max_tokens: int | None = _field(16, 'output')
    min_tokens: int = _field(0, 'logits')
    logprobs: int | None = _field(None, 'output')
    prompt_logprobs: int | None = _field(None, 'output')
    detokenize: bool = _field(True, 'output')
    skip_special_tokens: bool = _field(True, 'output')
    spaces_between_special_tokens: bool = _field(True, 'output')
    logit_bias: Mapping[int, float] | None = _field(None, 'logits')
    allowed_token_ids: Sequence[int] | None = _field(None, 'logits')

    def __post_init__(self) -> None:
        self.verify()

    def verify(self) -> None:
        """Check every field (and normalize lists to tuples); called on creation and when a request is added, since
        fields may be assigned after creation as in vLLM (``params.max_tokens = 64``).

        Raises:
            TypeError / ValueError: see the class docstring.
        """
        check_count("SamplingParams.n", self.n, 1)
        for name in ("presence_penalty", "frequency_penalty"):
            _check_range(name, getattr(self, name), -2.0, 2.0)
        rep = check_number("SamplingParams.repetition_penalty", self.repetition_penalty)
        if not (math.isfinite(rep) and rep > 0):
            raise ValueError(f"SamplingParams.repetition_penalty must be a finite float > 0, got {rep!r}")
        _check_range("temperature", self.temperature, 0.0, 2.0)
        _check_range("top_p", self.top_p, 0.0, 1.0, low_open=True)
        check_count("SamplingParams.top_k", self.top_k, -1)  # 0 or -1: all tokens
        _check_range("min_p", self.min_p, 0.0, 1.0)
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)):
            raise TypeError(f"SamplingParams.seed must be an int or None, got {self.seed!r}")
        if self.max_tokens is not None:
            check_count("SamplingParams.max_tokens", self.max_tokens, 1)
        check_count("SamplingParams.min_tokens", self.min_tokens, 0)
        if self.max_tokens is not None and self.min_tokens > self.max_tokens:
            raise ValueError(f"SamplingParams.min_tokens={self.min_tokens} exceeds max_tokens={self.max_tokens}")
        for name in ("logprobs", "prompt_logprobs"):
            value = getattr(self, name)
            if value is True:           # vLLM reads True as 1
                value = 1
            if value is not None:
                check_count(f"SamplingParams.{name}", value, -1)
            setattr(self, name, value)
        for name in ("include_stop_str_in_output", "ignore_eos", "detokenize", "skip_special_tokens",
                     "spaces_between_special_tokens"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"SamplingParams.{name} must be a bool, got {getattr(self, name)!r}")
        self.stop = _strings("stop", self.stop)
        self.bad_words = _strings("bad_words", self.bad_words)
        self.stop_token_ids = _token_ids("stop_token_ids", self.stop_token_ids)
        if self.allowed_token_ids is not None:
            self.allowed_token_ids = _token_ids("allowed_token_ids", self.allowed_token_ids)
            if not self.allowed_token_ids:
                raise ValueError("SamplingParams.allowed_token_ids must not be empty (None: every token)")
        if self.stop and not self.detokenize:
            raise ValueError("SamplingParams.stop strings need the text: pass detokenize=True, or use stop_token_ids")
        if self.logit_bias is not None:
            if not isinstance(self.logit_bias, Mapping):
                raise TypeError(f"SamplingParams.logit_bias must be a dict {{token id: bias}}, got "
                                f"{type(self.logit_bias).__name__}")
            bias = {}
            for token, value in self.logit_bias.items():
                try:
                    token = int(token)          # vLLM takes "123" as well as 123 (JSON keys are strings)
                except (TypeError, ValueError):
                    raise TypeError(f"SamplingParams.logit_bias keys must be token ids, got {token!r}") from None
                value = check_number(f"SamplingParams.logit_bias[{token}]", value)
                if math.isnan(value):         # min/max would turn NaN into a bias of -100
                    raise ValueError(f"SamplingParams.logit_bias[{token}] must be a number in [-100, 100] (larger "
                                     f"ones are clipped), got nan")
                bias[token] = min(100.0, max(-100.0, value))
            self.logit_bias = bias

    def leaves_logits_alone(self, num_output: int) -> bool:
        """True when no ``"logits"`` field changes the logits of a row that has ``num_output`` tokens: each is at
        its default (an empty collection counts as None), ``min_tokens`` once ``num_output`` reaches it."""
        for f in LOGIT_FIELDS:
            value = getattr(self, f.name)
            if f.name == "min_tokens":
                if num_output < value:
                    return False
            elif not (value == f.default or f.default is None and not value):
                return False
        return True

    @property
    def greedy(self) -> bool:
        """True when decoding is greedy (``temperature == 0``)."""
        return self.temperature == 0

    def clone(self, rng: random.Random | None = None) -> SamplingParams:
        """A checked copy, with a seed drawn from ``rng`` (default: Python's) when sampling without one (the engine
        keeps this copy, so changing the caller's object afterwards changes no request already added)."""
        params = dataclasses.replace(self)
        if not params.greedy and params.seed is None:
            params.seed = (rng or random).getrandbits(63)
        return params


LOGIT_FIELDS = tuple(f for f in dataclasses.fields(SamplingParams) if f.metadata["role"] == "logits")
"""The fields that can change a greedy row's token (role ``"logits"``)."""


def per_prompt(params: SamplingParams | Sequence[SamplingParams] | None, num_prompts: int,
               default: SamplingParams | None = None) -> list[SamplingParams]:
    """One :class:`SamplingParams` per prompt from one for all (None: ``default``, else ``SamplingParams()``) or a
    list of them.

    Raises:
        TypeError: something else than a SamplingParams, a list of them or None.
        ValueError: a list whose length is not ``num_prompts``.
    """
    if params is None:
        params = default or SamplingParams()
    if isinstance(params, SamplingParams):
        return [params] * num_prompts
    if isinstance(params, (str, bytes, Mapping)) or not isinstance(params, Sequence) or not all(
            isinstance(p, SamplingParams) for p in params):
        raise TypeError(f"sampling_params must be a SamplingParams, a list of them (one per prompt) or None, got "
                        f"{type(params).__name__}")
    if len(params) != num_prompts:
        raise ValueError(f"sampling_params has {len(params)} SamplingParams for {num_prompts} prompts; give one, "
                         f"or one each")
    return list(params)
