"""How a block manager's pools are used: the totals (:class:`Usage`) and each block's state (:class:`BlockState`).

Both read the manager through its public API only (``seq_ids``, ``table``, the allocators, the prefix cache), so
they are reports over the manager, not part of its bookkeeping: this module imports the manager, and nothing in
:mod:`pagedlab.paged` imports this one but the package's list of public names. :func:`block_states` is the one place a block is
classified as used, shared, cached-free or free: the block-table widget and the engine widget both draw it.
O(blocks + tokens) each: for reports and pictures, not for hot loops.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pagedlab.paged.block_table import Device

if TYPE_CHECKING:
    from pagedlab.paged.manager import BlockManager

BlockStateName = Literal["used", "shared", "cached", "free"]


@dataclass(frozen=True)
class Usage:
    """A snapshot of how the GPU pool is used (``Usage.of(manager)``).

    Attributes:
        num_blocks: size of the GPU pool.
        blocks_used: blocks with a reference count > 0.
        blocks_free: blocks on the free list.
        blocks_cached: cached-free blocks (unreferenced, holding a reusable prefix; reclaimable).
        blocks_shared: blocks referenced by more than one sequence.
        logical_blocks: blocks over all GPU block tables, counting a shared block once per table.
        tokens_stored: tokens over all GPU sequences (a shared token counts once per sequence).
        slots_filled: physical slots holding a token (a shared slot counts once).
        unused_slots: reserved but unused slots, ``blocks_used * block_size - slots_filled`` (internal
            fragmentation: only ever in the last, partly filled block of a sequence).
        fragmentation: ``unused_slots / (blocks_used * block_size)``, 0.0 for an empty pool.
        blocks_saved_by_sharing: ``logical_blocks - blocks_used``.
        bytes_saved_by_sharing: ``blocks_saved_by_sharing * bytes_per_block`` when :meth:`of` was given
            ``bytes_per_block``, else None.
        num_cpu_blocks, cpu_blocks_used: the CPU pool (0 and 0 without one).
        num_swapped: sequences currently swapped out.
    """

    num_blocks: int
    blocks_used: int
    blocks_free: int
    blocks_cached: int
    blocks_shared: int
    logical_blocks: int
    tokens_stored: int
    slots_filled: int
    unused_slots: int
    fragmentation: float
    blocks_saved_by_sharing: int
    bytes_saved_by_sharing: int | None
    num_cpu_blocks: int
    cpu_blocks_used: int
    num_swapped: int

    @classmethod
    def of(cls, manager: BlockManager, bytes_per_block: int | None = None) -> Usage:
        """How the GPU pool of ``manager`` is used right now.

        Args:
            bytes_per_block: K and V bytes of one block over all layers (``KVCache.bytes_per_block``), to turn
                blocks saved by sharing into bytes; None leaves ``bytes_saved_by_sharing`` None.
        """
        alloc, bs = manager.allocator, manager.block_size
        fill: dict[int, int] = {}
        logical = tokens = swapped = 0
        for seq_id in manager.seq_ids:
            table = manager.table(seq_id)
            if table.device == "cpu":
                swapped += 1
                continue
            logical += len(table.block_ids)
            tokens += table.num_tokens
            for i, b in enumerate(table.block_ids):
                fill[b] = min(bs, table.num_tokens - i * bs)
        used = len(fill)
        filled = sum(fill.values())
        shared = sum(1 for b in fill if alloc.refcount(b) > 1)
        unused = used * bs - filled
        saved = logical - used
        cpu = manager.cpu_allocator
        return cls(
            num_blocks=alloc.num_blocks, blocks_used=used, blocks_free=alloc.num_free, blocks_cached=alloc.num_cached,
            blocks_shared=shared, logical_blocks=logical, tokens_stored=tokens, slots_filled=filled,
            unused_slots=unused, fragmentation=unused / (used * bs) if used else 0.0,
            blocks_saved_by_sharing=saved,
            bytes_saved_by_sharing=None if bytes_per_block is None else saved * bytes_per_block,
            num_cpu_blocks=cpu.num_blocks if cpu else 0,
            cpu_blocks_used=cpu.num_blocks - cpu.num_free if cpu else 0,
            num_swapped=swapped,
        )


@dataclass(frozen=True, slots=True)
class BlockState:
    """One physical block, now.

    Attributes:
        state: ``"used"`` (one table holds it), ``"shared"`` (several), ``"cached"`` (cached-free) or ``"free"``.
        owners: the sequence ids whose tables hold it, in the manager's order.
        refcount: its reference count.
        filled: slots holding tokens (the fullest holder's, for a shared block).
        eviction_rank: for a cached-free block, its place in the eviction policy's order (1 = evicted next);
            else None.
    """

    state: BlockStateName
    owners: tuple[Hashable, ...]
    refcount: int
    filled: int
    eviction_rank: int | None


def block_states(manager: BlockManager, pool: Device = "gpu") -> list[BlockState]:
    """Each block of ``pool`` (``"gpu"`` or ``"cpu"``), by block id; ``[]`` for a CPU pool the manager lacks."""
    alloc = manager.allocator if pool == "gpu" else manager.cpu_allocator
    if alloc is None:
        return []
    bs = manager.block_size
    owners: dict[int, list[Hashable]] = {}
    filled: dict[int, int] = {}
    for seq_id in manager.seq_ids:
        table = manager.table(seq_id)
        if table.device != pool:
            continue
        for i, b in enumerate(table.block_ids):
            owners.setdefault(b, []).append(seq_id)
            filled[b] = max(filled.get(b, 0), min(bs, table.num_tokens - i * bs))
    cache = manager.prefix_cache
    ranks = {b: rank for rank, b in enumerate(cache.parked(), 1)} if pool == "gpu" and cache is not None else {}
    states = []
    for b in range(alloc.num_blocks):
        ref = alloc.refcount(b)
        state = "shared" if ref > 1 else "used" if ref == 1 else "cached" if alloc.is_cached(b) else "free"
        states.append(BlockState(state, tuple(owners.get(b, ())), ref, filled.get(b, 0),
                                 ranks.get(b) if state == "cached" else None))
    return states
