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
code touches the execution machinery, a graded call set off a tripwire, or the cells cannot be matched: a person must look),
``grader error`` (the kernel did not start twice, or the solution's outcomes could not be computed: grade again).
Exercises without graded calls are judged by the kernel's replies to their pristine check cells.

The command line is :mod:`pagedlab.grading.cli`; the pytest face, :mod:`pagedlab.grading.pytest_plugin`.
"""

from __future__ import annotations

import os
import secrets
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from pagedlab.grading.align import SubmissionError, read_submission, role
from pagedlab.grading.collect import collect, load_pristine
from pagedlab.grading.judge import FAIL, UNEXPECTED, Expected, Result
from pagedlab.grading.procs import Limits, adopt_orphans, descendants, kill_tree, reap
from pagedlab.grading.review import mixed_script
from pagedlab.grading.sandbox import Sandbox
from pagedlab.grading.similarity import similar_pairs
from pagedlab.grading.supervise import expected_outcomes, grade_notebook
from pagedlab.grading.tables import one_line


class SandboxMissing(RuntimeError):
    """No sandbox, and the instructor did not say ``--unsafe``: nothing is graded."""


def grade_class(submissions: Path, exercises: Path, limits: Limits = Limits(), jobs: int | None = None,
                sandbox: bool = True, protected: list[Path] = (), log=print, notes: list[str] | None = None,
                unsafe: bool = False, shard: tuple[int, int] = (1, 1), solutions: Path | None = None,
                seed: int | None = None, select: Callable[[str, str], bool] | None = None,
                published: bool = True, similar: list | None = None) -> list[Result]:
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
        select: ``select(learner, exercise)`` is False for pairs not to grade (``pytest -k``); default: every pair.
        published: the class could read ``solutions/``: a work cell that matches the solution's needs review.
        similar: if given, receives ``(exercise, learner, learner, share)`` for near-identical work
            (:mod:`pagedlab.grading.similarity`).

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
    for p in pristine.values():  # an exercise without graded calls is judged by its checks: they stay
        code = [c.source for c in p.notebook.cells if c.cell_type == "code" and (p.spec is None or role(c) == "setup")]
        box.add_copy(p.name, *(p.spec.copy_rule(code) if p.spec is not None else (code, set())))
    kept = [f"{p.removesuffix('.ipynb')} ({', '.join(m)})" for p, m in box.kept.items() if m]
    header = [box.describe(), "pristine exercises (sha256): " + ", ".join(
        f"{p.name.removesuffix('.ipynb')} {p.sha256[:16]}" for p in pristine.values())]
    if kept:
        header.append("answer modules the grading copies keep, because the setup imports from them (tripwires "
                      f"guard them): {'; '.join(kept)}")
    if count > 1:
        header.append(f"shard {index}/{count}: {len(learners)} learners")
    if skipped:
        header.append(f"skipped (not learner folders): {', '.join(map(one_line, skipped))}")
    mixed = [learner.name for learner in learners if mixed_script(learner.name)]
    if mixed:
        header.append(f"learner names that mix scripts (look twice: a Cyrillic о looks like o): "
                      f"{', '.join(map(one_line, mixed))}")
    for line in header:
        log(line)
    if notes is not None:
        notes += header
    before = frozenset(descendants(os.getpid()))
    adopted = adopt_orphans(True)
    seed = secrets.randbits(62) if seed is None else seed
    chosen = select or (lambda learner, exercise: True)
    work = [(learner, p) for learner in learners for p in pristine.values()
            if chosen(learner.name, p.name.removesuffix(".ipynb"))]
    handed_in = {p.name for learner, p in work if p.name in learner.files}
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
            result = grade_notebook(learner.name, learner.files[p.name], p, box, expected.get(p.name), published)
        with lock:
            log(f"{one_line(learner.name)} / {exercise}: {result.verdict}" + (f" ({one_line(result.message)[:120]})"
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
    results += [Result(learner.name, f, UNEXPECTED) for learner in learners for f in learner.unexpected
                if any(w[0] is learner for w in work)]
    if similar is not None:
        for p in pristine.values():
            handed_out = "\n".join(c.source for c in p.notebook.cells if c.cell_type == "code")
            own = {learner.name: _own_code(learner.files[p.name], handed_out) for learner, q in work
                   if q is p and p.name in learner.files}
            similar += [(p.name.removesuffix(".ipynb"), *pair) for pair in similar_pairs(own, handed_out)]
    return results


def _own_code(data: bytes, handed_out: str) -> str:
    """The code cells of a learner's notebook that are not the exercise's own, as one text ("" if unreadable)."""
    try:
        nb, _ = read_submission(data)
    except SubmissionError:
        return ""
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code" and c.source not in handed_out)
