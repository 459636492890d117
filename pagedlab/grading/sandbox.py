"""Where one learner's notebook runs while it is graded: a fresh folder, a scrubbed environment, a sandbox.

Learner code runs in the grading kernel, so the grader keeps that kernel away from everything that is not
the learner's own notebook:

* every notebook gets a fresh folder (``work/`` holding only its own file, and its own HOME, IPYTHONDIR,
  MPLCONFIGDIR, TMPDIR and Jupyter folders) inside a grader-private temporary folder;
* the kernel's environment is built from nothing (no variable of the grader's is passed on), and it imports
  ``pagedlab`` from a read-only copy written before any learner code ran that holds only the modules the
  exercise's pristine setup needs (:func:`grading_copy`): no exercise check, and none of the modules that compute
  the exercise's answer unless the setup takes a name from them. A route to reference code that is not there
  needs no tripwire; ``pagedlab.__file__`` does not lead to the repository, its ``solutions/`` or ``exercises/``;
* where bubblewrap works, the kernel runs inside it: the system and the Python environment read-only, no
  network, its own PID namespace (every process it starts dies with it), nothing of the host's file system but
  those and its own folder; the kernel talks to the grader over Unix sockets in that folder;
* resource limits (CPU seconds, address space, file size, and the number of processes where the kernel
  enforces it: not for root) are set on the process that starts the kernel and inherited by everything in it.

Without bubblewrap the rest still applies, but the kernel can then read and write whatever the grader's user
can: see the instructors' guide (docs/instructors.md) and the threat model (docs/threat_model.md).
"""

from __future__ import annotations

import ast
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


# ipykernel without the threads that wake on their own: the history writer and the parent poller (the graded calls
# record a thread of the kernel's that runs while they do; see pagedlab.grading.harness.Others).
QUIET = ("--HistoryManager.enabled=False", "--IPKernelApp.parent_handle=0")


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


# A module left out of a grading copy but imported by the exercise's setup (for its check cells, which do not run
# while grading): it imports, and has nothing in it.
_PLACEHOLDER = ('"""Left out of the grading copy of pagedlab: it holds reference code for this exercise."""\n\n\n'
                "def __getattr__(name):\n"
                "    raise AttributeError(f'{__name__}.{name} is not in the grading copy of pagedlab')\n")


def _imports(module: str, source: str) -> set[str]:
    """The pagedlab modules ``source`` (of ``module``, or a notebook cell when ``module`` is "") may import, at any
    depth in it (a function's lazy import too), with ``from pkg import sub`` read as the submodule when it is one."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    package = module if module and _is_package(module) else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names if _spec(f"{base}.{a.name}") is not None}
    return {m for m in found if m == "pagedlab" or m.startswith("pagedlab.")}


def _spec(module: str):
    if not module.startswith("pagedlab"):
        return None
    try:
        return importlib.util.find_spec(module)
    except (ImportError, ValueError, AttributeError):
        return None


def _is_package(module: str) -> bool:
    spec = _spec(module)
    return spec is not None and spec.submodule_search_locations is not None


def grading_copy(setup: list[str], answers: set[str]) -> tuple[dict[str, str | None], list[str]]:
    """Which ``pagedlab`` modules an exercise's grading copy holds: ``{module: source, or None for a placeholder}``,
    and the answer modules it must keep because the setup, or a module it holds, takes a name from them at import.

    Args:
        setup: the pristine setup cells' sources, and ``import m`` for each module of the spec's given constants.
        answers: modules that compute the exercise's answer (its tripwires' modules, every exercise check).
    """
    import pagedlab  # noqa: F401  (find_spec of a subpackage needs the package imported)
    from IPython.core.inputtransformer2 import TransformerManager

    setup = [TransformerManager().transform_cell(cell) for cell in setup]  # %pip and the like, as Python
    kept: set[str] = set()
    while True:
        held: dict[str, str | None] = {}
        todo = [m for cell in setup for root in _imports("", cell) for m in _parents(root)]
        while todo:
            module = todo.pop()
            spec = _spec(module)
            if module in held or spec is None or spec.origin is None:
                continue
            source = Path(spec.origin).read_text(encoding="utf-8")
            blank = module not in kept and any(module == a or module.startswith(a + ".") for a in answers)
            held[module] = None if blank else source
            if not blank:
                todo += [m for found in _imports(module, source) for m in _parents(found)]
        # An answer that the setup or a held module takes a name from at import must be there, or the import fails.
        needed = {m for module, source in [("", "\n".join(setup))] + list(held.items()) if source is not None
                  for m in _needs(module, source) if held.get(m, "") is None}
        if not needed:
            return held, sorted(kept)
        kept |= needed


def _needs(module: str, source: str) -> set[str]:
    """The pagedlab modules whose contents ``source``'s top-level imports take (``from m import f``, ``import m``);
    ``from pkg import sub`` needs only that ``sub`` imports, which a placeholder does, unless ``source`` reads an
    attribute of ``sub`` (the setup's ``ex04b.compile_mine(...)``)."""
    package = module if module and _is_package(module) else module.rpartition(".")[0]
    tree = ast.parse(source)
    found, read = set(), {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                          and isinstance(n.value, ast.Name)}
    for node in tree.body if source else ():
        if isinstance(node, ast.Import):
            found |= {m for a in node.names for m in _parents(a.name)}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if any(_spec(f"{base}.{a.name}") is None for a in node.names):
                found |= set(_parents(base))
            found |= {f"{base}.{a.name}" for a in node.names if (a.asname or a.name) in read}
    return {m for m in found if m == "pagedlab" or m.startswith("pagedlab.")}


def _parents(module: str) -> list[str]:
    """``pagedlab.a.b`` and the packages it is in: ``pagedlab``, ``pagedlab.a``."""
    parts = module.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts) + 1)]


def _write_copy(site: Path, held: dict[str, str | None]) -> None:
    for module, source in held.items():
        path = site.joinpath(*module.split("."))
        path = path / "__init__.py" if _is_package(module) else path.with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_PLACEHOLDER if source is None else source, encoding="utf-8")


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
        self.sites: dict[str, Path] = {}
        self.kept: dict[str, list[str]] = {}  # per copy: the answer modules its setup needs
        self._site_files: dict[str, dict[str, bytes]] = {}  # kept in memory: a copy is restored from it if changed
        protected = [Path(os.path.realpath(p)) for p in protected] + [self.root]
        self.mounts, self.skipped = [], []
        for p in _outermost(_python_paths()):
            if any(p == q or p in q.parents for q in protected):
                self.skipped.append(p)  # e.g. a repository root on sys.path: the copies replace it
            else:
                self.mounts.append(p)
        self.bwrap, self.note = None, "bubblewrap disabled (--no-sandbox or PAGEDLAB_GRADE_SANDBOX=0)"
        if use_bwrap:
            self.bwrap = shutil.which("bwrap")
            if self.bwrap is None:
                self.note = "bubblewrap (bwrap) is not installed"
            else:
                self.add_copy("probe", ["import pagedlab"], set())
                folder = self.new_folder("probe")
                probe = self.kernel_command(folder, [sys.executable, "-s", "-c", "import pagedlab, ipykernel"], "probe")
                problem = bwrap_problem(probe, self.environment(folder, "probe"))
                if problem:
                    self.bwrap, self.note = None, f"bubblewrap cannot create a sandbox here ({problem})"
                shutil.rmtree(folder, ignore_errors=True)

    def add_copy(self, name: str, setup: list[str], answers: set[str]) -> None:
        """Write the read-only copy of ``pagedlab`` that kernels of ``name`` import (see :func:`grading_copy`)."""
        held, self.kept[name] = grading_copy(setup, answers)
        site = self.sites[name] = self.root / f"site-{name}"
        _write_copy(site, held)
        self._site_files[name] = _read_tree(site)
        _read_only(site)

    def site_intact(self, name: str) -> bool:
        """True when the copy ``name`` is as written; else it is restored and False returned."""
        site = self.sites[name]
        if _read_tree(site) == self._site_files[name]:
            return True
        _writable(site)
        shutil.rmtree(site, ignore_errors=True)
        for rel, data in self._site_files[name].items():
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_bytes(data)
        _read_only(site)
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

    def environment(self, folder: Path, name: str) -> dict[str, str]:
        """The kernel's whole environment: nothing of the grader's is passed on."""
        return {
            **KERNEL_ENV,
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": str(folder / "home"), "IPYTHONDIR": str(folder / "ipython"),
            "MPLCONFIGDIR": str(folder / "mpl"), "TMPDIR": str(folder / "tmp"),
            "JUPYTER_CONFIG_DIR": str(folder / "jupyter"), "JUPYTER_DATA_DIR": str(folder / "jupyter"),
            "JUPYTER_RUNTIME_DIR": str(folder / "conn"), "JUPYTER_PLATFORM_DIRS": "1",
            "PYTHONPATH": str(self.sites[name]), "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1",
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "1",
        }

    def kernel_command(self, folder: Path, argv: list[str], copy: str) -> list[str]:
        """``argv`` as it runs for the notebook in ``folder`` with the copy ``copy``: inside bubblewrap when it is
        in use (only that copy mounted: another exercise's copy may hold this one's answer)."""
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
        for path in self.mounts + [self.sites[copy]]:
            cmd += ["--ro-bind", str(path), str(path)]
        cmd += ["--bind", str(folder), str(folder), "--chdir", str(folder / "work"), "--"]
        return cmd + argv

    def job(self, folder: Path, name: str) -> dict:
        """What the per-notebook supervisor (:mod:`pagedlab.grading.run`) needs to start the kernel on copy ``name``."""
        return {"folder": str(folder), "env": self.environment(folder, name), "limits": asdict(self.limits),
                "command": self.kernel_command(folder, [sys.executable, "-s", "-m", "ipykernel_launcher",
                                                        "-f", "{connection_file}", *QUIET], name),
                "sandboxed": bool(self.bwrap)}

    def close(self) -> None:
        """Remove every notebook folder (call after every learner process is gone)."""
        for site in self.sites.values():
            _writable(site)
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


def _writable(folder: Path) -> None:
    for root, dirs, _ in os.walk(folder):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
    if folder.exists():
        os.chmod(folder, 0o755)


def _read_only(folder: Path) -> None:
    for root, dirs, files in os.walk(folder, topdown=False):
        for name in files:
            os.chmod(os.path.join(root, name), 0o444)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o555)
    os.chmod(folder, 0o555)
