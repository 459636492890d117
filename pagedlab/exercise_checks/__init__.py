"""What each exercise's check cells run, and the hints they give, kept out of the notebooks.

A check cell shows its title and the call it makes (``ex09.check_one_full_tile(paged_attention)``); the scenario, the
comparison and the hint live here, so a learner reads a hint only when a check fails, and the hint is chosen for the
output the check actually received (NaN, a wrong value, a wrong type, an error) rather than for one imagined mistake.
One module per exercise, named after it.
"""

from __future__ import annotations

import inspect
import re

_SHAPE_ERROR = re.compile(r"incompatible dimensions|broadcast|shape", re.IGNORECASE)


def kernel_error_hint(exc: BaseException, shapes: str) -> str:
    """The hint for an error raised while a learner's Triton kernel ran: ``shapes`` (what the blocks' shapes must be)
    for a shape error only, a word on names for a ``NameError``, else ``""`` (the error's own message says it)."""
    if _SHAPE_ERROR.search(str(exc)) and not isinstance(exc, (NameError, AttributeError)):
        return "Triton could not combine two blocks of different shapes. " + shapes
    if isinstance(exc, NameError):
        return "a name used inside the kernel is not defined there: a typo, or a value assigned later in the loop."
    return ""


def source_without(fn, *parts: tuple[str, str, str]) -> str:
    """The source of ``fn`` (a ``@triton.jit`` kernel or a function) with the lines an exercise asks for left out.

    A lecture prints a kernel so that it can be read line by line; the lines a learner writes in an exercise are
    replaced by one comment naming the exercise, at their indentation, so the lecture shows the frame around them
    without the answer.

    Args:
        fn: the kernel or function.
        parts: ``(first, last, note)``: the lines from the first one that starts (after its indentation) with
            ``first`` to the next one that starts with ``last``, both included, become ``# ... note ...``.

    Raises:
        ValueError: a ``first`` or ``last`` that matches no line (the source changed under the lecture).
    """
    lines = inspect.getsource(getattr(fn, "fn", fn)).splitlines()
    for first, last, note in parts:
        starts = [i for i, line in enumerate(lines) if line.lstrip().startswith(first)]
        if not starts:
            raise ValueError(f"no line of {fn.__name__} starts with {first!r}")
        ends = [i for i, line in enumerate(lines) if i >= starts[0] and line.lstrip().startswith(last)]
        if not ends:
            raise ValueError(f"no line of {fn.__name__} after {first!r} starts with {last!r}")
        indent = re.match(r"\s*", lines[starts[0]]).group(0)
        lines[starts[0]:ends[0] + 1] = [f"{indent}# ... {note} ..."]
    return "\n".join(lines)
