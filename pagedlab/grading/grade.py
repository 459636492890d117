"""Grade a class: run each learner's notebook with the pristine checks, isolated, and tabulate the verdicts.

Layout of a class folder::

    SUBMISSIONS/
        alice/ex00_warmup.ipynb  alice/ex01_naive_attention.ipynb ...
        bob/ex00_warmup.ipynb ...

The run, in order:

1. Every pristine notebook in ``exercises/`` is read and hashed, and every learner's files are read, before
   any learner code runs; neither folder is read again. Dot-folders (``.ipynb_checkpoints``) and ``__MACOSX``
   are skipped, symbolic links refused, files with other names listed as "not graded: unexpected file".
2. For each learner and exercise (:mod:`pagedlab.grading.align`): the notebook is repaired and validated, and
   the pristine ``setup`` and ``check`` cells are put back into it (by cell id, tag order or position).
   Learner cells that touch the execution machinery are flagged (:mod:`pagedlab.grading.review`).
3. It runs in a kernel of its own, in a fresh folder, sandboxed where bubblewrap works
   (:mod:`pagedlab.grading.sandbox`), supervised by a process of its own (:mod:`pagedlab.grading.run`) under a
   fixed wall-clock limit. Each pristine cell is judged by the kernel's ``execute_reply``: ``ok`` or not.
4. When every learner process is gone, the grader writes ``grades.csv`` and ``grades.md``.

Verdicts: ``pass`` (every pristine setup and check cell replied ``ok``), ``fail`` (one did not, or did not
run, or the notebook is missing, unreadable, too large, refused), ``needs review`` (learner code touches the
execution machinery, or the cells cannot be matched: a person must look), ``grader error`` (the kernel did not
start twice: not the learner's fault; grade again).

Usage::

    python -m pagedlab.grading.grade SUBMISSIONS/ [--out grades/] [--timeout 300] [--jobs N] [--no-sandbox]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import html
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from pagedlab.grading.align import RESTORED, Cell, SubmissionError, Unalignable, read_submission, restore, role
from pagedlab.grading.review import imported_names, review_reasons
from pagedlab.grading.sandbox import Limits, Sandbox, adopt_orphans, descendants, kill_tree, reap

PASS, FAIL, REVIEW, ERROR, UNEXPECTED = "pass", "fail", "needs review", "grader error", "not graded: unexpected file"
_SKIPPED = ("__MACOSX",)  # besides every name that starts with a dot
_GRACE_S = 30  # beyond the notebook limit, for the supervisor to stop the kernel and answer


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


@dataclass
class Learner:
    """One learner's folder, read once at the start: notebook bytes by file name, or why a file was refused."""

    name: str
    files: dict[str, bytes] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    unexpected: list[str] = field(default_factory=list)


def load_pristine(exercises: Path) -> dict[str, Pristine]:
    """Every ``*.ipynb`` of ``exercises`` (whatever exercises exist), read and hashed once."""
    out = {}
    for path in sorted(exercises.glob("*.ipynb")):
        data = path.read_bytes()
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        setup = [c.source for c in nb.cells if c.cell_type == "code" and role(c) == "setup"]
        out[path.name] = Pristine(path.name, nb, hashlib.sha256(data).hexdigest(), frozenset(imported_names(setup)))
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
        nb, notes = read_submission(submitted)
    except SubmissionError as e:
        raise NotRun(FAIL, str(e)) from None
    n_code = sum(c.cell_type == "code" for c in nb.cells)
    if n_code > limits.max_code_cells:
        raise NotRun(FAIL, f"too many code cells: {n_code} (the limit is {limits.max_code_cells}); not run")
    try:
        restored, cells, method = restore(nb, pristine.notebook)
    except Unalignable as e:
        raise NotRun(REVIEW, str(e)) from None
    reasons = [f"{c.role} cell {c.id!r} {why}" for c in cells if c.role not in RESTORED
               for why in review_reasons(restored.cells[c.index].source, set(pristine.setup_imports))]
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


def _why_stopped(reply: dict, cells: list[Cell], limits: Limits) -> str:
    at = next((f"{c.role} cell {c.id!r}" for c in cells if c.index == reply.get("at")), "a cell")
    return {"timeout": f"the notebook's time limit ({limits.wall_s} s) ran out in {at}",
            "dead kernel": f"the kernel died in {at} (os._exit, exit() or a crash)",
            "output cap": f"{at} printed more than {limits.max_output_bytes:,} bytes of output"}.get(
                reply.get("ended"), "the run stopped before it")


def grade_notebook(student: str, data: bytes, pristine: Pristine, sandbox: Sandbox) -> Result:
    """Grade one notebook; every problem becomes this notebook's verdict, never an exception."""
    exercise = pristine.name.removesuffix(".ipynb")
    try:
        restored, cells, reasons, notes = prepare(data, pristine, sandbox.limits)
        folder = sandbox.new_folder("nb")
        try:
            job = {**sandbox.job(folder), "notebook": restored, "filename": pristine.name}
            reply = supervise(job, sandbox.limits.wall_s + _GRACE_S)
        finally:
            shutil.rmtree(folder, ignore_errors=True)  # every process of this notebook is gone by now
        verdict, message = judge(cells, reply, reasons, sandbox.limits)
        if notes and verdict != PASS:  # a repair may explain the failure
            message += f" (the notebook was repaired: {'; '.join(notes)})"
        return Result(student, exercise, verdict, message)
    except NotRun as e:
        return Result(student, exercise, e.verdict, e.message)
    except Exception as e:  # a bug of the grader's must not end the run for everyone
        return Result(student, exercise, ERROR, f"{type(e).__name__}: {str(e)[:200]}")


def supervise(job: dict, limit: float) -> dict:
    """Run :mod:`pagedlab.grading.run` on ``job`` in its own session; kill everything it started when it ends."""
    # The supervisor must not import from a folder a learner could write to: no current folder on its path.
    code = "import sys; sys.path.pop(0); from pagedlab.grading.run import main; sys.exit(main())"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and os.path.isabs(p))}
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd="/", env=env, start_new_session=True)
    try:
        out, err = proc.communicate(json.dumps(job).encode(), timeout=limit)
    except subprocess.TimeoutExpired:
        return {"ended": "timeout", "at": None, "cells": {}}
    finally:
        kill_tree(proc.pid)
        proc.wait()
    try:
        return json.loads(out)
    except ValueError:
        tail = err.decode(errors="replace").strip().splitlines()
        return {"detail": f"the supervisor failed: {tail[-1] if tail else 'no output'}"}


def grade_class(submissions: Path, exercises: Path, limits: Limits = Limits(), jobs: int | None = None,
                sandbox: bool = True, protected: list[Path] = (), log=print,
                notes: list[str] | None = None) -> list[Result]:
    """Grade every learner folder in ``submissions`` against every notebook in ``exercises``.

    Args:
        limits: per-notebook limits (wall clock, cells, output, memory).
        jobs: notebooks at once (default: the number of CPU cores).
        sandbox: False to run without bubblewrap even where it works.
        protected: more folders no kernel may see (the output folder).
        log: where progress lines go.
        notes: if given, receives what the run started from (isolation, pristine hashes, skipped entries).

    Returns:
        Results in (learner, exercise) order, then each learner's unexpected files. Every learner process has
        been killed when this returns.
    """
    pristine = load_pristine(exercises)
    learners, skipped = collect(submissions, set(pristine), limits.max_file_bytes)
    solutions = exercises.parent / "solutions"
    box = Sandbox([exercises, solutions, submissions, *protected], use_bwrap=sandbox, limits=limits)
    header = [box.describe(), "pristine exercises (sha256): " + ", ".join(
        f"{p.name.removesuffix('.ipynb')} {p.sha256[:16]}" for p in pristine.values())]
    if skipped:
        header.append(f"skipped (not learner folders): {', '.join(map(_plain, skipped))}")
    for line in header:
        log(line)
    if notes is not None:
        notes += header
    before = frozenset(descendants(os.getpid()))
    adopted = adopt_orphans(True)
    work = [(learner, p) for learner in learners for p in pristine.values()]
    lock = threading.Lock()

    def one(item) -> Result:
        learner, p = item
        exercise = p.name.removesuffix(".ipynb")
        if p.name in learner.refused:
            result = Result(learner.name, exercise, FAIL, learner.refused[p.name])
        elif p.name not in learner.files:
            result = Result(learner.name, exercise, FAIL, f"missing: no {p.name} in the learner's folder")
        else:
            result = grade_notebook(learner.name, learner.files[p.name], p, box)
        with lock:
            log(f"{_plain(result.student):24.24s} {exercise:28s} {result.verdict:13s} {_plain(result.message)[:100]}")
        return result

    try:
        with ThreadPoolExecutor(jobs or os.cpu_count() or 1) as pool:
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
    """A spreadsheet must not read a learner's text as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def write_tables(results: list[Result], out: Path, header: str = "") -> tuple[Path, Path]:
    """Write ``grades.csv`` (one row per learner and exercise or unexpected file) and ``grades.md``."""
    out.mkdir(parents=True, exist_ok=True)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path, help="folder with one sub-folder per learner")
    parser.add_argument("--exercises", type=Path, default=Path("exercises"), help="pristine exercise notebooks")
    parser.add_argument("--out", type=Path, default=Path("grades"), help="where grades.csv and grades.md go")
    parser.add_argument("--timeout", type=int, default=Limits.wall_s,
                        help="seconds per notebook, kernel start included")
    parser.add_argument("--max-cells", type=int, default=Limits.max_code_cells, help="code cells a notebook may have")
    parser.add_argument("--jobs", type=int, default=None, help="notebooks graded at once (default: CPU cores)")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="do not use bubblewrap even where it works (also PAGEDLAB_GRADE_SANDBOX=0)")
    args = parser.parse_args(argv)
    sandbox = not args.no_sandbox and os.environ.get("PAGEDLAB_GRADE_SANDBOX", "1") != "0"
    limits = Limits(wall_s=args.timeout, max_code_cells=args.max_cells)
    start, notes = time.monotonic(), []
    results = grade_class(args.submissions.resolve(), args.exercises.resolve(), limits, args.jobs, sandbox,
                          protected=[args.out.resolve()], notes=notes)
    notes.append(f"graded in {time.monotonic() - start:.0f} s; verdicts are the kernel's replies to the pristine "
                 "setup and check cells")
    csv_path, md_path = write_tables(results, args.out, "\n".join(f"- {md(n)}" for n in notes))
    print(f"wrote {csv_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
