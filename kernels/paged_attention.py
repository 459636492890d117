"""PagedAttention for decode in Triton: one new query per sequence attends to K/V read through a block table.

A decode step gives every running sequence one new token. Its query attends to the sequence's whole
context, whose K/V lives in fixed-size blocks scattered over a pool (:class:`~pagedlab.paged.KVCache`):
logical block ``i`` of sequence ``s`` is physical block ``block_tables[s, i]``, and token ``t`` sits in
slot ``t % block_size`` of logical block ``t // block_size``. The kernel does that lookup itself, so the
K/V is never copied into a contiguous tensor (what :meth:`KVCache.gather` does for the reference).

The grid is ``(num_seqs, kv_heads, num_splits)``:

* **GQA packing.** A program owns one K/V head and *all* the query heads that share it (``group = heads //
  kv_heads`` of them, padded to ``BLOCK_H >= 16`` rows, the smallest ``tl.dot``). Each K/V tile is loaded once
  and multiplied by the whole group: the group is the M side of both products. With one program per query
  head the same bytes would be read ``group`` times, and decode is limited by those bytes.
* **The inner loop** walks the context in key tiles of ``BLOCK_N`` tokens. For each token of the tile: logical
  block ``t // BLOCK_SIZE`` -> physical block (one load from the block table) -> the K/V row at
  ``(physical, t % BLOCK_SIZE)``. A tile may span several small blocks or part of a large one, so every
  block size works with one tile size. Tokens at or past ``context_len`` are masked: their block-table
  entries, K and V are never loaded, so padding entries and stale slots can hold anything (-1, garbage, NaN).
  Then the online softmax of FlashAttention-2 (running max ``m``, running sum ``l``, rescaled accumulator).
* **Split-KV** (flash-decoding; vLLM's PagedAttention V2). With few sequences the grid is too small to fill a
  GPU, so the context is cut into ``num_splits`` pieces attended by separate programs. Each writes its
  normalized partial output and log-sum-exp; :func:`merge_splits` combines them exactly:
  ``out = sum_s exp(lse_s - M) out_s / sum_s exp(lse_s - M)`` with ``M = max_s lse_s``, the same rescaling
  as the online softmax, applied once per split instead of once per tile.

Host side: :func:`paged_decode_attention` (checks, split choice, launch, merge), :func:`paged_decode_split`
(the partials alone), :func:`merge_splits`, :func:`paged_decode_attention_traced` (trace mode: which
physical blocks each program read, as a :class:`BlockReads`) and :func:`choose_num_splits`. The PyTorch
reference (:func:`~pagedlab.attention.gather_kv`, :func:`~pagedlab.attention.paged_decode_reference`) and a
booby-trapped test batch (:func:`~pagedlab.testing.random_paged_batch`: NaN wherever the kernel must not read)
live beside the other references and test helpers; the launchers' argument checks are in
:mod:`pagedlab.kernels.paged_checks`.
On sm_80+ GPUs half precision is autotuned (:data:`GPU_CONFIGS`); float32 and the interpreter use one fixed key
tile, :data:`INTERPRET_BLOCK_N`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from pagedlab import device
from pagedlab.kernels.flash_attention import HEAD_DIMS, dot_precision
from pagedlab.kernels.flash_forward import LOG2E, LOG2E_C
from pagedlab.kernels.paged_checks import PagedProblem, check_paged_inputs
from pagedlab.validate import blocks_for, check_tensor

INTERPRET_BLOCK_N = 32
"""Key tile of the interpreter (and of a float32 run): block sizes 8 and 16 are smaller, 64 and 128 larger."""

GPU_CONFIGS = [(64, 4, 2), (128, 4, 2), (32, 4, 3), (64, 8, 3)]
"""(BLOCK_N, num_warps, num_stages) that autotuning tries for float16/bfloat16 on a GPU."""

TRACE_BLOCK_N = 64
"""Key tile of a traced run on a GPU: a trace needs one known tiling, not the tuned one."""

MIN_SPLIT_TOKENS = 256
"""The fewest keys a split should get: below that, writing and merging partials costs more than it saves."""

MAX_SPLITS = 64
"""The most splits :func:`choose_num_splits` picks (the merge kernel reads all of them at once)."""


# --------------------------------------------------------------------------------------------------
# The kernels
# --------------------------------------------------------------------------------------------------


@triton.jit(do_not_specialize=["group", "max_blocks", "context_bucket"])
def paged_decode_kernel(Q, K, V, BlockTables, ContextLens, Out, Lse, Trace,
                        stride_qs, stride_qh, stride_qd,
                        stride_kb, stride_kt, stride_kh, stride_kd,
                        stride_vb, stride_vt, stride_vh, stride_vd,
                        stride_bs, stride_bb, stride_cs,
                        stride_os, stride_oh, stride_ox, stride_od,
                        stride_ls, stride_lh, stride_lx,
                        group, max_blocks, qk_scale, context_bucket,
                        HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_H: tl.constexpr,
                        BLOCK_N: tl.constexpr, WRITE_LSE: tl.constexpr, TRACE: tl.constexpr,
                        PRECISION: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    split = tl.program_id(2)
    num_splits = tl.num_programs(2)

    # This program's keys: split `split` of the context, cut at multiples of BLOCK_N.
    context_len = tl.load(ContextLens + seq * stride_cs)
    split_len = tl.cdiv(tl.cdiv(context_len, num_splits), BLOCK_N) * BLOCK_N
    start = split * split_len
    end = tl.minimum(start + split_len, context_len)

    # GQA: the `group` query heads of this K/V head are the rows of one tile; rows past `group` are padding.
    offs_h = tl.arange(0, BLOCK_H)
    head_ok = offs_h < group
    heads = kv_head * group + offs_h
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + seq * stride_qs + heads[:, None] * stride_qh + offs_d[None, :] * stride_qd,
                mask=head_ok[:, None], other=0.0)

    table = BlockTables + seq.to(tl.int64) * stride_bs
    k_head = K + kv_head * stride_kh
    v_head = V + kv_head * stride_vh
    trace = Trace + ((seq * tl.num_programs(1) + kv_head) * num_splits + split).to(tl.int64) * max_blocks

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for start_n in range(start, end, BLOCK_N):
        tokens = start_n + offs_n
        valid = tokens < end
        # logical block -> physical block -> slot. Masked: a token past the context never touches the table.
        logical = tokens // BLOCK_SIZE
        physical = tl.load(table + logical * stride_bb, mask=valid, other=0).to(tl.int64)
        slot = tokens % BLOCK_SIZE
        # K transposed, (HEAD_DIM, BLOCK_N), so that q @ k needs no transpose in registers.
        k = tl.load(k_head + physical[None, :] * stride_kb + slot[None, :] * stride_kt + offs_d[:, None] * stride_kd,
                    mask=valid[None, :], other=0.0)
        s = tl.dot(q, k, input_precision=PRECISION) * qk_scale  # log2 domain: qk_scale = sm_scale * log2(e)
        s = tl.where(valid[None, :], s, float("-inf"))
        # Every tile holds at least one valid token (start_n < end), so m_new is finite: no -inf - -inf.
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)  # how much the old max overestimated: rescale what we have
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_head + physical[:, None] * stride_vb + slot[:, None] * stride_vt + offs_d[None, :] * stride_vd,
                    mask=valid[:, None], other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=PRECISION)
        m_i = m_new
        if TRACE:
            # Record which physical block each logical block read came from (one slot per logical block).
            tl.store(trace + logical, physical.to(tl.int32), mask=valid)

    # An empty split (a short sequence cut into many splits) has l = 0: output 0 and lse -inf, not NaN.
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    out = acc / l_safe[:, None]
    tl.store(Out + seq * stride_os + heads[:, None] * stride_oh + split * stride_ox + offs_d[None, :] * stride_od,
             out.to(Out.dtype.element_ty), mask=head_ok[:, None])
    if WRITE_LSE:
        lse = tl.where(l_i == 0.0, float("-inf"), (m_i + tl.log2(l_safe)) / LOG2E_C)  # back to natural log
        tl.store(Lse + seq * stride_ls + heads * stride_lh + split * stride_lx, lse, mask=head_ok)


@triton.jit
def merge_splits_kernel(Partial, Lse, Out,
                        stride_ps, stride_ph, stride_px, stride_pd,
                        stride_ls, stride_lh, stride_lx,
                        stride_os, stride_oh, stride_od,
                        num_splits, HEAD_DIM: tl.constexpr, SPLITS: tl.constexpr):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    offs_x = tl.arange(0, SPLITS)
    offs_d = tl.arange(0, HEAD_DIM)
    split_ok = offs_x < num_splits
    lse = tl.load(Lse + seq * stride_ls + head * stride_lh + offs_x * stride_lx, mask=split_ok, other=float("-inf"))
    partial = tl.load(Partial + seq * stride_ps + head * stride_ph + offs_x[:, None] * stride_px
                      + offs_d[None, :] * stride_pd, mask=split_ok[:, None], other=0.0)
    # Split 0 always holds the first token, so the max is finite; empty splits (lse = -inf) get weight 0.
    m = tl.max(lse, 0)
    w = tl.exp(lse - m)
    out = tl.sum(w[:, None] * partial, 0) / tl.sum(w, 0)
    tl.store(Out + seq * stride_os + head * stride_oh + offs_d * stride_od, out.to(Out.dtype.element_ty))


# --------------------------------------------------------------------------------------------------
# Split choice and launches
# --------------------------------------------------------------------------------------------------


def _check_num_splits(num_splits: object) -> None:
    if num_splits is None:
        return
    if isinstance(num_splits, bool) or not isinstance(num_splits, int):
        raise TypeError(f"num_splits must be an int or None, got {type(num_splits).__name__}")
    if not 1 <= num_splits <= MAX_SPLITS:
        raise ValueError(f"num_splits must be in 1 .. {MAX_SPLITS}, got {num_splits}")


def choose_num_splits(num_seqs: int, kv_heads: int, max_context: int, num_sms: int | None,
                      total_context: int | None = None) -> int:
    """How many pieces to cut each context into, so that the grid fills the GPU and no program is left
    streaming a long context alone (flash-decoding).

    Two reasons to split, and the larger answer wins:

    * **Occupancy.** The grid has ``num_seqs * kv_heads`` programs per split. Enough splits to give every
      streaming multiprocessor (SM) two programs; when the batch does that by itself, this asks for one.
    * **Balance.** A step lasts as long as its slowest program. The work is ``total_context * kv_heads``
      key rows, a fair share ``total_context * kv_heads / num_sms`` per SM; one split of the longest context
      is ``max_context`` rows. Enough splits that a piece of the longest context is at most a fair share:
      63 short sequences and one of 32K fill the grid, yet with one split a single program reads all 32K
      keys while the other SMs sit idle.

    Then no split shorter than :data:`MIN_SPLIT_TOKENS` keys (writing and merging partials costs more than
    it saves) and at most :data:`MAX_SPLITS`. The split count is one for the whole grid: the pieces of short
    sequences past their end are empty programs that exit at once. vLLM's PagedAttention V2 fixes the piece
    instead (512-token partitions, so ``ceil(max_context / 512)`` of them); weighing the work, as here, cuts
    a batch of short contexts less and a lone long context among them more.

    Args:
        num_seqs, kv_heads, max_context: the batch (``max_context``: the longest context, tokens).
        num_sms: the GPU's SM count, or None in the interpreter, where every program runs one after the
            other and splitting only adds the merge: the answer is then 1.
        total_context: the sum of the contexts (default ``num_seqs * max_context``, every context the longest).

    Returns:
        An int in 1 .. :data:`MAX_SPLITS`.
    """
    if num_sms is None:
        return 1
    total = num_seqs * max_context if total_context is None else max(total_context, max_context)
    programs = num_seqs * kv_heads
    occupancy = blocks_for(2 * num_sms, programs)
    balance = blocks_for(max_context * num_sms, total * kv_heads)
    longest_useful = max(1, max_context // MIN_SPLIT_TOKENS)
    return max(1, min(max(occupancy, balance), longest_useful, MAX_SPLITS))


def context_bucket(max_context: int) -> int:
    """The autotuning bucket of a batch's longest context, ``ceil(log2(max_context))``: a context twice as long
    is tuned again (the best key tile for 16 tokens is not the best for 16K), neighbouring steps share one."""
    return max(1, max_context - 1).bit_length()


def _num_sms() -> int | None:
    if device.INTERPRET:
        return None
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


_TUNED: list = []
AUTOTUNE_KEY = ["HEAD_DIM", "BLOCK_SIZE", "BLOCK_H", "WRITE_LSE", "context_bucket"]
"""What autotuning keeps results apart by: the shapes, and the :func:`context_bucket` of the longest context (an
engine first decodes contexts of a few tokens; a tile tuned then would otherwise stay for 16K-token contexts)."""


def _autotuned():
    """The autotuned kernel, built on first use (``triton.autotune`` needs a GPU driver)."""
    if not _TUNED:
        configs = [triton.Config({"BLOCK_N": bn}, num_warps=w, num_stages=s) for bn, w, s in GPU_CONFIGS]
        _TUNED.append(triton.autotune(configs=configs, key=AUTOTUNE_KEY)(paged_decode_kernel))
    return _TUNED[0]


def _launch_split(q, k_cache, v_cache, block_tables, context_lens, p: PagedProblem, num_splits: int, partials: bool,
                  block_n: int | None, trace_buf: torch.Tensor | None):
    """Run the split kernel. Returns ``(out, None)`` without ``partials`` and one split (the final output, in
    q's dtype), else ``(partial, lse)``: ``(num_seqs, heads, num_splits, head_dim)`` and ``(num_seqs, heads,
    num_splits)`` float32."""
    if not partials and num_splits == 1:
        out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
        out_strides = (out.stride(0), out.stride(1), 0, out.stride(2))
        lse, lse_strides = None, (0, 0, 0)
    else:
        out = torch.empty((p.num_seqs, p.heads, num_splits, p.head_dim), dtype=torch.float32, device=q.device)
        out_strides = out.stride()
        lse = torch.empty((p.num_seqs, p.heads, num_splits), dtype=torch.float32, device=q.device)
        lse_strides = lse.stride()
    group = p.heads // p.kv_heads
    args = (q, k_cache, v_cache, block_tables, context_lens, out, out if lse is None else lse,
            context_lens if trace_buf is None else trace_buf,
            *q.stride(), *k_cache.stride(), *v_cache.stride(), *block_tables.stride(), *context_lens.stride(),
            *out_strides, *lse_strides, group, p.max_blocks, p.sm_scale * LOG2E, context_bucket(p.max_context))
    meta = dict(HEAD_DIM=p.head_dim, BLOCK_SIZE=p.block_size, BLOCK_H=max(16, triton.next_power_of_2(group)),
                WRITE_LSE=lse is not None, TRACE=trace_buf is not None, PRECISION=dot_precision(q.dtype))
    grid = (p.num_seqs, p.kv_heads, num_splits)
    if block_n is None and not device.INTERPRET and q.dtype != torch.float32:
        _autotuned()[grid](*args, **meta)
    else:
        paged_decode_kernel[grid](*args, **meta, BLOCK_N=block_n or INTERPRET_BLOCK_N, num_warps=4, num_stages=2)
    return out, lse


def merge_splits(partial: torch.Tensor, lse: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Combine per-split attention outputs into the exact output (the second step of split-KV).

    Split ``s`` attended to its own keys and returned ``out_s`` (normalized over those keys) and ``lse_s =
    log sum_j exp(score_j)`` over them. The full softmax weights each split by its share of the total sum:
    ``out = sum_s exp(lse_s - M) out_s / sum_s exp(lse_s - M)``, ``M = max_s lse_s`` (subtracted so that no
    ``exp`` overflows). An empty split has ``lse_s = -inf`` and weight 0.

    Args:
        partial: (num_seqs, heads, num_splits, head_dim) float32 partial outputs.
        lse: (num_seqs, heads, num_splits) float32; split 0 of every row must be finite (non-empty).
        dtype: the output dtype (default float32).

    Returns:
        (num_seqs, heads, head_dim) in ``dtype``.

    Raises:
        TypeError: non-float32 inputs. ValueError: shapes that do not match, too many splits.
    """
    for name, t, dims in (("partial", partial, 4), ("lse", lse, 3)):
        check_tensor(name, t, dims, "(num_seqs, heads, num_splits, head_dim)" if dims == 4 else
                      "(num_seqs, heads, num_splits)")
        if t.dtype != torch.float32:
            raise TypeError(f"{name} must be float32, got {t.dtype}")
    if partial.shape[:3] != lse.shape or partial.device != lse.device:
        raise ValueError(f"lse must have shape partial.shape[:3] = {tuple(partial.shape[:3])} and partial's device, "
                         f"got {tuple(lse.shape)} on {lse.device}")
    num_seqs, heads, num_splits, head_dim = partial.shape
    if head_dim not in HEAD_DIMS or not 1 <= num_splits <= MAX_SPLITS:
        raise ValueError(f"partial has head_dim {head_dim} (expected one of {HEAD_DIMS}) and {num_splits} splits "
                         f"(expected 1 .. {MAX_SPLITS})")
    out = torch.empty((num_seqs, heads, head_dim), dtype=dtype or torch.float32, device=partial.device)
    splits_tile = max(2, triton.next_power_of_2(num_splits))
    merge_splits_kernel[(num_seqs, heads)](partial, lse, out, *partial.stride(), *lse.stride(), *out.stride(),
                                           num_splits, HEAD_DIM=head_dim, SPLITS=splits_tile)
    return out


def paged_decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_tables: torch.Tensor,
                           context_lens: torch.Tensor, sm_scale: float | None = None,
                           num_splits: int | None = None, context_stats: tuple[int, int] | None = None
                           ) -> torch.Tensor:
    """Decode attention through block tables: each sequence's one new query attends to its cached K/V.

    Args:
        q: (num_seqs, heads, head_dim), the query of each sequence's newest token.
        k_cache, v_cache: one layer's pools as :class:`~pagedlab.paged.KVCache` stores them, ``(num_blocks,
            block_size, kv_heads, head_dim)`` (``cache.k[layer]`` passes straight in). ``heads`` must be a
            multiple of ``kv_heads`` (GQA/MQA); ``block_size`` a power of two; head_dim in :data:`HEAD_DIMS`.
        block_tables: (num_seqs, max_blocks_per_seq) int32 or int64. Entry ``[s, i]`` is the physical block of
            logical block ``i`` of sequence ``s`` for ``i < ceil(context_lens[s] / block_size)``; the entries
            after that are padding, never read, and may hold anything (-1 by convention).
        context_lens: (num_seqs,) int32 or int64, the tokens in each sequence's cache, the new one included
            (each >= 1, at most ``max_blocks_per_seq * block_size``). Slots past it in the last block are never
            read either.
        sm_scale: the softmax scale, ``1/sqrt(head_dim)`` by default.
        num_splits: pieces each context is cut into (split-KV), 1 .. :data:`MAX_SPLITS`; None chooses
            (:func:`choose_num_splits`: from the grid and the work on a GPU, 1 in the interpreter).
        context_stats: ``(longest, total)`` of ``context_lens``, when the caller knows them on the host (the
            engine does): the checks then read no tensor values, so the call does not wait for the device. The
            caller vouches for ``context_lens`` and the owned entries of ``block_tables``; shapes, dtypes and
            devices are still checked.

    Returns:
        (num_seqs, heads, head_dim) in q's dtype: ``softmax(sm_scale * q k^T) v`` over each sequence's tokens.

    Raises:
        TypeError: a non-tensor; q, k_cache, v_cache of different or unsupported dtypes (bfloat16 in the
            interpreter); block_tables or context_lens not int32/int64; a non-int num_splits.
        ValueError: shapes that do not match, an unsupported head_dim or block size, tensors on different
            devices (or not on the GPU when Triton compiles), a context length < 1 or longer than its table
            holds, an owned table entry outside the pool, a non-positive sm_scale, num_splits out of range.

    Without ``context_stats`` the checks read the context lengths and the table on the host: one device sync
    per call.
    """
    p = check_paged_inputs(q, k_cache, v_cache, block_tables, context_lens, sm_scale, context_stats)
    _check_num_splits(num_splits)
    if num_splits is None:
        num_splits = choose_num_splits(p.num_seqs, p.kv_heads, p.max_context, _num_sms(), p.total_context)
    out, lse = _launch_split(q, k_cache, v_cache, block_tables, context_lens, p, num_splits, False, None, None)
    return out if lse is None else merge_splits(out, lse, q.dtype)


def paged_decode_split(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_tables: torch.Tensor,
                       context_lens: torch.Tensor, num_splits: int, sm_scale: float | None = None
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """The first step of split-KV alone: each split's partial output and log-sum-exp, before the merge.

    Split ``s`` of a sequence gets keys ``[s * L, (s + 1) * L)`` with ``L = ceil(ceil(context_len /
    num_splits) / BLOCK_N) * BLOCK_N`` (whole key tiles); a split past the end is empty: output 0, lse -inf.

    Args:
        q, k_cache, v_cache, block_tables, context_lens, sm_scale: as :func:`paged_decode_attention`.
        num_splits: 1 .. :data:`MAX_SPLITS`.

    Returns:
        (partial, lse): ``(num_seqs, heads, num_splits, head_dim)`` float32 outputs, each normalized over its
        split's keys, and ``(num_seqs, heads, num_splits)`` float32 log-sum-exps of ``sm_scale * q.k`` over them.
        :func:`merge_splits` turns them into :func:`paged_decode_attention`'s output.

    Raises:
        TypeError, ValueError: as :func:`paged_decode_attention`.
    """
    p = check_paged_inputs(q, k_cache, v_cache, block_tables, context_lens, sm_scale)
    if num_splits is None:
        raise TypeError("num_splits must be an int, got None")
    _check_num_splits(num_splits)
    return _launch_split(q, k_cache, v_cache, block_tables, context_lens, p, num_splits, True, None, None)


# --------------------------------------------------------------------------------------------------
# Trace mode
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockReads:
    """Which physical blocks each program of one kernel run read, as the kernel itself recorded them.

    Attributes:
        block_size, block_n: the pool's block size and the kernel's key tile in that run.
        num_splits: splits per sequence (the grid is ``(num_seqs, kv_heads, num_splits)``).
        context_lens: each sequence's context length.
        reads: ``reads[seq][kv_head][split]`` is the tuple of ``(logical, physical)`` block pairs that program
            read, in the order it read them; an empty split has none.
    """

    block_size: int
    block_n: int
    num_splits: int
    context_lens: tuple[int, ...]
    reads: tuple[tuple[tuple[tuple[tuple[int, int], ...], ...], ...], ...]

    def physical(self, seq: int, kv_head: int = 0) -> list[int]:
        """The physical blocks the programs of ``(seq, kv_head)`` read, split after split."""
        return [phys for split in self.reads[seq][kv_head] for _, phys in split]


def paged_decode_attention_traced(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                                  block_tables: torch.Tensor, context_lens: torch.Tensor,
                                  sm_scale: float | None = None, num_splits: int = 1
                                  ) -> tuple[torch.Tensor, BlockReads]:
    """:func:`paged_decode_attention` in trace mode: the output and the physical blocks each program read.

    Every program stores, for each logical block its key tiles touched, the physical block it loaded from
    the table. The key tile is fixed (:data:`INTERPRET_BLOCK_N` in the interpreter, :data:`TRACE_BLOCK_N`
    on a GPU), not autotuned. Arguments, result and errors as :func:`paged_decode_attention`, except that
    ``num_splits`` is an int (default 1).

    Returns:
        (out, reads): the output, and a :class:`BlockReads`.
    """
    p = check_paged_inputs(q, k_cache, v_cache, block_tables, context_lens, sm_scale)
    if num_splits is None:
        raise TypeError("num_splits must be an int, got None")
    _check_num_splits(num_splits)
    block_n = INTERPRET_BLOCK_N if device.INTERPRET or q.dtype == torch.float32 else TRACE_BLOCK_N
    codes = torch.full((p.num_seqs, p.kv_heads, num_splits, p.max_blocks), -1, dtype=torch.int32, device=q.device)
    out, lse = _launch_split(q, k_cache, v_cache, block_tables, context_lens, p, num_splits, False, block_n, codes)
    if lse is not None:
        out = merge_splits(out, lse, q.dtype)
    reads = tuple(tuple(tuple(tuple((i, b) for i, b in enumerate(split) if b >= 0) for split in head) for head in seq)
                  for seq in codes.tolist())
    return out, BlockReads(p.block_size, block_n, num_splits, tuple(context_lens.tolist()), reads)
