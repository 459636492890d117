"""CONTRIBUTING.md and the rooms of docs/architecture.md name only files and commands that exist."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "CONTRIBUTING.md"
RECIPES = ("Add an exercise", "Add a model family", "Add an eviction policy", "Add a kernel configuration",
           "Add a notebook section")
TOP = ("pagedlab/", "kernels/", "tests/", "notebooks/", "solutions/", "exercises/", "benchmarks/", "tools/", "docs/")


def _paths(text: str) -> set[str]:
    """Repository paths in backticks; a placeholder (``NN``, ``<family>``) or a glob is not a path."""
    found = set()
    for quoted in re.findall(r"`([^`\n]+)`", text):
        for word in quoted.split():
            if word.startswith(TOP) or word in ("README.md", "pyproject.toml", "Makefile"):
                if not re.search(r"[<>*]|NN", word):
                    found.add(word.rstrip(",;:"))
    return found


def _rooms() -> str:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    return doc[doc.index("## Rooms and seams"):doc.index("## The life of one request")]


@pytest.mark.parametrize("text", [GUIDE.read_text(), _rooms()], ids=["CONTRIBUTING.md", "architecture rooms"])
def test_every_path_named_exists(text):
    missing = sorted(p for p in _paths(text) if not (ROOT / p).exists())
    assert not missing, f"named but not in the repository: {missing}; fix the page or the path"


def test_every_command_names_a_module_or_script_that_exists():
    text = GUIDE.read_text()
    modules = set(re.findall(r"python -m ([\w.]+)", text)) - {"pytest"}
    scripts = set(re.findall(r"python ((?:tools|benchmarks)/[\w/]+\.py)", text))
    assert modules and scripts
    assert not [m for m in sorted(modules) if importlib.util.find_spec(m) is None], modules
    assert not [s for s in sorted(scripts) if not (ROOT / s).is_file()], scripts


def test_each_recipe_names_files_a_regeneration_and_tests():
    sections = re.split(r"^## ", GUIDE.read_text(), flags=re.MULTILINE)[1:]
    by_title = {s.splitlines()[0].strip(): s for s in sections}
    assert list(by_title) == list(RECIPES), list(by_title)
    for title, body in by_title.items():
        assert "Files:" in body and "Regenerate:" in body and "Tests:" in body, title
        assert any(p.startswith("tests/") for p in _paths(body)), f"{title}: names no test file"


def test_a_wrong_path_is_caught():
    assert _paths("see `pagedlab/paged/no_such_room.py` and `solutions/exNN_name.ipynb`") == {
        "pagedlab/paged/no_such_room.py"}
