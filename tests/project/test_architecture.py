"""docs/architecture.md lists every module of the package and of the kernels, and nothing that does not exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"


def _modules() -> set[str]:
    found = {p.relative_to(ROOT).as_posix() for d in ("pagedlab", "kernels") for p in (ROOT / d).rglob("*.py")}
    return {m for m in found if "__pycache__" not in m}


def _listed() -> set[str]:
    return set(re.findall(r"^\| `((?:pagedlab|kernels)/[\w/]+\.py)` \|", DOC.read_text(), re.MULTILINE))


def test_every_module_is_on_the_map():
    missing = sorted(_modules() - _listed())
    assert not missing, (f"docs/architecture.md does not list {len(missing)} module(s): {', '.join(missing)}; "
                         "add a row for each to the table of its layer")


def test_nothing_on_the_map_is_missing():
    gone = sorted(_listed() - _modules())
    assert not gone, f"docs/architecture.md lists module(s) that do not exist: {', '.join(gone)}; remove their rows"


def test_the_package_docstring_names_every_top_level_module():
    doc = (ROOT / "pagedlab" / "__init__.py").read_text()
    top = {p.stem if p.is_file() else p.name for p in (ROOT / "pagedlab").iterdir()
           if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())}
    missing = sorted(name for name in top if f"pagedlab.{name}" not in doc)
    assert not missing, f"pagedlab/__init__.py's layer map does not name: {', '.join('pagedlab.' + m for m in missing)}"
