"""Attention backends: which functions compute a step's decode and prefill attention over the paged cache.

Both backends read K/V through the block tables; they differ in what does the arithmetic.

* ``"triton"``: the course's kernels, :func:`~pagedlab.kernels.paged_attention.paged_decode_attention` for
  decodes and :func:`~pagedlab.kernels.flash_attention.flash_attention` for prefills. Compiled on a GPU;
  on a CPU they run in Triton's interpreter, one program at a time: correct, and seconds per step for a
  30-layer model.
* ``"torch"``: the same semantics in PyTorch, for CPUs. Decode gathers each sequence's blocks through its
  block table into a padded ``(num_seqs, kv_heads, max_context, head_dim)`` tensor and calls
  ``scaled_dot_product_attention`` with a length mask and ``enable_gqa`` (query head ``h`` reads K/V head
  ``h // group``); prefill is SDPA with a bottom-right causal mask. vLLM has a CPU backend for the same
  reason.
* ``"auto"``: Triton where it compiles (a GPU the kernels support, see :mod:`pagedlab.device`), PyTorch
  otherwise.

A function with the paged kernel's signature, ``decode(q, k_cache, v_cache, block_tables, context_lens)``,
is a backend too: it serves the decodes (a learner's own kernel from the paged-attention exercise), and
prefills use the ``"auto"`` backend's prefill.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from pagedlab import device

DecodeAttention = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
"""``decode(q, k_cache, v_cache, block_tables, context_lens) -> out``, the paged decode kernel's signature."""

PrefillAttention = Callable[..., torch.Tensor]
"""``prefill(q, k, v, causal=True) -> out`` with FlashAttention's ``(1, heads, n, head_dim)`` layout."""

DecodePlan = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
"""What :func:`torch_decode_plan` works out once per step for every layer's decode."""

BACKENDS = ("auto", "torch", "triton")


def torch_decode_plan(block_tables: torch.Tensor, context_lens: torch.Tensor, block_size: int,
                      context_stats: tuple[int, int] | None = None) -> DecodePlan:
    """What every layer's :func:`torch_decode_attention` of one step reads, worked out once per step.

    Optimization "one gather plan per step": the blocks each sequence reads and the mask of its context are the
    same in all the model's layers, so the engine computes them once (:class:`~pagedlab.engine.attention.PagedAttention`)
    rather than once per layer.

    Returns:
        ``(block_ids, mask, hidden)``: int64 ``(num_seqs * width,)``, the blocks to read, ``width`` per sequence
        (padding entries replaced by the sequence's first block, which it owns: a padding entry may name any block);
        bool ``(num_seqs, width * block_size)``, True at the positions before each sequence's context length; int64,
        the flat indices (into ``num_seqs * width * block_size`` positions) where ``mask`` is False.
    """
    lens = context_lens.to(block_tables.device).long()
    longest = int(lens.max()) if context_stats is None else context_stats[0]
    width = -(-longest // block_size)
    tables = block_tables[:, :width].long()
    owned = torch.arange(width, device=tables.device) < (lens[:, None] + block_size - 1) // block_size
    tables = torch.where(owned, tables, tables[:, :1])
    mask = torch.arange(width * block_size, device=tables.device) < lens[:, None]
    return tables.reshape(-1), mask, (~mask).reshape(-1).nonzero()[:, 0]


def torch_decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_tables: torch.Tensor,
                           context_lens: torch.Tensor, sm_scale: float | None = None,
                           context_stats: tuple[int, int] | None = None,
                           plan: DecodePlan | None = None) -> torch.Tensor:
    """Decode attention through block tables in PyTorch: what the paged kernel computes, batched.

    Args:
        q: (num_seqs, heads, head_dim). k_cache, v_cache: one layer's pools, ``(num_blocks, block_size,
            kv_heads, head_dim)``; ``heads`` a multiple of ``kv_heads``.
        block_tables: (num_seqs, max_blocks) integer; entries past a sequence's blocks are never used.
        context_lens: (num_seqs,) integer, each >= 1. sm_scale: default ``1/sqrt(head_dim)``.
        context_stats: ``(longest, total)`` of ``context_lens`` if the host knows them (saves a device sync).
        plan: :func:`torch_decode_plan` of these tables and lengths, if the caller computed it already.

    Returns:
        (num_seqs, heads, head_dim) like ``q``.
    """
    block_size = k_cache.shape[1]
    block_ids, mask, hidden = plan if plan is not None else torch_decode_plan(block_tables, context_lens, block_size,
                                                                      context_stats)
    num_seqs, n = mask.shape
    # Optimization "whole blocks": copy each sequence's blocks (block_size tokens at once, index_select's
    # contiguous copies) rather than token by token; the positions past a context are masked below.
    k = k_cache.index_select(0, block_ids).view(num_seqs, n, *k_cache.shape[2:])
    v = v_cache.index_select(0, block_ids).view(num_seqs, n, *v_cache.shape[2:])
    # Slots past a sequence's end may hold anything, NaN and inf included, and 0 * NaN is NaN even where the mask
    # gives the key no weight: zero them in the copies (only those rows: a masked_fill of the whole copy costs more).
    k.view(num_seqs * n, -1).index_fill_(0, hidden, 0)
    v.view(num_seqs * n, -1).index_fill_(0, hidden, 0)
    out = F.scaled_dot_product_attention(q[:, :, None], k.transpose(1, 2), v.transpose(1, 2),
                                         attn_mask=mask[:, None, None], scale=sm_scale, enable_gqa=True)
    return out[:, :, 0]


def torch_prefill_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True) -> torch.Tensor:
    """Prefill attention in PyTorch: ``q`` (batch, heads, n_q, d) against ``k, v`` (batch, kv_heads, n_k, d),
    causal aligned bottom-right when ``n_q < n_k`` (the uncached rest of a prompt sees the cached start),
    as :func:`~pagedlab.kernels.flash_attention.flash_attention` computes it."""
    n_q, n_k = q.shape[2], k.shape[2]
    if not causal or n_q == n_k:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    mask = torch.arange(n_k, device=q.device) <= torch.arange(n_q, device=q.device)[:, None] + (n_k - n_q)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)


@dataclass(frozen=True)
class AttentionBackend:
    """The functions a step's attention calls (see the module docstring).

    Attributes:
        name: ``"torch"``, ``"triton"`` or ``"custom (<function name>)"``.
        decode: a :data:`DecodeAttention`. prefill: a :data:`PrefillAttention`.
        reason: one line saying why this backend runs, for the notebook.
        takes_context_stats: ``decode`` accepts ``context_stats=(longest, total)``, the context lengths the
            host knows, and then needs no device sync to read them.
        plan: ``plan(block_tables, context_lens, block_size, context_stats)``, work that ``decode`` shares across
            the layers of a step, computed once per step and passed to ``decode`` as ``plan=`` (None: none).
    """

    name: str
    decode: DecodeAttention
    prefill: PrefillAttention
    reason: str
    takes_context_stats: bool = False
    plan: Callable[..., object] | None = None


def select_backend(choice: str | DecodeAttention | AttentionBackend = "auto") -> AttentionBackend:
    """The :class:`AttentionBackend` for ``choice``: ``"auto"``, ``"torch"``, ``"triton"``, a decode function with
    the paged kernel's signature, or a backend (returned as is).

    Raises:
        ValueError: an unknown name.
        TypeError: anything else that is not callable.
    """
    if isinstance(choice, AttentionBackend):
        return choice
    if callable(choice):
        base = select_backend("auto")
        name = getattr(choice, "__name__", type(choice).__name__)
        return AttentionBackend(f"custom ({name})", choice, base.prefill,
                                f"decodes call the function passed in; prefills use the {base.name} backend")
    if not isinstance(choice, str):
        raise TypeError(f"attention_backend must be one of {BACKENDS} or a decode function "
                        f"decode(q, k_cache, v_cache, block_tables, context_lens), got {type(choice).__name__}")
    if choice not in BACKENDS:
        raise ValueError(f"attention_backend must be one of {BACKENDS} or a decode function, got {choice!r}")
    if choice == "triton" or (choice == "auto" and not device.INTERPRET):
        from pagedlab.kernels.flash_attention import flash_attention
        from pagedlab.kernels.paged_attention import paged_decode_attention

        why = ("asked for" if choice == "triton" else "auto: Triton compiles for this GPU") + (
            "; Triton runs in its interpreter here (slow, exact)" if device.INTERPRET else "")
        return AttentionBackend("triton", paged_decode_attention, flash_attention, f"the course's Triton kernels ({why})",
                                takes_context_stats=True)
    why = "asked for" if choice == "torch" else f"auto: {device.MODE.reason}"
    return AttentionBackend("torch", torch_decode_attention, torch_prefill_attention,
                            f"PyTorch gather + scaled_dot_product_attention ({why})", takes_context_stats=True,
                            plan=torch_decode_plan)
