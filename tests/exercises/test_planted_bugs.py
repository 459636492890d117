"""Every exercise's checks catch its planted bugs: for each (exercise, bug) of ``tests/planted``, the solution runs with
the bug planted, as a learner's notebook would, and the FIRST check to fail (the one a learner meets) must be the
one the table names, with a message that names the mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbrun import assert_first_failure, check_title
from planted import replacements, tables

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"
CASES = [(stem, bug) for stem, bugs in sorted(tables().items()) for bug in bugs]


def test_every_table_names_a_solution():
    missing = sorted(stem for stem in tables() if not (SOLUTIONS / f"{stem}.ipynb").exists())
    assert not missing, f"tests/planted has tables for no solution: {missing}"


@pytest.mark.parametrize("stem, bug", CASES, ids=[f"{stem}: {bug}" for stem, bug in CASES])
def test_first_failing_check_names_the_mistake(stem, bug):
    solution, plant = SOLUTIONS / f"{stem}.ipynb", tables()[stem][bug]
    assert_first_failure(solution, replacements(solution, plant), check_title(solution, plant.check), plant.pattern)
