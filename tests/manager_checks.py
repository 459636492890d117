"""What every block-manager test checks: a manager's public state, its invariants, and fork families' sharing.

Shared by ``tests/paged/test_paged_manager.py``, ``tests/paged/test_swapping.py`` and
``tests/paged/test_manager_machine.py`` (pytest puts ``tests/`` on the import path).
"""

from __future__ import annotations

from collections import Counter

from pagedlab.paged import BlockManager

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
