"""The swap-vs-recompute cost model: known answers and the shape of its curves."""

import pytest

from dataclasses import replace

from pagedlab.paged.preemption import (A100, H100, PCIE4_X16, PCIE5_X16, Accelerator, Link, crossover_block_size,
                                        prefill_flops, recompute_seconds, swap_seconds)


def test_swap_counts_every_chunk_both_ways():
    link = Link("test", bytes_per_second=1000.0, latency=1.0)
    # 10 tokens in blocks of 4: 3 blocks; 2 layers; K and V: 12 chunks of 4 tokens x 5 bytes, each way.
    assert swap_seconds(10, 4, 2, 5, link) == pytest.approx(2 * 12 * (1.0 + 20 / 1000))
    assert swap_seconds(10, 4, 2, 5, link, batched=True) == pytest.approx(4 * 1.0 + 2 * 12 * 20 / 1000)


def test_prefill_flops_and_recompute_time():
    assert prefill_flops(10, 100.0, 2, 8) == 2 * 100 * 10 + 2 * 2 * 8 * 100
    acc = Accelerator("test", flops=1e6, utilization=0.5)
    assert recompute_seconds(10, 100.0, 2, 8, acc) == pytest.approx(prefill_flops(10, 100.0, 2, 8) / 5e5)


def test_small_blocks_make_swapping_expensive_and_recompute_does_not_care():
    swap = [swap_seconds(1024, b, 40, 10240, PCIE4_X16) for b in (1, 4, 16, 64, 256)]
    assert swap == sorted(swap, reverse=True)
    recompute = recompute_seconds(1024, 12.9e9, 40, 5120, A100)
    assert swap[0] > recompute > swap[-1]
    batched = {swap_seconds(1024, b, 40, 10240, PCIE4_X16, batched=True) for b in (16, 64, 256)}
    assert max(batched) - min(batched) < 1e-3 * min(batched)


OPT_13B_ARGS = dict(num_tokens=1024, num_params=12.9e9, num_layers=40, d_model=5120, chunk_bytes_per_token=10240)


def test_crossover_is_the_first_block_size_where_swapping_wins():
    b = crossover_block_size(link=PCIE4_X16, accelerator=A100, **OPT_13B_ARGS)
    assert b == 16                      # notebook 08's table: 156 ms of swap against 172 ms of recompute
    recompute = recompute_seconds(1024, 12.9e9, 40, 5120, A100)
    assert swap_seconds(1024, b, 40, 10240, PCIE4_X16) < recompute <= swap_seconds(1024, b // 2, 40, 10240, PCIE4_X16)
    assert crossover_block_size(link=PCIE5_X16, accelerator=H100, **OPT_13B_ARGS) == 64


def test_crossover_moves_with_latency_and_utilization():
    by_latency = [crossover_block_size(link=replace(PCIE4_X16, latency=lam), accelerator=A100, **OPT_13B_ARGS)
                  for lam in (2e-6, 5e-6, 10e-6, 20e-6)]
    assert by_latency == sorted(by_latency) and by_latency[0] < by_latency[-1]
    # A faster prefill (higher utilization) makes recomputing cheaper, so swapping needs bigger blocks to win.
    slow, fast = (crossover_block_size(link=PCIE4_X16, accelerator=replace(A100, utilization=u), **OPT_13B_ARGS)
                  for u in (0.3, 0.7))
    assert slow < fast
    never = crossover_block_size(link=replace(PCIE4_X16, bytes_per_second=1e6), accelerator=A100, **OPT_13B_ARGS)
    assert never is None

