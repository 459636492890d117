"""The checks of exercise 4's stretch (grouped-query attention in the forward kernel): program ids, K/V heads,
strides, and the launcher's error for heads that do not divide.

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included: ``q`` ``(batch, n_heads, n_q, d)``, ``k`` and ``v`` ``(batch, n_kv_heads, n_k, d)``,
float32 (the only dtype the contract names), no causal mask; a batch of 1 to 3; one query head over one K/V head,
multi-head (a group of 1), grouped (groups of 2, 3 and 4) and multi-query attention (``n_kv_heads = 1``); ``n_q`` and
``n_k`` of 1, one below, at and one past a tile, with ``n_q < n_k``, ``n_q == n_k`` and ``n_q > n_k`` (query tiles
that no key tile count covers); ``d`` 16, 32 and 64 (``tl.arange`` and ``tl.dot`` need a power of two of at least
16); the launcher's default tiles (16 x 32), and 16 x 16 and 32 x 16; each of ``q``, ``k``, ``v`` contiguous or a
view with its last dimension contiguous (the contract's one demand): views of ``(batch, seq, heads, d)``
projections, ``k`` and ``v`` as the two halves of one fused ``(batch, n_k, 2 n_kv_heads, d)`` projection, ``k`` and
``v`` as the first ``n_k`` positions of caches of different capacities, ``k`` contiguous beside a ``v`` view (``k``
and ``v`` laid out differently). Heads that do not divide (fewer query heads than K/V heads included) raise a
``ValueError``. Compared with attention in float64 over ``k`` and ``v`` repeated ``group`` times per head
(``repeat_interleave``), at 1e-4.
"""

from __future__ import annotations

import inspect
import math
import re
from typing import Callable

import torch

from .. import device
from ..attention import naive_attention
from ..checks import assert_close, differing_rows
from .ex04 import error_hint

__all__ = ["error_hint", "attention_inputs", "check_batch_and_heads", "check_grouped", "check_views",
           "check_heads_that_do_not_divide", "check_over_the_space"]


def attention_inputs(batch, n_heads, n_kv_heads, n_q, n_k, d=16, seq_major=False, seed=0):
    """Seeded q, k, v; with seq_major, views of (batch, seq, heads, d) tensors, as a model's projections give."""
    g = torch.Generator().manual_seed(seed)

    def make(heads, n):
        if seq_major:
            return torch.randn(batch, n, heads, d, generator=g).to(device.DEVICE).transpose(1, 2)
        return torch.randn(batch, heads, n, d, generator=g).to(device.DEVICE)
    return make(n_heads, n_q), make(n_kv_heads, n_k), make(n_kv_heads, n_k)


def _assert_gqa(gqa_forward: Callable, batch, n_heads, n_kv_heads, n_q, n_k, hint: Callable, seq_major=False):
    __tracebackhide__ = True
    q, k, v = attention_inputs(batch, n_heads, n_kv_heads, n_q, n_k, seq_major=seq_major)
    group = n_heads // n_kv_heads
    got = gqa_forward(q, k, v)
    want = naive_attention(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1))
    name = (f"batch {batch}, {n_heads} query heads, {n_kv_heads} K/V heads, n_q = {n_q}, n_k = {n_k}, "
            f"{'views of (batch, seq, heads, d)' if seq_major else 'contiguous'}")
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        assert_close(got, want, name=name)
    bad = [(b, h) for b in range(batch) for h in range(n_heads)
           if differing_rows(got[b, h], want[b, h], atol=1e-4, rtol=1e-4)]
    block_m = inspect.signature(gqa_forward).parameters.get("block_m")
    block_m = block_m.default if block_m is not None and isinstance(block_m.default, int) else None
    rows = _rows_hint(~torch.isclose(got.detach().cpu().double(), want.cpu().double(), atol=1e-4, rtol=1e-4),
                      n_q, n_k, block_m) if bad and block_m else ""
    text = (rows or hint(got, q, k, v, bad)) if bad else ""
    assert_close(got, want, atol=1e-4, rtol=1e-4, name=name,
                 hint=f"(batch, head) pairs {bad[:8]} of {batch} x {n_heads} are wrong. {text}" if bad else "")


def check_batch_and_heads(gqa_forward: Callable) -> None:
    """Check 1: batch 2, 3 heads, one K/V head per query head."""
    __tracebackhide__ = True

    def hint(got, q, k, v, bad):
        read = _heads_read(got.detach().cpu(), q.cpu(), k.cpu(), v.cpu(), 1, bad)
        if read:
            return read
        # (batch 0 right and every later one wrong is also a grid without the batch: the hint below names both)
        offsets = "" if all(b > 0 for b, _ in bad) else _offsets_hint(bad, q, k, v, 1, tuple(got.stride()))
        if offsets:
            return offsets
        if all(b > 0 for b, _ in bad):
            return ("batch 0 is right and every later batch wrong: the grid's second dimension holds one program per "
                    "(batch, head) pair, batch × n_heads of them, and program id 1 tells both apart; if it does, the "
                    "batch offset is multiplied by another tensor's stride (0 times any stride is right).")
        return ("program id 1 is one (batch, head) pair: the batch is its quotient by n_heads and the head its "
                "remainder; each pointer then moves by the batch's and the head's strides.")

    _assert_gqa(gqa_forward, 2, 3, 3, 21, 40, hint)


def check_grouped(gqa_forward: Callable) -> None:
    """Check 2: 4 query heads over 2 K/V heads, 3 over 1."""
    __tracebackhide__ = True
    for n_heads, n_kv_heads in [(4, 2), (3, 1)]:
        def hint(got, q, k, v, bad, n_heads=n_heads, n_kv_heads=n_kv_heads):
            interleaved = naive_attention(q, k.repeat(1, n_heads // n_kv_heads, 1, 1),
                                          v.repeat(1, n_heads // n_kv_heads, 1, 1))
            if torch.allclose(got, interleaved, atol=1e-4):
                return (f"your query head h read K/V head h % {n_kv_heads}: the heads of a group are CONSECUTIVE "
                        f"(heads 0..{n_heads // n_kv_heads - 1} share K/V head 0, as repeat_interleave).")
            return (f"{n_heads} query heads over {n_kv_heads} K/V heads: groups of {n_heads // n_kv_heads} "
                    f"consecutive query heads share one K/V head; K and V move by the K/V head's stride.")

        _assert_gqa(gqa_forward, 2, n_heads, n_kv_heads, 21, 40, hint)


def check_views(gqa_forward: Callable) -> None:
    """Check 3: q, k, v are views of (batch, seq, heads, d) tensors, not contiguous ones."""
    __tracebackhide__ = True

    def hint(got, q, k, v, bad):
        # which tensor's layout matters: the same values again, one side made contiguous
        group = q.shape[1] // k.shape[1]
        want = naive_attention(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1))
        right = {side: torch.allclose(gqa_forward(*args).cpu(), want.cpu(), atol=1e-4, rtol=1e-4)
                 for side, args in (("q", (q.contiguous(), k, v)), ("kv", (q, k.contiguous(), v.contiguous())))}
        if right["q"] and not right["kv"]:
            return ("checks 1 and 2 passed on contiguous tensors, and here with q made contiguous (k and v still "
                    "views) your output is right: what goes wrong follows q's layout. q is a view whose heads lie "
                    "stride_qh apart, and out, made contiguous by the launcher, lies otherwise: Q moves by q's strides "
                    "and Out by out's own (stride_ob, stride_oh), never by q's.")
        if right["kv"] and not right["q"]:
            return ("checks 1 and 2 passed on contiguous tensors, and here with k and v made contiguous (q still a "
                    "view) your output is right: what goes wrong follows k's and v's layout. K and V move by their "
                    "own strides (stride_kb, stride_kh, stride_kn; stride_vb, ...), not by n_k × d nor by q's.")
        return ("checks 1 and 2 passed on contiguous tensors; these are views, whose rows lie stride_qn apart and "
                "heads stride_qh apart (not n_q × d): every offset must come from the strides the launcher passes.")

    _assert_gqa(gqa_forward, 2, 4, 2, 21, 40, hint, seq_major=True)


def check_heads_that_do_not_divide(gqa_forward: Callable) -> None:
    """Check 4: 6 query heads over 4 K/V heads is an error that names k."""
    __tracebackhide__ = True
    q, k, v = attention_inputs(1, 6, 4, 8, 8)
    try:
        gqa_forward(q, k, v)
    except ValueError as error:
        assert re.search(r"\bk\b", str(error)), f"the ValueError should name the argument k, got: {error}"
    except AssertionError as error:
        raise AssertionError(
            f"gqa_forward raised AssertionError({str(error)!r}) for 6 query heads over 4 K/V heads: the contract is a "
            f"ValueError that names k (an assert is for the programmer's own invariants, and python -O removes "
            f"it).") from None
    else:
        raise AssertionError(
            "6 query heads cannot share 4 K/V heads equally, yet gqa_forward returned a result. Hint: the launcher "
            "raises a ValueError naming k and both head counts before launching anything.")


# The layouts of the space (the module docstring): name -> how q, k, v are built from (batch, seq, heads, d) data.
SPACE_LAYOUTS = ("contiguous", "views of (batch, seq, heads, d)", "k and v halves of one fused projection",
                 "k and v slices of caches of different capacities", "k contiguous, v a view")


def _space_inputs(g: torch.Generator, batch, n_heads, n_kv_heads, n_q, n_k, d, layout):
    """q, k, v laid out as ``layout`` says (one of ``SPACE_LAYOUTS``), on the CPU."""
    def rand(*shape):
        return torch.randn(*shape, generator=g)

    def seq_major(heads, n):
        return rand(batch, n, heads, d).transpose(1, 2)

    if layout == SPACE_LAYOUTS[0]:
        return rand(batch, n_heads, n_q, d), rand(batch, n_kv_heads, n_k, d), rand(batch, n_kv_heads, n_k, d)
    if layout == SPACE_LAYOUTS[1]:
        return seq_major(n_heads, n_q), seq_major(n_kv_heads, n_k), seq_major(n_kv_heads, n_k)
    if layout == SPACE_LAYOUTS[2]:
        kv = seq_major(2 * n_kv_heads, n_k)
        return seq_major(n_heads, n_q), kv[:, :n_kv_heads], kv[:, n_kv_heads:]
    if layout == SPACE_LAYOUTS[3]:
        return (rand(batch, n_heads, n_q, d), rand(batch, n_kv_heads, n_k + 5, d)[:, :, :n_k],
                rand(batch, n_kv_heads, n_k + 11, d)[:, :, :n_k])
    return seq_major(n_heads, n_q), rand(batch, n_kv_heads, n_k, d), seq_major(n_kv_heads, n_k)


def _reference(q, k, v, group):
    """Attention in float64, K/V head ``h // group`` for query head ``h``."""
    k, v = (t.double().repeat_interleave(group, dim=1) for t in (k, v))
    scores = q.double() @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
    return torch.softmax(scores, dim=-1) @ v


def _heads_read(got, q, k, v, group, pairs) -> str:
    """``"query head h read K/V head j, ..."`` when the wrong ``pairs`` of ``got`` (CPU) are attention over another
    K/V head of their batch, else ``""``."""
    read = {}
    for b, h in pairs:
        for j in range(k.shape[1]):
            if j != h // group and h not in read and torch.allclose(got[b, h].double(), _reference(
                    q[b:b + 1, h:h + 1], k[b:b + 1, j:j + 1], v[b:b + 1, j:j + 1], 1)[0, 0], atol=1e-4, rtol=1e-4):
                read[h] = f"query head {h} read K/V head {j}, not h // group = {h // group}"
                break
    if not read:
        return ""
    return (f"{'; '.join(list(read.values())[:3])}. {q.shape[1]} query heads over {k.shape[1]} K/V heads: groups of {group} "
            f"CONSECUTIVE query heads share one K/V head, h_kv = h // group (group = n_heads // n_kv_heads).")


def _rows_hint(bad: torch.Tensor, n_q: int, n_k: int, block_m: int) -> str:
    """When exactly the last query rows are wrong, in every (batch, head), from a tile boundary on (``bad``: a
    (batch, heads, n_q, d) boolean of the wrong elements): the grid's query tiles stop short, and what count of them
    gives that; else ``""``."""
    bad_rows = bad.any(dim=3).any(dim=1).any(dim=0).nonzero().flatten().tolist()
    first = bad_rows[0] if bad_rows else 0
    if not (first > 0 and first % block_m == 0 and bad_rows == list(range(first, n_q))
            and bool(bad[:, :, first:].any(dim=3).all())):
        return ""
    causes = []
    if (n_q // block_m) * block_m == first:
        causes.append(f"n_q // BLOCK_M = {n_q} // {block_m} = {n_q // block_m} rounds the last, partial tile away")
    if math.ceil(n_k / block_m) * block_m == first:
        causes.append(f"cdiv(n_k, BLOCK_M) with n_k = {n_k}, a grid built from the keys' length, gives that")
    cause = f" ({'; '.join(causes)})" if causes else ""
    return (f"rows 0 to {first - 1} of every (batch, head) are right and rows {first} to {n_q - 1} wrong: the grid "
            f"has {first // block_m} query tiles of BLOCK_M = {block_m}{cause}, so the last query rows were never "
            f"computed nor written; n_q = {n_q} rows need cdiv(n_q, BLOCK_M) = {math.ceil(n_q / block_m)}.")


def _space_hint(got, want, q, k, v, group, block_m, out_strides) -> str:
    """Which part of the launch is wrong, read off where ``got`` (CPU, float64) differs from ``want``."""
    batch, n_heads, n_q, _ = q.shape
    n_kv_heads, n_k = k.shape[1], k.shape[2]
    bad = ~torch.isclose(got, want, atol=1e-4, rtol=1e-4, equal_nan=False)
    rows = _rows_hint(bad, n_q, n_k, block_m)
    if rows:
        return rows
    pairs = [(b, h) for b in range(batch) for h in range(n_heads) if bad[b, h].any()]
    read = _heads_read(got, q, k, v, group, pairs)
    if read:
        return read
    return _offsets_hint(pairs, q, k, v, group, out_strides) or (
        f"the (batch, head) pairs {pairs[:8]} of {batch} x {n_heads} are wrong: each of Q, K, V and Out moves by its "
        f"own strides ({_strides(q, k, v, out_strides)}).")


def _strides(q, k, v, out_strides) -> str:
    return f"q's strides {tuple(q.stride())}, k's {tuple(k.stride())}, v's {tuple(v.stride())}, the output's {out_strides}"


def _offsets_hint(pairs, q, k, v, group, out_strides) -> str:
    """When the wrong (batch, head) ``pairs`` are exactly those whose batch offset, or head offset, is not 0 (0 times
    any stride is right): an offset multiplied by another tensor's stride; else ``""``."""
    batch, n_heads = q.shape[:2]
    wrong = set(pairs)
    everything = [(b, h) for b in range(batch) for h in range(n_heads)]
    alike = "" if tuple(k.stride()) == tuple(v.stride()) else " Here k and v are not laid out alike."
    for offset, right in [("batch offset is", lambda b, h: b == 0), ("K/V head offset is", lambda b, h: h // group == 0),
                          ("query head offset is", lambda b, h: h == 0),
                          ("batch and K/V head offsets are", lambda b, h: b == 0 and h // group == 0)]:
        if len(wrong) < len(everything) and wrong == {(b, h) for b, h in everything if not right(b, h)}:
            if group == 1 and offset == "K/V head offset is":
                offset = "head offset is"   # one K/V head per query head: the two offsets are one
            return (f"the (batch, head) pairs {pairs[:8]} are wrong, and exactly those whose {offset} 0 (so 0 times "
                    f"any stride) are right: an offset multiplied by another tensor's stride. Each of Q, K, V and Out "
                    f"moves by its OWN strides ({_strides(q, k, v, out_strides)}).{alike}")
    return ""


def _space_case(gqa_forward: Callable, g: torch.Generator, batch, n_heads, n_kv_heads, n_q, n_k, d, layout, block_m,
               block_n) -> None:
    """One input of the space (the module docstring), drawn with ``g``: ``gqa_forward`` against float64 attention."""
    __tracebackhide__ = True
    q, k, v = _space_inputs(g, batch, n_heads, n_kv_heads, n_q, n_k, d, layout)
    name = (f"gqa_forward with batch {batch}, {n_heads} query heads over {n_kv_heads} K/V heads (group "
            f"{n_heads // n_kv_heads}), n_q = {n_q}, n_k = {n_k}, d = {d}, block_m = {block_m}, block_n = "
            f"{block_n}, {layout}")
    got = gqa_forward(q.to(device.DEVICE), k.to(device.DEVICE), v.to(device.DEVICE), block_m=block_m, block_n=block_n)
    want = _reference(q, k, v, n_heads // n_kv_heads)
    if not isinstance(got, torch.Tensor) or got.shape != want.shape or got.dtype != torch.float32:
        raise AssertionError(f"{name}: expected a float32 tensor of shape {tuple(want.shape)}, got "
                             f"{getattr(got, 'dtype', type(got).__name__)} {tuple(getattr(got, 'shape', ()))}: "
                             f"a new tensor like q.")
    g64 = got.detach().to("cpu", torch.float64)
    hint = ("" if torch.allclose(g64, want, atol=1e-4, rtol=1e-4) else
            _space_hint(g64, want, q, k, v, n_heads // n_kv_heads, block_m, tuple(got.stride())))
    assert_close(g64, want, atol=1e-4, rtol=1e-4, name=name, hint=hint)


def check_over_the_space(gqa_forward: Callable) -> None:
    """Check 5: your launcher and kernel against float64 attention on inputs drawn from the whole stated space (the
    module docstring), boundaries included: the first input where yours differs, which (batch, head) pairs and rows,
    by how much."""
    __tracebackhide__ = True
    contiguous, views, fused, caches, mixed = SPACE_LAYOUTS
    # (batch, n_heads, n_kv_heads, n_q, n_k, d, layout, BLOCK_M, BLOCK_N)
    cases = [(1, 1, 1, 1, 1, 16, contiguous, 16, 32), (2, 3, 3, 17, 16, 16, contiguous, 16, 32),
             (2, 4, 1, 16, 33, 16, views, 16, 32), (2, 4, 2, 33, 31, 16, caches, 16, 32),
             (1, 6, 2, 15, 32, 32, mixed, 16, 32), (2, 2, 1, 1, 17, 64, fused, 16, 32),
             (3, 4, 4, 31, 1, 16, fused, 16, 16), (1, 8, 2, 20, 40, 16, mixed, 32, 16),
             (2, 3, 1, 16, 16, 16, caches, 16, 16), (2, 2, 2, 32, 15, 16, mixed, 16, 16)]
    g = torch.Generator().manual_seed(5)
    for _ in range(3):
        n_kv_heads, group = (int(torch.randint(1, 4, (1,), generator=g)) for _ in range(2))
        n_q, n_k = (int(torch.randint(1, 34, (1,), generator=g)) for _ in range(2))
        cases.append((int(torch.randint(1, 3, (1,), generator=g)), n_kv_heads * group, n_kv_heads, n_q, n_k,
                      (16, 32)[int(torch.randint(0, 2, (1,), generator=g))],
                      SPACE_LAYOUTS[int(torch.randint(0, len(SPACE_LAYOUTS), (1,), generator=g))], 16, 32))
    for case in cases:
        _space_case(gqa_forward, g, *case)
    for n_heads, n_kv_heads in [(2, 4), (6, 4)]:
        q, k, v = attention_inputs(1, n_heads, n_kv_heads, 8, 8)
        try:
            gqa_forward(q, k, v)
        except ValueError:
            continue
        raise AssertionError(f"gqa_forward of {n_heads} query heads over {n_kv_heads} K/V heads returned a result: "
                             f"{n_heads} is not a multiple of {n_kv_heads}, so the launcher raises a ValueError "
                             f"naming k before launching anything.")
