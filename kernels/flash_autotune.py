"""FlashAttention's tile sizes: the space autotuning searches, and the models that prune it.

On a GPU, for float16/bfloat16, ``triton.autotune`` times tile sizes, warps and pipeline stages on the real inputs
and keeps the fastest per key (:func:`length_bucket` of both lengths, head dim, causal flag; Triton adds the dtypes).
Timing a configuration means compiling it first, a few seconds each, so the space is pruned before anything is
compiled, by two resource models fitted to the compiler's own counts (``benchmarks/compile/``):
:func:`shared_memory_bytes` against what one program may opt in to, and the register estimate of
:mod:`pagedlab.tile_model` (``registers_per_thread``, shared with the performance lab) against
:data:`REGISTER_BUDGET`, plus the Hopper rule of Triton's fused-attention tutorial (:func:`hopper_keeps`).
:func:`autotuned` wraps a kernel of :mod:`pagedlab.kernels.flash_attention` with all of it.
"""

from __future__ import annotations

import os

import torch
import triton

from pagedlab.tile_model import registers_per_thread, tile_elements


# --------------------------------------------------------------------------------------------------
# The space: what autotuning may try
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


# --------------------------------------------------------------------------------------------------
# Resource models: what fits one program's shared memory and registers
# --------------------------------------------------------------------------------------------------

REGISTER_BUDGET = 250
"""Estimated 32-bit registers per thread (``registers_per_thread``) a configuration may need: a thread has at
most 255, and in the sm_90 compiles that calibrated the estimate, every configuration estimated above 250 spilled
registers to local memory (which lives in HBM) or sat at the 255 cap."""


SPILL_TOLERANCE_BYTES = 32
"""Bytes per thread a configuration may spill and still be timed by autotuning rather than pruned: a spill that
small is a few local-memory accesses per program, which autotuning can weigh against a better tile."""

RECORDED_SMALL_SPILLS = {("dkdv", 32, 128, 8, 128): 24}
"""``(kind, BLOCK_M, BLOCK_N, num_warps, head_dim)``: configurations that ``registers_per_thread`` puts over
:data:`REGISTER_BUDGET` but for which the compiler spilled at most :data:`SPILL_TOLERANCE_BYTES` (the most over
their stages; sm_90, Triton 3.9, bf16, ``benchmarks/compile/``): the dK/dV tile of Triton's tutorial, 4 bytes at
2 stages and 24 at 3. Pruning keeps them, so that autotuning times them."""


def shared_memory_bytes(kind: str, block_m: int, block_n: int, stages: int, head_dim: int, elem: int) -> int:
    """The shared memory of a configuration: ``stages`` buffers of the two tiles the loop streams (the software
    pipeline fills one while the others are read) plus the tiles the program keeps
    (:func:`pagedlab.tile_model.tile_elements`). This is Triton's own count for sm_90 compiles in bf16 (``benchmarks/compile/``: the forward at d = 128 and 256, the backward at 128), and
    an upper bound for sm_80, whose pipeline keeps one buffer less; float32 gets 25% more for the layouts of its
    non-tensor-core products."""
    kept, _, streamed = tile_elements(kind, block_m, block_n, head_dim)
    return int((stages * 2 * streamed + kept) * elem * (1.25 if elem == 4 else 1.0))


# --------------------------------------------------------------------------------------------------
# Pruning, and the autotuner built from it
# --------------------------------------------------------------------------------------------------

def hopper_keeps(kind: str, block_m: int, block_n: int, num_warps: int, capability_major: int | None) -> bool:
    """False for a forward configuration of 8 warps whose tile is under 128 x 128 on Hopper (sm_90), as the
    ``keep()`` filter of Triton's fused-attention tutorial (``06-fused-attention.py``) drops it: Hopper's
    ``wgmma`` runs per warpgroup (4 warps) on 64-row slices, so 8 warps want 128 query rows, and a smaller tile
    leaves the two warpgroups too little work each. Other kernels and GPUs keep every configuration."""
    return not (kind == "fwd" and capability_major == 9 and num_warps == 8 and block_m * block_n < 128 * 128)


def prune_configs(kind: str, configs: list[tuple[int, int, int, int]], head_dim: int, elem: int,
                  smem_limit: int, capability_major: int | None = None) -> list[tuple[int, int, int, int]]:
    """The configurations of ``configs`` that fit both the shared memory (``smem_limit`` bytes per block) and
    :data:`REGISTER_BUDGET` (or are :data:`RECORDED_SMALL_SPILLS`), and that :func:`hopper_keeps` keeps on a GPU of
    compute capability ``capability_major`` (None: no GPU-specific filter); never empty: if none is left, the
    smallest tiles with one stage."""
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


_TUNED: dict = {}


def autotuned(kind: str, kernel):
    """The autotuned version of ``kernel`` (of kind ``"fwd"``, ``"dkdv"`` or ``"dq"``), built on first use and kept:
    ``triton.autotune`` needs a GPU driver, which a CPU-only machine (interpreter) does not have in every Triton
    version."""
    if kind not in _TUNED:
        configs = [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
                   for bm, bn, w, s in autotune_space(kind)]
        # Keyed on the length buckets and head dim (and, by Triton, on the dtypes): the best tiles depend on them.
        _TUNED[kind] = triton.autotune(configs=configs, key=["n_q_bucket", "n_k_bucket", "HEAD_DIM", "CAUSAL"],
                                       prune_configs_by={"early_config_prune": _prune(kind)})(kernel)
    return _TUNED[kind]



def tuned_kernel(kind: str):
    """The autotuner :func:`autotuned` built for ``kind``, or None before the first autotuned launch; its
    ``best_config`` and ``configs_timings`` say what it chose and what it timed."""
    return _TUNED.get(kind)
