"""The checks of exercise 9's stretch (the split-KV merge): split bounds, the merge, its lse, cascade attention.

The kernel's own split states (:func:`~pagedlab.kernels.paged_attention.paged_decode_split`) are the inputs; the
references are computed in float64 from the gathered K/V. Hints are picked from what came back.

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included:

* ``split_bounds(context_len, num_splits, block_n)``: a context of at least one token (every decode row has one), 1
  to 8 splits, key tiles of any positive size (1, 4, 16, the kernel's 32); contexts of one token, of exactly one
  tile, of one tile and one token, of exactly ``num_splits`` whole tiles and one token either side, of fewer tokens
  than splits, and long ones (1000 tokens); more splits than tiles (empty splits at the end). Compared with the rule
  the kernel cuts by: split length ``ceil(context_len / num_splits)`` rounded up to whole tiles, split ``s`` starting
  at ``min(s * length, context_len)``.
* ``merge_states(outs, lses)``: ``outs`` ``(..., num_splits, d)`` and ``lses`` ``(..., num_splits)``, float32, with
  no leading dimension, one, two or three, leading dimensions of size 1 among them (one sequence, one head); 1 to 6
  splits; ``d`` from 1 to 16; lses of magnitude 1, in the hundreds (past float32's ``exp``), all far below zero
  (about -300, as very negative scores give; near -20000 and below -1e30, beside empty splits), far apart within one
  row (3 and 120), tied (every split of a row equal, two maxima equal); empty splits (lse ``-inf``, output 0)
  anywhere but never a whole row. Compared with the
  float64 merge: the softmax of the lses weighting the outputs, and their log-sum-exp.

``cascade_attention`` runs the kernel twice in Triton's interpreter (seconds on a CPU): check 6 covers it alone.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from .. import device
from ..attention import gather_kv
from ..checks import assert_close
from ..kernels import paged_attention as pa
from ..kernels.paged_attention import paged_decode_attention, paged_decode_split
from ..testing import random_paged_batch
from ..validate import blocks_for

BLOCK_N = pa.INTERPRET_BLOCK_N
"""The kernel's key tile for float32 inputs (the ``block_n`` the checks pass to ``split_bounds``)."""


def reference_state(q, k_cache, v_cache, table, start: int, end: int, context_len: int):
    """(out, lse) per head of one sequence's query ``q`` (heads, d) over its keys [start, end), in float64."""
    k, v = gather_kv(k_cache, v_cache, table, context_len)
    group = q.shape[0] // k.shape[1]
    if end == start:
        return torch.zeros(q.shape, dtype=torch.float64), torch.full(q.shape[:1], -math.inf, dtype=torch.float64)
    k, v = (t[start:end].double().cpu().repeat_interleave(group, dim=1) for t in (k, v))   # (n, heads, d)
    scores = torch.einsum("hd,nhd->hn", q.double().cpu(), k) * q.shape[-1] ** -0.5
    return torch.einsum("hn,nhd->hd", torch.softmax(scores, -1), v), torch.logsumexp(scores, -1)


def full_state(q, k_cache, v_cache, tables, lens):
    """(out, lse) over each sequence's whole context, float64: what merging every split must give."""
    states = [reference_state(q[s], k_cache, v_cache, tables[s], 0, int(n), int(n)) for s, n in enumerate(lens)]
    return torch.stack([o for o, _ in states]), torch.stack([l for _, l in states])


def error_hint(exc: BaseException) -> str:
    """The hint for an error raised by the learner's functions, by its type and message."""
    text = str(exc)
    if isinstance(exc, TypeError) and ("float" in text or "slice" in text or "integer" in text):
        return ("a float where an int is needed: bounds are token positions, so round up with integer division, "
                "-(-a // b), not with /.")
    if isinstance(exc, RuntimeError) and ("size of tensor" in text or "must match" in text or "shape" in text):
        return ("two tensors of different shapes were combined: outs is (..., num_splits, d) and lses "
                "(..., num_splits), so a weight per split must gain a last dimension of size 1 before it multiplies "
                "outs, and the sums run over the split dimension (-2 of outs, -1 of lses).")
    return ""


def _bounds_problem(bounds, n: int, num_splits: int, block_n: int) -> str | None:
    """What is wrong with the shape of ``split_bounds``'s answer, in words, or None."""
    call = f"split_bounds({n}, {num_splits}, {block_n}) = {bounds}"
    if not isinstance(bounds, (list, tuple)) or not all(isinstance(b, (list, tuple)) and len(b) == 2 for b in bounds):
        return f"{call}: expected a list of (start, end) pairs"
    if not all(isinstance(x, int) for b in bounds for x in b):
        return f"{call}: starts and ends must be ints (token positions); got {sorted({type(x).__name__ for b in bounds for x in b})}"
    if len(bounds) != num_splits:
        return f"{call}: {len(bounds)} pairs, expected one per split ({num_splits}), empty splits included"
    past = [(s, a) for s, (a, _) in enumerate(bounds) if a > n]
    if past:
        s, a = past[0]
        return (f"{call}: split {s} starts at {a}, past the end of the context ({n}). A split whose start would lie "
                f"at or past the end is empty: its start, like its end, is clamped to context_len, so start == end.")
    if any(b > n for _, b in bounds):
        return f"{call}: an end past context_len = {n}; the last non-empty split ends at the context's end"
    if any(a > b for a, b in bounds):
        return f"{call}: a split ends before it starts"
    if bounds[0][0] != 0 or bounds[-1][1] != n or [a for a, _ in bounds[1:]] != [b for _, b in bounds[:-1]]:
        return f"{call}: the ranges must cover 0 .. context_len = {n} in order, each end being the next start"
    return None


def check_split_ranges(split_bounds: Callable) -> None:
    """Check 1: ``split_bounds`` gives each split exactly the keys the kernel gives it (via the kernel's lse)."""
    __tracebackhide__ = True
    q, k, v, tables, lens = random_paged_batch([75, 40, 11, 1], 8, 4, 2, 16, seed=1)
    for num_splits in (2, 3, 5):
        _, lse = paged_decode_split(q, k, v, tables, lens, num_splits)
        for s, n in enumerate(lens.tolist()):
            bounds = split_bounds(n, num_splits, BLOCK_N)
            problem = _bounds_problem(bounds, n, num_splits, BLOCK_N)
            if problem:
                raise AssertionError(problem)
            want = torch.stack([reference_state(q[s], k, v, tables[s], a, b, n)[1] for a, b in bounds], dim=-1)
            lengths = [b - a for a, b in bounds]
            whole = all(x % BLOCK_N == 0 for x in lengths[:-1] if x) and lengths == sorted(lengths, reverse=True)
            hint = (f"your splits hold {lengths} keys. A program processes whole key tiles of {BLOCK_N}: every split "
                    f"but the last non-empty one holds a whole number of tiles." if not whole else
                    f"your splits hold {lengths} keys, whole tiles, but not the kernel's: the split length is "
                    f"ceil(context_len / num_splits) rounded up to whole tiles, and split s starts at s times it.")
            assert_close(lse[s].double().cpu(), want, atol=1e-4, rtol=1e-4,
                         name=(f"context {n}, {num_splits} splits, key tile {BLOCK_N}, your bounds {bounds}: the "
                               f"kernel's lse per (head, split) vs the lse over your ranges"), hint=hint)


def _merged(merge_states: Callable, outs: torch.Tensor, lses: torch.Tensor, what: str):
    __tracebackhide__ = True
    result = merge_states(outs, lses)
    if not (isinstance(result, tuple) and len(result) == 2 and all(isinstance(t, torch.Tensor) for t in result)):
        raise AssertionError(f"merge_states({what}) must return a pair of tensors (out, lse); got "
                             f"{type(result).__name__}")
    out, lse = result
    if out.shape != outs.shape[:-2] + outs.shape[-1:] or lse.shape != lses.shape[:-1]:
        raise AssertionError(f"merge_states({what}): expected out {tuple(outs.shape[:-2] + outs.shape[-1:])} and lse "
                             f"{tuple(lses.shape[:-1])}, got {tuple(out.shape)} and {tuple(lse.shape)}: the split "
                             f"dimension (-2 of outs, -1 of lses) is the one that goes away")
    return out, lse


def _split_and_merged(merge_states: Callable, context_lens: list[int], kv_heads: int, num_splits: int, seed: int,
                      magnitude: float = 1.0, note: str = ""):
    """A random decode batch (4 heads of 16, blocks of 8) that the kernel splits and ``merge_states`` merges.

    Returns ``(outs, lses, (out, lse), (want_out, want_lse))``: the kernel's split states, what ``merge_states`` made
    of them (checked for shape by :func:`_merged`, whose message names the inputs' shapes and ``note``), and the
    float64 state over each whole context.
    """
    __tracebackhide__ = True
    q, k, v, tables, lens = random_paged_batch(context_lens, 8, 4, kv_heads, 16, magnitude=magnitude, seed=seed)
    outs, lses = paged_decode_split(q, k, v, tables, lens, num_splits=num_splits)
    what = f"outs {tuple(outs.shape)}, lses {tuple(lses.shape)}" + (f" {note}" if note else "")
    return outs, lses, _merged(merge_states, outs, lses, what), full_state(q, k, v, tables, lens)


def _diagnose_out(got, outs, lses) -> str:
    """A hint for a merged output that differs, from what it matches."""
    outs64, lses64 = outs.double().cpu(), lses.double().cpu()
    g = got.detach().double().cpu()
    finite = lses64.isfinite()
    mean = (outs64 * finite[..., None]).sum(-2) / finite.sum(-1, keepdim=True)
    if torch.allclose(g, outs64.mean(-2), atol=1e-4) or torch.allclose(g, mean, atol=1e-4):
        return "your output is the plain mean of the splits: a short split gets as much weight as a long one."
    w = torch.exp(lses64 - lses64.amax(-1, keepdim=True))
    if torch.allclose(g, (w[..., None] * outs64).sum(-2), atol=1e-4):
        return "the weights are right but do not sum to 1: divide by their total."
    return "each split's weight is its share of the total softmax sum over all keys."


def check_merge_two(merge_states: Callable) -> None:
    """Check 2: the merge of the kernel's two splits equals attention over the whole context."""
    __tracebackhide__ = True
    partial, lse, (out, _), (want, _) = _split_and_merged(merge_states, [75, 40, 33], kv_heads=2, num_splits=2, seed=2)
    assert_close(out, want, atol=1e-4, rtol=1e-4, name="output (seq, head, d)",
                 hint=_diagnose_out(out, partial, lse))


def check_empty_splits(merge_states: Callable) -> None:
    """Check 3: splits past the end of short contexts are empty (out 0, lse -inf) and weigh nothing."""
    __tracebackhide__ = True
    _, _, (out, _), (want, _) = _split_and_merged(merge_states, [3, 40, 100, 1], kv_heads=1, num_splits=6, seed=3)
    hint = ("an empty split has lse = -inf, so its weight must come out exactly 0; NaN means an exponent of "
            "-inf - (-inf) or a sum of 0 somewhere." if torch.isnan(out).any() else
            "an empty split has lse = -inf and must weigh exactly 0: keep the -inf (replacing it by 0 gives it the "
            "weight of a split whose sum is 1).")
    assert_close(out, want, atol=1e-4, rtol=1e-4, name="output (seq, head, d), 6 splits, some empty", hint=hint)


def check_merged_lse(merge_states: Callable) -> None:
    """Check 4: the merged lse is the lse over the union, so that merged states merge again."""
    __tracebackhide__ = True
    _, lse, (_, got), (_, want) = _split_and_merged(merge_states, [75, 40, 9], kv_heads=2, num_splits=3, seed=4)
    lses64 = lse.double().cpu()
    if torch.allclose(got.double().cpu(), lses64.amax(-1), atol=1e-4):
        hint = "your lse is the largest split's lse: the total sum also counts the other splits' sums."
    elif torch.allclose(got.double().cpu(), lses64.sum(-1), atol=1e-3):
        hint = "your lse is the sum of the splits' lses, which is the log of a product of sums, not of their sum."
    else:
        hint = "the merged lse is the log of the total softmax sum, the sum of the splits' sums exp(lse_s)."
    assert_close(got, want, atol=1e-4, rtol=1e-4, name="lse (seq, head)", hint=hint)


def _large_hint(out: torch.Tensor, lses: torch.Tensor) -> str:
    """Why merging lses in the hundreds went wrong, from which rows are not finite: rows whose own max lse lies far
    below the tensor's largest underflow (a max over the whole tensor), else the largest overflows (no max)."""
    lses64 = lses.detach().double().cpu()
    row_max = lses64.amax(-1)
    shaped = isinstance(out, torch.Tensor) and out.shape[:-1] == row_max.shape
    bad = ~out.detach().cpu().isfinite().all(-1) if shaped else None
    top = float(row_max.max())
    if bad is not None and bad.any() and bool((row_max[bad] < top - 80).all()):
        low = float(row_max[bad].max())
        return (f"the rows that are NaN are those whose largest lse is at most {low:.0f}, far below the largest lse "
                f"of the whole tensor ({top:.0f}): subtracted from them, it makes every exp underflow to 0, and 0/0 is "
                f"NaN. The reference must be each row's own maximum, over the split dimension "
                f"(lses.amax(dim=-1, keepdim=True)), not one maximum for the whole tensor.")
    return (f"the largest lse here is {top:.0f}, and exp(88.7) is already past float32's largest number: every "
            f"exponent must be <= 0, relative to the largest lse of the row.")


def check_large_scores(merge_states: Callable) -> None:
    """Check 5: lses in the hundreds, and splits whose lses are far apart (3 and 120)."""
    __tracebackhide__ = True
    _, lses, (out, got_lse), (want, want_lse) = _split_and_merged(
        merge_states, [75, 40, 9], kv_heads=2, num_splits=3, seed=5, magnitude=12.0, note="in the hundreds")
    hint = _large_hint(out, lses)
    assert_close(out, want, atol=1e-4, rtol=1e-4, name="output (seq, head, d)", hint=hint)
    assert_close(got_lse, want_lse, atol=1e-3, rtol=1e-5, name="lse (seq, head)", hint=hint)
    g = torch.Generator().manual_seed(7)
    outs = torch.randn(3, 2, 8, generator=g)
    lses = torch.tensor([[3.0, 120.0], [120.0, 3.0], [-5.0, 90.0]])
    out, got_lse = _merged(merge_states, outs.to(device.DEVICE), lses.to(device.DEVICE),
                           "two splits with lses [3, 120], [120, 3] and [-5, 90]")
    hint = _large_hint(out, lses)
    w = torch.softmax(lses.double(), -1)
    reference = "split 0's lse" if torch.isfinite(out[1]).all() and not torch.isfinite(out[0]).all() else "it"
    assert_close(out, (w[..., None] * outs.double()).sum(-2), atol=1e-5, rtol=1e-5,
                 name="output of splits whose lses are [3, 120], [120, 3], [-5, 90] (rows)", hint=(
                     f"rows whose larger lse comes second fail: exp(120 - 3) overflows float32. The reference "
                     f"subtracted from every lse must be the row's maximum, not {reference}: then every exponent "
                     f"is <= 0." if reference != "it" else hint))
    assert_close(got_lse, torch.logsumexp(lses.double(), -1), atol=1e-4, rtol=1e-6, name="lse of those rows",
                 hint=hint)


def check_cascade(cascade_attention: Callable) -> None:
    """Check 6: sixteen sequences share a 64-token prefix; the cascade equals decode over the full tables."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(6)
    block_size, heads, kv_heads, d, prefix_blocks = 16, 4, 2, 16, 4
    suffix_lens = torch.randint(1, 40, (16,), generator=g)
    suffix_blocks = [blocks_for(int(n), block_size) for n in suffix_lens]
    num_blocks = prefix_blocks + sum(suffix_blocks)
    k, v = (torch.randn(num_blocks, block_size, kv_heads, d, generator=g).to(device.DEVICE) for _ in range(2))
    q = torch.randn(16, heads, d, generator=g).to(device.DEVICE)
    own, first = [], prefix_blocks
    for nb in suffix_blocks:
        own.append(list(range(first, first + nb)) + [-1] * (max(suffix_blocks) - nb))
        first += nb
    prefix = list(range(prefix_blocks))
    as_tensor = lambda rows: torch.tensor(rows, dtype=torch.int32, device=device.DEVICE)  # noqa: E731
    prefix_len, lens = prefix_blocks * block_size, suffix_lens.to(torch.int32).to(device.DEVICE)
    full = paged_decode_attention(q, k, v, as_tensor([prefix + row for row in own]), lens + prefix_len)
    out = cascade_attention(q, k, v, as_tensor(prefix), prefix_len, as_tensor(own), lens)
    if isinstance(out, torch.Tensor) and out.shape == full.shape:
        prefix_only = paged_decode_attention(q, k, v, as_tensor([prefix] * 16), torch.full_like(lens, prefix_len))
        suffix_only = paged_decode_attention(q, k, v, as_tensor(own), lens)
        if torch.allclose(out, prefix_only, atol=1e-4):
            hint = "your output is attention over the prefix alone: the sequence's own tokens are missing."
        elif torch.allclose(out, suffix_only, atol=1e-4):
            hint = "your output is attention over each sequence's own tokens alone: the prefix is missing."
        else:
            hint = ("the prefix and a sequence's own tokens are two disjoint sets of keys: their two states merge like "
                    "two splits of one context, stacked on the split dimension.")
    else:
        hint = ""
    assert_close(out, full, atol=1e-4, rtol=1e-4, name="cascade output (seq, head, d)", hint=hint)


def reference_bounds(context_len: int, num_splits: int, block_n: int) -> list[tuple[int, int]]:
    """The kernel's cut: split length ``ceil(context_len / num_splits)`` rounded up to whole tiles of ``block_n``."""
    length = -(-(-(-context_len // num_splits)) // block_n) * block_n
    return [(min(s * length, context_len), min((s + 1) * length, context_len)) for s in range(num_splits)]


def _bounds_cases(g: torch.Generator) -> list[tuple[int, int, int]]:
    """(context_len, num_splits, block_n) of the stated space: every boundary, then a few drawn cases."""
    cases = []
    for block_n in (1, 4, 16, BLOCK_N):
        for num_splits in range(1, 9):
            whole = num_splits * block_n
            for n in {1, 2, block_n - 1, block_n, block_n + 1, whole - 1, whole, whole + 1, 2 * whole, num_splits - 1,
                      num_splits, num_splits + 1, 1000}:
                if n >= 1:
                    cases.append((n, num_splits, block_n))
    for _ in range(40):
        cases.append((int(torch.randint(1, 400, (1,), generator=g)), int(torch.randint(1, 9, (1,), generator=g)),
                      int(torch.randint(1, 40, (1,), generator=g))))
    return cases


def _merge_cases(g: torch.Generator) -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    """(what, outs, lses) of the stated space: every boundary, then a few drawn cases."""
    def states(lead, num_splits, d, lses):
        outs = torch.randn(*lead, num_splits, d, generator=g)
        lses = torch.as_tensor(lses, dtype=torch.float32).expand(*lead, num_splits).clone()
        return outs.masked_fill(lses.isneginf()[..., None], 0.0), lses

    def randn(*shape, scale=1.0, shift=0.0):
        return torch.randn(*shape, generator=g) * scale + shift

    inf = -math.inf
    cases = [("one split, no leading dimension, d = 1", *states((), 1, 1, [0.7])),
             ("one split, one row", *states((1,), 1, 4, [2.5])),
             ("three splits, no leading dimension", *states((), 3, 8, [1.0, -2.0, 0.5])),
             ("one sequence, one head (leading dimensions of size 1)", *states((1, 1), 4, 16, randn(4))),
             ("one sequence, 3 heads", *states((1, 3), 2, 8, randn(1, 3, 2))),
             ("3 sequences, 1 head, 3 splits", *states((3, 1), 3, 8, randn(3, 1, 3))),
             ("a 3-d batch of rows (2, 1, 3)", *states((2, 1, 3), 5, 2, randn(2, 1, 3, 5))),
             ("every split of a row tied", *states((2, 3), 4, 8, torch.full((4,), 1.25))),
             ("two maxima tied, a third split below", *states((2,), 3, 8, [5.0, 5.0, -1.0])),
             ("lses in the hundreds", *states((2, 2), 3, 8, randn(2, 2, 3, scale=50.0, shift=300.0))),
             ("lses all far below zero (about -300)", *states((2, 2), 3, 8, randn(2, 2, 3, shift=-300.0))),
             ("lses far apart in a row: [3, 120] and [120, 3]", states((2,), 2, 8, [3.0, 120.0])[0],
              torch.tensor([[3.0, 120.0], [120.0, 3.0]])),
             ("empty splits (lse -inf) first, between and last", *states((2, 2), 5, 8, [inf, 0.3, inf, -0.4, inf])),
             ("every split empty but one, far below zero", *states((3,), 4, 8, [inf, inf, -250.0, inf])),
             ("every split empty but one, in the hundreds", *states((1,), 3, 4, [inf, 200.0, inf])),
             # far below any finite stand-in for -inf a merge might put in an empty split's place (-1e4, -1e30)
             # (outputs of 1e-3: float32 rounds an lse near -20000 by 1e-3, which a merge by logsumexp carries into
             # its weights; a stand-in's weight, all of it on an empty split, shows in the merged lse)
             ("lses near -20000 beside empty splits", *(lambda o, l: (o * 1e-3, l))(
                 *states((2,), 4, 8, [inf, -20003.0, -20001.5, inf]))),
             ("lses below -1e30 beside an empty split", *states((2,), 3, 8, [-3 * 2.0**100, inf, -2 * 2.0**100]))]
    for _ in range(6):
        lead = tuple(int(x) for x in torch.randint(1, 4, (int(torch.randint(0, 4, (1,), generator=g)),), generator=g))
        num_splits, d = int(torch.randint(1, 7, (1,), generator=g)), int(torch.randint(1, 17, (1,), generator=g))
        lses = randn(*lead, num_splits, scale=float(torch.tensor([1.0, 30.0, 200.0])[torch.randint(0, 3, (1,),
                                                                                                      generator=g)]))
        if num_splits > 1:
            empty = torch.rand(*lead, num_splits, generator=g) < 0.3
            empty[..., int(torch.randint(0, num_splits, (1,), generator=g))] = False   # one non-empty split a row
            lses = lses.masked_fill(empty, inf)
        cases.append((f"{num_splits} splits, leading dimensions {lead}, d = {d}", *states(lead, num_splits, d, lses)))
    return cases


def check_over_the_space(split_bounds: Callable, merge_states: Callable) -> None:
    """Check 7: ``split_bounds`` and ``merge_states`` against the stated rule and the float64 merge on inputs drawn
    from the whole stated space (the module docstring), boundaries included: the first input where yours differs,
    which quantity, by how much."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(7)
    for n, num_splits, block_n in _bounds_cases(g):
        got, want = split_bounds(n, num_splits, block_n), reference_bounds(n, num_splits, block_n)
        if isinstance(got, (list, tuple)) and [tuple(b) if isinstance(b, (list, tuple)) else b for b in got] == want:
            continue
        problem = _bounds_problem(got, n, num_splits, block_n)
        length = want[0][1] - want[0][0] if num_splits > 1 else n
        raise AssertionError(
            f"split_bounds({n}, {num_splits}, {block_n}): expected {want}, got {got!r}"
            + (f": {problem.split(': ', 1)[1]}" if problem else "") + f". Hint: ceil({n} / {num_splits}) = "
            f"{-(-n // num_splits)} keys a split, rounded up to whole tiles of {block_n}: "
            f"{-(-(-(-n // num_splits)) // block_n) * block_n}" + (f" (the first split holds {length})"
                                                                   if num_splits > 1 else "") +
            "; round up with -(-a // b) (a // b + 1 is one too many when b divides a).")
    for what, outs, lses in _merge_cases(g):
        where = f"{what}, outs {tuple(outs.shape)}, lses {tuple(lses.shape)}"
        out, lse = _merged(merge_states, outs.to(device.DEVICE), lses.to(device.DEVICE), where)
        where = f"merge_states({where})"
        w = torch.softmax(lses.double(), -1)
        hint = ("" if torch.isfinite(out).all() else
                "NaN or inf where the exact merge is finite: subtract each row's own largest lse, whatever its sign "
                "(a reference clamped at 0 makes every exp underflow when the lses are all far below zero).")
        # A float32 lse of magnitude L is known to L * 2^-24, and a correct merge may carry that error through each
        # split's weight (a running logaddexp does): the output may be off by about splits * L * 2^-23.
        finite = lses[torch.isfinite(lses)]
        atol = 1e-5 + lses.shape[-1] * (float(finite.abs().max()) if finite.numel() else 0.0) * 2.0**-23
        assert_close(out, (w[..., None] * outs.double()).sum(-2), atol=atol, rtol=1e-5,
                     name=f"{where}: the merged output", hint=hint or _diagnose_out(out, outs, lses))
        assert_close(lse, torch.logsumexp(lses.double(), -1), atol=1e-4, rtol=1e-6,
                     name=f"{where}: the merged lse", hint=hint or
                     "the merged lse is log(sum_s exp(lse_s)): the row's largest lse plus the log of the rescaled sum.")
