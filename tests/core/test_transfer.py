"""pagedlab.transfer: the copy timings that feed the swap cost model (they run here; a time is never asserted)."""

import pytest
import torch

from pagedlab.paged import KVCache
from pagedlab.transfer import CopyTiming, copy_timing, swap_timing


def test_copy_timing_latency_is_the_extra_cost_per_copy():
    t = CopyTiming(device="cpu", pinned=False, num_copies=11, chunk_bytes=1000, per_chunk_s=3e-3, batched_s=1e-3)
    assert t.latency == pytest.approx(2e-4)              # 10 extra copies cost 2 ms
    assert t.bandwidth == pytest.approx(11_000 / 1e-3)
    assert CopyTiming("cpu", False, 4, 10, per_chunk_s=1.0, batched_s=2.0).latency == 0.0   # noise, not negative


def test_copy_timing_runs_here_and_refuses_what_it_cannot_measure():
    threads = torch.get_num_threads()
    t = copy_timing(chunk_bytes=256, num_copies=8, repeats=1, device="cpu")
    assert torch.get_num_threads() == threads            # the single-threaded timing leaves the pool as it was
    assert (t.device, t.pinned, t.num_copies, t.chunk_bytes) == ("cpu", False, 8, 256)
    assert t.per_chunk_s > 0 and t.batched_s > 0 and t.latency >= 0
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="pinned host memory needs a CUDA device"):
            copy_timing(chunk_bytes=256, pinned=True, device="cpu")
    with pytest.raises(ValueError, match="multiple of 2"):
        copy_timing(chunk_bytes=255, device="cpu")
    with pytest.raises(ValueError, match="num_copies must be >= 2"):
        copy_timing(chunk_bytes=256, num_copies=1, device="cpu")


def test_swap_timing_goes_through_kv_cache_and_refuses_a_cache_without_host_pool():
    kv = KVCache(num_layers=2, num_blocks=6, block_size=4, kv_heads=1, head_dim=8, num_cpu_blocks=4,
                 dtype=torch.float32, device="cpu")
    t = swap_timing(kv, repeats=1)
    assert (t.num_copies, t.chunk_bytes, t.device, t.pinned) == (4, kv.bytes_per_block, "cpu", False)
    assert t.per_chunk_s > 0 and t.batched_s > 0 and t.latency >= 0
    assert torch.equal(kv.k_cpu, kv.k[:, :4]) and kv.k_cpu.abs().sum() > 0     # the blocks really moved
    with pytest.raises(ValueError, match="no host pool"):
        swap_timing(KVCache(1, 4, 4, 1, 8, device="cpu"))
    with pytest.raises(ValueError, match="num_blocks must fit both pools"):
        swap_timing(kv, num_blocks=5)
    with pytest.raises(ValueError, match="num_blocks must be >= 2"):
        swap_timing(kv, num_blocks=1)
