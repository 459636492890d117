"""Why attention is bound by memory traffic, not arithmetic: the GPU memory hierarchy and the roofline.

A kernel that does ``F`` floating-point operations while moving ``B`` bytes to and from HBM has
arithmetic intensity ``I = F / B``. A GPU with peak compute ``P`` (FLOP/s) and HBM bandwidth ``W``
(bytes/s) can run it at most at ``min(P, I * W)``: below the *ridge point* ``P / W`` the kernel waits for
memory (Williams, Waterman and Patterson, "Roofline", CACM 2009). :func:`attention_flops` is the ``F`` of
attention, counted the usual way for TFLOP/s figures or as the course's kernels really run it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from pagedlab import device


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
