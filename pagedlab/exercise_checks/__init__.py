"""What each exercise's check cells run, and the hints they give, kept out of the notebooks.

A check cell shows its title and the call it makes (``ex09.check_one_full_tile(paged_attention)``); the scenario, the
comparison and the hint live here, so a learner reads a hint only when a check fails, and the hint is chosen for the
output the check actually received (NaN, a wrong value, a wrong type, an error) rather than for one imagined mistake.
One module per exercise, named after it.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

_SHAPE_ERROR = re.compile(r"incompatible dimensions|broadcast|shape", re.IGNORECASE)


def kernel_error_hint(exc: BaseException, shapes: str) -> str:
    """The hint for an error raised while a learner's Triton kernel ran: ``shapes`` (what the blocks' shapes must be)
    for a shape error only, a word on names for a ``NameError``, else ``""`` (the error's own message says it)."""
    if _SHAPE_ERROR.search(str(exc)) and not isinstance(exc, (NameError, AttributeError)):
        return "Triton could not combine two blocks of different shapes. " + shapes
    if isinstance(exc, NameError):
        return "a name used inside the kernel is not defined there: a typo, or a value assigned later in the loop."
    return ""


def check_full_precision_products(kernel) -> None:
    """Every ``tl.dot`` of ``kernel`` (a ``@triton.jit`` function) asks for float32 products (``input_precision="ieee"``).

    Triton's interpreter computes ``tl.dot`` in full float32 whatever it is asked, so no check of results on a CPU can
    see the difference; compiled on a GPU, a ``tl.dot`` of float32 inputs defaults to TF32 (10 bits of mantissa),
    whose error, about 1e-3 relative, is past the exercises' ``atol=1e-4``. Read from the kernel's source.
    """
    __tracebackhide__ = True
    source = textwrap.dedent(inspect.getsource(getattr(kernel, "fn", kernel)))
    loose = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dot"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "tl"):
            precision = next((k.value for k in node.keywords if k.arg == "input_precision"), None)
            if not (isinstance(precision, ast.Constant) and precision.value == "ieee"):
                loose.append(ast.get_source_segment(source, node))
    assert not loose, (
        f"{len(loose)} tl.dot call(s) without input_precision=\"ieee\": {loose}. The interpreter computes them in "
        f"float32 anyway, so the checks before this one passed on a CPU; compiled on a GPU, a tl.dot of float32 "
        f"inputs runs in TF32 (about 1e-3 relative error), past their atol of 1e-4. Hint: pass "
        f"input_precision=\"ieee\" to every tl.dot of this exercise.")


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
