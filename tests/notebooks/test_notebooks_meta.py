"""Stored notebooks are honest executed artifacts that nbval can compare on any machine."""

import re
from pathlib import Path

import nbformat
import pytest

from pagedlab.authoring.exercises import CODE_TAGS, cell_tag
from pagedlab.notebook import SETUP_CELL

ROOT = Path(__file__).resolve().parents[2]
EXECUTED = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb"))
ALL = EXECUTED + sorted((ROOT / "exercises").glob("*.ipynb"))


def _code(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_first_code_cell_is_the_canonical_setup_cell(path):
    first = _code(nbformat.read(path, as_version=4))[0]
    assert first.source == SETUP_CELL, f"{path.name}: run `make notebooks` to sync the setup cell"
    assert cell_tag(first) == "setup"


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_cells_are_tagged_and_have_unique_ids(path):
    nb = nbformat.read(path, as_version=4)
    ids = [c.id for c in nb.cells]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicate cell ids"
    untagged = [c.id for c in _code(nb) if cell_tag(c) not in CODE_TAGS]
    assert not untagged, f"{path.name}: code cells without one of the tags {CODE_TAGS}: {untagged}"


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_executed_in_order_without_errors_or_warnings(path):
    nb = nbformat.read(path, as_version=4)
    counts = [c.execution_count for c in _code(nb)]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: re-execute top to bottom (`make notebooks`)"
    for cell in _code(nb):
        for out in cell.outputs:
            assert out.output_type != "error", f"{path.name}:{cell.id} stores an error"
            assert not (out.output_type == "stream" and out.name == "stderr"), (
                f"{path.name}:{cell.id} stores stderr (a warning?): {out.text[:200]!r}")


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_machine_dependent_outputs_are_not_compared(path):
    """Measured timings (decimals with a unit), device names and versions only appear in cells nbval ignores."""
    volatile = re.compile(r"\b\d+\.\d+\s?(ms|µs|us|GB/s|TFLOP/s)(?!\w)|\b(torch|triton|python) \d|\b\d+ cores\b")
    for cell in _code(nbformat.read(path, as_version=4)):
        if cell.source.startswith("# NBVAL_IGNORE_OUTPUT") or "# NBVAL_SKIP" in cell.source:
            continue
        text = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for o in cell.outputs)
        hit = volatile.search(text)
        assert not hit, f"{path.name}:{cell.id} prints {hit.group(0)!r}; mark the cell # NBVAL_IGNORE_OUTPUT"


def test_readme_course_map_lists_every_lecture_and_exercise():
    readme = (ROOT / "README.md").read_text()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb")):
        assert path.stem in readme, f"README's course map does not mention {path.stem}"


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_markdown_math_delimiters_pair_up(path):
    """Each markdown cell's `$` signs outside code pair up: a lone one (a shell once turned "$-10^9$" into "hmB10^9$",
    the flags of `$-`) makes MathJax read the rest of the cell as math, or prints a stray sign."""
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":
            text = re.sub(r"`[^`]*`", "", re.sub(r"```.*?```", "", cell.source, flags=re.S)).replace("\\$", "")
            assert text.count("$") % 2 == 0, f"{path.name}, cell {cell.id}: an unpaired $ in {text[:200]!r}"
