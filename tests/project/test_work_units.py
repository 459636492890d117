"""The units of work `make test` hands to its two workers (conftest.py): a notebook or a test file stays whole, the
long files in SPREAD split by exercise, and every name in LONGEST_FIRST still names tests."""

import importlib.util
import subprocess
import sys
import tomllib
from collections import defaultdict

import pytest

from lab import ROOT

spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
units = importlib.util.module_from_spec(spec)
spec.loader.exec_module(units)


def _collected(request) -> list[str]:
    """Every test's node id: this session's own when it collected the whole suite (as `make test` does), else from a
    fresh collection (15 s of CPU)."""
    config = request.config
    testpaths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["testpaths"]
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS and config.getini("testpaths") == testpaths \
            and not config.option.keyword and not config.option.markexpr and not config.option.deselect:
        return [item.nodeid for item in request.session.items]
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:]
    return [line for line in proc.stdout.splitlines() if "::" in line]


def test_units(request):
    ids = _collected(request)
    by_file, by_unit = defaultdict(set), defaultdict(set)
    for nodeid in ids:
        path = nodeid.split("::")[0]
        by_file[path].add(units.unit(nodeid))
        by_unit[units.unit(nodeid)].add(path)
    assert all(len(paths) == 1 for paths in by_unit.values()), "a unit of work spans two files"
    for path, found in by_file.items():
        if path in units.SPREAD:
            assert len(found) > 1, f"{path} is in SPREAD but makes one unit"
        else:
            assert found == {path}, f"{path} is split into {sorted(found)[:3]}..."
    # the planted bugs of one exercise share a unit (its solution's first cells are compiled once per worker)
    assert units.unit("tests/exercises/test_planted_bugs.py::test_first_failing_check_names_the_mistake"
                      "[ex04b_performance_lab: shared memory in bytes, not KiB]") == \
        "tests/exercises/test_planted_bugs.py::ex04b_performance_lab"
    stale = [p for p in units.LONGEST_FIRST if not any(i.startswith(p) for i in ids)]
    assert not stale, f"LONGEST_FIRST names no test: {stale}"
    assert set(units.SPREAD) <= set(by_file), "SPREAD names a file that holds no test"
