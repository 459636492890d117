"""pagedlab.attention: the references agree with each other and with PyTorch, and reject bad input.

``naive_attention`` is checked against ``torch.nn.functional.scaled_dot_product_attention``; ``tiled_attention``
against both, over tile sizes that do not divide the lengths, causal and not, query and key lengths that
differ, half-precision inputs and huge scores. A common per-chunk softmax is shown wrong.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from pagedlab.attention import (
    attention_scores,
    causal_mask,
    chunked_attention_without_rescaling,
    naive_attention,
    max_error,
    peak_tensor_bytes,
    tiled_attention,
)
from pagedlab.trace import TileTrace, tile_kind


def qkv(b: int, h: int, n_q: int, n_k: int, d: int, dtype: torch.dtype = torch.float32, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, h, n_q, d, generator=g, dtype=torch.float64)
    k = torch.randn(b, h, n_k, d, generator=g, dtype=torch.float64)
    v = torch.randn(b, h, n_k, d, generator=g, dtype=torch.float64)
    return q.to(dtype), k.to(dtype), v.to(dtype)


def sdpa(q, k, v, causal: bool, scale: float | None = None):
    """PyTorch's attention with the bottom-right causal mask made explicit (its is_causal is top-left)."""
    mask = causal_mask(q.shape[-2], k.shape[-2]) if causal else None
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)


def seeing_rows(n_q: int, n_k: int, causal: bool) -> torch.Tensor:
    """Rows that see at least one key (all of them unless causal with n_q > n_k)."""
    return causal_mask(n_q, n_k).any(dim=-1) if causal else torch.ones(n_q, dtype=torch.bool)


# --------------------------------------------------------------------------------------------------
# causal_mask and tile_kind


def test_causal_mask_is_lower_triangle_when_square():
    assert torch.equal(causal_mask(5, 5), torch.ones(5, 5, dtype=torch.bool).tril())


def test_causal_mask_is_bottom_right_aligned():
    # 2 new queries after 3 cached keys: the first sees keys 0..3, the last sees all 5.
    assert causal_mask(2, 5).tolist() == [[True, True, True, True, False], [True] * 5]
    # More queries than keys: the first two rows see nothing.
    assert causal_mask(4, 2).tolist() == [[False, False], [False, False], [True, False], [True, True]]


@settings(max_examples=60, deadline=None)
@given(n_q=st.integers(1, 30), n_k=st.integers(1, 30), block_m=st.integers(1, 9), block_n=st.integers(1, 9),
       causal=st.booleans())
def test_tile_kind_agrees_with_the_mask(n_q, n_k, block_m, block_n, causal):
    mask = causal_mask(n_q, n_k) if causal else torch.ones(n_q, n_k, dtype=torch.bool)
    for i in range(-(-n_q // block_m)):
        for j in range(-(-n_k // block_n)):
            tile = mask[i * block_m:(i + 1) * block_m, j * block_n:(j + 1) * block_n]
            expected = "full" if tile.all() else "skipped" if not tile.any() else "masked"
            assert tile_kind(i, j, n_q, n_k, block_m, block_n, causal) == expected, (i, j)


# --------------------------------------------------------------------------------------------------
# naive_attention against PyTorch


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_q,n_k", [(1, 1), (17, 17), (8, 29), (29, 8), (64, 64)])
def test_naive_matches_sdpa(n_q, n_k, causal):
    q, k, v = qkv(2, 3, n_q, n_k, 16)
    got = naive_attention(q, k, v, causal=causal)
    rows = seeing_rows(n_q, n_k, causal)
    expected = sdpa(q, k, v, causal)
    torch.testing.assert_close(got[..., rows, :], expected[..., rows, :], atol=2e-6, rtol=2e-6)


def test_naive_weights_rows_sum_to_one_and_respect_the_mask():
    q, k, v = qkv(1, 2, 12, 12, 8)
    out, weights = naive_attention(q, k, v, causal=True, return_weights=True)
    assert weights.dtype == torch.float32 and weights.shape == (1, 2, 12, 12)
    torch.testing.assert_close(weights.sum(-1), torch.ones(1, 2, 12))
    assert (weights[..., ~causal_mask(12, 12)] == 0).all()
    torch.testing.assert_close(out, weights @ v)


def test_rows_that_see_no_key_give_zero_and_minus_inf_lse():
    # n_q > n_k with causal: the first n_q - n_k queries have no visible key.
    q, k, v = qkv(1, 1, 9, 4, 8)
    naive = naive_attention(q, k, v, causal=True)
    trace = TileTrace()
    out, lse = tiled_attention(q, k, v, causal=True, block_m=2, block_n=3, trace=trace)
    assert torch.isfinite(naive).all() and torch.isfinite(out).all()
    # Row 4 sees no key but shares tile (2, 0) with row 5: its running values stay m = -inf, l = 0, out = 0.
    step = next(s for s in trace.steps if (s.q_tile, s.k_tile) == (2, 0))
    assert step.kind == "masked" and step.m[0] == -math.inf and step.l[0] == 0 and step.out[0] == (0.0,) * 8
    assert (naive[..., :5, :] == 0).all() and (out[..., :5, :] == 0).all()
    assert torch.isneginf(lse[..., :5]).all() and torch.isfinite(lse[..., 5:]).all()
    torch.testing.assert_close(out, naive, atol=1e-6, rtol=1e-6)


def test_gradients_flow_through_both_references_without_nan():
    # Row 4 of 9 queries over 4 keys sees no key, yet shares a partly masked tile with row 5.
    q, k, v = (t.requires_grad_() for t in qkv(1, 2, 9, 4, 4, dtype=torch.float64))
    grads_naive = torch.autograd.grad(naive_attention(q, k, v, causal=True).square().sum(), (q, k, v))
    out, _ = tiled_attention(q, k, v, causal=True, block_m=2, block_n=3)
    grads_tiled = torch.autograd.grad(out.square().sum(), (q, k, v))
    for name, a, b in zip("qkv", grads_naive, grads_tiled):
        assert torch.isfinite(a).all(), name
        torch.testing.assert_close(a, b, msg=f"d{name}")


# --------------------------------------------------------------------------------------------------
# tiled_attention against naive_attention and PyTorch


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_q,n_k", [(1, 1), (1, 33), (33, 1), (37, 37), (16, 40), (40, 16), (64, 64)])
@pytest.mark.parametrize("block_m,block_n", [(1, 1), (4, 16), (7, 5), (16, 16), (64, 128)])
def test_tiled_matches_naive_and_sdpa(n_q, n_k, block_m, block_n, causal):
    q, k, v = qkv(2, 2, n_q, n_k, 8)
    out, lse = tiled_attention(q, k, v, causal=causal, block_m=block_m, block_n=block_n)
    assert out.shape == q.shape and out.dtype == q.dtype and lse.shape == q.shape[:-1]
    assert lse.dtype == torch.float32
    torch.testing.assert_close(out, naive_attention(q, k, v, causal=causal), atol=1e-6, rtol=1e-5)
    rows = seeing_rows(n_q, n_k, causal)
    torch.testing.assert_close(out[..., rows, :], sdpa(q, k, v, causal)[..., rows, :], atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(lse, torch.logsumexp(attention_scores(q, k, causal), dim=-1), atol=1e-5, rtol=1e-5)


def test_tiled_accepts_2d_inputs_for_teaching():
    q, k, v = (t[0, 0] for t in qkv(1, 1, 10, 13, 4))
    out, lse = tiled_attention(q, k, v, causal=True, block_m=3, block_n=4)
    assert out.shape == (10, 4) and lse.shape == (10,)
    torch.testing.assert_close(out, naive_attention(q, k, v, causal=True))


def test_explicit_scale_is_used():
    q, k, v = qkv(1, 1, 6, 6, 4)
    out, _ = tiled_attention(q, k, v, sm_scale=0.3, block_m=4, block_n=4)
    torch.testing.assert_close(out, sdpa(q, k, v, False, scale=0.3))
    assert not torch.allclose(out, tiled_attention(q, k, v, block_m=4, block_n=4)[0])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
def test_half_precision_inputs_compute_in_fp32(dtype, causal):
    q, k, v = qkv(1, 2, 33, 33, 16, dtype=dtype)
    out, lse = tiled_attention(q, k, v, causal=causal, block_m=8, block_n=16)
    assert out.dtype == dtype and lse.dtype == torch.float32
    # Same inputs in fp32: the only differences left are the final rounding of out to the half dtype.
    exact = naive_attention(q.float(), k.float(), v.float(), causal=causal)
    eps = torch.finfo(dtype).eps
    torch.testing.assert_close(out.float(), exact, atol=2 * eps, rtol=2 * eps)
    torch.testing.assert_close(naive_attention(q, k, v, causal=causal).float(), exact, atol=2 * eps, rtol=2 * eps)


@pytest.mark.parametrize("causal", [False, True])
def test_huge_scores_stay_finite_and_exact(causal):
    # Scores around 1e3 * d: exp() of them overflows float32 (and float64) unless the max is subtracted.
    q, k, v = qkv(1, 2, 24, 24, 8)
    q = q * 1e3
    expected = naive_attention(q.double(), k.double(), v.double(), causal=causal)
    out, lse = tiled_attention(q, k, v, causal=causal, block_m=5, block_n=7)
    assert torch.isfinite(out).all() and torch.isfinite(lse).all()
    torch.testing.assert_close(out.double(), expected, atol=1e-5, rtol=1e-5)
    assert torch.isfinite(naive_attention(q, k, v, causal=causal)).all()
    # exp without subtracting the running max really would overflow here:
    assert not torch.isfinite(torch.exp(attention_scores(q, k))).all()


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 2), h=st.integers(1, 2), n_q=st.integers(1, 24), n_k=st.integers(1, 24),
       d=st.integers(1, 9), block_m=st.integers(1, 12), block_n=st.integers(1, 12), causal=st.booleans(),
       seed=st.integers(0, 2**16))
def test_tiled_equals_naive_for_any_shape(b, h, n_q, n_k, d, block_m, block_n, causal, seed):
    q, k, v = qkv(b, h, n_q, n_k, d, dtype=torch.float64, seed=seed)
    out, lse = tiled_attention(q, k, v, causal=causal, block_m=block_m, block_n=block_n)
    assert out.shape == q.shape and out.dtype == torch.float64 and lse.shape == (b, h, n_q)
    torch.testing.assert_close(out, naive_attention(q, k, v, causal=causal), atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(lse, torch.logsumexp(attention_scores(q, k, causal), dim=-1), atol=1e-12, rtol=1e-10)


# --------------------------------------------------------------------------------------------------
# A per-chunk softmax (a common mistake) is wrong


def test_chunked_without_rescaling_is_wrong():
    q, k, v = qkv(1, 2, 40, 40, 8)
    for causal in (False, True):
        wrong = chunked_attention_without_rescaling(q, k, v, causal=causal, block_n=8)
        err = (wrong - naive_attention(q, k, v, causal=causal)).abs().max().item()
        assert err > 0.5, f"causal={causal}: the per-chunk softmax should be far off, error only {err}"


def test_chunked_weights_sum_to_the_number_of_chunks_seen():
    # With v = 1 the output is the sum of a row's weights: 1 for attention, one per chunk seen here.
    q, k, _ = qkv(1, 1, 20, 20, 4)
    ones = torch.ones(1, 1, 20, 1)
    q1, k1 = q[..., :1], k[..., :1]  # head dim 1 so that v = ones fits
    sums = chunked_attention_without_rescaling(q1, k1, ones, block_n=8)[0, 0, :, 0]
    torch.testing.assert_close(sums, torch.full((20,), 3.0))  # 20 keys in chunks of 8: 3 chunks
    causal_sums = chunked_attention_without_rescaling(q1, k1, ones, causal=True, block_n=8)[0, 0, :, 0]
    torch.testing.assert_close(causal_sums, torch.arange(20).div(8, rounding_mode="floor").float() + 1)
    torch.testing.assert_close(naive_attention(q1, k1, ones)[0, 0, :, 0], torch.ones(20))


def test_chunked_is_right_when_one_chunk_holds_every_key():
    q, k, v = qkv(1, 1, 10, 10, 4)
    torch.testing.assert_close(chunked_attention_without_rescaling(q, k, v, block_n=10), naive_attention(q, k, v))


# --------------------------------------------------------------------------------------------------
# The trace


def test_trace_records_the_visited_tiles_in_order():
    q, k, v = qkv(1, 1, 10, 10, 4)
    trace = TileTrace()
    tiled_attention(q, k, v, causal=True, block_m=4, block_n=4, trace=trace)
    assert (trace.n_q, trace.n_k, trace.block_m, trace.block_n, trace.causal) == (10, 10, 4, 4, True)
    assert trace.source == "tiled_attention" and trace.has_values
    assert [(s.q_tile, s.k_tile, s.kind) for s in trace.steps] == [
        (0, 0, "masked"), (1, 0, "full"), (1, 1, "masked"), (2, 0, "full"), (2, 1, "full"), (2, 2, "masked")]
    assert trace.kind_of(0, 1) == "skipped"


def test_trace_values_end_at_the_exact_answer():
    q, k, v = qkv(2, 2, 11, 14, 3)
    trace = TileTrace()
    out, lse = tiled_attention(q, k, v, causal=True, block_m=4, block_n=5, trace=trace)
    last = {}
    for step in trace.steps:
        rows = min(4, 11 - 4 * step.q_tile)
        assert len(step.m) == len(step.l) == len(step.out) == rows and len(step.out[0]) == 3
        last[step.q_tile] = step
    assert sorted(last) == [0, 1, 2]
    for i, step in last.items():
        rows = slice(4 * i, min(4 * i + 4, 11))
        torch.testing.assert_close(torch.tensor(step.out), out[0, 0, rows])
        torch.testing.assert_close(torch.tensor(step.m) + torch.tensor(step.l).log(), lse[0, 0, rows])


def test_trace_is_restarted_and_watchers_see_every_step():
    trace = TileTrace()
    seen = []
    trace.watch(lambda t: seen.append(len(t.steps)))
    q, k, v = qkv(1, 1, 6, 6, 2)
    tiled_attention(q, k, v, block_m=3, block_n=3, trace=trace)
    tiled_attention(q, k, v, block_m=3, block_n=3, trace=trace)
    assert len(trace.steps) == 4
    assert seen == [0, 1, 2, 3, 4] * 2


# --------------------------------------------------------------------------------------------------
# Bad input


def _bad_calls():
    q, k, v = qkv(1, 2, 8, 8, 4)
    return [
        ("q", lambda: tiled_attention(q[0], k, v)),  # 3-D q
        ("k", lambda: tiled_attention(q, k[0, 0], v[0, 0])),  # rank differs from q
        ("k", lambda: tiled_attention(q, k[:, :1], v[:, :1])),  # heads differ
        ("k", lambda: tiled_attention(q, k[..., :3], v)),  # head dim differs
        ("v", lambda: tiled_attention(q, k, v[..., :3])),  # head dim differs
        ("v", lambda: tiled_attention(q, k, v[..., :5, :])),  # one value per key
        ("q", lambda: naive_attention(q[..., :0, :], k, v)),  # empty
        ("block_m", lambda: tiled_attention(q, k, v, block_m=0)),
        ("block_n", lambda: tiled_attention(q, k, v, block_n=-3)),
        ("block_n", lambda: chunked_attention_without_rescaling(q, k, v, block_n=0)),
        ("sm_scale", lambda: naive_attention(q, k, v, sm_scale=float("nan"))),
        ("n_q", lambda: causal_mask(0, 4)),
    ]


@pytest.mark.parametrize("index", range(len(_bad_calls())))
def test_bad_input_raises_value_error_naming_the_argument(index):
    name, call = _bad_calls()[index]
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


def test_wrong_types_raise_type_error():
    q, k, v = qkv(1, 1, 4, 4, 2)
    with pytest.raises(TypeError, match="block_m"):
        tiled_attention(q, k, v, block_m=2.0)
    with pytest.raises(TypeError, match="q"):
        naive_attention(q.numpy(), k, v)
    with pytest.raises(TypeError, match="trace"):
        tiled_attention(q, k, v, trace=[])
    # A dtype is the type of the elements: a wrong or mismatched one is a TypeError (pagedlab.validate's rule).
    with pytest.raises(TypeError, match=r"\bk\b.*float64"):
        tiled_attention(q, k.double(), v)
    with pytest.raises(TypeError, match=r"\bq\b.*floating"):
        tiled_attention(q.to(torch.int64), k, v)
    with pytest.raises(TypeError, match="sm_scale"):
        naive_attention(q, k, v, sm_scale="0.5")


# --------------------------------------------------------------------------------------------------
# Peak memory


def test_peak_tensor_bytes_counts_what_is_alive_together():
    assert peak_tensor_bytes(lambda: torch.empty(1000)) == 4000
    assert peak_tensor_bytes(lambda: (torch.ones(1000) + 1).sum()) == 8000  # ones and ones + 1 together
    x = torch.ones(100)
    assert peak_tensor_bytes(lambda: x.view(10, 10).t()) == 0  # views of an input allocate nothing


def test_naive_peak_memory_is_quadratic_and_tiled_is_not():
    peaks = {}
    for n in (128, 256):
        q, k, v = qkv(1, 1, n, n, 32)
        peaks[n] = (peak_tensor_bytes(naive_attention, q, k, v), peak_tensor_bytes(tiled_attention, q, k, v))
    assert peaks[128][0] >= 2 * 128 * 128 * 4  # at least the scores and the weights, float32
    assert math.isclose(peaks[256][0] / peaks[128][0], 4, rel_tol=0.15)
    assert peaks[256][1] / peaks[128][1] < 2.5


def test_max_error_compares_the_infinity_pattern_before_the_values():
    inf = float("inf")
    want = torch.tensor([-inf, 1.0, 2.0])
    assert max_error(torch.tensor([-inf, 1.5, 2.0]), want) == 0.5
    assert max_error(torch.full((3,), float("nan")), want) == inf      # NaN everywhere must not pass
    assert max_error(torch.full((3,), -inf), want) == inf              # -inf everywhere neither
    assert max_error(torch.tensor([inf, 1.0, 2.0]), want) == inf       # +inf where -inf was expected
    assert max_error(torch.tensor([0.0, 1.0, 2.0]), want) == inf       # a finite value for an empty row
    assert max_error(torch.full((2,), -inf), torch.full((2,), -inf)) == 0.0
    with pytest.raises(ValueError, match="shape"):
        max_error(torch.zeros(2), torch.zeros(3))
