"""The paged KV cache: blocks, block tables, reference counts, copy-on-write, prefix caching, swapping.

The bookkeeping (everything but :class:`KVCache`) is plain Python and imports no torch, so it can be
read, tested and timed on its own. :class:`KVCache`, the tensors the bookkeeping points into, is
imported on first use (``from pagedlab.paged import KVCache`` works; ``import pagedlab.paged`` alone
stays torch-free).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pagedlab.paged.allocator import BlockAllocator, OutOfBlocks
from pagedlab.paged.block_table import BlockTable
from pagedlab.paged.events import BlockEvent
from pagedlab.paged.eviction import LRU, EvictionPolicy, LeastOftenHit
from pagedlab.paged.manager import AppendResult, BlockManager
from pagedlab.paged.prefix_cache import PrefixCache, chained_hash
from pagedlab.paged.usage import BlockState, Usage, block_states

if TYPE_CHECKING:
    from pagedlab.paged.kv_cache import KVCache

__all__ = ["AppendResult", "BlockAllocator", "BlockEvent", "BlockManager", "BlockState", "BlockTable", "EvictionPolicy",
           "KVCache", "LRU", "LeastOftenHit", "OutOfBlocks", "PrefixCache", "Usage", "block_states", "chained_hash"]


def __getattr__(name: str) -> Any:
    # PEP 562: only touching KVCache imports torch.
    if name == "KVCache":
        from pagedlab.paged.kv_cache import KVCache

        return KVCache
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
