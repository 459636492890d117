# Over 450 lines: the forward and backward launchers share their checks, autotuning space and trace mode here.
"""FlashAttention-2 in Triton, the Python side: checks, launches, autotuning, autograd, trace mode.

:func:`flash_attention` is exact attention ``softmax(sm_scale * q k^T) v`` for ``(batch, heads, seq, head_dim)``
tensors, differentiable: a ``torch.autograd.Function`` whose forward runs the kernel of
:mod:`pagedlab.kernels.flash_forward` (saving one log-sum-exp per query row) and whose backward runs the kernels
of :mod:`pagedlab.kernels.flash_backward` (recomputing P from it). Any lengths, ``n_q != n_k`` with causal
attention aligned bottom-right, head dims :data:`HEAD_DIMS`, float16/bfloat16/float32, GQA/MQA (fewer K/V
heads than query heads) in both directions.

For float16/bfloat16 on a GPU ``triton.autotune`` picks tile sizes and warps; in Triton's interpreter (CPU),
and for float32, a fixed small configuration runs (see :data:`FIXED_BLOCKS`).
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
from pagedlab.kernels.flash_forward import LOG2E, fwd_kernel
from pagedlab.trace import TileStep, TileTrace
from pagedlab.validate import check_scale

HEAD_DIMS = (16, 32, 64, 128, 256)
"""Head dims the kernels take: powers of two (a Triton block) and >= 16 (the smallest ``tl.dot``)."""

FIXED_BLOCKS = {"fwd": (32, 32), "dkdv": (32, 32), "dq": (32, 32)}
"""(BLOCK_M, BLOCK_N) of each kernel when it is not autotuned: in the interpreter (where timing
configurations would time NumPy), and for float32 on a GPU (IEEE float32 products do not use the
tensor cores: float32 is for checking results, not for speed, and tuning it would only cost compile time)."""

TRACE_BLOCKS = (64, 64)
"""(BLOCK_M, BLOCK_N) of a traced run on the GPU; a trace needs one known tiling, not the tuned one."""


# --------------------------------------------------------------------------------------------------
# Tile sizes: autotuned for half precision on a GPU, fixed otherwise
# --------------------------------------------------------------------------------------------------

def _space(block_m: tuple, block_n: tuple, warps: tuple, stages: tuple) -> list[tuple[int, int, int, int]]:
    return [(bm, bn, w, s) for bm in block_m for bn in block_n for w in warps for s in stages]


CONFIG_SPACE = {
    "fwd": _space((64, 128), (32, 64, 128), (4, 8), (2, 3, 4)),
    "dkdv": _space((32, 64), (64, 128), (4, 8), (2, 3)),
    "dq": _space((64, 128), (32, 64), (4, 8), (2, 3)),
}
"""(BLOCK_M, BLOCK_N, num_warps, num_stages) that autotuning tries for float16/bfloat16 on a GPU, before
:func:`prune_configs` drops those that cannot fit. BLOCK_M is the query tile and BLOCK_N the key tile in every
kernel: the forward and dQ kernels own a query tile and loop over key tiles, dK/dV the other way round. The
forward's space is the Hopper search space of Triton's fused-attention tutorial (``06-fused-attention.py``);
the backward kernels loop over the other axis, so their streamed tile is the small one."""

QUICK_CONFIGS = {
    "fwd": [(128, 64, 8, 3), (64, 64, 4, 3), (128, 128, 8, 3)],
    "dkdv": [(32, 64, 8, 2), (32, 64, 8, 3), (32, 128, 8, 2)],
    "dq": [(64, 64, 8, 3), (128, 32, 8, 3), (128, 64, 8, 3)],
}
"""A few configurations of :data:`CONFIG_SPACE` each, tried instead of it when ``PAGEDLAB_AUTOTUNE=quick``: every
configuration compiles once per head dim, dtype and causal flag, a few seconds each, so the whole space takes
many minutes on first use. Tests (which check results, not speed) and short GPU sessions use these."""


def autotune_space(kind: str) -> list[tuple[int, int, int, int]]:
    """The configurations autotuning tries for ``kind``: :data:`CONFIG_SPACE`, or :data:`QUICK_CONFIGS` when the
    environment variable ``PAGEDLAB_AUTOTUNE`` is ``quick`` (read when the kernel is first tuned)."""
    return QUICK_CONFIGS[kind] if os.environ.get("PAGEDLAB_AUTOTUNE") == "quick" else CONFIG_SPACE[kind]


REGISTER_BUDGET = 250
"""Estimated 32-bit registers per thread (:func:`registers_per_thread`) a configuration may need: a thread has at
most 255, and in the sm_90 compiles that calibrated the estimate, every configuration estimated above 250 spilled
registers to local memory (which lives in HBM) or sat at the 255 cap."""


SPILL_TOLERANCE_BYTES = 32
"""Bytes per thread a configuration may spill and still be timed by autotuning rather than pruned: a spill that
small is a few local-memory accesses per program, which autotuning can weigh against a better tile."""

RECORDED_SMALL_SPILLS = {("dkdv", 32, 128, 8, 128): 24}
"""``(kind, BLOCK_M, BLOCK_N, num_warps, head_dim)``: configurations that :func:`registers_per_thread` puts over
:data:`REGISTER_BUDGET` but for which the compiler spilled at most :data:`SPILL_TOLERANCE_BYTES` (the most over
their stages; sm_90, Triton 3.9, bf16, ``benchmarks/compile/``): the dK/dV tile of Triton's tutorial, 4 bytes at
2 stages and 24 at 3. Pruning keeps them, so that autotuning times them."""


def shared_memory_bytes(kind: str, block_m: int, block_n: int, stages: int, head_dim: int, elem: int) -> int:
    """The shared memory of a configuration: ``stages`` buffers of the tiles the loop streams (the software
    pipeline fills one while the others are read) plus the tiles the program keeps. This is Triton's own count
    for sm_90 compiles in bf16 (``benchmarks/compile/``: the forward at d = 128 and 256, the backward at 128), and
    an upper bound for sm_80, whose pipeline keeps one buffer less; float32 gets 25% more for the layouts of its
    non-tensor-core products."""
    streamed = {"fwd": 2 * block_n, "dkdv": 2 * block_m, "dq": 2 * block_n}[kind] * head_dim
    kept = {"fwd": block_m, "dkdv": 2 * block_n, "dq": 2 * block_m}[kind] * head_dim
    return int((stages * streamed + kept) * elem * (1.25 if elem == 4 else 1.0))


KEPT_WEIGHT = {"fwd": 1.0, "dkdv": 2.5, "dq": 0.6}
"""Registers per element of the tiles a program keeps, by kernel, fitted to ptxas's counts of sm_90 compiles: the
dK/dV kernel keeps four tiles (K, V, dK, dV) live across its loops over query tiles and query heads, so each
counts more than the forward's accumulator; the dQ kernel's ``2 * BLOCK_M * d`` counts Q and dO with dQ."""


def registers_per_thread(kind: str, block_m: int, block_n: int, num_warps: int, head_dim: int) -> int:
    """Estimated 32-bit registers per thread of a configuration in half precision: the tiles a program holds,
    spread over its ``32 * num_warps`` threads, plus 40 for addresses, masks and loop state.

    ``(w * kept + scores / 4 + 2 * streamed) / threads + 40``, where ``kept`` counts the elements of the tiles the
    program keeps (forward: ``BLOCK_M * d``; dK/dV: ``2 * BLOCK_N * d``; dQ: ``2 * BLOCK_M * d``), ``w`` is
    :data:`KEPT_WEIGHT`, ``scores`` counts the elements of its score-sized tiles (``BLOCK_M * BLOCK_N`` each: one in
    the forward, two in the backward) and ``streamed`` those of one tile its loop loads (``BLOCK_N * d``, or
    ``BLOCK_M * d`` for dK/dV). Fitted to ptxas's register counts for sm_90 (Triton 3.9, bf16; the forward at
    d = 128 and 256, the backward at d = 128; ``benchmarks/compile/``): within about 15% for the forward's
    configurations that did not spill, and above :data:`REGISTER_BUDGET` for every configuration that spilled.
    Not calibrated for sm_80 (A100), where a few configurations it keeps spill up to 128 bytes: autotuning
    then times them and keeps them only if they are fastest anyway.
    """
    kept = {"fwd": block_m, "dkdv": 2 * block_n, "dq": 2 * block_m}[kind] * head_dim
    scores = {"fwd": 1, "dkdv": 2, "dq": 2}[kind] * block_m * block_n
    streamed = {"fwd": block_n, "dkdv": block_m, "dq": block_n}[kind] * head_dim
    return int(KEPT_WEIGHT[kind] * kept + scores / 4 + 2 * streamed) // (32 * num_warps) + 40


def hopper_keeps(kind: str, block_m: int, block_n: int, num_warps: int, capability_major: int | None) -> bool:
    """False for a forward configuration of 8 warps whose tile is under 128 x 128 on Hopper (sm_90), as the
    ``keep()`` filter of Triton's fused-attention tutorial (``06-fused-attention.py``) drops it: Hopper's
    ``wgmma`` runs per warpgroup (4 warps) on 64-row slices, so 8 warps want 128 query rows, and a smaller tile
    leaves the two warpgroups too little work each. Other kernels and GPUs keep every configuration."""
    return not (kind == "fwd" and capability_major == 9 and num_warps == 8 and block_m * block_n < 128 * 128)


def prune_configs(kind: str, configs: list[tuple[int, int, int, int]], head_dim: int, elem: int,
                  smem_limit: int, capability_major: int | None = None) -> list[tuple[int, int, int, int]]:
    """The configurations of ``configs`` that fit both the shared memory (``smem_limit`` bytes per block)
    and :data:`REGISTER_BUDGET` (or are :data:`RECORDED_SMALL_SPILLS`), and that :func:`hopper_keeps` keeps on a GPU of compute capability
    ``capability_major`` (None: no GPU-specific filter); never empty: if none is left, the smallest tiles with
    one stage."""
    fits = [c for c in configs
            if shared_memory_bytes(kind, c[0], c[1], c[3], head_dim, elem) <= smem_limit
            and (registers_per_thread(kind, c[0], c[1], c[2], head_dim) <= REGISTER_BUDGET
                 or (kind, c[0], c[1], c[2], head_dim) in RECORDED_SMALL_SPILLS)
            and hopper_keeps(kind, c[0], c[1], c[2], capability_major)]
    if fits:
        return fits
    bm, bn, _, _ = min(configs, key=lambda c: (c[0] * c[1], c[0]))
    return [(bm, bn, 8, 1)]


def _shared_memory_limit() -> int:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    # Ampere and newer let a block opt in to more than the default 48 KiB (163 KiB on an A100, 227 on an H100).
    return getattr(props, "shared_memory_per_block_optin", 99 * 1024)


def _prune(kind: str):
    def prune(configs, named_args, **kwargs):
        head_dim = kwargs.get("HEAD_DIM", named_args.get("HEAD_DIM"))
        as_tuples = {(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages): c for c in configs}
        kept = prune_configs(kind, list(as_tuples), head_dim, named_args["Q"].element_size(), _shared_memory_limit(),
                             torch.cuda.get_device_capability()[0])
        return [as_tuples.get(c) or triton.Config({"BLOCK_M": c[0], "BLOCK_N": c[1]}, num_warps=c[2], num_stages=c[3])
                for c in kept]

    return prune


def length_bucket(n: int) -> int:
    """The autotuning key of a sequence length: the next power of two (at least 16), so 4000 and 4096 share
    one tuning run instead of each new length timing every configuration again."""
    return max(16, 1 << (n - 1).bit_length())


_KERNELS = {"fwd": fwd_kernel, "dkdv": bwd_dkdv_kernel, "dq": bwd_dq_kernel}
_TUNED: dict = {}


def _autotuned(kind: str):
    """The autotuned version of a kernel, built on first use: ``triton.autotune`` needs a GPU driver,
    which a CPU-only machine (interpreter) does not have in every Triton version."""
    if kind not in _TUNED:
        configs = [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
                   for bm, bn, w, s in autotune_space(kind)]
        # Keyed on the length buckets and head dim (and, by Triton, on the dtypes): the best tiles depend on them.
        _TUNED[kind] = triton.autotune(configs=configs, key=["n_q_bucket", "n_k_bucket", "HEAD_DIM", "CAUSAL"],
                                       prune_configs_by={"early_config_prune": _prune(kind)})(_KERNELS[kind])
    return _TUNED[kind]


def _launch(kind: str, grid_of, args: tuple, meta: dict, blocks: tuple[int, int] | None) -> None:
    """Run kernel ``kind``: autotuned for half precision on a GPU, else with ``blocks`` or :data:`FIXED_BLOCKS`."""
    q = args[0]
    if blocks is None and not device.INTERPRET and q.dtype != torch.float32:
        _autotuned(kind)[lambda cfg: grid_of(cfg["BLOCK_M"], cfg["BLOCK_N"])](*args, **meta)
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
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{name} must have shape (batch, heads, seq, head_dim), got shape {tuple(t.shape)}")
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
    for name, value in (("block_m", block_m), ("block_n", block_n)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 16 or value > 256 or value & (value - 1):
            raise ValueError(f"{name} must be a power of two from 16 to 256 (a Triton block, and tl.dot needs "
                             f">= 16), got {value!r}; give both block_m and block_n, or neither")
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


def attention_flops(batch: int, heads: int, n_q: int, n_k: int, head_dim: int, causal: bool,
                    mode: str = "fwd", count: str = "conventional") -> float:
    """Floating-point operations of attention: the usual count for TFLOP/s figures, or this course's work.

    Every matrix product of attention is ``2 * n_q * n_k * head_dim`` FLOPs per head, halved when causal
    (about half the scores are masked). The forward runs two (``Q K^T`` and ``P V``).

    * ``count="conventional"`` (the FlashAttention papers', Triton's tutorial's, for TFLOP/s): the backward
      is 2.5 forwards, five products (recompute ``Q K^T``; ``dV = P^T dO``, ``dP = dO V^T``,
      ``dQ = dS K``, ``dK = dS^T Q``), as FlashAttention-2 runs them with atomic adds into dQ.
    * ``count="kernel"``: the products the course's kernels really run. The dK/dV kernel runs four
      (``Q K^T``, ``P^T dO``, ``dO V^T``, ``dS^T Q``) and the separate dQ kernel three more (``Q K^T`` and
      ``dO V^T`` again, then ``dS K``): seven, 3.5 forwards. Two recomputed products buy a dQ without atomics.

    Args:
        batch, heads, n_q, n_k, head_dim: the sizes. causal: halve every product.
        mode: ``"fwd"``, ``"bwd"`` or ``"fwd+bwd"``. count: ``"conventional"`` or ``"kernel"``.
        Softmax work is not counted.

    Raises:
        ValueError: an unknown ``mode`` or ``count``.
    """
    product = 2.0 * batch * heads * n_q * n_k * head_dim * (0.5 if causal else 1.0)
    bwd_products = {"conventional": 5, "kernel": 7}
    if count not in bwd_products:
        raise ValueError(f"count must be one of {list(bwd_products)}, got {count!r}")
    products = {"fwd": 2, "bwd": bwd_products[count], "fwd+bwd": 2 + bwd_products[count]}
    if mode not in products:
        raise ValueError(f"mode must be one of {list(products)}, got {mode!r}")
    return product * products[mode]
