"""Exercise 0's checks: a softmax over the last dimension that never overflows."""

from __future__ import annotations

from typing import Callable

import torch

from ..checks import assert_close


def error_hint(exc: BaseException) -> str:
    """The hint for an error raised by ``softmax_rows``."""
    if isinstance(exc, RuntimeError) and ("size of tensor" in str(exc) or "must match" in str(exc)):
        return ("the row max and the row sum must keep their reduced dimension (with size 1) to broadcast back over "
                "each row, whatever the number of leading dimensions.")
    return ""


def check_small_scores(softmax_rows: Callable) -> None:
    """Check 1: ordinary scores agree with ``torch.softmax``, rows sum to one, dtype kept."""
    __tracebackhide__ = True
    torch.manual_seed(0)
    x = torch.randn(4, 7)
    got = softmax_rows(x)
    if isinstance(got, torch.Tensor) and got.shape == x.shape:
        sums = got.sum(dim=-1)
        if torch.allclose(sums, torch.ones_like(sums), atol=1e-5):
            hint = "each row sums to 1, yet the values differ: the softmax runs over the LAST dimension, row by row."
        elif torch.allclose(got.sum(dim=0), torch.ones(x.shape[1], dtype=got.dtype), atol=1e-5):
            hint = (f"the rows sum to {[round(s, 4) for s in sums.tolist()]}, but the columns sum to 1: the softmax "
                    f"ran over dim=0; each row must be divided by its own sum.")
        else:
            hint = (f"the rows sum to {[round(s, 4) for s in sums.tolist()]}, not 1: each row's exponentials are "
                    f"divided by that row's sum.")
    else:
        hint = ""
    assert_close(got, torch.softmax(x, dim=-1), atol=1e-6, name="softmax_rows(x)", hint=hint)
    assert got.dtype == x.dtype, f"expected dtype {x.dtype}, got {got.dtype}: compute in the input's dtype"


def check_large_scores(softmax_rows: Callable) -> None:
    """Check 2: scores of magnitude 1e4 give no NaN or inf."""
    __tracebackhide__ = True
    x_big = torch.randn(3, 5) * 1e4
    got = softmax_rows(x_big)
    assert torch.isfinite(got).all(), (
        f"{int((~torch.isfinite(got)).sum())} entries are NaN or inf for scores of magnitude 1e4. "
        "Hint: exp(10000) overflows; subtract each row's maximum before exponentiating (one maximum per row: the "
        "maximum of the whole tensor still leaves rows whose exponentials all underflow to 0).")
    assert_close(got, torch.softmax(x_big, dim=-1), atol=1e-6, name="softmax_rows(large scores)")


def check_leading_dimensions(softmax_rows: Callable) -> None:
    """Check 3: a (2, 3, 4, 6) float64 tensor, as attention's (batch, heads, n_q, n_k) scores."""
    __tracebackhide__ = True
    x4 = torch.randn(2, 3, 4, 6, dtype=torch.float64) * 50
    got = softmax_rows(x4)
    assert got.shape == x4.shape, f"expected shape {tuple(x4.shape)}, got {tuple(got.shape)}"
    assert got.dtype == x4.dtype, (
        f"softmax_rows of a float64 tensor returned {got.dtype}: the result is a tensor like x, of x's dtype (a "
        f"conversion such as x.float() makes float32).")
    assert_close(got, torch.softmax(x4, dim=-1), atol=1e-12, name="softmax_rows(4-D scores)",
                 hint="the max and the sum over the last dimension must broadcast back over each row of any shape.")
