"""Continuous batching: which sequences run in the next step, with how many tokens, and who makes room.

The scheduler owns the :class:`~pagedlab.paged.BlockManager`: it is the only one that changes it. It never
touches a tensor (it imports no torch); the K/V copies the manager asks for travel in the step's
:class:`SchedulerOutput` (``blocks_to_swap_out``, ``blocks_to_swap_in``, ``blocks_to_copy``, vLLM's names) for
the model runner to perform through the :class:`~pagedlab.paged.KVCache`.

Three queues of requests, as in vLLM: ``waiting`` (not admitted yet, or preempted by recomputation),
``running`` (K/V in the GPU pool, oldest first) and ``swapped`` (K/V in the CPU pool, oldest first). Each step,
:meth:`Scheduler.schedule`

1. **grows** every running sequence that decodes: reserves the slot of its newest token
   (``BlockManager.append``). When a sequence cannot grow, the **newest** running request is preempted (its
   blocks go back to the pool) and the sequence tries again; when its own request is the newest, it is the
   one preempted;
2. **swaps in** swapped requests, oldest first, while their blocks fit with one free block per sequence to grow
   into, plus the watermark (only when nobody was preempted in this step);
3. **hands out the token budget** (``max_num_batched_tokens``): first one token to every decoding sequence,
   then the tokens of the sequences still prefilling, in arrival order;
4. **admits** waiting requests, oldest first, while ``BlockManager.can_add`` says their blocks fit with the
   watermark, the step stays within ``max_num_seqs`` sequences and budget is left (only when nobody is
   swapped out or was preempted in this step: those come first).

A prefill runs whole (a sequence's uncomputed tokens in one step, or it waits for a step with room), or, with
``enable_chunked_prefill``, in chunks of whatever budget is left (vLLM's name): a long prompt no longer holds
every decode back for a step, and a request preempted by recomputation, which comes back with all its tokens
(``n`` sequences of them after the fork), always fits. After the model has run, :meth:`Scheduler.postprocess`
(nano-vllm's name) records what was computed, forks a request's completions once its prompt is computed, appends
the sampled tokens and frees every sequence that finished.

Preemption by recomputation frees the request's blocks and puts it at the front of ``waiting`` with every
token it has: re-admitted, it recomputes their K/V (shortened by prefix caching). By swapping, its blocks move
to the CPU pool and come back unchanged.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Literal

from pagedlab.engine.config import EngineConfig
from pagedlab.engine.sequence import Request, Sequence, Status
from pagedlab.paged.allocator import OutOfBlocks
from pagedlab.paged.manager import BlockManager
from pagedlab.validate import blocks_for

Preemption = Literal["recompute", "swap"]


@dataclass
class SchedulerOutput:
    """One step's batch, and the K/V moves to make before the model runs.

    Attributes:
        seqs: the sequences to run; ``seqs[i]`` computes its tokens ``num_computed .. num_computed +
            num_new_tokens[i] - 1``. Its logits are sampled when that reaches the end of its tokens.
        num_new_tokens: tokens each of ``seqs`` computes (1 for a decode; a whole prefill or a chunk).
        blocks_to_swap_out: ``(gpu_block, cpu_block)`` copies. blocks_to_swap_in: ``(cpu_block, gpu_block)``.
        blocks_to_copy: ``(src, dst)`` GPU copies (copy-on-write). Perform them in this order: swap out, swap
            in, copy. Every read of a swap-out precedes every write of the step, and a step that swaps out
            swaps nothing in, so the order is safe although blocks freed early in a step are reused later in it.
        num_preemptions: requests preempted while scheduling. num_cached_tokens: prompt tokens that newly
            admitted sequences found in the prefix cache.
    """

    seqs: list[Sequence] = field(default_factory=list)
    num_new_tokens: list[int] = field(default_factory=list)
    blocks_to_swap_out: list[tuple[int, int]] = field(default_factory=list)
    blocks_to_swap_in: list[tuple[int, int]] = field(default_factory=list)
    blocks_to_copy: list[tuple[int, int]] = field(default_factory=list)
    num_preemptions: int = 0
    num_cached_tokens: int = 0

    @property
    def num_batched_tokens(self) -> int:
        """Tokens the step computes."""
        return sum(self.num_new_tokens)

    def completes(self, i: int) -> bool:
        """True when ``seqs[i]``'s tokens are all computed after this step (its logits give a new token)."""
        seq = self.seqs[i]
        return seq.num_computed + self.num_new_tokens[i] == len(seq.token_ids)


class Scheduler:
    """Decides each step's batch over a block manager (see the module docstring).

    Args:
        block_manager: the pool's bookkeeping; the scheduler is the only one to change it.
        config: the engine's settings (:class:`~pagedlab.engine.config.EngineConfig`); the scheduler reads
            ``max_num_seqs``, ``max_num_batched_tokens``, ``preemption`` (a request the CPU pool cannot hold is
            recomputed), ``enable_chunked_prefill`` and ``max_model_len`` (None: no limit).
        **settings: instead of ``config``, those settings by name (the others keep EngineConfig's defaults;
            ``num_cpu_blocks`` is the block manager's).

    Requests longer than ``max_model_len``: as vLLM V1 (``vllm/v1/core/sched/utils.py``, ``check_stop``), a
    request whose prompt plus ``max_tokens`` passes ``max_model_len`` is served and ends at ``max_model_len``
    tokens (``"length"``); only a prompt of ``max_model_len`` tokens or more is refused, as vLLM's input processor
    refuses it (``vllm/v1/engine/input_processor.py``, ``_validate_prompt_len``: the prompt plus at least one
    output token must fit). A request that could never fit
    the pool is refused when added (:meth:`refusal`), which vLLM never needs to do: vLLM checks once, at start-up,
    that the pool holds one sequence of ``max_model_len`` tokens, and refuses to start otherwise. The course keeps
    pools smaller than that (a few blocks, to watch preemption), so the check moves to the request, where it says
    which request and why; with a pool that holds ``max_model_len`` tokens per sequence, as vLLM's does, it refuses
    only ``n`` sequences that could never run together (vLLM forks them into requests preempted one by one).
    """

    ADMIT_NEEDS_BUDGET = True
    """Admit a request only in a step with token budget left (its prefill starts in the step it is admitted)."""

    def __init__(self, block_manager: BlockManager, config: EngineConfig | None = None, **settings) -> None:
        if config is None:          # the CPU pool is the block manager's
            cpu = block_manager.cpu_allocator
            config = EngineConfig.from_settings(type(self).__name__,
                                                dict(num_cpu_blocks=cpu.num_blocks if cpu else 0, **settings))
        elif settings:
            raise TypeError(f"{type(self).__name__} takes an EngineConfig or settings by name, not both "
                            f"(got {sorted(settings)})")
        self.block_manager, self.config = block_manager, config
        self.max_num_seqs, self.max_num_batched_tokens = config.max_num_seqs, config.max_num_batched_tokens
        self.preemption: Preemption = config.preemption
        self.enable_chunked_prefill = config.enable_chunked_prefill
        self.max_model_len = config.max_model_len
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.swapped: deque[Request] = deque()

    def refusal(self, prompt_len: int, max_tokens: int, n: int) -> str | None:
        """Why a request of ``n`` sequences of up to ``prompt_len + max_tokens`` tokens could never run under
        this scheduler (None: it can). The admission rules: every check that does not depend on the queues.
        """
        total, budget, bs = self.max_len(prompt_len, max_tokens), self.max_num_batched_tokens, \
            self.block_manager.block_size
        usable = self.block_manager.num_blocks - self.block_manager.watermark_blocks
        rules = [
            # vLLM's input processor: the prompt and at least one output token must fit in max_model_len.
            (self.max_model_len is not None and prompt_len >= self.max_model_len,
             f"the prompt ({prompt_len} tokens) plus at least 1 output token is longer than max_model_len="
             f"{self.max_model_len}; shorten the prompt or raise max_model_len"),
            # Preempted by recomputation, a sequence comes back with every token but the last sampled one.
            (not self.enable_chunked_prefill and total - 1 > budget,
             f"its sequence of up to {total} tokens, if preempted by recomputation, would need a prefill of "
             f"{total - 1} tokens, more than max_num_batched_tokens={budget}; pass enable_chunked_prefill=True "
             f"or raise max_num_batched_tokens"),
            (n > self.max_num_seqs, f"n={n} exceeds max_num_seqs={self.max_num_seqs}"),
            # The last token is sampled, never stored: a sequence holds at most total - 1 tokens' K/V.
            (n * blocks_for(total - 1, bs) > usable, f"its {n} sequence(s) of up to {total} tokens need "
                                                     f"{n * blocks_for(total - 1, bs)} blocks; the pool has {usable} "
                                                     f"after the watermark, so it could never finish"),
        ]
        return next((why for bad, why in rules if bad), None)

    def max_len(self, prompt_len: int, max_tokens: int) -> int:
        """The longest a sequence of this prompt gets: ``prompt_len + max_tokens``, cut at ``max_model_len``."""
        total = prompt_len + max_tokens
        return total if self.max_model_len is None else min(total, max(self.max_model_len, prompt_len))

    def add(self, request: Request) -> None:
        """Queue a new request at the back of ``waiting``; its sequences end at ``max_model_len`` tokens at the
        latest.

        Raises:
            ValueError: a request that could never run (:meth:`refusal` says why); nothing is queued.
        """
        why = self.refusal(request.prompt_len, request.params.max_tokens, request.params.n)
        if why:
            raise ValueError(f"cannot add request {request.request_id!r}: {why}")
        request.max_len = self.max_len(request.prompt_len, request.params.max_tokens)
        self.waiting.append(request)

    def abort(self, request: Request) -> None:
        """Drop a request from whichever queue holds it and free every block its sequences hold (GPU or CPU)."""
        for queue in (self.waiting, self.running, self.swapped):
            if request in queue:
                queue.remove(request)
        for seq in request.seqs:
            if seq.seq_id in self.block_manager:
                self.block_manager.free(seq.seq_id)
            seq.table = None
        request.status = Status.FINISHED

    def schedule(self) -> SchedulerOutput:
        """Build the next step's batch: grow, swap in, hand out tokens, admit (see the module docstring)."""
        out = SchedulerOutput()
        manager = self.block_manager
        was_running = bool(self.running)
        queue, self.running = deque(self.running), []
        while queue:
            request = queue.popleft()
            if self._grow(request, queue, out):
                self.running.append(request)
        num_seqs = sum(len(r.live_seqs) for r in self.running)
        while self.swapped and not out.num_preemptions:
            request = self.swapped[0]
            ids = [s.seq_id for s in request.live_seqs]
            # Alone on the GPU, a request needs no headroom: add_request checked that it fits at its longest.
            alone = not self.running
            if not (manager.can_swap_in(ids) or alone) or num_seqs + len(ids) > self.max_num_seqs:
                break
            self.swapped.popleft()
            # One group: a block its sequences share comes back once, still shared.
            out.blocks_to_swap_in += manager.swap_in(ids)
            self._grow(request, queue, out)      # cannot fail: a block per sequence to grow into, or room to finish
            self.running.append(request)
            num_seqs += len(ids)
        budget = self.max_num_batched_tokens
        # Decodes first: max_num_batched_tokens >= max_num_seqs, so every running sequence gets its token.
        decoding = [s for r in self.running for s in r.live_seqs if s.is_decoding]
        for seq in decoding:
            budget = self._take(seq, budget, out)
        for request in self.running:
            for seq in request.live_seqs:
                if not seq.is_decoding and len(seq.token_ids) > seq.num_computed:
                    budget = self._take(seq, budget, out)
        admitted = 0
        while (self.waiting and not self.swapped and not out.num_preemptions
               and (budget or not self.ADMIT_NEEDS_BUDGET)):
            request = self.waiting[0]
            live = request.live_seqs
            # Without chunks, the first sequence's whole prefill must fit (cache hits are not counted on).
            if (not manager.can_add([len(s.token_ids) for s in live])
                    or num_seqs + request.max_num_seqs > self.max_num_seqs
                    or not self.enable_chunked_prefill and len(live[0].token_ids) > budget
                    or not self._may_admit(admitted, was_running)):
                break
            self.waiting.popleft()
            admitted += 1
            cached = 0
            for seq in live:
                seq.table = manager.add(seq.seq_id, seq.token_ids, computed=False)
                # Prompt log-probabilities need the logits of every prompt token: a cache hit is recomputed
                # (the same K/V written again), as vLLM skips reading the prefix cache for such a request.
                seq.num_computed = 0 if request.wants_prompt_logprobs else manager.num_cached_tokens(seq.seq_id)
                cached += seq.num_computed
                budget = self._take(seq, budget, out)
            out.num_cached_tokens += cached
            if request.num_cached_tokens is None:
                request.num_cached_tokens = cached
            request.status = Status.RUNNING
            self.running.append(request)
            num_seqs += request.max_num_seqs
        return out

    def postprocess(self, out: SchedulerOutput, new_tokens: list[list[int]]) -> list[Request]:
        """Record a step the model ran: what was computed, the sampled tokens, forks, finished sequences.

        Args:
            out: the step's batch, from :meth:`schedule`.
            new_tokens: for each of ``out.seqs``, the tokens sampled from its logits: none when its chunk did
                not reach the end of its tokens, ``n`` (one per completion) for a prompt just computed of a
                request not forked yet, else one.

        Returns:
            The requests that ran, in batch order, each once. Finished ones are out of ``running``.

        Raises:
            ValueError: ``new_tokens`` does not match the batch.
        """
        if len(new_tokens) != len(out.seqs):
            raise ValueError(f"new_tokens has {len(new_tokens)} entries for a batch of {len(out.seqs)} sequences")
        manager = self.block_manager
        ran: dict[Hashable, Request] = {}
        for i, (seq, n, tokens) in enumerate(zip(out.seqs, out.num_new_tokens, new_tokens)):
            request = seq.request
            ran[request.request_id] = request
            expected = 0 if not out.completes(i) else request.params.n if request.awaiting_fork else 1
            if len(tokens) != expected:
                raise ValueError(f"sequence {seq.seq_id!r} needs {expected} sampled tokens this step, "
                                 f"got {len(tokens)}")
            seq.num_computed += n
            if not tokens:
                continue
            for j, token in enumerate(tokens[1:], start=1):      # the prompt is computed: fork the completions
                child = Sequence(request, j, list(seq.token_ids), seq.num_computed)
                child.table = manager.fork(seq.seq_id, child.seq_id)
                request.seqs.append(child)
                self._append(child, token)
            self._append(seq, tokens[0])
        for request in ran.values():
            if not request.live_seqs:
                self.running.remove(request)
                request.status = Status.FINISHED
        return list(ran.values())

    # ---- internals -----------------------------------------------------------------------------------

    def _may_admit(self, admitted: int, was_running: bool) -> bool:
        """The batching policy's say on admitting one more request in this step, ``admitted`` being admitted
        already and ``was_running`` telling whether requests ran before it. Continuous batching: always."""
        return True

    def _append(self, seq: Sequence, token: int) -> None:
        seq.append(token)
        if seq.finished:
            self.block_manager.free(seq.seq_id)
            seq.table = None

    def _take(self, seq: Sequence, budget: int, out: SchedulerOutput) -> int:
        """Put ``seq`` in the batch with as many of its uncomputed tokens as the rules allow; the budget left."""
        need = len(seq.token_ids) - seq.num_computed
        n = min(need, budget) if self.enable_chunked_prefill else need if need <= budget else 0
        if n:
            out.seqs.append(seq)
            out.num_new_tokens.append(n)
            # Growth and preemption are over for this step, so these tokens will be computed by this step's model
            # run, which writes every token's K/V before any attention reads: their full blocks may be found in the
            # prefix cache from now on, by a request admitted later in this very step (vLLM v1 caches blocks at
            # scheduling time the same way). A slot reserved during growth is not marked until here, so a request
            # that was preempted after reserving it leaves nothing uncomputed in the cache.
            self.block_manager.mark_computed(seq.seq_id, seq.num_computed + n)
        return budget - n

    def _grow(self, request: Request, queue: deque[Request], out: SchedulerOutput) -> bool:
        """Reserve a slot for the newest token of each of ``request``'s decoding sequences, preempting the
        newest requests (from the back of ``queue``) as long as the pool is short; False if ``request`` itself
        went."""
        for seq in request.live_seqs:
            if seq.table.num_tokens == len(seq.token_ids):
                continue        # its slots are reserved already (a prefill, or preempted halfway through this)
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
                out.blocks_to_copy.append(copy)
        request.status = Status.RUNNING
        return True

    def _preempt(self, request: Request, out: SchedulerOutput) -> None:
        """Give ``request``'s GPU blocks back: swap it out, or free it for recomputation."""
        manager, live = self.block_manager, request.live_seqs
        ids = [s.seq_id for s in live]
        out.num_preemptions += 1
        # Copies into blocks this request got in this very step are moot now (it leaves them), and must go:
        # the blocks may be handed out again in this step, and two copies into one block race.
        pending = {dst: src for src, dst in out.blocks_to_copy}
        mine = {b for s in live for b in s.table.block_ids if b in pending}
        if mine:
            out.blocks_to_copy = [(src, dst) for src, dst in out.blocks_to_copy if dst not in mine]
        if self.preemption == "swap" and manager.can_swap_out(ids):
            # The whole group at once, so blocks its samples share are copied once and come back shared. A block
            # copied on write in this step has not been copied yet: swap out the block it copies instead.
            out.blocks_to_swap_out += [(pending[g] if g in mine else g, c) for g, c in manager.swap_out(ids)]
            request.status = Status.SWAPPED
            # Victims go newest first; the queue stays oldest first, so the oldest comes back first.
            at = next((i for i, r in enumerate(self.swapped) if r.arrival > request.arrival), len(self.swapped))
            self.swapped.insert(at, request)
            return
        for seq in live:
            manager.free(seq.seq_id)
            seq.num_computed = 0
            seq.table = None
        request.status = Status.WAITING
        self.waiting.appendleft(request)
