"""The course site, built once per run (``make test-site``), and a local server and Chromium to read it.

Nothing here is collected by a plain ``pytest`` / ``make test`` (pyproject's ``norecursedirs`` skips this folder).
The site is built as ``make site`` builds it (``docs/site/build_site.py``, Sphinx with warnings as errors) into
``build/site``. Chromium is launched with the browser test's settings (``tests/browser/conftest.py``: Debian's
``chromium``, no browser download); without Playwright or a Chromium binary the browser checks skip, saying why.
"""

from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "site"))
sys.path.insert(0, str(ROOT / "tests"))  # the shared `chromium` module (also on pytest's pythonpath)

import build_site  # noqa: E402
from chromium import CHROMIUM_FLAGS, chromium_path, screenshot_folder  # noqa: E402


@pytest.fixture(scope="session")
def site() -> Path:
    """The built site's folder (``build/site/html``); a Sphinx warning or error fails every test that uses it."""
    try:
        return build_site.build(build_site.BUILD, solutions=True)
    except subprocess.CalledProcessError as error:
        pytest.fail(f"make site failed (exit {error.returncode}): Sphinx's messages are above", pytrace=False)


@pytest.fixture(scope="session")
def server(site) -> str:
    """The site served over HTTP on the loopback interface, as GitHub Pages serves it; yields its base URL."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="session")
def chromium():
    """A headless Chromium (Playwright driving the system's browser), closed after the run."""
    path = chromium_path("the site's browser checks")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    return screenshot_folder(Path(__file__).resolve().parent / "screenshots")
