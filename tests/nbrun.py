"""Run a notebook's code cells in this process, optionally with some cells replaced.

Used to prove that an exercise's checks catch plausible wrong answers: replace the ``work`` cell
with a buggy version, run, and expect the ``check`` cell to raise ``AssertionError``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from IPython.core.inputtransformer2 import TransformerManager

_transform = TransformerManager().transform_cell


def run_cells(path: str | Path, replace: dict[str, str] | None = None, stop_after: str | None = None) -> dict:
    """Execute the code cells of ``path`` in order in a fresh namespace and return it.

    Args:
        path: the notebook.
        replace: ``{cell_id: source}`` to run instead of those cells' sources.
        stop_after: stop after the cell with this id (inclusive).

    Raises:
        KeyError: a cell id in ``replace`` or ``stop_after`` is not in the notebook.
        Whatever a cell raises (an ``AssertionError`` from a check, above all).
    """
    nb = nbformat.read(Path(path), as_version=4)
    ids = {c.get("id") for c in nb.cells}
    for cid in list(replace or {}) + ([stop_after] if stop_after else []):
        if cid not in ids:
            raise KeyError(f"no cell with id {cid!r} in {path}")
    namespace: dict = {"__name__": "__main__"}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = (replace or {}).get(cell.get("id"), cell.source)
        if "# NBVAL_SKIP" not in source:
            exec(compile(_transform(source), f"<{Path(path).name}:{cell.get('id')}>", "exec", dont_inherit=True), namespace)
        if cell.get("id") == stop_after:
            break
    return namespace


def planted(path: str | Path, cell_id: str, *edits: tuple[str, str]) -> dict[str, str]:
    """``{cell_id: source}`` for ``run_cells(replace=...)``: the cell's solution with a bug planted.

    Each ``(old, new)`` edit replaces ``old``, which must occur in the cell's source; when it no longer does,
    the solution changed under the test, and this raises ``AssertionError`` saying so.
    """
    nb = nbformat.read(Path(path), as_version=4)
    source = next((c.source for c in nb.cells if c.get("id") == cell_id), None)
    if source is None:
        raise KeyError(f"no cell with id {cell_id!r} in {path}")
    for old, new in edits:
        assert old in source, f"the solution of cell {cell_id!r} changed: {old!r} is not in it; update the test"
        source = source.replace(old, new)
    return {cell_id: source}
