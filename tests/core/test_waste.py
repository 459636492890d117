"""pagedlab.waste: the request sampler and the serving simulation of contiguous against paged allocation."""

import numpy as np
import pytest

from pagedlab import waste
from pagedlab.memory import GiB, OPT_13B
from pagedlab.waste import sample_requests, simulate_serving


# --- requests ------------------------------------------------------------------------------------

def test_sample_requests_is_seeded_clipped_and_near_the_stated_means():
    p, o = sample_requests(20000, max_len=1 << 20, seed=3)
    assert p.dtype == np.int64 and p.shape == o.shape == (20000,)
    assert abs(p.mean() / waste.SHAREGPT_PROMPT_MEAN - 1) < 0.05
    assert abs(o.mean() / waste.SHAREGPT_OUTPUT_MEAN - 1) < 0.05
    p2, o2 = sample_requests(20000, max_len=1 << 20, seed=3)
    assert (p == p2).all() and (o == o2).all()
    p, o = sample_requests(5000, max_len=512, seed=0)
    assert p.min() >= 1 and o.min() >= 1 and (p + o).max() <= 512
    assert (p + o == 512).any()     # the tail is clipped, not dropped


def test_sample_requests_rejects_bad_arguments():
    with pytest.raises(ValueError, match="max_len must be >= 2"):
        sample_requests(3, max_len=1)
    with pytest.raises(ValueError, match="sigma must be positive"):
        sample_requests(3, sigma=0)
    with pytest.raises(ValueError, match="n must be >= 1"):
        sample_requests(0)


# --- simulation: hand-checked cases --------------------------------------------------------------

def test_contiguous_reservation_by_hand():
    # One 8-slot reservation at a time; each request holds 3 tokens at its only measured step and never
    # uses the other 5 slots. Two saturated steps (the third request runs with an empty queue).
    s = simulate_serving(np.array([2, 2, 2]), np.array([1, 1, 1]), budget_tokens=8, block_size=8)
    assert (s.steps, s.finished, s.preemptions) == (2, 3, 0)
    assert s.tokens == pytest.approx(3 / 8) and s.internal == pytest.approx(5 / 8)
    assert s.reserved == 0 and s.free == pytest.approx(0) and s.mean_running == 1
    assert s.recomputed_tokens == 0 and s.prompt_tokens == 6 and s.generated_tokens == 3


def test_paged_preemption_by_hand():
    # Four blocks of 2. Step 1 admits all three requests (one block each); request 0 takes the last free
    # block, request 1 finds none and preempts request 2 (the latest admitted), then takes its block.
    s = simulate_serving(np.array([2, 2, 2]), np.array([1, 1, 1]), budget_tokens=8, block_size=2, watermark=0)
    assert (s.steps, s.finished, s.preemptions) == (1, 3, 1)
    assert s.tokens == pytest.approx(6 / 8) and s.internal == pytest.approx(2 / 8)
    assert s.reserved == 0 and s.free == pytest.approx(0) and s.mean_running == 2
    # Request 2 is prefilled twice: its 2 prompt tokens again on readmission. Re-prefill is counted.
    assert (s.prompt_tokens, s.generated_tokens, s.recomputed_tokens) == (6, 3, 2)
    assert s.recompute_overhead == pytest.approx(2 / 9)


def test_recomputed_tokens_include_what_the_victim_had_generated():
    # Two blocks of 4. Both requests start with 2 tokens and each wants 5 more. They decode together until
    # both blocks are full; then request 0 needs a block, and request 1 (the latest) is preempted holding 4
    # tokens: its 2-token prompt plus 2 generated, all recomputed when it comes back.
    s = simulate_serving(np.array([2, 2]), np.array([5, 5]), budget_tokens=8, block_size=4, watermark=0)
    assert s.preemptions == 1 and s.finished == 2
    assert s.recomputed_tokens == 4
    assert s.generated_tokens == 10


def test_reserved_counts_slots_for_tokens_still_to_come():
    # Budget for one request of final length 4; the second request waits the whole time.
    s = simulate_serving(np.array([2, 2]), np.array([2, 2]), budget_tokens=4, block_size=4)
    # step 1: 3 tokens, 1 reserved; step 2: 4 tokens (then it finishes and the queue empties next step).
    assert s.steps == 2
    assert s.tokens == pytest.approx(7 / 8) and s.reserved == pytest.approx(1 / 8) and s.internal == 0


def test_simulation_rejects_impossible_or_malformed_input():
    with pytest.raises(ValueError, match="could never run"):
        simulate_serving(np.array([10]), np.array([10]), budget_tokens=16, block_size=4)
    with pytest.raises(ValueError, match="1-D arrays of one shape"):
        simulate_serving(np.array([1, 2]), np.array([1]), budget_tokens=16, block_size=4)
    with pytest.raises(ValueError, match="must be positive"):
        simulate_serving(np.array([0]), np.array([1]), budget_tokens=16, block_size=4)
    with pytest.raises(ValueError, match="block_size must be >= 1"):
        simulate_serving(np.array([1]), np.array([1]), budget_tokens=16, block_size=0)
    with pytest.raises(ValueError, match="watermark must be a fraction"):
        simulate_serving(np.array([1]), np.array([1]), budget_tokens=16, block_size=4, watermark=1.5)


# --- simulation: the design targets (Kwon et al. 2023: 60-80% waste contiguous, < 4% paged) ------------

@pytest.fixture(scope="module")
def chat():
    return sample_requests(400, max_len=2048, seed=0)


BUDGET = 12 * GiB // OPT_13B.kv_bytes_per_token()   # OPT-13B on a 40 GB A100 after its 26 GB of weights


def test_contiguous_wastes_most_and_paged_almost_nothing(chat):
    contiguous = simulate_serving(*chat, BUDGET, block_size=2048)
    paged = simulate_serving(*chat, BUDGET, block_size=16)
    for s in (contiguous, paged):
        assert s.tokens + s.reserved + s.internal + s.free == pytest.approx(1)
        assert min(s.tokens, s.reserved, s.internal, s.free) >= 0
        assert s.finished == 400
    assert contiguous.waste >= 0.60
    assert paged.waste < 0.04
    assert contiguous.mean_running == BUDGET // 2048
    assert paged.mean_running > 3 * contiguous.mean_running


def test_waste_grows_with_block_size(chat):
    wastes = [simulate_serving(*chat, BUDGET, block_size=b).waste for b in (4, 16, 64, 256, 1024)]
    assert wastes == sorted(wastes)


# --- simulation: the block accounting agrees with the real manager -----------------------------------

def _replay_with_manager(prompt, output, budget_tokens, block_size, watermark=0.01):
    """The scheduling of simulate_serving, driven through pagedlab.paged.BlockManager instead of counters."""
    from pagedlab.paged import BlockManager, Usage

    num_blocks = budget_tokens // block_size
    m = BlockManager(num_blocks, block_size)
    final, length = [int(x) for x in prompt + output], [int(x) for x in prompt]
    spare = min(int(watermark * num_blocks), num_blocks - -(-max(final) // block_size))
    queue, running = list(range(len(final)))[::-1], []
    steps = preemptions = tokens = held = batch = 0
    while queue or running:
        while queue and -(-length[queue[-1]] // block_size) <= m.num_free_blocks - spare:
            rid = queue.pop()
            m.add(rid, range(length[rid]))
            running.append(rid)
        for rid in list(running):
            while rid in m and not m.can_append(rid):
                victim = running.pop()
                m.free(victim)
                queue.append(victim)
                preemptions += 1
            if rid in m:
                m.append(rid, 0)
                length[rid] += 1
        if queue:
            u = Usage.of(m)
            steps, tokens, held, batch = steps + 1, tokens + u.tokens_stored, held + u.blocks_used * block_size, \
                batch + len(running)
        for rid in [r for r in running if length[r] == final[r]]:
            running.remove(rid)
            m.free(rid)
    return steps, preemptions, tokens / (steps * budget_tokens), held / (steps * budget_tokens), batch / steps


@pytest.mark.parametrize("block_size", [4, 16, 256])
def test_simulation_agrees_with_the_block_manager(block_size):
    prompt, output = sample_requests(60, max_len=256, seed=1)
    s = simulate_serving(prompt, output, budget_tokens=1024, block_size=block_size)
    steps, preemptions, tokens, held, running = _replay_with_manager(prompt, output, 1024, block_size)
    assert (s.steps, s.preemptions, s.finished) == (steps, preemptions, 60)
    assert s.tokens == pytest.approx(tokens)
    assert s.tokens + s.reserved + s.internal == pytest.approx(held)
    assert s.mean_running == pytest.approx(running)
