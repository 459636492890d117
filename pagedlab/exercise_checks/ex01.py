"""Exercise 1's checks: the causal mask (square and bottom-right aligned) and naive attention."""

from __future__ import annotations

import math
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


def check_attention(naive_attention: Callable) -> None:
    """Check 3: (2, 3, 10, 8) inputs, then 10 queries over 14 keys."""
    __tracebackhide__ = True
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 10, 8) for _ in range(3))
    got = naive_attention(q, k, v)
    s = q @ k.transpose(-2, -1)
    if _looks_like(got, torch.softmax(s, dim=-1) @ v):
        hint = "your output is attention of unscaled scores: they are divided by sqrt(d), d the head dimension."
    elif _looks_like(got, torch.softmax(s / math.sqrt(8), dim=-2) @ v):
        hint = "your softmax runs over the queries: each query's weights over the KEYS must sum to 1."
    else:
        hint = "softmax(q k^T / sqrt(d)) v, the softmax over the keys."
    assert_close(got, ref.naive_attention(q, k, v), atol=1e-5, name="naive_attention(q, k, v)", hint=hint)
    k_long, v_long = torch.randn(2, 3, 14, 8), torch.randn(2, 3, 14, 8)
    assert_close(naive_attention(q, k_long, v_long), ref.naive_attention(q, k_long, v_long), atol=1e-5,
                 name="naive_attention with 10 queries and 14 keys",
                 hint="the number of queries and of keys differ here: take each from its own tensor.")


def check_causal_attention(naive_attention: Callable) -> None:
    """Check 4: causal attention with 10, 4 and 1 queries over 10 keys."""
    __tracebackhide__ = True
    for n_q, n_k in [(10, 10), (4, 10), (1, 10)]:
        q, k, v = torch.randn(2, 3, n_q, 8), torch.randn(2, 3, n_k, 8), torch.randn(2, 3, n_k, 8)
        got = naive_attention(q, k, v, causal=True)
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
    got = naive_attention(q_big, k, v, causal=True)
    assert torch.isfinite(got).all(), (
        f"{int((~torch.isfinite(got)).sum())} outputs are NaN or inf for scores of magnitude ~1e3: exp() overflowed. "
        "Hint: subtract each row's maximum before exp (torch.softmax does).")
    assert_close(got, ref.naive_attention(q_big, k, v, causal=True), atol=1e-4, name="naive_attention with huge scores")


def check_half_precision(naive_attention: Callable) -> None:
    """Check 6: float16 inputs give a float16 output, also when their scores overflow float16."""
    __tracebackhide__ = True
    q, k, v = (torch.randn(1, 2, 16, 8, dtype=torch.float16) for _ in range(3))
    got = naive_attention(q, k, v, causal=True)
    assert got.dtype == torch.float16, f"float16 inputs should give a float16 output, got {got.dtype}"
    assert_close(got, ref.naive_attention(q, k, v, causal=True), atol=2e-3, name="naive_attention in float16",
                 hint="compute the scores and the softmax in float32, then convert the result back.")
    # Inputs that fit in float16 whose scores do not: |q . k| / sqrt(d) reaches ~1e5, past float16's largest 65504.
    q, k = (300 * torch.randn(1, 2, 16, 8) for _ in range(2))
    q, k, v = q.half(), k.half(), torch.randn(1, 2, 16, 8, dtype=torch.float16)
    got = naive_attention(q, k, v, causal=True)
    nan = bool(torch.isnan(got).any())
    assert_close(got, ref.naive_attention(q, k, v, causal=True), atol=2e-3,
                 name="naive_attention in float16 with scores up to ~1e5",
                 hint=("these scores overflow float16 (largest value 65504) to inf, and the softmax of inf is NaN: "
                       "the scores must be computed in float32, and only the result converted back."
                       if nan else "compute in float32 from the scores on, and convert only the result back."))
