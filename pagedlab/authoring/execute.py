"""Re-execute notebooks in place, so their stored outputs are what the code does now (``make notebooks``).

Each notebook runs top to bottom in a fresh kernel of the current Python environment, on the CPU
(``PAGEDLAB_DEVICE=cpu``, even on a GPU machine: stored outputs are the CPU run that ``pytest --nbval``
compares against everywhere), with a fixed hash seed. Before running, the first code cell is replaced
by :data:`pagedlab.notebook.SETUP_CELL`, the single definition of the Colab install cell.

Widget outputs are stored so that they render without a kernel: the widget state is not stored (it holds
random model ids), so no output may keep a ``widget-view+json`` reference, which would point at nothing
("Error displaying widget: model not found" in a trusted JupyterLab). Once the last cell has run, each
course live view's output is replaced by its static picture drawn then
(:func:`pagedlab.widgets.static_outputs`), i.e. what the live view shows after *Run All*; any other
widget keeps its fallback representations.

Usage::

    python -m pagedlab.authoring.execute notebooks/ solutions/          # every notebook in these folders
    python -m pagedlab.authoring.execute notebooks/02_tiling_and_online_softmax.ipynb
    python -m pagedlab.authoring.execute --setup-cell-only notebooks/ solutions/   # rewrite first cells, run nothing
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from pagedlab.notebook import SETUP_CELL

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# Run after the last cell, in the same kernel. It imports nothing new: a notebook without live views
# (which never imported the widgets) answers with an empty mapping.
FETCH_STATIC_OUTPUTS = """\
import sys as _sys
from IPython.display import display as _display
_widgets = _sys.modules.get("pagedlab.widgets")
_display({"application/json": _widgets.static_outputs() if _widgets else {}}, raw=True)"""

KERNEL_ENV = {"PAGEDLAB_DEVICE": "cpu", "PYTHONHASHSEED": "0", "PYTHONWARNINGS": "ignore", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}


def sync_setup_cell(nb: nbformat.NotebookNode) -> None:
    """Make the first code cell the canonical setup cell (tagged ``setup``)."""
    first = next(c for c in nb.cells if c.cell_type == "code")
    first.source = SETUP_CELL
    tags = first.metadata.setdefault("tags", [])
    if "setup" not in tags:
        tags.append("setup")


def store_static_widgets(nb: nbformat.NotebookNode, statics: dict[str, dict[str, str]]) -> int:
    """Replace live-view outputs by their static bundles and drop widget-view references without state.

    Args:
        nb: an executed notebook; its outputs are changed in place.
        statics: ``{model_id: display bundle}`` from :func:`pagedlab.widgets.static_outputs`.

    Returns:
        How many outputs were replaced by a static picture.
    """
    stored = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    replaced = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get(WIDGET_VIEW)
            if view is None or view.get("model_id") in stored:
                continue
            if view.get("model_id") in statics:
                out["data"] = nbformat.from_dict(dict(statics[view["model_id"]]))
                replaced += 1
            else:
                del out["data"][WIDGET_VIEW]
    return replaced


def execute(path: Path, timeout: int = 1200) -> float:
    """Run one notebook in place; return the seconds it took. Raises if a cell raises."""
    nb = nbformat.read(path, as_version=4)
    sync_setup_cell(nb)
    nb.cells.append(nbformat.v4.new_code_cell(FETCH_STATIC_OUTPUTS))
    old_env = {k: os.environ.get(k) for k in KERNEL_ENV}
    os.environ.update(KERNEL_ENV)  # the kernel subprocess inherits this environment
    try:
        start = time.perf_counter()
        # coalesce_streams: a cell's prints are stored as one output however the kernel happened to flush them.
        NotebookClient(nb, timeout=timeout, kernel_name="python3", coalesce_streams=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        elapsed = time.perf_counter() - start
    finally:
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    fetched = nb.cells.pop()
    statics = next(o.data["application/json"] for o in fetched.outputs if "application/json" in o.get("data", {}))
    nb.metadata.pop("widgets", None)  # widget state holds random model ids; widgets re-render when run
    store_static_widgets(nb, statics)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # wall-clock timestamps would change on every run
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="notebooks or folders of notebooks")
    parser.add_argument("--setup-cell-only", action="store_true",
                        help="only rewrite each notebook's first code cell to SETUP_CELL (after changing REPO_URL)")
    args = parser.parse_args(argv)
    notebooks = []
    for p in args.paths:
        notebooks += sorted(p.glob("*.ipynb")) if p.is_dir() else [p]
    if args.setup_cell_only:
        for path in notebooks:
            nb = nbformat.read(path, as_version=4)
            sync_setup_cell(nb)
            path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        print(f"setup cell written into {len(notebooks)} notebooks")
        return 0
    for nb in notebooks:
        print(f"executing {nb} ...", end=" ", flush=True)
        print(f"{execute(nb):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
