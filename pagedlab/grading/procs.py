"""Per-notebook limits and process control: what the grader and the per-notebook supervisor share.

This module imports nothing from ``pagedlab``: the supervisor (:mod:`pagedlab.grading.run`) runs it from a copy of
its source the grader read before any learner code ran, never from a file on disk.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What a learner cannot stretch; every figure is per notebook."""

    wall_s: int = 300  # kernel start and every cell together
    max_cells: int = 400  # cells of every kind
    max_output_bytes: int = 50_000_000  # all outputs a notebook prints or displays (round 38z39: 7.9 MB, an honest print)
    max_file_bytes: int = 20_000_000  # a submitted notebook larger than this is not read
    memory_bytes: int = 8 << 30  # address space of each process
    written_file_bytes: int = 256 << 20  # largest file a process may write


def apply_limits(limits: Limits) -> None:
    """Apply ``limits`` to this process (the kernel's launcher), so every process it starts inherits them."""
    cpu = limits.wall_s * (os.cpu_count() or 1)
    for which, value in ((resource.RLIMIT_CPU, cpu), (resource.RLIMIT_AS, limits.memory_bytes),
                         (resource.RLIMIT_FSIZE, limits.written_file_bytes)):
        _lower(which, value)
    if os.getuid() != 0:  # root is exempt from RLIMIT_NPROC; for others it counts all the user's processes
        _lower(resource.RLIMIT_NPROC, _user_tasks() + 1024)


def _lower(which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def _user_tasks() -> int:
    """Threads of every process of this user (what RLIMIT_NPROC counts)."""
    uid, n = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    n += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                pass
    return n


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children...)."""
    kids, out, todo = _children(), [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def threads_below(pid: int) -> int:
    """Threads of every process below ``pid`` (the operating system's count: none can hide from it)."""
    n = 0
    for p in descendants(pid):
        try:
            n += len(os.listdir(f"/proc/{p}/task"))
        except OSError:
            pass
    return n


def kill_tree(pid: int, keep: frozenset[int] = frozenset()) -> None:
    """Stop, then kill, ``pid`` and every process below it (except ``keep``), until none is left."""
    for _ in range(20):
        victims = [p for p in descendants(pid) if p not in keep] + ([pid] if pid != os.getpid() else [])
        alive = [p for p in victims if _signal(p, signal.SIGSTOP)]  # frozen processes cannot fork away
        for p in alive:
            _signal(p, signal.SIGKILL)
        if not [p for p in descendants(pid) if p not in keep and state(p) not in ("Z", None)]:
            return
        time.sleep(0.05)


def _signal(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def state(pid: int) -> str | None:
    """The process's state letter (``R``, ``S``, ``T`` stopped, ``Z``...), or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return None


def adopt_orphans(on: bool) -> bool:
    """Make this process adopt orphaned descendants (Linux), so a learner's detached process stays findable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, int(on), 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def reap() -> None:
    """Collect the exit status of adopted processes that were killed (they would stay zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
