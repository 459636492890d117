"""benchmarks/device_run.sh, the one-shot GPU session, proven to start on a CPU.

The GPU machine is offline and has no notebook packages (no Jupyter, ipywidgets, nbformat, nbclient, nbval). The dry
run executes every step of the script here (benchmarks at tiny sizes in Triton's interpreter, GPU tests collected)
with those packages made unimportable by an import blocker and the network cut, so a missing import, an install
step or a download fails here, not on the GPU.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _device_run():
    if "device_run" not in sys.modules:  # registered before it runs: its dataclasses look their module up
        spec = importlib.util.spec_from_file_location("device_run", ROOT / "benchmarks" / "device_run.py")
        sys.modules["device_run"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["device_run"])
    return sys.modules["device_run"]


BLOCKER = """
import importlib.abc, socket, sys

BLOCKED = {blocked!r}


class NotOnTheGpuMachine(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in BLOCKED or top.startswith("jupyter"):
            raise ImportError(f"{{name}} is not installed on the GPU machine (blocked by the dry-run test)")
        return None


sys.meta_path.insert(0, NotOnTheGpuMachine())


def no_network(*args, **kwargs):
    raise OSError("the GPU machine is offline (network blocked by the dry-run test)")


socket.socket.connect = no_network
socket.create_connection = no_network
"""


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    """Run ``device_run.sh --dry-run`` once with the blocker on PYTHONPATH; (folder, completed process)."""
    device_run = _device_run()
    tmp = tmp_path_factory.mktemp("dry")
    blocker = tmp / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(textwrap.dedent(BLOCKER.format(blocked=device_run.NOTEBOOK_PACKAGES)))
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "PYTHONPATH")}
    env.update(PYTHONPATH=str(blocker), PYTHON=sys.executable)
    out = tmp / "results"
    done = subprocess.run(["bash", str(ROOT / "benchmarks" / "device_run.sh"), "--dry-run", str(out)], env=env,
                          capture_output=True, text=True, timeout=240)
    return out, done


def test_the_blocker_blocks(tmp_path):
    """The blocker itself works: the notebook packages, and the network, fail under it."""
    (tmp_path / "sitecustomize.py").write_text(BLOCKER.format(blocked=_device_run().NOTEBOOK_PACKAGES))
    probe = textwrap.dedent("""
        import importlib, socket
        for name in ('ipywidgets', 'nbformat', 'jupyter_client', 'IPython'):
            try:
                importlib.import_module(name)
            except ImportError:
                print('blocked', name)
        try:
            socket.create_connection(('pypi.org', 443), timeout=1)
        except OSError:
            print('offline')
        """)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True).stdout.split("\n")
    assert out[:5] == ["blocked ipywidgets", "blocked nbformat", "blocked jupyter_client", "blocked IPython", "offline"]


def test_every_step_starts_without_notebook_packages_or_network(dry_run):
    out, done = dry_run
    log = (out / "run.log").read_text() if (out / "run.log").exists() else ""
    assert done.returncode == 0, done.stdout + done.stderr + log[-4000:]
    steps = list(csv.DictReader(open(out / "steps.csv")))
    names = [s["step"] for s in steps]
    assert names[:2] == ["flash_attention", "paged_attention"], "benchmarks first"
    assert {"tests", "tests_tma", "tests_more"} <= set(names)
    llm = ROOT / "benchmarks" / "llm_gpu.py"
    assert all(s["status"] == "ok" for s in steps if s["step"] != "llm_gpu" or llm.exists()), steps
    if not llm.exists():  # the engine benchmark comes with another change: until then, a skip that says so
        assert next(s for s in steps if s["step"] == "llm_gpu")["status"].startswith("skipped: benchmarks/llm_gpu.py")
    assert "blocked by the dry-run test" not in log and "is not installed on the GPU machine" not in log
    assert "pip install" not in log


def test_the_results_fit_what_comes_back(dry_run):
    """At most 8 files, in one flat folder, the benchmarks' CSVs with the columns the notebooks read."""
    out, _ = dry_run
    files = [p for p in out.rglob("*") if not p.name.startswith(".")]
    assert all(p.is_file() and p.parent == out for p in files), files
    assert len(files) <= _device_run().MAX_FILES
    flash = list(csv.DictReader(open(out / "flash_attention.csv")))
    assert {"provider", "mode", "ms", "tflops", "status", "config", "config_ms", "torch", "triton"} <= set(flash[0])
    assert {r["provider"] for r in flash} == {"triton", "sdpa-cudnn", "sdpa-math"}
    assert all(r["status"] == "ok" for r in flash if r["provider"] == "triton")
    paged = list(csv.DictReader(open(out / "paged_attention.csv")))
    assert {"model", "layout", "kv_gbps", "pct_of_copy"} <= set(paged[0])
    engine = list(csv.DictReader(open(out / "llm_gpu.csv")))  # the engine in SmolLM2's shapes, random weights
    assert {r["provider"] for r in engine} >= {"engine-triton", "engine-torch", "hf-generate"}
    facts = dict(csv.reader(open(out / "versions.csv")))
    assert facts["dry_run"] == "True" and facts["torch"] and facts["triton"]


def test_the_budget_fits_one_command():
    """Every step's timeout, added up, may exceed the budget (later steps get what is left), but the budget itself
    stays under 9 minutes and the benchmarks' timeouts fit in it."""
    device_run = _device_run()
    steps = device_run.steps(Path("/nonexistent"), "python")
    assert device_run.BUDGET_S <= 540
    bench = [s for s in steps if not s.junit]
    assert sum(s.timeout_s for s in bench) < device_run.BUDGET_S
    assert [s.junit for s in steps] == sorted(s.junit for s in steps), "benchmarks before tests"


def test_junit_rows(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text('<testsuites><testsuite><testcase classname="tests.t" name="a" time="0.5"/>'
                   '<testcase classname="tests.t" name="b" time="1"><failure message="boom&#10;more"/></testcase>'
                   '<testcase classname="tests.t" name="c" time="0"><skipped message="no gpu"/></testcase>'
                   '</testsuite></testsuites>')
    rows = _device_run().junit_rows("tests", xml)
    assert [(r["test"], r["outcome"], r["message"]) for r in rows] == [
        ("tests.t::a", "passed", ""), ("tests.t::b", "failed", "boom"), ("tests.t::c", "skipped", "no gpu")]
    assert _device_run().junit_rows("tests", tmp_path / "missing.xml") == []
