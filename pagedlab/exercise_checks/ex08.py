"""Exercise 8's checks: the swap and recompute cost model, the crossover block size, what a forked sequence shares."""

from __future__ import annotations

import math

from ..memory import LLAMA3_8B, OPT_13B
from ..paged import BlockManager, preemption


def forked(parent_tokens, child_tokens, block_size=16):
    """A manager whose "child" was forked from a "parent" of ``parent_tokens`` and appended ``child_tokens``."""
    m = BlockManager(num_blocks=4096, block_size=block_size, num_cpu_blocks=4096)
    m.add("parent", range(parent_tokens))
    m.fork("parent", "child")
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
            f"{n} tokens in blocks of {block_size}: expected {expected * 1e3:.6g} ms, got {got * 1e3:.6g} ms. "
            f"Hint: {hint}")


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
            f"{n} tokens: expected {expected * 1e3:.6g} ms, got {got * 1e3:.6g} ms. Hint: {hint}")


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
            f"{expected:.4g} tokens, you return {got:.4g}. Hint: {hint}")
    slow = crossover_block_size(1024, OPT_13B.num_layers, 10_240, 1e9, 10e-6, 0.05)
    assert slow == math.inf, (
        f"over a 1 GB/s link OPT-13B's bytes alone take {4 * 40 * 1024 * 10_240 / 1e9 * 1e3:.0f} ms against a 50 ms "
        f"prefill, so no block size makes swapping cheaper: expected math.inf, got {slow}. Hint: when the bytes "
        f"alone cost as much as the prefill, no B solves the equation.")


def check_forked_sequence(preemption_seconds) -> None:
    """Check 4: a forked sequence costs less to preempt."""
    __tracebackhide__ = True
    link = preemption.Link("PCIe 4.0 x16", 31.5e9, 10e-6)
    a100 = preemption.Accelerator("A100", 312e12, 0.5)
    chunk, d_model = OPT_13B.num_kv_heads * OPT_13B.head_dim * 2, OPT_13B.num_heads * OPT_13B.head_dim
    prefill = lambda n: preemption.recompute_seconds(n, 12.9e9, OPT_13B.num_layers, d_model, a100)
    swap = lambda blocks: preemption.swap_seconds(blocks * 16, 16, OPT_13B.num_layers, chunk, link)
    # (parent tokens, child tokens, private blocks, cached tokens of the child; alone: the parent, unshared)
    for parent_tokens, child_tokens, private, cached in [(1024, 64, 4, 1024), (1000, 20, 2, 992), (1000, 0, 0, 992)]:
        m = forked(parent_tokens, child_tokens)
        n, blocks = m.table("child").num_tokens, m.table("child").num_blocks
        got_swap, got_rec = preemption_seconds(m, "child", OPT_13B, 12.9e9, 31.5e9, 10e-6, 156e12)
        want_swap, want_rec = swap(private), prefill(n) - prefill(cached)
        what = f"a child of {n} tokens forked from {parent_tokens} ({private} of its {blocks} blocks private)"
        assert not math.isclose(got_swap, swap(blocks), rel_tol=1e-9), (
            f"{what}: your t_swap = {got_swap * 1e3:.2f} ms copies all {blocks} blocks. The {blocks - private} shared "
            f"ones stay on the GPU for the parent: swap copies only the {private} private blocks "
            f"(refcount == 1), {want_swap * 1e3:.2f} ms.")
        assert math.isclose(got_swap, want_swap, rel_tol=1e-9), (
            f"{what}: expected t_swap = {want_swap * 1e3:.3f} ms, got {got_swap * 1e3:.3f} ms. Hint: "
            f"the swap cost of the private blocks only, whole blocks.")
        linear_only = (2 * 12.9e9 * (n - cached) + 2 * OPT_13B.num_layers * d_model * (n - cached) ** 2) / 156e12
        if math.isclose(got_rec, prefill(n), rel_tol=1e-9):
            hint = (f"you recompute all {n} tokens; the {cached} tokens of the leading shared, full blocks stay "
                    f"resident, so only tokens {cached}..{n - 1} are recomputed.")
        elif math.isclose(got_rec, linear_only, rel_tol=1e-9):
            hint = (f"tokens {cached}..{n - 1} attend to every earlier token, the {cached} cached ones included: "
                    f"their attention term is not that of a {n - cached}-token prefill: the token at position p "
                    f"attends to p tokens, and only the positions {cached}..{n - 1} are recomputed.")
        elif math.isclose(got_rec, prefill(n) - prefill(cached + 16), rel_tol=1e-9) or \
                math.isclose(got_rec, prefill(n) - prefill(parent_tokens), rel_tol=1e-9):
            hint = "count only the leading shared blocks that are FULL: a partly filled block is not cached."
        else:
            hint = "the recomputed tokens c..n-1 cost their linear term and their attention to every earlier token."
        assert math.isclose(got_rec, want_rec, rel_tol=1e-9), (
            f"{what}: expected t_recompute = {want_rec * 1e3:.3f} ms, got {got_rec * 1e3:.3f} ms. Hint: {hint}")


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
    ]
    for manager, model, params, expected, why in cases:
        got = choose(manager, "child" if "child" in manager.seq_ids else "victim", model, params, **a100_pcie4)
        assert got == expected, (
            f"{model.name}, blocks of {manager.block_size}, {manager.cpu_allocator.num_free} free CPU blocks: "
            f"expected {expected!r}, got {got!r} ({why}).")
