"""The tables of planted bugs: for each exercise, the plausible wrong answers that its checks must catch, as data.

One module per exercise, named after its notebook (``ex06_block_allocator.py`` for
``solutions/ex06_block_allocator.ipynb``), holds ``BUGS: dict[str, Plant]``; ``tests/test_planted_bugs.py`` runs every
one. A check is named by its number: its title is read from the notebook (``nbrun.check_title``), never copied.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import nbformat

import nbrun


# The forward kernel (ex04) and the paged decode kernel (ex09) run the same online-softmax loop, with the same lines:
# its wrong versions are built once, here.
EXP_NOT_EXP2 = (("p = tl.exp2(", "p = tl.exp("), ("alpha = tl.exp2(", "alpha = tl.exp("))
ACC_NOT_RESCALED = (("acc = alpha[:, None] * acc +", "acc = acc +"),)
L_NOT_RESCALED = (("l_i = alpha * l_i +", "l_i = l_i +"),)
NO_MAX_IN_P = ("p = tl.exp2(s - m_new[:, None])", "p = tl.exp2(s)")


@dataclass(frozen=True)
class Plant:
    """A plausible wrong answer planted in a solution, and the first check that must catch it."""
    # cell id -> the cell's whole new source, or (old, new) edits of the solution's source
    edits: Mapping[str, str | tuple[tuple[str, str], ...]]
    check: int      # number of the check that must fail first ("Check N: ...")
    pattern: str    # regex that its message must match (re.DOTALL)


def tables() -> dict[str, dict[str, Plant]]:
    """``{notebook stem: {bug name: Plant}}`` for every module of this package, e.g. ``"ex06_block_allocator"``."""
    found = {}
    for module in pkgutil.iter_modules(__path__):
        bugs = importlib.import_module(f"{__name__}.{module.name}").BUGS
        assert bugs and all(isinstance(p, Plant) for p in bugs.values()), f"{module.name}.BUGS must map names to Plants"
        found[module.name] = bugs
    return found


def replacements(solution_path: str | Path, plant: Plant) -> dict[str, str]:
    """``{cell id: planted source}`` for ``nbrun.run_cells(replace=...)``: each cell of ``plant.edits`` with its new
    source, or the solution's source with the ``(old, new)`` edits made.

    Raises:
        KeyError: a cell id is not in the solution.
        AssertionError: an ``old`` text is no longer in the solution's cell (the solution changed under the table).
    """
    ids = {cell.get("id") for cell in nbformat.read(Path(solution_path), as_version=4).cells}
    replace = {}
    for cell_id, edit in plant.edits.items():
        if isinstance(edit, str):
            if cell_id not in ids:
                raise KeyError(f"no cell with id {cell_id!r} in {solution_path}")
            replace[cell_id] = edit
        else:
            replace.update(nbrun.planted(solution_path, cell_id, *edit))
    return replace
