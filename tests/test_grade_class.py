"""A synthetic class graded end to end: one learner per known attack, honest learners, careless ones.

Each learner gets the verdict they deserve; no learner's action changes another learner's verdict (the honest
learners are graded after the attackers), the repository's tracked files are unchanged, and a learner's
background process cannot change the grades after they are written. The class is graded twice, by two separate
runs: in the bubblewrap sandbox (where it works) and without it.
"""

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from pagedlab.grading.align import role
from pagedlab.grading.grade import supervise
from pagedlab.grading.sandbox import Limits, Sandbox
from test_grade import without_ids

ROOT = Path(__file__).resolve().parent.parent
EX00, EX05 = "ex00_warmup.ipynb", "ex05_kv_cache_size.ipynb"
PIPE_NAME = "pipe|name\nwith <img src=x onerror=alert(1)>"

SILENCE = """
ip = get_ipython()
ip._showtraceback = lambda *a, **k: None
ip.set_custom_exc((BaseException,), lambda *a, **k: None)
"""
TRANSFORMER = """
get_ipython().input_transformers_post.append(lambda lines: [])  # every later cell, checks included, runs as nothing
"""
REWRITE_PRISTINE = """
import json, pathlib, pagedlab
for root in {pathlib.Path(pagedlab.__file__).resolve().parents[1], *pathlib.Path.cwd().parents}:
    for path in root.glob("exercises/*.ipynb"):
        try:
            nb = json.loads(path.read_text())
            for cell in nb["cells"]:
                cell["source"] = "pass"
            path.write_text(json.dumps(nb))
        except OSError:
            pass
"""
CONFTEST = """
import pathlib, tempfile
SHARED = pathlib.Path.cwd().parents[:2]  # the run's folders; a real attacker walks on to /
HOOK = '''
import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
'''
for folder in [pathlib.Path.cwd(), *SHARED, pathlib.Path(tempfile.gettempdir())]:
    try:
        (folder / "conftest.py").write_text(HOOK)
    except OSError:
        pass
"""
STARTUP = """
import os, pathlib
PAYLOAD = "get_ipython().input_transformers_post.append(lambda lines: [])\\n"
for base in {os.environ.get("IPYTHONDIR", ""), str(pathlib.Path.home() / ".ipython")} - {""}:
    startup = pathlib.Path(base) / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-everything-passes.py").write_text(PAYLOAD)
"""
SHADOW = """
import pathlib, tempfile
here = pathlib.Path.cwd()
SHARED = here.parents[:2]  # the run's folders; a real attacker walks on to /
for folder in [here, *SHARED, pathlib.Path(tempfile.gettempdir()), pathlib.Path.home()]:
    for name in ("torch.py", "pagedlab.py"):
        try:
            (folder / name).write_text("raise ImportError('a planted module')\\n")
        except OSError:
            pass
"""
BACKGROUND = '''
import subprocess, sys
DAEMON = """
import glob, os, time
targets = set()
for path in glob.glob("/proc/[0-9]*/cmdline"):
    try:
        args = open(path, "rb").read().split(b"\\\\0")
    except OSError:
        continue
    targets |= {b.decode() for a, b in zip(args, args[1:]) if a == b"--out"}
end = time.time() + 90
while time.time() < end:
    for folder in targets:
        try:
            with open(os.path.join(folder, "grades.csv"), "a") as f:
                f.write("a07-background-grades,ex00_warmup,pass,\\\\n")
        except OSError:
            pass
    time.sleep(0.1)
"""
subprocess.Popen([sys.executable, "-c", DAEMON], start_new_session=True, stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
'''
COPY_SOLUTION = """
import json, pathlib, sys, tempfile, pagedlab
here = pathlib.Path.cwd()
candidates = [pathlib.Path(pagedlab.__file__).resolve().parents[1] / "solutions" / "ex00_warmup.ipynb"]
candidates += [p for folder in (here, here.parent) for p in folder.glob("*ex00_warmup*.ipynb")]
for path in candidates:
    try:
        nb = json.loads(path.read_text())
        work = "".join(next(c["source"] for c in nb["cells"] if "work" in c.get("metadata", {}).get("tags", [])))
    except (OSError, ValueError, StopIteration):
        continue
    if "NotImplementedError" not in work:
        module = pathlib.Path(tempfile.mkdtemp()) / "copied.py"
        module.write_text("import torch\\n" + work)
        sys.path.insert(0, str(module.parent))
        from copied import softmax_rows
        break
else:
    raise FileNotFoundError("no solution to copy")
"""


def _read(name):
    return nbformat.read(ROOT / name, as_version=4)


def _work(nb, source):
    nb = nbformat.from_dict(nb)
    next(c for c in nb.cells if c.cell_type == "code" and role(c) == "work").source = source
    return nb


def _after_work(nb, source):
    """``nb`` with a learner's own code cell right after its (first) work cell."""
    nb = nbformat.from_dict(nb)
    i = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and role(c) == "work")
    nb.cells.insert(i + 1, nbformat.v4.new_code_cell(source))
    return nb


def build_class(folder: Path) -> dict[tuple[str, str], str]:
    """Write the synthetic class into ``folder``; return {(learner, exercise): expected verdict}."""
    solved, untouched = _read(f"solutions/{EX00}"), _read(f"exercises/{EX00}")
    notebooks = {  # learner: (ex00 notebook or its JSON text, expected verdict)
        "a01-silenced-tracebacks": (_after_work(untouched, SILENCE), "needs review"),
        "a02-input-transformer": (_after_work(untouched, TRANSFORMER), "needs review"),
        "a03-rewrites-pristine": (_after_work(untouched, REWRITE_PRISTINE), "fail"),
        "a04-planted-conftest": (_after_work(untouched, CONFTEST), "fail"),
        "a05-planted-startup": (_after_work(untouched, STARTUP), "needs review"),
        "a06-shadowing-module": (_after_work(solved, SHADOW), "pass"),
        "a07-background-grades": (_after_work(untouched, BACKGROUND), "fail"),
        "a08-copied-solutions": (_work(untouched, COPY_SOLUTION), "fail"),
        "a09-os-exit": (_after_work(solved, "import os\nos._exit(0)"), "fail"),
        "a10-2000-cells": (_after_work(solved, "pass"), "fail"),
        "c01-malformed-tags": (None, "pass"),
        "c02-nbformat-4.4-no-ids": (without_ids(_after_work(solved, "scratch = 1"), 4), "pass"),
        "c03-colab-4.0-no-ids-no-tags": (without_ids(solved, 0, keep_tags=False), "pass"),
        "c04-unalignable": (without_ids(_after_work(solved, "scratch = 1"), 0, keep_tags=False), "needs review"),
        "c05-syntax-error": (_work(solved, "def softmax_rows(x):\n    return (x"), "fail"),
        PIPE_NAME: (solved, "pass"),
        "z1-honest-solved": (solved, "pass"),
        "z2-honest-unsolved": (untouched, "fail"),
    }
    notebooks["a10-2000-cells"][0].cells += [nbformat.v4.new_code_cell("pass") for _ in range(2000)]
    malformed = json.loads(nbformat.writes(solved))
    malformed["cells"][0]["metadata"]["tags"] = 5
    next(c for c in malformed["cells"] if c.get("id") == "check-small")["metadata"]["tags"] = "check"
    notebooks["c01-malformed-tags"] = (json.dumps(malformed), "pass")

    expected = {}
    for learner, (nb, verdict) in notebooks.items():
        (folder / learner).mkdir(parents=True)
        text = nb if isinstance(nb, str) else nbformat.writes(nb)
        (folder / learner / EX00).write_text(text, encoding="utf-8")
        expected[learner, "ex00_warmup"] = verdict
    # Two exercises for the honest learners; the others did not hand ex05 in.
    shutil.copy(ROOT / "solutions" / EX05, folder / "z1-honest-solved" / EX05)
    shutil.copy(ROOT / "exercises" / EX05, folder / "z2-honest-unsolved" / EX05)
    expected["z1-honest-solved", "ex05_kv_cache_size"] = "pass"
    # Careless hand-ins: a browser's duplicate, a nested folder, a symbolic link; editor and archive folders.
    shutil.copy(ROOT / "solutions" / EX00, folder / "z1-honest-solved" / "ex00_warmup (1).ipynb")
    (folder / "z1-honest-solved" / "old").mkdir()
    shutil.copy(ROOT / "solutions" / EX00, folder / "z1-honest-solved" / "old" / EX00)
    (folder / "c06-symlink").mkdir()
    (folder / "c06-symlink" / EX00).symlink_to(folder / "z1-honest-solved" / EX00)
    expected["c06-symlink", "ex00_warmup"] = "fail"
    for junk in (".ipynb_checkpoints", "__MACOSX"):
        (folder / junk).mkdir()
        shutil.copy(ROOT / "solutions" / EX00, folder / junk / EX00)
    return expected


def _tracked_files_hash() -> str:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    h = hashlib.sha256()
    for name in filter(None, files):
        path = ROOT / name.decode()
        h.update(name + (path.read_bytes() if path.is_file() else b"<missing>"))
    return h.hexdigest()


def _grade(folder: Path, out: Path, sandbox: bool) -> tuple[dict, float, str]:
    """Grade ``folder`` as an instructor would (``python -m pagedlab.grading.grade``): (rows by key, seconds, log)."""
    cmd = [sys.executable, "-m", "pagedlab.grading.grade", str(folder), "--out", str(out), "--timeout", "120", "--jobs", "2",
           "--exercises", str(ROOT / "exercises")] + ([] if sandbox else ["--no-sandbox"])
    start = time.monotonic()
    # The grader's own temporary folder lies inside the test's, so whatever a learner plants in the folders of
    # the run (the attacks below walk up two levels from their notebook) stays inside it.
    # (A short folder: the kernels' Unix sockets live under it, and socket paths are limited to ~100 bytes.)
    grader_tmp = tempfile.mkdtemp(prefix="pg")
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "TMPDIR": grader_tmp})
    finally:
        shutil.rmtree(grader_tmp, ignore_errors=True)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    csv_text = (out / "grades.csv").read_text(encoding="utf-8")
    rows = {(r["student"], r["exercise"]): r for r in csv.DictReader(csv_text.splitlines(keepends=True))}
    return rows, elapsed, proc.stdout


@pytest.fixture(scope="module")
def synthetic_class(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    return folder, build_class(folder)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", [True, False], ids=["bubblewrap", "no-sandbox"])
def test_synthetic_class(synthetic_class, sandbox, tmp_path):
    if sandbox:
        probe = Sandbox([ROOT / "exercises", ROOT / "solutions"], use_bwrap=True)
        probe.close()
        if probe.bwrap is None:
            pytest.skip(probe.note)
    folder, expected = synthetic_class
    before = _tracked_files_hash()
    rows, elapsed, log = _grade(folder, tmp_path / "grades", sandbox)
    print(f"\nsandbox={sandbox}: graded the synthetic class in {elapsed:.0f} s\n{log}")
    assert ("WARNING" in log.splitlines()[0]) != sandbox
    got = {key: rows[key]["result"] for key in expected}
    table = "\n".join(f"{k[0]!r:40} {k[1]:20} expected {v:13} got {got[k]:13} {rows[k]['first_failure'][:90]}"
                      for k, v in expected.items())
    assert got == expected, f"sandbox={sandbox}\n{table}"
    written = (tmp_path / "grades" / "grades.csv").read_bytes()
    time.sleep(1.5)  # a learner's background process would write now, after the grader has finished
    assert (tmp_path / "grades" / "grades.csv").read_bytes() == written, "grades.csv changed after it was written"
    _check_messages(rows, (tmp_path / "grades" / "grades.md").read_text(encoding="utf-8"))
    assert _tracked_files_hash() == before, "a learner changed the repository"


def _check_messages(rows, markdown):
    msg = {k: r["first_failure"] for k, r in rows.items()}
    assert msg["z2-honest-unsolved", "ex00_warmup"].startswith("check cell 'check-small': NotImplementedError")
    assert msg["c05-syntax-error", "ex00_warmup"].startswith("work cell 'softmax-work': SyntaxError")
    assert "kernel died" in msg["a09-os-exit", "ex00_warmup"]
    assert "too many code cells" in msg["a10-2000-cells", "ex00_warmup"]
    assert "_showtraceback" in msg["a01-silenced-tracebacks", "ex00_warmup"]
    assert "kernel probe" in msg["a02-input-transformer", "ex00_warmup"]
    assert "cannot match" in msg["c04-unalignable", "ex00_warmup"]
    assert "symbolic link" in msg["c06-symlink", "ex00_warmup"]
    assert msg["z1-honest-solved", "ex01_naive_attention"].startswith("missing")
    unexpected = {k[1] for k, r in rows.items() if k[0] == "z1-honest-solved" and r["result"].startswith("not graded")}
    assert unexpected == {"ex00_warmup (1).ipynb", f"old/{EX00}"}
    assert not any(k[0] in (".ipynb_checkpoints", "__MACOSX") for k in rows)
    # the learner's name cannot break the table: one row, its pipe and newline escaped, its HTML inert
    assert "| pipe\\|name\\\\nwith &lt;img src=x onerror=alert(1)&gt; | pass |" in markdown
    pipes = [line.count("|") - line.count("\\|") for line in markdown.splitlines() if line.startswith("| ")]
    assert len(set(pipes)) == 1, f"table rows with different numbers of cells: {pipes}"  # every row as wide as the header


def _supervised(notebook, limits, flaky=False, dead=False):
    """Run ``notebook`` through the grader's supervisor (no sandbox); return its reply."""
    box = Sandbox([ROOT / "exercises", ROOT / "solutions"], use_bwrap=False, limits=limits)
    try:
        folder = box.new_folder("t")
        job = {**box.job(folder), "notebook": notebook, "filename": "t.ipynb"}
        if flaky or dead:  # a kernel that dies before its first reply (every time, or only the first time)
            marker = folder / "conn" / "started-once"
            start = "" if dead else f'[ -e {marker} ] && exec "$@"; touch {marker}; '
            job["command"] = ["sh", "-c", start + "exit 1", "sh", *job["command"]]
        return supervise(job, limits.wall_s + 30)
    finally:
        box.close()


def _notebook(*sources):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])


@pytest.mark.slow
def test_a_kernel_that_fails_to_start_is_retried_once_and_output_is_capped():
    reply = _supervised(_notebook("print('x' * 5000)", "y = 1"), Limits(wall_s=120, max_output_bytes=1000), flaky=True)
    assert reply["ended"] == "output cap" and reply["at"] == 0 and reply["output_bytes"] > 1000
    dead = _supervised(_notebook("y = 1"), Limits(wall_s=120), dead=True)
    assert dead["ended"] == "no kernel" and "did not start twice" in dead["detail"]


@pytest.mark.slow
def test_the_notebook_time_limit_cannot_be_stretched():
    start = time.monotonic()
    reply = _supervised(_notebook("import time\ntime.sleep(600)", "y = 1"), Limits(wall_s=40))
    assert reply["ended"] == "timeout" and reply["at"] == 0 and "1" not in reply["cells"]
    assert time.monotonic() - start < 40 + 30
