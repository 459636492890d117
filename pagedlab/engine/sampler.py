"""Pick the next token of every sequence in a step at once: processors, penalties, temperature, top-k/p, min-p.

:func:`sample` takes the step's logits, one row per token to draw, and applies, in vLLM V1's order
(``vllm/v1/sample/sampler.py``), each to the whole batch as one tensor operation:

1. the logits processors: ``allowed_token_ids`` (every other token masked), ``bad_words``, ``min_tokens`` (EOS and
   the stop tokens masked until reached) and ``logit_bias`` (added);
2. the penalties: Hugging Face's ``repetition_penalty`` over the prompt and the output, OpenAI's ``frequency`` and
   ``presence`` penalties over the output (a ``(rows, vocab)`` count of each row's generated tokens);
3. greedy rows take the argmax here; the others are divided by their temperature, then ``min_p``, ``top_k`` and
   ``top_p`` mask what they drop;
4. each sampled row draws by inverse CDF with one uniform number from its own generator, seeded by
   ``(seed, completion, position)``: a row's token never depends on the other rows of its batch. The draw and the
   CDF are float64 (a float32 draw of 1 - 2^-25 or more rounds to 1.0, past every kept token), and a draw past the
   last kept token takes that token: no draw leaves the kept set.

A row whose every token is masked (``allowed_token_ids`` all forbidden by ``min_tokens`` or ``bad_words``) raises
a ``ValueError`` naming the request's parameters: vLLM V1 would emit token 0 there (the argmax of a row of -inf, and
of the NaN its softmax gives), a token the request forbade. The engine asks :func:`nothing_to_draw` first: when a
request is added (the combinations that mask every token from the start), and before each step schedules anything
(a multi-token bad word that masks the last allowed token mid-generation), so such a step changes nothing.

``top_k`` and ``top_p`` need the most likely tokens in order, not the whole vocabulary sorted: one ``topk`` of the
largest ``k`` the batch needs (at least :data:`TOP_P_CANDIDATES` for ``top_p``) serves every row, and a row whose
kept probability does not reach its ``top_p`` within them (a very flat distribution) is cut after a full sort.
Tokens tied with the last one kept are all kept.

Log-probabilities are those of the model's raw logits (vLLM's default ``logprobs_mode="raw_logprobs"``), before
any processing, with each token's rank in the vocabulary (1: the most likely).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from pagedlab.engine.sampling import SamplingParams

TOP_P_CANDIDATES = 256
"""Tokens that one ``topk`` hands to ``top_p``; rows that need more fall back to a full sort."""


@dataclass(frozen=True)
class Row:
    """One token to draw.

    Attributes:
        params: the request's :class:`SamplingParams` (seeded when sampling).
        prompt: the prompt's token ids. output: the tokens this completion generated so far.
        completion: its index, 0 .. n - 1. eos_token_id: the model's EOS (None: none).
        bad_words: token sequences that must not be completed (the request's ``bad_words`` tokenized).
        other_eos_ids: the model's other end-of-sequence ids (its generation config's), masked with EOS while the
            output is shorter than ``min_tokens``, even with ``ignore_eos`` (vLLM's ``all_stop_token_ids``).
    """

    params: SamplingParams
    prompt: Sequence[int]
    output: Sequence[int]
    completion: int
    eos_token_id: int | None = None
    bad_words: tuple[tuple[int, ...], ...] = ()
    other_eos_ids: frozenset[int] = frozenset()

    @property
    def position(self) -> int:
        """The index the new token will have in its sequence."""
        return len(self.prompt) + len(self.output)


@dataclass(frozen=True)
class TopLogprobs:
    """Log-probabilities of one position (raw logits).

    Attributes:
        token_logprob: the chosen token's. rank: its rank, vLLM's: the tokens at least as likely as it (1: the
            most likely; a tie takes the rank of the last tied token).
        top_ids, top_logprobs: the most likely tokens and theirs, most likely first.
    """

    token_logprob: float
    rank: int
    top_ids: list[int]
    top_logprobs: list[float]


def uniform(params: SamplingParams, completion: int, position: int) -> float:
    """The uniform number in [0, 1) that draws completion ``completion``'s token at ``position``.

    Python hashes tuples of ints the same in every process, so the draw is reproducible.
    """
    return random.Random(hash((params.seed, completion, position))).random()


def top_logprobs(logits: torch.Tensor, tokens: torch.Tensor, num: Sequence[int]) -> list[TopLogprobs]:
    """The chosen tokens' log-probabilities and ranks, and the ``num[i]`` most likely of row ``i`` (-1: all).

    Args:
        logits: ``(rows, vocab)`` raw logits. tokens: int64 ``(rows,)``, the chosen tokens.
    """
    if not len(num):
        return []
    lp = torch.log_softmax(logits.float(), dim=-1)
    chosen = lp.gather(1, tokens[:, None])
    # vLLM's rank (vllm/v1/sample/ops/logprobs.py): tokens at least as likely, so a tie takes the lower rank.
    ranks = (lp >= chosen).sum(dim=-1)
    width = max(lp.shape[-1] if k == -1 else k for k in num)
    top_v, top_i = lp.topk(width, dim=-1) if width else (lp[:, :0], lp[:, :0].long())
    out = []
    for i, k in enumerate(num):
        k = lp.shape[-1] if k == -1 else k
        out.append(TopLogprobs(float(chosen[i]), int(ranks[i]), top_i[i, :k].tolist(), top_v[i, :k].tolist()))
    return out


def _column(rows: Sequence[Row], name: str, device: torch.device) -> torch.Tensor:
    return torch.tensor([float(getattr(r.params, name)) for r in rows], device=device)[:, None]


def _mask_tokens(logits: torch.Tensor, pairs: list[tuple[int, int]], value: float = -math.inf) -> None:
    """Set ``logits[row, token] = value`` for every ``(row, token)`` of ``pairs``; tokens outside the vocabulary
    are ignored."""
    pairs = [(r, t) for r, t in pairs if 0 <= t < logits.shape[-1]]
    if pairs:
        rows, tokens = zip(*pairs)
        logits[list(rows), list(tokens)] = value


def forbidden(row: Row) -> set[int]:
    """The tokens ``bad_words`` and ``min_tokens`` mask for ``row``: the last token of each bad word whose other
    tokens end the output, and EOS and the stop tokens while the output is shorter than ``min_tokens``."""
    banned = {w[-1] for w in row.bad_words if len(w) == 1 or tuple(row.output[-(len(w) - 1):]) == w[:-1]}
    if len(row.output) < row.params.min_tokens:
        banned |= set(row.params.stop_token_ids) | ({row.eos_token_id} - {None}) | row.other_eos_ids
    return banned


def nothing_to_draw(row: Row) -> bool:
    """True when ``row`` has ``allowed_token_ids`` and :func:`forbidden` masks them all (no logits needed: the
    model's logits are finite, and ``logit_bias`` is clipped to [-100, 100])."""
    allowed = row.params.allowed_token_ids
    return bool(allowed) and set(allowed) <= forbidden(row)


def apply_processors(logits: torch.Tensor, rows: Sequence[Row]) -> None:
    """Step 1 of the module docstring, in place on ``(rows, vocab)`` float logits."""
    vocab = logits.shape[-1]
    allowed = [(i, r.params.allowed_token_ids) for i, r in enumerate(rows) if r.params.allowed_token_ids]
    if allowed:
        keep = torch.zeros((len(allowed), vocab), dtype=torch.bool, device=logits.device)
        for j, (_, ids) in enumerate(allowed):
            keep[j, [t for t in ids if 0 <= t < vocab]] = True
        idx = [i for i, _ in allowed]
        logits[idx] = logits[idx].masked_fill(~keep, -math.inf)
    _mask_tokens(logits, [(i, t) for i, r in enumerate(rows) for t in forbidden(r)])
    bias = [(i, t, b) for i, r in enumerate(rows) if r.params.logit_bias for t, b in r.params.logit_bias.items()
            if 0 <= t < vocab]
    if bias:
        i, t, b = zip(*bias)
        logits.index_put_((torch.tensor(i, device=logits.device), torch.tensor(t, device=logits.device)),
                          torch.tensor(b, dtype=logits.dtype, device=logits.device), accumulate=True)


def check_not_all_masked(logits: torch.Tensor, rows: Sequence[Row]) -> None:
    """Raise if a row with ``allowed_token_ids`` has every token masked (the only rows that can).

    Raises:
        ValueError: naming the row's ``allowed_token_ids``, ``min_tokens``, stop tokens and bad words.
    """
    idx = [i for i, r in enumerate(rows) if r.params.allowed_token_ids]
    if not idx:
        return
    dead = torch.isneginf(logits[idx]).all(dim=-1).tolist()
    for i, is_dead in zip(idx, dead):
        if is_dead:
            r = rows[i]
            raise ValueError(f"every token is masked at output position {len(r.output)}: allowed_token_ids="
                             f"{list(r.params.allowed_token_ids)} are all forbidden by min_tokens="
                             f"{r.params.min_tokens} (EOS {r.eos_token_id}, stop_token_ids="
                             f"{list(r.params.stop_token_ids)}) or bad_words={list(r.params.bad_words)}")


def apply_penalties(logits: torch.Tensor, rows: Sequence[Row]) -> None:
    """Step 2 of the module docstring, in place, on the rows that have a penalty."""
    idx = [i for i, r in enumerate(rows) if r.params.repetition_penalty != 1 or r.params.presence_penalty
           or r.params.frequency_penalty]
    if not idx:
        return
    dev, vocab = logits.device, logits.shape[-1]
    sub = [rows[i] for i in idx]
    counts = torch.zeros((len(sub), vocab), device=dev)
    out_rows = [j for j, r in enumerate(sub) for _ in r.output]
    if out_rows:
        counts.index_put_((torch.tensor(out_rows, device=dev),
                           torch.tensor([t for r in sub for t in r.output], device=dev)),
                          torch.ones(len(out_rows), device=dev), accumulate=True)
    seen = counts > 0
    seen[[j for j, r in enumerate(sub) for _ in r.prompt], [t for r in sub for t in r.prompt]] = True
    x = logits[idx]
    rep = _column(sub, "repetition_penalty", dev)
    x = torch.where(seen, torch.where(x > 0, x / rep, x * rep), x)
    x -= _column(sub, "frequency_penalty", dev) * counts + _column(sub, "presence_penalty", dev) * (counts > 0)
    logits[idx] = x


def apply_top_k_top_p_min_p(logits: torch.Tensor, rows: Sequence[Row]) -> torch.Tensor:
    """Step 3's masks on ``(rows, vocab)`` logits already divided by their temperatures; returns the masked logits."""
    dev, vocab = logits.device, logits.shape[-1]
    min_p = _column(rows, "min_p", dev)
    if bool((min_p > 0).any()):
        probs = torch.softmax(logits, dim=-1)
        logits = logits.masked_fill(probs < min_p * probs.amax(dim=-1, keepdim=True), -math.inf)
    ks = [r.params.top_k if 0 < r.params.top_k < vocab else vocab for r in rows]
    ps = _column(rows, "top_p", dev)
    need_p = bool((ps < 1).any())
    if max(ks) == vocab and min(ks) == vocab and not need_p:
        return logits
    width = min(vocab, max([k for k in ks if k < vocab] + [TOP_P_CANDIDATES if need_p else 1]))
    values, _ = logits.topk(width, dim=-1)                               # (rows, width), most likely first
    k = torch.tensor(ks, device=dev)[:, None]
    rank = torch.arange(width, device=dev)
    if min(ks) < vocab:
        kth = values.gather(1, (k.clamp(max=width) - 1))
        kth = torch.where(k < vocab, kth, torch.full_like(kth, -math.inf))
        logits = logits.masked_fill(logits < kth, -math.inf)
        values = values.masked_fill(rank >= k, -math.inf)
    if need_p:
        probs = torch.exp(values - torch.logsumexp(logits, dim=-1, keepdim=True))
        before = torch.cumsum(probs, dim=-1) - probs                     # the mass of the tokens ranked above
        short = (before[:, -1] + probs[:, -1] < ps[:, 0]) & (ps[:, 0] < 1) & (width < vocab)
        if bool(short.any()):                                            # the candidates do not reach top_p
            return apply_top_k_top_p_min_p_full(logits, ps)
        last = ((before < ps) & (values > -math.inf)).sum(dim=-1, keepdim=True).clamp(min=1) - 1
        cut = torch.where(ps < 1, values.gather(1, last), torch.full_like(ps, -math.inf))
        logits = logits.masked_fill(logits < cut, -math.inf)
    return logits


def apply_top_k_top_p_min_p_full(logits: torch.Tensor, ps: torch.Tensor) -> torch.Tensor:
    """``top_p`` by a full sort of every row (the fallback of :func:`apply_top_k_top_p_min_p`)."""
    values, _ = logits.sort(dim=-1, descending=True)
    probs = torch.softmax(values, dim=-1)
    before = torch.cumsum(probs, dim=-1) - probs
    last = ((before < ps) & (values > -math.inf)).sum(dim=-1, keepdim=True).clamp(min=1) - 1
    cut = torch.where(ps < 1, values.gather(1, last), torch.full_like(ps, -math.inf))
    return logits.masked_fill(logits < cut, -math.inf)


def sample(logits: torch.Tensor, rows: Sequence[Row]) -> list[int]:
    """The next token of every row (see the module docstring).

    Args:
        logits: ``(len(rows), vocab)`` logits, row ``i`` for ``rows[i]`` (not changed).
        rows: what to draw, with each request's parameters.

    Returns:
        The token ids, one per row.
    """
    # Greedy rows that no logits field touches take the raw argmax (the fields' roles say which, SamplingParams).
    if all(r.params.greedy and r.params.leaves_logits_alone(len(r.output)) for r in rows):
        return logits.argmax(dim=-1).tolist()
    x = logits.float().clone()
    apply_processors(x, rows)
    check_not_all_masked(x, rows)
    apply_penalties(x, rows)
    greedy = x.argmax(dim=-1)
    drawn = [i for i, r in enumerate(rows) if not r.params.greedy]
    if not drawn:
        return greedy.tolist()
    sub = [rows[i] for i in drawn]
    y = apply_top_k_top_p_min_p(x[drawn] / _column(sub, "temperature", x.device), sub)
    cdf = torch.cumsum(torch.softmax(y, dim=-1).double(), dim=-1)
    u = torch.tensor([uniform(r.params, r.completion, r.position) for r in sub], dtype=torch.float64,
                     device=x.device)[:, None]
    picked = torch.searchsorted(cdf, u * cdf[:, -1:], right=True)[:, 0]
    over = (picked >= x.shape[-1]).nonzero()[:, 0].tolist()
    for j in over:           # u * total rounded up to total: the last token with a probability, not the vocab's end
        picked[j] = int(torch.isfinite(y[j]).nonzero()[-1, 0])
    greedy[drawn] = picked
    return greedy.tolist()
