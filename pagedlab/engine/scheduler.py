"""Continuous batching: which sequences run in the next step, and who makes room when blocks run out.

Three queues of requests, as in vLLM: ``waiting`` (not admitted yet, or preempted by recomputation),
``running`` (K/V in the GPU pool, oldest first) and ``swapped`` (K/V in the CPU pool). Each step:

1. **Decode** every running sequence: reserve the slot of its newest token (``BlockManager.append``). When a
   sequence cannot grow, preempt the **newest** running request (its blocks go back to the pool) and try
   again; when the sequence's own request is the newest, it is the one preempted.
2. **Swap in** swapped requests, oldest first, while their blocks fit with one free block per sequence
   to grow into, plus the watermark (only when nobody was preempted in this step).
3. **Admit** waiting requests, oldest first, while their prompts' blocks fit with the watermark, the batch
   stays within ``max_num_batched_tokens`` tokens and ``max_num_seqs`` sequences (only when nobody is
   swapped out or was preempted in this step: those come first).

Preemption by recomputation frees the request's blocks and puts it at the front of ``waiting`` with every
token it has: re-admitted, it recomputes their K/V in one prefill (shortened by prefix caching). By
swapping, its blocks move to the CPU pool and come back unchanged. The scheduler performs the K/V copies
the block manager asks for (copy-on-write, swap) at once, in the order the manager made them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Literal

from pagedlab.engine.sequence import Request, Sequence, Status
from pagedlab.paged import BlockManager, KVCache, OutOfBlocks

Preemption = Literal["recompute", "swap"]


@dataclass
class SchedulerOutput:
    """One step's batch.

    Attributes:
        seqs: the sequences to run; each computes its tokens ``num_computed .. len(token_ids) - 1``.
        num_preemptions: requests preempted while scheduling. num_cached_tokens: prompt tokens that newly
            admitted sequences found in the prefix cache.
    """

    seqs: list[Sequence] = field(default_factory=list)
    num_preemptions: int = 0
    num_cached_tokens: int = 0


class Scheduler:
    """Decides each step's batch over a block manager (see the module docstring).

    Args:
        block_manager, kv_cache: the pool's bookkeeping and its tensors.
        max_num_seqs: most sequences in one step. max_num_batched_tokens: most tokens in one step.
        preemption: ``"recompute"`` or ``"swap"`` (a request the CPU pool cannot hold is recomputed).

    Admission and swap-in leave the block manager's ``watermark_blocks`` free, so running sequences can grow.
    """

    def __init__(self, block_manager: BlockManager, kv_cache: KVCache, max_num_seqs: int,
                 max_num_batched_tokens: int, preemption: Preemption) -> None:
        self.block_manager, self.kv_cache = block_manager, kv_cache
        self.max_num_seqs, self.max_num_batched_tokens = max_num_seqs, max_num_batched_tokens
        self.preemption = preemption
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.swapped: deque[Request] = deque()

    def add(self, request: Request) -> None:
        """Queue a new request at the back of ``waiting``."""
        self.waiting.append(request)

    def schedule(self) -> SchedulerOutput:
        """Build the next step's batch: decode, swap in, admit (see the module docstring)."""
        out = SchedulerOutput()
        queue, self.running = deque(self.running), []
        while queue:
            request = queue.popleft()
            if self._grow(request, queue, out):
                self.running.append(request)
        num_seqs = len(out.seqs)
        num_tokens = num_seqs
        while self.swapped and not out.num_preemptions:
            request = self.swapped[0]
            live = request.live_seqs
            ids = [s.seq_id for s in live]
            # Alone on the GPU, a request needs no headroom: add_request checked that it fits at its longest.
            alone = not self.running and not out.seqs
            if (not (self.block_manager.can_swap_in(ids) or alone) or num_seqs + len(live) > self.max_num_seqs
                    or num_tokens + len(live) > self.max_num_batched_tokens):
                break
            self.swapped.popleft()
            # One group: a block its sequences share comes back once, still shared.
            self.kv_cache.swap_in(self.block_manager.swap_in(ids))
            self._grow(request, queue, out)      # cannot fail: a block per sequence to grow into, or room to finish
            self.running.append(request)
            num_seqs, num_tokens = num_seqs + len(live), num_tokens + len(live)
        while self.waiting and not self.swapped and not out.num_preemptions:
            request = self.waiting[0]
            live = request.live_seqs
            tokens = sum(len(s.token_ids) for s in live)
            blocks = sum(-(-len(s.token_ids) // self.block_manager.block_size) for s in live)
            if (blocks + self.block_manager.watermark_blocks > self.block_manager.num_free_blocks
                    or num_seqs + request.max_num_seqs > self.max_num_seqs
                    or num_tokens + tokens > self.max_num_batched_tokens):
                break
            self.waiting.popleft()
            cached = 0
            for seq in live:
                seq.table = self.block_manager.add(seq.seq_id, seq.token_ids, computed=False)
                seq.num_computed = self.block_manager.num_cached_tokens(seq.seq_id)
                cached += seq.num_computed
                out.seqs.append(seq)
            out.num_cached_tokens += cached
            if request.num_cached_tokens is None:
                request.num_cached_tokens = cached
            request.status = Status.RUNNING
            self.running.append(request)
            num_seqs, num_tokens = num_seqs + request.max_num_seqs, num_tokens + tokens
        return out

    def finish(self, request: Request) -> None:
        """Take a finished request out of ``running`` (its sequences were freed as each finished)."""
        self.running.remove(request)
        request.status = Status.FINISHED

    # ---- internals -----------------------------------------------------------------------------------

    def _grow(self, request: Request, queue: deque[Request], out: SchedulerOutput) -> bool:
        """Reserve a slot for the newest token of each of ``request``'s sequences, preempting the newest
        requests (from the back of ``queue``) as long as the pool is short; False if ``request`` itself went."""
        live = request.live_seqs
        for seq in live:
            if seq.table.num_tokens == len(seq.token_ids):
                continue        # its slot is reserved already (it was preempted halfway through this)
            while True:
                try:            # a failed append changes nothing, so trying is as good as asking first
                    copy = self.block_manager.append(seq.seq_id, seq.token_ids[-1], computed=False).copy
                    break
                except OutOfBlocks:
                    victim = queue.pop() if queue else request
                    self._preempt(victim, out)
                    if victim is request:
                        return False
            if copy is not None:
                self.kv_cache.copy_blocks([copy])
        out.seqs += live
        request.status = Status.RUNNING
        return True

    def _preempt(self, request: Request, out: SchedulerOutput) -> None:
        """Give ``request``'s GPU blocks back: swap it out, or free it for recomputation."""
        manager, live = self.block_manager, request.live_seqs
        ids = [s.seq_id for s in live]
        out.num_preemptions += 1
        if self.preemption == "swap" and manager.can_swap_out(ids):
            # The whole group at once, so blocks its samples share are copied once and come back shared.
            self.kv_cache.swap_out(manager.swap_out(ids))
            request.status = Status.SWAPPED
            self.swapped.append(request)
            return
        for seq in live:
            manager.free(seq.seq_id)
            seq.num_computed = 0
        request.status = Status.WAITING
        self.waiting.appendleft(request)
