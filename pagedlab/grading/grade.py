# Over 450 lines: the grader's one pass over a class (isolate, run, call, compare, tabulate, shard, merge).
"""Grade a class: run each learner's notebook isolated, make its graded calls, compare them outside, tabulate.

Layout of a class folder::

    SUBMISSIONS/
        alice/ex00_warmup.ipynb  alice/ex01_naive_attention.ipynb ...
        bob/ex00_warmup.ipynb ...

The run, in order:

1. Every pristine notebook in ``exercises/`` and its solution are read and hashed, and every learner's files are
   read, before any learner code runs; none is read again. Dot-folders (``.ipynb_checkpoints``) and ``__MACOSX``
   are skipped, symbolic links refused, files with other names listed as "not graded: unexpected file".
2. A secret seed is drawn; each exercise's graded calls (:mod:`pagedlab.grading.specs`) are drawn from it and run
   after the solution's cells, in a kernel of their own, before any learner notebook: their outcomes stay here.
3. For each learner and exercise (:mod:`pagedlab.grading.align`): the notebook is repaired and validated, the
   pristine ``setup`` cells are put back (the ``check`` cells are left out), and learner cells that touch the
   execution machinery or use reference code are flagged (:mod:`pagedlab.grading.review`).
4. It runs in a kernel of its own, in a fresh folder, in a bubblewrap sandbox (:mod:`pagedlab.grading.sandbox`;
   without one, only with ``--unsafe``), supervised by a process of its own (:mod:`pagedlab.grading.run`) under a
   fixed wall-clock limit; then the graded calls run in that kernel and their outcomes come back as JSON
   (:mod:`pagedlab.grading.calls`), compared here with the solution's.
5. When every learner process is gone, the grader writes ``grades.csv``, ``grades.md`` and ``results.json``.

Verdicts: ``pass`` (the setup cells ran and every graded call's outcome equals the solution's), ``fail`` (one
differs, or did not run, or the notebook is missing, unreadable, too large, refused), ``needs review`` (learner
code touches the execution machinery or uses reference code, or the cells cannot be matched: a person must look),
``grader error`` (the kernel did not start twice, or the solution's outcomes could not be computed: grade again).
Exercises without graded calls are judged by the kernel's replies to their pristine check cells.

Usage::

    python -m pagedlab.grading SUBMISSIONS/ [--out grades/] [--timeout 300] [--jobs N] [--shard I/N]
                               [--no-sandbox] [--unsafe]
    python -m pagedlab.grading merge grades-1/ grades-2/ ... --out grades/
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import html
import json
import os
import shutil
import secrets
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from pagedlab.grading import calls, procs, run
from pagedlab.grading.align import RESTORED, Cell, SubmissionError, Unalignable, read_submission, restore, role
from pagedlab.grading.calls import Malformed, compare, job_text, load_outcomes
from pagedlab.grading.procs import Limits, adopt_orphans, descendants, kill_tree, reap
from pagedlab.grading.review import imported_names, mixed_script, reference_reasons, review_reasons
from pagedlab.grading.sandbox import Sandbox
from pagedlab.grading.specs import SPECS, Cases, Spec

PASS, FAIL, REVIEW, ERROR, UNEXPECTED = "pass", "fail", "needs review", "grader error", "not graded: unexpected file"
_SKIPPED = ("__MACOSX",)  # besides every name that starts with a dot
_GRACE_S = 30  # beyond the notebook limit, for the supervisor to stop the kernel and answer
# The supervisor's code, read now (before any learner code runs) and handed to it on stdin: it imports no grader
# module from disk, so no file a learner's code could write becomes part of it.
_SUPERVISOR = [(m.__name__, Path(m.__file__).read_text(encoding="utf-8")) for m in (procs, calls, run)]
_BOOT = ("import json, sys, types\n"
         "job = json.load(sys.stdin)\n"
         "for name, source in job.pop('modules'):\n"
         "    module = sys.modules[name] = types.ModuleType(name)\n"
         "    exec(compile(source, '<' + name + '>', 'exec'), module.__dict__)\n"
         "sys.exit(sys.modules['pagedlab.grading.run'].main(job))\n")


class SandboxMissing(RuntimeError):
    """No sandbox, and the instructor did not say ``--unsafe``: nothing is graded."""


@dataclass(frozen=True)
class Result:
    """One learner's verdict on one exercise (or one file that was not graded)."""

    student: str
    exercise: str
    verdict: str
    message: str = ""  # the first failure, why it needs review, or what went wrong; one line

    @property
    def passed(self) -> bool:
        return self.verdict == PASS


@dataclass(frozen=True)
class Pristine:
    """An exercise as handed out, read once at the start."""

    name: str  # file name, e.g. ex00_warmup.ipynb
    notebook: nbformat.NotebookNode
    sha256: str
    setup_imports: frozenset[str]
    spec: Spec | None = None
    solution: bytes | None = None  # the solution notebook, read at the start like the rest


@dataclass
class Expected:
    """An exercise's graded calls for this run and the solution's outcomes (or why they could not be computed)."""

    cases: Cases
    outcomes: list | None = None
    problem: str = ""


@dataclass
class Learner:
    """One learner's folder, read once at the start: notebook bytes by file name, or why a file was refused."""

    name: str
    files: dict[str, bytes] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    unexpected: list[str] = field(default_factory=list)


def load_pristine(exercises: Path, solutions: Path | None = None) -> dict[str, Pristine]:
    """Every ``*.ipynb`` of ``exercises`` (whatever exercises exist), read and hashed once, with its solution."""
    out = {}
    for path in sorted(exercises.glob("*.ipynb")):
        data = path.read_bytes()
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        setup = [c.source for c in nb.cells if c.cell_type == "code" and role(c) == "setup"]
        spec = SPECS.get(path.name.removesuffix(".ipynb"))
        solution = solutions / path.name if solutions is not None else None
        out[path.name] = Pristine(path.name, nb, hashlib.sha256(data).hexdigest(), frozenset(imported_names(setup)),
                                  spec, solution.read_bytes() if spec and solution and solution.is_file() else None)
    if not out:
        raise ValueError(f"exercises: no exercise notebooks in {str(exercises)!r}")
    return out


def collect(submissions: Path, names: set[str], max_bytes: int) -> tuple[list[Learner], list[str]]:
    """Read every learner folder of ``submissions``: (learners, names of skipped top-level entries)."""
    if not submissions.is_dir():
        raise ValueError(f"submissions: expected a folder with one sub-folder per learner, got {str(submissions)!r}")
    learners, skipped = [], []
    for entry in sorted(os.scandir(submissions), key=lambda e: e.name):
        if entry.name.startswith(".") or entry.name in _SKIPPED:
            skipped.append(entry.name)
        elif entry.is_symlink():
            learner = Learner(entry.name)
            learner.refused = {n: "refused: the learner's folder is a symbolic link" for n in names}
            learners.append(learner)
        elif entry.is_dir(follow_symlinks=False):
            learners.append(_read_learner(Path(entry.path), names, max_bytes))
        else:
            skipped.append(entry.name)  # a loose file beside the learner folders
    return learners, skipped


def _read_learner(folder: Path, names: set[str], max_bytes: int) -> Learner:
    learner = Learner(folder.name)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        learner.refused = {n: f"unreadable folder: {e.strerror}" for n in names}
        return learner
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _SKIPPED:
            continue
        if entry.name in names and entry.is_symlink():
            learner.refused[entry.name] = "refused: a symbolic link (submit the notebook file itself)"
        elif entry.name in names and entry.is_file(follow_symlinks=False):
            try:
                fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
                with os.fdopen(fd, "rb") as f:
                    data = f.read(max_bytes + 1)
            except OSError as e:
                learner.refused[entry.name] = f"unreadable file: {e.strerror}"
                continue
            if len(data) > max_bytes:
                learner.refused[entry.name] = f"refused: larger than {max_bytes:,} bytes"
            else:
                learner.files[entry.name] = data
        elif entry.is_dir(follow_symlinks=False):
            inner = [p for p in _walk(Path(entry.path)) if not any(part.startswith(".") for part in p.parts)]
            learner.unexpected += [f"{entry.name}/{p}" for p in inner] or [f"{entry.name}/"]
        else:
            learner.unexpected.append(entry.name)
    return learner


def _walk(folder: Path, limit: int = 50) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(folder):  # os.walk does not follow symbolic links
        found += [Path(root, f).relative_to(folder) for f in files]
        if len(found) >= limit:
            break
    return sorted(found)[:limit]


class NotRun(Exception):
    """A notebook that is judged without running it: ``verdict`` and ``message`` say how and why."""

    def __init__(self, verdict: str, message: str):
        super().__init__(message)
        self.verdict, self.message = verdict, message


def prepare(submitted: bytes, pristine: Pristine,
            limits: Limits) -> tuple[nbformat.NotebookNode, list[Cell], list[str], list[str]]:
    """The notebook to run, what its code cells are, why it needs review (empty when it does not), what was repaired.

    Raises:
        NotRun: unreadable or invalid (fail), over the cell limit (fail), cells that cannot be matched (review).
    """
    try:
        nb, notes = read_submission(submitted, limits.max_cells)
    except SubmissionError as e:
        raise NotRun(FAIL, str(e)) from None
    try:
        restored, cells, method = restore(nb, pristine.notebook, checks=pristine.spec is None)
    except Unalignable as e:
        raise NotRun(REVIEW, str(e)) from None
    reference = pristine.spec.reference if pristine.spec else ()
    graded = pristine.spec.graded if pristine.spec else ()
    given = {c.source for c in pristine.notebook.cells if c.cell_type == "code" and role(c) != "work"}
    reasons = [f"{c.role} cell {c.id!r} {why}" for c in cells
               if c.role not in RESTORED and restored.cells[c.index].source not in given
               for why in review_reasons(restored.cells[c.index].source, set(pristine.setup_imports))
               + reference_reasons(restored.cells[c.index].source, reference, graded)]
    return restored, cells, reasons, notes


def judge(cells: list[Cell], reply: dict, reasons: list[str], limits: Limits) -> tuple[str, str]:
    """(verdict, message) from the supervisor's reply (:mod:`pagedlab.grading.run`) and the review reasons."""
    if reply.get("ended") == "no kernel":
        return ERROR, reply.get("detail", "the kernel did not start")
    if "ended" not in reply:
        return ERROR, reply.get("detail", "the supervisor gave no answer")
    ran = reply.get("cells", {})
    reasons = reasons + [f"kernel probe: {p}" for p in reply.get("probe") or []]
    first_error, failed = "", False
    for c in cells:
        r = ran.get(str(c.index))
        where = f"{c.role} cell {c.id!r}"
        if r is not None and r["status"] != "ok" and not first_error:
            first_error = f"{where}: {r['ename'] or r['status']}: {r['evalue']}".rstrip(": ")
        if c.role in RESTORED:
            if r is None:
                failed = True
                first_error = first_error or f"{where} did not run: {_why_stopped(reply, cells, limits)}"
            elif r["sha256"] != c.pristine_sha256:
                failed = True
                first_error = first_error or f"{where} ran with a changed source"
            elif r["status"] != "ok":
                failed = True
    if reasons:
        checks = "checks failed" if failed else "checks passed"
        return REVIEW, f"{'; '.join(reasons)} ({checks})"
    return (FAIL, first_error) if failed else (PASS, "")


def judge_graded(cells: list[Cell], reply: dict, reasons: list[str], limits: Limits,
                 expected: Expected, spec: Spec) -> tuple[str, str]:
    """(verdict, message) for an exercise with graded calls: credit comes from their outcomes alone.

    The pristine setup cells must run unchanged and without an error (a reply or an iopub ``error`` message);
    then every graded call's outcome must agree with the solution's. The kernel's replies to the learner's own
    cells count for nothing but the message.
    """
    if reply.get("ended") == "no kernel":
        return ERROR, reply.get("detail", "the kernel did not start")
    if "ended" not in reply:
        return ERROR, reply.get("detail", "the supervisor gave no answer")
    if expected.outcomes is None:
        return ERROR, f"the solution's graded calls could not be computed: {expected.problem}"
    ran = reply.get("cells", {})
    reasons = reasons + [f"kernel probe: {p}" for p in reply.get("probe") or []]
    learner_error, problem = "", ""
    for c in cells:
        r = ran.get(str(c.index))
        where = f"{c.role} cell {c.id!r}"
        if r is not None and r["status"] != "ok" and not learner_error and c.role not in RESTORED:
            learner_error = f"{where}: {r['ename'] or r['status']}: {r['evalue']}".rstrip(": ")
        if c.role in RESTORED and not problem:
            if r is None:
                problem = f"{where} did not run: {_why_stopped(reply, cells, limits)}"
            elif r["sha256"] != c.pristine_sha256:
                problem = f"{where} ran with a changed source"
            elif r["status"] != "ok":
                problem = f"{where}: {r['ename'] or r['status']}: {r['evalue']}".rstrip(": ")
    if not problem and reply.get("ended") != "complete":
        problem = f"the graded calls did not run: {_why_stopped(reply, cells, limits)}"
    graded = reply.get("graded") or {}
    if not problem and graded.get("text") is None:
        problem = f"the graded calls wrote no results (the kernel's reply: {str(graded.get('status'))[:60]})"
    if not problem:
        try:
            problem = compare(expected.outcomes, load_outcomes(graded["text"], expected.cases), expected.cases,
                              spec.atol, spec.rtol) or ""
        except Malformed as e:
            problem = str(e)
    if learner_error and problem:
        problem = f"{problem} (first error in a learner cell: {learner_error})"
    if reasons:
        return REVIEW, f"{'; '.join(reasons)} ({'graded calls failed' if problem else 'graded calls passed'})"
    return (FAIL, problem) if problem else (PASS, "")


def _why_stopped(reply: dict, cells: list[Cell], limits: Limits) -> str:
    at = next((f"{c.role} cell {c.id!r}" for c in cells if c.index == reply.get("at")), "a cell")
    return {"timeout": f"the notebook's time limit ({limits.wall_s} s) ran out in {at}",
            "dead kernel": f"the kernel died in {at} (os._exit, exit() or a crash)",
            "output cap": f"{at} printed more than {limits.max_output_bytes:,} bytes of output",
            "supervisor killed": "the notebook's supervisor was killed or its answer forged"}.get(
                reply.get("ended"), "the run stopped before it")


def grade_notebook(student: str, data: bytes, pristine: Pristine, sandbox: Sandbox,
                   expected: Expected | None = None) -> Result:
    """Grade one notebook; every problem becomes this notebook's verdict, never an exception."""
    exercise = pristine.name.removesuffix(".ipynb")
    try:
        restored, cells, reasons, notes = prepare(data, pristine, sandbox.limits)
        if not sandbox.site_intact():
            return Result(student, exercise, ERROR, "the grading kernels' copy of pagedlab was changed before this "
                                                    "notebook ran; it was restored: grade this notebook again")
        graded = job_text(expected.cases) if expected is not None else None
        reply = run_notebook(sandbox, restored, pristine.name, graded)
        if not sandbox.site_intact():
            reasons = reasons + ["the grading kernels' copy of pagedlab changed while this notebook ran"]
        if expected is not None:
            verdict, message = judge_graded(cells, reply, reasons, sandbox.limits, expected, pristine.spec)
        else:
            verdict, message = judge(cells, reply, reasons, sandbox.limits)
        if notes and verdict != PASS:  # a repair may explain the failure
            message += f" (the notebook was repaired: {'; '.join(notes)})"
        return Result(student, exercise, verdict, message)
    except NotRun as e:
        return Result(student, exercise, e.verdict, e.message)
    except Exception as e:  # a bug of the grader's must not end the run for everyone
        return Result(student, exercise, ERROR, f"{type(e).__name__}: {str(e)[:200]}")


def run_notebook(sandbox: Sandbox, notebook: nbformat.NotebookNode, filename: str, graded: str | None) -> dict:
    """Run ``notebook`` in a fresh folder under ``sandbox`` (then the graded calls, if given); the supervisor's reply."""
    folder = sandbox.new_folder("nb")
    try:
        job = {**sandbox.job(folder), "notebook": notebook, "filename": filename, "graded": graded}
        return supervise(job, sandbox.limits.wall_s + _GRACE_S)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # every process of this notebook is gone by now


def expected_outcomes(pristine: Pristine, sandbox: Sandbox, seed: int) -> Expected:
    """The exercise's graded calls for ``seed`` and the solution's outcomes, from a kernel that ran only the solution."""
    digest = hashlib.sha256(f"{seed}:{pristine.name}".encode()).hexdigest()
    expected = Expected(pristine.spec.cases(int(digest[:15], 16)))
    if pristine.solution is None:
        expected.problem = f"no solutions/{pristine.name} beside the exercises"
        return expected
    try:
        restored, _, _, _ = prepare(pristine.solution, pristine, sandbox.limits)
        reply = run_notebook(sandbox, restored, pristine.name, job_text(expected.cases))
        text = (reply.get("graded") or {}).get("text")
        if text is None:
            expected.problem = f"the solution's run ended with {reply.get('ended') or reply.get('detail')!r}"
        else:
            expected.outcomes = load_outcomes(text, expected.cases)
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


def grade_class(submissions: Path, exercises: Path, limits: Limits = Limits(), jobs: int | None = None,
                sandbox: bool = True, protected: list[Path] = (), log=print, notes: list[str] | None = None,
                unsafe: bool = False, shard: tuple[int, int] = (1, 1), solutions: Path | None = None,
                seed: int | None = None) -> list[Result]:
    """Grade every learner folder in ``submissions`` (or this shard's share of them) against ``exercises``.

    Args:
        limits: per-notebook limits (wall clock, cells, output, memory).
        jobs: notebooks at once (default: the number of CPU cores).
        sandbox: False to run without bubblewrap even where it works.
        protected: more folders no kernel may see (the output folder).
        log: where progress lines go.
        notes: if given, receives what the run started from (isolation, pristine hashes, skipped entries).
        unsafe: grade even without a sandbox (else :class:`SandboxMissing` is raised before anything runs).
        shard: (i, n): grade only the learners whose position in name order is i - 1 modulo n.
        solutions: the solution notebooks (default: ``solutions/`` beside ``exercises``).
        seed: the graded calls' seed (default: a fresh secret one for this run).

    Returns:
        Results in (learner, exercise) order, then each learner's unexpected files. Every learner process has
        been killed when this returns.

    Raises:
        SandboxMissing: no sandbox and not ``unsafe``.
        ValueError: a bad ``shard`` or ``submissions``.
    """
    index, count = shard
    if not 1 <= index <= count:
        raise ValueError(f"shard: expected i/n with 1 <= i <= n, got {index}/{count}")
    solutions = solutions or exercises.parent / "solutions"
    pristine = load_pristine(exercises, solutions)
    learners, skipped = collect(submissions, set(pristine), limits.max_file_bytes)
    learners = [learner for k, learner in enumerate(learners) if k % count == index - 1]
    box = Sandbox([exercises, solutions, submissions, *protected], use_bwrap=sandbox, limits=limits)
    if box.bwrap is None and not unsafe:
        box.close()
        raise SandboxMissing(f"{box.note}: refusing to grade without a sandbox (learner code could then change any "
                             "file this user can, grades included); pass --unsafe to grade anyway")
    header = [box.describe(), "pristine exercises (sha256): " + ", ".join(
        f"{p.name.removesuffix('.ipynb')} {p.sha256[:16]}" for p in pristine.values())]
    if count > 1:
        header.append(f"shard {index}/{count}: {len(learners)} learners")
    if skipped:
        header.append(f"skipped (not learner folders): {', '.join(map(_plain, skipped))}")
    mixed = [learner.name for learner in learners if mixed_script(learner.name)]
    if mixed:
        header.append(f"learner names that mix scripts (look twice: a Cyrillic о looks like o): "
                      f"{', '.join(map(_plain, mixed))}")
    for line in header:
        log(line)
    if notes is not None:
        notes += header
    before = frozenset(descendants(os.getpid()))
    adopted = adopt_orphans(True)
    seed = secrets.randbits(62) if seed is None else seed
    handed_in = {name for learner in learners for name in learner.files}
    work = [(learner, p) for learner in learners for p in pristine.values()]
    lock = threading.Lock()
    expected: dict[str, Expected] = {}

    def one(item) -> Result:
        learner, p = item
        exercise = p.name.removesuffix(".ipynb")
        if p.name in learner.refused:
            result = Result(learner.name, exercise, FAIL, learner.refused[p.name])
        elif p.name not in learner.files:
            result = Result(learner.name, exercise, FAIL, f"missing: no {p.name} in the learner's folder")
        else:
            result = grade_notebook(learner.name, learner.files[p.name], p, box, expected.get(p.name))
        with lock:
            log(f"{_plain(learner.name)} / {exercise}: {result.verdict}" + (f" ({_plain(result.message)[:120]})"
                                                                             if result.message else ""))
        return result

    try:
        with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
            # The solution's outcomes first, before any learner code runs anywhere.
            graded = [p for p in pristine.values() if p.spec is not None and p.name in handed_in]
            for p, e in zip(graded, pool.map(lambda p: expected_outcomes(p, box, seed), graded)):
                expected[p.name] = e
                log(f"solution / {p.name.removesuffix('.ipynb')}: {len(e.cases.cases)} graded calls"
                    + (f": {e.problem}" if e.problem else ""))
            results = list(pool.map(one, work))
    finally:
        kill_tree(os.getpid(), keep=before)  # whatever a learner left running, before any grade is written
        if adopted:
            adopt_orphans(False)
        reap()
        box.close()
    results += [Result(learner.name, f, UNEXPECTED) for learner in learners for f in learner.unexpected]
    return results


def _plain(text: str) -> str:
    """``text`` on one line, control characters escaped (for the terminal)."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in str(text))


def md(text: str) -> str:
    """``text`` safe inside a Markdown table cell: HTML and Markdown syntax escaped, on one line."""
    text = html.escape(_plain(text), quote=False)
    return "".join("\\" + ch if ch in "\\`*_[]|~" else ch for ch in text)


def _csv_cell(text: str) -> str:
    """A spreadsheet must not read a learner's text as a formula (spreadsheets skip leading whitespace too)."""
    return "'" + text if text[:1] in ("\t", "\r") or text.lstrip()[:1] in ("=", "+", "-", "@") else text


def write_tables(results: list[Result], out: Path, notes: list[str] = ()) -> tuple[Path, Path]:
    """Write ``grades.csv`` (one row per learner and exercise or unexpected file), ``grades.md`` and, for
    :func:`merge`, ``results.json``; rows in (learner, exercise) order, unexpected files last."""
    out.mkdir(parents=True, exist_ok=True)
    results = sorted(results, key=lambda r: (r.verdict == UNEXPECTED, r.student, r.exercise))
    header = "\n".join(f"- {md(n)}" for n in notes)
    (out / "results.json").write_text(json.dumps({"notes": list(notes), "results": [asdict(r) for r in results]},
                                                 ensure_ascii=False, indent=0), encoding="utf-8")
    csv_path, md_path = out / "grades.csv", out / "grades.md"
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "exercise", "result", "first_failure"])
        for r in results:
            w.writerow([_csv_cell(r.student), _csv_cell(r.exercise), r.verdict, _csv_cell(r.message)])
    graded = [r for r in results if r.verdict != UNEXPECTED]
    students = sorted({r.student for r in graded})
    exercises = sorted({r.exercise for r in graded})
    by = {(r.student, r.exercise): r for r in graded}
    lines = [header, ""] if header else []
    lines += ["| student | " + " | ".join(map(md, exercises)) + " | score |", "|---" * (len(exercises) + 2) + "|"]
    for s in students:
        row = [by[s, e].verdict if (s, e) in by else "" for e in exercises]
        lines.append(f"| {md(s)} | " + " | ".join(row) + f" | {row.count(PASS)}/{len(row)} |")
    for title, verdict in (("Needs review", REVIEW), ("Grader errors (grade these again)", ERROR),
                           ("First failure of each failed exercise", FAIL),
                           ("Not graded: unexpected files", UNEXPECTED)):
        chosen = [r for r in results if r.verdict == verdict]
        if chosen:
            lines += ["", f"## {title}", ""]
            lines += [f"- **{md(r.student)}** / {md(r.exercise)}" + (f": {md(r.message)}" if r.message else "")
                      for r in chosen]
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return csv_path, md_path


def merge(folders: list[Path], out: Path) -> tuple[Path, Path]:
    """Merge the ``results.json`` of shards graded with ``--shard i/n`` into one report in ``out``.

    Raises:
        ValueError: a folder without results, shards graded against different exercises, or a learner graded twice.
    """
    results, notes, pristine = [], [], set()
    for folder in folders:
        path = folder / "results.json"
        if not path.is_file():
            raise ValueError(f"merge: no results.json in {str(folder)!r} (grade it with this version first)")
        data = json.loads(path.read_text(encoding="utf-8"))
        notes += [f"{folder.name}: {n}" for n in data["notes"]]
        pristine |= {n for n in data["notes"] if n.startswith("pristine exercises")}
        results += [Result(**r) for r in data["results"]]
    if len(pristine) > 1:
        raise ValueError("merge: the shards were graded against different exercise notebooks")
    keys = [(r.student, r.exercise) for r in results]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"merge: graded in more than one shard: {twice[:5]}")
    return write_tables(results, out, [f"merged from {len(folders)} shards"] + notes)


def _shard(text: str) -> tuple[int, int]:
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected i/n such as 1/4, got {text!r}") from None
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError(f"expected i/n with 1 <= i <= n, got {text!r}")
    return index, count


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["merge"]:
        parser = argparse.ArgumentParser(prog="python -m pagedlab.grading merge",
                                         description="merge the reports of shards into one")
        parser.add_argument("shards", type=Path, nargs="+", help="output folders of the shards")
        parser.add_argument("--out", type=Path, required=True, help="where the merged report goes")
        args = parser.parse_args(argv[1:])
        try:
            csv_path, md_path = merge(args.shards, args.out)
        except ValueError as e:
            parser.exit(2, f"{e}\n")
        print(f"wrote {csv_path} and {md_path}")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path, help="folder with one sub-folder per learner")
    parser.add_argument("--exercises", type=Path, default=Path("exercises"), help="pristine exercise notebooks")
    parser.add_argument("--solutions", type=Path, default=None,
                        help="solution notebooks (default: solutions/ beside the exercises)")
    parser.add_argument("--out", type=Path, default=Path("grades"), help="where grades.csv and grades.md go")
    parser.add_argument("--timeout", type=int, default=Limits.wall_s,
                        help="seconds per notebook, kernel start included")
    parser.add_argument("--max-cells", type=int, default=Limits.max_cells, help="cells (of any kind) a notebook may have")
    parser.add_argument("--jobs", type=int, default=None, help="notebooks graded at once (default: CPU cores)")
    parser.add_argument("--shard", type=_shard, default=(1, 1), metavar="I/N",
                        help="grade only the I-th of N shares of the learners (then: merge)")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="do not use bubblewrap even where it works (also PAGEDLAB_GRADE_SANDBOX=0)")
    parser.add_argument("--unsafe", action="store_true",
                        help="grade even without a sandbox (learner code can then change what this user can)")
    args = parser.parse_args(argv)
    sandbox = not args.no_sandbox and os.environ.get("PAGEDLAB_GRADE_SANDBOX", "1") != "0"
    limits = Limits(wall_s=args.timeout, max_cells=args.max_cells)
    start, notes = time.monotonic(), []
    try:
        results = grade_class(args.submissions.resolve(), args.exercises.resolve(), limits, args.jobs, sandbox,
                              protected=[args.out.resolve()], notes=notes, unsafe=args.unsafe, shard=args.shard,
                              solutions=args.solutions.resolve() if args.solutions else None)
    except (SandboxMissing, ValueError) as e:
        parser.exit(2, f"{e}\n")
    notes.append(f"graded in {time.monotonic() - start:.0f} s; credit comes from graded calls on inputs drawn for "
                 "this run, compared outside the kernels with the solution's (visible checks, for exercises "
                 "without graded calls)")
    csv_path, md_path = write_tables(results, args.out, notes)
    print(f"wrote {csv_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
