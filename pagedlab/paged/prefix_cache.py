"""Prefix caching: find a full block whose K/V was already computed, by the hash of everything before it.

The K/V of a token depend on that token *and every token before it*, so a full block can be reused
only by a sequence whose whole prefix up to the end of that block is the same. Hashing each block's
tokens together with its predecessor's hash,

    h_0 = hash(None, tokens[0 : B]),   h_i = hash(h_{i-1}, tokens[i*B : (i+1)*B])   (B = block_size)

gives every full block a key that stands for its entire prefix. A hash is not proof, so every cached
block also stores its tokens and the identity of the block before it, and a lookup only hits when both
match. That identity is a *prefix id*: a number given to each distinct (predecessor, tokens) pair when it
is first cached, never reused. By induction, equal prefix ids mean equal whole prefixes, so a collision
(of a block's key, or of its predecessor's key) is a miss, never wrong K/V. (Comparing predecessor
*hashes* instead would not do: two different prefixes whose keys collide would pass the check.)

A cached block whose last sequence has finished is *cached-free*: nobody references it, but its
contents stay valid until the space is needed. Those blocks wait in least-recently-used order (an
``OrderedDict``: O(1) to add, to take back on a hit, and to evict the oldest).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

HashFn = Callable[[int | None, tuple[int, ...]], int]


def chained_hash(parent_hash: int | None, tokens: tuple[int, ...]) -> int:
    """The key of a full block: Python's hash of (predecessor's key, the block's tokens).

    Hashes of ints and tuples of ints do not depend on ``PYTHONHASHSEED``, so keys are the same in every
    process (only ``str``/``bytes`` hashing is randomized).
    """
    return hash((parent_hash, tokens))


class PrefixCache:
    """Full blocks by chained hash, and the cached-free ones in LRU order.

    The cache only keeps the index; reference counts and the free list stay in the
    :class:`~pagedlab.paged.BlockAllocator`, and the :class:`~pagedlab.paged.BlockManager` keeps the two in
    step (a parked block is cached-free in the allocator, and the other way round).

    Args:
        block_size: tokens per block.
        hash_fn: ``(parent_hash, tokens) -> int``; :func:`chained_hash` by default (tests pass a weak
            one to force collisions).
    """

    BROKEN = -1
    """The prefix id of a block that could not be cached (its key is taken by another prefix): every block
    after it misses and is not cached either."""

    __slots__ = ("block_size", "hash_fn", "_block_of", "_entry_of", "_lru", "_next_id")

    def __init__(self, block_size: int, hash_fn: HashFn = chained_hash) -> None:
        self.block_size = block_size
        self.hash_fn = hash_fn
        self._block_of: dict[int, int] = {}                                    # hash -> block id
        # block -> (key, predecessor's prefix id, tokens, prefix id)
        self._entry_of: dict[int, tuple[int, int | None, tuple[int, ...], int]] = {}
        self._lru: OrderedDict[int, None] = OrderedDict()                      # cached-free, oldest first
        self._next_id = 1

    # ---- lookups -------------------------------------------------------------------------------------

    def match(self, tokens: tuple[int, ...]) -> tuple[list[int], list[int], list[int]]:
        """Key every full block of ``tokens`` and find the longest cached prefix.

        A block hits when its key names a cached block whose stored tokens and predecessor's prefix id are
        the ones found so far; a collision is a miss.

        Returns:
            ``(keys, hits, prefix_ids)``: the key of each full block; the cached blocks of the longest
            prefix that is cached from the first block on (a miss ends it, since a block's K/V are only
            reusable after its predecessors'); their prefix ids.
        """
        bs, hash_fn, block_of, entry_of = self.block_size, self.hash_fn, self._block_of, self._entry_of
        keys: list[int] = []
        hits: list[int] = []
        prefix_ids: list[int] = []
        key = prefix_id = None
        matching = True
        for start in range(0, len(tokens) - bs + 1, bs):
            block_tokens = tokens[start:start + bs]
            key = hash_fn(key, block_tokens)
            keys.append(key)
            if matching:
                block_id = block_of.get(key)
                if block_id is not None:
                    _, stored_parent, stored_tokens, stored_id = entry_of[block_id]
                    if stored_parent == prefix_id and stored_tokens == block_tokens:
                        hits.append(block_id)
                        prefix_ids.append(stored_id)
                        prefix_id = stored_id
                        continue
                matching = False
        return keys, hits, prefix_ids

    def is_registered(self, block_id: int) -> bool:
        """True when ``block_id`` holds a cached full block (referenced or cached-free)."""
        return block_id in self._entry_of

    def is_parked(self, block_id: int) -> bool:
        """True when ``block_id`` is cached-free (waiting in the LRU)."""
        return block_id in self._lru

    def key_of(self, block_id: int) -> int | None:
        """The chained hash ``block_id`` is registered under, or None."""
        entry = self._entry_of.get(block_id)
        return None if entry is None else entry[0]

    def prefix_id_of(self, block_id: int) -> int | None:
        """The prefix id of cached ``block_id``, or None."""
        entry = self._entry_of.get(block_id)
        return None if entry is None else entry[3]

    @property
    def num_parked(self) -> int:
        """How many cached-free blocks wait in the LRU."""
        return len(self._lru)

    def count_parked(self, block_ids: list[int]) -> int:
        """How many of ``block_ids`` are cached-free."""
        return sum(map(self._lru.__contains__, block_ids))

    def parked(self) -> list[int]:
        """The cached-free blocks, least recently used first (the next to be evicted first)."""
        return list(self._lru)

    def __len__(self) -> int:
        return len(self._entry_of)

    # ---- updates -------------------------------------------------------------------------------------

    def register(self, block_id: int, key: int, parent_id: int | None, tokens: tuple[int, ...]) -> int:
        """Offer a block that just became full for caching, under ``key``.

        Returns:
            The prefix id to chain the next block on: a new one when the block was cached; the cached
            block's when ``key`` already names a block with the same prefix (the same K/V computed twice:
            the first block stays the cached one); :attr:`BROKEN` when ``key`` names another prefix (a
            collision) or ``parent_id`` is BROKEN. Only the first case changes the cache.
        """
        if parent_id == self.BROKEN:
            return self.BROKEN
        cached = self._block_of.get(key)
        if cached is not None:
            _, stored_parent, stored_tokens, prefix_id = self._entry_of[cached]
            return prefix_id if (stored_parent, stored_tokens) == (parent_id, tokens) else self.BROKEN
        if block_id in self._entry_of:
            raise ValueError(f"block {block_id} is already cached under another key")
        prefix_id, self._next_id = self._next_id, self._next_id + 1
        self._block_of[key] = block_id
        self._entry_of[block_id] = (key, parent_id, tokens, prefix_id)
        return prefix_id

    def park(self, block_id: int) -> None:
        """A registered block lost its last reference: it becomes the most recently used cached-free block."""
        if block_id not in self._entry_of:
            raise ValueError(f"block {block_id} is not in the prefix cache")
        self._lru[block_id] = None

    def unpark(self, block_id: int) -> None:
        """A cache hit on a cached-free block: it is referenced again, so it is no longer evictable."""
        del self._lru[block_id]

    def evict(self) -> int:
        """Forget the least recently used cached-free block and return its id (to go back on the free list).

        Raises:
            LookupError: no block is cached-free.
        """
        if not self._lru:
            raise LookupError("no cached-free block to evict")
        block_id, _ = self._lru.popitem(last=False)
        key = self._entry_of.pop(block_id)[0]
        del self._block_of[key]
        return block_id
