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

BACKENDS = ("auto", "torch", "triton")


def torch_decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_tables: torch.Tensor,
                           context_lens: torch.Tensor, sm_scale: float | None = None,
                           context_stats: tuple[int, int] | None = None) -> torch.Tensor:
    """Decode attention through block tables in PyTorch: what the paged kernel computes, batched.

    Args:
        q: (num_seqs, heads, head_dim). k_cache, v_cache: one layer's pools, ``(num_blocks, block_size,
            kv_heads, head_dim)``; ``heads`` a multiple of ``kv_heads``.
        block_tables: (num_seqs, max_blocks) integer; entries past a sequence's blocks are never used.
        context_lens: (num_seqs,) integer, each >= 1. sm_scale: default ``1/sqrt(head_dim)``.
        context_stats: ``(longest, total)`` of ``context_lens`` if the host knows them (saves a device sync).

    Returns:
        (num_seqs, heads, head_dim) like ``q``.
    """
    num_blocks, block_size = k_cache.shape[:2]
    lens = context_lens.to(q.device).long()
    # Token j of sequence s lives in slot table[s, j // block_size] * block_size + j % block_size. Past a
    # sequence's end, read its token 0 instead (a slot it owns): padding entries and unwritten slots may hold
    # anything, NaN included, and 0 * NaN would be NaN even where the mask gives the key no weight.
    j = torch.arange(int(lens.max()) if context_stats is None else context_stats[0], device=q.device)
    j = torch.where(j < lens[:, None], j, 0)                                      # (num_seqs, max_context)
    slots = block_tables.long().gather(1, j // block_size) * block_size + j % block_size
    k = k_cache.view(num_blocks * block_size, *k_cache.shape[2:])[slots].transpose(1, 2)   # (s, kv_heads, n, d)
    v = v_cache.view(num_blocks * block_size, *v_cache.shape[2:])[slots].transpose(1, 2)
    mask = torch.arange(k.shape[2], device=q.device) < lens[:, None]
    out = F.scaled_dot_product_attention(q[:, :, None], k, v, attn_mask=mask[:, None, None], scale=sm_scale,
                                         enable_gqa=True)
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
    """

    name: str
    decode: DecodeAttention
    prefill: PrefillAttention
    reason: str
    takes_context_stats: bool = False


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
                            f"PyTorch gather + scaled_dot_product_attention ({why})", takes_context_stats=True)
