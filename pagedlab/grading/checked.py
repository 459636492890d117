"""The inputs of an exercise's own check over its stated input space, made graded calls too.

Each exercise with a differential check (``exercise_checks.<ex>.check_over_the_space``) states its input space once,
there, boundaries included. Here that check runs once, in the grader's process, on the published solution's
functions, each wrapped so that it records the arguments it is called with; each recorded call becomes a graded call
(:meth:`pagedlab.grading.specs.Spec.cases`). So whatever input the notebook's own check tries, the grader tries too,
beside the spec's fresh random draws: an answer wrong on a value the check states cannot pass the grader.

Only what can be written as a graded call is taken: calls of the solution's plain functions (not classes) with tensors,
numbers, strings, dtypes, tuples and lists of them, and the spec's given constants; a call with any other argument (a
``BlockManager`` built by the check) is left to the spec's own cases.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import inspect
import io
import math
from pathlib import Path

import nbformat
import numpy as np

from pagedlab.grading.align import role

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"  # (a checkout's, where no other is given)
CHUNK = 500  # calls of one function on numbers alone, graded together as one list


@functools.lru_cache(maxsize=None)
def published(notebook: str) -> bytes:
    """The checkout's published solution of ``notebook`` (the tests' solution; the grader reads its own)."""
    return (SOLUTIONS / f"{notebook}.ipynb").read_bytes()


@functools.lru_cache(maxsize=None)
def recorded(solution: bytes, graded: tuple[str, ...]) -> tuple[tuple[str, tuple, dict, str | None], ...]:
    """``(name, args, kwargs, the name of the exception it raised or None)`` of each call that the check cell of
    ``solution`` (a notebook's bytes) over the stated space makes of a function named in ``graded``, in order (a call
    from inside another of them is not its own), its tensors copied before the call."""
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    namespace: dict = {"__name__": "__checked__"}
    check = None
    for cell in nbformat.reads(solution.decode(), as_version=4).cells:
        if cell.cell_type != "code":
            continue
        tree = ast.parse(transform(cell.source))
        if role(cell) == "setup":  # its imports (the check module among them), not its side effects
            tree.body = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        elif role(cell) != "work":
            check = check or next((n for n in ast.walk(tree) if isinstance(n, ast.Call)
                                   and getattr(n.func, "attr", "") == "check_over_the_space"), None)
            continue
        exec(compile(tree, f"<solution:{cell.get('id')}>", "exec"), namespace)
    calls, depth = [], [0]

    def recording(name, f):
        def call(*args, **kwargs):
            if depth[0]:
                return f(*args, **kwargs)
            entry = [name, _copied(args), _copied(kwargs), None]
            calls.append(entry)
            depth[0] += 1
            try:
                return f(*args, **kwargs)
            except Exception as e:
                entry[3] = type(e).__name__
                raise
            finally:
                depth[0] -= 1
        return call

    for name in graded:
        if inspect.isfunction(namespace.get(name)):
            namespace[name] = recording(name, namespace[name])
    with contextlib.redirect_stdout(io.StringIO()):
        eval(compile(ast.Expression(check), "<solution:check-space>", "eval"), namespace)
    return tuple(tuple(c) for c in calls)


def add_checked(c, solution: bytes, graded: tuple[str, ...], given: dict[str, str], raises: tuple[str, ...]) -> None:
    """Add to ``c`` (:class:`pagedlab.grading.specs.Cases`) a graded call for each recorded call of ``solution``'s
    check that the grader can write (:func:`_literal`), and the solution answered or raised one of ``raises`` for:
    calls on tensors one case each, calls on numbers alone ``CHUNK`` to a case, as one list."""
    if not solution:
        return  # (no solution to run the check on: the grader says so where it needs the solution's outcomes)
    import pagedlab  # noqa: F401 - (the given constants below are resolved from it, as the driver does)

    values = {}
    for name, target in given.items():
        module, _, attr = target.partition(":")
        with contextlib.suppress(ImportError, AttributeError):
            values[id(functools.reduce(getattr, attr.split("."), __import__(module, fromlist=["_"])))] = name
    numbers: dict[str, list[str]] = {}
    for name, args, kwargs, raised in recorded(solution, graded):
        if raised is not None and raised not in raises:
            continue  # (a graded call the solution fails tests nothing)
        mark = len(c.arrays)
        try:
            text = ", ".join([*(_literal(a, c, values) for a in args),
                              *(f"{k}={_literal(v, c, values)}" for k, v in kwargs.items())])
        except ValueError:
            del c.arrays[mark:]  # (a call the grader cannot write: its arrays go too)
            continue
        if len(c.arrays) > mark or raised is not None:
            c.call(f"{name}({_described(args)}) as the exercise's own check over its space calls it",
                   f"{name}({text})")
        else:
            numbers.setdefault(name, []).append(f"{name}({text})")
    for name, texts in numbers.items():
        for start in range(0, len(texts), CHUNK):
            part = texts[start:start + CHUNK]
            c.call(f"{name} on {len(part)} inputs of the exercise's own check over its space",
                   f"[{', '.join(part)}]")


def _copied(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_copied(v) for v in value)
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    return value


def _literal(value, c, given: dict[int, str]) -> str:
    """Python source for ``value`` in a graded call (a tensor registered in ``c.arrays`` as ``T(i)``; a given constant
    by its name); ValueError for a value that has none."""
    import torch

    if id(value) in given:
        return given[id(value)]
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float('{value}')"
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_literal(v, c, given) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, torch.Tensor) and value.device.type == "cpu" and not value.is_complex():
        bf16 = value.dtype is torch.bfloat16
        c.arrays.append(np.ascontiguousarray((value.float() if bf16 else value).numpy()))
        return f"T({len(c.arrays) - 1}){'.to(torch.bfloat16)' if bf16 else ''}"
    if dataclasses.is_dataclass(value) and type(value).__name__ in given.values():
        fields = ", ".join(f"{f.name}={_literal(getattr(value, f.name), c, given)}" for f in dataclasses.fields(value))
        return f"{type(value).__name__}({fields})"
    raise ValueError(f"no graded call can hold a {type(value).__name__}")


def _described(args: tuple) -> str:
    """A call's positional arguments in a few words: tensors by shape and dtype, numbers as they are."""
    import torch

    def one(a):
        if isinstance(a, torch.Tensor):
            return f"a {tuple(a.shape)} {str(a.dtype)[6:]} tensor"
        return repr(a) if isinstance(a, (int, float, bool, str)) or a is None else type(a).__name__
    return ", ".join(map(one, args))
