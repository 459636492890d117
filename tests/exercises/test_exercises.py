"""The exercise pipeline: solutions -> exercises, in sync, and every shipped exercise fails until solved."""

import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import nbformat
import pytest

from pagedlab.authoring.exercises import ExerciseFormatError, generate, make_exercise, strip_solutions, validate

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
EXERCISES = sorted((ROOT / "exercises").glob("*.ipynb"))


def test_strip_keeps_indentation_and_code_outside_regions():
    src = "def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    return x + y\n    ### END SOLUTION\n\nprint('kept')"
    out = strip_solutions(src)
    assert out == "def f(x):\n    y = 1\n    raise NotImplementedError(\"Exercise: replace this line with your code\")\n\nprint('kept')"


def test_strip_handles_several_regions():
    src = "### BEGIN SOLUTION\na = 1\n### END SOLUTION\nb = 2\n  ### BEGIN SOLUTION\n  c = 3\n  ### END SOLUTION"
    out = strip_solutions(src)
    assert out.count("NotImplementedError") == 2 and "b = 2" in out and "a = 1" not in out and "c = 3" not in out


def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    for source, tags in cells:
        c = nbformat.v4.new_code_cell(source)
        c.metadata["tags"] = tags
        nb.cells.append(c)
    return nb


@pytest.mark.parametrize("cells, message", [
    ([("x = 1", [])], "exactly one tag"),
    ([("### BEGIN SOLUTION\nx\n### END SOLUTION", ["demo"])], "belong in cells tagged 'work'"),
    ([("x = 1", ["work"])], "belong in cells tagged 'work'"),
    ([("### BEGIN SOLUTION\nx", ["work"])], "unbalanced"),
    ([("### BEGIN SOLUTION\nx\n### END SOLUTION", ["work"]), ("print(1)", ["check"])], "must check something"),
    ([("### BEGIN SOLUTION\nx\n### END SOLUTION", ["work"]), ("assert x", ["check"])], "must start with"),
    ([("### BEGIN SOLUTION\nx\n### END SOLUTION", ["work"]), ('with check("Check 2: b"):\n    assert x', ["check"])],
     'with check\\("Check 1: <title>"\\)'),
    ([("x = 1", ["demo"])], "no 'work' cell"),
])
def test_malformed_solutions_are_rejected(cells, message):
    with pytest.raises(ExerciseFormatError, match=message):
        validate(_nb(*cells), "bad.ipynb")


def test_there_are_exercises_and_every_solution_validates():
    assert SOLUTIONS, "no solution notebooks"
    for path in SOLUTIONS:
        validate(nbformat.read(path, as_version=4), path.name)


def test_exercises_are_in_sync_with_solutions(tmp_path):
    """Regenerating exercises/ from solutions/ gives byte-identical files (run `make exercises` if not)."""
    generate(ROOT / "solutions", tmp_path)
    fresh = {p.name: p.read_bytes() for p in tmp_path.glob("*.ipynb")}
    shipped = {p.name: p.read_bytes() for p in EXERCISES}
    assert sorted(fresh) == sorted(shipped), "exercises/ and solutions/ hold different notebooks"
    stale = [name for name in fresh if fresh[name] != shipped[name]]
    assert not stale, f"out of date: {stale}; run `make exercises`"


def test_exercises_carry_no_outputs_and_no_solutions():
    for path in EXERCISES:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, f"{path.name}:{cell.id} has outputs"
                assert "BEGIN SOLUTION" not in cell.source, f"{path.name}:{cell.id} still holds a solution"


def test_generation_keeps_cell_ids_for_the_grader():
    for path in SOLUTIONS:
        sol = nbformat.read(path, as_version=4)
        assert [c.id for c in make_exercise(sol).cells] == [c.id for c in sol.cells]


@pytest.fixture(scope="module")
def class_run(tmp_path_factory) -> dict[str, list[ET.Element]]:
    """``pytest --nbval-lax exercises/``, as a learner or an instructor runs it, once: {notebook name: its test cases
    in order}. One pytest for all the exercises; each notebook still gets its own kernel."""
    folder = tmp_path_factory.mktemp("untouched")
    junit = folder / "report.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *map(str, EXERCISES), "-p", "no:cacheprovider", "-p", "no:xdist", "-o",
         "addopts=", "--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=300", f"--junitxml={junit}", "-q"],
        cwd=folder, capture_output=True, text=True)
    assert proc.returncode != 0, f"the untouched exercises pass as shipped:\n{proc.stdout[-2000:]}"
    cases = defaultdict(list)
    for case in ET.parse(junit).getroot().iter("testcase"):
        # classname "exercises.ex00_warmup.ipynb": the notebook's path, dotted
        cases[case.get("classname").removesuffix(".ipynb").rsplit(".", 1)[-1]].append(case)
    return cases


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.stem)
def test_shipped_exercise_fails_at_not_implemented(class_run, path):
    """An untouched exercise fails `pytest --nbval-lax`, and its first failure is the learner's NotImplementedError."""
    cases = class_run[path.stem]
    failures = [c for c in cases if c.find("failure") is not None]
    assert failures, f"{path.name} passes as shipped ({len(cases)} cells run)"
    first = failures[0].find("failure")
    assert "NotImplementedError" in (first.text or "") + (first.get("message") or ""), (
        f"{path.name} fails first at {failures[0].get('name')}, not at the learner's NotImplementedError:\n"
        f"{(first.text or '')[-1500:]}")


def test_a_dead_kernel_fails_its_cell_at_once_in_one_line(tmp_path):
    """The README's check command: a kernel that dies is reported in seconds, not after the cell timeout."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("import os\nos._exit(3)"),
                nbformat.v4.new_code_cell("x + 1")]
    path = tmp_path / "crash.ipynb"
    nbformat.write(nb, path)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "pagedlab.exercise_checks.pytest_plugin", str(path), "-p",
         "no:cacheprovider", "-o", "addopts=", "--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=120",
         "-q"], cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode != 0 and time.monotonic() - start < 60, proc.stdout[-2000:]
    died = [line for line in proc.stdout.splitlines() if "kernel died while running this cell" in line]
    assert died and "Traceback" not in proc.stdout, proc.stdout[-2000:]
