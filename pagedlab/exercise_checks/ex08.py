"""Exercise 8's checks: the swap and recompute cost model, the crossover block size, what a forked sequence shares.

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included:

* ``swap_seconds``: ``num_tokens`` from 0 to 32,768 (0, a multiple of ``block_size``, one past it); ``block_size`` a
  power of two from 1 to 256 (and any positive int); ``num_layers`` and ``chunk_bytes_per_token`` of an MHA model
  (OPT-13B: 40 layers, 40 KV heads x 128 x 2 bytes) and a GQA one (Llama-3-8B: 32 layers, 8 KV heads x 128 x 2);
  ``bandwidth`` 1 to 64 GB/s; ``latency`` 0 to 20 us.
* ``recompute_seconds``: ``num_tokens`` from 0 to 32,768; ``d_model`` = ``num_heads x head_dim`` (5,120 and 4,096);
  ``flops`` 50 to 500 TFLOP/s.
* ``crossover_block_size``: the same links and models; a recompute time with room to spare, with none (the bytes
  alone take exactly the prefill: ``math.inf``) and with less than none.
* ``preemption_seconds`` and ``choose``: a child forked from a parent of 1 to 4,096 tokens (at a block boundary and
  inside a block), once or twice (three owners of a block), having generated 0 to 100 tokens, blocks of 4 to 64, MHA and GQA models, and a CPU pool that
  fits the child's blocks exactly or is one block short. ``t_recompute`` is compared within
  :data:`RECOMPUTE_RTOL` (the instructions' "approximately": the n^2 form and the exact sum over positions agree to
  that); ``choose`` is compared where the two costs differ by more than that.
"""

from __future__ import annotations

import math

import random

from ..memory import LLAMA3_8B, OPT_13B
from ..paged import BlockManager, preemption

RECOMPUTE_RTOL = 1e-3
"""What "approximately" means for a recompute time (0.1%): the exact sum of the attention term over positions and
the n^2 form differ by far less at the sizes checked (0.01% for 64 tokens after a 1,024-token prefix), a wrong
count of FLOPs by far more (a GQA model's d_model taken from its KV heads: 5%)."""


def _ms(seconds: float) -> str:
    """Milliseconds with enough digits to see where two close values differ."""
    return f"{seconds * 1e3:.9g} ms"


def _differ(got: float, want: float) -> str:
    """How far ``got`` is from ``want``, relative."""
    return f"{(got - want) / want:+.2e} relative" if want else f"{got - want:+.3g} absolute"


def forked(parent_tokens, child_tokens, block_size=16, cpu_blocks=4096, siblings=0):
    """A manager whose "child" was forked from a "parent" of ``parent_tokens`` and appended ``child_tokens``, with
    ``cpu_blocks`` blocks in its CPU pool; ``siblings`` more children forked from the parent before it appends (the
    parent's blocks then have ``2 + siblings`` owners)."""
    m = BlockManager(num_blocks=4096, block_size=block_size, num_cpu_blocks=cpu_blocks)
    m.add("parent", range(parent_tokens))
    m.fork("parent", "child")
    for i in range(siblings):
        m.fork("parent", f"sibling {i}")
    for t in range(child_tokens):
        m.append("child", t)
    return m


def check_swapping(swap_seconds) -> None:
    """Check 1: swapping."""
    __tracebackhide__ = True
    link = preemption.Link("PCIe 4.0 x16", 31.5e9, 10e-6)
    chunk = OPT_13B.num_kv_heads * OPT_13B.head_dim * 2
    for n, block_size in [(1024, 16), (1000, 16), (7, 4), (1024, 1), (2048, 256)]:
        got = swap_seconds(n, block_size, OPT_13B.num_layers, chunk, link.bytes_per_second, link.latency)
        expected = preemption.swap_seconds(n, block_size, OPT_13B.num_layers, chunk, link)
        if math.isclose(got * 2, expected, rel_tol=1e-9):
            hint = "half the expected time: count both directions (out now, back in later), or both K and V."
        elif math.isclose(got * OPT_13B.num_layers, expected, rel_tol=1e-9):
            hint = "every layer has its own K and V chunk per block: multiply by the number of layers."
        elif n % block_size and math.isclose(got, preemption.swap_seconds(n - n % block_size, block_size,
                                                                          OPT_13B.num_layers, chunk, link), rel_tol=1e-9):
            hint = "the last, partly filled block is copied too: round the number of blocks up (ceil)."
        elif math.isclose(got, preemption.swap_seconds(n, block_size, OPT_13B.num_layers, chunk,
                                                       preemption.Link("no latency", link.bytes_per_second, 0.0)),
                          rel_tol=1e-9):
            hint = "every copy also pays the fixed latency (10 µs here), besides its bytes over the link."
        else:
            hint = "count the copies (directions, K and V, layers, blocks) and what each one costs."
        assert math.isclose(got, expected, rel_tol=1e-9), (
            f"{n} tokens in blocks of {block_size}: expected {_ms(expected)}, got {_ms(got)} "
            f"({_differ(got, expected)}). Hint: {hint}")


def check_recomputing(recompute_seconds) -> None:
    """Check 2: recomputing."""
    __tracebackhide__ = True
    d_model = OPT_13B.num_heads * OPT_13B.head_dim
    accelerator = preemption.Accelerator("A100", 312e12, 0.5)
    for n in [1, 1024, 32_768]:
        got = recompute_seconds(n, 12.9e9, OPT_13B.num_layers, d_model, 156e12)
        expected = preemption.recompute_seconds(n, 12.9e9, OPT_13B.num_layers, d_model, accelerator)
        linear_only = 2 * 12.9e9 * n / 156e12
        if math.isclose(got, linear_only, rel_tol=1e-9):
            hint = "the attention term is missing: causal attention adds 2 x layers x d_model x n^2 FLOPs, which dominates at long contexts."
        elif math.isclose(got * 2, expected, rel_tol=0.01):
            hint = "half the expected time: a forward pass costs 2 FLOPs per parameter per token (a multiply and an add)."
        else:
            hint = "the prefill's FLOPs are a linear term per token plus the causal attention term, over flops."
        assert math.isclose(got, expected, rel_tol=1e-9), (
            f"{n} tokens: expected {_ms(expected)}, got {_ms(got)} ({_differ(got, expected)}). Hint: {hint}")


def check_crossover(crossover_block_size, recompute_seconds) -> None:
    """Check 3: where swapping starts to win."""
    __tracebackhide__ = True
    def continuous_swap(n, B, layers, chunk, bandwidth, latency):
        # t_swap with n / B blocks instead of ceil(n / B): the formula of section 1 for a B that divides n
        return 2 * 2 * layers * (n / B) * (latency + B * chunk / bandwidth)

    def root(f, lo, hi):
        # The B in [lo, hi] where f changes sign, by bisection (f decreasing in B).
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return (lo + hi) / 2

    for model, params, n, bandwidth in [(OPT_13B, 12.9e9, 1024, 31.5e9), (LLAMA3_8B, 8.0e9, 4096, 31.5e9),
                                        (OPT_13B, 12.9e9, 256, 64e9)]:
        chunk = model.num_kv_heads * model.head_dim * 2
        t_rec = recompute_seconds(n, params, model.num_layers, model.num_heads * model.head_dim, 156e12)
        got = crossover_block_size(n, model.num_layers, chunk, bandwidth, 10e-6, t_rec)
        expected = root(lambda B: continuous_swap(n, B, model.num_layers, chunk, bandwidth, 10e-6) - t_rec, 1e-6, 1e9)
        too_few = [10e-6 / (t_rec / (f * model.num_layers * n) - chunk / bandwidth) for f in (1, 2)
                   if t_rec / (f * model.num_layers * n) > chunk / bandwidth]
        if any(math.isclose(got, b, rel_tol=1e-6) for b in too_few):
            hint = "count every copy: 2 directions x (a K and a V chunk) x L layers x n / B blocks."
        elif math.isclose(got, 10e-6 / (t_rec / (4 * model.num_layers * n)), rel_tol=1e-6):
            hint = ("the bytes over the link cost time too: your B* is the one the latency alone would give, as if "
                    "the bandwidth were infinite.")
        else:
            hint = ("with n / B blocks, split t_swap(B) into the part that shrinks as B grows and the part that "
                    "does not, then solve t_swap(B) = t_recompute for B.")
        assert math.isclose(got, expected, rel_tol=1e-6), (
            f"{model.name}, {n} tokens, {bandwidth / 1e9:g} GB/s: swap and recompute cost the same at B* = "
            f"{expected:.9g} tokens, you return {got:.9g} ({_differ(got, expected)}). Hint: {hint}")
    slow = crossover_block_size(1024, OPT_13B.num_layers, 10_240, 1e9, 10e-6, 0.05)
    assert slow == math.inf, (
        f"over a 1 GB/s link OPT-13B's bytes alone take {4 * 40 * 1024 * 10_240 / 1e9 * 1e3:.0f} ms against a 50 ms "
        f"prefill, so no block size makes swapping cheaper: expected math.inf, got {slow}. Hint: when the bytes "
        f"alone cost as much as the prefill, no B solves the equation.")
    # Zero room, exactly: 4 L n c / bw = 4 x 32 x 1024 x 8192 / 2**33 = 0.125 s is the prefill, in exact binary
    # fractions, so the bytes alone cost exactly the recompute time.
    try:
        exact = crossover_block_size(1024, 32, 8192, 2.0 ** 33, 10e-6, 0.125)
    except ZeroDivisionError as exc:
        raise AssertionError(
            f"Llama-3-8B-like, 1024 tokens, 32 layers, 8192 bytes per token and chunk over a {2 ** 33 / 1e9:.2f} GB/s "
            f"link: the bytes alone take exactly the 125 ms prefill, and crossover_block_size raised "
            f"ZeroDivisionError: {exc}. Hint: with no time left for the latency, no block size makes swapping "
            f"cheaper: return math.inf when the bytes alone cost as much as the prefill, equality included "
            f"(<=, not <).") from None
    assert exact == math.inf, (
        f"1024 tokens, 32 layers, 8192 bytes per token and chunk over a {2 ** 33 / 1e9:.2f} GB/s link: the bytes "
        f"alone take exactly the 125 ms prefill, so no block size makes swapping cheaper: expected math.inf, got "
        f"{exact}. Hint: equality included (<=, not <).")


def _private_and_cached(manager: BlockManager, seq_id) -> tuple[int, int]:
    """The private blocks of ``seq_id`` and the tokens of its leading shared, full blocks."""
    table, bs = manager.table(seq_id), manager.block_size
    shared = [manager.allocator.refcount(b) > 1 for b in table.block_ids]
    leading = next((i for i, s in enumerate(shared) if not s), len(shared))
    return shared.count(False), min(leading, table.num_tokens // bs) * bs


def _costs(manager: BlockManager, seq_id, model, params, bandwidth, latency, flops) -> tuple[float, float]:
    """(t_swap, t_recompute) of preempting ``seq_id``, by the exercise's accounting."""
    private, cached = _private_and_cached(manager, seq_id)
    n, bs = manager.table(seq_id).num_tokens, manager.block_size
    link, gpu = preemption.Link("", bandwidth, latency), preemption.Accelerator("", flops, 1.0)
    d_model = model.num_heads * model.head_dim
    t_swap = preemption.swap_seconds(private * bs, bs, model.num_layers, model.num_kv_heads * model.head_dim * 2, link)
    t_rec = (preemption.recompute_seconds(n, params, model.num_layers, d_model, gpu)
             - preemption.recompute_seconds(cached, params, model.num_layers, d_model, gpu))
    return t_swap, t_rec


def _sharing_message(what: str, got: tuple, manager: BlockManager, seq_id, model, params, bandwidth, latency,
                     flops) -> str | None:
    """The first message for ``got`` = (t_swap, t_recompute) against the exercise's accounting, or None if right:
    which of the two differs, by how much, and the mistake its value matches."""
    got_swap, got_rec = got
    want_swap, want_rec = _costs(manager, seq_id, model, params, bandwidth, latency, flops)
    private, cached = _private_and_cached(manager, seq_id)
    table, bs = manager.table(seq_id), manager.block_size
    n, blocks, layers = table.num_tokens, table.num_blocks, model.num_layers
    link, gpu = preemption.Link("", bandwidth, latency), preemption.Accelerator("", flops, 1.0)
    chunk, d_model = model.num_kv_heads * model.head_dim * 2, model.num_heads * model.head_dim
    if not math.isclose(got_swap, want_swap, rel_tol=1e-9):
        owners = [manager.allocator.refcount(b) for b in table.block_ids]
        if max(owners) > 2 and math.isclose(got_swap, preemption.swap_seconds(
                sum(o != 2 for o in owners) * bs, bs, layers, chunk, link), rel_tol=1e-9):
            hint = (f"a block is shared when its reference count is above 1, not when it is 2: here the parent was "
                    f"forked twice, and {owners.count(max(owners))} blocks have {max(owners)} owners.")
        elif math.isclose(got_swap, preemption.swap_seconds(blocks * bs, bs, layers, chunk, link), rel_tol=1e-9):
            hint = (f"your t_swap copies all {blocks} blocks. The {blocks - private} shared ones stay on the GPU "
                    f"for the other sequence: swap copies only the {private} private blocks (refcount == 1).")
        elif math.isclose(got_swap, preemption.swap_seconds(private * bs, bs, layers, 2 * chunk, link), rel_tol=1e-9):
            hint = "the cache is bf16: 2 bytes per element, not 4 (float32)."
        elif math.isclose(got_swap, preemption.swap_seconds(private * bs, bs, layers, model.num_heads *
                                                             model.head_dim * 2, link), rel_tol=1e-9):
            hint = (f"a chunk is a token's K (or V) in one layer: num_kv_heads x head_dim x 2 bytes. {model.name} "
                    f"has {model.num_kv_heads} KV heads for {model.num_heads} query heads (GQA).")
        else:
            hint = "the swap cost of the private blocks only, whole blocks, K and V, each layer, both ways."
        return (f"{what}: t_swap should be {_ms(want_swap)}, got {_ms(got_swap)} ({_differ(got_swap, want_swap)}). "
                f"Hint: {hint}")
    if math.isclose(got_rec, want_rec, rel_tol=RECOMPUTE_RTOL):
        return None
    prefill = lambda k, d=d_model: preemption.recompute_seconds(k, params, layers, d, gpu)
    gqa_width = model.num_kv_heads * model.head_dim
    if gqa_width != d_model and math.isclose(got_rec, prefill(n, gqa_width) - prefill(cached, gqa_width),
                                             rel_tol=RECOMPUTE_RTOL):
        hint = (f"d_model is num_heads x head_dim = {d_model}: {model.name} has {model.num_heads} query heads "
                f"and {model.num_kv_heads} KV heads (GQA), and num_kv_heads x head_dim = {gqa_width} is the width "
                f"of K and V, not of the model.")
    elif math.isclose(got_rec, prefill(n), rel_tol=RECOMPUTE_RTOL):
        hint = (f"you recompute all {n} tokens; the {cached} tokens of the leading shared, full blocks stay "
                f"resident, so only tokens {cached}..{n - 1} are recomputed.")
    elif math.isclose(got_rec, prefill(n - cached), rel_tol=RECOMPUTE_RTOL):
        hint = (f"tokens {cached}..{n - 1} attend to every earlier token, the {cached} cached ones included: "
                f"their attention term is not that of a {n - cached}-token prefill: the token at position p "
                f"attends to p tokens, and only the positions {cached}..{n - 1} are recomputed.")
    elif any(math.isclose(got_rec, prefill(n) - prefill(c), rel_tol=RECOMPUTE_RTOL)
             for c in {cached + bs, -(-n // bs) * bs, (n // bs) * bs} - {cached}):
        hint = "count only the leading shared blocks that are FULL: a partly filled block is not cached."
    else:
        hint = "the recomputed tokens c..n-1 cost their linear term and their attention to every earlier token."
    return (f"{what}: t_recompute should be {_ms(want_rec)} (within {RECOMPUTE_RTOL:.1%}), got {_ms(got_rec)} "
            f"({_differ(got_rec, want_rec)}). Hint: {hint}")


def check_forked_sequence(preemption_seconds) -> None:
    """Check 4: a forked sequence costs less to preempt, for an MHA model (OPT-13B) and a GQA one (Llama-3-8B)."""
    __tracebackhide__ = True
    # (model, parameters, parent tokens, child tokens, other children of the parent)
    for model, params, parent_tokens, child_tokens, siblings in [
            (OPT_13B, 12.9e9, 1024, 64, 0), (OPT_13B, 12.9e9, 1000, 20, 0), (OPT_13B, 12.9e9, 1000, 0, 0),
            (LLAMA3_8B, 8.0e9, 4096, 64, 0), (OPT_13B, 12.9e9, 1000, 20, 1)]:
        m = forked(parent_tokens, child_tokens, siblings=siblings)
        private, _ = _private_and_cached(m, "child")
        n, blocks = m.table("child").num_tokens, m.table("child").num_blocks
        got = preemption_seconds(m, "child", model, params, 31.5e9, 10e-6, 156e12)
        what = (f"{model.name}, a child of {n} tokens forked from {parent_tokens}"
                f"{' with a sibling (three owners of a shared block)' if siblings else ''} ({private} of its "
                f"{blocks} blocks private)")
        message = _sharing_message(what, got, m, "child", model, params, 31.5e9, 10e-6, 156e12)
        assert message is None, message


def check_decisions(choose) -> None:
    """Check 5: what the block size, sharing, the model and the CPU pool decide."""
    __tracebackhide__ = True
    def manager_with(block_size, num_tokens, cpu_blocks):
        m = BlockManager(num_blocks=4096, block_size=block_size, num_cpu_blocks=cpu_blocks)
        m.add("victim", range(num_tokens))
        return m

    a100_pcie4 = dict(bandwidth=31.5e9, latency=10e-6, flops=156e12)
    cases = [
        (manager_with(4, 1024, 4096), OPT_13B, 12.9e9, "recompute", "tiny blocks make thousands of copies, each paying the latency"),
        (manager_with(64, 1024, 4096), OPT_13B, 12.9e9, "swap", "big blocks: few copies, and OPT-13B's prefill is expensive"),
        (manager_with(64, 1024, 8), OPT_13B, 12.9e9, "recompute", "the CPU pool has 8 free blocks, the sequence needs 16: it cannot be swapped"),
        (manager_with(16, 1024, 4096), LLAMA3_8B, 8.0e9, "swap", "32 layers x 64 blocks x K and V: 8,192 copies, about 90 ms, against a 107 ms prefill"),
        (forked(1024, 64), OPT_13B, 12.9e9, "swap", "only 4 private blocks to copy (9.7 ms) against 64 tokens to recompute that attend to 1,088 (10.9 ms)"),
        (forked(1024, 0), OPT_13B, 12.9e9, "recompute", "forked at a block boundary, the child owns no block and has no token of its own: both cost 0 s, and swapping is not cheaper"),
    ]
    for manager, model, params, expected, why in cases:
        got = choose(manager, "child" if "child" in manager.seq_ids else "victim", model, params, **a100_pcie4)
        assert got == expected, (
            f"{model.name}, blocks of {manager.block_size}, {manager.cpu_allocator.num_free} free CPU blocks: "
            f"expected {expected!r}, got {got!r} ({why}).")


def _cases(seed: int = 8) -> list[tuple]:
    """Inputs drawn from the stated space (module docstring), boundaries first: (model, params, n, block_size,
    bandwidth, latency, flops)."""
    models = [(OPT_13B, 12.9e9), (LLAMA3_8B, 8.0e9)]
    bounds = [(m, p, n, bs, 31.5e9, 10e-6, 156e12) for m, p in models
              for n, bs in [(0, 16), (1, 1), (16, 16), (17, 16), (1023, 256), (1024, 256), (1025, 256),
                            (32_768, 64)]]
    rng = random.Random(seed)
    drawn = [(*rng.choice(models), rng.randint(0, 32_768), rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256, 3, 24]),
              rng.uniform(1e9, 64e9), rng.choice([0.0, rng.uniform(1e-6, 20e-6)]), rng.uniform(50e12, 500e12))
             for _ in range(60)]
    return bounds + drawn


def _forks(seed: int = 9) -> list[tuple]:
    """(model, params, parent tokens, child tokens, block size, CPU blocks beyond the child's blocks: 0, -1, 50)."""
    models = [(OPT_13B, 12.9e9), (LLAMA3_8B, 8.0e9)]
    bounds = [(m, p, parent, child, 16, room) for m, p in models for parent, child in
              [(1, 0), (16, 0), (16, 1), (15, 1), (1024, 64), (1000, 0), (4096, 100)] for room in (0, -1)]
    rng = random.Random(seed)
    drawn = [(*rng.choice(models), rng.randint(1, 4096), rng.randint(0, 100), rng.choice([4, 8, 16, 32, 64]),
              rng.choice([0, -1, 50])) for _ in range(40)]
    return bounds + drawn


def check_over_the_space(swap_seconds, recompute_seconds, crossover_block_size, preemption_seconds, choose) -> None:
    """Check 6: every function against the exercise's model on inputs drawn from the stated space (the module
    docstring), MHA and GQA models, boundaries included: the first input where yours differs, and by how much."""
    __tracebackhide__ = True
    for model, params, n, bs, bw, lat, flops in _cases():
        chunk, d_model = model.num_kv_heads * model.head_dim * 2, model.num_heads * model.head_dim
        where = (f"{model.name}, {n} tokens, blocks of {bs}, {bw / 1e9:.4g} GB/s, {lat * 1e6:.4g} us, "
                 f"{flops / 1e12:.4g} TFLOP/s")
        want = preemption.swap_seconds(n, bs, model.num_layers, chunk, preemption.Link("", bw, lat))
        got = swap_seconds(n, bs, model.num_layers, chunk, bw, lat)
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-15), (
            f"swap_seconds, {where}: expected {_ms(want)}, got {_ms(got)}. Hint: ceil(n / B) blocks, a K and a V "
            f"chunk per layer and block, each copy its latency plus its bytes, both ways.")
        want = preemption.recompute_seconds(n, params, model.num_layers, d_model, preemption.Accelerator("", flops, 1))
        got = recompute_seconds(n, params, model.num_layers, d_model, flops)
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-15), (
            f"recompute_seconds, {where}: expected {_ms(want)}, got {_ms(got)}. Hint: 2 N n + 2 L d_model n^2 "
            f"FLOPs.")
        if n == 0:
            continue
        # A recompute time with room (the drawn one), with none (the bytes alone), with less than none. Zero room
        # over a power-of-two bandwidth near the drawn one: then the bytes' time is exact, and so is every way of
        # writing "no room left" (a difference of 0, a ratio of 1); over another bandwidth, rounding leaves a
        # residue of either sign, and an equivalent formula could land on the other side of it.
        exact_bw = 2.0 ** round(math.log2(bw))
        bytes_alone = 4 * model.num_layers * n * chunk / bw
        for t_rec, link, room in [(want, bw, "the prefill above"),
                                  (4 * model.num_layers * n * chunk / exact_bw, exact_bw,
                                   "exactly the bytes' time (zero room)"),
                                  (bytes_alone * 0.9, bw, "less than the bytes' time")]:
            where = (f"{model.name}, {n} tokens, blocks of {bs}, {link / 1e9:.4g} GB/s, {lat * 1e6:.4g} us, "
                     f"{flops / 1e12:.4g} TFLOP/s")
            per_token = t_rec / (4 * model.num_layers * n) - chunk / link
            expected = lat / per_token if per_token > 0 else math.inf
            try:
                got = crossover_block_size(n, model.num_layers, chunk, link, lat, t_rec)
            except ZeroDivisionError:
                raise AssertionError(
                    f"crossover_block_size, {where}, a recompute time of {room}: raised ZeroDivisionError, expected "
                    f"{expected}. Hint: when the bytes alone cost as much as the prefill, equality included, return "
                    f"math.inf.") from None
            if expected == math.inf or got == math.inf:
                assert got == expected, (f"crossover_block_size, {where}, a recompute time of {room}: expected "
                                         f"{expected}, got {got}")
            else:
                assert math.isclose(got, expected, rel_tol=1e-6), (
                    f"crossover_block_size, {where}, a recompute time of {room}: expected {expected:.9g}, got "
                    f"{got:.9g} ({_differ(got, expected)})")
    for model, params, parent, child, bs, room in _forks():
        blocks = forked(parent, child, bs).table("child").num_blocks
        cpu = blocks + room             # swapping out needs a CPU block for each of the child's blocks
        m = forked(parent, child, bs, cpu)
        where = (f"{model.name}, a child of {parent + child} tokens forked from {parent}, blocks of {bs}, "
                 f"{cpu} free CPU blocks for its {blocks} blocks")
        rates = dict(bandwidth=31.5e9, latency=10e-6, flops=156e12)
        message = _sharing_message(f"preemption_seconds, {where}",
                                   preemption_seconds(m, "child", model, params, *rates.values()), m, "child", model,
                                   params, *rates.values())
        assert message is None, message
        t_swap, t_rec = _costs(m, "child", model, params, *rates.values())
        if abs(t_swap - t_rec) <= RECOMPUTE_RTOL * t_rec:
            continue            # too close to call within "approximately"
        want = "swap" if m.can_swap_out("child") and t_swap < t_rec else "recompute"
        got = choose(m, "child", model, params, **rates)
        assert got == want, (
            f"choose, {where}: expected {want!r}, got {got!r} (t_swap {_ms(t_swap)}, t_recompute {_ms(t_rec)}, "
            f"can_swap_out {m.can_swap_out('child')}). Hint: swap only if the CPU pool has room for the private "
            f"blocks AND swapping is cheaper.")

