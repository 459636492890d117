"""The block manager: every sequence's block table over one GPU pool (and an optional CPU pool).

It decides *where* each token's K/V goes; it never touches tensors. Operations that need data moved
return the moves for the caller (the engine, with a :class:`~pagedlab.paged.KVCache`) to perform:

* ``append`` may return a copy-on-write pair ``(src, dst)``: copy block ``src`` into ``dst`` before
  writing the new token;
* ``swap_out`` / ``swap_in`` return ``(src, dst)`` pairs between the pools: copy them before the next
  operation that allocates, because the source blocks are free from now on.

Swapping works on one sequence or on a *group* of them (see :mod:`pagedlab.paged.swapping`).

The manager is made of parts, each in its own file: the sequences' records (:mod:`pagedlab.paged.sequences`),
the GPU pool with its prefix cache (:mod:`pagedlab.paged.block_pool`, :mod:`pagedlab.paged.prefix_cache`, whose
eviction policy is :mod:`pagedlab.paged.eviction`), the swapping collaborator (:mod:`pagedlab.paged.swapping`)
and the event log (:mod:`pagedlab.paged.events`). How the pools are used is a report over the manager,
:mod:`pagedlab.paged.usage`, which the manager does not import.

Prefix caching and computed K/V. A block becomes findable in the prefix cache only once the K/V of all
its tokens are computed, or are sure to be written before anyone reads them: a cache hit hands its slots to
another sequence as they are, so a block registered while one of its slots was merely *reserved* (and then
freed before the model ran, e.g. when its sequence was preempted in the middle of a step's growth) would give
that sequence garbage. By default ``add`` and ``append`` promise that the caller writes the K/V of every token
so far before anything else happens (the single-threaded use of notebook 7), and register full blocks at once.
A scheduler that may preempt between reserving slots and running the model, or that prefills a prompt in
chunks, passes ``computed=False`` and calls :meth:`BlockManager.mark_computed` with the tokens that will have
K/V: after the model step, or (as the engine's scheduler and vLLM v1 do) once the step's batch is final, when
nothing can be preempted any more and the step's model run writes every token's K/V before its attention
reads any.

Every operation is atomic: it checks everything first and raises (``OutOfBlocks``, ``ValueError``,
``TypeError``) before changing anything, so after an exception the manager is exactly as before.

Reference counts (``manager.allocator.refcount(b)``) count block tables, nothing else: a block held
by three forked sequences has count 3; the prefix cache holds no reference (a cached block nobody uses
has count 0 and is *cached-free*, see :mod:`pagedlab.paged.allocator`).

Events. After each successful operation the manager logs its :class:`~pagedlab.paged.events.BlockEvent`
records (``manager.events``, the last 1000) and tells every subscriber, by the rule of
:mod:`pagedlab.paged.events`.

The class is laid out in the course's order: block tables (notebook 6), then sharing and prefix caching
(notebook 7), then preemption by swapping (notebook 8), which it hands to its :class:`~pagedlab.paged.swapping.Swapper`.
"""

from __future__ import annotations

import operator
from array import array
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import NamedTuple

from pagedlab.paged.allocator import BlockAllocator, OutOfBlocks
from pagedlab.paged.block_pool import BlockPool
from pagedlab.paged.block_table import BlockTable
from pagedlab.paged.eviction import EvictionPolicy
from pagedlab.paged.events import BlockEvent, EventLog
from pagedlab.paged.prefix_cache import PrefixCache
from pagedlab.paged.sequences import SeqRecord, SeqStore
from pagedlab.paged.swapping import Swapper
from pagedlab.validate import blocks_for, check_count


class AppendResult(NamedTuple):
    """What ``append`` returns.

    Attributes:
        slot: the pool slot of the new token (write its K/V there).
        copy: None, or ``(src, dst)`` when the last block was shared: copy block ``src`` into ``dst`` first.
    """

    slot: int
    copy: tuple[int, int] | None


def _tokens(token_ids: Iterable[int]) -> list[int]:
    """``token_ids`` as a list of Python ints; any int (numpy's too) that fits in 64 bits, like ``append``'s."""
    try:
        return array("q", token_ids).tolist()      # converts and checks every id in C
    except (TypeError, OverflowError):
        raise TypeError("token_ids must be an iterable of ints (token ids)") from None


class BlockManager:
    """Block tables, reference counts, copy-on-write, prefix caching and swapping for many sequences.

    Args:
        num_blocks: GPU blocks in the pool (> 0).
        block_size: tokens per block (> 0).
        num_cpu_blocks: blocks in the CPU pool that ``swap_out`` uses (0: no swapping).
        enable_prefix_caching: reuse full blocks whose whole prefix matches, across sequences.
        eviction_policy: with prefix caching, which cached-free block is given up first: a new
            :class:`~pagedlab.paged.eviction.EvictionPolicy` (default: least recently used, ``LRU()``).
        watermark: fraction of the GPU pool, in [0, 1), that ``can_add`` and ``can_swap_in`` keep free, so
            that running sequences can grow before one has to be preempted again. vLLM v0's default, 0.01
            (``BlockSpaceManager``'s ``watermark_blocks = int(watermark * num_gpu_blocks)``), which is 0
            blocks for a pool under 100 blocks; the same meaning as ``pagedlab.waste.simulate_serving``'s.
            It is advice for schedulers: ``add`` and ``swap_in`` themselves use every free block.

    Attributes:
        allocator: the GPU pool's :class:`BlockAllocator` (reference counts, free list).
        cpu_allocator: the CPU pool's allocator, or None when ``num_cpu_blocks == 0``.
        prefix_cache: the :class:`PrefixCache`, or None when prefix caching is off.
        pool: the GPU pool and the prefix cache kept in step (:class:`~pagedlab.paged.block_pool.BlockPool`).
        swapper: the :class:`~pagedlab.paged.swapping.Swapper` the swapping operations are handed to.
        watermark_blocks: ``int(watermark * num_blocks)``, the blocks ``can_add``/``can_swap_in`` keep free.
        events: the last 1000 :class:`BlockEvent` records, oldest first.

    Raises:
        TypeError / ValueError: a size that is not a positive int (``num_cpu_blocks``: >= 0), a
            ``watermark`` that is not a number in [0, 1).
    """

    EVENT_LOG = 1000

    def __init__(self, num_blocks: int, block_size: int, num_cpu_blocks: int = 0,
                 enable_prefix_caching: bool = False, watermark: float = 0.01,
                 eviction_policy: EvictionPolicy | None = None) -> None:
        check_count("num_blocks", num_blocks, 1)
        check_count("block_size", block_size, 1)
        check_count("num_cpu_blocks", num_cpu_blocks, 0)
        if not isinstance(watermark, (int, float)) or isinstance(watermark, bool):
            raise TypeError(f"watermark must be a float (a fraction of the pool), got {type(watermark).__name__}")
        if not 0 <= watermark < 1:
            raise ValueError(f"watermark must be a fraction of the pool in [0, 1), got {watermark}")
        self.block_size = block_size
        self.watermark = watermark
        self.watermark_blocks = int(watermark * num_blocks)
        self.allocator = BlockAllocator(num_blocks)
        self.cpu_allocator = BlockAllocator(num_cpu_blocks) if num_cpu_blocks else None
        if eviction_policy is not None and not isinstance(eviction_policy, EvictionPolicy):
            raise TypeError(f"eviction_policy must be an EvictionPolicy, got {type(eviction_policy).__name__}")
        self.prefix_cache = PrefixCache(block_size, policy=eviction_policy) if enable_prefix_caching else None
        self.pool = BlockPool(self.allocator, self.prefix_cache, block_size)
        self._seqs = SeqStore()
        self.swapper = Swapper(self._seqs, self.pool, self.cpu_allocator, self.watermark_blocks)
        self._log: EventLog[BlockEvent] = EventLog(self.EVENT_LOG)

    # ---- notebook 6: block tables (admit, grow, free) ------------------------------------------------

    @property
    def num_blocks(self) -> int:
        """GPU blocks in the pool."""
        return self.allocator.num_blocks

    @property
    def num_free_blocks(self) -> int:
        """GPU blocks an allocation can get: the free list plus cached-free blocks (evicted on demand)."""
        return self.pool.num_free

    @property
    def seq_ids(self) -> list[Hashable]:
        """Every sequence the manager holds (on the GPU or swapped out), in the order they were added."""
        return self._seqs.ids()

    def __contains__(self, seq_id: object) -> bool:
        return seq_id in self._seqs

    def table(self, seq_id: Hashable) -> BlockTable:
        """The (live, read-only) block table of ``seq_id``; ``table.device`` says which pool its ids are in.

        Raises:
            KeyError: unknown ``seq_id``.
        """
        return self._seqs.get(seq_id).table

    def can_add(self, num_tokens: int | list[int]) -> bool:
        """Whether a scheduler should ``add`` a prompt of ``num_tokens`` tokens now, or (a list) one sequence of
        each length, say the samples of a request preempted by recomputation.

        True when their blocks fit and leave ``watermark_blocks`` free (vLLM v0's ``can_allocate``), without
        counting on cache hits. ``add`` itself only needs the blocks, so it can succeed where this says False.
        """
        counts = num_tokens if isinstance(num_tokens, list) else [num_tokens]
        for n in counts:
            check_count("num_tokens", n, 0)
        need = sum(blocks_for(n, self.block_size) for n in counts)
        return need + self.watermark_blocks <= self.num_free_blocks

    def can_append(self, seq_id: Hashable) -> bool:
        """Whether ``append(seq_id, ...)`` would succeed (it needs a block at a block boundary or to copy on write).

        Raises:
            KeyError / ValueError: unknown or swapped-out ``seq_id``.
        """
        return not self._append_needs_block(self._seqs.on_gpu(seq_id, "append to")) or self.num_free_blocks >= 1

    @property
    def events(self) -> deque[BlockEvent]:
        """The last ``EVENT_LOG`` :class:`BlockEvent` records, oldest first."""
        return self._log.events

    def subscribe(self, callback: Callable[[BlockEvent], None]) -> Callable[[], None]:
        """Call ``callback(event)`` after every operation, once per event; returns a function that unsubscribes.

        The rule for a callback that raises is :func:`pagedlab.paged.events.notify`'s.

        Raises:
            TypeError: ``callback`` is not callable.
        """
        return self._log.subscribe(callback)

    def add(self, seq_id: Hashable, token_ids: Iterable[int], computed: bool = True) -> BlockTable:
        """Admit a sequence with its prompt: allocate (or, with prefix caching, reuse) its blocks.

        With prefix caching, the longest cached prefix of whole blocks is reused and
        ``num_cached_tokens(seq_id)`` says how many prompt tokens need no prefill, at most
        ``len(token_ids) - 1``: the last prompt token is always computed, since its logits give the first
        new token (vLLM caps hits the same way, PR #11186, and ``vllm/v1/core/kv_cache_manager.py``'s
        ``max_cache_hit_length = request.num_tokens - 1``). Hits are whole blocks, so when the prompt is a
        multiple of ``block_size`` and every block is cached, the last block is not reused: the sequence
        gets a private block and recomputes all ``block_size`` tokens of it (as vLLM v1 does), so the last
        token is never written into a shared cached block. That block becomes one more cached copy of it.

        Args:
            seq_id: a new id. token_ids: the prompt.
            computed: True (default) if the caller writes the K/V of every prompt token before the next
                operation, so that the full blocks are cached now; False to cache them only when
                :meth:`mark_computed` says their K/V are in (see the module docstring).

        Returns:
            Its block table, ``ceil(len(token_ids) / block_size)`` blocks holding ``len(token_ids)`` tokens.

        Raises:
            ValueError: ``seq_id`` is already in the manager.
            TypeError: ``token_ids`` is not an iterable of ints, or ``seq_id`` is not hashable.
            OutOfBlocks: not enough free (or evictable) blocks; nothing changed.
        """
        self._seqs.check_new(seq_id, "free it first or use another id")
        tokens = _tokens(token_ids)
        bs, alloc, cache = self.block_size, self.allocator, self.prefix_cache
        num_blocks = blocks_for(len(tokens), bs)

        # Plan without touching anything: the keys of the full blocks, and the longest cached prefix.
        if cache is not None:
            keys, hits, prefix_ids = cache.match(tuple(tokens))
            if hits and len(hits) * bs == len(tokens):   # a full hit: keep the last block to compute
                del hits[-1], prefix_ids[-1]
        else:
            keys, hits, prefix_ids = [], [], []
        revived = self.pool.count_cached_free(hits)
        need = num_blocks - len(hits)
        available = self.num_free_blocks - revived
        if need > available:
            raise OutOfBlocks(need, available, alloc.num_blocks, f"the prompt of sequence {seq_id!r}")

        # Commit.
        events: list[BlockEvent] = []
        if hits:
            self.pool.revive(hits)
            events.append(BlockEvent("cache_hit", seq_id, blocks=tuple(hits)))
        new = self.pool.take(need, seq_id, events)
        if new:
            events.append(BlockEvent("allocate", seq_id, blocks=tuple(new)))
        block_ids = hits + new
        table = BlockTable(block_ids, len(tokens), bs)
        # With prefix caching the record keeps the tokens after the hits (their blocks' tokens are in the cache).
        seq = SeqRecord(table, tokens[len(hits) * bs:] if cache is not None else [], len(hits), keys, prefix_ids,
                        len(hits) * bs)
        self._seqs.add(seq_id, seq, "free it first or use another id")
        if cache is not None and computed:
            self.pool.register_upto(seq, len(tokens))
        self._emit(events)
        return table

    def append(self, seq_id: Hashable, token_id: int, computed: bool = True) -> AppendResult:
        """Reserve the slot of one new token of ``seq_id`` (a decode step).

        A new block is allocated when the last one is full (or there is none); when the last block is
        shared (after a fork), the sequence gets a private copy first: copy-on-write.

        Args:
            seq_id: a sequence on the GPU. token_id: the new token.
            computed: True (default) if the caller writes the new token's K/V (and every earlier one's)
                before the next operation, so that a block it fills is cached now; False to wait for
                :meth:`mark_computed` (see the module docstring).

        Returns:
            :class:`AppendResult` ``(slot, copy)``; ``copy`` is None or the ``(src, dst)`` blocks to copy.

        Raises:
            KeyError: unknown ``seq_id``. ValueError: it is swapped out. TypeError: ``token_id`` not an int.
            OutOfBlocks: a block is needed and none is free; nothing changed.
        """
        seq = self._seqs.on_gpu(seq_id, "append to")
        try:
            token_id = operator.index(token_id)
            array("q", (token_id,))
        except (TypeError, OverflowError):
            raise TypeError(f"token_id must be an int that fits in 64 bits, got {token_id!r}") from None
        table, alloc, bs = seq.table, self.allocator, self.block_size
        position = table.num_tokens
        copy = None
        events: list[BlockEvent] = []
        if self._append_needs_block(seq):
            if self.num_free_blocks < 1:
                raise OutOfBlocks(1, 0, alloc.num_blocks, f"the next token of sequence {seq_id!r}")
            (new,) = self.pool.take(1, seq_id, events)
            if position % bs == 0:
                table.block_ids.append(new)
                events.append(BlockEvent("allocate", seq_id, blocks=(new,)))
            else:
                # Copy-on-write: the last block is shared, so writing into it would change the other
                # sequences' K/V. Give this sequence its own copy and drop its reference to the shared one
                # (which stays > 0: someone else still holds it).
                src = table.block_ids[-1]
                alloc.free(src)
                table.block_ids[-1] = new
                copy = (src, new)
                events.append(BlockEvent("copy_on_write", seq_id, blocks=copy, pairs=(copy,)))
        block_id = table.block_ids[position // bs]
        slot = block_id * bs + position % bs
        table.num_tokens = position + 1
        cache = self.prefix_cache
        if cache is not None:
            seq.uncached_tokens.append(token_id)         # the block being filled is never cached yet
            if (position + 1) % bs == 0:
                parent_key = seq.keys[-1] if seq.keys else None
                seq.keys.append(cache.hash_fn(parent_key, seq.block_tokens(position // bs)))
            if computed:
                self.pool.register_upto(seq, position + 1)
        events.append(BlockEvent("append", seq_id, blocks=(block_id,), slot=slot))
        self._emit(events)
        return AppendResult(slot, copy)

    def free(self, seq_id: Hashable) -> None:
        """Release a finished (or abandoned) sequence: drop its reference to each of its blocks.

        A block whose count reaches zero goes back to the free list, or, when it holds a cached prefix,
        becomes cached-free. The last block is parked first, so among blocks the eviction policy ranks
        alike it is evicted first: a cached prefix is given up from its end, never from its middle.

        Raises:
            KeyError: unknown ``seq_id``.
        """
        table = self._seqs.get(seq_id).table
        if table.device == "cpu":
            for b in table.block_ids:
                self.cpu_allocator.free(b)
        else:
            self.pool.release(table.block_ids)
        self._seqs.remove(seq_id)
        self._emit([BlockEvent("free", seq_id, blocks=tuple(table.block_ids), device=table.device)])

    def _emit(self, events: list[BlockEvent]) -> None:
        """Log and announce the events of one operation that has fully happened, numbered (``step``) here."""
        step = self._log.num_emitted
        self._log.emit([e.numbered(step + i) for i, e in enumerate(events)])

    # ---- notebook 7: sharing (fork, copy-on-write, prefix caching) -----------------------------------

    def fork(self, parent_id: Hashable, child_id: Hashable) -> BlockTable:
        """Create ``child_id`` sharing every block of ``parent_id`` (parallel sampling, beam search).

        No block is allocated: each of the parent's blocks gets one more reference. The first append to a
        shared, partly filled last block copies it (see :meth:`append`).

        Returns:
            The child's block table.

        Raises:
            KeyError: unknown ``parent_id``. ValueError: ``child_id`` exists, or the parent is swapped out.
        """
        parent = self._seqs.on_gpu(parent_id, "fork")
        hint = "pick a new id for the child"
        self._seqs.check_new(child_id, hint)
        for b in parent.table.block_ids:
            self.allocator.incref(b)
        child = parent.copy()
        self._seqs.add(child_id, child, hint)
        table = child.table
        self._emit([BlockEvent("fork", child_id, blocks=tuple(table.block_ids), parent=parent_id)])
        return table

    def num_cached_tokens(self, seq_id: Hashable) -> int:
        """Prompt tokens of ``seq_id`` whose K/V ``add`` found in the prefix cache (their prefill can be skipped)."""
        return self._seqs.get(seq_id).num_cached_tokens

    def mark_computed(self, seq_id: Hashable, num_tokens: int) -> None:
        """Say that the K/V of the first ``num_tokens`` tokens of ``seq_id`` are computed (written in the pool).

        With prefix caching, every full block among them becomes findable (one more copy of a prefix if it
        is cached already); without, nothing happens. Saying it again, or for fewer tokens, is harmless.

        Raises:
            KeyError: unknown ``seq_id``. ValueError: it is swapped out. TypeError / ValueError:
                ``num_tokens`` not an int in 0 .. the tokens of its table.
        """
        seq = self._seqs.on_gpu(seq_id, "mark tokens computed in")
        check_count("num_tokens", num_tokens, 0)
        if num_tokens > seq.table.num_tokens:
            raise ValueError(f"num_tokens={num_tokens} but sequence {seq_id!r} holds {seq.table.num_tokens} tokens")
        if self.prefix_cache is not None:
            self.pool.register_upto(seq, num_tokens)

    def _append_needs_block(self, seq: SeqRecord) -> bool:
        table = seq.table
        if table.num_tokens % self.block_size == 0:
            return True
        return self.allocator.refcount(table.block_ids[-1]) > 1

    # ---- notebook 8: preemption by swapping (the Swapper does the work; the manager logs its events) ----------

    def is_swapped(self, seq_id: Hashable) -> bool:
        """True while ``seq_id`` is swapped out to the CPU pool. Raises KeyError for an unknown id."""
        return self.swapper.is_swapped(seq_id)

    def can_swap_out(self, seq_ids: Hashable | list[Hashable]) -> bool:
        """Whether ``swap_out(seq_ids)`` would succeed (the contract: :meth:`Swapper.can_swap_out`)."""
        return self.swapper.can_swap_out(seq_ids)

    def can_swap_in(self, seq_ids: Hashable | list[Hashable]) -> bool:
        """Whether a scheduler should ``swap_in(seq_ids)`` now (the contract: :meth:`Swapper.can_swap_in`)."""
        return self.swapper.can_swap_in(seq_ids)

    def num_freeable_blocks(self, seq_ids: Hashable | list[Hashable]) -> int:
        """Blocks that preempting ``seq_ids`` gives back (the contract: :meth:`Swapper.num_freeable_blocks`)."""
        return self.swapper.num_freeable_blocks(seq_ids)

    def swap_out(self, seq_ids: Hashable | list[Hashable]) -> list[tuple[int, int]]:
        """Move a sequence or a group to the CPU pool; returns the ``(gpu_block, cpu_block)`` copies to perform
        (:meth:`Swapper.swap_out` has the contract). Nothing changes
        when it raises."""
        pairs, events = self.swapper.swap_out(seq_ids)
        self._emit(events)
        return pairs

    def swap_in(self, seq_ids: Hashable | list[Hashable]) -> list[tuple[int, int]]:
        """Bring a swapped-out sequence or group back; returns the ``(cpu_block, gpu_block)`` copies to perform
        (:meth:`Swapper.swap_in` has the contract). Nothing changes when
        it raises."""
        pairs, events = self.swapper.swap_in(seq_ids)
        self._emit(events)
        return pairs

    def __repr__(self) -> str:
        return (f"BlockManager(num_blocks={self.num_blocks}, block_size={self.block_size}, "
                f"sequences={len(self._seqs)}, free={self.num_free_blocks})")
