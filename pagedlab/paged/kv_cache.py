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
  a host pool.

How a swap moves its blocks. The blocks of one swap are scattered over both pools, and a copy between the
device and the host moves one contiguous buffer, so each side has a preallocated *staging buffer*:
``swap_out`` gathers the K and V of all its blocks, every layer, into the device buffer
(``index_select(..., out=...)``), moves that buffer to the host buffer in **one copy**, waits for it, and
scatters it into the host pool; ``swap_in`` does the reverse. On a GPU the host buffer is pinned
(page-locked) memory, which the GPU's copy engines reach over PCIe directly, so the copy is one DMA
(``copy_(non_blocking=True)``); pageable memory would first be staged through a pinned buffer of the
driver's. The host pool itself is ordinary (pageable) memory: only the staging buffer is ever the target of
a DMA, so only it needs pinning. A swap of more blocks than the buffers hold (``staging_blocks``) takes one
copy per ``staging_blocks`` blocks. On a CPU both sides are host memory: the same steps run, unpinned, as
memory copies.

Measuring the per-copy latency through this API (what ``pagedlab.paged.preemption``'s λ stands for):
time ``kv.swap_out(pairs)`` (one copy per direction) against ``for p in pairs: kv.swap_out([p])`` (one copy
per block), or build a second cache with ``staging_blocks=1``, whose ``swap_out(pairs)`` makes one copy
per block. ``swap_out`` returns once the data is in the host pool; ``swap_in`` may return before its copy
has landed (later device work is ordered after it), so call :meth:`KVCache.synchronize` before stopping
a clock. ``kv.num_copies`` counts the device-host copies made so far.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from pagedlab import device as _device
from pagedlab.paged.block_table import BlockTable
from pagedlab.validate import check_count, check_tensor


class KVCache:
    """Per-layer K and V block pools on the device, and an optional host pool for swapping.

    Args:
        num_layers, num_blocks, block_size, kv_heads, head_dim: pool geometry (positive ints).
        num_cpu_blocks: host-pool blocks for swapping (0: none).
        dtype: element type (default ``pagedlab.device.DTYPE``).
        device: where the pools live (default ``pagedlab.device.DEVICE``).
        staging_blocks: how many blocks one device-host copy moves at most (the size of the two staging
            buffers); default: as many as fit in :attr:`STAGING_BYTES`, at most ``num_cpu_blocks``.

    Attributes:
        k, v: ``[num_layers, num_blocks, block_size, kv_heads, head_dim]``; ``k[layer]`` is that layer's pool.
        k_cpu, v_cpu: the host pools, ``[num_layers, num_cpu_blocks, block_size, kv_heads, head_dim]``.
        bytes_per_block: bytes of K and V of one block over all layers (what sharing one block saves).
        staging_blocks: blocks per device-host copy (0 without a host pool).
        num_copies: device-host copies made so far by ``swap_out`` and ``swap_in``.

    Freshly created pools are zero, but zero means nothing: which blocks hold data is the manager's
    business, never the tensor's contents.
    """

    STAGING_BYTES = 64 << 20
    """Default size of each staging buffer: big enough for a copy to reach full PCIe bandwidth."""

    def __init__(self, num_layers: int, num_blocks: int, block_size: int, kv_heads: int, head_dim: int,
                 num_cpu_blocks: int = 0, dtype: torch.dtype | None = None,
                 device: torch.device | str | None = None, staging_blocks: int | None = None) -> None:
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
        self.k_cpu = torch.zeros(cpu_shape, dtype=self.dtype)
        self.v_cpu = torch.zeros(cpu_shape, dtype=self.dtype)
        self.bytes_per_block = 2 * num_layers * block_size * kv_heads * head_dim * self.k.element_size()

        if staging_blocks is None:
            staging_blocks = max(1, self.STAGING_BYTES // self.bytes_per_block)
        else:
            check_count("staging_blocks", staging_blocks, 1)
        self.staging_blocks = min(staging_blocks, num_cpu_blocks)
        # Both buffers are flat, so that the first n blocks' worth is one contiguous [2, L, n, ...] view.
        numel = self.bytes_per_block // self.k.element_size() * self.staging_blocks
        self._cuda = self.device.type == "cuda"
        self._stage_device = torch.empty(numel, dtype=self.dtype, device=self.device)
        self._stage_host = torch.empty(numel, dtype=self.dtype, pin_memory=self._cuda and numel > 0)
        self._host_stage_free = None   # on a GPU: an event recorded after the last copy that reads _stage_host
        self.num_copies = 0

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
        shape = f"{expected} ([n, kv_heads, head_dim] for {slots.numel()} slots)"
        for name, t in (("k", k), ("v", v)):
            if tuple(check_tensor(name, t, 3, shape).shape) != expected:
                raise ValueError(f"{name} must have shape {shape}, got shape {tuple(t.shape)}")
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
        """Copy device blocks to host blocks, ``(gpu_block, cpu_block)`` pairs from ``BlockManager.swap_out``.

        Gather on the device, one copy per ``staging_blocks`` blocks, scatter on the host (see the module
        docstring). Returns when the data is in the host pool.

        Raises:
            ValueError: a pair names a block outside its pool.
        """
        src, dst = self._pairs(pairs, self.num_blocks, self.num_cpu_blocks)
        for src_part, dst_part, device_stage, host_stage in self._staged(src.to(self.device), dst):
            torch.index_select(self.k, 1, src_part, out=device_stage[0])
            torch.index_select(self.v, 1, src_part, out=device_stage[1])
            self._wait_for_host_stage()
            host_stage.copy_(device_stage, non_blocking=self._cuda)
            self.num_copies += 1
            if self._cuda:
                torch.cuda.current_stream(self.device).synchronize()   # the host reads it next
            self.k_cpu.index_copy_(1, dst_part, host_stage[0])
            self.v_cpu.index_copy_(1, dst_part, host_stage[1])

    def swap_in(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Copy host blocks to device blocks, ``(cpu_block, gpu_block)`` pairs from ``BlockManager.swap_in``.

        Gather on the host, one copy per ``staging_blocks`` blocks, scatter on the device (see the module
        docstring). On a GPU it may return before the copy has landed: work queued on the device afterwards
        (attention reading the blocks) runs after it; :meth:`synchronize` waits for it.

        Raises:
            ValueError: a pair names a block outside its pool.
        """
        src, dst = self._pairs(pairs, self.num_cpu_blocks, self.num_blocks)
        for src_part, dst_part, device_stage, host_stage in self._staged(src, dst.to(self.device)):
            self._wait_for_host_stage()                                # the last copy from it has finished
            torch.index_select(self.k_cpu, 1, src_part, out=host_stage[0])
            torch.index_select(self.v_cpu, 1, src_part, out=host_stage[1])
            device_stage.copy_(host_stage, non_blocking=self._cuda)
            self.num_copies += 1
            if self._cuda:
                self._host_stage_free = torch.cuda.Event()
                self._host_stage_free.record(torch.cuda.current_stream(self.device))
            self.k.index_copy_(1, dst_part, device_stage[0])
            self.v.index_copy_(1, dst_part, device_stage[1])

    def synchronize(self) -> None:
        """Wait until every copy this cache started has finished (a no-op on a CPU)."""
        if self._cuda:
            torch.cuda.current_stream(self.device).synchronize()

    # ---- validation ----------------------------------------------------------------------------------

    def _check_layer(self, layer: int) -> None:
        if check_count("layer", layer, 0) >= self.num_layers:
            raise ValueError(f"layer must be in 0 .. {self.num_layers - 1}, got {layer}")

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
        """The pairs as two CPU index tensors ``(src, dst)``, checked against the pools' sizes."""
        idx = torch.as_tensor(list(pairs), dtype=torch.long).reshape(-1, 2)
        src, dst = idx[:, 0], idx[:, 1]
        for name, ids, n in (("source", src, n_src), ("destination", dst, n_dst)):
            if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= n):
                raise ValueError(f"pairs name {name} blocks outside the pool of {n} blocks: {ids.tolist()}")
        return src, dst

    def _staged(self, src: torch.Tensor, dst: torch.Tensor):
        """The pairs ``(src, dst)`` in pieces of at most ``staging_blocks``, each with the first ``n`` blocks of the
        device and host staging buffers as ``[2 (K, V), L, n, B, H, D]`` views: ``(src, dst, device, host)``."""
        for start in range(0, src.numel(), max(1, self.staging_blocks)):
            n = min(self.staging_blocks, src.numel() - start)
            shape = (2, self.num_layers, n, self.block_size, self.kv_heads, self.head_dim)
            numel = 2 * self.num_layers * n * self.block_size * self.kv_heads * self.head_dim
            yield (src[start:start + n], dst[start:start + n],
                   self._stage_device[:numel].view(shape), self._stage_host[:numel].view(shape))

    def _wait_for_host_stage(self) -> None:
        # A swap_in's copy out of the host buffer may still be running: writing into it now would race it.
        if self._host_stage_free is not None:
            self._host_stage_free.synchronize()
            self._host_stage_free = None

    def __repr__(self) -> str:
        return (f"KVCache(layers={self.num_layers}, blocks={self.num_blocks}x{self.block_size}, "
                f"kv_heads={self.kv_heads}, head_dim={self.head_dim}, dtype={self.dtype}, device={self.device}, "
                f"cpu_blocks={self.num_cpu_blocks})")
