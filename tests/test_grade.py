"""Grading a class: pristine checks are restored, and one broken notebook never stops the others."""

import csv
import shutil
from pathlib import Path

import nbformat
import pytest

from pagedlab.exercises import cell_tag
from pagedlab.grade import grade_class, restore_checks, write_tables

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = ROOT / "exercises" / "ex00_warmup.ipynb"
SOLUTION = ROOT / "solutions" / "ex00_warmup.ipynb"


def _without_checks(nb):
    nb = nbformat.from_dict(nb)
    nb.cells = [c for c in nb.cells if not (c.cell_type == "code" and cell_tag(c) == "check")]
    return nb


def _with_work(nb, source):
    nb = nbformat.from_dict(nb)
    next(c for c in nb.cells if c.cell_type == "code" and cell_tag(c) == "work").source = source
    return nb


def test_restore_puts_back_deleted_and_edited_checks_in_place():
    pristine = nbformat.read(EXERCISE, as_version=4)
    solved = nbformat.read(SOLUTION, as_version=4)
    tampered = _without_checks(solved)
    # a learner "fixes" a check by editing it, and adds a scratch cell
    tampered.cells.append(nbformat.v4.new_code_cell("scratch = 1"))
    restored = restore_checks(tampered, pristine)
    pristine_checks = [c.source for c in pristine.cells if c.cell_type == "code" and cell_tag(c) == "check"]
    restored_checks = [c.source for c in restored.cells if c.cell_type == "code" and cell_tag(c) == "check"]
    assert restored_checks == pristine_checks
    # the learner's work and scratch cells survive, and cell order follows the pristine notebook
    assert any("BEGIN SOLUTION" in c.source for c in restored.cells)
    assert restored.cells[-1].source == "scratch = 1"
    order = [c.id for c in restored.cells if c.id in {p.id for p in pristine.cells}]
    assert order == [c.id for c in pristine.cells if c.id in set(order)]


def test_grade_a_class(tmp_path):
    exercises = tmp_path / "exercises"
    exercises.mkdir()
    shutil.copy(EXERCISE, exercises)
    solved = nbformat.read(SOLUTION, as_version=4)
    untouched = nbformat.read(EXERCISE, as_version=4)
    students = {
        "1-solved": solved,
        "2-untouched": untouched,
        "3-solved-check-deleted": _without_checks(solved),
        "4-unsolved-checks-deleted": _without_checks(untouched),  # would pass if checks were not restored
        "5-syntax-error": _with_work(solved, "def softmax_rows(x):\n    return (x"),
        "6-infinite-loop": _with_work(solved, "while True:\n    pass"),
        "7-wrong-answer": _with_work(solved, "def softmax_rows(x):\n    return torch.softmax(x, dim=0)"),
    }
    subs = tmp_path / "class"
    for name, nb in students.items():
        (subs / name).mkdir(parents=True)
        nbformat.write(nb, subs / name / EXERCISE.name)
    (subs / "8-missing").mkdir()
    (subs / "9-not-json").mkdir()
    (subs / "9-not-json" / EXERCISE.name).write_text("{ this is not a notebook")

    results = grade_class(subs, exercises, cell_timeout=8)
    got = {r.student: r for r in results}
    assert {s: r.passed for s, r in got.items()} == {
        "1-solved": True, "2-untouched": False, "3-solved-check-deleted": True, "4-unsolved-checks-deleted": False,
        "5-syntax-error": False, "6-infinite-loop": False, "7-wrong-answer": False, "8-missing": False,
        "9-not-json": False,
    }
    assert all("\x1b" not in r.message and "#x1B" not in r.message for r in results), "terminal colours leaked"
    assert got["2-untouched"].message.startswith("check cell 'check-small'")
    assert got["5-syntax-error"].message.startswith("work cell 'softmax-work'")
    assert got["7-wrong-answer"].message.startswith("check cell 'check-small'")
    assert "NotImplementedError" in got["2-untouched"].message
    assert "NotImplementedError" in got["4-unsolved-checks-deleted"].message
    assert "SyntaxError" in got["5-syntax-error"].message
    assert "imeout" in got["6-infinite-loop"].message or "timed out" in got["6-infinite-loop"].message
    assert "elements differ" in got["7-wrong-answer"].message
    assert got["8-missing"].message.startswith("missing")
    assert got["9-not-json"].message.startswith("unreadable")

    csv_path, md_path = write_tables(results, tmp_path / "grades")
    rows = list(csv.DictReader(csv_path.open()))
    assert [(r["student"], r["result"]) for r in rows][:3] == [
        ("1-solved", "pass"), ("2-untouched", "fail"), ("3-solved-check-deleted", "pass")]
    table = md_path.read_text()
    assert "| 1-solved | pass | 1/1 |" in table and "| 2-untouched | fail | 0/1 |" in table


def test_grade_rejects_a_missing_folder(tmp_path):
    with pytest.raises(ValueError, match="submissions"):
        grade_class(tmp_path / "nope", ROOT / "exercises")
