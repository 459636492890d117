"""Exercise 0's checks: a softmax over the last dimension that never overflows.

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included: ``x`` a floating-point tensor of shape ``(..., n)``, with no leading dimension (one
row), one, or three (attention's ``(batch, heads, n_q, n_k)``), and a batch of no rows (a 0 among the leading
dimensions); ``n`` from 1 (a row of one score) to a few hundred; dtypes ``float32``, ``float64``, ``float16`` and
``bfloat16``; scores "of any magnitude": ordinary ones, of magnitude 1e4 and up to the dtype's largest finite value
/ 4, rows whose every score is large and negative (no score near 0), and ties (a row of equal scores, two equal
maxima). The result has ``x``'s shape and dtype, rows that sum to 1, and ``x`` is left as it was. Compared with
``torch.softmax`` in float64, within the dtype's precision.
"""

from __future__ import annotations

from typing import Callable

import torch

from ..checks import assert_close


def _pair(expected: float, got: float, least: int = 6) -> tuple[str, str]:
    """``expected`` and ``got`` with the fewest significant digits (``least`` at least, 17 at most) that tell them
    apart, trailing zeros kept: a float64 result off by 1e-9 reads "expected 0.16009789209, got 0.16009789205", not
    "0.160098" twice."""
    for digits in range(least, 18):
        e, g = f"{expected:#.{digits}g}", f"{got:#.{digits}g}"
        if e != g:
            break
    return e, g


def _differing(got: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float, show: int = 3) -> list[str]:
    """"at (i, j): expected ..., got ..." for the first ``show`` elements outside the tolerance, each pair printed with
    the digits that tell it apart (:func:`_pair`)."""
    g, e = got.detach().double().flatten(), expected.detach().double().flatten()
    bad = (~torch.isclose(g, e, atol=atol, rtol=rtol, equal_nan=True)).nonzero().flatten()[:show].tolist()
    lines = []
    for i in bad:
        index, rest = [], i
        for size in reversed(got.shape):
            index.append(rest % size)
            rest //= size
        want, have = _pair(e[i].item(), g[i].item())
        lines.append(f"  at {tuple(reversed(index))}: expected {want}, got {have}")
    return lines


def _assert_close(got, expected, *, atol: float, rtol: float, name: str, hint: str = "") -> None:
    """:func:`pagedlab.checks.assert_close`, with the differing elements printed with enough digits to differ."""
    __tracebackhide__ = True
    try:
        assert_close(got, expected, atol=atol, rtol=rtol, name=name, show=0)
    except AssertionError as exc:
        lines = [str(exc)]
        if isinstance(got, torch.Tensor) and got.shape == expected.shape:
            lines += _differing(got, expected, atol, rtol)
        if hint:
            lines.append(f"Hint: {hint}")
        raise AssertionError("\n".join(lines)) from None


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


TOLERANCES = {torch.float64: (1e-15, 1e-13), torch.float32: (1e-6, 1e-5), torch.float16: (2e-3, 1e-2),
              torch.bfloat16: (1.5e-2, 3e-2)}
"""(atol, rtol) per dtype: what a stable softmax computed in that dtype reaches (its rounding of exp and of the sum).
float64's was measured over :func:`_cases`: right softmaxes written other ways (the solution's, ``torch.softmax``,
``e * (1 / sum)``, ``x.max(...).values``, a sorted or cumulative sum) differ from ``torch.softmax`` in float64 by at
most 1.2e-15 relative and 2.2e-16 absolute; (1e-15, 1e-13) leaves them a margin of about 80x, and catches an epsilon
of 1e-9 in the sum (1e-9 relative), which (1e-12, 1e-9) let through, and the digits exp(x - logsumexp(x)) loses at
scores of 1e4 (3.5e-13)."""


def _cases() -> list[tuple[str, torch.Tensor]]:
    """(what, x in float64) for every case of the stated space, before the dtype is chosen."""
    g = torch.Generator().manual_seed(0)

    def randn(*shape, scale=1.0, shift=0.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale + shift

    ties = randn(4, 6)
    ties[0] = 3.0                                    # a row of equal scores: uniform
    ties[1, 2] = ties[1, 4] = ties[1].max() + 1      # two equal maxima
    ties[2] = 1e4                                    # equal and large

    def far(x):  # long rows of large scores, each maximum far from the start
        x[0, 211], x[1, 97] = 5e4, 4e4
        return x
    return [
        ("of shape (7,): one row, no leading dimension", randn(7)),
        ("of shape (1,): one row of one score, no leading dimension", randn(1)),
        ("of shape (1, 1): a row of one score", randn(1, 1)),
        ("of shape (4, 1): rows of one score", randn(4, 1, scale=100)),
        ("of shape (2, 3, 4, 1): rows of one score under three leading dimensions", randn(2, 3, 4, 1, scale=100)),
        ("of shape (3, 7), ordinary scores", randn(3, 7)),
        ("of shape (0, 5): a batch of no rows", randn(0, 5)),
        ("of shape (2, 3, 0, 5): no rows under three leading dimensions (attention with no queries)", randn(2, 3, 0, 5)),
        ("of shape (4, 6) with ties (row 0 all equal, row 1 two equal maxima, row 2 all 1e4)", ties),
        ("of shape (3, 6), scores of magnitude 1e4", randn(3, 6, scale=1e4)),
        ("of shape (3, 5), every score near -1e4 (large and negative: none near 0)", randn(3, 5, shift=-1e4)),
        ("of shape (3, 5), every score near -200", randn(3, 5, scale=10, shift=-200)),
        ("of shape (2, 4), scores up to the dtype's largest / 4", randn(2, 4, scale=1e300)),
        ("of shape (2, 3, 4, 6), scores of magnitude 50", randn(2, 3, 4, 6, scale=50)),
        ("of shape (2, 257), a long row", randn(2, 257, scale=3)),
        ("of shape (2, 300), scores of magnitude 1e4, each row's maximum far from its start (columns 211 and 97)",
         far(randn(2, 300, scale=1e4))),
    ]


def _float32_computed(got: torch.Tensor, x: torch.Tensor) -> bool:
    """Whether ``got``, the float64 result for a float64 ``x``, is a softmax computed in float32 and converted back: its
    every value a float32 number (a float64 computation almost never rounds to one), within float32's rounding of
    ``torch.softmax`` computed in float32."""
    g = got.detach()
    if g.dtype != torch.float64 or g.shape != x.shape or not torch.isfinite(g).all():
        return False
    in_float32 = torch.softmax(x.float(), dim=-1).double()
    atol, rtol = TOLERANCES[torch.float32]
    return torch.equal(g.float().double(), g) and torch.allclose(g, in_float32, atol=atol, rtol=rtol)


def _values_hint(got: torch.Tensor, x: torch.Tensor) -> str:
    """The likely cause of wrong values, from the output (in float64) and the input."""
    rows, scores = got.reshape(-1, got.shape[-1]), x.reshape(-1, x.shape[-1]).double()
    nan_rows = torch.isnan(rows).any(dim=-1)
    if nan_rows.any():
        top = scores[nan_rows].amax(dim=-1)
        return (f"NaN in rows whose largest score is {top[0].item():.4g}: every exponential of such a row underflowed "
                f"to 0, and 0 / 0 is NaN. Subtract each row's own maximum, always, whatever its sign or size (then "
                f"the largest exponential of every row is e^0 = 1).")
    sums = rows.sum(dim=-1)
    # a row that sums to 1 within the dtype's tolerance (or its n roundings) is no sign: in float32 every row of a
    # right softmax is off by some 1e-8, and pointing at it would hide the row whose sum is really off
    off = (sums - 1).abs() > max(TOLERANCES[x.dtype][1], x.shape[-1] * torch.finfo(x.dtype).eps)
    if torch.isfinite(sums).all() and off.any():
        row = int(off.nonzero()[0])
        return (f"your row {row} sums to {_pair(1.0, sums[row].item(), least=12)[1]}, not 1: exp(x - m) must be "
                f"divided by that row's own sum of exp(x - m), exactly. The sum is at least 1 (the maximum contributes "
                f"e^0 = 1), so it needs no epsilon; and exp(x - logsumexp(x)) loses every digit below the scores' "
                f"magnitude (at 1e4, float32 keeps three decimals), where x - m of the largest score is exactly 0.")
    return "exp(x - the row's maximum), divided by that row's sum, all in x's dtype."


def check_over_the_space(softmax_rows: Callable) -> None:
    """Check 4: your softmax against ``torch.softmax`` (in float64) on inputs drawn from the whole stated space (the
    module docstring), every dtype, boundaries included: the first input where yours differs, which elements, by how
    much."""
    __tracebackhide__ = True
    for what, x64 in _cases():
        for dtype, (atol, rtol) in TOLERANCES.items():
            limit = torch.finfo(dtype).max / 4
            x = x64.clamp(-limit, limit).to(dtype)
            before = x.clone()
            expected = torch.softmax(x.double(), dim=-1)
            where = f"x {what}, {dtype}"
            try:
                got = softmax_rows(x)
            except NotImplementedError:
                raise
            except Exception as exc:  # noqa: BLE001 - the learner's error is the difference to report
                hint = (" Hint: (..., n) includes a single row of shape (n,): reduce over dim=-1 with keepdim=True, "
                        "with no reshape, and every shape works." if x.dim() == 1 else "")
                raise AssertionError(f"softmax_rows(x), {where}: raised {type(exc).__name__}: {exc}.{hint}") from None
            if not torch.equal(x, before):
                changed = (x.double() - before.double()).abs().nan_to_num(float("inf")).max().item()
                raise AssertionError(
                    f"softmax_rows(x), {where}: your function changed its argument x (by up to {changed:.4g}): "
                    f"the caller's scores are no longer what it passed. Hint: x -= m (or x.sub_, x.exp_) writes into "
                    f"the caller's tensor; x - m makes a new one.")
            assert isinstance(got, torch.Tensor), f"softmax_rows(x), {where}: returned a {type(got).__name__}"
            assert got.dtype == dtype, (
                f"softmax_rows(x), {where}: returned {got.dtype}. Hint: the result is a tensor like x, of x's dtype "
                f"(x.float() makes float32 of a {dtype} tensor; a stable softmax needs no wider type).")
            close = got.shape == x.shape and torch.allclose(got.detach().double(), expected, atol=atol, rtol=rtol,
                                                            equal_nan=True)
            if not close and dtype == torch.float64 and _float32_computed(got, x):
                g = got.detach()
                bad = ~torch.isclose(g, expected, atol=atol, rtol=rtol)
                rel = ((g - expected).abs() / expected.abs()).nan_to_num(0.0).max().item()
                raise AssertionError(
                    f"softmax_rows(x), {where}: your result is a float32 computation, converted back to float64: "
                    f"every value is a float32 number, within float32's rounding of torch.softmax computed in "
                    f"float32, and {int(bad.sum())} of {g.numel()} differ from the float64 softmax by more than "
                    f"float64's rounding (max relative error {rel:.2g}, rtol={rtol:g}).\n"
                    + "\n".join(_differing(g, expected, atol, rtol)) + "\n"
                    f"Hint: x.float() (or float32 anywhere on the way) keeps only float32's ~7 significant digits of "
                    f"a float64 input, and .to(x.dtype) at the end cannot bring them back: compute in x's own dtype "
                    f"(subtracting the row's maximum is stable in every dtype; no wider or narrower type is needed).")
            _assert_close(got, expected, atol=atol, rtol=rtol, name=f"softmax_rows(x), {where}",
                          hint=_values_hint(got.detach().double(), x) if got.shape == x.shape else "")
