"""Unit tests of the plain-Python core of pagedlab.paged: BlockAllocator, BlockTable, PrefixCache."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pagedlab.paged import BlockAllocator, BlockTable, OutOfBlocks, PrefixCache


def test_import_is_torch_free():
    code = "import sys, pagedlab.paged; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False", "import pagedlab.paged must not import torch (KVCache is loaded lazily)"


def test_kvcache_is_loaded_on_first_use():
    from pagedlab.paged import KVCache
    from pagedlab.paged.kv_cache import KVCache as direct

    assert KVCache is direct


# ---- BlockAllocator -------------------------------------------------------------------------------------

def test_fresh_pool_hands_out_lowest_ids_first_and_reuses_last_freed():
    a = BlockAllocator(4)
    assert [a.allocate(), a.allocate()] == [0, 1]
    a.free(0)
    assert a.allocate() == 0, "the block freed last is handed out next (a stack)"
    assert a.allocate_many(2) == [2, 3]
    assert a.num_free == 0


def test_refcounts_follow_incref_and_free():
    a = BlockAllocator(3)
    b = a.allocate()
    a.incref(b)
    a.incref(b)
    assert a.refcount(b) == 3
    assert a.free(b) == 2 and a.free(b) == 1
    assert a.num_free == 2, "a block with references left must not be on the free list"
    assert a.free(b) == 0
    assert a.num_free == 3 and a.refcount(b) == 0


def test_allocate_many_is_all_or_nothing():
    a = BlockAllocator(4)
    a.allocate()
    before = a.free_blocks()
    with pytest.raises(OutOfBlocks) as info:
        a.allocate_many(4)
    assert a.free_blocks() == before
    assert info.value.requested == 4 and info.value.free == 3 and info.value.total == 4
    assert "need 4 free blocks" in str(info.value) and "only 3 of 4" in str(info.value)
    assert isinstance(info.value, MemoryError)
    assert a.allocate_many(0) == []


def test_out_of_blocks_when_empty():
    a = BlockAllocator(1)
    a.allocate()
    with pytest.raises(OutOfBlocks, match="need 1 free block"):
        a.allocate()


@pytest.mark.parametrize("bad", [-1, 3, 10**6])
def test_unknown_ids_are_rejected(bad):
    a = BlockAllocator(3)
    for op in (a.free, a.incref, a.refcount, a.reuse, a.evict):
        with pytest.raises(ValueError, match="not in this pool"):
            op(bad)


def test_wrong_types_are_rejected():
    with pytest.raises(TypeError, match="num_blocks must be an int"):
        BlockAllocator(2.0)
    with pytest.raises(ValueError, match="num_blocks must be >= 1"):
        BlockAllocator(0)
    a = BlockAllocator(2)
    with pytest.raises(TypeError, match="block_id must be an int"):
        a.free("0")
    with pytest.raises(TypeError, match="n must be an int"):
        a.allocate_many(True)


def test_double_free_and_sharing_a_free_block_raise():
    a = BlockAllocator(2)
    b = a.allocate()
    a.free(b)
    with pytest.raises(ValueError, match="double free"):
        a.free(b)
    with pytest.raises(ValueError, match="it is free"):
        a.incref(b)
    assert a.free_blocks().count(b) == 1, "a failed free must not push the block twice"


def test_cached_free_blocks_are_kept_off_the_free_list_until_reused_or_evicted():
    a = BlockAllocator(3)
    b0, b1 = a.allocate_many(2)
    assert a.free(b0, cache=True) == 0
    assert a.is_cached(b0) and a.num_cached == 1 and a.num_free == 1
    with pytest.raises(ValueError, match="cached-free"):
        a.incref(b0)
    with pytest.raises(ValueError, match="double free"):
        a.free(b0)
    assert a.reuse(b0) is True, "a hit on a cached-free block revives it"
    assert a.refcount(b0) == 1 and not a.is_cached(b0) and a.num_cached == 0
    assert a.reuse(b0) is False and a.refcount(b0) == 2, "a hit on a block in use shares it"
    a.free(b0)
    a.free(b0, cache=True)
    a.evict(b0)
    assert a.num_free == 2 and a.refcount(b0) == 0 and not a.is_cached(b0)
    with pytest.raises(ValueError, match="not cached-free"):
        a.evict(b0)
    with pytest.raises(ValueError, match="it is free"):
        a.reuse(b0)
    with pytest.raises(ValueError, match=r"referenced \(1\), not cached-free"):
        a.evict(b1)


def test_reuse_many_is_reuse_of_each_all_or_nothing():
    a = BlockAllocator(4)
    b0, b1, b2 = a.allocate_many(3)
    a.free(b0, cache=True)
    a.free(b2)                                    # on the free list
    counts = [a.refcount(b) for b in range(4)], a.num_cached
    with pytest.raises(ValueError, match=f"cannot reuse block {b2}: it is free"):
        a.reuse_many([b0, b1, b2])
    assert ([a.refcount(b) for b in range(4)], a.num_cached) == counts, "a failed reuse_many changed counts"
    assert a.reuse_many([b0, b1]) == [b0], "only b0 was cached-free"
    assert (a.refcount(b0), a.refcount(b1), a.num_cached, a.is_cached(b0)) == (1, 2, 0, False)


# ---- BlockTable ------------------------------------------------------------------------------------------

def test_slot_formula_and_mapping():
    t = BlockTable([5, 2, 7], num_tokens=35, block_size=16)
    assert t.slot(0) == 80 and t.slot(15) == 95
    assert t.slot(16) == 32, "position 16 is the first token of the second logical block (physical 2)"
    assert t.slot(34) == 7 * 16 + 2
    assert t.slot_mapping() == [t.slot(p) for p in range(35)]
    assert t.slot_mapping(15, 17) == [95, 32]
    assert t.num_blocks == 3


def test_slot_bounds():
    t = BlockTable([0], num_tokens=3, block_size=4)
    with pytest.raises(IndexError, match="position 3"):
        t.slot(3)
    with pytest.raises(IndexError):
        t.slot(-1)
    with pytest.raises(IndexError):
        t.slot_mapping(0, 4)
    with pytest.raises(TypeError):
        t.slot(1.0)


# ---- PrefixCache -----------------------------------------------------------------------------------------

def test_match_chains_hashes_and_stops_at_the_first_miss():
    c = PrefixCache(block_size=2)
    keys, hits, ids = c.match((1, 2, 3, 4, 5))
    assert len(keys) == 2 and hits == [] and ids == [], "only full blocks are keyed; nothing is cached yet"
    p0 = c.register(10, keys[0], None, (1, 2))
    p1 = c.register(11, keys[1], p0, (3, 4))
    assert p0 != p1 and c.prefix_id_of(11) == p1 and c.key_of(10) == keys[0]
    assert c.match((1, 2, 3, 4)) == (keys, [10, 11], [p0, p1])
    assert c.match((1, 2, 9, 9, 3, 4))[1] == [10], "a miss ends the cached prefix"
    assert c.match((3, 4))[1] == [], "the same tokens after another prefix are another block"
    assert c.register(12, keys[0], None, (1, 2)) == p0, "the same prefix again: the same prefix id"
    assert len(c) == 3 and c.key_of(12) == keys[0] and c.blocks_of(p0) == [10, 12], "... and one more copy of it"
    with pytest.raises(ValueError, match="already cached"):
        c.register(12, keys[0], None, (1, 2))
    with pytest.raises(ValueError, match="not a cached prefix"):
        c.register(13, 99, 12345, (5, 6))


def test_collisions_are_misses():
    c = PrefixCache(block_size=2, hash_fn=lambda parent, tokens: 42)  # every block collides
    p = c.register(0, 42, None, (1, 2))
    assert c.match((1, 2))[1:] == ([0], [p])
    assert c.match((9, 9))[1] == [], "same hash, other tokens: must be a miss"
    assert c.match((1, 2, 1, 2))[1] == [0], "same hash and tokens, other prefix: must be a miss"
    assert c.register(1, 42, None, (9, 9)) == PrefixCache.BROKEN, "a collision cannot be cached"
    assert c.register(1, 5, PrefixCache.BROKEN, (9, 9)) == PrefixCache.BROKEN
    assert len(c) == 1


def test_lru_evicts_least_recently_parked_first():
    c = PrefixCache(block_size=1)
    for b in range(3):
        c.register(b, c.match((b,))[0][0], None, (b,))
        c.park(b)
    c.unpark(0)
    c.park(0)  # used again: now the most recent
    assert c.parked() == [1, 2, 0]
    assert c.evict() == 1
    assert not c.is_registered(1) and c.match((1,))[1] == []
    assert c.num_parked == 2
    with pytest.raises(ValueError, match="not in the prefix cache"):
        c.park(1)
    c.evict(), c.evict()
    with pytest.raises(LookupError):
        c.evict()
