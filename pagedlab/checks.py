"""Checks that explain themselves, for lecture and exercise notebooks.

A failed check should tell the learner *what* differs (which elements, expected vs got, how much)
and *why* it probably differs (a hint). ``assert`` with a bare ``False`` teaches nothing.

An exercise's check cell wraps its asserts in :class:`check`, so a failure reads

    CheckError: Check 3: copy-on-write, once: the child appended into block 1, ... Hint: ...

with the check's title first (the heading the learner sees, not nbval's "Cell 5") and none of this
module's frames in the traceback: IPython hides frames that set ``__tracebackhide__``.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from pathlib import Path
from typing import Callable

import torch

from pagedlab import triton_guard


def _index(flat_index: int, shape: torch.Size) -> tuple[int, ...]:
    out = []
    for dim in reversed(shape):
        out.append(flat_index % dim)
        flat_index //= dim
    return tuple(reversed(out))


def differing_rows(got: torch.Tensor, expected: torch.Tensor, *, atol: float = 1e-5, rtol: float = 1e-5) -> list[int]:
    """Indices along the first dimension where ``got`` differs from ``expected``, NaN and inf counted as different.

    Args:
        got, expected: tensors of the same shape, at least 1-D.

    Returns:
        The sorted row indices with at least one element outside ``atol + rtol * |expected|``.
    """
    g = got.detach().to("cpu", torch.float64)
    e = expected.detach().to("cpu", torch.float64)
    bad = ~torch.isclose(g, e, atol=atol, rtol=rtol, equal_nan=True)
    return bad.reshape(bad.shape[0], -1).any(dim=1).nonzero().flatten().tolist()


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
            differ; the message names the first differing indices with expected and got values, and says
            in which rows (first dimension) NaN appeared, since NaN compares unequal to everything.
    """
    __tracebackhide__ = True
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
    nan = torch.isnan(g) & ~torch.isnan(e)
    inf = torch.isinf(g) & torch.isfinite(e)
    flat = bad.flatten().nonzero().flatten()[:show].tolist()
    shown = [f"  at {_index(i, g.shape)}: expected {e.flatten()[i].item():.6g}, got {g.flatten()[i].item():.6g}"
            for i in flat]
    err = (g - e).abs().nan_to_num(float("inf")).max().item()
    lines = [f"{name}: {n_bad} of {g.numel()} elements differ (max error {err:.3g}, atol={atol:g}, rtol={rtol:g})"]
    for mask, what, why in [
            (nan, "NaN", "NaN comes from inf - inf or 0/0: a value that overflowed to inf (exp() of a large score, a "
                         "float16 value past 65504) then subtracted, a row whose every score is masked "
                         "(exp(-inf - (-inf))), or a division by a sum l = 0"),
            (inf, "inf", "inf is an overflow: exp() of a large score, a float16 value past 65504, or a division by 0")]:
        if mask.any():
            first = _index(int(mask.flatten().nonzero()[0]), mask.shape)
            where = mask.any(dim=1).nonzero().flatten().tolist() if mask.dim() == 2 else []
            in_rows = f" (rows {where[:8]}{' ...' if len(where) > 8 else ''})" if where else f" (first at {first})"
            lines.append(f"  {int(mask.sum())} elements are {what}{in_rows} where the reference is finite. {why}.")
    lines += shown
    if hint:
        lines.append(f"Hint: {hint}")
    raise AssertionError("\n".join(lines))


def _where(exc: BaseException) -> str:
    """`` (at `<source>`, in <function>)``: the innermost frame of notebook code that ``exc`` or its causes passed.

    A library that wraps an error (Triton's interpreter raises ``InterpreterError`` from the kernel's own exception)
    keeps the learner's frame in the cause: the line inside a kernel that failed, not the line that launched it.
    """
    for cause in reversed(_chain(exc)):
        frames = [f for f in traceback.extract_tb(cause.__traceback__) if not any(p in f.filename for p in _LIBRARY)]
        if frames:
            frame = frames[-1]
            return f" (at `{frame.line.strip()}`, in {frame.name})" if frame.line else f" (in {frame.name})"
    return ""


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from (``__cause__``, else ``__context__``), outermost first."""
    chain = [exc]
    while len(chain) < 8 and (chain[-1].__cause__ or chain[-1].__context__) is not None:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)
    return chain


def root_cause(exc: BaseException) -> BaseException:
    """The error a library only wrapped: Triton's ``InterpreterError(repr(e)) from e`` gives ``e``; else ``exc``."""
    while exc.__cause__ is not None and str(exc) in (repr(exc.__cause__), str(exc.__cause__)):
        exc = exc.__cause__
    return exc


# Frames in these folders are library code, not the learner's: the package, its kernels, the standard library, installs.
_LIBRARY = ("site-packages", "dist-packages", str(Path(__file__).parent), str(Path(__file__).parent.parent / "kernels"),
            str(Path(os.__file__).parent), "<frozen ")


# How a wrapper prints the stub: NotImplementedError('...') (Triton's interpreter does this).
_WRAPPED_STUB = re.compile(r"""NotImplementedError\((['"])(.*)\1\)$""", flags=re.S)


def _stub_message(exc: BaseException) -> str | None:
    """The message of an exercise stub's ``NotImplementedError`` that a library wrapped in an error of its own, else None."""
    for _ in range(8):
        if exc is None:
            return None
        if isinstance(exc, NotImplementedError):
            return str(exc)
        match = _WRAPPED_STUB.match(str(exc))
        if match:
            return match.group(2)
        exc = exc.__cause__ or exc.__context__
    return None


class CheckError(AssertionError):
    """A failed exercise check; its message starts with the check's title and is the whole diagnosis.

    IPython (and so Jupyter and nbval) shows an exception's ``_render_traceback_()`` instead of its traceback:
    the learner reads the diagnosis, not frames of this module.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {line}" if i == 0 else line for i, line in enumerate(str(self).splitlines())]


class check:
    """Context manager for one exercise check: failures become a short :class:`CheckError` led by ``title``.

    Usage, in a check cell::

        with check("Check 2: several key tiles", errors=ex09.kernel_error):
            ex09.check_several_tiles(paged_attention)

    On success it prints ``"<title>: OK"``. An ``AssertionError`` inside becomes
    ``CheckError("<title>: <message>")``; any other exception raised by the learner's code becomes
    ``CheckError("<title>: your code raised <Type>: <message> (at `<line>`, in <function>). Hint: <hint>")``, where
    the type and message are those of the error itself, not of a library's wrapper around it (Triton's interpreter
    wraps a kernel's errors), and the line is the innermost one of notebook code, inside the kernel when the kernel
    failed. ``NotImplementedError`` (an exercise not written yet), ``KeyboardInterrupt`` and ``SystemExit`` pass
    through unchanged.

    Args:
        title: the check's heading, as the learner sees it ("Check 2: several key tiles").
        errors: the likely cause when the learner's code raises something other than ``AssertionError``: a
            callable that takes the error (its root cause) and returns a hint for that error, or ``""`` when it has
            none for it; a plain string is the same hint for every error.
    """

    def __init__(self, title: str, errors: str | Callable[[BaseException], str] = "") -> None:
        if not isinstance(title, str):
            raise TypeError(f"title must be a str, got {type(title).__name__}")
        if not title:
            raise ValueError("title must be a non-empty str, got ''")
        if not isinstance(errors, str) and not callable(errors):
            raise TypeError(f"errors must be a str or a callable(exception) -> str, got {type(errors).__name__}")
        self.title = title
        self.errors = errors

    def __enter__(self) -> "check":
        # a learner's kernel run by the check, in Triton's interpreter, may point outside its tensors: stopped with
        # an error this check reports, where the memory it touched would kill the Jupyter kernel without a word
        self._guard = triton_guard.guarded()
        self._guard.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        __tracebackhide__ = True
        self._guard.__exit__(None, None, None)
        failed = _failed_checks(sys._getframe(1))
        if exc is None:
            print(f"{self.title}: OK")
            if failed is not None and self.title in failed:
                failed.remove(self.title)
            return False
        if isinstance(exc, (NotImplementedError, KeyboardInterrupt, SystemExit)):
            return False
        stub = _stub_message(exc)  # e.g. Triton's interpreter re-raises a kernel's NotImplementedError as its own error
        if stub is not None:
            raise NotImplementedError(stub) from None
        if isinstance(exc, AssertionError):
            message = str(exc) or "an assert without a message failed"
        else:
            cause = root_cause(exc)
            message = f"your code raised {type(cause).__name__}: {_one_line(cause)}{_where(exc)}"
            hint = self.errors(cause) if callable(self.errors) else self.errors
            if hint:
                message += f". Hint: {hint}"
        if isinstance(exc, CheckError) and message.startswith(self.title):
            return False
        if failed is not None:
            earlier = [title.split(":")[0] for title in failed if title != self.title]
            if earlier:
                message += (f" (Earlier in this notebook {', '.join(earlier)} failed: this failure may be a "
                            f"consequence of that one; fix it first.)")
            failed[:] = [title for title in failed if title != self.title] + [self.title]
        raise CheckError(f"{self.title}: {message}") from None


def _failed_checks(frame) -> list[str] | None:
    """The titles of the checks that failed so far in the notebook whose cell ``frame`` runs (kept in its namespace,
    so that each notebook, and each run of one, has its own), or None when the frame is not a notebook's (a module's
    code: a test, a library)."""
    namespace = frame.f_globals
    if namespace.get("__name__") != "__main__":
        return None
    return namespace.setdefault("_pagedlab_failed_checks", [])


def _one_line(exc: BaseException) -> str:
    """An error's message; a ``KeyError`` of a bare key reads ``key 'A'`` (its ``str`` is only ``'A'``)."""
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        key = exc.args[0]
        return key if isinstance(key, str) and " " in key else f"key {key!r}"
    return str(exc)


def verdict(label: str, ok: bool) -> str:
    """Format a device-independent verdict line, ``"label: True"``, for stored notebook outputs."""
    return f"{label}: {bool(ok)}"
