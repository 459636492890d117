"""Exercise 9's checks: the paged decode kernel's head mapping and loop body, from one tile to GQA and large scores.

Each check builds a batch with :func:`~pagedlab.testing.random_paged_batch`, whose pool is
booby-trapped (stale slots and spare blocks hold NaN/inf), runs the learner's launcher ``paged_attention`` and compares
with gather + naive attention in float64. The hint is picked from what came back: NaN, inf, or finite values that
differ, and for those, whether they match a known wrong computation.

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included: ``q`` (num_seqs, heads, d) float32 with ``d`` 16 or 32; pools (num_blocks, block_size,
kv_heads, d) with ``block_size`` 8, 16, 32 or 64 (smaller than the key tile of 32, equal, larger), MHA (heads =
kv_heads), GQA (4 query heads per K/V head) and MQA (one K/V head); block tables int32, shuffled, padded past each
sequence's last block; context lengths 1, block_size - 1, block_size, block_size + 1, a multiple of the key tile and
one past it; scores near 1, in the hundreds, and all below -1e30 (exact in float32); block ids whose offset passes 2**31 elements (check 10).
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from ..attention import paged_decode_reference
from ..checks import assert_close
from ..testing import random_paged_batch
from ..validate import blocks_for
from . import check_full_precision_products, kernel_error_hint
from .triton_reads import elements, interpreted

Launcher = Callable[..., torch.Tensor]
def kernel_error(exc: BaseException) -> str:
    """The hint for an error raised while running the learner's kernel: about shapes only for a shape error."""
    return kernel_error_hint(exc, (
        "The score tile is (BLOCK_H, BLOCK_N), so k is loaded transposed, (HEAD_DIM, BLOCK_N), and v as "
        "(BLOCK_N, HEAD_DIM): every vector in a pointer or a mask must be expanded ([:, None] or [None, :]) to the "
        "rows and columns of the block it builds."))


def _batch(context_lens, block_size, heads, kv_heads, d=16, **batch):
    batch.setdefault("padding", "spare")  # padding entries name a spare block, never an address outside the pool
    return random_paged_batch(context_lens, block_size, heads, kv_heads, d, **batch)


def _some_heads(bad: list[list[int]], heads: int, kv_heads: int) -> str:
    """When only some query heads differ (the same ones in every sequence), a hint that points at the head mapping;
    else ``""``."""
    wrong = sorted({h for _, h in bad})
    right = [h for h in range(heads) if h not in wrong]
    if not wrong or not right:
        return ""
    return (f"Query heads {wrong} differ and {right} are right: when only some heads differ, the rows of the "
            f"program's query tile name the wrong query heads (or none). The program of K/V head kv_head serves the "
            f"group = heads // kv_heads = {heads // kv_heads} consecutive query heads from kv_head * group, and "
            f"offs_h runs over BLOCK_H rows of which only the first group are heads.")


def _compare(paged_attention: Launcher, context_lens, block_size, heads, kv_heads, hint: Callable[..., str],
             nan_hint: str = "", heads_hint: bool = True, prepare: Callable | None = None, **batch) -> None:
    """Run the learner's launcher on a batch and compare; ``hint(got, want, q, k, v, tables, lens)`` explains a
    finite difference, ``nan_hint`` (when given) a NaN; with ``heads_hint``, a difference in only some heads is
    put down to the head mapping first. ``prepare(q, k, v, tables, lens)`` may change the batch (returns it)."""
    __tracebackhide__ = True
    q, k, v, tables, lens = _batch(context_lens, block_size, heads, kv_heads, **batch)
    if prepare is not None:
        q, k, v, tables, lens = prepare(q, k, v, tables, lens)
    got = paged_attention(q, k, v, tables, lens)
    name = (f"output (seq, head, d) for context_lens {list(context_lens)}, block_size {block_size}, key tile 32, "
            f"{heads} query heads, {kv_heads} K/V heads")
    if not isinstance(got, torch.Tensor) or got.shape != q.shape:
        assert_close(got, q, name=name)  # names the type or the shape
    want = paged_decode_reference(q.double(), k.double(), v.double(), tables, lens)
    g = got.detach().cpu().double()
    bad = (~torch.isclose(g, want.cpu(), atol=1e-4, rtol=1e-4)).any(dim=-1).nonzero().tolist()
    nan = torch.isnan(g).any(dim=-1).nonzero().tolist()
    if not bad:
        return
    diagnosis = _head_diagnosis(g, q, k, v, tables, lens, bad)
    # NaN first: a head mapping gives finite wrong values, so NaN in some heads only is the softmax's (an overflow)
    if diagnosis:
        text = f"(sequence, head) pairs {bad[:8]} differ. " + diagnosis
    elif nan and nan_hint:
        text = f"(sequence, head) pairs {nan[:8]} are NaN. {nan_hint}"
    elif nan and batch.get("poison", True):
        text = (f"(sequence, head) pairs {nan[:8]} are NaN. In this batch the stale slots after context_len and the "
                f"blocks that the padding entries name hold NaN/inf: a token at or past context_len was loaded "
                f"without its mask, or exp2 of a score not reduced by the running max overflowed (inf - inf).")
    elif nan:
        text = (f"(sequence, head) pairs {nan[:8]} are NaN. This batch holds no NaN, so the kernel made it (inf - inf "
                f"in an exponent, 0/0 when l_i stayed 0) or read it from memory outside the pool.")
    elif heads_hint and _some_heads(bad, heads, kv_heads):
        text = f"(sequence, head) pairs {bad[:8]} differ. " + _some_heads(bad, heads, kv_heads)
    else:
        text = f"(sequence, head) pairs {bad[:8]} differ. " + hint(g, want.cpu(), q, k, v, tables, lens)
    assert_close(got, want, atol=1e-4, rtol=1e-4, name=name, hint=text)


def _kv_head_twice(pool: torch.Tensor) -> torch.Tensor:
    """``pool`` as a kernel reads it when it adds the K/V head's offset twice: head h at 2h (NaN past the pool)."""
    b, s, h, d = pool.shape
    flat = torch.cat([pool.flatten(), torch.full((h * d,), float("nan"), dtype=pool.dtype)])
    start = (torch.arange(b)[:, None, None] * s * h + torch.arange(s)[None, :, None] * h
             + 2 * torch.arange(h)[None, None, :]) * d
    return flat[start[..., None] + torch.arange(d)]


def _head_diagnosis(got, q, k, v, tables, lens, bad) -> str:
    """What the differing (sequence, head) outputs are, when they are attention of the right query row with another
    K/V head: the K/V head offset added twice, or the rows of another program (heads that miss kv_head * group)."""
    q, k, v, tables, lens = (t.cpu() for t in (q, k, v, tables, lens))
    heads, kv_heads = q.shape[1], k.shape[2]
    group = heads // kv_heads
    twice = paged_decode_reference(q.double(), _kv_head_twice(k.double()), _kv_head_twice(v.double()), tables, lens)
    if all(torch.isclose(got[s, h], twice[s, h], atol=1e-4, rtol=1e-4).all() for s, h in bad):
        return ("They are attention with K/V head 2 x kv_head, not kv_head: k_head and v_head already point at this "
                "program's K/V head (K + kv_head * stride_kh), so the loads' addresses add only the block, the slot "
                "and d; adding kv_head * stride_kh again counts the head twice.")
    # against[j][s, h]: query head h of sequence s against K/V head j alone
    only = lambda pool, j: pool[:, :, j:j + 1].double().expand(-1, -1, kv_heads, -1).contiguous()
    against = [paged_decode_reference(q.double(), only(k, j), only(v, j), tables, lens) for j in range(kv_heads)]
    found = {}
    for s, h in bad:
        hits = [j for j in range(kv_heads) if j != h // group
                and torch.isclose(got[s, h], against[j][s, h], atol=1e-4, rtol=1e-4).all()]
        if hits:
            found[s, h] = hits[-1]
    # heads = offs_h: the first group's rows hold another program's results, the other heads are never written
    if not found or any(h >= group for _, h in found) or any(h < group for s, h in bad if (s, h) not in found):
        return ""
    (s, h), j = next(iter(found.items()))
    return (f"The output of query head {h} is that head's attention with K/V head {j}, not with K/V head {h // group} "
            f"(= h // group, group {group}): it was written by the program of K/V head {j}. Each program serves "
            f"its own heads, kv_head * group + offs_h; heads = offs_h alone makes every program read and write the "
            f"first group's rows (the last program to run wins, and the other heads are never written).")


def _slot_without_modulo(q, k, v, tables, lens):
    """The batch as a kernel reads it whose slot is the token ``t`` itself: row ``table[t // B] * B + t`` of the
    pool's rows, as a block table over blocks of one token."""
    bs, lens_c = k.shape[1], lens.cpu()
    width = int(lens_c.max())
    t = torch.arange(width)
    rows = tables.cpu()[:, (t // bs).clamp(max=tables.shape[1] - 1)].long() * bs + t
    one = lambda pool: pool.reshape(-1, 1, *pool.shape[2:])
    return q, one(k), one(v), rows.to(torch.int32), lens


def _matches(got: torch.Tensor, q, k, v, tables, lens) -> bool:
    """Whether ``got`` is attention over these inputs (the reference run on a variant of the batch: a diagnosis)."""
    try:
        other = paged_decode_reference(q.double(), k.double(), v.double(), tables, lens)
    except IndexError:  # the variant names a block outside the pool: not what the kernel did
        return False
    return bool(torch.isclose(got, other.cpu().double(), atol=1e-4, rtol=1e-4).all())


def check_one_full_tile(paged_attention: Launcher) -> None:
    """Check 1: 32 tokens in one block, one tile: no mask, no rescaling, no block-table lookup that matters."""
    __tracebackhide__ = True

    def hint(got, want, q, k, v, tables, lens):
        if _matches(got, q * math.log2(math.e), k, v, tables, lens):
            return ("Your output is attention with every score multiplied by log2(e) = 1.44: qk_scale already holds "
                    "log2(e), which only a base-2 exponential undoes.")
        if _matches(got, q * 0, k, v, tables, lens):
            return "Your output is the plain mean of V: every token got the same weight, so the scores were lost."
        return ("With one tile, nothing is masked and the running max is set once: the difference is in the scores "
                "(q times k, times qk_scale), the weights p, their sum l_i, or acc = sum of p times v.")

    _compare(paged_attention, [32], 32, 2, 2, hint, shuffle=False, poison=False)


def check_partial_tile(paged_attention: Launcher) -> None:
    """Check 2: contexts of 20, 5 and 1 tokens, one partial tile each: the tokens past the end get no weight, also
    when every valid score is very negative (a max taken before the mask is then the masked tokens' 0)."""
    __tracebackhide__ = True
    for n in (20, 5, 1):
        def hint(got, want, q, k, v, tables, lens, n=n):
            if _matches(got, q, k, v, tables, lens + 1):
                return (f"Your output is attention over {n + 1} tokens instead of {n}: token context_len itself is "
                        f"already past the end.")
            if _matches(got, q, k, v, tables, torch.full_like(lens, 32)):
                return (f"Your output is attention over all 32 tokens of the sequence's block: the {32 - n} slots past "
                        f"context_len, which hold stale values, took part. A slot of an owned block is in the context "
                        f"only if its token is before context_len.")
            return (f"{n} valid tokens in a tile of 32: the {32 - n} tokens past context_len load as zero keys, and a "
                    f"zero key still scores 0, which is weight exp2(0 - m) > 0 unless its score is -inf.")

        _compare(paged_attention, [n], 32, 2, 2, hint, shuffle=False, poison=False)

    def very_negative(q, k, v, tables, lens):
        # Every key near +6 in each dimension and every query near -5: the 20 valid scores are about -120 (-173 in
        # log2 units, past float32's smallest exp2); the 12 masked tokens load zero keys, which score 0.
        return (-5 + 0.1 * q, 6 + 0.1 * k, v, tables, lens)

    _compare(paged_attention, [20], 32, 2, 2, lambda *_: "", shuffle=False, poison=False, prepare=very_negative,
             nan_hint=(
                 "The 20 valid scores are all about -120 (times log2(e): -173, where exp2 underflows to 0), and the "
                 "12 tokens past context_len load zero keys, which score 0. Unless each exponent is a score minus the "
                 "max of the VALID scores, every valid p is exp2(-173) = 0, l_i is 0, and acc / l_i is 0/0: with the "
                 "running max taken over the tile before the mask, the masked tokens' 0 wins it; with no max "
                 "subtracted, the exponent is the raw score. Hint: set the invalid scores to -inf BEFORE tl.max, and "
                 "subtract the running max in every exponent."))


def check_several_tiles(paged_attention: Launcher) -> None:
    """Check 3: contexts of 96, 77 and 40 tokens, several key tiles in one block: the online softmax's rescaling."""
    __tracebackhide__ = True
    for n in (96, 77, 40):
        def hint(got, want, q, k, v, tables, lens, n=n):
            if _matches(got, *_slot_without_modulo(q, k, v, tables, lens)):
                return (f"Your output is attention over the rows physical * BLOCK_SIZE + t: the slot of token t is "
                        f"its position within its block, t % BLOCK_SIZE; with t itself, the tokens past the first "
                        f"block ({n} tokens in blocks of 32) land in later blocks or past the pool.")
            return (f"{n} tokens are {blocks_for(n, 32)} key tiles; one tile alone passed check 2. When a later tile raises "
                    f"the running max, what l_i and acc summed relative to the old max must shrink by "
                    f"alpha = exp2(old max - new max) before the new tile's terms are added.")

        _compare(paged_attention, [n], 32, 2, 2, hint, shuffle=False, poison=False)


SPANS = ("Blocks of 32 tokens passed and blocks of 8 fail: a tile of 32 tokens now spans 4 blocks, so each token "
         "needs its own block-table entry and its own slot within that block.")


def check_shuffled_table(paged_attention: Launcher) -> None:
    """Check 4: three sequences in a shuffled pool, blocks of 32 and of 8 tokens (a tile spans 4 blocks)."""
    __tracebackhide__ = True
    for block_size in (32, 8):
        def hint(got, want, q, k, v, tables, lens, block_size=block_size):
            in_order = torch.arange(tables.shape[1], dtype=tables.dtype, device=tables.device).expand(tables.shape)
            if _matches(got, q, k, v, in_order, lens):
                return ("Your output is attention over the blocks 0, 1, 2, ... in order: the logical block was used as "
                        "the physical one. The physical block of token t is the entry t // BLOCK_SIZE of the "
                        "sequence's row of the block table.")
            if block_size == 8:
                return SPANS
            return ("Each token's K/V row is (physical block, slot): physical from the block table entry of its "
                    "logical block, slot its position within the block.")

        _compare(paged_attention, [77, 40, 9], block_size, 2, 2, hint, poison=False, nan_hint=(
            "This pool holds no NaN, so it came from memory outside the pool: a slot index of BLOCK_SIZE or more, "
            "or a block index past the pool, reads whatever lies there." + (" " + SPANS if block_size == 8 else "")))


def _owned_rows(tables: torch.Tensor, lens: torch.Tensor, block_size: int) -> list[dict[tuple[int, int], int]]:
    """Per sequence, ``{(physical block, slot): token}`` of every token in its context."""
    rows = []
    for s, n in enumerate(lens.tolist()):
        rows.append({(int(tables[s, t // block_size]), t % block_size): t for t in range(n)})
    return rows


def check_never_reads_padding(paged_attention: Launcher, kernel) -> None:
    """Check 5: the kernel reads no block-table entry past a sequence's last block, and no K/V slot past its context.

    The kernel runs in Triton's interpreter (on the CPU, on any machine), which records what each program's loads
    read; then its output is compared as in the other checks.
    """
    __tracebackhide__ = True
    block_size, lens_list = 8, [8, 16, 24, 5]
    q, k, v, tables, lens = (t.cpu() for t in _batch(lens_list, block_size, 2, 2, extra_columns=3))
    owned = [blocks_for(n, block_size) for n in lens_list]
    with interpreted(paged_attention, kernel) as reads:
        paged_attention(q, k, v, tables, lens)
    context = _owned_rows(tables, lens, block_size)
    problems = {"table": [], "K": [], "V": []}
    for (seq, kv_head, _), loads in sorted(reads.items()):
        for addresses in loads:
            for row, col in elements(addresses, tables).tolist():
                if row != seq or col >= owned[seq]:
                    problems["table"].append((seq, kv_head, row, col))
            for what, pool in (("K", k), ("V", v)):
                for block, slot, head, _d in elements(addresses, pool).tolist():
                    if head != kv_head or (block, slot) not in context[seq]:
                        problems[what].append((seq, kv_head, block, slot))
    where = (f"contexts {lens_list} in blocks of {block_size} (so {owned} blocks each), block table rows of "
             f"{tables.shape[1]} entries, key tile 32")
    if problems["table"]:
        seq, kv_head, row, col = problems["table"][0]
        entry = (f"entry {col} of its own row, past its {owned[seq]} block(s)" if row == seq
                 else f"entry {col} of the row of sequence {row}")
        raise AssertionError(
            f"{where}: the program of sequence {seq} read {entry} of the block table "
            f"({len(problems['table'])} such reads in all). Entries past a sequence's last block are padding: here "
            f"they name a spare block, in a real table they can be -1 or a stale id, and past the row's end lies the "
            f"next row or memory outside the table. Hint: the block-table load needs the token mask as well; a "
            f"tile's last tokens lie past context_len, and their logical blocks past the last one.")
    for what in ("K", "V"):
        if problems[what]:
            seq, kv_head, block, slot = problems[what][0]
            raise AssertionError(
                f"{where}: the {what} load of the program of sequence {seq} read slot {slot} of block {block}, which "
                f"holds no token of sequence {seq} ({len(problems[what])} such reads in all). Those slots hold "
                f"stale values or another sequence's tokens; masking their scores afterwards hides them from the "
                f"output only while they are finite. Hint: the {what} load needs the token mask, so that a token at "
                f"or past context_len is never read.")

    def hint(got, want, *_):
        return "The reads were all inside the contexts, so the error is in what was computed from them."

    _compare(paged_attention, lens_list, block_size, 2, 2, hint, extra_columns=3)


def check_last_block_tail(paged_attention: Launcher) -> None:
    """Check 6: contexts of 15, 17, 33 and 1 tokens in blocks of 16: the last block's slots past the end are stale."""
    __tracebackhide__ = True

    def hint(got, want, *_):
        return ("The contexts end inside their last block: a token of that block past context_len is not part of "
                "the context, even though its block is.")

    _compare(paged_attention, [15, 17, 33, 1], 16, 2, 2, hint)


def check_gqa(paged_attention: Launcher) -> None:
    """Check 7: 8 query heads over 2 K/V heads (GQA) and 4 over 1 (MQA)."""
    __tracebackhide__ = True
    for heads, kv_heads in [(8, 2), (4, 1)]:
        def hint(got, want, q, k, v, tables, lens, heads=heads, kv_heads=kv_heads):
            wrong = [h for h in range(heads) if not torch.isclose(got[:, h], want[:, h], atol=1e-4, rtol=1e-4).all()]
            return (f"{heads} query heads share {kv_heads} K/V head(s), a group of {heads // kv_heads}; query heads "
                    f"{wrong} are wrong. Query head h reads K/V head h // group, so the program of K/V head kv_head "
                    f"serves a contiguous run of group query heads.")

        _compare(paged_attention, [40, 9], 16, heads, kv_heads, hint, heads_hint=False)


def check_large_scores(paged_attention: Launcher) -> None:
    """Check 8: scores in the hundreds, blocks of 64 tokens (larger than the tile), 8 query heads over 2."""
    __tracebackhide__ = True

    def hint(got, want, *_):
        return ("Scores in the hundreds: every exponent must be a score minus the running max (<= 0), or exp2 "
                "overflows float32. That includes alpha = exp2(m_i - m_new): m_new is the larger of the running max "
                "and the tile's max; taken from the tile alone, it falls below m_i when an earlier tile's max was "
                "higher, and alpha overflows.")

    _compare(paged_attention, [150, 64, 3], 64, 8, 2, hint, magnitude=12.0, nan_hint=(
        "Checks 5 and 6 passed on the same kind of booby-trapped pool, so this NaN is most likely an overflow: with "
        "scores in the hundreds exp2 of a raw score is inf, and inf / inf or inf - inf is NaN. " + hint(None, None)))


__all__ = ["kernel_error", "check_one_full_tile", "check_partial_tile", "check_several_tiles", "check_shuffled_table",
           "check_never_reads_padding", "check_last_block_tail", "check_gqa", "check_large_scores",
           "check_full_precision_products"]


def check_int64_block_offsets(paged_attention: Launcher, kernel) -> None:
    """Check 10: a pool past 2**31 elements: the block offset ``physical * stride_kb`` is computed in int64.

    A real pool that large does not fit here, so the block table names blocks past 2**31 / stride_kb of a pool of
    one block, and the kernel runs in Triton's interpreter with its K and V loads recorded instead of performed (the
    addresses are far outside the tensors). The addresses must be those of int64 arithmetic: in int32 the product
    wraps around past 2**31, and on a GPU the kernel then reads another block, or outside the pool.
    """
    __tracebackhide__ = True
    import numpy as np
    from triton.runtime import interpreter

    block_size, kv_heads, heads, d, n = 16, 2, 4, 64, 20
    g = torch.Generator().manual_seed(10)
    q = torch.randn(1, heads, d, generator=g)
    k, v = torch.randn(1, block_size, kv_heads, d, generator=g), torch.randn(1, block_size, kv_heads, d, generator=g)
    first = 2 ** 31 // k.stride(0) + 5                      # the first of the sequence's blocks lies past 2**31
    tables = torch.tensor([[first, first + 3]], dtype=torch.int32)
    lens = torch.tensor([n], dtype=torch.int32)
    real = [(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for t in (q, tables, lens)]
    builder = interpreter.interpreter_builder
    load = builder.create_masked_load
    outside: list[int] = []

    def recording_load(ptrs, mask, *rest, **options):  # (Triton 3.6 passes 6 arguments, later ones 5)
        data = np.atleast_1d(ptrs.data)
        taken = data[np.broadcast_to(np.atleast_1d(mask.data).astype(bool), data.shape)]
        if all(any(lo <= a < hi for lo, hi in real) for a in taken.tolist()):
            return load(ptrs, mask, *rest, **options)
        outside.extend(taken.tolist())     # K and V far past their one block: recorded, not read
        dtype = interpreter._get_np_dtype(ptrs.get_element_ty())
        return interpreter.TensorHandle(np.zeros(data.shape, dtype=dtype), ptrs.get_element_ty())

    builder.create_masked_load = recording_load
    try:
        with interpreted(paged_attention, kernel):
            paged_attention(q, k, v, tables, lens)
    finally:
        builder.create_masked_load = load
    want = set()
    for pool in (k, v):
        for t in range(n):
            block = int(tables[0, t // block_size])
            for head in range(kv_heads):
                base = (block * pool.stride(0) + (t % block_size) * pool.stride(1) + head * pool.stride(2)) * 4
                want.update(pool.data_ptr() + base + 4 * e for e in range(d))
    wrong = sorted(set(outside) - want)
    assert not wrong, (
        f"block {first} of a pool of {k.stride(0)} elements per block starts {first * k.stride(0):,} elements in, "
        f"past 2**31 = {2 ** 31:,}: {len(wrong)} of the {len(outside)} K/V addresses your kernel computed are not "
        f"that block's (the product physical * stride_kb wrapped around in int32). Hint: block_tables is int32, and "
        f"so is what tl.load returns from it; convert before multiplying: physical.to(tl.int64) * stride_kb, so that "
        f"pools past 2**31 elements (about 4 GiB of bf16 per layer and K or V) are addressed.")
    missing = want - set(outside)
    assert not missing, (
        f"your kernel read {len(want & set(outside))} of the {len(want)} K and V elements of a sequence of {n} tokens "
        f"in blocks past 2**31 elements: a load took its address from something other than the block table")


def check_over_the_space(paged_attention: Launcher) -> None:
    """Check 11: the kernel against gather + attention in float64 on batches drawn from the stated space (the module
    docstring): every block size, MHA, GQA and MQA, contexts at every boundary, shuffled and padded tables, a
    booby-trapped pool (seeded). The first batch that differs is named, with the hint of the other checks."""
    __tracebackhide__ = True
    cases = [  # (context lengths, block_size, heads, kv_heads, d, magnitude)
        ([1, 7, 8, 9, 33], 8, 8, 2, 16, 1.0),
        ([15, 16, 17], 16, 4, 1, 32, 1.0),
        ([31, 32, 33], 32, 2, 2, 16, 1.0),
        ([63, 65], 64, 4, 2, 16, 12.0),
    ]
    for seed, (lens, block_size, heads, kv_heads, d, magnitude) in enumerate(cases):
        def hint(got, want, *_, block_size=block_size):
            return (f"each token's K/V row is (table[t // {block_size}], t % {block_size}); the checks before this one "
                    f"name the part that differs when they fail on a smaller case.")

        _compare(paged_attention, lens, block_size, heads, kv_heads, hint, d=d, magnitude=magnitude, seed=seed,
                 padding="spare", extra_columns=2)

    # every valid score below -1e30 (integers times 2**50, exact in float32), each context ending in a partial key
    # tile: an invalid token's score set to a finite stand-in for -inf (-1e9, -1e30) outweighs every valid one
    def below(q, k, v, tables, lens):
        return torch.full_like(q, -2.0 ** 50), (k.abs().round() + 1) * 2.0 ** 50, v, tables, lens

    _compare(paged_attention, [37, 50], 16, 4, 2, lambda *_: (
        "every valid score is below -1e30 here: an invalid token's score set to a finite value (-1e9, -1e30) is above "
        "them all and takes the weight, and a running max that starts at a finite value is above them too. Invalid "
        "scores and the first running max are float(\"-inf\")."), prepare=below, seed=11, padding="spare",
        extra_columns=2)
