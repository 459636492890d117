"""The grading kernel's harness, armed in this process: tripwires see reference code by any path, the driver
serializes with what it captured before learner code ran, and numbers come back by value."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pagedlab.grading import harness
from pagedlab.grading.calls import job_text, load_outcomes
from pagedlab.grading.specs import SPECS, Cases

SOFTMAX = """
import torch
def softmax_rows(x):
    return {}
"""
# Each computes softmax by a path no list of names holds (the round of attacks, one line each).
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
}
PARAMETER = """
import torch
class Lazy(torch.nn.Parameter):
    def detach(self):
        return torch.softmax(self.data, -1)
def softmax_rows(x):
    return Lazy(x)
"""


def _run(exercise, cases, source, namespace=None, tmp_path=None):
    graded = harness.arm(job_text(cases, SPECS[exercise]))
    try:
        ns = namespace if namespace is not None else {"__name__": "__main__"}
        exec(source, ns)
        out = tmp_path / "out.json"
        graded(ns, str(out))
        return load_outcomes(out.read_text(), cases)
    finally:
        graded.disarm()


def _one_call(expression):
    c = Cases(0)
    c.call("softmax_rows", expression.replace("X", c.array(2, 5)))
    return c


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated")  # torch._dynamo's import, torch.compile
def test_a_tripwire_sees_softmax_by_any_path(path, tmp_path):
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
    assert any("pagedlab.memory.kv_cache_bytes" in t for t in tripped), tripped


def test_the_driver_serializes_with_what_it_captured_before_learner_code(tmp_path):
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
