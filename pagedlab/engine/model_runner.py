"""Perform a step's K/V moves, turn its batch into tensors, run the model, return the logits to sample from."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import torch
from torch.nn import functional as F

from pagedlab.engine.attention import PagedAttention
from pagedlab.engine.backends import AttentionBackend, select_backend
from pagedlab.engine.scheduler import SchedulerOutput
from pagedlab.paged import BlockTable, KVCache
from pagedlab.validate import blocks_for


PADDED_ROWS = 4
"""The rows a product of fewer rows is padded to with zeros under :func:`pack_linear_weights`'s "padded" rule."""


def pack_linear_weights(model: torch.nn.Module, few_rows: str | None = None) -> int:
    """Optimization "prepacked weights", for float32 models on a CPU: each ``nn.Linear`` of ``model`` computes
    through oneDNN (PyTorch's CPU kernel library) with its weight laid out once in the blocked order oneDNN's
    kernel reads, instead of a plain ``F.linear`` that reorders panels of the weight on every call. A decode step
    multiplies a few rows by every weight of the model; at 32 rows a packed layer measured 10% to 40% faster than
    ``F.linear`` in micro-benchmarks on the course's CPU. vLLM's CPU backend packs its weights the same way. A model
    whose output layer is its token embedding (``lm_head`` None and an ``embed_tokens``, as a tied
    :class:`~pagedlab.models.llama.Llama`) gets a packed ``lm_head`` over the embedding's weight: the largest product
    of a decode step.

    Fewer than :data:`PADDED_ROWS` rows (a decode of one to three sequences) is a matrix-vector product, and which
    kernel streams the weight fastest there depends on the CPU: on the course's AMD EPYC, oneDNN's kernel for 4 rows
    read SmolLM2's weights a third faster than its kernel for 1 or 2 rows and than ``F.linear``'s GEMV, while an
    earlier run on the same kind of CPU found the GEMV faster than a packed row (``benchmarks/README.md``). So the
    rule for few rows is measured once, on the model's own layers (one row through every layer, best of three):

    * ``"plain"``: one row runs ``F.linear``; two and three rows the packed kernel;
    * ``"padded"``: one to three rows get zero rows added up to :data:`PADDED_ROWS` and run the packed kernel (a
      row's result does not depend on the rows beside it).

    The parameters and the ``state_dict`` are unchanged (the packed copies are extra memory). A weight changed in
    place (``copy_``, ``load_state_dict``) or replaced is packed again at its next call; one changed through
    ``.data``, which PyTorch's version counter does not see, is not: call this function again. With gradients
    enabled (training) the layers run ``F.linear`` as before. The results differ from ``F.linear``'s by float32
    rounding only (another order of the additions).

    Args:
        model: the model whose ``nn.Linear`` layers (and tied output layer) to pack.
        few_rows: ``"plain"`` or ``"padded"`` (above); None: whichever of the two measures faster here.

    Returns:
        How many layers were packed (0 where oneDNN is not available or the model is not float32 on a CPU).

    Raises:
        ValueError: ``few_rows`` is not None, ``"plain"`` or ``"padded"``.
    """
    if few_rows not in (None, "plain", "padded"):
        raise ValueError(f"few_rows must be None, 'plain' or 'padded', got {few_rows!r}")
    layers = [(m, m) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    embedding = getattr(model, "embed_tokens", None)
    tied = "lm_head" in vars(model) and model.lm_head is None and isinstance(embedding, torch.nn.Embedding)
    layers += [(None, embedding)] if tied else []
    layers = [(m, owner) for m, owner in layers if owner.weight.device.type == "cpu"
              and owner.weight.dtype == torch.float32]
    if not layers or not torch.backends.mkldnn.is_available():
        return 0
    try:                                    # a build of PyTorch whose oneDNN lacks these operators keeps F.linear
        with torch.no_grad():
            _PackedLinear(layers[0][1], "padded")(torch.zeros(1, layers[0][1].weight.shape[1]))
    except (RuntimeError, NotImplementedError, AttributeError):
        return 0
    packed = [_PackedLinear(owner, few_rows or "plain") for _, owner in layers]
    if few_rows is None:
        rule = _faster_rule(packed)
        for layer in packed:
            layer.few_rows = rule
    for (module, owner), layer in zip(layers, packed):
        if module is None:
            model.lm_head = layer           # a plain attribute, not a submodule: no new state_dict entry
        else:
            module.forward = layer
    return len(layers)


def _faster_rule(layers: list[_PackedLinear]) -> str:
    """The few-rows rule under which one row through every one of ``layers`` takes less CPU time (best of three)."""
    rows = [torch.zeros(1, layer.owner.weight.shape[1]) for layer in layers]
    best = {"plain": math.inf, "padded": math.inf}
    with torch.inference_mode():
        for _ in range(3):
            for rule in best:
                start = time.process_time()
                for layer, x in zip(layers, rows):
                    layer.few_rows = rule
                    layer(x)
                best[rule] = min(best[rule], time.process_time() - start)
    return min(best, key=best.get)


class _PackedLinear:
    """``F.linear(x, owner.weight, owner.bias)`` through the weight packed for oneDNN, with a rule for fewer than
    :data:`PADDED_ROWS` rows (see :func:`pack_linear_weights`)."""

    def __init__(self, owner: torch.nn.Module, few_rows: str) -> None:
        self.owner, self.few_rows, self.key, self.packed = owner, few_rows, None, None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        w, bias = self.owner.weight, getattr(self.owner, "bias", None)
        rows = x.numel() // max(x.shape[-1], 1)
        if (rows == 1 and self.few_rows == "plain") or (torch.is_grad_enabled() and w.requires_grad):
            return F.linear(x, w, bias)
        key = (w.data_ptr(), w._version)
        if key != self.key:                 # first call, or the weight changed since it was packed
            self.packed, self.key = torch.ops.mkldnn._reorder_linear_weight(w.detach()), key
        if rows >= PADDED_ROWS or self.few_rows == "plain":
            return torch.ops.mkldnn._linear_pointwise(x, self.packed, bias, "none", [], "")
        padded = F.pad(x.reshape(rows, x.shape[-1]), (0, 0, 0, PADDED_ROWS - rows))
        out = torch.ops.mkldnn._linear_pointwise(padded, self.packed, bias, "none", [], "")
        return out[:rows].reshape(*x.shape[:-1], out.shape[-1])


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
        pack_linear_weights(model)
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
    def execute(self, batch: SchedulerOutput, every_row_of: Sequence[int] = ()) -> tuple[torch.Tensor,
                                                                                          list[torch.Tensor]]:
        """Perform the batch's K/V moves, run the model on it.

        Args:
            every_row_of: indices into ``batch.seqs`` whose every computed token's logits are wanted (prompt
                log-probabilities), not only the last one's.

        Returns:
            ``(logits, rows)``: ``(len(batch.seqs), vocab)`` logits, each row at its sequence's last computed token;
            for each of ``every_row_of``, ``(num_new_tokens, vocab)`` logits, one per token it computed.
        """
        self.apply_moves(batch)
        input_ids, positions, attention, last = self.prepare(batch)
        # A sequence's tokens are contiguous in the step and end at its last row.
        spans = [range(last[i] - batch.num_new_tokens[i] + 1, last[i] + 1) for i in every_row_of]
        rows = torch.tensor(last + [r for span in spans for r in span], device=input_ids.device)
        logits = self.model(input_ids, positions, attention, rows=rows)
        n = len(last)
        return logits[:n], list(logits[n:].split([len(span) for span in spans])) if spans else []
