"""The baseline continuous batching replaces: static batching over contiguous max-length reservations.

Before paged KV caches, a server reserved for every request one contiguous region of K/V memory big enough
for the longest sequence it might become (``max_len`` tokens), and ran requests in fixed batches: a batch
starts together and the next one starts only when its last request has finished. With the same KV memory
as an :class:`~pagedlab.engine.LLMEngine` of ``num_blocks`` blocks, that fits ``num_blocks * block_size //
max_len`` requests at a time, however short they turn out to be.

This runs that policy on the same model, kernels and :class:`~pagedlab.paged.KVCache`: request ``i`` of a batch
owns the contiguous blocks ``i * r .. (i + 1) * r - 1`` (``r = ceil(max_len / block_size)``), written as a block
table, so the comparison with the engine measures the scheduling and the memory policy, nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence as Seq

import torch

from pagedlab.engine.model_runner import ModelRunner
from pagedlab.engine.outputs import CompletionOutput, RequestOutput
from pagedlab.engine.sampling import SamplingParams, per_prompt, sample
from pagedlab.engine.scheduler import SchedulerOutput
from pagedlab.engine.sequence import Request
from pagedlab.paged import BlockTable, KVCache
from pagedlab.paged.allocator import check_count


class StaticBatchingEngine:
    """Static batches over contiguous reservations of ``max_len`` tokens (see the module docstring).

    Args:
        model: as for :class:`~pagedlab.engine.LLMEngine`.
        num_blocks, block_size: the same KV memory as the engine it is compared with.
        max_len: tokens reserved per request (default: the model's ``n_positions``, the longest it can be).

    Attributes:
        batch_size: requests that run at once. kv_cache: the pool. steps: model steps run so far.
        computed_tokens: tokens the model computed so far (prompts and decodes).

    Raises:
        ValueError: not even one reservation of ``max_len`` tokens fits in the pool.
    """

    def __init__(self, model: torch.nn.Module, num_blocks: int, block_size: int = 16,
                 max_len: int | None = None) -> None:
        check_count("num_blocks", num_blocks, 1)
        check_count("block_size", block_size, 1)
        cfg = model.config
        self.max_len = cfg.n_positions if max_len is None else check_count("max_len", max_len, 1)
        self.blocks_per_request = -(-self.max_len // block_size)
        self.batch_size = num_blocks // self.blocks_per_request
        if self.batch_size == 0:
            raise ValueError(f"a reservation of max_len={self.max_len} tokens takes {self.blocks_per_request} blocks "
                             f"of {block_size}; the pool has only {num_blocks}")
        self.block_size = block_size
        param = next(model.parameters())
        self.kv_cache = KVCache(cfg.n_layers, num_blocks, block_size, cfg.n_heads, cfg.head_dim,
                                dtype=param.dtype, device=param.device)
        self.runner = ModelRunner(model, self.kv_cache)
        self.steps = 0
        self.computed_tokens = 0

    def generate(self, prompts: Seq[Seq[int]], params: SamplingParams | Seq[SamplingParams] | None = None
                 ) -> list[RequestOutput]:
        """Complete every prompt once, ``batch_size`` requests at a time, in order.

        Args:
            prompts: lists of token ids. params: one :class:`SamplingParams` for all, or one per prompt (n = 1).

        Raises:
            ValueError: ``n > 1``, or a prompt that with its ``max_tokens`` is longer than ``max_len``.
        """
        params = [sp.with_seed() for sp in per_prompt(params, len(prompts))]
        for p, sp in zip(prompts, params):
            if sp.n != 1:
                raise ValueError("the static baseline generates one completion per prompt (n=1)")
            if len(p) + sp.max_tokens > self.max_len:
                raise ValueError(f"a prompt of {len(p)} tokens plus max_tokens={sp.max_tokens} exceeds "
                                 f"max_len={self.max_len}")
        outputs = []
        r = self.blocks_per_request
        for first in range(0, len(prompts), self.batch_size):
            requests = [Request(i, list(prompts[i]), params[i], i)
                        for i in range(first, min(first + self.batch_size, len(prompts)))]
            for i, req in enumerate(requests):
                req.seqs[0].table = BlockTable(list(range(i * r, (i + 1) * r)), 0, self.block_size)
            # The whole batch runs until its longest request is done; finished requests keep their reservation.
            while True:
                seqs = [req.seqs[0] for req in requests if not req.seqs[0].finished]
                if not seqs:
                    break
                for seq in seqs:
                    seq.table.num_tokens = len(seq.token_ids)
                batch = SchedulerOutput(seqs, [len(s.token_ids) - s.num_computed for s in seqs])
                logits = self.runner.execute(batch)
                self.computed_tokens += batch.num_batched_tokens
                greedy = logits.argmax(dim=-1).tolist()
                self.steps += 1
                for i, seq in enumerate(seqs):
                    seq.num_computed = len(seq.token_ids)
                    sp = seq.request.params
                    seq.token_ids.append(greedy[i] if sp.greedy else sample(logits[i], sp, 0, len(seq.token_ids)))
            outputs += [RequestOutput(req.request_id, req.prompt, [CompletionOutput(0, req.seqs[0].output_ids, True)],
                                      True) for req in requests]
        return outputs
