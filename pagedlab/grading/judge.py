"""Judge one notebook: prepare what runs (restore, review), then read the supervisor's reply into a verdict.

Verdicts: ``pass`` (the setup cells ran and every graded call's outcome equals the solution's), ``fail`` (one
differs, or did not run, or the notebook is missing, unreadable, too large, refused), ``needs review`` (learner code
touches the execution machinery, a graded call set off a tripwire, or the cells cannot be matched: a person must
look), ``grader error`` (the kernel did not start twice, or the solution's outcomes could not be computed: grade
again). Exercises without graded calls are judged by the kernel's replies to their pristine check cells.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

import nbformat

from pagedlab.grading.align import RESTORED, Cell, SubmissionError, Unalignable, read_submission, restore, role
from pagedlab.grading.calls import Malformed, compare, load_other, load_outcomes
from pagedlab.grading.collect import Pristine
from pagedlab.grading.procs import Limits
from pagedlab.grading.machine import late_bindings, machine_names, machine_reasons
from pagedlab.grading.review import (answer_helpers, conditional_reasons, imported_names, kept_results,
                                    reference_reasons, review_reasons, typed_tables, unrun_reasons)
from pagedlab.grading.similarity import copied_cells, kept_wording
from pagedlab.grading.specs import Cases, Spec

PASS, FAIL, REVIEW, ERROR, UNEXPECTED = "pass", "fail", "needs review", "grader error", "not graded: unexpected file"


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



@dataclass
class Expected:
    """An exercise's graded calls for this run and the solution's outcomes (or why they could not be computed)."""

    cases: Cases
    outcomes: list | None = None
    problem: str = ""



class NotRun(Exception):
    """A notebook that is judged without running it: ``verdict`` and ``message`` say how and why."""

    def __init__(self, verdict: str, message: str):
        super().__init__(message)
        self.verdict, self.message = verdict, message


def prepare(submitted: bytes, pristine: Pristine, limits: Limits,
            published: bool = True) -> tuple[nbformat.NotebookNode, list[Cell], list[str], list[str]]:
    """The notebook to run, what its code cells are, why it needs review (empty when it does not), what was repaired.

    With ``published`` (the class could read ``solutions/``), a work cell that matches the solution's is a reason.

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
    given = {c.source for c in pristine.notebook.cells if c.cell_type == "code" and role(c) != "work"}
    learner = [restored.cells[c.index].source for c in cells
               if c.role not in RESTORED and restored.cells[c.index].source not in given]
    modules = set(pristine.setup_imports) | imported_names(learner)  # every module imported in any cell
    answers = frozenset(pristine.spec.copy_rule([])[1]) if pristine.spec else None  # (where its reference code is)
    reasons = [f"{c.role} cell {c.id!r} {why}" for c in cells
               if c.role not in RESTORED and restored.cells[c.index].source not in given
               for why in review_reasons(restored.cells[c.index].source, set(pristine.setup_imports), modules,
                                         pristine.spec.tripwires if pristine.spec else (),
                                         pristine.spec is None or pristine.spec.memory is not None)
               + reference_reasons(restored.cells[c.index].source, pristine.setup_sources, answers)]
    handed_out = {c.get("id"): c.source for c in pristine.notebook.cells if c.cell_type == "code"}
    work = pristine.work_names
    running = [restored.cells[c.index].source for c in cells if c.role not in RESTORED]
    helpers, machine = answer_helpers(running, work), machine_names(pristine.setup_sources + running, pristine.work_methods)
    reasons += [f"{c.role} cell {c.id!r} {why}" for c in cells
                if c.role not in RESTORED and restored.cells[c.index].source not in given
                for why in conditional_reasons(restored.cells[c.index].source, work, helpers, machine.aliases)
                + machine_reasons(restored.cells[c.index].source, work, helpers, machine)]
    reasons += typed_tables([(f"{c.role} cell {c.id!r}", restored.cells[c.index].source) for c in cells
                             if c.role not in RESTORED and restored.cells[c.index].source not in given],
                            set(work), helpers)
    reasons += kept_results([(f"{c.role} cell {c.id!r}", restored.cells[c.index].source,
                              c.role not in RESTORED and restored.cells[c.index].source not in given) for c in cells],
                            set(work))
    reasons += unrun_reasons(
        [(f"the learner's code cell {k + 1}" + ("" if c.id.startswith("no-id-") else f" ({c.id!r})"), c.source)
         for k, c in enumerate(c for c in nb.cells if c.cell_type == "code")],
        {c.source for c in restored.cells if c.cell_type == "code"} | set(handed_out.values()),
        pristine.own_names | helpers)
    own = {c.id: restored.cells[c.index].source for c in cells
           if c.role not in RESTORED and restored.cells[c.index].source not in given}
    if published:
        copied = copied_cells(own, pristine.solution_work, handed_out, stated=pristine.stated_names)
        named = {c for c in pristine.solution_work if any(repr(c) in r for r in copied)}  # (one reason a cell)
        reasons += copied + kept_wording(own, {c: s for c, s in pristine.solution_work.items() if c not in named},
                                         pristine.handed_words)
        reasons += copied_cells(own, {k: source for k, (source, _) in pristine.others.items()},
                                {k: base for k, (_, base) in pristine.others.items()})
    reasons += copied_cells(own, pristine.library, handed_out, library=True, floors=pristine.library_floors)
    cells = [replace(c, late=late_bindings(restored.cells[c.index].source, set(work) | helpers, machine.aliases))
             if c.role not in RESTORED else c for c in cells]
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
                 expected: Expected, spec: Spec, token: str) -> tuple[str, str]:
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
        late = sorted({n for end, n in c.late if end >= (r or {}).get("line", 0)})  # (from the failing line on)
        if r is not None and r["status"] != "ok" and late:  # (round 38z81: a cell that fails before FUSED = True)
            reasons = reasons + [f"{where} raised {r['ename'] or r['status']} here, so its lines from the failing "
                                 f"one on did not run, and they bind {', '.join(map(repr, late[:3]))}, which the answer "
                                 f"reads: on the learner's machine the cell may have run to its end"]
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
    if graded.get("threads"):
        reasons = reasons + [f"{graded['threads']} thread(s) of the learner's code were alive when the graded calls "
                             "began, where they could rewrite the results: see what the notebook starts"]
    if not problem and graded.get("status") == "dead kernel":
        problem = ("the kernel died during the graded calls (a crash: in Triton's interpreter, a kernel that writes "
                   "or reads out of bounds kills the process; or os._exit): run the notebook's check cells, which "
                   "call the same functions")
    if not problem and graded.get("text") is None:
        problem = f"the graded calls wrote no results (the driver cell's reply: {str(graded.get('status'))[:60]})"
    if not problem:
        try:
            outcomes, tripped, refused = load_outcomes(graded["text"], expected.cases, token)
            problem = (refused[0] if refused else "") or compare(expected.outcomes, outcomes, expected.cases,
                                                                 spec.atol, spec.rtol, spec.rounding) or ""
            reasons = reasons + [f"tripwire: {t}" for t in tripped]
            # The cases made again with the other side of Python 3.12's sum of floats (round 38z218: a sum's
            # rounding chose the formula): a verdict that differs there is a person's to read.
            other = load_other(graded["text"])
            elsewhere = compare(expected.outcomes, [other.get(i, o) for i, o in enumerate(outcomes)], expected.cases,
                                spec.atol, spec.rtol, spec.rounding) if other and not refused else None
            if other and not refused and bool(elsewhere) != bool(problem):
                there = ("Python 3.11's sum of floats, which does not compensate its rounding" if sys.version_info >=
                         (3, 12) else "Python 3.12's sum of floats, which compensates its rounding (Colab's)")
                reasons = reasons + [f"with {there}, {elsewhere}: the answer depends on which Python runs it"
                                     if elsewhere else f"the graded calls pass with {there}, where with this "
                                     f"Python's {problem}: the answer depends on which Python runs it"]
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
