"""What preempting a sequence costs: swapping its K/V over PCIe against recomputing them with a prefill.

When the GPU pool runs out, a running sequence gives its blocks back and resumes later, one of two ways:

* **swap**: copy its blocks to host memory now and back later. Each block is one K and one V chunk per
  layer (``KVCache`` pools are per layer), so a sequence of ``n`` tokens in blocks of ``B`` moves
  ``2 × layers × ceil(n / B)`` chunks each way, of ``B × kv_heads × head_dim × bytes`` bytes each. A copy costs
  a fixed launch-and-setup latency plus its bytes over the link's bandwidth:

      t_swap = 2 directions × 2 × layers × ceil(n / B) × (latency + chunk_bytes / bandwidth)

* **recompute**: drop the blocks and run the prefill again on all ``n`` tokens when it resumes. A forward
  pass costs about ``2 × params`` FLOPs per token (Kaplan et al. 2020, "Scaling Laws for Neural Language
  Models", C_forward ≈ 2N), plus causal attention, ``2 × layers × d_model × n²`` (Q·Kᵀ and P·V, each
  ``n² × d_model`` multiply-adds, so ``2 × n² × d_model`` FLOPs, per layer, halved by the causal mask):

      t_recompute = (2 × params × n + 2 × layers × d_model × n²) / (peak FLOP/s × utilization)

Small blocks make swapping a stream of tiny copies whose fixed latency dominates; recomputation does not
depend on the block size at all. The vLLM paper measures exactly that (Kwon et al. 2023, §7.3, Fig. 19).
Gathering all the chunks into one buffer on the GPU first and moving it in one copy per direction and per K/V
(``batched=True``, what :meth:`pagedlab.paged.KVCache.swap_out` does) removes the latency term, so block size
stops mattering for swapping too. All figures are inputs: the presets below cite where theirs come from; the
latency λ is an assumption here, measured by :func:`pagedlab.transfer.copy_timing` (notebook 08), and
:func:`crossover_block_size` is the model's *output*, as uncertain as λ and the utilization that go into it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pagedlab.validate import blocks_for


@dataclass(frozen=True)
class Link:
    """The host <-> GPU link that swapping crosses.

    Attributes:
        name: for plots.
        bytes_per_second: bandwidth in each direction.
        latency: fixed seconds per copy (driver call, DMA setup), whatever its size.
    """

    name: str
    bytes_per_second: float
    latency: float


@dataclass(frozen=True)
class Accelerator:
    """What a prefill runs at.

    Attributes:
        name: for plots.
        flops: peak dense bf16 tensor-core FLOP/s.
        utilization: the fraction of the peak a prefill achieves (model FLOPs utilization).
    """

    name: str
    flops: float
    utilization: float = 0.5


# PCI Express 4.0 and 5.0 run 16 and 32 GT/s per lane with 128b/130b encoding: x16 is 31.5 and 63 GB/s per
# direction (PCI-SIG). The 10 µs per copy is an assumed order of magnitude for a cudaMemcpyAsync of one chunk
# (call, DMA setup, completion), not a measurement: notebook 08 measures λ where it runs and shows how the
# answer moves over λ from 2 to 20 µs.
PCIE4_X16 = Link("PCIe 4.0 x16", 31.5e9, 10e-6)
PCIE5_X16 = Link("PCIe 5.0 x16", 63e9, 10e-6)
# Dense bf16 tensor-core peaks from NVIDIA's datasheets (A100: 312 TFLOP/s; H100 SXM: 989 TFLOP/s, 1,979 with
# sparsity). Half the peak is a typical prefill.
A100 = Accelerator("A100", 312e12)
H100 = Accelerator("H100 SXM", 989e12)


def swap_seconds(num_tokens: int, block_size: int, num_layers: int, chunk_bytes_per_token: int, link: Link,
                 batched: bool = False) -> float:
    """Seconds to swap a sequence out and back in over ``link``.

    Args:
        num_tokens: tokens of the sequence.
        block_size: tokens per block.
        num_layers: layers (each has its own K and V chunk per block).
        chunk_bytes_per_token: bytes of one token's K (or V) in one layer: ``kv_heads × head_dim × bytes``.
        link: bandwidth and per-copy latency.
        batched: one copy per direction for all the K chunks and one for all the V chunks, instead of one
            copy per chunk (the gather on the GPU is not counted: it runs at HBM speed).
    """
    num_chunks = 2 * num_layers * blocks_for(num_tokens, block_size)
    num_bytes = 2 * num_chunks * block_size * chunk_bytes_per_token      # out and back in
    copies = 2 * 2 if batched else 2 * num_chunks
    return copies * link.latency + num_bytes / link.bytes_per_second


def prefill_flops(num_tokens: int, num_params: float, num_layers: int, d_model: int) -> float:
    """FLOPs of a causal prefill of ``num_tokens`` tokens: ``2·params·n + 2·layers·d_model·n²``."""
    return 2 * num_params * num_tokens + 2 * num_layers * d_model * num_tokens**2


def recompute_seconds(num_tokens: int, num_params: float, num_layers: int, d_model: int,
                      accelerator: Accelerator) -> float:
    """Seconds to recompute a sequence's K/V with a prefill on ``accelerator``."""
    return prefill_flops(num_tokens, num_params, num_layers, d_model) / (accelerator.flops * accelerator.utilization)


def crossover_block_size(num_tokens: int, num_params: float, num_layers: int, d_model: int,
                         chunk_bytes_per_token: int, link: Link, accelerator: Accelerator,
                         block_sizes: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256)) -> int | None:
    """The smallest of ``block_sizes`` at which swapping (one copy per chunk) beats recomputing, by this model.

    A model's output, not a measurement: it moves with the link's latency and the accelerator's utilization,
    which are inputs (see notebook 08's sensitivity plot).

    Returns:
        A block size from ``block_sizes``, or None when recomputing is cheaper at every one of them.
    """
    recompute = recompute_seconds(num_tokens, num_params, num_layers, d_model, accelerator)
    for b in sorted(block_sizes):
        if swap_seconds(num_tokens, b, num_layers, chunk_bytes_per_token, link) < recompute:
            return b
    return None
