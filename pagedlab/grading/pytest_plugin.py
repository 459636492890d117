"""The class grader as pytest: one test item per learner and exercise.

Usage (from the course's folder)::

    pytest -p pagedlab.grading.pytest_plugin --grade SUBMISSIONS [--grade-out grades] [-k alice] [--junitxml=r.xml]

Each item is ``SUBMISSIONS/<learner>::<exercise>``; its outcome is the grader's verdict: *passed* (pass), *failed*
(fail, with the first failure as its message), *needs review* (a distinct outcome in the summary, counted as a
failure for the exit status and the JUnit XML) or *failed* for a grader error (grade again). Nothing else is
collected while ``--grade`` is given. The grading is :func:`pagedlab.grading.grade.grade_class`, the same as
``python -m pagedlab.grading`` (sandbox, seed, limits, the same ``grades.csv``/``grades.md``/``results.json`` in
``--grade-out``), run once, for the selected items only, when the first item runs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pagedlab.grading.judge import PASS, REVIEW, UNEXPECTED, Result
from pagedlab.grading.procs import Limits


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("grade", "grading a class (pagedlab.grading)")
    group.addoption("--grade", type=Path, default=None, metavar="SUBMISSIONS",
                    help="grade the class in SUBMISSIONS (one folder per learner): one item per learner and exercise")
    group.addoption("--grade-out", type=Path, default=Path("grades"), help="where grades.csv and grades.md go")
    group.addoption("--grade-exercises", type=Path, default=Path("exercises"), help="pristine exercise notebooks")
    group.addoption("--grade-solutions", type=Path, default=None, help="solutions (default: beside the exercises)")
    group.addoption("--grade-timeout", type=int, default=Limits.wall_s, help="seconds per notebook")
    group.addoption("--grade-jobs", type=int, default=None, help="notebooks graded at once (default: CPU cores)")
    group.addoption("--grade-no-sandbox", action="store_true", help="do not use bubblewrap even where it works")
    group.addoption("--grade-unsafe", action="store_true", help="grade even without a sandbox (see the guide)")
    group.addoption("--grade-solutions-private", action="store_true",
                    help="the class never had solutions/: do not send work that matches them to review")


class NeedsReview(Exception):
    """The grader's verdict is *needs review*: a person must look (the message says why)."""


class Failed(Exception):
    """The grader's verdict is *fail* or *grader error* (the message is the first failure)."""


class GradeItem(pytest.Item):
    """One learner's notebook for one exercise; its outcome is the grader's verdict."""

    def __init__(self, *, learner: str, exercise: str, grader: "Grader", **kwargs):
        super().__init__(**kwargs)
        self.learner, self.exercise, self.grader = learner, exercise, grader

    def runtest(self) -> None:
        result = self.grader.result(self.learner, self.exercise)
        if result.verdict == REVIEW:
            raise NeedsReview(result.message)
        if result.verdict != PASS:
            raise Failed(f"{result.verdict}: {result.message}")

    def repr_failure(self, excinfo, style=None) -> str:
        if isinstance(excinfo.value, NeedsReview):
            return f"needs review: {excinfo.value}"
        if isinstance(excinfo.value, Failed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.grader.submissions / self.learner, None, f"{self.learner}::{self.exercise}"


class Grader:
    """Grades the selected items once (when the first runs) and writes the reports."""

    def __init__(self, config: pytest.Config):
        self.config = config
        opt = config.getoption
        self.submissions = opt("grade").resolve()
        self.exercises = opt("grade_exercises").resolve()
        self.selected: set[tuple[str, str]] = set()
        self.results: dict[tuple[str, str], Result] | None = None

    def names(self) -> list[tuple[str, str]]:
        """(learner, exercise) for every learner folder and pristine exercise, as the grader collects them."""
        from pagedlab.grading.collect import collect, load_pristine

        pristine = load_pristine(self.exercises, self._solutions())
        learners, _ = collect(self.submissions, set(pristine), Limits().max_file_bytes)
        return [(learner.name, p.removesuffix(".ipynb")) for learner in learners for p in sorted(pristine)]

    def _solutions(self) -> Path:
        chosen = self.config.getoption("grade_solutions")
        return chosen.resolve() if chosen else self.exercises.parent / "solutions"

    def result(self, learner: str, exercise: str) -> Result:
        if self.results is None:
            self._grade()
        return self.results[learner, exercise]

    def _grade(self) -> None:
        from pagedlab.grading.grade import grade_class
        from pagedlab.grading.tables import write_similarity, write_tables

        opt = self.config.getoption
        out = opt("grade_out").resolve()
        sandbox = not opt("grade_no_sandbox") and os.environ.get("PAGEDLAB_GRADE_SANDBOX", "1") != "0"
        notes, similar, start = [], [], time.monotonic()
        log = self.config.get_terminal_writer().line if self.config.getoption("verbose") > 0 else (lambda line: None)
        results = grade_class(self.submissions, self.exercises, Limits(wall_s=opt("grade_timeout")), opt("grade_jobs"),
                              sandbox, protected=[out], log=log, notes=notes, unsafe=opt("grade_unsafe"),
                              solutions=self._solutions(), select=lambda s, e: (s, e) in self.selected,
                              published=not opt("grade_solutions_private"), similar=similar)
        notes.append(f"graded in {time.monotonic() - start:.0f} s (pytest -p pagedlab.grading.pytest_plugin)")
        write_tables(results, out, notes)
        write_similarity(similar, out)
        self.results = {(r.student, r.exercise): r for r in results if r.verdict != UNEXPECTED}


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session):
    """With ``--grade``, the items are the class's (learner, exercise) pairs and nothing else is collected."""
    config = session.config
    if config.getoption("grade") is None:
        return None
    from pagedlab.grading.integrity import Changed, verify

    try:
        verify()  # as the command line: a grader changed since it was installed does not grade
    except Changed as e:
        raise pytest.UsageError(f"refusing to grade: {e}") from None
    grader = Grader(config)
    items = [GradeItem.from_parent(session, name=f"{learner}::{exercise}", learner=learner, exercise=exercise,
                                   grader=grader) for learner, exercise in grader.names()]
    config.hook.pytest_collection_modifyitems(session=session, config=config, items=items)
    grader.selected = {(i.learner, i.exercise) for i in items}
    session.items = items
    session.testscollected = len(items)
    config.hook.pytest_collection_finish(session=session)
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if isinstance(item, GradeItem) and call.excinfo is not None and call.excinfo.errisinstance(NeedsReview):
        report.needs_review = True


def pytest_report_teststatus(report, config):
    if getattr(report, "needs_review", False) and report.when == "call":
        return "needs review", "R", ("NEEDS REVIEW", {"yellow": True})
    return None
