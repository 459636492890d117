"""What it costs to move KV memory between the GPU and the host, as swapping does: measured, never modelled.

The swap cost model (:mod:`pagedlab.paged.preemption`, notebook 08) takes two inputs: the fixed latency λ that
each copy adds beyond its bytes, and the bandwidth of one big copy into pinned or pageable host memory.
:func:`copy_timing` measures both with plain tensor copies, the same bytes moved as many small copies and as one;
:func:`swap_timing` measures the same through the course's own ``KVCache.swap_out``. Both return a
:class:`CopyTiming`. Timings depend on the machine and its load: print them, never assert them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from pagedlab import device as _device
from pagedlab.validate import check_count

if TYPE_CHECKING:
    from pagedlab.paged.kv_cache import KVCache


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

    def per_chunk() -> None:
        for i in range(num_copies):
            dst[i].copy_(src[i], non_blocking=pinned)

    per_chunk_s, batched_s = _time_both(per_chunk, lambda: dst.copy_(src, non_blocking=pinned), repeats, cuda)
    if not torch.equal(dst, src.cpu()):
        raise RuntimeError("the copies did not arrive: the timing would be of nothing")
    return CopyTiming(device=str(dev), pinned=pinned, num_copies=num_copies, chunk_bytes=chunk_bytes,
                      per_chunk_s=per_chunk_s, batched_s=batched_s)


def swap_timing(kv: KVCache, num_blocks: int | None = None, repeats: int = 5) -> CopyTiming:
    """Time ``kv.swap_out`` of ``num_blocks`` blocks, one call per block, against one call for all of them.

    The same measurement as :func:`copy_timing`, through the course's own swap path: what one more
    ``KVCache.swap_out`` call costs (indexing, the gather into its staging buffer, the copy, the scatter into
    the host pool) beyond its bytes.
    Blocks ``0 .. num_blocks - 1`` are copied to host blocks with the same ids; their contents are overwritten.

    Args:
        kv: a :class:`~pagedlab.paged.KVCache` with a host pool.
        num_blocks: blocks to swap (at least 2; default: as many as both pools hold).
        repeats: timed runs of each kind; the fastest is kept.

    Returns:
        A :class:`CopyTiming` whose ``chunk_bytes`` is ``kv.bytes_per_block`` and ``num_copies`` is ``num_blocks``.

    Raises:
        ValueError: ``kv`` has no host pool, or ``num_blocks`` is below 2 or above either pool.
    """
    if kv.num_cpu_blocks == 0:
        raise ValueError("kv has no host pool to swap into: create the KVCache with num_cpu_blocks > 0")
    n = min(kv.num_blocks, kv.num_cpu_blocks) if num_blocks is None else num_blocks
    check_count("num_blocks", n, 2)
    check_count("repeats", repeats, 1)
    if n > min(kv.num_blocks, kv.num_cpu_blocks):
        raise ValueError(f"num_blocks must fit both pools ({kv.num_blocks} GPU, {kv.num_cpu_blocks} host blocks), "
                         f"got {n}")
    pairs = [(b, b) for b in range(n)]
    g = torch.Generator().manual_seed(0)
    for pool in (kv.k, kv.v):
        pool[:, :n] = torch.randn(pool[:, :n].shape, generator=g).to(pool.device, pool.dtype)
    per_block_s, batched_s = _time_both(lambda: [kv.swap_out([p]) for p in pairs], lambda: kv.swap_out(pairs),
                                        repeats, kv.device.type == "cuda")
    if not (torch.equal(kv.k_cpu[:, :n], kv.k[:, :n].cpu()) and torch.equal(kv.v_cpu[:, :n], kv.v[:, :n].cpu())):
        raise RuntimeError("the swapped blocks did not arrive: the timing would be of nothing")
    # KVCache copies between staging buffers, and its host-side buffer is pinned exactly when the cache is on a GPU.
    return CopyTiming(device=str(kv.device), pinned=kv.device.type == "cuda", num_copies=n,
                      chunk_bytes=kv.bytes_per_block, per_chunk_s=per_block_s, batched_s=batched_s)


def _time_both(one_by_one: Callable[[], object], at_once: Callable[[], object], repeats: int,
               cuda: bool) -> tuple[float, float]:
    """Best-of-``repeats`` seconds of each (after one warm-up run), synchronizing the device around each run."""

    def timed(run: Callable[[], object]) -> float:
        run()                                   # warm-up: first-touch page faults, allocator, driver
        best = float("inf")
        for _ in range(repeats):
            _device.synchronize()
            start = time.perf_counter()
            run()
            _device.synchronize()
            best = min(best, time.perf_counter() - start)
        return best

    # On a CPU, one thread: a big copy is split over the intra-op thread pool, and on a busy machine waiting for
    # a descheduled worker would be timed instead of the copy.
    threads = torch.get_num_threads()
    if not cuda:
        torch.set_num_threads(1)
    try:
        return timed(one_by_one), timed(at_once)
    finally:
        torch.set_num_threads(threads)
