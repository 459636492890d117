"""How `make test` shares its work between pytest-xdist's workers (``-n 2 --dist loadscope``, scopes defined here).

A unit of work runs whole on one worker. Each test file is one unit, so that a notebook's cells run in order in one
kernel (nbval) and a module's fixtures (a model loaded once) are built once. The files in ``SPREAD`` hold long,
independent tests whose only shared state is per exercise: there each value of the first parameter (its id up to
the first ``:``) is a unit, and a test without parameters is a unit of its own. Units start longest first, as
measured on a 2-core CPU (``pytest --durations=0``), so that no worker is left alone with a long one at the end; the
tests of a file keep their order.

(pytest-xdist's own ``--dist loadgroup`` does this with marks, but it renames node ids in a way pytest 9.2 ignores.)
"""

from __future__ import annotations

import re

import pytest

# Files whose tests are split into units by their first parameter (an exercise), each unit on any worker.
SPREAD = ("tests/grading/test_grade_class.py", "tests/grading/test_ground_truth.py",
          "tests/exercises/test_planted_bugs.py")

# The longest units first (seconds on a 2-core CPU, two workers, torch 2.13 CPU, 2026-12-01); the units not named
# here follow in collection order. A stale list costs time, never a result.
LONGEST_FIRST = (
    "tests/grading/test_grade_class.py::test_synthetic_class[bubblewrap]",  # 121-155 s; 35 s without --proofs
    "notebooks/10_mini_serving_engine.ipynb",                                # 100 s alone, 140 s beside the rest
    "tests/engine/test_llm.py",                                              # 63 s
    "tests/engine/test_engine.py",                                           # 60 s
    "tests/exercises/test_exercises.py",                                     # 50 s
    "tests/grading/test_grade_class.py::test_synthetic_class[no-sandbox]",   # 46-49 s
    "tests/grading/test_pytest_face.py",                                     # 33-48 s
    "tests/project/test_device_run.py",                                      # 33-41 s
    "tests/grading/test_grade_class.py",                                     # 29 s (its two limit tests)
    "tests/grading/test_ground_truth.py",                                    # 150 s in all, 32 s at most a unit
    "tests/models/test_loader_cache.py",                                     # 19-30 s
    "tests/exercises/test_planted_bugs.py",                                  # 53-60 s in all (--proofs; a quarter without)
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--proofs", action="store_true",
                     help="the grader's exhaustive proofs: every planted bug and attack row on every seed, the whole "
                          "synthetic class in the sandbox (make test PROOFS=1); without it one planted bug of each table, "
                          "each attack and honest row written for a class and a twelfth of the outside reviews' rows run "
                          "on one seed, and the sandbox grades only the learners it can change")


@pytest.fixture
def proofs(request: pytest.FixtureRequest) -> bool:
    """True under ``--proofs`` (see :func:`pytest_addoption`)."""
    return request.config.getoption("--proofs")


def unit(nodeid: str) -> str:
    """The unit of work of the test ``nodeid`` (see the module docstring)."""
    path, _, rest = nodeid.partition("::")
    if path not in SPREAD:
        return path
    param = re.search(r"\[([^:\]]*)", rest)
    return f"{path}::{param.group(1)}" if param else nodeid


def _rank(item: pytest.Item) -> int:
    return next((rank for rank, prefix in enumerate(LONGEST_FIRST) if item.nodeid.startswith(prefix)),
                len(LONGEST_FIRST))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller hands out units in this order
        items.sort(key=_rank)           # stable


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's, absent when it is not loaded
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit(nodeid)

    return UnitScheduling(config, log)
