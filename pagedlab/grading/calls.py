"""Graded calls: the job a kernel runs, the plain data it brings back, and the comparison outside.

:func:`job_text` is what the driver cell carries into the grading kernel after the notebook's last cell
(:mod:`pagedlab.grading.harness`): the cases of :mod:`pagedlab.grading.specs`, their arrays, the exercise's given
constants and tripwires, and a one-time token. The driver executes every step in the notebook's namespace and
writes ``{"token": ..., "outcomes": ..., "tripped": ..., "refused": ...}``: per step, numbers, strings, lists,
``{"tensor": dtype, "shape": [...], "data": [...]}``, or ``{"raised": [the exception's class and its bases,
qualified]}``; a value may carry the driver's note of the elements the notebook's Triton kernel never wrote
(``{"value": ..., "unwritten": "..."}``, said first when the value differs); which tripwires a graded call set off; which Triton results no kernel of the notebook wrote. Nothing
else crosses back: no object, no pickle. The grader reads that file as untrusted text (:func:`load_outcomes` refuses
anything that is not plain data of the expected layout, or that lacks the token) and compares it (:func:`compare`)
with the outcomes of the same cases after
the solution's cells, computed in a kernel that ran no learner code, before any learner's notebook started.

Whatever a learner's function returns (a tensor subclass, an ``int`` with its own ``==``, a proxy) is turned into
plain data by the driver, inside the learner's kernel; the comparison happens in the grader's process, on
numbers parsed from JSON, where no learner code runs. A learner can make the driver write anything, but to be
credited it must write the solution's outcomes for inputs drawn at grading time: that is solving the exercise.
"""

from __future__ import annotations

import json
import math

import numpy as np

MAX_OUTCOME_BYTES = 20_000_000


def job_text(cases, spec, token: str, kept: list[str] = (), cells: list[str] | None = None,
             watched: bool = False) -> str:
    """The JSON the driver cell carries: the cases and their arrays as plain lists, the spec's given constants,
    tripwires, device, Triton and memory rules, and the ``token`` the results must echo. Each exercise check the grading
    copy had to keep (``kept``, see :func:`pagedlab.grading.sandbox.grading_copy`) is wired whole. ``cells``: the
    source of each code cell the notebook runs, the code the review read: the code the calls run must be built from
    it (:class:`pagedlab.grading.harness.Sources`). ``watched``: the kernel ran :func:`watch_text`'s cell, whose
    counts the driver reads (and whose absence it reports)."""
    arrays = [{"dtype": str(a.dtype), "shape": list(a.shape), "data": a.reshape(-1).tolist()} for a in cases.arrays]
    wired = _wired(spec, kept)
    targets = [t for t in wired if t.startswith("pagedlab")]
    return json.dumps({"cases": cases.cases, "arrays": arrays, "given": dict(spec.given), "token": token,
                       "tripwires": wired, "device": spec.device, "triton": spec.triton,
                       "full_precision": spec.full_precision,
                       "memory": spec.memory, **({"cells": list(cells)} if cells is not None else {}),
                       **({"watch": targets} if watched else {})})


def watch_text(spec, kept: list[str], given: list[str]) -> str | None:
    """The JSON of the cell that watches the exercise's reference code from the setup cells on
    (:class:`pagedlab.grading.harness.Watch`): the targets the driver wires that are pagedlab's, the sources of the
    code cells the exercise hands out as they are (setup and demonstration cells: their own calls do not count), and
    whether it is a Triton exercise (what the interpreter computes with is held: :class:`~pagedlab.grading.harness.
    Held`); None when nothing is to be watched."""
    watched = [t for t in _wired(spec, kept) if t.startswith("pagedlab")]
    return (json.dumps({"targets": watched, "given": list(given), "triton": bool(spec.triton)})
            if watched or spec.triton else None)


def _wired(spec, kept) -> list[str]:
    return list(spec.tripwires) + [f"{m}:*" for m in kept if m.startswith("pagedlab.exercise_checks")]


class Malformed(ValueError):
    """The driver's output is not plain data of the expected layout."""


def load_outcomes(text: str, cases, token: str) -> tuple[list[list], list[str], list[str]]:
    """Parse the driver's output (untrusted): (one list of step outcomes per case, arrays as numpy arrays; the
    tripwires a graded call set off; the Triton results the notebook's kernel did not write; as short lines).

    Raises:
        Malformed: not JSON, too large, without ``token``, or not one outcome per step of plain data.
    """
    if len(text) > MAX_OUTCOME_BYTES:
        raise Malformed(f"the graded calls' results are larger than {MAX_OUTCOME_BYTES:,} bytes")
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise Malformed(f"the graded calls' results are not JSON ({type(e).__name__})") from None
    if not (isinstance(raw, dict) and set(raw) - {"other"} == {"token", "outcomes", "tripped", "refused"}
            and all(isinstance(raw[k], list) and all(isinstance(t, str) for t in raw[k]) for k in ("tripped", "refused"))):
        raise Malformed("the graded calls' results are not outcomes and tripwires")
    if raw["token"] != token:
        raise Malformed("the graded calls' results do not carry this run's token (not written by the driver)")
    # (a refusal is a verdict's message, which says what was wrong and where: longer than a tripwire's line)
    tripped, refused = ([t[:cap] for t in raw[k][:20]] for k, cap in (("tripped", 200), ("refused", 500)))
    other = raw.get("other", {})
    raw = raw["outcomes"]
    if not (isinstance(raw, list) and len(raw) == len(cases.cases)
            and all(isinstance(o, list) and len(o) == len(c["steps"]) for o, c in zip(raw, cases.cases))):
        raise Malformed("the graded calls' results do not have one outcome per step")
    if not (isinstance(other, dict) and all(k.isdigit() and int(k) < len(raw) and isinstance(o, list)
                                            and len(o) == len(raw[int(k)]) for k, o in other.items())):
        raise Malformed("the graded calls' results made again with another Python's sums are not one per step")
    return [[_step(step) for step in outcome] for outcome in raw], tripped, refused


def load_other(text: str) -> dict[int, list]:
    """The cases the driver made again with the other side of Python 3.12's ``sum`` of floats (text that
    :func:`load_outcomes` accepted): {case index: one outcome per step}."""
    return {int(k): [_step(step) for step in o] for k, o in json.loads(text).get("other", {}).items()}


def _step(v):
    """A step's outcome; a value with the driver's note of the elements the notebook's kernel never wrote (a short
    line) becomes ``("value", value, note)``."""
    if isinstance(v, dict) and set(v) == {"value", "unwritten"} and isinstance(v["unwritten"], str):
        return ("value", _plain(v["value"], 1), v["unwritten"][:400])
    return _plain(v)


_DTYPES = {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"}


def _plain(v, depth: int = 0):
    """``v`` (parsed JSON) checked to be plain data; tensors become (dtype, numpy float64/int array)."""
    if depth > 14:
        raise Malformed("the graded calls' results are nested too deeply")
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, list):
        return [_plain(x, depth + 1) for x in v]
    if not isinstance(v, dict):
        raise Malformed(f"unexpected {type(v).__name__} in the graded calls' results")
    if set(v) == {"tensor", "shape", "data"}:
        shape, data, dtype = v["shape"], v["data"], v["tensor"]
        if (dtype not in _DTYPES or not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape)
                or not isinstance(data, list) or len(data) != math.prod(shape)
                or not all(type(x) in (int, float, bool) for x in data)):
            raise Malformed("a tensor in the graded calls' results is malformed")
        return ("tensor", dtype, np.array(data, dtype=np.float64).reshape(shape))
    if len(v) == 1:
        (key, value), = v.items()
        if key in ("value", "dict"):
            return (key, _plain(value, depth + 1))
        if key == "fields" and isinstance(value, dict):
            return (key, [[str(k), _plain(x, depth + 1)] for k, x in sorted(value.items())])
        if key == "object" and isinstance(value, str):
            return (key, value[:100])
        if key == "raised" and isinstance(value, list) and value and all(isinstance(n, str) for n in value):
            return (key, tuple(n[:100] for n in value[:12]))
    raise Malformed("unexpected mapping in the graded calls' results")


def compare(expected: list[list], got: list[list], cases, atol: float, rtol: float,
            rounding: dict[str, tuple[float, float]] | None = None) -> str | None:
    """None when every step's outcome agrees with the solution's; else which step of which case, and how.
    ``rounding``: (atol, rtol) of a dtype's results in place of ``atol, rtol`` (a spec's :attr:`Spec.rounding`);
    a float16 or bfloat16 result not in it is allowed at least one unit in the last place (``ONE_ULP``)."""
    rounding = {} if rounding is None else rounding
    for n, (case, want_steps, got_steps) in enumerate(zip(cases.cases, expected, got), 1):
        for k, ((kind, source), want, have) in enumerate(zip(case["steps"], want_steps, got_steps), 1):
            problem = _differs(want, have, atol, rtol, rounding)
            if problem:
                if isinstance(have, tuple) and len(have) == 3 and have[0] == "value":
                    problem = f"{have[2]}; {problem}"   # the driver saw elements no store reached: the cause first
                where = f"graded call {n} ({case['label']})"
                if len(case["steps"]) > 1:
                    where += f", step {k}"
                return f"{where}: {_short(source)}: {problem}"
    return None


def _short(source: str) -> str:
    source = " ".join(source.split())
    return source if len(source) <= 90 else source[:87] + "..."


def _differs(want, have, atol: float, rtol: float, rounding: dict) -> str | None:
    if isinstance(want, tuple) and want[0] == "raised":
        # An instance of the promised class passes: a learner's NotAllocated(ValueError) is a ValueError.
        if _raised(have) and want[1][0] in have[1]:
            return None
        return f"should raise {_name(want)}, " + ("raised " + _name(have) if _raised(have) else "did not")
    if _raised(have):
        return f"raised {_name(have)}"
    return _value_differs(want, have, atol, rtol, rounding)


def _name(raised: tuple) -> str:
    """The exception's class, qualified unless it is a builtin (``ValueError``, ``pagedlab.paged.allocator.OutOfBlocks``)."""
    return raised[1][0]


def _raised(v) -> bool:
    return isinstance(v, tuple) and v[0] == "raised"


# A float16 or bfloat16 result is a float32 one rounded once, and two correct computations that add in another order
# can round to neighbouring values: such entries may differ by one unit in the last place, at most 2^-10 (float16)
# or 2^-7 (bfloat16) of the value (float16's subnormals lie 2^-24 apart). Measured: three correct orders of ex02
# stretch's float32 arithmetic (scaling after the product, d ** -0.5, float64 inside) flipped one entry of a float16
# or bfloat16 result on 3 to 6 of 60 seeds.
ONE_ULP = {"float16": (2.0**-24, 2.0**-10), "bfloat16": (0.0, 2.0**-7)}


def _value_differs(want, have, atol: float, rtol: float, rounding: dict | None = None) -> str | None:
    if isinstance(want, tuple) and want[0] == "tensor":
        if not (isinstance(have, tuple) and have[0] == "tensor"):
            return f"expected a {want[1]} tensor, got {_kind(have)}"
        if have[1] != want[1]:
            return f"expected dtype {want[1]}, got {have[1]}"
        a, b = want[2], have[2]
        if a.shape != b.shape:
            return f"expected shape {list(a.shape)}, got {list(b.shape)}"
        ulp_atol, ulp_rtol = ONE_ULP.get(want[1], (0.0, 0.0))
        atol, rtol = (rounding or {}).get(want[1], (max(atol, ulp_atol), max(rtol, ulp_rtol)))
        close = (np.isclose(b, a, atol=atol, rtol=rtol, equal_nan=False)
                 | (np.isnan(a) & np.isnan(b)))
        close |= np.isinf(a) & (a == b)
        if not close.all():
            i = np.argwhere(~close)[0]
            return (f"{int((~close).sum())} of {close.size} entries differ; at {tuple(int(x) for x in i)} "
                    f"expected {a[tuple(i)]:.6g}, got {b[tuple(i)]:.6g}{_slices(a, b, close, atol, rtol)}")
        return None
    if isinstance(want, tuple):
        if not (isinstance(have, tuple) and have[0] == want[0]):
            return f"expected {_kind(want)}, got {_kind(have)}"
        return _value_differs(want[1], have[1], atol, rtol, rounding)
    if isinstance(want, list):
        if not isinstance(have, list) or len(have) != len(want):
            return f"expected {_kind(want)}, got {_kind(have)}"
        for w, h in zip(want, have):
            problem = _value_differs(w, h, atol, rtol, rounding)
            if problem:
                return problem
        return None
    if isinstance(want, float):
        if type(have) not in (int, float):
            return f"expected {want!r}, got {_kind(have)}"
        if math.isnan(want) or math.isnan(have):
            return None if math.isnan(want) and math.isnan(have) else f"expected {want!r}, got {have!r}"
        if want == have or (not math.isinf(want) and abs(have - want) <= atol + rtol * abs(want)):
            return None  # (an infinite expected value is met only by itself: inf * rtol would excuse anything)
        return f"expected {want!r}, got {have!r}"
    if type(want) is not type(have) or want != have:
        return f"expected {want!r}, got {have!r}" if not isinstance(have, tuple) else f"expected {want!r}, got {_kind(have)}"
    return None


def _slices(want: np.ndarray, got: np.ndarray, close: np.ndarray, atol: float, rtol: float) -> str:
    """For a result of 3 dimensions or more, which slices ``[i, j]`` of its first two dimensions (batch and head, in
    the attention exercises) differ, when some are right, and which expected slice each wrong one equals, if any:
    data right but in the wrong place is an offset, not arithmetic. ``""`` otherwise."""
    if want.ndim < 3:
        return ""
    wrong = [tuple(int(x) for x in ij) for ij in np.argwhere(~close.reshape(*close.shape[:2], -1).all(axis=2))]
    found = []
    for i, j in wrong:
        for k, m in np.ndindex(*want.shape[:2]):
            if np.allclose(got[i, j], want[k, m], atol=atol, rtol=rtol, equal_nan=False):
                found.append(f"result[{i}, {j}] equals the expected result[{k}, {m}]")
                break
        if len(found) == 3:
            break
    text, n_i, n_j = "", close.shape[0], close.shape[1]
    if len(wrong) < n_i * n_j:
        text = (f"; the slices [i, j] of the first two dimensions (batch, head) that differ: {wrong[:8]}"
                f"{' and more' if len(wrong) > 8 else ''}, the other {n_i * n_j - len(wrong)} are right")
        for index, name in ((1, "j"), (0, "i")):   # 0 times any stride is right: an index times the wrong stride
            if set(wrong) == {ij for ij in np.ndindex(n_i, n_j) if ij[index] != 0}:
                text += (f", exactly those whose {name} is not 0 (where 0 times any stride is right): that index "
                         f"multiplied by the wrong stride, or the wrong count")
    if found:
        text += (f"; {', '.join(found)}: the right values in the wrong place, so an offset (the batch's or the "
                 f"head's) is wrong, not the arithmetic")
    return text


def _kind(v) -> str:
    if isinstance(v, tuple):
        return {"tensor": f"a {v[1]} tensor", "object": f"an object of type {v[1] if len(v) > 1 else '?'}",
                "raised": f"an exception {_name(v) if v[0] == 'raised' else ''}"}.get(v[0], v[0])
    if isinstance(v, list):
        return f"a list of {len(v)}"
    return repr(v)[:40]
