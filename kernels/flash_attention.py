"""FlashAttention-2 in Triton, the Python side: checks, launches, autograd, trace mode.

:func:`flash_attention` is exact attention ``softmax(sm_scale * q k^T) v`` for ``(batch, heads, seq, head_dim)``
tensors, differentiable: a ``torch.autograd.Function`` whose forward runs the kernel of
:mod:`pagedlab.kernels.flash_forward` (saving one log-sum-exp per query row) and whose backward runs the kernels
of :mod:`pagedlab.kernels.flash_backward` (recomputing P from it). Any lengths, ``n_q != n_k`` with causal
attention aligned bottom-right, head dims :data:`HEAD_DIMS`, float16/bfloat16/float32, GQA/MQA (fewer K/V
heads than query heads) in both directions.

For float16/bfloat16 on a GPU ``triton.autotune`` picks tile sizes and warps from the space of
:mod:`pagedlab.kernels.flash_autotune`; in Triton's interpreter (CPU), and for float32, a fixed small
configuration runs (see :data:`FIXED_BLOCKS`).
:func:`flash_attention_forward` runs the forward alone and returns ``lse`` too; with ``trace=`` it runs the
kernel's trace mode and fills a :class:`~pagedlab.trace.TileTrace` with the tiles each program loaded.
"""

from __future__ import annotations

import math
import os

import torch
import triton
import triton.language as tl

from pagedlab import device
from pagedlab.kernels.flash_backward import bwd_dkdv_kernel, bwd_dq_kernel, bwd_preprocess_kernel
from pagedlab.kernels.flash_autotune import autotuned, length_bucket
from pagedlab.kernels.flash_forward import LOG2E, fwd_kernel
from pagedlab.trace import TileStep, TileTrace
from pagedlab.validate import check_count, check_scale, check_tensor

HEAD_DIMS = (16, 32, 64, 128, 256)
"""Head dims the kernels take: powers of two (a Triton block) and >= 16 (the smallest ``tl.dot``)."""

FIXED_BLOCKS = {"fwd": (32, 32), "dkdv": (32, 32), "dq": (32, 32)}
"""(BLOCK_M, BLOCK_N) of each kernel when it is not autotuned: in the interpreter (where timing
configurations would time NumPy), and for float32 on a GPU (IEEE float32 products do not use the
tensor cores: float32 is for checking results, not for speed, and tuning it would only cost compile time)."""

TRACE_BLOCKS = (64, 64)
"""(BLOCK_M, BLOCK_N) of a traced run on the GPU; a trace needs one known tiling, not the tuned one."""


# --------------------------------------------------------------------------------------------------
# Launches: autotuned for half precision on a GPU, fixed tiles otherwise
# --------------------------------------------------------------------------------------------------

_KERNELS = {"fwd": fwd_kernel, "dkdv": bwd_dkdv_kernel, "dq": bwd_dq_kernel}


def _launch(kind: str, grid_of, args: tuple, meta: dict, blocks: tuple[int, int] | None) -> None:
    """Run kernel ``kind``: autotuned for half precision on a GPU, else with ``blocks`` or :data:`FIXED_BLOCKS`."""
    q = args[0]
    if blocks is None and not device.INTERPRET and q.dtype != torch.float32:
        autotuned(kind, _KERNELS[kind])[lambda cfg: grid_of(cfg["BLOCK_M"], cfg["BLOCK_N"])](*args, **meta)
        return
    block_m, block_n = blocks or FIXED_BLOCKS[kind]
    stages = 2
    if blocks is None and meta["HEAD_DIM"] * q.element_size() > 512:
        # float32 rows of head dim 256: half the tiles and no pipelining, to fit 99 KiB of shared memory.
        block_m, block_n, stages = block_m // 2, block_n // 2, 1
    _KERNELS[kind][grid_of(block_m, block_n)](*args, **meta, BLOCK_M=block_m, BLOCK_N=block_n,
                                              num_warps=4, num_stages=stages)


# --------------------------------------------------------------------------------------------------
# Checks, launches, autograd
# --------------------------------------------------------------------------------------------------


def dot_precision(dtype: torch.dtype) -> str:
    """``tl.dot``'s ``input_precision`` for inputs of ``dtype``, shared by every kernel of the course."""
    # fp32 inputs would otherwise be rounded to TF32 by the tensor cores (10-bit mantissa): "ieee" keeps
    # fp32 honest on the GPU, as the interpreter (NumPy) always is. fp16/bf16 ignore the setting.
    return "ieee" if dtype == torch.float32 else "tf32"


def check_dtypes(**tensors: torch.Tensor) -> None:
    """Raise ``TypeError`` unless the named tensors (q first) share one dtype the kernels compute in.

    float16 and float32 everywhere; bfloat16 only compiled on a GPU (Triton's interpreter gets it wrong).
    Shared by the FlashAttention and paged decode kernels, so both say the same thing.
    """
    (first, t0), *_ = tensors.items()
    if len({t.dtype for t in tensors.values()}) != 1:
        got = ", ".join(f"{name} {t.dtype}" for name, t in tensors.items())
        raise TypeError(f"{', '.join(list(tensors)[:-1])} and {list(tensors)[-1]} must have one dtype, got {got}")
    if t0.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise TypeError(f"{first} has dtype {t0.dtype}; the kernels take float16, bfloat16 or float32")
    if t0.dtype == torch.bfloat16 and device.INTERPRET:
        raise TypeError(f"{first} has dtype bfloat16, which Triton's interpreter (CPU) does not compute correctly; "
                        "use float32 or float16 here, bfloat16 on a GPU")


def _check_inputs(q, k, v, causal, sm_scale) -> float:
    """Validate the arguments of :func:`flash_attention`; return the softmax scale to use."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, t, 4, "(batch, heads, seq, head_dim)")
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    if k.shape != v.shape:
        raise ValueError(f"k and v must have the same shape, got k {tuple(k.shape)} and v {tuple(v.shape)}")
    batch, heads, n_q, head_dim = q.shape
    if k.shape[0] != batch or k.shape[3] != head_dim:
        raise ValueError(f"k must have the batch and head_dim of q {tuple(q.shape)}, got {tuple(k.shape)}")
    if k.shape[1] == 0 or heads % k.shape[1]:
        raise ValueError(f"q has {heads} heads and k, v have {k.shape[1]}: the number of query heads must be a "
                         f"multiple of the number of K/V heads (GQA/MQA)")
    if min(batch, heads, n_q, k.shape[2]) == 0:
        raise ValueError(f"empty input: q {tuple(q.shape)}, k {tuple(k.shape)}; batch, heads and both sequence "
                         f"lengths must be positive")
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"head_dim {head_dim} is not supported, the kernels take {HEAD_DIMS}; pad q, k, v "
                         f"with zeros up to the next one and pass sm_scale={1 / math.sqrt(head_dim):.6g}")
    check_dtypes(q=q, k=k, v=v)
    if not q.device == k.device == v.device:
        raise ValueError(f"q, k and v must be on one device, got q on {q.device}, k on {k.device}, v on {v.device}")
    if not device.INTERPRET and q.device.type != "cuda":
        raise ValueError(f"q is on {q.device}, but Triton compiles for the GPU here: move q, k, v to {device.DEVICE}")
    return check_scale("sm_scale", sm_scale, 1.0 / math.sqrt(head_dim))


def _check_blocks(block_m: int | None, block_n: int | None) -> tuple[int, int] | None:
    if block_m is None and block_n is None:
        return None
    if block_m is None or block_n is None:
        raise ValueError(f"give both block_m and block_n, or neither; got block_m={block_m}, block_n={block_n}")
    for name, value in (("block_m", block_m), ("block_n", block_n)):
        if not 16 <= check_count(name, value, 1) <= 256 or value & (value - 1):
            raise ValueError(f"{name} must be a power of two from 16 to 256 (a Triton block, and tl.dot needs "
                             f">= 16), got {value}")
    return block_m, block_n


def _unit_stride(t: torch.Tensor) -> torch.Tensor:
    # Any strides work in the kernels, but rows must be contiguous for coalesced, vectorized loads. And the
    # kernels offset batch and head in int64 but rows in int32: a (batch, seq, heads, d) layout seen as
    # (batch, heads, seq, d) puts row n_q at n_q * heads * d, past 2**31 at 128K tokens of 128 heads of 128.
    if t.stride(-1) != 1 or t.shape[2] * t.stride(2) >= 2**31:
        return t.contiguous()
    return t


USE_TMA = os.environ.get("PAGEDLAB_TMA", "0") == "1"
"""Load K and V through tensor descriptors (TMA) in the forward where possible: set ``PAGEDLAB_TMA=1``. Off by
default until a recorded GPU run shows it correct and faster; the interpreter tests run both paths."""


def _tma_possible(*tensors: torch.Tensor) -> bool:
    """Whether the forward can load ``tensors`` through tensor descriptors: Triton has them (3.2 does not), the
    interpreter (which emulates them) or a Hopper-or-newer GPU runs the kernel, and every row starts on a
    16-byte boundary, as TMA requires."""
    if not hasattr(tl, "make_tensor_descriptor"):
        return False
    if not device.INTERPRET and torch.cuda.get_device_capability(tensors[0].device)[0] < 9:
        return False
    return all(t.data_ptr() % 16 == 0 and all(s * t.element_size() % 16 == 0 for s in t.stride()[:-1])
               for t in tensors)


def _tma_allocator(size: int, alignment: int, stream) -> torch.Tensor:
    # Descriptors built inside a kernel need a little global scratch memory, which Triton asks the host for.
    return torch.empty(size, dtype=torch.int8, device=device.DEVICE)


def _use_tma(q, k, v) -> bool:
    if not (USE_TMA and _tma_possible(k, v)):
        return False
    if not device.INTERPRET and hasattr(triton, "set_allocator"):
        triton.set_allocator(_tma_allocator)
    return True


def _forward(q, k, v, causal: bool, sm_scale: float, blocks=None, trace_codes=None):
    batch, heads, n_q, head_dim = q.shape
    kv_heads, n_k = k.shape[1], k.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    args = (q, k, v, out, lse, lse if trace_codes is None else trace_codes,
            *q.stride(), *k.stride(), *v.stride(), *out.stride(),
            heads, heads // kv_heads, n_q, n_k, sm_scale * LOG2E, length_bucket(n_q), length_bucket(n_k))
    meta = dict(HEAD_DIM=head_dim, CAUSAL=causal, TRACE=trace_codes is not None, PRECISION=dot_precision(q.dtype),
                TMA=_use_tma(q, k, v))
    _launch("fwd", lambda bm, bn: (triton.cdiv(n_q, bm), batch * heads), args, meta, blocks)
    return out, lse


def _backward(q, k, v, out, lse, d_out, causal: bool, sm_scale: float):
    batch, heads, n_q, head_dim = q.shape
    kv_heads, n_k = k.shape[1], k.shape[2]
    d_out = d_out.contiguous()  # autograd may hand us a broadcast (stride-0) gradient
    delta = torch.empty_like(lse)
    block = FIXED_BLOCKS["fwd"][0] if device.INTERPRET else 128
    bwd_preprocess_kernel[(triton.cdiv(n_q, block), batch * heads)](
        out, d_out, delta, *out.stride(), *d_out.stride(), heads, n_q, HEAD_DIM=head_dim, BLOCK_M=block)

    dq = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    dk = torch.empty(k.shape, dtype=k.dtype, device=k.device)
    dv = torch.empty(v.shape, dtype=v.dtype, device=v.device)
    group = heads // kv_heads
    meta = dict(HEAD_DIM=head_dim, CAUSAL=causal, PRECISION=dot_precision(q.dtype))
    strides = (*q.stride(), *k.stride(), *v.stride(), *d_out.stride())
    _launch("dkdv", lambda bm, bn: (triton.cdiv(n_k, bn), batch * kv_heads),
            (q, k, v, d_out, dk, dv, lse, delta, *strides, *dk.stride(), *dv.stride(),
             heads, kv_heads, group, n_q, n_k, sm_scale, sm_scale * LOG2E, length_bucket(n_q), length_bucket(n_k)),
            meta, None)
    _launch("dq", lambda bm, bn: (triton.cdiv(n_q, bm), batch * heads),
            (q, k, v, d_out, dq, lse, delta, *strides, *dq.stride(),
             heads, group, n_q, n_k, sm_scale, sm_scale * LOG2E, length_bucket(n_q), length_bucket(n_k)),
            meta, None)
    return dq, dk, dv


class _FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal, sm_scale):
        out, lse = _forward(q, k, v, causal, sm_scale)
        # Saving lse (n_q floats per head) instead of P (n_q * n_k) is what keeps the memory O(N).
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.causal, ctx.sm_scale = causal, sm_scale
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, d_out):
        q, k, v, out, lse = ctx.saved_tensors
        dq, dk, dv = _backward(q, k, v, out, lse, d_out, ctx.causal, ctx.sm_scale)
        return dq, dk, dv, None, None


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                    sm_scale: float | None = None) -> torch.Tensor:
    """Exact attention softmax(sm_scale * q k^T) v with the FlashAttention-2 kernels, differentiable.

    Args:
        q: (batch, heads, n_q, head_dim) queries. k, v: (batch, kv_heads, n_k, head_dim); ``heads`` must
            be a multiple of ``kv_heads`` (GQA/MQA). Any lengths; head_dim in :data:`HEAD_DIMS`. One dtype:
            float16, bfloat16 (GPU only) or float32; one device (CUDA when Triton compiles, else the CPU).
            Tensors whose last dim is not contiguous, or whose rows of one head span 2**31 elements, are
            copied to contiguous ones first.
        causal: mask keys after each query, aligned bottom-right when ``n_q != n_k`` (query ``i`` sees
            keys ``j <= i + n_k - n_q``); a query that sees no key gets output 0.
        sm_scale: the softmax scale, ``1/sqrt(head_dim)`` by default.

    Returns:
        The output, shaped and typed like ``q``. Backpropagating through it runs the Triton backward.

    Raises:
        TypeError: a non-tensor, a dtype mix or an unsupported dtype, a non-bool ``causal``.
        ValueError: shapes that do not match, an unsupported head_dim, empty inputs, tensors on
            different devices (or not on the GPU when Triton compiles), a non-positive ``sm_scale``.
    """
    scale = _check_inputs(q, k, v, causal, sm_scale)
    return _FlashAttention.apply(_unit_stride(q), _unit_stride(k), _unit_stride(v), causal, scale)


def flash_attention_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                            sm_scale: float | None = None, *, block_m: int | None = None,
                            block_n: int | None = None, trace: TileTrace | None = None
                            ) -> tuple[torch.Tensor, torch.Tensor]:
    """Run only the forward kernel (no autograd) and return its log-sum-exp too.

    Args:
        q, k, v, causal, sm_scale: as in :func:`flash_attention`.
        block_m, block_n: fixed tile sizes (powers of two, 16 to 256), both or neither; by default the
            autotuned ones for half precision on a GPU, else :data:`FIXED_BLOCKS`.
        trace: a :class:`~pagedlab.trace.TileTrace` to fill with the key tiles that the programs of
            (batch 0, head 0) loaded, in order, as the kernel itself recorded them (trace mode, see
            :func:`trace_from_codes`; tiles default to :data:`TRACE_BLOCKS` on a GPU).

    Returns:
        (out, lse): out like ``q``; lse (batch, heads, n_q) float32, ``log sum_j exp(sm_scale * q_i.k_j)``
        over the keys query ``i`` sees (``-inf`` for a query that sees none).

    Raises:
        TypeError, ValueError: as :func:`flash_attention`, and for tile sizes that are not powers of two
            from 16 to 256.
    """
    scale = _check_inputs(q, k, v, causal, sm_scale)
    blocks = _check_blocks(block_m, block_n)
    q, k, v = _unit_stride(q), _unit_stride(k), _unit_stride(v)
    if trace is None:
        return _forward(q, k, v, causal, scale, blocks)
    block_m, block_n = blocks or (FIXED_BLOCKS["fwd"] if device.INTERPRET else TRACE_BLOCKS)
    batch, heads, n_q, _ = q.shape
    n_k = k.shape[2]
    codes = torch.full((batch * heads, triton.cdiv(n_q, block_m), triton.cdiv(n_k, block_n)), -1,
                       dtype=torch.int32, device=q.device)
    out, lse = _forward(q, k, v, causal, scale, (block_m, block_n), codes)
    trace_from_codes(codes[0].cpu(), n_q, n_k, block_m, block_n, causal, trace)
    return out, lse


def trace_from_codes(codes: torch.Tensor, n_q: int, n_k: int, block_m: int, block_n: int, causal: bool,
                     trace: TileTrace | None = None) -> TileTrace:
    """Turn the forward kernel's trace buffer for one (batch, head) into a :class:`TileTrace`.

    Args:
        codes: (query tiles, key tiles) int tensor; row ``i`` holds, in visiting order, ``2 * key_tile + 1``
            for each key tile of program ``i`` that the causal diagonal crosses, ``2 * key_tile`` for the
            others, then -1 from where the program stopped.
        n_q, n_k, block_m, block_n, causal: the run's lengths, tiles and mask.
        trace: the trace to fill (restarted); a new one by default.

    Returns:
        The trace, ``source="triton"``: one step per tile loaded, program by program, kind "full" or
        "masked", without values (m, l, out are None). Tiles a program never loaded are not steps, as in
        ``tiled_attention``'s trace; ``trace.kind_of`` says they are "skipped".
    """
    trace = TileTrace() if trace is None else trace
    trace.start(n_q, n_k, block_m, block_n, causal, "triton")
    for q_tile, row in enumerate(codes.tolist()):
        for code in row:
            if code < 0:
                break
            trace.record(TileStep(q_tile, code // 2, "masked" if code % 2 else "full"))
    return trace

