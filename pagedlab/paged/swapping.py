"""Preemption by swapping (notebook 8): the block manager's operations that move sequences between its pools.

:class:`Swapping` is the notebook-8 half of :class:`~pagedlab.paged.BlockManager`, which inherits it, so the
manager's file holds block tables (notebook 6) and sharing (notebook 7) and this one holds swapping. It keeps no
state of its own: it works on the manager's records and helpers, named under "Relies on" below, and every
operation here follows the manager's contract (atomic: checks first, raises before changing anything; events
after the operation is complete).

Swapping works on one sequence or on a *group* (a list of ids, e.g. the samples of one request, as vLLM v0
swaps a whole sequence group): a block shared inside the group is copied once, and the group comes back sharing
exactly as before. Preempt a fork family as one group, or its shared blocks are neither freed on the GPU nor
kept shared on the CPU.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from typing import TYPE_CHECKING

from pagedlab.paged.allocator import BlockAllocator, OutOfBlocks
from pagedlab.paged.block_table import Device

if TYPE_CHECKING:
    from pagedlab.paged.manager import SeqRecord
    from pagedlab.paged.prefix_cache import PrefixCache


class Swapping:
    """Swap sequences and groups out to the CPU pool and back, and say what preempting them frees.

    Relies on (defined by :class:`~pagedlab.paged.BlockManager`): ``allocator``, ``cpu_allocator``,
    ``prefix_cache``, ``watermark_blocks``, ``num_blocks``, ``num_free_blocks``, its sequence records
    ``_seqs``/``_seq``/``_gpu_seq``, and the helpers ``_take`` (allocate, evicting cached-free blocks),
    ``_release_gpu`` (drop references), ``_reregister`` (prefix ids after a swap-in) and ``_emit`` (events).
    """

    allocator: BlockAllocator
    cpu_allocator: BlockAllocator | None
    prefix_cache: PrefixCache | None
    watermark_blocks: int

    def is_swapped(self, seq_id: Hashable) -> bool:
        """True while ``seq_id`` is swapped out to the CPU pool. Raises KeyError for an unknown id."""
        return self._seq(seq_id).table.device == "cpu"

    def can_swap_out(self, seq_ids: Hashable | list[Hashable]) -> bool:
        """Whether ``swap_out(seq_ids)`` would succeed: the CPU pool has a block for each distinct block of
        the sequence or group (False without a CPU pool).

        Raises:
            KeyError / ValueError / TypeError: as ``swap_out`` (unknown, swapped-out or repeated ids).
        """
        _, seqs = self._group(seq_ids, "swap out")
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
        _, seqs = self._group(seq_ids, "swap in", "cpu")
        _, _, new, revived = self._plan_swap_in(seqs)
        return len(new) + revived + len(seqs) + self.watermark_blocks <= self.num_free_blocks

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
        _, seqs = self._group(seq_ids, "count the blocks of", None)
        holders = Counter(b for seq in seqs if seq.table.device == "gpu" for b in seq.table.block_ids)
        refcount = self.allocator.refcount
        return sum(1 for b, n in holders.items() if refcount(b) == n)

    def swap_out(self, seq_ids: Hashable | list[Hashable]) -> list[tuple[int, int]]:
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
            ``(gpu_block, cpu_block)`` pairs, one per distinct block, in the order the group's tables list
            them (one sequence: its logical order): copy each before the next allocation, since the GPU
            blocks are released now.

        Raises:
            KeyError: an unknown id. ValueError: no CPU pool, a swapped-out, repeated id, or an empty list.
            TypeError: an unhashable id. OutOfBlocks: the CPU pool has too few free blocks.
            Nothing changes when it raises.
        """
        ids, seqs = self._group(seq_ids, "swap out")
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
        events: list[tuple] = []
        for seq_id, seq in zip(ids, seqs):
            table = seq.table
            gpu_blocks = table.block_ids
            self._release_gpu(gpu_blocks)
            seq.swapped_from = gpu_blocks
            table.block_ids, table.device = [mapping[b] for b in gpu_blocks], "cpu"
            events.append(("swap_out", seq_id, tuple(gpu_blocks), tuple(zip(gpu_blocks, table.block_ids))))
        self._emit(events)
        return list(mapping.items())

    def swap_in(self, seq_ids: Hashable | list[Hashable]) -> list[tuple[int, int]]:
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
            ``(cpu_block, gpu_block)`` pairs, one per distinct block that must be copied, in the order the
            group's tables list them: copy each before the next ``swap_out``, since the CPU blocks are
            released now.

        Raises:
            KeyError: an unknown id. ValueError: an id that is not swapped out, a repeated id, an empty list.
            TypeError: an unhashable id. OutOfBlocks: not enough free (or evictable) GPU blocks.
            Nothing changes when it raises.
        """
        ids, seqs = self._group(seq_ids, "swap in", "cpu")
        unique, reused, new, revived = self._plan_swap_in(seqs)
        available = self.num_free_blocks - revived
        if len(new) > available:
            raise OutOfBlocks(len(new), available, self.num_blocks, f"swapping in {self._describe(ids)}")

        alloc, cache, cpu = self.allocator, self.prefix_cache, self.cpu_allocator
        events: list[tuple] = []
        if reused:                                           # first, so that _take cannot evict them
            cache.unpark_many(alloc.reuse_many(list(dict.fromkeys(reused.values()))))
        mapping = dict(reused)
        mapping.update(zip(new, self._take(len(new), ids[0], events)))
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
                events.append(("cache_hit", seq_id, hits))
            table.block_ids, table.device = gpu_blocks, "gpu"
            seq.swapped_from = []
            if cache is not None:
                self._reregister(seq)
            events.append(("swap_in", seq_id, tuple(gpu_blocks),
                           tuple((c, g) for c, g in zip(cpu_blocks, gpu_blocks) if c not in reused)))
        self._emit(events)
        return [(c, mapping[c]) for c in unique if c not in reused]

    def _group(self, seq_ids: Hashable | list[Hashable], what: str,
               device: Device | None = "gpu") -> tuple[list[Hashable], list[SeqRecord]]:
        """The ids and records of one id or a list of distinct ids, all in ``device``'s pool (None: either)."""
        ids = seq_ids if isinstance(seq_ids, list) else [seq_ids]
        if not ids:
            raise ValueError(f"seq_ids is an empty list: name at least one sequence to {what}")
        if len(set(ids)) != len(ids):
            twice = [s for s, n in Counter(ids).items() if n > 1]
            raise ValueError(f"seq_ids must be distinct, {twice} appear more than once")
        if device == "gpu":
            seqs = [self._gpu_seq(s, what) for s in ids]
        else:
            seqs = [self._seq(s) for s in ids]
            if device == "cpu":
                for s, seq in zip(ids, seqs):
                    if seq.table.device != "cpu":
                        raise ValueError(f"sequence {s!r} is not swapped out")
        return ids, seqs

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
        cache = self.prefix_cache
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
        revived = cache.count_parked(list(dict.fromkeys(reused.values()))) if reused else 0
        return unique, reused, new, revived

    @staticmethod
    def _describe(ids: list[Hashable]) -> str:
        return f"sequence {ids[0]!r}" if len(ids) == 1 else f"the group {ids}"
