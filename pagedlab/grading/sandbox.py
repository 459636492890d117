"""Where one learner's notebook runs while it is graded: a fresh folder, a scrubbed environment, a sandbox.

Learner code runs in the grading kernel, so the grader keeps that kernel away from everything that is not
the learner's own notebook:

* every notebook gets a fresh folder (``work/`` holding only its own file, and its own HOME, IPYTHONDIR,
  MPLCONFIGDIR, TMPDIR and Jupyter folders) inside a grader-private temporary folder;
* the kernel's environment is built from nothing (no variable of the grader's is passed on), and it imports
  ``pagedlab`` from a read-only snapshot taken before any learner code ran, so ``pagedlab.__file__`` does not
  lead to the repository, its ``solutions/`` or ``exercises/``;
* where bubblewrap works, the kernel runs inside it: the system and the Python environment read-only, no
  network, its own PID namespace (every process it starts dies with it), nothing of the host's file system but
  those and its own folder; the kernel talks to the grader over Unix sockets in that folder;
* resource limits (CPU seconds, address space, file size, and the number of processes where the kernel
  enforces it: not for root) are set on the process that starts the kernel and inherited by everything in it.

Without bubblewrap the rest still applies, but the kernel can then read and write whatever the grader's user
can: see the instructors' guide in the README.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from pagedlab.authoring.execute import KERNEL_ENV

# System folders the kernel needs (the dynamic loader, fonts, CA certificates); symlinks are re-created as symlinks.
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Only what a Python process needs from /etc: not the whole folder (it holds password hashes).
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf", "localtime", "ssl",
        "ca-certificates", "fonts", "alternatives", "mime.types", "hosts", "resolv.conf")
_FOLDERS = ("work", "home", "ipython", "mpl", "tmp", "jupyter", "conn")


@dataclass(frozen=True)
class Limits:
    """What a learner cannot stretch; every figure is per notebook."""

    wall_s: int = 300  # kernel start and every cell together
    max_code_cells: int = 400
    max_output_bytes: int = 5_000_000  # all outputs a notebook prints or displays
    max_file_bytes: int = 20_000_000  # a submitted notebook larger than this is not read
    memory_bytes: int = 8 << 30  # address space of each process
    written_file_bytes: int = 256 << 20  # largest file a process may write


def bwrap_problem(command: list[str], env: dict[str, str]) -> str | None:
    """Why ``command`` (a bubblewrap command line) cannot run here, or None when it runs and exits 0."""
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{type(e).__name__}: {e}"
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        return lines[-1] if lines else f"exit status {proc.returncode}"
    return None


def _python_paths() -> list[Path]:
    """Folders the kernel's Python needs: prefixes, its ``sys.path`` (as a fresh interpreter sees it), executable."""
    probe = subprocess.run([sys.executable, "-s", "-c", "import json, sys; print(json.dumps(sys.path[1:]))"],
                           capture_output=True, text=True, cwd="/", check=True, env={"PATH": os.defpath})
    paths = [Path(p) for p in json.loads(probe.stdout) if p]
    paths += [Path(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}]
    paths.append(Path(os.path.realpath(sys.executable)).parent.parent)
    out = []
    for p in paths:
        for q in (p.absolute(), Path(os.path.realpath(p))):
            if q.exists() and q not in out:
                out.append(q)
    return out


def _outermost(paths: list[Path]) -> list[Path]:
    """``paths`` without those inside another of them, sorted."""
    return sorted(p for p in set(paths) if not any(q != p and q in p.parents for q in paths))


def _snapshot_package(site: Path) -> None:
    """Copy the installed ``pagedlab`` (with ``pagedlab.kernels``, which may live elsewhere) into ``site``."""
    import pagedlab  # noqa: F401  (find_spec of a subpackage needs the package imported)

    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    src = Path(next(iter(importlib.util.find_spec("pagedlab").submodule_search_locations)))
    shutil.copytree(src, site / "pagedlab", ignore=skip)
    kernels = importlib.util.find_spec("pagedlab.kernels")
    if kernels is not None and not (site / "pagedlab" / "kernels").exists():
        shutil.copytree(Path(next(iter(kernels.submodule_search_locations))), site / "pagedlab" / "kernels",
                        ignore=skip)


class Sandbox:
    """The grader-private folder all notebooks run under, and how one kernel is started there.

    Args:
        protected: folders no kernel may see (the repository's ``exercises/`` and ``solutions/``, the
            submissions, the output folder); an environment folder that contains one is not mounted.
        use_bwrap: False to run without bubblewrap even where it works.
        limits: the per-notebook limits.

    Attributes:
        bwrap: the bubblewrap executable in use, or None; ``note`` says why not, when it is None.
    """

    def __init__(self, protected: list[Path], use_bwrap: bool = True, limits: Limits = Limits()):
        self.limits = limits
        self.root = Path(tempfile.mkdtemp(prefix="pagedlab-grade-"))  # mode 0700
        self.site = self.root / "site"
        _snapshot_package(self.site)
        protected = [Path(os.path.realpath(p)) for p in protected] + [self.root]
        self.mounts, self.skipped = [], []
        for p in _outermost(_python_paths()):
            if any(p == q or p in q.parents for q in protected):
                self.skipped.append(p)  # e.g. a repository root on sys.path: the snapshot replaces it
            else:
                self.mounts.append(p)
        self.bwrap, self.note = None, "bubblewrap disabled (--no-sandbox or PAGEDLAB_GRADE_SANDBOX=0)"
        if use_bwrap:
            self.bwrap = shutil.which("bwrap")
            if self.bwrap is None:
                self.note = "bubblewrap (bwrap) is not installed"
            else:
                folder = self.new_folder("probe")
                probe = self.kernel_command(folder, [sys.executable, "-s", "-c", "import pagedlab, ipykernel"])
                problem = bwrap_problem(probe, self.environment(folder))
                if problem:
                    self.bwrap, self.note = None, f"bubblewrap cannot create a sandbox here ({problem})"
                shutil.rmtree(folder, ignore_errors=True)

    def describe(self) -> str:
        """One line for the start of a run: how notebooks are isolated."""
        if self.bwrap:
            return "each notebook runs in a bubblewrap sandbox (read-only system, no network, own PID namespace)"
        return (f"WARNING: {self.note}: notebooks run without a sandbox (own folder, HOME and environment only; "
                "learner code can read and write what this user can)")

    def new_folder(self, name: str) -> Path:
        """A fresh folder for one notebook, with its sub-folders (``work``, ``home``, ``tmp``...)."""
        folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.root))
        for sub in _FOLDERS:
            (folder / sub).mkdir()
        return folder

    def environment(self, folder: Path) -> dict[str, str]:
        """The kernel's whole environment: nothing of the grader's is passed on."""
        return {
            **KERNEL_ENV,
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": str(folder / "home"), "IPYTHONDIR": str(folder / "ipython"),
            "MPLCONFIGDIR": str(folder / "mpl"), "TMPDIR": str(folder / "tmp"),
            "JUPYTER_CONFIG_DIR": str(folder / "jupyter"), "JUPYTER_DATA_DIR": str(folder / "jupyter"),
            "JUPYTER_RUNTIME_DIR": str(folder / "conn"), "JUPYTER_PLATFORM_DIRS": "1",
            "PYTHONPATH": str(self.site), "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1",
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "1",
        }

    def kernel_command(self, folder: Path, argv: list[str]) -> list[str]:
        """``argv`` as it runs for the notebook in ``folder``: inside bubblewrap when it is in use."""
        if not self.bwrap:
            return argv
        cmd = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
               "--hostname", "grading",
               # ipykernel exits when its parent is not the process named here, and outside the PID namespace
               # that is no process the kernel can see; bubblewrap's --die-with-parent does that job instead.
               "--unsetenv", "JPY_PARENT_PID", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        for path in _SYSTEM:
            if os.path.islink(path):
                cmd += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                cmd += ["--ro-bind", path, path]
        for name in _ETC:
            cmd += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        cmd += ["--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
        for path in self.mounts + [self.site]:
            cmd += ["--ro-bind", str(path), str(path)]
        cmd += ["--bind", str(folder), str(folder), "--chdir", str(folder / "work"), "--"]
        return cmd + argv

    def job(self, folder: Path) -> dict:
        """What the per-notebook supervisor (:mod:`pagedlab.grading.run`) needs to start the kernel."""
        return {"folder": str(folder), "env": self.environment(folder), "limits": asdict(self.limits),
                "command": self.kernel_command(folder, [sys.executable, "-s", "-m", "ipykernel_launcher",
                                                        "-f", "{connection_file}"]),
                "sandboxed": bool(self.bwrap), "site": str(self.site)}

    def close(self) -> None:
        """Remove every notebook folder (call after every learner process is gone)."""
        shutil.rmtree(self.root, ignore_errors=True)


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


def kill_tree(pid: int, keep: frozenset[int] = frozenset()) -> None:
    """Stop, then kill, ``pid`` and every process below it (except ``keep``), until none is left."""
    for _ in range(20):
        victims = [p for p in descendants(pid) if p not in keep] + ([pid] if pid != os.getpid() else [])
        alive = [p for p in victims if _signal(p, signal.SIGSTOP)]  # frozen processes cannot fork away
        for p in alive:
            _signal(p, signal.SIGKILL)
        if not [p for p in descendants(pid) if p not in keep and _state(p) not in ("Z", None)]:
            return
        time.sleep(0.05)


def _signal(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _state(pid: int) -> str | None:
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
