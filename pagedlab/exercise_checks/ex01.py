"""Exercise 1's checks: the causal mask (square and bottom-right aligned) and naive attention.

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included:

* ``causal_mask(n_q, n_k)``: every ``1 <= n_q <= n_k`` up to 12 keys (square, one query, fewer queries than keys),
  and a few larger ones; a ``(n_q, n_k)`` bool tensor.
* ``naive_attention(q, k, v, causal)``: ``q`` ``(..., n_q, d)``, ``k`` and ``v`` ``(..., n_k, d)`` with no leading
  dimension (2-D), one, two (batch, heads) or three; ``n_q`` and ``n_k`` from 1 (one query, one key), equal or not,
  ``n_q > n_k`` only without ``causal`` (with it the text lets us assume ``n_q <= n_k``); ``d`` from 1 to 80 (not
  only powers of two; 1 and 16 for huge scores); dtypes ``float32``, ``float16`` and ``bfloat16`` (computed in
  float32, returned in the input's dtype); ordinary scores and huge ones: scores of float16 inputs up to ~3e5 (past
  float16's 65504), of float32 inputs up to ~1e32, exact in float32 (integers times a power of two), with a row whose
  every visible score is below -1e30. The output has ``q``'s shape and dtype and the inputs are left as they were;
  compared with the definition computed in float64, within the output dtype's rounding.
"""

from __future__ import annotations

import math
import random
from typing import Callable

import torch

from .. import attention as ref
from ..checks import assert_close


def mask_mismatch(causal_mask: Callable, n_q: int, n_k: int) -> str | None:
    """None if ``causal_mask(n_q, n_k)`` is right, else a message that names the first wrong entry."""
    got, expected = causal_mask(n_q, n_k), ref.causal_mask(n_q, n_k)
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        return f"causal_mask({n_q}, {n_k}) should be a ({n_q}, {n_k}) tensor, got {getattr(got, 'shape', type(got))}"
    if got.dtype != torch.bool:
        return f"causal_mask({n_q}, {n_k}) should be a bool tensor, got {got.dtype}"
    wrong = (got != expected).nonzero().tolist()
    if not wrong:
        return None
    i, j = wrong[0]
    shift = n_k - n_q
    if j == i + shift:
        hint = "every query must see its own position: the diagonal is visible"
    elif j == i + shift + 1:
        hint = "a query sees one key too many: the key right after it must be hidden (off by one)"
    else:
        hint = "with n_q != n_k the mask is aligned bottom-right: the last query sees every key"
    return (f"causal_mask({n_q}, {n_k}): {len(wrong)} wrong entries, first at query {i}, key {j}: "
            f"expected {bool(expected[i, j])}, got {bool(got[i, j])}. Hint: {hint}")


def check_square_masks(causal_mask: Callable) -> None:
    """Check 1: n x n masks for n = 1, 2, 7."""
    __tracebackhide__ = True
    for n in (1, 2, 7):
        problem = mask_mismatch(causal_mask, n, n)
        assert problem is None, problem


def check_fewer_queries(causal_mask: Callable) -> None:
    """Check 2: masks with fewer queries than keys, aligned bottom-right."""
    __tracebackhide__ = True
    for n_q, n_k in [(1, 6), (3, 8), (6, 9)]:
        problem = mask_mismatch(causal_mask, n_q, n_k)
        assert problem is None, problem


def _looks_like(got, other) -> bool:
    return isinstance(got, torch.Tensor) and got.shape == other.shape and torch.allclose(got.float(), other, atol=1e-5)


def assert_unchanged(where: str, tensors, before) -> None:
    """Raise, naming each of q, k, v whose values differ from its clone in ``before`` (taken before the call), and how
    (a whole tensor scaled in place reads "divided by 2.828"): a function that writes into its inputs changes the
    caller's tensors, and every later use of them, the check's reference included, is then wrong."""
    __tracebackhide__ = True
    changed = [(name, t, b) for name, t, b in zip("qkv", tensors, before) if not torch.equal(t, b)]
    if not changed:
        return
    how = []
    for name, t, b in changed:
        t64, b64 = t.detach().double(), b.detach().double()
        c = (t64 * b64).sum() / (b64 * b64).sum() if b64.any() else torch.tensor(0.0)
        if b64.any() and c != 0 and torch.allclose(t64, c * b64, rtol=1e-3, atol=1e-6 * b64.abs().max().item()):
            c = c.item()
            how.append(f"{name} now holds the caller's {name} "
                       + (f"divided by {1 / c:.4g}" if abs(c) < 1 else f"multiplied by {c:.4g}"))
        else:
            how.append(f"{name} changed by up to {(t64 - b64).abs().nan_to_num(float('inf')).max().item():.4g}")
    names = " and ".join(name for name, _, _ in changed)
    raise AssertionError(
        f"{where}: your function changed its argument{'s' if len(changed) > 1 else ''} {names}: {'; '.join(how)}, "
        f"so the caller's tensors are no longer what it passed. Hint: q.float() of a float32 tensor is that same "
        f"tensor, so q *= scale or q /= ... writes into the caller's q; scale the scores (a new tensor: s = q @ "
        f"k^T / sqrt(d), or q = q / ...) instead.")


def _call(naive_attention: Callable, where: str, q, k, v, **kwargs):
    """``naive_attention(q, k, v, **kwargs)``, refused first if it changed q, k or v (:func:`assert_unchanged`)."""
    __tracebackhide__ = True
    before = [t.clone() for t in (q, k, v)]
    got = naive_attention(q, k, v, **kwargs)
    assert_unchanged(where, (q, k, v), before)
    return got


def _by_length(n: int, what: str, d: int) -> str:
    """The hint for scores divided by sqrt(n), ``n`` a sequence length (``what``), instead of sqrt(d)."""
    return (f"your scores are divided by sqrt({n}) = {math.sqrt(n):.4g}, the square root of the {what}, not of the "
            f"head dimension d = q.shape[-1] = {d}: divide by sqrt({d}) = {math.sqrt(d):.4g}.")


def _scales(q, k) -> dict[str, tuple[float, str]]:
    """The wrong scales of the scores q k^T a learner plausibly takes: {name: (factor, what it is)}."""
    d, n_q, n_k = q.shape[-1], q.shape[-2], k.shape[-2]
    right = f"sqrt(d) = {math.sqrt(d):.4g}, d = q.shape[-1] = {d} the head dimension"
    return {
        "none": (1.0, f"your output is attention of unscaled scores: they are divided by {right}."),
        "d": (1 / d, f"your scores are divided by d = {d}, not by sqrt(d) = {math.sqrt(d):.4g}: the scale is "
                     f"1 / sqrt(d) (math.sqrt(q.shape[-1]), or d ** -0.5)."),
        "n_q": (n_q ** -0.5, _by_length(n_q, "number of queries (q.shape[-2])", d)),
        "n_k": (n_k ** -0.5, _by_length(n_k, "number of keys (k.shape[-2])", d)),
        "times": (math.sqrt(d), f"your scores are multiplied by sqrt(d) = {math.sqrt(d):.4g}, not divided by it."),
        "quarter": (d ** -0.25, f"your scores are divided by d ** 0.25 = {d ** 0.25:.4g}, not by sqrt(d) = "
                                f"{math.sqrt(d):.4g}: d ** -0.25 goes on both q and k (or 1 / sqrt(d) on the scores)."),
    }


def _matching_scales(got, q, k, v) -> list[str]:
    """The names of :func:`_scales` whose attention (softmax over the keys) ``got`` is."""
    s = q.float() @ k.float().transpose(-2, -1)
    return [name for name, (factor, _) in _scales(q, k).items()
            if _looks_like(got, torch.softmax(s * factor, dim=-1) @ v.float())]


def _attention_values_hint(naive_attention: Callable, got, q, k, v) -> str:
    """The likely cause of a wrong (non-causal) attention, derived from ``got``: a wrong scale of the scores (tried
    against ``got``: 1, 1/d, 1/sqrt(n_q), 1/sqrt(n_k), ...), or the softmax over the queries."""
    matches = _matching_scales(got, q, k, v)
    scales = _scales(q, k)
    if {"n_q", "n_k"} <= set(matches):
        # as many queries as keys: the same call with more keys than queries tells which one the scale took
        longer_shape = (*k.shape[:-2], k.shape[-2] + 4, k.shape[-1])
        g = torch.Generator().manual_seed(3)
        k_long, v_long = torch.randn(longer_shape, generator=g), torch.randn(longer_shape, generator=g)
        try:
            longer = _matching_scales(naive_attention(q.clone(), k_long, v_long), q, k_long, v_long)
        except Exception:  # noqa: BLE001 - only a hint: an error here is for the next call to report
            longer = []
        if "n_q" in longer or "n_k" in longer:
            return scales["n_q" if "n_q" in longer else "n_k"][1]
        return _by_length(q.shape[-2], f"number of queries (q.shape[-2]) or of keys (k.shape[-2]), {q.shape[-2]} "
                                       f"each here,", q.shape[-1])
    if matches:
        return scales[matches[0]][1]
    s = q.float() @ k.float().transpose(-2, -1) / math.sqrt(q.shape[-1])
    if _looks_like(got, torch.softmax(s, dim=-2) @ v.float()):
        return "your softmax runs over the queries: each query's weights over the KEYS must sum to 1."
    return "softmax(q k^T / sqrt(d)) v, the softmax over the keys."


def check_attention(naive_attention: Callable) -> None:
    """Check 3: (2, 3, 10, 8) inputs, other values of those shapes, then 10 queries over 14 keys; first of all, q, k
    and v left as they were."""
    __tracebackhide__ = True
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 10, 8) for _ in range(3))
    k_long, v_long = torch.randn(2, 3, 14, 8), torch.randn(2, 3, 14, 8)
    got = _call(naive_attention, "naive_attention(q, k, v), q, k and v of shape (2, 3, 10, 8)", q, k, v)
    expected = ref.naive_attention(q, k, v)
    hint = "" if _looks_like(got, expected) else _attention_values_hint(naive_attention, got, q, k, v)
    assert_close(got, expected, atol=1e-5, name="naive_attention(q, k, v)", hint=hint)
    # the same shapes, other values: the answer is a function of the values (a result kept by shape gives the first)
    q2, k2, v2 = (torch.randn(2, 3, 10, 8) for _ in range(3))
    again = _call(naive_attention, "naive_attention of other q, k and v of the same shapes", q2, k2, v2)
    assert_close(again, ref.naive_attention(q2, k2, v2), atol=1e-5, name="naive_attention of other values",
                 hint="the first call's result came back for other q, k and v of the same shapes: compute each call "
                      "from its own values, and keep no result between calls." if _looks_like(again, got) else "")
    got = _call(naive_attention, "naive_attention with 10 queries and 14 keys", q, k_long, v_long)
    expected = ref.naive_attention(q, k_long, v_long)
    matches = [] if _looks_like(got, expected) else _matching_scales(got, q, k_long, v_long)
    assert_close(got, expected, atol=1e-5, name="naive_attention with 10 queries and 14 keys",
                 hint=_scales(q, k_long)[matches[0]][1] if matches else
                 "the number of queries and of keys differ here: take each from its own tensor.")


def check_causal_attention(naive_attention: Callable) -> None:
    """Check 4: causal attention with 10, 4 and 1 queries over 10 keys."""
    __tracebackhide__ = True
    for n_q, n_k in [(10, 10), (4, 10), (1, 10)]:
        q, k, v = torch.randn(2, 3, n_q, 8), torch.randn(2, 3, n_k, 8), torch.randn(2, 3, n_k, 8)
        got = _call(naive_attention, f"causal naive_attention, {n_q} queries, {n_k} keys", q, k, v, causal=True)
        if n_q > 1 and _looks_like(got, ref.naive_attention(q, k, v)):
            hint = "your output is attention without the mask: with causal=True the hidden keys get no weight."
        elif n_q > 1:
            hint = ("hidden keys must get weight exactly 0 after the softmax: their scores become -inf (a score of 0 "
                    "still gets weight e^0 / sum).")
        else:
            hint = "one query sees every key: this is plain attention."
        assert_close(got, ref.naive_attention(q, k, v, causal=True), atol=1e-5,
                     name=f"causal naive_attention, {n_q} queries, {n_k} keys", hint=hint)


def check_huge_scores(naive_attention: Callable) -> None:
    """Check 5: scores in the thousands."""
    __tracebackhide__ = True
    q, k, v = (torch.randn(1, 2, 12, 8) for _ in range(3))
    q_big = q * 1000
    got = _call(naive_attention, "naive_attention with huge scores", q_big, k, v, causal=True)
    assert torch.isfinite(got).all(), (
        f"{int((~torch.isfinite(got)).sum())} outputs are NaN or inf for scores of magnitude ~1e3: exp() overflowed. "
        "Hint: subtract each row's maximum before exp (torch.softmax does).")
    assert_close(got, ref.naive_attention(q_big, k, v, causal=True), atol=1e-4, name="naive_attention with huge scores")


def check_half_precision(naive_attention: Callable) -> None:
    """Check 6: float16 inputs give a float16 output, also when their scores overflow float16."""
    __tracebackhide__ = True
    q, k, v = (torch.randn(1, 2, 16, 8, dtype=torch.float16) for _ in range(3))
    got = _call(naive_attention, "naive_attention in float16", q, k, v, causal=True)
    assert got.dtype == torch.float16, f"float16 inputs should give a float16 output, got {got.dtype}"
    assert_close(got, ref.naive_attention(q, k, v, causal=True), atol=2e-3, name="naive_attention in float16",
                 hint="compute the scores and the softmax in float32, then convert the result back.")
    # Inputs that fit in float16 whose scores do not: |q . k| / sqrt(d) reaches ~1e5, past float16's largest 65504.
    q, k = (300 * torch.randn(1, 2, 16, 8) for _ in range(2))
    q, k, v = q.half(), k.half(), torch.randn(1, 2, 16, 8, dtype=torch.float16)
    got = _call(naive_attention, "naive_attention in float16 with scores up to ~1e5", q, k, v, causal=True)
    nan = bool(torch.isnan(got).any())
    assert_close(got, ref.naive_attention(q, k, v, causal=True), atol=2e-3,
                 name="naive_attention in float16 with scores up to ~1e5",
                 hint=("these scores overflow float16 (largest value 65504) to inf, and the softmax of inf is NaN: "
                       "the scores must be computed in float32, and only the result converted back."
                       if nan else "compute in float32 from the scores on, and convert only the result back."))


TOLERANCES = {torch.float32: (1e-5, 1e-4), torch.float16: (1e-4, 2e-3), torch.bfloat16: (1e-4, 8e-3)}
"""(atol, rtol) per input dtype: a float32 computation rounded once to the output dtype stays within these."""


def _definition(q, k, v, causal):
    """softmax(q k^T / sqrt(d)) v in float64, the hidden keys at -inf: what the instructions define."""
    s = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(~ref.causal_mask(q.shape[-2], k.shape[-2]), -math.inf)
    return torch.softmax(s, dim=-1) @ v.double()


def _cases() -> list[tuple[tuple[int, ...], int, int, int, str]]:
    """(leading dims, n_q, n_k, d, scores) of the stated space: its boundaries, then seeded draws."""
    rng = random.Random(1)
    cases = [((), 5, 5, 16, "ordinary"), ((3,), 4, 7, 8, "ordinary"), ((2, 3), 6, 6, 8, "ordinary"),
             ((1, 2, 2), 3, 5, 8, "ordinary"), ((2, 2), 1, 1, 8, "ordinary"), ((2, 2), 1, 9, 8, "ordinary"),
             ((2, 2), 11, 4, 8, "ordinary"), ((2,), 5, 5, 1, "ordinary"), ((1, 2), 7, 9, 80, "ordinary"),
             ((2, 2), 6, 9, 16, "huge"), ((), 8, 8, 1, "huge")]
    leads = [(), (2,), (2, 2), (1, 2, 2)]
    for _ in range(12):
        n_q, n_k, scores = rng.randint(1, 12), rng.randint(1, 12), rng.choice(("ordinary", "huge"))
        cases.append((rng.choice(leads), n_q, n_k, rng.choice((1, 4, 16, 24, 64) if scores == "ordinary" else (1, 16)),
                      scores))
    return cases


def _inputs(g, lead, n_q, n_k, d, scores, dtype):
    """q, k, v for one case. Huge scores are exact in float32 whatever the order of the sums and wherever the scale
    is applied (d is 1 or 16, so 1 / sqrt(d) and d ** -0.25 are powers of two): small integers times a power of two
    (2**7 in float16 and bfloat16: scores up to ~3e5; 2**50 in float32: up to ~1e32). At that size any rounding of a
    score would change the softmax, so only exact scores make a fair reference."""
    if scores == "ordinary":
        return [torch.randn(*lead, n, d, generator=g).to(dtype) for n in (n_q, n_k, n_k)]
    scale = 2.0 ** (7 if dtype != torch.float32 else 50)
    q = torch.randint(-3, 4, (*lead, n_q, d), generator=g) * scale
    k = torch.randint(-3, 4, (*lead, n_k, d), generator=g) * scale
    if n_q <= n_k:      # the first query's visible keys (0 .. n_k - n_q) all score below -1e30 (in float32)
        seen = n_k - n_q + 1
        q[..., 0, :] = -scale
        k[..., :seen, :] = k[..., :seen, :].abs().clamp(min=scale)
    return [q.to(dtype), k.to(dtype), torch.randn(*lead, n_k, d, generator=g).to(dtype)]


def _attention_hint(exc: BaseException | None, lead: tuple[int, ...], got, q, k, v, causal) -> str:
    """The likely cause of a difference (or of an error) at this input."""
    if exc is not None:
        if len(lead) != 2:
            return (f"q has {len(lead)} leading dimension(s) here, not 2: count the dimensions from the end "
                    f"(transpose(-2, -1), q.shape[-2], k.shape[-2], q.shape[-1]), so that any number of leading "
                    f"dimensions works.")
        return ""
    if got.dtype != q.dtype or got.shape != q.shape:
        return ""
    if torch.isnan(got).any():
        return "NaN: a hidden key must be -inf before the softmax, and the softmax must subtract each row's maximum."
    if causal:
        s = q.float() @ k.float().transpose(-2, -1) / math.sqrt(q.shape[-1])
        visible = ref.causal_mask(q.shape[-2], k.shape[-2])
        top = s.masked_fill(~visible, -math.inf).amax(dim=-1)
        if (top < -1e8).any():
            return (f"some rows' visible scores are all below {top.min().item():.3g}: a finite fill such as -1e30, "
                    f"-1e9 or -1e4 is then larger than every visible score, and the hidden keys take the weight. Hide "
                    f"them with -inf, as the instructions say.")
    if q.dtype != torch.float32:
        return (f"compute in float32 from the scores on ({q.dtype} loses the scores' low digits), then convert the "
                f"result back to {q.dtype}: convert q, k and v, whatever their half-precision dtype.")
    return "softmax(q k^T / sqrt(d)) v, the softmax over the keys, the hidden keys at -inf."


def check_over_the_space(causal_mask: Callable, naive_attention: Callable) -> None:
    """Check 7: your mask and your attention against the definition on inputs drawn from the whole stated space (the
    module docstring), boundaries included: the first input where yours differs, which elements, by how much."""
    __tracebackhide__ = True
    for n_k in range(1, 13):
        for n_q in range(1, n_k + 1):
            problem = mask_mismatch(causal_mask, n_q, n_k)
            assert problem is None, problem
    for n_q, n_k in [(64, 64), (17, 200), (1, 300)]:
        problem = mask_mismatch(causal_mask, n_q, n_k)
        assert problem is None, problem
    g = torch.Generator().manual_seed(1)
    for lead, n_q, n_k, d, scores in _cases():
        for dtype, (atol, rtol) in TOLERANCES.items():
            q, k, v = _inputs(g, lead, n_q, n_k, d, scores, dtype)
            for causal in ((False, True) if n_q <= n_k else (False,)):
                where = (f"q of shape {tuple(q.shape)}, k and v of shape {tuple(k.shape)}, {dtype}, {scores} "
                         f"scores, causal={causal}")
                before = [t.clone() for t in (q, k, v)]
                expected = _definition(q, k, v, causal)
                try:
                    got = naive_attention(q, k, v, causal=causal)
                except NotImplementedError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the learner's error is the difference to report
                    hint = _attention_hint(exc, lead, None, q, k, v, causal)
                    raise AssertionError(f"naive_attention, {where}: raised {type(exc).__name__}: {exc}"
                                         + (f". Hint: {hint}" if hint else "")) from None
                assert_unchanged(f"naive_attention, {where}", (q, k, v), before)
                assert isinstance(got, torch.Tensor) and got.dtype == dtype, (
                    f"naive_attention, {where}: returned {getattr(got, 'dtype', type(got).__name__)}, expected "
                    f"{dtype}. Hint: compute in float32, then convert the result back to the input's dtype, "
                    f"whatever it is (float16 or bfloat16).")
                assert_close(got, expected, atol=atol, rtol=rtol, name=f"naive_attention, {where}",
                             hint=_attention_hint(None, lead, got, q, k, v, causal))
