"""Static batching, the baseline continuous batching is measured against: a scheduling policy of the same engine.

Before paged caches (and before Orca's iteration-level scheduling, OSDI 2022), a server ran requests in batches:
it reserved for each request one contiguous region of ``max_len`` tokens (it cannot know how long an answer
will be), started a batch with as many requests as such regions fit in its memory, and ran it until its
*last* request finished; only then did the next batch start. A request that finished early kept its region,
idle, while the batch ran on.

:class:`StaticScheduler` is that policy over the same queues, block manager, model runner and sampler as
continuous batching (``LLMEngine(..., batching="static", static_max_len=...)``): only the decision of *who
joins* differs. It admits requests only into an empty batch, at most ``num_blocks // blocks_for(static_max_len)`` of
them (the reservations that fit), and admits nothing while any of them runs. The blocks a finished request
frees are not given to anyone until the batch is over, which is what its idle reservation meant. Since every
reservation fits at its longest, nothing is ever preempted.
"""

from __future__ import annotations

from pagedlab.engine.config import EngineConfig
from pagedlab.engine.scheduler import Scheduler
from pagedlab.paged.manager import BlockManager
from pagedlab.validate import blocks_for


class StaticScheduler(Scheduler):
    """Batches of requests run to their last finish (see the module docstring).

    Args:
        block_manager, config, settings: as for :class:`~pagedlab.engine.scheduler.Scheduler`; it reads
            ``static_max_len`` too (its :attr:`~pagedlab.engine.config.EngineConfig.reserved_len`: tokens reserved
            per request, prompt and output); preemption never happens.

    Attributes:
        reserved: tokens reserved per request.
        batch_size: requests that run at once, ``num_blocks // blocks_for(reserved, block_size)``.

    Raises:
        ValueError: not even one reservation of ``reserved`` tokens fits in the pool.
    """

    ADMIT_NEEDS_BUDGET = False
    """The whole batch joins at once; members the step's budget cannot serve start their prefill in the next."""

    def __init__(self, block_manager: BlockManager, config: EngineConfig | None = None, **settings) -> None:
        super().__init__(block_manager, config, **settings)
        self.reserved = self.config.reserved_len
        if self.reserved is None:
            raise ValueError("static batching needs static_max_len or max_model_len: the tokens each request "
                             "reserves")
        per_request = blocks_for(self.reserved, block_manager.block_size)
        self.batch_size = min(block_manager.num_blocks // per_request, self.max_num_seqs)
        if self.batch_size == 0:
            raise ValueError(f"a reservation of static_max_len={self.reserved} tokens takes {per_request} blocks "
                             f"of {block_manager.block_size}; the pool has only {block_manager.num_blocks}")

    def refusal(self, prompt_len: int, max_tokens: int, n: int) -> str | None:
        """As :meth:`Scheduler.refusal`, and a request must fit its reservation, one sequence (n = 1)."""
        if n != 1:
            return "static batching runs one completion per prompt (n=1)"
        if self.max_len(prompt_len, max_tokens) > self.reserved:
            return (f"prompt ({prompt_len} tokens) + max_tokens ({max_tokens}) exceeds the reservation of "
                    f"static_max_len={self.reserved} tokens")
        return super().refusal(prompt_len, max_tokens, n)

    def _may_admit(self, admitted: int, was_running: bool) -> bool:
        return not was_running and admitted < self.batch_size
