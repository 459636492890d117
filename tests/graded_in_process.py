"""An exercise's graded calls made in this process, through the grader's own code, on many seeds at once.

The class grader runs each notebook in a sandboxed kernel (seconds each); proving every planted bug on five seeds
that way would take far too long. Here a notebook is prepared as the grader prepares it (:func:`prepare`: repaired,
pristine setup restored, checks left out), its cells run once in this process, and the graded calls of several
seeds, merged into one job, are made by the grader's driver (:func:`pagedlab.grading.harness.drive`, the same job
text) and compared by the same :func:`pagedlab.grading.calls.compare`. Only the sandbox and
the kernel are missing, and tests/grading/test_grade_class.py covers those end to end.
"""

from __future__ import annotations

import ast
import faulthandler
import fcntl
import functools
import gc
import importlib
import linecache
import multiprocessing
import pickle
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import torch
from IPython.core.inputtransformer2 import TransformerManager

from pagedlab.grading import harness
from pagedlab.grading.align import role
from pagedlab.grading.calls import compare, job_text, load_other, load_outcomes, watch_text
from pagedlab.grading.collect import load_pristine
from pagedlab.grading.judge import prepare
from pagedlab.grading.procs import Limits
from pagedlab.grading.sandbox import grading_copy
from pagedlab.grading.specs import SPECS, Cases

ROOT = Path(__file__).resolve().parent.parent
SEEDS = (101, 202, 303, 404, 505)
_transform = TransformerManager().transform_cell
_PRISTINE = {}


@dataclass
class Graded:
    """What one notebook's graded calls gave, per seed: outcomes and the tripwires they set off."""

    outcomes: dict[int, list]
    tripped: list[str]
    cell_errors: list[str]
    other: dict[int, dict[int, list]] = field(default_factory=dict)  # the cases made again with the other side of
    # Python 3.12's sum of floats, per seed: {case index: outcomes}


def pristine(exercise: str):
    if not _PRISTINE:
        _PRISTINE.update(load_pristine(ROOT / "exercises", ROOT / "solutions"))
        for p in _PRISTINE.values():  # (the library's fingerprints and words: once here, not in each forked child)
            p.library, p.library_floors, p.handed_words
    return _PRISTINE[f"{exercise}.ipynb"]


@functools.lru_cache(maxsize=None)
def copy_of(exercise: str) -> tuple[dict, list[str]]:
    """The exercise's grading copy of ``pagedlab`` (:func:`grading_copy` of its spec's rule): what it holds, and the
    exercise checks it keeps wired whole. Once per process; a forked child inherits it."""
    setup = [c.source for c in pristine(exercise).notebook.cells if c.cell_type == "code" and role(c) == "setup"]
    return grading_copy(*SPECS[exercise].copy_rule(setup))


# What a notebook's setup imports, and its graded calls use, that takes long to import (half a second of each row's
# second or two): imported once here, before the fork, so that each child has it as every grading kernel has it
# after its setup cells. (No module of the course: a child imports pagedlab as the exercise's grading copy allows.)
_SLOW_IMPORTS = ("matplotlib", "triton.language")


def warm(exercise: str) -> None:
    """Read, in this process, what every forked child of ``exercise`` would read again: the pristine notebooks, the
    grading copy, the slow imports."""
    pristine(exercise)
    copy_of(exercise)
    SPECS[exercise].cases(SEEDS[0])  # (the inputs of its own check, recorded where the check module is importable)
    for name in _SLOW_IMPORTS:
        importlib.import_module(name)


def shared(folder: Path | None, key: str, make):
    """``make()``, computed once among the processes that share ``folder`` (pytest-xdist's workers of one run): the
    first to ask computes and stores it (a pickle), the others wait for it and read it. None: in this process only."""
    if folder is None:
        return make()
    path = folder / f"{key}.pickle"
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # (released when the file closes)
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = make()
        path.with_suffix(".part").write_bytes(pickle.dumps(value))
        path.with_suffix(".part").replace(path)
        return value


@functools.lru_cache(maxsize=None)
def merged_cases(exercise: str, seeds: tuple[int, ...] = SEEDS) -> tuple[Cases, dict[int, tuple[Cases, int, int]]]:
    """One job holding every seed's cases (each ``T(i)`` renumbered), and where each seed's cases lie in it. Once per
    process (read only): a forked child finds it made, as the grader makes the cases outside the kernel, where
    every module of ``pagedlab`` is there (ex08's spec reads the exercise check's costs)."""
    spec, merged, where = SPECS[exercise], Cases(0), {}
    for seed in seeds:
        c = spec.cases(seed)
        offset, first = len(merged.arrays), len(merged.cases)
        merged.arrays += c.arrays
        for case in c.cases:
            steps = [[kind, re.sub(r"\bT\((\d+)\)", lambda m: f"T({int(m[1]) + offset})", source)]
                     for kind, source in case["steps"]]
            merged.cases.append({"label": case["label"], "steps": steps})
        where[seed] = (c, first, len(c.cases))
    return merged, where


def notebook_bytes(path: Path, replace: dict[str, str] | None = None) -> bytes:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.get("id") in (replace or {}):
            cell.source = replace[cell.id]
    return nbformat.writes(nb).encode()


def first_cases(exercise: str, seed: int) -> int:
    """How many of ``seed``'s graded calls a row of a quick run makes first (:func:`run_graded`'s ``first``): a
    quarter of them, where a wrong answer or an attack is seen at once, the rest only where they all agree."""
    return -(-len(SPECS[exercise].cases(seed).cases) // 4)


def run_graded(exercise: str, data: bytes, seeds=SEEDS, kept: list[str] | None = None,
               first: int | None = None) -> Graded:
    """Prepare ``data`` (a notebook's bytes) as the grader does, run its cells, make the graded calls (with the
    exercise checks that the grading copy keeps wired whole, as there, or ``kept``); ``first``: only the first
    ``first`` calls, of one seed."""
    p = pristine(exercise)
    spec = SPECS[exercise]
    restored, cells, _, _ = prepare(data, p, Limits())
    merged, where = merged_cases(exercise, tuple(seeds))
    if first is not None:
        (seed,) = seeds
        merged, where = Cases(seed), {seed: (where[seed][0], 0, min(first, where[seed][2]))}
        merged.arrays, merged.cases = merged_cases(exercise, tuple(seeds))[0].arrays, \
            merged_cases(exercise, tuple(seeds))[0].cases[:first]
    errors = []
    namespace: dict = {"__name__": "__main__"}
    kept = copy_of(exercise)[1] if kept is None else kept
    watch = watch_text(spec, kept, [c.source for c in p.notebook.cells if c.cell_type == "code" and role(c) != "work"])
    watching = None
    for c in cells:
        if watch is not None and watching is None and c.role != "setup" and any(d.role == "setup" for d in cells
                                                                                if d.index < c.index):
            watching = harness.watch(watch)  # (as the supervisor does, before the first cell not a setup cell's)
        code, name = _transform(restored.cells[c.index].source), f"<{exercise}:{c.id}>"
        # (as IPython does: a cell's source can be read back, and Triton's interpreter runs what it reads there)
        linecache.cache[name] = (len(code), None, code.splitlines(keepends=True), name)
        try:  # one top-level statement at a time, with no future import of this file's, as IPython runs a cell
            for node in ast.parse(code).body:
                exec(compile(ast.Module([node], []), name, "exec", dont_inherit=True), namespace)
        except Exception as e:  # noqa: BLE001 - a kernel goes on after a failing cell, so does this
            errors.append(f"{c.role} cell {c.id}: {type(e).__name__}: {str(e)[:200]}")
    # (as in a kernel of its own: no collector callback an earlier test of this process left, hypothesis's, which a
    # graded call's collection would run and the profile hook would see as a package's code computing in the call)
    callbacks, gc.callbacks[:] = gc.callbacks[:], []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "outcomes.json"
            cells = [restored.cells[c.index].source for c in cells]
            harness.drive(job_text(merged, spec, "t", kept, cells, watching is not None), namespace, str(out))
            outcomes, tripped, refused = load_outcomes(out.read_text(), merged, "t")
            other = load_other(out.read_text())
    finally:
        gc.callbacks[:] = callbacks
        if watching is not None:
            watching.close()
    tripped += refused
    per_seed = {seed: outcomes[start:start + n] for seed, (_, start, n) in where.items()}
    again = {seed: {i - start: o for i, o in other.items() if start <= i < start + n} for seed, (_, start, n) in
             where.items()}
    return Graded(per_seed, tripped, errors, {seed: o for seed, o in again.items() if o})


def run_graded_isolated(exercise: str, data: bytes, seeds=SEEDS, timeout_s: float = 20,
                        first: int | None = None) -> Graded | None:
    """:func:`run_graded` in a forked child: a planted bug that writes past a buffer in Triton's interpreter can
    crash the process, or loop forever, as it would crash a grading kernel or run out its time (a fail). None when
    the child died or ran past ``timeout_s``."""
    warm(exercise)
    merged_cases(exercise, tuple(seeds))  # (before the fork, as the grader makes them outside the kernel)
    parent, child = multiprocessing.Pipe(duplex=False)
    process = multiprocessing.get_context("fork").Process(target=_child, args=(child, exercise, data, seeds, first))
    process.start()
    child.close()
    try:
        result = parent.recv() if parent.poll(timeout_s) else None
    except EOFError:
        result = None
    if process.is_alive():
        process.kill()
    process.join()
    return result


def _child(conn, exercise, data, seeds, first) -> None:
    # A crash here is an expected fail (the parent gets None), not a fault of the test run: pytest's fault handler,
    # inherited through the fork, would print every such crash's traceback into the run's output.
    faulthandler.disable()
    # A forked child that runs a parallel op waits forever on the parent's OpenMP pool, once the parent has used it
    # (an earlier test's big tensor op): one thread, as in a grading kernel of its own.
    torch.set_num_threads(1)
    conn.send(run_graded(exercise, data, seeds, first=first))
    conn.close()


def differences(exercise: str, want: Graded, got: Graded, seeds=None) -> dict[int, str | None]:
    """Per seed (``seeds``, else every seed ``want`` was graded on: one ``got`` lacks is a KeyError, never a pass), the
    first graded call whose outcome differs (as the grader words it), or None."""
    spec = SPECS[exercise]
    seeds = tuple(want.outcomes) if seeds is None else seeds
    found = {}
    for seed in seeds:
        cases, other = spec.cases(seed), got.other.get(seed, {})
        found[seed] = compare(want.outcomes[seed], got.outcomes[seed], cases, spec.atol, spec.rtol, spec.rounding)
        elsewhere = compare(want.outcomes[seed], [other.get(i, o) for i, o in enumerate(got.outcomes[seed])], cases,
                            spec.atol, spec.rtol, spec.rounding) if other else None
        if found[seed] is None and elsewhere:  # (the judge's review: the answer depends on which Python runs it)
            found[seed] = f"with the other side of Python 3.12's sum of floats, {elsewhere}"
    return found
