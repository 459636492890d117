"""The class grader as pytest gives the verdicts the command line gives (the same grade_class), one item per learner
and exercise, with *needs review* a distinct outcome, ``-k`` selecting learners and ``--junitxml`` for an LMS."""

import csv
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

from pagedlab.grading.align import role

ROOT = Path(__file__).resolve().parents[2]
EX00 = "ex00_warmup.ipynb"


def _class(folder: Path) -> dict[str, str]:
    solved, untouched = (nbformat.read(ROOT / d / EX00, as_version=4) for d in ("solutions", "exercises"))
    reference = nbformat.from_dict(untouched)
    next(c for c in reference.cells if role(c) == "work").source = "def softmax_rows(x):\n    return x.softmax(-1)\n"
    expected = {"alice": ("pass", solved), "bob": ("fail", untouched), "carol": ("needs review", reference)}
    for learner, (_, nb) in expected.items():
        (folder / learner).mkdir(parents=True)
        nbformat.write(nb, folder / learner / EX00)
    return {learner: verdict for learner, (verdict, _) in expected.items()}


def _rows(out: Path) -> dict[str, str]:
    with (out / "grades.csv").open(encoding="utf-8") as f:
        return {r["student"]: r["result"] for r in csv.DictReader(f) if r["exercise"] == "ex00_warmup"}


@pytest.mark.slow
def test_the_pytest_face_agrees_with_the_command_line(tmp_path):
    expected = _class(tmp_path / "class")
    # The grader runs from a copy of the package (as in test_grade_class.py): a learner's code graded elsewhere on
    # this machine without a sandbox can reach the files of any grader it finds running.
    package = tmp_path / "package"
    shutil.copytree(ROOT / "pagedlab", package / "pagedlab", ignore=shutil.ignore_patterns("__pycache__"))
    exercises, solutions = str(ROOT / "exercises"), str(ROOT / "solutions")
    flags = ["--grade-no-sandbox", "--grade-unsafe", "--grade-jobs", "2", "--grade-timeout", "120",
             "--grade-exercises", exercises, "--grade-solutions", solutions, "--grade-solutions-private"]
    env = {**os.environ, "PYTHONPATH": str(package)}
    face = subprocess.run([sys.executable, "-m", "pytest", "-p", "pagedlab.grading.pytest_plugin", "-p", "no:xdist",
                           "-o", "addopts=", "-p", "no:cacheprovider", "--grade", str(tmp_path / "class"),
                           "--grade-out", str(tmp_path / "face"), "--junitxml", str(tmp_path / "junit.xml"), *flags],
                          cwd=package, capture_output=True, text=True, env=env)
    assert face.returncode == 1, face.stdout[-3000:]  # a fail and a review: the run fails
    # The command line grades the same class in test_grade_class.py (these three learners' kinds among its learners);
    # both are grade.grade_class, so here the face's rows are compared with the verdicts the learners deserve.
    assert _rows(tmp_path / "face") == expected
    # one item per learner and exercise: the exercises a learner did not hand in fail as "missing", as on the CLI
    summary = face.stdout.splitlines()[-1]
    missing = 3 * (len(list((ROOT / "exercises").glob("*.ipynb"))) - 1)
    assert f"{missing + 1} failed" in summary and "1 passed" in summary and "1 needs review" in summary, summary
    # JUnit: the learner in the class name, the exercise as the name (pytest splits the item's id at "::")
    cases = {(c.get("classname").rsplit(".", 1)[-1], c.get("name")): c
             for c in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")}
    assert {(learner, "ex00_warmup") for learner in expected} <= set(cases) and len(cases) == missing + 3, set(cases)
    assert "needs review" in cases["carol", "ex00_warmup"].find("failure").get("message")
    only = subprocess.run([sys.executable, "-m", "pytest", "-p", "pagedlab.grading.pytest_plugin", "-p", "no:xdist",
                           "-o", "addopts=", "-p", "no:cacheprovider", "--grade", str(tmp_path / "class"),
                           "--grade-out", str(tmp_path / "alice"), "-k", "alice and ex00", *flags],
                          cwd=package, capture_output=True, text=True, env=env)
    assert only.returncode == 0 and f"1 passed, {missing + 2} deselected" in only.stdout, only.stdout[-2000:]
    assert _rows(tmp_path / "alice") == {"alice": "pass"}
