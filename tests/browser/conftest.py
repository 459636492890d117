"""A JupyterLab server started as ``make lab`` starts it, and headless Chromium driven by Playwright.

Nothing here is collected by a plain ``pytest`` / ``make test`` (pyproject's ``norecursedirs`` skips this folder);
``make test-browser`` runs it. Without Playwright or a Chromium binary every test skips, saying why.

The server runs ``make lab``'s own command line (read with ``make -n lab``) on a copy of the repository, so Run All
cannot change the working tree, with a fixed token, a free port on the loopback interface, no browser, and its
settings, runtime files and IPython profile in a temporary folder (autosave off; every cell kept in the page, so
the checks see all outputs).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: the shared `lab` module

from chromium import CHROMIUM_FLAGS, chromium_path, screenshot_folder  # noqa: E402
from lab import ROOT, lab_command, option  # noqa: E402

TOKEN = "pagedlab-browser-test"
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                        "checkForUpdates": False},
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    """Whether the server on ``port`` answers its status API."""
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={TOKEN}", timeout=2)
        return True
    except OSError:
        return False


def _copy_course(dest: Path) -> Path:
    ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis",
                                    ".ipynb_checkpoints", "screenshots", "grades", "submissions", "build")
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


@pytest.fixture(scope="session")
def chromium() -> str:
    return chromium_path("the browser tests")


@pytest.fixture(scope="session")
def lab(chromium, tmp_path_factory) -> dict:
    """Start JupyterLab as ``make lab`` does; yield ``{"url", "root", "token"}``; stop it afterwards."""
    tmp = tmp_path_factory.mktemp("lab")
    root = _copy_course(tmp / "course")
    # The kernel runs this environment's python, as the native kernel of a fresh clone's .venv does (a
    # `jupyter lab` found elsewhere on the PATH would otherwise start its own interpreter's kernel).
    spec = tmp / "data" / "kernels" / "python3" / "kernel.json"
    spec.parent.mkdir(parents=True)
    spec.write_text(json.dumps({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                                "display_name": "Python 3 (ipykernel)", "language": "python"}))
    for name, values in SETTINGS.items():
        path = tmp / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    argv = [a for a in lab_command() if not a.startswith("--ServerApp.root_dir=")]
    assert option(lab_command(), "ServerApp.root_dir"), "make lab no longer sets the server's root"
    argv += [f"--ServerApp.root_dir={root}", "--no-browser", "--ServerApp.ip=127.0.0.1", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={TOKEN}", f"--LabApp.user_settings_dir={tmp / 'settings'}",
             f"--LabApp.workspaces_dir={tmp / 'workspaces'}"]
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp / "config"), "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
           "JUPYTER_DATA_DIR": str(tmp / "data"), "IPYTHONDIR": str(tmp / "ipython")}
    log = (tmp / "server.log").open("w")
    # Another worker's server (make test-browser runs two) may take the free port between our probe and our bind: a
    # server that exits saying so is started again on another port.
    deadline = time.monotonic() + 120
    for _ in range(3):
        port = _free_port()
        server = subprocess.Popen(argv + [f"--ServerApp.port={port}"], cwd=root, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        while server.poll() is None and not _answers(port) and time.monotonic() < deadline:
            time.sleep(0.5)
        if server.poll() is None or "already in use" not in (tmp / "server.log").read_text():
            break
    url = f"http://127.0.0.1:{port}"
    try:
        if server.poll() is not None or not _answers(port):
            raise RuntimeError(f"JupyterLab did not start; its log:\n{(tmp / 'server.log').read_text()}")
        yield {"url": url, "root": root, "token": TOKEN, "log": tmp / "server.log"}
    finally:
        with contextlib.suppress(ProcessLookupError):     # a server that did not start has exited already
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


@pytest.fixture(scope="session")
def browser(chromium, tmp_path_factory):
    """A Chromium context with a fresh profile (user data dir), 1400 px wide."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=chromium, headless=True,
            args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 1000})
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    return screenshot_folder(Path(__file__).resolve().parent / "screenshots")
