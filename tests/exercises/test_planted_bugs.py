"""Every exercise's checks catch its planted bugs: for each (exercise, bug) of ``tests/planted``, the solution runs with
the bug planted, as a learner's notebook would, and the FIRST check to fail (the one a learner meets) must be the
one the table names, with a message that names the mistake.

Under ``--proofs`` (``make test PROOFS=1``) every bug runs. The quick run of ``make test`` runs a quarter of each
table (the i-th where i + the exercise's name's length + 1 is a multiple of 4): none of the tenth that
``tests/grading/test_ground_truth.py`` grades (there i + the length is a multiple of 10, so i + the length + 1 is
odd), so the two quick runs together reach about a third of the bugs."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbrun import assert_first_failure, check_title
from planted import replacements, tables

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "stem" not in metafunc.fixturenames:
        return
    proofs = metafunc.config.getoption("--proofs")
    cases = [(stem, bug) for stem, bugs in sorted(tables().items()) for i, bug in enumerate(bugs)
             if proofs or (i + len(stem) + 1) % 4 == 0]
    metafunc.parametrize("stem, bug", cases, ids=[f"{stem}: {bug}" for stem, bug in cases])


def test_every_table_names_a_solution():
    missing = sorted(stem for stem in tables() if not (SOLUTIONS / f"{stem}.ipynb").exists())
    assert not missing, f"tests/planted has tables for no solution: {missing}"


def test_first_failing_check_names_the_mistake(stem, bug):
    solution, plant = SOLUTIONS / f"{stem}.ipynb", tables()[stem][bug]
    assert_first_failure(solution, replacements(solution, plant), check_title(solution, plant.check), plant.pattern)
