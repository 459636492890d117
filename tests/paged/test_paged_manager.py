"""BlockManager: unit tests of each operation, and a hypothesis state machine against a simple model.

The state machine plays the engine: it writes a fake K/V "value" into every slot the manager hands out
(the value of token ``p`` is the tuple of tokens ``0..p``, since real K/V depend on the whole prefix),
performs the copy-on-write and swap copies the manager asks for, and after every step reads each
sequence back through its block table. A block freed too early, a missed copy, a wrong swap mapping or
a wrong prefix-cache hit all show up as a sequence that reads back the wrong values.

It also plays a scheduler that reserves slots before the model runs (``computed=False``): a step's growth
of a fork family can run out of blocks halfway and preempt the family before anything is written. The pool
starts poisoned (NaN in every slot, as unwritten GPU memory holds garbage), so a block that the prefix cache
offers before its K/V are computed (see ``mark_computed``) shows up as a hit that reads back NaN.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from pagedlab.paged import BlockEvent, BlockManager, OutOfBlocks, PrefixCache

NAN = float("nan")


def state(m: BlockManager) -> tuple:
    """Everything a manager shows through its public API, for before/after comparisons."""
    def alloc_state(a):
        if a is None:
            return None
        return (a.free_blocks(), [a.refcount(b) for b in range(a.num_blocks)],
                [a.is_cached(b) for b in range(a.num_blocks)], a.num_cached)

    cache = m.prefix_cache
    return (
        [(s, list(m.table(s).block_ids), m.table(s).num_tokens, m.table(s).device, m.num_cached_tokens(s))
         for s in m.seq_ids],
        alloc_state(m.allocator), alloc_state(m.cpu_allocator),
        None if cache is None else (cache.parked(), len(cache), cache.num_prefixes,
                                    [(cache.key_of(b), cache.prefix_id_of(b)) for b in range(m.num_blocks)],
                                    {p: cache.blocks_of(p) for b in range(m.num_blocks)
                                     if (p := cache.prefix_id_of(b)) is not None}),
        list(m.events)[-3:], len(m.events),
    )


def check_invariants(m: BlockManager) -> None:
    """The bookkeeping invariants (reference counts, free list, cached-free blocks), from the public API."""
    for alloc, device in ((m.allocator, "gpu"), (m.cpu_allocator, "cpu")):
        if alloc is None:
            continue
        holders = Counter()
        for s in m.seq_ids:
            t = m.table(s)
            if t.device == device:
                assert len(set(t.block_ids)) == len(t.block_ids), f"{s!r} holds a block twice: {t.block_ids}"
                holders.update(t.block_ids)
        free = alloc.free_blocks()
        assert len(set(free)) == len(free), f"{device}: a block is on the free list twice: {free}"
        for b in range(alloc.num_blocks):
            on_free_list, cached, ref = b in free, alloc.is_cached(b), alloc.refcount(b)
            assert ref == holders[b], f"{device} block {b}: refcount {ref}, held by {holders[b]} tables"
            assert (ref > 0) + on_free_list + cached == 1, (
                f"{device} block {b} must be exactly one of referenced/free/cached-free: "
                f"ref={ref} free={on_free_list} cached={cached}")
        assert alloc.num_free + alloc.num_cached + len(holders) == alloc.num_blocks
    cache = m.prefix_cache
    if cache is not None:
        parked = cache.parked()
        assert sorted(parked) == [b for b in range(m.num_blocks) if m.allocator.is_cached(b)]
        for b in parked:
            assert cache.is_registered(b)
    else:
        assert m.allocator.num_cached == 0
    for s in m.seq_ids:
        t = m.table(s)
        assert t.num_blocks == -(-t.num_tokens // m.block_size), f"{s!r}: {t.num_blocks} blocks for {t.num_tokens}"


# ---- unit tests ----------------------------------------------------------------------------------------

def test_source_scenario_six_blocks_of_sixteen():
    m = BlockManager(num_blocks=6, block_size=16)
    a = m.add("A", range(20))
    b = m.add("B", range(10))
    assert a.block_ids == [0, 1] and b.block_ids == [2] and m.num_free_blocks == 3
    results = [m.append("A", 100 + i) for i in range(13)]
    assert [r.slot for r in results[:12]] == list(range(16 + 4, 32)), "appends fill block 1 first"
    assert results[12].slot == 3 * 16, "the 13th append (token 32) starts a new block, block 3"
    assert a.block_ids == [0, 1, 3] and a.num_tokens == 33 and m.num_free_blocks == 2
    m.free("B")
    assert m.num_free_blocks == 3 and "B" not in m
    kinds = [e.kind for e in m.events]
    assert kinds.count("allocate") == 3 and kinds.count("append") == 13 and kinds[-1] == "free"
    check_invariants(m)


def test_append_copies_on_write_only_once():
    m = BlockManager(8, 4)
    m.add("p", [1, 2, 3, 4, 5, 6])
    m.fork("p", "c")
    assert m.allocator.refcount(0) == 2 and m.allocator.refcount(1) == 2
    r = m.append("c", 7)
    assert r.copy == (1, 2), "the shared, partly filled last block must be copied before the child writes"
    assert r.slot == 2 * 4 + 2
    assert m.table("c").block_ids == [0, 2] and m.table("p").block_ids == [0, 1]
    assert m.allocator.refcount(1) == 1 and m.allocator.refcount(0) == 2
    r = m.append("p", 8)
    assert r.copy is None and r.slot == 1 * 4 + 2, "the parent is now the only holder: write in place"
    check_invariants(m)


def test_fork_at_a_block_boundary_needs_no_copy():
    m = BlockManager(4, 4)
    m.add("p", range(4))
    m.fork("p", "c")
    r = m.append("c", 9)
    assert r.copy is None and m.table("c").block_ids == [0, 1]
    check_invariants(m)


def test_usage_reports_sharing_and_fragmentation():
    m = BlockManager(16, 4)
    m.add("p", range(10))          # 3 blocks, 2 free slots in the last
    for i in range(3):
        m.fork("p", f"c{i}")
    u = m.usage(bytes_per_block=1000)
    assert (u.blocks_used, u.logical_blocks, u.blocks_shared) == (3, 12, 3)
    assert u.blocks_saved_by_sharing == 9 and u.bytes_saved_by_sharing == 9000
    assert u.tokens_stored == 40 and u.slots_filled == 10 and u.unused_slots == 2
    assert u.fragmentation == pytest.approx(2 / 12)
    assert m.usage().bytes_saved_by_sharing is None


def test_errors_name_the_problem_and_change_nothing():
    m = BlockManager(2, 4)
    m.add("a", range(5))
    before = state(m)
    with pytest.raises(ValueError, match="already exists"):
        m.add("a", [1])
    with pytest.raises(OutOfBlocks, match="need 1 free block.*only 0 of 2"):
        m.add("b", [1])
    with pytest.raises(KeyError, match="unknown sequence 'x'"):
        m.append("x", 1)
    with pytest.raises(TypeError, match="token_ids"):
        m.add("b", ["not a token"])
    with pytest.raises(TypeError, match="token_id"):
        m.append("a", None)
    with pytest.raises(ValueError, match="no CPU pool"):
        m.swap_out("a")
    with pytest.raises(ValueError, match="already exists"):
        m.fork("a", "a")
    with pytest.raises(TypeError):
        m.add(["unhashable"], [1])
    assert state(m) == before
    for _ in range(3):
        m.append("a", 1)
    with pytest.raises(OutOfBlocks):
        m.append("a", 1)
    assert not m.can_append("a") and not m.can_add(1) and m.can_add(0)


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


def test_prefix_cache_hits_evictions_and_events():
    m = BlockManager(4, 2, enable_prefix_caching=True)
    system = [7, 7, 8, 8]
    m.add("a", system + [1])
    t = m.add("b", system + [2])
    assert t.block_ids[:2] == [0, 1] and m.num_cached_tokens("b") == 4
    assert m.allocator.refcount(0) == 2
    m.free("a")
    m.free("b")
    assert m.allocator.num_cached == 2 and m.num_free_blocks == 4
    t = m.add("c", system + [3])
    assert t.block_ids[:2] == [0, 1] and [e.kind for e in m.events][-2:] == ["cache_hit", "allocate"]
    m.free("c")
    m.add("d", [5, 5, 6, 6, 7, 7])    # needs 3 blocks: 2 free + evict the LRU cached one
    evict = [e for e in m.events if e.kind == "evict"][-1]
    assert evict.blocks == (1,), "the tail of the cached prefix is the least recently used, so it goes first"
    m.free("d")
    assert m.add("e", system).block_ids[0] == 0 and m.num_cached_tokens("e") == 2, "block 0 is still cached"
    check_invariants(m)


def test_prefix_cache_checks_collisions():
    m = BlockManager(8, 2, enable_prefix_caching=True)
    m.prefix_cache.hash_fn = lambda parent, tokens: 0  # every block has the same hash
    m.add("a", [1, 2, 3, 4])
    m.add("b", [9, 9, 3, 4])
    assert m.num_cached_tokens("b") == 0 and set(m.table("a").block_ids).isdisjoint(m.table("b").block_ids)
    m.add("c", [1, 2, 5, 5])
    assert m.num_cached_tokens("c") == 2


def test_colliding_predecessor_keys_do_not_fool_the_check():
    # Found by the state machine: with keys that ignore the prefix, [1, 1 | 1, 1 | 0, 1] caches [1, 1] once
    # (its second block collides) and [0, 1] after a predecessor whose *key* equals that of [1, 1] at the
    # start. Only prefix ids tell [1, 1 | 0, 1] (a different prefix) from it.
    m = BlockManager(3, 2, enable_prefix_caching=True)
    m.prefix_cache.hash_fn = lambda parent, tokens: sum(tokens) % 3
    m.add("a", [1, 1, 1, 1, 0, 1])
    m.free("a")
    m.add("b", [1, 1, 0, 1])
    assert m.num_cached_tokens("b") == 2, "[0, 1] after [1, 1] is not the [0, 1] cached after [1, 1, 1, 1]"


def test_blocks_filled_by_decoding_become_cacheable():
    m = BlockManager(8, 2, enable_prefix_caching=True)
    m.add("a", [1])
    m.append("a", 2)
    m.append("a", 3)
    m.append("a", 4)
    assert m.add("b", [1, 2, 3, 4, 5]).block_ids[:2] == m.table("a").block_ids
    assert m.num_cached_tokens("b") == 4


def test_subscribers_see_finished_operations():
    m = BlockManager(4, 2)
    seen = []
    unsubscribe = m.subscribe(lambda e: seen.append((e.kind, m.table(e.seq_id).num_tokens)))
    m.add("a", [1, 2, 3])
    m.fork("a", "b")
    m.append("b", 4)
    assert seen == [("allocate", 3), ("fork", 3), ("copy_on_write", 4), ("append", 4)]
    cow = m.events[-2]
    assert isinstance(cow, BlockEvent) and cow.pairs == ((1, 2),) and cow.seq_id == "b"
    assert [e.step for e in m.events] == [0, 1, 2, 3]
    unsubscribe()
    m.append("a", 5)
    assert len(seen) == 4
    with pytest.raises(TypeError, match="callable"):
        m.subscribe(None)


def test_free_everything_returns_every_block():
    m = BlockManager(16, 4, num_cpu_blocks=8, enable_prefix_caching=True)
    m.add("a", range(9))
    m.fork("a", "b")
    m.append("b", 1)
    m.add("c", range(8))
    m.swap_out("c")
    for s in m.seq_ids:
        m.free(s)
    assert m.num_free_blocks == 16 and m.cpu_allocator.num_free == 8
    assert all(m.allocator.refcount(b) == 0 for b in range(16))
    check_invariants(m)


def sharing(m: BlockManager, group: list) -> list[list[tuple]]:
    """Which (sequence, logical block) entries of the group share a physical block, as sorted lists."""
    by_block: dict[int, list[tuple]] = {}
    for s in group:
        for i, b in enumerate(m.table(s).block_ids):
            by_block.setdefault(b, []).append((s, i))
    return sorted(by_block.values())


def fork_family(m: BlockManager, num_tokens: int, children: int) -> list:
    m.add("p", range(num_tokens))
    for i in range(children):
        m.fork("p", f"c{i}")
    return ["p"] + [f"c{i}" for i in range(children)]


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


def test_a_full_prompt_hit_leaves_the_last_block_to_compute():
    m = BlockManager(16, 4, enable_prefix_caching=True)
    m.add("a", range(8))                   # two full blocks, both cached
    t = m.add("b", range(8))
    assert m.num_cached_tokens("b") == 4, "every block is cached, but the last token must be computed"
    assert t.block_ids[0] == m.table("a").block_ids[0] and t.block_ids[1] != m.table("a").block_ids[1]
    assert m.allocator.refcount(t.block_ids[1]) == 1, "the last token goes into a block b owns alone"
    assert m.prefix_cache.prefix_id_of(t.block_ids[1]) == m.prefix_cache.prefix_id_of(m.table("a").block_ids[1])
    assert m.num_cached_tokens(m.add("c", range(9)) and "c") == 8, "one more token: both blocks are hits"
    m.add("d", range(4))
    assert m.num_cached_tokens("d") == 0 and m.allocator.refcount(m.table("d").block_ids[0]) == 1
    m.add("e", [])
    assert m.num_cached_tokens("e") == 0 and m.table("e").block_ids == []


def test_a_prefix_resident_twice_stays_findable_after_the_first_copy_goes():
    # The review's scenario: [1, 2] is computed twice (by "a"'s prompt and by "d"'s decoding), "d" caches
    # [3, 4] after its copy, and "a"'s copy is evicted. Before, the only findable copy of [1, 2] was a's:
    # once evicted, a new copy got a new prefix id and [3, 4] (cached after the old one) was lost.
    m = BlockManager(6, 2, enable_prefix_caching=True)
    m.add("a", [1, 2, 7])
    for token in [1, 2, 3, 4]:
        if "d" not in m:
            m.add("d", [token])
        else:
            m.append("d", token)
    m.free("a")
    m.add("big", range(100, 108))          # 4 blocks: evicts a's cached [1, 2]
    assert any(e.kind == "evict" for e in m.events)
    m.free("big")
    m.add("e", [1, 2, 9])                  # [1, 2] cached again
    m.add("r", [1, 2, 3, 4, 5])
    assert m.num_cached_tokens("r") == 4, "both blocks of the prefix are resident, so both are hits"
    check_invariants(m)


def test_a_prefix_keeps_its_id_while_a_longer_one_follows_it():
    c = PrefixCache(block_size=2)
    keys = c.match((1, 2, 3, 4))[0]
    p0 = c.register(10, keys[0], None, (1, 2))
    p1 = c.register(11, keys[1], p0, (3, 4))
    c.park(10)
    assert c.evict() == 10
    assert c.match((1, 2, 3, 4))[1] == [], "no block holds [1, 2]: nothing after it is usable either"
    assert c.register(12, keys[0], None, (1, 2)) == p0, "cached again: the same id, so [3, 4] connects again"
    assert c.match((1, 2, 3, 4))[1:] == ([12, 11], [p0, p1])
    c.park(12)
    assert c.evict() == 12 and c.num_prefixes == 2, "[1, 2] has no block now, but [3, 4] follows it"
    c.park(11)
    c.evict()
    assert c.num_prefixes == 0 and len(c) == 0, "no block, no follower: the prefixes are forgotten"


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


def test_a_raising_subscriber_loses_no_event():
    m = BlockManager(4, 2)
    m.add("a", [1, 2, 3])
    m.fork("a", "b")
    seen = []

    def bad(event):
        raise RuntimeError(f"widget crashed on {event.kind}")

    m.subscribe(bad)
    m.subscribe(lambda e: seen.append(e.kind))
    with pytest.raises(RuntimeError, match="crashed on copy_on_write"):
        m.append("b", 4)
    assert [e.kind for e in m.events][-2:] == ["copy_on_write", "append"], "every event is logged"
    assert seen == ["copy_on_write", "append"], "every other subscriber is notified"
    assert m.table("b").num_tokens == 4 and [e.step for e in m.events] == list(range(len(m.events)))


def test_watermark_keeps_headroom_for_schedulers():
    assert BlockManager(99, 4).watermark_blocks == 0 and BlockManager(100, 4).watermark_blocks == 1
    m = BlockManager(200, 4, watermark=0.05)
    assert m.watermark_blocks == 10
    assert m.can_add(190 * 4) and not m.can_add(190 * 4 + 1)
    m.add("big", range(191 * 4))           # add itself uses every free block
    with pytest.raises(ValueError, match="watermark"):
        BlockManager(8, 4, watermark=1.0)
    with pytest.raises(TypeError, match="watermark"):
        BlockManager(8, 4, watermark="1%")


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


# ---- the state machine ------------------------------------------------------------------------------------

# Rules pick sequences by index into the live ones (so most operations are valid), and now and then an
# id that is not live, to exercise the error paths.
PICK = st.integers(0, 63)
# A two-letter alphabet and short prompts make shared prefixes (cache hits) common.
PROMPTS = st.lists(st.integers(0, 1), min_size=0, max_size=8)
TOKENS = st.lists(st.integers(0, 1), min_size=1, max_size=6)


class ManagerMachine(RuleBasedStateMachine):
    """Random add/append/fork/free/swap sequences against a model of what each sequence holds.

    Swaps move single sequences and groups (random sets, and whole fork families); adds repeat live
    sequences' tokens, so that prompts whose every block is cached are common.
    """

    @initialize(num_blocks=st.integers(2, 16), block_size=st.integers(1, 4), num_cpu_blocks=st.integers(0, 12),
                prefix=st.sampled_from(["off", "on", "colliding"]))
    def create(self, num_blocks, block_size, num_cpu_blocks, prefix):
        self.m = BlockManager(num_blocks, block_size, num_cpu_blocks, enable_prefix_caching=prefix != "off")
        if prefix == "colliding":
            # Keys that ignore the prefix and collide often: only the collision check keeps hits correct.
            self.m.prefix_cache.hash_fn = lambda parent, tokens: sum(tokens) % 3
        self.tokens: dict[int, list[int]] = {}          # the model: each live sequence's tokens
        self.pool = {"gpu": [NAN] * (num_blocks * block_size), "cpu": [NAN] * (num_cpu_blocks * block_size)}
        self.computed: dict[int, int] = {}              # tokens of each sequence whose values are written
        self.history: list[list[int]] = []              # tokens of preempted sequences, for later prompts
        self.next_id = 0
        self.root: dict[int, int] = {}                  # each sequence's fork family (its first ancestor)
        self.swapped_groups: list[tuple[list[int], list[list[int]]]] = []   # (group, its CPU tables)

    def _pick(self, pick):
        """A live sequence id, or (one time in eight, or when none is live) one that is not live."""
        live = sorted(self.tokens)
        if not live or pick % 8 == 7:
            return self.next_id + 1000  # never used
        return live[pick % len(live)]

    def _new_id(self, pick):
        """Mostly a fresh id; one time in eight a live one (which add and fork must refuse)."""
        if self.tokens and pick % 8 == 7:
            return sorted(self.tokens)[pick % len(self.tokens)]
        self.next_id += 1
        return self.next_id

    # -- the engine's side: write values, perform copies --

    def _copy(self, src_pool, dst_pool, pairs):
        bs = self.m.block_size
        for src, dst in pairs:
            self.pool[dst_pool][dst * bs:(dst + 1) * bs] = self.pool[src_pool][src * bs:(src + 1) * bs]

    def _write(self, seq_id, positions):
        toks, t = self.tokens[seq_id], self.m.table(seq_id)
        for p in positions:
            self.pool["gpu"][t.slot(p)] = tuple(toks[:p + 1])
        self.computed[seq_id] = len(toks)

    def _run_model(self, seq_id):
        """Compute a sequence's reserved tokens (write them) and tell the manager."""
        if self.computed[seq_id] < len(self.tokens[seq_id]):
            self._write(seq_id, range(self.computed[seq_id], len(self.tokens[seq_id])))
            self._attempt(self.m.mark_computed, seq_id, len(self.tokens[seq_id]))

    def _attempt(self, op, *args, expect_failure=None):
        """Run an operation; if it raises, the manager must be exactly as before."""
        before = state(self.m)
        try:
            return op(*args)
        except (OutOfBlocks, ValueError, KeyError) as e:
            assert state(self.m) == before, f"{op.__name__}{args} raised {e!r} but changed the manager"
            if expect_failure is not None:
                assert isinstance(e, expect_failure), f"{op.__name__}{args}: expected {expect_failure}, got {e!r}"
            raise

    def _query(self, query, *args):
        """Ask the manager something; asking must change nothing."""
        before = state(self.m)
        try:
            return query(*args)
        finally:
            assert state(self.m) == before, f"{query.__name__}{args} changed the manager"

    def _group(self, picks, family, swapped=False):
        """A whole fork family of a live sequence; or distinct live sequences on the GPU (``swapped``: on the
        CPU); or, when a pick says so (one in eight), a list with a dead, repeated or misplaced id."""
        live = sorted(self.tokens)
        if family and live:
            root = self.root[live[(picks[0] if picks else 0) % len(live)]]
            return [s for s in live if self.root[s] == root]
        if any(p % 8 == 7 for p in picks):
            return [self._pick(p) if p % 8 == 7 else live[p % len(live)] if live else p for p in picks]
        where = [s for s in live if self.m.is_swapped(s) == swapped]
        return list(dict.fromkeys(where[p % len(where)] for p in picks)) if where else []

    def _valid(self, group, swapped):
        return bool(group) and len(set(group)) == len(group) and all(
            s in self.tokens and self.m.is_swapped(s) == swapped for s in group)

    # -- rules --

    @rule(pick=PICK, prompt=PROMPTS, computed=st.booleans())
    def add(self, pick, prompt, computed=True):
        seq_id = self._new_id(pick)
        fits = self.m.can_add(len(prompt))
        try:
            self._attempt(self.m.add, seq_id, prompt, computed)
        except ValueError:
            assert seq_id in self.tokens
            return
        except OutOfBlocks:
            assert not fits, "can_add said the prompt fits, but add ran out of blocks"
            return
        assert seq_id not in self.tokens
        self._admitted(seq_id, prompt, computed)

    @rule(pick=PICK, computed=st.booleans(), preempted=st.booleans())
    def add_again(self, pick, computed, preempted):
        """A new request whose prompt is a live sequence's tokens, or a preempted one's (a follow-up turn):
        every full block may be cached."""
        source = self._pick(pick)
        if preempted and self.history:
            prompt = list(self.history[pick % len(self.history)])
        elif source in self.tokens:
            prompt = list(self.tokens[source])
        else:
            return
        seq_id = self._new_id(0)
        try:
            self._attempt(self.m.add, seq_id, prompt, computed)
        except OutOfBlocks:
            return
        self._admitted(seq_id, prompt, computed)

    def _admitted(self, seq_id, prompt, computed=True):
        m, bs = self.m, self.m.block_size
        cached = m.num_cached_tokens(seq_id)
        if m.prefix_cache is not None and prompt:
            # Cache hits are whole blocks, and never the last token: it is computed for its logits.
            assert cached <= len(prompt) - 1 and cached % bs == 0
            table = m.table(seq_id)
            assert m.allocator.refcount(table.block_ids[-1]) == 1, (
                f"the last prompt token of {seq_id} would be written into shared block {table.block_ids[-1]}")
            if len(prompt) % bs == 0 and cached == len(prompt) - bs:
                event("full-prompt hit")
        else:
            assert cached == 0
        self.tokens[seq_id] = list(prompt)
        self.root[seq_id] = seq_id
        self.computed[seq_id] = cached
        if computed:
            self._write(seq_id, range(cached, len(prompt)))

    @rule(pick=PICK)
    def run_model(self, pick):
        """A prefill (or a step) computes every reserved token of a sequence."""
        seq_id = self._pick(pick)
        if seq_id in self.tokens and not self.m.is_swapped(seq_id):
            self._run_model(seq_id)

    @rule(pick=PICK, run=st.booleans(), swap=st.booleans())
    def grow_family(self, pick, run, swap):
        """A scheduler's decode step for a fork family: reserve one slot per member (``computed=False``),
        copying on write where a block is shared; a member that cannot grow preempts the whole family on the
        spot (freed for recomputation, or swapped out), leaving slots reserved and never computed. Else the
        model runs (``run``) and the manager is told."""
        live = [s for s in sorted(self.tokens) if not self.m.is_swapped(s)]
        if not live:
            return
        root = self.root[live[pick % len(live)]]
        family = [s for s in live if self.root[s] == root]
        if any(self.m.is_swapped(s) for s in self.tokens if self.root[s] == root):
            return
        for seq_id in family:
            self._run_model(seq_id)          # the previous step's tokens are computed
        for seq_id in family:
            self.next_id += 1
            try:
                result = self._attempt(self.m.append, seq_id, 1000 + self.next_id, False)
            except OutOfBlocks:
                event("preempted mid-growth")
                self.history += [list(self.tokens[s]) for s in family]
                if swap and self._query(self.m.can_swap_out, family):
                    self._swap_out(family)
                else:
                    self._free_group(family)
                return
            if result.copy is not None:
                self._copy("gpu", "gpu", [result.copy])
            self.tokens[seq_id].append(1000 + self.next_id)
        if run:
            for seq_id in family:
                self._run_model(seq_id)

    @rule(pick=PICK, tokens=TOKENS, fresh=st.booleans())
    def append(self, pick, tokens, fresh):
        seq_id = self._pick(pick)
        for token in tokens:
            if fresh:
                # Tokens no other sequence has: a write into a block another sequence still reads shows up.
                self.next_id += 1
                token = 1000 + self.next_id
            self._append(seq_id, token)

    def _append(self, seq_id, token):
        if seq_id in self.tokens and not self.m.is_swapped(seq_id):
            self._run_model(seq_id)          # computed=True promises every earlier token is written
        ok = seq_id in self.tokens and not self.m.is_swapped(seq_id) and self.m.can_append(seq_id)
        try:
            result = self._attempt(self.m.append, seq_id, token)
        except (OutOfBlocks, ValueError, KeyError):
            assert not ok
            return
        assert ok
        if result.copy is not None:
            self._copy("gpu", "gpu", [result.copy])
        self.tokens[seq_id].append(token)
        position = len(self.tokens[seq_id]) - 1
        assert result.slot == self.m.table(seq_id).slot(position)
        self._write(seq_id, [position])

    @rule(pick=PICK, child_pick=PICK)
    def fork(self, pick, child_pick):
        parent, child = self._pick(pick), self._new_id(child_pick)
        try:
            self._attempt(self.m.fork, parent, child)
        except (ValueError, KeyError):
            assert parent not in self.tokens or child in self.tokens or self.m.is_swapped(parent)
            return
        self.tokens[child] = list(self.tokens[parent])
        self.computed[child] = self.computed[parent]
        self.root[child] = self.root[parent]

    @rule(pick=PICK, n=st.integers(1, 3))
    def sample_in_parallel(self, pick, n):
        """Parallel sampling: fork ``n`` children, then every member of the group appends its own token."""
        parent = self._pick(pick)
        group = [parent]
        for _ in range(n):
            child = self._new_id(0)
            try:
                self._attempt(self.m.fork, parent, child)
            except (ValueError, KeyError):
                return
            self.tokens[child] = list(self.tokens[parent])
            self.computed[child] = self.computed[parent]
            self.root[child] = self.root[parent]
            group.append(child)
        for seq_id in group:
            self.next_id += 1
            self._append(seq_id, 1000 + self.next_id)

    @rule(pick=PICK)
    def free(self, pick):
        seq_id = self._pick(pick)
        self._free_group([seq_id])

    @rule(pick=PICK)
    def free_family(self, pick):
        """Preemption by recomputation of a whole fork family: it gives back num_freeable_blocks blocks."""
        self._free_group(self._group([pick], family=True))

    def _free_group(self, group):
        if not group:
            return
        freeable = self._query(self.m.num_freeable_blocks, group) if self._valid_ids(group) else None
        free = self.m.num_free_blocks
        for seq_id in group:
            try:
                self._attempt(self.m.free, seq_id, expect_failure=KeyError)
            except KeyError:
                assert seq_id not in self.tokens
                return
            del self.tokens[seq_id]
        assert self.m.num_free_blocks == free + freeable, "num_freeable_blocks broke its contract"

    def _valid_ids(self, group):
        return bool(group) and len(set(group)) == len(group) and all(s in self.tokens for s in group)

    @rule(pick=PICK)
    def swap_out(self, pick):
        self._swap_out(self._pick(pick))

    @rule(picks=st.lists(PICK, min_size=1, max_size=4), family=st.booleans())
    def swap_out_group(self, picks, family):
        self._swap_out(self._group(picks, family))

    @rule(pick=PICK, n=st.integers(1, 3), other=PROMPTS, back=st.booleans())
    def fork_then_preempt_the_family(self, pick, n, other, back):
        """The review's case: parallel samples that still share everything are preempted together (then,
        maybe, another request runs and the family comes back)."""
        parent = self._pick(pick)
        if parent not in self.tokens or self.m.is_swapped(parent):
            parent = self.next_id + 1
            self.add(0, other)                  # a new request to sample from
            if parent not in self.tokens:
                return
        for _ in range(n):
            child = self._new_id(0)
            self._attempt(self.m.fork, parent, child)
            self.tokens[child] = list(self.tokens[parent])
            self.computed[child] = self.computed[parent]
            self.root[child] = self.root[parent]
        family = [s for s in self._group([sorted(self.tokens).index(parent)], family=True) if not self.m.is_swapped(s)]
        self._swap_out(family)
        if back:
            self.free(pick)                     # its cached blocks (if any) are more recently used than the family's
            self.add(0, other)
            self._swap_in(family)

    def _swap_out(self, seq_ids):
        group = seq_ids if isinstance(seq_ids, list) else [seq_ids]
        valid = self._valid(group, swapped=False)
        if valid:
            freeable = self._query(self.m.num_freeable_blocks, seq_ids)
            fits = self._query(self.m.can_swap_out, seq_ids)
            before = sharing(self.m, group)
        free = self.m.num_free_blocks
        try:
            pairs = self._attempt(self.m.swap_out, seq_ids)
        except (OutOfBlocks, ValueError, KeyError):
            assert not valid or not fits, f"can_swap_out({seq_ids}) said yes, but swap_out failed"
            return
        assert valid and fits
        assert self.m.num_free_blocks == free + freeable, "num_freeable_blocks broke its contract"
        assert sharing(self.m, group) == before, "the CPU tables must share exactly as the GPU tables did"
        assert len(pairs) == len({b for s in group for b in self.m.table(s).block_ids}), "one copy per block"
        if len(group) > 1:
            event("group swap out" + (", sharing" if len(pairs) < sum(map(len, before)) else ""))
        self._copy("gpu", "cpu", pairs)
        self.swapped_groups.append((group, [list(self.m.table(s).block_ids) for s in group]))

    @rule(pick=PICK)
    def swap_in(self, pick):
        self._swap_in(self._pick(pick))

    @rule(picks=st.lists(PICK, min_size=1, max_size=4), recorded=st.booleans())
    def swap_in_group(self, picks, recorded):
        """A group swapped out together (exact sharing expected back), or a random list of ids."""
        intact = [g for g, tables in self.swapped_groups if self._valid(g, swapped=True)
                  and [self.m.table(s).block_ids for s in g] == tables]
        if recorded and intact:
            self._swap_in(list(intact[picks[0] % len(intact)]))
        else:
            self._swap_in(self._group(picks, family=False, swapped=True))

    def _swap_in(self, seq_ids):
        group = seq_ids if isinstance(seq_ids, list) else [seq_ids]
        valid = self._valid(group, swapped=True)
        if valid:
            advised = self._query(self.m.can_swap_in, seq_ids)
            cpu_tables = [list(self.m.table(s).block_ids) for s in group]
            exact = (group, cpu_tables) in self.swapped_groups
            before = sharing(self.m, group)
        try:
            pairs = self._attempt(self.m.swap_in, seq_ids)
        except (OutOfBlocks, ValueError, KeyError):
            assert not valid or not advised, f"can_swap_in({seq_ids}) said yes, but swap_in failed"
            return
        assert valid
        self._copy("cpu", "gpu", pairs)
        gpu_of = {}
        for s, cpu_blocks in zip(group, cpu_tables):
            for c, g in zip(cpu_blocks, self.m.table(s).block_ids):
                assert gpu_of.setdefault(c, g) == g, f"CPU block {c} came back as two GPU blocks: sharing lost"
        if exact:
            assert sharing(self.m, group) == before, "a group swapped out and in together must share as before"
            event("group swapped back" if len(group) > 1 else "single swapped back")
        if len(pairs) < len(gpu_of):
            event("swap_in reused cached blocks")

    @rule()
    def free_everything(self):
        if len(self.tokens) < 4:
            return
        for s in list(self.tokens):
            self.m.free(s)
        self.tokens.clear()
        assert self.m.num_free_blocks == self.m.num_blocks
        assert all(self.m.allocator.refcount(b) == 0 for b in range(self.m.num_blocks))
        if self.m.cpu_allocator is not None:
            assert self.m.cpu_allocator.num_free == self.m.cpu_allocator.num_blocks

    def teardown(self):
        event(f"steps: {getattr(self, 'steps', 0) // 10 * 10}")

    # -- invariants after every step --

    @invariant()
    def bookkeeping(self):
        self.steps = getattr(self, "steps", 0) + 1
        check_invariants(self.m)
        assert sorted(self.m.seq_ids) == sorted(self.tokens)

    @invariant()
    def every_sequence_reads_back_its_values(self):
        for s, toks in self.tokens.items():
            t = self.m.table(s)
            assert t.num_tokens == len(toks)
            n = self.computed[s]
            got = [self.pool[t.device][slot] for slot in t.slot_mapping(0, n)]
            expected = [tuple(toks[:p + 1]) for p in range(n)]
            assert got == expected, f"sequence {s} ({t}) reads back wrong K/V values"

    @invariant()
    def prefix_keys_follow_the_tokens(self):
        cache, bs = self.m.prefix_cache, self.m.block_size
        if cache is None:
            return
        for s, toks in self.tokens.items():
            keys, key = [], None
            for i in range(len(toks) // bs):
                key = cache.hash_fn(key, tuple(toks[i * bs:(i + 1) * bs]))
                keys.append(key)
            record = self.m._seqs[s]
            assert record.keys == keys, f"sequence {s}: block keys do not chain its tokens"
            computed_blocks = min(len(keys), self.computed[s] // bs)
            assert len(record.prefix_ids) == computed_blocks, (
                f"sequence {s}: {len(record.prefix_ids)} prefix ids for {computed_blocks} computed full blocks")
            if self.m.is_swapped(s):
                continue
            # On the GPU, every full block is cached under the sequence's own chain of prefix ids.
            for i, prefix_id in enumerate(record.prefix_ids):
                block = self.m.table(s).block_ids[i]
                if prefix_id == cache.BROKEN:
                    assert not cache.is_registered(block)
                else:
                    assert cache.prefix_id_of(block) == prefix_id, f"sequence {s}, block {i}: wrong prefix id"
                    parent = record.prefix_ids[i - 1] if i else None
                    assert cache._prefixes[prefix_id].parent == parent, f"sequence {s}, block {i}: broken chain"
        # The cache forgets what nothing needs: each prefix is held by a block or followed by one.
        children = Counter(p.parent for p in cache._prefixes.values())
        for prefix_id, p in cache._prefixes.items():
            assert p.children == children[prefix_id]
            assert p.parent is None or p.parent in cache._prefixes, f"prefix {prefix_id} follows a forgotten one"
            assert p.blocks or p.children, f"prefix {prefix_id} is held by nothing and followed by nothing"
            assert cache._prefix_of_key[p.key] is p
            hit = cache._hit_of_key.get(p.key)
            assert hit == ((p.parent, p.tokens, next(iter(p.blocks)), prefix_id) if p.blocks else None)
            for b in p.blocks:
                assert cache.prefix_id_of(b) == prefix_id
                # Findable means computed: each slot holds the K/V of the prefix's token there.
                values = self.pool["gpu"][b * bs:(b + 1) * bs]
                assert all(isinstance(v, tuple) and v[-1] == t for v, t in zip(values, p.tokens)), (
                    f"cached block {b} (prefix {prefix_id}) holds {values}, not the K/V of {p.tokens}")
                assert self.m.allocator.refcount(b) > 0 or cache.is_parked(b), f"cached block {b} is on the free list"
        assert len(cache) == sum(len(p.blocks) for p in cache._prefixes.values())


ManagerMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=40, deadline=None,
                                            suppress_health_check=[HealthCheck.too_slow])
TestManagerMachine = ManagerMachine.TestCase
