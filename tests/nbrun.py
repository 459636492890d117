"""Run a notebook's code cells in this process, optionally with some cells replaced.

Used to prove that an exercise's checks catch plausible wrong answers: replace the ``work`` cell
with a buggy version, run, and expect the ``check`` cell to raise ``AssertionError``.
"""

from __future__ import annotations

import linecache
from pathlib import Path

import nbformat
from IPython.core.inputtransformer2 import TransformerManager

_transform = TransformerManager().transform_cell


def _compile(path: str | Path, cell_id: str, source: str):
    """Compile a cell as IPython does, its source kept in ``linecache`` (so tracebacks, ``inspect.getsource`` and
    Triton's interpreter see the cell's lines, as in Jupyter)."""
    code, filename = _transform(source), f"<{Path(path).name}:{cell_id}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    return compile(code, filename, "exec", dont_inherit=True)


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
            exec(_compile(path, cell.get("id"), source), namespace)
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


def first_failure(path: str | Path, replace: dict[str, str] | None = None) -> tuple[str, str] | None:
    """Run the notebook like :func:`run_cells` and return ``(cell_id, message)`` of the first cell that raises.

    This is what a learner meets: the first failing check, not just some check, must name the mistake.
    Returns None when every cell runs.
    """
    nb = nbformat.read(Path(path), as_version=4)
    namespace: dict = {"__name__": "__main__"}
    for cid in replace or {}:
        if cid not in {c.get("id") for c in nb.cells}:
            raise KeyError(f"no cell with id {cid!r} in {path}")
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = (replace or {}).get(cell.get("id"), cell.source)
        if "# NBVAL_SKIP" in source:
            continue
        try:
            exec(_compile(path, cell.get("id"), source), namespace)
        except Exception as exc:  # noqa: BLE001 - any failure is the learner's first message
            return cell.get("id"), f"{type(exc).__name__}: {exc}"
    return None


def check_titles(path: str | Path) -> dict[str, str]:
    """``{cell_id: title}`` of every ``check`` cell, the title being the string of its ``with check("...")``."""
    import re

    nb = nbformat.read(Path(path), as_version=4)
    titles = {}
    for cell in nb.cells:
        if "check" in cell.get("metadata", {}).get("tags", []):
            found = re.match(r'with check\("([^"]+)"', cell.source)
            titles[cell.get("id")] = found.group(1) if found else None
    return titles


def check_title(path: str | Path, number: int) -> str:
    """The title of check ``number`` in ``path`` ("Check 3: ..."), as its check cell spells it: a test names the check
    it expects by number and does not copy the title.

    Raises:
        KeyError: no check cell of ``path`` is titled "Check {number}: ...".
    """
    for title in check_titles(path).values():
        if title and title.startswith(f"Check {number}: "):
            return title
    raise KeyError(f"no check titled 'Check {number}: ...' in {path}")


def assert_first_failure(path: str | Path, replace: dict[str, str], title: str, pattern: str) -> str:
    """Assert that the first cell to fail is the check titled ``title`` and that its message matches ``pattern``.

    Returns the message, so a test can look further.
    """
    import re

    failure = first_failure(path, replace)
    assert failure is not None, f"every check passes with {list(replace)} replaced: nothing catches the mistake"
    cell_id, text = failure
    assert text.startswith(f"CheckError: {title}: "), f"the first failure (cell {cell_id}) is not {title!r}:\n{text[:1500]}"
    assert re.search(pattern, text, re.DOTALL), f"{title!r} fails without naming the mistake ({pattern!r}):\n{text[:2500]}"
    return text


def assert_caught(path: str | Path, cell_id: str, edits: list[tuple[str, str]], title: str, pattern: str) -> str:
    """Plant ``edits`` in the solution's cell ``cell_id`` (:func:`planted`) and assert that the check titled
    ``title`` is the first to fail, with a message matching ``pattern`` (:func:`assert_first_failure`)."""
    return assert_first_failure(path, planted(path, cell_id, *edits), title, pattern)
