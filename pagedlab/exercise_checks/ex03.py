"""Exercise 3's checks: a masked vector add and a fused row softmax in Triton."""

from __future__ import annotations

import torch
import triton

from .. import device
from ..checks import assert_close, differing_rows
from .ex09 import kernel_error as _kernel_error
from .triton_reads import elements, recorded


def check_nothing_written_past_n(add_kernel) -> None:
    """Check 1: vector add, nothing written (nor read) past the end."""
    __tracebackhide__ = True
    n, block, sentinel = 100, 64, -7.0
    x_buf = torch.ones(2 * block, device=device.DEVICE)      # room past n, so unmasked loads stay in memory we own
    y_buf = torch.ones(2 * block, device=device.DEVICE)
    out_buf = torch.full((2 * block,), sentinel, device=device.DEVICE)
    add_kernel[(triton.cdiv(n, block),)](x_buf, y_buf, out_buf, n, BLOCK=block)
    overwritten = (out_buf[n:] != sentinel).sum().item()
    assert overwritten == 0, (
        f"add_kernel wrote {overwritten} elements past the end of out (indices {n} to {2 * block - 1}). "
        f"Hint: the store needs a mask, so that the lanes of the last block past n write nothing.")
    # The loads, recorded in Triton's interpreter (on the CPU, on any machine): the lanes past n must not read.
    x, y, out = (t.cpu() for t in (x_buf, y_buf, out_buf))
    with recorded(add_kernel) as (kernel, reads):
        kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    for name, tensor in (("x", x), ("y", y)):
        past = sorted({int(i) for loads in reads.values() for a in loads for i in elements(a, tensor)[:, 0]
                       if i >= n})
        assert not past, (
            f"add_kernel read {len(past)} elements of {name} past n = {n} (indices {past[0]} to {past[-1]}): in "
            f"memory that belongs to something else, that read can crash or return garbage. Hint: the loads need "
            f"the mask too, not only the store.")


def check_any_length(vector_add) -> None:
    """Check 2: vector add, any length."""
    __tracebackhide__ = True

    def add_hint(got, want, block):
        wrong = (got != want).nonzero().flatten().tolist()
        n_full = (len(want) // block) * block
        if wrong and wrong[0] >= n_full:
            return (f"elements {n_full} to {len(want) - 1}, the last, partial block, are wrong: the grid must cover "
                    f"all n elements, a partial block included (n // BLOCK rounds down)")
        if wrong and wrong[0] >= block:
            return "the first block is right and a later one is not: program pid handles the elements from pid * BLOCK"
        return "even the first block is wrong: out[i] = x[i] + y[i], loaded and stored at the same offsets"

    for n in [1, 17, 64, 1000]:
        x = torch.arange(n, dtype=torch.float32, device=device.DEVICE)
        y = 1000 * torch.ones(n, device=device.DEVICE)
        got = vector_add(x, y)
        assert_close(got, x + y, name=f"vector_add with n = {n}", hint=add_hint(got.cpu(), (x + y).cpu(), 64))


def check_nothing_written_past_n_cols(softmax_kernel) -> None:
    """Check 3: row softmax, nothing written past n_cols."""
    __tracebackhide__ = True
    rows, n_cols, block, sentinel = 3, 5, 8, -7.0
    x_buf = torch.zeros(rows, block, device=device.DEVICE)   # rows padded to BLOCK, so unmasked loads stay inside
    x_buf[:, :n_cols] = torch.randn(rows, n_cols, device=device.DEVICE)
    out_buf = torch.full((rows, block), sentinel, device=device.DEVICE)
    softmax_kernel[(rows,)](x_buf, out_buf, n_cols, block, block, BLOCK=block)
    overwritten = (out_buf[:, n_cols:] != sentinel).sum().item()
    assert overwritten == 0, (
        f"softmax_kernel wrote {overwritten} padding columns (columns {n_cols} to {block - 1}) of out. "
        f"Hint: the store needs a mask, so that the padding lanes write nothing.")


def error_hint(exc: BaseException) -> str:
    """The hint for an error raised by a kernel: about shapes only for a shape error."""
    return _kernel_error(exc)


def _assert_softmax(softmax, x: torch.Tensor, what: str, hint) -> None:
    """Compare ``softmax(x)`` with ``torch.softmax``; ``hint(got, want)`` explains a difference."""
    __tracebackhide__ = True
    got = softmax(x)
    want = torch.softmax(x, dim=-1)
    bad_rows = differing_rows(got, want, atol=1e-5, rtol=1e-4) if got.shape == want.shape else []
    text = hint(got.cpu(), want.cpu()) if bad_rows else ""
    assert_close(got, want, atol=1e-5, rtol=1e-4, name=f"softmax of {what}",
                 hint=f"rows {bad_rows[:6]} differ. {text}" if bad_rows else text)


def _sums(got: torch.Tensor) -> list[float]:
    return [round(v, 4) for v in got.sum(-1).tolist()]


def check_no_padding(softmax) -> None:
    """Check 4: row softmax without padding."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(0)
    _assert_softmax(softmax, torch.randn(6, 16, generator=g).to(device.DEVICE), "a 6 x 16 matrix",
                    lambda got, want: f"with 16 columns there is no padding; your rows sum to {_sums(got)}: the "
                                      f"softmax is the exponentials of x - max divided by their sum.")


def check_any_columns(softmax) -> None:
    """Check 5: row softmax, any number of columns."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(1)

    def hint(got, want):
        if torch.isnan(got).any():
            return ("NaN: the padding columns took part in the max or the sum with values that are not -inf "
                    "(garbage, or -inf - -inf).")
        if all(v < 0.9999 for v in _sums(got)):
            return (f"your rows sum to {_sums(got)}, less than 1: the padding columns were counted in the sum. Load "
                    f"them so that they change neither the max nor the sum, and do not store them.")
        return "the columns past n_cols are padding: they change neither the max nor the sum, and are not stored."

    for cols in [1, 5, 33, 100]:
        _assert_softmax(softmax, torch.randn(4, cols, generator=g).to(device.DEVICE), f"a 4 x {cols} matrix", hint)


def check_strided_rows(softmax) -> None:
    """Check 6: row softmax, strided rows."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(2)
    wide = torch.randn(5, 64, generator=g).to(device.DEVICE)
    x = wide[:, :40]
    packed = torch.softmax(wide.flatten()[:200].reshape(5, 40), dim=-1).cpu()

    def hint(got, want):
        if torch.allclose(got, packed, atol=1e-5):
            return ("your rows are those of the memory read as if rows were n_cols = 40 apart; they are "
                    "stride_x = 64 apart (a slice keeps its parent's stride).")
        return "row `row` starts stride_x elements after row 0, and out's rows stride_out apart."

    _assert_softmax(softmax, x, "x[:, :40] of a 5 x 64 matrix (rows 64 apart)", hint)


def check_large_scores(softmax) -> None:
    """Check 7: row softmax, large scores."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(3)
    big = 1000 * torch.randn(4, 24, generator=g).to(device.DEVICE)
    got = softmax(big)
    assert torch.isfinite(got).all(), (
        f"softmax of scores near 1000 gave {(~torch.isfinite(got)).sum().item()} NaN or inf values: exp(1000) "
        f"overflows. Hint: subtract the row max before tl.exp, so that every exponent is <= 0.")
    _assert_softmax(softmax, big, "scores near +-1000", lambda got, want: "subtract the row max before tl.exp.")
