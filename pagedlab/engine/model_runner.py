"""Turn a step's sequences into tensors, run the model on them, and return the logits to sample from."""

from __future__ import annotations

import torch

from pagedlab.engine.attention import PagedAttention
from pagedlab.engine.backends import AttentionBackend, select_backend
from pagedlab.engine.sequence import Sequence
from pagedlab.paged import KVCache


class ModelRunner:
    """Runs a model whose attention reads and writes the paged cache.

    Args:
        model: ``model(input_ids, positions, attention) -> logits``, e.g. :class:`~pagedlab.model.TinyGPT`.
        kv_cache: the pools the block tables point into.
        backend: the attention functions (default: the Triton kernels).
    """

    def __init__(self, model: torch.nn.Module, kv_cache: KVCache, backend: AttentionBackend | None = None) -> None:
        self.model, self.kv_cache = model, kv_cache
        self.backend = select_backend("triton") if backend is None else backend

    def prepare(self, seqs: list[Sequence]) -> tuple[torch.Tensor, torch.Tensor, PagedAttention, list[int]]:
        """The model's inputs for ``seqs``, each computing its tokens ``num_computed ..`` (through ``seq.table``).

        Returns:
            ``(input_ids, positions, attention, last)``: int64 ``(num_tokens,)`` tokens and positions, decodes
            first; the step's :class:`PagedAttention`; ``last[i]``, the row of ``seqs[i]``'s last token.
        """
        decodes = [s for s in seqs if len(s.token_ids) - s.num_computed == 1]
        prefills = [s for s in seqs if len(s.token_ids) - s.num_computed != 1]
        # One token per decoding sequence: its newest, at position len - 1, in the slot append reserved.
        ids = [s.token_ids[-1] for s in decodes]
        positions = [len(s.token_ids) - 1 for s in decodes]
        slots = [s.table.slot(p) for s, p in zip(decodes, positions)]
        row = {id(s): i for i, s in enumerate(decodes)}
        spans = []
        for seq in prefills:
            start, end = seq.num_computed, len(seq.token_ids)
            spans.append((len(ids), len(ids) + end - start, seq.table))
            ids += seq.token_ids[start:end]
            positions += range(start, end)
            slots += seq.table.slot_mapping(start, end)
            row[id(seq)] = len(ids) - 1
        width = max((s.table.num_blocks for s in decodes), default=0)
        block_tables = torch.tensor([s.table.block_ids + [0] * (width - s.table.num_blocks) for s in decodes],
                                    dtype=torch.int32).reshape(len(decodes), width)
        dev = self.kv_cache.device
        attention = PagedAttention(self.kv_cache, torch.tensor(slots, dtype=torch.long, device=dev), len(decodes),
                                   block_tables.to(dev), torch.tensor(positions[:len(decodes)], dtype=torch.int32,
                                                                      device=dev) + 1, spans, self.backend)
        return (torch.tensor(ids, dtype=torch.long, device=dev), torch.tensor(positions, dtype=torch.long, device=dev),
                attention, [row[id(s)] for s in seqs])

    @torch.inference_mode()
    def execute(self, seqs: list[Sequence]) -> torch.Tensor:
        """Run the model on ``seqs``; returns ``(len(seqs), vocab)`` logits of each one's last token."""
        input_ids, positions, attention, last = self.prepare(seqs)
        logits = self.model(input_ids, positions, attention)
        return logits[torch.tensor(last, device=logits.device)]
