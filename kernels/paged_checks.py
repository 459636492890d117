"""The checks of the paged decode launchers (:mod:`pagedlab.kernels.paged_attention`), run before any launch.

Every argument is checked with the package's rule (``pagedlab.validate``: ``TypeError`` for the wrong kind,
``ValueError`` for a wrong value), and a failed check raises before anything is allocated or launched. The
values are checked too: the context lengths, and every block-table entry a sequence owns (the padding past its
last block is never read by the kernel, so it may hold anything). That costs one host synchronization, which a
caller who already knows the longest and total context (the engine) skips by passing ``context_stats``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from pagedlab import device
from pagedlab.kernels.flash_attention import HEAD_DIMS, check_dtypes
from pagedlab.validate import blocks_for, check_scale, check_tensor


@dataclass(frozen=True)
class PagedProblem:
    """The sizes of one call of a paged decode launcher, after the checks (``max_context`` and ``total_context``:
    the longest and the summed context lengths)."""

    num_seqs: int
    heads: int
    kv_heads: int
    head_dim: int
    block_size: int
    max_blocks: int
    max_context: int
    total_context: int
    sm_scale: float


def check_paged_inputs(q, k_cache, v_cache, block_tables, context_lens, sm_scale,
                       context_stats: tuple[int, int] | None = None) -> PagedProblem:
    """Validate the arguments of :func:`~pagedlab.kernels.paged_attention.paged_decode_attention` and return the
    call's sizes: one host sync for the context lengths and the owned table entries, or none when the caller gives
    ``context_stats`` (its values are then trusted).

    Raises:
        TypeError: not a tensor, or a dtype the kernel does not take. ValueError: shapes that do not fit
            together, a head_dim or block size the kernel does not take, tensors on different devices, a context
            length out of range, or an owned table entry that is not a block of the pool.
    """
    check_tensor("q", q, 3, "(num_seqs, heads, head_dim)")
    check_tensor("k_cache", k_cache, 4, "(num_blocks, block_size, kv_heads, head_dim)")
    check_tensor("v_cache", v_cache, 4, "(num_blocks, block_size, kv_heads, head_dim)")
    check_tensor("block_tables", block_tables, 2, "(num_seqs, max_blocks_per_seq)")
    check_tensor("context_lens", context_lens, 1, "(num_seqs,)")
    if k_cache.shape != v_cache.shape:
        raise ValueError(f"k_cache and v_cache must have the same shape, got {tuple(k_cache.shape)} and "
                         f"{tuple(v_cache.shape)}")
    num_seqs, heads, head_dim = q.shape
    num_blocks, block_size, kv_heads, cache_dim = k_cache.shape
    if cache_dim != head_dim:
        raise ValueError(f"k_cache has head_dim {cache_dim} but q has {head_dim}")
    if kv_heads == 0 or heads % kv_heads:
        raise ValueError(f"q has {heads} heads and k_cache {kv_heads} K/V heads: the number of query heads must "
                         f"be a multiple of the number of K/V heads (GQA/MQA)")
    if min(num_seqs, heads, num_blocks) == 0:
        raise ValueError(f"empty input: q {tuple(q.shape)}, k_cache {tuple(k_cache.shape)}")
    if block_tables.shape[0] != num_seqs or block_tables.shape[1] == 0:
        raise ValueError(f"block_tables must have shape (num_seqs={num_seqs}, max_blocks_per_seq >= 1), got "
                         f"{tuple(block_tables.shape)}")
    if context_lens.shape[0] != num_seqs:
        raise ValueError(f"context_lens must have shape (num_seqs={num_seqs},), got {tuple(context_lens.shape)}")
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"head_dim {head_dim} is not supported, the kernel takes {HEAD_DIMS}")
    if block_size & (block_size - 1):
        raise ValueError(f"block_size (k_cache.shape[1]) must be a power of two, got {block_size}")
    check_dtypes(q=q, k_cache=k_cache, v_cache=v_cache)
    for name, t in (("block_tables", block_tables), ("context_lens", context_lens)):
        if t.dtype not in (torch.int32, torch.int64):
            raise TypeError(f"{name} must be int32 or int64, got {t.dtype}")
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache), ("block_tables", block_tables),
                    ("context_lens", context_lens)):
        if t.device != q.device:
            raise ValueError(f"{name} is on {t.device} but q is on {q.device}; move them to one device")
    if not device.INTERPRET and q.device.type != "cuda":
        raise ValueError(f"q is on {q.device}, but Triton compiles for the GPU here: move the inputs to "
                         f"{device.DEVICE}")

    scale = check_scale("sm_scale", sm_scale, 1.0 / math.sqrt(head_dim))
    max_blocks = block_tables.shape[1]
    if context_stats is not None:
        longest, total = context_stats
        if not 1 <= longest <= max_blocks * block_size or not longest <= total <= num_seqs * longest:
            raise ValueError(f"context_stats must be the (longest, total) context lengths, 1 <= longest <= "
                             f"{max_blocks * block_size} and longest <= total <= num_seqs * longest; got "
                             f"{context_stats}")
        return PagedProblem(num_seqs, heads, kv_heads, head_dim, block_size, max_blocks, longest, total, scale)
    # The values: context lengths in 1 .. max_blocks * block_size, and every *owned* table entry a real block.
    # Padding entries (past a sequence's last block) are not looked at: they may hold anything.
    owned = torch.arange(max_blocks, device=q.device)[None, :] < blocks_for(context_lens[:, None], block_size)
    bad = owned & ((block_tables < 0) | (block_tables >= num_blocks))
    shortest, longest, total, n_bad = torch.stack([context_lens.min().long(), context_lens.max().long(),
                                                   context_lens.sum().long(), bad.sum()]).tolist()
    if shortest < 1:
        raise ValueError(f"context_lens must be >= 1 (the new token attends at least to itself), got {shortest}")
    if longest > max_blocks * block_size:
        raise ValueError(f"context_lens holds a context of {longest} tokens, longer than block_tables holds "
                         f"({max_blocks} blocks of {block_size} tokens)")
    if n_bad:
        s, i = bad.nonzero()[0].tolist()
        raise ValueError(f"block_tables[{s}, {i}] = {int(block_tables[s, i])} is a block sequence {s} owns but "
                         f"not a block of the pool (0 .. {num_blocks - 1})")
    return PagedProblem(num_seqs, heads, kv_heads, head_dim, block_size, max_blocks, longest, total, scale)
