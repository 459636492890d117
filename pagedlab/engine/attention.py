"""Attention over the paged KV cache, for one step's batch of sequences.

The model calls ``attention(layer, q, k, v)`` with the step's tokens flattened, ``(num_tokens, heads,
head_dim)``: first the sequences that compute one token (a decode, or a one-token chunk of a prefill), then
the new tokens of each *prefilling* sequence (a prompt, the uncached rest of a prompt, a recomputed sequence,
or a chunk of one of those). :class:`PagedAttention`

1. writes every token's K and V into its slot of the :class:`~pagedlab.paged.KVCache` (the step's
   ``slot_mapping``), so a token attends to itself and to everything written before it;
2. decodes: the backend's decode function reads each sequence's context straight through its block
   table, one call for the whole batch (Triton: notebook 09's
   :func:`~pagedlab.kernels.paged_attention.paged_decode_attention`, given the context lengths the host
   knows, ``context_stats``, so that its checks do not wait for the device);
3. prefills: gathers each sequence's K/V into contiguous tensors (``KVCache.gather``) and calls the
   backend's prefill function (Triton: :func:`~pagedlab.kernels.flash_attention.flash_attention`) with the
   ``n_q`` new queries against all ``n_k`` keys (the context up to the chunk's end), causal aligned
   bottom-right. The gather copies the sequence's whole context once per layer; vLLM's prefill kernels read
   the blocks in place instead (see notebook 10).

Which functions compute 2 and 3 is the step's :class:`~pagedlab.engine.backends.AttentionBackend`: the
course's Triton kernels, or the same semantics in PyTorch for CPUs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from pagedlab.engine.backends import AttentionBackend, select_backend
from pagedlab.paged import BlockTable, KVCache


@dataclass
class PagedAttention:
    """The attention of one step (see the module docstring).

    Attributes:
        kv_cache: the pools. slot_mapping: int64 ``(num_tokens,)``, where each token's K/V go.
        num_decodes: the first ``num_decodes`` tokens are one decoding sequence each.
        block_tables: int32 ``(num_decodes, max_blocks)``, padded. context_lens: int32 ``(num_decodes,)``.
        context_stats: ``(longest, total)`` of ``context_lens``, as host ints (unused without decodes).
        prefills: ``(start, end, table)``: tokens ``start .. end - 1`` of the batch are the newest tokens of
            the sequence with block table ``table``.
        backend: the functions that compute the attention (default: the Triton kernels).
    """

    kv_cache: KVCache
    slot_mapping: torch.Tensor
    num_decodes: int
    block_tables: torch.Tensor
    context_lens: torch.Tensor
    context_stats: tuple[int, int]
    prefills: list[tuple[int, int, BlockTable]]
    backend: AttentionBackend = field(default_factory=lambda: select_backend("triton"))
    _plan: object = field(default=None, init=False, repr=False)

    def __call__(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        cache = self.kv_cache
        cache.write(layer, self.slot_mapping, k, v)
        out = torch.empty_like(q)
        if self.num_decodes:
            extra = {"context_stats": self.context_stats} if self.backend.takes_context_stats else {}
            if self.backend.plan is not None:
                # The backend's per-step work (e.g. which blocks to read), done at the first layer, reused after.
                if self._plan is None:
                    self._plan = self.backend.plan(self.block_tables, self.context_lens, cache.block_size,
                                                   self.context_stats)
                extra["plan"] = self._plan
            out[:self.num_decodes] = self.backend.decode(q[:self.num_decodes], cache.k[layer], cache.v[layer],
                                                         self.block_tables, self.context_lens, **extra)
        for start, end, table in self.prefills:
            k_seq, v_seq = cache.gather(layer, table)
            # (tokens, heads, head_dim) -> (1, heads, tokens, head_dim), FlashAttention's layout.
            o = self.backend.prefill(q[start:end].transpose(0, 1)[None], k_seq.transpose(0, 1)[None],
                                     v_seq.transpose(0, 1)[None], causal=True)
            out[start:end] = o[0].transpose(0, 1)
        return out
