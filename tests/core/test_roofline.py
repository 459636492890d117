"""The datasheet model of notebook 00 (GPU figures, the arithmetic intensity of attention's steps), attention's
FLOP counts and its HBM traffic in the FlashAttention paper's model."""

import pytest

from pagedlab import roofline


def test_t4_has_no_bf16_and_its_peak_is_fp16():
    t4 = roofline.GPUS["T4"]
    assert not t4.bf16 and t4.fp16_tflops == 65
    assert all(roofline.GPUS[name].bf16 for name in ("A100", "H100", "H200"))


def test_one_block_gets_less_shared_memory_than_the_sm_has():
    for spec in roofline.GPUS.values():
        assert spec.max_smem_kib_per_block < spec.sram_kib_per_sm
    assert (roofline.GPUS["A100"].max_smem_kib_per_block, roofline.GPUS["H100"].max_smem_kib_per_block) == (163, 227)
    assert roofline.GPUS["H100"].register_kib_per_sm == 256


@pytest.mark.parametrize("d", [64, 128])
def test_qk_intensity_tends_to_d_however_long_the_sequence(d):
    """Writing the N x N scores keeps Q K^T memory-bound: its intensity approaches d FLOP/byte (bf16), never more."""
    intensities = [f / b for f, b in (roofline.attention_steps(n, d)["S = Q K^T"] for n in (1024, 16384, 1 << 20))]
    assert intensities == sorted(intensities) and all(i < d for i in intensities)
    assert intensities[-1] > 0.99 * d
    assert intensities[-1] < roofline.GPUS["H100"].ridge_flop_per_byte


def test_attention_flops():
    assert roofline.attention_flops(1, 1, 1024, 1024, 64, causal=False) == 4 * 1024 * 1024 * 64
    assert roofline.attention_flops(2, 3, 1024, 1024, 64, causal=True, mode="fwd+bwd") == 3.5 * 2 * 3 * 2 * 1024 * 1024 * 64
    with pytest.raises(ValueError, match="mode"):
        roofline.attention_flops(1, 1, 8, 8, 16, False, mode="backward")
    with pytest.raises(ValueError, match="count"):
        roofline.attention_flops(1, 1, 8, 8, 16, False, count="ours")


def test_kernel_flop_count_matches_the_products_the_backward_kernels_run():
    """count="kernel" must follow the kernels: one tl.dot per matrix product in each loop body."""
    import inspect

    from pagedlab.kernels import flash_backward, flash_forward

    def products(fn):
        return inspect.getsource(fn.fn).count("tl.dot(")

    fwd = products(flash_forward.fwd_tiles)
    bwd = products(flash_backward.dkdv_tiles) + products(flash_backward.dq_tiles)
    assert (fwd, bwd) == (2, 7)
    one = roofline.attention_flops(1, 1, 256, 256, 64, causal=False) / fwd  # one product
    assert roofline.attention_flops(1, 1, 256, 256, 64, causal=False, mode="bwd", count="kernel") == bwd * one
    assert roofline.attention_flops(1, 1, 256, 256, 64, causal=False, mode="bwd") == 5 * one  # the conventional 2.5x


# --------------------------------------------------------------------------------------------------
# HBM traffic, standard against FlashAttention-2


def test_hbm_traffic_counts_standard_attention_exactly():
    t = roofline.attention_hbm_traffic(1000, 64, 100 * 1024, bytes_per_element=2, batch_heads=3)
    assert t.standard == 3 * 2 * (4 * 1000 * 64 + 4 * 1000 * 1000)
    assert (t.block_m, t.block_n) == (200, 64)  # ceil(51200 / 256) and min(200, d)


def test_hbm_traffic_counts_flash_attention_exactly():
    # 4 query tiles of 25 rows, each reading all 100 keys' K and V; Q read and O written once; lse in fp32.
    t = roofline.attention_hbm_traffic(100, 8, 10**6, bytes_per_element=2, block_m=25, block_n=10)
    assert t.flash == 2 * (2 * 100 * 8 + 4 * 2 * 100 * 8) + 4 * 100


def test_flash_traffic_is_less_but_still_quadratic():
    small, large = (roofline.attention_hbm_traffic(n, 128, 192 * 1024) for n in (8192, 16384))
    assert large.flash < large.standard and small.flash < small.standard
    assert 3.8 < large.flash / small.flash <= 4.0  # Θ(N²d²/M): doubling N quadruples it, not doubles it
    assert 3.8 < large.standard / small.standard <= 4.0


def test_causal_halves_flash_traffic_only():
    full = roofline.attention_hbm_traffic(4096, 64, 100 * 1024)
    causal = roofline.attention_hbm_traffic(4096, 64, 100 * 1024, causal=True)
    assert causal.standard == full.standard
    assert 0.45 < causal.flash / full.flash < 0.6


def test_more_sram_means_less_flash_traffic():
    traffic = [roofline.attention_hbm_traffic(8192, 64, m * 1024).flash for m in (32, 64, 128, 256)]
    assert traffic == sorted(traffic, reverse=True) and traffic[0] > 1.8 * traffic[-1]


def test_standard_traffic_agrees_with_the_roofline_steps():
    steps = roofline.attention_steps(512, 64, bytes_per_element=2)
    assert roofline.attention_hbm_traffic(512, 64, 100 * 1024).standard == sum(b for _, b in steps.values())


@pytest.mark.parametrize("name, call", [
    ("seq_len", lambda: roofline.attention_hbm_traffic(0, 64, 100_000)),
    ("sram_bytes", lambda: roofline.attention_hbm_traffic(1024, 64, 100)),
])
def test_hbm_traffic_refuses_a_bad_size_naming_it(name, call):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()
