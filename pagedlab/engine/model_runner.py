"""Perform a step's K/V moves, turn its batch into tensors, run the model, return the logits to sample from."""

from __future__ import annotations

import torch

from pagedlab.engine.attention import PagedAttention
from pagedlab.engine.backends import AttentionBackend, select_backend
from pagedlab.engine.scheduler import SchedulerOutput
from pagedlab.paged import BlockTable, KVCache
from pagedlab.validate import blocks_for


class ModelRunner:
    """Runs a model whose attention reads and writes the paged cache.

    Args:
        model: ``model(input_ids, positions, attention, rows=...) -> logits`` at those rows, e.g.
            :class:`~pagedlab.models.tiny_gpt.TinyGPT` or :class:`~pagedlab.models.llama.Llama`.
        kv_cache: the pools the block tables point into.
        backend: the attention functions (default: the Triton kernels).
    """

    def __init__(self, model: torch.nn.Module, kv_cache: KVCache, backend: AttentionBackend | None = None) -> None:
        self.model, self.kv_cache = model, kv_cache
        self.backend = select_backend("triton") if backend is None else backend

    def apply_moves(self, batch: SchedulerOutput) -> None:
        """The K/V copies the scheduler asked for, in the order that is safe (see :class:`SchedulerOutput`)."""
        cache = self.kv_cache
        if batch.blocks_to_swap_out:
            cache.swap_out(batch.blocks_to_swap_out)
        if batch.blocks_to_swap_in:
            cache.swap_in(batch.blocks_to_swap_in)
        if batch.blocks_to_copy:
            cache.copy_blocks(batch.blocks_to_copy)

    def prepare(self, batch: SchedulerOutput) -> tuple[torch.Tensor, torch.Tensor, PagedAttention, list[int]]:
        """The model's inputs for ``batch``: ``seqs[i]`` computes its tokens ``num_computed .. num_computed +
        num_new_tokens[i] - 1`` (through ``seq.table``).

        One new token goes through the decode kernel (a decode, or a one-token chunk: either way one query
        against the context before it); more go through the prefill path, with keys up to the chunk's end.

        Returns:
            ``(input_ids, positions, attention, last)``: int64 ``(num_tokens,)`` tokens and positions, one-token
            sequences first; the step's :class:`PagedAttention`; ``last[i]``, the row of ``seqs[i]``'s last token.
        """
        work = list(zip(batch.seqs, batch.num_new_tokens))
        decodes = [(s, n) for s, n in work if n == 1]
        prefills = [(s, n) for s, n in work if n != 1]
        positions = [s.num_computed for s, _ in decodes]
        ids = [s.token_ids[p] for (s, _), p in zip(decodes, positions)]
        slots = [s.table.slot(p) for (s, _), p in zip(decodes, positions)]
        row = {id(s): i for i, (s, _) in enumerate(decodes)}
        spans = []
        for seq, n in prefills:
            start, end = seq.num_computed, seq.num_computed + n
            table = seq.table
            # Keys up to the chunk's end: the tokens after it have slots but no K/V yet.
            keys = BlockTable(table.block_ids[:blocks_for(end, table.block_size)], end, table.block_size)
            spans.append((len(ids), len(ids) + n, keys))
            ids += seq.token_ids[start:end]
            positions += range(start, end)
            slots += table.slot_mapping(start, end)
            row[id(seq)] = len(ids) - 1
        width = max((s.table.num_blocks for s, _ in decodes), default=0)
        block_tables = torch.tensor([s.table.block_ids + [0] * (width - s.table.num_blocks) for s, _ in decodes],
                                    dtype=torch.int32).reshape(len(decodes), width)
        dev = self.kv_cache.device
        lens = [p + 1 for p in positions[:len(decodes)]]
        attention = PagedAttention(self.kv_cache, torch.tensor(slots, dtype=torch.long, device=dev), len(decodes),
                                   block_tables.to(dev), torch.tensor(lens, dtype=torch.int32, device=dev),
                                   (max(lens, default=1), max(sum(lens), 1)), spans, self.backend)
        return (torch.tensor(ids, dtype=torch.long, device=dev), torch.tensor(positions, dtype=torch.long, device=dev),
                attention, [row[id(s)] for s in batch.seqs])

    @torch.inference_mode()
    def execute(self, batch: SchedulerOutput) -> torch.Tensor:
        """Perform the batch's K/V moves, run the model on it; returns ``(len(batch.seqs), vocab)`` logits, each
        row at its sequence's last computed token."""
        self.apply_moves(batch)
        input_ids, positions, attention, last = self.prepare(batch)
        return self.model(input_ids, positions, attention, rows=torch.tensor(last, device=input_ids.device))
