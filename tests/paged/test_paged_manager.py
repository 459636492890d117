"""BlockManager: unit tests of block tables, fork and copy-on-write, prefix caching and events.

Swapping has its own file (``tests/paged/test_swapping.py``), and so does the hypothesis state machine against a
model of what each sequence holds (``tests/paged/test_manager_machine.py``).
"""

from __future__ import annotations

import pytest
from manager_checks import check_invariants, state

from pagedlab.paged import BlockEvent, BlockManager, OutOfBlocks, PrefixCache, Usage


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
    u = Usage.of(m, bytes_per_block=1000)
    assert (u.blocks_used, u.logical_blocks, u.blocks_shared) == (3, 12, 3)
    assert u.blocks_saved_by_sharing == 9 and u.bytes_saved_by_sharing == 9000
    assert u.tokens_stored == 40 and u.slots_filled == 10 and u.unused_slots == 2
    assert u.fragmentation == pytest.approx(2 / 12)
    assert Usage.of(m).bytes_saved_by_sharing is None


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


def test_a_block_the_cache_refused_stays_uncached_for_its_sharers():
    # Found by the state machine: a block whose key collided is BROKEN for its sequence; once the colliding prefix
    # was evicted, a fork sharing the block cached it, and the two sharers disagreed about what the block is.
    m = BlockManager(num_blocks=3, block_size=4, enable_prefix_caching=True)
    m.prefix_cache.hash_fn = lambda parent, tokens: 0          # every block's key collides
    m.add("a", [0, 1, 1, 1])
    m.free("a")                                                # its block is cached-free under key 0
    m.add("b", [0, 0, 0, 0, 0], computed=False)
    m.fork("b", "c")
    m.mark_computed("b", 5)                                    # key 0 is taken: b's full block is BROKEN
    m.append("b", 9)                                           # copy-on-write evicts a's block: key 0 is free
    m.mark_computed("c", 5)
    shared = m.table("b").block_ids[0]
    assert shared == m.table("c").block_ids[0] and not m.prefix_cache.is_registered(shared)
    assert m._seqs.get("b").prefix_ids == m._seqs.get("c").prefix_ids == [PrefixCache.BROKEN]
    m.free("b")
    m.free("c")
    check_invariants(m)


def test_a_long_sequence_s_tokens_are_not_copied_into_the_manager():
    # The caller (the engine's Sequence) owns a sequence's token ids. With prefix caching the manager keeps only the
    # tokens the prefix cache does not hold (here the block being filled); each cached block's are in its entry.
    m = BlockManager(num_blocks=64, block_size=16, num_cpu_blocks=64, enable_prefix_caching=True)
    prompt = list(range(1000, 1600))
    m.add("a", prompt)
    for t in range(100):
        m.append("a", 5000 + t)
    tokens = prompt + list(range(5000, 5100))           # 700 tokens: 43 full blocks and 12 in the last
    record = m._seqs.get("a")
    lists = {name: len(v) for name in type(record).__slots__ if isinstance(v := getattr(record, name), list)}
    assert max(lists.values()) <= 43, f"the record holds a list as long as the sequence: {lists}"
    assert record.uncached_tokens == tokens[688:]
    # The prefix is still found whole, and a swapped-out sequence keeps what its blocks' entries may lose.
    m.add("b", tokens + [7])
    assert m.num_cached_tokens("b") == 688
    m.free("b")
    m.swap_out("a")
    assert m._seqs.get("a").uncached_tokens == tokens
    m.swap_in("a")
    assert m._seqs.get("a").uncached_tokens == tokens[688:]
    m.append("a", 9)
    check_invariants(m)
