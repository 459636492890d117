"""The checks of exercise 4's stretch (grouped-query attention in the forward kernel): program ids, K/V heads,
strides, and the launcher's error for heads that do not divide."""

from __future__ import annotations

import re
from typing import Callable

import torch

from .. import device
from ..attention import naive_attention
from ..checks import assert_close, differing_rows
from .ex04 import error_hint

__all__ = ["error_hint", "attention_inputs", "check_batch_and_heads", "check_grouped", "check_views",
           "check_heads_that_do_not_divide"]


def attention_inputs(batch, n_heads, n_kv_heads, n_q, n_k, d=16, seq_major=False, seed=0):
    """Seeded q, k, v; with seq_major, views of (batch, seq, heads, d) tensors, as a model's projections give."""
    g = torch.Generator().manual_seed(seed)

    def make(heads, n):
        if seq_major:
            return torch.randn(batch, n, heads, d, generator=g).to(device.DEVICE).transpose(1, 2)
        return torch.randn(batch, heads, n, d, generator=g).to(device.DEVICE)
    return make(n_heads, n_q), make(n_kv_heads, n_k), make(n_kv_heads, n_k)


def _assert_gqa(gqa_forward: Callable, batch, n_heads, n_kv_heads, n_q, n_k, hint: Callable, seq_major=False):
    __tracebackhide__ = True
    q, k, v = attention_inputs(batch, n_heads, n_kv_heads, n_q, n_k, seq_major=seq_major)
    group = n_heads // n_kv_heads
    got = gqa_forward(q, k, v)
    want = naive_attention(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1))
    name = (f"batch {batch}, {n_heads} query heads, {n_kv_heads} K/V heads, n_q = {n_q}, n_k = {n_k}, "
            f"{'views of (batch, seq, heads, d)' if seq_major else 'contiguous'}")
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        assert_close(got, want, name=name)
    bad = [(b, h) for b in range(batch) for h in range(n_heads)
           if differing_rows(got[b, h], want[b, h], atol=1e-4, rtol=1e-4)]
    text = hint(got, q, k, v, bad) if bad else ""
    assert_close(got, want, atol=1e-4, rtol=1e-4, name=name,
                 hint=f"(batch, head) pairs {bad[:8]} of {batch} x {n_heads} are wrong. {text}" if bad else "")


def check_batch_and_heads(gqa_forward: Callable) -> None:
    """Check 1: batch 2, 3 heads, one K/V head per query head."""
    __tracebackhide__ = True

    def hint(got, q, k, v, bad):
        if all(b > 0 for b, _ in bad):
            return ("batch 0 is right and every later batch wrong: the grid's second dimension holds one program per "
                    "(batch, head) pair, batch × n_heads of them, and program id 1 tells both apart.")
        return ("program id 1 is one (batch, head) pair: the batch is its quotient by n_heads and the head its "
                "remainder; each pointer then moves by the batch's and the head's strides.")

    _assert_gqa(gqa_forward, 2, 3, 3, 21, 40, hint)


def check_grouped(gqa_forward: Callable) -> None:
    """Check 2: 4 query heads over 2 K/V heads, 3 over 1."""
    __tracebackhide__ = True
    for n_heads, n_kv_heads in [(4, 2), (3, 1)]:
        def hint(got, q, k, v, bad, n_heads=n_heads, n_kv_heads=n_kv_heads):
            interleaved = naive_attention(q, k.repeat(1, n_heads // n_kv_heads, 1, 1),
                                          v.repeat(1, n_heads // n_kv_heads, 1, 1))
            if torch.allclose(got, interleaved, atol=1e-4):
                return (f"your query head h read K/V head h % {n_kv_heads}: the heads of a group are CONSECUTIVE "
                        f"(heads 0..{n_heads // n_kv_heads - 1} share K/V head 0, as repeat_interleave).")
            return (f"{n_heads} query heads over {n_kv_heads} K/V heads: groups of {n_heads // n_kv_heads} "
                    f"consecutive query heads share one K/V head; K and V move by the K/V head's stride.")

        _assert_gqa(gqa_forward, 2, n_heads, n_kv_heads, 21, 40, hint)


def check_views(gqa_forward: Callable) -> None:
    """Check 3: q, k, v are views of (batch, seq, heads, d) tensors, not contiguous ones."""
    __tracebackhide__ = True

    def hint(got, q, k, v, bad):
        return ("checks 1 and 2 passed on contiguous tensors; these are views, whose rows lie stride_qn apart and "
                "heads stride_qh apart (not n_q × d): every offset must come from the strides the launcher passes.")

    _assert_gqa(gqa_forward, 2, 4, 2, 21, 40, hint, seq_major=True)


def check_heads_that_do_not_divide(gqa_forward: Callable) -> None:
    """Check 4: 6 query heads over 4 K/V heads is an error that names k."""
    __tracebackhide__ = True
    q, k, v = attention_inputs(1, 6, 4, 8, 8)
    try:
        gqa_forward(q, k, v)
    except ValueError as error:
        assert re.search(r"\bk\b", str(error)), f"the ValueError should name the argument k, got: {error}"
    except AssertionError as error:
        raise AssertionError(
            f"gqa_forward raised AssertionError({str(error)!r}) for 6 query heads over 4 K/V heads: the contract is a "
            f"ValueError that names k (an assert is for the programmer's own invariants, and python -O removes "
            f"it).") from None
    else:
        raise AssertionError(
            "6 query heads cannot share 4 K/V heads equally, yet gqa_forward returned a result. Hint: the launcher "
            "raises a ValueError naming k and both head counts before launching anything.")
