"""The checks of exercise 2's stretch (causal tiled attention that skips what it never needs).

Tile counts are compared with a brute force over the whole causal mask; the attention with
:func:`pagedlab.attention.tiled_attention`. Skipping is measured on the work itself: a ``TorchFunctionMode`` counts
the elements every matrix product produces and every operation that brings ``-inf`` into a score-shaped tensor
(``masked_fill``, ``where``, an additive bias, item assignment: whatever its name).

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included:

* ``key_tile_counts(r0, rows, n_q, n_k, block_n)``: every query tile ``r0 = 0, block_m, 2 block_m, ...`` with its
  ``rows = min(block_m, n_q - r0)`` (the last one shorter), for ``n_q`` and ``n_k`` of 1, one below, at and one past
  a tile (7, 8, 9, 15, 16, 17) and 33, ``n_q < n_k``, ``n_q == n_k`` and ``n_q > n_k`` (rows that see no key),
  tiles of 1, 3, 8, 16 and 40 (larger than the inputs) for both ``block_m`` and ``block_n``. Compared with the
  counts read off the causal mask tile by tile. Check 1 also asks for ten million keys, and a billion in tiles of
  one, within 2 seconds each.
* ``causal_tiled_attention(q, k, v, block_m, block_n)``: 2-D ``q`` ``(n_q, d)``, ``k`` and ``v`` ``(n_k, d)``; one
  query, one key, ``n_q > n_k`` (rows that see no key: output 0); tiles of 1, tiles that fit the lengths exactly,
  one shorter or one longer than them, larger than the inputs; ``d`` from 1 to 24; scores of magnitude 1e3 (integer
  ``q`` and ``k`` with d = 16: every score exact in float32, many rows whose visible scores are all far below 0), and
  rows whose visible scores are all below -1e30 (exact in float32: a finite stand-in for ``-inf`` shows);
  float32, and float16 and bfloat16 inputs with a large ``q`` (~1000) whose scores differ by a few units, with ``d``
  whose square root is not a power of two (computed in float32, returned in ``q``'s dtype). Compared with
  :func:`pagedlab.attention.naive_attention` in float64.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from .. import attention as ref
from ..checks import assert_close, differing_rows
from ..testing import MaskCounter, ProductCounter, exact_huge_scores, within

GEOMETRIES = [(n_q, n_k, bm, bn) for n_q, n_k in [(16, 16), (37, 37), (20, 37), (37, 20), (1, 9), (9, 1)]
              for bm, bn in [(8, 8), (5, 7), (16, 4)]]


def brute_force_counts(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) from the whole causal mask: slow, obviously right."""
    visible = ref.causal_mask(n_q, n_k)[r0:r0 + rows]
    tiles = [visible[:, c0:c0 + block_n] for c0 in range(0, n_k, block_n)]
    seen = [bool(t.any()) for t in tiles]
    n_visit = max((i + 1 for i, s in enumerate(seen) if s), default=0)
    n_full = next((i for i, t in enumerate(tiles) if not bool(t.all())), len(tiles))
    return n_full, n_visit


def tile_census(n_q: int, n_k: int, block_m: int, block_n: int) -> tuple[int, int]:
    """(visited, straddling) key tiles over the whole grid, from the brute-force mask."""
    visited = straddling = 0
    for r0 in range(0, n_q, block_m):
        n_full, n_visit = brute_force_counts(r0, min(block_m, n_q - r0), n_q, n_k, block_n)
        visited, straddling = visited + n_visit, straddling + n_visit - n_full
    return visited, straddling


def error_hint(exc: BaseException) -> str:
    """The hint for an error raised by the learner's functions."""
    if isinstance(exc, RuntimeError) and "dtype" in str(exc):
        return ("float16 or bfloat16 inputs met float32: convert q, k AND v to float32 (each slice, .float()) "
                "before any arithmetic; only the output goes back to q's dtype.")
    if isinstance(exc, RuntimeError) and ("size" in str(exc) or "shape" in str(exc)):
        return ("two tensors of different shapes met: the last key tile can be shorter than block_n, and the last "
                "query tile shorter than block_m; take sizes from the slices, not from the block sizes.")
    return ""


def check_key_tiles(key_tile_counts: Callable) -> None:
    """Check 1: ``key_tile_counts`` against the brute force on small grids, then on a huge one, from indices alone."""
    __tracebackhide__ = True
    for n_q, n_k, bm, bn in GEOMETRIES:
        for r0 in range(0, n_q, bm):
            rows = min(bm, n_q - r0)
            got, want = key_tile_counts(r0, rows, n_q, n_k, bn), brute_force_counts(r0, rows, n_q, n_k, bn)
            if isinstance(got, (tuple, list)) and tuple(got) == want:
                continue
            where = (f"key_tile_counts({r0}, {rows}, {n_q}, {n_k}, {bn}) (rows {r0}..{r0 + rows - 1}, key tiles of "
                     f"{bn}): expected (n_full, n_visit) = {want}, got {got!r}")
            if not isinstance(got, (tuple, list)) or len(got) != 2:
                raise AssertionError(f"{where}: return a pair of ints")
            if got[1] != want[1]:
                last = r0 + rows - 1 + n_k - n_q
                hint = (f"the last row, {r0 + rows - 1}, sees keys up to {r0 + rows - 1} + (n_k - n_q) = {last}; the "
                        f"tiles up to the one holding that key are visited" +
                        (" (none: it is negative, and -1 // block_n is -1 in Python)." if last < 0 else "."))
            else:
                hint = (f"the first row, {r0}, sees keys up to {r0} + (n_k - n_q) = {r0 + n_k - n_q}; a tile is full "
                        f"when its LAST key, min((t + 1) * block_n, n_k) - 1, is at most that (the last tile is "
                        f"shorter).")
            raise AssertionError(f"{where}. Hint: {hint}")
    # ten million queries and keys, then a billion in key tiles of one key, at the last query tile: a mask is 10**14
    # entries, a loop over the keys 10**7 steps, a loop over the key tiles a billion
    for huge, want in (((0, 64, 10**7, 10**7, 64), (0, 1)), ((10**9 - 64, 64, 10**9, 10**9, 1), (10**9 - 63, 10**9))):
        call = f"key_tile_counts{huge}"
        try:
            got = within(2.0, key_tile_counts, *huge)
        except (TimeoutError, MemoryError, RuntimeError) as exc:
            raise AssertionError(
                f"{call} failed ({type(exc).__name__}: {str(exc)[:200]}): a mask of every query and key, or a loop "
                f"over the keys or over the key tiles, takes as many entries or steps as there are keys. Hint: decide "
                f"from the indices alone, with a few integer operations, no loop and no tensor.") from None
        if not isinstance(got, (tuple, list)) or tuple(got) != want:
            raise AssertionError(f"{call}: expected {want}, got {got!r}")


def _assert_causal(causal_tiled_attention: Callable, n_q: int, n_k: int, block_m: int, block_n: int,
                   hint: str | Callable, d: int = 8, seed: int = 0) -> None:
    """``hint``: the text, or ``hint(got, v, bad_rows)`` that reads it off the wrong rows."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(n_q, d, generator=g), torch.randn(n_k, d, generator=g), torch.randn(n_k, d, generator=g)
    got = causal_tiled_attention(q, k, v, block_m=block_m, block_n=block_n)
    want = ref.tiled_attention(q, k, v, causal=True, block_m=block_m, block_n=block_n)[0]
    bad = differing_rows(got, want) if isinstance(got, torch.Tensor) and got.shape == want.shape else []
    if callable(hint):
        hint = hint(got.detach(), v, bad) if bad else ""
    assert_close(got, want, atol=1e-5, name=f"causal_tiled_attention, n_q = {n_q}, n_k = {n_k}, tiles "
                 f"{block_m} x {block_n}", hint=f"rows {bad[:8]} of {n_q} differ. {hint}" if bad else hint)


def check_output(causal_tiled_attention: Callable) -> None:
    """Check 2: the output with n_q <= n_k, where every row sees at least one key."""
    __tracebackhide__ = True
    for n_q, n_k, bm, bn in [(16, 16, 8, 8), (37, 37, 5, 7), (20, 37, 16, 4), (1, 9, 8, 8)]:
        _assert_causal(causal_tiled_attention, n_q, n_k, bm, bn, hint=(
            "a straddling tile hides each key from the rows before its diagonal: compare global positions (the "
            "tile's key indices against each row's index plus n_k - n_q), and mask every tile from n_full on."))


def check_update_state(online_softmax_update: Callable) -> None:
    """Check 3: after a tile that hides every key from some rows, those rows keep m = -inf, l = 0, acc = 0."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(3)
    rows, cols, d = 4, 5, 3
    s = torch.randn(rows, cols, generator=g)
    s[:2] = -math.inf                      # rows 0 and 1 see no key of this tile (nor of any before it)
    s[2, 3:] = -math.inf                   # row 2 sees 3 of its keys
    v = torch.randn(cols, d, generator=g)
    m0, l0, acc0 = torch.full((rows,), -math.inf), torch.zeros(rows), torch.zeros(rows, d)
    result = online_softmax_update(m0.clone(), l0.clone(), acc0.clone(), s.clone(), v.clone())
    if not (isinstance(result, tuple) and len(result) == 3):
        raise AssertionError(f"online_softmax_update must return (m, l, acc); got {type(result).__name__}")
    m, l, acc = result
    seen = torch.isfinite(s).any(1)
    m_ref = torch.where(seen, s.amax(1), torch.zeros(rows))
    p = torch.exp(s - m_ref[:, None])
    want = (torch.where(seen, s.amax(1), -math.inf), p.sum(1), p @ v)
    first = "the first tile of a query tile: m = -inf, l = 0, acc = 0 for every row; rows 0 and 1 see no key of it"
    for name, got, w in zip(("m", "l", "acc"), (m, l, acc), want):
        nan_rows = (torch.isnan(got).reshape(rows, -1).any(1).nonzero().flatten().tolist()
                    if isinstance(got, torch.Tensor) else [])
        hint = (f"{name} of rows {nan_rows} is NaN: exp(s - m) with s = m = -inf is exp(-inf + inf) = NaN. For a row "
                f"whose running max is still -inf, subtract 0 instead, so that exp(-inf) = 0 and the state stays "
                f"m = -inf, l = 0, acc = 0 (the final division would hide the NaN, a later tile would not)."
                if nan_rows else "the rows that see keys follow exercise 2's update.")
        assert_close(got, w, atol=1e-6, name=f"{name} after {first}", hint=hint)


def check_no_key(causal_tiled_attention: Callable) -> None:
    """Check 4: with n_q > n_k the first n_q - n_k rows see no key: their output is 0."""
    __tracebackhide__ = True
    for n_q, n_k, bm, bn in [(37, 20, 8, 8), (9, 1, 5, 7), (37, 20, 16, 4)]:
        _assert_causal(causal_tiled_attention, n_q, n_k, bm, bn,
                       hint=lambda got, v, bad, n_q=n_q, n_k=n_k: _no_key_hint(got, v, bad, n_q - n_k))


def _no_key_hint(got: torch.Tensor, v: torch.Tensor, bad: list[int], blind: int) -> str:
    """Why rows ``bad`` of ``got`` differ, when the first ``blind`` rows see no key: read off what they hold."""
    rows = [r for r in bad if r < blind]
    if not rows:
        return (f"the first n_q - n_k = {blind} rows see no key (their output is 0), and they are right; the rows "
                f"after them see keys as in check 2.")
    nan = [r for r in rows if torch.isnan(got[r]).any()]
    if nan:
        return (f"rows {nan[:8]} see no key and came out NaN: their l stays 0, so their output is 0 by definition, "
                f"not acc / l = 0 / 0: divide only where l > 0.")
    for r in rows:   # a finite fill (-1e30) gives every hidden key the weight exp(0) = 1: the plain average of values
        for c in range(1, v.shape[0] + 1):
            if torch.allclose(got[r].double(), v[:c].double().mean(0), atol=1e-5, rtol=1e-5):
                return (f"row {r} sees no key, yet its output is the plain average of the values of keys 0 to {c - 1}, "
                        f"the keys hidden from it in the tiles it visited: every hidden score got the same finite "
                        f"value (a fill such as -1e30 or finfo.min), so the row's max is that value and exp(s - m) = 1 "
                        f"for each. Fill hidden scores with -inf: the row's m stays -inf, its l 0, its output 0.")
    return (f"rows {rows[:8]} see no key (the first n_q - n_k = {blind}): their output is 0 by definition, whatever "
            f"tiles they visit; any weight a hidden key gets makes it nonzero.")


class WorkCounter(ProductCounter, MaskCounter):
    """Counts, while active, the elements every matrix product produces (:class:`~pagedlab.testing.ProductCounter`),
    the operations that apply a boolean mask to a score tile, whatever they are called
    (:class:`~pagedlab.testing.MaskCounter`, as the graded calls count them), and the calls of torch's fused
    attention, whose products and masks are inside one call, over whatever keys it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.fused_calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        self.note_product(func, result)
        self.note_masks(list(args) + list(kwargs.values()), result)
        self.fused_calls += getattr(func, "__name__", "") == "scaled_dot_product_attention"
        return result


def product_budget(n_q: int, n_k: int, block_m: int, block_n: int, d: int) -> int:
    """The elements of the score tiles and P V products of the key tiles that hold a visible key, query tile by query
    tile: what causal tile skipping computes at most."""
    budget = 0
    for r0 in range(0, n_q, block_m):
        rows = min(block_m, n_q - r0)
        _, n_visit = brute_force_counts(r0, rows, n_q, n_k, block_n)
        budget += sum(rows * (min(block_n, n_k - t * block_n) + d) for t in range(n_visit))
    return budget


def check_skipping(causal_tiled_attention: Callable) -> None:
    """Check 5: no work on tiles hidden from every row, no mask on tiles visible to every row."""
    __tracebackhide__ = True
    d = 8
    for n_q, n_k, bm, bn in [(64, 64, 8, 8), (37, 50, 5, 7), (40, 24, 16, 4)]:
        visited, straddling = tile_census(n_q, n_k, bm, bn)
        budget = product_budget(n_q, n_k, bm, bn, d)
        q, k, v = torch.randn(n_q, d), torch.randn(n_k, d), torch.randn(n_k, d)
        with WorkCounter() as work:
            causal_tiled_attention(q, k, v, block_m=bm, block_n=bn)
        geometry = f"n_q = {n_q}, n_k = {n_k}, tiles {bm} x {bn}"
        if work.fused_calls:
            raise AssertionError(
                f"{geometry}: causal_tiled_attention called torch's scaled_dot_product_attention {work.fused_calls} "
                f"times. It computes and masks every key it is given in one call, so what was skipped and what was "
                f"masked cannot be told, and the exercise asks for the tiles. Hint: score each visited key tile "
                f"yourself, mask it only from n_full on, and fold it in with online_softmax_update.")
        if work.product_elements > budget:
            raise AssertionError(
                f"{geometry}: the {visited} key tiles that hold a visible key make {budget} elements of scores and "
                f"P V products, but your products made {work.product_elements}. Hint: scores were computed for keys "
                f"hidden from every row of the query tile; which tiles to visit is decided from the indices BEFORE "
                f"computing a tile (not from its scores or its mask).")
        if work.masking_ops > straddling:
            raise AssertionError(
                f"{geometry}: only {straddling} tiles straddle the diagonal, but {work.masking_ops} operations applied "
                f"a boolean mask to a score tile (masked_fill, where, s[mask] = ..., or a tile of -inf built from the "
                f"mask). Hint: the first n_full tiles of each query tile are visible to every row and need no mask; "
                f"mask only from n_full on, one operation per tile.")


def counts_by_tiles(r0: int, rows: int, n_q: int, n_k: int, block_n: int) -> tuple[int, int]:
    """(n_full, n_visit) tile by tile from the rule (row i sees key j when j <= i + n_k - n_q): no tensor, so the
    check can ask for thousands of them."""
    shift, n_tiles = n_k - n_q, -(-n_k // block_n)
    full = [min((t + 1) * block_n, n_k) - 1 <= r0 + shift for t in range(n_tiles)]   # its last key, to the first row
    seen = [t * block_n <= r0 + rows - 1 + shift for t in range(n_tiles)]            # its first key, to the last row
    return next((t for t, f in enumerate(full) if not f), n_tiles), sum(seen)


SPACE_LENGTHS = (1, 7, 8, 9, 15, 16, 17, 33)
SPACE_TILES = (1, 3, 8, 16, 40)


def _space_inputs(g: torch.Generator, n_q: int, n_k: int, d: int, kind: str, dtype: torch.dtype):
    if kind == "below":     # row 0's visible scores all below -1e30, exact in float32
        return exact_huge_scores(g, n_q, n_k, d)
    if kind == "huge":      # integers: every score exact in float32, of magnitude 1e3
        q, k = (torch.randint(-40, 41, (n, d), generator=g).float() for n in (n_q, n_k))
        return q, k, torch.randn(n_k, d, generator=g)
    if dtype != torch.float32:   # a large q whose scores differ by a few units (see ex02's check 9)
        k, v = (torch.randn(n_k, d, generator=g).to(dtype) for _ in range(2))
        u = torch.linalg.svd(k.float() - k[:1].float())[2][-1]
        return (1000 * u + torch.randn(n_q, d, generator=g)).to(dtype), k, v
    return torch.randn(n_q, d, generator=g), torch.randn(n_k, d, generator=g), torch.randn(n_k, d, generator=g)


def check_over_the_space(key_tile_counts: Callable, causal_tiled_attention: Callable) -> None:
    """Check 6: ``key_tile_counts`` and ``causal_tiled_attention`` against the mask and float64 attention on inputs
    drawn from the whole stated space (the module docstring), boundaries included: the first input where yours
    differs, which quantity, by how much."""
    __tracebackhide__ = True
    for n_q in SPACE_LENGTHS:
        for n_k in SPACE_LENGTHS:
            for bm in SPACE_TILES:
                for bn in SPACE_TILES:
                    for r0 in range(0, n_q, bm):
                        rows = min(bm, n_q - r0)
                        got, want = key_tile_counts(r0, rows, n_q, n_k, bn), counts_by_tiles(r0, rows, n_q, n_k, bn)
                        if isinstance(got, (tuple, list)) and tuple(got) == want:
                            continue
                        which = ("n_visit" if isinstance(got, (tuple, list)) and len(got) == 2 and got[1] != want[1]
                                 else "n_full")
                        raise AssertionError(
                            f"key_tile_counts({r0}, {rows}, {n_q}, {n_k}, {bn}) (query tile {r0}..{r0 + rows - 1} "
                            f"of {n_q}, {n_k} keys in tiles of {bn}, the last of {n_k - (-(-n_k // bn) - 1) * bn}): "
                            f"expected (n_full, n_visit) = {want}, got {got!r}; {which} differs. Hint: row i sees "
                            f"key j when j <= i + (n_k - n_q); n_visit counts the tiles whose FIRST key the last row "
                            f"sees, n_full those whose LAST key the first row sees.")
    g = torch.Generator().manual_seed(6)
    f32 = torch.float32
    cases = [(1, 1, 16, 16, 8, "", f32), (1, 9, 8, 8, 8, "", f32), (9, 1, 4, 4, 8, "", f32),
             (16, 16, 16, 16, 8, "", f32), (17, 17, 16, 16, 8, "", f32), (15, 15, 16, 16, 8, "", f32),
             (13, 13, 1, 1, 3, "", f32), (20, 37, 16, 4, 1, "", f32), (37, 20, 5, 7, 24, "", f32),
             (24, 30, 8, 8, 16, "huge", f32), (30, 24, 8, 8, 16, "huge", f32),
             (12, 14, 4, 4, 12, "", torch.float16), (7, 19, 4, 8, 24, "", torch.float16),
             (12, 14, 4, 4, 12, "", torch.bfloat16), (9, 9, 8, 2, 12, "", torch.bfloat16)]
    for _ in range(5):
        n_q, n_k, bm, bn, d = (int(torch.randint(lo, hi, (1,), generator=g))
                               for lo, hi in ((1, 30), (1, 30), (1, 17), (1, 17), (1, 25)))
        cases.append((n_q, n_k, bm, bn, d, "", f32))
    cases += [(9, 14, 4, 4, 16, "below", f32), (20, 20, 8, 2, 16, "below", f32)]  # (last: the draws above stay)
    for n_q, n_k, bm, bn, d, kind, dtype in cases:
        q, k, v = _space_inputs(g, n_q, n_k, d, kind, dtype)
        where = (f"causal_tiled_attention of {str(dtype).removeprefix('torch.')} inputs, n_q = {n_q}, n_k = {n_k}, "
                 f"d = {d}, tiles {bm} x {bn}" + {"huge": ", scores of magnitude 1e3", "": "",
                                                   "below": ", row 0's visible scores all below -1e30"}[kind] +
                 (", a large q (~1000) whose scores differ by a few units" if dtype != f32 else ""))
        got = causal_tiled_attention(q, k, v, block_m=bm, block_n=bn)
        if not isinstance(got, torch.Tensor) or got.dtype != dtype:
            raise AssertionError(f"{where}: returned {getattr(got, 'dtype', type(got).__name__)}, expected {dtype}: "
                                 f"compute in float32, return q's dtype.")
        want = ref.naive_attention(q.double(), k.double(), v.double(), causal=True)
        bad = differing_rows(got, want, atol=1e-5 if dtype == f32 else 1e-3, rtol=1e-5 if dtype == f32 else 1.6e-2)
        if dtype != f32:
            rounded = ref.naive_attention((q / math.sqrt(d)).float(), k.float(), v.float(), causal=True, sm_scale=1.0)
            hint = (f"your result is what q / sqrt(d) rounded to {dtype} gives: convert to float32 FIRST, then scale; "
                    f"{dtype} rounds a q of ~1000 by a quarter or more, which moves every score."
                    if torch.allclose(got.float(), rounded.to(dtype).float(), atol=1e-3, rtol=1e-2) else
                    f"convert q, k and v to float32 before any arithmetic, and return q's dtype ({dtype}).")
        elif kind == "below":
            hint = (f"row 0 sees keys 0 to {n_k - n_q}, whose scores are all below -1e30 (exact in float32): a running "
                    f"max that starts at a finite value (-1e9, 0) instead of -inf is above every one of them, and "
                    f"every exp underflows to 0; hidden scores and the first running max are -math.inf.")
        elif kind:
            hint = ("rows whose visible scores are all far below 0: subtract the row's running max itself (only a "
                    "max of -inf is replaced by 0), or every exp underflows and the row looks as if it saw no key.")
        else:
            hint = "tiles of every size, the last one shorter, each slice's real size."
        assert_close(got.double(), want, atol=1e-5 if dtype == f32 else 1e-3, rtol=1e-5 if dtype == f32 else 1.6e-2,
                     name=where, hint=f"rows {bad[:8]} of {n_q} differ. {hint}" if bad else hint)
