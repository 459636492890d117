"""Prefix caching: find a full block whose K/V was already computed, by the hash of everything before it.

The K/V of a token depend on that token *and every token before it*, so a full block can be reused
only by a sequence whose whole prefix up to the end of that block is the same. Hashing each block's
tokens together with its predecessor's hash,

    h_0 = hash(None, tokens[0 : B]),   h_i = hash(h_{i-1}, tokens[i*B : (i+1)*B])   (B = block_size)

gives every full block a key that stands for its entire prefix. A hash is not proof, so the cache also
stores each prefix's tokens and the identity of the prefix before it, and a lookup only hits when both
match. That identity is a *prefix id*: a number given to each distinct (predecessor, tokens) pair when it
is first cached, never reused. By induction, equal prefix ids mean equal whole prefixes, so a collision
(of a block's key, or of its predecessor's key) is a miss, never wrong K/V. (Comparing predecessor
*hashes* instead would not do: two different prefixes whose keys collide would pass the check.)

One prefix can be resident in several physical blocks at once (a sequence swapped back in, a block filled
by decoding while another sequence computed the same prefix, a prompt whose last block was recomputed):
every copy is registered, as in vLLM v1's block pool (a hash maps to several blocks), and any of them is
a hit. A prefix id lives while a block holds it *or* a longer cached prefix was registered after it, so
that re-caching a prefix whose blocks were all evicted gives it back its id and reconnects the longer
prefixes cached after it.

A cached block whose last sequence has finished is *cached-free*: nobody references it, but its
contents stay valid until the space is needed. Which of them is given up first is the cache's eviction policy
(:mod:`pagedlab.paged.eviction`; least recently used by default).
"""

from __future__ import annotations

from collections.abc import Callable

from pagedlab.paged.eviction import LRU, EvictionPolicy

HashFn = Callable[[int | None, tuple[int, ...]], int]


def chained_hash(parent_hash: int | None, tokens: tuple[int, ...]) -> int:
    """The key of a full block: Python's hash of (predecessor's key, the block's tokens).

    Hashes of ints and tuples of ints do not depend on ``PYTHONHASHSEED``, so keys are the same in every
    process (only ``str``/``bytes`` hashing is randomized).
    """
    return hash((parent_hash, tokens))


class _Prefix:
    """One cached prefix: its id and key, its predecessor's prefix id, its last block's tokens, and where it is."""

    __slots__ = ("id", "key", "parent", "tokens", "blocks", "children")

    def __init__(self, prefix_id: int, key: int, parent: int | None, tokens: tuple[int, ...]) -> None:
        self.id = prefix_id
        self.key = key
        self.parent = parent
        self.tokens = tokens
        self.blocks: dict[int, None] = {}   # the physical blocks holding it, oldest first (an ordered set)
        self.children = 0                   # prefixes registered with this one as predecessor


class PrefixCache:
    """Full blocks by chained hash, and the cached-free ones in the order of an eviction policy.

    The cache only keeps the index; reference counts and the free list stay in the
    :class:`~pagedlab.paged.BlockAllocator`, and the :class:`~pagedlab.paged.BlockManager` keeps the two in
    step (a parked block is cached-free in the allocator, and the other way round).

    Args:
        block_size: tokens per block.
        hash_fn: ``(parent_hash, tokens) -> int``; :func:`chained_hash` by default (tests pass a weak
            one to force collisions).
        policy: which cached-free block goes first, an :class:`~pagedlab.paged.eviction.EvictionPolicy` of
            this cache alone (default: a new :class:`~pagedlab.paged.eviction.LRU`).

    Attributes:
        policy: the eviction policy.
    """

    BROKEN = -1
    """The prefix id of a block that could not be cached (its key is taken by another prefix): every block
    after it misses and is not cached either."""

    __slots__ = ("block_size", "hash_fn", "_prefix_of_key", "_hit_of_key", "_prefixes", "_prefix_of_block", "policy",
                 "_next_id")

    def __init__(self, block_size: int, hash_fn: HashFn = chained_hash, policy: EvictionPolicy | None = None) -> None:
        self.block_size = block_size
        self.hash_fn = hash_fn
        self._prefix_of_key: dict[int, _Prefix] = {}       # key -> its prefix (one prefix per key)
        # key -> (parent id, tokens, first block, prefix id) of each prefix some block holds: what match reads,
        # one dict lookup and one tuple per block (kept in step by register and evict)
        self._hit_of_key: dict[int, tuple[int | None, tuple[int, ...], int, int]] = {}
        self._prefixes: dict[int, _Prefix] = {}            # prefix id -> the prefix
        self._prefix_of_block: dict[int, _Prefix] = {}     # block id -> its prefix, for every cached block
        self.policy = LRU() if policy is None else policy  # the cached-free blocks
        self._next_id = 1

    # ---- lookups -------------------------------------------------------------------------------------

    def match(self, tokens: tuple[int, ...]) -> tuple[list[int], list[int], list[int]]:
        """Key every full block of ``tokens`` and find the longest cached prefix.

        A block hits when its key names a cached prefix whose stored tokens and predecessor's prefix id are
        the ones found so far, and some block holds it; a collision is a miss. Of several blocks holding
        one prefix, the one cached first is the hit (as in vLLM v1), referenced or cached-free.

        Returns:
            ``(keys, hits, prefix_ids)``: the key of each full block; the cached blocks of the longest
            prefix that is cached from the first block on (a miss ends it, since a block's K/V are only
            reusable after its predecessors'); their prefix ids.
        """
        bs, hash_fn, hit_of_key = self.block_size, self.hash_fn, self._hit_of_key
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
                hit = hit_of_key.get(key)
                if hit is not None:
                    parent, stored_tokens, block_id, stored_id = hit
                    if parent == prefix_id and stored_tokens == block_tokens:
                        hits.append(block_id)
                        prefix_ids.append(stored_id)
                        prefix_id = stored_id
                        continue
                matching = False
        return keys, hits, prefix_ids

    def is_registered(self, block_id: int) -> bool:
        """True when ``block_id`` holds a cached full block (referenced or cached-free)."""
        return block_id in self._prefix_of_block

    def is_parked(self, block_id: int) -> bool:
        """True when ``block_id`` is cached-free (parked with the eviction policy)."""
        return block_id in self.policy

    def key_of(self, block_id: int) -> int | None:
        """The chained hash ``block_id`` is registered under, or None."""
        prefix = self._prefix_of_block.get(block_id)
        return None if prefix is None else prefix.key

    def prefix_id_of(self, block_id: int) -> int | None:
        """The prefix id of cached ``block_id``, or None."""
        prefix = self._prefix_of_block.get(block_id)
        return None if prefix is None else prefix.id

    def tokens_of(self, block_id: int) -> tuple[int, ...]:
        """The tokens of cached ``block_id`` (its prefix's last block's, stored once for every copy).

        Raises:
            KeyError: ``block_id`` is not cached.
        """
        prefix = self._prefix_of_block.get(block_id)
        if prefix is None:
            raise KeyError(f"block {block_id} is not in the prefix cache")
        return prefix.tokens

    def blocks_of(self, prefix_id: int) -> list[int]:
        """The blocks holding the prefix ``prefix_id`` (oldest registration first; empty if none or unknown)."""
        prefix = self._prefixes.get(prefix_id)
        return [] if prefix is None else list(prefix.blocks)

    @property
    def num_prefixes(self) -> int:
        """Distinct prefixes the cache remembers (held by a block, or the predecessor of one that is)."""
        return len(self._prefixes)

    @property
    def num_parked(self) -> int:
        """How many cached-free blocks are parked."""
        return len(self.policy)

    def count_parked(self, block_ids: list[int]) -> int:
        """How many of ``block_ids`` are cached-free."""
        return sum(map(self.policy.__contains__, block_ids))

    def parked(self) -> list[int]:
        """The cached-free blocks in eviction order: the next to be evicted first (eviction rank 1)."""
        return self.policy.order()

    def __len__(self) -> int:
        """Cached blocks (every copy of a prefix counts)."""
        return len(self._prefix_of_block)

    # ---- updates -------------------------------------------------------------------------------------

    def register(self, block_id: int, key: int, parent_id: int | None, tokens: tuple[int, ...]) -> int:
        """Cache a block that just became full (its K/V are, or are about to be, computed), under ``key``.

        Args:
            block_id: a block that is not cached yet.
            key: the block's chained hash.
            parent_id: the prefix id of the block before it (None for a sequence's first block).
            tokens: the block's tokens.

        Returns:
            The prefix id to chain the next block on: the prefix's id when ``key`` names the same prefix
            (``parent_id`` and ``tokens`` equal; the block becomes one more copy of it) or names nothing (a
            new prefix, with a new id); :attr:`BROKEN`, caching nothing, when ``key`` names another prefix
            (a collision) or ``parent_id`` is BROKEN.

        Raises:
            ValueError: ``block_id`` is already cached, or ``parent_id`` is not a prefix id the cache knows.
        """
        if parent_id == self.BROKEN:
            return self.BROKEN
        if block_id in self._prefix_of_block:
            raise ValueError(f"block {block_id} is already cached (prefix id {self.prefix_id_of(block_id)})")
        prefix = self._prefix_of_key.get(key)
        if prefix is not None:
            if prefix.parent != parent_id or prefix.tokens != tokens:
                return self.BROKEN
        else:
            if parent_id is not None:
                parent = self._prefixes.get(parent_id)
                if parent is None:
                    raise ValueError(f"parent_id {parent_id} is not a cached prefix (nor None, nor BROKEN)")
                parent.children += 1
            prefix = _Prefix(self._next_id, key, parent_id, tokens)
            self._next_id += 1
            self._prefixes[prefix.id] = self._prefix_of_key[key] = prefix
        if not prefix.blocks:
            self._hit_of_key[key] = (parent_id, tokens, block_id, prefix.id)
        prefix.blocks[block_id] = None
        self._prefix_of_block[block_id] = prefix
        return prefix.id

    def park(self, block_id: int) -> None:
        """A registered block lost its last reference: it becomes cached-free, parked with the eviction policy."""
        if block_id not in self._prefix_of_block:
            raise ValueError(f"block {block_id} is not in the prefix cache")
        self.policy.park(block_id)

    def unpark(self, block_id: int) -> None:
        """A cache hit on a cached-free block: it is referenced again, so it is no longer evictable."""
        self.policy.unpark(block_id)

    def unpark_many(self, block_ids: list[int]) -> None:
        """:meth:`unpark` each of ``block_ids``."""
        unpark = self.policy.unpark
        for block_id in block_ids:
            unpark(block_id)

    def evict(self) -> int:
        """Forget the cached-free block the eviction policy gives up and return its id (to go back on the free list).

        The block's prefix is forgotten too once no block holds it and no longer cached prefix follows it
        (and so on up the chain).

        Raises:
            LookupError: no block is cached-free.
        """
        block_id = self.policy.pop_victim()
        prefix = self._prefix_of_block.pop(block_id)
        del prefix.blocks[block_id]
        if self._hit_of_key[prefix.key][2] == block_id:
            if prefix.blocks:
                self._hit_of_key[prefix.key] = (prefix.parent, prefix.tokens, next(iter(prefix.blocks)), prefix.id)
            else:
                del self._hit_of_key[prefix.key]
        while not prefix.blocks and not prefix.children:
            del self._prefixes[prefix.id]
            del self._prefix_of_key[prefix.key]
            if prefix.parent is None:
                break
            prefix = self._prefixes[prefix.parent]
            prefix.children -= 1
        return block_id
