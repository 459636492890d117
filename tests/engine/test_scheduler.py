"""The scheduler alone, without torch: driven step by step by a fake model runner that keeps a fake KV cache.

The fake runner does what the real one does with the step's batch, on token ids instead of tensors: it performs
the K/V moves in their order (swap out, swap in, copy), writes each new token into its slot, and then "attends":
reads every sequence's context back through its block table. Its next token is a hash of that context, so any
slot the scheduler or the block manager got wrong (a block freed too early, a copy-on-write missed, a swap that
lost a block, a recomputation that skipped a token) changes what is generated. Each run under memory pressure
(preemption by recomputation or by swapping, chunked prefill, forks, prefix caching) must generate exactly what
a run with room to spare generates, and give every block back.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass

import pytest

from pagedlab.engine.scheduler import Scheduler, SchedulerOutput
from pagedlab.engine.sequence import Request
from pagedlab.paged import BlockManager
from pagedlab.validate import blocks_for

VOCAB, EOS = 50, 0


@dataclass
class Params:
    """What the scheduler reads of SamplingParams (which lives with sampling, and sampling needs torch)."""

    n: int = 1
    max_tokens: int = 8
    greedy: bool = True
    stop: tuple = ()
    stop_token_ids: tuple = ()
    ignore_eos: bool = False


class FakeRunner:
    """A model runner over a fake KV cache: ``{slot: token id}`` for the GPU pool and for the CPU pool."""

    def __init__(self, block_size: int) -> None:
        self.block_size = block_size
        self.gpu: dict[int, int] = {}
        self.cpu: dict[int, int] = {}

    def _copy(self, src: dict[int, int], src_block: int, dst: dict[int, int], dst_block: int) -> None:
        for offset in range(self.block_size):
            s, d = src_block * self.block_size + offset, dst_block * self.block_size + offset
            if s in src:
                dst[d] = src[s]
            else:
                dst.pop(d, None)

    def execute(self, out: SchedulerOutput) -> list[list[int]]:
        for gpu_block, cpu_block in out.blocks_to_swap_out:
            self._copy(self.gpu, gpu_block, self.cpu, cpu_block)
        for cpu_block, gpu_block in out.blocks_to_swap_in:
            self._copy(self.cpu, cpu_block, self.gpu, gpu_block)
        for src, dst in out.blocks_to_copy:
            self._copy(self.gpu, src, self.gpu, dst)
        for seq, n in zip(out.seqs, out.num_new_tokens):       # every write precedes every read, as in a layer
            for pos in range(seq.num_computed, seq.num_computed + n):
                self.gpu[seq.table.slot(pos)] = seq.token_ids[pos]
        sampled = []
        for i, (seq, n) in enumerate(zip(out.seqs, out.num_new_tokens)):
            end = seq.num_computed + n
            context = [self.gpu.get(seq.table.slot(pos)) for pos in range(end)]
            assert context == seq.token_ids[:end], f"{seq} reads {context} through its block table"
            if not out.completes(i):
                sampled.append([])
                continue
            request = seq.request
            forks = request.params.n if len(request.seqs) < request.params.n else 1
            sampled.append([self.next_token(context, seq.index + j) for j in range(forks)])
        return sampled

    @staticmethod
    def next_token(context: list[int], index: int) -> int:
        """A token that depends on the whole context (and on the completion index, so forks differ)."""
        return zlib.crc32(bytes(str((index, context)), "ascii")) % VOCAB


def run(prompts: list[list[int]], params: Params, *, num_blocks: int, block_size: int = 4, max_num_seqs: int = 8,
        max_num_batched_tokens: int = 64, preemption: str = "recompute", num_cpu_blocks: int = 0,
        chunked: bool = False, prefix_caching: bool = False) -> tuple[dict, dict]:
    """Serve ``prompts`` to the end; return ``({request id: [each completion's tokens]}, what happened)``."""
    manager = BlockManager(num_blocks, block_size, num_cpu_blocks=num_cpu_blocks,
                           enable_prefix_caching=prefix_caching, watermark=0.0)
    scheduler = Scheduler(manager, max_num_seqs=max_num_seqs, max_num_batched_tokens=max_num_batched_tokens,
                          preemption=preemption, enable_chunked_prefill=chunked)
    requests = [Request(f"r{i}", prompt, params, i, eos_token_id=EOS) for i, prompt in enumerate(prompts)]
    for request in requests:
        scheduler.add(request)
    runner, seen = FakeRunner(block_size), {"preemptions": 0, "swaps": 0, "copies": 0, "cached": 0, "steps": 0}
    while scheduler.waiting or scheduler.running or scheduler.swapped:
        out = scheduler.schedule()
        assert out.seqs, "a step with work left scheduled nothing: the scheduler is stuck"
        assert out.num_batched_tokens <= max_num_batched_tokens and len(out.seqs) <= max_num_seqs
        assert len({s.seq_id for s in out.seqs}) == len(out.seqs), "a sequence is twice in one batch"
        assert not (out.blocks_to_swap_out and out.blocks_to_swap_in), "a step swaps both ways"
        seen["preemptions"] += out.num_preemptions
        seen["swaps"] += len(out.blocks_to_swap_out)
        seen["copies"] += len(out.blocks_to_copy)
        seen["cached"] += out.num_cached_tokens
        seen["steps"] += 1
        scheduler.postprocess(out, runner.execute(out))
        assert seen["steps"] < 2000, "no end in sight"
    assert manager.num_free_blocks == num_blocks, "blocks were not given back"
    return {r.request_id: [s.output_ids for s in sorted(r.seqs, key=lambda s: s.index)] for r in requests}, seen


def prompts(count: int, seed: int = 0, shared: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    prefix = [rng.randrange(1, VOCAB) for _ in range(shared)]
    return [prefix + [rng.randrange(1, VOCAB) for _ in range(rng.randrange(1, 14))] for _ in range(count)]


@pytest.fixture(scope="module")
def roomy():
    """What 12 requests generate with a pool that never runs short (the reference every squeezed run must meet)."""
    return run(prompts(12), Params(max_tokens=10), num_blocks=200)[0]


def test_fake_runner_sees_a_missing_token():
    # The fake runner's read-back is what catches the scheduler's mistakes: it must fail on a slot never written.
    runner = FakeRunner(block_size=4)
    manager = BlockManager(4, 4, watermark=0.0)
    request = Request("r", [5, 6, 7], Params(), 0)
    scheduler = Scheduler(manager, max_num_seqs=1, max_num_batched_tokens=8)
    scheduler.add(request)
    out = scheduler.schedule()
    out.num_new_tokens[0] -= 1                         # a batch that skips the prompt's last token
    out.seqs[0].num_computed += 1
    with pytest.raises(AssertionError, match="reads"):
        runner.execute(out)


def test_a_roomy_run_never_preempts():
    outputs, seen = run(prompts(12), Params(max_tokens=10), num_blocks=200)
    assert seen["preemptions"] == 0 and all(len(o[0]) >= 1 for o in outputs.values())


@pytest.mark.parametrize("preemption, num_cpu_blocks", [("recompute", 0), ("swap", 64)])
def test_preemption_changes_nothing_that_is_generated(roomy, preemption, num_cpu_blocks):
    outputs, seen = run(prompts(12), Params(max_tokens=10), num_blocks=12, preemption=preemption,
                        num_cpu_blocks=num_cpu_blocks)
    assert seen["preemptions"] > 0, "the pool was never short: the test proves nothing"
    if preemption == "swap":
        assert seen["swaps"] > 0
    assert outputs == roomy


def test_chunked_prefill_within_a_small_budget_changes_nothing(roomy):
    outputs, seen = run(prompts(12), Params(max_tokens=10), num_blocks=200, max_num_batched_tokens=5,
                        max_num_seqs=4, chunked=True)
    assert outputs == roomy


def test_forks_copy_on_write_and_prefix_caching_under_pressure():
    params, batch = Params(n=3, max_tokens=12), prompts(10, seed=1, shared=9)
    # The smallest pool the engine admits these requests into: each request's n sequences at their longest, unshared
    # (what a request preempted by recomputation after its fork needs to come back).
    smallest = max(params.n * blocks_for(len(p) + params.max_tokens, 4) for p in batch)
    squeezed, seen = run(batch, params, num_blocks=smallest, prefix_caching=True)
    reference, _ = run(batch, params, num_blocks=400)
    assert seen["copies"] > 0 and seen["cached"] > 0 and seen["preemptions"] > 0, seen
    assert squeezed == reference
    assert all(len({tuple(c) for c in completions}) > 1 for completions in squeezed.values()), "forks all alike"
