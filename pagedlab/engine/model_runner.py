"""Turn a step's sequences into tensors, run the model on them, and return the logits to sample from."""

from __future__ import annotations

import torch

from pagedlab.engine import attention as _attention
from pagedlab.engine.attention import PagedAttention
from pagedlab.engine.sequence import Sequence
from pagedlab.paged import BlockManager, KVCache


class ModelRunner:
    """Runs a model whose attention reads and writes the paged cache.

    Args:
        model: ``model(input_ids, positions, attention) -> logits``, e.g. :class:`~pagedlab.model.TinyGPT`.
        block_manager, kv_cache: where each sequence's K/V live.
    """

    def __init__(self, model: torch.nn.Module, block_manager: BlockManager, kv_cache: KVCache) -> None:
        self.model, self.block_manager, self.kv_cache = model, block_manager, kv_cache

    def prepare(self, seqs: list[Sequence]) -> tuple[torch.Tensor, torch.Tensor, PagedAttention, list[int]]:
        """The model's inputs for ``seqs``, each computing its tokens ``num_computed ..``.

        Returns:
            ``(input_ids, positions, attention, last)``: int64 ``(num_tokens,)`` tokens and positions, decodes
            first; the step's :class:`PagedAttention`; ``last[i]``, the row of ``seqs[i]``'s last token.
        """
        tables = [self.block_manager.table(s.seq_id) for s in seqs]
        decode = [i for i, s in enumerate(seqs) if len(s.token_ids) - s.num_computed == 1 and _attention._DECODE_KERNEL]
        is_decode = set(decode)
        prefill = [i for i in range(len(seqs)) if i not in is_decode]
        ids: list[int] = []
        positions: list[int] = []
        slots: list[int] = []
        last = [0] * len(seqs)
        spans = []
        for i in decode + prefill:
            seq, table = seqs[i], tables[i]
            start, end = seq.num_computed, len(seq.token_ids)
            if i not in is_decode:
                spans.append((len(ids), len(ids) + end - start, table))
            ids += seq.token_ids[start:end]
            positions += range(start, end)
            slots += table.slot_mapping(start, end)
            last[i] = len(ids) - 1
        width = max((tables[i].num_blocks for i in decode), default=0)
        block_tables = torch.tensor([tables[i].block_ids + [0] * (width - tables[i].num_blocks) for i in decode],
                                    dtype=torch.int32).reshape(len(decode), width)
        context_lens = torch.tensor([len(seqs[i].token_ids) for i in decode], dtype=torch.int32)
        dev = self.kv_cache.device
        attention = PagedAttention(self.kv_cache, torch.tensor(slots, dtype=torch.long, device=dev), len(decode),
                                   block_tables.to(dev), context_lens.to(dev), spans)
        return (torch.tensor(ids, dtype=torch.long, device=dev), torch.tensor(positions, dtype=torch.long, device=dev),
                attention, last)

    @torch.inference_mode()
    def execute(self, seqs: list[Sequence]) -> torch.Tensor:
        """Run the model on ``seqs``; returns ``(len(seqs), vocab)`` logits of each one's last token."""
        input_ids, positions, attention, last = self.prepare(seqs)
        logits = self.model(input_ids, positions, attention)
        return logits[torch.tensor(last, device=logits.device)]
