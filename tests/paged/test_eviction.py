"""Eviction policies: the seam the prefix cache gives up cached-free blocks through, LRU and least-often-hit."""

import pytest

from pagedlab.paged import LRU, BlockManager, EvictionPolicy, LeastOftenHit

SYSTEM = [7, 7, 7, 7]          # one full block (block_size 4) that every chat request starts with


@pytest.mark.parametrize("policy", [LRU, LeastOftenHit])
def test_a_policy_pops_in_the_order_it_shows(policy):
    p = policy()
    for b in (5, 3, 8, 1):
        p.park(b)
    p.unpark(3)
    p.park(3)                  # LRU: now the most recent; least-often-hit: hit once, so last
    assert len(p) == 4 and 3 in p and 9 not in p
    order = p.order()
    assert order[-1] == 3, order
    assert [p.pop_victim() for _ in range(4)] == order
    with pytest.raises(LookupError):
        p.pop_victim()
    with pytest.raises(KeyError):
        p.unpark(5)


def test_least_often_hit_breaks_ties_by_age_and_forgets_evicted_blocks():
    p = LeastOftenHit()
    for b in (1, 2, 3):
        p.park(b)
    for _ in range(2):
        p.unpark(1)
        p.park(1)
    assert p.hits(1) == 2 and p.order() == [2, 3, 1]
    assert p.pop_victim() == 2 and p.hits(2) == 0


@pytest.mark.parametrize("policy, kept", [(LRU, False), (LeastOftenHit, True)], ids=["LRU", "least-often-hit"])
def test_least_often_hit_keeps_the_shared_system_prompt_that_lru_gives_up(policy, kept):
    m = BlockManager(num_blocks=4, block_size=4, enable_prefix_caching=True, eviction_policy=policy())
    for i in range(3):
        m.add(f"chat{i}", SYSTEM + [i])         # the second and third requests hit the system block
        system = m.table(f"chat{i}").block_ids[0]
        m.free(f"chat{i}")
    m.add("a", [1, 2, 3, 4])                    # two one-off prompts, parked after the system block
    m.add("b", [5, 6, 7, 8])
    m.free("a")
    m.free("b")
    assert (m.prefix_cache.parked()[0] == system) is not kept, m.prefix_cache.parked()
    m.add("c", [9, 9, 9, 9, 9])                 # two blocks: the free list has one, one cached-free block goes
    evicted = [b for e in m.events if e.kind == "evict" for b in e.blocks]
    assert len(evicted) == 1 and (system not in evicted) is kept, f"evicted {evicted}, system prompt in {system}"
    m.add("chat3", SYSTEM + [3])
    assert m.num_cached_tokens("chat3") == (4 if kept else 0)


def test_the_manager_refuses_a_policy_that_is_not_one():
    with pytest.raises(TypeError, match="eviction_policy"):
        BlockManager(4, 4, enable_prefix_caching=True, eviction_policy="lru")
    assert isinstance(BlockManager(4, 4, enable_prefix_caching=True).prefix_cache.policy, LRU)
    assert issubclass(LeastOftenHit, EvictionPolicy)
