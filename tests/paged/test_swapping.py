"""BlockManager's swapping (its Swapper collaborator): round trips, groups and fork families, what preempting frees,
swap-in through the prefix cache."""

from __future__ import annotations

import pytest
from manager_checks import check_invariants, fork_family, sharing, state

from pagedlab.paged import BlockManager, OutOfBlocks


def test_swap_round_trip_and_swapped_sequences_are_frozen():
    m = BlockManager(4, 2, num_cpu_blocks=4)
    m.add("a", range(3))
    out = m.swap_out("a")
    assert out == [(0, 0), (1, 1)] and m.is_swapped("a") and m.num_free_blocks == 4
    assert m.table("a").device == "cpu"
    for op in (lambda: m.append("a", 1), lambda: m.fork("a", "b"), lambda: m.swap_out("a")):
        with pytest.raises(ValueError, match="swapped out"):
            op()
    m.add("other", [1])  # takes GPU block 1 (last freed, first reused)
    back = m.swap_in("a")
    assert [cpu for cpu, _ in back] == [0, 1] and not m.is_swapped("a")
    assert m.cpu_allocator.num_free == 4
    with pytest.raises(ValueError, match="not swapped out"):
        m.swap_in("a")
    check_invariants(m)


def test_swap_out_needs_room_on_the_cpu():
    m = BlockManager(4, 2, num_cpu_blocks=1)
    m.add("a", range(3))
    before = state(m)
    assert not m.can_swap_out("a")
    with pytest.raises(OutOfBlocks, match="CPU pool"):
        m.swap_out("a")
    assert state(m) == before


def test_swapping_a_fork_child_alone_relieves_nothing():
    # The review's case, still what a single-id swap does: the child's blocks stay on the GPU for its family.
    m = BlockManager(8, 4, num_cpu_blocks=8)
    fork_family(m, 16, 2)
    assert m.num_freeable_blocks("c0") == 0
    free = m.num_free_blocks
    pairs = m.swap_out("c0")
    assert m.num_free_blocks == free and m.cpu_allocator.num_free == 4 and len(pairs) == 4


def test_group_swap_keeps_a_fork_family_shared():
    m = BlockManager(8, 4, num_cpu_blocks=8)
    group = fork_family(m, 14, 2)          # 4 blocks, the last one partly filled, each shared by 3
    before = sharing(m, group)
    assert m.num_freeable_blocks(group) == 4 and m.can_swap_out(group)
    out = m.swap_out(group)
    assert [g for g, _ in out] == [0, 1, 2, 3], "one copy per distinct block"
    assert m.num_free_blocks == 8 and m.cpu_allocator.num_free == 8 - 4
    assert sharing(m, group) == before and all(m.cpu_allocator.refcount(c) == 3 for _, c in out)
    assert [e.kind for e in m.events][-3:] == ["swap_out"] * 3
    m.add("other", range(8))               # the family's old GPU blocks get new owners
    assert not m.can_swap_in(group), "4 blocks + 1 per sequence to append > 6 free: a scheduler would wait"
    back = m.swap_in(group)
    assert sorted(c for c, _ in back) == sorted(c for _, c in out) and len(back) == 4
    assert sharing(m, group) == before, "after swap_in the group shares exactly as before"
    assert all(m.allocator.refcount(b) == 3 for b in m.table("p").block_ids)
    assert m.cpu_allocator.num_free == 8 and m.num_free_blocks == 8 - 2 - 4
    check_invariants(m)


def test_group_swap_copies_blocks_shared_outside_the_group_but_frees_nothing_of_them():
    m = BlockManager(12, 4, num_cpu_blocks=8)
    fork_family(m, 10, 2)                  # blocks 0, 1 (full), 2 (partial): p, c0, c1
    m.append("c0", 1)                      # copy-on-write: c0's last block is its own now
    group = ["c0", "c1"]
    assert m.num_freeable_blocks(group) == 1, "only c0's private block is held by the group alone"
    free = m.num_free_blocks
    out = m.swap_out(group)
    assert m.num_free_blocks == free + 1 and len(out) == 4   # blocks 0, 1, 2 (c1's) and c0's copy
    assert [m.cpu_allocator.refcount(c) for _, c in out] == [2, 2, 1, 1]
    m.swap_in(group)
    t0, t1, tp = (m.table(s).block_ids for s in ["c0", "c1", "p"])
    assert t0[:2] == t1[:2] and t0[2] != t1[2] and set(t0).isdisjoint(tp), (
        "without prefix caching nothing tells the manager that p's blocks hold the same K/V")
    check_invariants(m)


def test_group_errors_change_nothing():
    m = BlockManager(4, 4, num_cpu_blocks=3)
    fork_family(m, 8, 1)
    m.add("x", range(5))
    before = state(m)
    with pytest.raises(OutOfBlocks, match="the group \\['p', 'c0', 'x'\\].*CPU pool"):
        m.swap_out(["p", "c0", "x"])       # 4 distinct blocks, 3 CPU blocks
    assert not m.can_swap_out(["p", "c0", "x"]) and m.can_swap_out(["p", "c0"])
    with pytest.raises(ValueError, match="distinct"):
        m.swap_out(["p", "p"])
    with pytest.raises(ValueError, match="empty"):
        m.swap_out([])
    with pytest.raises(KeyError, match="unknown sequence 'nope'"):
        m.swap_out(["p", "nope"])
    with pytest.raises(ValueError, match="not swapped out"):
        m.swap_in(["p"])
    assert state(m) == before
    m.swap_out(["p", "c0"])
    before = state(m)
    with pytest.raises(ValueError, match="swapped out"):
        m.swap_out(["x", "p"])
    with pytest.raises(ValueError, match="not swapped out"):
        m.swap_in(["p", "x"])
    m.add("y", range(8))                   # the GPU is full again
    before = state(m)
    assert not m.can_swap_in(["p", "c0"])
    with pytest.raises(OutOfBlocks, match="swapping in the group"):
        m.swap_in(["p", "c0"])
    assert state(m) == before


def test_num_freeable_blocks_is_what_free_gives_back():
    m = BlockManager(16, 2, num_cpu_blocks=4, enable_prefix_caching=True)
    m.add("a", [1, 2, 3, 4, 5])            # blocks 0, 1 cached, 2 partial
    m.add("b", [1, 2, 3, 4, 6])            # shares 0, 1
    m.add("s", [9])
    m.swap_out("s")
    assert m.num_freeable_blocks("a") == 1 and m.num_freeable_blocks(["a", "b"]) == 4
    assert m.num_freeable_blocks(["a", "s"]) == 1, "a swapped-out sequence holds no GPU block"
    free = m.num_free_blocks
    m.free("a")
    m.free("b")
    assert m.num_free_blocks == free + 4 and m.allocator.num_cached == 2, (
        "the cached blocks became cached-free: allocatable, so they count")
    with pytest.raises(ValueError, match="distinct"):
        m.num_freeable_blocks(["s", "s"])


def test_swap_in_takes_back_its_own_cached_blocks_without_evicting_them():
    m = BlockManager(5, 4, num_cpu_blocks=4, enable_prefix_caching=True)
    m.add("a", range(10))                  # blocks 0, 1 (full, cached), 2 (partial)
    out = m.swap_out("a")
    assert m.allocator.num_cached == 2     # 0 and 1 are cached-free now
    m.add("b", range(100, 108))            # takes blocks 2 and 3; the free list keeps 4
    steps = len(m.events)
    back = m.swap_in("a")
    assert m.table("a").block_ids == [0, 1, 4], "its own copies, and one new block for the partial one"
    assert back == [(out[2][1], 4)], "only the partial block is copied back"
    kinds = [e.kind for e in list(m.events)[steps - len(m.events):]]
    assert kinds == ["cache_hit", "swap_in"] and "evict" not in kinds
    assert m.events[-2].blocks == (0, 1)
    check_invariants(m)
    m.swap_out("a")
    assert m.num_free_blocks == 3 and not m.can_swap_in("a"), "3 free: 1 new + 2 revived + 1 to append"


def test_swap_in_evicts_other_cached_blocks_not_its_own():
    m = BlockManager(4, 4, num_cpu_blocks=4, enable_prefix_caching=True)
    m.add("a", range(9))                   # blocks 0, 1 (cached), 2
    m.swap_out("a")                        # 0 and 1 cached-free, the least recently used
    m.add("c", range(50, 55))              # blocks 2 (cached) and 3
    m.free("c")                            # 2 cached-free, the most recently used
    m.add("d", [70])                       # takes 3: the free list is empty
    m.swap_in("a")                         # 1 new block: must evict 2, not its own 0 or 1
    assert m.table("a").block_ids == [0, 1, 2] and m.events[-3].kind == "evict" and m.events[-3].blocks == (2,)
    check_invariants(m)


def test_swap_in_copies_when_its_cached_blocks_were_given_to_another_prefix():
    m = BlockManager(3, 4, num_cpu_blocks=3, enable_prefix_caching=True)
    m.add("a", range(9))
    m.swap_out("a")
    m.add("b", range(100, 112))            # every block, evicting a's cached ones
    m.free("b")
    back = m.swap_in("a")
    assert len(back) == 3, "a's old blocks now hold b's prefix: all three are copied"
    check_invariants(m)


def test_can_swap_in_reserves_a_block_per_sequence_to_append():
    m = BlockManager(6, 4, num_cpu_blocks=6)
    fork_family(m, 8, 1)                   # 2 blocks shared by p and c0
    m.swap_out(["p", "c0"])
    m.add("x", range(12))                  # 3 of 6 blocks: 3 free
    assert not m.can_swap_in(["p", "c0"]), "2 blocks + 1 per sequence > 3 free"
    assert m.can_swap_in("p") and m.num_free_blocks == 3, "p alone: 2 + 1 <= 3"
    m.swap_in(["p", "c0"])                 # but it fits
    m.free("x")
    m.swap_out(["p", "c0"])
    m.add("x", range(8))
    assert m.can_swap_in(["p", "c0"]), "2 + 2 <= 4 free"
