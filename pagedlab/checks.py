"""Checks that explain themselves, for lecture and exercise notebooks.

A failed check should tell the learner *what* differs (which elements, expected vs got, how much)
and *why* it probably differs (a hint). ``assert`` with a bare ``False`` teaches nothing.
"""

from __future__ import annotations

import torch


def _index(flat_index: int, shape: torch.Size) -> tuple[int, ...]:
    out = []
    for dim in reversed(shape):
        out.append(flat_index % dim)
        flat_index //= dim
    return tuple(reversed(out))


def assert_close(
    got: torch.Tensor,
    expected: torch.Tensor,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-5,
    name: str = "result",
    hint: str = "",
    show: int = 3,
) -> None:
    """Assert that ``got`` matches ``expected`` elementwise, with a message that helps fix it.

    Args:
        got, expected: tensors of the same shape (compared in float64 on the CPU).
        atol, rtol: as in :func:`torch.allclose`.
        name: what is being checked, for the message ("softmax(x)").
        hint: the likely cause when it fails, in one sentence.
        show: how many differing elements to list.

    Raises:
        AssertionError: wrong type, wrong shape, NaN/inf where the reference is finite, or values that
            differ; the message names the first differing indices with expected and got values.
    """
    if not isinstance(got, torch.Tensor):
        raise AssertionError(f"{name}: expected a torch.Tensor, got {type(got).__name__}")
    if got.shape != expected.shape:
        raise AssertionError(f"{name}: expected shape {tuple(expected.shape)}, got {tuple(got.shape)}")
    g = got.detach().to("cpu", torch.float64)
    e = expected.detach().to("cpu", torch.float64)
    bad = ~torch.isclose(g, e, atol=atol, rtol=rtol, equal_nan=True)
    if not bad.any():
        return
    n_bad = int(bad.sum())
    nonfinite = int((~torch.isfinite(g) & torch.isfinite(e)).sum())
    flat = bad.flatten().nonzero().flatten()[:show].tolist()
    rows = [f"  at {_index(i, g.shape)}: expected {e.flatten()[i].item():.6g}, got {g.flatten()[i].item():.6g}"
            for i in flat]
    err = (g - e).abs().nan_to_num(float("inf")).max().item()
    lines = [f"{name}: {n_bad} of {g.numel()} elements differ (max error {err:.3g}, atol={atol:g}, rtol={rtol:g})"]
    if nonfinite:
        lines.append(f"  {nonfinite} are NaN or inf where the reference is finite (overflow in exp?)")
    lines += rows
    if hint:
        lines.append(f"Hint: {hint}")
    raise AssertionError("\n".join(lines))


def verdict(label: str, ok: bool) -> str:
    """Format a device-independent verdict line, ``"label: True"``, for stored notebook outputs."""
    return f"{label}: {bool(ok)}"
