"""`make lab` serves the repository root (so exercises/ and solutions/ are reachable) and opens the first lecture."""

import os
import shutil
from pathlib import Path

import pytest

from lab import ROOT, lab_command, option

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def test_make_lab_serves_the_repository_root_and_opens_notebook_00():
    argv = lab_command()
    root = option(argv, "ServerApp.root_dir")
    assert root is not None and Path(root).resolve() == ROOT, (
        f"make lab must serve the repository root (--ServerApp.root_dir={ROOT}), got {root!r}: "
        "without it the server's root is notebooks/ and exercises/ are unreachable")
    positional = [a for a in argv[4:] if not a.startswith("-")]
    assert positional == ["notebooks/00_setup.ipynb"], f"make lab must open notebooks/00_setup.ipynb, got {positional}"
    assert (ROOT / positional[0]).is_file()


def test_make_lab_allows_root_only_as_root():
    # Jupyter refuses to start as root without --allow-root (containers, some cloud machines).
    assert ("--allow-root" in lab_command()) == (os.getuid() == 0)
