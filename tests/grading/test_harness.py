"""The grading kernel's driver, run in this process after the learner's code: tripwires see reference code by any
path, the driver serializes with its own encoder, numbers come back by value, and a Triton exercise's result counts
only when the notebook's own kernel wrote it."""

import contextlib
import json
import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

# Before anything imports Triton: pagedlab.device sets TRITON_INTERPRET, which Triton reads once, when
# triton.language is first imported. torch.compile (a case below) imports it too; imported first, tl.zeros and the
# rest of Triton's library would stay compiled-only in this process, and a later test's interpreted kernel (the
# solutions in test_ground_truth.py, on the same worker) would fail to call them.
import pagedlab.device  # noqa: F401  isort: skip
from pagedlab.grading import harness
from pagedlab.grading.calls import compare, job_text, load_outcomes
from pagedlab.grading.specs import SPECS, Cases

SOFTMAX = """
import torch
def softmax_rows(x):
    return {}
"""
# Each computes softmax by a path no list of names holds (one round of attacks, one line each).
PATHS = {
    "a module": "torch.nn.Softmax(dim=-1)(x)",
    "a distribution": "torch.distributions.Categorical(logits=x).probs",
    "rot13 of a method name": "__import__('operator').methodcaller(__import__('codecs').decode('fbsgznk', 'rot13'), "
                              "-1)(x)",
    "an aten op": "torch.ops.aten._softmax(x, -1, False)",
    "pydoc": "__import__('pydoc').locate('torch.nn.functional.softmax')(x, -1)",
    "pkgutil": "__import__('pkgutil').resolve_name('torch.nn.functional:softmax')(x, -1)",
    "torch.compile": "torch.compile(lambda t: torch.softmax(t, -1))(x)",  # Dynamo compiles nothing under the mode
    "an interpreter": "(lambda ns: (__import__('code').InteractiveInterpreter(ns).runsource("
                      "'y = torch.softmax(x, -1)'), ns['y'])[1])({'torch': torch, 'x': x})",
    # an op of the family that no list names (aten _sparse_softmax)
    "a sparse tensor": "torch.sparse.softmax(x.to_sparse(), -1).to_dense()",
}
PARAMETER = """
import torch
class Lazy(torch.nn.Parameter):
    def detach(self):
        return torch.softmax(self.data, -1)
def softmax_rows(x):
    return Lazy(x)
"""


@pytest.fixture(autouse=True)
def _no_compiled_leftovers():
    """torch.compile (a path above) leaves in ``sys.modules`` the modules its compiler wrote, in a cache that is new
    on a new machine: every later drive in this process would count them as code the notebook wrote (a grading
    kernel runs one notebook; this process drives many)."""
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("torch._inductor.runtime.compile_tasks."):
            del sys.modules[name]


def _run(exercise, cases, source, namespace=None, tmp_path=None):
    job = job_text(cases, SPECS[exercise], "token")  # (the grader's process writes it, where no learner code runs)
    ns = namespace if namespace is not None else {"__name__": "__main__"}
    exec(source, ns)
    out = tmp_path / "out.json"
    out.unlink(missing_ok=True)
    harness.drive(job, ns, str(out))
    outcomes, tripped, refused = load_outcomes(out.read_text(), cases, "token")
    return outcomes, tripped + refused


def _one_call(expression):
    c = Cases(0)
    c.call("softmax_rows", expression.replace("X", c.array(2, 5)))
    return c


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated")  # torch._dynamo's import, torch.compile
def test_a_tripwire_sees_softmax_by_any_path(path, tmp_path, proofs):
    if path == "torch.compile" and not proofs:  # (importing its compiler takes 35 s of the quick run's 10 minutes)
        pytest.skip("torch.compile's path runs under --proofs (make test PROOFS=1)")
    outcomes, tripped = _run("ex00_warmup", _one_call("softmax_rows(X)"), SOFTMAX.format(PATHS[path]),
                             tmp_path=tmp_path)
    assert outcomes[0][0][0] == "value", outcomes
    assert tripped and all(t.startswith("graded call 1 (softmax_rows) called") for t in tripped), tripped


def test_a_graded_call_leaves_torch_dynamo_unimported(tmp_path):
    """torch wraps a dispatch mode's ``__torch_dispatch__`` in a guard whose first call imports torch._dynamo (about
    2 s of CPU in every grading kernel); the tripwire mode opts out of it. Checked in a fresh process."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import test_harness as t, pathlib; "
            f"t._run('ex00_warmup', t._one_call('softmax_rows(X)'), t.SOFTMAX.format('x.exp() / x.exp().sum(-1, "
            f"keepdim=True)'), tmp_path=pathlib.Path({str(tmp_path)!r})); print(sorted(m for m in sys.modules "
            f"if m.startswith('torch._dynamo')))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[]", f"a graded call imported {run.stdout.strip()}"


def test_a_parameter_subclass_computing_the_answer_in_detach_is_seen(tmp_path):
    _, tripped = _run("ex00_warmup", _one_call("softmax_rows(X)"), PARAMETER, tmp_path=tmp_path)
    assert any("Lazy" in t for t in tripped) and any("softmax" in t for t in tripped), tripped


def test_honest_code_and_code_outside_graded_calls_set_off_nothing(tmp_path):
    source = SOFTMAX.format("(x - x.amax(-1, keepdim=True)).exp() / (x - x.amax(-1, keepdim=True)).exp().sum(-1, "
                            "keepdim=True)") + "\nwarm = torch.softmax(torch.zeros(3), -1)  # a learner's own check\n"
    _, tripped = _run("ex00_warmup", _one_call("softmax_rows(X)"), source, tmp_path=tmp_path)
    assert tripped == []


def test_reference_classes_and_functions_are_wired_in_every_module_that_holds_them(tmp_path):
    c = Cases(0)
    c.add("allocator", [("do", "a = SimpleAllocator(4)"), ("get", "a.allocate()")])
    source = ("import pickle\nfrom pagedlab.paged.allocator import BlockAllocator\n"
              "blob = pickle.dumps(BlockAllocator(4))\n"
              "def SimpleAllocator(n):\n    return pickle.loads(blob)\n")
    _, tripped = _run("ex06_block_allocator", c, source, tmp_path=tmp_path)
    assert any("BlockAllocator.allocate" in t for t in tripped), tripped
    c = Cases(0)
    c.call("kv_cache_bytes", "kv_cache_bytes(2, 2, 4, 8, 1, 2)")
    source = "import pkgutil\nkv_cache_bytes = pkgutil.resolve_name('pagedlab.memory:kv_cache_bytes')\n"
    _, tripped = _run("ex05_kv_cache_size", c, source, tmp_path=tmp_path)
    # (wrapped where a module holds it; here the namespace is no module, and the profile hook sees its file's code)
    assert any("kv_cache_bytes" in t for t in tripped), tripped


def test_the_driver_serializes_with_its_own_encoder(tmp_path):
    """A learner's ``json.dump``/``json.dumps`` changes nothing the driver writes."""
    c = _one_call("softmax_rows(X)")
    source = ("import json, torch\n"
              "def _dump(obj, f, **k):\n    f.write('[[{\"value\": 1}]]')\n"
              "json.dump = _dump\njson.dumps = lambda *a, **k: '[]'\ntorch.Tensor.tolist = lambda self: [0.5]\n"
              "def softmax_rows(x):\n    raise NotImplementedError\n")
    import torch
    real = (json.dump, json.dumps, torch.Tensor.tolist)
    try:
        outcomes, _ = _run("ex00_warmup", c, source, tmp_path=tmp_path)
    finally:
        json.dump, json.dumps, torch.Tensor.tolist = real
    assert outcomes[0][0] == ("raised", ("NotImplementedError", "RuntimeError", "Exception", "BaseException",
                                         "object"))


def test_numpy_numbers_come_back_as_numbers_and_constants_come_from_the_spec(tmp_path):
    c = Cases(0)
    c.call("kv_bytes_per_token", "kv_bytes_per_token(LLAMA_7B, torch.float16)")
    source = ("import numpy as np, torch\nfrom pagedlab.memory import ModelShape\n"
              "LLAMA_7B = ModelShape('mine', 1, 1, 1, 1, 1, 'mine')  # a learner's own try: the spec's constant is used\n"
              "def kv_bytes_per_token(model, dtype):\n"
              "    return np.prod([2, model.num_layers, model.num_kv_heads, model.head_dim, dtype.itemsize])\n")
    outcomes, tripped = _run("ex05_kv_cache_size", c, source, tmp_path=tmp_path)
    assert outcomes[0][0] == ("value", 2 * 32 * 32 * 128 * 2) and tripped == []


def test_an_aten_operator_called_directly_is_seen(tmp_path):
    """A composite op (its aten decomposition hides it from a dispatch mode) is wired where Python calls it."""
    c = Cases(0)
    q, k, v = c.array(1, 2, 5, 8), c.array(1, 2, 7, 8), c.array(1, 2, 7, 8)
    c.call("naive_attention", f"naive_attention({q}, {k}, {v})")
    source = ("import torch\ndef naive_attention(q, k, v, causal=False):\n"
              "    return torch.ops.aten._scaled_dot_product_attention_math.default(q, k, v)[0]\n")
    outcomes, tripped = _run("ex01_naive_attention", c, source, tmp_path=tmp_path)
    assert outcomes[0][0][0] == "value" and any("_scaled_dot_product_attention_math" in t for t in tripped), tripped


def test_attention_from_multi_head_attentions_weights_is_seen(tmp_path):
    """F.multi_head_attention_forward asked for its weights computes attention from bmm and softmax (which ex01
    allows): no attention op runs, so its entry point is wired."""
    c = Cases(0)
    q, k, v = c.array(5, 8), c.array(7, 8), c.array(7, 8)
    c.call("naive_attention", f"naive_attention({q}, {k}, {v})")
    eye = "torch.eye(q.shape[-1])"
    source = ("import torch\ndef naive_attention(q, k, v, causal=False):\n"
              "    return torch.nn.functional.multi_head_attention_forward(q[:, None] * q.shape[-1] ** 0.5, k[:, None], "
              f"v[:, None], q.shape[-1], 1, None, None, None, None, False, 0.0, {eye}, None, training=False, "
              f"use_separate_proj_weight=True, q_proj_weight={eye}, k_proj_weight={eye}, v_proj_weight={eye})[0][:, 0]\n")
    outcomes, tripped = _run("ex01_naive_attention", c, source, tmp_path=tmp_path)
    assert outcomes[0][0][0] == "value" and any("multi_head_attention_forward" in t for t in tripped), tripped


TRITON_ADD = """
import pagedlab.device
import numpy as np
import torch, triton, triton.language as tl
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
@triton.jit
def nothing_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
@triton.jit
def copy_kernel(x_ptr, y_ptr, answer_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    inputs = tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask)  # read, to look honest
    tl.store(out_ptr + offsets, tl.load(answer_ptr + offsets, mask=mask) + 0 * inputs, mask=mask)
@triton.jit
def accumulate_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    total = tl.load(out_ptr + offsets, mask=mask) + tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, total + tl.load(y_ptr + offsets, mask=mask), mask=mask)
@triton.jit
def two_pass_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)
    tl.store(out_ptr + offsets, tl.load(out_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
_job = []
def _fill():  # plain Python, called from inside a kernel: the interpreter runs it, a GPU compiles no such call
    _job[0].copy_(_answer(_job[1], _job[2]))
    return 0
@triton.jit
def callback_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    seen = tl.load(x_ptr + offsets, mask=offsets < n) + tl.load(y_ptr + offsets, mask=offsets < n)
    _fill()
@triton.jit
def far_store_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    far = offsets + (1 << 22)  # a pointer moved too far (a wrong batch or head offset): the store is stopped first
    tl.store(out_ptr + far, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)
@triton.jit
def masked_spy_kernel(x_ptr, y_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + shift + offsets, mask=mask)  # masked, at a wrong offset: a pointer, not a mask, is wrong
    tl.store(out_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)
@triton.jit
def spy_kernel(x_ptr, y_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    elsewhere = tl.load(x_ptr + shift + tl.arange(0, 16))  # memory of a tensor the kernel was not given
    x = tl.load(x_ptr + offsets, mask=mask) + 0 * tl.sum(elsewhere, 0)
    tl.store(out_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)
@triton.jit
def bits_kernel(x_ptr, y_ptr, bits_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    inputs = tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask)  # read, to look honest
    tl.store(out_ptr + offsets, tl.load(bits_ptr + offsets, mask=mask).to(tl.float32, bitcast=True) + 0 * inputs,
             mask=mask)
@triton.jit
def indexed_kernel(x_ptr, y_ptr, index_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    at = tl.load(index_ptr + offsets, mask=mask, other=0)  # integers made from an input: an index, not an answer
    tl.store(out_ptr + offsets, tl.load(x_ptr + at, mask=mask) + tl.load(y_ptr + at, mask=mask), mask=mask)
@triton.jit
def poke_kernel(t_ptr):
    tl.store(t_ptr, tl.load(t_ptr))  # one element stored: the rest of the tensor is not the kernel's work
@triton.jit
def scalar_kernel(out_ptr, i, value):
    tl.store(out_ptr + i, value)
def _print_answer(*args):  # bound to the name print: the kernel's print() is the notebook's Python
    _job[0].copy_(_answer(_job[1], _job[2]))
@triton.jit
def print_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    seen = tl.load(x_ptr + offsets, mask=offsets < n) + tl.load(y_ptr + offsets, mask=offsets < n)
    print("tile", seen)
_np_exp = np.exp
def _exp(a, *args, **kwargs):  # NumPy's exp replaced by the notebook's: the interpreter calls it inside the kernel
    _job[0].copy_(_answer(_job[1], _job[2]))
    return _np_exp(a, *args, **kwargs)
@triton.jit
def exp_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    seen = tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.load(out_ptr + offsets, mask=mask) * tl.exp(seen * 0.0), mask=mask)
class _Box:  # an object whose method a kernel calls: the interpreter runs it as Python
    def fill(self):
        _job[0].copy_(_answer(_job[1], _job[2]))
        return 0
_box = _Box()
@triton.jit
def method_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    _box.fill()
VALUE = 0.0  # a global a kernel reads: set by the host before each launch, it would carry an answer
@triton.jit
def global_kernel(out_ptr, i):
    tl.store(out_ptr + i, VALUE)
@triton.jit
def argument_kernel(out_ptr, i, VALUE: tl.constexpr):
    tl.store(out_ptr + i, VALUE)
@triton.jit
def hook_kernel(x_ptr, y_ptr, out_ptr, n, HOOK: tl.constexpr):  # Python handed in as an argument
    HOOK()
@triton.jit
def _inner():
    _fill()
@triton.jit
def nested_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # Python called from a jit function it calls
    _inner()
@triton.jit
def _elsewhere():
    _fill()
_elsewhere.fn.__module__ = "helpers"  # as if imported from a file the notebook wrote
@triton.jit
def elsewhere_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # Python called from another module's jit
    _elsewhere()
@triton.jit
def text_kernel(out_ptr, i, TEXT: tl.constexpr):  # a number handed over as a string
    tl.store(out_ptr + i, float(TEXT))
TILE = None  # a Triton tensor made in Python, holding data the kernel adds to what it stores
@triton.jit
def tile_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) * 0.0 + TILE, mask=offsets < n)
def _tile(values, block):
    from triton.runtime.interpreter import TensorHandle
    data = np.zeros(block, dtype=np.float32)
    data[:len(values)] = values
    return tl.tensor(TensorHandle(data, tl.float32), tl.block_type(tl.float32, [block]))
@triton.jit
def zeros_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, 0.0 * (tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask)),
             mask=mask)
class _Late(torch.Tensor):  # its methods, which Triton calls after the kernel's programs, write Python's answer
    job = None
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunctionSubclass():
            result = func(*args, **(kwargs or dict()))
            if func is torch.Tensor.untyped_storage and cls.job is not None:
                cls.job[0].copy_(_answer(cls.job[1], cls.job[2]))
        return result
def _answer(x, y):  # the answer computed in plain Python: no PyTorch op computes a value of it
    return torch.tensor([a + b for a, b in zip(x.tolist(), y.tolist())], dtype=x.dtype)
def vector_add(x, y, block=64):
    out = torch.empty_like(x)
{body}
    return out
"""
TRITON_BODIES = {
    "its own kernel": ("    add_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)", []),
    "its own kernel on a grid computed by a function (the launcher's, not a kernel argument)": (
        "    add_kernel[lambda meta: (triton.cdiv(x.numel(), meta['BLOCK']),)](x, y, out, x.numel(), BLOCK=64)", []),
    # PyTorch computing any value before a launch is refused there, whatever the kernel does; after the last
    # launch, a check of the result (the learner's own assertion) is free, and can reach the result in no way
    # the rules above and below let through
    "plain PyTorch": ("    out = x + y", ["not written by a @triton.jit kernel defined in the notebook: PyTorch "
                                           "computed floating-point values during the call (torch's aten::add.Tensor)"]),
    "its kernel, then a check of its result by PyTorch": (
        "    add_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)\n"
        "    assert torch.allclose(out - x, y, atol=1e-5) and not out.isnan().any()", []),
    "its kernel, then PyTorch's answer computed and copied by a second launch": (
        "    zeros_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)\n"
        "    copy_kernel[(triton.cdiv(x.numel(), 64),)](x, y, x + y, out, x.numel(), BLOCK=64)",
        ["PyTorch computed floating-point values during the call (torch's aten::add.Tensor), before the "
         "notebook's Triton kernel was launched"]),
    "its kernel, then PyTorch's answer added into the result": (
        "    zeros_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)\n    out += x + y",
        ["changed after the notebook's Triton kernel wrote it"]),
    "its kernel, then PyTorch's answer returned in its place": (
        "    zeros_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)\n    out = x + y",
        ["not written by a @triton.jit kernel defined in the notebook: PyTorch computed"]),
    "its kernel copying an answer PyTorch computed, the inputs read too": (
        "    copy_kernel[(triton.cdiv(x.numel(), 64),)](x, y, x + y, out, x.numel(), BLOCK=64)",
        ["PyTorch computed floating-point values during the call"]),
    "Python's answer written by a method of a tensor subclass after the kernel's programs": (
        "    late = out.as_subclass(_Late)  # (the same memory as out, which is returned)\n    _Late.job = [out, x, y]\n"
        "    zeros_kernel[(triton.cdiv(x.numel(), 64),)](x, y, late, x.numel(), BLOCK=64)\n    _Late.job = None",
        ["was given an argument of type _Late"]),
    "PyTorch's answer handed over one float scalar per launch": (
        "    for i, value in enumerate((x + y).tolist()):\n        scalar_kernel[(1,)](out, i, value)",
        ["PyTorch computed floating-point values during the call"]),
    # the same routes with an answer computed in plain Python: the rules behind that one
    "plain Python": ("    out = _answer(x, y)", ["not written by a @triton.jit kernel"]),
    "a kernel that writes nothing, Python's answer before it": (
        "    out.copy_(_answer(x, y))\n    nothing_kernel[(1,)](x, y, out, x.numel(), BLOCK=64)",
        ["not written by a @triton.jit kernel"]),
    "its kernel reading a tensor it was not given": (
        "    pad = torch.zeros(16)\n    shift = (pad.data_ptr() - x.data_ptr()) // 4\n"
        "    spy_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), shift, BLOCK=64)",
        ["outside every tensor its launch was given"]),
    "its kernel reading, through masked loads, a tensor it was not given": (
        "    pad = torch.zeros(4096)\n    shift = (pad.data_ptr() - x.data_ptr()) // 4 + 1024\n"
        "    masked_spy_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), shift, BLOCK=64)",
        ["outside every tensor its launch was given, through masked loads: their pointers lie past the tensor"]),
    "its kernel launched on a grid rounded down to no program": (
        "    add_kernel[(x.numel() // 128,)](x, y, out, x.numel(), BLOCK=128)",
        ["not written by a @triton.jit kernel defined in the notebook: the notebook's kernel was launched with it "
         "(its grid: (0,)) but stored none of its 70 elements"]),
    "its kernel storing far past the output": (
        "    far_store_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)",
        ["stored 64 element(s) outside every tensor its launch was given, stopped before they were written"]),
    "its kernel copying an answer computed outside it, the inputs read too": (
        "    copy_kernel[(triton.cdiv(x.numel(), 64),)](x, y, _answer(x, y), out, x.numel(), BLOCK=64)",
        ["read values computed outside it"]),
    "Python's answer in a tensor of which its kernel stored one element first, then copied": (
        "    staged = _answer(x, y)\n    poke_kernel[(1,)](staged)\n"
        "    copy_kernel[(triton.cdiv(x.numel(), 64),)](x, y, staged, out, x.numel(), BLOCK=64)",
        ["read values computed outside it"]),
    "Python's answer in the output, its kernel storing it back": (
        "    out.copy_(_answer(x, y))\n"
        "    copy_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, out, x.numel(), BLOCK=64)",
        ["read values computed outside it"]),
    "its kernel copying Python's answer handed over as integers": (
        "    bits = _answer(x, y).view(torch.int32)\n"
        "    bits_kernel[(triton.cdiv(x.numel(), 64),)](x, y, bits, out, x.numel(), BLOCK=64)",
        ["read values computed outside it"]),
    "Python's answer written into an input, its kernel copying the input, the input put back": (
        "    keep = x.clone()\n    x.copy_(_answer(x, y))\n    y.zero_()\n"
        "    add_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)\n"
        "    x.copy_(keep)", ["whose values were changed outside the kernel after the call passed it"]),
    "Python's answer handed over one float scalar per launch": (
        "    for i, value in enumerate(_answer(x, y).tolist()):\n        scalar_kernel[(1,)](out, i, value)",
        ["was given 9 different floating-point scalars or strings in one graded call"]),
    "PyTorch's answer computed in complex numbers, handed over one float scalar per launch": (
        "    for i, value in enumerate((x.to(torch.complex64) + y).real.tolist()):\n"
        "        scalar_kernel[(1,)](out, i, 0.0 * value)",
        ["PyTorch computed floating-point values during the call (torch's aten::add.Tensor)"]),
    "Python's answer handed over one global per launch": (
        "    global VALUE\n    for i, value in enumerate(_answer(x, y).tolist()):\n"
        "        VALUE = value\n        global_kernel[(1,)](out, i)",
        ["a global the notebook's Triton kernel reads (VALUE) changed between its launches"]),
    "Python's answer handed over one tl.constexpr per launch": (
        "    for i, value in enumerate(_answer(x, y).tolist()):\n"
        "        argument_kernel[(1,)](out, i, VALUE=tl.constexpr(value))",
        ["was given 9 different floating-point scalars or strings in one graded call"]),
    "its kernel calling Python handed to it as a constexpr argument": (
        "    _job[:] = [out, x, y]\n    hook_kernel[(1,)](x, y, out, x.numel(), HOOK=_fill)",
        ["calls Python from inside it (an argument function)"]),
    "its kernel calling a jit function that calls Python": (
        "    _job[:] = [out, x, y]\n    nested_kernel[(1,)](x, y, out, x.numel(), BLOCK=64)",
        ["calls Python from inside it (_inner: _fill)"]),
    "its kernel reading integers PyTorch computed (an index here; they could as well be an answer's bits)": (
        "    index = torch.arange(x.numel(), dtype=torch.int32)[x.new_ones(x.numel()).long().cumsum(0) - 1]\n"
        "    indexed_kernel[(triton.cdiv(x.numel(), 64),)](x, y, index, out, x.numel(), BLOCK=64)",
        ["read values computed outside it"]),
    "its kernel calling a jit function of another module that calls Python": (
        "    _job[:] = [out, x, y]\n    elsewhere_kernel[(1,)](x, y, out, x.numel(), BLOCK=64)",
        ["calls Python from inside it (_elsewhere: _fill)"]),
    "Python's answer handed over as strings, one per launch": (
        "    for i, value in enumerate(_answer(x, y).tolist()):\n        text_kernel[(1,)](out, i, TEXT=repr(value))",
        ["was given 9 different floating-point scalars or strings in one graded call"]),
    "Python's whole answer in one string, given to one launch": (
        "    text_kernel[(1,)](out, 0, TEXT=','.join(map(repr, _answer(x, y).tolist())))",
        ["was given a string of"]),
    "Python's answer handed over as a tuple of floats": (
        "    argument_kernel[(1,)](out, 0, VALUE=tl.constexpr(tuple(_answer(x, y).tolist())))",
        ["different floating-point scalars or strings in one graded call"]),
    "Python's answer in a Triton tensor made in Python, read as a global": (
        "    global TILE\n    TILE = _tile(_answer(x, y).tolist(), 128)\n"
        "    tile_kernel[(1,)](x, out, x.numel(), BLOCK=128)",
        ["calls Python from inside it (TILE, a tensor made in Python)"]),
    "Python's answer in the output, its kernel storing only a spare element past it": (
        "    spare = torch.zeros(x.numel() + 1)\n    out = spare[:x.numel()]\n    out.copy_(_answer(x, y))\n"
        "    poke_kernel[(1,)](spare[x.numel():])",
        ["its result holds values the notebook's Triton kernel never stored: 70 of its 70 elements"]),
    "its kernel adding into a zeroed output": (
        "    out.zero_()\n    accumulate_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)", []),
    "its kernel calling Python that writes the result": (
        "    _job[:] = [out, x, y]\n    callback_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)",
        ["calls Python from inside it (_fill)"]),
    "its kernel calling a function of the notebook's bound to the name print": (
        "    global print\n    print = _print_answer\n    _job[:] = [out, x, y]\n"
        "    print_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)",
        ["calls Python from inside it (print)"]),
    "its kernel's tl.exp run by NumPy's exp, replaced by a function of the notebook's that writes the result": (
        "    out.zero_()\n    _job[:] = [out, x, y]\n    np.exp = _exp\n    try:\n"
        "        exp_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)\n"
        "    finally:\n        np.exp = _np_exp",
        ["Python of the notebook's (_exp) ran inside its Triton kernel's programs"]),
    "its kernel calling a method of an object that writes the result": (
        "    _job[:] = [out, x, y]\n    method_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)",
        ["calls Python from inside it (_box.fill, an attribute of a _Box"]),
    "its kernel reading back what it stored": (
        "    out.fill_(1.5)\n    two_pass_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)", []),
    "its kernel adding into an output PyTorch filled with a constant (a running max's -inf)": (
        "    out.fill_(float('-inf'))\n"
        "    accumulate_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)", []),
    "Python's answer handed over as constant fills, one per launch": (
        "    for i, value in enumerate(_answer(x, y).tolist()):\n"
        "        copy_kernel[(1,)](x, y, torch.full_like(x, value), out, 1, BLOCK=64)",
        ["different floating-point constants in one graded call"]),
    "its kernel's output, returned as a copy": (
        "    kept = torch.empty_like(out)\n"
        "    add_kernel[(triton.cdiv(x.numel(), 64),)](x, y, kept, x.numel(), BLOCK=64)\n"
        "    out.copy_(kept.clone())", []),
    "Python's answer with one element stored by its kernel, returned as a copy": (
        "    staged = _answer(x, y)\n    poke_kernel[(1,)](staged)\n    out.copy_(staged)",
        ["not written by a @triton.jit kernel"]),
    "its kernel, then Python's answer over the result": (  # (NaN first: empty memory may already hold x + y)
        "    out.fill_(float('nan'))\n    add_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)\n"
        "    out.copy_(_answer(x, y))\n    out[0] = 1.0", ["changed after the notebook's Triton kernel wrote it"]),
}


@pytest.mark.parametrize("body", TRITON_BODIES)
def test_a_triton_result_counts_only_when_the_notebooks_kernel_wrote_it(body, tmp_path):
    c = Cases(0)
    c.call("vector_add", f"vector_add({c.array(70)}, {c.array(70)})")
    source, refusals = TRITON_BODIES[body]
    _, tripped = _run("ex03_triton_basics", c, TRITON_ADD.format(body=source), tmp_path=tmp_path)
    assert len(tripped) == len(refusals) and all(r in t for r, t in zip(refusals, tripped)), tripped


def test_a_result_partly_written_names_what_no_store_reached(tmp_path):
    """A grid that misses the last partial tile (70 elements, tiles of 64, 70 // 64 programs) writes part of the
    result. Into an output zeroed first, not a refusal (zeros may rightly stay where nothing is stored), but the
    grader's message, when the result differs, names the elements never written before how many differ; into an
    output holding anything else, the values there are not the kernel's: refused, naming them."""
    c = Cases(0)
    c.call("vector_add", f"vector_add({c.array(70)}, {c.array(70)})")
    body = "    out.zero_()\n    add_kernel[(x.numel() // 64,)](x, y, out, x.numel(), BLOCK=64)"
    outcomes, tripped = _run("ex03_triton_basics", c, TRITON_ADD.format(body=body), tmp_path=tmp_path)
    assert tripped == []
    right, _ = _run("ex03_triton_basics", c, TRITON_ADD.format(body=TRITON_BODIES["its own kernel"][0]),
                    tmp_path=tmp_path)
    message = compare(right, outcomes, c, 1e-5, 1e-5)
    assert message.startswith("graded call 1 (vector_add): vector_add(T(0), T(1)): the notebook's kernel never "
                              "wrote 6 of the 70 elements of its result, [64:70]: index 64 to 69 of dimension 0 (size 70):") \
        and "its grid may not cover them" in message and "6 of 70 entries differ" in message, message
    assert compare(right, right, c, 1e-5, 1e-5) is None
    _, tripped = _run("ex03_triton_basics", c, TRITON_ADD.format(body=body.replace("zero_()", "fill_(float('nan'))")),
                      tmp_path=tmp_path)
    assert len(tripped) == 1 and "holds values the notebook's Triton kernel never stored: 6 of its 70 elements, " \
        "[64:70]" in tripped[0], tripped


def test_a_result_written_again_over_the_same_values_counts(tmp_path):
    """An honest kernel whose output memory already holds the answer (a buffer kept from an equal call, or memory
    reused from an earlier, equal result) still wrote it: the interpreter's stores say so, where the bytes cannot."""
    c = Cases(0)
    x, y = c.array(70), c.array(70)
    c.call("vector_add", f"vector_add({x}, {y})")
    c.call("vector_add", f"vector_add({x}, {y})")
    body = ("    out = _kept.setdefault(x.shape, out)\n"
            "    add_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)")
    outcomes, tripped = _run("ex03_triton_basics", c, "_kept = {}\n" + TRITON_ADD.format(body=body),
                             tmp_path=tmp_path)
    assert tripped == [] and repr(outcomes[0]) == repr(outcomes[1]), tripped


def test_without_the_provenance_rule_a_copied_answer_would_count(tmp_path, monkeypatch):
    """The rule, broken on purpose: with no look at where a kernel's floating-point reads come from, a kernel that
    copies an answer computed in Python while reading the inputs passes."""
    monkeypatch.setattr(harness.Launches, "_provenance", lambda self, *a: None)
    c = Cases(0)
    c.call("vector_add", f"vector_add({c.array(70)}, {c.array(70)})")
    body = TRITON_BODIES["its kernel copying an answer computed outside it, the inputs read too"][0]
    _, tripped = _run("ex03_triton_basics", c, TRITON_ADD.format(body=body), tmp_path=tmp_path)
    assert tripped == []


def test_without_the_rule_on_pytorch_in_a_triton_call_only_the_interpreters_rules_stand(tmp_path, monkeypatch):
    """The rule, broken on purpose: with PyTorch's add free during a Triton exercise's call, ``x + y`` is refused
    only because no kernel wrote it, its message no longer saying that PyTorch computed it, and PyTorch's answer
    copied by a second launch only because the kernel read values from outside it (a rule of the interpreter's, which
    sees every load: a compiled launch does not)."""
    monkeypatch.setattr(harness, "LAUNCHER_OPS", harness.LAUNCHER_OPS | {"add"})
    c = Cases(0)
    c.call("vector_add", f"vector_add({c.array(70)}, {c.array(70)})")
    for body, refusal in (("plain PyTorch", "not written by a @triton.jit kernel defined in the notebook (this"),
                          ("its kernel, then PyTorch's answer computed and copied by a second launch",
                           "read values computed outside it")):
        _, tripped = _run("ex03_triton_basics", c, TRITON_ADD.format(body=TRITON_BODIES[body][0]), tmp_path=tmp_path)
        assert len(tripped) == 1 and refusal in tripped[0] and "PyTorch computed" not in tripped[0], tripped


def test_without_the_triton_rule_plain_pytorch_would_count(tmp_path, monkeypatch):
    """The rule, broken on purpose: a spec without ``triton`` lets ``x + y`` through."""
    import dataclasses

    monkeypatch.setitem(SPECS, "ex03_triton_basics", dataclasses.replace(SPECS["ex03_triton_basics"], triton=False))
    c = Cases(0)
    c.call("vector_add", f"vector_add({c.array(70)}, {c.array(70)})")
    _, tripped = _run("ex03_triton_basics", c, TRITON_ADD.format(body=TRITON_BODIES["plain PyTorch"][0]),
                      tmp_path=tmp_path)
    assert tripped == []


# Routes that leave the op watcher's sight, each seen by a rule of its own (one outside round of attacks, each
# route rewritten here as the smallest softmax that takes it).
OUT_OF_SIGHT = {
    "an operator defined with torch.library": (
        "import torch\n"
        "@torch.library.custom_op('pagedlab_test::rows', mutates_args=())\n"
        "def rows(x: torch.Tensor) -> torch.Tensor:\n"
        "    return torch.softmax(x, -1)\n"
        "def softmax_rows(x):\n    return torch.ops.pagedlab_test.rows(x)\n",
        "the operator pagedlab_test::rows, defined outside PyTorch"),
    "a forked process": (  # (the child could compute and send the bytes back; here it only says it ran: a torch op
        # in a child forked from a process whose OpenMP pool has run waits for ever)
        "import os, torch\n"
        "def softmax_rows(x):\n"
        "    r, w = os.pipe()\n"
        "    if os.fork() == 0:\n"
        "        os.write(w, b'ran'); os._exit(0)\n"
        "    os.close(w)\n"
        "    assert os.read(r, 3) == b'ran'\n"
        "    return (x - x.amax(-1, keepdim=True)).exp() / (x - x.amax(-1, keepdim=True)).exp().sum(-1, keepdim=True)\n",
        "a new process (os.fork), out of the grader's sight"),
    "a process started by a module no rule names (webbrowser runs a browser)": (
        "import webbrowser, torch\n"
        "def softmax_rows(x):\n"
        "    webbrowser.GenericBrowser(['true', '%s']).open('x')\n"
        "    return (x - x.amax(-1, keepdim=True)).exp() / (x - x.amax(-1, keepdim=True)).exp().sum(-1, keepdim=True)\n",
        "a new process (subprocess.Popen), out of the grader's sight"),
    "code the notebook wrote to a file and imported": (
        "import os, sys, tempfile, torch\n"
        "_folder = tempfile.mkdtemp()\n"
        "with open(os.path.join(_folder, 'rows_impl.py'), 'w') as f:\n"
        "    f.write('def rows(x):\\n    e = (x - x.amax(-1, keepdim=True)).exp()\\n'\n"
        "            '    return e / e.sum(-1, keepdim=True)\\n')\n"
        "sys.path.insert(0, _folder)\n"
        "import rows_impl\n"
        "sys.path.remove(_folder)\n"
        "def softmax_rows(x):\n    return rows_impl.rows(x)\n",
        "the notebook ran code from a file written while it ran, which no cell shows: module rows_impl"),
    "code the notebook wrote to a zip archive and imported": (
        "import os, sys, tempfile, zipfile, torch\n"
        "_zip = os.path.join(tempfile.mkdtemp(), 'rows.zip')\n"
        "with zipfile.ZipFile(_zip, 'w') as z:\n"
        "    z.writestr('rows_zipped.py', 'def rows(x):\\n    e = (x - x.amax(-1, keepdim=True)).exp()\\n'\n"
        "               '    return e / e.sum(-1, keepdim=True)\\n')\n"
        "sys.path.insert(0, _zip)\n"
        "import rows_zipped\n"
        "def softmax_rows(x):\n    return rows_zipped.rows(x)\n",
        "the notebook ran code from a file written while it ran, which no cell shows: module rows_zipped"),
    "code the notebook wrote to a file, imported and removed": (
        "import os, sys, tempfile, torch\n"
        "_folder = tempfile.mkdtemp()\n"
        "with open(os.path.join(_folder, 'rows_gone.py'), 'w') as f:\n"
        "    f.write('def rows(x):\\n    e = (x - x.amax(-1, keepdim=True)).exp()\\n'\n"
        "            '    return e / e.sum(-1, keepdim=True)\\n')\n"
        "sys.path.insert(0, _folder)\n"
        "import rows_gone\n"
        "os.remove(os.path.join(_folder, 'rows_gone.py'))\n"
        "def softmax_rows(x):\n    return rows_gone.rows(x)\n",
        "the notebook ran code from a file written while it ran, which no cell shows: module rows_gone"),
    "a profile hook of the notebook's": (
        "import cProfile, torch\n"
        "def softmax_rows(x):\n"
        "    p = cProfile.Profile(); p.enable()\n"
        "    return (x - x.amax(-1, keepdim=True)).exp() / (x - x.amax(-1, keepdim=True)).exp().sum(-1, keepdim=True)\n",
        "a profile hook of the notebook's (sys.setprofile, cProfile) in place of the grader's"),
    "an installed package's code": (
        "import torch, transformers.utils\n"
        "def softmax_rows(x):\n"
        "    transformers.utils.is_torch_available()\n"
        "    return (x - x.amax(-1, keepdim=True)).exp() / (x - x.amax(-1, keepdim=True)).exp().sum(-1, keepdim=True)\n",
        "code of the installed package transformers"),
    "a Triton kernel of the course's": (
        "import pagedlab.device, torch\nfrom pagedlab.kernels.primer import row_softmax\n"
        "def softmax_rows(x):\n    return row_softmax(x)\n",
        "the Triton kernel pagedlab.kernels.primer._row_softmax_kernel, not the notebook's"),
}


@pytest.mark.parametrize("route", OUT_OF_SIGHT)
def test_a_route_out_of_the_op_watchers_sight_is_seen(route, tmp_path):
    source, reason = OUT_OF_SIGHT[route]
    try:
        _, tripped = _run("ex00_warmup", _one_call("softmax_rows(X)"), source, tmp_path=tmp_path)
    finally:  # what the route left in this process, where the next test file's notebooks run (and fork) next
        for name in [m for m in sys.modules if m.startswith("rows_")]:
            del sys.modules[name]
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
    assert any(reason in t for t in tripped), tripped


@pytest.mark.parametrize("route, table, extra", [("an operator defined with torch.library", "TORCH_NAMESPACES",
                                                  "pagedlab_test"),
                                                 ("an installed package's code", "PACKAGES", "transformers")])
def test_without_its_rule_a_route_out_of_sight_is_not_seen(route, table, extra, tmp_path, monkeypatch):
    """Each rule, broken on purpose (its table taking the route in): the route's reason is gone."""
    monkeypatch.setattr(harness, table, getattr(harness, table) | {extra})
    source, reason = OUT_OF_SIGHT[route]
    _, tripped = _run("ex00_warmup", _one_call("softmax_rows(X)"), source, tmp_path=tmp_path)
    assert not any(reason in t for t in tripped), tripped


def test_a_finalizer_of_the_notebooks_runs_before_the_results_exist(tmp_path):
    """An object a graded call returned, freed when the driver is done with it, runs its finalizer (``weakref``,
    ``__del__``) before the driver writes the results: a finalizer that rewrites them (the tripwires cleared) finds
    nothing to rewrite."""
    source = ("import glob, json, torch, weakref\n"
              "def _scrub():\n"
              "    for path in glob.glob(_FOLDER + '/*.json'):\n"
              "        data = json.load(open(path)); data['tripped'] = []; json.dump(data, open(path, 'w'))\n"
              "def softmax_rows(x):\n"
              "    y = torch.softmax(x, -1)\n"
              "    weakref.finalize(y, _scrub)\n"
              "    return y\n")
    outcomes, tripped = _run("ex00_warmup", _one_call("softmax_rows(X)"), source,
                             namespace={"__name__": "__main__", "_FOLDER": str(tmp_path)}, tmp_path=tmp_path)
    assert outcomes[0][0][0] == "value" and tripped, "the finalizer rewrote the results after the driver wrote them"


def test_a_function_of_a_timed_cell_is_the_cells_and_one_from_another_text_is_not():
    """(Round 38q) IPython compiles a ``%%time`` cell's body under the name ``<timed exec>``: a function defined there
    is the cell's own (an honest learner timing a work cell), and one of that name compiled from a text no cell holds
    is not. (The rows of ``test_ground_truth.py`` run without IPython, so their magics are left out: this one runs
    in IPython's shell.)"""
    from IPython.core.interactiveshell import InteractiveShell

    cell = "%%time\nimport math\n\ndef scaled(x):\n    return math.sqrt(2) * x\n"
    shell = InteractiveShell.instance()
    shell.run_cell(cell)

    class Frame:  # what the profile hook reads of a frame
        f_code, f_locals = shell.user_ns["scaled"].__code__, {}

    assert Frame.f_code.co_filename == "<timed exec>"
    assert harness.Sources([cell, "x = 1"]).foreign(Frame) is None
    assert "in no %time or %%time" in harness.Sources(["%%time\ndef scaled(x):\n    return x\n"]).foreign(Frame)


def test_the_watch_counts_the_notebooks_calls_of_reference_code_before_the_graded_calls():
    """(Round 38t) A reference function the grading copy keeps, called before the graded calls: from the notebook's
    code it counts, by any route (here a ``functools.partial`` that ``map`` calls from C); from a cell the exercise
    hands out as it is, it does not; from code compiled under such a cell's name, not what its text compiles to, it
    counts, and so it does from C under a course function that does not name it. The function still computes what it
    did, and gets its own code back when the watch closes."""
    import linecache

    from pagedlab import memory

    given = "from pagedlab import memory\nfirst = memory.kv_cache_bytes(1, 1, 1, 1, 1, 2)\n"
    mine = ("import functools\n"
            "table = list(map(functools.partial(memory.kv_cache_bytes, 1, 1, 1, 1), [1, 2], [2, 2]))\n")
    own = memory.kv_cache_bytes.__code__
    ns: dict = {}

    def run(text: str, cell: str) -> None:
        """Run ``text`` as the cell named ``cell``, its text in the line cache as IPython keeps a cell's."""
        linecache.cache[cell] = (len(text), None, text.splitlines(keepends=True), cell)
        exec(compile(text, cell, "exec"), ns)

    watch = harness.Watch(["pagedlab.memory:kv_cache_bytes", "pagedlab.memory:ModelShape"], [given])
    try:
        run(given, "<given>")
        assert watch.calls == {} and ns["first"] == 4
        run(mine, "<mine>")
        assert watch.calls == {"pagedlab.memory.kv_cache_bytes": 2} and ns["table"] == [4, 8]
        exec(compile("memory.kv_cache_bytes(1, 1, 1, 1, 1, 2)\n", "<given>", "exec"), ns)  # (not the given text)
        assert watch.calls == {"pagedlab.memory.kv_cache_bytes": 3}
        # (round 38x) called from C under a frame of the course's (a check's hint function: list.extend over a
        # starmap), by code that does not name it: the notebook's call
        hinted = ("import itertools\nfrom pagedlab.checks import check\n"
                  "class Rows(Exception):\n    def __iter__(self):\n        return iter(self.args[0])\n"
                  "got = []\ntry:\n    with check('t', errors=got.extend):\n"
                  "        raise Rows(itertools.starmap(memory.kv_cache_bytes, [(1, 1, 1, 1, 1, 2)] * 3))\n"
                  "except Exception:\n    pass\n")
        run(hinted, "<mine>")
        assert ns["got"] == [4, 4, 4] and watch.calls == {"pagedlab.memory.kv_cache_bytes": 6}
        # (round 38z17) a value only a comparison reads does not count (an honest check against the reference);
        # kept, it does
        compared = ("import math, torch\n"
                    "torch.testing.assert_close(4, memory.kv_cache_bytes(1, 1, 1, 1, 1, 2))\n"
                    "print('difference', (torch.tensor(4) - memory.kv_cache_bytes(1, 1, 1, 1, 1, 2)).abs().max())\n"
                    "kept = [memory.kv_cache_bytes(1, 1, 1, 1, 1, 2)]\n"
                    "ok = torch.allclose(torch.tensor(4.0), torch.tensor(4.0) + memory.kv_cache_bytes(1, 1, 1, 1, 1, 2) * 0)\n")
        run(compared, "<mine>")
        assert ns["kept"] == [4] and watch.calls == {"pagedlab.memory.kv_cache_bytes": 8}
        # (round 38z138) bound to a name that the cell only compares, it does not count; read otherwise too, it does
        named = ("import torch\nwith torch.no_grad():\n    ref4 = memory.kv_cache_bytes(1, 1, 1, 1, 1, 2)\n"
                 "print('difference', (torch.tensor(4) - ref4).abs().max())\nassert ref4 == 4\n")
        run(named, "<mine>")
        assert watch.calls == {"pagedlab.memory.kv_cache_bytes": 8}
        run(named + "again = ref4\n", "<mine>")
        assert watch.calls == {"pagedlab.memory.kv_cache_bytes": 9}
        assert "functions" not in vars(watch)  # (no copy of the function that does not count)
    finally:
        watch.close()
        for name in ("<given>", "<mine>"):
            linecache.cache.pop(name, None)
    assert memory.kv_cache_bytes.__code__ == own and harness.WATCH not in vars(memory)


def test_what_the_interpreter_runs_for_a_jit_function_is_what_it_builds_from_its_text():
    """(Round 38w) What Triton's interpreter runs for a jit function called inside a kernel (``tl.softmax``) is the
    function it builds from that function's text, as the grader builds it too: a C callable that hands out answers
    (no profile hook sees it run) kept in the interpreter's cache, returned by an attribute hiding the class's method,
    or set as the function itself, is found (``Launches.rebuilt``); the object's class changed, by ``Held``."""
    import functools
    import itertools

    import triton.language as tl

    undo = []

    def put(owner, attr, new):
        undo.append((owner, attr, owner.__dict__.get(attr)))
        setattr(owner, attr, new)

    launches = harness.Launches(put, lambda label: None)
    jit, hand_out = tl.softmax, functools.partial(next, iter(()))
    try:
        assert launches.rebuilt(jit) is None
        cache = type(jit).rewritten_fn
        kept, cache[jit.fn] = cache[jit.fn], hand_out
        try:
            assert "softmax: a partial kept where Triton's interpreter keeps the function it builds" in launches.rebuilt(jit)
        finally:
            cache[jit.fn] = kept
        jit.rewrite = itertools.repeat(hand_out).__next__
        try:
            assert "softmax: an attribute of its own (rewrite) hides its class's" in launches.rebuilt(jit)
        finally:
            del jit.rewrite
        fn, jit.fn = jit.fn, hand_out
        try:
            assert "a partial in place of the Python function" in launches.rebuilt(jit)
        finally:
            jit.fn = fn
        held, kind, ours = harness.Held(), type(jit), {(id(owner), attr) for owner, attr, _ in undo}
        jit.__class__ = type("Sub", (kind,), {"__call__": staticmethod(hand_out)})
        try:
            assert held.changed(ours)[:1] == ["triton.language.standard.softmax"]  # (the same object, of another class)
        finally:
            jit.__class__ = kind
        assert launches.rebuilt(jit) is None and held.changed(ours) == []

        def sneak():  # (a function of the notebook's set on a module of Triton's under its own name: it would pass
            pass      # for that module's, so it counts, as a class named as Triton's does not pass for Triton's)
        standard = sys.modules["triton.language.standard"]
        standard.sneak, sneak.__qualname__ = sneak, "sneak"
        try:
            assert held.changed(ours) == ["triton.language.standard.sneak (added)"]
        finally:
            del standard.sneak
        named = type("InterpretedFunction", (), {"__module__": "triton.runtime.interpreter"})
        assert harness._home(named()) == "__main__" and harness._home(jit) == "triton.runtime.interpreter"
    finally:
        for owner, attr, old in reversed(undo):
            setattr(owner, attr, old) if old is not None else delattr(owner, attr)


def test_what_the_interpreter_computes_with_is_held_and_only_tritons_own_patch_passes():
    """(Round 38u) ``Held``: a library function the interpreter computes with, swapped for a C callable that hands out
    answers (no profile hook sees it run), is found, in NumPy, in the builder's object and in ``triton.language``,
    where the interpreter's own patch for a launch passes and one of its patches made around the notebook's callable
    does not."""
    import functools

    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    kernel: dict = {"tl": tl}  # (a kernel's globals: Triton patches the modules of triton.language it finds there)
    exec("def kernel(x_ptr):\n    tl.store(x_ptr, tl.exp(tl.load(x_ptr)))\n", kernel)
    builder = interpreter.interpreter_builder
    builder.create_masked_load = builder.create_masked_load  # (wrapped and put back, as the course's guard does)
    held = harness.Held()
    assert held.changed(set()) == []
    scope = interpreter._patch_lang(kernel["kernel"])  # (what Triton does for each launch, and undoes after)
    try:
        assert held.changed(set()) == []
        hand_out = functools.partial(next, iter(()))
        swaps = [(np, "sqrt", "numpy.sqrt"), (interpreter.interpreter_builder, "create_exp",
                                               "InterpreterBuilder.create_exp (on its object)")]
        for owner, name, said in swaps:
            old = owner.__dict__.get(name)
            setattr(owner, name, hand_out)
            try:
                assert held.changed(set()) == [said]
                assert held.changed({(id(owner), name)}) == []  # (the grader's own wrapper)
            finally:
                setattr(owner, name, old) if old is not None else delattr(owner, name)
        inner = interpreter._LangPatchScope()
        interpreter._patch_attr(tl, "exp", hand_out, interpreter.interpreter_builder, inner)
        try:
            assert held.changed(set()) == ["triton.language.exp"]
        finally:
            inner.restore()
    finally:
        scope.restore()
    assert held.changed(set()) == []
    del builder.create_masked_load


def test_a_hook_unset_by_an_error_raised_inside_it_is_no_hook_of_the_notebooks():
    """(Round 38z187) A timer's handler (``pagedlab.testing.within``) that raises while the grader's profile hook runs
    makes Python unset the hook: that is no hook of the notebook's in its place. An error raised elsewhere, or a
    hook of the notebook's, is not excused."""
    import signal

    from pagedlab.grading.harness import _unset_by

    def hook(frame, event, arg):
        for _ in range(200):
            pass

    def expire(signum, frame):
        raise TimeoutError("still running")

    def spin():
        n = 0
        while True:
            n += len(str(n))

    previous = signal.signal(signal.SIGALRM, expire)
    seen = set()
    try:
        for _ in range(20):
            sys.setprofile(hook)
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            try:
                spin()
            except TimeoutError as e:
                seen.add((sys.getprofile() is None, _unset_by(e, hook)))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                sys.setprofile(None)
            if (True, True) in seen:
                break
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert (True, True) in seen, seen  # (the hook runs most of the time: the signal lands in it within a few tries)
    assert (False, True) not in seen and (True, False) not in seen, seen
    try:
        raise TimeoutError("raised by the call itself")
    except TimeoutError as e:
        assert not _unset_by(e, hook)          # the hook still set (here: none set at all, and not in the traceback)
    sys.setprofile(lambda *a: None)
    try:
        raise TimeoutError("another hook in place")
    except TimeoutError as e:
        assert not _unset_by(e, hook)
    finally:
        sys.setprofile(None)


def test_the_other_side_of_python_3_12s_sum_is_emulated():
    """``harness.other_sum`` as this Python's ``sum`` where it emulates this side of 3.12 (items of every kind its
    fast paths tell apart: floats, ints, bools, ints past a C long, -0.0, infinities, other types after them), and
    3.12's compensated values where Python 3.11 loses them (What's New in Python 3.12: ``sum()`` of floats)."""
    import random

    rng, here = random.Random(0), sys.version_info >= (3, 12)
    kinds = [0.1, 0.2, 1e16, -1e16, 1e100, -1e100, 2.0 ** -60, -0.0, math.inf, 3, -7, True, 2 ** 70, 1.5]
    for _ in range(3000):
        items = [rng.choice(kinds) if rng.random() < 0.8 else rng.uniform(-1, 1) * 10 ** rng.randint(-5, 20)
                 for _ in range(rng.randint(0, 8))] + ([Fraction(1, 3)] if rng.random() < 0.05 else [])
        start = rng.choice([0, 0.0, -0.0, 5, 2 ** 64])
        mine, theirs = harness.other_sum(items, start, compensated=here), sum(items, start)
        assert type(mine) is type(theirs) and (mine == theirs or mine != mine and theirs != theirs), (items, start)
        assert not isinstance(mine, float) or math.copysign(1, mine) == math.copysign(1, theirs), (items, start)
    for items, compensated, naive in (([0.1] * 10, 1.0, 0.9999999999999999), ([1e100, 1.0, -1e100], 1.0, 0.0),
                                      ([0.1, 0.2, 0.3], 0.6, 0.6000000000000001), ([math.inf, 1.0], math.inf, math.inf)):
        assert harness.other_sum(items, 0, True) == compensated and harness.other_sum(items, 0, False) == naive


def test_a_sum_replaced_in_builtins_is_recorded(tmp_path):
    """The driver makes a case again with the other side of 3.12's sums only through its own ``sum``: a notebook's
    in builtins' place is recorded."""
    import builtins

    native = builtins.sum
    builtins.sum = lambda items, start=0: native(items, start)
    try:
        _, tripped = _run("ex00_warmup", _one_call("softmax_rows(X)"), SOFTMAX.format("x.exp() / x.exp().sum(-1, keepdim=True)"), tmp_path=tmp_path)
    finally:
        builtins.sum = native
    assert any("builtins.sum is not the grader's" in t for t in tripped), tripped


def test_the_emulated_sum_is_the_other_pythons_own():
    """``harness.other_sum`` against the other side of 3.12's own ``sum`` where this machine has that Python
    (``python3.12``, or ``python3.11`` on 3.12 and later; pyenv's too): 2,000 random mixtures, value and type, -0.0 and NaN
    told apart (on the machine that built the rule, pyenv's 3.12.1 gave the same on 20,000 of 20,000)."""
    import base64
    import pickle
    import random
    import shutil

    name = "python3.11" if sys.version_info >= (3, 12) else "python3.12"
    found = [shutil.which(name), *sorted(map(str, Path.home().glob(f".pyenv/versions/{name[6:]}*/bin/{name}")))]
    other = next((p for p in found if p and subprocess.run([p, "-c", ""], capture_output=True).returncode == 0), None)
    if other is None:
        pytest.skip(f"no {name} on this machine")
    rng = random.Random(2)
    kinds = [0.1, 0.2, 0.3, 1e16, -1e16, 1e100, -1e100, 2.0 ** -60, -0.0, math.inf, -math.inf, 3, -7, True, 2 ** 70]
    cases = [([rng.choice(kinds) if rng.random() < 0.6 else rng.uniform(-1, 1) * 10 ** rng.randint(-5, 20)
               for _ in range(rng.randint(0, 10))], rng.choice([0, 0.0, -0.0, 5, 2 ** 64])) for _ in range(2000)]
    code = ("import base64, pickle, sys\nout = []\n"
            "for items, start in pickle.loads(base64.b64decode(sys.stdin.read())):\n"
            "    try:\n        out.append(sum(items, start))\n    except Exception as e:\n        out.append(type(e).__name__)\n"
            "sys.stdout.write(base64.b64encode(pickle.dumps(out)).decode())\n")
    run = subprocess.run([other, "-c", code], input=base64.b64encode(pickle.dumps(cases)).decode(),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    for (items, start), theirs in zip(cases, pickle.loads(base64.b64decode(run.stdout))):
        try:
            mine = harness.other_sum(items, start)
        except Exception as e:  # noqa: BLE001 - an error is an outcome, as the other Python's
            mine = type(e).__name__
        same = mine.hex() == theirs.hex() if type(mine) is float and type(theirs) is float else (
            type(mine) is type(theirs) and mine == theirs)
        assert same, (items, start, mine, theirs)
