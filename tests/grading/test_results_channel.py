"""Results a learner cannot write, proven on tiny notebooks run by the grader's own supervisor (no torch: seconds).

Each test breaks one rule of :mod:`pagedlab.grading.run` and :mod:`pagedlab.grading.harness` on purpose from the
notebook's side: the graded inputs and the token are not in the kernel while learner cells run, a thread alive when
the graded calls begin is counted, no code of the notebook's runs after the results are written, a driver that did
not stop the kernel leaves no results, and the results must carry the run's token.
"""

from __future__ import annotations

from types import SimpleNamespace

import nbformat
import pytest

from pagedlab.grading.calls import Malformed, job_text, load_outcomes
from pagedlab.grading.judge import REVIEW, Expected, judge_graded
from pagedlab.grading.procs import Limits
from pagedlab.grading.sandbox import Sandbox
from pagedlab.grading.specs import Cases
from pagedlab.grading.supervise import _SUPERVISOR, supervise

TOKEN = "9f2c41d7a0b35e68"
SPEC = SimpleNamespace(given={}, tripwires=(), device=False, triton=False, full_precision=False, memory=None)


def _cases() -> Cases:
    c = Cases(0)
    c.call("answer", "answer()")
    return c


def _graded(*sources: str) -> dict:
    """Run a notebook of ``sources`` and its graded call ``answer()`` through the supervisor; its ``graded`` reply."""
    box = Sandbox([], use_bwrap=False, limits=Limits(wall_s=90))
    try:
        box.add_copy("t", ["import pagedlab"], set())
        folder = box.new_folder("t")
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
        job = {**box.job(folder, "t"), "notebook": notebook, "filename": "t.ipynb",
               "graded": job_text(_cases(), SPEC, TOKEN), "harness": dict(_SUPERVISOR)["pagedlab.grading.harness"]}
        reply = supervise(job, 120)
    finally:
        box.close()
    assert reply.get("ended") == "complete", reply
    return reply["graded"]


@pytest.mark.slow
def test_a_learner_cell_finds_no_graded_input_or_token_in_memory():
    """The job reaches the kernel in the driver cell, after the last learner cell: ``gc`` finds nothing before."""
    # Strings are not tracked by gc: look inside every container it tracks (the job would be a dict, or its text).
    scan = (f"needle = {TOKEN[:8]!r} + {TOKEN[8:]!r}\n"
            "import gc\n"
            "found = 0\n"
            "for o in gc.get_objects():\n"
            "    values = o.values() if isinstance(o, dict) else o if isinstance(o, (list, tuple)) else ()\n"
            "    found += sum(1 for v in values if isinstance(v, str) and v is not needle and needle in v)\n"
            "def answer():\n    return found\n")
    graded = _graded(scan)
    outcomes, tripped, _ = load_outcomes(graded["text"], _cases(), TOKEN)
    assert outcomes == [[("value", 0)]] and tripped == [] and graded["threads"] == 0


# Work handed to a thread the kernel already has, while the graded call waits for it: ipykernel's output thread and
# its control thread's event loop (each waits in the driver until the calls end, so the work never runs), and the
# thread that reads what is written to file descriptor 1 (no event loop: it runs, and is recorded).
HANDED = {
    "the output thread": "sys.stdout.pub_thread.schedule(work)",
    "the control thread's loop": ("next(t for t in threading.enumerate() if t.name == 'Control')"
                                  ".io_loop.add_callback(work)"),
    "the thread reading file descriptor 1": "os.write(FD, b'x')",
}


@pytest.mark.slow
@pytest.mark.parametrize("route", sorted(HANDED))
def test_work_on_a_thread_the_kernel_already_has_is_not_unseen(route):
    """The op watcher and the profile hook are the calling thread's: work handed to another thread of the kernel
    either does not run while the calls do, or is recorded."""
    cell = ("import os, sys, threading\n"
            "FD = os.dup(1)\n"  # (taken while learner cells run: the calls' output goes nowhere)
            "BOX, DONE = [], threading.Event()\n"
            "def work(*_):\n"
            "    BOX.append(sum(range(10)))\n"
            "    DONE.set()\n"
            "OUT = sys.stdout\n"
            "OUT.write = lambda text: (work(), len(text))[1]\n"  # what the pipe's thread calls with what it reads
            "def answer():\n"
            "    BOX.clear(), DONE.clear()\n"
            f"    {HANDED[route].replace('sys.stdout', 'OUT')}\n"
            "    DONE.wait(2)\n"
            "    return BOX[-1]\n")
    outcomes, tripped, _ = load_outcomes(_graded(cell)["text"], _cases(), TOKEN)
    recorded = any("ran during the call" in t for t in tripped)
    assert outcomes != [[("value", 45)]] or recorded, (outcomes, tripped)
    assert recorded or "descriptor" not in route, tripped


@pytest.mark.slow
def test_a_thread_of_the_kernels_kept_computing_when_the_calls_begin_is_recorded():
    """Work handed to the control thread's loop before the driver runs, computing without a pause (on a core of its
    own it switches no more than a sleeping thread): the calls do not begin as if it were still."""
    cell = ("import threading, time\n"
            "BOX, ASKED = [0], threading.Event()\n"
            "def spin():\n"
            "    end = time.monotonic() + 60\n"
            "    while not ASKED.is_set() and time.monotonic() < end:\n"
            "        BOX[0] = sum(range(10))\n"
            "next(t for t in threading.enumerate() if t.name == 'Control').io_loop.add_callback(spin)\n"
            "def answer():\n"
            "    ASKED.set()\n"
            "    return BOX[0]\n")
    _, tripped, _ = load_outcomes(_graded(cell)["text"], _cases(), TOKEN)
    assert any("kept running when the graded calls began" in t or "ran during the call" in t for t in tripped), tripped


@pytest.mark.slow
def test_a_graded_call_longer_than_the_profilers_period_is_not_sent_to_review():
    """torch's profiler, which the grader starts to see TorchScript, starts a native thread of its own that wakes
    every 5 s: the grader's, not the notebook's (round 38z20: it woke during ex10's longest call on a loaded machine,
    and the solution itself was sent to "grader error")."""
    cell = "import time\nimport torch\ndef answer():\n    time.sleep(6)\n    return 1\n"
    outcomes, tripped, _ = load_outcomes(_graded(cell)["text"], _cases(), TOKEN)
    assert outcomes == [[("value", 1)]] and tripped == [], tripped


def test_a_thread_computing_is_ready_to_run_whether_or_not_it_switches():
    """What the settling before the calls reads: a thread computing is running or ready, one waiting is neither."""
    import threading
    import time

    from pagedlab.grading.harness import Others

    stop, idle = threading.Event(), threading.Event()
    spinner = threading.Thread(target=lambda: [None for _ in iter(stop.is_set, True)])
    sleeper = threading.Thread(target=idle.wait)
    spinner.start(), sleeper.start()
    time.sleep(0.2)  # (each past its start: a thread being started runs)
    try:
        others = Others.__new__(Others)
        others.me = threading.get_native_id()
        seen = set()
        for _ in range(50):  # (the spinner gives up the GIL to this thread now and then: sleeping, it waits for it)
            others.counts()
            seen |= others.ready
            time.sleep(0.002)
        assert spinner.native_id in seen and sleeper.native_id not in seen, (seen, spinner.native_id)
        # (round 38z18) a thread of ZeroMQ's, which moves the kernel's messages and runs no Python, is not watched:
        # the spinner named as one is neither counted nor ready
        with open(f"/proc/self/task/{spinner.native_id}/comm", "w") as comm:
            comm.write("ZMQbg/IO/0")
        seen = set()
        for _ in range(50):
            assert spinner.native_id not in others.counts()
            seen |= others.ready
            time.sleep(0.002)
        assert spinner.native_id not in seen, seen
    finally:
        stop.set(), idle.set()
        spinner.join(), sleeper.join()


@pytest.mark.slow
def test_code_from_a_zip_archive_on_a_relative_path_is_recorded():
    """The notebook writes its answer into a zip archive in the kernel's folder and imports it through a relative
    ``sys.path`` entry (the module's file name is relative then): recorded as code no cell shows."""
    cell = ("import sys, zipfile\n"
            "with zipfile.ZipFile('hidden.zip', 'w') as z:\n"
            "    z.writestr('hidden_answer.py', 'def answer():\\n    return 45\\n')\n"
            "sys.path.insert(0, 'hidden.zip')\n"
            "from hidden_answer import answer\n")
    outcomes, tripped, _ = load_outcomes(_graded(cell)["text"], _cases(), TOKEN)
    assert outcomes == [[("value", 45)]]
    assert any("module hidden_answer" in t for t in tripped), tripped


@pytest.mark.slow
def test_an_honest_call_that_prints_wakes_no_thread():
    """What the notebook and its graded call print goes nowhere while the calls run: no thread wakes to send it, so an
    honest learner's print is not work on another thread."""
    cell = ("import logging, sys, warnings\n"
            "logging.basicConfig(level=logging.INFO)\n"  # (its handler keeps the kernel's own stream)
            "print('x' * 100_000)\n"
            "def answer():\n"
            "    for n in range(10):\n"  # (10 flushes of 10 s each: past the run's 90 s, were they waiting)
            "        logging.getLogger('mine').info('step %d', n)\n"
            "    print('thinking', flush=True)\n"
            "    print('to stderr', file=sys.stderr, flush=True)\n"
            "    warnings.warn('careful')\n"
            "    import os\n"
            "    os.write(1, b'raw bytes')\n"
            "    return 45\n")
    outcomes, tripped, _ = load_outcomes(_graded(cell)["text"], _cases(), TOKEN)
    assert outcomes == [[("value", 45)]] and tripped == []


@pytest.mark.slow
def test_a_thread_alive_when_the_graded_calls_begin_is_counted():
    honest = _graded("def answer():\n    return 1\n")
    assert honest["threads"] == 0 and honest["status"] == "ok"
    thread = ("import threading, time\n"
              "threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n"
              "def answer():\n    return 1\n")
    assert _graded(thread)["threads"] >= 1
    # tqdm's monitor, which a progress bar starts and leaves asleep, is tqdm's: stopped before the count (audit H)
    for module in ("tqdm", "tqdm.auto"):
        bars = f"from {module} import tqdm\nfor i in tqdm(range(3)):\n    pass\ndef answer():\n    return 1\n"
        assert _graded(bars)["threads"] == 0, module


# Code of the notebook's set to run once the driver has written its results, each rewriting them to claim 45 where
# the graded call answered 1: a hook IPython runs after every cell (matplotlib's inline backend draws figures there),
# a function handed during the call to the kernel's output thread (it waits in the driver until the calls end), a
# callback on the kernel's own event loop, a signal handler on a timer, a replaced ``os.close``.
AFTER = {
    "a hook IPython runs after each cell": "get_ipython().events.register('post_execute', rewrite)\n",
    "a function waiting on the output thread": ("OUT = sys.stdout\n"  # (during the calls, output goes nowhere)
                                                "def answer():\n    OUT.pub_thread.schedule(rewrite)\n    return 1\n"),
    "a callback on the kernel's event loop": ("import asyncio\n"
                                              "def answer():\n"
                                              "    asyncio.get_event_loop().call_soon_threadsafe(rewrite)\n"
                                              "    return 1\n"),
    "a signal handler on a timer": ("import signal\n"
                                    "signal.signal(signal.SIGALRM, lambda *_: rewrite())\n"
                                    "def answer():\n"
                                    "    signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)\n"
                                    "    return 1\n"),
    "a replaced os.close": ("_close = os.close\n"
                            "def close(fd):\n    _close(fd)\n    rewrite()\n"
                            "os.close = close\n"),
}
REWRITE = ("import glob, json, os, sys\n"
           "def answer():\n    return 1\n"
           "def rewrite(*_):\n"
           "    for path in glob.glob('../graded-*.json'):\n"  # (the kernel runs in the folder's work/)
           "        with open(path) as f:\n"
           "            results = json.load(f)\n"
           "        results['outcomes'] = [[{'value': 45}]]\n"
           "        with open(path, 'w') as f:\n"
           "            json.dump(results, f)\n")


@pytest.mark.slow
@pytest.mark.parametrize("route", sorted(AFTER))
def test_no_code_of_the_notebooks_runs_after_the_results_are_written(route):
    """The driver stops the kernel the moment its results are written, and the supervisor reads them only from a
    kernel stopped so: what the notebook set to run after them never runs."""
    graded = _graded(REWRITE, AFTER[route])
    outcomes, _, _ = load_outcomes(graded["text"], _cases(), TOKEN)
    assert outcomes == [[("value", 1)]], (route, outcomes)


@pytest.mark.slow
def test_no_results_are_read_from_a_driver_that_did_not_stop_the_kernel():
    """The notebook replaced the function the driver writes with: the driver refuses it, writes nothing and does not
    stop the kernel; nothing is read back."""
    replaced = ("import posix\n_write = posix.write\n"
                "def write(fd, data):\n    return _write(fd, data.replace(b'1', b'4'))\n"
                "posix.write = write\n"
                "def answer():\n    return 1\n")
    graded = _graded(replaced)
    assert graded["status"] == "error" and graded["text"] is None, graded


def test_results_without_the_runs_token_are_refused():
    text = '{"token": "guessed", "outcomes": [[{"value": 1}]], "tripped": [], "refused": []}'
    with pytest.raises(Malformed, match="token"):
        load_outcomes(text, _cases(), TOKEN)
    assert load_outcomes(text.replace("guessed", TOKEN), _cases(), TOKEN)[0] == [[("value", 1)]]


def test_a_live_learner_thread_sends_the_notebook_to_review():
    expected = Expected(_cases(), outcomes=[[("value", 1)]])
    text = f'{{"token": "{TOKEN}", "outcomes": [[{{"value": 1}}]], "tripped": [], "refused": []}}'
    spec = SimpleNamespace(atol=0, rtol=0, rounding=None)
    reply = {"ended": "complete", "cells": {}, "graded": {"status": "ok", "text": text, "threads": 0}}
    assert judge_graded([], reply, [], Limits(), expected, spec, TOKEN) == ("pass", "")
    reply["graded"]["threads"] = 1
    verdict, message = judge_graded([], reply, [], Limits(), expected, spec, TOKEN)
    assert verdict == REVIEW and "thread" in message
