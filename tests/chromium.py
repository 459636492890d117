"""Headless Chromium for the tests that read pages (``make test-browser``, ``make test-site``): Debian's browser,
driven by Playwright, with no browser download.

Without Playwright or a Chromium binary, :func:`chromium_path` skips the test that asked, saying why.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Flags for a container without a GPU or a network: no sandbox (root), no GPU process, nothing fetched.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def find_chromium() -> str | None:
    """``$PAGEDLAB_CHROMIUM``, else the first Chromium or Chrome on the PATH."""
    if os.environ.get("PAGEDLAB_CHROMIUM"):
        return os.environ["PAGEDLAB_CHROMIUM"]
    return next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)


def chromium_path(what: str) -> str:
    """The Chromium to drive, or a skip of ``what`` (e.g. "the browser tests") that says what to install."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip(f"{what} need Playwright for Python (pip install playwright); no browser download")
    path = find_chromium()
    if path is None:
        pytest.skip("no Chromium found: install Debian's (apt-get install chromium) or set PAGEDLAB_CHROMIUM")
    return path


def screenshot_folder(default: Path) -> Path:
    """Where screenshots go: ``$PAGEDLAB_SCREENSHOTS``, else ``default``; created, and said once."""
    folder = Path(os.environ.get("PAGEDLAB_SCREENSHOTS", default))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {folder}")
    return folder
