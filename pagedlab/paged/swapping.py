"""Preemption by swapping (notebook 8): moving sequences between the block manager's GPU and CPU pools.

:class:`Swapper` is a collaborator of :class:`~pagedlab.paged.BlockManager`, which makes one and hands its
``swap_out``/``swap_in``/``can_swap_*``/``num_freeable_blocks`` calls to it. It keeps no state of its own: it reads
and changes the sequences' records through the :class:`~pagedlab.paged.sequences.SeqStore`, takes and releases GPU
blocks through the :class:`~pagedlab.paged.block_pool.BlockPool`, and uses the CPU pool's allocator. Every operation
follows the manager's contract (atomic: checks first, raises before changing anything); it returns the events of
what it did, and the manager logs them.

Swapping works on one sequence or on a *group* (a list of ids, e.g. the samples of one request, as vLLM v0
swaps a whole sequence group): a block shared inside the group is copied once, and the group comes back sharing
exactly as before. Preempt a fork family as one group, or its shared blocks are neither freed on the GPU nor
kept shared on the CPU.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable

from pagedlab.paged.allocator import BlockAllocator, OutOfBlocks
from pagedlab.paged.block_pool import BlockPool
from pagedlab.paged.events import BlockEvent
from pagedlab.paged.sequences import SeqRecord, SeqStore

Events = list[BlockEvent]
"""The events of one operation, not numbered yet (the manager numbers and logs them)."""


class Swapper:
    """Swap sequences and groups out to the CPU pool and back, and say what preempting them frees.

    Args:
        store: the manager's sequence records. pool: its GPU blocks. cpu_allocator: its CPU pool, or None.
        watermark_blocks: the GPU blocks ``can_swap_in`` keeps free.
    """

    __slots__ = ("store", "pool", "cpu_allocator", "watermark_blocks")

    def __init__(self, store: SeqStore, pool: BlockPool, cpu_allocator: BlockAllocator | None,
                 watermark_blocks: int) -> None:
        self.store = store
        self.pool = pool
        self.cpu_allocator = cpu_allocator
        self.watermark_blocks = watermark_blocks

    def is_swapped(self, seq_id: Hashable) -> bool:
        """True while ``seq_id`` is swapped out to the CPU pool. Raises KeyError for an unknown id."""
        return self.store.get(seq_id).table.device == "cpu"

    def can_swap_out(self, seq_ids: Hashable | list[Hashable]) -> bool:
        """Whether ``swap_out(seq_ids)`` would succeed: the CPU pool has a block for each distinct block of
        the sequence or group (False without a CPU pool).

        Raises:
            KeyError / ValueError / TypeError: as ``swap_out`` (unknown, swapped-out or repeated ids).
        """
        _, seqs = self.store.group(seq_ids, "swap out")
        unique = self._distinct_blocks(seqs)
        return self.cpu_allocator is not None and len(unique) <= self.cpu_allocator.num_free

    def can_swap_in(self, seq_ids: Hashable | list[Hashable]) -> bool:
        """Whether a scheduler should ``swap_in(seq_ids)`` now, with room to keep running (vLLM v0's rule).

        True when the GPU blocks the swap-in takes (a block for each distinct CPU block, less the
        sequences' own GPU copies still in the prefix cache; reviving a cached-free copy counts, since it
        leaves the allocatable blocks), plus one block per sequence for its next append, plus
        ``watermark_blocks``, are at most ``num_free_blocks``. ``swap_in`` itself only needs the first term.

        Raises:
            KeyError: an unknown id. ValueError: an id that is not swapped out, or repeated, or an empty list.
        """
        _, seqs = self.store.group(seq_ids, "swap in", "cpu")
        _, _, new, revived = self._plan_swap_in(seqs)
        return len(new) + revived + len(seqs) + self.watermark_blocks <= self.pool.num_free

    def num_freeable_blocks(self, seq_ids: Hashable | list[Hashable]) -> int:
        """How many blocks preempting ``seq_ids`` (by ``free`` or ``swap_out``) would give back: the contract
        a scheduler relies on to choose its victims.

        A GPU block counts when every reference to it comes from the given sequences (``refcount`` equals
        the number of their tables that hold it); a block also held by a sequence outside the set stays
        where it is and does not count. So ``num_free_blocks`` after freeing or swapping out all of
        ``seq_ids`` is exactly ``num_free_blocks`` before plus this number. A freed block that holds a
        cached prefix becomes cached-free rather than free: it counts, because it is allocatable (evicted
        on demand), although its cached K/V are then lost. Blocks that are cached-free already are held by
        no sequence and are in ``num_free_blocks`` already: they never count. Swapped-out sequences hold no
        GPU blocks and add nothing.

        Args:
            seq_ids: one sequence id, or a list of distinct ids (say, a whole fork family: preempted one by
                one, its shared blocks free nothing).

        Raises:
            KeyError: an unknown id. ValueError: a repeated id or an empty list.
        """
        _, seqs = self.store.group(seq_ids, "count the blocks of", None)
        holders = Counter(b for seq in seqs if seq.table.device == "gpu" for b in seq.table.block_ids)
        refcount = self.pool.allocator.refcount
        return sum(1 for b, n in holders.items() if refcount(b) == n)

    def swap_out(self, seq_ids: Hashable | list[Hashable]) -> tuple[list[tuple[int, int]], Events]:
        """Move a sequence, or a group of sequences, to the CPU pool (preemption by swapping).

        Args:
            seq_ids: one sequence id, or a list of distinct ids swapped together (a group: say, the samples
                of one request). A list always means a group; a tuple is one (hashable) id.

        Each distinct GPU block of the group gets one CPU block, held by as many of the group's tables as
        held the GPU block, so the CPU tables share exactly as the GPU tables did. The group drops its
        references to the GPU blocks: a block held only by the group is freed (or becomes cached-free if
        it holds a cached prefix); a block also held by a sequence outside the group stays on the GPU for
        it, and the group keeps its own CPU copy. ``num_freeable_blocks(seq_ids)`` says how many blocks this
        frees.

        Returns:
            ``(pairs, events)``: ``(gpu_block, cpu_block)`` pairs, one per distinct block, in the order the
            group's tables list them (one sequence: its logical order): copy each before the next allocation,
            since the GPU blocks are released now; the events, for the manager to log.

        Raises:
            KeyError: an unknown id. ValueError: no CPU pool, a swapped-out, repeated id, or an empty list.
            TypeError: an unhashable id. OutOfBlocks: the CPU pool has too few free blocks.
            Nothing changes when it raises.
        """
        ids, seqs = self.store.group(seq_ids, "swap out")
        cpu = self.cpu_allocator
        if cpu is None:
            raise ValueError("this manager has no CPU pool: create it with num_cpu_blocks > 0 to swap")
        unique = self._distinct_blocks(seqs)
        if len(unique) > cpu.num_free:
            raise OutOfBlocks(len(unique), cpu.num_free, cpu.num_blocks,
                              f"swapping out {self._describe(ids)} (CPU pool)")
        mapping = dict(zip(unique, cpu.allocate_many(len(unique))))
        for gpu_block, holders in unique.items():
            for _ in range(holders - 1):
                cpu.incref(mapping[gpu_block])
        events: Events = []
        for seq_id, seq in zip(ids, seqs):
            table = seq.table
            gpu_blocks = table.block_ids
            if self.pool.prefix_cache is not None:
                self.pool.recall_tokens(seq)
            self.pool.release(gpu_blocks)
            seq.swapped_from = gpu_blocks
            table.block_ids, table.device = [mapping[b] for b in gpu_blocks], "cpu"
            events.append(BlockEvent("swap_out", seq_id, blocks=tuple(gpu_blocks),
                                     pairs=tuple(zip(gpu_blocks, table.block_ids))))
        return list(mapping.items()), events

    def swap_in(self, seq_ids: Hashable | list[Hashable]) -> tuple[list[tuple[int, int]], Events]:
        """Bring a swapped-out sequence, or group, back into the GPU pool.

        Args:
            seq_ids: one id, or a list of distinct swapped-out ids. Swap a group back in together to keep its
                sharing: each distinct CPU block gets one GPU block, held by as many tables as held the CPU
                block (a CPU block shared with a sequence left on the CPU stays there for it).

        With prefix caching, a block whose GPU copy (the block it left at ``swap_out``) still holds the same
        cached prefix is not copied back: the sequence takes that block again (a ``cache_hit`` event),
        sharing it with whoever else holds it. Those blocks are reserved before any eviction, so making room
        for the others never evicts them. Every other block gets a new GPU block and a copy.

        Returns:
            ``(pairs, events)``: ``(cpu_block, gpu_block)`` pairs, one per distinct block that must be copied,
            in the order the group's tables list them: copy each before the next ``swap_out``, since the CPU
            blocks are released now; the events, for the manager to log.

        Raises:
            KeyError: an unknown id. ValueError: an id that is not swapped out, a repeated id, an empty list.
            TypeError: an unhashable id. OutOfBlocks: not enough free (or evictable) GPU blocks.
            Nothing changes when it raises.
        """
        ids, seqs = self.store.group(seq_ids, "swap in", "cpu")
        unique, reused, new, revived = self._plan_swap_in(seqs)
        pool, cpu = self.pool, self.cpu_allocator
        available = pool.num_free - revived
        if len(new) > available:
            raise OutOfBlocks(len(new), available, pool.allocator.num_blocks, f"swapping in {self._describe(ids)}")

        alloc = pool.allocator
        events: Events = []
        if reused:                                           # first, so that take cannot evict them
            pool.revive(list(dict.fromkeys(reused.values())))
        mapping = dict(reused)
        mapping.update(zip(new, pool.take(len(new), ids[0], events)))
        referenced = set(mapping.values())                   # each holds one reference already
        for seq_id, seq in zip(ids, seqs):
            table = seq.table
            cpu_blocks = table.block_ids
            gpu_blocks = [mapping[c] for c in cpu_blocks]
            for c, g in zip(cpu_blocks, gpu_blocks):
                if g in referenced:
                    referenced.discard(g)
                else:
                    alloc.incref(g)
                cpu.free(c)
            hits = tuple(mapping[c] for c in cpu_blocks if c in reused)
            if hits:
                events.append(BlockEvent("cache_hit", seq_id, blocks=hits))
            table.block_ids, table.device = gpu_blocks, "gpu"
            seq.swapped_from = []
            if pool.prefix_cache is not None:
                pool.reregister(seq)
            events.append(BlockEvent("swap_in", seq_id, blocks=tuple(gpu_blocks),
                                     pairs=tuple((c, g) for c, g in zip(cpu_blocks, gpu_blocks) if c not in reused)))
        return [(c, mapping[c]) for c in unique if c not in reused], events

    @staticmethod
    def _distinct_blocks(seqs: list[SeqRecord]) -> dict[int, int]:
        """The distinct blocks of the sequences' tables, in order of first appearance -> how many tables hold each."""
        return Counter(b for seq in seqs for b in seq.table.block_ids)

    def _plan_swap_in(self, seqs: list[SeqRecord]) -> tuple[dict[int, int], dict[int, int], list[int], int]:
        """What ``swap_in`` of swapped-out ``seqs`` would do, changing nothing.

        Returns:
            ``(unique, reused, new, revived)``: the distinct CPU blocks (-> holders); CPU block -> its GPU copy
            still cached under the same prefix id (prefix caching only); the CPU blocks that need a new GPU
            block; how many of the reused GPU blocks are cached-free (reviving one takes it off
            ``num_free_blocks``).
        """
        unique = self._distinct_blocks(seqs)
        cache = self.pool.prefix_cache
        reused: dict[int, int] = {}
        if cache is not None:
            for seq in seqs:
                # Only full blocks are cached; a prefix id names one content, so a block still registered
                # under it holds the very K/V this sequence swapped out.
                for i, prefix_id in enumerate(seq.prefix_ids):
                    origin = seq.swapped_from[i]
                    if prefix_id != cache.BROKEN and cache.prefix_id_of(origin) == prefix_id:
                        reused[seq.table.block_ids[i]] = origin
        new = [c for c in unique if c not in reused]
        revived = self.pool.count_cached_free(list(dict.fromkeys(reused.values())))
        return unique, reused, new, revived

    @staticmethod
    def _describe(ids: list[Hashable]) -> str:
        return f"sequence {ids[0]!r}" if len(ids) == 1 else f"the group {ids}"
