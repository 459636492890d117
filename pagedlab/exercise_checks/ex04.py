"""Exercise 4's checks: the FlashAttention forward loop body in Triton, with its padding and causal masks.

Each check runs the learner's launcher ``flash_forward`` on seeded inputs and compares with Part I's
``naive_attention``; on a difference, the hint comes from what the output matches (attention without the scale's
log2(e), with the padding keys counted, without the causal mask, aligned top-left...).

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included: one head, ``q`` ``(n_q, d)`` and ``k``, ``v`` ``(n_k, d)`` float32 with ``1 <= n_q <=
n_k``; ``d`` 16, 32 and 64 (``tl.arange`` and ``tl.dot`` need a power of two of at least 16); ``BLOCK_M`` and
``BLOCK_N`` 16, 32 and 64, square or not, larger than the lengths; lengths of one, an exact multiple of the tile, one
short of it and one past it (a last key tile of one real key and ``BLOCK_N - 1`` padding keys); one query over many
key tiles; causal or not; ordinary scores, scores in the hundreds, and huge ones (up to ~1e32, exact in float32:
integers times a power of two) with a row whose every visible score is below -1e30. Compared with the definition
(float64), the hidden scores at -inf.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from .. import device
from ..attention import naive_attention
from ..checks import assert_close, differing_rows
from ..testing import exact_huge_scores
from ..validate import blocks_for
from . import check_full_precision_products, kernel_error_hint

def error_hint(exc: BaseException) -> str:
    """The hint for an error raised by the kernel: about mask shapes only for a shape error."""
    return kernel_error_hint(exc, (
        "With BLOCK_M != BLOCK_N every mask on the score tile must be (BLOCK_M, BLOCK_N): a column of row positions "
        "(BLOCK_M long, [:, None]) against a row of key positions (BLOCK_N long, [None, :]). A 1-D comparison of "
        "rows and cols only works when they happen to have the same length, and is silently wrong then."))


def _attend(q, k, v, visible=None, sm_scale=None, hidden_score=-math.inf):
    s = (q.double() @ k.double().T) * (q.shape[1] ** -0.5 if sm_scale is None else sm_scale)
    if visible is not None:
        s = s.masked_fill(~visible, hidden_score)
    return torch.softmax(s, dim=-1) @ v.double()


def _like(got, other) -> bool:
    return bool(torch.isclose(got.double(), other, atol=1e-4, rtol=1e-4).all())


def _diagnosis(got, q, k, v, causal, block_n) -> str:
    """What the output ``got`` (CPU) matches among the usual wrong computations, or ``""``."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    rows, cols = torch.arange(n_q)[:, None], torch.arange(n_k)[None, :]
    visible = cols <= rows + (n_k - n_q) if causal else None
    if _like(got, _attend(q, k, v, visible, sm_scale=d ** -0.5 * math.log2(math.e))):
        return ("your output is attention with every score multiplied by log2(e) = 1.44: qk_scale already holds "
                "log2(e), which only a base-2 exponential undoes.")
    last = (n_k - 1) // block_n * block_n
    if not causal and last > 0 and _like(got, _attend(q, k, v, cols >= last)):
        return (f"your output is attention over the last key tile alone (keys {last} to {n_k - 1}): every earlier "
                f"tile's terms were multiplied by alpha = 0, so the running max m_i stayed -inf. The loop must end "
                f"with m_i = m_new, so that the next tile rescales by 2^(m_i - m_new) from the max seen so far.")
    padded = blocks_for(n_k, block_n) * block_n
    if padded > n_k:
        zeros = torch.zeros(padded - n_k, d, dtype=k.dtype)
        kp, vp = torch.cat([k, zeros]), torch.cat([v, zeros])
        colp = torch.arange(padded)[None, :]
        vis = (colp <= rows + (n_k - n_q)) | (colp >= n_k) if causal else None
        if _like(got, _attend(q, kp, vp, vis)):
            return (f"your output is attention over {padded} keys, the {padded - n_k} padding keys of the last tile "
                    f"included (zero vectors, score 0, weight e^(0 - m) > 0): they must get no weight, a score of "
                    f"-inf.")
    if causal:
        if _like(got, _attend(q, k, v)):
            return ("your output is attention without the causal mask: with CAUSAL, key j is hidden from row i "
                    "when j > i + n_k - n_q.")
        if n_q != n_k and _like(got, _attend(q, k, v, cols <= rows)):
            return ("your mask is aligned top-left (row i sees keys j <= i): with fewer queries than keys the queries "
                    "are the LAST n_q positions, aligned bottom-right (j <= i + n_k - n_q).")
        if _like(got, _attend(q, k, v, visible, hidden_score=0.0)):
            return "hidden keys got score 0, which is weight e^(0 - m) > 0: a hidden score is -inf."
    return ""


def _check(flash_forward: Callable, n_q, n_k, causal, hint, magnitude=1.0, d=16, seed=0, block_m=16, block_n=16):
    """Compare ``flash_forward`` with ``naive_attention``; the hint says which rows differ and why."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(seed)
    q = magnitude * torch.randn(n_q, d, generator=g)
    k = magnitude * torch.randn(n_k, d, generator=g)
    v = torch.randn(n_k, d, generator=g)
    got = flash_forward(q.to(device.DEVICE), k.to(device.DEVICE), v.to(device.DEVICE), causal=causal,
                        block_m=block_m, block_n=block_n)
    want = naive_attention(q, k, v, causal=causal)
    name = f"attention with n_q = {n_q}, n_k = {n_k}, causal = {causal}, BLOCK_M = {block_m}, BLOCK_N = {block_n}"
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        assert_close(got, want, name=name)
    g_cpu = got.detach().cpu()
    bad_rows = differing_rows(g_cpu, want, atol=1e-4, rtol=1e-4)
    if not bad_rows:
        return
    nan_rows = torch.isnan(g_cpu).any(dim=-1).nonzero().flatten().tolist()
    if nan_rows:
        text = (f"rows {nan_rows[:8]} are NaN, from inf - inf or 0/0: either exp2 overflowed to inf (a score not "
                f"reduced by the running max), or a row saw no visible key (-inf - (-inf) in its exponent), which "
                f"here means the mask hides a key it should keep: every row sees key 0 and its own key (n_q <= n_k), "
                f"a query sees its own key.")
    else:
        text = _diagnosis(g_cpu, q, k, v, causal, block_n) or hint
    assert_close(got, want, atol=1e-4, rtol=1e-4, name=name, hint=f"rows {bad_rows[:8]} of {n_q} differ. {text}")


def check_one_key_tile(flash_forward: Callable) -> None:
    """Check 1: 16 queries, 16 keys, one tile: nothing to mask or rescale."""
    __tracebackhide__ = True
    _check(flash_forward, 16, 16, causal=False, hint=(
        "With a single key tile nothing is masked or rescaled: the difference is in the scores, the weights p, their "
        "sum l_i, or acc = p times v."))


def check_several_key_tiles(flash_forward: Callable) -> None:
    """Check 2: 64 keys in 4 tiles: the running max grows and what was summed must be rescaled."""
    __tracebackhide__ = True
    _check(flash_forward, 16, 64, causal=False, hint=(
        "One tile passed, four fail: when a later tile raises the running max, what l_i and acc summed relative to "
        "the old max must shrink by alpha = 2^(old max - new max) before the new tile's terms are added."))


def check_padding_keys(flash_forward: Callable) -> None:
    """Check 3: lengths that are not multiples of the tile, tiles of any shape."""
    __tracebackhide__ = True
    for n_q, n_k, block_m, block_n in [(1, 1, 16, 16), (17, 17, 16, 16), (45, 45, 16, 16), (17, 45, 16, 16),
                                       (37, 50, 16, 32), (37, 50, 32, 16)]:
        _check(flash_forward, n_q, n_k, causal=False, block_m=block_m, block_n=block_n, hint=(
            "the last key tile's padding keys (positions >= n_k) must get no weight; key positions are the tile's "
            "cols, BLOCK_N of them."))


def check_causal_any_shape(flash_forward: Callable) -> None:
    """Check 4: causal, square and non-square tiles, fewer queries than keys."""
    __tracebackhide__ = True
    # Tiles that are not square first: a 1-D mask fails loudly there instead of silently on square tiles.
    for n_q, n_k, block_m, block_n in [(17, 17, 16, 32), (37, 50, 32, 16), (1, 1, 16, 16), (17, 17, 16, 16),
                                       (45, 45, 16, 16), (9, 40, 16, 16), (17, 45, 16, 16)]:
        _check(flash_forward, n_q, n_k, causal=True, block_m=block_m, block_n=block_n, hint=(
            "Causal: row i sees key j exactly when j <= i + n_k - n_q (a query sees its own key; aligned "
            "bottom-right), with global row and key positions, together with the padding mask."))


def check_large_scores(flash_forward: Callable) -> None:
    """Check 5: scores in the hundreds."""
    __tracebackhide__ = True
    _check(flash_forward, 33, 40, causal=True, magnitude=12.0, block_m=16, block_n=32, hint=(
        "Scores in the hundreds: every exponent must be a score minus the running max (<= 0), or exp2 overflows."))


def check_over_the_space(flash_forward: Callable) -> None:
    """Check 6: your kernel against the definition on inputs drawn from the whole stated space (the module
    docstring), boundaries included: the first input where yours differs, which rows, by how much."""
    __tracebackhide__ = True
    # (n_q, n_k, causal, d, BLOCK_M, BLOCK_N, magnitude)
    cases = [(1, 1, True, 16, 16, 16, 1.0), (16, 16, True, 32, 16, 16, 1.0), (15, 15, True, 16, 16, 16, 1.0),
             (16, 17, True, 16, 16, 16, 1.0), (1, 65, True, 16, 16, 16, 1.0), (1, 65, False, 64, 16, 32, 1.0),
             (33, 33, True, 16, 64, 16, 1.0), (20, 31, True, 32, 16, 32, 1.0), (31, 64, False, 16, 32, 64, 1.0),
             (24, 40, True, 64, 32, 16, 12.0),
             # n_k - n_q two short of a whole number of key tiles: a key tile whose last key the query tile's first row
             # does not see and its second row does (the mask left off tiles one key too far passed here only)
             (10, 40, True, 16, 16, 16, 1.0)]
    for seed, (n_q, n_k, causal, d, block_m, block_n, magnitude) in enumerate(cases):
        _check(flash_forward, n_q, n_k, causal, d=d, block_m=block_m, block_n=block_n, magnitude=magnitude,
               seed=60 + seed, hint=(
                   "every length, tile and head dimension: the padding keys (cols >= n_k) and, with CAUSAL, the keys "
                   "j > i + n_k - n_q get -inf, with global row and key positions."))
    g = torch.Generator().manual_seed(6)
    for n_q, n_k, block_m, block_n in [(6, 9, 16, 16), (20, 37, 16, 32)]:
        q, k, v = exact_huge_scores(g, n_q, n_k)
        rows, cols = torch.arange(n_q)[:, None], torch.arange(n_k)[None, :]
        want = _attend(q, k, v, cols <= rows + (n_k - n_q))
        got = flash_forward(q.to(device.DEVICE), k.to(device.DEVICE), v.to(device.DEVICE), causal=True,
                            block_m=block_m, block_n=block_n)
        top = (q[0] @ k[:n_k - n_q + 1].T).max().item() / 4
        bad = differing_rows(got.detach().cpu(), want.float(), atol=1e-4, rtol=1e-4)
        hint = (f"row 0 sees keys 0 to {n_k - n_q}, whose scores are all at most {top:.3g}: a finite fill such as -1e9 "
                f"or -1e30 is larger than every one of them, so the hidden keys take the weight. A hidden score is "
                f"-inf."
                if 0 in bad else "the scores are exact here: the same masks, with -inf, as for ordinary scores.")
        assert_close(got.detach().cpu(), want.float(), atol=1e-4, rtol=1e-4,
                     name=f"attention with n_q = {n_q}, n_k = {n_k}, causal = True, BLOCK_M = {block_m}, BLOCK_N = "
                          f"{block_n}, huge scores (up to ~1e32, exact in float32)",
                     hint=f"rows {bad[:8]} of {n_q} differ. {hint}")
