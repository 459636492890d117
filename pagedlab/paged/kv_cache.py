"""The K/V tensors a :class:`~pagedlab.paged.BlockManager` hands out blocks of.

For every layer, K and V each live in one pool tensor of shape ``[num_blocks, block_size, kv_heads,
head_dim]``: block ``b``'s slot ``j`` is row ``b * block_size + j`` of the flat view
``[num_blocks * block_size, kv_heads, head_dim]``, which is what a ``slot_mapping`` indexes. All layers
share the same block ids (a sequence's block table is the same in every layer), so the pools of all
layers are stored as one ``[num_layers, num_blocks, ...]`` tensor and a block copy moves every layer at
once.

Data movement the manager asks for:

* ``copy_blocks(pairs)``: copy-on-write, ``(src, dst)`` GPU blocks;
* ``swap_out(pairs)`` / ``swap_in(pairs)``: ``(gpu, cpu)`` / ``(cpu, gpu)`` between the device pool and
  a host pool. On a GPU the host pool is pinned (page-locked) memory, which the GPU's copy engines can
  reach over PCIe directly (pageable memory is staged through a pinned buffer by the driver).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from pagedlab import device as _device
from pagedlab.paged.allocator import check_count
from pagedlab.paged.block_table import BlockTable


class KVCache:
    """Per-layer K and V block pools on the device, and an optional host pool for swapping.

    Args:
        num_layers, num_blocks, block_size, kv_heads, head_dim: pool geometry (positive ints).
        num_cpu_blocks: host-pool blocks for swapping (0: none).
        dtype: element type (default ``pagedlab.device.DTYPE``).
        device: where the pools live (default ``pagedlab.device.DEVICE``).

    Attributes:
        k, v: ``[num_layers, num_blocks, block_size, kv_heads, head_dim]``; ``k[layer]`` is that layer's pool.
        k_cpu, v_cpu: the host pools, ``[num_layers, num_cpu_blocks, block_size, kv_heads, head_dim]``.
        bytes_per_block: bytes of K and V of one block over all layers (what sharing one block saves).

    Freshly created pools are zero, but zero means nothing: which blocks hold data is the manager's
    business, never the tensor's contents.
    """

    def __init__(self, num_layers: int, num_blocks: int, block_size: int, kv_heads: int, head_dim: int,
                 num_cpu_blocks: int = 0, dtype: torch.dtype | None = None,
                 device: torch.device | str | None = None) -> None:
        for name, value in (("num_layers", num_layers), ("num_blocks", num_blocks), ("block_size", block_size),
                            ("kv_heads", kv_heads), ("head_dim", head_dim)):
            check_count(name, value, 1)
        check_count("num_cpu_blocks", num_cpu_blocks, 0)
        self.num_layers, self.num_blocks, self.block_size = num_layers, num_blocks, block_size
        self.kv_heads, self.head_dim = kv_heads, head_dim
        self.dtype = _device.DTYPE if dtype is None else dtype
        self.device = torch.device(_device.DEVICE if device is None else device)
        shape = (num_layers, num_blocks, block_size, kv_heads, head_dim)
        self.k = torch.zeros(shape, dtype=self.dtype, device=self.device)
        self.v = torch.zeros(shape, dtype=self.dtype, device=self.device)
        cpu_shape = (num_layers, num_cpu_blocks, block_size, kv_heads, head_dim)
        pin = self.device.type == "cuda" and num_cpu_blocks > 0
        self.k_cpu = torch.zeros(cpu_shape, dtype=self.dtype, pin_memory=pin)
        self.v_cpu = torch.zeros(cpu_shape, dtype=self.dtype, pin_memory=pin)
        self.bytes_per_block = 2 * num_layers * block_size * kv_heads * head_dim * self.k.element_size()

    @property
    def num_cpu_blocks(self) -> int:
        """Blocks in the host pool."""
        return self.k_cpu.shape[1]

    # ---- writing and reading -------------------------------------------------------------------------

    def write(self, layer: int, slot_mapping: Sequence[int] | torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        """Store the K/V of ``n`` tokens of ``layer`` at their slots.

        Args:
            layer: 0 .. num_layers - 1.
            slot_mapping: ``n`` slots (``BlockTable.slot``, ``AppendResult.slot``), ints or a 1-D integer tensor.
            k, v: ``[n, kv_heads, head_dim]`` (cast to the pool's dtype).

        Raises:
            TypeError: ``k`` or ``v`` is not a tensor, or ``slot_mapping`` is not integer.
            ValueError: bad layer, shapes that do not match, or a slot outside the pool.
        """
        self._check_layer(layer)
        slots = self._slots(slot_mapping)
        expected = (slots.numel(), self.kv_heads, self.head_dim)
        for name, t in (("k", k), ("v", v)):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
            if tuple(t.shape) != expected:
                raise ValueError(f"{name} must have shape {expected} ([n, kv_heads, head_dim] for {slots.numel()} "
                                 f"slots), got {tuple(t.shape)}")
        flat = (-1, self.kv_heads, self.head_dim)
        self.k[layer].view(flat).index_copy_(0, slots, k.to(self.device, self.dtype))
        self.v[layer].view(flat).index_copy_(0, slots, v.to(self.device, self.dtype))

    def gather(self, layer: int, table: BlockTable) -> tuple[torch.Tensor, torch.Tensor]:
        """A sequence's K and V of ``layer`` as contiguous tensors (the reference for paged attention).

        Returns:
            ``(k, v)``, each ``[table.num_tokens, kv_heads, head_dim]``, tokens in order.

        Raises:
            ValueError: bad layer, or a table of the CPU pool (swap the sequence in first).
        """
        self._check_layer(layer)
        if table.device != "gpu":
            raise ValueError("the table points into the CPU pool; swap the sequence in before gathering")
        slots = self._slots(table.slot_mapping())
        flat = (-1, self.kv_heads, self.head_dim)
        return self.k[layer].view(flat)[slots], self.v[layer].view(flat)[slots]

    # ---- moving blocks -------------------------------------------------------------------------------

    def copy_blocks(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Copy-on-write: copy device block ``src`` into ``dst`` for each pair, in every layer."""
        src, dst = self._pairs(pairs, self.num_blocks, self.num_blocks)
        if src.numel():
            self.k[:, dst] = self.k[:, src]
            self.v[:, dst] = self.v[:, src]

    def swap_out(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Copy device blocks to host blocks, ``(gpu_block, cpu_block)`` pairs from ``BlockManager.swap_out``."""
        src, dst = self._pairs(pairs, self.num_blocks, self.num_cpu_blocks)
        if src.numel():
            self.k_cpu[:, dst.cpu()] = self.k[:, src].cpu()
            self.v_cpu[:, dst.cpu()] = self.v[:, src].cpu()

    def swap_in(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Copy host blocks to device blocks, ``(cpu_block, gpu_block)`` pairs from ``BlockManager.swap_in``."""
        src, dst = self._pairs(pairs, self.num_cpu_blocks, self.num_blocks)
        if src.numel():
            self.k[:, dst] = self.k_cpu[:, src.cpu()].to(self.device)
            self.v[:, dst] = self.v_cpu[:, src.cpu()].to(self.device)

    # ---- validation ----------------------------------------------------------------------------------

    def _check_layer(self, layer: int) -> None:
        if not isinstance(layer, int) or isinstance(layer, bool) or not 0 <= layer < self.num_layers:
            raise ValueError(f"layer must be an int in 0 .. {self.num_layers - 1}, got {layer!r}")

    def _slots(self, slot_mapping: Sequence[int] | torch.Tensor) -> torch.Tensor:
        slots = torch.as_tensor(slot_mapping).reshape(-1)
        # A float slot would be truncated silently to another token's row.
        if slots.numel() and (slots.dtype.is_floating_point or slots.dtype.is_complex or slots.dtype == torch.bool):
            raise TypeError(f"slot_mapping must hold integer slots, got dtype {slots.dtype}")
        slots = slots.to(torch.long)
        limit = self.num_blocks * self.block_size
        if slots.numel() and (int(slots.min()) < 0 or int(slots.max()) >= limit):
            raise ValueError(f"slot_mapping has slots outside the pool (0 .. {limit - 1}): "
                             f"min {int(slots.min())}, max {int(slots.max())}")
        return slots.to(self.device)

    def _pairs(self, pairs: Sequence[tuple[int, int]], n_src: int, n_dst: int) -> tuple[torch.Tensor, torch.Tensor]:
        idx = torch.as_tensor(list(pairs), dtype=torch.long).reshape(-1, 2)
        src, dst = idx[:, 0], idx[:, 1]
        for name, ids, n in (("source", src, n_src), ("destination", dst, n_dst)):
            if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= n):
                raise ValueError(f"pairs name {name} blocks outside the pool of {n} blocks: {ids.tolist()}")
        return src.to(self.device), dst.to(self.device)

    def __repr__(self) -> str:
        return (f"KVCache(layers={self.num_layers}, blocks={self.num_blocks}x{self.block_size}, "
                f"kv_heads={self.kv_heads}, head_dim={self.head_dim}, dtype={self.dtype}, device={self.device}, "
                f"cpu_blocks={self.num_cpu_blocks})")
