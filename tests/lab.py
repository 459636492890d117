"""How ``make lab`` starts JupyterLab: its command line, read from the Makefile's dry run (``make -n``).

Shared by the command-line test and the browser test, which starts JupyterLab with exactly this command
plus a port, a token and no browser.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lab_command() -> list[str]:
    """The argv of the ``jupyter lab`` line that ``make lab`` runs (nothing is run or installed).

    Raises:
        RuntimeError: ``make`` is not installed, or the ``lab`` target runs no ``jupyter lab``.
    """
    if shutil.which("make") is None:
        raise RuntimeError("make is not installed")
    out = subprocess.run(["make", "-n", "-s", "lab"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        argv = shlex.split(line)
        if argv[1:4] == ["-m", "jupyter", "lab"]:
            return argv
    raise RuntimeError(f"`make -n lab` runs no `python -m jupyter lab`:\n{out}")


def option(argv: list[str], name: str) -> str | None:
    """The value of ``--name=value`` in ``argv``, or None."""
    return next((a.split("=", 1)[1] for a in argv if a.startswith(f"--{name}=")), None)
