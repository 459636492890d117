"""A naive allocator often published in tutorials, re-implemented to be measured against (do not use it).

Its logic, in our words: the free list is a Python list of block ids kept sorted; allocating takes the
*lowest* id with ``list.pop(0)``, which shifts every remaining element down (O(n)); freeing drops one
reference and, at zero, appends the id and *sorts the whole free list* so the lowest ids are handed out
first (a scan of n elements even when Python's sort finds the list almost sorted). A block is an object
with its own reference count; sharing adds a reference (O(1)). Freeing a block that is already free is
silently ignored there, which hides double frees; that is kept here too, to time the same work.

Keeping low ids first buys nothing on a GPU: any block is as fast to reach as any other, which is the
point of paging. :class:`~pagedlab.paged.BlockAllocator` does the same job in O(1).
"""

from __future__ import annotations


class _Block:
    __slots__ = ("block_id", "ref_count")

    def __init__(self, block_id: int) -> None:
        self.block_id = block_id
        self.ref_count = 0


class SourceAllocator:
    """The naive allocator: sorted free list, ``pop(0)`` to allocate, sort on every free.

    Same method names as :class:`~pagedlab.paged.BlockAllocator` (``allocate``, ``free``, ``incref``,
    ``refcount``, ``num_free``) so the two can be timed by the same code.
    """

    def __init__(self, num_blocks: int) -> None:
        self.blocks = [_Block(i) for i in range(num_blocks)]
        self.free_ids = list(range(num_blocks))

    @property
    def num_free(self) -> int:
        return len(self.free_ids)

    def allocate(self) -> int:
        if not self.free_ids:
            raise MemoryError("no free blocks")
        block_id = self.free_ids.pop(0)          # O(n): every later id moves one place left
        self.blocks[block_id].ref_count = 1
        return block_id

    def incref(self, block_id: int) -> None:
        self.blocks[block_id].ref_count += 1

    def free(self, block_id: int) -> None:
        block = self.blocks[block_id]
        if block.ref_count > 0:
            block.ref_count -= 1
            if block.ref_count == 0:
                self.free_ids.append(block_id)
                self.free_ids.sort()             # O(n) at best, on every free

    def refcount(self, block_id: int) -> int:
        return self.blocks[block_id].ref_count
