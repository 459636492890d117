"""Exercise 6's checks: a block allocator with reference counts, and block boundaries.

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included:

* ``SimpleAllocator(num_blocks)``: pools of 1 to 64 blocks; any sequence of ``allocate``, ``allocate_many(n)`` (n from
  0 to one more than the free blocks), ``incref`` and ``free`` of ids from -2 to ``num_blocks + 1``: allocated ones
  (count 1 and shared), free ones (a double free), the last valid id ``num_blocks - 1`` and the first invalid one
  ``num_blocks``, and negative ones. A wrong call raises (``ValueError``, ``OutOfBlocks``) and changes nothing;
  an ``OutOfBlocks`` says what was asked for, what was free and the pool's size, whichever call raised it.
* ``blocks_needed(num_tokens, block_size)``: ``num_tokens`` from 0 to 4 blocks and one (0, every exact fit, one past
  it), ``block_size`` 1 to 32.
* ``slot(block_ids, block_size, position)``: every position of tables of 1 to 4 physical blocks (first and last of
  each block).
"""

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
    except OutOfBlocks as exc:
        got = (exc.requested, exc.free, exc.total)
        assert got == (1, 0, 4), (
            f"allocate() on an empty pool of 4 raised OutOfBlocks(requested={got[0]}, free={got[1]}, total={got[2]}): "
            f"it asked for one block with none free in a pool of 4, so it must say OutOfBlocks(1, 0, 4).")
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
            (3, "block 3 of a pool of 3 (ids 0 to 2: the first id past the end)",
             " Hint: the last valid id is num_blocks - 1, so the test is block >= num_blocks, not block > "
             "num_blocks (block 3 indexes past the end of ref_count)."),
            (7, "block 7 of a pool of 3", ""),
            (-1, "block -1", " No block has a negative id, but ref_count[-1] is the LAST block's count, so a check "
                             "against num_blocks alone lets it through. Hint: a valid id lies from 0 to "
                             "num_blocks - 1: check both ends")]:
        for op in (pool.free, pool.incref):
            try:
                op(bad)
            except ValueError:
                pass
            except Exception as exc:
                raise AssertionError(f"{op.__name__}() of {what} raised {type(exc).__name__}: {exc}; it must raise "
                                     f"ValueError, before touching ref_count or free_list.{why}") from None
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


def _blocks_hint(wrong: dict[int, tuple[int, int]], block_size: int) -> str:
    """The hint for ``blocks_needed``, from where it is wrong: ``{num_tokens: (expected, got)}``."""
    if set(wrong) == {0}:
        return "0 tokens need 0 blocks: an empty sequence holds no block (your other counts are right)."
    if all(n % block_size == 0 for n in wrong) and all(g == e + 1 for e, g in wrong.values()):
        return "exactly full blocks need no extra one: you count one too many at the boundary."
    if all(g == e - 1 for e, g in wrong.values()):
        return "round up: a partly filled block is still a block."
    return "ceil(num_tokens / block_size): every partly filled block counts, exactly full ones need no extra."


def check_boundaries(blocks_needed, slot) -> None:
    """Check 7: at the boundaries."""
    __tracebackhide__ = True
    counts = {n: (-(-n // 16), blocks_needed(n, 16)) for n in (0, 1, 15, 16, 17, 32, 33)}
    wrong = {n: eg for n, eg in counts.items() if eg[0] != eg[1]}
    if wrong:
        n, (expected, got) = next(iter(wrong.items()))
        raise AssertionError(f"{n} tokens in blocks of 16 need {expected} block(s), got {got} (wrong at "
                             f"{sorted(wrong)} of 0, 1, 15, 16, 17, 32, 33 tokens). Hint: {_blocks_hint(wrong, 16)}")
    table = [7, 3, 9]
    for p, expected in [(0, 28), (3, 31), (4, 12), (7, 15), (8, 36), (9, 37)]:
        got = slot(table, 4, p)
        assert got == expected, (
            f"token {p} with block_ids {table} and block_size 4 is in slot {expected}, got {got}. "
            + ("Hint: you returned the position itself: the logical block p // B is an index INTO block_ids, "
               "which holds the physical block."
               if got == p else "Hint: the slot is the physical block's first slot plus the offset within the block.")
        )


def _state(pool) -> tuple[list[int], list[int]]:
    return list(pool.free_list), list(pool.ref_count)


def check_over_the_space(SimpleAllocator, blocks_needed, slot) -> None:
    """Check 8: your allocator and pagedlab's side by side on operations drawn from the whole stated space (the module
    docstring), wrong ones included; then ``blocks_needed`` and ``slot`` at every boundary. The first operation
    where the two differ is named: what each returned or raised, and the state before."""
    __tracebackhide__ = True
    rng = random.Random(6)
    for num_blocks in (1, 2, 3, 7, 64):
        mine, ref = SimpleAllocator(num_blocks), BlockAllocator(num_blocks)
        log = []
        for step in range(300):
            op = rng.choice(["allocate", "allocate_many", "incref", "free", "free"])
            if op == "allocate_many":
                arg = rng.randint(0, ref.num_free + 1)
            elif op == "allocate":
                arg = None
            else:
                held = [b for b in range(num_blocks) if ref.refcount(b) > 0]
                arg = rng.choice(held + held + [-2, -1, num_blocks - 1, num_blocks, num_blocks + 1,
                                                rng.randrange(num_blocks)])
            call = f"{op}({'' if arg is None else arg})"
            before = _state(mine)
            outcome = []
            for pool in (ref, mine):
                try:
                    result = getattr(pool, op)(*(() if arg is None else (arg,)))
                    # what free and incref return is not part of the exercise (BlockAllocator.free returns a count)
                    outcome.append(("returned", result if op.startswith("allocate") else None))
                except (ValueError, OutOfBlocks) as exc:
                    # the exercise asks for these classes: a learner's subclass of ValueError is a ValueError; an
                    # OutOfBlocks says what was asked for, what was free and the pool's size
                    outcome.append(("raised", f"OutOfBlocks{(exc.requested, exc.free, exc.total)}"
                                    if isinstance(exc, OutOfBlocks) else "ValueError"))
                except Exception as exc:  # noqa: BLE001 - the learner's error is the difference to report
                    outcome.append(("raised", f"{type(exc).__name__}: {exc}"))
            want, got = outcome
            where = (f"pool of {num_blocks}, after {'; '.join(log[-4:]) or 'nothing'}: {call} "
                     f"(free list {before[0]}, ref counts {before[1]})")
            assert got == want, (
                f"{where}: BlockAllocator {want[0]} {want[1]!r}, yours {got[0]} {got[1]!r}. Hint: "
                + ("a block id outside 0..num_blocks - 1, a free block freed or shared, or more blocks than are "
                   "free: ValueError or OutOfBlocks, before anything changes."
                   if want[0] == "raised" else
                   "the free list is a stack (pop and push at its end); a block goes back on it only when its "
                   "count reaches 0."))
            counts = [ref.refcount(b) for b in range(num_blocks)]
            assert mine.ref_count == counts and mine.num_free == ref.num_free, (
                f"{where}: afterwards your ref counts are {mine.ref_count} with {mine.num_free} free, "
                f"BlockAllocator's {counts} with {ref.num_free} free"
                + (". Hint: a call that raised changed your pool: decide before changing anything."
                   if want[0] == "raised" else "."))
            log.append(call)
    for block_size in (1, 2, 3, 16, 32):
        wrong = {n: (-(-n // block_size), blocks_needed(n, block_size)) for n in range(0, 4 * block_size + 2)}
        wrong = {n: eg for n, eg in wrong.items() if eg[0] != eg[1]}
        if wrong:
            n, (expected, got) = next(iter(wrong.items()))
            raise AssertionError(f"blocks_needed({n}, {block_size}) should be {expected}, got {got} (wrong at "
                                 f"{sorted(wrong)[:8]}). Hint: {_blocks_hint(wrong, block_size)}")
        for table in ([5], [2, 0], [7, 3, 9, 1]):
            for p in range(len(table) * block_size):
                expected = table[p // block_size] * block_size + p % block_size
                got = slot(table, block_size, p)
                assert got == expected, (
                    f"slot({table}, {block_size}, {p}) should be {expected}, got {got} (position {p} is offset "
                    f"{p % block_size} of logical block {p // block_size}, physical block {table[p // block_size]})")
