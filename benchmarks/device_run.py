"""One short GPU session, as the course's GPU machine allows it: benchmarks first, then the GPU tests that matter most.

The machine is offline, has its own Python (PyTorch with CUDA, Triton, transformers, numpy, pytest, hypothesis, tqdm,
matplotlib; no Jupyter, ipywidgets or nbformat), cannot install anything, gives at most 10 minutes per command and
returns at most 8 files. So this script installs nothing, imports no notebook package, runs the source checkout as it
is (``PYTHONPATH`` = the repository), gives every step its own timeout inside one overall budget (a step that fails
or runs out of time never loses the others' results), and writes at most :data:`MAX_FILES` files into one flat folder:

* ``versions.csv``: ``key,value`` rows: date, GPU, compute capability, SMs, L2 and shared memory as PyTorch reports
  them, driver, CUDA, torch, Triton, NumPy, Python, transformers, how ``pagedlab.device`` chose to run;
* ``flash_attention.csv``: ``benchmarks/flash_attention.py`` (ours vs SDPA's flash and cuDNN backends, bf16,
  d = 128, causal and not, N = 1K..16K, with the autotuned configuration and every configuration's time per row);
* ``paged_attention.csv``: ``benchmarks/paged_attention.py`` (Llama-3-8B and SmolLM2-135M decode shapes, paged and
  contiguous, against the copy bandwidth);
* ``llm_gpu.csv``: ``benchmarks/llm_gpu.py --out <folder>`` (the engine in SmolLM2's shapes with random weights);
* ``tests.csv``: one row per GPU test (step, test, outcome, seconds, message);
* ``steps.csv``: one row per step (status, exit code, seconds, timeout);
* ``run.log``: every step's output.

``--dry-run`` runs the same steps on a CPU: the benchmarks with ``--cpu-smoke`` (tiny sizes in Triton's interpreter)
and the test steps as ``pytest --collect-only``. ``tests/project/test_device_run.py`` runs it with the notebook packages
made unimportable, so a missing import or an install step fails on the CPU, not on the GPU.

Usage::

    PYTHONUNBUFFERED=1 benchmarks/device_run.sh                  # results in $OUT, else benchmarks/results/<gpu>_<date>
    PYTHONUNBUFFERED=1 benchmarks/device_run.sh benchmarks/results/H200_2026-12-01
    benchmarks/device_run.sh --dry-run /tmp/dry                   # on a CPU: every step, tiny
    benchmarks/device_run.sh --full                               # a GPU of one's own: everything (gpu_check.sh)
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_FILES = 8
"""At most this many files come back from a run on the GPU machine."""
BUDGET_S = 530
"""Seconds for all the steps together: under 9 minutes, inside the machine's 10 minutes per command."""
FULL_SCALE = 20
"""``--full`` multiplies every timeout by this (and the budget is their sum)."""
MIN_STEP_S = 20
"""A step that would get fewer seconds than this is skipped, not started."""
NOTEBOOK_PACKAGES = ("ipywidgets", "nbformat", "nbclient", "nbval", "jupyter", "IPython", "ipykernel", "xdist")
"""Packages the GPU machine lacks; no step may import them (the dry-run test blocks them)."""

# The GPU tests, by priority. Each flash test named here compiles few new kernels (the benchmark has already
# compiled bf16 at d = 128); the rest of the GPU tests come last, in whatever time is left.
FIRST_TESTS = "2047-128 or bf16_error or ieee or gqa_long or bfloat16_autotuned_long_context"
TMA_TESTS = "(2047-128 and bf16) or gqa_long"


@dataclass
class Step:
    """One command of the run: its name, its argv (GPU run and dry run), its timeout, its environment."""

    name: str
    argv: list[str]
    dry_argv: list[str]
    timeout_s: int
    env: dict[str, str] = field(default_factory=dict)
    junit: bool = False
    """A pytest step: its results go to tests.csv."""
    needs_hopper: bool = False
    missing: str = ""
    """Why the step cannot run in this checkout (it is then listed as skipped, with this reason)."""


def steps(out: Path, python: str, full: bool = False) -> list[Step]:
    """The run's steps in order, writing into ``out``. Benchmarks first: they are what a GPU is for.

    ``full`` (``gpu_check.sh``, a GPU of one's own): the benchmarks' whole grids with plots, autotuning over the
    whole configuration space, every test of the kernels, and timeouts :data:`FULL_SCALE` times longer."""
    bench = ROOT / "benchmarks"
    # A few configurations per kernel: compile time is most of a first run.
    quick = {} if full else {"PAGEDLAB_AUTOTUNE": "quick"}
    pytest = [python, "-m", "pytest", "-q", "-rs", "-o", "addopts=", "-p", "no:cacheprovider",
              "-p", "_hypothesis_pytestplugin"]
    flash_tests, paged_tests, primer = "tests/kernels/test_flash_attention.py", "tests/kernels/test_paged_attention.py", \
        "tests/kernels/test_primer.py"
    llm = bench / "llm_gpu.py"
    result = [
        Step("flash_attention",
             [python, str(bench / "flash_attention.py"), "--out", str(out)] + ([] if full else [
                 "--no-plot", "--dtypes", "bf16", "--head-dims", "128", "--causal", "true", "false",
                 "--seq-lens", "1024", "2048", "4096", "8192", "16384", "--providers", "triton", "sdpa-flash",
                 "sdpa-cudnn"]),
             [python, str(bench / "flash_attention.py"), "--out", str(out), "--no-plot", "--cpu-smoke"],
             200, quick),
        Step("paged_attention",
             [python, str(bench / "paged_attention.py"), "--out", str(out), "--models", "llama3-8b",
              "smollm2-135m"] + ([] if full else ["--no-plot", "--batches", "8", "64", "--contexts", "1024", "4096",
                                                  "16384", "--block-sizes", "16", "128"]),
             [python, str(bench / "paged_attention.py"), "--out", str(out), "--no-plot", "--cpu-smoke"],
             80),
    ]
    # Its dry run is the engine on a 2-layer model on the CPU: it proves the script imports and writes its CSV there.
    result.append(Step("llm_gpu", [python, str(llm), "--out", str(out)], [python, str(llm), "--dry-run", "--out", str(out)],
                       80, missing="" if llm.exists() else "benchmarks/llm_gpu.py is not in this checkout"))
    result += [
        Step("tests", pytest + ["-k", FIRST_TESTS, flash_tests, paged_tests],
             pytest + ["--collect-only", "-k", FIRST_TESTS, flash_tests, paged_tests],
             110, quick, junit=True),
        Step("tests_tma", pytest + ["-k", TMA_TESTS, flash_tests],
             pytest + ["--collect-only", "-k", TMA_TESTS, flash_tests],
             50, {**quick, "PAGEDLAB_TMA": "1"}, junit=True, needs_hopper=True),
        Step("tests_more", pytest + ["-k", f"test_primer or (gpu and not ({FIRST_TESTS}))", flash_tests, primer],
             pytest + ["--collect-only", "-k", f"test_primer or (gpu and not ({FIRST_TESTS}))", flash_tests, primer],
             120, quick, junit=True),
    ]
    if full:
        result.append(Step("tests_all", pytest + [flash_tests, paged_tests, primer, "tests/core/test_device.py"],
                           pytest + ["--collect-only", flash_tests, paged_tests, primer], 400, junit=True))
        for step in result:
            step.timeout_s *= FULL_SCALE
    return result


def versions(dry: bool) -> list[tuple[str, str]]:
    """``(key, value)`` facts about this machine and its libraries, for versions.csv."""
    from pagedlab import device  # first: decides Triton's mode before triton is imported
    import numpy
    import torch
    import triton

    rows = [("date_utc", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")),
            ("dry_run", str(dry)), ("mode", device.MODE.reason), ("python", sys.version.split()[0]),
            ("torch", torch.__version__), ("cuda", str(torch.version.cuda)), ("triton", triton.__version__),
            ("numpy", numpy.__version__)]
    try:
        import transformers
        rows.append(("transformers", transformers.__version__))
    except ImportError:
        rows.append(("transformers", "not installed"))
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        rows += [("gpu", props.name), ("capability", f"{props.major}.{props.minor}"),
                 ("sms", str(props.multi_processor_count)), ("memory_gib", f"{props.total_memory / 2**30:.1f}"),
                 ("l2_bytes_reported_by_torch", str(getattr(props, "L2_cache_size", "unknown"))),
                 ("shared_memory_per_block_optin", str(getattr(props, "shared_memory_per_block_optin", "unknown")))]
        try:
            smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=20)
            rows.append(("driver", smi.stdout.strip() or "unknown"))
        except (OSError, subprocess.TimeoutExpired):
            rows.append(("driver", "unknown"))
    return rows


def junit_rows(step: str, xml_path: Path) -> list[dict]:
    """One tests.csv row per test case of a pytest JUnit XML report (an empty list if there is none)."""
    if not xml_path.exists():
        return []
    rows = []
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                message = (child.get("message") or "").splitlines()[0][:200] if child.get("message") else ""
        rows.append(dict(step=step, test=f"{case.get('classname')}::{case.get('name')}", outcome=outcome,
                         seconds=case.get("time", ""), message=message))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=None,
                        help="results folder (default: $OUT if set, else benchmarks/results/<gpu>_<date>)")
    parser.add_argument("--dry-run", action="store_true", help="on a CPU: every step at tiny sizes, tests collected")
    parser.add_argument("--budget", type=int, default=None, help=f"seconds for all steps (default {BUDGET_S})")
    parser.add_argument("--full", action="store_true",
                        help="whole benchmark grids, whole autotuning space, every kernel test (a GPU of one's own)")
    args = parser.parse_args(argv)
    start = time.monotonic()
    for name in ("PAGEDLAB_DEVICE", "TRITON_INTERPRET", "PAGEDLAB_TMA", "PAGEDLAB_AUTOTUNE"):
        os.environ.pop(name, None)  # compile for the GPU, whatever the shell had set
    if args.dry_run:
        os.environ["PAGEDLAB_DEVICE"] = "cpu"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    env["HF_HUB_OFFLINE"] = "1"  # the machine is offline: never wait on the network
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only the plugins named on the command line
    env["TQDM_MININTERVAL"] = "10"  # a progress bar every 10 s, not a log full of them

    facts = dict(versions(args.dry_run))
    if not args.dry_run and "gpu" not in facts:
        sys.exit("device_run.sh needs an NVIDIA GPU with torch built for CUDA (none found); on a CPU, "
                 "`benchmarks/device_run.sh --dry-run /tmp/dry` checks that every step starts")
    gpu = re.sub(r"[^A-Za-z0-9]+", "_", facts.get("gpu", "cpu-dry-run")).strip("_")
    out = args.out or (Path(os.environ["OUT"]) if os.environ.get("OUT") else
                       ROOT / "benchmarks" / "results" / f"{gpu}_{datetime.date.today():%Y-%m-%d}")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "versions.csv", "w", newline="") as f:
        csv.writer(f).writerows([("key", "value"), *facts.items()])
    hopper = int(facts.get("capability", "0.0").split(".")[0]) >= 9

    log = open(out / "run.log", "a")
    step_rows, test_rows = [], []
    plan = steps(out, sys.executable, args.full)
    if args.budget is None:
        args.budget = sum(s.timeout_s for s in plan) if args.full else BUDGET_S
    for step in plan:
        left = args.budget - (time.monotonic() - start)
        timeout = int(min(step.timeout_s, left))
        row = dict(step=step.name, status="", rc="", seconds="0", timeout_s=str(timeout))
        if step.missing:
            row["status"] = f"skipped: {step.missing}"
        elif step.needs_hopper and not hopper and not args.dry_run:
            row["status"] = "skipped: needs Hopper (sm_90) or newer"
        elif timeout < MIN_STEP_S:
            row["status"] = f"skipped: {left:.0f} s left of the {args.budget} s budget"
        else:
            cmd = step.dry_argv if args.dry_run else step.argv
            xml = out / f".{step.name}.xml"
            if step.junit:
                cmd = cmd + [f"--junitxml={xml}"]
            log.write(f"\n== {step.name} (timeout {timeout} s): {' '.join(cmd)}\n")
            log.flush()
            began = time.monotonic()
            try:
                rc = subprocess.run(cmd, cwd=ROOT, env={**env, **step.env}, stdout=log, stderr=subprocess.STDOUT,
                                    timeout=timeout).returncode
                row["status"] = "ok" if rc == 0 else f"failed (exit {rc})"
                row["rc"] = str(rc)
            except subprocess.TimeoutExpired:
                row["status"] = f"timed out after {timeout} s"
            row["seconds"] = f"{time.monotonic() - began:.0f}"
            if step.junit:
                test_rows += junit_rows(step.name, xml)
                xml.unlink(missing_ok=True)
        step_rows.append(row)
        print(f"{step.name:16s} {row['status']:40s} {row['seconds']:>4s} s (timeout {row['timeout_s']} s)",
              flush=True)
        log.write(f"== {step.name}: {row['status']} after {row['seconds']} s\n")
        log.flush()
    log.close()
    for name, rows, fields in (("steps.csv", step_rows, ["step", "status", "rc", "seconds", "timeout_s"]),
                               ("tests.csv", test_rows, ["step", "test", "outcome", "seconds", "message"])):
        with open(out / name, "w", newline="") as f:
            writer = csv.DictWriter(f, fields)
            writer.writeheader()
            writer.writerows(rows)
    files = sorted(p.name for p in out.iterdir() if p.is_file() and not p.name.startswith("."))
    print(f"{len(files)} files in {out}: {', '.join(files)}; {time.monotonic() - start:.0f} s in all")
    if len(files) > MAX_FILES:
        print(f"warning: {len(files)} files, but at most {MAX_FILES} come back from the GPU machine", flush=True)
    return 0 if all(r["status"] == "ok" or r["status"].startswith("skipped") for r in step_rows) else 1


if __name__ == "__main__":
    sys.exit(main())
