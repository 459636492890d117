"""The FlashAttention-2 forward kernel (Dao, 2023, Algorithm 1) in Triton.

One program per (query tile, batch·head). The program keeps its ``BLOCK_M`` queries in registers and loops
over key tiles of ``BLOCK_N`` keys with an online softmax in float32: a running max ``m``, a running sum ``l``
and an unnormalized accumulator, rescaled whenever the max grows. Scores are scaled by ``sm_scale * log2(e)``
so the loop uses ``exp2``. It writes the output and one log-sum-exp ``lse`` per query row, all the backward
(:mod:`pagedlab.kernels.flash_backward`) needs to rebuild P.

Causal attention is aligned bottom-right (query ``i`` sees keys ``j <= i + n_k - n_q``): key tiles entirely
past the diagonal are never loaded (the loop stops before them), tiles the diagonal crosses are masked, the
others run without a mask (:func:`key_range`). With the ``TMA`` flag K and V tiles are loaded through tensor
descriptors (Hopper's Tensor Memory Accelerator; the interpreter emulates them), else through plain pointers,
which every Triton version and GPU takes. With the ``TRACE`` flag each program also records the key tiles
it loads. The host side, with the checks and autograd, is :mod:`pagedlab.kernels.flash_attention`.
"""

import triton
import triton.language as tl

from pagedlab import device  # noqa: F401  (decides compiled vs interpreted before @triton.jit runs)

LOG2E = 1.4426950408889634
"""log2(e): exp(x) = exp2(x * log2(e)); folding it into the scale lets the kernel call exp2."""
LOG2E_C = tl.constexpr(LOG2E)  # kernels may only read globals that are constexpr


@triton.jit
def key_range(start_m, n_q, n_k, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Key range of the query tile starting at row ``start_m``: ``[0, full_end)`` needs no mask,
    ``[full_end, hi)`` needs one (causal diagonal, or keys past ``n_k``), keys from ``hi`` on are skipped."""
    if CAUSAL:
        # Row i sees keys j <= i + (n_k - n_q). The tile's first row bounds the keys every row sees,
        # its last row the keys any row sees. Clamping before dividing avoids negative division.
        first_row_sees = tl.maximum(start_m + n_k - n_q + 1, 0)
        hi = tl.maximum(tl.minimum(start_m + BLOCK_M + n_k - n_q, n_k), 0)
        full_end = (first_row_sees // BLOCK_N) * BLOCK_N
    else:
        hi = n_k
        full_end = (n_k // BLOCK_N) * BLOCK_N
    return full_end, hi


@triton.jit
def fwd_tiles(acc, l_i, m_i, step, q, k_ptrs, v_ptrs, k_desc, v_desc, trace_ptr, lo, hi, offs_m, offs_n,
              n_q, n_k, stride_kn, stride_vn, qk_scale,
              MASK: tl.constexpr, CAUSAL: tl.constexpr, TRACE: tl.constexpr, PRECISION: tl.constexpr,
              TMA: tl.constexpr, BLOCK_N: tl.constexpr):
    """The inner loop of the forward over key tiles ``lo, lo+BLOCK_N, ... < hi`` (online softmax)."""
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        if TMA:
            # One TMA copy of the (BLOCK_N, HEAD_DIM) tile; rows past n_k come back as zeros.
            k = tl.trans(k_desc.load([start_n, 0]))
        else:
            if MASK:
                k = tl.load(k_ptrs + start_n * stride_kn, mask=cols[None, :] < n_k, other=0.0)
            else:
                k = tl.load(k_ptrs + start_n * stride_kn)
        # Scores in the log2 domain: qk_scale = sm_scale * log2(e), so exp2 below is exp of the true score.
        qk = tl.dot(q, k, input_precision=PRECISION)
        if MASK:
            keep = cols[None, :] < n_k
            if CAUSAL:
                keep = keep & (cols[None, :] <= offs_m[:, None] + (n_k - n_q))
            s = tl.where(keep, qk * qk_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            # A row whose keys are all masked so far has m_new = -inf; -inf - (-inf) would be NaN.
            m_new_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
            p = tl.exp2(s - m_new_safe[:, None])
        else:
            # The max of the scaled scores is the scaled max (qk_scale > 0), so the scale and the subtraction
            # fold into one fused multiply-add per score, qk * qk_scale - m, as in Triton's fused-attention
            # tutorial: one instruction fewer per score than scaling first. No key is masked: m_new is finite.
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            m_new_safe = m_new
            p = tl.exp2(qk * qk_scale - m_new[:, None])
        alpha = tl.exp2(m_i - m_new_safe)  # how much the old max overestimated: rescale what we have
        l_i = l_i * alpha + tl.sum(p, 1)
        if TMA:
            v = v_desc.load([start_n, 0])
        else:
            if MASK:
                v = tl.load(v_ptrs + start_n * stride_vn, mask=cols[:, None] < n_k, other=0.0)
            else:
                v = tl.load(v_ptrs + start_n * stride_vn)
        # P goes to V's dtype so the second product runs on the tensor cores like the first.
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=PRECISION)
        m_i = m_new
        if TRACE:
            # Record 2 * key tile + 1 if the causal diagonal crosses the tile's real keys (the first query
            # row misses some of them), else 2 * key tile; a ragged last tile is masked for bounds only.
            code = 2 * (start_n // BLOCK_N)
            if MASK and CAUSAL:
                code += (tl.minimum(start_n + BLOCK_N, n_k) - 1 > tl.min(offs_m, 0) + (n_k - n_q)).to(tl.int32)
            tl.store(trace_ptr + step, code)
            step += 1
    return acc, l_i, m_i, step


# The lengths only bound loops and masks: not specializing on them (Triton would compile one variant for
# lengths divisible by 16 and one for the others) saves compiles without costing speed. The buckets are
# only the autotuning key (the next power of two of each length); the kernel never reads them.
@triton.jit(do_not_specialize=["n_q", "n_k", "n_q_bucket", "n_k_bucket"])
def fwd_kernel(Q, K, V, Out, Lse, Trace,
               stride_qb, stride_qh, stride_qm, stride_qd,
               stride_kb, stride_kh, stride_kn, stride_kd,
               stride_vb, stride_vh, stride_vn, stride_vd,
               stride_ob, stride_oh, stride_om, stride_od,
               n_heads, group, n_q, n_k, qk_scale, n_q_bucket, n_k_bucket,
               HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, TRACE: tl.constexpr, PRECISION: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, TMA: tl.constexpr = False):
    # Causal query tiles are uneven (the last one sees every key, the first only its first tiles): launch the
    # heaviest first, so the light ones fill the gaps at the end instead of one heavy tile running alone.
    # Axis 0 stays the query tile, so the programs running together belong to one head and share its K/V in L2.
    tile_m = tl.num_programs(0) - 1 - tl.program_id(0) if CAUSAL else tl.program_id(0)
    start_m = tile_m * BLOCK_M
    bh = tl.program_id(1)
    # 64-bit offsets: batch * heads * seq * head_dim passes 2**31 elements at long context.
    b = (bh // n_heads).to(tl.int64)
    h = (bh % n_heads).to(tl.int64)
    h_kv = h // group  # GQA: `group` query heads share one K/V head
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q = tl.load(Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd,
                mask=offs_m[:, None] < n_q, other=0.0)
    # K is read transposed, (HEAD_DIM, BLOCK_N), so that q @ k needs no transpose in registers.
    k_ptrs = K + b * stride_kb + h_kv * stride_kh + offs_n[None, :] * stride_kn + offs_d[:, None] * stride_kd
    v_ptrs = V + b * stride_vb + h_kv * stride_vh + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vd
    if TMA:
        # Tensor descriptors (Hopper's TMA): the tile's shape and strides, given once; loads name a tile's origin.
        # The shape is this head's n_k rows, so a tile sticking out past n_k is zero-filled by the hardware.
        k_desc = tl.make_tensor_descriptor(K + b * stride_kb + h_kv * stride_kh, shape=[n_k, HEAD_DIM],
                                           strides=[stride_kn, 1], block_shape=[BLOCK_N, HEAD_DIM])
        v_desc = tl.make_tensor_descriptor(V + b * stride_vb + h_kv * stride_vh, shape=[n_k, HEAD_DIM],
                                           strides=[stride_vn, 1], block_shape=[BLOCK_N, HEAD_DIM])
    else:
        k_desc, v_desc = K, V  # unused: plain pointers (Triton 3.2, older GPUs)
    trace_ptr = Trace + (bh * tl.num_programs(0) + tile_m) * tl.cdiv(n_k, BLOCK_N)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    step = tile_m * 0  # an int32 counter of visited tiles, for the trace

    full_end, hi = key_range(start_m, n_q, n_k, CAUSAL, BLOCK_M, BLOCK_N)
    acc, l_i, m_i, step = fwd_tiles(acc, l_i, m_i, step, q, k_ptrs, v_ptrs, k_desc, v_desc, trace_ptr, 0,
                                    full_end, offs_m, offs_n, n_q, n_k, stride_kn, stride_vn, qk_scale,
                                    False, CAUSAL, TRACE, PRECISION, TMA, BLOCK_N)
    acc, l_i, m_i, step = fwd_tiles(acc, l_i, m_i, step, q, k_ptrs, v_ptrs, k_desc, v_desc, trace_ptr,
                                    full_end, hi, offs_m, offs_n, n_q, n_k, stride_kn, stride_vn, qk_scale,
                                    True, CAUSAL, TRACE, PRECISION, TMA, BLOCK_N)

    # A query that sees no key at all (causal, n_q > n_k) gets output 0 and lse -inf, not NaN.
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    out = acc / l_safe[:, None]
    # Back to the natural log: lse = log sum_j exp(sm_scale * q.k_j).
    lse = tl.where(l_i == 0.0, float("-inf"), (m_i + tl.log2(l_safe)) / LOG2E_C)
    row_ok = offs_m < n_q
    tl.store(Lse + bh * n_q + offs_m, lse, mask=row_ok)
    tl.store(Out + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od,
             out.to(Out.dtype.element_ty), mask=row_ok[:, None])

