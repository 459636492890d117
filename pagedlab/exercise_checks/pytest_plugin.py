"""A pytest plugin for checking exercise notebooks with nbval: a notebook kernel that dies fails at once, in one line.

nbval waits for a cell's reply until ``--nbval-cell-timeout``, even when the kernel process is already gone (a
segfault, the out-of-memory killer, ``os._exit``), and then reports a timeout. With this plugin
(``pytest -p pagedlab.exercise_checks.pytest_plugin --nbval-lax ...``) the wait polls the kernel every second, and
a dead kernel fails its cell with one line saying so; the cells after it are marked as expected to fail, as nbval
does after a timeout.
"""

from __future__ import annotations

import time
from queue import Empty

import pytest
from nbval.kernel import RunningKernel


class KernelDied(RuntimeError):
    """The notebook's kernel process ended while a cell was running."""


_await_reply = RunningKernel.await_reply
POLL_S = 1.0


def _await_reply_or_death(self: RunningKernel, msg_id, timeout=None):
    """``RunningKernel.await_reply``, polling the kernel's process each second: raises :class:`KernelDied`."""
    deadline = None if timeout is None else time.monotonic() + float(timeout)
    while True:
        left = POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic()))
        try:
            return _await_reply(self, msg_id, timeout=left)
        except Empty:
            if not self.is_alive():
                raise KernelDied("the notebook's kernel died while running this cell (a crash: a Triton kernel "
                                 "reading or writing outside its tensors, running out of memory, or os._exit); "
                                 "run the notebook in Jupyter to see which line") from None
            if deadline is not None and time.monotonic() >= deadline:
                raise


def pytest_configure(config) -> None:
    RunningKernel.await_reply = _await_reply_or_death


def pytest_unconfigure(config) -> None:
    RunningKernel.await_reply = _await_reply


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.excinfo is not None and call.excinfo.errisinstance(KernelDied):
        report = outcome.get_result()
        report.longrepr = f"{item.name}: {call.excinfo.value}"
        item.parent.timed_out = True    # nbval marks the later cells as expected to fail
