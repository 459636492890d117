"""Run one notebook under its own supervisor process, and the solution's graded calls before any learner's.

The supervisor (:mod:`pagedlab.grading.run`) runs isolated (``python -I``) from the grader's in-memory copy of its
modules, read at start-up before any learner code ran; its answer counts only when it exits normally and echoes the
job's one-time token.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from pagedlab.grading import calls, harness, procs, run
from pagedlab.grading.align import role
from pagedlab.grading.calls import Malformed, job_text, load_outcomes, watch_text
from pagedlab.grading.collect import Pristine
from pagedlab.grading.judge import ERROR, PASS, Expected, NotRun, Result, judge, judge_graded, prepare
from pagedlab.grading.procs import kill_tree
from pagedlab.grading.sandbox import Sandbox

_GRACE_S = 30  # beyond the notebook limit, for the supervisor to stop the kernel and answer
# The supervisor's code, read now (before any learner code runs) and handed to it on stdin: it imports no grader
# module from disk, so no file a learner's code could write becomes part of it.
_SUPERVISOR = [(m.__name__, Path(m.__file__).read_text(encoding="utf-8")) for m in (procs, calls, harness, run)]
# nbformat's jsonschema imports rfc3987_syntax when it is installed (JupyterLab brings it), to check IRI formats
# that no notebook schema uses; its import builds a parser: 1.3 s of CPU in every supervisor. A None entry in
# sys.modules makes that import fail, and jsonschema goes on without it.
_BOOT = ("import json, sys, types\n"
         "sys.modules['rfc3987_syntax'] = None\n"
         "job = json.load(sys.stdin)\n"
         "for name, source in job.pop('modules'):\n"
         "    module = sys.modules[name] = types.ModuleType(name)\n"
         "    exec(compile(source, '<' + name + '>', 'exec'), module.__dict__)\n"
         "sys.exit(sys.modules['pagedlab.grading.run'].main(job))\n")



def grade_notebook(student: str, data: bytes, pristine: Pristine, sandbox: Sandbox,
                   expected: Expected | None = None, published: bool = True) -> Result:
    """Grade one notebook; every problem becomes this notebook's verdict, never an exception. With ``published``,
    a work cell that matches the published solution's needs review."""
    exercise = pristine.name.removesuffix(".ipynb")
    try:
        restored, cells, reasons, notes = prepare(data, pristine, sandbox.limits, published)
        if not sandbox.site_intact(pristine.name):
            return Result(student, exercise, ERROR, "the grading kernels' copy of pagedlab was changed before this "
                                                    "notebook ran; it was restored: grade this notebook again")
        token = secrets.token_hex(16)  # the graded calls' results must carry it: only the driver cell knows it
        watch = _watch(pristine, sandbox, cells) if expected is not None else None
        graded = (job_text(expected.cases, pristine.spec, token, sandbox.kept.get(pristine.name, []),
                           [c.source for c in restored.cells if c.cell_type == "code"], watch is not None)
                  if expected is not None else None)
        reply = run_notebook(sandbox, restored, pristine.name, graded, watch)
        if not sandbox.site_intact(pristine.name):
            reasons = reasons + ["the grading kernels' copy of pagedlab changed while this notebook ran"]
        if expected is not None:
            verdict, message = judge_graded(cells, reply, reasons, sandbox.limits, expected, pristine.spec, token)
        else:
            verdict, message = judge(cells, reply, reasons, sandbox.limits)
        if notes and verdict != PASS:  # a repair may explain the failure
            message += f" (the notebook was repaired: {'; '.join(notes)})"
        return Result(student, exercise, verdict, message)
    except NotRun as e:
        return Result(student, exercise, e.verdict, e.message)
    except Exception as e:  # a bug of the grader's must not end the run for everyone
        return Result(student, exercise, ERROR, f"{type(e).__name__}: {str(e)[:200]}")


def run_notebook(sandbox: Sandbox, notebook: nbformat.NotebookNode, filename: str, graded: str | None,
                 watch: dict | None = None) -> dict:
    """Run ``notebook`` in a fresh folder under ``sandbox`` (then the graded calls, if given); the supervisor's reply.
    ``watch``: the cell that watches the reference code (:func:`_watch`), and the index of the cell it runs before."""
    folder = sandbox.new_folder("nb")
    try:
        job = {**sandbox.job(folder, filename), "notebook": notebook, "filename": filename, "graded": graded,
               "harness": dict(_SUPERVISOR)[harness.__name__], **(watch or {})}
        return supervise(job, sandbox.limits.wall_s + _GRACE_S)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # every process of this notebook is gone by now


def _watch(pristine: Pristine, sandbox: Sandbox, cells: list) -> dict | None:
    """The watch of the exercise's reference code (:func:`pagedlab.grading.calls.watch_text`), to run before the
    first cell after the first setup cell that is not a setup cell; None where nothing is watched."""
    given = [c.source for c in pristine.notebook.cells if c.cell_type == "code" and role(c) != "work"]
    text = watch_text(pristine.spec, sandbox.kept.get(pristine.name, []), given)
    first = next((c.index for c in cells if c.role == "setup"), None)
    at = next((c.index for c in cells if c.role != "setup" and first is not None and c.index > first), None)
    return {"watch": text, "watch_at": at} if text is not None and at is not None else None


def expected_outcomes(pristine: Pristine, sandbox: Sandbox, seed: int) -> Expected:
    """The exercise's graded calls for ``seed`` and the solution's outcomes, from a kernel that ran only the solution."""
    digest = hashlib.sha256(f"{seed}:{pristine.name}".encode()).hexdigest()
    expected = Expected(pristine.spec.cases(int(digest[:15], 16), pristine.solution or b""))
    if pristine.solution is None:
        expected.problem = f"no solutions/{pristine.name} beside the exercises"
        return expected
    try:
        restored, cells, _, _ = prepare(pristine.solution, pristine, sandbox.limits, published=False)
        token, watch = secrets.token_hex(16), _watch(pristine, sandbox, cells)
        reply = run_notebook(sandbox, restored, pristine.name,
                             job_text(expected.cases, pristine.spec, token, sandbox.kept.get(pristine.name, []),
                                      [c.source for c in restored.cells if c.cell_type == "code"], watch is not None),
                             watch)
        text = (reply.get("graded") or {}).get("text")
        if text is None:
            expected.problem = f"the solution's run ended with {reply.get('ended') or reply.get('detail')!r}"
        else:
            outcomes, tripped, refused = load_outcomes(text, expected.cases, token)
            if tripped or refused:  # the solution breaks the spec's own rules: the spec is wrong, not the learners
                expected.problem = f"the solution broke a rule of its spec: {(tripped + refused)[0]}"
            else:
                expected.outcomes = outcomes
    except (NotRun, Malformed) as e:
        expected.problem = str(e)
    return expected


def supervise(job: dict, limit: float) -> dict:
    """Run :mod:`pagedlab.grading.run` on ``job`` in its own session; kill everything it started when it ends.

    The supervisor runs isolated (``python -I``: no current folder, no PYTHONPATH) from the grader's in-memory copy
    of its modules; its answer counts only when it exits normally and echoes the job's one-time token.
    """
    token = secrets.token_hex(16)
    payload = json.dumps({**job, "token": token, "modules": _SUPERVISOR}).encode()
    proc = subprocess.Popen([sys.executable, "-I", "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd="/", start_new_session=True)
    try:
        out, err = proc.communicate(payload, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"ended": "timeout", "at": None, "cells": {}}
    finally:
        kill_tree(proc.pid)
        proc.wait()
    try:
        reply = json.loads(out)
    except ValueError:
        tail = err.decode(errors="replace").strip().splitlines()
        return {"detail": f"the supervisor failed: {tail[-1] if tail else 'no output'}"}
    if proc.returncode != 0 or not isinstance(reply, dict) or reply.pop("token", None) != token:
        # Learner code (not the grader) kills a supervisor or writes to its output: no credit, whatever it wrote.
        return {"ended": "supervisor killed", "at": None, "cells": {}}
    return reply
