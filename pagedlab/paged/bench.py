"""Time the block operations, per block, as the pool grows (``benchmarks/allocator.py`` prints a table).

Each measurement starts from a fresh pool of ``num_blocks`` free blocks and times ``ops`` operations in a
row with ``time.perf_counter``; the result is the best of ``repeats`` runs divided by ``ops`` (the best,
because anything slower was the machine doing something else). Times vary by machine: never assert them.

Operations:

* ``allocate``: take one block;
* ``free``: give back one of those blocks, in random order (the last reference, so it goes back on the
  free list);
* ``fork_share``: add a reference to an allocated block (what a fork does for each block);
* ``fork`` (manager only): ``BlockManager.fork`` of a long sequence, per block;
* ``cache_hit`` (manager only): ``BlockManager.add`` of a prompt whose blocks are all cached-free, per
  block (hash the block's tokens, look it up, check it, take it back), with half the pool cached.

And the two inputs of the swap cost model (:mod:`pagedlab.paged.preemption`) that can be measured,
:func:`copy_timing`: the fixed latency λ of one copy, and the bandwidth of one big copy, from the device to
pinned or pageable host memory. Only these import torch, on first call.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from pagedlab.paged.allocator import BlockAllocator, check_count
from pagedlab.paged.baseline import SourceAllocator
from pagedlab.paged.manager import BlockManager

ALLOCATOR_OPS = ("allocate", "free", "fork_share")


def _best(run: Callable[[], float], repeats: int) -> float:
    return min(run() for _ in range(repeats))


def allocator_costs(num_blocks: int, source: bool = False, ops: int = 10_000, repeats: int = 3,
                    seed: int = 0) -> dict[str, float]:
    """Seconds per ``allocate``, ``free`` and ``fork_share`` for a pool of ``num_blocks`` blocks.

    Args:
        num_blocks: pool size.
        source: time :class:`~pagedlab.paged.baseline.SourceAllocator` instead of
            :class:`~pagedlab.paged.BlockAllocator`.
        ops: operations per timed run (at most ``num_blocks``). The source allocator's operations cost
            O(num_blocks), so give it fewer at large sizes.
        repeats: timed runs per operation; the best is kept.

    Returns:
        ``{"allocate": s, "free": s, "fork_share": s}``, seconds per operation.
    """
    ops = min(ops, num_blocks)
    make = SourceAllocator if source else BlockAllocator
    order = list(range(ops))
    random.Random(seed).shuffle(order)
    results = {op: float("inf") for op in ALLOCATOR_OPS}
    for _ in range(repeats):
        pool = make(num_blocks)
        allocate, free, incref = pool.allocate, pool.free, pool.incref

        start = time.perf_counter()
        blocks = [allocate() for _ in range(ops)]
        results["allocate"] = min(results["allocate"], time.perf_counter() - start)

        victims = [blocks[i] for i in order]
        start = time.perf_counter()
        for b in victims:
            incref(b)
        results["fork_share"] = min(results["fork_share"], time.perf_counter() - start)
        for b in victims:  # drop the shared references again (not timed)
            free(b)

        start = time.perf_counter()
        for b in victims:
            free(b)
        results["free"] = min(results["free"], time.perf_counter() - start)
        if pool.num_free != num_blocks:
            raise RuntimeError("the benchmark must leave the pool as it found it")
    return {op: t / ops for op, t in results.items()}


def cache_hit_cost(num_blocks: int, block_size: int = 16, prompt_blocks: int = 32, repeats: int = 3) -> float:
    """Seconds per block of ``BlockManager.add`` when every full block of the prompt is a cache hit.

    The prompt is ``prompt_blocks`` cached blocks plus one token (in one new block, whose allocation is in the
    time too), so that every cached block is a hit.

    Half the pool is first filled with cached-free blocks of distinct prompts, so the lookup happens in a
    cache of ``num_blocks // 2`` blocks.
    """
    m = BlockManager(num_blocks, block_size, enable_prefix_caching=True)
    tokens_per_prompt = prompt_blocks * block_size
    for i in range(max(1, num_blocks // 2 // prompt_blocks)):
        # Distinct first tokens make distinct prefixes, so every block of every prompt is a new cache entry.
        m.add(i, [i] + [7] * (tokens_per_prompt - 1))
        m.free(i)
    # Prompt 0 plus one token: every full block hits (a prompt that is all cached blocks would recompute its
    # last block, since its last token must be computed; BlockManager.add caps hits at len(prompt) - 1).
    prompt = [0] + [7] * (tokens_per_prompt - 1) + [7]

    def run() -> float:
        start = time.perf_counter()
        m.add("hit", prompt)
        elapsed = time.perf_counter() - start
        m.free("hit")
        return elapsed

    m.add("check", prompt)
    all_hits = m.num_cached_tokens("check") == tokens_per_prompt   # every full block
    m.free("check")
    if not all_hits:
        raise RuntimeError("the timed prompt must be a cache hit in every block; the setup above is wrong")
    return _best(run, repeats) / prompt_blocks


def fork_cost(num_blocks: int, block_size: int = 16, seq_blocks: int = 256, repeats: int = 3) -> float:
    """Seconds per block of ``BlockManager.fork`` of a ``seq_blocks``-block sequence (the child is freed untimed)."""
    seq_blocks = min(seq_blocks, num_blocks)
    m = BlockManager(num_blocks, block_size)
    m.add("parent", range(seq_blocks * block_size))

    def run() -> float:
        start = time.perf_counter()
        m.fork("parent", "child")
        elapsed = time.perf_counter() - start
        m.free("child")
        return elapsed

    return _best(run, repeats) / seq_blocks


# --- copies between the device and the host ----------------------------------------------------------

@dataclass(frozen=True)
class CopyTiming:
    """What :func:`copy_timing` measured: the same bytes moved as many small copies and as one.

    Attributes:
        device: where the source lived (``"cuda:0"``, ``"cpu"``).
        pinned: whether the host destination was page-locked (pinned) memory.
        num_copies: small copies in the per-chunk run.
        chunk_bytes: bytes of each small copy.
        per_chunk_s: seconds for ``num_copies`` copies of ``chunk_bytes``, one after another.
        batched_s: seconds for one copy of all ``num_copies * chunk_bytes`` bytes.
    """

    device: str
    pinned: bool
    num_copies: int
    chunk_bytes: int
    per_chunk_s: float
    batched_s: float

    @property
    def latency(self) -> float:
        """λ, the fixed seconds each extra copy adds: ``(per_chunk_s - batched_s) / (num_copies - 1)``, at least 0.

        Both runs move the same bytes, so their difference is ``num_copies - 1`` fixed costs.
        """
        return max(0.0, (self.per_chunk_s - self.batched_s) / (self.num_copies - 1))

    @property
    def bandwidth(self) -> float:
        """Bytes per second of the one big copy."""
        return self.num_copies * self.chunk_bytes / self.batched_s


def copy_timing(chunk_bytes: int, num_copies: int = 256, pinned: bool | None = None, repeats: int = 5,
                device: object = None) -> CopyTiming:
    """Time ``num_copies`` copies of ``chunk_bytes`` bytes from ``device`` to host memory, and one copy of them all.

    What a swap-out does, one chunk per copy (``preemption.swap_seconds(batched=False)``) or batched. On a GPU the
    host side is pinned by default, so the copy is a DMA over PCIe; ``pinned=False`` copies into pageable memory
    (the driver stages it through a pinned buffer of its own). On a CPU both sides are host memory: the numbers
    are the cost of one ``Tensor.copy_`` call and of a single-threaded memcpy, not of any link. Best of
    ``repeats``; never assert them.

    Args:
        chunk_bytes: bytes per small copy (a multiple of 2; e.g. one block of one layer's K).
        num_copies: small copies (at least 2).
        pinned: page-locked host memory; default: True where ``device`` is CUDA. Needs CUDA.
        repeats: timed runs of each kind; the fastest is kept.
        device: the source device (default ``pagedlab.device.DEVICE``).

    Raises:
        TypeError, ValueError: a size below its minimum, an odd ``chunk_bytes``, or ``pinned=True`` without CUDA.
    """
    import torch

    from pagedlab import device as _device

    check_count("chunk_bytes", chunk_bytes, 2)
    check_count("num_copies", num_copies, 2)
    check_count("repeats", repeats, 1)
    if chunk_bytes % 2:
        raise ValueError(f"chunk_bytes must be a multiple of 2 (fp16 elements), got {chunk_bytes}")
    dev = torch.device(_device.DEVICE if device is None else device)
    cuda = dev.type == "cuda"
    pinned = cuda if pinned is None else bool(pinned)
    if pinned and not cuda:
        raise ValueError("pinned host memory needs a CUDA device; on a CPU pass pinned=False (or leave it None)")
    src = torch.ones(num_copies, chunk_bytes // 2, dtype=torch.float16, device=dev)
    dst = torch.empty(num_copies, chunk_bytes // 2, dtype=torch.float16, pin_memory=pinned)

    def timed(run: Callable[[], None]) -> float:
        run()                                   # warm-up: first-touch page faults, allocator, driver
        best = float("inf")
        for _ in range(repeats):
            _device.synchronize()
            start = time.perf_counter()
            run()
            _device.synchronize()
            best = min(best, time.perf_counter() - start)
        return best

    def per_chunk() -> None:
        for i in range(num_copies):
            dst[i].copy_(src[i], non_blocking=pinned)

    # On a CPU, one thread: a big copy is split over the intra-op thread pool, and on a busy machine waiting for
    # a descheduled worker would be timed instead of the copy.
    threads = torch.get_num_threads()
    if not cuda:
        torch.set_num_threads(1)
    try:
        per_chunk_s = timed(per_chunk)
        batched_s = timed(lambda: dst.copy_(src, non_blocking=pinned))
    finally:
        torch.set_num_threads(threads)
    if not torch.equal(dst, src.cpu()):
        raise RuntimeError("the copies did not arrive: the timing would be of nothing")
    return CopyTiming(device=str(dev), pinned=pinned, num_copies=num_copies, chunk_bytes=chunk_bytes,
                      per_chunk_s=per_chunk_s, batched_s=batched_s)
