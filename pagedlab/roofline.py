"""Why attention is bound by memory traffic, not arithmetic: the GPU memory hierarchy and the roofline.

A kernel that does ``F`` floating-point operations while moving ``B`` bytes to and from HBM has
arithmetic intensity ``I = F / B``. A GPU with peak compute ``P`` (FLOP/s) and HBM bandwidth ``W``
(bytes/s) can run it at most at ``min(P, I * W)``: below the *ridge point* ``P / W`` the kernel waits for
memory (Williams, Waterman and Patterson, "Roofline", CACM 2009). :func:`attention_flops` is the ``F`` of
attention, counted the usual way for TFLOP/s figures or as the course's kernels really run it;
:func:`attention_hbm_traffic` models its ``B``, for standard attention and for FlashAttention-2.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from pagedlab import device
from pagedlab.trace import tile_kind
from pagedlab.validate import blocks_for, check_count


@dataclass(frozen=True)
class GpuSpec:
    """Datasheet figures of one GPU (dense, without sparsity).

    Attributes:
        name: marketing name.
        hbm_gb: HBM capacity in GB, as the datasheet states it. hbm_tb_s: HBM bandwidth in TB/s (10^12 bytes/s).
        sram_kib_per_sm: shared memory + L1 per SM, the "SRAM" of the FlashAttention paper. sms: SM count.
        fp16_tflops: dense fp16 tensor-core peak in TFLOP/s (fp32 accumulation where the datasheet says so).
        bf16: whether the tensor cores take bfloat16 (Ampere and newer; the T4, a Turing GPU, does not).
        register_kib_per_sm: the register file of one SM, where FlashAttention-2 keeps S, P and the O accumulator.
        max_smem_kib_per_block: the most shared memory one program (thread block) may opt in to; a Triton
            configuration whose tiles need more does not launch.
        l2_mb: L2 cache in MB, shared by all SMs (K/V tiles re-read by neighbouring programs often hit it).
        source: where the figures come from.
    """

    name: str
    hbm_gb: float
    hbm_tb_s: float
    sram_kib_per_sm: int
    sms: int
    fp16_tflops: float
    bf16: bool
    register_kib_per_sm: int
    max_smem_kib_per_block: int
    l2_mb: float
    source: str

    @property
    def sram_mib(self) -> float:
        """Total on-chip SRAM (shared memory/L1) over all SMs, in MiB."""
        return self.sram_kib_per_sm * self.sms / 1024

    @property
    def ridge_flop_per_byte(self) -> float:
        """Arithmetic intensity at which the GPU stops waiting for HBM: peak FLOP/s over bytes/s."""
        return self.fp16_tflops / self.hbm_tb_s


_CUDA_GUIDE = "CUDA C++ Programming Guide, compute capability table (shared memory per block, registers per SM)"
GPUS = {
    "T4": GpuSpec("NVIDIA T4", 16, 0.32, 96, 40, 65, False, 256, 64, 4,
                  "NVIDIA T4 datasheet (65 TFLOP/s is fp16 mixed precision; Turing has no bf16); Turing tuning "
                  "guide (96 KiB L1/shared per SM); " + _CUDA_GUIDE + " for sm_75"),
    "A100": GpuSpec("NVIDIA A100 SXM 80GB", 80, 2.04, 192, 108, 312, True, 256, 163, 40,
                    "NVIDIA A100 datasheet and whitepaper (192 KiB L1/shared per SM of which up to 164 KiB "
                    "shared, 1 KiB of it reserved per block; 256 KiB registers per SM; 40 MB L2); " + _CUDA_GUIDE),
    "H100": GpuSpec("NVIDIA H100 SXM", 80, 3.35, 256, 132, 989, True, 256, 227, 50,
                    "NVIDIA H100 datasheet and Hopper whitepaper (256 KiB L1/shared per SM of which up to 228 KiB "
                    "shared; 256 KiB registers per SM; 50 MB L2); " + _CUDA_GUIDE),
    "H200": GpuSpec("NVIDIA H200 SXM", 141, 4.8, 256, 132, 989, True, 256, 227, 50,
                    "NVIDIA H200 datasheet (same SM and L2 as the H100, more and faster HBM)"),
}
"""A few GPUs a learner meets (Colab's T4, the A100 of the FlashAttention paper, Hopper)."""


def attention_steps(n: int, d: int, bytes_per_element: int = 2) -> dict[str, tuple[float, float]]:
    """FLOPs and HBM bytes of each step of standard (unfused) attention for one head.

    Args:
        n: sequence length (queries = keys). d: head dimension. bytes_per_element: 2 for fp16/bf16.

    Returns:
        ``{step: (flops, bytes)}`` for ``S = Q K^T`` (reads Q, K; writes the n x n S), ``P = softmax(S)``
        (reads S, writes P; ~5 FLOPs per score: max, subtract, exp, sum, divide) and ``O = P V``.
    """
    if n <= 0 or d <= 0:
        raise ValueError(f"n and d must be positive, got n={n}, d={d}")
    b = bytes_per_element
    return {
        "S = Q K^T": (2.0 * n * n * d, b * (2 * n * d + n * n)),
        "P = softmax(S)": (5.0 * n * n, b * (2 * n * n)),
        "O = P V": (2.0 * n * n * d, b * (n * n + 2 * n * d)),
    }


def _seconds(fn, repeat: int) -> float:
    fn()  # warm up (allocations, lazy initialization)
    device.synchronize()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        device.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


def measure_bandwidth(nbytes: int, repeat: int = 5) -> float:
    """Measured copy bandwidth of ``device.DEVICE`` in bytes/s (reads + writes of one tensor copy)."""
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device.DEVICE)
    dst = torch.empty_like(src)
    return 2 * src.numel() * 4 / _seconds(lambda: dst.copy_(src), repeat)


def measure_matmul(n: int, dtype: torch.dtype, repeat: int = 5) -> float:
    """Measured FLOP/s of an ``n x n @ n x n`` matmul on ``device.DEVICE``."""
    a = torch.randn(n, n, device=device.DEVICE, dtype=dtype)
    b = torch.randn(n, n, device=device.DEVICE, dtype=dtype)
    return 2 * n**3 / _seconds(lambda: a @ b, repeat)


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


# ----------------------------------------------------------------------------------------------------
# Attention's bytes: standard against FlashAttention-2, in the FlashAttention paper's model


@dataclass(frozen=True)
class HbmTraffic:
    """HBM bytes read and written by standard attention and by FlashAttention-2 (forward pass).

    Attributes:
        standard: bytes for standard attention: ``S = Q Kᵀ`` written to HBM, read back for the softmax,
            ``P`` written and read back for ``P V`` (4·N·d + 4·N² elements).
        flash: bytes for FlashAttention-2: ``Q`` read and ``O``, ``lse`` written once; every visited
            key tile's ``K`` and ``V`` read once per query tile (2·N·d·T_r elements, T_r query tiles).
        block_m, block_n: the tile sizes used for ``flash``.
    """

    standard: int
    flash: int
    block_m: int
    block_n: int

    @property
    def ratio(self) -> float:
        """How many times more bytes standard attention moves."""
        return self.standard / self.flash


def attention_hbm_traffic(seq_len: int, head_dim: int, sram_bytes: int, bytes_per_element: int = 2,
                          causal: bool = False, batch_heads: int = 1, block_m: int | None = None,
                          block_n: int | None = None) -> HbmTraffic:
    """HBM traffic of one attention forward pass, standard vs FlashAttention-2, in bytes: a model, not a measurement.

    The model of the FlashAttention paper's Theorem 2 (Dao et al. 2022), without L2: every byte a kernel
    reads comes from HBM. It gives Θ(N·d + N²) HBM accesses for standard attention and Θ(N²·d²/M) for
    FlashAttention, with M the SRAM size in elements: tiles hold Θ(M/d) rows, so there are Θ(N·d/M) query
    tiles, and each reads all of K and V. That is less traffic, not linear traffic: for a fixed SRAM it
    still grows with N². (FlashAttention's *extra memory*, beyond Q, K, V and O, is what is linear: the
    O(N) ``lse``.) This function counts the model's accesses exactly.

    A real GPU beats the model: the query tiles of one head run side by side and read the same K and V
    tiles at nearly the same time, so most of those repeated reads hit the L2 cache (40 MB on an A100,
    50 MB on an H100) and never reach HBM. Measure real DRAM bytes with Nsight Compute
    (``ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum``).

    Args:
        seq_len: N, queries = keys. head_dim: d. sram_bytes: M in bytes, the on-chip memory of one SM.
        bytes_per_element: 2 for fp16/bf16, 4 for fp32 (``lse`` is always 4-byte float32).
        causal: FlashAttention skips the key tiles above the diagonal; standard attention still writes
            and reads the whole N × N matrix.
        batch_heads: batch × heads, a plain multiplier.
        block_m, block_n: tile sizes; pass the kernel's real ones (e.g. 128 x 64, one its autotuning
            tries) to model the kernel. By default those of the proof of Theorem 2 with the two tiles' roles
            swapped, because FlashAttention-2 keeps the query tile in SRAM while K and V stream past:
            ``block_m = ceil(M / 4d)`` and ``block_n = min(block_m, d)``, so the Q and O tiles, the K and V
            tiles and the score tile each take at most about M/4 elements.

    Returns:
        :class:`HbmTraffic`.

    Raises:
        ValueError, TypeError: a non-positive size, or an SRAM too small for one row of each tile.
    """
    n, d = check_count("seq_len", seq_len, 1), check_count("head_dim", head_dim, 1)
    sram, b = check_count("sram_bytes", sram_bytes, 1), check_count("bytes_per_element", bytes_per_element, 1)
    batch_heads = check_count("batch_heads", batch_heads, 1)
    m_elements = sram // b
    if m_elements < 4 * d:
        raise ValueError(f"sram_bytes={sram} holds {m_elements} elements, fewer than 4 * head_dim = {4 * d}: "
                         f"not even one row of Q, K, V and O fits")
    default_m = blocks_for(m_elements, 4 * d)
    block_m = default_m if block_m is None else check_count("block_m", block_m, 1)
    block_n = min(default_m, d) if block_n is None else check_count("block_n", block_n, 1)

    standard = (4 * n * d + 4 * n * n) * b
    n_q_tiles, n_k_tiles = blocks_for(n, block_m), blocks_for(n, block_n)
    visited_rows = 0  # keys read over all query tiles, each tile reading its K and V rows once
    for i in range(n_q_tiles):
        for j in range(n_k_tiles):
            if tile_kind(i, j, n, n, block_m, block_n, causal) != "skipped":
                visited_rows += min(block_n, n - j * block_n)
    flash = (2 * n * d + 2 * visited_rows * d) * b + 4 * n  # Q read, O written, K and V read; lse in fp32
    return HbmTraffic(standard * batch_heads, flash * batch_heads, block_m, block_n)
