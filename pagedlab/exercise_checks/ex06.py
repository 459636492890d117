"""Exercise 6's checks: a block allocator with reference counts, and block boundaries."""

from __future__ import annotations

import random

from ..paged import BlockAllocator, OutOfBlocks


def error_hint(exc: BaseException) -> str:
    """Check 6's hint for an error raised by SimpleAllocator where pagedlab's BlockAllocator accepted the same call."""
    if isinstance(exc, (ValueError, OutOfBlocks)):
        return ("BlockAllocator accepted this operation and yours raised: a block with ref_count > 0 is allocated "
                "(free and incref must accept it), and allocate must not raise while free_list is not empty.")
    return ""


def check_allocate_until_empty(SimpleAllocator) -> None:
    """Check 1: allocate until the pool is empty."""
    __tracebackhide__ = True
    pool = SimpleAllocator(4)
    got = [pool.allocate() for _ in range(4)]
    assert sorted(got) == [0, 1, 2, 3], f"4 allocations from a pool of 4 should return each block once, got {got}"
    assert got == [0, 1, 2, 3], (
        f"a fresh pool should hand out 0, 1, 2, 3 (the top of the stack is the end of free_list), got {got}")
    assert pool.ref_count == [1, 1, 1, 1], f"every allocated block should have ref_count 1, got {pool.ref_count}"
    assert pool.num_free == 0, f"no block should be left on the free list, found {pool.free_list}"
    try:
        pool.allocate()
    except OutOfBlocks:
        pass
    except Exception as exc:
        raise AssertionError(
            f"allocate() on an empty pool raised {type(exc).__name__}: {exc}. Hint: running out is OutOfBlocks "
            f"(from pagedlab.paged), raised before touching the free list, so a caller can catch it and preempt.") from None
    else:
        raise AssertionError("allocate() on an empty pool must raise OutOfBlocks, not return a block id")


def check_stack(SimpleAllocator) -> None:
    """Check 2: the free list is a stack."""
    __tracebackhide__ = True
    pool = SimpleAllocator(4)
    a, b, c = pool.allocate(), pool.allocate(), pool.allocate()
    pool.free(a)
    pool.free(c)
    assert a in pool.free_list and c in pool.free_list, (
        f"after their only owner freed them, blocks {a} and {c} should be back on the free list {pool.free_list}")
    got = [pool.allocate(), pool.allocate()]
    assert got == [c, a], (
        f"after freeing block {a} and then block {c}, allocate() should return {c} then {a} (last in, first out), "
        f"got {got}. Hint: if you take the lowest block (pop(0) from a sorted list) or keep the list sorted, every "
        f"operation shifts or scans the whole list: O(n). A stack takes and puts back at the same end.")


def check_shared_block(SimpleAllocator) -> None:
    """Check 3: a shared block stays allocated until its last owner frees it."""
    __tracebackhide__ = True
    pool = SimpleAllocator(4)
    shared = pool.allocate()
    pool.incref(shared)                      # a forked child shares it
    assert pool.ref_count[shared] == 2, (
        f"after incref the count of block {shared} should be 2, got {pool.ref_count[shared]}")
    pool.free(shared)                        # the parent finishes
    assert pool.ref_count[shared] == 1, f"after one free the count should be 1, got {pool.ref_count[shared]}"
    assert shared not in pool.free_list, (
        f"block {shared} went back on the free list while the child still holds it (ref_count "
        f"{pool.ref_count[shared]}). The next allocate() would give it to another sequence, which would overwrite "
        f"the child's K/V. Hint: push a block only when its count reaches zero.")
    assert pool.allocate() != shared, f"allocate() handed out block {shared}, which the child still holds"
    pool.free(shared)                        # the child finishes
    assert pool.ref_count[shared] == 0 and shared in pool.free_list, (
        f"when the last owner frees block {shared}, it should be back on the free list with count 0 "
        f"(count {pool.ref_count[shared]}, free list {pool.free_list})")
    try:
        pool.incref(pool.free_list[-1])
    except ValueError:
        pass
    else:
        raise AssertionError("incref() of a free block must raise ValueError: nobody owns its contents")


def check_wrong_frees(SimpleAllocator) -> None:
    """Check 4: wrong frees are errors, and change nothing."""
    __tracebackhide__ = True
    pool = SimpleAllocator(3)
    blocks = [pool.allocate() for _ in range(3)]   # block 2, the last one, is allocated: ref_count[-1] == 1
    pool.free(blocks[0])
    before = (list(pool.free_list), list(pool.ref_count))
    for bad, what, why in [
            (blocks[0], f"block {blocks[0]}, which is already free (a double free)", ""),
            (7, "block 7 of a pool of 3", ""),
            (-1, "block -1", " No block has a negative id, but ref_count[-1] is the LAST block's count, so a check "
                             "against num_blocks alone lets it through. Hint: a valid id lies from 0 to "
                             "num_blocks - 1: check both ends")]:
        for op in (pool.free, pool.incref):
            try:
                op(bad)
            except ValueError:
                pass
            else:
                raise AssertionError(f"{op.__name__}() of {what} must raise ValueError.{why}")
            if pool.ref_count != before[1]:
                why = (" Hint: your function changed a count and then raised: decide that the call is wrong before "
                       "changing anything.")
            elif len(pool.free_list) > len(before[0]):
                why = (" A block pushed twice is handed to two sequences; a -1 on the free list is a block id that "
                       "does not exist.")
            else:
                why = ""
            assert (pool.free_list, pool.ref_count) == before, (
                f"the failed {op.__name__}({bad}) changed the pool: free list {before[0]} -> {pool.free_list}, ref "
                f"counts {before[1]} -> {pool.ref_count}.{why}")


def check_all_or_nothing(SimpleAllocator) -> None:
    """Check 5: all or nothing."""
    __tracebackhide__ = True
    pool = SimpleAllocator(4)
    pool.allocate_many(3)
    try:
        pool.allocate_many(2)
    except OutOfBlocks as exc:
        error = exc
    else:
        raise AssertionError("allocate_many(2) with 1 free block must raise OutOfBlocks")
    got = (error.requested, error.free, error.total)
    assert pool.num_free != 1 or got == (2, 1, 4), (
        f"allocate_many(2) with 1 of 4 blocks free raised OutOfBlocks(requested={got[0]}, free={got[1]}, "
        f"total={got[2]}): its message tells the caller what was asked for and what was left, so it must say "
        f"OutOfBlocks(2, 1, 4).")
    assert pool.num_free == 1, (
        f"the failed allocate_many(2) left {pool.num_free} free block(s) instead of 1: it took blocks and then gave "
        f"up, so they leaked. Hint: check that n blocks are free before taking any.")
    assert len(pool.allocate_many(1)) == 1 and pool.allocate_many(0) == []


def check_same_as_pagedlab(SimpleAllocator) -> None:
    """Check 6: the same answers as pagedlab's allocator."""
    __tracebackhide__ = True
    rng = random.Random(0)
    mine, ref = SimpleAllocator(64), BlockAllocator(64)
    held = []
    for step in range(3000):
        op = rng.choice(["allocate", "allocate_many", "incref", "free", "free"])
        if op == "allocate_many":
            n = rng.randint(0, 5)
            if n > ref.num_free:
                continue
            got, expected = mine.allocate_many(n), ref.allocate_many(n)
            held += expected
        elif op == "allocate" and ref.num_free:
            got, expected = mine.allocate(), ref.allocate()
            held.append(expected)
        elif op == "incref" and held:
            b = rng.choice(held)
            mine.incref(b), ref.incref(b)
            got = expected = None
            held.append(b)
        elif op == "free" and held:
            b = held.pop(rng.randrange(len(held)))
            mine.free(b), ref.free(b)
            got = expected = None
        else:
            continue
        assert got == expected, (
            f"step {step}, {op}: BlockAllocator gives {expected}, yours {got}. Hint: the free list is a stack, and a "
            f"freed block goes back on it only when its count reaches 0.")
        counts = [ref.refcount(b) for b in range(64)]
        wrong = [b for b in range(64) if mine.ref_count[b] != counts[b]]
        assert not wrong, (
            f"step {step}, after {op}: ref counts of blocks {wrong[:5]} are {[mine.ref_count[b] for b in wrong[:5]]}, "
            f"expected {[counts[b] for b in wrong[:5]]}. Hint: allocate sets 1, incref adds 1, free subtracts 1.")
        assert mine.num_free == ref.num_free, f"step {step}, after {op}: {mine.num_free} free blocks, expected {ref.num_free}"


def check_boundaries(blocks_needed, slot) -> None:
    """Check 7: at the boundaries."""
    __tracebackhide__ = True
    for n, expected in [(0, 0), (1, 1), (15, 1), (16, 1), (17, 2), (32, 2), (33, 3)]:
        got = blocks_needed(n, 16)
        assert got == expected, (
            f"{n} tokens in blocks of 16 need {expected} block(s), got {got}. "
            + ("Hint: exactly full blocks need no extra one: you count one too many at the boundary."
               if got == expected + 1 else "Hint: round up: a partly filled block is still a block.")
        )
    table = [7, 3, 9]
    for p, expected in [(0, 28), (3, 31), (4, 12), (7, 15), (8, 36), (9, 37)]:
        got = slot(table, 4, p)
        assert got == expected, (
            f"token {p} with block_ids {table} and block_size 4 is in slot {expected}, got {got}. "
            + ("Hint: you returned the position itself: the logical block p // B is an index INTO block_ids, "
               "which holds the physical block."
               if got == p else "Hint: the slot is the physical block's first slot plus the offset within the block.")
        )
