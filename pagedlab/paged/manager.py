"""The block manager: every sequence's block table over one GPU pool (and an optional CPU pool).

It decides *where* each token's K/V goes; it never touches tensors. Operations that need data moved
return the moves for the caller (the engine, with a :class:`~pagedlab.paged.KVCache`) to perform:

* ``append`` may return a copy-on-write pair ``(src, dst)``: copy block ``src`` into ``dst`` before
  writing the new token;
* ``swap_out`` / ``swap_in`` return ``(src, dst)`` pairs between the pools: copy them before the next
  operation that allocates, because the source blocks are free from now on.

Every operation is atomic: it checks everything first and raises (``OutOfBlocks``, ``ValueError``,
``TypeError``) before changing anything, so after an exception the manager is exactly as before.

Reference counts (``manager.allocator.refcount(b)``) count block tables, nothing else: a block held
by three forked sequences has count 3; the prefix cache holds no reference (a cached block nobody uses
has count 0 and is *cached-free*, see :mod:`pagedlab.paged.allocator`).

Events. After each successful operation the manager appends :class:`BlockEvent` records to
``manager.events`` (the last 1000) and calls every subscriber with each one, in order. When a
subscriber runs, the operation is complete, so it may read the manager (that is how the block-table
widget redraws). An exception in a subscriber propagates to the caller, but the operation has already
happened.
"""

from __future__ import annotations

import operator
from array import array
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Literal, NamedTuple

from pagedlab.paged.allocator import BlockAllocator, OutOfBlocks, check_count
from pagedlab.paged.block_table import BlockTable, Device
from pagedlab.paged.prefix_cache import PrefixCache

EventKind = Literal["allocate", "append", "free", "fork", "copy_on_write", "cache_hit", "evict",
                    "swap_out", "swap_in"]


@dataclass(frozen=True, slots=True)
class BlockEvent:
    """One thing the manager did, for widgets and logs.

    Attributes:
        kind: what happened (the blocks are GPU blocks unless ``device`` says ``"cpu"``):

            * ``"allocate"``: ``blocks`` were taken from the free list for ``seq_id`` (by ``add``, or by
              ``append`` crossing into a new block);
            * ``"append"``: ``seq_id`` reserved one token slot, ``slot``, in ``blocks[0]``;
            * ``"free"``: ``seq_id`` finished and dropped its reference to each of ``blocks`` (on ``device``);
            * ``"fork"``: ``seq_id`` was created from ``parent`` and shares all of ``blocks``;
            * ``"copy_on_write"``: ``seq_id`` wrote into a shared block, so ``pairs == ((src, dst),)``:
              it now owns ``dst``, a copy of ``src``; ``blocks == (src, dst)``;
            * ``"cache_hit"``: ``add`` reused cached ``blocks`` for the prefix of ``seq_id``;
            * ``"evict"``: the prefix cache gave up cached-free ``blocks`` to make room for ``seq_id``;
            * ``"swap_out"``: ``seq_id`` moved to the CPU pool; ``pairs`` are ``(gpu_block, cpu_block)``,
              ``blocks`` the GPU blocks it released;
            * ``"swap_in"``: ``seq_id`` came back; ``pairs`` are ``(cpu_block, gpu_block)``, ``blocks``
              the GPU blocks it now holds.
        seq_id: the sequence the event is about.
        blocks: block ids, see ``kind``.
        pairs: ``(src, dst)`` copies the caller performs (``copy_on_write``, ``swap_out``, ``swap_in``).
        parent: the parent sequence of a ``fork``, else None.
        slot: the reserved slot of an ``append``, else None.
        device: the pool ``blocks`` belong to.
        step: 0, 1, 2, ... in the order events happened in this manager.
    """

    kind: EventKind
    seq_id: Hashable
    blocks: tuple[int, ...] = ()
    pairs: tuple[tuple[int, int], ...] = ()
    parent: Hashable | None = None
    slot: int | None = None
    device: Device = "gpu"
    step: int = 0


class AppendResult(NamedTuple):
    """What ``append`` returns.

    Attributes:
        slot: the pool slot of the new token (write its K/V there).
        copy: None, or ``(src, dst)`` when the last block was shared: copy block ``src`` into ``dst`` first.
    """

    slot: int
    copy: tuple[int, int] | None


@dataclass(frozen=True)
class Usage:
    """A snapshot of how the GPU pool is used (``BlockManager.usage()``).

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
        bytes_saved_by_sharing: ``blocks_saved_by_sharing * bytes_per_block`` when ``usage`` was given
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


class _Seq:
    """The manager's private record of one sequence."""

    __slots__ = ("table", "tokens", "keys", "prefix_ids", "num_cached_tokens")

    def __init__(self, table: BlockTable, tokens: list[int], keys: list[int], prefix_ids: list[int],
                 num_cached_tokens: int) -> None:
        self.table = table
        self.tokens = tokens              # every token id, for hashing blocks as they fill
        self.keys = keys                  # prefix caching only: chained hash of each *full* block
        self.prefix_ids = prefix_ids      # ... and its prefix id (see pagedlab.paged.prefix_cache)
        self.num_cached_tokens = num_cached_tokens


def _tokens(token_ids: Iterable[int]) -> list[int]:
    tokens = list(token_ids)
    # Fast check first: a sum of Python ints is an int, and one float, str or numpy scalar changes its type or
    # raises. Anything else goes through array('q'), which converts ints like numpy's or fails (all in C).
    try:
        if type(sum(tokens)) is not int:
            tokens = array("q", tokens).tolist()
        return tokens
    except (TypeError, OverflowError):
        raise TypeError("token_ids must be an iterable of ints (token ids)") from None


class BlockManager:
    """Block tables, reference counts, copy-on-write, prefix caching and swapping for many sequences.

    Args:
        num_blocks: GPU blocks in the pool (> 0).
        block_size: tokens per block (> 0).
        num_cpu_blocks: blocks in the CPU pool that ``swap_out`` uses (0: no swapping).
        enable_prefix_caching: reuse full blocks whose whole prefix matches, across sequences.

    Attributes:
        allocator: the GPU pool's :class:`BlockAllocator` (reference counts, free list).
        cpu_allocator: the CPU pool's allocator, or None when ``num_cpu_blocks == 0``.
        prefix_cache: the :class:`PrefixCache`, or None when prefix caching is off.
        events: the last 1000 :class:`BlockEvent` records, oldest first.

    Raises:
        TypeError / ValueError: a size that is not a positive int (``num_cpu_blocks``: >= 0).
    """

    EVENT_LOG = 1000

    def __init__(self, num_blocks: int, block_size: int, num_cpu_blocks: int = 0,
                 enable_prefix_caching: bool = False) -> None:
        check_count("num_blocks", num_blocks, 1)
        check_count("block_size", block_size, 1)
        check_count("num_cpu_blocks", num_cpu_blocks, 0)
        self.block_size = block_size
        self.allocator = BlockAllocator(num_blocks)
        self.cpu_allocator = BlockAllocator(num_cpu_blocks) if num_cpu_blocks else None
        self.prefix_cache = PrefixCache(block_size) if enable_prefix_caching else None
        self.events: deque[BlockEvent] = deque(maxlen=self.EVENT_LOG)
        self._subscribers: list[Callable[[BlockEvent], None]] = []
        self._seqs: dict[Hashable, _Seq] = {}
        self._step = 0

    # ---- queries -------------------------------------------------------------------------------------

    @property
    def num_blocks(self) -> int:
        """GPU blocks in the pool."""
        return self.allocator.num_blocks

    @property
    def num_free_blocks(self) -> int:
        """GPU blocks an allocation can get: the free list plus cached-free blocks (evicted on demand)."""
        return self.allocator.num_free + self.allocator.num_cached

    @property
    def seq_ids(self) -> list[Hashable]:
        """Every sequence the manager holds (on the GPU or swapped out), in the order they were added."""
        return list(self._seqs)

    def __contains__(self, seq_id: object) -> bool:
        return seq_id in self._seqs

    def table(self, seq_id: Hashable) -> BlockTable:
        """The (live, read-only) block table of ``seq_id``; ``table.device`` says which pool its ids are in.

        Raises:
            KeyError: unknown ``seq_id``.
        """
        return self._seq(seq_id).table

    def is_swapped(self, seq_id: Hashable) -> bool:
        """True while ``seq_id`` is swapped out to the CPU pool. Raises KeyError for an unknown id."""
        return self._seq(seq_id).table.device == "cpu"

    def num_cached_tokens(self, seq_id: Hashable) -> int:
        """Prompt tokens of ``seq_id`` whose K/V ``add`` found in the prefix cache (their prefill can be skipped)."""
        return self._seq(seq_id).num_cached_tokens

    def can_add(self, num_tokens: int) -> bool:
        """Whether ``add`` of a prompt of ``num_tokens`` tokens fits, without counting on cache hits."""
        check_count("num_tokens", num_tokens, 0)
        return -(-num_tokens // self.block_size) <= self.num_free_blocks

    def can_append(self, seq_id: Hashable) -> bool:
        """Whether ``append(seq_id, ...)`` would succeed (it needs a block at a block boundary or to copy on write).

        Raises:
            KeyError / ValueError: unknown or swapped-out ``seq_id``.
        """
        return not self._append_needs_block(self._gpu_seq(seq_id, "append to")) or self.num_free_blocks >= 1

    def can_swap_out(self, seq_id: Hashable) -> bool:
        """Whether the CPU pool has room for all of ``seq_id``'s blocks (False without a CPU pool)."""
        seq = self._gpu_seq(seq_id, "swap out")
        return self.cpu_allocator is not None and seq.table.num_blocks <= self.cpu_allocator.num_free

    def can_swap_in(self, seq_id: Hashable) -> bool:
        """Whether the GPU pool has room to bring swapped-out ``seq_id`` back."""
        seq = self._seq(seq_id)
        if seq.table.device != "cpu":
            raise ValueError(f"sequence {seq_id!r} is not swapped out")
        return seq.table.num_blocks <= self.num_free_blocks

    def usage(self, bytes_per_block: int | None = None) -> Usage:
        """How the GPU pool is used right now (O(blocks); for reports, not for hot loops).

        Args:
            bytes_per_block: K and V bytes of one block over all layers (``KVCache.bytes_per_block``), to
                turn blocks saved by sharing into bytes; None leaves ``bytes_saved_by_sharing`` None.
        """
        alloc, bs = self.allocator, self.block_size
        fill: dict[int, int] = {}
        logical = tokens = swapped = 0
        for seq in self._seqs.values():
            t = seq.table
            if t.device == "cpu":
                swapped += 1
                continue
            logical += len(t.block_ids)
            tokens += t.num_tokens
            for i, b in enumerate(t.block_ids):
                fill[b] = min(bs, t.num_tokens - i * bs)
        used = len(fill)
        filled = sum(fill.values())
        shared = sum(1 for b in fill if alloc.refcount(b) > 1)
        unused = used * bs - filled
        saved = logical - used
        cpu = self.cpu_allocator
        return Usage(
            num_blocks=alloc.num_blocks, blocks_used=used, blocks_free=alloc.num_free, blocks_cached=alloc.num_cached,
            blocks_shared=shared, logical_blocks=logical, tokens_stored=tokens, slots_filled=filled,
            unused_slots=unused, fragmentation=unused / (used * bs) if used else 0.0,
            blocks_saved_by_sharing=saved,
            bytes_saved_by_sharing=None if bytes_per_block is None else saved * bytes_per_block,
            num_cpu_blocks=cpu.num_blocks if cpu else 0,
            cpu_blocks_used=cpu.num_blocks - cpu.num_free if cpu else 0,
            num_swapped=swapped,
        )

    # ---- events --------------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[BlockEvent], None]) -> Callable[[], None]:
        """Call ``callback(event)`` after every operation, once per event; returns a function that unsubscribes."""
        if not callable(callback):
            raise TypeError(f"callback must be callable, got {type(callback).__name__}")
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def _emit(self, events: list[tuple]) -> None:
        # Called only after an operation has fully happened (see the module docstring).
        for fields in events:
            event = BlockEvent(*fields, step=self._step)
            self._step += 1
            self.events.append(event)
            for callback in tuple(self._subscribers):
                callback(event)

    # ---- operations ----------------------------------------------------------------------------------

    def add(self, seq_id: Hashable, token_ids: Iterable[int]) -> BlockTable:
        """Admit a sequence with its prompt: allocate (or, with prefix caching, reuse) its blocks.

        Returns:
            Its block table, ``ceil(len(token_ids) / block_size)`` blocks holding ``len(token_ids)`` tokens.

        Raises:
            ValueError: ``seq_id`` is already in the manager.
            TypeError: ``token_ids`` is not an iterable of ints, or ``seq_id`` is not hashable.
            OutOfBlocks: not enough free (or evictable) blocks; nothing changed.
        """
        if seq_id in self._seqs:
            raise ValueError(f"sequence {seq_id!r} already exists; free it first or use another id")
        tokens = _tokens(token_ids)
        bs, alloc, cache = self.block_size, self.allocator, self.prefix_cache
        num_blocks = -(-len(tokens) // bs)

        # Plan without touching anything: the keys of the full blocks, and the longest cached prefix.
        if cache is not None:
            keys, hits, prefix_ids = cache.match(tuple(tokens))
        else:
            keys, hits, prefix_ids = [], [], []
        revived = cache.count_parked(hits) if hits else 0
        need = num_blocks - len(hits)
        available = self.num_free_blocks - revived
        if need > available:
            raise OutOfBlocks(need, available, alloc.num_blocks, f"the prompt of sequence {seq_id!r}")

        # Commit.
        events: list[tuple] = []
        for b in hits:
            if alloc.reuse(b):
                cache.unpark(b)
        if hits:
            events.append(("cache_hit", seq_id, tuple(hits)))
        new = self._take(need, seq_id, events)
        if new:
            events.append(("allocate", seq_id, tuple(new)))
        block_ids = hits + new
        table = BlockTable(block_ids, len(tokens), bs)
        seq = self._seqs[seq_id] = _Seq(table, tokens, keys, prefix_ids, len(hits) * bs)
        if cache is not None:
            for i in range(len(hits), len(keys)):
                self._register(seq, i)
        self._emit(events)
        return table

    def append(self, seq_id: Hashable, token_id: int) -> AppendResult:
        """Reserve the slot of one new token of ``seq_id`` (a decode step).

        A new block is allocated when the last one is full (or there is none); when the last block is
        shared (after a fork), the sequence gets a private copy first: copy-on-write.

        Returns:
            :class:`AppendResult` ``(slot, copy)``; ``copy`` is None or the ``(src, dst)`` blocks to copy.

        Raises:
            KeyError: unknown ``seq_id``. ValueError: it is swapped out. TypeError: ``token_id`` not an int.
            OutOfBlocks: a block is needed and none is free; nothing changed.
        """
        seq = self._gpu_seq(seq_id, "append to")
        try:
            token_id = operator.index(token_id)
            array("q", (token_id,))
        except (TypeError, OverflowError):
            raise TypeError(f"token_id must be an int that fits in 64 bits, got {token_id!r}") from None
        table, alloc, bs = seq.table, self.allocator, self.block_size
        position = table.num_tokens
        copy = None
        events: list[tuple] = []
        if self._append_needs_block(seq):
            if self.num_free_blocks < 1:
                raise OutOfBlocks(1, 0, alloc.num_blocks, f"the next token of sequence {seq_id!r}")
            (new,) = self._take(1, seq_id, events)
            if position % bs == 0:
                table.block_ids.append(new)
                events.append(("allocate", seq_id, (new,)))
            else:
                # Copy-on-write: the last block is shared, so writing into it would change the other
                # sequences' K/V. Give this sequence its own copy and drop its reference to the shared one
                # (which stays > 0: someone else still holds it).
                src = table.block_ids[-1]
                alloc.free(src)
                table.block_ids[-1] = new
                copy = (src, new)
                events.append(("copy_on_write", seq_id, copy, (copy,)))
        block_id = table.block_ids[position // bs]
        slot = block_id * bs + position % bs
        table.num_tokens = position + 1
        seq.tokens.append(token_id)
        if self.prefix_cache is not None and (position + 1) % bs == 0:
            seq.keys.append(self.prefix_cache.hash_fn(seq.keys[-1] if seq.keys else None,
                                                      tuple(seq.tokens[position + 1 - bs:])))
            self._register(seq, len(seq.keys) - 1)
        events.append(("append", seq_id, (block_id,), (), None, slot))
        self._emit(events)
        return AppendResult(slot, copy)

    def fork(self, parent_id: Hashable, child_id: Hashable) -> BlockTable:
        """Create ``child_id`` sharing every block of ``parent_id`` (parallel sampling, beam search).

        No block is allocated: each of the parent's blocks gets one more reference. The first append to a
        shared, partly filled last block copies it (see :meth:`append`).

        Returns:
            The child's block table.

        Raises:
            KeyError: unknown ``parent_id``. ValueError: ``child_id`` exists, or the parent is swapped out.
        """
        parent = self._gpu_seq(parent_id, "fork")
        if child_id in self._seqs:
            raise ValueError(f"sequence {child_id!r} already exists; pick a new id for the child")
        for b in parent.table.block_ids:
            self.allocator.incref(b)
        table = BlockTable(list(parent.table.block_ids), parent.table.num_tokens, self.block_size)
        self._seqs[child_id] = _Seq(table, parent.tokens[:], list(parent.keys), list(parent.prefix_ids),
                                    parent.num_cached_tokens)
        self._emit([("fork", child_id, tuple(table.block_ids), (), parent_id)])
        return table

    def free(self, seq_id: Hashable) -> None:
        """Release a finished (or abandoned) sequence: drop its reference to each of its blocks.

        A block whose count reaches zero goes back to the free list, or, when it holds a cached prefix,
        becomes cached-free. The last block is parked first, so it is evicted first: a cached prefix is
        given up from its end, never from its middle.

        Raises:
            KeyError: unknown ``seq_id``.
        """
        seq = self._seq(seq_id)
        table = seq.table
        if table.device == "cpu":
            for b in table.block_ids:
                self.cpu_allocator.free(b)
        else:
            self._release_gpu(table.block_ids)
        del self._seqs[seq_id]
        self._emit([("free", seq_id, tuple(table.block_ids), (), None, None, table.device)])

    def swap_out(self, seq_id: Hashable) -> list[tuple[int, int]]:
        """Move ``seq_id`` to the CPU pool (preemption by swapping).

        Returns:
            ``(gpu_block, cpu_block)`` pairs, in logical order: copy each before the next allocation,
            since the GPU blocks are released now. A block shared with another sequence stays on the GPU
            for it; this sequence takes its own CPU copy.

        Raises:
            KeyError: unknown ``seq_id``. ValueError: no CPU pool, or already swapped out.
            OutOfBlocks: the CPU pool has too few free blocks; nothing changed.
        """
        seq = self._gpu_seq(seq_id, "swap out")
        cpu = self.cpu_allocator
        if cpu is None:
            raise ValueError("this manager has no CPU pool: create it with num_cpu_blocks > 0 to swap")
        table = seq.table
        if table.num_blocks > cpu.num_free:
            raise OutOfBlocks(table.num_blocks, cpu.num_free, cpu.num_blocks, f"swapping out sequence {seq_id!r} "
                              "(CPU pool)")
        gpu_blocks = table.block_ids
        cpu_blocks = cpu.allocate_many(len(gpu_blocks))
        self._release_gpu(gpu_blocks)
        pairs = list(zip(gpu_blocks, cpu_blocks))
        table.block_ids, table.device = cpu_blocks, "cpu"
        self._emit([("swap_out", seq_id, tuple(gpu_blocks), tuple(pairs))])
        return pairs

    def swap_in(self, seq_id: Hashable) -> list[tuple[int, int]]:
        """Bring swapped-out ``seq_id`` back into the GPU pool.

        Returns:
            ``(cpu_block, gpu_block)`` pairs, in logical order: copy each before the next ``swap_out``,
            since the CPU blocks are released now.

        Raises:
            KeyError: unknown ``seq_id``. ValueError: it is not swapped out.
            OutOfBlocks: not enough free (or evictable) GPU blocks; nothing changed.
        """
        seq = self._seq(seq_id)
        table = seq.table
        if table.device != "cpu":
            raise ValueError(f"sequence {seq_id!r} is not swapped out")
        if table.num_blocks > self.num_free_blocks:
            raise OutOfBlocks(table.num_blocks, self.num_free_blocks, self.num_blocks,
                              f"swapping in sequence {seq_id!r}")
        events: list[tuple] = []
        gpu_blocks = self._take(table.num_blocks, seq_id, events)
        for b in table.block_ids:
            self.cpu_allocator.free(b)
        pairs = list(zip(table.block_ids, gpu_blocks))
        table.block_ids, table.device = gpu_blocks, "gpu"
        if self.prefix_cache is not None:
            # The blocks are new, so offer them to the cache again (a copy still cached keeps its place).
            del seq.prefix_ids[:]
            for i in range(len(seq.keys)):
                self._register(seq, i)
        events.append(("swap_in", seq_id, tuple(gpu_blocks), tuple(pairs)))
        self._emit(events)
        return pairs

    # ---- internals -----------------------------------------------------------------------------------

    def _seq(self, seq_id: Hashable) -> _Seq:
        try:
            return self._seqs[seq_id]
        except KeyError:
            raise KeyError(f"unknown sequence {seq_id!r}; known: {list(self._seqs)[:8]}") from None

    def _gpu_seq(self, seq_id: Hashable, what: str) -> _Seq:
        seq = self._seq(seq_id)
        if seq.table.device == "cpu":
            raise ValueError(f"cannot {what} sequence {seq_id!r}: it is swapped out; swap it in first")
        return seq

    def _append_needs_block(self, seq: _Seq) -> bool:
        table = seq.table
        if table.num_tokens % self.block_size == 0:
            return True
        return self.allocator.refcount(table.block_ids[-1]) > 1

    def _register(self, seq: _Seq, i: int) -> None:
        """Offer full block ``i`` of ``seq`` to the prefix cache and record its prefix id (``i`` is the next one)."""
        bs = self.block_size
        parent_id = seq.prefix_ids[i - 1] if i else None
        seq.prefix_ids.append(self.prefix_cache.register(seq.table.block_ids[i], seq.keys[i], parent_id,
                                                         tuple(seq.tokens[i * bs:(i + 1) * bs])))

    def _take(self, n: int, seq_id: Hashable, events: list[tuple]) -> list[int]:
        """Allocate ``n`` GPU blocks, evicting least recently used cached-free blocks when the free list is short.

        The caller has checked ``n <= num_free_blocks``, so this cannot fail halfway.
        """
        alloc = self.allocator
        short = n - alloc.num_free
        if short > 0:
            evicted = [self.prefix_cache.evict() for _ in range(short)]
            for b in evicted:
                alloc.evict(b)
            events.append(("evict", seq_id, tuple(evicted)))
        return alloc.allocate_many(n)

    def _release_gpu(self, block_ids: list[int]) -> None:
        # Last block first, so that among one sequence's blocks the tail is the least recently used.
        alloc, cache = self.allocator, self.prefix_cache
        for b in reversed(block_ids):
            cached = cache is not None and cache.is_registered(b)
            if alloc.free(b, cache=cached) == 0 and cached:
                cache.park(b)

    def __repr__(self) -> str:
        return (f"BlockManager(num_blocks={self.num_blocks}, block_size={self.block_size}, "
                f"sequences={len(self._seqs)}, free={self.num_free_blocks})")
