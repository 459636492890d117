"""What one FlashAttention program holds in registers: the one model the autotuner and the performance lab share.

:func:`tile_elements` counts the elements of the tiles a program of each kernel (forward, dK/dV, dQ) keeps across
its loop, of its score-sized tiles, and of one tile its loop streams. Two readings are built on it:
:func:`registers_per_thread`, the estimate fitted to the compiler's counts that pruning uses
(:mod:`pagedlab.kernels.flash_autotune`), and :func:`pagedlab.perf_lab.live_tile_registers`, the lower bound of
the forward's live tiles that notebook 04b sets beside it; :mod:`pagedlab.kernels.flash_autotune`'s
``shared_memory_bytes`` counts the same tiles in shared memory. Plain Python: the performance lab imports it
without importing Triton.
"""

from __future__ import annotations


def tile_elements(kind: str, block_m: int, block_n: int, head_dim: int) -> tuple[int, int, int]:
    """``(kept, scores, streamed)`` of a program of ``kind`` (``"fwd"``, ``"dkdv"`` or ``"dq"``): the elements of the
    tiles it keeps across its loop (forward: the accumulator, ``BLOCK_M * d``; dK/dV: ``2 * BLOCK_N * d``; dQ:
    ``2 * BLOCK_M * d``), of its score-sized tiles (``BLOCK_M * BLOCK_N`` each: one in the forward, two in the
    backward), and of one tile its loop loads (``BLOCK_N * d``, or ``BLOCK_M * d`` for dK/dV).

    Raises:
        KeyError: an unknown ``kind``.
    """
    kept = {"fwd": block_m, "dkdv": 2 * block_n, "dq": 2 * block_m}[kind] * head_dim
    scores = {"fwd": 1, "dkdv": 2, "dq": 2}[kind] * block_m * block_n
    streamed = {"fwd": block_n, "dkdv": block_m, "dq": block_n}[kind] * head_dim
    return kept, scores, streamed


KEPT_WEIGHT = {"fwd": 1.0, "dkdv": 2.5, "dq": 0.6}
"""Registers per element of the tiles a program keeps, by kernel, fitted to ptxas's counts of sm_90 compiles: the
dK/dV kernel keeps four tiles (K, V, dK, dV) live across its loops over query tiles and query heads, so each
counts more than the forward's accumulator; the dQ kernel's ``2 * BLOCK_M * d`` counts Q and dO with dQ."""


def registers_per_thread(kind: str, block_m: int, block_n: int, num_warps: int, head_dim: int) -> int:
    """Estimated 32-bit registers per thread of a configuration in half precision: the tiles a program holds,
    spread over its ``32 * num_warps`` threads, plus 40 for addresses, masks and loop state.

    ``(w * kept + scores / 4 + 2 * streamed) / threads + 40``, with ``kept, scores, streamed`` the counts of
    :func:`tile_elements` and ``w`` :data:`KEPT_WEIGHT`. Fitted to ptxas's register counts for sm_90 (Triton 3.9,
    bf16; the forward at d = 128 and 256, the backward at d = 128; ``benchmarks/compile/``): from 7% under to 19%
    over for the forward's configurations that did not spill, and above ``flash_autotune.REGISTER_BUDGET`` for
    every configuration that spilled.
    Not calibrated for sm_80 (A100), where a few configurations it keeps spill up to 128 bytes: autotuning
    then times them and keeps them only if they are fastest anyway.
    """
    kept, scores, streamed = tile_elements(kind, block_m, block_n, head_dim)
    return int(KEPT_WEIGHT[kind] * kept + scores / 4 + 2 * streamed) // (32 * num_warps) + 40
