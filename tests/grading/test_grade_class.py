"""A synthetic class graded end to end: one learner per known attack, honest learners, careless ones.

Each learner gets the verdict they deserve; no learner's action changes another learner's verdict (the honest
learners are graded after the attackers), the repository's tracked files are unchanged, and a learner's
background process cannot change the grades after they are written. The class is graded twice, by two separate
runs: in the bubblewrap sandbox (where it works) and without it (``--unsafe``). The grader runs from a copy of the
package, so an attack that rewrites the grader's own files changes only that copy.

The ``a`` learners attack the first version of the grader. The ``b`` learners are a second round of attacks on the
version that ran the checks in the learner's kernel and gave credit from the kernel's replies: aliases and dunders,
introspection, faked results, a lied-about reply, reference code, and, without a sandbox, the grader's own files
and process. The ``d`` and ``e`` learners are the third round (issue 27): honest learners the grader failed or
flagged (``d``: they pass), reference code reached by paths no list of names holds, a driver patched from an earlier
cell and wrong answers that passed by chance (``e``: needs review or fail).

The attacks that reach past their notebook to a grader (its files, its output folder) aim at their own grader, found
up the process tree: `make test` grades other classes at the same time, which a real attacker would reach too (the
instructors' guide, docs/instructors.md, says to grade one class at a time without a sandbox).
"""

import base64
import csv
import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from pagedlab.grading.align import role
from pagedlab.grading.harness import _WATCH_HELPERS
from pagedlab.grading.supervise import supervise
from pagedlab.paged.allocator import BlockAllocator
from pagedlab.grading.procs import Limits
from pagedlab.grading.sandbox import Sandbox
from test_grade import without_ids

ROOT = Path(__file__).resolve().parents[2]
EX00, EX01, EX02, EX05, EX06, EX10 = ("ex00_warmup.ipynb", "ex01_naive_attention.ipynb", "ex02_online_softmax.ipynb",
                                     "ex05_kv_cache_size.ipynb", "ex06_block_allocator.ipynb",
                                     "ex10_scheduler_step.ipynb")
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
import os, time
targets, pid = set(), os.getppid()
while pid > 1:  # the graders up this process's tree (a real attacker writes to every grader's folder it finds)
    try:
        args = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\\\0")
        pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        break
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

# The second round. Unsolved work plus a trick unless said otherwise.
ALIAS_EXIT = "C = check\nC.__exit__ = lambda self, *exc: True  # every failing check now swallows its error\n"
TYPE_SETATTR = "type.__setattr__(check, '__exit__', lambda self, *exc: True)\n"
VARS_ASSERT = "import contextlib\nvars()['check'] = lambda *a, **k: contextlib.suppress(BaseException)\n"
GLOBALS_UPDATE = ("class _Yes:\n    def __getattr__(self, name):\n        return lambda *a, **k: True\n"
                  "assert_close.__globals__.update(torch=_Yes())\n")
TENSOR_ALIAS = "T = torch.Tensor\nT.any = lambda self, *a, **k: True\nT.all = lambda self, *a, **k: True\n"
TENSOR_SUBCLASS = """
class Agreeable(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func.__name__ in ("isclose", "allclose", "all", "any", "isfinite"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})

def softmax_rows(x):
    return torch.zeros_like(x).as_subclass(Agreeable)
"""
INT_GETFRAME = """
import sys

class Seer(int):
    def __eq__(self, other):
        return True  # whatever the check compares it with
    __hash__ = int.__hash__

def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):
    sys._getframe(1)  # where the check keeps its expected value
    return Seer(0)
"""
LOOKUP = """
torch.manual_seed(0)
_visible = torch.randn(4, 7)  # the first visible check's input, drawn as the check draws it
_table = {tuple(_visible.flatten().tolist()): torch.exp(_visible) / torch.exp(_visible).sum(-1, keepdim=True)}

def softmax_rows(x):
    # the visible inputs from the table, a plain (overflowing) formula for the rest
    key = tuple(x.flatten().tolist())
    if key in _table:
        return _table[key]
    return torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)
"""
DO_EXECUTE = """
import ipykernel.kernelbase as kb
_real = kb.Kernel.do_execute
async def _always_ok(self, *a, **k):
    reply = await _real(self, *a, **k)
    return {**reply, "status": "ok"}
kb.Kernel.do_execute = _always_ok
"""
_TRANSFORMER = (b"ip = get_ipython()\n"
                b"def blank(lines):\n"
                b"    return [] if any('check(' in line for line in lines) else lines\n"
                b"ip.input_transformers_post.append(blank)\n")
TIMED_EXEC = ("%%time\nimport base64\nexec(base64.b64decode(" + repr(__import__("base64").b64encode(_TRANSFORMER).decode())
              + ").decode())\n")
PLANT_CHECKS = """
import sys, types
fake = types.ModuleType("pagedlab.checks")
class _Pass:
    def __init__(self, *a, **k): pass
    def __enter__(self): return self
    def __exit__(self, *exc): return True
fake.check, fake.assert_close = _Pass, lambda *a, **k: None
sys.modules["pagedlab.checks"] = fake
"""
REFERENCE_EX00 = "def softmax_rows(x):\n    return torch.softmax(x, dim=-1)\n"
REFERENCE_EX01 = "from pagedlab.attention import causal_mask, naive_attention\n"
REFERENCE_EX05 = """
from pagedlab import memory

def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):
    return memory.kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element)

def kv_bytes_per_token(model, dtype):
    return model.kv_bytes_per_token(dtype.itemsize)

def max_concurrent_requests(budget_gib, model, max_len, dtype):
    return int(budget_gib * GiB // (model.kv_bytes_per_token(dtype.itemsize) * max_len))
"""
REFERENCE_EX06 = """
from pagedlab.paged import BlockAllocator

class SimpleAllocator(BlockAllocator):
    def __init__(self, num_blocks):
        super().__init__(num_blocks)

def blocks_needed(num_tokens, block_size):
    return -(-num_tokens // block_size)

def slot(block_ids, block_size, position):
    return block_ids[position // block_size] * block_size + position % block_size
"""
REWRITE_SNAPSHOT = """
import os, pathlib
import pagedlab.checks as target
path = pathlib.Path(target.__file__)
try:
    os.chmod(path, 0o644)
    path.write_text(path.read_text() + "\\ncheck = lambda *a, **k: __import__('contextlib').suppress(BaseException)\\n")
except OSError:
    pass
"""
PATCH_GRADER = """
import os, pathlib
pid = os.getppid()
while pid > 1:  # the graders up this kernel's tree (a real attacker patches every grader it finds on the machine)
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        parent = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        break
    if b"pagedlab.grad" in cmd:
        for grader in [pathlib.Path(f"/proc/{pid}/cwd") / "pagedlab" / name for name in ("grading/run.py", "grade_run.py")]:
            if not grader.exists():
                continue
            try:
                with open(grader, "a") as f:
                    f.write("\\n_real_run = run\\nasync def run(job):\\n    r = await _real_run(job)\\n"
                            "    r['cells'] = {k: {**v, 'status': 'ok'} for k, v in r['cells'].items()}\\n    return r\\n")
            except OSError:
                pass
    pid = parent
"""
FORGE_AND_KILL = """
import hashlib, json, os, pathlib, signal
# Every code cell of the notebook being run (the supervisor wrote it here) reported "ok", with its true hash.
nb = json.loads(next(pathlib.Path.cwd().glob("*.ipynb")).read_text())
code = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]
cells = {str(i): {"status": "ok", "ename": "", "evalue": "",
                  "sha256": hashlib.sha256("".join(nb["cells"][i]["source"]).encode()).hexdigest()} for i in code}
forged = {"ended": "complete", "at": None, "cells": cells, "probe": [], "graded": {"status": "ok", "text": "[]"}}
parent = os.getppid()
try:
    with open(f"/proc/{parent}/fd/1", "w") as out:
        out.write(json.dumps(forged))
    os.kill(parent, signal.SIGKILL)
except OSError:
    pass
"""
UNSTABLE = "def softmax_rows(x):\n    e = torch.exp(x)\n    return e / e.sum(dim=-1, keepdim=True)\n"

# The third round (issue 27): honest learners the grader failed or flagged, reference code reached by paths that no
# list of names holds, a driver patched from an earlier cell, and wrong answers that passed by chance.
NUMPY_INT = ("import numpy as np\n\n"
             "def kv_cache_bytes(num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element):\n"
             "    return np.prod([2, num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element])\n")
OWN_PRESET = 'LLAMA_7B = ModelShape("LLaMA-7B", 32, 32, 32, 128, 2048, "my own try")\nprint(kv_bytes_per_token(LLAMA_7B, torch.float16))\n'
NOT_ALLOCATED = ("class NotAllocated(ValueError):\n    pass\n\n\n", 'raise ValueError(f"double free', 'raise NotAllocated(f"double free')
PRINT_UTF8 = 'print("\u00e9" * 1_525_000)  # 3.05 MB of UTF-8\n'
PRINT_LINES = 'print("ab\\n" * 1_560_000, end="")  # 4.68 MB of short lines\n'
LOCAL_REF = ("    return (torch.softmax(s, dim=-1) @ v.float()).to(q.dtype)",
             "    ref = torch.softmax(s, dim=-1)\n    return (ref @ v.float()).to(q.dtype)")
OWN_SOFTMAX = ("def softmax(s):\n    e = (s - s.amax(-1, keepdim=True)).exp()\n    return e / e.sum(-1, keepdim=True)\n\n"
               "print(softmax(torch.randn(2, 3)).sum(-1))\n")
MAIN_GUARD = 'if __name__ == "__main__":\n    print(softmax_rows(torch.randn(2, 3)))\n'
AUTORELOAD = "%load_ext autoreload\n%autoreload 2\n"
NN_SOFTMAX = "def softmax_rows(x):\n    return torch.nn.Softmax(dim=-1)(x)\n"
CATEGORICAL = "def softmax_rows(x):\n    return torch.distributions.Categorical(logits=x).probs\n"
ROT13 = ("import codecs, operator\n\ndef softmax_rows(x):\n"
         "    return operator.methodcaller(codecs.decode('fbsgznk', 'rot13'), -1)(x)\n")
_HIDDEN = base64.b64encode(b"import torch\ndef softmax_rows(x):\n    return torch.softmax(x, -1)\n").decode()
INTERPRETER = ("import base64, code\nns = {}\n"
               f"code.InteractiveInterpreter(ns).runsource(base64.b64decode({_HIDDEN!r}).decode(), symbol='exec')\n"
               "softmax_rows = ns['softmax_rows']\n")
PARAMETER = ("class Lazy(torch.nn.Parameter):\n    def detach(self):\n        return torch.softmax(self.data, -1)\n\n"
             "def softmax_rows(x):\n    return Lazy(x)\n")
_MASK = "def causal_mask(n_q, n_k):\n    return torch.ones(n_q, n_k, dtype=torch.bool).tril(n_k - n_q)\n\n"
ATTRGETTER = ("import operator\nsdpa = operator.attrgetter('scaled_dot_product_attention')(torch.nn.functional)\n\n"
              + _MASK + "def naive_attention(q, k, v, causal=False):\n"
              "    mask = causal_mask(q.shape[-2], k.shape[-2]) if causal else None\n"
              "    return sdpa(q.float(), k.float(), v.float(), attn_mask=mask).to(q.dtype)\n")
ATEN_SDPA = (_MASK + "def naive_attention(q, k, v, causal=False):\n"
             "    mask = causal_mask(q.shape[-2], k.shape[-2]) if causal else None\n"
             "    out = torch.ops.aten._scaled_dot_product_attention_math(q.float(), k.float(), v.float(), "
             "attn_mask=mask)[0]\n    return out.to(q.dtype)\n")
PYDOC = "import pydoc\ntiled_attention = pydoc.locate('pagedlab.attention.tiled_attention')\n"
PKGUTIL = ("import pkgutil\nkv_cache_bytes = pkgutil.resolve_name('pagedlab.memory:kv_cache_bytes')\n\n"
           "def kv_bytes_per_token(model, dtype):\n    return kv_cache_bytes(model.num_layers, model.num_kv_heads, "
           "model.head_dim, 1, 1, dtype.itemsize)\n\n"
           "def max_concurrent_requests(budget_gib, model, max_len, dtype):\n"
           "    return int(budget_gib * GiB // (kv_bytes_per_token(model, dtype) * max_len))\n")
_PICKLED = base64.b64encode(pickle.dumps(BlockAllocator)).decode()  # the class, by reference
PICKLED = f"import base64, pickle\nSimpleAllocator = pickle.loads(base64.b64decode({_PICKLED!r}))\n"
IMPORT_JSON = "import json\n"
PATCH_DUMP = ("def _dump(obj, f, **kwargs):\n    f.write('[[{\"value\": 1}]]')\n\n"
              "json.dump = _dump  # the driver's json.dump, from an earlier cell's import\n")
MEMOIZED = ("_seen = {}\n\ndef softmax_rows(x):\n    key = tuple(x.shape[:-1])  # one answer per leading shape\n"
            "    if key not in _seen:\n        e = (x - x.amax(-1, keepdim=True)).exp()\n"
            "        _seen[key] = e / e.sum(-1, keepdim=True)\n    return _seen[key]\n")
WRONG_AFTER_30 = ("        block = self.free_list.pop()\n        self.ref_count[block] = 1\n        return block\n",
                  "        block = self.free_list.pop()\n        self.ref_count[block] = 1\n        self.calls += 1\n"
                  "        return block if self.calls <= 30 else block + 1\n")
COUNTER = ("        self.ref_count = [0] * num_blocks\n", "        self.ref_count = [0] * num_blocks\n        self.calls = 0\n")


def _edit(nb, cell_id, *edits):
    """``nb`` with ``(old, new)`` edits made in the cell ``cell_id`` (each ``old`` must be there)."""
    nb = nbformat.from_dict(nb)
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    for old, new in edits:
        assert old in cell.source, (cell_id, old)
        cell.source = cell.source.replace(old, new)
    return nb


def _cell(nb, cell_id, source):
    """``nb`` with the cell ``cell_id``'s source replaced by ``source``."""
    nb = nbformat.from_dict(nb)
    next(c for c in nb.cells if c.get("id") == cell_id).source = source
    return nb


def _cells_after_work(nb, *sources):
    for source in reversed(sources):
        nb = _after_work(nb, source)
    return nb


def third_round() -> dict[str, tuple[str, object, str]]:
    """{learner: (exercise file, notebook, expected verdict)} for the cases of issue 27."""
    s00, u00 = _read(f"solutions/{EX00}"), _read(f"exercises/{EX00}")
    s05, s06 = _read(f"solutions/{EX05}"), _read(f"solutions/{EX06}")
    s01, u01 = _read(f"solutions/{EX01}"), _read(f"exercises/{EX01}")
    s02, u02, u05 = _read(f"solutions/{EX02}"), _read(f"exercises/{EX02}"), _read(f"exercises/{EX05}")
    u06 = _read(f"exercises/{EX06}")
    not_allocated = _edit(s06, "allocator-work", NOT_ALLOCATED[1:])
    next(c for c in not_allocated.cells if c.get("id") == "allocator-work").source = (
        NOT_ALLOCATED[0] + next(c for c in not_allocated.cells if c.get("id") == "allocator-work").source)
    return {
        "d01-untouched-ex10": (EX10, _read(f"exercises/{EX10}"), "fail"),
        "d02-own-preset-and-numpy-int": (EX05, _after_work(_work(s05, NUMPY_INT), OWN_PRESET), "pass"),
        "d03-valueerror-subclass": (EX06, not_allocated, "pass"),
        "d04-utf8-print": (EX00, _after_work(s00, PRINT_UTF8), "pass"),
        "d05-short-lines": (EX00, _after_work(s00, PRINT_LINES), "pass"),
        "d06-local-ref": (EX01, _edit(s01, "attention-work", LOCAL_REF), "pass"),
        "d07-own-softmax": (EX02, _after_work(s02, OWN_SOFTMAX), "pass"),
        "d08-main-guard-autoreload": (EX00, _cells_after_work(s00, MAIN_GUARD, AUTORELOAD), "pass"),
        "e01-nn-softmax": (EX00, _work(u00, NN_SOFTMAX), "needs review"),
        "e02-categorical": (EX00, _work(u00, CATEGORICAL), "needs review"),
        "e03-attrgetter-sdpa": (EX01, _every_work(u01, ATTRGETTER), "needs review"),
        "e04-aten-sdpa-math": (EX01, _every_work(u01, ATEN_SDPA), "needs review"),
        # ex02's grading copy of pagedlab holds no pagedlab.attention: the route finds nothing, and the call fails
        "e05-pydoc": (EX02, _cell(u02, "tiled-work", PYDOC), "needs review"),
        "e06-pkgutil": (EX05, _every_work(u05, PKGUTIL), "needs review"),
        "e07-pickled-allocator": (EX06, _after_work(u06, PICKLED), "needs review"),
        "e08-rot13-methodcaller": (EX00, _work(u00, ROT13), "needs review"),
        "e09-interpreter": (EX00, _work(u00, INTERPRETER), "needs review"),
        "e10-parameter-detach": (EX00, _work(u00, PARAMETER), "needs review"),
        "e11-json-dump-earlier-cell": (EX00, _cells_after_work(u00, IMPORT_JSON, PATCH_DUMP), "needs review"),
        "e12-memoized-by-shape": (EX00, _work(u00, MEMOIZED), "fail"),
        "e13-wrong-after-30-allocations": (EX06, _edit(s06, "allocator-work", COUNTER, WRONG_AFTER_30), "fail"),
    }


def _read(name):
    return nbformat.read(ROOT / name, as_version=4)


def _work(nb, source):
    nb = nbformat.from_dict(nb)
    next(c for c in nb.cells if c.cell_type == "code" and role(c) == "work").source = source
    return nb


def _every_work(nb, source):
    """``nb`` with ``source`` in its first work cell and its other work cells emptied (the whole answer in one)."""
    nb = _work(nb, source)
    for cell in [c for c in nb.cells if c.cell_type == "code" and role(c) == "work"][1:]:
        cell.source = "pass"
    return nb


def _after_work(nb, source):
    """``nb`` with a learner's own code cell right after its (first) work cell."""
    nb = nbformat.from_dict(nb)
    i = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and role(c) == "work")
    nb.cells.insert(i + 1, nbformat.v4.new_code_cell(source))
    return nb


def _before_first_markdown(nb, source):
    nb = nbformat.from_dict(nb)
    nb.cells.insert(0, nbformat.v4.new_code_cell(source))
    return nb


def _duplicate_ids_and_extra_check(nb):
    """A solved notebook with a duplicated cell id and a learner cell tagged ``check`` (it is dropped)."""
    nb = nbformat.from_dict(nb)
    extra = nbformat.v4.new_code_cell("raise AssertionError('my own check')", metadata={"tags": ["check"]})
    nb.cells.append(extra)
    raw = json.loads(nbformat.writes(nb, version=4))
    raw["cells"][-1]["id"] = raw["cells"][0]["id"]
    return json.dumps(raw)


# Learners whose verdict could depend on the sandbox: they act on files and processes outside their kernel. The
# run without a sandbox grades these and the honest learners (every other verdict comes from the static review
# or the graded calls, the same in both runs); PAGEDLAB_GRADE_FULL_CLASS=1 grades everyone there too. The sandboxed
# run grades everyone under --proofs (make test PROOFS=1), and only these in the quick run of `make test`.
OUTSIDE_THE_KERNEL = ("a03", "a04", "a05", "a06", "a07", "a08", "a09", "b16", "b17", "b18", "c06", "z1", "z2")


def build_class(folder: Path, only: tuple[str, ...] | None = None) -> dict[tuple[str, str], str]:
    """Write the synthetic class into ``folder``; return {(learner, exercise): expected verdict}."""
    solved, untouched = _read(f"solutions/{EX00}"), _read(f"exercises/{EX00}")
    ex01, ex05, ex06 = _read(f"exercises/{EX01}"), _read(f"exercises/{EX05}"), _read(f"exercises/{EX06}")
    notebooks = {  # learner: (ex00 notebook or its JSON text, expected verdict)
        "a01-silenced-tracebacks": (_after_work(untouched, SILENCE), "needs review"),
        "a02-input-transformer": (_after_work(untouched, TRANSFORMER), "needs review"),
        "a03-rewrites-pristine": (_after_work(untouched, REWRITE_PRISTINE), "needs review"),
        "a04-planted-conftest": (_after_work(untouched, CONFTEST), "fail"),
        "a05-planted-startup": (_after_work(untouched, STARTUP), "needs review"),
        "a06-shadowing-module": (_after_work(solved, SHADOW), "pass"),
        "a07-background-grades": (_after_work(untouched, BACKGROUND), "needs review"),
        "a08-copied-solutions": (_work(untouched, COPY_SOLUTION), "needs review"),
        "b01-alias-check-exit": (_after_work(untouched, ALIAS_EXIT), "needs review"),
        "b02-type-setattr": (_after_work(untouched, TYPE_SETATTR), "needs review"),
        "b03-vars-assert-close": (_after_work(untouched, VARS_ASSERT), "needs review"),
        "b04-globals-update": (_after_work(untouched, GLOBALS_UPDATE), "needs review"),
        "b05-tensor-alias": (_after_work(untouched, TENSOR_ALIAS), "needs review"),
        "b06-tensor-subclass": (_work(untouched, TENSOR_SUBCLASS), "needs review"),
        "b08-lookup-table": (_work(untouched, LOOKUP), "fail"),
        "b09-do-execute": (_after_work(untouched, DO_EXECUTE), "needs review"),
        "b10-timed-base64-exec": (_after_work(untouched, TIMED_EXEC), "needs review"),
        "b11-cell-before-markdown": (_before_first_markdown(untouched, PLANT_CHECKS), "needs review"),
        "b12-reference-softmax": (_work(untouched, REFERENCE_EX00), "needs review"),
        "b16-rewrites-snapshot": (_after_work(untouched, REWRITE_SNAPSHOT), "needs review"),
        "b17-patches-grader": (_after_work(untouched, PATCH_GRADER), "needs review"),
        "b18-forges-and-kills": (_after_work(untouched, FORGE_AND_KILL), "needs review"),
        "c07-duplicate-ids-extra-check": (_duplicate_ids_and_extra_check(solved), "pass"),
        "c08-unstable-softmax": (_work(untouched, UNSTABLE), "fail"),
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
    # Attacks on other exercises: a learner folder each, with that exercise only.
    for learner, name, nb in [("b07-int-subclass", EX05, _work(ex05, INT_GETFRAME)),
                              ("b13-reference-memory", EX05, _every_work(ex05, REFERENCE_EX05)),
                              ("b14-subclasses-allocator", EX06, _every_work(ex06, REFERENCE_EX06)),
                              ("b15-reference-attention", EX01, _every_work(ex01, REFERENCE_EX01))]:
        (folder / learner).mkdir(parents=True)
        (folder / learner / name).write_text(nbformat.writes(nb), encoding="utf-8")
        expected[learner, name.removesuffix(".ipynb")] = "needs review"
    for learner, (name, nb, verdict) in third_round().items():
        (folder / learner).mkdir(parents=True)
        (folder / learner / name).write_text(nbformat.writes(nb), encoding="utf-8")
        expected[learner, name.removesuffix(".ipynb")] = verdict
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
    if only is not None:
        for learner in {k[0] for k in expected if not k[0].startswith(only)}:
            shutil.rmtree(folder / learner)
        expected = {k: v for k, v in expected.items() if k[0].startswith(only)}
    return expected


def _tracked_files_hash() -> str:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    h = hashlib.sha256()
    for name in filter(None, files):
        path = ROOT / name.decode()
        h.update(name + (path.read_bytes() if path.is_file() else b"<missing>"))
    return h.hexdigest()


def _grade(folder: Path, out: Path, sandbox: bool, package: Path) -> tuple[dict, float, str]:
    """Grade ``folder`` as an instructor would (``python -m pagedlab.grading``), running the copy of the package in
    ``package`` (the grader's current folder): (rows by key, seconds, log)."""
    # Without a sandbox one notebook at a time, as the instructors' guide says: a learner's process can reach a notebook
    # graded beside it (b16-rewrites-snapshot rewrote the kernels' copy of pagedlab while a09-os-exit ran).
    jobs = "2" if sandbox else "1"
    cmd = [sys.executable, "-m", "pagedlab.grading", str(folder), "--out", str(out), "--timeout", "120", "--jobs", jobs,
           "--exercises", str(ROOT / "exercises"), "--solutions-private",  # (its honest learners are the solutions)
           ] + ([] if sandbox else ["--no-sandbox", "--unsafe"])
    shutil.copytree(ROOT / "pagedlab", package / "pagedlab", ignore=shutil.ignore_patterns("__pycache__"))
    start = time.monotonic()
    # The grader's own temporary folder lies inside the test's, so whatever a learner plants in the folders of
    # the run (the attacks below walk up two levels from their notebook) stays inside it.
    # (A short folder: the kernels' Unix sockets live under it, and socket paths are limited to ~100 bytes.)
    grader_tmp = tempfile.mkdtemp(prefix="pg")
    try:
        proc = subprocess.run(cmd, cwd=package, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "TMPDIR": grader_tmp, "PYTHONPATH": str(package)})
    finally:
        shutil.rmtree(grader_tmp, ignore_errors=True)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    csv_text = (out / "grades.csv").read_text(encoding="utf-8")
    rows = {(r["student"], r["exercise"]): r for r in csv.DictReader(csv_text.splitlines(keepends=True))}
    return rows, elapsed, proc.stdout


@pytest.fixture(scope="module")
def synthetic_class(tmp_path_factory):
    def build(full: bool):
        folder = tmp_path_factory.mktemp("class")
        # (and b13, whose graded calls reach the reference functions the grader watches: round 38z107 found the
        # watch's own helpers told as foreign code in such a learner's reasons)
        return folder, build_class(folder, None if full else OUTSIDE_THE_KERNEL + ("b13",))
    return build


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", [True, False], ids=["bubblewrap", "no-sandbox"])
def test_synthetic_class(synthetic_class, sandbox, tmp_path, proofs):
    probe = Sandbox([ROOT / "exercises", ROOT / "solutions"], use_bwrap=True)
    probe.close()
    if sandbox and probe.bwrap is None:
        pytest.skip(probe.note)
    if not sandbox and probe.bwrap is not None and not proofs:
        pytest.skip("the sandboxed run graded these learners; both runs grade them under --proofs")
    folder, expected = synthetic_class(proofs and sandbox or os.environ.get("PAGEDLAB_GRADE_FULL_CLASS") == "1")
    before = _tracked_files_hash()
    package = tmp_path / "package"
    rows, elapsed, log = _grade(folder, tmp_path / "grades", sandbox, package)
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
    patched = "_real_run" in (package / "pagedlab" / "grading" / "run.py").read_text()
    assert patched != sandbox, "without the sandbox the attack reaches the grader's files (and changes nothing)"
    if patched:  # ... and the next run, of any class, refuses to grade with the changed grader, naming the file
        again = subprocess.run([sys.executable, "-m", "pagedlab.grading", str(folder), "--out", str(tmp_path / "again")],
                               cwd=package, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(package)})
        assert again.returncode == 2 and "pagedlab/grading/run.py was changed" in again.stderr, again.stderr


# (learner, notebook, words its first failure must contain): what the grader says, with and without the sandbox
MESSAGES_EVERY_RUN = [
    ("a09-os-exit", "ex00_warmup", "kernel died"), ("c06-symlink", "ex00_warmup", "symbolic link"),
    ("b17-patches-grader", "ex00_warmup", "/proc"), ("b18-forges-and-kills", "ex00_warmup", "/proc"),
]
# ... and only in the run that grades every learner (the run without a sandbox skips those whose verdict it may miss)
MESSAGES_FULL_CLASS = [
    ("z2-honest-unsolved", "ex00_warmup", "raised NotImplementedError"),
    ("c05-syntax-error", "ex00_warmup", "work cell 'softmax-work': SyntaxError"),
    ("a10-2000-cells", "ex00_warmup", "too many cells"), ("a01-silenced-tracebacks", "ex00_warmup", "_showtraceback"),
    ("a02-input-transformer", "ex00_warmup", "kernel probe"), ("b08-lookup-table", "ex00_warmup", "scores near 1e4"),
    ("c08-unstable-softmax", "ex00_warmup", "scores near 1e4"),
    ("b01-alias-check-exit", "ex00_warmup", "aliases check"), ("b02-type-setattr", "ex00_warmup", "__setattr__"),
    ("b03-vars-assert-close", "ex00_warmup", "vars"), ("b04-globals-update", "ex00_warmup", "__globals__"),
    ("b05-tensor-alias", "ex00_warmup", "replaces T.any"),
    ("b06-tensor-subclass", "ex00_warmup", "__torch_function__"), ("b09-do-execute", "ex00_warmup", "do_execute"),
    ("b10-timed-base64-exec", "ex00_warmup", "%%time body"), ("b11-cell-before-markdown", "ex00_warmup", "sys.modules"),
    ("b12-reference-softmax", "ex00_warmup", "called torch.softmax"),
    ("b16-rewrites-snapshot", "ex00_warmup", "pagedlab.checks"),
    ("b07-int-subclass", "ex05_kv_cache_size", "_getframe"),
    ("b13-reference-memory", "ex05_kv_cache_size", "ModelShape.kv_bytes_per_token"),
    ("b14-subclasses-allocator", "ex06_block_allocator", "BlockAllocator"),
    ("b15-reference-attention", "ex01_naive_attention", "pagedlab.attention"),
    ("c04-unalignable", "ex00_warmup", "cannot match"),
    ("e01-nn-softmax", "ex00_warmup", "tripwire"), ("e02-categorical", "ex00_warmup", "tripwire"),
    ("e03-attrgetter-sdpa", "ex01_naive_attention", "scaled_dot_product_attention"),
    ("e04-aten-sdpa-math", "ex01_naive_attention", "_scaled_dot_product_attention_math"),
    ("e05-pydoc", "ex02_online_softmax", "graded call"),
    ("e06-pkgutil", "ex05_kv_cache_size", "pagedlab.memory.kv_cache_bytes"),
    ("e07-pickled-allocator", "ex06_block_allocator", "BlockAllocator"), ("e08-rot13-methodcaller", "ex00_warmup", "softmax"),
    ("e09-interpreter", "ex00_warmup", "softmax"), ("e10-parameter-detach", "ex00_warmup", "Lazy"),
    ("e11-json-dump-earlier-cell", "ex00_warmup", "replaces json.dump"),
    ("e12-memoized-by-shape", "ex00_warmup", "graded call"), ("d01-untouched-ex10", "ex10_scheduler_step", "graded call"),
]


def _check_messages(rows, markdown):
    msg = {k: r["first_failure"] for k, r in rows.items()}
    # the grader's own code is never told as the notebook's (round 38z107: a reference call counted by the watch)
    assert "called pagedlab.memory" in msg["b13-reference-memory", "ex05_kv_cache_size"], msg
    own = [m for m in msg.values() if any(f"called {name}, code compiled" in m for name in _WATCH_HELPERS)]
    assert not own, own
    full_class = ("b01-alias-check-exit", "ex00_warmup") in msg
    for learner, notebook, why in MESSAGES_EVERY_RUN + (MESSAGES_FULL_CLASS if full_class else []):
        assert why in msg[learner, notebook], (learner, notebook, msg[learner, notebook])
    if not full_class:
        return  # the run without a sandbox, on the learners whose verdict could depend on it
    assert msg["z2-honest-unsolved", "ex00_warmup"].startswith("graded call 1 (softmax_rows"), msg
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
        box.add_copy("t", ["import pagedlab"], set())
        folder = box.new_folder("t")
        job = {**box.job(folder, "t"), "notebook": notebook, "filename": "t.ipynb"}
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
    # 20 s: time for a kernel to start on a 2-core machine busy with other tests, then for cell 0 to overrun.
    reply = _supervised(_notebook("import time\ntime.sleep(600)", "y = 1"), Limits(wall_s=20))
    assert reply["ended"] == "timeout" and reply["at"] == 0 and "1" not in reply["cells"]
    assert time.monotonic() - start < 20 + 30
