"""Ground truth for every exercise's graded calls: the untouched exercise fails, the solution passes, and every
planted bug of the exercise's table (tests/planted) fails, on each of five seeds.

The graded calls run in this process through the grader's own preparation, harness, driver and comparison
(tests/graded_in_process.py); tests/grading/test_grade_class.py grades real notebooks end to end in the sandbox.
A bug the graded calls cannot see by design is listed in ``INVISIBLE`` with why (and in the instructors' guide).
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import importlib
import os
import tempfile

import nbformat
import pytest
import torch

import planted
from graded_in_process import (ROOT, SEEDS, copy_of, differences, first_cases, merged_cases, notebook_bytes, pristine,
                               run_graded, run_graded_isolated, shared, warm)
from review_rounds import (ROUND_38I, ROUND_38J, ROUND_38K, ROUND_38L, ROUND_38M, ROUND_38N, ROUND_38N_COPIES, ROUND_38O,
                           ROUND_38P, ROUND_38Q, ROUND_38R, ROUND_38S, ROUND_38T,
                           ROUND_38U, ROUND_38V, ROUND_38W, ROUND_38X, ROUND_38Y, ROUND_38Z, ROUND_38Z2, ROUND_38Z3,
                           ROUND_38Z4, ROUND_38Z5, ROUND_38Z6, ROUND_38Z7, ROUND_38Z8, ROUND_38Z9, ROUND_38Z10, ROUND_38Z11,
                           ROUND_38Z12, ROUND_38Z13, ROUND_38Z13_COPIES, ROUND_38Z14, ROUND_38Z14_COPIES,
                           ROUND_38Z15, ROUND_38Z16, ROUND_38Z17, ROUND_38Z17_AUDIT,
                           ROUND_38Z18, ROUND_38Z18_AUDIT, ROUND_38Z19, ROUND_38Z20, ROUND_38Z20_AUDIT,
                           ROUND_38Z21, ROUND_38Z22, ROUND_38Z23, ROUND_38Z25, ROUND_38Z26,
                           ROUND_38Z26_AUDIT, ROUND_38Z29, MASKS_IN_FLOATS, ROUND_38Z30, ROUND_38Z31, ROUND_38Z32,
                           ROUND_38Z36, ROUNDS_38Z33_36_HONEST, ROUND_38Z44)
from pagedlab.grading.judge import prepare
from pagedlab.grading.procs import Limits
from pagedlab.grading.specs import SPECS

TABLES = planted.tables()

# (exercise, bug): why the graded calls cannot see it. Each is caught by a visible check (the planted table says
# which); the graded calls compare results, and these bugs change none.
_READS = "the stored values are the same; what is read past the end, or read twice, is what checks 1, 4 and 6 measure"
_MESSAGE = "the exception's class is compared, not its message (check 4 reads the message)"
_CASCADE = ("cascade_attention is not graded: it runs the split kernel in Triton's interpreter, seconds a call on a "
            "CPU, for each seed and each bug (check 6 catches both)")
# (exercise, bug): a read past the end whose verdict rests on where the allocator put the tensors. The grader fails a
# kernel that reads outside every tensor it was given (test_harness.py proves it on memory that is surely another
# tensor's); a read just past one tensor may land in another it was given (the V pool allocated right after the K
# pool, y right after x), or not. Either verdict is right; the visible checks (ex03: 1 and 4, ex09: 5) catch each
# whatever the layout.
WHERE_ALLOCATED: set[tuple[str, str]] = {
    ("ex03_triton_basics", "loads without mask"),
    ("ex09_paged_attention", "block-table load without a mask (reads padding entries)"),
    ("ex09_paged_attention", "K loaded without a mask (its NaN scores hidden by tl.where)"),
}
# (exercise, bug): seen by the graded calls on some seeds, not all (each must still fail on one at least).
# None now: each one found was given a graded call that builds its case on every seed.
SOME_SEEDS: dict[tuple[str, str], str] = {}
INVISIBLE: dict[tuple[str, str], str] = {
    ("ex03_triton_basics", "three passes over the row"): _READS,
    ("ex09_stretch_split_kv_merge", "cascade: the suffix state forgotten"): _CASCADE,
    ("ex09_stretch_split_kv_merge", "cascade: states stacked on the wrong dimension"): _CASCADE,
    ("ex04_stretch_gqa_forward", "ValueError that does not name k"): _MESSAGE,
    ("ex04_stretch_gqa_forward", "ValueError that names the count, not k (a bare letter k elsewhere does not count)"):
        _MESSAGE,
    # A choice the graded calls leave open on purpose.
    ("ex04b_performance_lab", "a tie broken by the last of equal maxima"):
        "the graded calls draw no tie on the largest tile, so that no learner's grade rests on a tie rule (the spec "
        "draws again); check 7, beside the text that states the rule, tries a tie",
    ("ex09_paged_attention", "the block offset in int32 (overflows for pools past 2**31 elements)"):
        "it overflows only in a pool past 2**31 elements (8 GiB of float32), which no graded call allocates: check 10 "
        "computes the kernel's addresses for such a pool",
}


@pytest.fixture(autouse=True, scope="module")
def _no_compile():
    """ex04b's setup compiles four kernels in a subprocess (~25 s on 2 cores) for its visible checks and demo; its
    graded calls read reports drawn by the spec, never those. Here the setup gets reports of the same layout drawn
    by the spec's own generator (the grader's kernels compile for real)."""
    import ast
    import random

    from pagedlab import perf_lab
    from pagedlab.grading.specs import _report

    real = perf_lab.compile_reports
    perf_lab.compile_reports = lambda configs, *a, **k: [
        {**ast.literal_eval(_report(random.Random(i), c.get("arch", 90))), **c, "status": "ok"}
        for i, c in enumerate(configs)]
    yield
    perf_lab.compile_reports = real


_SHARED: list = [None]  # a folder the workers of this run share (:func:`solution`)


@pytest.fixture(autouse=True, scope="module")
def _shared_folder(request, tmp_path_factory):
    """Under pytest-xdist, the folder above each worker's own temporary one: the same for every worker of the run."""
    _SHARED[0] = tmp_path_factory.getbasetemp().parent if hasattr(request.config, "workerinput") else None
    yield
    _SHARED[0] = None


# The quick run's seeds: two of the five, each row and planted bug on one of them; ``--proofs`` runs every seed.
QUICK_SEEDS = SEEDS[:2]


def run_seeds(proofs: bool) -> tuple[int, ...]:
    return SEEDS if proofs else QUICK_SEEDS


@functools.lru_cache(maxsize=None)
def solution(exercise: str, seeds: tuple[int, ...] = SEEDS):
    """The solution's outcomes on ``seeds``, computed once in a run (by the first worker that needs them)."""
    return shared(_SHARED[0], f"solution-{exercise}-{'-'.join(map(str, seeds))}",
                  lambda: run_graded(exercise, (ROOT / "solutions" / f"{exercise}.ipynb").read_bytes(), seeds))


def test_every_exercise_has_graded_calls_and_a_table_of_planted_bugs():
    stems = {p.stem for p in (ROOT / "exercises").glob("*.ipynb")}
    assert set(SPECS) == stems
    assert set(TABLES) == stems, f"no table of planted bugs for {sorted(stems - set(TABLES))}"
    listed = {**INVISIBLE, **SOME_SEEDS}
    assert {e for e, _ in listed} <= stems and all(b in TABLES[e] for e, b in listed), "a stale INVISIBLE entry"


@pytest.mark.parametrize("exercise", sorted(SPECS))
def test_the_solution_passes_and_raises_only_what_the_exercise_asks(exercise, proofs):
    """A graded call whose solution outcome is an exception the exercise does not ask for (a NameError for a
    constant no solution defines, an IndexError of the spec's own statement) tests nothing: refused here (on every
    seed under ``--proofs``, on the quick run's two without)."""
    got = solution(exercise, run_seeds(proofs))
    assert not got.cell_errors, got.cell_errors
    assert not got.tripped, f"the solution sets off a tripwire (the spec wires what the solution uses): {got.tripped}"
    spec = SPECS[exercise]
    for seed, outcomes in got.outcomes.items():
        cases = spec.cases(seed).cases
        for case, steps in zip(cases, outcomes):
            for (kind, source), outcome in zip(case["steps"], steps):
                if isinstance(outcome, tuple) and outcome[0] == "raised":
                    name = outcome[1][0].rsplit(".", 1)[-1]
                    assert name in spec.raises, (f"seed {seed}, {case['label']}: {source!r} raises {name} in the "
                                                 f"solution; the exercise asks for {spec.raises or 'none'}")
    assert all(d is None for d in differences(exercise, got, got).values())


@pytest.mark.parametrize("exercise", sorted(SPECS))
def test_the_untouched_exercise_fails_on_every_seed(exercise, proofs):
    untouched = run_graded(exercise, (ROOT / "exercises" / f"{exercise}.ipynb").read_bytes(), run_seeds(proofs))
    passed = [seed for seed, d in differences(exercise, solution(exercise, run_seeds(proofs)), untouched).items()
              if d is None]
    assert not passed, f"{exercise} handed back untouched passes the graded calls on seeds {passed}"


@pytest.mark.parametrize("exercise", sorted(SPECS))
def test_every_planted_bug_fails_the_graded_calls_on_every_seed(exercise, proofs):
    """Every planted bug fails the graded calls on every seed (under ``--proofs``: ``make test PROOFS=1``). Without
    it, the quick run of ``make test``, one bug of each table runs (the i-th where i + the exercise's name's length
    is a multiple of the table's: another one as the tables grow or the names change), on the quick run's seed i mod 2
    only (:data:`QUICK_SEEDS`); every bug runs under ``--proofs``, on every seed."""
    path = ROOT / "solutions" / f"{exercise}.ipynb"
    want, survivors = solution(exercise, run_seeds(proofs)), []
    # Each variant runs in a child process: a Triton kernel that writes out of bounds can crash the interpreter, a
    # scheduler that never stops preempting loops forever (in the grader: a dead kernel, a timeout; both fail).
    for i, (bug, plant) in enumerate(TABLES[exercise].items()):
        if not proofs and (i + len(exercise)) % len(TABLES[exercise]):
            continue
        # (a bug that only some seeds see is run on all five: the test asks that at least one of them sees it)
        seeds = run_seeds(proofs) if proofs or (exercise, bug) in SOME_SEEDS else \
            (QUICK_SEEDS[i % len(QUICK_SEEDS)],)
        data = notebook_bytes(path, planted.replacements(path, plant))
        # (on one seed, the first quarter of its calls first, and the rest only where those all agree)
        quick = first_cases(exercise, seeds[0]) if len(seeds) == 1 and (exercise, bug) not in INVISIBLE else None
        got = run_graded_isolated(exercise, data, seeds, first=quick)
        if quick is not None and got is not None and not got.tripped and \
                all(d is None for d in differences(exercise, want, got, seeds).values()):
            got = run_graded_isolated(exercise, data, seeds)
        if got is None:
            continue  # the process died or ran out of time, as the grading kernel would: a fail
        passed = [seed for seed, d in differences(exercise, want, got, seeds).items() if d is None and not got.tripped]
        if (exercise, bug) in WHERE_ALLOCATED:
            continue
        if (exercise, bug) in SOME_SEEDS:
            assert len(passed) < len(seeds), f"{bug!r} passes on every seed: move it to INVISIBLE"
            continue
        if (exercise, bug) in INVISIBLE:
            if len(passed) < len(seeds):  # once more: one run in several of ex09's, under -n 2, has seen a variant
                # that equals the solution in the interpreter (cause not found yet); a bug that is visible is seen twice
                got = run_graded_isolated(exercise, notebook_bytes(path, planted.replacements(path, plant)), seeds)
                passed = [s for s, d in differences(exercise, want, got, seeds).items()
                          if d is None and not got.tripped] if got is not None else list(seeds)
            assert len(passed) == len(seeds), (f"{bug!r} is listed as invisible but the graded calls see it: unlist it "
                                               f"(tripped {got.tripped[:2]}, {differences(exercise, want, got, seeds)})")
        elif passed:
            survivors.append(f"{bug!r} passes on seeds {passed}")
    assert not survivors, f"{exercise}: planted bugs the graded calls miss:\n" + "\n".join(survivors)


# ---------------------------------------------------------------------------------------------------------------
# Attacks by class, and honest learners the grader once wronged: each on the five seeds under --proofs (one of them
# in the quick run), in a child process that imports pagedlab as the grading kernel would (:func:`grading_copy_only`).

_TORCH_ATTENTION = """
def _torch(q, k, v, out, *args, CAUSAL=False, **kw):
    s = q.float() @ k.float().transpose(-1, -2) * q.shape[-1] ** -0.5
    if CAUSAL:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).tril(s.shape[-1] - s.shape[-2]).logical_not(),
                          float('-inf'))
    out.copy_(torch.nan_to_num((s - s.amax(-1, keepdim=True)).exp() / (s - s.amax(-1, keepdim=True)).exp().sum(
        -1, keepdim=True)) @ v.float())
"""
_UNTILED = ("def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
            "    n_q, n_k = q.shape[0], k.shape[0]\n"
            "    s = q.float() @ k.float().T / math.sqrt(q.shape[1])\n"
            "    if causal:\n"
            "        s = s.masked_fill(torch.ones(n_q, n_k, dtype=torch.bool).triu(n_k - n_q + 1), -math.inf)\n"
            "    p = (s - s.amax(-1, keepdim=True)).exp()\n"
            "    return (p / p.sum(-1, keepdim=True) @ v.float()).to(q.dtype)\n")
_ROWS = "(x - x.amax(-1, keepdim=True)).exp() / (x - x.amax(-1, keepdim=True)).exp().sum(-1, keepdim=True)"
# (exercise, {work cell id: source}) for each class of attack; each must fail or need review on every seed.
# ex02's scores and their exponentials computed whole in NumPy: how they come back to PyTorch differs by attack.
_NUMPY_PROBABILITIES = (
    "import numpy as np\n"
    "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
    "    s = q.float().numpy() @ k.float().numpy().T / math.sqrt(q.shape[1])\n"
    "    if causal:\n"
    "        s = np.where(np.triu(np.ones(s.shape, bool), s.shape[1] - s.shape[0] + 1), -np.inf, s)\n"
    "    p = np.exp(s - s.max(-1, keepdims=True))\n")
_EX08_COSTS = next(c.source for c in nbformat.read(ROOT / "solutions" / "ex08_swap_or_recompute.ipynb", as_version=4).cells
                   if c.get("id") == "costs-work")
ATTACKS: dict[str, tuple[str, dict[str, str]]] = {
    # round 38z91: each row's max as the last of its sorted scores written to one slot (in turn on a CPU: the max;
    # in any order on a GPU); a scatter and a copy by index of the same kind
    "ex00's row max as the last write of many to one element": ("ex00_warmup", {
        "softmax-work": "def softmax_rows(x):\n"
                        "    flat = x.reshape(-1, x.shape[-1])\n"
                        "    rows, n = flat.shape\n"
                        "    m = torch.empty(rows, dtype=x.dtype)\n"
                        "    m.index_put_((torch.arange(rows).repeat_interleave(n),), flat.sort(-1).values.reshape(-1))\n"
                        "    e = torch.exp(flat - m[:, None])\n"
                        "    return (e / e.sum(-1, keepdim=True)).reshape(x.shape)\n"}),
    "ex00's row max scattered, each row's sorted scores to one column": ("ex00_warmup", {
        "softmax-work": "def softmax_rows(x):\n"
                        "    flat = x.reshape(-1, x.shape[-1])\n"
                        "    m = torch.empty(flat.shape[0], 1, dtype=x.dtype)\n"
                        "    m.scatter_(1, torch.zeros_like(flat, dtype=torch.long), flat.sort(-1).values)\n"
                        "    e = torch.exp(flat - m)\n"
                        "    return (e / e.sum(-1, keepdim=True)).reshape(x.shape)\n"}),
    "ex03 in plain PyTorch": ("ex03_triton_basics", {
        "add-work": "def vector_add(x, y, block=64):\n    return x + y\n",
        "softmax-work": f"def softmax(x, block=16):\n    return {_ROWS}\n"}),
    "ex03 kernels that only copy an answer PyTorch computed": ("ex03_triton_basics", {
        "add-work": "@triton.jit\ndef add_kernel(x_ptr, y_ptr, out_ptr, n, stride_x, stride_y, BLOCK: tl.constexpr):\n"
                    "    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                    "    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < n), mask=i < n)\n"
                    "def vector_add(x, y, block=64):\n    answer, out = x + y, torch.empty_like(x + y)\n"
                    "    add_kernel[(triton.cdiv(x.numel(), block),)](answer, answer, out, x.numel(), 1, 1, BLOCK=block)\n"
                    "    return out\n",
        "softmax-work": "@triton.jit\ndef softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, "
                        "BLOCK: tl.constexpr):\n    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                        "    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < n_cols), mask=i < n_cols)\n"
                        f"def softmax(x, block=16):\n    answer = ({_ROWS}).flatten()\n"
                        "    out = torch.empty_like(answer)\n"
                        "    softmax_kernel[(triton.cdiv(answer.numel(), block),)](answer, out, answer.numel(), 0, 0, "
                        "BLOCK=block)\n    return out.reshape(x.shape)\n"}),
    "ex04 with a defaultdict for a kernel": ("ex04_flash_forward", {
        "kernel-work": "import collections\n" + _TORCH_ATTENTION + "attention_kernel = collections.defaultdict("
                       "lambda: _torch)\n"}),
    "ex04 stretch in plain PyTorch": ("ex04_stretch_gqa_forward", {
        "kernel-work": "def gqa_forward(q, k, v, block_m=16, block_n=32):\n"
                       "    if q.shape[1] % k.shape[1]:\n        raise ValueError('k: heads must divide')\n"
                       "    g = q.shape[1] // k.shape[1]\n    out = torch.empty_like(q)\n"
                       "    _torch(q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1), out)\n    return out\n"
                       + _TORCH_ATTENTION}),
    "ex09 with a defaultdict for a kernel": ("ex09_paged_attention", {
        "kernel-work": "import collections\n"
                       "def _torch(q, kc, vc, tables, lens, out, *args, **kw):\n"
                       "    bs, kvh = kc.shape[1], kc.shape[2]\n"
                       "    for i in range(q.shape[0]):\n"
                       "        n = int(lens[i])\n        blocks = tables[i, :(n + bs - 1) // bs].long()\n"
                       "        k = kc[blocks].reshape(-1, kvh, q.shape[-1])[:n].repeat_interleave(q.shape[1] // kvh, 1)\n"
                       "        v = vc[blocks].reshape(-1, kvh, q.shape[-1])[:n].repeat_interleave(q.shape[1] // kvh, 1)\n"
                       "        s = torch.einsum('hd,nhd->hn', q[i], k) * q.shape[-1] ** -0.5\n"
                       "        p = (s - s.amax(-1, keepdim=True)).exp()\n"
                       "        out[i] = torch.einsum('hn,nhd->hd', p / p.sum(-1, keepdim=True), v)\n"
                       "paged_decode_kernel = collections.defaultdict(lambda: _torch)\n"}),
    "torch._refs.softmax": ("ex00_warmup", {"softmax-work": "def softmax_rows(x):\n"
                                                            "    return torch._refs.softmax(x, -1)\n"}),
    "torch._decomp's _softmax": ("ex00_warmup", {
        "softmax-work": "import torch._decomp.decompositions as d\n"
                        "def softmax_rows(x):\n    return d._softmax(x, -1, False)\n"}),
    "the raw binding with dispatch modes disabled": ("ex00_warmup", {
        "softmax-work": "import torch.utils._python_dispatch as pd\n"
                        "def softmax_rows(x):\n    with pd._disable_current_modes():\n"
                        "        return torch._C._VariableFunctions.softmax(x, -1)\n"}),
    "the aten op's C++ handle from a worker thread": ("ex00_warmup", {
        "softmax-work": "import concurrent.futures as cf\n"
                        "def softmax_rows(x):\n    with cf.ThreadPoolExecutor(1) as pool:\n"
                        "        return pool.submit(torch.ops.aten._softmax.default._op, x, -1, False).result()\n"}),
    "attention from torch.ao's quantizable MultiheadAttention": ("ex01_naive_attention", {
        "attention-work": "import torch.ao.nn.quantizable as quantizable\n"
                          "def naive_attention(q, k, v, causal=False):\n"
                          "    d, n_q, n_k = q.shape[-1], q.shape[-2], k.shape[-2]\n"
                          "    layer = quantizable.MultiheadAttention(d, 1, batch_first=True, bias=False)\n"
                          "    with torch.no_grad():\n"
                          "        for lin in (layer.linear_Q, layer.linear_K, layer.linear_V, layer.out_proj):\n"
                          "            lin.weight.copy_(torch.eye(d))\n"
                          "        flat = [t.float().reshape(-1, t.shape[-2], d) for t in (q, k, v)]\n"
                          "        hidden = ~causal_mask(n_q, n_k) if causal else None\n"
                          "        out, _ = layer(*flat, attn_mask=hidden, need_weights=False)\n"
                          "    return out.reshape(q.shape).to(q.dtype)\n"}),
    "dispatch modes switched off, the attention C function called from C": ("ex01_naive_attention", {
        "attention-work": "import functools\nimport torch.utils._python_dispatch\n"
                          "_FUSED = functools.partial(torch._C._nn.scaled_dot_product_attention)\n"
                          "def naive_attention(q, k, v, causal=False):\n"
                          "    allowed = causal_mask(q.shape[-2], k.shape[-2]) if causal else None\n"
                          "    fused = functools.partial(_FUSED, attn_mask=allowed)\n"
                          "    with torch.utils._python_dispatch._disable_current_modes():\n"
                          "        out = next(map(fused, [q.float()], [k.float()], [v.float()]))\n"
                          "    return out.to(q.dtype)\n"}),
    "ex02's tiled_attention from ex00 through pydoc": ("ex00_warmup", {
        "softmax-work": "import pydoc\n"
                        "def softmax_rows(x):\n    f = pydoc.locate('pagedlab.attention.tiled_attention')\n"
                        "    v = torch.eye(x.shape[-1], dtype=x.dtype)\n"
                        "    return torch.stack([f(r[:, None] * 0 + r, torch.ones(x.shape[-1], 1, dtype=x.dtype), v)[0]\n"
                        "                        for r in x.reshape(-1, x.shape[-1])]).reshape(x.shape)\n"}),
    "the check module's own answer": ("ex04b_performance_lab", {"predict-work": "predict = ex04b._right\n"}),
    "ex02's tiled_attention computed untiled, the whole score matrix": ("ex02_online_softmax",
                                                                         {"tiled-work": _UNTILED}),
    "ex02's tiled_attention filling an n_q x n_k buffer tile by tile": ("ex02_online_softmax", {
        "tiled-work": "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
                      "    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]\n"
                      "    s = torch.empty(n_q, n_k)\n"
                      "    for c0 in range(0, n_k, block_n):\n"
                      "        s[:, c0:c0 + block_n] = q.float() @ k[c0:c0 + block_n].float().T / math.sqrt(d)\n"
                      "    if causal:\n"
                      "        s = s.masked_fill(torch.ones(n_q, n_k, dtype=torch.bool).triu(n_k - n_q + 1), "
                      "-math.inf)\n"
                      "    p = (s - s.amax(-1, keepdim=True)).exp()\n"
                      "    return (p / p.sum(-1, keepdim=True) @ v.float()).to(q.dtype)\n"}),
    "ex02's tiled_attention holding every row of scores at once, each a small tensor": ("ex02_online_softmax", {
        "tiled-work": "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
                      "    n_q, n_k = q.shape[0], k.shape[0]\n"
                      "    rows = [q[i].float() @ k.float().T / math.sqrt(q.shape[1]) for i in range(n_q)]\n"
                      "    if causal:\n"
                      "        rows = [r.masked_fill(torch.arange(n_k) > i + n_k - n_q, -math.inf) "
                      "for i, r in enumerate(rows)]\n"
                      "    rows = [(r - r.max()).exp() for r in rows]\n"
                      "    return torch.stack([r / r.sum() @ v.float() for r in rows]).to(q.dtype)\n"}),
    "ex02's tiled_attention keeping every score as int32 bits": ("ex02_online_softmax", {
        "tiled-work": "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
                      "    n_q, n_k = q.shape[0], k.shape[0]\n"
                      "    bits = torch.empty(n_q, n_k, dtype=torch.int32)\n"
                      "    for c0 in range(0, n_k, block_n):\n"
                      "        s = q.float() @ k[c0:c0 + block_n].float().T / math.sqrt(q.shape[1])\n"
                      "        bits[:, c0:c0 + block_n] = s.view(torch.int32)\n"
                      "    rows = []\n"
                      "    for i in range(n_q):\n"
                      "        r = bits[i].clone().view(torch.float32)\n"
                      "        if causal:\n"
                      "            r = r.masked_fill(torch.arange(n_k) > i + n_k - n_q, -math.inf)\n"
                      "        p = (r - r.max()).exp()\n"
                      "        rows.append(p / p.sum() @ v.float())\n"
                      "    return torch.stack(rows).to(q.dtype)\n"}),
    "ex02's tiled_attention keeping every score's bits in bool masks, one per bit": ("ex02_online_softmax", {
        "tiled-work": "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
                      "    n_q, n_k = q.shape[0], k.shape[0]\n"
                      "    mant = [torch.zeros(n_q, n_k, dtype=torch.bool) for _ in range(32)]\n"
                      "    expo = [torch.zeros(n_q, n_k, dtype=torch.bool) for _ in range(9)]\n"
                      "    for c0 in range(0, n_k, 4):\n"  # (a score's bits by arithmetic: no .view(dtype))
                      "        m, e = torch.frexp(q.float() / math.sqrt(q.shape[1]) @ k[c0:c0 + 4].float().T)\n"
                      "        m, e = (m * 2 ** 24).int(), e + 256\n"
                      "        for b in range(32):\n"
                      "            mant[b][:, c0:c0 + 4] = (m >> b) & 1 == 1\n"
                      "        for b in range(9):\n"
                      "            expo[b][:, c0:c0 + 4] = (e >> b) & 1 == 1\n"
                      "        del m, e\n"
                      "    out = []\n"
                      "    for r0 in range(0, n_q, 4):\n"
                      "        m, e = torch.zeros(len(mant[0][r0:r0 + 4]), n_k, dtype=torch.int32), -256\n"
                      "        for b in range(41):\n"
                      "            if b < 32:\n"
                      "                m |= mant[b][r0:r0 + 4].int() << b\n"
                      "            else:\n"
                      "                e = e + (expo[b - 32][r0:r0 + 4].int() << (b - 32))\n"
                      "        r = torch.ldexp(m.float() / 2 ** 24, e)\n"
                      "        del m, e\n"
                      "        if causal:\n"
                      "            r = r.masked_fill(torch.arange(n_k) > torch.arange(r0, r0 + len(r))[:, None] "
                      "+ n_k - n_q, -math.inf)\n"
                      "        p = (r - r.max(-1, keepdim=True).values).exp()\n"
                      "        out.append(p / p.sum(-1, keepdim=True) @ v.float())\n"
                      "    return torch.cat(out).to(q.dtype)\n"}),
    "ex02's tiled_attention computed whole in NumPy, written into a tensor's memory": ("ex02_online_softmax", {
        "tiled-work": _NUMPY_PROBABILITIES +
                      "    out = torch.empty(q.shape[0], v.shape[1], dtype=q.dtype)\n"
                      "    out.numpy()[:] = p / p.sum(-1, keepdims=True) @ v.float().numpy()\n"
                      "    return out\n"}),
    "ex02's tiled_attention with NumPy's probabilities brought back tile by tile": ("ex02_online_softmax", {
        "tiled-work": _NUMPY_PROBABILITIES +
                      "    p = p / p.sum(-1, keepdims=True)\n"
                      "    out = torch.zeros(q.shape[0], v.shape[1])\n"
                      "    for c0 in range(0, k.shape[0], block_n):\n"
                      "        out += torch.from_numpy(np.ascontiguousarray(p[:, c0:c0 + block_n])) @ "
                      "v[c0:c0 + block_n].float()\n"
                      "    return out.to(q.dtype)\n"}),
    "ex02's tiled_attention with NumPy's answer in a tensor's shared memory, times 0 plus": (
        "ex02_online_softmax", {
            "tiled-work": _NUMPY_PROBABILITIES +
                          "    out = q.float()[:, :1] * 0 + v.float()[:1] * 0\n"
                          "    out.numpy()[:] = p / p.sum(-1, keepdims=True) @ v.float().numpy()\n"
                          "    return (out + 0 * q.float().sum()).to(q.dtype)\n"}),
    "ex02's tiled_attention keeping every score in a complex128 buffer": ("ex02_online_softmax", {
        "tiled-work": "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
                      "    n_q, n_k = q.shape[0], k.shape[0]\n"
                      "    box = torch.empty(n_q * n_k // 4 + 1, dtype=torch.complex128)\n"
                      "    s = box.view(torch.float32)[:n_q * n_k].view(n_q, n_k)\n"
                      "    for c0 in range(0, n_k, block_n):\n"
                      "        s[:, c0:c0 + block_n] = q.float() @ k[c0:c0 + block_n].float().T / math.sqrt(q.shape[1])\n"
                      "    if causal:\n"
                      "        s.masked_fill_(torch.ones(n_q, n_k, dtype=torch.bool).triu(n_k - n_q + 1), -math.inf)\n"
                      "    s.sub_(s.amax(-1, keepdim=True)).exp_()\n"
                      "    s.div_(s.sum(-1, keepdim=True))\n"
                      "    return (s @ v.float()).to(q.dtype)\n"}),
    "ex02's tiled_attention with scores as Python numbers written into an int64 buffer": ("ex02_online_softmax", {
        "tiled-work": "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
                      "    n_q, n_k = q.shape[0], k.shape[0]\n"
                      "    keep = torch.zeros(n_q, n_k, dtype=torch.int64)\n"
                      "    for c0 in range(0, n_k, block_n):\n"
                      "        tile = (q.float() @ k[c0:c0 + block_n].float().T / math.sqrt(q.shape[1])).tolist()\n"
                      "        for i, row in enumerate(tile):\n"
                      "            for j, x in enumerate(row):\n"
                      "                keep[i, c0 + j] = round(x * 2 ** 40)\n"
                      "    rows = []\n"
                      "    for i in range(n_q):\n"
                      "        r = keep[i].clone().double() / 2 ** 40\n"
                      "        if causal:\n"
                      "            r = r.masked_fill(torch.arange(n_k) > i + n_k - n_q, -math.inf)\n"
                      "        p = (r - r.max()).exp()\n"
                      "        rows.append((p / p.sum()).float() @ v.float())\n"
                      "    return torch.stack(rows).to(q.dtype)\n"}),
    "ex02 with a matrix of index differences of every pair, which the exercise forbids": ("ex02_online_softmax", {
        "tiled-work": "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
                      "    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]\n"
                      "    ahead = torch.arange(n_k)[None, :] - torch.arange(n_q)[:, None] - (n_k - n_q)\n"
                      "    out = []\n"
                      "    for r0 in range(0, n_q, block_m):\n"
                      "        qi = q[r0:r0 + block_m].float() / math.sqrt(d)\n"
                      "        m, l = torch.full((len(qi),), -math.inf), torch.zeros(len(qi))\n"
                      "        acc = torch.zeros(len(qi), d)\n"
                      "        for c0 in range(0, n_k, block_n):\n"
                      "            s = qi @ k[c0:c0 + block_n].float().T\n"
                      "            if causal:\n"
                      "                s = s.masked_fill(ahead[r0:r0 + block_m, c0:c0 + block_n] > 0, -math.inf)\n"
                      "            m_new = torch.maximum(m, s.amax(-1))\n"
                      "            p, alpha = torch.exp(s - m_new[:, None]), torch.exp(m - m_new)\n"
                      "            l, acc = l * alpha + p.sum(-1), acc * alpha[:, None] + p @ v[c0:c0 + block_n].float()\n"
                      "            m = m_new\n"
                      "        out.append(acc / l[:, None])\n"
                      "    return torch.cat(out).to(q.dtype)\n"}),
    "a fresh pagedlab.memory from runpy": ("ex05_kv_cache_size", {
        "formula-work": "import runpy\nkv_cache_bytes = runpy.run_module('pagedlab.memory')['kv_cache_bytes']\n"}),
    "a fresh allocator module from runpy": ("ex06_block_allocator", {
        "allocator-work": "import runpy\n_a = runpy.run_module('pagedlab.paged.allocator')\n"
                          "class SimpleAllocator(_a['BlockAllocator']):\n    pass\n"}),
    # round 38z119: a float converted past int32's range in the graded call, by a number no code writes (INT_MIN on
    # a CPU, INT_MAX on a GPU): the grader checks the values each conversion is given
    "a flag from a float converted past int32's range at run time": ("ex00_warmup", {
        "softmax-work": "def softmax_rows(x):\n"
                        "    flag = (x.new_ones(1) * torch.finfo(torch.float32).max).to(torch.int32)\n"
                        "    if flag.item() > 0:\n        return torch.softmax(x, -1)\n"
                        "    e = (x - x.amax(-1, keepdim=True)).exp()\n    return e / e.sum(-1, keepdim=True)\n"}),
    "SystemExit from a graded call": ("ex00_warmup", {
        "softmax-work": "def softmax_rows(x):\n    raise SystemExit(0)\n"}),
    "answers precomputed from the inputs in memory": ("ex00_warmup", {
        "softmax-work": "import gc\n_seen = {}\nfor o in gc.get_objects():\n"
                        "    if isinstance(o, torch.Tensor) and o.is_floating_point() and o.dim():\n"
                        "        _seen[o.shape, o.sum().item()] = torch.softmax(o, -1)\n"
                        "def softmax_rows(x):\n    return _seen[x.shape, x.sum().item()]\n"}),
    # (round 38z200) a float sum of terms the answer lists, one of them a float it writes, made from an input: 0 on
    # Python 3.11, 1 on 3.12 (read by the machine reading until the grader summed both ways)
    "ex00 a float sum of terms the answer lists, made from an input": ("ex00_warmup", {
        "softmax-work": "def softmax_rows(x):\n"
                        "    big = float(x.shape[-1]) * 2.0 ** 53\n"
                        "    e = torch.exp(x - x.amax(dim=-1, keepdim=True))\n"
                        "    return e / e.sum(dim=-1, keepdim=True) * (1 + int(sum([big, 1.0, -big])))\n"}),
    # (round 38z218) a float sum of an input, which Python 3.12 compensates, chooses the formula: the latency is
    # counted twice where the sum keeps it (Colab's 3.12), once where it is lost (3.11)
    "ex08 swap_seconds's formula chosen by a float sum Python 3.12 compensates": ("ex08_swap_or_recompute", {
        "costs-work": _EX08_COSTS.replace(
            "    return 2 * copies_each_way * one_copy\n",
            "    scale = (1.0 + latency) * 2.0 ** 80\n"
            "    if sum([scale, latency, -scale]) != 0:\n"
            "        one_copy += latency\n"
            "    return 2 * copies_each_way * one_copy\n")}),
}
# Honest learners the grader once failed or flagged: each must pass on every seed, with no review reason.
HONEST: dict[str, tuple[str, dict[str, str]]] = {
    # (round 38z224) two floats of the statement's formula summed with sum: the same on every Python
    "ex04b predict_resources summing its terms with sum": ("ex04b_performance_lab", {
        "predict-resources-work": "def predict_resources(block_m, block_n, num_warps, num_stages, head_dim=128):\n"
                                  "    q_tile = block_m * head_dim\n"
                                  "    smem = 2 * (q_tile + 2 * num_stages * block_n * head_dim)\n"
                                  "    regs = sum([float(q_tile), 1.5 * block_m * block_n]) / (32 * num_warps)\n"
                                  "    return {'shared_bytes': smem, 'registers': regs, 'spills': regs > 255}\n"}),
    # (round 38z218) a float sum whose rounding Python 3.12 compensates, within the exercise's tolerance either way
    "ex08 swap_seconds as a sum over its copies": ("ex08_swap_or_recompute", {
        "costs-work": "def swap_seconds(num_tokens, block_size, num_layers, chunk_bytes_per_token, bandwidth, latency):\n"
                      "    chunks = 4 * num_layers * math.ceil(num_tokens / block_size)\n"
                      "    each = latency + block_size * chunk_bytes_per_token / bandwidth\n"
                      "    return sum(each for _ in range(chunks))\n\n\n"
                      "def recompute_seconds(num_tokens, num_params, num_layers, d_model, flops):\n"
                      "    return (2 * num_params * num_tokens + 2 * num_layers * d_model * num_tokens ** 2) / flops\n"}),
    # beside round 38z119's conversion past int32's range: floats converted to integers they fit
    "ex00 with each row's index a float made an integer again": ("ex00_warmup", {
        "softmax-work": "def softmax_rows(x):\n"
                        "    flat = x.reshape(-1, x.shape[-1])\n"
                        "    rows = torch.arange(flat.shape[0], dtype=torch.float64).floor().long()\n"
                        "    m = flat.amax(-1)[rows]\n"
                        "    e = torch.exp(flat - m[:, None])\n"
                        "    return (e / e.sum(-1, keepdim=True)).reshape(x.shape)\n"}),
    # round 38z91's writes by index, each element once or with one value: no order to depend on
    "ex00 with each row's max written by index, once each, and a mask of the maxima scattered": ("ex00_warmup", {
        "softmax-work": "def softmax_rows(x):\n"
                        "    flat = x.reshape(-1, x.shape[-1])\n"
                        "    m = torch.empty(flat.shape[0], dtype=x.dtype)\n"
                        "    m[torch.arange(flat.shape[0])] = flat.amax(-1)\n"
                        "    top = torch.zeros(flat.shape, dtype=torch.bool)\n"
                        "    top.scatter_(1, flat.argmax(-1, keepdim=True).expand(-1, 2), True)\n"
                        "    e = torch.exp(flat - m[:, None])\n"
                        "    return (e / e.sum(-1, keepdim=True)).reshape(x.shape)\n"}),
    # a tile with no visible score skipped by asking for its max with .item(): one value per tile, on calls of a few
    # inputs too (the memory rule lets a call hold its floor whatever its inputs; reading that much is no matrix)
    "ex02 skips a tile whose every score is hidden by reading its max with item": ("ex02_online_softmax", {
        "tiled-work": "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
                      "    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]\n"
                      "    out = torch.zeros(n_q, d, device=q.device)\n"
                      "    for r0 in range(0, n_q, block_m):\n"
                      "        q_i = q[r0:r0 + block_m].float() / math.sqrt(d)\n"
                      "        rows = q_i.shape[0]\n"
                      "        m = torch.full((rows,), -math.inf)\n"
                      "        l, acc = torch.zeros(rows), torch.zeros(rows, d)\n"
                      "        for c0 in range(0, n_k, block_n):\n"
                      "            s = q_i @ k[c0:c0 + block_n].float().T\n"
                      "            if causal:\n"
                      "                s = s.masked_fill(torch.arange(c0, c0 + s.shape[1])[None, :]\n"
                      "                                  > torch.arange(r0, r0 + rows)[:, None] + (n_k - n_q), -math.inf)\n"
                      "            if s.amax().item() == -math.inf:\n"
                      "                continue  # every score of this tile is hidden: nothing to fold in\n"
                      "            m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())\n"
                      "        out[r0:r0 + rows] = acc / l[:, None]\n"
                      "    return out.to(q.dtype)\n"}),
    "ex04b predict keeps the last of equal reports": ("ex04b_performance_lab", {
        "predict-work": "def predict(reports):\n    best = None\n    for i, r in enumerate(reports):\n"
                        "        if r['arch'] == 90 and r['spill_bytes'] == 0 and (best is None or (r['block_m'], "
                        "r['block_n']) >= (reports[best]['block_m'], reports[best]['block_n'])):\n"
                        "            best = i\n    return best\n"}),
    # the exact sum over positions where the solution has the n^2 form: the exercise accepts either, within 0.1%
    "ex08 recompute_seconds by the exact sum over positions": ("ex08_swap_or_recompute", {
        "costs-work": "def swap_seconds(num_tokens, block_size, num_layers, chunk_bytes_per_token, bandwidth, latency):\n"
                      "    copies = 4 * num_layers * math.ceil(num_tokens / block_size)\n"
                      "    return copies * (latency + block_size * chunk_bytes_per_token / bandwidth)\n"
                      "def recompute_seconds(num_tokens, num_params, num_layers, d_model, flops):\n"
                      "    attention = sum(4 * num_layers * d_model * (p + 1) for p in range(num_tokens))\n"
                      "    return (2 * num_params * num_tokens + attention) / flops\n"}),
    "ex02 with buffers sized by the tile and a bool mask of every query-key pair": ("ex02_online_softmax", {
        "tiled-work": "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
                      "    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]\n"
                      "    hidden = torch.ones(n_q, n_k, dtype=torch.bool).triu(n_k - n_q + 1) if causal else None\n"
                      "    out = torch.empty(n_q, d)\n"
                      "    for r0 in range(0, n_q, block_m):\n"
                      "        qi = q[r0:r0 + block_m].float() * d ** -0.5\n"
                      "        state = (torch.full((len(qi),), -math.inf), torch.zeros(len(qi)), "
                      "torch.zeros(len(qi), d))\n"
                      "        s = torch.empty(block_m, block_n)\n"
                      "        for c0 in range(0, n_k, block_n):\n"
                      "            kj = k[c0:c0 + block_n].float()\n"
                      "            t = s[:len(qi), :len(kj)]\n"
                      "            torch.matmul(qi, kj.T, out=t)\n"
                      "            if causal:\n"
                      "                t = t.masked_fill(hidden[r0:r0 + block_m, c0:c0 + block_n], -math.inf)\n"
                      "            state = online_softmax_update(*state, t, v[c0:c0 + block_n].float())\n"
                      "        out[r0:r0 + len(qi)] = state[2] / state[1][:, None]\n"
                      "    return out.to(q.dtype)\n"}),
    "ex02 with a float32 copy of every input made first": ("ex02_online_softmax", {
        "tiled-work": "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
                      "    qf, kf, vf = q.float(), k.float(), v.float()\n"
                      "    n_q, n_k, d = qf.shape[0], kf.shape[0], qf.shape[1]\n"
                      "    out = torch.zeros(n_q, d)\n"
                      "    for r0 in range(0, n_q, block_m):\n"
                      "        qi = qf[r0:r0 + block_m] / math.sqrt(d)\n"
                      "        m, l = torch.full((len(qi),), -math.inf), torch.zeros(len(qi))\n"
                      "        acc = torch.zeros(len(qi), d)\n"
                      "        for c0 in range(0, n_k, block_n):\n"
                      "            s = qi @ kf[c0:c0 + block_n].T\n"
                      "            if causal:\n"
                      "                rows = torch.arange(r0, r0 + len(qi))[:, None]\n"
                      "                later = torch.arange(c0, c0 + s.shape[1]) > rows + n_k - n_q\n"
                      "                s = s.masked_fill(later, -math.inf)\n"
                      "            m_new = torch.maximum(m, s.amax(-1))\n"
                      "            p, alpha = torch.exp(s - m_new[:, None]), torch.exp(m - m_new)\n"
                      "            l, acc = l * alpha + p.sum(-1), acc * alpha[:, None] + p @ vf[c0:c0 + block_n]\n"
                      "            m = m_new\n"
                      "        out[r0:r0 + len(qi)] = acc / l[:, None]\n"
                      "    return out.to(q.dtype)\n"}),
    # round 38z148: positions kept by (n, device), made by an earlier graded call, beside a bool(vis.any()) that
    # skips a hidden tile, sent to review as a tensor no op of the call made
    "ex02 positions kept from an earlier call, a hidden tile skipped by bool(any())": ("ex02_online_softmax", {
        "tiled-work": "_ARANGE_CACHE = {}\n"
                      "\n"
                      "\n"
                      "def _positions(n, device):\n"
                      "    key = (n, device)\n"
                      "    if key not in _ARANGE_CACHE:\n"
                      "        _ARANGE_CACHE[key] = torch.arange(n, device=device)\n"
                      "    return _ARANGE_CACHE[key]\n"
                      "\n"
                      "\n"
                      "def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n"
                      "    \"\"\"Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time.\"\"\"\n"
                      "    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]\n"
                      "    out = torch.zeros(n_q, d, device=q.device)\n"
                      "    dev = q.device\n"
                      "    qpos, kpos = _positions(n_q, dev), _positions(n_k, dev)\n"
                      "    for i in range(0, n_q, block_m):\n"
                      "        qi = q[i:i + block_m].float() / math.sqrt(d)\n"
                      "        r = qi.shape[0]\n"
                      "        m = torch.full((r,), float(\"-inf\"), device=dev)\n"
                      "        l = torch.zeros(r, device=dev)\n"
                      "        acc = torch.zeros(r, d, device=dev)\n"
                      "        for j in range(0, n_k, block_n):\n"
                      "            s = qi @ k[j:j + block_n].float().T\n"
                      "            if causal:\n"
                      "                vis = kpos[j:j + block_n][None, :] <= qpos[i:i + r][:, None] + (n_k - n_q)\n"
                      "                if not bool(vis.any()):\n"
                      "                    continue\n"
                      "                s = s.masked_fill(~vis, float(\"-inf\"))\n"
                      "            m, l, acc = online_softmax_update(m, l, acc, s, v[j:j + block_n].float())\n"
                      "        out[i:i + r] = acc / l[:, None]\n"
                      "    return out.to(q.dtype)\n"}),
    # round 38z205: the same cache filled by the notebook's own checks before the graded calls, a hidden tile skipped
    # by hide.all(): alive before any input was drawn, it holds none of them
    "ex02 positions kept from before the graded calls, a hidden tile skipped by hide.all()": ("ex02_online_softmax", {
        "tiled-work": '_POSITIONS: dict[tuple[int, torch.device], torch.Tensor] = {}\n'
                      '\n'
                      '\n'
                      'def positions(n: int, device: torch.device) -> torch.Tensor:\n'
                      '    """arange(n) on ``device``, cached per (n, device) so the loop does not rebuild it."""\n'
                      '    key = (n, device)\n'
                      '    if key not in _POSITIONS:\n'
                      '        _POSITIONS[key] = torch.arange(n, device=device)\n'
                      '    return _POSITIONS[key]\n'
                      '\n'
                      '\n'
                      'def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n'
                      '    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""\n'
                      '    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]\n'
                      '    out = torch.zeros(n_q, d, device=q.device)\n'
                      '    scale = 1.0 / math.sqrt(d)\n'
                      '    q_pos, k_pos = positions(n_q, q.device), positions(n_k, q.device)\n'
                      '    for i in range(0, n_q, block_m):\n'
                      '        qi = q[i:i + block_m].float()\n'
                      '        rows = qi.shape[0]\n'
                      '        m = torch.full((rows,), float("-inf"), device=q.device)\n'
                      '        l = torch.zeros(rows, device=q.device)\n'
                      '        acc = torch.zeros(rows, d, device=q.device)\n'
                      '        for j in range(0, n_k, block_n):\n'
                      '            s = (qi @ k[j:j + block_n].float().T) * scale\n'
                      '            if causal:\n'
                      '                hide = k_pos[j:j + block_n][None, :] > q_pos[i:i + block_m][:, None] + (n_k - n_q)\n'
                      '                if hide.all():\n'
                      '                    continue   # nothing visible in this tile\n'
                      '                s = s.masked_fill(hide, float("-inf"))\n'
                      '            m, l, acc = online_softmax_update(m, l, acc, s, v[j:j + block_n].float())\n'
                      '        out[i:i + rows] = acc / l[:, None]\n'
                      '    return out.to(q.dtype)\n'
                      '\n\nfor _n in range(1, 200):  # (made before any input is drawn)\n'
                      "    positions(_n, torch.device('cpu'))\n"}),
    # round 38z214: a tile's positions made from Python's range, a tile skipped by hidden.all().item(): a few values
    # read carry too little of the inputs for a tensor made in Python to hold their scores
    "ex02 tile positions made by torch.tensor(list(range(...))), a hidden tile by .all().item()": ("ex02_online_softmax", {
        "tiled-work": 'import numpy as np\n'
                      '\n'
                      '\n'
                      'def tile_hidden(r0: int, rows: int, c0: int, cols: int, shift: int) -> torch.Tensor:\n'
                      '    """Bool (rows, cols) mask of the keys hidden from each row, built from the tile\'s global positions."""\n'
                      '    r = torch.tensor(list(range(r0, r0 + rows)))\n'
                      '    c = torch.tensor(list(range(c0, c0 + cols)))\n'
                      '    return c[None, :] > r[:, None] + shift\n'
                      '\n'
                      '\n'
                      'def tiled_attention(q, k, v, causal=False, block_m=16, block_n=16):\n'
                      '    """Exact attention of (n_q, d) queries over (n_k, d) keys and values, one tile at a time."""\n'
                      '    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]\n'
                      '    out = torch.zeros(n_q, d, device=q.device)\n'
                      '    for r0 in range(0, n_q, block_m):\n'
                      '        qt = q[r0:r0 + block_m].to(torch.float32)\n'
                      '        rows = qt.shape[0]\n'
                      '        m = torch.full((rows,), -math.inf)\n'
                      '        l = torch.zeros(rows)\n'
                      '        acc = torch.zeros(rows, d)\n'
                      '        for c0 in range(0, n_k, block_n):\n'
                      '            kt = k[c0:c0 + block_n].to(torch.float32)\n'
                      '            vt = v[c0:c0 + block_n].to(torch.float32)\n'
                      '            s = qt @ kt.T / math.sqrt(d)\n'
                      '            if causal:\n'
                      '                hidden = tile_hidden(r0, rows, c0, kt.shape[0], n_k - n_q)\n'
                      '                if hidden.all().item():\n'
                      '                    break\n'
                      '                s = s.masked_fill(hidden, -math.inf)\n'
                      '            m, l, acc = online_softmax_update(m, l, acc, s, vt)\n'
                      '        out[r0:r0 + rows] = acc / l[:, None]\n'
                      '    return out.to(q.dtype)\n'}),
    # round 38z165: copy-on-write's (src, dst) as a NamedTuple of the learner's, a tuple as the statement asks, and
    # a method of the learner's named is_shared (the reviewer's notebook's cell)
    "ex07 the copy as a NamedTuple, a method named is_shared": ("ex07_copy_on_write", {
        "manager-work": "from dataclasses import dataclass\n"
                        "from typing import NamedTuple\n"
                        "\n"
                        "\n"
                        "class CowCopy(NamedTuple):\n"
                        "    \"\"\"The copy the caller must make before writing: K/V of block ``src`` into block ``dst``.\"\"\"\n"
                        "    src: int\n"
                        "    dst: int\n"
                        "\n"
                        "\n"
                        "@dataclass(frozen=True)\n"
                        "class Position:\n"
                        "    \"\"\"Where the next token of a sequence lands relative to its blocks.\"\"\"\n"
                        "    index: int\n"
                        "    block_size: int\n"
                        "\n"
                        "    @property\n"
                        "    def at_boundary(self) -> bool:\n"
                        "        return self.index % self.block_size == 0\n"
                        "\n"
                        "\n"
                        "class MiniManager:\n"
                        "    \"\"\"Block tables over a shared pool, with fork and copy-on-write.\"\"\"\n"
                        "\n"
                        "    def __init__(self, num_blocks: int, block_size: int):\n"
                        "        self.allocator = BlockAllocator(num_blocks)\n"
                        "        self.block_size = block_size\n"
                        "        self.tables: dict[str, BlockTable] = {}\n"
                        "\n"
                        "    def __repr__(self) -> str:\n"
                        "        seqs = \", \".join(f\"{s}:{t.block_ids}\" for s, t in self.tables.items())\n"
                        "        return f\"MiniManager(block_size={self.block_size}, {seqs})\"\n"
                        "\n"
                        "    def __len__(self) -> int:\n"
                        "        return len(self.tables)\n"
                        "\n"
                        "    def add(self, seq: str, num_tokens: int) -> BlockTable:\n"
                        "        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))\n"
                        "        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)\n"
                        "        return self.tables[seq]\n"
                        "\n"
                        "    def free(self, seq: str) -> None:\n"
                        "        for block in self.tables.pop(seq).block_ids:\n"
                        "            self.allocator.free(block)\n"
                        "\n"
                        "    def is_shared(self, block: int) -> bool:\n"
                        "        return self.allocator.refcount(block) > 1\n"
                        "\n"
                        "    def next_position(self, seq: str) -> Position:\n"
                        "        return Position(self.tables[seq].num_tokens, self.block_size)\n"
                        "\n"
                        "    def fork(self, parent: str, child: str) -> BlockTable:\n"
                        "        \"\"\"Create ``child`` sharing every block of ``parent``; return the child's table.\"\"\"\n"
                        "        source = self.tables[parent]\n"
                        "        for block in source.block_ids:\n"
                        "            self.allocator.incref(block)\n"
                        "        self.tables[child] = BlockTable(list(source.block_ids), source.num_tokens, self.block_size)\n"
                        "        return self.tables[child]\n"
                        "\n"
                        "    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:\n"
                        "        \"\"\"Reserve the next token's slot of ``seq``; return ``(slot, copy)`` as described above.\"\"\"\n"
                        "        table = self.tables[seq]\n"
                        "        pos = self.next_position(seq)\n"
                        "        copy = None\n"
                        "        if pos.at_boundary:\n"
                        "            table.block_ids.append(self.allocator.allocate())\n"
                        "        elif self.is_shared(table.block_ids[-1]):\n"
                        "            fresh = self.allocator.allocate()        # may raise: nothing changed yet\n"
                        "            old = table.block_ids[-1]\n"
                        "            self.allocator.free(old)                 # give up our share only\n"
                        "            table.block_ids[-1] = fresh\n"
                        "            copy = CowCopy(old, fresh)\n"
                        "        table.num_tokens = pos.index + 1\n"
                        "        return table.slot(pos.index), copy\n"}),
    "a class with __call__, its repr by __class__.__name__, %config retina": ("ex00_warmup", {
        "softmax-work": '%config InlineBackend.figure_format = "retina"\n'
                        "class Softmax:\n    def __call__(self, x):\n        return " + _ROWS + "\n"
                        "    def __repr__(self):\n        return f'{self.__class__.__name__}()'\n"
                        "softmax_rows = Softmax()\n"}),
}


# The outside reviews' notebooks (tests/review_rounds.py), each a row of its table.
OUTSIDE = {*ROUND_38I, *ROUND_38J, *ROUND_38K, *ROUND_38L, *ROUND_38M, *ROUND_38N, *ROUND_38O, *ROUND_38P, *ROUND_38Q,
           *ROUND_38R, *ROUND_38S, *ROUND_38T, *ROUND_38U, *ROUND_38V, *ROUND_38W, *ROUND_38X, *ROUND_38Y, *ROUND_38Z,
           *ROUND_38Z2, *ROUND_38Z3, *ROUND_38Z4, *ROUND_38Z5, *ROUND_38Z6, *ROUND_38Z7, *ROUND_38Z8, *ROUND_38Z9,
           *ROUND_38Z10, *ROUND_38Z11, *ROUND_38Z12, *ROUND_38Z13, *ROUND_38Z14, *ROUND_38Z15, *ROUND_38Z16,
           *ROUND_38Z17, *ROUND_38Z17_AUDIT, *ROUND_38Z18, *ROUND_38Z18_AUDIT, *ROUND_38Z19, *ROUND_38Z20,
           *ROUND_38Z20_AUDIT, *ROUND_38Z21, *ROUND_38Z22, *ROUND_38Z23, *ROUND_38Z25, *ROUND_38Z26, *ROUND_38Z26_AUDIT,
           *ROUND_38Z29, *MASKS_IN_FLOATS, *ROUND_38Z30, *ROUND_38Z31, *ROUND_38Z32, *ROUND_38Z36,
           *ROUNDS_38Z33_36_HONEST, *ROUND_38Z44}
for _label, (_table, _exercise, _cell, _source) in ROUND_38I.items():
    (ATTACKS if _table == "ATTACKS" else HONEST)[_label] = (_exercise, {_cell: _source.lstrip("\n")})
for _label, (_table, _exercise, _cells) in {**ROUND_38J, **ROUND_38K, **ROUND_38L, **ROUND_38M, **ROUND_38N, **ROUND_38O,
                                           **ROUND_38P, **ROUND_38Q, **ROUND_38R, **ROUND_38S, **ROUND_38T, **ROUND_38U,
                                           **ROUND_38V, **ROUND_38W, **ROUND_38X, **ROUND_38Y, **ROUND_38Z, **ROUND_38Z2,
                                           **ROUND_38Z3, **ROUND_38Z4, **ROUND_38Z5, **ROUND_38Z6, **ROUND_38Z7, **ROUND_38Z8, **ROUND_38Z9, **ROUND_38Z10, **ROUND_38Z11,
                                           **ROUND_38Z12, **ROUND_38Z13, **ROUND_38Z14,
                                           **ROUND_38Z15, **ROUND_38Z16, **ROUND_38Z17, **ROUND_38Z17_AUDIT,
                                           **ROUND_38Z18, **ROUND_38Z18_AUDIT, **ROUND_38Z19,
                                           **ROUND_38Z20, **ROUND_38Z20_AUDIT, **ROUND_38Z21,
                                           **ROUND_38Z22, **ROUND_38Z23, **ROUND_38Z25, **ROUND_38Z26,
                                           **ROUND_38Z26_AUDIT, **ROUND_38Z29, **MASKS_IN_FLOATS, **ROUND_38Z30, **ROUND_38Z31, **ROUND_38Z32,
                                           **ROUND_38Z36, **ROUNDS_38Z33_36_HONEST, **ROUND_38Z44}.items():
    (ATTACKS if _table == "ATTACKS" else HONEST)[_label] = (_exercise, {k: v.lstrip("\n") for k, v in _cells.items()})


def grading_copy_only(exercise: str) -> None:
    """Make this process import ``pagedlab`` as the exercise's grading kernel does: every module the grading copy
    leaves out unimportable and gone from its package, every placeholder empty (:func:`grading_copy`)."""
    import sys
    import types

    held, _ = copy_of(exercise)
    for name in sorted(n for n, source in held.items() if source is not None):
        importlib.import_module(name)  # (a module the copy holds is importable however the test was selected)
    for name in [m for m in sys.modules if m == "pagedlab" or m.startswith("pagedlab.")]:
        if name.startswith("pagedlab.grading") or held.get(name, "") is not None:
            continue  # the grader itself (it runs outside the kernel), and the modules the copy holds
        parent, _, last = name.rpartition(".")
        if parent in sys.modules and hasattr(sys.modules[parent], last):
            delattr(sys.modules[parent], last)
        sys.modules[name] = None
    # each placeholder empty, whether or not this process had imported the module (a package's with no submodule
    # but the placeholders under it)
    for name in sorted(n for n, source in held.items() if source is None):
        placeholder = sys.modules[name] = types.ModuleType(name)
        if any(other.startswith(name + ".") for other in held):
            placeholder.__path__ = []
        parent, _, last = name.rpartition(".")
        if sys.modules.get(parent) is not None:
            setattr(sys.modules[parent], last, placeholder)


def _seeds(label: str, table: dict, proofs: bool) -> tuple[int, ...]:
    """Every seed under ``--proofs``; else the row's own one (the i-th row of ``table`` on the quick run's seed i mod 2,
    :data:`QUICK_SEEDS`): each row is
    still graded, each seed still draws some rows, in a fifth of the calls."""
    return SEEDS if proofs else (QUICK_SEEDS[list(table).index(label) % len(QUICK_SEEDS)],)


def _graded_as_in_the_kernel(exercise: str, replace: dict[str, str], seeds=SEEDS, first: int | None = None):
    import multiprocessing

    def child(conn):
        # A forked child that runs a parallel op waits forever on the parent's OpenMP pool, once this process
        # has used it (an earlier test's big tensor op): one thread, as in a grading kernel of its own.
        torch.set_num_threads(1)
        # the test process's own objects (every row, every loaded module) left out of the collector's walks: the
        # grader collects once per notebook, which in a kernel of its own walks the notebook's objects alone
        gc.freeze()
        grading_copy_only(exercise)
        # in a folder of its own, as a grading kernel runs in its notebook's: what a row writes stays out of the tree
        os.chdir(tempfile.mkdtemp(prefix="row-"))
        conn.send(run_graded(exercise, notebook_bytes(ROOT / "solutions" / f"{exercise}.ipynb", replace), seeds,
                             first=first))

    warm(exercise)  # (read here, before the fork: each child inherits it instead of reading it again)
    merged_cases(exercise, tuple(seeds))  # (as the grader makes them, outside the kernel)
    parent, end = multiprocessing.Pipe(duplex=False)
    process = multiprocessing.get_context("fork").Process(target=child, args=(end,))
    process.start()
    end.close()
    got = parent.recv() if parent.poll(120) else None
    process.join(5)
    return got


def _tripped(got) -> list[str]:
    """What tripped in ``got``'s calls (not pytest's import hook, which runs here at an import during a call and in
    no grading kernel)."""
    return [t for t in got.tripped if not any(f"package {p} " in t for p in ("_pytest", "pluggy"))]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The rows of the attack and honest tables: under ``--proofs`` all of them; in the quick run each row written
    here (one for each class the grader was built against) and a twelfth of the outside reviews' (the i-th row of a
    table where i is a multiple of 12: another one as the tables grow), so that ``make test`` keeps its time."""
    for name, table in (("attack", ATTACKS), ("honest", HONEST)):
        if name in metafunc.fixturenames:
            quick = not metafunc.config.getoption("--proofs")
            metafunc.parametrize(name, [label for i, label in enumerate(table)
                                        if not quick or label not in OUTSIDE or i % 12 == 0])


def test_every_class_of_attack_fails_or_needs_review_on_every_seed(attack, proofs):
    exercise, replace = ATTACKS[attack]
    seeds = _seeds(attack, ATTACKS, proofs)
    # (the quick run makes the first quarter of its seed's calls, and the rest only where those all agree)
    got = _graded_as_in_the_kernel(exercise, replace, seeds, None if proofs else first_cases(exercise, seeds[0]))
    if not proofs and got is not None and not _tripped(got) and \
            all(d is None for d in differences(exercise, solution(exercise, run_seeds(proofs)), got, seeds).values()):
        got = _graded_as_in_the_kernel(exercise, replace, seeds)
    assert got is not None, "the child process died (a fail in the grader: here, a test that proves nothing)"
    if _tripped(got):
        return  # a tripwire or a refused Triton result, in the calls of every seed at once: review or fail
    passed = [seed for seed, d in differences(exercise, solution(exercise, run_seeds(proofs)), got, seeds).items()
              if d is None]
    assert not passed, f"{attack!r} passes on seeds {passed} with no tripwire"


def test_honest_learners_pass_on_every_seed(honest, proofs):
    exercise, replace = HONEST[honest]
    seeds = _seeds(honest, HONEST, proofs)
    # (this process has no IPython shell to run a magic: the kernel runs it, and the review reads it; the quick run
    # makes the first quarter of its seed's calls, where a refusal or a tripwire of the honest code's is seen at its
    # first call, and ``--proofs`` every call on every seed)
    got = _graded_as_in_the_kernel(exercise, {k: "\n".join(line for line in v.splitlines() if not line.startswith("%"))
                                              for k, v in replace.items()}, seeds,
                                   None if proofs else first_cases(exercise, seeds[0]))
    assert got is not None and not got.cell_errors and not got.tripped, got
    assert all(d is None for d in differences(exercise, solution(exercise, run_seeds(proofs)), got, seeds).values())
    p = pristine(exercise)
    reasons = prepare(notebook_bytes(ROOT / "solutions" / f"{exercise}.ipynb", replace), p, Limits())[2]
    # (the rest of the notebook is the solution: only those cells may be flagged, as copies of it or of the library)
    assert not [r for r in reasons if not ("published solution" in r or "course library" in r)
                or any(repr(k) in r for k in replace)], reasons


@pytest.mark.parametrize("label, named", [("ex02 stretch's attention pasted from ex02's published solution",
                                            "'ex02_online_softmax:"),
                                           ("ex03's softmax pasted from the course's primer kernels",
                                            "course library's pagedlab.kernels.primer.")])
def test_a_copy_of_another_exercises_solution_or_of_any_library_module_is_flagged(label, named, monkeypatch):
    """(Round 38n) The published solutions are all in reach, and so is every module of the library, named by the
    spec or not: a copy of ex02's solution in ex02 stretch, and of ``kernels/primer.py`` in ex03, are flagged. Broken
    on purpose (the other solutions and the unnamed modules left out), neither is."""
    from pagedlab.grading import similarity

    _, exercise, replace = ROUND_38N_COPIES[label]
    data = notebook_bytes(ROOT / "solutions" / f"{exercise}.ipynb", {k: v.lstrip("\n") for k, v in replace.items()})
    assert any(named in r for r in prepare(data, pristine(exercise), Limits())[2])
    p = dataclasses.replace(pristine(exercise), others={})
    monkeypatch.setattr(similarity, "_library_modules", lambda: ())
    similarity._course_code.cache_clear()
    try:
        assert not any(named in r for r in prepare(data, p, Limits())[2])
    finally:
        similarity._course_code.cache_clear()


@pytest.mark.parametrize("label", {**ROUND_38Z13_COPIES, **ROUND_38Z14_COPIES})
def test_a_copy_of_the_solution_in_disguise_goes_to_review(label):
    """(Rounds 38z13 and 38z14) Copies of the published solution whose code was rewritten (helpers pulled out, guards
    turned round, methods written as torch's functions, lines swapped and operators respelled, keyword arguments made
    positional) but whose names or sentences were kept: each gets a reason naming the published solution
    (``test_similarity.py`` breaks each rule on purpose)."""
    _, exercise, replace = {**ROUND_38Z13_COPIES, **ROUND_38Z14_COPIES}[label]
    data = notebook_bytes(ROOT / "exercises" / f"{exercise}.ipynb", {k: v.lstrip("\n") for k, v in replace.items()})
    reasons = prepare(data, pristine(exercise), Limits())[2]
    assert any("published solution" in r for r in reasons), reasons


def test_untiled_attention_passes_without_the_memory_rule(monkeypatch, proofs):
    """The design, broken on purpose: without ex02's memory rule (``Spec.memory``) its results are the solution's,
    so the whole score matrix passes."""
    exercise, replace = ATTACKS["ex02's tiled_attention computed untiled, the whole score matrix"]
    monkeypatch.setitem(SPECS, exercise, dataclasses.replace(SPECS[exercise], memory=None))
    got = _graded_as_in_the_kernel(exercise, replace, run_seeds(proofs))
    assert got is not None and not got.tripped
    assert all(d is None for d in differences(exercise, solution(exercise, run_seeds(proofs)), got).values())


def test_a_call_stopped_at_its_time_bound_leaves_the_next_calls_to_themselves():
    """(Round 38z199) ex02 stretch's ``key_tile_counts`` that loops over the key tiles stops at its call's time bound
    (a billion keys), after the memory rule began to follow that call: the next call, the update after a tile that
    hides a row, is a call of its own, whose state the driver's steps made; nothing of it is refused, and the
    notebook fails at the bound, as the statement says."""
    loop = ("def key_tile_counts(r0, rows, n_q, n_k, block_n):\n"
            "    n_full = n_visit = 0\n"
            "    for t in range(-(-n_k // block_n)):\n"
            "        n_visit += t * block_n <= r0 + rows - 1 + n_k - n_q\n"
            "        n_full += min((t + 1) * block_n, n_k) - 1 <= r0 + n_k - n_q\n"
            "    return n_full, n_visit\n")
    got = _graded_as_in_the_kernel("ex02_stretch_causal_tile_skipping", {"bounds-work": loop}, SEEDS[:1])
    assert got is not None and not _tripped(got), got
    raised = [o for calls in got.outcomes.values() for steps in calls for o in steps
              if o is not None and o[0] == "raised"]
    assert raised and raised[0][1][0] == "TimeoutError", raised


def test_the_check_module_passes_where_it_is_importable(proofs):
    """The design, broken on purpose: with ``exercise_checks`` importable and not wired (this process imports all of
    pagedlab), ``predict = ex04b._right`` passes; as the grading kernel imports pagedlab it does not (above)."""
    exercise, replace = ATTACKS["the check module's own answer"]
    got = run_graded(exercise, notebook_bytes(ROOT / "solutions" / f"{exercise}.ipynb", replace), run_seeds(proofs),
                     kept=[])
    assert all(d is None for d in differences(exercise, solution(exercise, run_seeds(proofs)), got).values()) \
        and not got.tripped
