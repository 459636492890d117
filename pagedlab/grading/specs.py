"""What each exercise grades: the functions or classes the learner writes, and a generator of fresh inputs.

A spec's :meth:`Spec.cases` turns a seed (drawn by the grader, never shown to a learner) into graded calls: each
case is a list of steps in the notebook's namespace, ``("do", statement)`` or ``("get", expression)``, whose
tensor inputs are written ``T(i)`` (the i-th array of the case set). The same cases run after the solution's
cells and after the learner's (:mod:`pagedlab.grading.calls`); every step's outcome (the value of a ``get``, or
the name of the exception a step raised) must agree. Stateful exercises (the allocator, copy-on-write, the prefix
cache, the scheduler step) are cases of many steps: a random sequence of operations whose results and state are
compared step by step.

A graded call names only what the learner writes, what the exercise's pristine setup cells define, ``T(i)`` and
the spec's ``given`` constants (resolved from ``pagedlab`` by the driver, so a learner's own ``LLAMA_7B`` or
``BlockManager`` never stands in for them). ``tripwires`` are the functions that compute the exercise's answer: the
grading copy of ``pagedlab`` leaves their modules out where the setup allows (:mod:`pagedlab.grading.sandbox`), and
the driver wraps those still there; a call to one from a graded call, by whatever path, sends the notebook to review
(:mod:`pagedlab.grading.harness`).
"""

from __future__ import annotations

import ast
import itertools
import random
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from pagedlab.grading.checked import add_checked, published

Step = tuple[str, str]  # ("do", statement) or ("get", expression)
_ARRAY = re.compile(r"\bT\((\d+)\)")  # an array a call reads (:meth:`Cases.array`)


class Cases:
    """Graded calls under construction: a random source, the arrays the calls read, the cases."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.np = np.random.default_rng(seed)
        self.arrays: list[np.ndarray] = []
        self.cases: list[dict] = []

        self.drawn: list[tuple] = []  # each array's (shape, scale, dtype)

    def array(self, *shape: int, scale: float = 1.0, dtype: str = "float32") -> str:
        """``T(i)`` for a fresh normal array of ``shape`` times ``scale``."""
        self.arrays.append((self.np.standard_normal(shape) * scale).astype(dtype))
        self.drawn.append((shape, scale, dtype))
        return f"T({len(self.arrays) - 1})"

    def again(self) -> None:
        """The first call that reads arrays, made twice more with other values of the same shapes and dtypes: an
        answer is a function of its inputs' values, so one kept by shape and dtype gives an earlier call's result
        (round 38z204: ex01's ``naive_attention`` by shapes, dtype and ``causal``, which no two calls shared)."""
        # (each array of 8 values or more: a softmax of one score is 1 whatever its value)
        calls = [case for case in self.cases if len(case["steps"]) == 1 and case["steps"][0][0] == "get"
                 and _ARRAY.search(case["steps"][0][1])
                 and all(self.arrays[int(i)].size >= 8 for i in _ARRAY.findall(case["steps"][0][1]))]
        if not calls:
            return
        case = calls[0]  # (the first: a plain call, where the last ones test the stated bounds and errors)

        def redrawn(array: re.Match) -> str:
            shape, scale, dtype = self.drawn[int(array.group(1))]
            return self.array(*shape, scale=scale, dtype=dtype)

        for k in (1, 2):
            self.call(f"{case['label']}, the same shapes with other values ({k} of 2)",
                      _ARRAY.sub(redrawn, case["steps"][0][1]))

    def add(self, label: str, steps: list[Step]) -> None:
        self.cases.append({"label": label, "steps": [list(s) for s in steps]})

    def call(self, label: str, expression: str) -> None:
        self.add(label, [("get", expression)])


def get(expression: str) -> Step:
    return ("get", expression)


def do(statement: str) -> Step:
    return ("do", statement)


@dataclass(frozen=True)
class Spec:
    """One exercise's graded calls.

    Attributes:
        graded: the names the learner writes (functions or classes), as today's solution names them.
        build: fills a :class:`Cases` from its random source.
        tripwires: what computes the answer: ``"module:attr"`` (a function, a method ``Class.name``, or a class,
            every method of it) or a group of torch's (``"torch-softmax"``, ``"torch-attention"``: the Python entry
            points and their aten ops). A call from a graded call is recorded: needs review.
        given: ``{name: "module:attr"}``, constants and helpers the graded calls name, resolved by the driver (never
            from the learner's namespace); a given helper must call no tripwire (the solution's run would say so).
        device: ``T(i)`` is put on ``pagedlab.device.DEVICE`` (the Triton exercises).
        triton: a graded result (each floating-point tensor of it) counts only if a ``@triton.jit`` kernel defined
            in the notebook wrote it (:class:`pagedlab.grading.harness.Launches`); else the notebook fails.
        full_precision: every ``tl.dot`` of float32 operands the notebook's kernel runs asks for float32 products
            (``input_precision="ieee"``), as the exercise states; else the notebook fails. Triton's interpreter
            computes a ``tl.dot`` in float32 whatever it is asked, a GPU in TF32 by default (about 1e-3 off).
        raises: the exceptions the exercise asks for (class names): the only ones a solution's graded call may
            raise (any other is a graded call that tests nothing, a bug of the spec's).
        atol, rtol: tolerance for floating-point results against the solution's (NaN never passes). An integer
            result must be an integer (a NumPy integer is one), compared exactly.
        rounding: ``{dtype: (atol, rtol)}`` for results of that dtype, in place of ``atol, rtol``; a float16 or
            bfloat16 result not named is allowed at least one unit in the last place (a result computed in float32
            and rounded once, as the exercises state).
        checked: the exercise's notebook, where its own check over its stated input space (``check-space``) is
            graded too: each call it makes of a graded function is one more graded call
            (:mod:`pagedlab.grading.checked`). Empty: the spec's cases alone (a class's methods, a Triton kernel's
            launches in the interpreter, which would take too long).
        memory: no floating-point tensor made while a graded function runs may hold more than this many times the
            elements of its largest floating-point argument, or of its tiles where it names them (``block_m``,
            ``block_n``), else ``harness.MEMORY_FLOOR`` elements (tiled attention: one tile of scores at a time,
            never the ``n_q x n_k`` matrix, small or large); a larger one is refused, and the notebook fails. None:
            no rule.
    """

    graded: tuple[str, ...]
    build: Callable[[Cases], None]
    tripwires: tuple[str, ...] = ()
    given: dict[str, str] = field(default_factory=dict)
    device: bool = False
    triton: bool = False
    full_precision: bool = False
    raises: tuple[str, ...] = ()
    atol: float = 1e-5
    rtol: float = 1e-4
    rounding: dict[str, tuple[float, float]] | None = None
    memory: float | None = None
    checked: str = ""

    def copy_rule(self, setup: list[str]) -> tuple[list[str], set[str]]:
        """What the exercise's grading copy of ``pagedlab`` is built from (:func:`pagedlab.grading.sandbox.grading_copy`):
        the setup cells' sources with an import of each given constant's module, and the answer modules (the
        tripwires' modules and every exercise check)."""
        imports = {f"import {t.partition(':')[0]}" for t in self.given.values()} | (
            {"import pagedlab.device"} if self.device else set())
        answers = {"pagedlab.exercise_checks"} | {t.partition(":")[0] for t in self.tripwires if t.startswith("pagedlab")}
        return list(setup) + sorted(imports), answers

    def cases(self, seed: int, solution: bytes | None = None) -> Cases:
        """The graded calls of ``seed``, with those of the exercise's own check run on ``solution`` (a notebook's
        bytes; None: the checkout's published one; empty: none) where the spec is :attr:`checked`."""
        c = Cases(seed)
        self.build(c)
        c.again()
        if self.checked:
            add_checked(c, published(self.checked) if solution is None else solution, self.graded, self.given,
                        self.raises)
        return c


def _ex00(c: Cases) -> None:
    for i in range(4):
        c.call(f"softmax_rows of a {i + 1}-row matrix",
               f"softmax_rows({c.array(i + 1, c.rng.randint(1, 9))})")
    c.call("softmax_rows of scores near 1e4", f"softmax_rows({c.array(3, 6, scale=1e4)})")
    n = c.rng.randint(301, 1000)  # rows of "a few hundred" scores and more, of magnitude 1e4
    c.call(f"softmax_rows of 2 rows of {n} scores near 1e4", f"softmax_rows({c.array(2, n, scale=1e4)})")
    c.call("softmax_rows of a 4-d float64 tensor", f"softmax_rows({c.array(2, 3, 2, 5, scale=50, dtype='float64')})")
    # x of shape (..., n) need not be contiguous: a transposed view (round 38z16: an answer by .view passed)
    c.call("softmax_rows of a transposed 4-d view", f"softmax_rows({c.array(2, 4, 3, 5, scale=3.0)}.transpose(1, 2))")
    # "any magnitude" in float64 is past float32's range (3.4e38): an answer computed in float32 gives NaN there
    c.call("softmax_rows of float64 scores near 1e300", f"softmax_rows({c.array(2, 6, scale=1e300, dtype='float64')})")
    rows, cols = c.rng.randint(1, 4), c.rng.randint(2, 9)  # one shape, three inputs: a cache by shape is wrong twice
    for k in range(3):
        c.call(f"softmax_rows of a {rows}x{cols} matrix, input {k + 1} of 3", f"softmax_rows({c.array(rows, cols)})")
    # each result a tensor of its own: the first read after a second call of the same shape (an output buffer kept
    # per shape and reused passed, its first result overwritten by the second)
    c.add(f"softmax_rows of two {rows}x{cols} matrices, the first result read after the second call", [
        do(f"y1 = softmax_rows({c.array(rows, cols)})"), do(f"y2 = softmax_rows({c.array(rows, cols)})"), get("y1")])
    # the rest of the stated input space: one row of shape (n,), rows of large negative scores, float16 in and out,
    # and x left as it was
    c.call("softmax_rows of one row of shape (n,)", f"softmax_rows({c.array(c.rng.randint(2, 9))})")
    # (..., n) with a leading dimension of 0: a batch of no rows (round 38z21: rows softmaxed one by one and stacked
    # raised there), a new tensor there too (round 38z23: x itself passed)
    c.add("softmax_rows of a batch of no rows, a new tensor", [do(f"x = torch.empty(0, {c.rng.randint(2, 9)})"),
                                                              get("softmax_rows(x)"), get("softmax_rows(x) is x")])
    # n = 1 under each stated number of leading dimensions, none, one or three (round 38z25: a row of shape (n,) made
    # 2-d and squeezed back came back 0-d for n = 1, and only (n,) with n >= 2 was drawn)
    c.call("softmax_rows of one score, shape (1,)", f"softmax_rows({c.array(1)})")
    c.call("softmax_rows of rows of one score", f"softmax_rows({c.array(c.rng.randint(1, 4), 1)})")
    c.call("softmax_rows of rows of one score under three leading dimensions",
           f"softmax_rows({c.array(2, c.rng.randint(1, 3), 2, 1)})")
    # ties, as stated: a row of equal scores, and a row whose maximum is there twice (in float32 and in float16)
    cols, first, second = c.rng.randint(3, 8), *c.rng.sample(range(3), 2)
    for dtype in ("float32", "float16"):
        c.add(f"softmax_rows of tied scores in {dtype}", [
            do(f"x = {c.array(3, cols, dtype=dtype)}; x[0] = {c.rng.randint(-3, 3)}; "
               f"x[1, {first}] = x[1, {second}] = x[1].max() + 1"), get("softmax_rows(x)")])
    c.call("softmax_rows of scores near -1e4", f"softmax_rows({c.array(2, 7, scale=10.0)} - 10000)")
    c.call("softmax_rows of float16 scores", f"softmax_rows({c.array(3, 6, scale=4.0, dtype='float16')})")
    c.call("softmax_rows of bfloat16 scores", f"softmax_rows({c.array(3, 6, scale=4.0)}.to(torch.bfloat16))")
    # x left as it was, in every stated dtype: x.to(torch.float64) of a float64 x is x itself, so an answer computed in
    # float64 in place overwrote only float64 inputs (passed 5 of 5 seeds where x was float32 alone)
    for dtype in ("float32", "float64", "float16", "bfloat16"):
        x = c.array(2, 5, scale=5.0, dtype="float32" if dtype == "bfloat16" else dtype)
        c.add(f"softmax_rows leaves a {dtype} x unchanged", [do(f"x = {x}.to(torch.{dtype})"), do("y = softmax_rows(x)"),
                                                             get("x")])


def _below_minus_1e30(function: str, c: Cases, lead: tuple[int, ...], rest: str) -> str:
    """A causal call whose every score lies below -1e30 and is exact in float32 (integers times 2**50, d = 16:
    1/sqrt(d) is a power of two), so any correct order of the sums gives the same softmax; a hidden key filled with
    -1e9, or -1e30 (round 38z20), instead of -inf would outweigh every visible one."""
    n = c.rng.randint(2, 12)
    k = f"({c.array(*lead, n, 16)}.abs().round() + 1) * 2.0**50"
    return f"{function}(torch.full({(*lead, n, 16)}, -2.0**50), {k}, {c.array(*lead, n, 16)}{rest})"


def _ex01(c: Cases) -> None:
    for _ in range(4):
        n_q = c.rng.randint(1, 9)
        c.call("causal_mask", f"causal_mask({n_q}, {n_q + c.rng.randint(0, 5)})")
    c.call("causal_mask of one query", f"causal_mask(1, {c.rng.randint(1, 9)})")
    # n_q and n_k have no stated bound: past the 1,024- to 8,192-square triangles built once and sliced (round 38z20:
    # nanoGPT's 1,024 passed, every other call stopping near 12 keys), in the mask and in the attention
    n_q = c.rng.randint(1, 3)
    c.call("causal_mask of a long context", f"causal_mask({n_q}, {c.rng.randint(8193, 12288)})")
    n_k, reps = c.rng.randint(90, 100), c.rng.randint(92, 120)  # (8,280 keys at least; few distinct: a small job)
    k, v = (f"{c.array(1, 1, n_k, 4)}.repeat(1, 1, {reps}, 1)" for _ in range(2))
    c.call("naive_attention of a long context", f"naive_attention({c.array(1, 1, n_q, 4)}, {k}, {v}, causal=True)")
    for k, causal in enumerate((False, True, True)):
        n_q = c.rng.randint(1, 12)
        n_k = n_q + (c.rng.randint(0, 6) if causal else c.rng.randint(-n_q + 1, 6))
        # head dims of 1 to 80, as stated: one not a power of two, the largest, one drawn (a scale by bit shifts shows)
        d = (c.rng.choice((3, 5, 12, 24, 40, 48)), 80, c.rng.randint(1, 80))[k]
        q, k, v = c.array(2, 3, n_q, d), c.array(2, 3, n_k, d), c.array(2, 3, n_k, d)
        c.call(f"naive_attention causal={causal}", f"naive_attention({q}, {k}, {v}, causal={causal})")
    q, k, v = (c.array(1, 2, 12, 8) for _ in range(3))
    c.call("naive_attention of huge scores", f"naive_attention({q} * 1000, {k}, {v}, causal=True)")
    q, k, v = (c.array(1, 2, 16, 8, dtype="float16") for _ in range(3))
    c.call("naive_attention in float16", f"naive_attention({q}, {k}, {v}, causal=True)")
    q, k, v = (f"{c.array(1, 2, 12, 8, scale=scale)}.to(torch.bfloat16)" for scale in (3.0, 1.0, 1.0))
    c.call("naive_attention in bfloat16", f"naive_attention({q}, {k}, {v}, causal=True)")
    c.call("naive_attention of scores below -1e30", _below_minus_1e30("naive_attention", c, (1, 2), ", causal=True"))
    # float16 inputs whose scores pass float16's 65504: small integers times 2**7, d = 16 (exact in float32)
    n = c.rng.randint(4, 12)
    q, k = (f"({c.array(1, 2, n, 16)}.mul(2).round().clamp(-3, 3) * 128).half()" for _ in range(2))
    c.call("naive_attention in float16 of scores past 65504",
           f"naive_attention({q}, {k}, {c.array(1, 2, n, 16, dtype='float16')}, causal=True)")
    # views of (batch, n, heads, d) projections, the usual layout: "any number of leading dimensions" includes
    # strided ones (round 38z16: an answer by .view passed on contiguous inputs only)
    n_q = c.rng.randint(2, 9)
    n_k = n_q + c.rng.randint(0, 4)
    q, k, v = (f"{c.array(2, n, 3, 8)}.transpose(1, 2)" for n in (n_q, n_k, n_k))
    c.call("naive_attention of (batch, n, heads, d) views", f"naive_attention({q}, {k}, {v}, causal=True)")
    for lead in ((3,), (), (2, 1, 2)):  # two, three and five dimensions: the text allows any number of leading ones
        n = c.rng.randint(2, 9)
        q, k, v = (c.array(*lead, n, 8) for _ in range(3))
        c.call(f"naive_attention of {len(lead) + 2}-d inputs", f"naive_attention({q}, {k}, {v}, causal=True)")
    for causal in (True, False):  # (q.float() of a float32 q is q itself; round 38z18: q scaled in place on the
        n = c.rng.randint(2, 9)     # path without the mask passed, where only causal calls read the inputs back)
        q, k, v = (c.array(1, 2, n, 8) for _ in range(3))
        c.add(f"naive_attention leaves q, k and v unchanged, causal={causal}", [
            do(f"q, k, v = {q}, {k}, {v}"), do(f"out = naive_attention(q, k, v, causal={causal})"),
            get("q"), get("k"), get("v")])


def _ex02(c: Cases) -> None:
    for _ in range(2):
        rows, d, cols = c.rng.randint(1, 6), c.rng.randint(1, 5), c.rng.randint(1, 7)
        c.add("online_softmax_update over two tiles", [
            do(f"state = (torch.full(({rows},), -math.inf), torch.zeros({rows}), torch.zeros({rows}, {d}))"),
            do(f"state = online_softmax_update(*state, {c.array(rows, cols)}, {c.array(cols, d)})"), get("state"),
            do(f"state = online_softmax_update(*state, {c.array(rows, cols, scale=3.0)} + 2, {c.array(cols, d)})"),
            get("state")])
    rows, d, cols = c.rng.randint(1, 6), c.rng.randint(1, 5), c.rng.randint(1, 7)  # a tile equal to an earlier
    c.add("online_softmax_update of a tile equal to the first", [          # one: its max ties the running max
        do(f"state = (torch.full(({rows},), -math.inf), torch.zeros({rows}), torch.zeros({rows}, {d}))"),
        do(f"s, v = {c.array(rows, cols)}, {c.array(cols, d)}"), do("state = online_softmax_update(*state, s, v)"),
        get("state"), do("state = online_softmax_update(*state, s, v)"), get("state")])
    for causal in (False, False, True, True):
        n_q = c.rng.randint(1, 40)
        n_k = n_q + c.rng.randint(0, 20) if causal else c.rng.randint(1, 40)
        bm, bn = c.rng.choice((4, 8, 16)), c.rng.choice((2, 5, 8, 16))
        c.call(f"tiled_attention {n_q}x{n_k} causal={causal}",
               f"tiled_attention({c.array(n_q, 8)}, {c.array(n_k, 8)}, {c.array(n_k, 8)}, causal={causal}, "
               f"block_m={bm}, block_n={bn})")
    # scores in the thousands, each exact in float32 in any order of operations: integers times 64, d = 16, so that
    # 1 / sqrt(d) is a power of two (round 38z83: random ones times 1000 at d = 8 failed an honest learner who scaled
    # q before the product, by 1.7e-4, on 2 seeds of 400)
    c.call("tiled_attention of huge scores",
           f"tiled_attention({c.array(24, 16, scale=2.0)}.round() * 64, {c.array(24, 16, scale=2.0)}.round(), "
           f"{c.array(24, 16)}, causal=True, block_m=8, block_n=8)")
    n = c.rng.randint(40, 64)  # float16 in, float16 out, computed in float32: a float16 accumulator drifts
    c.call("tiled_attention in float16",
           f"tiled_attention({c.array(n, 16, scale=3.0, dtype='float16')}, {c.array(n, 16, dtype='float16')}, "
           f"{c.array(n, 16, scale=10.0, dtype='float16')}, causal=True, block_m=8, block_n=8)")
    causal, n = c.rng.random() < 0.5, c.rng.randint(128, 160)  # tiles, not the n x n scores (Spec.memory)
    c.call("tiled_attention of 128 keys or more, one tile of scores at a time",
           f"tiled_attention({c.array(n, 4)}, {c.array(n, 4)}, {c.array(n, 4)}, causal={causal}, block_m=8, "
           f"block_n=8)")
    # A strip of scores (a query tile against every key, or every query against a key tile) is no tile either: with
    # d = 2 and tiles of 16 each strip outgrows four times the largest input and four tiles (round 38z17: a query
    # tile's whole row of scores, softmaxed at once, passed where d was 4 or more times the tile's rows)
    n_q = c.rng.randint(96, 128)
    n_k = n_q + c.rng.randint(0, 16)
    c.call(f"tiled_attention of {n_q}x{n_k}, d = 2, tiles of 16: no strip of scores",
           f"tiled_attention({c.array(n_q, 2)}, {c.array(n_k, 2)}, {c.array(n_k, 2)}, causal={c.rng.random() < 0.5}, "
           f"block_m=16, block_n=16)")
    # Tiles of block_m x block_n as given, one much larger than the other: a learner who uses one size for both
    # makes tiles 32 times the stated one (round 38z21: key tiles block_m wide passed, every call's tiles near square)
    for bm, bn in ((64, 2), (2, 64)):
        n_q = c.rng.randint(96, 128)
        n_k = n_q + c.rng.randint(0, 16)
        c.call(f"tiled_attention of {n_q}x{n_k}, d = 1, tiles of {bm}x{bn}",
               f"tiled_attention({c.array(n_q, 1)}, {c.array(n_k, 1)}, {c.array(n_k, 1)}, "
               f"causal={c.rng.random() < 0.5}, block_m={bm}, block_n={bn})")
    for d, bm, bn in ((1, 2, 2), (2, 4, 4)):  # small, with d and tiles smaller still: a matrix of the scores
        n_q, n_k = c.rng.randint(10, 24), c.rng.randint(10, 24)  # outgrows both even here (Spec.memory)
        c.call(f"tiled_attention of {n_q}x{n_k}, d = {d}, no matrix of scores even when small",
               f"tiled_attention({c.array(n_q, d)}, {c.array(n_k, d)}, {c.array(n_k, d)}, causal=False, "
               f"block_m={bm}, block_n={bn})")
    n = c.rng.randint(12, 24)  # bfloat16 too, as stated: a large q, scores a few units apart
    c.call("tiled_attention in bfloat16",
           f"tiled_attention({c.array(n, 12, scale=30.0)}.to(torch.bfloat16), {c.array(n, 12)}.to(torch.bfloat16), "
           f"{c.array(n, 12, scale=10.0)}.to(torch.bfloat16), causal=True, block_m=4, block_n=8)")
    rows, cols, d = c.rng.randint(2, 6), c.rng.randint(1, 7), c.rng.randint(1, 5)
    hidden = c.rng.randrange(rows)  # a later tile that hides a row (its scores all -inf) the first one showed
    c.add("online_softmax_update of a tile that hides a row", [
        do(f"state = (torch.full(({rows},), -math.inf), torch.zeros({rows}), torch.zeros({rows}, {d}))"),
        do(f"state = online_softmax_update(*state, {c.array(rows, cols)}, {c.array(cols, d)})"), get("state"),
        do(f"s = {c.array(rows, cols, scale=3.0)}; s[{hidden}] = -math.inf"),
        do(f"state = online_softmax_update(*state, s, {c.array(cols, d)})"), get("state")])
    n_q = c.rng.randint(2, 20)  # q, k and v left as they were (a float32 q scaled in place passed 5 of 5 seeds)
    n_k = n_q + c.rng.randint(0, 8)
    c.add("tiled_attention leaves q, k and v unchanged", [
        do(f"q, k, v = {c.array(n_q, 8)}, {c.array(n_k, 8)}, {c.array(n_k, 8)}"),
        do("out = tiled_attention(q, k, v, causal=True, block_m=4, block_n=4)"), get("q"), get("k"), get("v")])
    n = c.rng.randint(24, 40)  # d = 12: 1/sqrt(d) is inexact in float16, and large scores carry its rounding
    c.call("tiled_attention in float16, d = 12",
           f"tiled_attention({c.array(n, 12, scale=8.0, dtype='float16')}, {c.array(n, 12, dtype='float16')}, "
           f"{c.array(n, 12, scale=10.0, dtype='float16')}, causal=True, block_m=8, block_n=8)")
    # "huge scores", every visible one below -1e30, over several tiles: a hidden key filled with -1e9 or -1e30 instead
    # of -inf, or a running max that starts at 0 or at -1e9, passed 15 of 15 seeds without it (audit F2)
    c.call("tiled_attention of scores below -1e30",
           _below_minus_1e30("tiled_attention", c, (), f", causal=True, block_m={c.rng.choice((2, 4))}, block_n=4"))


def _ex02_stretch(c: Cases) -> None:
    r = c.rng
    for k in range(16):  # the last four with more queries than keys: rows that see no key
        n_q = r.randint(1, 40)
        n_k = max(1, n_q - r.randint(1, 20)) if k >= 12 else n_q + r.randint(0, 20)
        # the stated tiles, 1, 3 and 40 (past the inputs) among them: a count by shifts is right for powers of two
        bm = (1, 3, 40, 8)[k % 4] if k < 8 else r.choice((1, 3, 4, 8, 16, 40))
        bn = (3, 40, 1, 16)[k % 4] if k < 8 else r.choice((1, 2, 3, 4, 8, 16, 40))
        r0 = r.randrange(0, n_q, bm)
        c.call("key_tile_counts", f"key_tile_counts({r0}, {min(bm, n_q - r0)}, {n_q}, {n_k}, {bn})")
    for _ in range(3):  # a first query tile whose last row sees no key (n_visit is 0, not negative)
        n_q = r.randint(24, 40)
        c.call("key_tile_counts of rows that see no key", f"key_tile_counts(0, 16, {n_q}, {r.randint(1, n_q - 17)}, "
                                                         f"{r.choice((4, 8))})")
    for _ in range(3):  # the last row sees every key, and the last key tile is shorter: it is full
        bn = r.choice((4, 8, 16))
        n_k = bn * r.randint(1, 4) + r.randint(1, bn - 1)
        n_q = r.randint(1, n_k)
        c.call("key_tile_counts of the last row", f"key_tile_counts({n_q - 1}, 1, {n_q}, {n_k}, {bn})")
    n = 10**7 + r.randint(0, 999)  # from the indices alone: an n x n mask of this size does not fit anywhere
    c.call("key_tile_counts of ten million keys", f"key_tile_counts({64 * r.randint(0, 1000)}, 64, {n}, {n}, 64)")
    # a billion keys in tiles of one, the last query tile: "no loop over keys" is no loop over key tiles either, here
    # a billion of them (round 38z30: a loop over the key tiles up to the first hidden one passed, as the call above
    # stops it after a thousand); a few integer operations take microseconds, the bound is 5 s
    n = 10**9 + r.randint(0, 999)
    c.call("key_tile_counts of a billion keys in tiles of one, the last query tile",
           f"within(5.0, key_tile_counts, {n - 64}, 64, {n}, {n}, 1)")
    for _ in range(2):
        rows, cols, d = r.randint(2, 6), r.randint(1, 7), r.randint(1, 5)
        hidden = r.randrange(rows)  # this row's scores are all -inf in the first tile: a row that sees no key yet
        c.add("online_softmax_update after a tile that hides a row", [
            do(f"state = (torch.full(({rows},), -math.inf), torch.zeros({rows}), torch.zeros({rows}, {d}))"),
            do(f"s = {c.array(rows, cols)}; s[{hidden}] = -math.inf"),
            do(f"state = online_softmax_update(*state, s, {c.array(cols, d)})"), get("state"),
            get("s"),  # (only read, as stated: round 38z19's update that wrote into the caller's tile passed)
            do(f"state = online_softmax_update(*state, {c.array(rows, cols, scale=3.0)}, {c.array(cols, d)})"),
            get("state")])
    for k in range(5):  # the last two with rows that see no key: their output is 0
        n_q = r.randint(2, 30)
        n_k = max(1, n_q - r.randint(1, 12)) if k >= 3 else n_q + r.randint(0, 12)
        bm, bn = r.choice((4, 8, 16)), r.choice((2, 4, 8))
        c.call(f"causal_tiled_attention {n_q}x{n_k}",
               f"causal_tiled_attention({c.array(n_q, 8)}, {c.array(n_k, 8)}, {c.array(n_k, 8)}, "
               f"block_m={bm}, block_n={bn})")
    for d, bm, bn in ((1, 2, 2), (2, 4, 4)):  # small, with d and tiles smaller still (as ex02's)
        n_q = r.randint(10, 24)
        n_k = n_q + r.randint(0, 8)
        c.call(f"causal_tiled_attention of {n_q}x{n_k}, d = {d}, no matrix of scores even when small",
               f"causal_tiled_attention({c.array(n_q, d)}, {c.array(n_k, d)}, {c.array(n_k, d)}, block_m={bm}, "
               f"block_n={bn})")
    n = r.randint(128, 160)  # tiles, not the n x n scores (Spec.memory)
    c.call("causal_tiled_attention of 128 keys or more, one tile of scores at a time",
           f"causal_tiled_attention({c.array(n, 4)}, {c.array(n, 4)}, {c.array(n, 4)}, block_m=8, block_n=8)")
    n_q = r.randint(96, 128)  # no strip of scores either (as ex02's)
    n_k = n_q + r.randint(0, 16)
    c.call(f"causal_tiled_attention of {n_q}x{n_k}, d = 2, tiles of 16: no strip of scores",
           f"causal_tiled_attention({c.array(n_q, 2)}, {c.array(n_k, 2)}, {c.array(n_k, 2)}, block_m=16, "
           f"block_n=16)")
    n_q = r.randint(4, 16)  # scores of magnitude 1e3, exact in float32: integers, d = 16; tiles of 1 and 3
    n_k = n_q + r.randint(0, 8)
    q, k = (f"({c.array(n, 16, scale=10.0)}.round() * 4)" for n in (n_q, n_k))
    c.call("causal_tiled_attention of scores of magnitude 1e3",
           f"causal_tiled_attention({q}, {k}, {c.array(n_k, 16)}, block_m=3, block_n=1)")
    for dtype in ("float16", "bfloat16"):  # in and out in q's dtype, computed in float32; d = 24: 1/sqrt(d) inexact
        n_q = r.randint(2, 12)
        n_k = n_q + r.randint(0, 12)
        q, k, v = (f"{c.array(n, 24, scale=scale)}.to(torch.{dtype})" for n, scale in ((n_q, 8.0), (n_k, 1.0), (n_k, 10.0)))
        c.call(f"causal_tiled_attention in {dtype}", f"causal_tiled_attention({q}, {k}, {v}, block_m=4, block_n=8)")
    n_q = r.randint(2, 20)  # q, k and v left as they were (a float32 query tile scaled in place passed 5 of 5 seeds)
    n_k = n_q + r.randint(0, 8)
    c.add("causal_tiled_attention leaves q, k and v unchanged", [
        do(f"q, k, v = {c.array(n_q, 8)}, {c.array(n_k, 8)}, {c.array(n_k, 8)}"),
        do("out = causal_tiled_attention(q, k, v, block_m=4, block_n=4)"), get("q"), get("k"), get("v")])
    # The skipping itself (the exercise's point, its check 5's first half): the matrix products of a call make no
    # more elements than the key tiles that hold a visible key, query tile by query tile (round 38z15: an answer that
    # visits and masks every tile passed on its results)
    from pagedlab.exercise_checks.ex02_stretch import product_budget, tile_census

    for _ in range(2):
        n_q, bm, bn = r.randint(16, 40), r.choice((4, 5, 8)), r.choice((4, 7, 8))
        n_k = n_q + r.randint(-8, 8)
        c.call(f"causal_tiled_attention {n_q}x{n_k} in tiles of {bm} x {bn}: products of visible tiles only",
               f"product_elements(lambda: causal_tiled_attention({c.array(n_q, 8)}, {c.array(n_k, 8)}, "
               f"{c.array(n_k, 8)}, block_m={bm}, block_n={bn})) <= {product_budget(n_q, n_k, bm, bn, 8)}")
    # ... and its second half: a mask only on the tiles that straddle the diagonal ("the first n_full need no mask";
    # audit E4: an answer that masked every visited tile passed 15 of 15 seeds, as did round 38z24's; round 38z29:
    # one that also masked the tile before the diagonal passed a bound of two masks a tile), one operation a tile,
    # counted by the tensors it combines (no value read), in a grid with more than twice as many tiles visited
    while True:
        n_q, bm, bn = r.randint(24, 40), r.choice((4, 5, 8)), r.choice((4, 7, 8))
        n_k = n_q + r.randint(0, 8)
        visited, straddling = tile_census(n_q, n_k, bm, bn)
        if visited > 2 * straddling:
            break
    c.call(f"causal_tiled_attention {n_q}x{n_k} in tiles of {bm} x {bn}: masks on the straddling tiles only",
           f"masking_ops(lambda: causal_tiled_attention({c.array(n_q, 8)}, {c.array(n_k, 8)}, {c.array(n_k, 8)}, "
           f"block_m={bm}, block_n={bn})) <= {straddling}")
    # every visible score below -1e30, over several tiles: a running max that starts at -1e9 (or 0) instead of -inf
    # passed 5 of 5 seeds without it (audit F2)
    c.call("causal_tiled_attention of scores below -1e30",
           _below_minus_1e30("causal_tiled_attention", c, (), f", block_m={r.choice((2, 4))}, block_n=4"))


def _ex03(c: Cases) -> None:
    for _ in range(3):
        n, block = c.rng.randint(1, 300), c.rng.choice((16, 32, 64))
        c.call(f"vector_add of {n}", f"vector_add({c.array(n)}, {c.array(n)}, {block})")
    block = c.rng.choice((16, 32, 64))  # lengths one short of a block and one past it, as stated
    for n in (block - 1, block + 1):
        c.call(f"vector_add of {n} in blocks of {block}", f"vector_add({c.array(n)}, {c.array(n)}, {block})")
    for _ in range(2):  # x and y with different strides: a kernel that swaps them reads the wrong elements
        n, stride = c.rng.randint(20, 200), c.rng.randint(3, 5)
        c.call(f"vector_add of strided vectors of {n}",
               f"vector_add({c.array(n, stride)}[:, 1], {c.array(2 * n)}[::2], 32)")
    for _ in range(3):
        rows, cols = c.rng.randint(1, 6), c.rng.randint(1, 70)
        c.call(f"softmax of {rows}x{cols}", f"softmax({c.array(rows, cols)})")
    c.call("softmax of strided rows", f"softmax({c.array(5, 64)}[:, :{c.rng.randint(20, 50)}])")
    c.call("softmax of large scores", f"softmax({c.array(4, 40, scale=1000.0)})")
    # every score of a row far below 0, as stated (all about -200; near -1000): a running max that starts at 0 or at
    # another finite floor instead of -inf underflows every exponential
    c.call("softmax of scores far below 0", f"softmax(-{c.array(4, 40, scale=3.0)}.abs() - 200)")
    c.call("softmax of scores near -1000", f"softmax({c.array(2, 24, scale=3.0)} - 1000)")
    c.call("softmax in tiles of 8", f"softmax({c.array(3, c.rng.randint(20, 90))}, 8)")
    # rows of exactly k tiles (a loop that keeps a masked tail for the end stops a tile short) and of one column
    c.call("softmax of rows of whole tiles", f"softmax({c.array(c.rng.randint(1, 4), 16 * c.rng.randint(1, 4))})")
    c.call("softmax of one column", f"softmax({c.array(c.rng.randint(1, 5), 1)})")
    # the kernel launched as the statement launches it, in blocks shorter than the row (round 38z18: a launcher that
    # widened BLOCK to the row, and a kernel of one block, passed every call made through the launcher)
    rows, cols, block = c.rng.randint(2, 4), c.rng.randint(40, 90), c.rng.choice((8, 16))
    c.add(f"softmax_kernel launched over rows of {cols} in blocks of {block}", [
        # (one step, its input drawn in it: a graded result is the kernel's of its own step, from that step's inputs)
        get(f"(lambda x: (softmax_kernel[({rows},)](x, out := torch.empty_like(x), {cols}, x.stride(0), out.stride(0), "
            f"BLOCK={block}), out)[1])({c.array(rows, cols)})")])
    n = c.rng.choice((16, 32, 64))  # a length of whole blocks, and of one element
    c.call(f"vector_add of {n} in blocks of {n}", f"vector_add({c.array(n)}, {c.array(n)}, {n})")
    c.call("vector_add of one element", f"vector_add({c.array(1)}, {c.array(1)}, 16)")
    # the result a new tensor, x and y only read: x.contiguous() of a contiguous x is x itself, and an output made
    # by it overwrites the caller's x with the right values (read back here)
    n, rows, cols = c.rng.randint(2, 40), c.rng.randint(1, 3), c.rng.randint(2, 40)
    c.add("vector_add leaves a contiguous x as it was", [
        do(f"x, y = {c.array(n)}, {c.array(n)}; x0, y0 = x.clone(), y.clone()"), do("out = vector_add(x, y, 16)"),
        do("same = torch.equal(x, x0) and torch.equal(y, y0)"), get("same")])
    c.add("softmax leaves a contiguous x as it was", [
        do(f"x = {c.array(rows, cols)}; x0 = x.clone()"), do("out = softmax(x)"), do("same = torch.equal(x, x0)"),
        get("same")])
    # every score of a row below -1e30, in tiles (round 38z36: a running max started at -10000, and padding loaded
    # as -10000, passed: every row above was above -1200). Exact in float32: a row's maxima give 1 / their count,
    # every other score exp(-1e35 or less) = 0; a finite floor above them gives 0 / 0.
    c.call("softmax of scores below -1e30",
           f"softmax(-1e35 * (1 + {c.array(3, c.rng.randint(20, 70))}.abs().round()), 16)")


def _ex04(c: Cases) -> None:
    r = c.rng
    for k, causal in enumerate((False, False, True, True)):
        # the stated tiles (16, 32, 64: each of BLOCK_M and BLOCK_N 64 once) and head dims (a scale fixed for one
        # of them shows)
        bm = (64, r.choice((16, 32)), r.choice((16, 32, 64)), 16)[k]
        bn = (r.choice((16, 32)), 64, 16, r.choice((16, 32, 64)))[k]
        d = (32, 64, 16, r.choice((32, 64)))[k]
        n_q = (r.randint(1, 40), 1, r.randint(1, 40), r.randint(1, 40))[k]  # (one query over many key tiles)
        # several key tiles, the last one partial (once with one real key): padding keys and the running max both
        # matter; causal, once a whole number of key tiles
        if causal:
            n_k = bn * r.randint(1, 2) if k == 2 else n_q + r.randint(0, 20)
            n_q = min(n_q, n_k)
        else:
            n_k = bn * r.randint(1, 2) + (1 if k == 0 else r.randint(1, bn - 1))
        q, k, v = c.array(n_q, d, scale=3.0), c.array(n_k, d), c.array(n_k, d)
        c.call(f"flash_forward {n_q}x{n_k} causal={causal}",
               f"flash_forward({q}, {k}, {v}, causal={causal}, block_m={bm}, block_n={bn})")
    # not causal: a head dim of 16, tiles of 64 x 64, keys that fill the key tiles exactly
    n_q, n_k = r.randint(1, 70), 64 * r.randint(1, 2)
    c.call(f"flash_forward {n_q}x{n_k}, d = 16, tiles of 64 x 64",
           f"flash_forward({c.array(n_q, 16, scale=3.0)}, {c.array(n_k, 16)}, {c.array(n_k, 16)}, causal=False, "
           f"block_m=64, block_n=64)")
    # causal, one query and one key; causal, one query over key tiles the last of which is one key short
    d, bn = r.choice((16, 32)), r.choice((16, 32))
    c.call("flash_forward of one query and one key, causal",
           f"flash_forward({c.array(1, d, scale=3.0)}, {c.array(1, d)}, {c.array(1, d)}, causal=True, block_m=16, "
           f"block_n={bn})")
    n_k = bn * r.randint(2, 3) - 1
    c.call(f"flash_forward of one query over {n_k} keys, causal",
           f"flash_forward({c.array(1, d, scale=3.0)}, {c.array(n_k, d)}, {c.array(n_k, d)}, causal=True, "
           f"block_m=16, block_n={bn})")
    n = c.rng.randint(33, 60)  # scores in the thousands: exp2 overflows unless the max is subtracted
    c.call("flash_forward of large scores", f"flash_forward({c.array(n, 16, scale=300.0)}, {c.array(n, 16)}, "
                                            f"{c.array(n, 16)}, causal=True, block_m=16, block_n=16)")
    c.call("flash_forward of scores below -1e30",
           _below_minus_1e30("flash_forward", c, (), ", causal=True, block_m=16, block_n=16"))
    # causal, a key tile whose last key the query tile's first row does not see and its second row does (n_k - n_q =
    # t * block_n - 2), that row's query aimed at that key: a mask left off the tiles "entirely visible" by a bound one
    # key too loose passed 4 of 5 seeds (its other calls never put a tile's last key there on those seeds)
    bm, bn = r.choice((16, 32)), r.choice((16, 32))
    n_q = r.randint(2, 40)
    n_k = n_q + bn * r.randint(1, 2) - 2
    c.add(f"flash_forward {n_q}x{n_k} causal, a key tile whose last key only the second row sees", [
        do(f"q, k = {c.array(n_q, 16)}, {c.array(n_k, 16)}; q[0] = 2 * k[{n_k - n_q + 1}]"),
        get(f"flash_forward(q, k, {c.array(n_k, 16)}, causal=True, block_m={bm}, block_n={bn})")])


def _ex04_stretch(c: Cases) -> None:
    for (batch, heads, kv_heads), d in zip(((3, 2, 2), (1, 4, 2), (1, 3, 1)), (16, 32, 64)):  # small: Triton's
        n_q, n_k = c.rng.randint(1, 20), c.rng.randint(1, 36)                              # interpreter, on a CPU
        q, k, v = (c.array(batch, heads, n_q, d, scale=3.0), c.array(batch, kv_heads, n_k, d),
                   c.array(batch, kv_heads, n_k, d))
        c.call(f"gqa_forward {heads}/{kv_heads} heads", f"gqa_forward({q}, {k}, {v})")
    # views of (batch, seq, heads, d) tensors, more than one batch: a batch's stride is then no multiple of the
    # heads' by the head count (a kernel that folds batch and head into one head index is wrong only here)
    batch = c.rng.randint(2, 3)
    q, k, v = c.array(batch, 4, 9, 16), c.array(batch, 2, 11, 16), c.array(batch, 2, 11, 16)
    views = f"*(t.transpose(1, 2).contiguous().transpose(1, 2) for t in ({q}, {k}, {v}))"
    c.call(f"gqa_forward of views, batch {batch}", f"gqa_forward({views})")
    # its output a new contiguous tensor, as stated, whatever the inputs' layout (round 38z19: empty_like(q) passed):
    # small views of (batch, seq, heads, d) tensors
    small = ", ".join(f"{c.array(2, 3, h, 16)}.transpose(1, 2)" for h in (2, 1, 1))
    c.add("gqa_forward of views gives a contiguous output", [do(f"out = gqa_forward({small})"),
                                                              get("out.is_contiguous()")])
    # a new tensor, as stated, also where q is contiguous: q.contiguous() is then q itself, and an output made by
    # it overwrites the caller's q with the right values (read back here, as the other exercises read their inputs)
    n_q, n_k = c.rng.randint(1, 9), c.rng.randint(1, 12)
    c.add("gqa_forward leaves a contiguous q as it was: its output is a new tensor", [
        do(f"q = {c.array(1, 2, n_q, 16)}; q0 = q.clone()"),
        do(f"out = gqa_forward(q, {c.array(1, 1, n_k, 16)}, {c.array(1, 1, n_k, 16)})"),
        do("same = torch.equal(q, q0)"), get("same")])
    # more queries than keys, past the first query tile (16 rows by default): a grid counted from n_k stops short
    n_k = c.rng.randint(1, 16)
    q, k, v = c.array(1, 4, c.rng.randint(17, 30), 16), c.array(1, 2, n_k, 16), c.array(1, 2, n_k, 16)
    c.call("gqa_forward of more queries than keys", f"gqa_forward({q}, {k}, {v})")
    # k and v laid out differently: v the first n_k positions of a longer cache (other head and batch strides)
    n_k, spare = c.rng.randint(5, 20), c.rng.randint(1, 9)
    q, k, v = c.array(2, 4, c.rng.randint(1, 12), 16), c.array(2, 2, n_k, 16), c.array(2, 2, n_k + spare, 16)
    c.call("gqa_forward with v in a longer cache than k", f"gqa_forward({q}, {k}, {v}[:, :, :{n_k}])")
    c.call("gqa_forward with heads that do not divide",
           f"gqa_forward({c.array(1, 6, 8, 16)}, {c.array(1, 4, 8, 16)}, {c.array(1, 4, 8, 16)})")
    c.call("gqa_forward with fewer query heads than K/V heads",  # (stated: it raises too; no launch)
           f"gqa_forward({c.array(1, 2, 8, 16)}, {c.array(1, 4, 8, 16)}, {c.array(1, 4, 8, 16)})")
    # a group of 4 (4 query heads over 1), k and v the two halves of one fused (batch, n_k, 2, d) projection, one
    # query over keys of whole tiles, in tiles of 32 x 16 (the stated tiles besides the default)
    n_k, batch = 16 * c.rng.randint(1, 2), c.rng.randint(1, 3)
    c.call(f"gqa_forward in a group of 4, k and v halves of one fused projection, batch {batch}, tiles of 32 x 16",
           f"gqa_forward({c.array(batch, 1, 4, 16)}.transpose(1, 2), "
           f"*{c.array(batch, n_k, 2, 16)}.transpose(1, 2).split(1, 1), block_m=32, block_n=16)")


_MODELS = ("LLAMA_7B", "LLAMA3_8B", "LLAMA2_70B", "OPT_13B", "SMOLLM2_135M")  # (SmolLM2: a head_dim of 64)
_DTYPES = ("torch.float16", "torch.bfloat16", "torch.float32", "torch.float8_e4m3fn", "torch.float8_e5m2")  # (the
# stated dtypes: fp8 is both of PyTorch's float8 formats, round 38z16)


def _ex05(c: Cases) -> None:
    r = c.rng
    for k in range(5):  # head dims of 1 to 256, powers of two and not (a product by shifts is right for the first)
        head_dim = r.choice((64, 128)) if k % 2 else r.choice((1, 80, 96, 120, 256))
        c.call("kv_cache_bytes", f"kv_cache_bytes({r.randint(1, 96)}, {r.randint(1, 64)}, {head_dim}, "
                                 f"{r.randint(1, 9000)}, {r.randint(1, 64)}, {r.choice((1, 2, 4))})")
    for k, dtype in enumerate(_DTYPES):  # SmolLM2 (a head_dim of 64, GQA) always among them; every stated dtype
        model = "SMOLLM2_135M" if k == 0 else r.choice(_MODELS)
        c.call("kv_bytes_per_token", f"kv_bytes_per_token({model}, {dtype})")
    # made-up models, as stated: one with a single KV head, one with a head dim not a power of two (a table of the
    # presets, or query heads taken for KV heads, shows)
    for kv_heads, head_dim in ((1, r.choice((64, 128))), (r.choice((2, 4, 8)), r.choice((80, 96)))):
        model = (f"ModelShape('drawn-{kv_heads}x{head_dim}', {r.randint(1, 96)}, {kv_heads * r.randint(2, 8)}, {kv_heads}, {head_dim}, "
                 f"{r.choice((2048, 4096, 8192))}, 'drawn')")
        c.call(f"kv_bytes_per_token of a model with {kv_heads} KV head(s) of {head_dim}",
               f"kv_bytes_per_token({model}, {r.choice(_DTYPES)})")
        c.call(f"max_concurrent_requests of a model with {kv_heads} KV head(s) of {head_dim}",
               f"max_concurrent_requests({r.choice((1, 8, 20.5))}, {model}, {r.randint(1, 8192)}, {r.choice(_DTYPES)})")
    for k in range(6):  # two budgets that are not whole GiB: the count is an int all the same
        budget = r.choice((0.5, 20.5, 12.75)) if k < 2 else r.choice((1, 8, 20.5, 80))
        c.call("max_concurrent_requests", f"max_concurrent_requests({budget}, {r.choice(_MODELS)}, "
                                          f"{r.randint(1, 8192)}, {r.choice(_DTYPES)})")
    # exactly n reservations of max_len tokens (SmolLM2-135M in float16: 2 x 30 layers x 3 K/V heads x 64 x 2 bytes =
    # 23,040 bytes a token; a power-of-two max_len makes the budget an exact binary fraction of a GiB)
    n, max_len = r.randint(1, 16), 2 ** r.randint(10, 13)
    c.call("max_concurrent_requests at an exact fit", f"max_concurrent_requests({n * max_len * 23040 / 2**30!r}, "
                                                      f"SMOLLM2_135M, {max_len}, torch.float16)")
    c.call("max_concurrent_requests of no budget", f"max_concurrent_requests(0, {r.choice(_MODELS)}, "
                                                   f"{r.randint(1, 8192)}, {r.choice(_DTYPES)})")
    n, max_len = r.randint(1, 16), 2 ** r.randint(10, 13)  # one byte short of n: n - 1 (no rounding up)
    c.call("max_concurrent_requests one byte short of a fit",
           f"max_concurrent_requests({(n * max_len * 23040 - 1) / 2**30!r}, SMOLLM2_135M, {max_len}, torch.float16)")


def _ex06(c: Cases) -> None:
    r = c.rng
    for _ in range(3):
        n = r.randint(1, 8)
        steps = [do(f"a = SimpleAllocator({n})")]
        for _ in range(40):
            op = r.choice(("allocate()", f"allocate_many({r.randint(0, 4)})", f"incref({r.randint(-2, n + 1)})",
                           f"free({r.randint(-2, n + 1)})", f"free({r.randint(0, n - 1)})"))
            steps += [get(f"a.{op}"), get("a.num_free")]
        c.add(f"SimpleAllocator({n}): 40 random operations", steps)
    # a long life: an allocator that goes wrong after its k-th allocate() is seen for k < 3n; in a pool of the
    # stated 41 to 64 blocks, 64 on every other seed (ids checked against a table of fewer show)
    n = r.choice((64, r.randint(41, 63)))
    # none asked of a pool with every block free: nothing taken (free_list[-n:] with n = 0 is the whole list)
    steps = [do(f"a = SimpleAllocator({n})"), get("a.allocate_many(0)"), get("a.num_free")]
    steps += [get("a.allocate()") for _ in range(n)] + [get("a.allocate()")]
    # the error of a full pool, raised by allocate() and by allocate_many(), says what was asked, free and the size
    steps += [do(f"try:\n    a.{ask}\n    short = None\nexcept OutOfBlocks as e:\n"
                 f"    short = (e.requested, e.free, e.total)") if i % 2 == 0 else get("short")
              for ask in ("allocate()", f"allocate_many({r.randint(1, 3)})") for i in range(2)]
    steps += [get("a.allocate_many(0)"), get("a.num_free")]  # none asked of a pool with none free: nothing, no error
    # every block allocated: a bound checked only above lets -1 or -2 reach the last blocks, one checked only at n
    # lets n + 1 through
    # (and incref of n, the first id past the end, and of n - 1, the last valid one, shared then given back: a
    # bound off by one in incref alone shows)
    steps += [get(op) for op in ("a.free(-1)", "a.incref(-1)", "a.free(-2)", "a.incref(-2)", f"a.free({n})",
                                 f"a.incref({n})", f"a.incref({n + 1})", f"a.free({n + 1})", f"a.incref({n - 1})",
                                 f"a.free({n - 1})", "a.num_free")]
    for block in r.sample(range(n), n):
        steps += [get(f"a.free({block})")]
    steps += [get("a.allocate()") for _ in range(n)] + [get("a.num_free")]
    for block in r.sample(range(n), n // 2):  # shared, freed twice, then once too often: the count must stay 0
        steps += [get(f"a.incref({block})"), get(f"a.free({block})"), get(f"a.free({block})"),
                  get(f"a.free({block})"), get(f"a.incref({block})")]
    # the all-or-nothing error says what was asked for, what was free and the pool's size
    steps += [do(f"try:\n    a.allocate_many({n // 2 + r.randint(1, 4)})\n    short = None\n"
                 f"except OutOfBlocks as e:\n    short = (e.requested, e.free, e.total)"), get("short"),
              get("a.num_free"), get(f"a.allocate_many({n // 2})"), get("a.num_free"), get("a.allocate()")]
    c.add(f"SimpleAllocator({n}): every block twice over", steps)
    # O(1), as stated: incref and free (and allocate) in a pool of a GPU's size take as long as in a pool of 64,
    # timed side by side, call by call, so that a loaded machine slows both (round 38z21: a double free found by
    # `block in self.free_list`, a scan of every free block, passed: no value shows it)
    n = r.randint(300_000, 500_000)
    # (and allocate_many(1): round 38z23's copy of the whole free list at each call passed)
    c.add(f"SimpleAllocator({n}): incref, free, allocate and allocate_many as fast as in a pool of 64 (O(1), as "
          "stated)", [
        do("import time\n"
           f"big, small = SimpleAllocator({n}), SimpleAllocator(64)\n"
           "held = [(big.allocate(), small.allocate()) for _ in range(8)]\n"
           "t_big = t_small = 0.0\n"
           "for i in range(2000):\n"
           "    b, s = held[i % 8]\n"
           "    t0 = time.perf_counter()\n"
           "    big.incref(b); big.free(b); big.free(big.allocate()); big.free(*big.allocate_many(1))\n"
           "    t1 = time.perf_counter()\n"
           "    small.incref(s); small.free(s); small.free(small.allocate()); small.free(*small.allocate_many(1))\n"
           "    t_big, t_small = t_big + t1 - t0, t_small + time.perf_counter() - t1\n"
           "    if t_big > 2 + 20 * t_small:\n"
           "        break\n"
           "constant = t_big <= 20 * t_small + 0.05"), get("constant")])
    # two pools alive at once, their operations interleaved: one pool's state is its own (one small, one of 64)
    n, m = r.randint(2, 6), 64
    steps = [do(f"a = SimpleAllocator({n})"), do(f"b = SimpleAllocator({m})")]
    for _ in range(12):
        pool, size = r.choice((("a", n), ("b", m)))
        steps += [get(f"{pool}.{r.choice(('allocate()', f'free({r.randint(0, size - 1)})'))}"), get(f"{pool}.num_free")]
    c.add(f"SimpleAllocator({n}) and SimpleAllocator({m}) side by side", steps + [get("(a.num_free, b.num_free)")])
    # A failed call changes nothing (free, incref, allocate_many): after each, the blocks it named behave as before
    # and their counts read the same (a count changed before the check and left so passed on 4 to 20 of 20 seeds)
    n = r.randint(2, 8)
    held, spare = r.sample(range(n), 2)
    counts = get(f"[a.ref_count[b] for b in range({n})]")  # (the statement's ref_count[b], list or dict alike)
    steps = [do(f"a = SimpleAllocator({n})"), get(f"a.allocate_many({n + r.randint(1, 3)})"), counts,
             get("a.free(0)"), get("a.incref(0)"), get("a.num_free"), get(f"a.allocate_many({n})"),
             get(f"a.free({spare})"), get(f"a.free({spare})"), counts, get(f"a.incref({spare})"),
             get(f"a.free({spare})"), counts, get("a.num_free"), get(f"a.incref({held})"),
             get(f"a.free({held})"), get(f"a.free({held})"), get(f"a.free({held})"), counts,
             get("a.num_free")]
    c.add(f"SimpleAllocator({n}): each failed call changes nothing", steps)
    c.call("blocks_needed of no tokens", f"blocks_needed(0, {r.randint(1, 32)})")
    bs = r.choice((3, 5, 6, 12, 16))
    c.call("blocks_needed of whole blocks", f"blocks_needed({bs * r.randint(1, 4)}, {bs})")
    for k in range(6):  # block sizes of 1 to 32, powers of two and not: shifts and masks are right only for the first
        bs = r.choice((1, 4, 16, 32)) if k % 2 else r.choice((3, 5, 6, 7, 12, 24))
        c.call("blocks_needed", f"blocks_needed({r.randint(0, 4 * bs + 1)}, {bs})")
        blocks = r.sample(range(100), r.randint(1, 4))  # every position: the first and last of each block
        c.call("slot", f"[slot({blocks}, {bs}, p) for p in range({len(blocks) * bs})]")


_STATE07 = get("sorted((s, list(t.block_ids), t.num_tokens) for s, t in m.tables.items())")


def _ex07(c: Cases) -> None:
    r = c.rng
    for k in range(8):  # small pools: copy-on-write at a block boundary, and running out in the middle of it
        # the stated block sizes, 1 and 16 among them (an answer right for small blocks only shows; a block of one
        # token is full at once, and never copied)
        # and pools of the stated 1 to 12 blocks, 1 and 12 always
        nb, bs = {4: 1, 5: 12}.get(k, r.randint(3, 10)), (2, 3, 1, 16)[k] if k < 4 else r.choice((2, 3, 4))
        steps, live = [do(f"m = MiniManager({nb}, {bs})")], []  # operations name live sequences only
        for i in range(50):
            kind = r.random()
            if kind < 0.25 or not live:
                steps.append(get(f"m.add('s{i}', {r.randint(1, 2 * bs + 1)}).block_ids"))
                live.append(f"s{i}")  # an add that ran out of blocks holds nothing: the guards below skip it
            elif kind < 0.45:
                src = r.choice(live)
                steps.append(get(f"m.fork({src!r}, 's{i}').block_ids if {src!r} in m.tables else None"))
                live.append(f"s{i}")
            elif kind < 0.85:
                name = r.choice(live)
                steps.append(get(f"m.append({name!r}) if {name!r} in m.tables else None"))
            else:
                name = live.pop(r.randrange(len(live)))
                steps.append(do(f"if {name!r} in m.tables:\n    m.free({name!r})"))
            steps += [_STATE07, get(f"[m.allocator.refcount(b) for b in range({nb})]")]
        c.add(f"MiniManager({nb}, {bs}): 50 random operations", steps)
    # forks of forks: a block with three owners, written by each in turn (each write copies until one owner is left)
    bs = r.choice((2, 3, 4))
    c.add(f"MiniManager(8, {bs}): a block with three owners, written by each", [
        do(f"m = MiniManager(8, {bs})"), get(f"m.add('s0', {bs + 1}).block_ids"), get("m.fork('s0', 's1').block_ids"),
        # (what append returns, as stated and as the checks compare it: the tuple (slot, copy), copy the tuple
        # (src, dst); lists, which a pass does not tell apart elsewhere, passed in round 38z20; a tuple of the
        # learner's own, a NamedTuple, is one, round 38z165)
        get("m.fork('s1', 's2').block_ids"), get("(r := m.append('s2'), isinstance(r, tuple), isinstance(r[1], tuple))"),
        get("m.append('s0')"), get("m.append('s1')"),
        _STATE07, get("[m.allocator.refcount(b) for b in range(8)]")])
    # Out of blocks (the pool full), each way append takes one: a copy-on-write of the shared last block, by either
    # owner, and a block boundary; each raises and leaves every table and count as it was, and the owner left
    # alone then writes in place
    bs = r.choice((2, 3, 4))
    c.add(f"MiniManager(2, {bs}): out of blocks in a copy-on-write and at a block boundary", [
        do(f"m = MiniManager(2, {bs})"), get(f"m.add('s0', {bs + 1}).block_ids"), get("m.fork('s0', 's1').block_ids"),
        get("m.append('s1')"), _STATE07, get("[m.allocator.refcount(b) for b in range(2)]"),
        get("m.append('s0')"), _STATE07, get("[m.allocator.refcount(b) for b in range(2)]"), do("m.free('s1')"),
        *[get("m.append('s0')") for _ in range(bs)], _STATE07, get("[m.allocator.refcount(b) for b in range(2)]")])
    # A write inside a private block whose earlier blocks are shared, the pool empty: it must not copy (only the
    # block written decides), where a test of another block would run out.
    bs = r.choice((2, 3))
    c.add(f"MiniManager(3, {bs}): a write inside a private block after shared ones, no block free", [
        do(f"m = MiniManager(3, {bs})"), get(f"m.add('s0', {2 * bs}).block_ids"), get("m.fork('s0', 's1').block_ids"),
        get("m.append('s1')"), get("m.append('s1')"), _STATE07, get("[m.allocator.refcount(b) for b in range(3)]")])
    # a sequence of no tokens yet: forked, then written to (its first block comes with its first token)
    bs = r.choice((2, 3, 4))
    c.add(f"MiniManager(4, {bs}): a sequence of no tokens, forked and appended to", [
        do(f"m = MiniManager(4, {bs})"), get("m.add('e', 0).block_ids"), get("m.fork('e', 'f').block_ids"),
        get("m.append('f')"), get("m.append('e')"), _STATE07, get("[m.allocator.refcount(b) for b in range(4)]")])
    # append changes the table it gave out in place (the instructions' "who owns the table"): at a boundary, and in a
    # copy-on-write, the caller's table says what the manager's does
    bs = r.choice((2, 3, 4))
    c.add(f"MiniManager(4, {bs}): append changes the table in place", [
        do(f"m = MiniManager(4, {bs})"), do(f"t = m.add('s0', {bs})"), do("m.append('s0')"),
        get("(m.tables['s0'] is t, t.num_tokens, list(t.block_ids))"), do("m.fork('s0', 's1')"),
        do("c = m.tables['s1']"), do("m.append('s1')"), get("(m.tables['s1'] is c, c.num_tokens, list(c.block_ids))"),
        # and the table fork returns is the child's own, as stated (round 38z18: the parent's passed, its blocks the
        # same until one of the two appends)
        do("f = m.fork('s0', 's2')"), do("m.append('s2')"), get("(m.tables['s2'] is f, f.num_tokens, list(f.block_ids))")])


def _ex07_stretch(c: Cases) -> None:
    r = c.rng
    # A chained hash, and weak ones under which keys collide, one of them blind to the prefix, one constant (every
    # block collides; hash(None) is not the same in two processes, so None is given a number); blocks of 1 to 4
    # tokens, 1 and 4 always.
    for n, hash_fn in enumerate(("lambda p, t: hash((-7 if p is None else p, t))",
                                 "lambda p, t: hash((-7 if p is None else p, t)) % 5", "lambda p, t: sum(t) % 3",
                                 "lambda p, t: hash(t)", "lambda p, t: 0")):
        bs = (1, 4)[n] if n < 2 else r.choice((1, 2, 3, 4))
        steps = [do(f"cache = MiniPrefixCache({bs}, hash_fn={hash_fn})")]
        prompts = [[r.randrange(3) for _ in range(r.randint(0, 4 * bs + 1))] for _ in range(6)]
        for k, tokens in enumerate(prompts[:2]):  # cached, then asked for with a block in their middle that is not
            tokens += [r.randrange(3) for _ in range(3 * bs + 1 - len(tokens))]
            steps += [do(f"cache.insert({tokens}, {[10 * k + j for j in range(len(tokens) // bs)]})"),
                      get(f"cache.match({tokens[:bs] + [3] * bs + tokens[bs:]})")]
        for i in range(40):
            tokens = r.choice(prompts)[:r.randint(0, 4 * bs + 1)] + [r.randrange(3) for _ in range(r.randint(0, bs))]
            tokens = tokens or [r.randrange(3)]  # (a prompt has a token at least, as stated)
            if r.random() < 0.3:  # a prompt that misses in its middle and would hit after it
                tokens = tokens[:bs] + [3] * bs + tokens[bs:]  # blocks 0 and 2 as cached after blocks 0 and 1
            # the prompt held by the caller, as a server holds it, and read back: keys and match only read it (round
            # 38z17: a match that popped the prompt's last token passed on literals)
            steps += [do(f"prompt = {tokens}"), get("cache.keys(prompt)"), get("cache.match(prompt)")]
            if r.random() < 0.7:
                steps.append(do(f"cache.insert(prompt, {[100 + 10 * i + j for j in range(len(tokens) // bs)]})"))
            steps.append(get("prompt"))
        c.add(f"MiniPrefixCache({bs}): inserts and matches under {hash_fn}", steps)
    # Under a hash blind to the prefix, a block cached second (after other tokens) takes the key that a prompt
    # starting with the same tokens looks up first: it must miss there, having another predecessor.
    bs, x = r.choice((2, 3)), r.randrange(3)
    first = [(x + 1) % 3] * bs + [x] * bs + [r.randrange(3)]
    c.add(f"MiniPrefixCache({bs}): a first block cached after another prefix", [
        do(f"cache = MiniPrefixCache({bs}, hash_fn=lambda p, t: hash(t))"), do(f"cache.insert({first}, [4, 7])"),
        get(f"cache.match({[x] * (2 * bs) + [r.randrange(3)]})"), get(f"cache.match({first})")])
    # Under a hash of the tokens' sum, a second block of other tokens (the same sum) after the same first block takes
    # the cached block's key and parent: only its tokens tell it is not the one cached.
    bs = r.choice((2, 3))
    cached, other = [0] * (bs - 1) + [1], [1] + [0] * (bs - 1)
    c.add(f"MiniPrefixCache({bs}): a later block whose key and parent match, not its tokens", [
        do(f"cache = MiniPrefixCache({bs}, hash_fn=lambda p, t: sum(t) % 3)"),
        do(f"cache.insert({[1] * bs + cached + [1]}, [5, 8])"), get(f"cache.match({[1] * bs + other + [1]})"),
        get(f"cache.match({[1] * bs + cached + [1]})")])  # (the first block's sum, 2 or 3, is not the others' 1)
    # A prompt asked for, then inserted, then asked for again (and a longer one sharing it): what match answers
    # follows the cache as it is now (round 38z15: matches remembered per prompt passed on the seeds where no random
    # prompt came back after its insert)
    bs = r.choice((1, 2, 3, 4))
    tokens = [r.randrange(3) for _ in range(2 * bs + 1)]
    c.add(f"MiniPrefixCache({bs}): a prompt matched, inserted, matched again", [
        do(f"cache = MiniPrefixCache({bs})"), get(f"cache.match({tokens})"),
        do(f"cache.insert({tokens}, {[3 * j + 3 for j in range(len(tokens) // bs)]})"),
        get(f"cache.match({tokens})"), get(f"cache.match({tokens + tokens})")])


def _ex08(c: Cases) -> None:
    r = c.rng
    for k in range(3):  # block sizes of 1 to 256, once one not a power of two (blocks counted by shifts show)
        block_size = (r.choice((3, 12, 24, 100)), r.choice((1, 256)), r.choice((8, 16, 32)))[k]
        args = (f"{r.randint(1, 5000)}, {block_size}, {r.randint(1, 80)}, {r.choice((512, 1024, 4096))}, "
                f"{r.choice((1e10, 2.5e10))}, {r.choice((0.0, 1e-5, 2e-5))}")
        c.call("swap_seconds", f"swap_seconds({args})")
        c.call("recompute_seconds", f"recompute_seconds({r.randint(1, 5000)}, {r.choice((7e9, 1.3e10))}, "
                                    f"{r.randint(1, 80)}, {r.choice((4096, 5120))}, {r.choice((1e14, 3e14))})")
        c.call("crossover_block_size", f"crossover_block_size({r.randint(16, 5000)}, {r.randint(1, 80)}, "
                                       f"{r.choice((512, 4096))}, 2.5e10, {r.choice((1e-5, 2e-5))}, "
                                       f"{r.choice((1e-3, 0.05, 0.5, 3.0))})")
    # no tokens (nothing to move, nothing to compute), and a whole number of blocks of a size other than 1
    c.call("swap_seconds of no tokens", f"swap_seconds(0, {r.choice((1, 8, 12, 16))}, {r.randint(1, 80)}, 4096, "
                                        f"2.5e10, {r.choice((1e-5, 2e-5))})")
    c.call("recompute_seconds of no tokens", f"recompute_seconds(0, 7e9, {r.randint(1, 80)}, 4096, 1e14)")
    block_size = r.choice((3, 8, 12, 16))
    c.call("swap_seconds of whole blocks", f"swap_seconds({block_size * r.randint(1, 300)}, {block_size}, "
                                           f"{r.randint(1, 80)}, 4096, 2.5e10, {r.choice((0.0, 1e-5, 2e-5))})")
    # swapping a token costs exactly what recomputing it does (values exact in binary): no block size wins, inf
    c.call("crossover_block_size at equality", "crossover_block_size(1024, 32, 4096, 2.0**34, 1e-5, 0.03125)")
    # a link with no latency (stated: 0 to 20 us) and room to spare (at most 0.27 s of bytes against 0.5 s or
    # more): every block size is as cheap, the crossover is 0, and a formula that divides by the latency shows
    c.call("crossover_block_size of a link with no latency", f"crossover_block_size({r.randint(16, 5000)}, "
                                                             f"{r.randint(1, 80)}, {r.choice((512, 4096))}, 2.5e10, "
                                                             f"0.0, {r.choice((0.5, 3.0))})")
    # a link so slow that recomputing a token beats moving its bytes, whatever the block size: no crossover
    c.call("crossover_block_size of a slow link", f"crossover_block_size({r.randint(16, 5000)}, {r.randint(40, 80)}, "
                                                  f"4096, 1e6, 1e-5, 1e-6)")
    for k in range(14):  # parents of the stated 1 to 4,096 tokens (a partly filled shared block, and twice one at a
        # block boundary), CPU pools too small, models that recompute cheaply and ones that do not
        bs, cpu = r.choice((4, 8, 16, 64)), r.choice((0, 4, 4096))
        parent = bs * r.randint(1, 4096 // bs) if k < 2 else r.choice((r.randint(1, 200), r.randint(1, 4096)))
        if k == 2:  # a sequence past 8,192 tokens (each function takes 0 to 32,768), in blocks the pool can hold
            bs, parent = r.choice((16, 32, 64)), r.randint(8193, 32_768)
        # (1e9 parameters at the fewest: with an 8B model's shape and fewer, the n^2 form and the exact sum over
        # positions, which the exercise accepts alike, would differ by more than the stated 0.1%)
        appended = r.choice((0, 0, r.randint(1, 20), r.randint(1, 100)))  # 0: every block shared
        while True:  # either choice wins, seed by seed; drawn again where the costs are too close to call
            model, *rates = (r.choice(('LLAMA3_8B', 'OPT_13B')), r.choice((1e9, 8e9, 7e10)), r.choice((2.5e10, 1e11)),
                             r.choice((1e-6, 1e-5)), r.choice((1e12, 1e14, 3e15)))
            tail = ", ".join([model, *map(str, rates)])
            if not _ex08_close(bs, parent, appended, model, rates):
                break
        c.add("preemption_seconds and choose of a forked sequence", [
            do(f"m = BlockManager(num_blocks=4096, block_size={bs}, num_cpu_blocks={cpu})"),
            do(f"m.add('parent', range({parent}))"), do("m.fork('parent', 'child')"),
            do(f"for _ in range({appended}):\n"
               f"    m.append('child', 0)"),
            get(f"preemption_seconds(m, 'child', {tail})"), get(f"choose(m, 'child', {tail})"),
            get(f"preemption_seconds(m, 'parent', {tail})"), get(f"choose(m, 'parent', {tail})")])
    # a child forked at a block boundary that appended nothing: it owns no block and has no token of its own, both
    # cost 0, and swapping is not cheaper ("recompute"), for the child and for the parent it shares every block with
    bs = r.choice((4, 8, 16))
    tail = f"{r.choice(('LLAMA3_8B', 'OPT_13B'))}, 8e9, 2.5e10, 1e-5, 1e14"
    c.add(f"choose for a child forked at a block boundary (blocks of {bs}) that owns nothing", [
        do(f"m = BlockManager(num_blocks=4096, block_size={bs}, num_cpu_blocks=4096)"),
        do(f"m.add('parent', range({bs * r.randint(1, 64)}))"), do("m.fork('parent', 'child')"),
        get(f"preemption_seconds(m, 'child', {tail})"), get(f"choose(m, 'child', {tail})"),
        get(f"choose(m, 'parent', {tail})")])
    # a sequence never forked, of a whole block or more: no block of it is cached, its whole prompt is recomputed
    # (round 38z18: a cached prefix counted up to the last shared block, one block where none is, passed on the
    # seeds where every sequence asked about had been forked)
    bs = r.choice((4, 8, 16))
    c.add(f"preemption_seconds of a sequence never forked (blocks of {bs})", [
        do(f"m = BlockManager(num_blocks=4096, block_size={bs}, num_cpu_blocks=4096)"),
        do(f"m.add('solo', range({bs * r.randint(1, 64) + r.randint(0, bs - 1)}))"),
        get(f"preemption_seconds(m, 'solo', {r.choice(('LLAMA3_8B', 'OPT_13B'))}, 8e9, 2.5e10, 1e-5, 1e14)")])
    # a CPU pool that fits the child's blocks exactly, and one a block short, where swapping is the cheaper (a child
    # that shares every block, a model slow to recompute; its last block partly filled, so that recomputing costs
    # something: with whole blocks both cost 0 and either pool gives "recompute", as on one seed in five before)
    bs = r.choice((4, 8, 16))
    parent = bs * r.randint(5, 50) + r.randint(1, bs - 1)
    tail = "OPT_13B, 7e10, 1e11, 1e-6, 1e12"
    for cpu in (-(-parent // bs), -(-parent // bs) - 1):
        c.add(f"choose with a CPU pool of {cpu} blocks for a child of {-(-parent // bs)}", [
            do(f"m = BlockManager(num_blocks=4096, block_size={bs}, num_cpu_blocks={cpu})"),
            do(f"m.add('parent', range({parent}))"), do("m.fork('parent', 'child')"),
            get(f"preemption_seconds(m, 'child', {tail})"), get(f"choose(m, 'child', {tail})")])
    # parallel sampling of three: a parent forked twice, so its blocks have three owners (the statement's "reference
    # count above 1"), a child appending past them; each of the three asked about (audit F1: a block counted shared
    # only at a count of 2 passed every seed, where no block had more than two owners)
    bs = r.choice((4, 8, 16))
    tail = f"{r.choice(('LLAMA3_8B', 'OPT_13B'))}, 8e9, 2.5e10, 1e-5, 1e14"
    c.add(f"preemption_seconds of a parent forked twice (blocks of {bs}): three owners of its blocks", [
        do(f"m = BlockManager(num_blocks=4096, block_size={bs}, num_cpu_blocks=4096)"),
        do(f"m.add('parent', range({bs * r.randint(2, 64) + r.randint(0, bs - 1)}))"),
        do("m.fork('parent', 'child')"), do("m.fork('parent', 'sibling')"),
        do(f"for _ in range({r.randint(1, 3 * bs)}):\n    m.append('child', 0)"),
        *[get(f"preemption_seconds(m, {s!r}, {tail})") for s in ("child", "sibling", "parent")]])


def _ex08_close(block_size: int, parent: int, appended: int, model: str, rates: list[float]) -> bool:
    """Whether swapping and recomputing the child or the parent of the scene (``model``, a preset's name, and the
    parameters, bandwidth, latency and FLOP rate ``rates``) cost within ex08's "approximately" (0.1%) of each other:
    there the exercise accepts formulas that choose either way (its check skips such a case)."""
    from pagedlab import memory
    from pagedlab.exercise_checks import ex08
    from pagedlab.paged import BlockManager

    m = BlockManager(num_blocks=4096, block_size=block_size)
    m.add("parent", range(parent))
    m.fork("parent", "child")
    for _ in range(appended):
        m.append("child", 0)
    # (both 0, a sequence that owns no block and has nothing to recompute, is no near tie: the statement's rule,
    # swap only where it is cheaper, says recompute)
    costs = (ex08._costs(m, seq, getattr(memory, model), *rates) for seq in ("child", "parent"))
    return any(abs(t_swap - t_rec) <= ex08.RECOMPUTE_RTOL * t_rec and t_rec > 0 for t_swap, t_rec in costs)


def _ex09(c: Cases) -> None:
    r = c.rng
    # a head dim of 32 (a scale fixed for 16 shows), and blocks of 64 tokens, longer than a key tile of 32 (a slot
    # taken as the key's offset modulo the block size, right only where a tile holds whole blocks, shows)
    for lens, block_size, head_dim in (([r.randint(20, 60)], 16, 32), ([r.randint(65, 100)], 64, 16)):
        c.add(f"paged_attention, head dim {head_dim}, blocks of {block_size}", [
            do(f"q, k, v, tables, lens = random_paged_batch({lens}, {block_size}, 4, 2, {head_dim}, padding='spare', "
               f"seed={r.randrange(1 << 30)})"),
            get("paged_attention(q, k, v, tables, lens)")])
    for heads, kv_heads in ((2, 2), (8, 2), (4, 1)):
        lens = [r.randint(1, 100) for _ in range(r.randint(1, 3))]
        seed = r.randrange(1 << 30)
        c.add(f"paged_attention, contexts {lens}", [
            do(f"q, k, v, tables, lens = random_paged_batch({lens}, {r.choice((8, 16, 32))}, {heads}, {kv_heads}, 16, "
               f"padding='spare', seed={seed})"),
            get("paged_attention(q, k, v, tables, lens)")])
    lens = [32 * r.randint(1, 3), r.randint(1, 100)]  # a context of whole key tiles (the kernel's are 32 keys)
    c.add(f"paged_attention of a context of whole key tiles, contexts {lens}", [
        do(f"q, k, v, tables, lens = random_paged_batch({lens}, {r.choice((8, 16, 32))}, 4, 2, 16, padding='spare', "
           f"seed={r.randrange(1 << 30)})"),
        get("paged_attention(q, k, v, tables, lens)")])
    bs = r.choice((8, 16))  # contexts of one token, one short of a block, a block and one past it
    c.add(f"paged_attention of contexts at a block's edges (blocks of {bs})", [
        do(f"q, k, v, tables, lens = random_paged_batch({[1, bs - 1, bs, bs + 1]}, {bs}, 4, 2, 16, padding='spare', "
           f"seed={r.randrange(1 << 30)})"),
        get("paged_attention(q, k, v, tables, lens)")])
    lens, seed = [r.randint(40, 100) for _ in range(2)], r.randrange(1 << 30)  # scores in the hundreds: exp2 overflows
    c.add(f"paged_attention of large scores, contexts {lens}", [  # unless the running max is subtracted
        do(f"q, k, v, tables, lens = random_paged_batch({lens}, 16, 4, 2, 16, padding='spare', magnitude=12.0, "
           f"seed={seed})"),
        get("paged_attention(q, k, v, tables, lens)")])
    lens, seed = [r.randint(20, 60) for _ in range(2)], r.randrange(1 << 30)  # every score far below 0: a running
    c.add(f"paged_attention of negative scores, contexts {lens}", [  # max that a masked 0 wins underflows to 0 / 0
        do(f"q, k, v, tables, lens = random_paged_batch({lens}, 16, 4, 2, 16, padding='spare', seed={seed})"),
        do("q, k = -q.abs() * 20, k.abs() * 20"), get("paged_attention(q, k, v, tables, lens)")])
    # every score below -1e30, exact in float32 (as _below_minus_1e30's: integers times 2**50, d = 16), each context
    # ending in a partial key tile: an invalid token's score set to -1e9 or -1e30 instead of -inf outweighs every valid
    # one (it passed 5 of 5 seeds without this call; audit F2); the pool's NaN and inf poison stays as it was
    lens, seed = [r.randint(33, 63) for _ in range(2)], r.randrange(1 << 30)
    c.add(f"paged_attention of scores below -1e30, contexts {lens}", [
        do(f"q, k, v, tables, lens = random_paged_batch({lens}, 16, 4, 2, 16, padding='spare', seed={seed})"),
        do("q, k = torch.full_like(q, -2.0**50), (k.abs().round() + 1) * 2.0**50"),
        get("paged_attention(q, k, v, tables, lens)")])
    # one sequence in blocks of 8 whose last key tile (32 keys, four blocks) holds one token: the tile's table entries
    # run two past the row and its padding column, out of the table (a block table loaded without a mask read them on
    # four seeds of five, where some sequence ended so; on the fifth every read stayed inside some row)
    n, seed = 32 * r.randint(1, 6) + 1, r.randrange(1 << 30)
    c.add(f"paged_attention of one sequence of {n} tokens in blocks of 8", [
        do(f"q, k, v, tables, lens = random_paged_batch([{n}], 8, 4, 2, 16, padding='spare', seed={seed})"),
        get("paged_attention(q, k, v, tables, lens)")])


def _ex09_stretch(c: Cases) -> None:
    r = c.rng
    for _ in range(8):
        c.call("split_bounds", f"split_bounds({r.randint(1, 200)}, {r.randint(1, 6)}, {r.choice((8, 16, 32))})")
    for block_n in (1, 3, 5, 6, 7, 12):  # key tiles of any positive size, not only powers of two
        c.call("split_bounds", f"split_bounds({r.randint(1, 200)}, {r.randint(1, 8)}, {block_n})")
    for extra in (1, r.choice((-1, 0))):  # long contexts (thousands of tokens): one token past whole tiles, and
        splits, block_n = r.randint(2, 6), r.choice((16, 32, 64))  # whole tiles or one token short of them
        length = splits * block_n * r.randint(30, 100) + extra
        c.call("split_bounds of a long context", f"split_bounds({length}, {splits}, {block_n})")
    c.call("split_bounds of a context in the thousands", f"split_bounds({r.randint(1000, 32_768)}, {r.randint(1, 6)}, "
                                                         f"{r.choice((16, 32, 64))})")
    block_n = r.choice((4, 16, 32))  # a context of one token, and of exactly one tile
    c.call("split_bounds of one token", f"split_bounds(1, {r.randint(1, 8)}, {block_n})")
    c.call("split_bounds of one tile", f"split_bounds({block_n}, {r.randint(1, 8)}, {block_n})")
    for _ in range(2):  # every split exactly a whole number of tiles: a length one token or one tile too long shows
        splits, tiles, block_n = r.randint(2, 6), r.randint(1, 3), r.choice((8, 16, 32))
        c.call("split_bounds of whole tiles", f"split_bounds({splits * tiles * block_n}, {splits}, {block_n})")
    # Partial states as split-KV leaves them, drawn directly (a split's output and its log-sum-exp; an empty split:
    # output 0, lse -inf), so Triton's interpreter need not compute them: lses near each other and far apart.
    for k, scale in enumerate((1.0, 1.0, 30.0, 1000.0, 3.0, 300.0, 1000.0, 500.0)):
        seqs, heads, splits = r.randint(1, 3), r.randint(1, 4), r.randint(2, 6)
        d = (1, 16)[k] if k < 2 else r.randint(1, 16)  # head dims of 1 to 16, as stated
        # no leading dimension, one, two or three, as stated (the cases with empty splits: two)
        lead = (seqs, heads) if k % 2 else ((), (heads,), (seqs, heads), (2, seqs, heads))[k // 2]
        steps = [do(f"outs, lses = {c.array(*lead, splits, d)}, {c.array(*lead, splits, scale=scale)}")]
        if k % 2:  # the last splits of the first sequence are empty
            steps.append(do(f"lses[0, :, {r.randint(1, splits - 1)}:] = float('-inf'); "
                            f"outs[0][lses[0] == float('-inf')] = 0.0"))
        # outs and lses are the caller's, only read (a merge that rescaled them in place, lses -= m, passed): read back
        c.add(f"merge_states of {splits} splits (lses scaled by {scale:g})",
              steps + [get("merge_states(outs, lses)"), get("lses"), get("outs")])
    seqs, heads, splits = r.randint(2, 3), r.randint(1, 4), r.randint(3, 6)  # the first splits empty: a running
    c.add("merge_states with the first splits empty", [                     # merge must not start from -inf - -inf
        do(f"outs, lses = {c.array(seqs, heads, splits, 8)}, {c.array(seqs, heads, splits, scale=3.0)}"),
        do(f"lses[1, :, :{r.randint(1, splits - 1)}] = float('-inf'); outs[1][lses[1] == float('-inf')] = 0.0"),
        get("merge_states(outs, lses)")])
    # tied lses, as stated: every split of a row equal, and two equal maxima
    seqs, heads, splits = r.randint(1, 3), r.randint(1, 4), r.randint(3, 6)
    tied = r.sample(range(splits), 2)
    c.add("merge_states of tied lses", [
        do(f"outs, lses = {c.array(seqs, heads, splits, 8)}, {c.array(seqs, heads, splits, scale=3.0)}"),
        do(f"lses[0, 0] = {r.randint(-3, 3)}.0; lses[-1, -1, {tied[0]}] = lses[-1, -1, {tied[1]}] = "
           "lses[-1, -1].max() + 1"), get("merge_states(outs, lses)")])
    seqs, heads, splits = r.randint(2, 3), r.randint(2, 4), r.randint(2, 6)  # views, as any tensor may be (round
    c.call("merge_states of transposed views", f"merge_states({c.array(heads, seqs, splits, 8)}.transpose(0, 1), "
                                               f"{c.array(heads, seqs, splits)}.transpose(0, 1))")  # 38z18: .view)
    seqs, heads = r.randint(1, 3), r.randint(1, 4)  # one split (1 to 6 stated): the merge is that split
    c.call("merge_states of one split", f"merge_states({c.array(seqs, heads, 1, 8)}, {c.array(seqs, heads, 1)})")
    seqs, heads, splits = r.randint(1, 3), r.randint(1, 4), r.randint(2, 6)  # every lse far below zero: e^lse is 0
    c.call("merge_states of lses near -300", f"merge_states({c.array(seqs, heads, splits, 8)}, "
                                             f"{c.array(seqs, heads, splits, scale=3.0)} - 300)")
    # lses far below any finite stand-in for -inf that a merge might put in an empty split's place, beside empty
    # splits (round 38z30: -inf taken as -10000 passed, every lse drawn was above it). Near -20000, float32 rounds an
    # lse by 1e-3, and a merge by logsumexp, exact in reals, weights the outputs 1e-3 off: outputs of 1e-3 keep that
    # under the tolerance, while a stand-in's weight, all of it on an empty split's 0, is not. Below -1e30, distinct
    # multiples of -2**100 (exact in float32; a tie there is a weight of 2 to a logsumexp that cannot hold log 2)
    seqs, heads, splits = r.randint(1, 3), r.randint(1, 4), r.randint(2, 6)
    c.add("merge_states of lses near -20000 beside empty splits", [
        do(f"outs, lses = {c.array(seqs, heads, splits, 8)} * 1e-3, {c.array(seqs, heads, splits, scale=3.0)} - 20000"),
        do(f"lses[:, :, {r.randrange(splits)}] = float('-inf'); outs[lses == float('-inf')] = 0.0"),
        get("merge_states(outs, lses)")])
    seqs, heads, splits = r.randint(1, 3), r.randint(1, 4), r.randint(2, 6)
    c.add("merge_states of lses below -1e30 beside empty splits", [
        do(f"outs = {c.array(seqs, heads, splits, 8)}"),
        do(f"lses = (torch.randperm({splits}, generator=torch.Generator().manual_seed({r.randrange(1 << 30)})) + 2.0)"
           f".mul(-2.0**100).expand({seqs}, {heads}, {splits}).clone()"),
        do(f"lses[:, :, {r.randrange(splits)}] = float('-inf'); outs[lses == float('-inf')] = 0.0"),
        get("merge_states(outs, lses)")])


def _scene(num_blocks: int, block_size: int, running: list, waiting: list, watermark: float = 0.0) -> Step:
    """A manager with ``running`` requests added (oldest first) and ``waiting`` ones queued, each ``(name, n)`` a
    ``Request(name, list(range(1000, 1000 + n)))`` of the notebook's own class: token ids that are not positions
    (round 38z18: a step that grew a request by its last token plus one passed on prompts ``list(range(n))``)."""
    return do(f"m = BlockManager({num_blocks}, {block_size}, watermark={watermark})\n"
              f"running = [Request(name, list(range(1000, 1000 + n))) for name, n in {running}]\n"
              "for q in running:\n    m.add(q.seq_id, q.tokens)\n"
              f"waiting = deque(Request(name, list(range(1000, 1000 + n))) for name, n in {waiting})\n"
              "requests = [*running, *waiting]\n"  # (each request the caller made: a step moves them, never copies)
              "token_lists = {q.seq_id: q.tokens for q in requests}")  # (grown in place: req.tokens.append)


def _ex10(c: Cases) -> None:
    r = c.rng
    for n in range(8):  # small pools under pressure: preemptions, two in a step, a watermark, small token budgets
        # blocks of 4 tokens, as the checks use, and of 1, 3 and 16: the statement counts blocks by
        # manager.block_size (round 38z16: an answer counting blocks of 4 passed)
        nb, bs = r.randint(5, 16), (1, 3, 16, 4, 4, 4, 4, 4)[n]
        running, held = [], 0  # (what the scene adds must fit, a watermark of 20% of the pool kept free)
        for i in range(r.randint(0, 3)):
            n = r.randint(1, 3 * bs)
            if held + -(-n // bs) <= nb - -(-nb // 5) - 1:
                running.append((f"r{len(running)}", n))
                held += -(-n // bs)
        waiting = [(f"w{i}", r.randint(1, 3 * bs)) for i in range(r.randint(0, 4))]
        steps = [_scene(nb, bs, running, waiting, r.choice((0.0, 0.1, 0.2)))]
        for t in range(40):
            if r.random() < 0.4:
                steps.append(do(f"waiting.append(q := Request('n{t}', list(range(1000, {1000 + r.randint(1, 3 * bs)}))))\n"
                                "requests.append(q)\ntoken_lists[q.seq_id] = q.tokens"))
            if r.random() < 0.15:
                steps.append(do("if running:\n    m.free(running.pop(0).seq_id)"))
            # (the requests waiting are the caller's own objects: round 38z19's copy of a preempted one passed; and
            # each grows its own list of tokens, as stated: round 38z20's req.tokens = req.tokens + [t] passed)
            steps += [get(f"schedule_step(m, running, waiting, {r.choice((3, 6, 8, 16, 1000))})"),
                      get("[(q.seq_id, q.tokens, q.tokens is token_lists[q.seq_id]) for q in running]"),
                      get("[(q.seq_id, any(q is o for o in requests)) for q in waiting]"), get("m.num_free_blocks")]
        c.add(f"schedule_step: 40 steps of a busy server ({nb} blocks of {bs})", steps)
    # every block full and every request growing: two preemptions in one step, put back in the order they happened
    extra = r.randint(0, 2)
    running = [("r0", 8)] + [(f"r{i}", 4) for i in range(1, 4 + extra)]
    steps = [_scene(5 + extra, 4, running, [("w0", 1)])]
    for _ in range(3):
        steps += [get(f"schedule_step(m, running, waiting, {r.choice((8, 1000))})"),
                  get("[(q.seq_id, q.tokens) for q in running]"), get("[q.seq_id for q in waiting]")]
    c.add("schedule_step: two preemptions in one step", steps)
    # every request holding one full block of the pool: each of the older half grows in the block of the newest one
    # left, preempted, and the middle one (n odd) then preempts itself; all at the front of waiting, the older first
    n = r.choice((3, 5))
    steps = [_scene(n, 4, [(f"r{i}", 4) for i in range(n)], [("w0", 1)])]
    for _ in range(2):
        steps += [get("schedule_step(m, running, waiting, 1000)"),
                  get("[(q.seq_id, q.tokens) for q in running]"), get("[q.seq_id for q in waiting]")]
    c.add(f"schedule_step: {n} requests in {n} full blocks, the newest preempted, then one preempting itself", steps)
    # Each admission rule where breaking it changes the step, on every seed (a busy server meets some by chance only).
    # Nobody admitted in a step that preempted: the one preemption after which a waiting request fits again is the
    # newest left preempting itself (its blocks are free, and it is first in line); a step later it is admitted.
    nb = r.randint(1, 6)
    steps = [_scene(nb, 4, [("r0", 4 * nb)], [("w0", 1)])]
    for _ in range(3):
        steps += [get("schedule_step(m, running, waiting, 1000)"),
                  get("[(q.seq_id, len(q.tokens)) for q in running]"), get("[q.seq_id for q in waiting]")]
    c.add(f"schedule_step: the newest left preempts itself ({nb} blocks), admitted a step later", steps)
    # The watermark, and the stop at the first request that does not fit: the first waiting needs exactly the
    # blocks the watermark leaves (admitted), or one more (not, and nor is the 1-token request behind it).
    for past in (0, 1):
        nb, w = r.randint(5, 16), r.choice((0.2, 0.3))  # (int(w * nb) >= 1 blocks kept free)
        n = 4 * (nb - int(w * nb) - 1 + past) + r.randint(1, 4)
        c.add(f"schedule_step: a prompt of {n} tokens, {nb} blocks, watermark {w}, a 1-token prompt behind it",
              [_scene(nb, 4, [], [("w0", n), ("w1", 1)], w), get("schedule_step(m, running, waiting, 1000)"),
               get("[q.seq_id for q in running]"), get("[q.seq_id for q in waiting]"), get("m.num_free_blocks")])
    # Two prompts admitted in one step, the budget reached exactly by both (or missed by one: the first only): each
    # admitted prompt counted once, beside one token a grown request
    for short in (0, 1):
        grow = [(f"r{i}", r.randint(1, 3)) for i in range(r.randint(1, 3))]
        n0, n1 = r.randint(1, 8), r.randint(1, 8)
        c.add(f"schedule_step: {len(grow)} grown and prompts of {n0} and {n1} tokens, a budget {short} short of all",
              [_scene(16, 4, grow, [("w0", n0), ("w1", n1)]),
               get(f"schedule_step(m, running, waiting, {len(grow) + n0 + n1 - short})"),
               get("[q.seq_id for q in running]"), get("[q.seq_id for q in waiting]")])
    # The token budget counts each grown request's token and is reached exactly (admitted) or missed by one.
    for short in (0, 1):
        grow = [(f"r{i}", r.randint(1, 3)) for i in range(r.randint(1, 3))]
        n = r.randint(1, 12)
        c.add(f"schedule_step: {len(grow)} grown and a prompt of {n} tokens, a budget {short} short of both",
              [_scene(16, 4, grow, [("w0", n), ("w1", 1)]),
               get(f"schedule_step(m, running, waiting, {len(grow) + n - short})"),
               get("[q.seq_id for q in running]"), get("[q.seq_id for q in waiting]")])
    # the token each step tells the manager, as stated (manager.append(req.seq_id, token) with token =
    # len(req.tokens), then req.tokens.append(token)): with prefix caching on, the manager hashes the tokens it is
    # told, and a later prompt of a request's own tokens finds its full blocks cached only if they were the request's
    # (round 38z32: the next position told instead passed, as no scene's manager kept its tokens)
    bs, n0 = r.choice((2, 4)), r.randint(1, 5)
    c.add(f"schedule_step with prefix caching on (blocks of {bs}): the tokens the manager was told", [
        do(f"m = BlockManager(64, {bs}, enable_prefix_caching=True)\n"
           f"running, waiting = [Request('r0', list(range(1000, {1000 + n0})))], deque()\n"
           "m.add('r0', running[0].tokens)"),
        *[get("schedule_step(m, running, waiting, 1000)") for _ in range(2 * bs + 1)],
        do("m.add('probe', running[0].tokens + [7])"), get("running[0].tokens"),
        get("m.num_cached_tokens('probe')")])


def _report(r: random.Random, arch: int, spill: int | None = None, tile: tuple[int, int] | None = None) -> str:
    """A compile report as :func:`pagedlab.perf_lab.compile_report` makes one, with numbers drawn now: the graded
    functions only read it, so no compile is needed at grading time. One sm_90 report in five uses the warp-level
    HMMA (as a tile too small for wgmma does), so that the matrix instruction is read from the counts."""
    bm, bn, warps = r.choice((64, 128)), r.choice((32, 64, 128)), r.choice((4, 8))
    bm, bn = tile or (bm, bn)
    hopper = arch == 90 and r.random() > 0.2
    tma = hopper and r.random() < 0.5  # (one way of loading K and V or the other, never both or none: the
    # statement names the two and no order between them, as a real compile has one)
    sass = {"HGMMA": r.randint(8, 64) if hopper else 0, "HMMA": 0 if hopper else r.randint(16, 256),
            "LDGSTS": 0 if tma else r.randint(2, 16), "UTMALDG": r.randint(1, 4) if tma else 0,
            "MUFU.EX2": 2 * r.randint(8, 128), "FFMA": r.randint(0, 400), "FMUL": r.randint(0, 200)}
    spill = r.choice((0, 0, r.randint(4, 512))) if spill is None else spill
    # a kernel that spills has used every register; one in two that do not spill uses them all too (only
    # spill_bytes tells the two apart)
    registers = 255 if spill or r.random() < 0.5 else r.randint(40, 254)
    return repr({"kind": "fwd", "arch": arch, "block_m": bm, "block_n": bn, "num_warps": warps,
                 "num_stages": r.choice((2, 3, 4)), "head_dim": 128, "registers": registers,
                 "spill_bytes": spill,
                 # (not whole KiB: the statement asks for a float in KiB of a byte count; round 38z17's shared_kib
                 # by floor division passed on reports of whole KiB)
                 "shared_bytes": r.randint(8, 220) * 1024 + r.choice((8, 16, 24, r.randrange(1, 1024))),
                 "sass": sass})


def _ex04b(c: Cases) -> None:
    r = c.rng
    # drawn again until every pair of matrix instruction and loads a compile gives is among them (HGMMA with TMA,
    # HGMMA with LDGSTS, HMMA with LDGSTS: the loads told by the matrix instruction, or the reverse, passed 4 of 25
    # seeds), and an sm_90 compile with the warp-level HMMA (a matrix instruction told by the arch passed 5 of 20)
    reports: list[str] = []
    while not any(d["arch"] == 90 and d["sass"]["HMMA"] for d in map(ast.literal_eval, reports)) or len(
            {(d["sass"]["HGMMA"] > 0, d["sass"]["UTMALDG"] > 0) for d in map(ast.literal_eval, reports)}) < 3:
        reports = [_report(r, r.choice((80, 90))) for _ in range(12)]
    for report in reports:
        c.call("read_report", f"read_report({report})")
        c.call("exp2_per_score", f"exp2_per_score({report})")
    for _ in range(5):
        c.call("tile_budget", f"tile_budget({r.choice((32, 64, 128, 256))}, {r.choice((16, 32, 64, 128))}, "
                              f"{r.choice((64, 128, 256))}, {r.choice((1024, 4096))}, {r.choice((16, 32))})")
        c.call("backward_exp_fraction", f"backward_exp_fraction({r.choice((64, 96, 128, 256))}, "
                                        f"{r.choice((1024, 4096))}, {r.choice((16, 32))})")
    for k in range(12):  # many sets: a choice that ignores spills, say, is wrong only where the best one spills
        # at least one sm_90 report that fits (the solution's answer then exists), the others drawn; drawn again
        # while two fitting sm_90 reports tie on the largest (BLOCK_M, BLOCK_N): the exercise states a rule for
        # ties (the first), but an index among equal configurations is no answer about speed, and a learner who
        # keeps the last of equal ones has chosen as well (issue 38), so no graded call asks it. In the first set
        # the best compile uses the warp-level HMMA: an H100 compile is told by its arch, not by its instructions
        # (round 38z13: "HGMMA" read as "sm_90" passed on 1 seed of 5)
        while True:
            reports = [_report(r, 90, spill=0)] + [_report(r, 90) for _ in range(r.randint(2, 5))] + [_report(r, 80)]
            fits = [((d["block_m"], d["block_n"]), d["sass"]["HMMA"] > 0) for d in map(ast.literal_eval, reports)
                    if d["arch"] == 90 and d["spill_bytes"] == 0]
            best = max(fits)
            if [tile for tile, _ in fits].count(best[0]) == 1 and (k or best[1]):
                break
        r.shuffle(reports)
        c.call("predict", f"predict([{', '.join(reports)}])")
    # a set where each wrong order picks another report: (64, 128) fits with the larger tile and the wider BLOCK_N,
    # (128, 128) spills, the sm_80 (128, 64) fits; the answer is (128, 32) (by tile area, BLOCK_N first or any arch:
    # 2, 1 and 3 of 20 seeds passed)
    reports = [_report(r, 90, spill=0, tile=(64, 128)), _report(r, 90, spill=0, tile=(128, 32)),
               _report(r, 90, spill=r.randint(4, 512), tile=(128, 128)), _report(r, 80, spill=0, tile=(128, 64))]
    r.shuffle(reports)
    c.call("predict of a set where area, BLOCK_N and the arch each mislead", f"predict([{', '.join(reports)}])")
    c.call("tile_budget at the H100's default rates", f"tile_budget({r.choice((64, 128))}, {r.choice((32, 64))}, "
                                                      f"{r.choice((64, 128))})")
    c.call("backward_exp_fraction at the H100's default rates", f"backward_exp_fraction({r.choice((64, 128))})")
    # the forward at d = 128, as stated (the argument given, or its default), every configuration of the stated
    # space: the one that spills, (128, 128) on 4 warps, was drawn on some seeds only (a spill never predicted
    # passed on 14 of 20)
    for k, (bm, bn, warps, stages) in enumerate(itertools.product((64, 128), (32, 64, 128), (4, 8), (2, 3, 4))):
        c.call("predict_resources", f"predict_resources({bm}, {bn}, {warps}, {stages}{', 128' if k % 2 else ''})")
    # head_dim is an argument: d = 64 and 256 too (round 38z22: formulas with 128 written in passed, every call at
    # the lab's d = 128)
    for d in (64, 256):
        bm, bn, warps, stages = r.choice((64, 128)), r.choice((32, 64, 128)), r.choice((4, 8)), r.choice((2, 3, 4))
        c.call(f"predict_resources at head_dim {d}", f"predict_resources({bm}, {bn}, {warps}, {stages}, {d})")
    # the configurations the learner chooses, as stated (their compiles are what the lab reads): three or more
    # distinct ones of the space, two with the same BLOCK_M and different BLOCK_N (one of each passed)
    c.call("MY_CONFIGS: three or more of the space, two with the same BLOCK_M and different BLOCK_N",
           "(lambda cs: len(cs) >= 3 and len(set(cs)) == len(cs) and all(len(x) == 4 and x[0] in (64, 128) and "
           "x[1] in (32, 64, 128) and x[2] in (4, 8) and x[3] in (2, 3, 4) for x in cs) and any(a[0] == b[0] and "
           "a[1] != b[1] for a in cs for b in cs))([tuple(x) for x in MY_CONFIGS])")


_SOFTMAX = ("torch-softmax",)
_ATTENTION = ("torch-softmax", "torch-attention", "pagedlab.attention:causal_mask", "pagedlab.attention:attention_scores",
              "pagedlab.attention:naive_attention", "pagedlab.attention:tiled_attention",
              "pagedlab.attention:chunked_attention_without_rescaling")
_FLASH = ("pagedlab.kernels.flash_attention:flash_attention", "pagedlab.kernels.flash_attention:flash_attention_forward")
_PAGED = ("pagedlab.attention:gather_kv", "pagedlab.attention:paged_decode_reference",
          "pagedlab.kernels.paged_attention:paged_decode_attention", "pagedlab.kernels.paged_attention:merge_splits",
          "pagedlab.engine.backends:torch_decode_attention")
_MEMORY = {name: f"pagedlab.memory:{name}" for name in _MODELS + ("ModelShape",)}
_BATCH = {"random_paged_batch": "pagedlab.testing:random_paged_batch"}
SPECS: dict[str, Spec] = {
    # ex00 lets a softmax compute in its input's dtype (the solution does) or in a wider one: in float16 the solution's
    # exp(x - m) and its sum round more than once, and torch.softmax or a float32 computation rounded at the end
    # differed from it by more than one unit in the last place on 493 of 2,000 seeds. Each lies within the exercise's
    # stated tolerance of the exact softmax (exercise_checks.ex00.TOLERANCES), so the two within twice it. float64's
    # is a float64 softmax's own (an epsilon of 1e-9 in the sum, or float32 inside, fail it).
    "ex00_warmup": Spec(("softmax_rows",), _ex00, _SOFTMAX, rounding={"float16": (4e-3, 2e-2), "bfloat16": (3e-2, 6e-2),
                                                                      "float64": (2e-15, 2e-13)},
                        checked="ex00_warmup"),
    "ex01_naive_attention": Spec(("causal_mask", "naive_attention"), _ex01, _ATTENTION[1:], atol=2e-3, rtol=2e-3,
                                 checked="ex01_naive_attention"),
    "ex02_online_softmax": Spec(("online_softmax_update", "tiled_attention"), _ex02, _ATTENTION, atol=1e-4,
                                memory=4.0, checked="ex02_online_softmax"),
    "ex02_stretch_causal_tile_skipping": Spec(("key_tile_counts", "online_softmax_update", "causal_tiled_attention"),
                                              _ex02_stretch, _ATTENTION,
                                              {"product_elements": "pagedlab.testing:product_elements",
                                               "masking_ops": "pagedlab.testing:masking_ops",
                                               "within": "pagedlab.testing:within"}, atol=1e-4,
                                              memory=4.0,
                                              checked="ex02_stretch_causal_tile_skipping"),
    "ex03_triton_basics": Spec(("add_kernel", "vector_add", "softmax_kernel", "softmax"), _ex03, _SOFTMAX,
                               device=True, triton=True, atol=1e-5),
    "ex04_flash_forward": Spec(("attention_kernel",), _ex04, _ATTENTION + _FLASH, device=True, triton=True,
                               full_precision=True, atol=1e-4, rtol=1e-4),
    "ex04_stretch_gqa_forward": Spec(("gqa_kernel", "gqa_forward"), _ex04_stretch, _ATTENTION + _FLASH, device=True,
                                     triton=True, full_precision=True, raises=("ValueError",), atol=1e-4,
                                     rtol=1e-4),
    "ex04b_performance_lab": Spec(("predict_resources", "read_report", "exp2_per_score", "tile_budget",
                                   "backward_exp_fraction", "predict"), _ex04b,
                                  tuple(f"pagedlab.perf_lab:{f}" for f in ("exp_time_fraction", "score_budget",
                                                                           "tile_budget", "live_tile_registers")),
                                  atol=1e-9, rtol=1e-9),
    "ex05_kv_cache_size": Spec(("kv_cache_bytes", "kv_bytes_per_token", "max_concurrent_requests"), _ex05,
                               ("pagedlab.memory:kv_cache_bytes", "pagedlab.memory:ModelShape.kv_bytes_per_token",
                                "pagedlab.memory:ModelShape.kv_cache_bytes"), _MEMORY, atol=0, rtol=1e-12,
                               checked="ex05_kv_cache_size"),
    "ex06_block_allocator": Spec(("SimpleAllocator", "blocks_needed", "slot"), _ex06,
                                 ("pagedlab.paged.allocator:BlockAllocator", "pagedlab.paged.block_table:BlockTable",
                                  "pagedlab.validate:blocks_for"),  # (round 38z161: blocks_needed's answer)
                                 {"OutOfBlocks": "pagedlab.paged.allocator:OutOfBlocks"}, raises=("ValueError", "OutOfBlocks"),
                                 checked="ex06_block_allocator"),
    "ex07_copy_on_write": Spec(("MiniManager",), _ex07, ("pagedlab.paged.manager:BlockManager",),
                               raises=("OutOfBlocks",)),
    "ex07_stretch_prefix_cache_match": Spec(("MiniPrefixCache",), _ex07_stretch,
                                            ("pagedlab.paged.prefix_cache:PrefixCache",
                                             "pagedlab.paged.prefix_cache:chained_hash")),
    "ex08_swap_or_recompute": Spec(("swap_seconds", "recompute_seconds", "crossover_block_size", "preemption_seconds",
                                    "choose"), _ex08,
                                   tuple(f"pagedlab.paged.preemption:{f}" for f in (
                                       "swap_seconds", "recompute_seconds", "crossover_block_size", "prefill_flops")),
                                   {**{m: _MEMORY[m] for m in ("LLAMA3_8B", "OPT_13B")},
                                    "BlockManager": "pagedlab.paged.manager:BlockManager"}, atol=0, rtol=1e-3,
                                   checked="ex08_swap_or_recompute"),
    "ex09_paged_attention": Spec(("paged_decode_kernel",), _ex09, _ATTENTION + _PAGED, _BATCH, device=True,
                                 triton=True, full_precision=True, atol=1e-4, rtol=1e-4),
    "ex09_stretch_split_kv_merge": Spec(("split_bounds", "merge_states"), _ex09_stretch, _PAGED, atol=1e-5,
                                        checked="ex09_stretch_split_kv_merge"),
    "ex10_scheduler_step": Spec(("schedule_step",), _ex10, ("pagedlab.engine.scheduler:Scheduler",
                                                            "pagedlab.engine.llm_engine:LLMEngine"),
                                {"BlockManager": "pagedlab.paged.manager:BlockManager", "deque": "collections:deque"}),
}
