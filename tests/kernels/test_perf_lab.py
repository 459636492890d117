"""pagedlab.perf_lab: the budget and launch-order models of notebook 04b, and the live-tile register model against
the compiler's recorded counts (no GPU, no compile: the compiling path runs in exercise ex04b's tests)."""

import csv
from pathlib import Path

import pytest

from pagedlab import perf_lab

ROOT = Path(__file__).resolve().parents[2]


def test_the_exponentials_take_half_the_matmul_time_of_the_forward_at_d128():
    """FlashAttention-3's rates, per H100 SM and clock: 4096 bf16 tensor-core FLOPs, 16 exp2."""
    assert perf_lab.score_budget(128) == {"products": 2, "mma_flops": 512, "exps": 1}
    assert perf_lab.exp_time_fraction(128) == 0.5
    assert perf_lab.exp_time_fraction(64) == 1.0  # smaller heads: the exponentials outweigh the products
    assert perf_lab.exp_time_fraction(128, "bwd") == pytest.approx(2 / 7)
    # 989 TFLOP/s against 3.9 TFLOP/s is the same ratio as 4096 against 16, to 1%.
    assert 989 / 3.9 == pytest.approx(4096 / 16, rel=0.01)
    with pytest.raises(ValueError, match="kind"):
        perf_lab.score_budget(128, "backward")
    with pytest.raises(TypeError, match="head_dim must be an int"):
        perf_lab.score_budget(128.0)


def test_a_tiles_flops_per_byte_depend_on_its_height_only():
    for bn, d in [(32, 64), (128, 128), (64, 256)]:
        budget = perf_lab.tile_budget(128, bn, d)
        assert budget["flops_per_byte"] == 128 and budget["bytes"] == 2 * bn * d * 2
    assert perf_lab.tile_budget(64, 64, 128)["flops_per_byte"] == 64


def test_launch_order_on_the_benchmarks_grids():
    """The model of notebook 04b on the benchmark's grids (16 heads x 128 = 2048 hidden, 16K tokens, BLOCK_M = 128,
    132 SMs): heaviest first gains 1.1% at N = 4K (64 programs of a head-batch) and 6.5% at 16K; 22% in the toy."""
    def gain(n, batch_heads, sms, block_m=128):
        natural = perf_lab.makespan(perf_lab.causal_work(n, batch_heads, block_m, False), sms)
        heaviest = perf_lab.makespan(perf_lab.causal_work(n, batch_heads, block_m, True), sms)
        return natural / heaviest - 1

    assert round(gain(4096, 64, 132), 3) == 0.011
    assert round(gain(16384, 16, 132), 3) == 0.065
    assert round(gain(32 * 16, 1, 12, block_m=16), 2) == 0.22  # 32 tiles on 12 SMs: 60 against 49


def test_live_tiles_are_a_lower_bound_on_the_compilers_registers():
    rows = [r for r in csv.DictReader(open(ROOT / "benchmarks" / "compile" / "bf16_causal_triton3.9.csv"))
            if (r["arch"], r["kind"], r["status"], r["spill_bytes"]) == ("90", "fwd", "ok", "0")]
    assert len(rows) > 30
    for r in rows:
        live = perf_lab.live_tile_registers(int(r["block_m"]), int(r["block_n"]), int(r["num_warps"]),
                                            int(r["head_dim"]))
        low, high = (26, 84) if r["tma"] == "True" else (35, 142)    # a descriptor holds the TMA loads' addresses
        assert low <= int(r["registers"]) - live <= high, r


def test_no_recorded_timings_is_none(tmp_path):
    assert perf_lab.recorded_forward_timings(tmp_path) is None
    run = tmp_path / "H200_2026-12-01"
    run.mkdir()
    with open(run / "flash_attention.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, ["provider", "mode", "dtype", "causal", "head_dim", "n", "config_ms"])
        writer.writeheader()
        writer.writerow(dict(provider="triton", mode="fwd", dtype="bf16", causal="True", head_dim="128", n="4096",
                             config_ms="fwd 128x128 w8 s3=0.5000; fwd 64x64 w4 s3=0.7000"))
    assert perf_lab.recorded_forward_timings(tmp_path) == ("H200_2026-12-01", {(128, 128, 8, 3): 0.5,
                                                                               (64, 64, 4, 3): 0.7})


def test_forward_hbm_bytes_counts_q_and_o_once_and_k_v_once_per_query_tile():
    # 256 queries in 2 tiles of 128, causal: the tiles read 128 and 256 keys; non-causal, 256 each.
    d, n = 64, 256
    assert perf_lab.forward_hbm_bytes(128, n, d) == (2 * n * d + 2 * (128 + 256) * d) * 2
    assert perf_lab.forward_hbm_bytes(128, n, d, causal=False) == (2 * n * d + 2 * 2 * n * d) * 2
    assert perf_lab.forward_hbm_bytes(64, n, d) > perf_lab.forward_hbm_bytes(128, n, d)   # more query tiles, more K/V reads
