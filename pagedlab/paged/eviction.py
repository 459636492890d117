"""Which cached-free block the prefix cache gives up first: the eviction policy.

A cached-free block holds a reusable prefix that nobody references (see :mod:`pagedlab.paged.allocator`). When
the free list runs short, one of them goes back to it and its K/V are lost. Which one is a policy, and a policy is
one class with four operations, each told by :class:`~pagedlab.paged.PrefixCache`:

* ``park(b)``: ``b`` just became cached-free;
* ``unpark(b)``: a cache hit took ``b`` back (it is referenced again, no longer evictable);
* ``pop_victim()``: the block to evict now, forgotten by the policy;
* ``order()``: every parked block, the next victim first (its *eviction rank* is its place here, from 1).

:class:`LRU` (the default, as in vLLM) evicts the block that became cached-free longest ago. :class:`LeastOftenHit`
evicts the block that cache hits brought back least often, so a prefix many requests share (a system prompt)
outlives a burst of one-off prompts that LRU would keep instead. A new policy subclasses :class:`EvictionPolicy`
and is passed as ``BlockManager(..., eviction_policy=MyPolicy())``.

Either way a sequence's blocks are parked last block first (``BlockManager.free``), so among equals the tail of a
cached prefix goes before its head: a cached prefix is given up from its end, never from its middle.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import OrderedDict


class EvictionPolicy(ABC):
    """The order in which cached-free blocks are given up (see the module docstring). One instance per cache."""

    @abstractmethod
    def park(self, block_id: int) -> None:
        """``block_id`` became cached-free (it is not parked already)."""

    @abstractmethod
    def unpark(self, block_id: int) -> None:
        """A cache hit revived parked ``block_id``. Raises KeyError when it is not parked."""

    @abstractmethod
    def pop_victim(self) -> int:
        """The block to evict now; the policy forgets it. Raises LookupError when nothing is parked."""

    @abstractmethod
    def order(self) -> list[int]:
        """Every parked block, the next victim first."""

    @abstractmethod
    def __contains__(self, block_id: object) -> bool:
        """True while ``block_id`` is parked."""

    @abstractmethod
    def __len__(self) -> int:
        """How many blocks are parked."""


class LRU(EvictionPolicy):
    """Least recently used: the block that became cached-free longest ago goes first (O(1) each operation)."""

    __slots__ = ("_parked",)

    def __init__(self) -> None:
        self._parked: OrderedDict[int, None] = OrderedDict()    # oldest first

    def park(self, block_id: int) -> None:
        self._parked[block_id] = None

    def unpark(self, block_id: int) -> None:
        del self._parked[block_id]

    def pop_victim(self) -> int:
        if not self._parked:
            raise LookupError("no cached-free block to evict")
        return self._parked.popitem(last=False)[0]

    def order(self) -> list[int]:
        return list(self._parked)

    def __contains__(self, block_id: object) -> bool:
        return block_id in self._parked

    def __len__(self) -> int:
        return len(self._parked)


class LeastOftenHit(EvictionPolicy):
    """Least often hit: the parked block that cache hits revived the fewest times goes first; among equals, the
    one parked longest ago (LRU). A block's count is forgotten when it is evicted.

    ``pop_victim`` and ``order`` scan the parked blocks (O(parked)): a policy to compare, not the fast default.
    """

    __slots__ = ("_hits", "_parked", "_clock")

    def __init__(self) -> None:
        self._hits: dict[int, int] = {}          # every block parked or revived since it was last evicted
        self._parked: dict[int, int] = {}        # parked block -> when it was parked (a counter)
        self._clock = 0

    def park(self, block_id: int) -> None:
        self._clock += 1
        self._parked[block_id] = self._clock
        self._hits.setdefault(block_id, 0)

    def unpark(self, block_id: int) -> None:
        del self._parked[block_id]
        self._hits[block_id] += 1

    def hits(self, block_id: int) -> int:
        """How many times cache hits revived ``block_id`` since it was last evicted (0 if never)."""
        return self._hits.get(block_id, 0)

    def pop_victim(self) -> int:
        if not self._parked:
            raise LookupError("no cached-free block to evict")
        victim = min(self._parked, key=self._rank)
        del self._parked[victim], self._hits[victim]
        return victim

    def order(self) -> list[int]:
        return sorted(self._parked, key=self._rank)

    def _rank(self, block_id: int) -> tuple[int, int]:
        return self._hits[block_id], self._parked[block_id]

    def __contains__(self, block_id: object) -> bool:
        return block_id in self._parked

    def __len__(self) -> int:
        return len(self._parked)
