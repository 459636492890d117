"""Re-execute notebooks in place, so their stored outputs are what the code does now (``make notebooks``).

Each notebook runs top to bottom in a fresh kernel of the current Python environment, on the CPU
(``PAGEDLAB_DEVICE=cpu``, even on a GPU machine: stored outputs are the CPU run that ``pytest --nbval``
compares against everywhere), with a fixed hash seed. Before running, the first code cell is replaced
by :data:`pagedlab.notebook.SETUP_CELL`, the single definition of the Colab install cell.

Usage::

    python -m pagedlab.execute notebooks/ solutions/          # every notebook in these folders
    python -m pagedlab.execute notebooks/02_tiling_and_online_softmax.ipynb
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

KERNEL_ENV = {"PAGEDLAB_DEVICE": "cpu", "PYTHONHASHSEED": "0", "PYTHONWARNINGS": "ignore", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}


def sync_setup_cell(nb: nbformat.NotebookNode) -> None:
    """Make the first code cell the canonical setup cell (tagged ``setup``)."""
    first = next(c for c in nb.cells if c.cell_type == "code")
    first.source = SETUP_CELL
    tags = first.metadata.setdefault("tags", [])
    if "setup" not in tags:
        tags.append("setup")


def execute(path: Path, timeout: int = 1200) -> float:
    """Run one notebook in place; return the seconds it took. Raises if a cell raises."""
    nb = nbformat.read(path, as_version=4)
    sync_setup_cell(nb)
    old_env = {k: os.environ.get(k) for k in KERNEL_ENV}
    os.environ.update(KERNEL_ENV)  # the kernel subprocess inherits this environment
    try:
        start = time.perf_counter()
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        elapsed = time.perf_counter() - start
    finally:
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # wall-clock timestamps would change on every run
    nb.metadata.pop("widgets", None)  # widget state holds random model ids; widgets re-render when run
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="notebooks or folders of notebooks")
    args = parser.parse_args(argv)
    notebooks = []
    for p in args.paths:
        notebooks += sorted(p.glob("*.ipynb")) if p.is_dir() else [p]
    for nb in notebooks:
        print(f"executing {nb} ...", end=" ", flush=True)
        print(f"{execute(nb):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
