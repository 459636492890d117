"""The Triton FlashAttention kernels against the PyTorch references of Part I.

On a CPU these run in Triton's interpreter (small shapes, float32); on a GPU the same tests run the
compiled, autotuned kernels, and the tests marked ``gpu`` add half precision and long sequences.
"""

from __future__ import annotations

import math

import pytest
import torch

from pagedlab import device
from pagedlab.attention import attention_scores, naive_attention, tiled_attention
from pagedlab.kernels import flash_attention as fa, flash_autotune as tune
from pagedlab.kernels.flash_attention import flash_attention, flash_attention_forward
from pagedlab.trace import TileTrace

DEV = device.DEVICE
gpu = pytest.mark.gpu
needs_gpu = pytest.mark.skipif(not device.ON_GPU, reason="needs an NVIDIA GPU with compute capability >= 8.0")


def make_qkv(batch, heads, kv_heads, n_q, n_k, d, dtype=torch.float32, scale=1.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, heads, n_q, d, generator=g) * scale
    k = torch.randn(batch, kv_heads, n_k, d, generator=g) * scale
    v = torch.randn(batch, kv_heads, n_k, d, generator=g)
    return q.to(DEV, dtype), k.to(DEV, dtype), v.to(DEV, dtype)


def expand_kv(q, t):
    """Repeat K/V heads so that naive attention (one K/V head per query head) can check GQA."""
    return t.repeat_interleave(q.shape[1] // t.shape[1], dim=1)


def reference(q, k, v, causal, sm_scale=None):
    """(out, lse) in float64 from the definition."""
    q64, k64, v64 = q.double(), expand_kv(q, k).double(), expand_kv(q, v).double()
    out = naive_attention(q64, k64, v64, causal=causal, sm_scale=sm_scale)
    lse = torch.logsumexp(attention_scores(q64, k64, causal=causal, sm_scale=sm_scale), dim=-1)
    return out, lse


def assert_lse_close(lse, ref_lse, atol):
    # Rows that see no key have lse = -inf in both; compare the finite ones.
    assert torch.equal(torch.isinf(lse.cpu()), torch.isinf(ref_lse.cpu())), "lse is -inf for different rows"
    finite = torch.isfinite(ref_lse)
    torch.testing.assert_close(lse[finite].double(), ref_lse[finite], atol=atol, rtol=1e-5)


# (batch, heads, kv_heads, n_q, n_k, head_dim): odd lengths, lengths that differ both ways, GQA, MQA.
SHAPES = [
    (1, 1, 1, 1, 1, 16),
    (2, 2, 2, 17, 17, 32),
    (1, 2, 2, 129, 129, 64),
    (1, 1, 1, 257, 257, 16),
    (1, 2, 2, 33, 70, 32),     # n_q < n_k: a prompt appended to a cache
    (1, 2, 2, 70, 33, 32),     # n_q > n_k: causal rows that see no key
    (2, 4, 2, 40, 40, 32),     # GQA, two query heads per K/V head
    (1, 4, 1, 33, 65, 16),     # MQA
    (1, 1, 1, 65, 47, 128),
]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_forward_matches_definition(shape, causal):
    q, k, v = make_qkv(*shape)
    out, lse = flash_attention_forward(q, k, v, causal=causal)
    ref_out, ref_lse = reference(q, k, v, causal)
    assert out.dtype == q.dtype and out.shape == q.shape and lse.dtype == torch.float32
    torch.testing.assert_close(out.double(), ref_out, atol=2e-5, rtol=1e-4)
    assert_lse_close(lse, ref_lse, atol=2e-5)


def test_forward_matches_tiled_attention_and_sdpa():
    q, k, v = make_qkv(1, 2, 2, 45, 45, 32)
    out, lse = flash_attention_forward(q, k, v, causal=True)
    tiled_out, tiled_lse = tiled_attention(q, k, v, causal=True, block_m=16, block_n=16)
    torch.testing.assert_close(out, tiled_out, atol=2e-5, rtol=1e-4)
    torch.testing.assert_close(lse, tiled_lse, atol=2e-5, rtol=1e-5)
    sdpa = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, sdpa, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", [(1, 2, 2, 17, 17, 16), (1, 2, 2, 70, 33, 32), (1, 2, 2, 33, 70, 32),
                                   (2, 4, 2, 40, 40, 32), (1, 4, 1, 33, 65, 16), (1, 1, 1, 65, 47, 128),
                                   (1, 1, 1, 20, 20, 256)],
                         ids=lambda s: "x".join(map(str, s)))
def test_gradients_match_autograd_through_naive(shape, causal):
    q, k, v = make_qkv(*shape)
    d_out = torch.randn(q.shape, generator=torch.Generator().manual_seed(1)).to(DEV)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    flash_attention(*leaves, causal=causal).backward(d_out)
    ref_leaves = [t.double().requires_grad_() for t in (q, k, v)]
    rq, rk, rv = ref_leaves
    naive_attention(rq, expand_kv(rq, rk), expand_kv(rq, rv), causal=causal).backward(d_out.double())
    for name, got, ref in zip("qkv", leaves, ref_leaves):
        assert got.grad.shape == got.shape, f"d{name} has the wrong shape"
        torch.testing.assert_close(got.grad.double(), ref.grad, atol=5e-5, rtol=1e-4, msg=lambda m: f"d{name}: {m}")


@pytest.mark.parametrize("blocks", [(16, 32), (32, 16), (16, 16)], ids=lambda b: f"m{b[0]}n{b[1]}")
def test_tiles_of_other_shapes(blocks, monkeypatch):
    """Query and key tiles of different sizes: the causal ranges of every kernel must still line up."""
    for kind in ("fwd", "dkdv", "dq"):
        monkeypatch.setitem(fa.FIXED_BLOCKS, kind, blocks)
    q, k, v = make_qkv(1, 1, 1, 50, 37, 16)
    d_out = torch.randn(q.shape, generator=torch.Generator().manual_seed(2)).to(DEV)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out = flash_attention(*leaves, causal=True)
    out.backward(d_out)
    ref_leaves = [t.double().requires_grad_() for t in (q, k, v)]
    ref_out = naive_attention(*ref_leaves, causal=True)
    ref_out.backward(d_out.double())
    torch.testing.assert_close(out.double(), ref_out, atol=2e-5, rtol=1e-4)
    for got, ref in zip(leaves, ref_leaves):
        torch.testing.assert_close(got.grad.double(), ref.grad, atol=5e-5, rtol=1e-4)


def test_rows_that_see_no_key_give_zero_and_finite_gradients():
    q, k, v = make_qkv(1, 1, 1, 40, 10, 16)  # causal: the first 30 queries see no key
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out = flash_attention(*leaves, causal=True)
    out.sum().backward()
    assert torch.all(out[0, 0, :30] == 0)
    assert all(torch.isfinite(t.grad).all() for t in leaves)
    assert torch.all(leaves[0].grad[0, 0, :30] == 0)


@pytest.mark.parametrize("magnitude", [30.0, 300.0])
def test_large_scores_stay_finite_and_exact(magnitude):
    """Scores in the thousands: exp would overflow without the running max."""
    q, k, v = make_qkv(1, 1, 1, 50, 50, 32, scale=math.sqrt(magnitude))
    out, lse = flash_attention_forward(q, k, v, causal=True)
    ref_out, ref_lse = reference(q, k, v, True)
    assert torch.isfinite(out).all() and torch.isfinite(lse).all()
    torch.testing.assert_close(out.double(), ref_out, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(lse.double(), ref_lse, atol=1e-4 * magnitude, rtol=1e-5)


def test_custom_scale_and_strided_inputs():
    # (batch, seq, heads, d) transposed to (batch, heads, seq, d): strided, last dim contiguous.
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 21, 2, 16, generator=g).to(DEV).transpose(1, 2) for _ in range(3))
    assert not q.is_contiguous()
    out = flash_attention(q, k, v, causal=True, sm_scale=0.3)
    ref = naive_attention(q.double(), k.double(), v.double(), causal=True, sm_scale=0.3)
    torch.testing.assert_close(out.double(), ref, atol=2e-5, rtol=1e-4)
    # A last dim that is not contiguous is copied first, with the same result.
    q_t = q.contiguous().transpose(2, 3).contiguous().transpose(2, 3)
    assert q_t.stride(-1) != 1
    torch.testing.assert_close(flash_attention(q_t, k, v, causal=True, sm_scale=0.3), out)


def test_rows_of_one_head_past_int32_are_made_contiguous():
    # The kernels offset rows in int32: 128K tokens of 128 heads of 128, in (batch, seq, heads, d) layout, would
    # put the last row of a head past 2**31. Meta tensors have strides but no memory.
    t = torch.empty(1, 2**17, 128, 128, device="meta").transpose(1, 2)
    assert t.shape[2] * t.stride(2) == 2**31
    assert fa._unit_stride(t).stride() == (2**31, 2**24, 128, 1)
    small = torch.empty(1, 2**10, 128, 128, device="meta").transpose(1, 2)
    assert fa._unit_stride(small) is small  # strided but in range: no copy


def test_only_some_inputs_need_gradients():
    q, k, v = make_qkv(1, 1, 1, 20, 20, 16)
    q.requires_grad_()
    flash_attention(q, k, v).sum().backward()
    assert q.grad is not None and k.grad is None


@pytest.mark.skipif(not device.INTERPRET, reason="on a GPU the tests marked gpu cover half precision")
def test_half_precision_in_the_interpreter():
    q, k, v = make_qkv(1, 2, 2, 33, 33, 32, dtype=torch.float16)
    out = flash_attention(q, k, v, causal=True)
    ref, _ = reference(q, k, v, True)
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.double(), ref, atol=2e-3, rtol=1e-2)


# ----------------------------------------------------------------------------------------------------
# Trace mode


@pytest.mark.parametrize("n_q,n_k,block_m,block_n", [(17, 17, 16, 16), (70, 33, 32, 16), (33, 70, 16, 32),
                                                     (100, 100, 32, 32), (50, 3, 16, 16)])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_trace_is_the_schedule_of_tiled_attention(n_q, n_k, block_m, block_n, causal):
    q, k, v = make_qkv(1, 1, 1, n_q, n_k, 16)
    kernel_trace, torch_trace = TileTrace(), TileTrace()
    flash_attention_forward(q, k, v, causal=causal, block_m=block_m, block_n=block_n, trace=kernel_trace)
    tiled_attention(q, k, v, causal=causal, block_m=block_m, block_n=block_n, trace=torch_trace)
    assert kernel_trace.source == "triton" and kernel_trace.n_q_tiles == torch_trace.n_q_tiles
    got = [(s.q_tile, s.k_tile, s.kind) for s in kernel_trace.steps]
    assert got == [(s.q_tile, s.k_tile, s.kind) for s in torch_trace.steps]
    assert all(s.m is None for s in kernel_trace.steps)
    # Every tile the kernel did not load is one the causal mask hides completely.
    loaded = {(s.q_tile, s.k_tile) for s in kernel_trace.steps}
    for i in range(kernel_trace.n_q_tiles):
        for j in range(kernel_trace.n_k_tiles):
            assert ((i, j) in loaded) == (kernel_trace.kind_of(i, j) != "skipped")


def test_trace_skips_half_the_tiles_of_a_long_causal_sequence():
    q, k, v = make_qkv(1, 1, 1, 128, 128, 16)
    trace = TileTrace()
    flash_attention_forward(q, k, v, causal=True, block_m=16, block_n=16, trace=trace)
    kinds = [s.kind for s in trace.steps]
    assert kinds.count("masked") == 8 and kinds.count("full") == 28  # 8 diagonal tiles, 7*8/2 below


def test_trace_from_codes_reads_visit_order():
    codes = torch.tensor([[0, -1, -1], [0, 3, -1]])
    trace = fa.trace_from_codes(codes, n_q=20, n_k=40, block_m=16, block_n=16, causal=True)
    assert [(s.q_tile, s.k_tile, s.kind) for s in trace.steps] == [(0, 0, "full"), (1, 0, "full"), (1, 1, "masked")]


# ----------------------------------------------------------------------------------------------------
# Bad input


def _bad_calls():
    q, k, v = make_qkv(1, 2, 2, 8, 8, 16)
    other = "cpu" if device.ON_GPU else "meta"
    return [
        ("list", lambda: flash_attention(q.tolist(), k, v), TypeError, "q must be a torch.Tensor"),
        ("3-D", lambda: flash_attention(q[0], k, v), ValueError, r"q must have shape \(batch, heads"),
        ("k vs v", lambda: flash_attention(q, k, v[:, :, :5]), ValueError, "k and v must have the same shape"),
        ("head dim", lambda: flash_attention(q, k[..., :8], v[..., :8]), ValueError, "batch and head_dim"),
        ("heads", lambda: flash_attention(q[:, :1].expand(1, 3, 8, 16), k, v), ValueError, "multiple of the number"),
        ("unsupported d", lambda: flash_attention(*(t[..., :12] for t in (q, k, v))), ValueError, "head_dim 12"),
        ("dtype mix", lambda: flash_attention(q, k.half(), v), TypeError, "one dtype"),
        ("int dtype", lambda: flash_attention(*(t.int() for t in (q, k, v))), TypeError, "float16, bfloat16"),
        ("device", lambda: flash_attention(q, k.to(other), v), ValueError, "one device"),
        ("causal", lambda: flash_attention(q, k, v, causal="yes"), TypeError, "causal must be"),
        ("scale type", lambda: flash_attention(q, k, v, sm_scale="0.1"), TypeError, "sm_scale"),
        ("scale value", lambda: flash_attention(q, k, v, sm_scale=-1.0), ValueError, "sm_scale"),
        ("empty", lambda: flash_attention(q[:, :, :0], k, v), ValueError, "empty input"),
        ("block", lambda: flash_attention_forward(q, k, v, block_m=24, block_n=16), ValueError, "block_m"),
        ("half block", lambda: flash_attention_forward(q, k, v, block_m=16), ValueError, "block_n"),
        ("float block", lambda: flash_attention_forward(q, k, v, block_m=16.0, block_n=16), TypeError,
         "block_m must be an int"),
    ]


@pytest.mark.parametrize("case", range(len(_bad_calls())), ids=[c[0] for c in _bad_calls()])
def test_bad_input_names_the_argument(case):
    _, call, error, message = _bad_calls()[case]
    with pytest.raises(error, match=message):
        call()


@pytest.mark.skipif(not device.INTERPRET, reason="the interpreter's limitation only")
def test_bfloat16_is_refused_in_the_interpreter():
    q, k, v = make_qkv(1, 1, 1, 8, 8, 16, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="bfloat16"):
        flash_attention(q, k, v)


TILE_SHAPES = sorted({(kind, bm, bn) for kind, space in tune.CONFIG_SPACE.items() for bm, bn, _, _ in space})


def _assert_matches_naive_with_gradients(n_q, n_k, head_dim, causal, seed, grad_atol):
    """flash_attention's output and its gradients against autograd through naive attention in float64 (GQA 2:1)."""
    q, k, v = make_qkv(1, 2, 1, n_q, n_k, head_dim, seed=seed)
    d_out = torch.randn(q.shape, generator=torch.Generator().manual_seed(3)).to(DEV)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out = flash_attention(*leaves, causal=causal)
    out.backward(d_out)
    ref_leaves = [t.double().requires_grad_() for t in (q, k, v)]
    rq, rk, rv = ref_leaves
    ref = naive_attention(rq, expand_kv(rq, rk), expand_kv(rq, rv), causal=causal)
    ref.backward(d_out.double())
    torch.testing.assert_close(out.double(), ref, atol=2e-5, rtol=1e-4)
    for got, want in zip(leaves, ref_leaves):
        torch.testing.assert_close(got.grad.double(), want.grad, atol=grad_atol, rtol=1e-4)


@pytest.mark.parametrize("kind,block_m,block_n", TILE_SHAPES, ids=lambda x: str(x))
def test_every_tile_shape_of_the_search_space_is_correct_in_the_interpreter(kind, block_m, block_n, monkeypatch):
    """Warps and stages only change how a GPU schedules a program; the tile shapes change the code's ranges."""
    monkeypatch.setitem(fa.FIXED_BLOCKS, kind, (block_m, block_n))
    for causal, (n_q, n_k) in ((True, (150, 131)), (False, (70, 150))):
        _assert_matches_naive_with_gradients(n_q, n_k, 16, causal, seed=n_q, grad_atol=5e-5)


LARGEST_TILES = [(kind, *max({(bm, bn) for bm, bn, _, _ in space}, key=lambda t: t[0] * t[1]))
                 for kind, space in tune.CONFIG_SPACE.items()]


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("kind,block_m,block_n", LARGEST_TILES, ids=lambda x: str(x))
def test_the_largest_tiles_are_correct_at_the_head_dims_the_benchmark_uses(kind, block_m, block_n, head_dim,
                                                                           monkeypatch):
    """The test above runs every tile shape at d = 16; the largest tile of each kernel also at d = 64 and 128
    (the others at those head dims only on a GPU, in the tests marked gpu)."""
    monkeypatch.setitem(fa.FIXED_BLOCKS, kind, (block_m, block_n))
    _assert_matches_naive_with_gradients(150, 131, head_dim, True, seed=head_dim, grad_atol=1e-4)


# ----------------------------------------------------------------------------------------------------
# GPU only: compiled, autotuned kernels in half precision at real lengths


@gpu
@needs_gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("n,d", [(1024, 64), (2047, 128), (777, 256)])
def test_gpu_half_precision_matches_sdpa(dtype, causal, n, d):
    if dtype == torch.bfloat16 and not torch.cuda.is_bf16_supported():
        pytest.skip("bf16 not supported on this GPU")
    q, k, v = make_qkv(2, 4, 4, n, n, d, dtype=dtype)
    d_out = torch.randn_like(q)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out = flash_attention(*leaves, causal=causal)
    out.backward(d_out)
    ref_leaves = [t.float().requires_grad_() for t in (q, k, v)]
    ref = torch.nn.functional.scaled_dot_product_attention(*ref_leaves, is_causal=causal)
    ref.backward(d_out.float())
    tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
    torch.testing.assert_close(out.float(), ref, atol=tol, rtol=tol)
    for got, want in zip(leaves, ref_leaves):
        torch.testing.assert_close(got.grad.float(), want.grad, atol=4 * tol, rtol=4 * tol)


def _errors_against_float64(fn, dtype, n, d, causal=True, seed=0):
    """Max |fn - exact| for O, dQ, dK, dV, with inputs drawn in float64 and rounded to ``dtype``."""
    g = torch.Generator().manual_seed(seed)
    q, k, v, d_out = (torch.randn(2, 4, n, d, generator=g, dtype=torch.float64).to(DEV) for _ in range(4))

    def run(f, *tensors):
        leaves = [t.detach().clone().requires_grad_() for t in tensors[:3]]
        out = f(*leaves, causal)
        out.backward(tensors[3])
        return [out] + [t.grad for t in leaves]

    exact = run(lambda q, k, v, c: naive_attention(q, k, v, causal=c), q, k, v, d_out)
    got = run(fn, *(t.to(dtype) for t in (q, k, v, d_out)))
    return [(a.double() - e).abs().max().item() for a, e in zip(got, exact)]


def _sdpa(q, k, v, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def _flash(q, k, v, causal):
    return flash_attention(q, k, v, causal=causal)


def test_float32_error_is_within_twice_pytorchs_own():
    """The relative rule of FlashAttention's tests, on the CPU path: float32 against float64."""
    ours = _errors_against_float64(_flash, torch.float32, 72, 32)
    sdpa = _errors_against_float64(_sdpa, torch.float32, 72, 32)
    assert all(o <= 2 * s + 1e-6 for o, s in zip(ours, sdpa)), list(zip("O dQ dK dV".split(), ours, sdpa))


@gpu
@needs_gpu
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_gpu_bf16_error_is_within_twice_sdpas_own(causal):
    """The path the benchmark times: bf16, d = 128. Our error against float64 at most twice SDPA-bf16's + eps
    (the rule of flash-attention's tests/test_flash_attn.py), for the output and every gradient."""
    if not torch.cuda.is_bf16_supported():
        pytest.skip("bf16 not supported on this GPU")
    ours = _errors_against_float64(_flash, torch.bfloat16, 2048, 128, causal)
    sdpa = _errors_against_float64(_sdpa, torch.bfloat16, 2048, 128, causal)
    assert all(o <= 2 * s + 1e-3 for o, s in zip(ours, sdpa)), list(zip("O dQ dK dV".split(), ours, sdpa))


@gpu
@needs_gpu
def test_gpu_float32_is_ieee_not_tf32():
    q, k, v = make_qkv(1, 2, 2, 1000, 1000, 64)
    out, lse = flash_attention_forward(q, k, v, causal=True)
    ref_out, ref_lse = reference(q, k, v, True)
    # TF32 would give errors near 1e-3; fp32 products stay near 1e-6.
    torch.testing.assert_close(out.double(), ref_out, atol=2e-5, rtol=1e-4)
    assert_lse_close(lse, ref_lse, atol=2e-5)


@gpu
@needs_gpu
def test_gpu_gqa_long_sequence_with_trace():
    q, k, v = make_qkv(1, 8, 2, 3000, 4100, 128, dtype=torch.float16)
    trace = TileTrace()
    out, _ = flash_attention_forward(q, k, v, causal=True, trace=trace)
    ref, _ = reference(q, k, v, True)
    torch.testing.assert_close(out.double(), ref, atol=4e-3, rtol=4e-3)
    assert trace.block_m == fa.TRACE_BLOCKS[0]
    assert all(trace.kind_of(s.q_tile, s.k_tile) == s.kind for s in trace.steps)


# ----------------------------------------------------------------------------------------------------
# The benchmark script: it only runs on a GPU, so check here what can be checked without one


def _benchmark_module():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[2] / "benchmarks" / "flash_attention.py"
    spec = importlib.util.spec_from_file_location("flash_attention_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_arguments():
    bench = _benchmark_module()
    args = bench.parse_args([])
    assert args.seq_lens == [1024, 2048, 4096, 8192, 16384] and args.head_dims == [64, 128]
    quick = bench.parse_args(["--quick"])
    assert quick.seq_lens == [1024, 4096] and quick.dtypes == ["bf16"]


@pytest.mark.skipif(device.ON_GPU, reason="checks the refusal on a machine without a usable GPU")
def test_benchmark_refuses_without_a_gpu():
    with pytest.raises(SystemExit, match="needs"):
        _benchmark_module().main(["--quick"])


def test_benchmark_plot_and_summary(tmp_path):
    bench = _benchmark_module()
    rows = []
    for n in (1024, 4096):
        for provider in bench.PROVIDERS:
            for mode in ("fwd", "bwd", "fwd+bwd"):
                ms = {"triton": 2.0, "sdpa-flash": 3.0}.get(provider, 5.0)
                rows.append(dict(gpu="GPU", dtype="bf16", causal="True", head_dim="128", n=str(n), batch="1",
                                 heads="16", mode=mode, provider=provider, ms=str(ms), tflops="100.0",
                                 peak_mib="10.0", status="ok"))
    bench.plot(rows, tmp_path / "plot.png")
    assert (tmp_path / "plot.png").stat().st_size > 0
    text = bench.summary(rows)
    assert "| 4096 | 1.50x | 1.50x |" in text and "| 1024 |" not in text


@pytest.mark.skipif(not hasattr(__import__("triton").language, "make_tensor_descriptor"),
                    reason="this Triton has no tensor descriptors (3.2): the plain-pointer path is the only one")
@pytest.mark.parametrize("blocks", [(32, 32), (64, 16)], ids=lambda b: f"m{b[0]}n{b[1]}")
def test_tensor_descriptor_forward_matches_the_pointer_forward(blocks, monkeypatch):
    """The TMA variant (K and V through tensor descriptors), emulated by the interpreter: same results, ragged
    lengths included (the descriptor zero-fills rows past n_k), GQA and a causal n_q > n_k."""
    cases = [((1, 2, 1, 70, 45, 32), True), ((2, 2, 2, 33, 50, 16), False)]
    for (batch, heads, kv_heads, n_q, n_k, d), causal in cases:
        q, k, v = make_qkv(batch, heads, kv_heads, n_q, n_k, d, seed=n_q)
        monkeypatch.setattr(fa, "USE_TMA", False)
        plain_out, plain_lse = flash_attention_forward(q, k, v, causal=causal, block_m=blocks[0], block_n=blocks[1])
        monkeypatch.setattr(fa, "USE_TMA", True)
        assert fa._use_tma(q, k, v)
        out, lse = flash_attention_forward(q, k, v, causal=causal, block_m=blocks[0], block_n=blocks[1])
        ref_out, ref_lse = reference(q, k, v, causal)
        torch.testing.assert_close(out.double(), ref_out, atol=2e-5, rtol=1e-4)
        assert_lse_close(lse, ref_lse, atol=2e-5)
        torch.testing.assert_close(out, plain_out, atol=1e-6, rtol=1e-6)


def test_tensor_descriptors_are_refused_for_rows_off_a_16_byte_boundary(monkeypatch):
    monkeypatch.setattr(fa, "USE_TMA", True)
    q, k, v = make_qkv(1, 1, 1, 8, 8, 16)
    odd = torch.randn(1, 1, 8, 17, device=DEV)[..., :16]  # rows 17 floats apart: 68 bytes
    assert not fa._use_tma(q, odd, odd)


def test_benchmark_records_the_autotuned_configuration_and_every_time(monkeypatch):
    """What autotuning chose and what it measured, as the benchmark writes them into each row (a stand-in for the
    autotuners here: on a CPU nothing is autotuned)."""
    from types import SimpleNamespace

    import triton

    chosen = triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=3)
    other = triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=3)
    monkeypatch.setattr(tune, "_TUNED", {"fwd": SimpleNamespace(best_config=chosen,
                                                              configs_timings={chosen: [0.5, 0.4, 0.6], other: 0.75})})
    config, config_ms = _benchmark_module().tuned_configs(("fwd", "dkdv"))
    assert config == "fwd 128x64 w8 s3"
    assert config_ms == "fwd 128x64 w8 s3=0.5000; fwd 64x64 w4 s3=0.7500"


def test_the_forward_folds_the_softmax_scale_into_one_multiply_add():
    """The unmasked tiles compute exp2(qk * qk_scale - m) (one FMA per score), not a scaled copy of the scores."""
    import inspect

    from pagedlab.kernels import flash_forward

    source = inspect.getsource(flash_forward.fwd_tiles.fn)
    assert "tl.exp2(qk * qk_scale - m_new[:, None])" in source
    assert "tl.max(qk, 1) * qk_scale" in source
