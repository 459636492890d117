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

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from pagedlab.authoring.execute import KERNEL_ENV
from pagedlab.grading.procs import Limits

# System folders the kernel needs (the dynamic loader, fonts, CA certificates); symlinks are re-created as symlinks.
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Only what a Python process needs from /etc: not the whole folder (it holds password hashes).
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf", "localtime", "ssl",
        "ca-certificates", "fonts", "alternatives", "mime.types", "hosts", "resolv.conf")
_FOLDERS = ("work", "home", "ipython", "mpl", "tmp", "jupyter", "conn")


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
    """Copy the installed ``pagedlab`` (with ``pagedlab.kernels``, which may live elsewhere) into ``site``.

    The grading and authoring tools are left out: a learner's notebook imports neither.
    """
    import pagedlab  # noqa: F401  (find_spec of a subpackage needs the package imported)

    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    src = Path(next(iter(importlib.util.find_spec("pagedlab").submodule_search_locations)))
    shutil.copytree(src, site / "pagedlab",
                    ignore=lambda d, names: set(skip(d, names)) | ({"grading", "authoring"} if Path(d) == src else set()))
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
        self._site_files = _read_tree(self.site)  # kept in memory: the snapshot is restored from it if changed
        self.site_sha256 = _tree_hash(self._site_files)
        _read_only(self.site)
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

    def site_intact(self) -> bool:
        """True when the kernels' ``pagedlab`` snapshot is as taken; else it is restored and False returned."""
        if _tree_hash(_read_tree(self.site)) == self.site_sha256:
            return True
        for root, dirs, _ in os.walk(self.site):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        os.chmod(self.site, 0o755)
        shutil.rmtree(self.site, ignore_errors=True)
        for rel, data in self._site_files.items():
            (self.site / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.site / rel).write_bytes(data)
        _read_only(self.site)
        return False

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
        for root, dirs, _ in os.walk(self.site):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        if self.site.exists():
            os.chmod(self.site, 0o755)
        shutil.rmtree(self.root, ignore_errors=True)


def _read_tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by relative path (symbolic links are read as what they point to)."""
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root, name)
            try:
                out[str(path.relative_to(folder))] = path.read_bytes()
            except OSError:
                out[str(path.relative_to(folder))] = b"<unreadable>"
    return out


def _tree_hash(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    return h.hexdigest()


def _read_only(folder: Path) -> None:
    for root, dirs, files in os.walk(folder, topdown=False):
        for name in files:
            os.chmod(os.path.join(root, name), 0o444)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o555)
    os.chmod(folder, 0o555)
