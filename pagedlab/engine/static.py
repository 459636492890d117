"""Static batching, the baseline continuous batching is measured against: a scheduling policy of the same engine.

Before paged caches (and before Orca's iteration-level scheduling, OSDI 2022), a server ran requests in batches:
it reserved for each request one contiguous region of ``max_len`` tokens (it cannot know how long an answer
will be), started a batch with as many requests as such regions fit in its memory, and ran it until its
*last* request finished; only then did the next batch start. A request that finished early kept its region,
idle, while the batch ran on.

:class:`StaticScheduler` is that policy over the same queues, block manager, model runner and sampler as
continuous batching (``LLMEngine(..., batching="static", static_max_len=...)``): only the decision of *who
joins* differs. It admits requests only into an empty batch, at most ``num_blocks // blocks_for(max_len)`` of
them (the reservations that fit), and admits nothing while any of them runs. The blocks a finished request
frees are not given to anyone until the batch is over, which is what its idle reservation meant. Since every
reservation fits at its longest, nothing is ever preempted.
"""

from __future__ import annotations

from pagedlab.engine.scheduler import Scheduler
from pagedlab.paged.manager import BlockManager
from pagedlab.validate import blocks_for


class StaticScheduler(Scheduler):
    """Batches of requests run to their last finish (see the module docstring).

    Args:
        block_manager, max_num_seqs, max_num_batched_tokens, enable_chunked_prefill, max_model_len: as for
            :class:`~pagedlab.engine.scheduler.Scheduler`.
        max_len: tokens reserved per request (prompt and output).

    Attributes:
        batch_size: requests that run at once, ``num_blocks // blocks_for(max_len, block_size)``.

    Raises:
        ValueError: not even one reservation of ``max_len`` tokens fits in the pool.
    """

    ADMIT_NEEDS_BUDGET = False
    """The whole batch joins at once; members the step's budget cannot serve start their prefill in the next."""

    def __init__(self, block_manager: BlockManager, max_num_seqs: int, max_num_batched_tokens: int,
                 enable_chunked_prefill: bool, max_model_len: int | None, max_len: int) -> None:
        super().__init__(block_manager, max_num_seqs, max_num_batched_tokens, "recompute", enable_chunked_prefill,
                         max_model_len)
        self.max_len = max_len
        per_request = blocks_for(max_len, block_manager.block_size)
        self.batch_size = min(block_manager.num_blocks // per_request, max_num_seqs)
        if self.batch_size == 0:
            raise ValueError(f"a reservation of static_max_len={max_len} tokens takes {per_request} blocks of "
                             f"{block_manager.block_size}; the pool has only {block_manager.num_blocks}")

    def refusal(self, prompt_len: int, max_tokens: int, n: int) -> str | None:
        """As :meth:`Scheduler.refusal`, and a request must fit its reservation, one sequence (n = 1)."""
        if n != 1:
            return "static batching runs one completion per prompt (n=1)"
        if prompt_len + max_tokens > self.max_len:
            return (f"prompt ({prompt_len} tokens) + max_tokens ({max_tokens}) exceeds the reservation of "
                    f"static_max_len={self.max_len} tokens")
        return super().refusal(prompt_len, max_tokens, n)

    def _may_admit(self, admitted: int, was_running: bool) -> bool:
        return not was_running and admitted < self.batch_size
