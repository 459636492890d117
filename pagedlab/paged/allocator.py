"""Physical KV blocks: who holds each one, and which are free. Plain Python, O(1) per block.

A block is in exactly one of three states:

* **referenced**: ``refcount(b) > 0``, held by that many block tables (sequences);
* **free**: on the free list, with nothing worth keeping in it;
* **cached-free**: ``refcount(b) == 0`` but its contents are still a valid cached prefix, so it is kept
  off the free list until the prefix cache either reuses it (:meth:`BlockAllocator.reuse`) or gives it
  up (:meth:`BlockAllocator.evict`). Which cached-free block to give up first is the prefix cache's
  decision (its eviction policy, :mod:`pagedlab.paged.eviction`), not the allocator's.

The free list is a Python list used as a stack (``pop()`` and ``append()`` at the end are O(1)); the
reference counts are one flat list of ints indexed by block id. Nothing is scanned, sorted or created per
operation: that is the correction to a naive allocator often published (``pagedlab.paged.baseline``), which
pops from the *front* of a list (O(n) per allocation) and re-sorts the whole free list on every free (O(n log n)
per free).
"""

from __future__ import annotations

# check_count is imported here for the allocator, and stays importable from here for the engine's modules
# until they import it from pagedlab.validate.
from pagedlab.validate import check_count


class OutOfBlocks(MemoryError):
    """Not enough free blocks for an operation. The operation changed nothing.

    Attributes:
        requested: how many blocks the operation needed.
        free: how many were available.
        total: the size of the pool.
    """

    def __init__(self, requested: int, free: int, total: int, what: str = "") -> None:
        self.requested, self.free, self.total = requested, free, total
        for_what = f" for {what}" if what else ""
        super().__init__(f"need {requested} free block{'s' if requested != 1 else ''}{for_what}, only {free} of "
                         f"{total} are free; free a finished sequence or preempt one")


class BlockAllocator:
    """A pool of ``num_blocks`` physical blocks with reference counts and an O(1) free list.

    Blocks are handed out lowest id first from a fresh pool (so pictures are easy to read), and a freed
    block is the next one handed out (last in, first out).

    Args:
        num_blocks: size of the pool (a positive int).

    Raises:
        TypeError / ValueError: ``num_blocks`` is not a positive int.
    """

    __slots__ = ("_num_blocks", "_free", "_ref_count", "_cached", "_num_cached")

    def __init__(self, num_blocks: int) -> None:
        check_count("num_blocks", num_blocks, 1)
        self._num_blocks = num_blocks
        # Reversed, so that pop() from the end hands out block 0 first.
        self._free: list[int] = list(range(num_blocks - 1, -1, -1))
        self._ref_count: list[int] = [0] * num_blocks
        # 1 where a block is cached-free; a bytearray is one byte per block and O(1) to test.
        self._cached = bytearray(num_blocks)
        self._num_cached = 0

    # ---- queries -------------------------------------------------------------------------------------

    @property
    def num_blocks(self) -> int:
        """The size of the pool."""
        return self._num_blocks

    @property
    def num_free(self) -> int:
        """Blocks on the free list (cached-free blocks are not counted: see :attr:`num_cached`)."""
        return len(self._free)

    @property
    def num_cached(self) -> int:
        """Cached-free blocks: unreferenced, kept for the prefix cache, reclaimable with :meth:`evict`."""
        return self._num_cached

    def refcount(self, block_id: int) -> int:
        """How many block tables hold ``block_id`` (0 for a free or cached-free block).

        Raises:
            ValueError: ``block_id`` is not an id of this pool.
        """
        self._check_id(block_id)
        return self._ref_count[block_id]

    def is_cached(self, block_id: int) -> bool:
        """True when ``block_id`` is cached-free."""
        self._check_id(block_id)
        return bool(self._cached[block_id])

    def free_blocks(self) -> list[int]:
        """A copy of the free list, next block to be handed out last (for pictures and tests)."""
        return list(self._free)

    # ---- operations ----------------------------------------------------------------------------------

    def allocate(self) -> int:
        """Take one block off the free list; it comes back with a reference count of 1.

        Raises:
            OutOfBlocks: the free list is empty (cached-free blocks must be evicted first).
        """
        if not self._free:
            raise OutOfBlocks(1, 0, self._num_blocks)
        block_id = self._free.pop()
        self._ref_count[block_id] = 1
        return block_id

    def allocate_many(self, n: int) -> list[int]:
        """Take ``n`` blocks at once, all or nothing, each with a reference count of 1.

        Returns:
            The block ids, in the order :meth:`allocate` would have returned them.

        Raises:
            TypeError / ValueError: ``n`` is not an int >= 0.
            OutOfBlocks: fewer than ``n`` blocks are free; nothing was taken.
        """
        check_count("n", n, 0)
        free = self._free
        if n > len(free):
            raise OutOfBlocks(n, len(free), self._num_blocks)
        if n == 0:
            return []
        blocks = free[-n:]
        del free[-n:]
        blocks.reverse()
        ref_count = self._ref_count
        for block_id in blocks:
            ref_count[block_id] = 1
        return blocks

    def incref(self, block_id: int) -> None:
        """Add a reference to a block that is already referenced (a fork shares it).

        Raises:
            ValueError: unknown id, or a block with no references (sharing a free block is a bug: its
                contents belong to nobody; a cache hit on a cached-free block uses :meth:`reuse`).
        """
        self._check_id(block_id)
        if self._ref_count[block_id] == 0:
            state = "cached-free (a cache hit uses reuse)" if self._cached[block_id] else "free"
            raise ValueError(f"cannot add a reference to block {block_id}: it is {state}")
        self._ref_count[block_id] += 1

    def free(self, block_id: int, cache: bool = False) -> int:
        """Drop one reference to ``block_id``; at zero the block leaves its last owner.

        Args:
            block_id: a referenced block.
            cache: what happens at zero: False puts the block back on the free list; True keeps it as a
                cached-free block (its contents are a reusable prefix).

        Returns:
            The block's reference count afterwards (0 when it was the last reference).

        Raises:
            ValueError: unknown id, or the block is already free (a double free).
        """
        self._check_id(block_id)
        count = self._ref_count[block_id]
        if count == 0:
            raise ValueError(f"double free: block {block_id} is already free")
        count -= 1
        self._ref_count[block_id] = count
        if count == 0:
            if cache:
                self._cached[block_id] = 1
                self._num_cached += 1
            else:
                self._free.append(block_id)
        return count

    def reuse(self, block_id: int) -> bool:
        """A prefix-cache hit: add a reference to a block that is referenced or cached-free.

        Returns:
            True when the block was cached-free (it is referenced again, count 1, and the prefix cache must
            stop treating it as evictable); False when it was already referenced (count + 1).

        Raises:
            ValueError: unknown id, or a block on the free list (its contents belong to nobody).
        """
        self._check_id(block_id)
        if self._cached[block_id]:
            self._cached[block_id] = 0
            self._num_cached -= 1
            self._ref_count[block_id] = 1
            return True
        if self._ref_count[block_id] == 0:
            raise ValueError(f"cannot reuse block {block_id}: it is free, its contents belong to nobody")
        self._ref_count[block_id] += 1
        return False

    def reuse_many(self, block_ids: list[int]) -> list[int]:
        """:meth:`reuse` of each of ``block_ids`` (distinct), all or nothing.

        Returns:
            The blocks that were cached-free (now referenced once), in order.

        Raises:
            ValueError / TypeError: as :meth:`reuse`, for the first bad id; nothing changed.
        """
        cached, ref_count = self._cached, self._ref_count
        for block_id in block_ids:
            self._check_id(block_id)
            if not cached[block_id] and ref_count[block_id] == 0:
                raise ValueError(f"cannot reuse block {block_id}: it is free, its contents belong to nobody")
        revived = [b for b in block_ids if cached[b]]
        for block_id in block_ids:
            ref_count[block_id] += 1       # a cached-free block has count 0
        for block_id in revived:
            cached[block_id] = 0
        self._num_cached -= len(revived)
        return revived

    def evict(self, block_id: int) -> None:
        """The prefix cache gives up a cached-free block: it goes back on the free list.

        Raises:
            ValueError: unknown id, or the block is not cached-free.
        """
        self._check_cached(block_id, "evict")
        self._cached[block_id] = 0
        self._num_cached -= 1
        self._free.append(block_id)

    # ---- validation ----------------------------------------------------------------------------------

    def _check_id(self, block_id: int) -> None:
        # One cheap test on the hot path; the detailed message is built only when it fails.
        if type(block_id) is not int or not 0 <= block_id < self._num_blocks:
            if not isinstance(block_id, int) or isinstance(block_id, bool):
                raise TypeError(f"block_id must be an int, got {type(block_id).__name__}")
            raise ValueError(f"block_id {block_id} is not in this pool (0 .. {self._num_blocks - 1})")

    def _check_cached(self, block_id: int, what: str) -> None:
        self._check_id(block_id)
        if not self._cached[block_id]:
            state = f"referenced ({self._ref_count[block_id]})" if self._ref_count[block_id] else "free"
            raise ValueError(f"cannot {what} block {block_id}: it is {state}, not cached-free")

    def __repr__(self) -> str:
        return (f"BlockAllocator(num_blocks={self._num_blocks}, free={len(self._free)}, "
                f"cached={self._num_cached}, used={self._num_blocks - len(self._free) - self._num_cached})")
