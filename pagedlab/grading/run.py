"""Run one restored notebook in a sandboxed kernel, then its graded calls; report what came back.

The grader (:mod:`pagedlab.grading.grade`) starts this module once per notebook, in its own process outside the
sandbox (``python -I``, from the source the grader read at start-up, never from a file on disk), and sends it a
job (JSON on stdin): the restored notebook, the sandbox's kernel command, environment and limits
(:mod:`pagedlab.grading.sandbox`), the graded calls (with the token their results must carry), the kernel-side
harness's source and a one-time token for its own answer. Nothing of the graded calls reaches the kernel before its
last cell has run; then the driver cell (:mod:`pagedlab.grading.harness`) carries them in, writes its results to a
file name drawn then and stops the kernel at once; they are read only from a kernel found stopped (a reply from that
cell means the driver failed). The threads of every process under this one are counted before it runs (a learner's
thread alive then could rewrite the results before they are written). It answers with JSON on stdout, the token echoed: for each code cell that ran, the ``status`` of the kernel's ``execute_reply`` (``ok``, ``error``,
``aborted``; ``error`` whenever the cell sent an ``error`` message on iopub, whatever the reply said) with the
error's name and first line; why the run ended (``complete``, ``timeout``, ``dead kernel``, ``output cap``, ``no
kernel``); what a probe of the kernel's execution machinery found after the last cell; and the text the graded
calls' driver wrote (:mod:`pagedlab.grading.calls`), untouched (the grader parses and judges it), with how many
threads more than the fresh kernel's were alive when it began.

Nothing here is credit: the kernel's replies only explain failures; credit comes from the graded calls'
outcomes, compared by the grader. The kernel's own stdout and stderr go to a log file in the notebook's folder,
never to this process's stdout.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import hashlib
import json
import os
import queue
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from traitlets import List, Type, Unicode

from pagedlab.grading.calls import MAX_OUTCOME_BYTES
from pagedlab.grading.harness import driver_cell, sums_cell, watch_cell
from pagedlab.grading.procs import (Limits, adopt_orphans, apply_limits, descendants, kill_tree, reap, state,
                                    threads_below)

# Run after the last cell, silently. It looks for what hides a failure from the grader: a replaced traceback
# display, custom exception handlers, input or AST transformers, event callbacks or builtins defined by
# notebook code, a trace or profile function. Learner code could also fool this probe; it is a second net
# under the static review of the learner's cells (pagedlab.grading.review), not a proof.
PROBE = r"""
def _pagedlab_probe():
    import builtins, sys
    ip = get_ipython()
    ours = ("IPython", "ipykernel", "matplotlib", "matplotlib_inline", "ipywidgets", "comm", "pagedlab", "traitlets")
    def origin(f):
        return getattr(f, "__module__", None) or getattr(getattr(f, "func", None), "__module__", None) or "?"
    found = []
    for name in ("_showtraceback", "showtraceback", "showsyntaxerror", "run_cell", "run_ast_nodes", "run_code"):
        f = vars(ip).get(name)  # ipykernel binds some of these per instance: those come from its modules
        if f is not None and not origin(getattr(f, "__func__", f)).startswith(ours):
            found.append(f"the shell's {name} was replaced")
    if ip.custom_exceptions:
        found.append("a custom exception handler was set (set_custom_exc)")
    for attr in ("input_transformers_cleanup", "input_transformers_post", "ast_transformers"):
        found += [f"{attr} holds {origin(t)}.{getattr(t, '__name__', type(t).__name__)}"
                  for t in getattr(ip, attr, []) if not origin(t).startswith(ours)]
    for event, callbacks in ip.events.callbacks.items():
        found += [f"a {event} callback from {origin(c)}" for c in callbacks if not origin(c).startswith(ours)]
    if sys.gettrace() is not None or sys.getprofile() is not None:
        found.append("a trace or profile function is set")
    found += [f"builtins.{k} was defined by notebook code" for k, v in vars(builtins).items()
              if origin(v) == "__main__"]
    return found
_pagedlab_found = _pagedlab_probe()
"""


class QuietClient(AsyncKernelClient):
    """A kernel client that sends no heartbeats: the kernel's threads stay still while the graded calls run, so
    that one that runs there is the notebook's doing (:class:`pagedlab.grading.harness.Others`)."""

    def start_channels(self, *args, hb: bool = False, **kwargs) -> None:
        super().start_channels(*args, hb=hb, **kwargs)


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager that starts the kernel with the sandbox's command line, over Unix sockets."""

    launch_command = List(Unicode(), help="argv with {connection_file} where the connection file goes")
    client_factory = Type(QuietClient, klass=AsyncKernelClient)

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        cmd = [a.replace("{connection_file}", self.connection_file) for a in self.launch_command]
        return cmd + list(extra_arguments or [])


class GradingClient(NotebookClient):
    """nbclient's client, keeping no outputs: it only counts their bytes against the output cap."""

    def __init__(self, *args, max_output_bytes: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_output_bytes = max_output_bytes
        self.output_bytes = 0
        self.replies: dict[int, dict] = {}
        self.errors: dict[int, dict] = {}  # the first iopub ``error`` message of each cell, whatever its reply said
        self.on_cell_executed = self._record

    def _record(self, cell, cell_index, execute_reply):
        self.replies[cell_index] = execute_reply["content"] if execute_reply else {"status": "no reply"}

    def output(self, outs, msg, display_id, cell_index):
        self.output_bytes += printed_bytes(msg.get("content", {}))
        if msg.get("msg_type") == "error":
            self.errors.setdefault(cell_index, msg.get("content", {}))
        return None


def printed_bytes(content: dict) -> int:
    """UTF-8 bytes of what an output message shows: a stream's text, a display's data, an error's traceback."""
    def size(v) -> int:
        if isinstance(v, str):
            return len(v.encode("utf-8", errors="replace"))
        if isinstance(v, dict):
            return sum(size(x) for x in v.values())
        if isinstance(v, list):
            return sum(size(x) for x in v)
        return 0
    if not isinstance(content, dict):
        return 0
    return sum(size(content.get(key)) for key in ("text", "data", "traceback", "ename", "evalue"))


def _failing_line(reply: dict) -> int:
    """The line of the cell's own code that raised, from IPython's traceback (``Cell In[7], line 3``, its first frame:
    the cell's); 0 where it names none (a syntax error, a failure without a traceback): every line counts then."""
    if reply.get("ename") in ("SyntaxError", "IndentationError", "TabError"):
        return 0
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", "\n".join(map(str, reply.get("traceback") or [])))
    found = re.search(r"Cell In\[\d+\], line (\d+)|<cell line: (\d+)>", text)
    return int(found.group(1) or found.group(2)) if found else 0


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return lines[0][:300] if lines else ""


async def _start(job: dict, nb, work: Path, folder: Path, deadline: float) -> GradingClient:
    """Start the kernel; one retry when it fails to start (a kernel can die before its first reply)."""
    problem = ""
    for attempt in (1, 2):
        conn = folder / "conn"
        km = SandboxedKernelManager(launch_command=job["command"], transport="ipc", ip=str(conn / f"k{attempt}"),
                                    connection_file=str(conn / f"kernel{attempt}.json"), kernel_name="python3")
        client = GradingClient(nb, km=km, allow_errors=True, store_widget_state=False, record_timing=False,
                               skip_cells_with_tag="\0",
                               startup_timeout=int(max(5, min(90, deadline - time.monotonic()))),
                               timeout_func=lambda cell: max(1, int(deadline - time.monotonic())),
                               interrupt_on_timeout=False, shutdown_kernel="immediate",
                               max_output_bytes=job["limits"]["max_output_bytes"])
        log = open(folder / f"kernel{attempt}.log", "wb")
        try:
            await client.async_start_new_kernel(env=job["env"], cwd=str(work), stdout=log, stderr=log,
                                                stdin=subprocess.DEVNULL)
            await client.async_start_new_kernel_client()
            return client
        except Exception as e:  # a kernel that died or never answered: try once more
            problem = f"{type(e).__name__}: {_first_line(e) or 'no message'}"
            await _stop(client)
        finally:
            log.close()
    raise RuntimeError(f"the kernel did not start twice ({problem})")


async def _stop(client: GradingClient) -> None:
    try:
        if client.km is not None:
            await client._async_cleanup_kernel()
    except Exception:  # the kernel is already gone; the process group and namespace are killed anyway
        pass


async def run(job: dict) -> dict:
    """Execute the job's notebook; return what the kernel replied (see the module docstring)."""
    limits = Limits(**job["limits"])
    deadline = time.monotonic() + limits.wall_s
    folder = Path(job["folder"])
    work = folder / "work"
    nb = nbformat.from_dict(job["notebook"])
    (work / job["filename"]).write_text(nbformat.writes(nb), encoding="utf-8")
    apply_limits(limits)
    try:
        client = await _start(job, nb, work, folder, deadline)
    except RuntimeError as e:
        return {"ended": "no kernel", "detail": str(e), "cells": {}}
    ended, at, cells, found, graded = "complete", None, {}, None, None
    # The fresh kernel's own threads (ipykernel's, its sandbox's). ipykernel starts three more the first time a cell
    # prints a lot (a ZeroMQ context and its helper): a silent cell prints that much to the kernel's own stream first,
    # so that an honest learner's long print is not counted as the learner's threads.
    try:
        await _reply(client, client.kc.execute("import sys as _s; print(' ' * 200_000, end=''); _s.stdout.flush()",
                                               silent=True, store_history=False))
        if job.get("graded"):  # (the graded calls' sums: :func:`pagedlab.grading.harness.version_sum`)
            await _reply(client, client.kc.execute(sums_cell(job["harness"]), silent=True, store_history=False))
    except DeadKernelError:
        await _stop(client)
        return {"ended": "no kernel", "detail": "the kernel died before the notebook's first cell", "cells": {}}
    fresh, kernel = threads_below(os.getpid()), _kernel(os.getpid())
    try:
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if time.monotonic() >= deadline:
                ended, at = "timeout", index
                break
            sha = hashlib.sha256(cell.source.encode()).hexdigest()
            try:
                if index == job.get("watch_at"):  # (silent: its reply is no cell's; what it missed, the driver says)
                    await _reply(client, client.kc.execute(watch_cell(job["harness"], job["watch"]), silent=True,
                                                           store_history=False))
                await client.async_execute_cell(cell, index)
            except CellTimeoutError:
                ended, at = "timeout", index
                break
            except DeadKernelError:
                ended, at = "dead kernel", index
                break
            reply = client.replies.get(index, {"status": "skipped"})
            if index in client.errors:  # an error on iopub is a failure whatever the reply says
                reply = {**client.errors[index], "status": "error"}
            cells[index] = {"status": reply.get("status", "?"), "sha256": sha, "ename": str(reply.get("ename", "")),
                            "evalue": _first_line(reply.get("evalue", "")), "line": _failing_line(reply)}
            if client.output_bytes > limits.max_output_bytes:
                ended, at = "output cap", index
                break
        if ended == "complete":
            found = await _probe(client, deadline)
        if ended == "complete" and job.get("graded") is not None:
            graded = await _graded_calls(client, job, folder, deadline, fresh, kernel)
    finally:
        await _stop(client)
    return {"ended": ended, "at": at, "cells": cells, "probe": found, "output_bytes": client.output_bytes,
            "graded": graded}


_QUIET_TQDM = """\
def _quiet_tqdm():
    import sys
    todo = [getattr(sys.modules.get("tqdm.std"), "tqdm", None)]
    while todo:  # (tqdm.auto's bars are a subclass's, which keeps a monitor of its own)
        bar = todo.pop()
        if isinstance(bar, type):
            bar.monitor_interval = 0
            monitor, bar.monitor = bar.__dict__.get("monitor"), None
            if monitor is not None:
                monitor.exit()
            todo += bar.__subclasses__()
_quiet_tqdm()
del _quiet_tqdm
"""


async def _graded_calls(client: GradingClient, job: dict, folder: Path, deadline: float, fresh: int,
                        kernel: int | None) -> dict:
    """Run the driver in the kernel (process ``kernel``); what it wrote (untrusted text, parsed by the grader) if it
    stopped the kernel when it had written it."""
    # tqdm's monitor, a thread the first progress bar starts and leaves asleep (audit H: an honest scratch loop over
    # tqdm sent the notebook to review): stopped, as tqdm stops it when its last bar closes, and not started again,
    # before the threads are counted. A thread it does not stop is counted.
    with contextlib.suppress(Exception):  # (a learner's tqdm that hangs here leaves the driver no time: a fail)
        await asyncio.wait_for(_reply(client, client.kc.execute(_QUIET_TQDM, silent=True, store_history=False)),
                               timeout=max(1.0, min(10.0, deadline - time.monotonic())))
    threads = threads_below(os.getpid()) - fresh
    path_out = folder / f"graded-{secrets.token_hex(16)}.json"  # a name no learner cell could know
    msg_id = client.kc.execute(driver_cell(job["harness"], job["graded"], str(path_out)), silent=True,
                               store_history=False)
    try:
        status = await asyncio.wait_for(_driver_end(client, msg_id, kernel),
                                        timeout=max(1.0, deadline - time.monotonic()))
    except asyncio.TimeoutError:
        status = "timeout"
    except DeadKernelError:  # a crash while the graded calls ran (a kernel writing out of bounds, os._exit)
        status = "dead kernel"
    except Exception as e:
        status = f"no reply ({type(e).__name__})"
    text = None
    if status == "ok":  # a driver that failed (SystemExit, a broken kernel) wrote nothing the grader accepts
        try:
            fd = os.open(path_out, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as f:
                text = f.read(MAX_OUTCOME_BYTES + 1).decode("utf-8", errors="replace")
        except OSError:
            pass
    return {"status": status, "text": text, "threads": max(0, threads)}


async def _probe(client: GradingClient, deadline: float) -> list[str]:
    """Run :data:`PROBE` silently; what it found, or why it could not tell."""
    msg_id = client.kc.execute(PROBE, silent=True, store_history=False,
                               user_expressions={"found": "_pagedlab_found"})
    try:
        reply = await asyncio.wait_for(_reply(client, msg_id), timeout=max(1.0, min(30.0, deadline - time.monotonic())))
    except Exception:
        return ["the machinery probe got no reply"]
    content = reply["content"]
    found = content.get("user_expressions", {}).get("found", {})
    if content.get("status") != "ok" or found.get("status") != "ok":
        return ["the machinery probe could not run (something in the kernel was changed)"]
    try:  # the kernel's answer is untrusted data: parsed, never evaluated
        answer = ast.literal_eval(found["data"]["text/plain"])
        if isinstance(answer, list) and all(isinstance(a, str) for a in answer):
            return [a[:200] for a in answer[:20]]
    except (KeyError, TypeError, ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    return ["the machinery probe's answer was not a list of strings"]


async def _driver_end(client: GradingClient, msg_id: str, kernel: int | None) -> str:
    """``ok`` once the driver has stopped the kernel (process ``kernel``), which it does as soon as its results are
    written (:func:`pagedlab.grading.harness._seal`), so that no code of the notebook's runs after them and before
    they are read here; else its cell's reply, which means it failed (``ok`` then reads ``went on``).

    Raises:
        DeadKernelError: the kernel died first.
    """
    msg = await _reply(client, msg_id, stopped=lambda: kernel is not None and state(kernel) == "T")
    if msg is None:
        return "ok"
    status = str(msg["content"].get("status"))
    return "went on" if status == "ok" else status


def _kernel(parent: int) -> int | None:
    """The kernel's process below ``parent`` (inside the sandbox, it runs under bubblewrap's): the first started
    of those running this Python's ``ipykernel_launcher`` (a process the notebook starts later comes after it)."""
    found = []
    for pid in descendants(parent):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat", "rb") as f:
                start = int(f.read().rsplit(b")", 1)[1].split()[19])
        except (OSError, ValueError, IndexError):
            continue
        if argv[0] == os.fsencode(sys.executable) and b"ipykernel_launcher" in argv:
            found.append((start, pid))
    return min(found)[1] if found else None


async def _reply(client: GradingClient, msg_id: str, stopped=None) -> dict | None:
    """The shell reply to ``msg_id``; None as soon as ``stopped()`` is true (checked every 50 ms).

    Raises:
        DeadKernelError: the kernel died first (a dead kernel never replies: waiting for it would run out the
            notebook's time, and the verdict would read as a timeout).
    """
    while True:
        if stopped is not None and stopped():
            return None
        try:
            msg = await client.kc.get_shell_msg(timeout=1 if stopped is None else 0.05)
        except queue.Empty:
            if client.km is not None and not await client.km.is_alive():
                raise DeadKernelError("the kernel died") from None
            continue
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg


def main(job: dict) -> int:
    adopt_orphans(True)  # a learner's detached process becomes this process's to kill
    try:
        result = asyncio.run(run(job))
    finally:
        kill_tree(os.getpid())
        reap()
    sys.stdout.write(json.dumps({**result, "token": job.get("token")}))
    return 0


if __name__ == "__main__":
    sys.exit(main(json.load(sys.stdin)))
