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
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from pagedlab.paged.allocator import BlockAllocator
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
