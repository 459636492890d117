"""vLLM V1's own scheduler tests (``tests/v1/core/test_scheduler.py``), ported to the course's scheduler.

Only the behaviour the course's scheduler is meant to share: admission, the token budget and chunked prefill,
preemption by recomputation, abort and finish freeing blocks, prefix-cache hits, ``max_num_seqs``, the stop
conditions and ``max_model_len``. Each test names the vLLM test it follows; where the course differs on purpose,
its docstring says how and why. Left out: multimodal inputs and the encoder budget, speculative decoding, KV
connectors, priorities, pipelined (asynchronous) steps, statistics, ``reset_prefix_cache``.

The model is a list of tokens: each step, every sequence whose tokens are all computed is handed a token chosen by
the test (vLLM's tests hand ``sampled_token_ids`` to ``update_from_output`` the same way). vLLM's ``create_requests``
makes the prompts ``[i] * num_tokens``, as :func:`requests` does. vLLM's pool keeps block 0 as its null block, so
its tests count one block fewer than they allocate; the course's pool has no null block.
"""

from __future__ import annotations

import pytest

from pagedlab.engine.sampling import SamplingParams
from pagedlab.engine.scheduler import Scheduler, SchedulerOutput
from pagedlab.engine.sequence import Request, Status
from pagedlab.paged import BlockManager

EOS = 50256      # vLLM's tests' EOS_TOKEN_ID


def scheduler(num_blocks: int = 1000, block_size: int = 16, prefix_caching: bool = False, **settings) -> Scheduler:
    """vLLM's ``create_scheduler`` in small: no watermark (vLLM V1 has none)."""
    manager = BlockManager(num_blocks, block_size, enable_prefix_caching=prefix_caching, watermark=0.0)
    return Scheduler(manager, **{"max_num_batched_tokens": 8192, **settings})


def requests(count: int, num_tokens: int = 10, max_tokens: int = 16, first: int = 0, same_prompt: bool = False,
             req_ids: list[str] | None = None, **params) -> list[Request]:
    """vLLM's ``create_requests``: request ``i`` has id ``str(i)`` (or ``req_ids[i - first]``) and the prompt
    ``[i] * num_tokens`` (``[first] * num_tokens`` with ``same_prompt``)."""
    names = req_ids or [str(i) for i in range(first, first + count)]
    return [Request(name, [first if same_prompt else i] * num_tokens,
                    SamplingParams(temperature=0, max_tokens=max_tokens, **params), i, eos_token_id=EOS)
            for i, name in zip(range(first, first + count), names)]


def step(s: Scheduler, tokens: dict[str, int] | None = None, default: int = 1000) -> dict[str, int]:
    """Schedule, "run" (every sequence whose tokens are all computed gets ``tokens[its request id]``, else
    ``default``), record. Returns ``{request id: tokens scheduled}`` (vLLM's ``num_scheduled_tokens``)."""
    out: SchedulerOutput = s.schedule()
    sampled = []
    for i, seq in enumerate(out.seqs):
        token = (tokens or {}).get(seq.request.request_id, default)
        sampled.append([] if not out.completes(i) else [token] * (seq.request.params.n if seq.request.awaiting_fork
                                                                  else 1))
    s.postprocess(out, sampled)
    return {seq.request.request_id: n for seq, n in zip(out.seqs, out.num_new_tokens)}


def ids(queue) -> list[str]:
    return [r.request_id for r in queue]


def assert_empty(s: Scheduler) -> None:
    """vLLM's ``assert_scheduler_empty``: no request queued, no sequence in the manager, every block free (cached
    blocks count as free: they are evicted when needed)."""
    m = s.block_manager
    assert not (s.waiting or s.running or s.swapped)
    assert not m.seq_ids, m.seq_ids
    assert m.allocator.num_free + m.allocator.num_cached == m.num_blocks


def test_add_then_abort_requests():
    """Follows ``test_add_requests``, ``test_finish_request`` and ``test_get_num_unfinished_requests``: added
    requests queue in ``waiting`` in order; aborting each takes it out (vLLM's ``finish_requests(...,
    FINISHED_ABORTED)``); aborting running requests gives their blocks back."""
    s, batch = scheduler(), requests(10)
    for i, request in enumerate(batch):
        s.add(request)
        assert len(s.waiting) == i + 1
    for i, request in enumerate(batch[:5]):
        s.abort(request)
        assert ids(s.waiting) == [r.request_id for r in batch[i + 1:]] and request.status == Status.FINISHED
    step(s)                                              # the other five run, holding blocks
    assert ids(s.running) == ["5", "6", "7", "8", "9"] and s.block_manager.num_free_blocks < 1000
    for request in batch[5:]:
        s.abort(request)
    assert_empty(s)
    assert s.block_manager.num_free_blocks == 1000


@pytest.mark.parametrize("prefix_caching, prompt_logprobs", [(False, None), (True, 5)])
def test_schedule_admits_every_request_whole(prefix_caching, prompt_logprobs):
    """Follows ``test_schedule``: ten requests that fit are all admitted in one step, each with its whole prompt,
    and move from ``waiting`` to ``running`` in order."""
    s, batch = scheduler(prefix_caching=prefix_caching), requests(10, prompt_logprobs=prompt_logprobs)
    for request in batch:
        s.add(request)
    scheduled = step(s)
    assert scheduled == {r.request_id: 10 for r in batch}
    assert not s.waiting and s.running == batch


@pytest.mark.parametrize("chunked", [True, False])
def test_a_long_prompt_is_not_skipped_for_short_ones(chunked):
    """Follows ``test_schedule_order`` (budget 1024, two prompts of 800 tokens, then two of 10): with chunked
    prefill the second long prompt gets the rest of the budget; without it, it waits, and the short prompts behind
    it wait too, although they would fit (first come, first served)."""
    s = scheduler(max_num_batched_tokens=1024, max_num_seqs=3, enable_chunked_prefill=chunked)
    for request in requests(2, num_tokens=800) + requests(2, num_tokens=10, first=2):
        s.add(request)
    assert step(s) == ({"0": 800, "1": 224} if chunked else {"0": 800})
    assert ids(s.waiting) == (["2", "3"] if chunked else ["1", "2", "3"])


def test_chunked_prefills_share_the_budget_in_arrival_order():
    """Follows ``test_schedule_concurrent_partial_requests`` (three prompts of 800 tokens, budget 1024).

    Differs on purpose: vLLM's test sets ``long_prefill_token_threshold=400``, which caps each prompt's chunk so
    that all three start at once (400, 400, 224). The course has no such cap: the budget goes first to decodes, then
    to prompts in arrival order, each taking what is left (800, 224, then 1 + 576 + 447), which is what vLLM does
    without the threshold (its default). Each step stays within the budget and every prompt is computed exactly
    once."""
    s = scheduler(max_num_batched_tokens=1024, enable_chunked_prefill=True)
    for request in requests(3, num_tokens=800):
        s.add(request)
    assert step(s) == {"0": 800, "1": 224}
    assert ids(s.running) == ["0", "1"] and ids(s.waiting) == ["2"]
    assert step(s) == {"0": 1, "1": 576, "2": 447}
    assert step(s) == {"0": 1, "1": 1, "2": 353}
    assert step(s) == {"0": 1, "1": 1, "2": 1}


def test_preemption_by_recomputation_and_resumption():
    """Follows ``test_kv_connector_handles_preemption``, without the connector: blocks of 2 tokens, prompts of 5
    tokens, ``max_tokens=4``. All run; the third token needs a fourth block each, so the newest request is preempted
    (back to ``waiting``, its blocks freed, as vLLM V1 preempts the last of ``running``); the others finish and free
    everything; the preempted one comes back with every token it had and finishes.

    Differs on purpose: vLLM's test has two requests in 6 blocks; here three in 9, so that preempting the newest
    and preempting the oldest differ. vLLM's resumed request schedules 1 token, its prefix found in the connector and
    the prefix cache; here, without prefix caching, recomputation recomputes all 7 tokens (prompt and 2
    generated)."""
    s = scheduler(num_blocks=9, block_size=2)
    batch = requests(3, num_tokens=5, max_tokens=4)
    for request in batch:
        s.add(request)
    assert step(s, default=100) == {"0": 5, "1": 5, "2": 5}
    assert step(s, default=101) == {"0": 1, "1": 1, "2": 1}
    assert s.block_manager.num_free_blocks == 0
    assert step(s, default=102) == {"0": 1, "1": 1}      # "2" was preempted to make room
    newest = batch[2]
    assert newest.status == Status.WAITING and ids(s.running) == ["0", "1"] and ids(s.waiting) == ["2"]
    assert newest.seqs[0].num_computed == 0 and ("2", 0) not in s.block_manager
    assert step(s, default=103) == {"0": 1, "1": 1}
    assert batch[0].status == batch[1].status == Status.FINISHED and not s.running
    assert s.block_manager.num_free_blocks == 9
    assert step(s, default=104) == {"2": 7}              # recomputed: the prompt and its two tokens
    assert step(s, default=105) == {"2": 1}
    assert [r.seqs[0].output_ids for r in batch] == [[100, 101, 102, 103]] * 2 + [[100, 101, 104, 105]]
    assert_empty(s)


def test_a_request_whose_blocks_do_not_fit_waits():
    """Follows ``test_kv_connector_unable_to_allocate``, without the connector: 10 blocks of 4 tokens, two prompts
    of 6 blocks each. One runs, the other waits until the first has finished and given its blocks back, then runs
    alone; every block is free at the end (vLLM's ``NUM_BLOCKS - 1``: its null block)."""
    s = scheduler(num_blocks=10, block_size=4)
    for request in requests(2, num_tokens=24, max_tokens=2):
        s.add(request)
    assert step(s) == {"0": 24}
    assert ids(s.running) == ["0"] and ids(s.waiting) == ["1"]
    while s.running:
        step(s)
    assert s.block_manager.num_free_blocks == 10 and ids(s.waiting) == ["1"]
    assert step(s) == {"1": 24}
    assert ids(s.running) == ["1"] and not s.waiting
    while s.running:
        step(s)
    assert_empty(s)
    assert s.block_manager.num_free_blocks == 10


@pytest.mark.parametrize("params, fed, finish_reason, stop_reason, output", [
    (dict(), [EOS], "stop", None, [EOS]),
    (dict(stop_token_ids=[42, 43]), [10, 42], "stop", 42, [10, 42]),
    (dict(max_tokens=2), [10, 11], "length", None, [10, 11]),
    (dict(ignore_eos=True), [EOS, 10, 11], None, None, [EOS, 10, 11]),
], ids=["eos", "stop token", "max_tokens", "ignore_eos"])
def test_stop_conditions(params, fed, finish_reason, stop_reason, output):
    """Follows ``test_stop_via_update_from_output``'s four cases (EOS, a stop token, ``max_tokens``, ``ignore_eos``):
    the stopped request leaves ``running`` with its blocks freed, the other one goes on.

    Differs on purpose: vLLM's test feeds several tokens in one step (speculative decoding, which the course does
    not have); here they come one step at a time, with the same outcome."""
    s = scheduler()
    (target,), (other,) = requests(1, **{"max_tokens": 10, **params}), requests(1, max_tokens=10, first=1)
    s.add(target)
    s.add(other)
    for token in fed:
        step(s, {"0": token}, default=13)
    seq = target.seqs[0]
    assert (seq.finish_reason, seq.stop_reason, seq.output_ids) == (finish_reason, stop_reason, output)
    assert ids(s.running) == (["0", "1"] if finish_reason is None else ["1"])
    assert (("0", 0) in s.block_manager) == (finish_reason is None)
    assert other.seqs[0].output_ids == [13] * len(fed) and other.seqs[0].finish_reason is None


@pytest.mark.parametrize("stop", [dict(), dict(stop_token_ids=[42])], ids=["eos", "stop token"])
def test_min_tokens_hold_back_eos_and_stop_tokens(stop):
    """Follows ``test_check_stop_min_tokens``: with ``min_tokens=5``, EOS (or a stop token) among the first 5
    output tokens does not stop the request; once 5 tokens are out, it does (``stop_reason`` the stop token)."""
    token = stop.get("stop_token_ids", [EOS])[0]
    s = scheduler()
    (request,) = requests(1, max_tokens=20, min_tokens=5, **stop)
    s.add(request)
    for t in [10, 11, token]:
        step(s, {"0": t})
    assert request.seqs[0].finish_reason is None and request.status == Status.RUNNING
    for t in [12, 13, token]:
        step(s, {"0": t})
    seq = request.seqs[0]
    assert seq.output_ids == [10, 11, token, 12, 13, token]
    assert (seq.finish_reason, seq.stop_reason) == ("stop", token if stop else None)
    assert_empty(s)


def test_max_model_len_ends_a_request_with_length():
    """Follows the ``max_model_len`` rule of ``check_stop`` (``vllm/v1/core/sched/utils.py``), which
    ``test_check_stop_min_tokens`` calls with ``max_model_len=100``: a prompt plus ``max_tokens`` past
    ``max_model_len`` is admitted and ends at ``max_model_len`` tokens with ``"length"``; a prompt longer than
    ``max_model_len`` is refused when added (vLLM's ``InputProcessor`` refuses it too), naming the setting."""
    s = scheduler(max_model_len=8)
    (request,) = requests(1, num_tokens=5, max_tokens=10)
    s.add(request)
    while s.running or s.waiting:
        step(s)
    seq = request.seqs[0]
    assert len(seq.token_ids) == 8 and seq.finish_reason == "length" and seq.output_ids == [1000] * 3
    assert_empty(s)
    with pytest.raises(ValueError, match=r"'0'.*longer than max_model_len=8"):
        s.add(requests(1, num_tokens=9)[0])
    assert not s.waiting


def test_max_num_seqs_limits_admission():
    """Follows ``test_priority_scheduling_with_limited_slots``, first come first served (the course has no
    priorities): with ``max_num_seqs=2`` only the first two requests are admitted, the others wait in order and are
    admitted as the first ones finish.

    Differs on purpose: the course counts sequences, so a request with ``n=2`` takes both places (vLLM V1 splits it
    into two child requests that count one each: the same count)."""
    s = scheduler(max_num_seqs=2, max_num_batched_tokens=1000)
    for request in requests(4, max_tokens=1):
        s.add(request)
    assert step(s) == {"0": 10, "1": 10}
    assert ids(s.waiting) == ["2", "3"]
    assert step(s) == {"2": 10, "3": 10}
    pair, single = requests(1, n=2, first=4) + requests(1, first=5)
    s.add(pair)
    s.add(single)
    assert step(s) == {"4": 10} and ids(s.waiting) == ["5"]


def test_a_prefix_cache_hit_skips_the_cached_blocks():
    """Follows ``test_prefix_cache_stats_counted_once_for_retried_then_scheduled_request`` (and the local hit of
    ``test_kv_connector_basic``): a request of 2 blocks runs to the end; a request of 3 blocks with the same first
    2 finds them in the prefix cache, computes only its last block, and reports ``2 * block_size`` cached tokens."""
    s = scheduler(prefix_caching=True)
    (seed,) = requests(1, num_tokens=32, max_tokens=2, same_prompt=True)
    s.add(seed)
    while s.running or s.waiting:
        step(s)
    (retried,) = requests(1, num_tokens=48, max_tokens=1, same_prompt=True, req_ids=["retried"])
    s.add(retried)
    assert step(s) == {"retried": 16}
    assert retried.num_cached_tokens == 32
    assert_empty(s)


def test_no_block_leaks_once_every_request_finished():
    """Follows ``test_memory_leak``: five requests (10 tokens, ``max_tokens=10``, prefix caching on) added one step
    apart, run to the end; the scheduler and the pool are empty again."""
    s = scheduler(prefix_caching=True)
    for request in requests(5, max_tokens=10):
        s.add(request)
        step(s)
    while s.running or s.waiting:
        step(s)
    assert_empty(s)
