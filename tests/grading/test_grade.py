"""Grading, piece by piece (no kernel runs here; tests/grading/test_grade_class.py grades a whole synthetic class)."""

import ast
import csv
import functools
import io
import json
import keyword
import re
import shutil
import socket
import subprocess
import struct
import sys
import tokenize
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from pagedlab.grading.align import Cell, SubmissionError, Unalignable, read_submission, restore, role, sha256
from pagedlab.grading.calls import Malformed, compare, load_other, load_outcomes
from pagedlab.grading.collect import collect, load_pristine
from pagedlab.grading.grade import SandboxMissing, grade_class
from pagedlab.grading.judge import (ERROR, FAIL, PASS, REVIEW, UNEXPECTED, Expected, Result, judge, judge_graded,
                                   prepare)
from pagedlab.grading.shards import merge
from pagedlab.grading.similarity import copied_cells
from pagedlab.grading.tables import md, write_tables
from pagedlab.grading.machine import late_bindings
from pagedlab.grading.procs import Limits
from pagedlab.grading.review import kept_results, mixed_script, reference_reasons, review_reasons, setup_names
from pagedlab.grading.sandbox import Sandbox, bwrap_problem
from pagedlab.grading.specs import SPECS, Cases

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = ROOT / "exercises" / "ex00_warmup.ipynb"
SOLUTION = ROOT / "solutions" / "ex00_warmup.ipynb"


def _sources(nb, tag):
    return [c.source for c in nb.cells if c.cell_type == "code" and role(c) == tag]


def _code_roles(nb):
    return [role(c) for c in nb.cells if c.cell_type == "code"]


def _submit(nb) -> bytes:
    return (nb if isinstance(nb, str) else nbformat.writes(nb)).encode()


def without_ids(nb, minor, keep_tags=True) -> str:
    """``nb`` as an older nbformat writes it: no cell ids (and, with ``keep_tags=False``, no tags, as Colab)."""
    raw = json.loads(nbformat.writes(nb))
    raw["nbformat_minor"] = minor
    for cell in raw["cells"]:
        cell.pop("id", None)
        if not keep_tags:
            cell["metadata"] = {}
    return json.dumps(raw)


@functools.cache
def pristines() -> dict:
    """Every exercise's pristine notebook with its solution (load_pristine), read once: prepare only reads them."""
    return load_pristine(ROOT / "exercises", ROOT / "solutions")


@pytest.fixture(scope="module")
def pristine():
    return nbformat.read(EXERCISE, as_version=4)


@pytest.fixture(scope="module")
def solved():
    return nbformat.read(SOLUTION, as_version=4)


def test_restore_by_id_puts_back_deleted_and_edited_checks_in_place(pristine, solved):
    tampered = nbformat.from_dict(solved)
    tampered.cells = [c for c in tampered.cells if role(c) != "check" or c.id == "check-large"]
    next(c for c in tampered.cells if c.get("id") == "check-large").source = "pass  # 'fixed'"
    tampered.cells.append(nbformat.v4.new_code_cell("scratch = 1"))
    nb, cells, method = restore(read_submission(_submit(tampered))[0], pristine)
    assert method == "id"
    assert _sources(nb, "check") == _sources(pristine, "check")
    assert any("BEGIN SOLUTION" in c.source for c in nb.cells), "the learner's work is kept"
    assert nb.cells[-1].source == "scratch = 1" and cells[-1].role == "extra"
    order = [c.id for c in nb.cells if c.id in {p.id for p in pristine.cells}]
    assert order == [c.id for c in pristine.cells if c.id in set(order)]
    assert all(c.pristine_sha256 == sha256(nb.cells[c.index].source) for c in cells if c.role in ("setup", "check"))


def test_restore_an_idless_nbformat_44_notebook_by_tag_order(pristine, solved):
    learner = nbformat.from_dict(solved)
    work = next(i for i, c in enumerate(learner.cells) if role(c) == "work")
    learner.cells.insert(work + 1, nbformat.v4.new_code_cell("scratch = 1"))
    learner.cells = [c for c in learner.cells if role(c) != "check"]  # and the checks deleted
    nb, cells, method = restore(read_submission(without_ids(learner, 4).encode())[0], pristine)
    assert method == "tag order"
    checks = _code_roles(pristine).count("check")
    assert [c.role for c in cells] == ["setup", "setup", "work", "extra"] + ["check"] * checks
    assert "BEGIN SOLUTION" in nb.cells[cells[2].index].source
    assert _sources(nb, "check") == _sources(pristine, "check")


def test_restore_an_idless_notebook_whose_work_cell_was_split_in_two(pristine, solved):
    """JupyterLab's split keeps the work tag on both halves: a run of consecutive work cells that makes the count
    right is one answer, its later cells the learner's own after it (round 38z37: sent to review, unmatched)."""
    learner = nbformat.from_dict(solved)
    work = next(i for i, c in enumerate(learner.cells) if role(c) == "work")
    half = nbformat.v4.new_code_cell("print(softmax_rows(torch.ones(2, 3)))", metadata={"tags": ["work"]})
    learner.cells.insert(work + 1, half)
    nb, cells, method = restore(read_submission(without_ids(learner, 4).encode())[0], pristine)
    assert method == "tag order"
    assert [c.role for c in cells][:4] == ["setup", "setup", "work", "extra"]
    assert nb.cells[cells[3].index].source == half.source
    learner.cells.append(nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["work"]}))  # after the checks: no run
    with pytest.raises(Unalignable):
        restore(read_submission(without_ids(learner, 4).encode())[0], pristine)


def test_restore_an_idless_notebook_whose_work_cells_were_merged():
    """Two work cells merged into one, in a notebook without ids (round 38z39: sent to review, unmatched): the cell
    that defines every name of both answers both, in the first's place; a cell that defines one name only is no
    answer to two."""
    pristine = nbformat.read(ROOT / "exercises" / "ex05_kv_cache_size.ipynb", as_version=4)
    learner = nbformat.read(ROOT / "solutions" / "ex05_kv_cache_size.ipynb", as_version=4)
    work = [i for i, c in enumerate(learner.cells) if role(c) == "work"]
    learner.cells[work[0]].source += "\n\n" + learner.cells[work[1]].source
    merged = learner.cells[work[0]].source
    del learner.cells[work[1]]
    nb, cells, method = restore(read_submission(without_ids(learner, 4).encode())[0], pristine)
    answers = [nb.cells[c.index].source for c in cells if c.role == "work"]
    assert method == "tag order" and answers[:2] == [merged, ""] and "BEGIN SOLUTION" in answers[2]
    learner.cells[work[0]].source = "def kv_cache_bytes(*args):\n    return 0\n"  # kv_bytes_per_token missing
    with pytest.raises(Unalignable):
        restore(read_submission(without_ids(learner, 4).encode())[0], pristine)


def test_restore_an_idless_notebook_that_kept_a_copy_of_the_handed_out_cell(pristine, solved):
    """The handed-out work cell pasted above the answer, its tag with it (round 38z40: sent to review, unmatched): the
    copy is the learner's own cell, run where it stands, and the answer below it is the answer."""
    learner = nbformat.from_dict(solved)
    work = next(i for i, c in enumerate(learner.cells) if role(c) == "work")
    stub = next(c for c in pristine.cells if role(c) == "work")
    learner.cells.insert(work, nbformat.from_dict({**json.loads(json.dumps(stub)), "id": "stub-copy"}))
    learner.cells.insert(work + 1, nbformat.v4.new_code_cell("print('scratch')"))
    nb, cells, method = restore(read_submission(without_ids(learner, 4).encode())[0], pristine)
    assert method == "tag order"
    runs = [(c.role, nb.cells[c.index].source) for c in cells]
    assert runs[2:5] == [("extra", stub.source), ("extra", "print('scratch')"),
                         ("work", next(c.source for c in solved.cells if role(c) == "work"))], runs[:5]


def test_restore_a_colab_notebook_without_ids_or_tags_by_position(pristine, solved):
    nb, cells, method = restore(read_submission(without_ids(solved, 0, keep_tags=False).encode())[0], pristine)
    assert method == "position"
    assert [c.role for c in cells] == _code_roles(pristine)
    assert "BEGIN SOLUTION" in nb.cells[cells[2].index].source


def test_unmatchable_cells_need_review(pristine, solved):
    learner = nbformat.from_dict(solved)
    learner.cells.append(nbformat.v4.new_code_cell("scratch = 1"))
    with pytest.raises(Unalignable, match="cannot match"):
        restore(read_submission(without_ids(learner, 0, keep_tags=False).encode())[0], pristine)


WRONG = "def softmax_rows(x):\n    return x.exp() / x.exp().sum(-1, keepdim=True)  # no max subtracted\n"
HELPED = ("def _rows(x, dim=-1):\n    return (x - x.amax(dim, keepdim=True)).exp().div_((x - x.amax(dim, keepdim=True))"
          ".exp().sum(dim, keepdim=True))\n\n\ndef softmax_rows(x):\n    return _rows(x)\n")


def _answer(returns: str, before: str = ""):
    """A notebook whose answer calls a helper (:data:`HELPED`), with ``return _rows(x)`` replaced by ``returns`` and
    ``before`` above it, in the solution's work cell."""
    return lambda s: _submit(_edited(s, "softmax-work", before + HELPED.replace("return _rows(x)", returns)))


# A kernel of the learner's that copies ``n`` elements (one program of ``BLOCK``).
_KERNEL = ("import triton\nimport triton.language as tl\n\n\n"
           "@triton.jit\ndef _copy(x_ptr, o_ptr, n, BLOCK: tl.constexpr):\n"
           "    i = tl.arange(0, BLOCK)\n    tl.store(o_ptr + i, tl.load(x_ptr + i, mask=i < n), mask=i < n)\n\n\n")


def _demo(before: str, returns: str, demo: str):
    """:func:`_answer`'s notebook, and a cell of the learner's after it (no tag) that runs ``demo``."""
    return lambda s: _submit(_edited(_edited(s, "softmax-work", before + HELPED.replace("return _rows(x)", returns)),
                                     "softmax-work", demo, tags=[], new_id="demo"))


# A memo of ones by size, through a local key (round 38z243)
_TIMED_MEMO = ("import time\n\n_COLS = {}\n\n\ndef _ones(n):\n    key = (n,)\n    if key not in _COLS:\n"
               "        _COLS[key] = torch.ones(n)\n    return _COLS[key]\n\n\n")


def _fragile(fails: str, asks: str):
    """The solution's notebook whose answer scales by ``BOOST``, bound by a cell of the learner's that runs ``asks``
    after one that runs ``fails`` (both untagged, after the work cell)."""
    return lambda s: _submit(_edited(_edited(_edited(
        s, "softmax-work", HELPED.replace("return _rows(x)", "return _rows(x * BOOST / BOOST)")),
        "softmax-work", fails, tags=[], new_id="fails"), "softmax-work", asks, tags=[], new_id="asks"))


def _edited(solved, cell_id: str, source: str, tags=None, new_id: str | None = None):
    """``solved`` with cell ``cell_id``'s source replaced, or (``new_id``) a copy of it appended under that id."""
    nb = nbformat.from_dict(solved)
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    if new_id is not None:
        cell = nbformat.from_dict(json.loads(json.dumps(cell)))
        cell.id = new_id
        nb.cells.append(cell)
    cell.source = source
    if tags is not None:
        cell.metadata["tags"] = tags
    return nb


UNRUN = [
    # round 38z35: each ran a wrong definition after the right one, in a cell the grader does not run, and passed
    ("a check cell edited to define the answer again", lambda s: _submit(_edited(s, "check-space", WRONG)), True),
    ("a copy of a setup cell, its tag kept, that defines the answer again",
     lambda s: _submit(_edited(s, "imports", "import torch\n" + WRONG, new_id="my-imports")), True),
    ("a notebook matched by position whose last code cell defines the answer again",
     lambda s: without_ids(_edited(s, "check-space", WRONG), 0, keep_tags=False).encode(), True),
    # a learner's own changes that change nothing the grade reads
    ("a check cell edited to print", lambda s: _submit(_edited(s, "check-space", "print(softmax_rows(torch.ones(2, 3)))")),
     False),
    ("setup cells with Windows line endings, tabs for spaces and a comment",
     lambda s: _submit(_edited(s, "imports", next(c.source for c in s.cells if c.get("id") == "imports")
                               .replace("\n", "  # mine\r\n").replace("    ", "\t"))), False),
    ("the checks as handed out, in a notebook matched by position", lambda s: without_ids(s, 0, keep_tags=False).encode(),
     False),
    # round 38z37: on a GPU (Colab's) the notebook's answer is the other branch's
    ("a cell that defines the answer again only where a GPU is", lambda s: _submit(_edited(
        s, "softmax-work", "if torch.cuda.is_available():\n    " + WRONG.replace("\n    ", "\n        "),
        new_id="on-a-gpu")), True),
    ("a cell that picks a device under a condition", lambda s: _submit(_edited(
        s, "softmax-work", "if torch.cuda.is_available():\n    device = 'cuda'\nelse:\n    device = 'cpu'",
        new_id="device")), False),
    # round 38z39: the same branch as a conditional expression, and behind a context manager that may suppress
    ("the answer chosen by a conditional expression", lambda s: _submit(_edited(
        s, "softmax-work", "softmax_rows = (lambda x: x.softmax(-1)) if torch.cuda.is_available() else softmax_rows",
        new_id="on-a-gpu")), True),
    ("the answer defined again inside contextlib.suppress", lambda s: _submit(_edited(
        s, "softmax-work", "import contextlib\nwith contextlib.suppress(AssertionError):\n"
                           "    assert torch.cuda.is_available()\n    " + WRONG.replace("\n    ", "\n        "),
        new_id="on-a-gpu")), True),
    ("the answer defined under if __name__ == '__main__'", lambda s: _submit(_edited(
        s, "softmax-work", 'if __name__ == "__main__":\n    ' + WRONG.replace("\n    ", "\n        "), new_id="main")),
     False),
    # round 38z208: what runs its body alike on every machine is no condition: a table warmed by a for over numbers
    # the code writes, one made under torch.no_grad(), a setting read from a dict by a key the code writes; beside
    # them, the answer in a for that a question of the machine may break
    ("a helper's table warmed by a for over numbers the code writes", lambda s: _submit(_edited(
        s, "softmax-work", "_T = {}\nfor _n in (16, 64):\n    _T[_n] = torch.arange(_n)\n"
        + HELPED.replace("return _rows(x)", "return _rows(x) if _T else x"))), False),
    ("a helper's table made under torch.no_grad()", lambda s: _submit(_edited(
        s, "softmax-work", "_N = 8\nwith torch.no_grad():\n    _T = torch.arange(_N)\n"
        + HELPED.replace("return _rows(x)", "return _rows(x) if len(_T) else x"))), False),
    ("a helper read from a dict by a key the code writes", lambda s: _submit(_edited(
        s, "softmax-work", HELPED.replace("return _rows(x)", "return _PICK(x)")
        + "_TABLE = {'rows': _rows}\n_PICK = _TABLE['rows']\n")), False),
    ("a helper read from a dict by the machine's device type", lambda s: _submit(_edited(
        s, "softmax-work", HELPED.replace("return _rows(x)", "return _PICK(x)")
        + "_TABLE = {'cpu': _rows, 'cuda': torch.softmax}\n_PICK = _TABLE[torch.device('cuda' if "
          "torch.cuda.is_available() else 'cpu').type]\n")), True),
    ("the answer in a for that a question of the machine may break", lambda s: _submit(_edited(
        s, "softmax-work", HELPED + "for _n in (1,):\n    if torch.cuda.is_available():\n        break\n    "
        + WRONG.replace("\n    ", "\n        "))), True),
    # round 38z41: the same one name down, a helper the answer calls; a device chosen by the machine is no answer
    ("a helper the answer calls, defined as torch's where a GPU is", lambda s: _submit(_edited(
        s, "softmax-work", HELPED.replace("def _rows", "if torch.cuda.is_available():\n    _rows = torch.softmax\n"
                                          "else:\n    def _rows").replace("\n    return (x - x", "\n        return (x - x"))),
     True),
    ("a device the answer uses, chosen by the machine",
     _answer("return _rows(x.to(DEVICE)).cpu()", 'DEVICE = "cuda" if torch.cuda.is_available() else "cpu"\n'), False),
    ("a check cell edited to define again a helper the answer calls", lambda s: _submit(_edited(
        _edited(s, "softmax-work", HELPED), "check-space", WRONG.replace("softmax_rows", "_rows"))), True),
    # round 38z42: the GPU branch nested in a __main__ guard, chosen by a call, and inside the answer itself; an
    # import that falls back on an older Python's is no choice
    ("the GPU branch inside if __name__ == '__main__'", lambda s: _submit(_edited(
        s, "softmax-work", 'if __name__ == "__main__":\n    if torch.cuda.is_available():\n        '
                           + WRONG.replace("\n    ", "\n            "), new_id="main")), True),
    ("a helper chosen by a call that asks for a GPU", lambda s: _submit(_edited(
        s, "softmax-work", HELPED.replace("return _rows(x)", "return _PICK(x, -1)")
        + "_PICK = {True: torch.softmax}.get(torch.cuda.is_available(), _rows)\n")), True),
    ("the answer that takes torch's softmax for a tensor on a GPU",
     _answer("if x.is_cuda:\n        return x.softmax(-1)\n    return _rows(x)"), True),
    ("a standard-library import with a fallback for an older Python",
     _answer("assert prod(x.shape) == x.numel()\n    return _rows(x)",
             "try:\n    from math import prod\nexcept ImportError:\n    def prod(xs):\n        p = 1\n"
             "        for x in xs:\n            p *= x\n        return p\n\n\n"), False),
    # round 38z44: a value of the machine's branched on in the answer, where a tensor lives, autocast; a check of the
    # devices or an output made where the input lives is no choice
    ("a value of the machine's the answer branches on",
     _answer("return x.softmax(-1) if ON_GPU else _rows(x)", "ON_GPU = torch.cuda.is_available()\n"), True),
    ("the answer that asks where its tensor lives",
     _answer("if str(x.device).startswith('cuda'):\n        return x.softmax(-1)\n    return _rows(x)"), True),
    ("the answer under autocast",
     _answer("with torch.autocast('cuda', dtype=torch.float16):\n        return _rows(x)"), True),
    ("the answer that checks its input's device and makes its output there",
     _answer("assert x.device == x.new_empty(0).device\n    return _rows(x).to(x.device)"), False),
    # round 38z46: the question imported under a name of its own, asked as is_cpu, asked of Colab; two devices compared
    ("a machine's function imported under a name of the learner's",
     _answer("return x.softmax(-1) if gpu_ready() else _rows(x)",
             "from torch.cuda import is_available as gpu_ready\n"), True),
    ("the answer off the CPU", _answer("if not x.is_cpu:\n        return x.softmax(-1)\n    return _rows(x)"), True),
    ("the answer on Colab", _answer("return x.softmax(-1) if IN_COLAB else _rows(x)",
                                    'import sys\nIN_COLAB = "google.colab" in sys.modules\n'), True),
    ("the answer that raises for inputs on two devices",
     _answer("if x.device != x.new_empty(0).device:\n        raise ValueError('one device')\n    return _rows(x)"),
     False),
    # round 38z47: the course's own device.ON_GPU, a machine's value passed on by a second name, a dtype the machine
    # chose and the answer computes in; an environment variable that only makes the answer print is no choice
    ("the answer on the course's ON_GPU",
     _answer("return x.softmax(-1) if device.ON_GPU else _rows(x)", "from pagedlab import device\n"), True),
    ("a machine's value under a second name", _answer("return x.softmax(-1) if FAST else _rows(x)",
                                                      "HAS_GPU = torch.cuda.is_available()\nFAST = HAS_GPU\n"), True),
    ("a dtype the machine chose, the answer computes in",
     _answer("return _rows(x.to(ACC)).to(x.dtype)",
             "ACC = torch.float16 if torch.cuda.is_available() else torch.float32\n"), True),
    ("an environment variable that only makes the answer print",
     _answer("if VERBOSE:\n        print(x.shape)\n    return _rows(x)",
             "import os\nVERBOSE = os.environ.get('VERBOSE', '0') == '1'\n"), False),
    # the rule as derived, not as found: a value read from a module that answers which machine this is (under any
    # name), or a place for tensors used for anything but placing them; cases no round wrote
    ("a machine's module imported under another name",
     _answer("return x.softmax(-1) if tc.device_count() else _rows(x)", "import torch.cuda as tc\n"), True),
    ("the answer on PyTorch's accelerator API",
     _answer("if torch.accelerator.is_available():\n        return x.softmax(-1)\n    return _rows(x)"), True),
    ("the answer that reads its device's index",
     _answer("if x.device.index is not None:\n        return x.softmax(-1)\n    return _rows(x)"), True),
    ("a machine's answer in the arithmetic, no branch",
     _answer("k = int(torch.cuda.is_available())\n    return (1 - k) * _rows(x) + k * x.softmax(-1)"), True),
    ("a device's name the answer inspects",
     _answer("return x.softmax(-1) if DEVICE.startswith('cu') else _rows(x)",
             'DEVICE = "cuda" if torch.cuda.is_available() else "cpu"\n'), True),
    ("the Python version the answer branches on",
     _answer("return x.softmax(-1) if sys.version_info >= (3, 12) else _rows(x)", "import sys\n"), True),
    ("a GPU found by trying to use one", _answer("return x.softmax(-1) if GPU else _rows(x)",
                                                 'try:\n    torch.empty(1, device="cuda")\n    GPU = True\n'
                                                 'except Exception:\n    GPU = False\n'), True),
    ("a package found by trying to import it", _answer("return _rows(x) if FAST else x.softmax(-1)",
                                                       "try:\n    import triton\n    FAST = True\n"
                                                       "except ImportError:\n    FAST = False\n"), True),
    ("an answer that falls back where a move fails", _answer(
        "try:\n        return _rows(x.cuda()).cpu()\n    except (RuntimeError, AssertionError):\n"
        "        return x.softmax(-1)"), True),
    ("an answer that says what failed and raises", _answer(
        "try:\n        out = torch.empty_like(x, device=x.device)\n        out.copy_(_rows(x))\n"
        "    except RuntimeError as e:\n        raise ValueError(f'softmax_rows: {e}') from e\n    return out"), False),
    ("an answer that waits for the GPU before it is timed", _answer(
        "out = _rows(x)\n    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n    device.synchronize()\n"
        "    return out", "from pagedlab import device\n"), False),
    # round 38z49: a device compared with one the learner fixed, one handed to a helper that asks its type, a flag
    # the course's sizes give; a helper that only places with the device it is given, a size as a default, are none
    ("a device compared with one the learner fixed",
     _answer("if x.device != CPU:\n        return x.softmax(-1)\n    return _rows(x)", 'CPU = torch.device("cpu")\n'),
     True),
    ("a device handed to a helper that asks its type", _answer(
        "return _pick(x, device=x.device)",
        "def _pick(x, device):\n    return x.softmax(-1) if device.type == 'cuda' else _rows(x)\n\n\n"), True),
    ("a device handed by position to a method that asks its type", _answer(
        "return _Pick().rows(x, x.device)",
        "class _Pick:\n    def rows(self, x, where):\n        return x.softmax(-1) if str(where) != 'cpu' else _rows(x)"
        "\n\n\n"), True),
    ("a flag the course's sizes give", _answer(
        "return _rows(x) if STABLE else x.exp() / x.exp().sum(-1, keepdim=True)",
        "from pagedlab import device\nSTABLE = device.size(1, 0)\n"), True),
    ("the answer that reads its device by getattr", _answer(
        "return x.softmax(-1) if getattr(x, 'device').type == 'cuda' else _rows(x)"), True),
    ("the machine asked through the namespace's own table", _answer(
        "return x.softmax(-1) if globals()['torch'].cuda.is_available() else _rows(x)"), True),
    ("the answer on the number of the CPU's threads", _answer(
        "return x.softmax(-1) if torch.get_num_threads() > 8 else _rows(x)"), True),
    ("a device handed to a helper that places with it", _answer(
        "return _rows(_on(x, device=x.device))",
        "def _on(x, device):\n    return torch.empty_like(x, device=device).copy_(x)\n\n\n"), False),
    # round 38z51: a try whose failure is passed over, a device compared with a tensor made here, the course's size
    # as a default the answer branches on (so a size of the course's is the machine's, a default too), a machine's
    # value set as a global inside a function; a set of the inputs' devices is no question
    ("a fused path tried where a move may fail, its failure passed over", _answer(
        "out = _rows(x)\n    try:\n        out = x.cuda().softmax(-1).to(x.device)\n    except RuntimeError:\n"
        "        pass\n    return out"), True),
    ("a device compared with a tensor made here", _answer(
        "if x.device != torch.empty(0).device:\n        return x.softmax(-1)\n    return _rows(x)"), True),
    ("a size of the course's as a default the answer branches on", _answer(
        "return _pick(x)", "from pagedlab import device\nFUSED = device.size(0, 8192)\n\n\ndef _pick(x, fused=FUSED):\n"
        "    return x.softmax(-1) if x.shape[-1] <= fused else _rows(x)\n\n\n"), True),
    ("a default chunk size the course's sizes give", _answer(
        "return torch.cat([_rows(x[a:b]) for a, b in _chunks(len(x))]) if len(x) else _rows(x)",
        "from pagedlab import device\nBLOCK = device.size(64, 1024)\n\n\ndef _chunks(n, block=BLOCK):\n"
        "    return [(i, min(i + block, n)) for i in range(0, n, block)]\n\n\n"), True),
    ("a machine's value set as a global inside a function", _answer(
        "return x.softmax(-1) if FREE else _rows(x)",
        "def _probe():\n    global FREE\n    FREE = torch.cuda.mem_get_info()[0] if torch.cuda.is_available() else None"
        "\n\n\n_probe()\n"), True),
    ("the inputs' devices gathered in a set", _answer(
        "_one_device(x, x.new_empty(0))\n    return _rows(x)",
        "def _one_device(*tensors):\n    devices = {t.device for t in tensors}\n    if len(devices) > 1:\n"
        "        raise ValueError(f'tensors on {devices}')\n\n\n"), False),
    # round 38z53: a global object changed where a GPU is, a raise by machine that the answer catches, a folder only
    # Colab has, a machine's value bound by a walrus inside a print; a cache keyed by the input's device is none
    ("a global dict set where a GPU is, the answer reading it", _answer(
        "return x.softmax(-1) if SETTINGS['fused'] else _rows(x)",
        "SETTINGS = {'fused': False}\nif torch.cuda.is_available():\n    SETTINGS.update(fused=True)\n"), True),
    ("a raise by machine that the answer catches", _answer(
        "try:\n        _check(x)\n    except NotImplementedError:\n        return x.softmax(-1)\n    return _rows(x)",
        "def _check(x):\n    if x.is_cuda:\n        raise NotImplementedError('no GPU path')\n\n\n"), True),
    ("a folder only Colab has", _answer("return x.softmax(-1) if ON_COLAB else _rows(x)",
                                        "from pathlib import Path\nON_COLAB = Path('/content').is_dir()\n"), True),
    ("a machine's value bound by a walrus inside a print", _answer(
        "return x.softmax(-1) if FAST else _rows(x)", "print(f'GPU: {(FAST := torch.cuda.is_available())}')\n"), True),
    ("zeros cached under a key with the input's device", _answer(
        "return _rows(x) + _zeros(x.shape, x.device)",
        "_CACHE = {}\n\n\ndef _zeros(shape, dev):\n    key = (tuple(shape), dev)\n    if key not in _CACHE:\n"
        "        _CACHE[key] = torch.zeros(shape, device=dev)\n    return _CACHE[key]\n\n\n"), False),
    # round 38z55: a move that gives the same object on a CPU only, a default made where the notebook runs, a view of
    # host memory tried; autocast switched off is no question
    ("the answer that asks whether a move gave the same tensor", _answer(
        "return _rows(x) if x.cpu() is x else x.softmax(-1)"), True),
    ("a device compared with a default made where the notebook runs", _answer(
        "return _pick(x)", "def _pick(x, _host=torch.empty(0)):\n    return x.softmax(-1) if x.device != _host.device "
        "else _rows(x)\n\n\n"), True),
    ("pinned memory tried", _answer(
        "return x.softmax(-1) if PINNED else _rows(x)",
        "try:\n    torch.empty(1).pin_memory()\n    PINNED = True\nexcept RuntimeError:\n    PINNED = False\n"), True),
    ("the answer under autocast switched off", _answer(
        "with torch.autocast(device_type=x.device.type, enabled=False):\n        return _rows(x)"), False),
    # round 38z57: a question inside torch.device(...), a tensor's type string, a kernel tried with a fallback, a
    # global dict filled by a function that asks; an assert under a flag, factory keywords and a device unpacked
    # beside a size are none
    ("a question inside torch.device", _answer(
        "return x.softmax(-1) if FUSED else _rows(x)",
        'FUSED = torch.device("cuda" if torch.cuda.is_available() else "cpu").type == "cuda"\n'), True),
    ("a tensor's type string", _answer(
        "return _rows(x) if x.type() == 'torch.FloatTensor' else x.softmax(-1)"), True),
    ("the answer tried, torch's where it fails", _answer(
        "try:\n        return _rows(x)\n    except Exception:\n        return x.softmax(-1)"), True),
    ("a global dict filled by a function that asks", _answer(
        "return x.softmax(-1) if RUN['fused'] else _rows(x)",
        "RUN = {'fused': False}\n\n\ndef _pick():\n    RUN['fused'] = torch.cuda.is_available()\n\n\n_pick()\n"),
     True),
    ("an assert under a flag", _answer(
        "out = _rows(x)\n    if DEBUG:\n        assert torch.isfinite(out).all()\n    return out",
        "import os\nDEBUG = os.environ.get('DEBUG') == '1'\n"), False),
    ("factory keywords with the input's device", _answer(
        "fk = {'device': x.device, 'dtype': x.dtype}\n    return _rows(x) + torch.zeros(x.shape, **fk)"), False),
    ("a device unpacked beside a size", _answer(
        "n, dev = x.shape[-1], x.device\n    return _rows(x) * torch.ones(n, device=dev)"), False),
    ("a missing key passed over", _answer(
        "try:\n        return _SEEN[x.shape]\n    except KeyError:\n        return _rows(x)", "_SEEN = {}\n"), False),
    # round 38z59: implementations in a table keyed by device, a move inside contextlib.suppress, a failure renamed
    # into the learner's own exception, a place handed on by functools.partial, a clock; a helper that returns the
    # inputs' device, with torch.device(dev), a default device and a synchronize chosen by a condition are none
    ("implementations in a table keyed by device", _answer(
        "return _IMPLS[x.device](x)",
        "_IMPLS = {}\n_IMPLS[torch.device('cpu')] = lambda x: _rows(x)\n_IMPLS[torch.device('cuda:0')] = "
        "lambda x: x.softmax(-1)\n"), True),
    ("a move inside contextlib.suppress", _answer(
        "with contextlib.suppress(Exception):\n        return x.to('cuda').softmax(-1).to(x.device)\n    return _rows(x)",
        "import contextlib\n"), True),
    ("a failure renamed into the learner's own exception", _answer(
        "try:\n        return _fast(x)\n    except NoFast:\n        return _rows(x)",
        "class NoFast(Exception):\n    pass\n\n\ndef _fast(x):\n    try:\n        y = x.cuda()\n"
        "    except Exception as e:\n        raise NoFast() from e\n    return y.softmax(-1).to(x.device)\n\n\n"), True),
    ("a place handed on by functools.partial", _answer(
        "return functools.partial(_pick, device=x.device)(x)",
        "import functools\n\n\ndef _pick(x, device):\n    return x.softmax(-1) if device.type == 'cuda' else _rows(x)"
        "\n\n\n"), True),
    ("a clock that tells a fast machine", _answer(
        "return x.softmax(-1) if FAST else _rows(x)",
        "import time\n_t = time.perf_counter()\ntorch.ones(256, 256) @ torch.ones(256, 256)\n"
        "FAST = time.perf_counter() - _t < 1e-4\n"), True),
    ("a helper that returns the inputs' device, and torch.device as a context", _answer(
        "with torch.device(_one_device(x, x)):\n        out = torch.empty(x.shape)\n    out.copy_(_rows(x))\n    return out",
        "def _one_device(*tensors):\n    devices = {t.device for t in tensors}\n    if len(devices) != 1:\n"
        "        raise ValueError('one device')\n    return tensors[0].device\n\n\n"), False),
    ("a device given or not", _answer(
        "return _rows(x) + _zeros(x.shape)",
        "def _zeros(shape, device=None):\n    if device is None:\n        device = 'cpu'\n"
        "    return torch.zeros(shape, device=device)\n\n\n"), False),
    ("a wait for the GPU chosen by a conditional expression", _answer(
        "out = _rows(x)\n    torch.cuda.synchronize() if x.is_cuda else None\n    return out"), False),
    # round 38z61: factory keywords by dict() read back, a question inside a print that changes a dict, torch's
    # device module by name, a try whose finally returns; a cache keyed by the device's name is none
    ("factory keywords by dict() read back", _answer(
        "fk = dict(device=x.device, dtype=x.dtype)\n    return x.softmax(-1) if fk['device'].type == 'cuda' else _rows(x)"),
     True),
    ("a question inside a print that changes a dict", _answer(
        "return x.softmax(-1) if CFG.get('gpu') else _rows(x)",
        "CFG = {}\nprint('GPU:', CFG.setdefault('gpu', torch.cuda.is_available()))\n"), True),
    ("torch's device module by name", _answer(
        "return x.softmax(-1) if torch.get_device_module('cuda').is_initialized() else _rows(x)"), True),
    ("a try whose finally returns", _answer(
        "ok = False\n    try:\n        torch.empty(0, device='cuda')\n        ok = True\n    finally:\n"
        "        return x.softmax(-1) if ok else _rows(x)"), True),
    ("a cache keyed by the device's name", _answer(
        "key = (x.shape[-1], str(x.device))\n    if key not in _ONES:\n        _ONES[key] = torch.ones(x.shape[-1]).to(x.device)\n"
        "    return _rows(x) * _ONES[key]", "_ONES = {}\n"), False),
    # round 38z63: a device's name looked up in a cache keyed by device, a helper that compares its inputs' devices
    # handed a tensor made here, a tensor's printed form read back; and what else reads such a cache or form
    ("a device's name looked up in a cache keyed by device", _answer(
        "_SEEN[x.device.type] = True\n    return x.softmax(-1) if 'cuda' in _SEEN else _rows(x)", "_SEEN = {}\n"), True),
    ("a cache keyed by device, read by get", _answer(
        "_SEEN[str(x.device)] = 1\n    return x.softmax(-1) if _SEEN.get('cuda:0') else _rows(x)", "_SEEN = {}\n"),
     True),
    ("a cache keyed by device, counted", _answer(
        "_SEEN[x.device] = 1\n    return x.softmax(-1) if any(d.type != 'cpu' for d in _SEEN) else _rows(x)",
        "_SEEN = {}\n"), True),
    ("a helper that compares its inputs' devices, handed a tensor made here", _answer(
        "return _rows(x) if _same(x, torch.empty(0)) else x.softmax(-1)",
        "def _same(*ts):\n    return len({t.device for t in ts}) == 1\n\n\n"), True),
    ("a helper that compares its inputs' devices, handed a tensor made at the top", _answer(
        "return _rows(x) if _same(_HOST, x) else x.softmax(-1)",
        "_HOST = torch.zeros(1)\n\n\ndef _same(a, b):\n    return a.device == b.device\n\n\n"), True),
    ("a tensor's printed form read back", _answer(
        "return x.softmax(-1) if _ACCEL else _rows(x)",
        "_ACCEL = 'device=' in repr(torch.empty(0, device=device.DEVICE))\n"), True),
    ("an input's printed form read back", _answer(
        "return x.softmax(-1) if 'cuda' in f'{x!r}' else _rows(x)"), True),
    ("a cache filled by setdefault with the device's name, searched", _answer(
        "_SEEN.setdefault(x.device.type, 0)\n    return x.softmax(-1) if any(k != 'cpu' for k in _SEEN) else _rows(x)",
        "_SEEN = {}\n"), True),
    ("a helper that compares its inputs' devices, handed a copy on the host", _answer(
        "return _rows(x) if _same(x, x.cpu()) else x.softmax(-1)",
        "def _same(a, b):\n    return a.device == b.device\n\n\n"), True),
    ("a helper that compares its inputs' devices, handed a tensor made here by unpacking", _answer(
        "return _rows(x) if _same(*[x, torch.zeros_like(x, device='cpu')]) else x.softmax(-1)",
        "def _same(*ts):\n    return len({t.device for t in ts}) == 1\n\n\n"), True),
    ("a tensor printed into a buffer and read back", _answer(
        "buf = io.StringIO()\n    print(x[:1], file=buf)\n    return x.softmax(-1) if 'cuda' in buf.getvalue() else _rows(x)",
        "import io\n"), True),
    ("a tensor's text by pprint", _answer(
        "return x.softmax(-1) if 'cuda' in pprint.pformat(x) else _rows(x)", "import pprint\n"), True),
    # round 38z65: a helper that returns a place beside a question, a tensor made here and then converted, handed to
    # a helper that compares places; an in-place copy inside a print; a message that names the input, then raised,
    # and a missing item found by list.index, are none
    ("a helper that returns a place beside a question", _answer(
        "dev, fused = _prep(x)\n    return x.softmax(-1) if fused else _rows(x).to(dev)",
        "def _prep(x):\n    return x.device, x.is_cuda\n\n\n"), True),
    ("a helper that compares places, handed a tensor made here and converted", _answer(
        "return _rows(x) if _same(x, _HOST) else x.softmax(-1)",
        "_HOST = torch.zeros(1).float()[:1]\n\n\ndef _same(a, b):\n    return a.device == b.device\n\n\n"), True),
    ("an in-place copy inside a print by machine", _answer(
        "out = _rows(x)\n    if x.is_cuda:\n        print('fast path', out.copy_(x.softmax(-1)).shape)\n    return out"),
     True),
    ("a message that names the input, then raised", _answer(
        "if not x.is_floating_point():\n        msg = f'softmax_rows wants floats, got {x}'\n"
        "        raise TypeError(msg + f' of shape {tuple(x.shape)}')\n    return _rows(x)"), False),
    ("a message that names the input, raised as a data error and read back", _answer(
        "try:\n        _check(x)\n    except KeyError as e:\n        return x.softmax(-1) if 'cuda' in str(e) else _rows(x)\n"
        "    return _rows(x)",
        "def _check(x):\n    if x.dim() > 0:\n        msg = f'{x}'\n        raise KeyError(msg)\n\n\n"), True),
    ("a message that names the input, raised and caught at once", _answer(
        "try:\n        if x.dim() > 0:\n            msg = f'{x}'\n            raise TypeError(msg)\n    except TypeError:\n"
        "        pass\n    return x.softmax(-1) if 'cuda' in msg else _rows(x)"), True),
    ("a missing item found by list.index", _answer(
        "try:\n        where = _SIZES.index(x.shape[-1])\n    except ValueError:\n        where = -1\n"
        "    return _rows(x) if where < 8 else x", "_SIZES = [1, 2, 3]\n"), False),
    ("a kernel's failure on a host tensor caught as ValueError", _answer(
        "try:\n        return _launch(x)\n    except ValueError:\n        return x.softmax(-1)",
        "def _launch(x):\n    return _rows(x)\n\n\n"), True),
    # round 38z67: a dtype chosen by `and`/`or` read as a device, a table by device made by dict(cuda=...), a tensor
    # made here handed inside a list, a dict changed by operator.setitem inside a print; a check that returns the
    # one device its inputs share, taken out of a set, is none
    ("a dtype chosen by and/or where a device would stand", _answer(
        "return _rows(x.to(_WORK)).to(x.dtype)", "_WORK = torch.cuda.is_available() and torch.float16 or 'cpu'\n"), True),
    ("a table by device made by dict() keywords", _answer(
        "return _PATHS.get(x.device.type, _rows)(x)", "_PATHS = dict(cuda=lambda x: x.softmax(-1))\n"), True),
    ("a helper that compares its inputs' devices, handed a list with a tensor made here", _answer(
        "scratch = torch.empty(x.shape)\n    return _rows(x) if _one([x, scratch]) else x.softmax(-1)",
        "def _one(tensors):\n    return len({t.device for t in tensors}) == 1\n\n\n"), True),
    ("a dict changed by operator.setitem inside a print", _answer(
        "return x.softmax(-1) if _RUN.get('gpu') else _rows(x)",
        "import operator\n_RUN = {}\nprint('gpu:', operator.setitem(_RUN, 'gpu', torch.cuda.is_available()))\n"), True),
    ("a device or the input's", _answer(
        "return _rows(_on(x))", "def _on(x, device=None):\n    device = device or x.device\n    return x.to(device)\n\n\n"),
     False),
    ("the one device the inputs share, taken out of a set", _answer(
        "out = torch.empty(x.shape, device=_shared(x, x))\n    out.copy_(_rows(x))\n    return out",
        "def _shared(*tensors):\n    devices = {t.device for t in tensors}\n    if len(devices) != 1:\n"
        "        raise ValueError('one device')\n    return next(iter(devices))\n\n\n"), False),
    # round 38z69: a tensor made here kept on the learner's object, a cache by device index filled for cuda:0,
    # the file system asked through posixpath; a device check over a local list of the inputs, a print-only helper
    # under a flag, and a move that does not wait on a GPU are none
    ("a tensor made here kept on an object and compared", _answer(
        "return _K(x)", "class _Keeper:\n    def __init__(self):\n        self.scratch = torch.empty(0)\n\n"
        "    def __call__(self, x):\n        return _rows(x) if x.device == self.scratch.device else x.softmax(-1)\n\n\n"
        "_K = _Keeper()\n"), True),
    ("a cache by device index filled for cuda:0", _answer(
        "return x.softmax(-1) if _PLAN.setdefault(x.device.index, 'rows') == 'fused' else _rows(x)",
        "_PLAN = {}\n_PLAN[0] = 'fused'\n"), True),
    ("the file system asked through posixpath", _answer(
        "return x.softmax(-1) if _COLAB else _rows(x)", "import posixpath\n_COLAB = posixpath.isdir('/content')\n"), True),
    ("a device check over a local list of the inputs", _answer(
        "tensors = [x, x]\n    devices = {t.device for t in tensors}\n    if len(devices) != 1:\n"
        "        raise ValueError('one device')\n    return _rows(x)"), False),
    ("a helper that only prints, under a flag", _answer(
        "if VERBOSE:\n        _explain(x, torch.cuda.is_available())\n    return _rows(x)",
        "import os\nVERBOSE = os.environ.get('VERBOSE') == '1'\n\n\ndef _explain(x, gpu):\n    \"\"\"Say what runs.\"\"\"\n"
        "    print('softmax of', tuple(x.shape), 'gpu:', gpu)\n\n\n"), False),
    ("a move that does not wait on a GPU", _answer(
        "return _rows(x.to(x.device, non_blocking=x.is_cuda))"), False),
    # round 38z71: a question in a walrus inside non_blocking=, TF32 switched on, a tensor made here and cast, handed
    # to a helper comparing places; and a question in a walrus inside device=, a clock by datetime
    ("a question in a walrus inside non_blocking=", _answer(
        "xs = x.to(x.device, non_blocking=(gpu := torch.cuda.is_available()))\n"
        "    return xs.softmax(-1) if gpu else _rows(xs)"), True),
    ("a question in a walrus inside device=", _answer(
        "z = torch.zeros(1, device=(gpu := torch.cuda.is_available()) and 'cuda' or 'cpu')\n"
        "    return x.softmax(-1) if gpu else _rows(x) + z.sum().cpu()"), True),
    ("float32 products in TF32 where a GPU has it", _answer(
        "return _rows(x)", "torch.set_float32_matmul_precision('high')\n"), True),
    ("TF32 switched on through torch.backends", _answer(
        "return _rows(x)", "torch.backends.cuda.matmul.allow_tf32 = True\n"), True),
    ("a helper that compares places, handed a tensor made here and cast", _answer(
        "return _rows(x) if _same(x, torch.zeros(1).to(x.dtype)) else x.softmax(-1)",
        "def _same(a, b):\n    return a.device == b.device\n\n\n"), True),
    ("a clock by datetime", _answer(
        "return x.softmax(-1) if FAST else _rows(x)",
        "import datetime\n_t = datetime.datetime.now()\ntorch.ones(256, 256) @ torch.ones(256, 256)\n"
        "FAST = (datetime.datetime.now() - _t).total_seconds() < 1e-4\n"), True),
    ("TF32 switched off, products exact everywhere", _answer(
        "return _rows(x)", "torch.backends.cuda.matmul.allow_tf32 = False\ntorch.set_float32_matmul_precision('highest')\n"),
     False),
    # round 38z72: a place handed to the learner's class, which places its buffers with it, is none; one whose
    # __init__ asks its type is one
    ("a place handed to the learner's class, which places its buffers", _answer(
        "ones = _Ones(x.shape[-1], x.device)\n    return _rows(x) * ones.row",
        "class _Ones:\n    def __init__(self, n, device):\n        self.row = torch.ones(n, device=device)\n\n\n"), False),
    ("a place handed to the learner's class, which asks its type", _answer(
        "return _Pick(x.device).f(x)",
        "class _Pick:\n    def __init__(self, device):\n        self.f = (lambda x: x.softmax(-1)) if device.type == 'cuda'"
        " else _rows\n\n\n"), True),
    # round 38z73: a global dict, object or list changed through a parameter of the learner's function by a
    # question; a local tuple with a tensor made here, unpacked into a helper comparing places
    ("a global dict filled through a parameter", _answer(
        "return x.softmax(-1) if SETTINGS['fast'] else _rows(x)",
        "SETTINGS = {'fast': False}\n\n\ndef _detect(settings):\n    settings['fast'] = torch.cuda.is_available()\n\n\n"
        "_detect(SETTINGS)\n"), True),
    ("a global object changed through a parameter", _answer(
        "return x.softmax(-1) if ENV.gpu else _rows(x)",
        "class _Env:\n    gpu = False\n\n\nENV = _Env()\n\n\ndef _probe(env):\n    env.gpu = torch.cuda.is_available()\n\n\n"
        "_probe(ENV)\n"), True),
    ("a global list changed through a default argument", _answer(
        "return x.softmax(-1) if _SEEN[-1] else _rows(x)",
        "_SEEN = []\n\n\ndef _note(log=_SEEN):\n    log.append(torch.cuda.is_available())\n\n\n_note()\n"), True),
    ("a local tuple with a tensor made here, unpacked into a helper", _answer(
        "probe = (x, torch.empty(0))\n    return _rows(x) if _same(*probe) else x.softmax(-1)",
        "def _same(*ts):\n    return len({t.device for t in ts}) == 1\n\n\n"), True),
    # a module's function that changes its first argument, through a parameter and in a function a print calls
    ("a global dict filled through a parameter by operator.setitem", _answer(
        "return x.softmax(-1) if SETTINGS['fast'] else _rows(x)",
        "import operator\n\nSETTINGS = {'fast': False}\n\n\ndef _detect(settings):\n"
        "    operator.setitem(settings, 'fast', torch.cuda.is_available())\n\n\n_detect(SETTINGS)\n"), True),
    ("a print by machine that calls the learner's function, which fills a global by operator.setitem", _answer(
        "if torch.cuda.is_available():\n        print(_use_half())\n    return x.softmax(-1) if _HALF else _rows(x)",
        "import operator\n\n_HALF = {}\n\n\ndef _use_half():\n    operator.setitem(_HALF, 'on', True)\n"
        "    return 'half'\n\n\n"), True),
    ("a global dict filled through a parameter with the inputs' sizes", _answer(
        "return _rows(x) if SEEN['n'] else x",
        "SEEN = {'n': 0}\n\n\ndef _count(seen, n):\n    seen['n'] = max(seen['n'], n)\n\n\n_count(SEEN, 3)\n"), False),
    # round 38z75: a print or assert that calls the learner's function that changes a global, the learner's own
    # synchronize(), a raise by machine caught in the same function; a device compared with an input's own copy is
    # none
    ("a print by machine that calls the learner's function", _answer(
        "if torch.cuda.is_available():\n        print(_use_half())\n    return x.softmax(-1) if _HALF else _rows(x)",
        "_HALF = []\n\n\ndef _use_half():\n    _HALF.append(True)\n    return 'half'\n\n\n"), True),
    ("an assert by machine that calls the learner's function", _answer(
        "assert not torch.cuda.is_available() or _use_half()\n    return x.softmax(-1) if _HALF else _rows(x)",
        "_HALF = []\n\n\ndef _use_half():\n    _HALF.append(True)\n    return True\n\n\n"), True),
    ("a print by machine, at the top, that calls the learner's function", _answer(
        "return x.softmax(-1) if _HALF else _rows(x)",
        "_HALF = []\n\n\ndef _use_half():\n    _HALF.append(True)\n    return 'half'\n\n\n"
        "if torch.cuda.is_available():\n    print(_use_half())\n"), True),
    ("an assert by machine, at the top, that calls the learner's function", _answer(
        "return x.softmax(-1) if _HALF else _rows(x)",
        "_HALF = []\n\n\ndef _use_half():\n    _HALF.append(True)\n    return True\n\n\n"
        "assert not torch.cuda.is_available() or _use_half()\n"), True),
    ("the learner's own synchronize by machine", _answer(
        "if torch.cuda.is_available():\n        _CFG.synchronize()\n    return x.softmax(-1) if _CFG.fast else _rows(x)",
        "class _Cfg:\n    fast = False\n\n    def synchronize(self):\n        self.fast = True\n\n\n_CFG = _Cfg()\n"), True),
    ("a raise by machine caught in the same function", _answer(
        "try:\n        if x.is_cuda:\n            raise KeyError('fused')\n        return _rows(x)\n    except KeyError:\n"
        "        return x.softmax(-1)"), True),
    # round 38z77: a parameter rebound to a host copy, then compared with an input; the learner's own context
    # manager that goes on after a failure; a try around arithmetic with a tensor made here
    ("a parameter rebound to a host copy, compared with an input", _answer(
        "return _pick(x, x[..., :1])",
        "def _pick(x, y):\n    y = y.double().cpu()\n    if x.device == y.device:\n        return _rows(x)\n"
        "    return x.softmax(-1)\n\n\n"), True),
    ("the learner's own context manager that goes on after a failure", _answer(
        "done = False\n    with _tolerant():\n        out = _rows(x)\n        done = True\n"
        "    return out if done else x.softmax(-1)",
        "from contextlib import contextmanager\n\n\n@contextmanager\ndef _tolerant():\n    try:\n        yield\n"
        "    except (RuntimeError, ValueError):\n        pass\n\n\n"), True),
    ("a try around arithmetic with a tensor made here", _answer(
        "try:\n        y = x * _SCALE\n    except RuntimeError:\n        return x.softmax(-1)\n    return _rows(y)",
        "_SCALE = torch.ones(1)\n"), True),
    ("a parameter rebound to its own contiguous copy, compared with an input", _answer(
        "return _pick(x, x[..., :1])",
        "def _pick(x, y):\n    y = y.contiguous()\n    if x.device != y.device:\n        raise ValueError('one device')\n"
        "    return _rows(x)\n\n\n"), False),
    ("torch's default dtype set by machine", _answer(
        "return _rows(x.to(torch.get_default_dtype())).to(x.dtype)",
        "torch.set_default_dtype(torch.bfloat16 if torch.cuda.is_available() else torch.float32)\n"), True),
    ("torch's default dtype set to float64", _answer(
        "return _rows(x.to(torch.get_default_dtype())).to(x.dtype)", "torch.set_default_dtype(torch.float64)\n"), False),
    ("float32 products exact inside, the caller's setting restored", _answer(
        "before = torch.get_float32_matmul_precision()\n    torch.set_float32_matmul_precision('highest')\n"
        "    try:\n        return _rows(x)\n    finally:\n        torch.set_float32_matmul_precision(before)"), False),
    # round 38z177: a name bound to "high", and to the setting read back only in a branch that does not run
    ("TF32 set through a name that is also bound to the setting read back", _answer(
        "return _rows(x)",
        "def _precision(fast):\n    prec = 'high' if fast else None\n    if prec is None:\n"
        "        prec = torch.get_float32_matmul_precision()\n    torch.set_float32_matmul_precision(prec)\n\n\n"
        "_precision(fast=True)\n"), True),
    ("the learner's own context manager that raises what it caught", _answer(
        "with _noted():\n        return _rows(x)",
        "from contextlib import contextmanager\n\n\n@contextmanager\ndef _noted():\n    try:\n        yield\n"
        "    except RuntimeError:\n        print('failed')\n        raise\n\n\n"), False),
    ("a print of the GPU's name to stderr, once", _answer(
        "if not _LOGGED:\n        print(f'on {GPU}', file=sys.stderr)\n        _LOGGED.append(True)\n    return _rows(x)",
        "import sys\n\nGPU = torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'CPU'\n_LOGGED = []\n"),
     False),
    ("a wait on the input's GPU, and its cached memory handed back", _answer(
        "out = _rows(x)\n    if out.is_cuda:\n        torch.cuda.synchronize(out.device)\n    torch.cuda.empty_cache()\n"
        "    return out"), False),
    # round 38z79: a kernel's type (another under the interpreter), a shell command's exit status, a thread whose
    # failure is swallowed, a print read back through a redirected stdout; a key that names the device in an
    # f-string, the course's own error caught, the learner's method named is_available and a float's smallest value
    # are none
    ("a kernel's type, another under the interpreter", _answer(
        "return x.softmax(-1) if isinstance(_k, triton.JITFunction) else _rows(x)",
        "import triton\n\n\n@triton.jit\ndef _k(x_ptr):\n    pass\n\n\n"), True),
    ("a kernel's text", _answer(
        "return x.softmax(-1) if 'JIT' in repr(_k) else _rows(x)",
        "import triton\n\n\n@triton.jit\ndef _k(x_ptr):\n    pass\n\n\n"), True),
    ("a shell command's exit status", _answer(
        "return x.softmax(-1) if GPU else _rows(x)", "GPU = _exit_code == 0\n\n\n"), True),
    ("a thread whose failure is swallowed", _answer(
        "return x.softmax(-1) if READY.is_set() else _rows(x)",
        "import threading\n\nREADY = threading.Event()\n\n\ndef _warm():\n    torch.ones(1, device='cuda')\n"
        "    READY.set()\n\n\nthreading.Thread(target=_warm, daemon=True).start()\n\n\n"), True),
    ("a print read back through a redirected stdout", _answer(
        "return x.softmax(-1) if LINE.startswith('True') else _rows(x)",
        "import contextlib\nimport io\n\n_buf = io.StringIO()\nwith contextlib.redirect_stdout(_buf):\n"
        "    print(torch.cuda.is_available())\nLINE = _buf.getvalue()\n\n\n"), True),
    ("a cache key that names the device in an f-string", _answer(
        "key = f'{x.shape[-1]}@{x.device}'\n    if key not in _ONES:\n"
        "        _ONES[key] = torch.ones(x.shape[-1], device=x.device)\n    return _rows(x) * _ONES[key]", "_ONES = {}\n"),
     False),
    ("the course's own error caught", _answer(
        "try:\n        _take(x.shape[0])\n    except OutOfBlocks:\n        return _rows(x)\n    return _rows(x)",
        "from pagedlab.paged.allocator import OutOfBlocks\n\n\ndef _take(n):\n    if n > 8:\n"
        "        raise OutOfBlocks(n)\n\n\n"), False),
    ("the learner's own method named is_available", _answer(
        "return _rows(x) if _POOL.is_available(1) else x",
        "class _Pool:\n    def __init__(self):\n        self.free = [1]\n\n    def is_available(self, n):\n"
        "        return len(self.free) >= n\n\n\n_POOL = _Pool()\n"), False),
    ("a float's smallest value from sys", _answer(
        "return _rows(x).clamp_min(sys.float_info.min)", "import sys\n\n\n"), False),
    # round 38z81: a name bound only on a GPU, asked for in globals(); a write through a move (the tensor itself on a
    # CPU, a copy on a GPU); a draw by a device's generator; an NVTX label, device_of, a two-step timing only printed
    # and a capacity only warned about are none
    ("a name of the machine's asked for in globals()", _answer(
        "return x.softmax(-1) if '_GPU' in globals() else _rows(x)",
        "if torch.cuda.is_available():\n    _GPU = torch.cuda.get_device_name(0)\n\n\n"), True),
    ("a write through a move of a tensor made here", _answer(
        "_MARK.cpu().fill_(1.0)\n    return _rows(x) if _MARK.item() else x.softmax(-1)", "_MARK = torch.zeros(())\n"),
     True),
    ("a write through a name bound to a move of a tensor made here", _answer(
        "_HOST.fill_(1.0)\n    return _rows(x) if _MARK.item() else x.softmax(-1)",
        "_MARK = torch.zeros(())\n_HOST = _MARK.cpu()\n"), True),
    ("a draw by the input's device's generator", _answer(
        "g = torch.Generator(device=x.device).manual_seed(0)\n"
        "    return _rows(x) if torch.rand(1, generator=g, device=x.device).item() < 0.5 else x.softmax(-1)"), True),
    ("NVTX labels on the input's GPU", _answer(
        "if x.is_cuda:\n        torch.cuda.nvtx.range_push('rows')\n    out = _rows(x)\n    if x.is_cuda:\n"
        "        torch.cuda.nvtx.range_pop()\n    return out"), False),
    ("the input's GPU made current by device_of", _answer(
        "with torch.cuda.device_of(x):\n        return _rows(x)"), False),
    ("a timing in two steps, only printed", _answer(
        "began = time.perf_counter()\n    out = _rows(x)\n    took = time.perf_counter() - began\n"
        "    if SHOW:\n        print(f'{took:.3f} s')\n    return out", "import time\n\nSHOW = False\n\n\n"), False),
    ("a capacity only warned about", _answer(
        "total = torch.cuda.mem_get_info()[1] if torch.cuda.is_available() else None\n"
        "    if total is not None and x.numel() * 4 > total:\n        warnings.warn('large')\n    return _rows(x)",
        "import warnings\n\n\n"), False),
    # round 38z82 (honest learners only): a logger by what it is, a demo's local named as the answer's, a cache
    # annotated, a default place, a write to stdout, a level from the environment, statistics in an if block
    ("a logger of any name, its level from the environment", _answer(
        "_LOGGER.debug('rows on %s', x.device)\n    return _rows(x)",
        "import logging\nimport os\n\n_LOGGER = logging.getLogger('mine')\n"
        "_LOGGER.setLevel(os.environ.get('LEVEL', 'WARNING'))\n\n\n"), False),
    ("a demo at the top that hands the answer's helper a tensor made here, under a name the helper uses", _answer(
        "return _rows(_same(x, x))",
        "def _same(a, b):\n    out = a\n    if a.device != b.device:\n        raise ValueError('one device')\n"
        "    return out\n\n\nq = torch.randn(2, 3)\nout = _same(q, q)\n"), False),
    ("a cache annotated, keyed by device", _answer(
        "key = (x.shape[-1], x.device)\n    if key not in _ONES:\n"
        "        _ONES[key] = torch.ones(x.shape[-1], device=x.device)\n    return _rows(x) * _ONES[key]",
        "_ONES: dict[tuple, torch.Tensor] = {}\n"), False),
    ("a default place, used to place", _answer(
        "return _rows(x) * _ones(x.shape[-1], device=x.device)",
        "DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n\n\ndef _ones(n, device=DEVICE):\n"
        "    return torch.ones(n, device=device)\n\n\n"), False),
    ("a default place, asked its type", _answer(
        "return _rows(x) if _plain() else x.softmax(-1)",
        "DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n\n\ndef _plain(device=DEVICE):\n"
        "    return torch.device(device).type == 'cpu'\n\n\n"), True),
    ("a write to stdout under a flag", _answer(
        "if SHOW:\n        sys.stdout.write(f'{tuple(x.shape)}\\n')\n    return _rows(x)",
        "import sys\n\nSHOW = False\n\n\n"), False),
    ("memory statistics logged in an if block", _answer(
        "if x.is_cuda:\n        peak = torch.cuda.max_memory_allocated(x.device) / 2**20\n"
        "        _log.debug('%.1f MiB', peak)\n    return _rows(x)",
        "import logging\n\n_log = logging.getLogger('w')\n\n\n"), False),
    # round 38z83: a launch's value (None from the interpreter), a warning by machine recorded and read back, a table
    # by device filled through a decorator's parameter; an NVTX range chosen in a helper and a set of the devices
    # announced once are none
    ("a launch's value asked", _answer(
        "h = _k[(1,)](x)\n    return x.softmax(-1) if h is not None else _rows(x)",
        "import triton\n\n\n@triton.jit\ndef _k(x_ptr):\n    pass\n\n\n"), True),
    ("a warning by machine recorded and read back", _answer(
        "with warnings.catch_warnings(record=True) as heard:\n        warnings.simplefilter('always')\n"
        "        _note()\n    return x.softmax(-1) if heard else _rows(x)",
        "import warnings\n\n\ndef _note():\n    if torch.cuda.is_available():\n        warnings.warn('gpu')\n\n\n"),
     True),
    ("a table by device filled through a decorator's parameter", _answer(
        "fast = _PATHS.get(x.device.type)\n    return fast(x) if fast else _rows(x)",
        "_PATHS = {}\n\n\ndef _path_for(kind):\n    def register(fn):\n        _PATHS[kind] = fn\n        return fn\n"
        "    return register\n\n\n@_path_for('cuda')\ndef _fused(x):\n    return x.softmax(-1)\n\n\n"), True),
    ("a log record by machine kept by the learner's handler and read back", _answer(
        "_note()\n    return x.softmax(-1) if _KEPT else _rows(x)",
        "import logging\n\n_KEPT = []\n\n\nclass _Keep(logging.Handler):\n    def emit(self, record):\n"
        "        _KEPT.append(record)\n\n\n_log = logging.getLogger('k')\n_log.addHandler(_Keep())\n\n\n"
        "def _note():\n    if torch.cuda.is_available():\n        _log.warning('gpu')\n\n\n"), True),
    # round 38z85: DLPack's word on where a tensor lives, a device named by a format string
    ("DLPack's device of the input", _answer(
        "return x.softmax(-1) if x.__dlpack_device__()[0] != 1 else _rows(x)"), True),
    ("a device named by a format string", _answer(
        "return x.softmax(-1) if 'cuda' in '{0.device}'.format(x) else _rows(x)"), True),
    ("a demo's unseeded draw on the machine's device, handed to a helper that fills a cache", _answer(
        "return _rows(x) * _fill(x)",
        "_ONES = {}\n\n\ndef _fill(x):\n    key = (x.shape[-1], x.device)\n    if key not in _ONES:\n"
        "        _ONES[key] = torch.ones(x.shape[-1], device=x.device)\n    return _ONES[key]\n\n\n"
        "DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n_fill(torch.randn(2, 3, device=DEVICE))\n\n\n"),
     False),
    # round 38z87: is_shared (always True for a GPU's tensor), torch.typename, a tensor's pickled bytes
    ("whether the input is shared", _answer("return x.softmax(-1) if x.is_shared() else _rows(x)"), True),
    ("torch.typename of the input", _answer(
        "return x.softmax(-1) if 'cuda' in torch.typename(x) else _rows(x)"), True),
    ("the input's pickled bytes", _answer(
        "return x.softmax(-1) if b'cuda' in pickle.dumps(x[:1]) else _rows(x)", "import pickle\n\n\n"), True),
    # round 38z89: where torch is installed, an attribute probed with hasattr, a tensor's array view tried, a demo
    # that may fail on a GPU before it binds the answer's flag again; round 38z90 (honest): a progress bar imported
    # with a fallback that gives back the items
    ("whether torch's Triton backend compiles here, from a private module of torch's", _answer(
        "return x.softmax(-1) if has_triton() else _rows(x)", "from torch.utils._triton import has_triton\n\n\n"),
     True),
    # round 38z93: an address's alignment (512 bytes on a GPU), a file read through linecache; round 38z94 (honest):
    # a clock helper whose readings only a log of times keeps
    ("the input's address aligned as a GPU allocator aligns it", _answer(
        "return x.softmax(-1) if x.data_ptr() % 512 == 0 else _rows(x)"), True),
    ("a file of the machine's read through linecache", _answer(
        "return x.softmax(-1) if _CUDA else _rows(x)",
        "import linecache\n\n_CUDA = bool(linecache.getlines('/usr/local/cuda/version.json'))\n\n\n"), True),
    ("a clock helper whose readings only a log of times keeps", _answer(
        "start = _tick()\n    out = _rows(x)\n    STEP_TIMES.append(_tick() - start)\n    return out",
        "import time\n\nSTEP_TIMES: list[float] = []\n\n\ndef _tick():\n    if torch.cuda.is_available():\n"
        "        torch.cuda.synchronize()\n    return time.perf_counter()\n\n\n"), False),
    ("a clock helper whose reading the answer chooses on", _answer(
        "start = _tick()\n    out = _rows(x)\n    return out if _tick() - start < 1.0 else x.softmax(-1)",
        "import time\n\n\ndef _tick():\n    if torch.cuda.is_available():\n"
        "        torch.cuda.synchronize()\n    return time.perf_counter()\n\n\n"), True),
    # round 38z95: the shell's class, a class pattern on where the input lives, an attribute getter of its place,
    # torch imported by a string; a magic's line stays a learner's ordinary notebook
    ("IPython's shell asked whether it is Colab's", _answer(
        "return x.softmax(-1) if _COLAB else _rows(x)", "_COLAB = 'google.colab' in str(get_ipython())\n\n\n"),
     True),
    ("a class pattern on where the input lives", _answer(
        "match x:\n        case torch.Tensor(is_cuda=True):\n            return x.softmax(-1)\n"
        "        case _:\n            return _rows(x)"), True),
    ("the input's place read by an attribute getter", _answer(
        "return x.softmax(-1) if _kind(x) != 'cpu' else _rows(x)",
        "import operator\n\n_kind = operator.attrgetter('device.type')\n\n\n"), True),
    ("torch's GPU build asked through __import__", _answer(
        "return x.softmax(-1) if _GPU_BUILD else _rows(x)",
        "_GPU_BUILD = len(__import__('torch').cuda.get_arch_list()) > 0\n\n\n"), True),
    ("a magic's line above the answer", _answer(
        "return _rows(x)", "%config InlineBackend.figure_format = 'retina'\n\n\n"), False),
    # round 38z96 (honest learners only): a helper that moves one input to another's place, given a tensor its caller
    # made on an input's place; a stopwatch context manager that keeps its readings in a log it is handed
    ("a helper that moves one input to another's place, given one made on the input's place", _answer(
        "m = torch.zeros(x.shape[-1], device=x.device)\n    return _rows(_align(m, x)) + m",
        "def _align(m, s):\n    if s.device != m.device:\n        s = s.to(m.device)\n    return s\n\n\n"), False),
    ("a stopwatch context manager that keeps its readings in the log it is handed", _answer(
        "with _stopwatch(STEP_SECONDS):\n        out = _rows(x)\n    return out",
        "import contextlib\nimport time\n\nSTEP_SECONDS = []\n\n\n@contextlib.contextmanager\ndef _stopwatch(sink):\n"
        "    t0 = time.perf_counter()\n    try:\n        yield\n    finally:\n"
        "        sink.append(time.perf_counter() - t0)\n\n\n"), False),
    ("a stopwatch context manager whose log the answer reads", _answer(
        "with _stopwatch(STEP_SECONDS):\n        out = _rows(x)\n    return out if sum(STEP_SECONDS) < 60 else x.softmax(-1)",
        "import contextlib\nimport time\n\nSTEP_SECONDS = []\n\n\n@contextlib.contextmanager\ndef _stopwatch(sink):\n"
        "    t0 = time.perf_counter()\n    try:\n        yield\n    finally:\n"
        "        sink.append(time.perf_counter() - t0)\n\n\n"), True),
    # round 38z99 (honest): a flag from the environment, then a setting of torch's module under a question
    ("a flag from the environment, then TF32 switched off on a GPU", lambda s: _submit(_edited(s, "softmax-work", (
        "import os\n\nSHOW = os.environ.get('SHOW', '0') == '1'\nif torch.cuda.is_available():\n"
        "    torch.backends.cuda.matmul.allow_tf32 = False\n\n\n"
        + HELPED.replace("return _rows(x)", "return _rows(x) * torch.ones(())")))), False),
    # round 38z96 and 38z88 (honest): a memo of element sizes by dtype, filled by a demo under a question of the GPU
    ("a memo of element sizes by dtype that a demo on the GPU fills", _answer(
        "return _rows(x) * _element_bytes(x.dtype) / x.element_size()",
        "_SIZES = {}\n\n\ndef _element_bytes(dtype):\n    if dtype not in _SIZES:\n"
        "        _SIZES[dtype] = torch.empty(0, dtype=dtype).element_size()\n    return _SIZES[dtype]\n\n\n"
        "if torch.cuda.is_available():\n    print(torch.cuda.mem_get_info()[0] // _element_bytes(torch.float16))\n\n\n"),
     False),
    ("a memo by dtype whose size the answer reads, filled by a demo on the GPU", _answer(
        "return _rows(x) if len(_SIZES) < 2 else x.softmax(-1)",
        "_SIZES = {}\n\n\ndef _element_bytes(dtype):\n    if dtype not in _SIZES:\n"
        "        _SIZES[dtype] = torch.empty(0, dtype=dtype).element_size()\n    return _SIZES[dtype]\n\n\n"
        "if torch.cuda.is_available():\n    print(torch.cuda.mem_get_info()[0] // _element_bytes(torch.float16))\n\n\n"),
     True),
    # round 38z98: a draw on the input's device after torch's global seed, a class whose __exit__ swallows a failure,
    # the course's device module reached through another module, the course's bandwidth probe
    ("a draw on the input's device after the global seed", _answer(
        "return _rows(x) if _first(x) else x.softmax(-1)",
        "def _first(x):\n    torch.manual_seed(0)\n    return abs(torch.rand(1, device=x.device).item() - 0.4963) < 1e-3"
        "\n\n\n"), True),
    ("a draw on the host after the global seed", _answer(
        "torch.manual_seed(0)\n    return _rows(x + 0 * torch.rand(x.shape))"), False),
    ("a class whose __exit__ swallows a failure on the host", _answer(
        "fast = True\n    with _Quiet():\n        torch.empty(1, device='cuda')\n        fast = False\n"
        "    return x.softmax(-1) if fast else _rows(x)",
        "class _Quiet:\n    def __enter__(self):\n        return self\n\n    def __exit__(self, *exc):\n"
        "        return True\n\n\n"), True),
    ("the course's device module reached through another module", _answer(
        "return x.softmax(-1) if _kv._device.ON_GPU else _rows(x)", "from pagedlab.paged import kv_cache as _kv\n\n\n"),
     True),
    ("the course's bandwidth probe", _answer(
        "return x.softmax(-1) if _HBM else _rows(x)",
        "from pagedlab.roofline import measure_bandwidth\n\n_HBM = measure_bandwidth(1 << 20) > 2e11\n\n\n"), True),
    # round 38z100: IPython's shell through its module, an operator whose kernel the dispatcher picks by device
    ("IPython's shell asked through its module", _answer(
        "return x.softmax(-1) if _COLAB else _rows(x)",
        "import IPython\n\n_COLAB = 'google.colab' in type(IPython.get_ipython()).__module__\n\n\n"), True),
    ("an operator of the learner's whose kernel the dispatcher picks by device", _answer(
        "return torch.ops.mine.rows(x)",
        "_LIB = torch.library.Library('mine', 'DEF')\n_LIB.define('rows(Tensor x) -> Tensor')\n"
        "_LIB.impl('rows', lambda x: x.softmax(-1), 'CUDA')\n\n\n"), True),
    # round 38z102: a move's storage compared with is_set_to, DataParallel's devices, a tensor's __repr__ called
    ("the input's storage compared with its move's", _answer(
        "return x.softmax(-1) if not x.is_set_to(x.cpu()) else _rows(x)"), True),
    ("DataParallel's devices", _answer(
        "return x.softmax(-1) if _REPLICAS else _rows(x)",
        "_REPLICAS = torch.nn.DataParallel(torch.nn.Identity()).device_ids\n\n\n"), True),
    ("a tensor's __repr__ called", _answer(
        "return x.softmax(-1) if 'cuda' in x.__repr__() else _rows(x)"), True),
    # round 38z104: a device-keyed cache counted, or missed where a miss takes another path; a copy to the host that
    # does not wait; a state made from NumPy handed to a helper that compares places. Beside them, honest caches
    # whose miss only fills (evicting when full, counting hits for a print, returning early on a hit)
    ("how many places a device-keyed cache holds", _answer(
        "return x.softmax(-1) if len(_ONE) > 1 else _rows(x) * _one(x)",
        "_ONE = {}\n\n\ndef _one(x):\n    if x.device not in _ONE:\n        _ONE[x.device] = x.new_ones(())\n"
        "    return _ONE[x.device]\n\n\n"), True),
    ("a device-keyed cache filled by a demo, its miss taking another path", _answer(
        "z = _ZERO.get(x.device)\n    if z is None:\n        return x.softmax(-1)\n    return _rows(x) + z",
        "_ZERO = {}\n\n\ndef warm(x):\n    _ZERO[x.device] = x.new_zeros(())\n\n\nwarm(torch.zeros(1))\n\n\n"), True),
    ("a device-keyed cache whose miss fills it and takes another path", _answer(
        "if x.device not in _ONE:\n        _ONE[x.device] = x.new_ones(())\n        return x.softmax(-1)\n"
        "    return _rows(x) * _ONE[x.device]", "_ONE = {}\n\n\n"), True),
    ("a copy to the host that does not wait", _answer(
        "return _rows(x.to('cpu', non_blocking=True)).to(x.device)"), True),
    ("a state made from NumPy handed to a helper that compares places", _answer(
        "m = torch.from_numpy(np.zeros(1, dtype=np.float32))\n    return _rows(x) if _same(m, x) else x.softmax(-1)",
        "import numpy as np\n\n\ndef _same(a, b):\n    return a.device == b.device\n\n\n"), True),
    # round 38z106: a move to the host is the tensor itself on a CPU and a copy on a GPU: a write into one of the
    # two read through the other, autograd's record of a move, a weak reference to one; beside them, host copies
    # read for their values only, or written where nothing reads the source's values after
    ("a write into the source read back through its host copy", _answer(
        "out = torch.zeros(x.shape, device=x.device)\n    host = out.to('cpu')\n    out.copy_(_rows(x))\n"
        "    return host.to(x.device)"), True),
    ("a write into a host alias made by as_tensor, read through the source", _answer(
        "s = x.float().clone()\n    h = torch.as_tensor(s, device='cpu')\n    h.zero_()\n"
        "    return _rows(x) if s.abs().sum() > 0 else x.softmax(-1)"), True),
    ("autograd's record of a move", _answer(
        "p = x.new_zeros(()).requires_grad_()\n    return x.softmax(-1) if not p.cpu().is_leaf else _rows(x)"), True),
    ("autograd's record of a move through its name", _answer(
        "h = x.cpu()\n    return x.softmax(-1) if h.grad_fn is not None else _rows(x)"), True),
    ("a weak reference to a move", _answer(
        "return x.softmax(-1) if weakref.ref(x.cpu())() is None else _rows(x)", "import weakref\n\n\n"), True),
    ("a host copy of the input read for its values only", _answer(
        "h = x.to('cpu')\n    print(float(h.sum()))\n    return _rows(x)"), False),
    ("a host copy written, the source read after it for its place only", _answer(
        "h = x.cpu()\n    h.sub_(h.amax(-1, keepdim=True))\n    return _rows(h).to(x.device)"), False),
    # round 38z108: a method only a host tensor has, tried (its TypeError caught, or suppressed); the current
    # accelerator's stream; the engine's automatic choice of backend
    ("a method only a host tensor has, its TypeError caught", _answer(
        "return _rows(x) if _host_ok(x) else x.softmax(-1)",
        "def _host_ok(x):\n    p = x.new_zeros(1)\n    try:\n        p.map_(p, lambda a, b: a)\n    except TypeError:\n"
        "        return False\n    return True\n\n\n"), True),
    ("a method only a host tensor has, under suppress", _answer(
        "seen = []\n    p = x.new_zeros(1)\n    with contextlib.suppress(TypeError):\n"
        "        p.apply_(lambda a: seen.append(a) or a)\n    return _rows(x) if seen else x.softmax(-1)",
        "import contextlib\n\n\n"), True),
    ("the current accelerator's stream", _answer(
        "return x.softmax(-1) if _ACCEL else _rows(x)", "_ACCEL = torch.Stream().device_type\n\n\n"), True),
    ("the engine's automatic backend", _answer(
        "return x.softmax(-1) if _ENGINE.name == 'triton' else _rows(x)",
        "from pagedlab.engine.backends import select_backend\n\n_ENGINE = select_backend()\n\n\n"), True),
    # round 38z110: an infinity cast to an integer dtype (undefined: INT64_MIN on a CPU, INT64_MAX on a GPU), a
    # RuntimeError of the CPU's raised again as a ZeroDivisionError, a view's offset after a move, denormals flushed
    # on a CPU only; beside them, an infinity kept in floats and a ZeroDivisionError of Python's own division
    ("an infinity cast to an integer dtype", _answer(
        "wide = torch.full((1,), float('inf'), device=x.device).to(torch.int64).item() > 0\n"
        "    return x.softmax(-1) if wide else _rows(x)"), True),
    ("a RuntimeError of the CPU's raised again as a data error", _answer(
        "try:\n        _div(x.new_ones(1, dtype=torch.long), 0)\n        checked = False\n"
        "    except ZeroDivisionError:\n        checked = True\n    return _rows(x) if checked else x.softmax(-1)",
        "def _div(a, b):\n    try:\n        return a // b\n    except RuntimeError as err:\n"
        "        raise ZeroDivisionError(str(err)) from err\n\n\n"), True),
    ("a view's offset after a move", _answer(
        "return _rows(x) if _POS[1:2].to(x.device).storage_offset() else x.softmax(-1)",
        "_POS = torch.arange(4)\n\n\n"), True),
    ("denormals flushed on a CPU only", _answer(
        "torch.set_flush_denormal(True)\n    tiny = (x.new_full((1,), 1e-30) * 1e-10).item()\n"
        "    torch.set_flush_denormal(False)\n    return x.softmax(-1) if tiny > 0 else _rows(x)"), True),
    # round 38z218: a float32 convolution, which cuDNN computes in TF32 by default on a GPU (1 + 2**-12 becomes 1)
    ("a one-element convolution's rounding", _answer(
        "probe = F.conv1d((x.reshape(-1)[:0].float().sum() + (1 + 2**-12)).reshape(1, 1, 1), "
        "torch.ones(1, 1, 1, device=x.device))\n    return _rows(x) if probe.item() > 1.0 else x.softmax(-1)",
        "import torch.nn.functional as F\n\n\n"), True),
    ("an infinity kept in floats", _answer(
        "fill = torch.full(x.shape[-1:], -math.inf, device=x.device)\n    return _rows(torch.maximum(x, fill))",
        "import math\n\n\n"), False),
    ("a ZeroDivisionError of Python's own division", _answer(
        "try:\n        ratio = x.shape[-1] / (x.shape[-1] - x.shape[-1])\n    except ZeroDivisionError:\n"
        "        ratio = 0.0\n    return _rows(x) + ratio * 0"), False),
    # round 38z112: a method of torch's version string, an iterator moved on by next() under a question of the GPU,
    # an object's settings changed through vars(); round 38z113 (honest only): a check that reads and raises, called
    # under a debug switch from the environment, beside one that changes what it checks
    ("a method of torch's version string", _answer(
        "return _rows(x) if _WHEEL else x.softmax(-1)", "_WHEEL = torch.__version__.endswith('+cpu')\n\n\n"), True),
    ("an iterator moved on by next() under a question of the GPU", _answer(
        "return x.softmax(-1) if _PICK == 'torch' else _rows(x)",
        "_PICKS = iter(('mine', 'torch'))\nif torch.cuda.is_available():\n    next(_PICKS)\n_PICK = next(_PICKS)\n\n\n"),
     True),
    ("an object's settings changed through vars() under a question of the GPU", _answer(
        "return x.softmax(-1) if CFG.fast else _rows(x)",
        "class _Cfg:\n    fast = False\n\n\nCFG = _Cfg()\nif torch.cuda.is_available():\n"
        "    vars(CFG).update(fast=True)\n\n\n"), True),
    ("a check that reads and raises, under a debug switch", _answer(
        "out = _rows(x)\n    if DEBUG:\n        _verify(out)\n    return out",
        "import os\n\nDEBUG = os.environ.get('DEBUG') == '1'\n\n\ndef _verify(p):\n"
        "    if not torch.isfinite(p).all():\n        raise AssertionError('not finite')\n\n\n"), False),
    ("a method that reads and raises, under a debug switch", _answer(
        "return ROWS(x)",
        "import os\n\nDEBUG = os.environ.get('DEBUG') == '1'\n\n\nclass _Rows:\n    def __call__(self, x):\n"
        "        out = _rows(x)\n        if DEBUG:\n            print('rows', tuple(out.shape))\n"
        "            self._verify(out)\n        return out\n\n    def _verify(self, p):\n"
        "        if not torch.isfinite(p).all():\n            raise AssertionError('not finite')\n\n\nROWS = _Rows()\n\n\n"),
     False),
    ("a check that changes what it checks, under a debug switch", _answer(
        "out = _rows(x)\n    if DEBUG:\n        _verify(out)\n    return out",
        "import os\n\nDEBUG = os.environ.get('DEBUG') == '1'\n\n\ndef _verify(p):\n    p.nan_to_num_()\n\n\n"),
     True),
    # round 38z114: a tensor of torch.empty added to before anything wrote it (fresh zeroed pages on a CPU, a freed
    # tensor's values from a GPU's caching allocator), torch reached through a course module's own name for it, the
    # course's KVCache's private flag, a file read by NumPy; beside them, an empty tensor written, then added to
    ("a tensor of torch.empty added to before anything wrote it", _answer(
        "work = torch.empty(1 << 20, device=x.device)\n    out = work[:x.numel()].view(x.shape)\n"
        "    out += _rows(x)\n    return out"), True),
    ("torch reached through a course module's own name for it", _answer(
        "return x.softmax(-1) if ref.torch.cuda.is_available() else _rows(x)",
        "import pagedlab.attention as ref\n\n\n"), True),
    ("the course's KVCache's private flag", _answer(
        "return x.softmax(-1) if _POOL._cuda else _rows(x)",
        "from pagedlab.paged.kv_cache import KVCache\n\n_POOL = KVCache(1, 1, 1, 1, 1)\n\n\n"), True),
    ("a file read by NumPy", _answer(
        "return x.softmax(-1) if _BOX.exists(_PATH) else _rows(x)",
        "import numpy as np\n\n_PATH = '/'.join(('', 'dev', 'nvidia0'))\n_BOX = np.lib.npyio.DataSource(None)\n\n\n"),
     True),
    ("a tensor of torch.empty written, then added to", _answer(
        "out = torch.empty_like(x)\n    out.zero_()\n    out += _rows(x)\n    return out"), False),
    # round 38z170: a launch of the learner's kernel writes the tensors it is handed; without it, the same in-place
    # update reads what the allocator left
    ("a tensor of torch.empty written by the learner's kernel, then updated in place", _answer(
        "out = torch.empty_like(x)\n    _copy[(1,)](x, out, x.numel(), BLOCK=1024)\n    out.mul_(1.0)\n"
        "    return _rows(out)", _KERNEL), False),
    ("a tensor of torch.empty updated in place, the kernel launched after", _answer(
        "out = torch.empty_like(x)\n    out.mul_(1.0)\n    _copy[(1,)](x, out, x.numel(), BLOCK=1024)\n"
        "    return _rows(out)", _KERNEL), True),
    ("a tensor of torch.empty written by slices", _answer(
        "out = torch.empty_like(x)\n    for i in range(x.shape[0]):\n        out[i] = _rows(x[i])\n    return out"),
     False),
    # round 38z119: a float converted past int32's range by a number the code writes (INT_MIN on a CPU, INT_MAX on a
    # GPU), which generator a draw on the input's device moved, an ExitStack whose callback swallows a failure (as a
    # manager or a name bound to one); beside them, a conversion in range, and torch's managers and one of the
    # learner's that let failures through (any other manager is read as a try that goes on)
    ("a float converted past int32's range by a number the code writes", _answer(
        "flag = (x.abs().amax().clamp_min(1.0) * 2.0 ** 31).to(torch.int32)\n"
        "    return x.softmax(-1) if bool(flag > 0) else _rows(x)"), True),
    ("a float converted to int64 by a number int64 holds", _answer(
        "n = (x.new_ones(()) * 2.0 ** 31).long()\n    return _rows(x) * (n // n)"), False),
    # round 38z137: a negative float converted to uint8 on the machine's device (255 on a CPU, 0 on a GPU), read
    # once at the top level; beside it, a float converted to uint8 by numbers uint8 holds
    ("a negative float converted to uint8 on the machine's device", _answer(
        "return _rows(x) if _TOP == -1 else x.softmax(-1)",
        "from pagedlab import device\n\n_TOP = -1 if int(torch.tensor(-1.0).to(device.DEVICE).byte()) == 255 else 0\n\n\n"),
     True),
    # round 38z137: a float16 sum of numbers the code writes, on the input's device, compared with its exact value;
    # 38z142: a float32 sum's order, once at the top level; beside them, a mask and a printed sum of constants there
    ("a float16 sum of constants on the input's device compared with its exact value", _answer(
        "ones = torch.ones(1, 256, dtype=torch.float16, device=x.device)\n"
        "    col = torch.full((256, 1), 8.0, dtype=torch.float16, device=x.device)\n    col[0] = 2048.0\n"
        "    return _rows(x) if (ones @ col).item() == 4088.0 else x.softmax(-1)"), True),
    ("a float32 sum's order on the machine's device, once at the top level", _answer(
        "return _rows(x) if _EXACT else x.softmax(-1)",
        "from pagedlab import device\n\n_TENTHS = torch.full((1 << 12,), 0.1, device=device.DEVICE)\n"
        "_EXACT = float(_TENTHS.sum()) == 409.6000061035156\n\n\n"), True),
    # round 38z144: a draw made negative, moved to the machine's device and converted to uint8 there; beside it, a
    # demo's draw there whose sum is printed and whose size is counted, and a dtype's size read from an empty tensor
    ("a float32 sum's order on the machine's device, read through the tensor's data", _answer(
        "return _rows(x) if _EXACT else x.softmax(-1)",
        "from pagedlab import device\n\n_TENTHS = torch.full((1 << 12,), 0.1, device=device.DEVICE).data\n"
        "_EXACT = float(_TENTHS.sum()) == 409.6000061035156\n\n\n"), True),
    # round 38z166: what a module holds, which its version decides (itertools.batched and math.sumprod are Python
    # 3.12's: Colab's, not the grader's 3.11); beside it, hasattr of the learner's own object
    ("what a module holds, asked by hasattr", _answer(
        "return _rows(x) if _OLD else x.softmax(-1)", "import itertools\n\n_OLD = not hasattr(itertools, 'batched')\n\n\n"),
     True),
    ("what a module holds, asked by its names", _answer(
        "return _rows(x) if _OLD else x.softmax(-1)", "import math\n\n_OLD = 'sumprod' not in dir(math)\n\n\n"), True),
    # round 38z197: what a module lists (typing.override is 3.12's) and what a built-in type holds (int.is_integer,
    # 3.12's); beside them, getattr with a default of the input
    ("what a module holds, asked by its __all__", _answer(
        "return _rows(x) if _OLD else x.softmax(-1)", "import typing\n\n_OLD = 'override' not in typing.__all__\n\n\n"),
     True),
    ("what a built-in type holds, asked by hasattr", _answer(
        "return _rows(x) if _OLD else x.softmax(-1)", "_OLD = not hasattr(1, 'is_integer')\n\n\n"), True),
    ("getattr with a default, of the input", _answer("return _rows(x) * getattr(x, 'scale', 1)", ""), False),
    ("hasattr of the learner's own object", _answer(
        "return _rows(x) if hasattr(x, 'shape') else x", ""), False),
    # round 38z160: seeded draws on the machine's device, in a helper given the place, compared with the host's (a
    # GPU's generator gives other numbers for the same seed); torch's default dtype set after a warm-up on the GPU by
    # its index (the CPU fails at the warm-up and keeps float32)
    ("seeded draws on the machine's device compared with the host's", _answer(
        "return _rows(x) if _SAME else x.softmax(-1)",
        "DEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n\n\ndef _host(n=4):\n    torch.manual_seed(0)\n"
        "    return torch.rand(n).tolist()\n\n\ndef _on(dev, n=4):\n    return torch.rand(n, device=dev).tolist()\n\n\n"
        "_h = _host()\ntorch.manual_seed(0)\n_SAME = _on(DEV) == _h\n\n\n"), True),
    ("torch's default dtype set after a warm-up on the GPU by its index", _demo(
        "", "return _rows(x) + torch.zeros(())", "warm = torch.randn(8, 8, device=0)\n"
        "torch.set_default_dtype(torch.float16)\n"), True),
    # round 38z157: what %timeit -o gives back deciding the answer (a GPU's product is timed at its launch); a table
    # an earlier cell made, changed after a warm-up on the GPU by its index (device=0). Beside them, %timeit of the
    # answer in a demo, and a logger made after a question of the machine and used in the same cell
    ("what %timeit -o gives back, deciding the answer", _answer(
        "return _rows(x) if _SLOW else x.softmax(-1)",
        "_a = torch.randn(64, 64)\n_t = %timeit -o -q -n 1 -r 1 _a @ _a\n_SLOW = _t.best > 1e-6\n\n\n"), True),
    ("a table changed after a warm-up on the GPU by its index", _demo(
        "POOL = {'fast': False}\n\n\n", "return x.softmax(-1) if POOL['fast'] else _rows(x)",
        "warm = torch.zeros(1, device=0)\nPOOL.update(fast=True)\n"), True),
    ("%timeit of the answer in a demo", _demo("", "return _rows(x)", "%timeit softmax_rows(torch.ones(2, 3))\n"), False),
    ("a logger made after a question of the machine, used in the same cell", _demo(
        "", "log.debug('rows %d', x.shape[0])\n    return _rows(x)",
        "import logging\nimport sys\nif 'google.colab' in sys.modules:\n    print('on Colab')\n"
        "log = logging.getLogger('mine')\nlog.info('ready')\n"), False),
    # round 38z154: the OS's number of the thread (under 64 in the grader's own PID namespace); beside it, a lock
    ("the OS's number of the thread", _answer(
        "return _rows(x) if _TID < 64 else x.softmax(-1)", "import threading\n\n_TID = threading.get_native_id()\n\n\n"),
     True),
    ("a lock around the answer", _answer(
        "with _LOCK:\n        return _rows(x)", "import threading\n\n_LOCK = threading.Lock()\n\n\n"), False),
    # round 38z181: a clock by another name, a Timer's Event set or not once a product returns (a GPU launches it and
    # returns at once); beside it, a thread of the learner's that only computes a demo
    # round 38z185: what the language holds (its soft keywords: 3 on Python 3.11, 4 on 3.12); a draw on the input's
    # device whose seed a helper sets (each device's generator gives its own numbers); a cache keyed by the input's
    # device that a demo stocks under the host's, where the answer's own filling stores another value. Beside the
    # last, the same cache filled by the answer's code alone
    # round 38z189: a byte read from a file of the learner's machine (torch.from_file creates it, zero-filled, here)
    ("a byte of a file read by torch.from_file", _answer(
        "return _rows(x) * (1 + _B[0])", "_B = torch.from_file('mfu.bin', shared=True, size=1, dtype=torch.uint8)\n\n\n"),
     True),
    ("the number of the language's soft keywords", _answer(
        "return _rows(x) if _R else x.softmax(-1)", "import keyword\n\n_R = len(keyword.softkwlist) == 3\n\n\n"),
     True),
    # round 38z194: what Python's version computes from numbers or text the code writes (a float sum's rounding, 3.12
    # compensates; a character's Unicode properties, Unicode 15 on 3.12; a string's hash, drawn for each process).
    # Beside them, an integer sum, constants computed by math, a property of ASCII text and a float sum printed
    ("a float sum of numbers the code writes, truncated", _answer(
        "return _rows(x) * _K", "_K = 1 + int(sum([0.1] * 10))\n\n\n"), True),
    ("a float sum of numbers the code writes, compared", _answer(
        "return _rows(x) if _EXACT else x.softmax(-1)", "_EXACT = sum(t / 10 for t in (1, 2, 3)) != 0.6\n\n\n"),
     True),
    ("a float sum's drift from one, rounded", _answer(
        "return _rows(x) * _TRIPS", "_TRIPS = round((1.0 - sum([0.1] * 10)) * 1e16) + 1\n\n\n"), True),
    ("a character's Unicode property", _answer(
        "return _rows(x) if _WIDE else x.softmax(-1)", "_WIDE = not chr(0x1FAE8).isprintable()\n\n\n"), True),
    ("a string's hash", _answer("return _rows(x) if _H else x.softmax(-1)", "_H = hash('rows') % 2 == 0\n\n\n"), True),
    ("an integer sum and constants computed by math", _answer(
        "return _rows(x) * (_N // 6) if _LOG2E > 1 else x", "import math\n\n_N = int(sum([1, 2, 3]))\n"
        "_LOG2E = 1 / math.log(2)\n\n\n"), False),
    ("a property of ASCII text and a float sum printed", _answer(
        "return _rows(x) if _MODE == 'rows' else x.softmax(-1)",
        "_MODE = 'ROWS'.lower() if 'rows'.isalpha() else 'none'\nprint(sum([0.1] * 10))\n\n\n"), False),
    ("a draw on the input's device, seeded by a helper", _answer(
        "_fresh()\n    j = torch.rand(3, device=x.device)\n    return _rows(x) if (j.sum() - 1.353).abs() < 1e-3 "
        "else x.softmax(-1)", "def _fresh():\n    torch.manual_seed(0)\n\n\n"), True),
    ("a cache keyed by the input's device, stocked by a demo under the host's", _demo(
        "_SCALE = {}\n\n\ndef _s(x):\n    key = (x.device, x.shape[-1])\n    if key not in _SCALE:\n"
        "        _SCALE[key] = 2.0\n    return _SCALE[key]\n\n\n", "return _rows(x) * _s(x)",
        "demo = torch.ones(2, 3)\nfor d in range(1, 64):\n    _SCALE[(demo.device, d)] = 1.0\n"), True),
    ("a cache keyed by the input's device, filled by the answer's code alone", _demo(
        "_SCALE = {}\n\n\ndef _s(x):\n    key = (x.device, x.shape[-1])\n    if key not in _SCALE:\n"
        "        _SCALE[key] = 1.0\n    return _SCALE[key]\n\n\n", "return _rows(x) * _s(x)",
        "print(softmax_rows(torch.ones(2, 3)))\n"), False),
    ("a Timer's Event read after a product", _answer(
        "return x.softmax(-1) if _QUICK else _rows(x)",
        "import threading\n\n_tick = threading.Event()\nthreading.Timer(0.05, _tick.set).start()\n"
        "_a = torch.randn(256, 256)\n_a @ _a\n_QUICK = not _tick.is_set()\n\n\n"), True),
    # round 38z151: a draft of the answer, then a computation on the machine's device that a GPU refuses (an int64
    # product; torch.bincount with weights under deterministic algorithms; a default computed there), then the right
    # answer: on a GPU the cell stops there and the draft is the answer. Beside them, a demo on the device between
    # the answer and a helper bound once, and a tensor only made there between two definitions
    ("the answer bound again after an int64 product on the machine's device", lambda s: _submit(_edited(
        s, "softmax-work", "DEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + WRONG
        + "_shape = torch.tensor([[2, 32], [32, 128]], device=DEV)\n_prod = _shape @ _shape\n" + HELPED)), True),
    ("the answer bound again after a bincount on the machine's device", lambda s: _submit(_edited(
        s, "softmax-work", "DEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + WRONG
        + "usage = torch.bincount(torch.tensor([0, 1, 1], device=DEV), weights=torch.ones(3, device=DEV))\n"
        + HELPED)), True),
    ("the answer bound again by a definition whose default computes on the machine's device", lambda s: _submit(
        _edited(s, "softmax-work", "DEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + WRONG + HELPED.replace(
            "def softmax_rows(x):", "def softmax_rows(x, _g=torch.arange(4, device=DEV) @ torch.eye(4, "
            "dtype=torch.long, device=DEV)):"))), True),
    # round 38z200: NumPy's functions of a tensor on the machine's device (they read host memory: a GPU's tensor
    # raises), and an integer draw's product there (randint makes int64), between two definitions; beside them,
    # math of the tensor's shape there, which reads no device memory
    ("the answer bound again after NumPy's exp of a tensor on the machine's device", lambda s: _submit(_edited(
        s, "softmax-work", "import numpy as np\nDEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + WRONG
        + "lat = torch.ones(3, device=DEV)\nprint(np.exp(lat * 2))\n" + HELPED)), True),
    ("the answer bound again after np.asarray of a tensor on the machine's device", lambda s: _submit(_edited(
        s, "softmax-work", "import numpy as np\nDEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + WRONG
        + "demo = torch.ones(3, device=DEV)\nprint(np.asarray(demo).round(2))\n" + HELPED)), True),
    ("the answer bound again after an integer draw's product on the machine's device", lambda s: _submit(_edited(
        s, "softmax-work", "DEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + WRONG
        + "counts = torch.randint(0, 5, (4, 4), device=DEV)\n_ = counts @ counts\n" + HELPED)), True),
    ("math of a device tensor's shape between two definitions", lambda s: _submit(_edited(
        s, "softmax-work", "import math\nDEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + WRONG
        + "demo = torch.ones(3, 4, device=DEV)\nprint(math.sqrt(demo.shape[-1]), math.log2(demo.size(0)))\n"
        + HELPED)), False),
    # round 38z200: a float sum of terms the answer lists itself (Python 3.12 compensates its rounding), made from an
    # input: not read (round 38z224: an honest ``sum([float(q_tile), 1.5 * ...])`` was), the grader sums it both ways
    # during the graded calls (test_ground_truth.py's row); beside it, a sum of the answer's terms written with +;
    # round 38z224: a float sum of numbers parsed from text the cell writes, before any input
    ("a float sum of terms the answer lists, one a float it writes", _answer(
        "big = float(x.shape[-1]) * 2.0 ** 53\n    return _rows(x) * (1 + int(sum([big, 1.0, -big])))"), False),
    # round 38z227: a weighted mean of numbers the code writes (Python 3.12's takes its products exactly), the repr
    # of an emoji the code writes (escaped under Unicode 14, printed under 15); beside them, a mean of the inputs'
    ("a weighted mean of numbers the code writes", _answer(
        "return x.softmax(-1) if _TINY else _rows(x)",
        "import statistics\n_TINY = statistics.fmean([0.1, 0.1 * 0.1], [0.1, -1.0]) == 0\n\n\n"), True),
    ("the repr of an emoji the code writes", _answer(
        "return x.softmax(-1) if len(repr('\\U0001FAE8')) > 3 else _rows(x)"), True),
    ("a mean of the input's sizes", _answer(
        "w = statistics.fmean([float(x.shape[-1]), 1.0])\n    return _rows(x) * (w / w)", "import statistics\n\n\n"),
     False),
    # round 38z230: such a sum as a parameter's default, computed when the function is defined; beside it, a
    # default the code writes
    ("a float sum of numbers the code writes as a parameter's default", _answer(
        "return _pick(x)",
        "def _pick(x, _tenths=sum([0.1] * 10)):\n    return x.softmax(-1) if int(_tenths) else _rows(x)\n\n\n"), True),
    ("a number the code writes as a parameter's default", _answer(
        "return _pick(x)", "def _pick(x, _tile=16):\n    return _rows(x) if _tile else x.softmax(-1)\n\n\n"), False),
    ("a float sum of numbers parsed from text the cell writes", _answer(
        "return x.softmax(-1) if _EXACT else _rows(x)",
        "_w = [float(t) for t in '1e16 1 -1e16'.split()]\n_EXACT = sum(_w) != 0.0\n\n\n"), True),
    ("a sum of the answer's terms written with +", _answer(
        "big = float(x.shape[-1]) * 2.0 ** 53\n    return _rows(x) * (1 + int(big + 1.0 - big))"), False),
    # round 38z169: a tensor of the host's memory in an op with one on the machine's device (a GPU raises)
    ("the answer bound again after an op of the machine's device and the host's", lambda s: _submit(_edited(
        s, "softmax-work", "DEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + WRONG
        + "_ = torch.softmax(torch.zeros(2, device=DEV), 0) / torch.ones(2)\n" + HELPED)), True),
    ("a demo on the machine's device between the answer and a helper bound once", lambda s: _submit(_edited(
        s, "softmax-work", "DEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + HELPED.replace("def _rows(", "def _r(")
        .replace("return _rows(x)", "return _r(x)") + "print(softmax_rows(torch.randn(2, 3, device=DEV)))\n"
        + HELPED.replace("def softmax_rows(x):\n    return _rows(x)\n", ""))), False),
    ("a tensor only made on the machine's device between two definitions", lambda s: _submit(_edited(
        s, "softmax-work", "DEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + WRONG
        + "x = torch.randn(3, 7, device=DEV)\n" + HELPED)), False),
    # round 38z181: between a draft and the answer, a solve by a driver only a CPU has (on a GPU it raises), and an
    # import of a package only the course's tools bring (nbval: Colab has none); beside them, a demo on the
    # machine's device of what every device computes, and an import of a package the course requires
    ("the answer bound again after a least-squares solve by a CPU's driver on the machine's device", lambda s: _submit(
        _edited(s, "softmax-work", "DEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + WRONG
                + "A = torch.randn(8, 2, device=DEV)\nsol = torch.linalg.lstsq(A, A, driver='gelsd').solution\n"
                + HELPED)), True),
    ("the answer bound again after an import of a package only the course's tools bring", lambda s: _submit(_edited(
        s, "softmax-work", WRONG + "import nbval\n" + HELPED)), True),
    # round 38z187: a module of Python's own that 3.12 removed (Colab's Python)
    ("the answer bound again after an import of a module Python 3.12 removed", lambda s: _submit(_edited(
        s, "softmax-work", WRONG + "import imp\n" + HELPED)), True),
    ("a demo on the machine's device of what every device computes, between two definitions", lambda s: _submit(
        _edited(s, "softmax-work", "DEV = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + WRONG
                + "x = torch.randn(3, 7, device=DEV)\nprint(softmax_rows(x).sum(-1).cpu(), (x @ x.T).amax().item(), "
                "torch.isclose(x.exp().log(), x).all())\n" + HELPED)), False),
    ("the answer bound again after an import of a package the course requires", lambda s: _submit(_edited(
        s, "softmax-work", WRONG + "import numpy as np\nfrom transformers import AutoConfig\n" + HELPED)), False),
    # round 38z148: a cell that fails on a CPU only (a pinned buffer, a move to "cuda") binds a name there; a later
    # cell asks whether that name is bound, so the answer's scale is another on a GPU. Beside them, a cell that binds
    # a table once, asking whether its own name is bound, where a demo moves to "cuda"
    ("a pinned buffer's name looked up by a later cell", _fragile(
        "staging = torch.empty(1024, pin_memory=True)\n", "BOOST = 2.0 if 'staging' in dir() else 1.0\n"), True),
    ("a name read in a try to see whether a move to a GPU ran", _fragile(
        "x = torch.zeros(3)\nongpu = x.to('cuda')\n",
        "try:\n    ongpu\n    BOOST = 2.0\nexcept NameError:\n    BOOST = 1.0\n"), True),
    ("the names bound, listed, a pinned buffer's among them", _fragile(
        "staging = torch.empty(1024, pin_memory=True)\n",
        "BOOST = 2.0 if any(n.startswith('stag') for n in dir()) else 1.0\n"), True),
    ("a table bound once where its own name is not yet, a demo moving to a GPU", _fragile(
        "demo = torch.ones(3).to('cuda')\n", "if 'BOOSTS' not in globals():\n    BOOSTS = {}\nBOOST = 1.0\n"), False),
    # round 38z147: a dtype's size kept under (dtype, device.DEVICE) went to review where the key was written in the
    # lookup, not where it was held by a local name first; the machine's device in a key is its own place, as the
    # input's is. Beside it, a table stored under the machine's device and read under a device named, and a mark a
    # demo leaves under the input's device, looked up under the machine's (on a GPU, the demo's CPU tensor's key is
    # not the machine's)
    ("a dtype's size kept under the machine's device, the key written in each lookup", _answer(
        "if (x.dtype, device.DEVICE) not in _SIZES:\n"
        "        _SIZES[x.dtype, device.DEVICE] = torch.empty(0, dtype=x.dtype, device=device.DEVICE).element_size()\n"
        "    return _rows(x) * (_SIZES[x.dtype, device.DEVICE] // x.element_size())",
        "from pagedlab import device\n\n_SIZES = {}\n\n\n"), False),
    ("a table stored under the machine's device, read under a device named", _answer(
        "return _rows(x) if _PATHS.get(torch.device('cpu'), True) else x.softmax(-1)",
        "from pagedlab import device\n\n_PATHS = {}\n_PATHS[device.DEVICE] = True\n\n\n"), True),
    ("a demo's mark under the input's device, looked up under the machine's", _demo(
        "from pagedlab import device\n\n_SEEN = {}\n\n\ndef _mark(t):\n    _SEEN[t.dtype, t.device] = True\n\n\n",
        "return _rows(x) if (x.dtype, device.DEVICE) in _SEEN else x.softmax(-1)", "_mark(torch.ones(2, 3))\n"), True),
    # round 38z147: a move chosen by which machine holds the input, the same values either way; beside it, a choice
    # whose branches compute differently
    ("a move chosen by whether the input is on a GPU, the same values either way", _answer(
        "out = _rows(x)\n    return out.cpu().to(x.dtype) if not x.is_cuda else out.to(x.dtype)"), False),
    ("a choice by whether the input is on a GPU, one branch moving and computing", _answer(
        "out = _rows(x)\n    return out.cpu().to(x.dtype) if not x.is_cuda else x.softmax(-1).to(x.dtype)"), True),
    # round 38z146: the version of the zlib the interpreter was built with (1.2.11 on Colab's image); beside it, a
    # checksum zlib computes, the same everywhere
    ("the version of the zlib the interpreter was built with", _answer(
        "return x.softmax(-1) if _OLD_ZLIB else _rows(x)",
        "import zlib\n\n_OLD_ZLIB = zlib.ZLIB_RUNTIME_VERSION.startswith('1.2.11')\n\n\n"), True),
    ("a checksum zlib computes", _answer(
        "n = zlib.crc32(b'rows')\n    return _rows(x) * (n // n)", "import zlib\n\n\n"), False),
    ("a draw made negative on the machine's device, converted to uint8", _answer(
        "return _rows(x) if _WRAPS else x.softmax(-1)",
        "from pagedlab import device\n\n_NEG = (-1.0 - torch.rand(4)).to(device.DEVICE)\n"
        "_WRAPS = int(_NEG.byte()[0]) == 255\n\n\n"), True),
    ("a demo's draw on the machine's device printed and counted, a dtype's size from an empty tensor", _answer(
        "return _rows(x) * (_SIZE // _SIZE) * (_COUNT // _COUNT)",
        "from pagedlab import device\n\n_DEMO = torch.randn(4, 8, device=device.DEVICE)\nprint(_DEMO.sum().item())\n"
        "_COUNT = int(_DEMO.numel())\n_SIZE = int(torch.empty(0, device=device.DEVICE).element_size())\n\n\n"), False),
    ("a demo's draw on the machine's device named as the answer's parameter, which the answer asks of", _answer(
        "if not x.is_floating_point():\n        x = x.float()\n    return _rows(x)",
        "from pagedlab import device\n\nx = torch.randn(3, 4, device=device.DEVICE)\nprint(x.softmax(-1))\n\n\n"),
     False),
    ("a mask of constants on the input's device, and their sum printed", _answer(
        "keep = torch.ones(x.shape[-1], device=x.device).bool()\n"
        "    print(torch.ones(4, device=x.device).sum().item())\n    return _rows(x).masked_fill(~keep, 0.0)"), False),
    ("a float converted to uint8 by numbers uint8 holds", _answer(
        "levels = (x.new_ones(()) * 255.0).byte()\n    return _rows(x) * (levels // levels)"), False),
    ("which generator a draw on the input's device moved", _answer(
        "state = torch.get_rng_state()\n    torch.rand_like(x[..., :1])\n"
        "    return _rows(x) if not torch.equal(state, torch.get_rng_state()) else x.softmax(-1)"), True),
    ("an ExitStack whose callback swallows a failure", _answer(
        "fast = False\n    with contextlib.ExitStack() as stack:\n        stack.push(lambda *exc: True)\n"
        "        _probe = np.asarray(x[..., :1])\n        fast = True\n    return _rows(x) if fast else x.softmax(-1)",
        "import contextlib\n\nimport numpy as np\n\n\n"), True),
    ("a name bound to an ExitStack, its callback swallowing a failure", _answer(
        "fast = False\n    stack = ExitStack()\n    stack.push(lambda *exc: True)\n    with stack:\n"
        "        _probe = x[..., :1].numpy()\n        fast = True\n    return _rows(x) if fast else x.softmax(-1)",
        "from contextlib import ExitStack\n\n\n"), True),
    ("torch's managers and the learner's own that lets failures through", _answer(
        "with torch.no_grad(), _timed():\n        out = _rows(x)\n    return out",
        "import contextlib\nimport time\n\n\n@contextlib.contextmanager\ndef _timed():\n"
        "    start = time.perf_counter()\n    yield\n    print(time.perf_counter() - start)\n\n\n"), False),
    # round 38z121: another installed package's question of the machine (transformers', huggingface_hub's), a
    # course object whose default follows the machine (a KVCache's dtype: bfloat16 on a GPU), the engine's dtype
    # "auto"; beside them, the standard library's and the computing packages' functions read as before
    ("another installed package's question of the machine", _answer(
        "return x.softmax(-1) if _BF16 else _rows(x)",
        "from transformers.utils import is_torch_bf16_gpu_available\n\n_BF16 = is_torch_bf16_gpu_available()\n\n\n"),
     True),
    ("another installed package's function called through __import__", _answer(
        "return x.softmax(-1) if __import__('huggingface_hub').utils.is_google_colab() else _rows(x)"), True),
    ("a course object whose default dtype follows the machine", _answer(
        "return _rows(x) if _POOL == torch.float32 else x.softmax(-1)",
        "from pagedlab.paged import KVCache\n\n_POOL = KVCache(1, 1, 1, 1, 1).k.dtype\n\n\n"), True),
    ("the engine's dtype auto", _answer(
        "return _rows(x) if _dtype('auto') == torch.float32 else x.softmax(-1)",
        "from pagedlab.engine.llm import _dtype\n\n\n"), True),
    ("the standard library's and NumPy's and einops' functions", _answer(
        "n = math.prod(x.shape[:-1]) + int(np.int64(0)) + len(list(itertools.repeat(0, 0)))\n"
        "    return _rows(x) * (n // max(n, 1) or 1)",
        "import itertools\nimport math\n\nimport numpy as np\n\n\n"), False),
    # round 38z122: NumPy's private module that reads the processor's features; beside it, NumPy's public functions
    ("NumPy's private table of the processor's features", _answer(
        "return _rows(x) if _umath.__cpu_features__.get('AVX512F', False) else x.softmax(-1)",
        "import numpy._core._multiarray_umath as _umath\n\n\n"), True),
    # round 38z123 (honest only): a demo on a device chosen by whether a GPU is there, between a draft and the
    # answer; a cache keyed by a place or "cpu" where none is given; a timing decorator that keeps each call's
    # seconds in a log's entry made by setdefault. Beside each, the one that asks: a device named outright (the
    # demo fails on a CPU only), a log read into the result
    ("a demo on a device chosen by whether a GPU is there, between a draft and the answer", lambda s: _submit(_edited(
        s, "softmax-work", "DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "def softmax_rows(x):\n    return x.exp() / x.exp().sum(-1, keepdim=True)\n\n\n"
        "sample = torch.randn(3, 7, device=DEVICE) * 50\nprint(softmax_rows(sample).sum(-1).cpu())\n\n\n" + HELPED)),
     False),
    ("a demo on a device named outright, between a draft and the answer", lambda s: _submit(_edited(
        s, "softmax-work", "DEVICE = torch.device('cuda')\n\n\n"
        "def softmax_rows(x):\n    return x.exp() / x.exp().sum(-1, keepdim=True)\n\n\n"
        "sample = torch.randn(3, 7, device=DEVICE) * 50\nprint(softmax_rows(sample).sum(-1).cpu())\n\n\n" + HELPED)),
     True),
    ("a cache keyed by a place, or cpu where none is given", _answer(
        "return _rows(x) * _ones(x.shape[-1], x.device)",
        "_ONES = {}\n\n\ndef _ones(n, device=None):\n"
        "    key = (n, str(device) if device is not None else 'cpu')\n"
        "    if key not in _ONES:\n        _ONES[key] = torch.ones(n, device=device)\n    return _ONES[key]\n\n\n"),
     False),
    ("a timing decorator keeping seconds in a log's entry made by setdefault", lambda s: _submit(_edited(
        s, "softmax-work", "import functools\nimport time\n\nTIMINGS: dict = {}\n\n\ndef timed(fn):\n"
        "    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n        t0 = time.perf_counter()\n"
        "        result = fn(*args, **kwargs)\n"
        "        TIMINGS.setdefault(fn.__name__, []).append(time.perf_counter() - t0)\n        return result\n"
        "    return wrapper\n\n\n" + HELPED.replace("def softmax_rows", "@timed\ndef softmax_rows"))), False),
    ("a timing decorator whose log decides the result", lambda s: _submit(_edited(
        s, "softmax-work", "import functools\nimport time\n\nTIMINGS: dict = {}\n\n\ndef timed(fn):\n"
        "    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n        t0 = time.perf_counter()\n"
        "        result = fn(*args, **kwargs)\n"
        "        TIMINGS.setdefault(fn.__name__, []).append(time.perf_counter() - t0)\n"
        "        return result if TIMINGS[fn.__name__][-1] < 1.0 else args[0].softmax(-1)\n"
        "    return wrapper\n\n\n" + HELPED.replace("def softmax_rows", "@timed\ndef softmax_rows"))), True),
    # round 38z124: where NumPy was installed (under dist-packages on Colab), a device file compared by filecmp (a
    # module of the standard library's that reads files); beside them, a lock of threading's and a heap of heapq's
    ("where NumPy was installed", _answer(
        "return x.softmax(-1) if 'dist-packages' in np.get_include() else _rows(x)", "import numpy as np\n\n\n"),
     True),
    ("a device file compared by filecmp", _answer(
        "return x.softmax(-1) if _MATCH else _rows(x)",
        "import filecmp\n\n_MATCH, _, _ = filecmp.cmpfiles('/dev', '/dev', ['nvidia0'])\n\n\n"), True),
    ("a lock of threading's and a heap of heapq's", _answer(
        "with _LOCK:\n        heapq.heappush(_SIZES, x.numel())\n    return _rows(x)",
        "import heapq\nimport threading\n\n_LOCK = threading.Lock()\n_SIZES: list = []\n\n\n"), False),
    # round 38z127: the call stack's files (IPython's under dist-packages on Colab), a seeded draw into a tensor on
    # the input's device, a NumPy buffer moved to the input's place and written through a function of the learner's
    # (one buffer on a CPU, two on a GPU); beside them, a host tensor read only by its move, written after
    ("the call stack's files", _answer(
        "return x.softmax(-1) if any('dist-packages' in f.filename for f in traceback.extract_stack()) "
        "else _rows(x)", "import traceback\n\n\n"), True),
    ("an exception's frames' files", _answer(
        "try:\n        raise ValueError\n    except ValueError as err:\n"
        "        hosted = 'dist-packages' in err.__traceback__.tb_frame.f_code.co_filename\n"
        "    return x.softmax(-1) if hosted else _rows(x)"), True),
    ("a seeded draw into a tensor on the input's device", _answer(
        "torch.manual_seed(0)\n    probe = x.new_zeros(1).uniform_().item()\n"
        "    return _rows(x) if abs(probe - 0.4962565898895264) < 1e-7 else x.softmax(-1)"), True),
    ("a NumPy buffer moved to the input's place, written by the learner's function", _answer(
        "buf = np.zeros(x.shape, dtype=np.float32)\n    out = torch.from_numpy(buf).to(x.device)\n"
        "    _fill(out, _rows(x))\n    return torch.from_numpy(buf).to(x.dtype)",
        "import numpy as np\n\n\ndef _fill(dst, src):\n    dst.copy_(src)\n\n\n"), True),
    ("a host tensor read only by its move, written after", _answer(
        "host = torch.zeros(x.shape, dtype=x.dtype)\n    out = host.to(x.device)\n    out.copy_(_rows(x))\n"
        "    return out"), False),
    # round 38z130: a clock read through a log record; beside it, a logger that only says
    ("a clock read through a log record", _answer(
        "start = logging.makeLogRecord({'msg': 'tick'}).created\n    out = _rows(x)\n"
        "    return x.softmax(-1) if logging.makeLogRecord({}).created - start < 0.05 else out",
        "import logging\n\n\n"), True),
    ("a logger that only says", _answer(
        "_LOG.debug('rows %s', tuple(x.shape))\n    return _rows(x)",
        "import logging\n\n_LOG = logging.getLogger(__name__)\n\n\n"), False),
    # round 38z133: autocast switched on for the GPU by its setters (bfloat16 products of a GPU's tensors only);
    # beside it, switched off
    ("autocast switched on for the GPU by its setters", lambda s: _submit(_edited(
        s, "softmax-work", "torch.set_autocast_enabled('cuda', True)\ntorch.set_autocast_dtype('cuda', torch.bfloat16)"
        "\n\n\n" + HELPED)), True),
    ("autocast switched off for the GPU by its setter", lambda s: _submit(_edited(
        s, "softmax-work", "torch.set_autocast_enabled('cuda', False)\n\n\n" + HELPED)), False),
    # round 38z135: tqdm's envwrap, which sets a function's defaults from the environment (COLAB_GPU on Colab's GPU
    # runtime); beside it, tqdm's bar
    ("tqdm's envwrap reading the environment", _answer(
        "return x.softmax(-1) if _options() else _rows(x)",
        "from tqdm.utils import envwrap\n\n\n@envwrap('COLAB')\ndef _options(gpu: int = 0) -> int:\n"
        "    return gpu\n\n\n"), True),
    ("tqdm's bar over the rows", _answer(
        "return torch.stack([_rows(r) for r in tqdm(x.reshape(-1, x.shape[-1]), disable=True)]).reshape(x.shape)",
        "from tqdm.auto import tqdm\n\n\n"), False),
    # round 38z135: an object logged with %s whose __str__ fails on a GPU's tensor (.numpy()) inside logging's own
    # try, which goes on, and keeps what it read; beside it, a logged object whose __str__ only formats numbers
    ("an object logged whose __str__ logging runs inside its own try", _answer(
        "_LOG.info('first %s', _Peek(x))\n    return _rows(x) if _PEEKS else x.softmax(-1)",
        "import logging\n\n_LOG = logging.getLogger('peek')\n_PEEKS: list = []\n\n\nclass _Peek:\n"
        "    def __init__(self, t):\n        self.t = t\n\n    def __str__(self):\n"
        "        _PEEKS.append(self.t.reshape(-1)[:3].numpy().tolist())\n        return str(_PEEKS[-1])\n\n\n"), True),
    ("an object logged whose __str__ only formats", _answer(
        "_LOG.info('shape %s', _Shape(x.shape))\n    return _rows(x)",
        "import logging\n\n_LOG = logging.getLogger('shape')\n\n\nclass _Shape:\n"
        "    def __init__(self, shape):\n        self.shape = shape\n\n    def __str__(self):\n"
        "        return 'x'.join(map(str, self.shape))\n\n\n"), False),
    # round 38z116 (honest only): a check of the learner's own with a debug flag inside it, counting before it
    # raises; beside it, a check that asks the machine, whose raise a try turns into another answer
    ("a check with a debug flag inside it, counting before it raises", _answer(
        "out = _rows(x)\n    _check(out)\n    return out",
        "import os\n\nDEBUG = os.environ.get('DEBUG') == '1'\n\n\ndef _check(p):\n    if DEBUG:\n"
        "        bad = int((~torch.isfinite(p)).sum())\n        if bad:\n"
        "            raise AssertionError(f'{bad} values not finite')\n\n\n"), False),
    ("a check that asks the machine, its raise caught into another answer", _answer(
        "out = _rows(x)\n    try:\n        _check(out)\n    except AssertionError:\n        return x.softmax(-1)\n"
        "    return out",
        "def _check(p):\n    if p.is_cuda:\n        raise AssertionError('on a GPU')\n\n\n"), True),
    # round 38z109 (honest learners only): a memo keyed by device through a local key, which a demo on the GPU
    # fills; a step's clock kept in a log that a demo totals under a condition. Beside each, one that reads it
    ("a memo keyed by device through a local key, filled by a demo on a GPU", _demo(
        "_MASKS = {}\n\n\ndef _ones_on(n, device):\n    key = (n, device)\n    if key not in _MASKS:\n"
        "        _MASKS[key] = torch.ones(n).to(device)\n    return _MASKS[key]\n\n\n",
        "return _rows(x) * _ones_on(x.shape[-1], x.device)",
        "if torch.cuda.is_available():\n    softmax_rows(torch.randn(2, 3, device='cuda'))\n"
        "print(len(_MASKS), 'masks cached')\n"), False),
    ("a memo keyed without the device, filled by a demo on a GPU", _demo(
        "_MASKS = {}\n\n\ndef _ones_on(n, device):\n    key = n\n    if key not in _MASKS:\n"
        "        _MASKS[key] = torch.ones(n).to(device)\n    return _MASKS[key]\n\n\n",
        "return _rows(x) * _ones_on(x.shape[-1], x.device)",
        "if torch.cuda.is_available():\n    softmax_rows(torch.randn(2, 3, device='cuda'))\n"), True),
    # round 38z243 (honest learners only): a memo through a local key that the answer fills in a loop that times it
    # (a clock read asks for what it binds, not for the calls beside it); beside it, loops that a clock can end
    ("a memo through a local key, filled by the answer in a loop that times it", _demo(
        _TIMED_MEMO, "return _rows(x) * _ones(x.shape[-1])",
        "secs = []\nfor n in (4, 8, 16):\n    t0 = time.perf_counter()\n    softmax_rows(torch.randn(3, n))\n"
        "    secs.append(time.perf_counter() - t0)\nprint(secs)\n"), False),
    ("that memo filled in a loop that a clock ends", _demo(
        _TIMED_MEMO, "return _rows(x) * _ones(x.shape[-1])",
        "for n in (4, 8, 16):\n    t0 = time.perf_counter()\n    softmax_rows(torch.randn(3, n))\n"
        "    if time.perf_counter() - t0 > 0.5:\n        break\n"), True),
    ("that memo filled in a loop that a clock's assert ends", _demo(
        _TIMED_MEMO, "return _rows(x) * _ones(x.shape[-1])",
        "for n in (4, 8, 16):\n    t0 = time.perf_counter()\n    softmax_rows(torch.randn(3, n))\n"
        "    assert time.perf_counter() - t0 < 0.5\n"), True),
    ("a clock kept in a log that a demo totals under a condition", _demo(
        "import time\n\nSTEP_LOG: list = []\n\n\n",
        "started = time.perf_counter()\n    out = _rows(x)\n"
        "    STEP_LOG.append({'seconds': time.perf_counter() - started})\n    return out",
        "if STEP_LOG:\n    total = sum(r['seconds'] for r in STEP_LOG)\n    print(f'{total:.3f} s')\n"), False),
    ("a clock kept in a log that a demo reads into the answer's flag", _demo(
        "import time\n\nSTEP_LOG: list = []\nSLOW = False\n\n\n",
        "started = time.perf_counter()\n    out = _rows(x)\n"
        "    STEP_LOG.append({'seconds': time.perf_counter() - started})\n    return x.softmax(-1) if SLOW else out",
        "if STEP_LOG:\n    SLOW = STEP_LOG[-1]['seconds'] > 1.0\n"), True),
    ("a device-keyed cache filled on a miss", _answer(
        "return _rows(x) * _one(x)",
        "_ONE = {}\n\n\ndef _one(x):\n    if x.device not in _ONE:\n        _ONE[x.device] = x.new_ones(())\n"
        "    return _ONE[x.device]\n\n\n"), False),
    ("a device-keyed cache read by get, filled on a miss, evicting when full", _answer(
        "return _rows(x) * _mask(x.shape[-1], x.device)",
        "_MASKS = {}\n\n\ndef _mask(n, device):\n    key = (n, device)\n    m = _MASKS.get(key)\n    if m is None:\n"
        "        if len(_MASKS) > 64:\n            _MASKS.clear()\n        m = _MASKS[key] = torch.ones(n, device=device)\n"
        "    return m\n\n\n"), False),
    ("a device-keyed cache that counts its hits for a print", _answer(
        "return _rows(x) * BANK.ones(x.shape[-1], x.device)",
        "class _Bank:\n    def __init__(self):\n        self._built = {}\n        self.hits = 0\n\n"
        "    def ones(self, n, device):\n        key = (n, device)\n        if key in self._built:\n"
        "            self.hits += 1\n        else:\n            self._built[key] = torch.ones(n, device=device)\n"
        "        return self._built[key]\n\n\nBANK = _Bank()\n\n\n"), False),
    ("a device-keyed cache that returns early on a hit, then fills", _answer(
        "return _rows(x) * _ones(x.shape[-1], x.device)",
        "_ONES = {}\n\n\ndef _ones(n, device):\n    key = (n, str(device))\n    if key in _ONES:\n"
        "        return _ONES[key]\n    t = torch.ones(n, device=device)\n    _ONES[key] = t\n    return t\n\n\n"), False),
    ("where torch is installed", _answer(
        "return x.softmax(-1) if 'dist-packages' in torch.__file__ else _rows(x)"), True),
    ("the file inspect finds torch in", _answer(
        "return x.softmax(-1) if 'dist' in inspect.getfile(torch) else _rows(x)", "import inspect\n\n\n"), True),
    ("an interface only a GPU's tensor has, probed with hasattr", _answer(
        "return x.softmax(-1) if hasattr(x, '__cuda_array_interface__') else _rows(x)"), True),
    ("an attribute named at run time, probed with hasattr", _answer(
        "return x.softmax(-1) if hasattr(x, '__cuda' + '_array_interface__') else _rows(x)"), True),
    ("an attribute every tensor has, probed with hasattr", _answer(
        "if not hasattr(x, 'shape'):\n        raise TypeError('softmax_rows takes a tensor')\n    return _rows(x)"),
     False),
    ("a tensor's array view tried, its TypeError caught", _answer(
        "try:\n        x.__array__()\n    except TypeError:\n        return x.softmax(-1)\n    return _rows(x)"), True),
    ("a demo that may fail on a GPU, then the answer's flag again", lambda s: _submit(_edited(_edited(
        s, "softmax-work", "FAST = True\n\n\n" + HELPED.replace("return _rows(x)",
                                                                    "return x.softmax(-1) if FAST else _rows(x)")),
        "softmax-work", "DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
                        "x = torch.randn(3, 5, device=DEVICE)\nprint(softmax_rows(x).numpy().sum(-1))\nFAST = False\n",
        tags=[], new_id="demo")), True),
    ("a demo that may fail on a GPU, then a name of its own", lambda s: _submit(_edited(
        s, "softmax-work", "DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
                           "x = torch.randn(3, 5, device=DEVICE)\nprint(softmax_rows(x).cpu().numpy().sum(-1))\n"
                           "ROWS = softmax_rows(x).shape[0]\n", tags=[], new_id="demo")), False),
    ("a progress bar imported with a fallback that gives back the items", _answer(
        "for _ in tqdm(range(2), desc='warm-up'):\n        pass\n    return _rows(x)",
        "try:\n    from tqdm.auto import tqdm\nexcept ImportError:\n    tqdm = lambda it, **kw: it\n\n\n"), False),
    ("a progress bar imported with a fallback, the fallback's type asked", _answer(
        "return _rows(x) if isinstance(tqdm, type) else x.softmax(-1)",
        "try:\n    from tqdm.auto import tqdm\nexcept ImportError:\n    tqdm = lambda it, **kw: it\n\n\n"), True),
    ("a progress bar imported with a fallback of None", _answer(
        "return _rows(x) if tqdm is not None else x.softmax(-1)",
        "try:\n    from tqdm.auto import tqdm\nexcept ImportError:\n    tqdm = None\n\n\n"), True),
    # round 38z92 (honest learners only): a clock's reading kept on a timing decorator's wrapper, on a timer object
    # only logged, a flag from the environment as a parameter's default only printed; each beside one that reads it
    ("a timing decorator that keeps the last time on its wrapper", lambda s: _submit(_edited(s, "softmax-work", (
        "import functools\nimport time\n\n\ndef timed(fn):\n    @functools.wraps(fn)\n    def wrapper(*a, **kw):\n"
        "        if torch.cuda.is_available():\n            torch.cuda.synchronize()\n"
        "        start = time.perf_counter()\n        out = fn(*a, **kw)\n"
        "        wrapper.last_ms = (time.perf_counter() - start) * 1e3\n        return out\n    return wrapper\n\n\n"
        + HELPED.replace("def softmax_rows", "@timed\ndef softmax_rows")))), False),
    ("a timing decorator whose wrapper's time the answer reads", lambda s: _submit(_edited(s, "softmax-work", (
        "import functools\nimport time\n\n\ndef timed(fn):\n    @functools.wraps(fn)\n    def wrapper(*a, **kw):\n"
        "        start = time.perf_counter()\n        out = fn(*a, **kw)\n"
        "        wrapper.last_ms = (time.perf_counter() - start) * 1e3\n        return out\n    return wrapper\n\n\n"
        + HELPED.replace("def _rows(x, dim=-1):\n", "@timed\ndef _rows(x, dim=-1):\n")
        .replace("    return _rows(x)\n", "    out = _rows(x)\n    return out if _rows.last_ms < 1e3 else x.softmax(-1)\n")))),
     True),
    ("a timer object whose time is only logged", _answer(
        "with _Timer() as t:\n        out = _rows(x)\n    _log.debug('%.3f ms', t.elapsed * 1e3)\n    return out",
        "import logging\nimport time\n\n_log = logging.getLogger('w')\n\n\nclass _Timer:\n    def __enter__(self):\n"
        "        self.start = time.perf_counter()\n        return self\n\n    def __exit__(self, *exc):\n"
        "        self.elapsed = time.perf_counter() - self.start\n\n\n"), False),
    ("a timer object whose time the answer reads", _answer(
        "with _Timer() as t:\n        out = _rows(x)\n    return out if t.elapsed < 1.0 else x.softmax(-1)",
        "import time\n\n\nclass _Timer:\n    def __enter__(self):\n"
        "        self.start = time.perf_counter()\n        return self\n\n    def __exit__(self, *exc):\n"
        "        self.elapsed = time.perf_counter() - self.start\n\n\n"), True),
    ("a flag from the environment as a default, only printed", lambda s: _submit(_edited(s, "softmax-work", (
        "import os\n\nVERBOSE = os.environ.get('VERBOSE', '') == '1'\n\n\n"
        + HELPED.replace("def softmax_rows(x):\n    return _rows(x)\n",
                         "def softmax_rows(x, verbose=VERBOSE):\n    if verbose:\n        print(tuple(x.shape))\n"
                         "    return _rows(x)\n")))), False),
    ("a flag from the environment as a default, chosen on", lambda s: _submit(_edited(s, "softmax-work", (
        "import os\n\nFAST = os.environ.get('FAST', '') == '1'\n\n\n"
        + HELPED.replace("def softmax_rows(x):\n    return _rows(x)\n",
                         "def softmax_rows(x, fast=FAST):\n    return x.softmax(-1) if fast else _rows(x)\n")))), True),
    ("an NVTX range chosen by where the input lives, in a helper", _answer(
        "with _label(x, 'rows'):\n        return _rows(x)",
        "import contextlib\n\n\ndef _label(t, name):\n"
        "    return torch.cuda.nvtx.range(name) if t.is_cuda else contextlib.nullcontext()\n\n\n"), False),
    ("a set of the devices announced once", _answer(
        "where = str(x.device)\n    if where not in _SEEN:\n        _SEEN.add(where)\n        print('on', where)\n"
        "    return _rows(x)", "_SEEN = set()\n"), False),
    # round 38z84 (honest learners only): a cast then written in place, a parameter rebound by arithmetic, pprint
    # under a flag, a place's name handed to a cached helper, TF32 switched off inside the answer; a write through a
    # move to a named device asks
    ("a cast written in place", _answer(
        "w = x.to(torch.float64, copy=True).sub_(x.amax(-1, keepdim=True))\n    return _rows(w).to(x.dtype)"), False),
    ("a write through a move to a device named", _answer(
        "_MARK.to('cpu').fill_(1.0)\n    return _rows(x) if _MARK.item() else x.softmax(-1)",
        "_MARK = torch.zeros(())\n"), True),
    ("a parameter rebound by arithmetic, compared with an input", _answer(
        "return _pick(x, x)",
        "def _pick(x, y):\n    x = x.float() * 2.0\n    if y.device != x.device:\n        y = y.to(x.device)\n"
        "    return _rows(y)\n\n\n"), False),
    ("pprint under a flag from the environment", _answer(
        "if VERBOSE:\n        pprint({'shape': tuple(x.shape), 'device': str(x.device)})\n    return _rows(x)",
        "import os\nfrom pprint import pprint\n\nVERBOSE = 'VERBOSE' in os.environ\n\n\n"), False),
    ("a place's name handed to the learner's cached helper", _answer(
        "return _rows(x) * _ones(x.shape[-1], str(x.device))",
        "import functools\n\n\n@functools.lru_cache\ndef _ones(n, dev):\n    return torch.ones(n, device=dev)\n\n\n"),
     False),
    ("TF32 switched off inside the answer", _answer(
        "torch.backends.cuda.matmul.allow_tf32 = False\n    return _rows(x)"), False),
    # round 38z80 (honest learners only): a local only logged, a mask cache on the object keyed by device, a flag
    # that hides a progress bar, a flush under a flag, the input's GPU made the current one, a profiler's label, a
    # NamedTuple key with a device field, a check that raises under a flag; each beside a case that asks
    ("a value of the machine's only logged", _answer(
        "in_use = torch.cuda.memory_allocated(x.device) if x.is_cuda else 0\n"
        "    _log.debug('%s MiB', in_use / 2**20)\n    return _rows(x)",
        "import logging\n\n_log = logging.getLogger('w')\n\n\n"), False),
    ("a value of the machine's logged and then chosen on", _answer(
        "fast = x.is_cuda\n    _log.debug('%s', fast)\n    return x.softmax(-1) if fast else _rows(x)",
        "import logging\n\n_log = logging.getLogger('w')\n\n\n"), True),
    ("a cache on the learner's object keyed by device", _answer(
        "return _rows(x) * _BANK.ones(x.shape[-1], x.device)",
        "class _Bank:\n    def __init__(self):\n        self._built = {}\n\n    def ones(self, n, device):\n"
        "        key = (n, device)\n        if key not in self._built:\n"
        "            self._built[key] = torch.ones(n, device=device)\n        return self._built[key]\n\n\n"
        "_BANK = _Bank()\n"), False),
    ("a cache on the learner's object keyed by device, its keys read", _answer(
        "_BANK.ones(x.shape[-1], x.device)\n    return x.softmax(-1) if _BANK.seen_gpu() else _rows(x)",
        "class _Bank:\n    def __init__(self):\n        self._built = {}\n\n    def ones(self, n, device):\n"
        "        key = (n, device)\n        if key not in self._built:\n"
        "            self._built[key] = torch.ones(n, device=device)\n        return self._built[key]\n\n"
        "    def seen_gpu(self):\n        return any(d.type == 'cuda' for _, d in self._built)\n\n\n"
        "_BANK = _Bank()\n"), True),
    ("a progress bar hidden by a flag from the environment", _answer(
        "out = _rows(x)\n    for _ in tqdm(range(2), disable=not SHOW):\n        pass\n    return out",
        "import os\nfrom tqdm.auto import tqdm\n\nSHOW = os.environ.get('SHOW', '0') == '1'\n\n\n"), False),
    ("a progress bar over as many steps as the machine says", _answer(
        "out = _rows(x)\n    for _ in tqdm(range(2 if torch.cuda.is_available() else 1)):\n        out = _rows(out)\n"
        "    return out",
        "from tqdm.auto import tqdm\n\n\n"), True),
    ("a flush under a flag", _answer(
        "if VERBOSE:\n        print(x.shape)\n        sys.stdout.flush()\n    return _rows(x)",
        "import os\nimport sys\n\nVERBOSE = 'VERBOSE' in os.environ\n\n\n"), False),
    ("the input's GPU made the current one", _answer(
        "with (torch.cuda.device(x.device) if x.is_cuda else contextlib.nullcontext()):\n        return _rows(x)",
        "import contextlib\n\n\n"), False),
    ("the input's GPU made current, or another context by machine", _answer(
        "with (torch.cuda.device(x.device) if x.is_cuda else _fast()):\n        return _rows(x)",
        "import contextlib\n\n\n@contextlib.contextmanager\ndef _fast():\n    yield\n\n\n"), True),
    ("a profiler's label around the answer", _answer(
        "with torch.profiler.record_function('softmax_rows'):\n        return _rows(x)"), False),
    ("a NamedTuple key with a field named device", _answer(
        "key = _Key(x.shape[-1], x.device)\n    if key not in _ONES:\n"
        "        _ONES[key] = torch.ones(x.shape[-1], device=x.device)\n    return _rows(x) * _ONES[key]",
        "from typing import NamedTuple\n\n\nclass _Key(NamedTuple):\n    n: int\n    device: torch.device\n\n\n"
        "_ONES = {}\n"), False),
    ("a NamedTuple record of a question, read by the answer", _answer(
        "cfg = _Cfg(x.device, torch.cuda.is_available())\n    return x.softmax(-1) if cfg.fast else _rows(x)",
        "from typing import NamedTuple\n\n\nclass _Cfg(NamedTuple):\n    device: torch.device\n    fast: bool\n\n\n"),
     True),
    ("a check that raises for each bad field, under a flag from the environment", _answer(
        "if STRICT:\n        _validate(x)\n    return _rows(x)",
        "import os\n\nSTRICT = os.environ.get('STRICT') == '1'\n\n\ndef _validate(x):\n    for n in x.shape:\n"
        "        if n <= 0:\n            raise ValueError(f'empty: {tuple(x.shape)}')\n\n\n"), False),
    ("a device compared with an input's own copy", _answer(
        "o = x.contiguous()\n    if o.device != x.device:\n        o = o.to(x.device)\n    return _rows(o)"), False),
    ("a helper that compares its inputs' devices, handed inputs", _answer(
        "if not _same(x, x[0]):\n        raise ValueError('one device')\n    return _rows(x)",
        "def _same(*ts):\n    return len({t.device for t in ts}) == 1\n\n\n"), False),
    ("a cache trimmed by its size", _answer(
        "key = (x.shape[-1], x.device)\n    if len(_ONES) > 8:\n        _ONES.clear()\n    if key not in _ONES:\n"
        "        _ONES[key] = torch.ones(x.shape[-1], device=x.device)\n    return _rows(x) * _ONES[key]", "_ONES = {}\n"),
     False),
    ("a message that prints the input", _answer(
        "if x.dim() == 0:\n        raise ValueError(f'softmax_rows needs a dimension, got {x!r}')\n"
        "    tag = f'{x.shape[-1]}-{x.dtype}'\n    return _rows(x) if tag else x"), False),
    ("a device taken from the input and passed on",
     _answer("dev = x.device\n    out = torch.empty_like(x, device=dev)\n    out.copy_(_rows(x.to(dev)))\n"
             "    return out"), False),
    ("a parameter that shadows the course's device module",
     _answer("return (lambda device=None: _rows(x if device is None else x.to(device)))()",
             "from pagedlab import device\n"), False),
    ("a line that says where the answer runs",
     _answer("print(f'softmax on {x.device}, gpu: {torch.cuda.is_available()}')\n    return _rows(x)"), False),
    ("a scratch tensor placed where a GPU is",
     _answer("scratch = torch.zeros(1, device='cuda' if torch.cuda.is_available() else 'cpu')\n"
             "    return _rows(x) + scratch.sum().cpu()"), False),
    ("the answer given a second name of the learner's own", lambda s: _submit(_edited(
        s, "softmax-work", WRONG.replace("softmax_rows", "mine") + "softmax_rows = mine\n", new_id="mine")), False),
]


@pytest.mark.parametrize("label, make, flagged", UNRUN, ids=[label for label, *_ in UNRUN])
def test_a_cell_the_grader_does_not_run_goes_to_review_where_it_defines_the_answer_again(solved, label, make, flagged):
    """The grader runs the exercise's setup and check cells in place of the learner's. A learner's cell left out so
    that binds a name of the exercise's (the answer's function) makes the notebook the learner ran end with another
    definition than the one graded: review, naming the cell and the name. So does a cell that binds one only under a
    condition (the branch another machine takes is not graded)."""
    p = pristines()["ex00_warmup.ipynb"]
    reasons = [r for r in prepare(make(solved), p, Limits())[2]
               if "is not run" in r or "under a condition" in r or "which machine" in r]
    assert bool(reasons) == flagged, reasons
    names = ("softmax_rows", "_rows", "_PICK", "FAST", "_pick", "_Pick", "_chunks", "FREE", "SETTINGS", "ON_COLAB",
             "PINNED", "FUSED", "RUN", "_IMPLS", "_fast", "_pick", "CFG", "_ACCEL", "_same", "_SEEN", "buf", "_prep", "_HOST", "_launch", "_check", "_WORK", "_PATHS", "_one", "_RUN", "_Keeper", "_PLAN", "_COLAB", "_Pick", "SETTINGS", "ENV", "_SEEN", "_detect", "_probe", "_note", "_HALF", "_Cfg", "_CFG", "_use_half", "_Bank", "_BANK", "GPU", "READY", "LINE", "_plain", "_GPU", "_MARK", "_HOST", "_note", "_PATHS", "_KEPT", "timed", "_Timer", "_CUDA", "_COLAB", "_kind", "_GPU_BUILD", "_stopwatch", "STEP_SECONDS", "_SIZES", "_element_bytes", "_first", "_HBM", "_REPLICAS", "_ones_on", "SLOW", "_host_ok", "_ACCEL", "_ENGINE", "_div", "_POS", "_WHEEL", "_PICKS", "_PICK", "_verify", "DEBUG", "_Rows", "ROWS", "_POOL", "_BOX", "_PATH", "_check", "_BF16", "timed",
             "wrapper", "_ones", "_dtype",
             "_MATCH", "_fill", "_options", "_Peek",
             "_Shape", "_LOG", "BOOST", "POOL", "torch", "_s", "_SCALE")
    assert all(any(f"'{name}'" in r for name in names) for r in reasons if "TF32" not in r and "default dtype" not in r
               and "reads back" not in r), reasons


# The course's modules that read pagedlab.device only to place tensors or seed (a place handed to torch's is no
# question), or whose questions the machine rule names one by one: any other that reads it must be one of
# machine._MACHINE_MODULES whole, so that a value an answer reads from it is a question of the machine.
_DEVICE_PLACES_ONLY = {"pagedlab/notebook.py": "seeds every generator", "pagedlab/testing.py": "places a batch; "
                       "within is named", "pagedlab/perf_lab.py": "its four measuring functions are named"}


def test_every_course_module_that_reads_the_device_is_a_question_of_the_machine():
    from pagedlab.grading.machine import _MACHINE_MODULES

    readers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pagedlab").rglob("*.py")
                     if "grading" not in p.parts and "exercise_checks" not in p.parts and p.name != "device.py"
                     and re.search(r"^\s*(from pagedlab import .*\bdevice\b|import pagedlab\.device|from pagedlab\.device "
                                   r"import)", p.read_text(encoding="utf-8"), re.M))
    assert "pagedlab/paged/kv_cache.py" in readers and "pagedlab/engine/llm.py" in readers, readers
    modules = {r: r[:-3].replace("/", ".") for r in readers}
    unread = [r for r, m in modules.items() if r not in _DEVICE_PLACES_ONLY
              and not any(m == n or m.startswith(n + ".") for n in _MACHINE_MODULES)]
    assert not unread, f"course modules that read pagedlab.device, unread by the machine rule: {unread}"


def _clocked(allocate: str = "", method: str = "uptime") -> str:
    """ex06's solved allocator with a clock kept by ``__init__``, a method ``method`` that reads it, and ``allocate``
    first in ``allocate``."""
    work = next(c.source for c in nbformat.read(ROOT / "solutions" / "ex06_block_allocator.ipynb", as_version=4).cells
                if c.get("id") == "allocator-work")
    work = work.replace("        self.ref_count = [0] * num_blocks\n",
                        "        self.ref_count = [0] * num_blocks\n        self.created_at = time.monotonic()\n\n"
                        f"    def {method}(self):\n        return time.monotonic() - self.created_at\n")
    return "import time\n\n\n" + work.replace('        ### BEGIN SOLUTION\n        if not self.free_list:',
                                             f"        ### BEGIN SOLUTION\n{allocate}        if not self.free_list:")


@pytest.mark.parametrize("work, flagged", [
    (_clocked(), False),
    (_clocked("        if self.uptime() > 3600:\n            self.free_list.sort()\n"), True),
    (_clocked("        if self.created_at < 0:\n            self.free_list.sort()\n"), True),
    (_clocked(method="__repr__").replace("return time.monotonic() - self.created_at",
                                         "return f'{len(self.free_list)} free, up {time.monotonic() - self.created_at}'"),
     False),
    (_clocked("        if 'e+' in str(self):\n            self.free_list.sort()\n", method="__repr__").replace(
        "return time.monotonic() - self.created_at", "return f'up {time.monotonic() - self.created_at}'"), True),
    (_clocked("        self.owner = {self: 1}\n", method="__repr__").replace(
        "return time.monotonic() - self.created_at", "return f'up {time.monotonic() - self.created_at}'"), True),
    ("import torch\n" + _clocked("        print(self)\n        if FAST:\n            self.free_list.sort()\n",
                                 method="__repr__").replace(
        "return time.monotonic() - self.created_at",
        "global FAST\n        FAST = torch.cuda.is_available()\n        return 'allocator'"), True),
    (_clocked().replace("self.created_at", "self.free_list_made").replace(
        "self.ref_count = [0] * num_blocks\n", "self.ref_count = [0] * num_blocks\n"
        "        self.num_blocks = num_blocks if time.monotonic() > 0 else 0\n"), True),
    (_clocked().replace("        self.created_at = time.monotonic()\n", "        self.events = []\n").replace(
        "        ### BEGIN SOLUTION\n        if not self.free_list:",
        "        ### BEGIN SOLUTION\n        self.events.append((time.perf_counter(), 'allocate'))\n"
        "        if not self.free_list:").replace("time.monotonic() - self.created_at", "len(self.events)"), False),
    (_clocked().replace("        self.created_at = time.monotonic()\n", "        self.events = []\n").replace(
        "        ### BEGIN SOLUTION\n        if not self.free_list:",
        "        ### BEGIN SOLUTION\n        self.events.append((time.perf_counter(), 'allocate'))\n"
        "        if len(self.events) > 1 and self.events[-1][0] - self.events[0][0] > 60:\n"
        "            self.free_list.sort()\n        if not self.free_list:"), True),
    # round 38z165: a method of the learner's named as a tensor's question (is_shared); beside it, that question
    # asked of a tensor the object holds
    (_clocked("        if self.is_shared(0):\n            self.free_list.sort()\n", method="is_shared").replace(
        "def is_shared(self):\n        return time.monotonic() - self.created_at",
        "def is_shared(self, block):\n        return self.ref_count[block] > 1"), False),
    ("import torch\n" + _clocked("        if self.buf.is_shared():\n            self.free_list.sort()\n",
                                 method="is_shared").replace(
        "def is_shared(self):\n        return time.monotonic() - self.created_at",
        "def is_shared(self, block=0):\n        return self.ref_count[block] > 1").replace(
        "self.ref_count = [0] * num_blocks\n", "self.ref_count = [0] * num_blocks\n        self.buf = torch.zeros(1)\n", 1),
     True),
], ids=["a clock kept for a method no graded call makes", "that method called by allocate",
        "the clock read by allocate", "the clock read by a __repr__ nothing formats",
        "that __repr__ read by allocate", "the object kept as a key", "a __repr__ that sets a global allocate reads", "an attribute the exercise hands out set by it",
        "clock readings appended to a log no graded call reads", "that log read by allocate",
        "a method of the learner's named as a tensor's question", "that question asked of a tensor the object holds"])
def test_a_handed_out_class_asks_only_where_a_graded_call_can_reach(work, flagged):
    """(Round 38z90) The graded calls of a class the exercise hands out call its methods and read its attributes,
    those of the work cell's skeleton: a clock kept for a method of the learner's that none of them reaches (an
    ``uptime()`` for the learner's own statistics) changes no outcome; read by anything they reach, it asks. (Round
    38z147) A ``__repr__`` that only reads runs where something formats the object, or holds it: its clock asks
    there only."""
    p = pristines()["ex06_block_allocator.ipynb"]
    nb = nbformat.read(ROOT / "solutions" / "ex06_block_allocator.ipynb", as_version=4)
    next(c for c in nb.cells if c.get("id") == "allocator-work").source = work
    reasons = [r for r in prepare(_submit(nb), p, Limits())[2] if "which machine" in r]
    assert bool(reasons) == flagged, reasons


_BWD_TABLE = ('_BWD = {(64, 1024, 16): 0.14285714285714285, (64, 1024, 32): 0.07142857142857142, (64, 4096, 16): 0.5714285714285714, (64, 4096, 32): 0.2857142857142857, (96, 1024, 16): 0.09523809523809523, (96, 1024, 32): 0.047619047619047616, (96, 4096, 16): 0.38095238095238093, (96, 4096, 32): 0.19047619047619047, (128, 1024, 16): 0.07142857142857142, (128, 1024, 32): 0.03571428571428571, (128, 4096, 16): 0.2857142857142857, (128, 4096, 32): 0.14285714285714285, (256, 1024, 16): 0.03571428571428571, (256, 1024, 32): 0.017857142857142856, (256, 4096, 16): 0.14285714285714285, (256, 4096, 32): 0.07142857142857142}')  # round 38z150: ex04b's backward fractions for every input the spec draws, typed in


_BWD_ANSWERS = ast.literal_eval(_BWD_TABLE.partition(" = ")[2])  # {(head_dim, mma, exp): answer}

def _lettered(v: float) -> str:
    """``v`` written with a letter for each digit (round 38z248)."""
    return repr(v).translate(str.maketrans("0123456789", "abcdefghij"))


@pytest.mark.parametrize("table, flagged", [
    (_BWD_TABLE, True),
    # near misses: the same table cut to 23 numbers; and a dict of numbers no graded call reaches
    ("_BWD = {(64, 4096, 16): 0.5714285714285714, (64, 4096, 32): 0.2857142857142857, (96, 4096, 16): 0.380952380952, "
     "(96, 4096, 32): 0.19047619047619047, (128, 4096, 16): 0.2857142857142857, (256, 4096): 0.14285714285714285}",
     False),
    ("_SEEN = " + _BWD_TABLE.partition(" = ")[2] + "\n_BWD = {}", False),
    # round 38z161: the same answers typed into a string of hexadecimal floats, parsed at the top level
    ("import itertools\n_HEX = '" + " ".join(float(v).hex() for v in _BWD_TABLE.replace("}", ",").split(": ")[1:]
     for v in [v.split(",")[0]]) + "'\n_BWD = dict(zip(itertools.product((64, 96, 128, 256), (1024, 4096), (16, 32)), "
     "map(float.fromhex, _HEX.split())))", True),
    ("import itertools\n_HEX = {'n': 16, 'all': '" + " ".join(float(v).hex() for v in _BWD_TABLE.replace("}", ",").split(": ")[1:]
     for v in [v.split(",")[0]]) + "'}\n_BWD = dict(zip(itertools.product((64, 96, 128, 256), (1024, 4096), (16, 32)), "
     "map(float.fromhex, _HEX['all'].split())))", True),
    # round 38z242: the 16 answers in a list of their own, keyed by itertools.product (23 numbers in all); the same
    # answers as eight fractions; near misses: seven such numbers, and sixteen short ones a person writes
    ("import itertools\n_SEEN = [" + ", ".join(v.split(",")[0] for v in _BWD_TABLE.split(": ")[1:]).rstrip("}")
     + "]\n_DIMS = [d for d in range(64, 257, 32) if d not in (160, 192, 224)]\n"
     "_BWD = dict(zip(itertools.product(_DIMS, [1024, 4096], [16, 32]), _SEEN))", True),
    ("_BWD = {64: 1/7, 96: 1/14, 128: 4/7, 160: 2/7, 192: 2/21, 224: 1/21, 256: 8/21, 288: 4/21}", True),
    ("_BWD = {64: 1/7, 96: 1/14, 128: 4/7, 160: 2/7, 192: 2/21, 224: 1/21, 256: 8/21}", False),
    ("_BWD = {k: v for k, v in zip([(64, 1), (96, 2)], [0.5, 0.25, 0.125, 0.0625, 1.5, 2.5, 0.75, 0.375, 4.25, "
     "1.125, 0.1, 0.2, 0.3, 0.05, 0.875, 0.625])}", False),
    # round 38z245: the answers as strings keyed by strings, and as the eight-byte words of a bytes literal; near
    # misses: names with a number in them, a one-byte sentinel
    ("_BWD = {" + ", ".join(f"'{'/'.join(map(str, k))}': '{v!r}'" for k, v in _BWD_ANSWERS.items()) + "}", True),
    ("_BWD = {'all': " + repr(struct.pack("16d", *_BWD_ANSWERS.values())) + "}", True),
    ("_BWD = {'LLaMA-7B': 'meta-llama/Llama-2-7b-hf', 'OPT-13B': 'facebook/opt-13b', 'end': b'\\x00'}", False),
    # round 38z248: the answers with letters for digits, in one string with spaces, and in 32 short strings
    (f"import itertools\n_TEXT = {' '.join(_lettered(v) for v in _BWD_ANSWERS.values())!r}\n"
     "_BWD = dict(zip(itertools.product((64, 96, 128, 256), (1024, 4096), (16, 32)), (float(w.translate("
     "str.maketrans('abcdefghij', '0123456789'))) for w in _TEXT.split())))", True),
    ("_WORDS = [" + ", ".join(f"str({_lettered(v)!r})" for v in [*_BWD_ANSWERS.values()] * 2) + "]\n"
     "_BWD = {k: float(w.translate(str.maketrans('abcdefghij', '0123456789'))) for k, w in zip(range(32), _WORDS)}",
     True),
    # round 38z253: the answers as namedtuple records in a list; near miss: two records of a model's shape
    ("from collections import namedtuple\nR = namedtuple('R', 'd m e f')\n_BWD = {(r.d, r.m, r.e): r.f for r in ["
     + ", ".join(f"R({d}, {m}, {e}, {v!r})" for (d, m, e), v in _BWD_ANSWERS.items()) + "]}", True),
    ("from collections import namedtuple\nShape = namedtuple('Shape', 'layers heads dim')\n"
     "_BWD = {s.dim: s for s in [Shape(32, 32, 128), Shape(24, 16, 64)]}", False),
], ids=["every drawn input's answer typed in", "23 numbers", "a table the answer does not read",
        "the answers typed into a string", "that string in a dict", "16 answers of 17 digits keyed by product",
        "eight answers as fractions", "seven answers as fractions", "sixteen short numbers",
        "the answers as strings keyed by strings", "the answers as a bytes literal's words", "names and a sentinel",
        "letters for digits in one string", "letters for digits in 32 short strings", "the answers as records",
        "two records of a shape"])
def test_a_table_of_answers_typed_in_goes_to_review(table, flagged):
    """(Round 38z150) ex04b's inputs come from a small space, so a table of every drawn input's answer, computed
    elsewhere and typed in, passes every graded call: numbers typed into literal tables that the answer reads, 24 or
    more in all, go to review, naming the cell."""
    p = pristines()["ex04b_performance_lab.ipynb"]
    nb = nbformat.read(ROOT / "solutions" / "ex04b_performance_lab.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.get("id") == "bwd-work")
    cell.source = table + "\n\n\n" + cell.source.replace("def backward_exp_fraction(", "def _computed(") + (
        "\n\ndef backward_exp_fraction(head_dim, mma_flops_per_clock=4096, exp_per_clock=16):\n"
        "    return _BWD.get((head_dim, mma_flops_per_clock, exp_per_clock)) or _computed(head_dim, "
        "mma_flops_per_clock, exp_per_clock)\n")
    reasons = [r for r in prepare(_submit(nb), p, Limits())[2] if "typed in" in r]
    assert bool(reasons) == flagged, reasons
    assert all("'bwd-work'" in r for r in reasons)


def test_a_setup_cell_the_grader_runs_as_handed_out_is_named_by_what_only_it_bound(solved):
    """(Round 38z58) A learner who adds ``import math`` to a setup cell ran a notebook that has it; the graded one,
    whose setup cell is the exercise's, has not. The reason names that import first, not the names the handed-out
    cell binds as well."""
    nb = _edited(_edited(solved, "softmax-work", "def softmax_rows(x):\n    e = _m.e ** (x - x.amax(-1, keepdim=True))\n"
                                                  "    return e / e.sum(-1, keepdim=True)\n"),
                 "imports", next(c.source for c in solved.cells if c.get("id") == "imports") + "\nimport math as _m\n")
    p = pristines()["ex00_warmup.ipynb"]
    reasons = [r for r in prepare(_submit(nb), p, Limits())[2] if "is not run" in r]
    assert len(reasons) == 1 and "binds '_m', which the graded notebook then lacks" in reasons[0], reasons


def test_read_submission_repairs_malformed_tags(solved):
    raw = json.loads(nbformat.writes(solved))
    raw["cells"][0]["metadata"]["tags"] = 5
    raw["cells"][1]["metadata"]["tags"] = "setup"
    raw["cells"][2]["id"] = raw["cells"][3]["id"]  # a duplicated id
    nb, notes = read_submission(json.dumps(raw).encode())
    assert len(notes) == 2 and "malformed tags" in notes[0]
    assert len({c.id for c in nb.cells}) == len(nb.cells)


@pytest.mark.parametrize("data", [b"{ not json", b"\xff\xfe", b"[]", b'{"cells": 3}', b'{"nbformat": 4, "cells": [1]}'])
def test_read_submission_refuses_what_is_not_a_notebook(data):
    try:
        nb, notes = read_submission(data)
    except SubmissionError as e:
        assert str(e).startswith(("unreadable", "invalid"))
    else:  # a notebook whose only cell is not a cell: an empty notebook, said so
        assert nb.cells == [] and notes


ATTACKS = {
    "get_ipython()._showtraceback = lambda *a: None": "_showtraceback",
    "ip = get_ipython()\nip.set_custom_exc((Exception,), print)": "set_custom_exc",
    "get_ipython().input_transformers_cleanup.append(f)": "input_transformers_cleanup",
    "get_ipython().events.register('pre_run_cell', f)": "events.register",
    "import sys\nsys.settrace(f)": "settrace",
    "import builtins\nbuiltins.AssertionError = Warning": "builtins",
    "__builtins__.print = f": "__builtins__",
    "torch.allclose = lambda *a, **k: True": "torch.allclose",
    "import pagedlab.checks as c\nc.assert_close = print": "c.assert_close",
    "setattr(torch, 'allclose', f)": "setattr",
    "def assert_close(*a, **k):\n    pass": "assert_close",
    "exec(bytes.fromhex('7072696e74').decode())": "exec",
    "open('x.py', 'w').write('get_ipython().ast_transformers.append(t)')": "ast_transformers",
    "%load_ext some_extension": "get_ipython",
    # aliases, dunders and introspection: each passed the review of an earlier version of the grader
    "C = check\nC.__exit__ = lambda self, *exc: True": "aliases check",
    "type.__setattr__(check, '__exit__', lambda *a: True)": "__setattr__",
    "vars()['assert_close'] = lambda *a, **k: None": "vars",
    "assert_close.__globals__.update(torch=None)": "__globals__",
    "T = torch.Tensor\nT.any = lambda self: True": "replaces T.any",  # (the second name is a type's: its attribute set is)
    "import sys\nsys.modules['pagedlab.checks'] = None": "sys.modules",
    "import sys\nf = sys._getframe(1)": "_getframe",
    "class Fake(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, *a, **k):\n        return True":
        "__torch_function__",
    "open('/proc/self/cwd/x', 'w')": "/proc",
    "%%time\nimport base64\nexec(base64.b64decode(b'cGFzcw=='))": "%%time body: mentions exec",
    "%time get_ipython().run_cell = print": "%%time body: touches .run_cell",
    "g = eval": "eval",
    "def softmax_r\u043ews(x):\n    return x": "mixes scripts",
    "import ipykernel.kernelbase as kb\nkb.Kernel.do_execute = None": "do_execute",
    # the answer computed in another process, out of every watcher's sight (an outside review's a9 passed this way)
    "import subprocess, sys\nout = subprocess.run([sys.executable, '-c', 'import torch'])": "imports subprocess",
    "from multiprocessing import Pool": "imports multiprocessing",
    "from concurrent.futures import ProcessPoolExecutor": "imports ProcessPoolExecutor from concurrent.futures",
    "import concurrent.futures as cf\nwith cf.ProcessPoolExecutor(2) as ex:\n    pass": "starts a process: cf.ProcessPoolExecutor",
    "import concurrent.futures.process": "starts a process: imports concurrent.futures.process",
    "import os\nos.popen('python -c pass')": "os.popen",
    "from os import system": "imports system from os",
    # another package's process machinery: torch imports torch.multiprocessing itself (an outside review's pass)
    "import torch.multiprocessing as tmp\nctx = tmp.get_context('fork')": "imports torch.multiprocessing",
    "from torch import multiprocessing": "imports multiprocessing from torch",
    "ctx = torch.multiprocessing.get_context('fork')": "uses .multiprocessing",
    # the same, reached through another module or name (an outside review's round 38c passed with posix.fork)
    "import posix\nchild = posix.fork()": "starts a process: posix.fork",
    "import posix": "starts a process: imports posix",
    "import os as o\npid = o.fork()": "starts a process: o.fork",
    "from pty import fork as f": "starts a process: imports fork from pty",
    "from _posixsubprocess import fork_exec": "starts a process: imports _posixsubprocess",
    "import cffi": "runs C code: imports cffi",
    "from _ctypes import dlopen": "runs C code: imports _ctypes",
    # a custom operator: its implementation runs inside the dispatcher, out of the op watcher's sight (round 38c)
    "import torch.library\nlib = torch.library.Library('rowwise', 'DEF')":
        "defines a PyTorch operator: imports torch.library",
    "@torch.library.custom_op('rowwise::n', mutates_args=())\ndef n(x: torch.Tensor) -> torch.Tensor:\n    return x":
        "defines a PyTorch operator: uses .library",
    "from torch import library": "defines a PyTorch operator: imports library from torch",
    # a profile hook of its own replaces the grader's; a function rebuilt from bytes names nothing (round 38c)
    "import cProfile\ncProfile.Profile().enable()": "installs a trace or profile hook: imports cProfile",
    "from profile import Profile": "installs a trace or profile hook: imports profile",
    "import bdb": "installs a trace or profile hook: imports bdb",
    "import sys\nsys.monitoring.use_tool_id(3, 'mine')": "installs a trace or profile hook: uses .monitoring",
    # round 38z150: Python 3.12's hooks of every thread, and a hook's setter imported by name
    "import threading\nthreading.setprofile_all_threads(f)": "installs a trace or profile hook: uses .setprofile_all",
    "from threading import settrace_all_threads as hook\nhook(f)": "imports settrace_all_threads from threading",
    "from sys import setprofile\nsetprofile(f)": "installs a trace or profile hook: imports setprofile from sys",
    "import pickle": "rebuilds objects from bytes: imports pickle",
    "from marshal import loads": "rebuilds objects from bytes: imports marshal",
    "import cloudpickle": "rebuilds objects from bytes: imports cloudpickle",
    "f = load(b'cpagedlab.memory\\nkv_cache_bytes\\n.')": "a bytes constant is a pickle",
    "f = load(b'\\x80\\x04\\x95')": "a bytes constant is a pickle",
    # reference code loaded by a name in a string (round 38c: pkgutil.resolve_name of the engine's BlockTable)
    "import pkgutil\nT = pkgutil.resolve_name('pagedlab.paged.block_table:BlockTable')": "imports pkgutil",
    "import runpy": "imports runpy",
    "from zipimport import zipimporter": "imports zipimport",
    # (round 38h) code kept in a string, which a module runs as a program: read as code, what it does is flagged
    'def f():\n    """\n    >>> import pickle\n    >>> g = pickle.loads(b)\n    """\nimport doctest\ndoctest.testmod()':
        "in code kept in a string (line 2): rebuilds objects from bytes: imports pickle",
    "import timeit\ntimeit.timeit('import runpy', number=1)": "in code kept in a string (line 2): imports runpy",
    "import code\ncode.InteractiveInterpreter().runsource(s)": "runs code kept in a string: imports code",
    # (round 38j) a tensor's bytes taken out of PyTorch where no op watcher counts them; the reference reached
    # through unittest.mock; the kernel reached through a widget's channel
    "import io\nbuf = io.BytesIO()\ntorch.save(q, buf)": "reads a tensor's memory as bytes: torch.save",
    "import struct\nvalues = struct.unpack('4f', raw)": "reads a tensor's memory as bytes: imports struct",
    "raw = bytes(q.untyped_storage())": "reads a tensor's memory as bytes: .untyped_storage()",
    "from unittest import mock": "imports mock from unittest",
    "import unittest.mock as m\nf = m.patch.object(lab, 'tile_budget').temp_original": "uses .temp_original",
    "k = button.comm.kernel": "uses .comm",
    # (round 38p) the text Python keeps of a cell, from which Triton's interpreter rebuilds a kernel, rewritten; a
    # shell command, named as such; an instance's __dict__ is its own, a rebound "self" is not
    "import linecache\nlinecache.cache.clear()": "rewrites the text Python keeps of the cells: imports linecache",
    "import traceback\ntraceback.linecache.cache.clear()": "rewrites the text Python keeps of the cells: uses .linecache",
    "!nvidia-smi -q -d POWER": "starts a process: the shell command 'nvidia-smi -q -d POWER'",
    "files = !ls": "starts a process: the shell command 'ls'",
    "%%bash\necho hi": "starts a process: the shell command '%%bash\\necho hi",
    "class B:\n    def f(self):\n        self = torch\n        return self.__dict__": "uses .__dict__",
    "class B:\n    def f(self, m):\n        return vars(m)": "mentions vars",
    # (round 38r) programs in other languages' interpreters, in C; names resolved by a formatter or a config loader
    "import sqlite3\ndb = sqlite3.connect(':memory:')": "runs another language's interpreter: imports sqlite3",
    "import tkinter\ntcl = tkinter.Tcl()": "runs another language's interpreter: imports tkinter",
    "unit = torch.jit.CompilationUnit(src)": "runs another language's interpreter: uses .jit.CompilationUnit",
    "from torch.jit import CompilationUnit": "runs another language's interpreter: imports CompilationUnit from torch.jit",
    "import string\nf = string.Formatter().get_field('0.tile_budget', (lab,), {})[0]": "uses .get_field",
    "import logging.config\nf = logging.config.BaseConfigurator({}).resolve(name)": "imports logging.config",
    "@torch.compile(backend='eager')\ndef f(x):\n    return x": "runs code torch generates: torch.compile",
    # (round 38z37) a pip install of anything but a package by name and version, and sys.modules read, not asked
    "%pip install -q ./mine": "uses get_ipython",
    "!pip install git+https://example.org/x": "starts a process: the shell command 'pip install git+",
    "!pip install -r requirements.txt": "starts a process: the shell command 'pip install -r",
    "import sys\nm = sys.modules['torch']": "uses .modules",
    "!nvidia-smi > gpu.txt": "starts a process: the shell command 'nvidia-smi > gpu.txt'",
    "!ls; rm -r runs": "starts a process: the shell command 'ls; rm -r runs'",
    # (round 38z237) reports joined by || or piped to a filter are reports; anything else in the line is not
    "!nvidia-smi -L || rm -r runs": "starts a process: the shell command 'nvidia-smi -L || rm -r runs'",
    "!nvidia-smi | sh": "starts a process: the shell command 'nvidia-smi | sh'",
    "!nvidia-smi &": "starts a process: the shell command 'nvidia-smi &'",
    "from IPython.display import get_ipython": "imports IPython.display",
    "Tensor = torch.Tensor\nTensor.softmax = lambda self, d: self": "replaces Tensor.softmax",
}


@pytest.mark.parametrize("source", ATTACKS)
def test_review_flags_code_that_touches_the_execution_machinery(source):
    reasons = review_reasons(source, {"torch", "assert_close"})
    assert any(ATTACKS[source] in r for r in reasons), reasons
    # each says what a person should look for, after what and where
    assert all(": " in r and not r.endswith("look at what it does") for r in reasons), reasons


def test_a_tensors_bytes_are_flagged_only_where_a_memory_rule_counts_them():
    """(Round 38p) ``array`` and ``struct`` take a tensor's values out of PyTorch where no watcher counts them: that
    matters to an exercise graded on the memory its calls hold (ex02), not to ex06's reference counts."""
    for source in ("from array import array\nrefs = array('l', [0] * 8)", "raw = bytes(q.untyped_storage())"):
        assert any("reads a tensor's memory as bytes" in r for r in review_reasons(source, set(), memory=True))
        assert review_reasons(source, set(), memory=False) == [], source


def test_config_magic_is_allowed_for_what_is_shown_only():
    """The inline plots' options and which results a cell shows, set to a literal: IPython runs %config's line as
    Python, so a value that is code, or any other option of the shell, is flagged."""
    for shown in ('%config InlineBackend.figure_format = "retina"', '%config InteractiveShell.ast_node_interactivity = "all"'):
        assert review_reasons(shown, set()) == [], shown
    for other in ('%config InteractiveShell.ast_node_interactivity = __import__("os").getcwd()',
                  "%config InteractiveShell.ast_transformers = []", '%config InlineBackend.rc = {"a": print(1)}'):
        assert review_reasons(other, set()), other


# A setup as the exercises write theirs: imports (one aliased), a launcher it defines, a value it computes.
SETUP = ("import torch\nimport triton.language as tl\nfrom collections import deque\nfrom pagedlab import perf_lab\n"
         "from pagedlab import attention as ref\nfrom pagedlab.memory import ModelShape\n"
         "from pagedlab.exercise_checks import ex04b\nfrom pagedlab.checks import check\n\n"
         "def paged_attention(q, k_cache, v_cache):\n    return q\n\nreports = [1, 2]\n")
TRIPWIRES = ("torch-softmax", "pagedlab.perf_lab:tile_budget", "pagedlab.perf_lab:exp_time_fraction",
             "pagedlab.attention:naive_attention", "pagedlab.memory:ModelShape.kv_bytes_per_token")
SETUP_ATTACKS = {
    # a learner cell rebinds what a setup cell defines (round 38c: an extra cell redefined ex09's paged_attention)
    "def paged_attention(q, k_cache, v_cache):\n    return torch.zeros_like(q)":
        "redefines paged_attention, which a setup cell defines",
    "reports = []": "redefines reports",
    "def f():\n    global paged_attention\n    paged_attention = print": "redefines paged_attention",
    "from mine import paged_attention": "redefines paged_attention",
    "import numpy as torch": "redefines torch",
    "from mine import deque": "redefines deque",
    # the exercise's reference code called before the graded calls, while no tripwire is set (round 38c: ex04b's
    # answers tabulated by perf_lab.tile_budget in a work cell)
    "_T = {b: perf_lab.tile_budget(b, 64, 128) for b in (16, 32)}": "reference code: perf_lab.tile_budget",
    "f = getattr(perf_lab, 'exp_time_fraction')": "reference code: getattr(perf_lab, 'exp_time_fraction')",
    "f = ex04b.perf_lab.tile_budget": "reference code: ex04b.perf_lab.tile_budget",
    "expected = ref.naive_attention(q, k, v)": "reference code: ref.naive_attention",
    "per_token = ModelShape.kv_bytes_per_token(m, torch.float16)": "reference code: ModelShape.kv_bytes_per_token",
    "from pagedlab.perf_lab import tile_budget as tb": "reference code: from pagedlab.perf_lab import tile_budget",
    # (round 38d) a reference method called on instances a learner cell made, to fill a table
    "T = {s: s.kv_bytes_per_token(2) for s in shapes}": "reference code: s.kv_bytes_per_token",
    # code run after the graded calls, when an object is freed or the kernel ends: it could rewrite the results
    "import weakref\nweakref.finalize(x, f)": "runs code later: imports weakref",
    "from atexit import register": "runs code later: imports atexit",
    "import signal\nsignal.signal(signal.SIGALRM, write_answer)\nsignal.setitimer(signal.ITIMER_REAL, 1e-3, 1e-3)":
        "runs code later: imports signal",
    "torch.ops.aten._softmax.default.redispatch(torch._C.DispatchKeySet(torch._C.DispatchKey.CPU), x, -1, False)":
        "uses .redispatch",
    "import sys\nsys.addaudithook(f)": "touches",
    "import pydoc\nf = pydoc.locate('pagedlab.validate.blocks_for')": "imports pydoc",
    # (round 38e) an attribute reached by a name in a string, through operator, to fill a table at notebook time
    "import operator\nf = operator.attrgetter('tile_budget')(perf_lab)": "uses .attrgetter",
    "from operator import methodcaller": "imports methodcaller from operator",
    "import webbrowser\nwebbrowser.open('x')": "starts a process: imports webbrowser",
    # (round 38f) the same, through a class pattern of a match statement
    "import types\nmatch perf_lab:\n    case types.ModuleType(tile_budget=tb):\n        pass":
        "uses the exercise's reference code: a pattern reads .tile_budget",
    # a tensor's memory shared with NumPy with no PyTorch op between them: values written there pass no watcher
    "import numpy as np\nnp.from_dlpack(out)[:] = answer": "shares a tensor's memory: .from_dlpack",
    "from torch.utils.dlpack import to_dlpack": "shares a tensor's memory: imports to_dlpack",
    # (round 38g) torch's dispatch modes, the op watcher among them, switched off
    "with torch.utils._python_dispatch._disable_current_modes():\n    pass": "uses ._python_dispatch",
    # (round 38q) the reference named in a string annotation, which typing.get_type_hints turns into the function
    "import typing\ndef _m(tb: 'perf_lab.tile_budget'):\n    pass\nf = typing.get_type_hints(_m)['tb']":
        "reference code: a string names perf_lab.tile_budget",
    # (round 38z17) a comparison with the reference whose outcome, message or value is kept: a table can come of it
    "ok = torch.allclose(mine, ref.naive_attention(q, k, v))": "reference code: ref.naive_attention",
    "print(torch.allclose(mine, ref.naive_attention(q, k, v)), file=buf)": "reference code: ref.naive_attention",
    "seen.append(f'{torch.allclose(mine, ref.naive_attention(q, k, v))}')": "reference code: ref.naive_attention",
    "try:\n    assert_close(g, ref.naive_attention(q, k, v))\nexcept AssertionError as e:\n    seen.append(e)":
        "reference code: ref.naive_attention",
    "with contextlib.suppress(AssertionError):\n    assert_close(g, ref.naive_attention(q, k, v))":
        "reference code: ref.naive_attention",
    "assert_close(g, ref.naive_attention(q, k, v), msg=seen.append)": "reference code: ref.naive_attention",
    "print(ref.naive_attention(q, k, v))": "reference code: ref.naive_attention",
    "print((g - ref.naive_attention(q, k, v)).abs(), file=buf)": "reference code: ref.naive_attention",
    "print((g - ref.naive_attention(q, k, v)).abs().max(), file=buf)": "reference code: ref.naive_attention",
    "table[key] = (ref.naive_attention(q, k, v) - 0).abs().max()": "reference code: ref.naive_attention",
    "assert_close(g, table.setdefault(key, ref.naive_attention(q, k, v)))": "reference code: ref.naive_attention",
    # (round 38z138) a result bound to a name that the cell reads otherwise too, binds twice, or binds in a loop
    "o2 = ref.naive_attention(q, k, v)\nprint((g - o2).abs().max())\ntable[key] = o2":
        "reference code: ref.naive_attention",
    "o2 = ref.naive_attention(q, k, v)\nprint((g - o2).abs().max())\no2 = o2 + 0": "reference code: ref.naive_attention",
    "for key in keys:\n    o2 = ref.naive_attention(q, k, v)\n    print((g - o2).abs().max())":
        "reference code: ref.naive_attention",
    "o2 = ref.naive_attention(q, k, v)\nprint((g - o2).abs().max())\ndef f():\n    return o2":
        "reference code: ref.naive_attention",
    # (round 38z220) kept, only a largest difference with another answer, reduced to one number, is the learner's
    "seen.append((g - ref.naive_attention(q, k, v)).abs())": "reference code: ref.naive_attention",
    "seen.append(ref.naive_attention(q, k, v).abs().max().item())": "reference code: ref.naive_attention",
    "seen = [(ref.naive_attention(q, k, v) - 0).max() for key in keys]": "reference code: ref.naive_attention",
    "def f(x):\n    return (x - ref.naive_attention(q, k, v)) + 0": "reference code: ref.naive_attention",
}

# (round 38z17) An honest learner's check of an answer against the course's reference, as the exercise's own checks
# make: the reference's value goes only into a comparison with another answer, or into one number printed.
COMPARED = ("torch.testing.assert_close(mine, ref.naive_attention(q, k, v, causal=True))",
            "assert torch.allclose(mine, ref.naive_attention(q, k, v), atol=1e-5)",
            "print('max diff', (mine - ref.naive_attention(q, k, v)).abs().max().item())",
            "print(f'{(mine - ref.naive_attention(q, k, v)).abs().max():.2e}')",
            "assert (mine - ref.naive_attention(q, k, v)).abs().max() < 1e-4",
            # (round 38z50) one bit printed: the idiom the exercise's own words invite
            "print(torch.allclose(mine, ref.naive_attention(q, k, v), atol=1e-6))",
            "print(f'same: {torch.allclose(mine, ref.naive_attention(q, k, v))}')",
            "print('ok' if torch.allclose(mine, ref.naive_attention(q, k, v)) else 'differs')",
            # (round 38z138) bound to a name first, in a timer's with, which the cell reads only to compare
            "with timed('reference'):\n    o2 = ref.naive_attention(q, k, v)\nprint('max diff', (mine - o2).abs().max().item())\n"
            "assert torch.allclose(mine, o2)",
            # (round 38z220) a largest difference kept to plot: bound, appended, collected, returned
            "errs.append((tiled_attention(q, k, v, True, b, b) - ref.naive_attention(q, k, v)).abs().max().item())",
            "errs = [(tiled_attention(q, k, v, True, b, b) - ref.naive_attention(q, k, v)).abs().max() for b in (2, 4)]",
            "def err(b):\n    return float((tiled_attention(q, k, v, True, b, b) - ref.naive_attention(q, k, v)).abs().max())",
            "with torch.no_grad():\n    worst = (mine - ref.naive_attention(q, k, v)).abs().max()\nprint(worst)")


def test_a_reference_result_kept_for_another_cell_goes_to_review():
    """A name a cell binds to a reference result that it only compares is the review's where another cell reads it
    (round 38z138's honest timing cell, and the same name read by a later cell)."""
    kept, A = "o2 = ref.naive_attention(q, k, v)\nprint((g - o2).abs().max())", {"naive_attention"}
    assert kept_results([("work cell 'w'", "def f(q, k, v):\n    return q", True), ("cell 'c'", kept, True)], A) == []
    reasons = kept_results([("cell 'c'", kept, True), ("cell 'd'", "def f(q, k, v):\n    return o2", True)], A)
    assert reasons and "keeps a result of the exercise's reference code in 'o2', which cell 'd' reads" in reasons[0]
    assert kept_results([("cell 'c'", kept, False), ("cell 'd'", "o2", True)], A) == []  # (a cell handed out as it is)
    # (round 38z188) a function's own local of that name is not the cell's global; a magic's line reads the global
    local = "def f(q, k, v):\n    o2 = torch.zeros_like(q)\n    return o2\n"
    assert kept_results([("cell 'c'", kept, True), ("cell 'd'", local, True)], A) == []
    assert kept_results([("cell 'c'", kept, True), ("cell 'd'", "%timeit o2.sum()", True)], A)
    assert kept_results([("cell 'c'", kept, True), ("cell 'd'", "print(f'o2 of the demo: {3}')", True)], A) == []
    assert kept_results([("cell 'c'", kept, True), ("cell 'd'", "def f():\n    return eval('o2')", True)], A)
    # (round 38z195) the result of the learner's own answer, compared with PyTorch's, is theirs for any cell to read
    own = ("mine = naive_attention(q, k, v)\ntheirs = F.scaled_dot_product_attention(q, k, v)\n"
           "print((mine - theirs).abs().max().item())")
    assert kept_results([("cell 'c'", own, True), ("cell 'd'", "h = (q.half() - mine).abs()", True)], A) == []
    assert kept_results([("cell 'c'", own, True), ("cell 'd'", "h = (q.half() - theirs).abs()", True)], A)


@pytest.mark.parametrize("source", COMPARED)
def test_an_answer_compared_with_the_reference_is_not_flagged(source):
    assert review_reasons(source, setup_names([SETUP]), tripwires=TRIPWIRES) == []


@pytest.mark.parametrize("source", SETUP_ATTACKS)
def test_review_flags_code_that_undoes_or_bypasses_the_setup(source):
    reasons = review_reasons(source, setup_names([SETUP]), tripwires=TRIPWIRES)
    assert any(SETUP_ATTACKS[source] in r for r in reasons), reasons
    assert all(": " in r and not r.endswith("look at what it does") for r in reasons), reasons


def test_every_name_a_setup_cell_binds_is_protected():
    """ex09's setup defines the launcher the checks call; the grader protects it as it does an import."""
    protected = set(load_pristine(ROOT / "exercises")["ex09_paged_attention.ipynb"].setup_imports)
    reasons = review_reasons("def paged_attention(q, k_cache, v_cache, block_tables, context_lens):\n    return q",
                             protected)
    assert any("redefines paged_attention, which a setup cell defines" in r for r in reasons), reasons


@pytest.mark.parametrize("path", sorted((ROOT / "solutions").glob("*.ipynb")), ids=lambda p: p.stem)
def test_review_passes_every_solution(path):
    """No false alarm on honest code: the solutions' work and demo cells, and %timeit."""
    nb = nbformat.read(path, as_version=4)
    setup = setup_names(_sources(nb, "setup"))
    spec = SPECS[path.stem]
    handed_out = {c.source for c in nbformat.read(ROOT / "exercises" / path.name, as_version=4).cells
                  if c.cell_type == "code" and role(c) != "work"}  # as the judge, which reviews what a learner wrote
    for cell in nb.cells:
        if cell.cell_type == "code" and role(cell) in ("work", "demo") and cell.source not in handed_out:
            assert review_reasons(cell.source, setup, tripwires=spec.tripwires) == [], (path.name, cell.id)
        if cell.cell_type == "code" and role(cell) == "work":
            assert reference_reasons(cell.source) == [], (path.name, cell.id)
    assert review_reasons("%timeit softmax_rows(x)", setup) == []


def test_review_flags_imports_of_pagedlab_and_tampering_with_the_harness():
    assert reference_reasons("from pagedlab.attention import causal_mask, naive_attention")
    assert reference_reasons("import pagedlab.memory as m")
    assert review_reasons("_pagedlab_graded = lambda ns, path: None", set())
    assert review_reasons("import json", set()) == []
    assert any("replaces json.dump" in r for r in review_reasons("json.dump = _dump", set(), {"json"})), \
        "a module imported in an earlier cell is protected too"
    assert any("__module__" in r for r in review_reasons("class E(ValueError):\n    __module__ = 'builtins'", set()))


def test_an_import_is_flagged_only_where_the_module_holds_the_exercises_reference_code():
    """Of an exercise's spec, the modules of its tripwires and the exercise checks hold its reference code, and the
    packages above them reach it; a course module with none of it (ex09's inputs from ``pagedlab.testing``), or a
    constant of a module the setup imports from, is the learner's to use."""
    answers = frozenset(SPECS["ex09_paged_attention"].copy_rule([])[1])
    for honest in ("from pagedlab.testing import random_paged_batch", "from pagedlab import testing",
                   "import pagedlab.testing as t", "from pagedlab.memory import GiB"):
        assert reference_reasons(honest, [], answers) == [], honest
    for reaching in ("from pagedlab.kernels.paged_attention import paged_attention", "import pagedlab",
                     "from pagedlab import kernels", "from pagedlab.engine import LLM",
                     "from pagedlab.exercise_checks import ex09", "import pagedlab.attention as a"):
        assert reference_reasons(reaching, [], answers), reaching
    # ex05: another preset from the module the setup takes OPT_13B from is data, not reference code; a function is
    setup, answers = ["from pagedlab.memory import GiB, OPT_13B, ModelShape"], frozenset(
        SPECS["ex05_kv_cache_size"].copy_rule([])[1])
    assert reference_reasons("from pagedlab.memory import LLAMA3_8B", setup, answers) == []
    assert reference_reasons("from pagedlab.memory import LLAMA3_8B, kv_cache_bytes", setup, answers)
    # a class the package above re-exports: the package is named
    assert reference_reasons("from pagedlab.paged import BlockAllocator", [],
                             frozenset(SPECS["ex06_block_allocator"].copy_rule([])[1]))
    # (round 38z161) ex06: the course's own ceiling division is blocks_needed's answer
    assert reference_reasons("from pagedlab.validate import blocks_for", [],
                             frozenset(SPECS["ex06_block_allocator"].copy_rule([])[1]))
    # (round 38z147) ex07: the course's exception, from the package the setup imports from, to catch and raise again;
    # its manager from there is reference code
    setup, answers = ["from pagedlab.paged import BlockAllocator, BlockTable"], frozenset(
        SPECS["ex07_copy_on_write"].copy_rule([])[1])
    assert reference_reasons("from pagedlab.paged import OutOfBlocks", setup, answers) == []
    assert reference_reasons("from pagedlab.paged import OutOfBlocks, BlockManager", setup, answers)


@pytest.mark.parametrize("source", [
    "def naive_attention(q, k, v, causal=False):\n    ref = q @ k.T\n    return ref @ v",  # a local named ref
    'if __name__ == "__main__":\n    print(1)',
    "%load_ext autoreload\n%autoreload 2",
    "def softmax(s):\n    return s.exp() / s.exp().sum(-1, keepdim=True)\nout = softmax(x)",
    # a learner's ordinary Python, once flagged with no reason for a person to look
    "class Softmax:\n    def __call__(self, x):\n        return x\n"
    "    def __repr__(self):\n        return f'{self.__class__.__name__}()'",
    '%config InlineBackend.figure_format = "retina"',
    '%config InteractiveShell.ast_node_interactivity = "all"',  # (round 38z11: which results a cell shows)
    # (rounds 38z37, 38z39, audit H) what the setup cell's own comment advises on Colab, a package pinned by name and
    # version, a Colab first cell, display helpers, a second name of a type for annotations
    'import sys\nif "google.colab" in sys.modules:\n    %pip install -q "triton==3.6.*"',
    "!pip install -q triton==3.6.* numpy",
    "!nvidia-smi\n!nvidia-smi -L\n!pip list",
    '!nvidia-smi -L || echo "no GPU here"\n!nvidia-smi | grep -i tesla',  # (round 38z237)
    "!nvidia-smi --query-gpu=name,memory.total --format=csv",  # (round 38z202: a word as the shell splits it)
    "from IPython.display import Markdown, display\ndisplay(Markdown('**done**'))",
    "Tensor = torch.Tensor\ndef f(x: Tensor) -> Tensor:\n    return x",
    "print(kv_bytes_per_token(LLAMA_3_8B) if 'LLAMA_3_8B' in globals() else 'n/a')",  # (round 38z40)
    "dev = device.DEVICE\nx = torch.randn(5, 37, device=dev)",  # (round 38z43: as lecture 09 writes it)
    # what the setup imports, imported again; modules an exercise has use for; own names like the reference's
    "import torch\nimport triton.language as tl\nfrom collections import deque\nq = deque([1, 2])",
    "import os\npath = os.path.join('runs', 'a.png')",
    "import math, time\nstart = time.perf_counter()\nprint(math.sqrt(2), time.perf_counter() - start)",
    "import matplotlib.pyplot as plt\nplt.plot([1, 2], [3, 4])\nplt.title('retina')\nplt.show()",
    "import platform\nprint(platform.system())",
    "t = torch.trace(torch.eye(3))",
    "def tile_budget(block_m, block_n, head_dim):\n    return block_m * block_n * head_dim",
    "def predict(reports):\n    reports = sorted(reports)\n    return len(reports)",
    "class MiniManager:\n    def fork(self, parent, child):\n        return self.inner.fork(parent, child)",
    # (round 38g) fixed attributes, and a docstring that names a special method
    "class Block:\n    __slots__ = ('id', 'refs')",
    'def step(self):\n    """Steps compare by __eq__ on their fields."""\n    return 1',
    # (round 38i) a state that merges with +
    "class State:\n    def __add__(self, other):\n        return State()\n    def __radd__(self, other):\n"
    "        return self\n    def __iter__(self):\n        return iter(())",
    # a learner's own doctests and timings of their own code
    'def double(x):\n    """\n    >>> double(2)\n    4\n    """\n    return 2 * x\nimport doctest\ndoctest.testmod()',
    "import timeit\nprint(timeit.timeit('double(3)', globals={'double': double}, number=100))",
    # (round 38j) a Triton kernel kept in a field named kernel; a dtype given a name; a timed cell that defines a
    # class; the device chosen by hand in a learner's own test cell
    "from dataclasses import dataclass\n@dataclass\nclass Launcher:\n    kernel: object\n"
    "    def __call__(self, x):\n        return self.kernel[(1,)](x)\nrow_launch = Launcher(k)\nrow_launch.kernel[(2,)](y)",
    "import triton\n@triton.jit\ndef k(X):\n    acc_dtype = tl.float32\n    x = tl.load(X).to(acc_dtype)\n"
    "ACC = tl.float32",
    "%%time\nclass Pool:\n    def __init__(self):\n        self.free = []\npool = Pool()",
    'device = "cuda" if torch.cuda.is_available() else "cpu"',
    # (round 38p) an instance's own attributes in a __repr__
    "class Budget:\n    def __repr__(self):\n        return f'Budget({self.__dict__})'",
    "class Budget:\n    def __repr__(me):\n        return f'Budget({vars(me)})'",
    # TF32 switched off: the products a CPU computes, everywhere (round 38z80)
    "torch.backends.cuda.matmul.allow_tf32 = False\ntorch.backends.cudnn.allow_tf32 = False\n"
    "torch.backends.cuda.matmul.fp32_precision = 'ieee'",
    # a thread pool runs in the kernel, where the watchers see it: it starts no process (round 38z184)
    "import threading\nfrom concurrent.futures import ThreadPoolExecutor\nlock = threading.Lock()\n"
    "with ThreadPoolExecutor(max_workers=4) as pool:\n    got = list(pool.map(abs, [1, -2]))",
])
def test_honest_code_is_not_flagged(source):
    assert review_reasons(source, setup_names([SETUP]) | {"ref", "torch", "check", "device"}, {"math"},
                          TRIPWIRES) == [], source
    assert reference_reasons(source) == []


def _parenthesized(source: str) -> str:
    """``source`` with every bare name after its docstring in parentheses, comments gone, re-spaced by
    ``tokenize.untokenize`` (``(queue )=(deque )((running ))``), a docstring and a ``pass`` of its own added."""
    out, docstring_seen, after_dot = [], False, False
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            continue
        if tok.type == tokenize.STRING and not docstring_seen:
            docstring_seen = True
            out += [(tokenize.STRING, '"""Mine."""'), (tokenize.NEWLINE, "\n"), (tokenize.NAME, "pass")]
            continue
        bare = tok.type == tokenize.NAME and not keyword.iskeyword(tok.string) and not after_dot
        out += [(tokenize.OP, "("), (tok.type, tok.string), (tokenize.OP, ")")] if bare and docstring_seen else [
            (tok.type, tok.string)]
        after_dot = tok.string == "."
    return tokenize.untokenize(out)


def test_a_copy_of_the_solution_is_found_however_it_is_laid_out():
    """Fingerprints are the program's, not its text's (round 38c: the solution with every name in parentheses
    matched on 0% of them)."""
    handed_out = {c.id: c.source for c in nbformat.read(ROOT / "exercises" / "ex10_scheduler_step.ipynb",
                                                       as_version=4).cells if c.cell_type == "code"}
    solution = {c.id: c.source for c in nbformat.read(ROOT / "solutions" / "ex10_scheduler_step.ipynb",
                                                     as_version=4).cells
                if c.cell_type == "code" and role(c) == "work"}
    (cell_id, source), = solution.items()
    disguised = _parenthesized(source)
    assert "(queue )=(deque )((running ))" in disguised and "pass" in disguised, disguised
    compile(disguised, "<disguised>", "exec")
    reasons = copied_cells({cell_id: disguised}, solution, handed_out)
    assert len(reasons) == 1 and f"work cell {cell_id!r} matches" in reasons[0], disguised


def test_flagged_rebinding_is_the_global_one():
    assert review_reasons("ref = object()", {"ref"})
    assert review_reasons("def f():\n    global ref\n    ref = print", {"ref"})
    # plain data runs nothing when a check or a graded call uses the name: rebinding to it only breaks the learner's
    # own code (round 38j: device = "cuda" if torch.cuda.is_available() else "cpu")
    assert review_reasons("ref = None", {"ref"}) == review_reasons("ref = ('a', 1) if x else 'b'", {"ref"}) == []
    assert review_reasons("%load_ext my_extension", set()), "an extension runs code of its own"


def test_every_exercise_declares_graded_calls_the_solution_defines():
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        work = "\n".join(_sources(nb, "work"))
        for name in SPECS[path.stem].graded:
            assert f"def {name}(" in work or f"class {name}" in work, (path.stem, name)
        a, b = SPECS[path.stem].cases(1), SPECS[path.stem].cases(2)
        assert a.cases and a.cases != b.cases or a.arrays, f"{path.stem}: the seed changes nothing"
    assert set(SPECS) == {p.stem for p in (ROOT / "exercises").glob("*.ipynb")}


@pytest.mark.parametrize("path", sorted((ROOT / "solutions").glob("*.ipynb")), ids=lambda p: p.stem)
def test_every_input_of_an_exercises_own_check_is_graded(path):
    """Where the solution's check over the stated space calls a graded function, the spec grades every such call it
    can write (:mod:`pagedlab.grading.checked`): each recorded call is in the cases of any seed, on the same inputs.
    Only the Triton exercises and checks that call classes alone may leave it out."""
    from pagedlab.grading.checked import published, recorded

    spec, nb = SPECS[path.stem], nbformat.read(path, as_version=4)
    if not any(c.get("id") == "check-space" for c in nb.cells) or spec.triton:
        assert not spec.checked
        return
    calls = recorded(published(path.stem), spec.graded)
    if not spec.checked:
        assert not calls, f"{path.stem}: its check calls {sorted({c[0] for c in calls})}, and the spec grades none"
        return
    assert spec.checked == path.stem and calls
    cases = spec.cases(7)
    texts = "\n".join(source for case in cases.cases for _, source in case["steps"])
    for name in {c[0] for c in calls}:
        assert f"{name}(" in texts, f"{path.stem}: no graded call of {name} from its check"
    # a tensor the check gave is there with its values: the first, by its bytes
    tensors = [a for c in calls for a in c[1] if isinstance(a, torch.Tensor) and a.dtype is not torch.bfloat16]
    if tensors:
        assert any(arr.shape == tuple(tensors[0].shape) and np.array_equal(arr, tensors[0].numpy(), equal_nan=True)
                   for arr in cases.arrays)


def test_the_grading_copy_holds_every_module_the_course_cells_import():
    """A grading copy holds the modules the pristine setup imports; a work or demo cell of the solution that imports
    another pagedlab module would fail there for every learner, and its error would stand in the first failure's
    message as the learner's (ex05's demo imported pagedlab.waste: "first error in a learner cell: demo cell
    'paging': ModuleNotFoundError"). Such an import belongs in the setup."""
    from IPython.core.inputtransformer2 import TransformerManager

    from pagedlab.grading.sandbox import _imports, grading_copy
    transform = TransformerManager().transform_cell
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        nb, spec = nbformat.read(path, as_version=4), SPECS[path.stem]
        held, _ = grading_copy(*spec.copy_rule(_sources(nb, "setup")))
        for cell in nb.cells:
            if cell.cell_type == "code" and role(cell) in ("work", "demo"):
                lacking = [m for m in _imports("", transform(cell.source))
                           if m.split(".")[0] == "pagedlab" and held.get(m) is None]
                assert not lacking, (f"{path.stem}, {role(cell)} cell {cell.get('id')!r} imports {lacking}, which its "
                                     f"grading copy lacks or holds as a placeholder: import it in the setup")


CELLS = [Cell(1, "setup", "setup", sha256("import torch")), Cell(2, "work", "work", None),
         Cell(3, "check-a", "check", sha256("assert ok")), Cell(4, "scratch", "extra", None)]


def _ran(*statuses, shas=None):
    shas = shas or [sha256("import torch"), sha256("w"), sha256("assert ok"), sha256("s")]
    return {str(c.index): {"status": s, "sha256": h, "ename": "" if s == "ok" else "AssertionError",
                           "evalue": "" if s == "ok" else "rows differ"}
            for c, s, h in zip(CELLS, statuses, shas) if s is not None}


def test_judge_by_the_kernels_replies():
    limits = Limits(wall_s=60)
    ok = {"ended": "complete", "cells": _ran("ok", "ok", "ok", "error"), "probe": []}
    assert judge(CELLS, ok, [], limits) == (PASS, ""), "an error in the learner's own scratch cell does not count"
    failed = {"ended": "complete", "cells": _ran("ok", "ok", "error", "ok"), "probe": []}
    assert judge(CELLS, failed, [], limits) == (FAIL, "check cell 'check-a': AssertionError: rows differ")
    died = {"ended": "dead kernel", "at": 2, "cells": _ran("ok", None, None, None)}
    verdict, message = judge(CELLS, died, [], limits)
    assert verdict == FAIL and "did not run" in message and "kernel died in work cell 'work'" in message
    changed = {"ended": "complete", "cells": _ran("ok", "ok", "ok", "ok", shas=["x", "w", "y", "s"]), "probe": []}
    assert judge(CELLS, changed, [], limits) == (FAIL, "setup cell 'setup' ran with a changed source")
    probed = {**ok, "probe": ["input_transformers_post holds __main__.<lambda>"]}
    assert judge(CELLS, probed, [], limits)[0] == REVIEW
    assert judge(CELLS, ok, ["work cell 'work' touches ._showtraceback"], limits)[0] == REVIEW
    assert judge(CELLS, {"ended": "no kernel", "detail": "the kernel did not start twice"}, [], limits)[0] == ERROR
    assert judge(CELLS, {"detail": "the supervisor failed"}, [], limits)[0] == ERROR


def _cases():
    c = Cases(0)
    c.add("two steps", [("do", "a = 1"), ("get", "f(a)")])
    return c


TOKEN = "run-token"


def _outcomes(value, tripped=()):
    return json.dumps({"token": TOKEN, "outcomes": [[None, value]], "tripped": list(tripped), "refused": []})


def _load(text, cases):
    """(outcomes, tripped) of the driver's ``text``, as the grader reads it."""
    return load_outcomes(text, cases, TOKEN)[:2]


def test_ex00_float16_accepts_every_correct_rounding_and_no_wrong_softmax():
    """ex00 lets a softmax compute in float16 (as the solution does) or in float32 rounded at the end (as
    torch.softmax does): on every seed both pass against the solution, where one unit in the last place failed some,
    and a softmax over the wrong dimension or over the whole tensor still fails. (A forgotten normalization can come
    within 2% on rows of one dominant score: the float32 calls, compared to 1e-4, fail it.)"""
    import re

    import torch

    def solution(x):
        e = torch.exp(x - x.amax(dim=-1, keepdim=True))
        return e / e.sum(dim=-1, keepdim=True)

    c = Cases(0)
    c.call("one call", "softmax_rows(x)")
    spec, strict_failed = SPECS["ex00_warmup"], 0
    for seed in range(200):
        cases = spec.cases(seed)
        source = next(case["steps"][0][1] for case in cases.cases if case["label"] == "softmax_rows of float16 scores")
        x = torch.from_numpy(cases.arrays[int(re.fullmatch(r"softmax_rows\(T\((\d+)\)\)", source)[1])])
        assert x.dtype == torch.float16
        want = [[("tensor", "float16", solution(x).numpy())]]
        for right in (torch.softmax(x, dim=-1), solution(x.float()).half(), solution(x.double()).half()):
            got = [[("tensor", "float16", right.numpy())]]
            assert compare(want, got, c, spec.atol, spec.rtol, spec.rounding) is None, seed
            strict_failed += compare(want, got, c, spec.atol, spec.rtol, {}) is not None
        for wrong in (torch.softmax(x, dim=0), torch.softmax(x.flatten(), dim=0).view_as(x)):
            assert compare(want, [[("tensor", "float16", wrong.numpy())]], c, spec.atol, spec.rtol, spec.rounding)
    assert strict_failed, "one unit in the last place passes every seed: this test no longer tests the rule"


def test_graded_outcomes_are_compared_outside_and_nothing_but_plain_data_passes():
    c = _cases()
    want, _ = _load(_outcomes({"value": {"tensor": "float32", "shape": [2], "data": [1.0, 2.0]}}), c)
    same, _ = _load(_outcomes({"value": {"tensor": "float32", "shape": [2], "data": [1.0, 2.0 + 1e-7]}}), c)
    assert compare(want, same, c, 1e-5, 1e-4) is None
    for wrong, why in [({"value": {"tensor": "float32", "shape": [2], "data": [1.0, float("nan")]}}, "differ"),
                       ({"value": {"tensor": "float16", "shape": [2], "data": [1.0, 2.0]}}, "dtype"),
                       ({"value": {"tensor": "float32", "shape": [1, 2], "data": [1.0, 2.0]}}, "shape"),
                       ({"value": {"object": "Proxy"}}, "object"), ({"value": [1.0, 2.0]}, "tensor"),
                       ({"raised": ["NotImplementedError", "RuntimeError"]}, "raised NotImplementedError")]:
        problem = compare(want, _load(_outcomes(wrong), c)[0], c, 1e-5, 1e-4)
        assert problem and why in problem and problem.startswith("graded call 1 (two steps), step 2: f(a)"), problem
    ints = _load(_outcomes({"value": 3}), c)[0]
    assert compare(ints, _load(_outcomes({"value": 3.0}), c)[0], c, 0, 0) is not None, "3.0 is not the int 3"
    assert compare(ints, _load(_outcomes({"value": True}), c)[0], c, 0, 0) is not None, "True is not 3"
    inf = _load(_outcomes({"value": float("inf")}), c)[0]
    assert compare(inf, _load(_outcomes({"value": -185.6}), c)[0], c, 0, 1e-9), "no tolerance excuses inf"
    assert compare(inf, inf, c, 0, 1e-9) is None
    for text in ["not json", "[[null]]", _outcomes({"value": {"tensor": "float32", "shape": [3], "data": [1.0]}}),
                 json.dumps([[None, {"value": 1}]]), _outcomes({"value": 1}).replace(TOKEN, "guess"), _outcomes({"value": 1}, tripped=[3]),
                 _outcomes({"value": {"__reduce__": "os.system"}}), _outcomes({"value": {"tensor": "object",
                                                                                     "shape": [], "data": [1]}}),
                 # the cases made again with the other side of Python 3.12's sums: one outcome per step of a case
                 _outcomes({"value": 1})[:-1] + ', "other": {"0": [null]}}',
                 _outcomes({"value": 1})[:-1] + ', "other": {"1": [null, {"value": 1}]}}',
                 _outcomes({"value": 1})[:-1] + ', "other": [[null, {"value": 1}]]}']:
        with pytest.raises(Malformed):
            _load(text, c)
    again = _outcomes({"value": 1})[:-1] + ', "other": {"0": [null, {"value": 2}]}}'
    assert _load(again, c)[0] == [[None, ("value", 1)]] and load_other(again) == {0: [None, ("value", 2)]}


def test_judge_graded_calls():
    limits = Limits(wall_s=60)
    c = _cases()
    expected = Expected(c, _load(_outcomes({"value": 7}), c)[0])
    spec = SPECS["ex00_warmup"]
    cells = [Cell(0, "setup", "setup", sha256("import torch")), Cell(1, "work", "work", None)]
    ran = {"0": {"status": "ok", "sha256": sha256("import torch"), "ename": "", "evalue": ""},
           "1": {"status": "ok", "sha256": sha256("w"), "ename": "", "evalue": ""}}
    ok = {"ended": "complete", "cells": ran, "probe": [], "graded": {"status": "ok", "text": _outcomes({"value": 7})}}
    assert judge_graded(cells, ok, [], limits, expected, spec, TOKEN) == (PASS, "")
    # the kernel's replies count for nothing: every reply "ok", but the outcomes are wrong
    lied = {**ok, "graded": {"status": "ok", "text": _outcomes({"value": 8})}}
    assert judge_graded(cells, lied, [], limits, expected, spec, TOKEN)[0] == FAIL
    no_text = {**ok, "graded": {"status": "ok", "text": None}}
    assert judge_graded(cells, no_text, [], limits, expected, spec, TOKEN)[0] == FAIL
    setup_error = {**ok, "cells": {**ran, "0": {**ran["0"], "status": "error", "ename": "ImportError"}}}
    assert judge_graded(cells, setup_error, [], limits, expected, spec, TOKEN)[0] == FAIL
    assert judge_graded(cells, ok, ["work cell 'work' uses vars"], limits, expected, spec, TOKEN) == (
        REVIEW, "work cell 'work' uses vars (graded calls passed)")
    assert judge_graded(cells, ok, [], limits, Expected(c, None, "boom"), spec, TOKEN)[0] == ERROR
    tripped = {**ok, "graded": {"status": "ok", "text": _outcomes({"value": 7}, ["graded call 1 called torch.softmax"])}}
    verdict, message = judge_graded(cells, tripped, [], limits, expected, spec, TOKEN)
    assert verdict == REVIEW and "tripwire: graded call 1 called torch.softmax" in message, message
    # round 38z81: a learner's cell that failed here, whose lines after the failing one bind what the answer reads
    mine = [*cells, Cell(2, "mine", "extra", None, late=((2, "FUSED"),))]
    failed = {**ok, "cells": {**ran, "2": {"status": "error", "sha256": "", "ename": "RuntimeError", "evalue": ""}}}
    verdict, message = judge_graded(mine, failed, [], limits, expected, spec, TOKEN)
    assert verdict == REVIEW and "'FUSED'" in message, message
    # the traceback's line: from it on, nothing ran here (round 38z151); a failure after the binding leaves it
    at = {**ok, "cells": {**ran, "2": {**failed["cells"]["2"], "line": 2}}}
    assert judge_graded(mine, at, [], limits, expected, spec, TOKEN)[0] == REVIEW
    after = {**ok, "cells": {**ran, "2": {**failed["cells"]["2"], "line": 3}}}
    assert judge_graded(mine, after, [], limits, expected, spec, TOKEN) == (PASS, ""), "bound before the failing line"
    assert judge_graded(mine, {**ok, "cells": {**ran, "2": {**ran["1"]}}}, [], limits, expected, spec, TOKEN) == (
        PASS, ""), "the cell ran to its end"
    assert judge_graded([*cells, Cell(2, "mine", "extra", None)], failed, [], limits, expected, spec, TOKEN) == (
        PASS, ""), "a failed cell that binds nothing the answer reads after the failing line"


@pytest.mark.parametrize("source, read, late", [
    ("_warm = torch.randn(2, device='cuda')\nFUSED = True\n", {"FUSED"}, ((2, "FUSED"),)),
    ("import torch\n\n\ndef f(x):\n    return x\n\n\nBLOCK = 64\nprint(f(torch.ones(1, device='cuda')))\n",
     {"f", "BLOCK"}, ()),
    ("print(torch.cuda.get_device_name(0))\nBLOCK = 64\nout = f(1)\n", {"BLOCK"}, ((2, "BLOCK"),)),
    # round 38z151: an import of a package this machine lacks, a default that takes 16 GiB, a class body computing
    ("from google.colab import output\ndef choose(m):\n    return 1\n", {"choose"}, ((3, "choose"),)),
    ("def f(x, _w=torch.empty(1 << 34, device=DEV)):\n    return x\n", {"f"}, ((2, "f"),)),
    ("class M:\n    GRID = torch.arange(4) @ torch.eye(4)\n\n    def f(self):\n        return 1\n", {"M"},
     ((5, "M"),)),
    ("import math\nimport torch\n\n\nclass M:\n    SIZE = 4\n\n    def f(self, n=SIZE):\n        return n\n", {"M"},
     ()),
    # round 38z157: an object an earlier cell made, changed after a warm-up on the GPU by its index
    ("warm = torch.zeros(1, device=0)\nPOOL.update(fast=True)\n", {"POOL"}, ((2, "POOL"),)),
    # round 38z183: an object made above in the same cell, changed by a loop whose allocation fails here (the
    # grader's memory limit) and not on the learner's machine: where it failed, the loop's changes did not happen
    ("STABLE = []\nfor size in (1, 10 * 2**30):\n    STABLE.append(len(bytearray(size)))\n", {"STABLE"},
     ((1, "STABLE"), (3, "STABLE"))),
    ("_CFG = {'end': -1}\nfor n in (1024, 8 * 2**30):\n    _pool = torch.empty(n, dtype=torch.uint8)\n"
     "    _CFG.update(end=0)\n", {"_CFG"}, ((1, "_CFG"), (4, "_CFG"))),
    # round 38z187: a cell that does not parse here (Python 3.12's f-string quotes), read as text for what it binds
    ("def causal_mask(n_q, n_k):\n    return None\nprint(f\"mask {\"x\".join('ab')}\")\n", {"causal_mask"},
     ((1, "causal_mask"),)),
])
def test_a_cell_that_fails_here_names_what_it_binds_after_the_failing_line(source, read, late):
    """What the answer reads that a cell binds from its first line that may fail on, with the line each binding
    ends on (rounds 38z81, 38z151)."""
    assert late_bindings(source, read) == late


def test_the_failing_line_is_the_cells_own_frame_in_ipythons_traceback():
    """(Round 38z151) The line of the cell that raised: the first frame of IPython's traceback (colours and all), not
    the frame of a function another cell defined; none for a syntax error or a reply without a traceback."""
    from pagedlab.grading.run import _failing_line

    traceback = ["\x1b[31mValueError\x1b[39m  Traceback (most recent call last)",
                 "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[2]\x1b[39m\x1b[32m, line 3\x1b[39m\n----> 3 g()\n",
                 "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[1]\x1b[39m\x1b[32m, line 2\x1b[39m, in g()\n",
                 "\x1b[31mValueError\x1b[39m: x"]
    assert _failing_line({"ename": "ValueError", "traceback": traceback}) == 3
    assert _failing_line({"ename": "SyntaxError", "traceback": traceback}) == 0
    assert _failing_line({"ename": "RuntimeError"}) == 0


def test_exceptions_match_by_class_and_numbers_by_value():
    c = _cases()
    value_error = _load(_outcomes({"raised": ["ValueError", "Exception", "BaseException", "object"]}), c)[0]
    subclass = _load(_outcomes({"raised": ["__main__.NotAllocated", "ValueError", "Exception"]}), c)[0]
    other = _load(_outcomes({"raised": ["__main__.ValueError", "Exception"]}), c)[0]
    assert compare(value_error, subclass, c, 0, 0) is None, "a subclass of ValueError passes for ValueError"
    problem = compare(value_error, other, c, 0, 0)
    assert problem and "should raise ValueError, raised __main__.ValueError" in problem, "a learner's own class of that name fails"
    assert compare(subclass, value_error, c, 0, 0), "a plain ValueError is not the solution's own subclass"


@pytest.mark.parametrize("dtype, ulp", [("float16", 2.0**-10), ("bfloat16", 2.0**-7)])
def test_a_half_precision_result_may_differ_by_one_rounding_and_no_more(dtype, ulp):
    """Two correct float32 computations rounded once to float16 or bfloat16 can land one unit in the last place
    apart; two units, or a float32 result one half-precision unit off, fail."""
    c = _cases()
    def tensor(kind, *data):
        return _load(_outcomes({"value": {"tensor": kind, "shape": [len(data)], "data": list(data)}}), c)[0]
    want = tensor(dtype, 1.5, -3.0, 0.0)
    assert compare(want, tensor(dtype, 1.5 + ulp, -3.0 - 2 * ulp, 0.0), c, 1e-5, 1e-4) is None
    assert compare(want, tensor(dtype, 1.5 + 2 * ulp, -3.0, 0.0), c, 1e-5, 1e-4), "two units in the last place"
    assert compare(want, tensor(dtype, 1.5, -3.0, float("nan")), c, 1e-5, 1e-4), "NaN"
    assert compare(tensor("float32", 1.5), tensor("float32", 1.5 + ulp), c, 1e-5, 1e-4), "float32 keeps its tolerance"


def test_cells_of_every_kind_count_toward_the_limit(solved):
    raw = json.loads(nbformat.writes(solved))
    raw["cells"] += [{"cell_type": "markdown", "metadata": {}, "source": "x", "id": f"m{i}"} for i in range(500)]
    with pytest.raises(SubmissionError, match="too many cells"):
        read_submission(json.dumps(raw).encode(), max_cells=400)


def test_learner_cells_above_the_setup_run_after_it(pristine, solved):
    planted = nbformat.from_dict(solved)
    planted.cells.insert(0, nbformat.v4.new_code_cell("import sys\nsys.modules['pagedlab.checks'] = None"))
    nb, cells, _ = restore(read_submission(_submit(planted))[0], pristine)
    leading = [c.role for c in cells][:2]
    assert leading == ["setup", "setup"], [c.role for c in cells]
    _, cells, _ = restore(read_submission(_submit(planted))[0], pristine, checks=False)
    assert "check" not in {c.role for c in cells}


def test_names_that_mix_scripts_are_flagged():
    assert mixed_script("b\u043eb") and not mixed_script("bob") and not mixed_script("Zoë") and not mixed_script("李")


def test_no_sandbox_no_grading_unless_unsafe(tmp_path):
    (tmp_path / "class" / "alice").mkdir(parents=True)
    with pytest.raises(SandboxMissing, match="--unsafe"):
        grade_class(tmp_path / "class", ROOT / "exercises", sandbox=False, log=lambda line: None)


def test_two_shards_merged_equal_one_run(tmp_path):
    """Sharding and merging on learners that need no kernel (missing, refused and unexpected files)."""
    folder = tmp_path / "class"
    for name in ("ann", "bo", "cy", "dee", "ed"):
        (folder / name).mkdir(parents=True)
        (folder / name / "notes.txt").write_text("x")
    (folder / "cy" / "ex00_warmup.ipynb").symlink_to(folder / "ann" / "notes.txt")
    quiet = dict(sandbox=False, unsafe=True, log=lambda line: None)
    one = grade_class(folder, ROOT / "exercises", **quiet)
    write_tables(one, tmp_path / "one")
    for i in (1, 2):
        write_tables(grade_class(folder, ROOT / "exercises", shard=(i, 2), **quiet), tmp_path / f"shard{i}")
    merge([tmp_path / "shard1", tmp_path / "shard2"], tmp_path / "merged")
    assert (tmp_path / "merged" / "grades.csv").read_bytes() == (tmp_path / "one" / "grades.csv").read_bytes()
    shard1 = {r["student"] for r in csv.DictReader((tmp_path / "shard1" / "grades.csv").open())}
    assert shard1 == {"ann", "cy", "ed"}
    with pytest.raises(ValueError, match="more than one shard"):
        merge([tmp_path / "shard1", tmp_path / "shard1"], tmp_path / "twice")


def test_reports_escape_names_and_messages(tmp_path):
    name = "eve|x\n<script>alert(1)</script>"
    results = [Result(name, "ex00_warmup", FAIL, "check cell 'c': AssertionError: a | b\nsecond line"),
               Result("=HYPERLINK(1)", "ex00_warmup", PASS), Result("bob", "ex00_warmup", REVIEW, "uses get_ipython"),
               Result("bob", "notes.txt", UNEXPECTED), Result(" =1+2+HYPERLINK(2)", "ex00_warmup", PASS)]
    csv_path, md_path = write_tables(results, tmp_path)
    rows = list(csv.DictReader(csv_path.read_text(encoding="utf-8").splitlines(keepends=True)))
    by_student = {r["student"]: r for r in rows}
    assert name in by_student and "'=HYPERLINK(1)" in by_student and "' =1+2+HYPERLINK(2)" in by_student
    assert rows[-1]["result"] == "not graded: unexpected file"
    text = md_path.read_text(encoding="utf-8")
    assert "<script>" not in text and "&lt;script&gt;" in text
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 4, "one row per learner, whatever their name"
    assert all(line.replace("\\|", "").count("|") == 4 for line in table)
    assert "a \\| b\\\\nsecond line" in text and "## Needs review" in text and "notes.txt" in text
    assert md("a_b*c`d[e]") == "a\\_b\\*c\\`d\\[e\\]"


def test_collect_skips_dot_folders_refuses_links_lists_unexpected_files(tmp_path):
    subs = tmp_path / "class"
    for path in ("alice/ex00_warmup.ipynb", "alice/ex00_warmup (1).ipynb", "alice/old/ex00_warmup.ipynb",
                 "alice/.ipynb_checkpoints/ex00_warmup-checkpoint.ipynb", ".ipynb_checkpoints/x.ipynb",
                 "__MACOSX/alice/ex00_warmup.ipynb", "bob/notes.txt"):
        (subs / path).parent.mkdir(parents=True, exist_ok=True)
        (subs / path).write_text("{}")
    (subs / "bob" / "ex00_warmup.ipynb").symlink_to(subs / "alice" / "ex00_warmup.ipynb")
    (subs / "carol").symlink_to(subs / "alice")
    (subs / "README.txt").write_text("loose file")
    learners, skipped = collect(subs, {"ex00_warmup.ipynb"}, max_bytes=100)
    by = {x.name: x for x in learners}
    assert sorted(by) == ["alice", "bob", "carol"]
    assert skipped == [".ipynb_checkpoints", "README.txt", "__MACOSX"]
    assert by["alice"].files == {"ex00_warmup.ipynb": b"{}"}
    assert by["alice"].unexpected == ["ex00_warmup (1).ipynb", "old/ex00_warmup.ipynb"]
    assert "symbolic link" in by["bob"].refused["ex00_warmup.ipynb"] and by["bob"].unexpected == ["notes.txt"]
    assert "symbolic link" in by["carol"].refused["ex00_warmup.ipynb"] and not by["carol"].files
    (subs / "alice" / "ex00_warmup.ipynb").write_text("x" * 101)
    assert "larger than" in collect(subs, {"ex00_warmup.ipynb"}, max_bytes=100)[0][0].refused["ex00_warmup.ipynb"]


def test_grade_rejects_a_missing_folder(tmp_path):
    with pytest.raises(ValueError, match="submissions"):
        grade_class(tmp_path / "nope", ROOT / "exercises")


@pytest.fixture(scope="module")
def sandbox():
    box = Sandbox([ROOT / "exercises", ROOT / "solutions"], use_bwrap=False)
    box.add_copy("t", ["from pagedlab.kernels import flash_attention"], set())
    yield box
    box.close()


def test_the_kernel_environment_is_built_from_nothing(sandbox, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET", "x")
    folder = sandbox.new_folder("t")
    env = sandbox.environment(folder, "t")
    assert "GRADER_SECRET" not in env and "PWD" not in env
    for key in ("HOME", "IPYTHONDIR", "MPLCONFIGDIR", "TMPDIR", "JUPYTER_RUNTIME_DIR"):
        assert Path(env[key]).parent == folder, key
    site = sandbox.sites["t"]
    assert env["PYTHONPATH"] == str(site) and (site / "pagedlab" / "kernels").is_dir()
    assert sorted(p.name for p in folder.iterdir()) == ["conn", "home", "ipython", "jupyter", "mpl", "tmp", "work"]


def test_the_sandbox_mounts_nothing_of_the_repository_but_the_environment(sandbox):
    box = Sandbox.__new__(Sandbox)
    box.__dict__.update(sandbox.__dict__, bwrap="bwrap")
    cmd = box.kernel_command(sandbox.root / "nb", ["python"], "t")
    mounted = [Path(cmd[i + 2]) for i, a in enumerate(cmd) if a in ("--ro-bind", "--bind", "--ro-bind-try")]
    for protected in (ROOT, ROOT / "solutions", ROOT / "exercises", sandbox.root):
        assert protected not in mounted and not any(m in protected.parents for m in mounted), protected
    assert "--unshare-all" in cmd and cmd[cmd.index("--bind") + 1] == str(sandbox.root / "nb")


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_a_sandboxed_process_sees_only_its_folder():
    host = None
    box = Sandbox([ROOT / "exercises", ROOT / "solutions"], use_bwrap=True)
    try:
        if box.bwrap is None:
            pytest.skip(box.note)
        box.add_copy("t", ["import pagedlab"], set())
        folder = box.new_folder("t")
        host = socket.create_server(("127.0.0.1", 0))  # a service on the grader's machine
        code = ("import os, sys, pathlib, socket, pagedlab; "
                f"assert socket.socket().connect_ex(('127.0.0.1', {host.getsockname()[1]})) != 0, 'network reachable'; "
                f"assert not os.path.exists({str(ROOT / 'solutions')!r}), 'solutions visible'; "
                f"assert not os.path.exists({str(ROOT / 'exercises')!r}), 'exercises visible'; "
                f"assert not os.path.exists({str(box.root / 'site' / '..' / 'other')!r}); "
                "assert pathlib.Path(pagedlab.__file__).is_relative_to(os.environ['PYTHONPATH']); "
                "assert len([p for p in os.listdir('/proc') if p.isdigit()]) <= 3, 'not in its own PID namespace'; "
                "open(os.path.join(os.environ['HOME'], 'ok'), 'w').write('1')")
        assert bwrap_problem(box.kernel_command(folder, [sys.executable, "-s", "-c", code], "t"),
                             box.environment(folder, "t")) is None
        assert (folder / "home" / "ok").read_text() == "1"
        for target in (ROOT / "pagedlab" / "planted.py", box.sites["t"] / "planted.py"):
            write = f"open({str(target)!r}, 'w').write('x')"
            assert bwrap_problem(box.kernel_command(folder, [sys.executable, "-c", write], "t"),
                                 box.environment(folder, "t"))
            assert not target.exists()
    finally:
        if host is not None:
            host.close()
        box.close()


def test_limits_are_inherited_by_the_kernels_launcher():
    code = ("import resource; from pagedlab.grading.procs import Limits, apply_limits; "
            "apply_limits(Limits(wall_s=10, memory_bytes=1 << 30, written_file_bytes=1 << 20)); "
            "assert resource.getrlimit(resource.RLIMIT_CPU)[1] <= 10 * __import__('os').cpu_count(); "
            "big = None\ntry:\n    big = bytearray(2 << 30)\nexcept MemoryError:\n    print('refused')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "refused", out.stderr[-500:]


def test_the_grader_checks_its_own_sources_before_grading(tmp_path):
    from pagedlab.grading import integrity
    from pagedlab.grading.manifest import SHA256

    assert integrity.sources() == SHA256, ("the grader changed: run `python -m pagedlab.grading.integrity --write` "
                                           "and commit pagedlab/grading/manifest.py")
    package = tmp_path / "package"
    shutil.copytree(ROOT / "pagedlab", package / "pagedlab", ignore=shutil.ignore_patterns("__pycache__"))
    with open(package / "pagedlab" / "grading" / "run.py", "a") as f:
        f.write("\n# appended by a learner's cell graded with --unsafe\n")
    proc = subprocess.run([sys.executable, "-m", "pagedlab.grading", str(tmp_path / "class")], cwd=package,
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(package)})
    assert proc.returncode == 2 and "pagedlab/grading/run.py was changed" in proc.stderr, proc.stderr


def test_a_kernel_that_died_during_the_graded_calls_is_named_not_a_timeout():
    """A dead kernel never replies; the run notices it (``run._reply``) and says so, where it once waited out the
    notebook's time and the verdict read "the driver cell's reply: timeout"."""
    limits = Limits(wall_s=60)
    c = _cases()
    expected = Expected(c, _load(_outcomes({"value": 7}), c)[0])
    cells = [Cell(0, "setup", "setup", sha256("import torch")), Cell(1, "work", "work", None)]
    ran = {"0": {"status": "ok", "sha256": sha256("import torch"), "ename": "", "evalue": ""},
           "1": {"status": "ok", "sha256": sha256("w"), "ename": "", "evalue": ""}}
    died = {"ended": "complete", "cells": ran, "probe": [], "graded": {"status": "dead kernel", "text": None}}
    verdict, message = judge_graded(cells, died, [], limits, expected, SPECS["ex00_warmup"], TOKEN)
    assert verdict == FAIL and message.startswith("the kernel died during the graded calls"), message


def test_a_result_whose_slices_are_moved_names_them():
    """Attention's output (batch, head, n, d) right in head 0 of each batch and wrong in the others, one of them the
    expected head 0: the message names the slices, the pattern (an index times the wrong stride) and the match."""
    import numpy as np

    from pagedlab.grading.calls import _value_differs

    want = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
    got = want.copy()
    got[0, 1] = want[0, 0]
    got[0, 2] += 100
    got[1, 1:] += 50
    message = _value_differs(("tensor", "float32", want), ("tensor", "float32", got), 1e-5, 1e-5)
    assert ("the slices [i, j] of the first two dimensions (batch, head) that differ: [(0, 1), (0, 2), (1, 1), (1, 2)]"
            in message and "exactly those whose j is not 0" in message
            and "result[0, 1] equals the expected result[0, 0]" in message), message
    assert _value_differs(("tensor", "float32", want), ("tensor", "float32", want), 1e-5, 1e-5) is None


def test_a_reply_awaited_from_a_dead_kernel_raises_at_once():
    """``run._reply`` polls: a kernel that died (a crash in a graded call) raises DeadKernelError, not a wait until
    the notebook's time runs out."""
    import asyncio
    import queue

    from nbclient.exceptions import DeadKernelError

    from pagedlab.grading import run

    class Channel:
        async def get_shell_msg(self, timeout=None):
            raise queue.Empty

    class Manager:
        async def is_alive(self):
            return False

    class Client:
        kc, km = Channel(), Manager()

    with pytest.raises(DeadKernelError):
        asyncio.run(asyncio.wait_for(run._reply(Client(), "id"), timeout=10))


@pytest.mark.parametrize("typo, flagged", [("", False), ("        self.__dict__.clear()\n", True)],
                         ids=["a typo in a class cell", "a typo beside a reach into an object's internals"])
def test_a_work_cell_that_does_not_parse_is_read_for_what_it_reaches_not_its_special_methods(typo, flagged):
    """(Round 38z129) A typo in ex07 stretch's work cell, whose handed-out class defines ``__init__``: the cell cannot
    run, the answer is not defined and the graded calls fail. What it mentions is still read (it may run where
    another Python parses it), but a special method a parsed cell may define is no reason to send it to review.
    (The second's line unindents to no block's level: IPython's reading of the cell raised there, and the notebook
    got the grader's error verdict.)"""
    name = "ex07_stretch_prefix_cache_match.ipynb"
    p = pristines()[name]
    nb = nbformat.read(ROOT / "solutions" / name, as_version=4)
    cell = next(c for c in nb.cells if c.get("id") == "cache-work")
    cell.source = cell.source.replace("            if block is None:\n",
                                      f"            if block is None   # a typo: the colon in a comment\n{typo}")
    reasons = [r for r in prepare(_submit(nb), p, Limits())[2] if "cache-work' mentions" in r]
    assert bool(reasons) == flagged, reasons


def test_a_modules_word_on_its_build_is_a_question_and_a_name_holding_the_word_is_not():
    """(Round 38z146) What a module says of the library it was built with is a fact of the machine's image; a name
    that only holds the word (``conversion``, a ``build`` function) is the module's computing."""
    from pagedlab.grading.machine import _machine_path

    for path in ("zlib.ZLIB_RUNTIME_VERSION", "sqlite3.sqlite_version_info", "hashlib.algorithms_available"):
        assert _machine_path(path), path
    for path in ("math.conversion", "json.build", "zlib.crc32"):
        assert not _machine_path(path), path
