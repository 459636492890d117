"""Grade a class: restore the pristine checks in each learner's notebooks, run them, tabulate.

Layout of a class folder::

    SUBMISSIONS/
        alice/ex00_warmup.ipynb  alice/ex01_naive_attention.ipynb ...
        bob/ex00_warmup.ipynb ...

For every learner and every exercise in ``exercises/``:

1. The learner's notebook is read. Its ``setup`` and ``check`` cells are replaced by the pristine
   ones from ``exercises/`` (matched by cell id); a check the learner deleted is put back after the
   cell that preceded it. Editing or deleting a check therefore cannot make it pass.
2. The restored notebook runs under ``pytest --nbval-lax`` in its own process, with a per-cell
   timeout and a per-notebook timeout: a learner's outputs are not compared (they are whatever the
   learner last ran), but any cell that raises, an ``assert`` in a check above all, fails the exercise.
3. A row is added to the score table: pass/fail and the first failing check's message.

One learner's broken notebook (invalid JSON, syntax error, infinite loop, missing file) fails that
exercise only. Results go to ``grades.csv`` and ``grades.md`` in the output folder.

Usage::

    python -m pagedlab.grade SUBMISSIONS/ [--out grades/] [--cell-timeout 120]
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

from pagedlab.exercises import cell_tag

RESTORED_TAGS = ("setup", "check")
# pytest writes terminal colours into its report, raw or XML-escaped; a score table wants plain text.
_ANSI = re.compile(r"(\x1b|#x1B)\[[0-9;]*m")


@dataclass(frozen=True)
class Result:
    """One learner's result on one exercise."""

    student: str
    exercise: str
    passed: bool
    message: str  # the first failure, one line; empty when passed


def restore_checks(submitted: nbformat.NotebookNode, pristine: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Return ``submitted`` with every ``setup``/``check`` cell replaced by, or re-inserted from, ``pristine``.

    Cells are matched by id. A learner's cell that claims a restored role under an unknown id is
    dropped (it could shadow a check). Other learner cells (their work, extra scratch cells) stay.
    """
    pristine_ids = [c.get("id") for c in pristine.cells]
    restored = {c.get("id"): c for c in pristine.cells if c.cell_type == "code" and cell_tag(c) in RESTORED_TAGS}
    cells = [c for c in submitted.cells
             if c.get("id") not in restored and not (c.cell_type == "code" and cell_tag(c) in RESTORED_TAGS)]
    for cid, pristine_cell in restored.items():
        # Insert after the nearest preceding pristine cell that the learner's notebook still has.
        pos = 0
        for prev_id in reversed(pristine_ids[: pristine_ids.index(cid)]):
            idx = next((i for i, c in enumerate(cells) if c.get("id") == prev_id), None)
            if idx is not None:
                pos = idx + 1
                break
        cells.insert(pos, nbformat.from_dict(pristine_cell))
    nb = nbformat.from_dict(submitted)
    nb.cells = cells
    return nb


def _first_failure(junit: Path, cell_names: list[str]) -> str:
    """The first failing cell and its last meaningful line, from pytest's JUnit XML report.

    ``cell_names[i]`` describes nbval's "Cell i" (the i-th code cell), e.g. ``"check cell 'check-small'"``.
    """
    try:
        root = ET.parse(junit).getroot()
    except (ET.ParseError, FileNotFoundError):
        return "the test run produced no report (crashed or timed out)"
    for case in root.iter("testcase"):
        node = case.find("failure") if case.find("failure") is not None else case.find("error")
        if node is None:
            continue
        text = _ANSI.sub("", (node.text or "") + "\n" + (node.get("message") or ""))
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not set(ln.strip()) <= set("-=^")]
        errs = [ln for ln in lines if re.search(r"\w+(Error|Exception)\b|Timeout", ln)]
        found = re.search(r"Cell (\d+)", case.get("name", ""))
        where = cell_names[int(found.group(1))] if found and int(found.group(1)) < len(cell_names) else case.get("name", "")
        return f"{where}: {(errs or lines or ['failed'])[-1]}"[:300]
    return "no cell was run (is the notebook valid?)"


def grade_one(student: str, submitted_path: Path, pristine_path: Path, cell_timeout: int, workdir: Path) -> Result:
    """Grade one notebook; never raises for a problem in the learner's notebook."""
    exercise = pristine_path.stem
    if not submitted_path.exists():
        return Result(student, exercise, False, f"missing: no {pristine_path.name} in {student}/")
    try:
        submitted = nbformat.read(submitted_path, as_version=4)
    except Exception as e:  # invalid JSON or not a notebook at all
        return Result(student, exercise, False, f"unreadable notebook: {type(e).__name__}: {e}"[:300])
    restored = restore_checks(submitted, nbformat.read(pristine_path, as_version=4))
    target = workdir / f"{student}__{pristine_path.name}"
    nbformat.write(restored, target)
    junit = target.with_suffix(".xml")
    cmd = [sys.executable, "-m", "pytest", str(target), "-q", "-p", "no:cacheprovider", "-o", "addopts=",
           "-o", "testpaths=", "--nbval-lax", "--nbval-current-env", f"--nbval-cell-timeout={cell_timeout}",
           f"--junitxml={junit}"]
    # Generous limit for the whole notebook; the per-cell timeout catches an infinite loop first.
    limit = cell_timeout * (len(restored.cells) + 2)
    try:
        proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=limit,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
    except subprocess.TimeoutExpired:
        return Result(student, exercise, False, f"timed out after {limit} s")
    if proc.returncode == 0:
        return Result(student, exercise, True, "")
    names = [f"{cell_tag(c) or 'untagged'} cell {c.get('id')!r}" for c in restored.cells if c.cell_type == "code"]
    return Result(student, exercise, False, _first_failure(junit, names))


def grade_class(submissions: Path, exercises: Path, cell_timeout: int = 120, jobs: int | None = None) -> list[Result]:
    """Grade every learner folder in ``submissions`` against every notebook in ``exercises``.

    ``jobs`` notebooks run at once (default: the number of CPU cores); results come back in
    (learner, exercise) order whatever finishes first.
    """
    if not submissions.is_dir():
        raise ValueError(f"submissions: expected a folder with one sub-folder per learner, got {str(submissions)!r}")
    pristine = sorted(exercises.glob("*.ipynb"))
    if not pristine:
        raise ValueError(f"exercises: no exercise notebooks in {str(exercises)!r}")
    jobs = jobs or os.cpu_count() or 1
    work = [(d.name, d / ex.name, ex) for d in sorted(p for p in submissions.iterdir() if p.is_dir()) for ex in pristine]
    with tempfile.TemporaryDirectory(prefix="pagedlab-grade-") as tmp, ThreadPoolExecutor(jobs) as pool:
        # Each notebook runs in its own pytest process; threads only wait for them.
        results = list(pool.map(lambda w: grade_one(*w, cell_timeout, Path(tmp)), work))
    for r in results:
        print(f"{r.student:24s} {r.exercise:32s} {'pass' if r.passed else 'FAIL'} {r.message}", flush=True)
    return results


def write_tables(results: list[Result], out: Path) -> tuple[Path, Path]:
    """Write ``grades.csv`` (one row per learner and exercise) and ``grades.md`` (learners x exercises)."""
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out / "grades.csv", out / "grades.md"
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "exercise", "result", "first_failure"])
        for r in results:
            w.writerow([r.student, r.exercise, "pass" if r.passed else "fail", r.message])
    students = sorted({r.student for r in results})
    exercises = sorted({r.exercise for r in results})
    by = {(r.student, r.exercise): r for r in results}
    lines = ["| student | " + " | ".join(exercises) + " | score |", "|---" * (len(exercises) + 2) + "|"]
    for s in students:
        row = [("pass" if by[s, e].passed else "fail") for e in exercises]
        lines.append(f"| {s} | " + " | ".join(row) + f" | {row.count('pass')}/{len(row)} |")
    failures = [r for r in results if not r.passed]
    if failures:
        lines += ["", "## First failure of each failed exercise", ""]
        lines += [f"- **{r.student}** / {r.exercise}: {r.message.replace('|', '/')}" for r in failures]
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return csv_path, md_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path, help="folder with one sub-folder per learner")
    parser.add_argument("--exercises", type=Path, default=Path("exercises"), help="pristine exercise notebooks")
    parser.add_argument("--out", type=Path, default=Path("grades"), help="where grades.csv and grades.md go")
    parser.add_argument("--cell-timeout", type=int, default=120, help="seconds one cell may run")
    parser.add_argument("--jobs", type=int, default=None, help="notebooks graded at once (default: CPU cores)")
    args = parser.parse_args(argv)
    results = grade_class(args.submissions.resolve(), args.exercises.resolve(), args.cell_timeout, args.jobs)
    csv_path, md_path = write_tables(results, args.out)
    print(f"wrote {csv_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
