"""Exercise 2's checks: the online-softmax update, then tiled attention built on it.

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included:

* ``online_softmax_update(m, l, acc, s, v_tile)``: 1 to 6 rows, tiles of 1 to 9 columns (of varying widths in one
  row of tiles), ``d`` from 1 to 5; ordinary scores, scores of magnitude 1e4, a running max that rises, falls, or
  ties the tile's max exactly (a tile equal to an earlier one); ``-inf`` for masked keys: some columns of a tile, and
  a later tile that hides every key of a row (the first tile of each row has a finite score, as the text allows).
  The state after the last tile is compared with the exact softmax state: ``m`` the row max, ``l`` the sum of
  ``exp(s - m)``, ``acc / l`` the softmax times ``v``.
* ``tiled_attention(q, k, v, causal, block_m, block_n)``: 2-D ``q`` ``(n_q, d)``, ``k`` and ``v`` ``(n_k, d)``; one
  query, one key, ``n_q > n_k`` only without ``causal``; tiles of 1, tiles that divide the lengths exactly, one
  shorter or one longer than them, larger than the inputs; ``d`` from 1 to 24 (not only powers of two); scores of
  magnitude 1e3 (with d = 16, whose 1 / sqrt(d) is exact), and causal rows whose visible scores are all below -1e30
  (exact in float32: a finite stand-in for ``-inf`` shows); float32, and float16 and bfloat16 inputs with a large
  ``q`` (~1000) whose scores differ by a few units, and ``d`` whose square root is not a power of two (computed in
  float32, returned in ``q``'s dtype). Compared with ``naive_attention``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from .. import attention as ref
from ..checks import assert_close, differing_rows
from ..testing import exact_huge_scores


def run_tiles(online_softmax_update, scores, values, block):
    """Feed the columns of `scores` to online_softmax_update `block` at a time; return the final state."""
    rows, d = scores.shape[0], values.shape[1]
    m, l, acc = torch.full((rows,), -math.inf), torch.zeros(rows), torch.zeros(rows, d)
    for c in range(0, scores.shape[1], block):
        m, l, acc = online_softmax_update(m, l, acc, scores[:, c:c + block], values[c:c + block])
    return m, l, acc


def check_state(online_softmax_update, scores, values, block, what):
    """Assert that the state after feeding `scores` in tiles of `block` columns is the exact softmax state."""
    assert_state(*run_tiles(online_softmax_update, scores, values, block), scores, values, what)


def assert_state(m, l, acc, scores, values, what):
    """Assert that ``(m, l, acc)`` is the exact softmax state of ``scores`` and ``values``."""
    m_exact = scores.amax(dim=-1)
    assert_close(m, m_exact, name=f"m after {what}", hint="m is the largest score seen so far in each row: the larger of the running max and the "
                 "tile's row max.")
    assert_close(l, torch.exp(scores - m_exact[:, None]).sum(-1), rtol=1e-5, name=f"l after {what}",
                 hint="l sums the exponentials of every score seen so far relative to the running max; when a tile "
                      "raises the max, what the earlier tiles summed was relative to the old one.")
    assert_close(acc / l[:, None], torch.softmax(scores, dim=-1) @ values, atol=1e-5, name=f"acc / l after {what}",
                 hint="acc is brought to the new max exactly as l is (one factor per row), and stays unnormalized: "
                      "divide by l only once, after the last tile.")


def _is_shape_error(exc: BaseException) -> bool:
    """True for torch's error about tensors whose sizes do not fit (a RuntimeError naming a size or shape)."""
    return isinstance(exc, RuntimeError) and any(word in str(exc) for word in ("size", "shape", "match"))


def error_hint(exc: BaseException) -> str:
    """The hint for an error raised by the learner's functions: shapes only for a shape error."""
    if not _is_shape_error(exc):
        return ""
    return ("a shape mismatch usually means a tile's real size differs from block_m or block_n (the last tile, or "
          "a tile larger than the input): start m, l, acc afresh for each query tile with its real row count "
          "q_i.shape[0], and slice k and v with the same c0:c0 + block_n.")


def update_error_hint(exc: BaseException) -> str:
    """The hint for an error raised by ``online_softmax_update`` alone: a per-row value met a tile as a row."""
    if not _is_shape_error(exc):
        return ""
    return ("s is (rows, cols) and m_new is (rows,): a per-row value is subtracted from every column as a column, "
            "m_new[:, None], so that each row uses its own max; the same for alpha where acc (rows, d) is scaled.")


def attend(q, k, v, visible=None, sm_scale=None):
    """Attention with an explicit (n_q, n_k) `visible` mask and `scale`: the references a wrong answer may match."""
    s = (q.double() @ k.double().T) * (q.shape[1] ** -0.5 if sm_scale is None else sm_scale)
    if visible is not None:
        s = s.masked_fill(~visible, -math.inf)
    return torch.softmax(s, dim=-1) @ v.double()


def looks_like(got, other):
    """True when `got` matches `other`, NaN/inf where `other` has NaN (a row that sees no key) included."""
    nan = torch.tensor(math.nan, dtype=torch.float64)
    finite = lambda x: torch.where(torch.isfinite(x), x.double(), nan)
    return torch.allclose(finite(got), finite(other), atol=1e-4, equal_nan=True)


def update_problem(online_softmax_update):
    """None when online_softmax_update passes Checks 1-3, else their message: every tiled check relies on it."""
    g = torch.Generator().manual_seed(7)
    scores, values = torch.randn(5, 12, generator=g) + torch.arange(12.0) / 2, torch.randn(12, 3, generator=g)
    scores[:2, 8:] = -math.inf
    try:
        check_state(online_softmax_update, scores, values, 4, "tiles of a rising max, some rows masked")
    except Exception as error:  # noqa: BLE001 - any failure of the update is the real cause
        return f"{type(error).__name__}: {error}"
    return None


def assert_tiled(tiled_attention, online_softmax_update, n_q, n_k, causal, block_m, block_n, hint, d=8,
                 magnitude=1.0, seed=0):
    """Compare tiled_attention with naive_attention; name the likely cause (update, scale, mask) before `hint`."""
    problem = update_problem(online_softmax_update)
    assert problem is None, (
        f"tiled_attention relies on your online_softmax_update, which is not right yet: fix Checks 1-3 first "
        f"({problem})")
    g = torch.Generator().manual_seed(seed)
    q, k, v = (magnitude * torch.randn(n_q, d, generator=g), torch.randn(n_k, d, generator=g),
               torch.randn(n_k, d, generator=g))
    got, want = tiled_attention(q, k, v, causal=causal, block_m=block_m, block_n=block_n), \
        ref.naive_attention(q, k, v, causal=causal)
    visible = ref.causal_mask(n_q, n_k) if causal else None
    rows = torch.arange(n_q)[:, None]
    cols = torch.arange(n_k)[None, :]
    unwritten = [i for i in range(n_q) if bool((got[i] == 0).all())]
    if unwritten:
        hint = (f"rows {unwritten[:8]} of the output were never written (still 0): the loop over query tiles must "
                f"cover the last, shorter tile too.")
    elif not causal and bool(torch.isnan(got).any()):
        hint = ("NaN without any mask means 0/0: l stayed 0 for those rows, so no key tile reached them. The key loop "
                "must cover the last, shorter key tile too.")
    elif looks_like(got, attend(q, k, v, visible, sm_scale=1.0)):
        hint = "your output is attention WITHOUT the 1/sqrt(d) scale: the scores are divided by sqrt(d)."
    elif (looks_like(got, attend(q, k, v, visible, sm_scale=1.0 / d))
          or looks_like(got, attend(q, k, v, visible, 1 / d ** 1.5))):
        hint = "the scale is applied wrongly (1/d, or twice): the scores are divided by sqrt(d) exactly once."
    elif causal and looks_like(got, attend(q, k, v)):
        hint = "nothing is masked: with causal=True set the scores of keys j > i + (n_k - n_q) to -math.inf."
    elif causal and n_q > 1 and looks_like(got, attend(q, k, v, cols < rows + (n_k - n_q))):
        hint = ("the diagonal is hidden: query i sees its own key, so only keys strictly after i + (n_k - n_q) are "
                "hidden.")
    elif causal and n_q != n_k and looks_like(got, attend(q, k, v, cols <= rows)):
        hint = ("the mask is aligned top-left: with fewer queries than keys the queries are the LAST n_q positions, "
                "so query i sees keys j <= i + (n_k - n_q) (aligned bottom-right).")
    bad = differing_rows(got, want, atol=1e-5, rtol=1e-5)
    assert_close(got, want, atol=1e-5, name=f"tiled_attention, n_q = {n_q}, n_k = {n_k}, tiles {block_m} x {block_n}, "
                 f"causal = {causal}", hint=f"rows {bad[:8]} of {n_q} differ. {hint}" if bad else hint)


def check_one_tile(online_softmax_update) -> None:
    """Check 1: one tile."""
    __tracebackhide__ = True
    torch.manual_seed(0)
    scores, values = torch.randn(5, 8), torch.randn(8, 3)   # 5 rows, 8 columns: a broadcasting mistake is loud
    check_state(online_softmax_update, scores, values, 8, "one tile")


def check_several_tiles(online_softmax_update) -> None:
    """Check 2: several tiles."""
    __tracebackhide__ = True
    # Later tiles hold larger scores, so the running max grows and earlier sums must be rescaled.
    rising, values = torch.randn(5, 12) + torch.arange(12.0) / 2, torch.randn(12, 3)
    m, _, _ = run_tiles(online_softmax_update, rising, values, 4)
    assert (m > rising[:, :4].amax(dim=-1)).all(), (
        "the running max did not grow past the first tile's max although later scores are larger. "
        "Hint: the running max is the larger of the old one and the new tile's row max.")
    check_state(online_softmax_update, rising, values, 4, "three tiles with a rising max")
    falling = torch.randn(5, 12) - torch.arange(12.0) / 2
    check_state(online_softmax_update, falling, torch.randn(12, 3), 5, "tiles of 5, 5 and 2 with a falling max")
    # A causal mask hides whole rows of a later tile: -inf everywhere in that row must change nothing.
    masked = torch.randn(5, 12)
    masked[:3, 6:] = -math.inf
    check_state(online_softmax_update, masked, torch.randn(12, 3), 6, "a second tile that hides every key of rows 0-2")


def check_huge_scores_update(online_softmax_update) -> None:
    """Check 3: huge scores."""
    __tracebackhide__ = True
    big = torch.randn(4, 10) * 1e4  # exp() of scores this large overflows unless the max is subtracted first
    m, l, acc = run_tiles(online_softmax_update, big, torch.randn(10, 2), 5)
    assert torch.isfinite(l).all() and torch.isfinite(acc).all(), (
        "l or acc became inf/NaN for scores of magnitude 1e4. Hint: every exponent must be a score minus the running "
        "max, so that it is <= 0 (exp(s) / exp(m) overflows to inf / inf = NaN).")
    check_state(online_softmax_update, big, torch.randn(10, 2), 5, "tiles of huge scores")


def _tiled_check(doc: str, causal: bool, cases: list[tuple[int, int, int, int]], hint: str,
                 **options) -> Callable[..., None]:
    """A check of ``tiled_attention`` against ``naive_attention`` on each ``(n_q, n_k, block_m, block_n)`` of
    ``cases``, ending its message with ``hint`` when ``assert_tiled`` finds no likelier cause; ``options`` (``d``,
    ``magnitude``) go to ``assert_tiled``."""

    def check(tiled_attention, online_softmax_update) -> None:
        __tracebackhide__ = True
        for n_q, n_k, block_m, block_n in cases:
            assert_tiled(tiled_attention, online_softmax_update, n_q, n_k, causal, block_m, block_n, hint=hint,
                         **options)

    check.__doc__ = doc
    return check


# Tiles larger than the inputs: one query tile and one key tile, so only the scores and one update matter.
check_one_tile_and_scale = _tiled_check(
    "Check 4: one tile, and the scale.", False, [(8, 8, 16, 16)], d=16,
    hint="with a single tile only the scores (q times k transposed, divided by sqrt(d)) and one update matter.")

check_dividing_tiles = _tiled_check(
    "Check 5: tiles that divide the length.", False, [(64, 64, 16, 16)], hint=(
        "start m, l, acc afresh for every query tile (inside the loop over r0), and divide acc by l once, after its "
        "last key tile."))

check_shorter_tiles = _tiled_check(
    "Check 6: lengths that are not multiples of the tile.", False,
    [(37, 37, 16, 16), (37, 37, 5, 7), (3, 3, 16, 2), (20, 37, 8, 16)], hint=(
        "the last tile is shorter when the length is not a multiple of the tile: use each slice's real size, "
        "not block_m or block_n."))

check_causal = _tiled_check(
    "Check 7: causal.", True, [(64, 64, 16, 16), (32, 48, 16, 16), (37, 37, 5, 7), (20, 37, 8, 16)], hint=(
        "hide key j from query i when j > i + (n_k - n_q), using the tile's global positions (the keys' and the "
        "rows' indices in the whole sequence, not within the tile). If you skip key tiles, skip only a tile whose "
        "first key lies after the last row's diagonal."))


def check_huge_scores(tiled_attention, online_softmax_update) -> None:
    """Check 8: huge scores, and float16 inputs."""
    __tracebackhide__ = True
    assert_tiled(tiled_attention, online_softmax_update, 40, 40, True, block_m=8, block_n=8, magnitude=1000.0, hint=(
        "scores of magnitude ~1e3 overflow exp() unless each tile subtracts the running max (your update does: "
        "pass it the scores, not exp(scores))."))
    # float16 inputs whose raw products q k^T exceed float16's largest value, 65504: computed in float32, returned
    # in q's dtype.
    g = torch.Generator().manual_seed(8)
    q, k = ((300 * torch.randn(12, 16, generator=g)).half() for _ in range(2))
    v = torch.randn(12, 16, generator=g).half()
    got = tiled_attention(q, k, v, False, 8, 8)
    assert got.dtype == torch.float16, (
        f"tiled_attention of float16 q, k, v returned {got.dtype}: compute in float32, and return q's dtype.")
    assert_close(got.float(), ref.naive_attention(q.float(), k.float(), v.float()), atol=2e-3, rtol=2e-3,
                 name="tiled_attention of float16 inputs whose products q k^T exceed 65504",
                 hint="float16 holds at most 65504: convert q, k and v to float32 before the products.")


def _update_cases(g: torch.Generator) -> list[tuple[str, torch.Tensor, torch.Tensor, list[int]]]:
    """(what, scores, values, tile widths) of the update's stated space."""
    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    cases = [("one row, tiles of one column, d = 1", randn(1, 5), randn(5, 1), [1] * 5),
             ("one column per tile, 4 rows", randn(4, 3), randn(3, 2), [1, 1, 1]),
             ("tiles of 3, 1 and 5 columns", randn(3, 9), randn(9, 4), [3, 1, 5])]
    tie = randn(4, 3)
    cases.append(("a second tile equal to the first (the running max ties the tile's max)",
                  torch.cat([tie, tie], dim=1), randn(6, 3), [3, 3]))
    rising = randn(5, 8) + torch.arange(8.0) * 2
    cases.append(("a running max that rises with every tile", rising, randn(8, 2), [2, 2, 2, 2]))
    cases.append(("a running max that falls", rising.flip(1), randn(8, 2), [3, 5]))
    masked = randn(5, 9)
    masked[:, [1, 4]] = -math.inf                    # some keys of every row masked, never a whole first tile
    masked[1:3, 6:] = -math.inf                      # a later tile that hides every key of rows 1 and 2
    cases.append(("-inf in some columns, then a tile that hides every key of rows 1 and 2", masked, randn(9, 3),
                  [3, 3, 3]))
    cases.append(("scores of magnitude 1e4", randn(6, 10, scale=1e4), randn(10, 5), [4, 4, 2]))
    for _ in range(6):
        rows, d = int(torch.randint(1, 7, (1,), generator=g)), int(torch.randint(1, 6, (1,), generator=g))
        widths = [int(w) for w in torch.randint(1, 5, (int(torch.randint(1, 4, (1,), generator=g)),), generator=g)]
        cases.append((f"{rows} rows, tiles of {widths} columns, d = {d}", randn(rows, sum(widths), scale=5.0),
                      randn(sum(widths), d), widths))
    return cases


def _half_hint(got: torch.Tensor, q, k, v, causal: bool) -> str:
    """The hint for float16 / bfloat16 inputs whose result differs."""
    d = q.shape[1]
    rounded = ref.naive_attention((q / math.sqrt(d)).float(), k.float(), v.float(), causal=causal, sm_scale=1.0)
    if torch.allclose(got.float(), rounded.to(q.dtype).float(), atol=1e-3, rtol=1e-2):
        return (f"your result is what q / sqrt(d) rounded to {q.dtype} gives: convert to float32 FIRST, then scale "
                f"(q.float() / math.sqrt(d)); {q.dtype} rounds a q of ~1000 by a quarter or more, which moves every "
                f"score.")
    return f"convert q, k and v to float32 before any arithmetic, and return q's dtype ({q.dtype})."


def check_over_the_space(tiled_attention, online_softmax_update) -> None:
    """Check 9: your update and your tiled attention against the exact results on inputs drawn from the whole stated
    space (the module docstring), boundaries included: the first input where yours differs, which quantity, by how
    much."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(2)
    for what, scores, values, widths in _update_cases(g):
        rows, d = scores.shape[0], values.shape[1]
        state = (torch.full((rows,), -math.inf), torch.zeros(rows), torch.zeros(rows, d))
        c = 0
        for w in widths:
            state = online_softmax_update(*state, scores[:, c:c + w], values[c:c + w])
            c += w
        assert_state(*state, scores, values, f"the update over {what}")
    cases = [(1, 1, 1, 1, False, 8, 1.0), (1, 1, 16, 16, True, 8, 1.0), (1, 9, 4, 4, True, 8, 1.0),
             (9, 1, 4, 4, False, 8, 1.0), (13, 5, 4, 2, False, 3, 1.0), (13, 13, 1, 1, True, 4, 1.0),
             (14, 14, 7, 7, True, 8, 1.0), (14, 14, 15, 15, True, 8, 1.0), (16, 17, 16, 16, True, 8, 1.0),
             (17, 16, 16, 16, False, 8, 1.0), (15, 15, 16, 16, True, 8, 1.0), (6, 11, 3, 5, True, 1, 1.0),
             (24, 30, 8, 8, True, 16, 1000.0)]
    rng = torch.Generator().manual_seed(9)
    for _ in range(8):
        n_q, n_k, bm, bn, d = (int(torch.randint(lo, hi, (1,), generator=rng))
                               for lo, hi in ((1, 30), (1, 30), (1, 17), (1, 17), (1, 25)))
        cases.append((n_q, n_k, bm, bn, n_q <= n_k and bool(torch.randint(0, 2, (1,), generator=rng)), d, 1.0))
    for seed, (n_q, n_k, bm, bn, causal, d, magnitude) in enumerate(cases):
        assert_tiled(tiled_attention, online_softmax_update, n_q, n_k, causal, bm, bn, d=d, magnitude=magnitude,
                     seed=100 + seed, hint="tiles of every size, the last one shorter, each slice's real size.")
    for dtype, atol, rtol in ((torch.float16, 1e-3, 4e-3), (torch.bfloat16, 4e-3, 1.6e-2)):
        for n_q, n_k, bm, bn, causal, d in ((12, 10, 4, 4, False, 12), (7, 19, 4, 8, True, 24), (9, 9, 8, 2, True, 12)):
            # A large q whose scores differ by a few units: q is large along a direction u that every key meets
            # alike (u is orthogonal to the differences of the keys), so every key keeps some weight, and a q
            # rounded to the dtype after scaling moves each score differently, by a tenth or more.
            k, v = (torch.randn(n_k, d, generator=g).to(dtype) for _ in range(2))
            u = torch.linalg.svd(k.float() - k[:1].float())[2][-1]
            q = (1000 * u + torch.randn(n_q, d, generator=g)).to(dtype)
            where = (f"tiled_attention of {dtype} inputs, n_q = {n_q}, n_k = {n_k}, d = {d}, tiles {bm} x {bn}, "
                     f"causal = {causal}, a large q (~1000) whose scores differ by a few units")
            got = tiled_attention(q, k, v, causal, bm, bn)
            assert isinstance(got, torch.Tensor) and got.dtype == dtype, (
                f"{where}: returned {getattr(got, 'dtype', type(got).__name__)}, expected {dtype}: compute in float32, "
                f"and return q's dtype.")
            want = ref.naive_attention(q.float(), k.float(), v.float(), causal=causal)
            assert_close(got.float(), want, atol=atol, rtol=rtol, name=where,
                         hint=_half_hint(got, q, k, v, causal))
    # row 0's visible scores all below -1e30, exact in float32: a finite stand-in for -inf (a hidden key filled with
    # -1e9 or -1e30, a running max that starts at -1e9 or at 0) is above every one of them
    for n_q, n_k, bm, bn in ((6, 9, 4, 4), (13, 20, 4, 8)):
        q, k, v = exact_huge_scores(g, n_q, n_k)
        want = ref.naive_attention(q.double(), k.double(), v.double(), causal=True)
        got = tiled_attention(q, k, v, True, bm, bn)
        bad = differing_rows(got, want, atol=1e-5, rtol=1e-5) if isinstance(got, torch.Tensor) else []
        assert_close(got, want.float(), atol=1e-5, rtol=1e-5,
                     name=f"tiled_attention with n_q = {n_q}, n_k = {n_k}, causal = True, tiles {bm} x {bn}, row 0's "
                          f"visible scores all below -1e30 (exact in float32)",
                     hint=(f"rows {bad[:8]} differ. Row 0 sees keys 0 to {n_k - n_q}, whose scores are all below "
                           f"-1e30: a finite stand-in for -inf (a hidden key filled with -1e9 or -1e30, a running max "
                           f"that starts at -1e9 or at 0) is above every one of them, so the hidden keys take the "
                           f"weight, or every exp underflows to 0. Use -math.inf for both."))
