"""The GPU pool as the block manager uses it: the allocator and the prefix cache, kept in step.

A block that holds a cached prefix and loses its last reference becomes cached-free in the allocator *and* parked
with the prefix cache's eviction policy; a cache hit revives it in both; an allocation that finds the free list
short evicts from both. :class:`BlockPool` is the one place those pairs of calls are made, and the one place a
sequence's computed full blocks are offered to the prefix cache (vLLM v1 has the same room: its ``BlockPool``).
The block manager (:mod:`pagedlab.paged.manager`) and its swapping collaborator (:mod:`pagedlab.paged.swapping`)
allocate and release GPU blocks through it.
"""

from __future__ import annotations

from collections.abc import Hashable

from pagedlab.paged.allocator import BlockAllocator
from pagedlab.paged.events import BlockEvent
from pagedlab.paged.prefix_cache import PrefixCache
from pagedlab.paged.sequences import SeqRecord


class BlockPool:
    """GPU blocks with an optional prefix cache over them.

    Args:
        allocator: the GPU pool's reference counts and free list.
        prefix_cache: the cache over its full blocks, or None (prefix caching off).
        block_size: tokens per block.
    """

    __slots__ = ("allocator", "prefix_cache", "block_size", "_uncacheable")

    def __init__(self, allocator: BlockAllocator, prefix_cache: PrefixCache | None, block_size: int) -> None:
        self.allocator = allocator
        self.prefix_cache = prefix_cache
        self.block_size = block_size
        # Full blocks the prefix cache refused (a colliding key, a broken chain): they stay uncached while anyone
        # holds them, so every sharer of one records the same BROKEN prefix id, even if the key frees up later.
        self._uncacheable: set[int] = set()

    @property
    def num_free(self) -> int:
        """Blocks an allocation can get: the free list plus the cached-free blocks (evicted on demand)."""
        return self.allocator.num_free + self.allocator.num_cached

    def count_cached_free(self, block_ids: list[int]) -> int:
        """How many of ``block_ids`` (distinct) are cached-free: reviving them takes them off :attr:`num_free`."""
        return self.prefix_cache.count_parked(block_ids) if self.prefix_cache is not None and block_ids else 0

    def take(self, n: int, seq_id: Hashable, events: list[BlockEvent]) -> list[int]:
        """Allocate ``n`` blocks, evicting cached-free blocks (in the policy's order) when the free list is short;
        an ``evict`` event for ``seq_id`` is appended to ``events``.

        The caller has checked ``n <= num_free``, so this cannot fail halfway.
        """
        alloc = self.allocator
        short = n - alloc.num_free
        if short > 0:
            evicted = [self.prefix_cache.evict() for _ in range(short)]
            for b in evicted:
                alloc.evict(b)
            events.append(BlockEvent("evict", seq_id, blocks=tuple(evicted)))
        return alloc.allocate_many(n)

    def revive(self, hits: list[int]) -> None:
        """Add a reference to each of ``hits`` (distinct cached blocks, referenced or cached-free): a cache hit."""
        revived = self.allocator.reuse_many(hits)
        if revived:
            self.prefix_cache.unpark_many(revived)

    def release(self, block_ids: list[int]) -> None:
        """Drop one reference to each of ``block_ids``: a block at zero goes to the free list, or, holding a cached
        prefix, is parked. Last block first, so that among one sequence's blocks the tail is parked first."""
        alloc, cache = self.allocator, self.prefix_cache
        for b in reversed(block_ids):
            cached = cache is not None and cache.is_registered(b)
            if alloc.free(b, cache=cached) == 0:
                if cached:
                    cache.park(b)
                else:
                    self._uncacheable.discard(b)

    def register_upto(self, record: SeqRecord, num_tokens: int) -> None:
        """Offer the full blocks among the first ``num_tokens`` tokens of ``record`` that are not offered yet to
        the prefix cache, recording their prefix ids. A block a sharer (a fork) cached already keeps its prefix
        id. Prefix caching only."""
        for i in range(len(record.prefix_ids), min(num_tokens // self.block_size, len(record.keys))):
            record.prefix_ids.append(self._cache_block(record, i, record.prefix_ids[i - 1] if i else None))
        self._drop_cached_tokens(record)

    def reregister(self, record: SeqRecord) -> None:
        """Recompute the prefix ids of a sequence that is back on the GPU, caching its computed blocks that are
        not cached yet (their prefixes may have been evicted while it was swapped out). Prefix caching only."""
        prefix_ids: list[int] = []
        for i in range(len(record.prefix_ids)):
            prefix_ids.append(self._cache_block(record, i, prefix_ids[-1] if i else None))
        record.prefix_ids[:] = prefix_ids
        self._drop_cached_tokens(record)

    def recall_tokens(self, record: SeqRecord) -> None:
        """Before ``record``'s sequence leaves the GPU (``swap_out``): copy back from the prefix cache the tokens of
        its cached blocks, which may be evicted while it is away; :meth:`reregister` needs them to cache the
        blocks again. Prefix caching only."""
        cache, block_ids = self.prefix_cache, record.table.block_ids
        cached = [t for b in block_ids[:record.uncached_from] for t in cache.tokens_of(b)]
        record.uncached_tokens[:0] = cached
        record.uncached_from = 0

    def _drop_cached_tokens(self, record: SeqRecord) -> None:
        """Forget the tokens of ``record``'s leading blocks that are cached now: their entries hold them (one
        owner), and stay while the sequence holds the blocks."""
        start = n = record.uncached_from
        while n < len(record.prefix_ids) and record.prefix_ids[n] != self.prefix_cache.BROKEN:
            n += 1
        del record.uncached_tokens[:(n - start) * self.block_size]
        record.uncached_from = n

    def _cache_block(self, record: SeqRecord, i: int, parent_id: int | None) -> int:
        """The prefix id of full block ``i`` of ``record``: the one it is cached under, BROKEN when the cache refused it
        before (for this sequence or a sharer), else its registration's."""
        block_id, cache = record.table.block_ids[i], self.prefix_cache
        prefix_id = cache.prefix_id_of(block_id)       # a reused block, or one a sharer cached already
        if prefix_id is None:
            if block_id in self._uncacheable:
                return cache.BROKEN
            prefix_id = cache.register(block_id, record.keys[i], parent_id, record.block_tokens(i))
            if prefix_id == cache.BROKEN:
                self._uncacheable.add(block_id)
        return prefix_id
