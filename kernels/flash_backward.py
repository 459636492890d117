"""The FlashAttention-2 backward kernels (Dao, 2023, Algorithm 2) in Triton.

With S = sm_scale * Q K^T, P = softmax(S), O = P V and the incoming gradient dO:
dV = P^T dO, dP = dO V^T, dS = P * (dP - delta) with delta = rowsum(dO * O), dQ = sm_scale * dS K,
dK = sm_scale * dS^T Q. Three kernels:

* :func:`bwd_preprocess_kernel` computes ``delta``;
* :func:`bwd_dkdv_kernel`: one program per key tile (per batch and K/V head) accumulates dK and dV over the
  query tiles that see it, and over the query heads that share its K/V head (GQA);
* :func:`bwd_dq_kernel`: one program per query tile accumulates dQ over the key tiles it sees.

Every program owns the tile it writes (no atomics, deterministic) and rebuilds P = exp(S - lse) tile by tile
from the forward's log-sum-exp instead of reading a stored N x N P. Causal or not, any lengths.
"""

import triton
import triton.language as tl

from pagedlab.kernels.flash_forward import LOG2E_C, key_range


@triton.jit
def batch_head(bh, n_heads):
    """The batch and head of program axis 1 (``b * n_heads + h``), as int64 so that offsets past 2**31 hold."""
    return (bh // n_heads).to(tl.int64), (bh % n_heads).to(tl.int64)


@triton.jit
def tile_ptrs(Base, b, h, rows, cols, stride_b, stride_h, stride_row, stride_col):
    """Pointers to ``Base[b, h, rows, cols]`` as a (len(rows), len(cols)) block; ``rows`` and ``cols`` may be either
    the positions or the head dimension's offsets, which gives the transposed tile."""
    return Base + b * stride_b + h * stride_h + rows[:, None] * stride_row + cols[None, :] * stride_col


@triton.jit
def bwd_preprocess_kernel(Out, DO, Delta,
                          stride_ob, stride_oh, stride_om, stride_od,
                          stride_db, stride_dh, stride_dm, stride_dd,
                          n_heads, n_q, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    """delta_i = sum_d dO_id * O_id, the row term of dS = P * (dP - delta)."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    bh = tl.program_id(1)
    b, h = batch_head(bh, n_heads)
    offs_d = tl.arange(0, HEAD_DIM)
    rows = offs_m[:, None] < n_q
    o = tl.load(tile_ptrs(Out, b, h, offs_m, offs_d, stride_ob, stride_oh, stride_om, stride_od), mask=rows, other=0.0)
    do = tl.load(tile_ptrs(DO, b, h, offs_m, offs_d, stride_db, stride_dh, stride_dm, stride_dd), mask=rows, other=0.0)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), 1)
    tl.store(Delta + bh * n_q + offs_m, delta, mask=offs_m < n_q)


@triton.jit
def load_lse2(Lse, row0, offs, n_q):
    """lse of rows ``offs`` in the log2 domain, 0 for rows past ``n_q``: their dO loads as 0 too, so they add
    nothing. (Rows that saw no key have lse = -inf and P = exp2(s + inf) = inf, but all their keys are
    masked, and the mask is a select, so P is 0 there.)"""
    return tl.load(Lse + row0 + offs, mask=offs < n_q, other=0.0) * LOG2E_C


@triton.jit
def dkdv_tiles(dk, dv, k, v, q_ptrs, do_ptrs, Lse, Delta, row0, lo, hi, offs_m, offs_n,
               n_q, n_k, stride_qm, stride_dom, qk_scale,
               MASK: tl.constexpr, PRECISION: tl.constexpr, BLOCK_M: tl.constexpr):
    """Accumulate dK and dV of one key tile over the query tiles ``lo, lo+BLOCK_M, ... < hi``.

    Works on transposed tiles (keys along rows) so every product is a plain ``tl.dot``.
    """
    for start_m in range(lo, hi, BLOCK_M):
        start_m = tl.multiple_of(start_m, BLOCK_M)
        rows = start_m + offs_m
        q_t = tl.load(q_ptrs + start_m * stride_qm, mask=rows[None, :] < n_q, other=0.0)  # (HEAD_DIM, BLOCK_M)
        lse2 = load_lse2(Lse, row0, rows, n_q)
        p_t = tl.exp2(tl.dot(k, q_t, input_precision=PRECISION) * qk_scale - lse2[None, :])  # P^T, (BLOCK_N, BLOCK_M)
        if MASK:
            p_t = tl.where(offs_n[:, None] <= rows[None, :] + (n_k - n_q), p_t, 0.0)
        do = tl.load(do_ptrs + start_m * stride_dom, mask=rows[:, None] < n_q, other=0.0)  # (BLOCK_M, HEAD_DIM)
        dv = tl.dot(p_t.to(do.dtype), do, dv, input_precision=PRECISION)  # dV = P^T dO
        delta = tl.load(Delta + row0 + rows, mask=rows < n_q, other=0.0)
        dp_t = tl.dot(v, tl.trans(do), input_precision=PRECISION)  # dP^T = V dO^T
        ds_t = p_t * (dp_t - delta[None, :])  # dS = P * (dP - delta)
        dk = tl.dot(ds_t.to(q_t.dtype), tl.trans(q_t), dk, input_precision=PRECISION)  # dK = dS^T Q (scale later)
    return dk, dv


@triton.jit(do_not_specialize=["n_q", "n_k", "n_q_bucket", "n_k_bucket"])
def bwd_dkdv_kernel(Q, K, V, DO, DK, DV, Lse, Delta,
                    stride_qb, stride_qh, stride_qm, stride_qd,
                    stride_kb, stride_kh, stride_kn, stride_kd,
                    stride_vb, stride_vh, stride_vn, stride_vd,
                    stride_dob, stride_doh, stride_dom, stride_dod,
                    stride_dkb, stride_dkh, stride_dkn, stride_dkd,
                    stride_dvb, stride_dvh, stride_dvn, stride_dvd,
                    n_heads, n_kv_heads, group, n_q, n_k, sm_scale, qk_scale, n_q_bucket, n_k_bucket,
                    HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Causal: key tile 0 is seen by every query, the last one by the fewest, so the natural order already
    # launches the heaviest programs first.
    start_n = tl.program_id(0) * BLOCK_N
    b, h_kv = batch_head(tl.program_id(1), n_kv_heads)
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    cols_ok = offs_n[:, None] < n_k
    k = tl.load(tile_ptrs(K, b, h_kv, offs_n, offs_d, stride_kb, stride_kh, stride_kn, stride_kd),
                mask=cols_ok, other=0.0)
    v = tl.load(tile_ptrs(V, b, h_kv, offs_n, offs_d, stride_vb, stride_vh, stride_vn, stride_vd),
                mask=cols_ok, other=0.0)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)

    if CAUSAL:
        # Rows i >= start_n - (n_k - n_q) see some key of this tile, rows i >= start_n + BLOCK_N - 1 -
        # (n_k - n_q) see all of them: query tiles in between cross the diagonal and need the mask.
        first_row = tl.maximum(start_n - (n_k - n_q), 0)
        lo = (first_row // BLOCK_M) * BLOCK_M
        mid = tl.cdiv(tl.maximum(start_n + BLOCK_N - 1 - (n_k - n_q), 0), BLOCK_M) * BLOCK_M
    else:
        lo = 0
        mid = 0
    for g in range(group):  # GQA: sum the gradients of every query head that reads this K/V head
        h = h_kv * group + g
        row0 = (b * n_heads + h) * n_q
        q_ptrs = tile_ptrs(Q, b, h, offs_d, offs_m, stride_qb, stride_qh, stride_qd, stride_qm)  # Q^T
        do_ptrs = tile_ptrs(DO, b, h, offs_m, offs_d, stride_dob, stride_doh, stride_dom, stride_dod)
        dk, dv = dkdv_tiles(dk, dv, k, v, q_ptrs, do_ptrs, Lse, Delta, row0, lo, mid, offs_m, offs_n,
                            n_q, n_k, stride_qm, stride_dom, qk_scale, True, PRECISION, BLOCK_M)
        dk, dv = dkdv_tiles(dk, dv, k, v, q_ptrs, do_ptrs, Lse, Delta, row0, mid, n_q, offs_m, offs_n,
                            n_q, n_k, stride_qm, stride_dom, qk_scale, False, PRECISION, BLOCK_M)
    dk *= sm_scale  # S = sm_scale * Q K^T, so dK = sm_scale * dS^T Q
    tl.store(tile_ptrs(DK, b, h_kv, offs_n, offs_d, stride_dkb, stride_dkh, stride_dkn, stride_dkd),
             dk.to(DK.dtype.element_ty), mask=cols_ok)
    tl.store(tile_ptrs(DV, b, h_kv, offs_n, offs_d, stride_dvb, stride_dvh, stride_dvn, stride_dvd),
             dv.to(DV.dtype.element_ty), mask=cols_ok)


@triton.jit
def dq_tiles(dq, q, do, lse2, delta, k_ptrs, v_ptrs, lo, hi, offs_m, offs_n, n_q, n_k,
             stride_kn, stride_vn, qk_scale,
             MASK: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr, BLOCK_N: tl.constexpr):
    """Accumulate dQ of one query tile over the key tiles ``lo, lo+BLOCK_N, ... < hi``."""
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        if MASK:
            k_t = tl.load(k_ptrs + start_n * stride_kn, mask=cols[None, :] < n_k, other=0.0)
            v_t = tl.load(v_ptrs + start_n * stride_vn, mask=cols[None, :] < n_k, other=0.0)
        else:
            k_t = tl.load(k_ptrs + start_n * stride_kn)
            v_t = tl.load(v_ptrs + start_n * stride_vn)
        p = tl.exp2(tl.dot(q, k_t, input_precision=PRECISION) * qk_scale - lse2[:, None])
        if MASK:
            keep = cols[None, :] < n_k
            if CAUSAL:
                keep = keep & (cols[None, :] <= offs_m[:, None] + (n_k - n_q))
            p = tl.where(keep, p, 0.0)
        dp = tl.dot(do, v_t, input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds.to(k_t.dtype), tl.trans(k_t), dq, input_precision=PRECISION)  # dQ = dS K (scale later)
    return dq


@triton.jit(do_not_specialize=["n_q", "n_k", "n_q_bucket", "n_k_bucket"])
def bwd_dq_kernel(Q, K, V, DO, DQ, Lse, Delta,
                  stride_qb, stride_qh, stride_qm, stride_qd,
                  stride_kb, stride_kh, stride_kn, stride_kd,
                  stride_vb, stride_vh, stride_vn, stride_vd,
                  stride_dob, stride_doh, stride_dom, stride_dod,
                  stride_dqb, stride_dqh, stride_dqm, stride_dqd,
                  n_heads, group, n_q, n_k, sm_scale, qk_scale, n_q_bucket, n_k_bucket,
                  HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Heaviest causal query tiles first, as in the forward.
    tile_m = tl.num_programs(0) - 1 - tl.program_id(0) if CAUSAL else tl.program_id(0)
    start_m = tile_m * BLOCK_M
    bh = tl.program_id(1)
    b, h = batch_head(bh, n_heads)
    h_kv = h // group
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    rows_ok = offs_m[:, None] < n_q
    q = tl.load(tile_ptrs(Q, b, h, offs_m, offs_d, stride_qb, stride_qh, stride_qm, stride_qd), mask=rows_ok, other=0.0)
    do = tl.load(tile_ptrs(DO, b, h, offs_m, offs_d, stride_dob, stride_doh, stride_dom, stride_dod),
                 mask=rows_ok, other=0.0)
    lse2 = load_lse2(Lse, bh * n_q, offs_m, n_q)
    delta = tl.load(Delta + bh * n_q + offs_m, mask=offs_m < n_q, other=0.0)
    k_ptrs = tile_ptrs(K, b, h_kv, offs_d, offs_n, stride_kb, stride_kh, stride_kd, stride_kn)  # K^T
    v_ptrs = tile_ptrs(V, b, h_kv, offs_d, offs_n, stride_vb, stride_vh, stride_vd, stride_vn)  # V^T
    dq = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)

    full_end, hi = key_range(start_m, n_q, n_k, CAUSAL, BLOCK_M, BLOCK_N)
    dq = dq_tiles(dq, q, do, lse2, delta, k_ptrs, v_ptrs, 0, full_end, offs_m, offs_n, n_q, n_k,
                  stride_kn, stride_vn, qk_scale, False, CAUSAL, PRECISION, BLOCK_N)
    dq = dq_tiles(dq, q, do, lse2, delta, k_ptrs, v_ptrs, full_end, hi, offs_m, offs_n, n_q, n_k,
                  stride_kn, stride_vn, qk_scale, True, CAUSAL, PRECISION, BLOCK_N)
    dq *= sm_scale
    tl.store(tile_ptrs(DQ, b, h, offs_m, offs_d, stride_dqb, stride_dqh, stride_dqm, stride_dqd),
             dq.to(DQ.dtype.element_ty), mask=rows_ok)

