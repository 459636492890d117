"""The engine generates exactly what Hugging Face's GPT-2 generates with the same weights, whatever the pool does.

Greedy tokens are compared with ``GPT2LMHeadModel.generate(do_sample=False)``, one prompt at a time (no padding),
fp32 on the CPU, for a batch of prompts of different lengths under every configuration that changes the
engine's path: a pool large enough, one so small that requests are preempted (recompute, swap), prefix caching
on and off, n = 3. After each run every block is free again. A tiny model keeps the Triton interpreter fast.
"""

import pagedlab.kernels  # noqa: F401  (first: decides Triton's mode before transformers imports triton)

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.utils import logging as hf_logging

import functools

from pagedlab.engine import LLMEngine as _LLMEngine
from pagedlab.engine import SamplingParams
from pagedlab.models.tiny_gpt import GPTConfig, TinyGPT
from pagedlab.paged import Usage

# The course's Triton kernels (in the interpreter on a CPU), not the "auto" choice: these tests check them too.
LLMEngine = functools.partial(_LLMEngine, attention_backend="triton")

hf_logging.set_verbosity_error()
MAX_TOKENS = 6
BLOCK_SIZE = 4
PROMPT_LENS = (3, 8, 9, 13)     # shorter than, exactly, one past and well past a block boundary


@pytest.fixture(scope="module")
def hf_model():
    torch.manual_seed(0)
    # A wide initialisation, so greedy decoding wanders over the vocabulary instead of repeating one token.
    config = GPT2Config(vocab_size=128, n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=0,
                        eos_token_id=0, initializer_range=0.5)
    return GPT2LMHeadModel(config).eval()


@pytest.fixture(scope="module")
def model(hf_model):
    return TinyGPT.from_gpt2(hf_model)


@pytest.fixture(scope="module")
def prompts():
    g = torch.Generator().manual_seed(1)
    return [torch.randint(0, 128, (n,), generator=g).tolist() for n in PROMPT_LENS]


def hf_greedy(hf_model, prompt, max_tokens=MAX_TOKENS):
    ids = torch.tensor([prompt])
    # An explicit mask: generate would otherwise take every token equal to pad_token_id for padding.
    with torch.no_grad():
        out = hf_model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                max_new_tokens=max_tokens, pad_token_id=0, eos_token_id=None)
    return out[0, len(prompt):].tolist()


@pytest.fixture(scope="module")
def reference(hf_model, prompts):
    ref = [hf_greedy(hf_model, p) for p in prompts]
    # The comparison means something only if the tokens vary.
    assert len({t for r in ref for t in r}) >= 10, ref
    return ref


def assert_no_leak(engine):
    m = engine.block_manager
    assert not m.seq_ids, f"sequences left in the manager: {m.seq_ids}"
    assert m.allocator.num_free + m.allocator.num_cached == m.num_blocks, "GPU blocks leaked"
    assert m.cpu_allocator is None or m.cpu_allocator.num_free == m.cpu_allocator.num_blocks, "CPU blocks leaked"
    assert not engine.has_unfinished_requests()


def test_model_logits_match_hugging_face(hf_model, model):
    x = torch.randint(0, 128, (3, 20), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        ours, theirs = model(x), hf_model(x).logits
    assert ours.shape == theirs.shape
    assert torch.allclose(ours, theirs, atol=1e-5, rtol=1e-5), (ours - theirs).abs().max()


CONFIGS = {
    "large pool": dict(num_blocks=64),
    "small pool, recompute": dict(num_blocks=8, watermark=0.0),
    "small pool, swap": dict(num_blocks=8, num_cpu_blocks=16, preemption="swap", watermark=0.0),
    "prefix caching": dict(num_blocks=64, enable_prefix_caching=True),
    "prefix caching, small pool": dict(num_blocks=8, enable_prefix_caching=True, watermark=0.0),
}
# Chunked prefill under the same stress, with a budget of 5 tokens a step: every prompt but the shortest is cut,
# chunks end inside and at block boundaries, and they share steps with decodes. Fewer sequences run at once, so
# the small pool is a block smaller, to preempt again.
CHUNKED = dict(enable_chunked_prefill=True, max_num_batched_tokens=5, max_num_seqs=4)
CONFIGS.update({f"chunked prefill, {name}": dict(config, **CHUNKED, **({"num_blocks": 7} if "small" in name else {}))
                for name, config in list(CONFIGS.items())})


@pytest.mark.parametrize("config", CONFIGS)
def test_greedy_matches_hugging_face(model, prompts, reference, config):
    engine = LLMEngine(model, block_size=BLOCK_SIZE, **CONFIGS[config])
    outputs = engine.generate(prompts, SamplingParams(temperature=0, max_tokens=MAX_TOKENS), use_tqdm=False)
    got = [o.outputs[0].token_ids for o in outputs]
    assert got == reference
    assert all(o.finished for o in outputs)
    if "chunked" in config:
        assert max(m.num_prefill_tokens + m.num_decode_tokens for m in engine.metrics) <= 5
        chunks = [n for m in engine.metrics for _, n in m.batch]
        assert max(chunks) < max(PROMPT_LENS) and any(1 < n < 5 for n in chunks), "prompts should be cut into chunks"
    preempted = sum(m.num_preemptions for m in engine.metrics)
    if "small pool" in config:
        assert preempted > 0, "the small pool should force preemptions"
    if "swap" in config:
        assert max(m.num_swapped for m in engine.metrics) > 0, "nothing was swapped"
    assert_no_leak(engine)


def test_prefix_caching_skips_cached_prefill_and_recomputes_the_last_token(model, hf_model):
    g = torch.Generator().manual_seed(3)
    system = torch.randint(0, 128, (2 * BLOCK_SIZE,), generator=g).tolist()
    # The system prompt alone is two full blocks: its second run finds every full block cached.
    prompts = [system, system + [5, 6, 7], system + [9], system]
    reference = [hf_greedy(hf_model, p) for p in prompts]
    engine = LLMEngine(model, num_blocks=32, block_size=BLOCK_SIZE, enable_prefix_caching=True, max_num_seqs=1)
    outputs = engine.generate(prompts, SamplingParams(temperature=0, max_tokens=MAX_TOKENS), use_tqdm=False)
    assert [o.outputs[0].token_ids for o in outputs] == reference
    cached = [o.num_cached_tokens for o in outputs]
    assert cached[0] == 0 and all(c == 2 * BLOCK_SIZE for c in cached[1:3]), cached
    # Fully cached: the hit stops a block short, so the last token is computed and has logits to sample from.
    assert 0 < cached[3] < len(system), cached
    prefill = sum(m.num_prefill_tokens for m in engine.metrics)
    assert prefill == sum(len(p) for p in prompts) - sum(cached)
    assert_no_leak(engine)


def test_n3_completions_equal_the_greedy_one(model, prompts, reference):
    engine = LLMEngine(model, num_blocks=64, block_size=BLOCK_SIZE)
    outputs = engine.generate(prompts, SamplingParams(n=3, temperature=0, max_tokens=MAX_TOKENS), use_tqdm=False)
    for out, ref in zip(outputs, reference):
        assert [c.index for c in out.outputs] == [0, 1, 2]
        assert [c.token_ids for c in out.outputs] == [ref] * 3
    assert_no_leak(engine)


def test_n3_under_preemption(model, prompts, reference):
    # Two requests of 3 samples, 4 blocks each at the end: 12 blocks hold one request, not both.
    for kwargs in (dict(), dict(num_cpu_blocks=16, preemption="swap"), CHUNKED,
                   dict(CHUNKED, num_cpu_blocks=16, preemption="swap")):
        engine = LLMEngine(model, num_blocks=12, block_size=BLOCK_SIZE, watermark=0.0, **kwargs)
        outputs = engine.generate(prompts[1:3], SamplingParams(n=3, temperature=0, max_tokens=MAX_TOKENS), use_tqdm=False)
        assert [[c.token_ids for c in o.outputs] for o in outputs] == [[r] * 3 for r in reference[1:3]]
        assert sum(m.num_preemptions for m in engine.metrics) > 0
        assert_no_leak(engine)


def test_fork_shares_the_prompt_blocks(model, prompts):
    engine = LLMEngine(model, num_blocks=64, block_size=BLOCK_SIZE)
    engine.add_request(prompts[3], SamplingParams(n=3, temperature=0, max_tokens=3))
    engine.step()                       # prefill, sample 3 first tokens, fork
    usage = Usage.of(engine.block_manager)
    assert usage.logical_blocks == 3 * 4 and usage.blocks_used == 4   # 13 tokens = 4 blocks, shared 3 ways
    engine.step()                       # two copy-on-write copies of the partial block; the last owner writes in place
    assert Usage.of(engine.block_manager).blocks_used == 4 + 2
    engine.step()
    assert not engine.has_unfinished_requests()
    assert_no_leak(engine)


def test_seeded_sampling_does_not_depend_on_batch_or_preemption(model, prompts):
    params = SamplingParams(n=2, temperature=1.0, max_tokens=MAX_TOKENS, seed=7)
    alone = LLMEngine(model, num_blocks=64, block_size=BLOCK_SIZE).generate([prompts[2]], params, use_tqdm=False)
    crowded = LLMEngine(model, num_blocks=8, block_size=BLOCK_SIZE, watermark=0.0)
    together = crowded.generate(prompts[1:3], params, use_tqdm=False)
    assert sum(m.num_preemptions for m in crowded.metrics) > 0
    assert [c.token_ids for c in together[1].outputs] == [c.token_ids for c in alone[0].outputs]
    assert together[1].outputs[0].token_ids != together[1].outputs[1].token_ids, "the completions should differ"
    other_seed = LLMEngine(model, num_blocks=64, block_size=BLOCK_SIZE).generate(
        [prompts[2]], SamplingParams(n=2, temperature=1.0, max_tokens=MAX_TOKENS, seed=8), use_tqdm=False)
    assert [c.token_ids for c in other_seed[0].outputs] != [c.token_ids for c in alone[0].outputs]


def test_streaming_steps_and_metrics(model, prompts, reference):
    engine = LLMEngine(model, num_blocks=64, block_size=BLOCK_SIZE)
    rid = engine.add_request(prompts[0], SamplingParams(temperature=0, max_tokens=MAX_TOKENS))
    first = engine.step()
    assert [o.request_id for o in first] == [rid] and len(first[0].outputs[0].token_ids) == 1
    m = engine.metrics[0]
    assert (m.num_running, m.num_waiting, m.num_prefill_tokens, m.num_decode_tokens) == (1, 0, len(prompts[0]), 0)
    assert m.blocks_used == 1 and m.blocks_free == 63
    rid2 = engine.add_request(prompts[1], SamplingParams(temperature=0, max_tokens=MAX_TOKENS))
    engine.step()                       # one decode and one prefill in the same batch
    m = engine.metrics[1]
    assert (m.num_running_seqs, m.num_prefill_tokens, m.num_decode_tokens) == (2, len(prompts[1]), 1)
    done = {}
    while engine.has_unfinished_requests():
        done.update({o.request_id: o for o in engine.step() if o.finished})
    assert done[rid].outputs[0].token_ids == reference[0] and done[rid2].outputs[0].token_ids == reference[1]
    assert_no_leak(engine)


def test_a_raising_subscriber_stops_no_other_subscriber(model, prompts):
    # The manager's rule for its event log, shared by the engine: everyone is told, then the first error is raised.
    engine = LLMEngine(model, num_blocks=64, block_size=BLOCK_SIZE)
    seen = []

    def broken(m):
        raise RuntimeError("a widget broke")

    engine.subscribe(broken)
    engine.subscribe(lambda m: seen.append(m.step))
    engine.add_request(prompts[0], SamplingParams(temperature=0, max_tokens=2))
    with pytest.raises(RuntimeError, match="a widget broke"):
        engine.step()
    assert seen == [0] and len(engine.metrics) == 1, "the step is recorded and every subscriber told before raising"
    with pytest.raises(TypeError, match="callable"):
        engine.subscribe("not a function")


@pytest.mark.parametrize("kwargs, words", [
    (dict(prompt=[]), "empty"),
    (dict(prompt=[1, 200]), "outside"),
    (dict(prompt=[1] * 65, params=SamplingParams(temperature=0, max_tokens=1)), "longer than max_model_len"),
    (dict(prompt=[1] * 40, params=SamplingParams(temperature=0, max_tokens=1)), "max_num_batched_tokens"),
    (dict(prompt=[1] * 20, params=SamplingParams(temperature=0, max_tokens=14)), "enable_chunked_prefill"),
    (dict(prompt=[1] * 20, params=SamplingParams(n=4, temperature=0, max_tokens=10)), "could never finish"),
    (dict(prompt=[1], params=SamplingParams(n=9)), "max_num_seqs"),
])
def test_add_request_refuses_what_could_never_run(model, kwargs, words):
    engine = LLMEngine(model, num_blocks=16, block_size=BLOCK_SIZE, max_num_seqs=8, max_num_batched_tokens=32,
                       enable_chunked_prefill=False)
    with pytest.raises(ValueError, match=words):
        engine.add_request(**kwargs)
    assert not engine.has_unfinished_requests()


def test_engine_arguments_are_checked(model):
    with pytest.raises(ValueError, match="num_cpu_blocks"):
        LLMEngine(model, num_blocks=8, preemption="swap")
    with pytest.raises(ValueError, match="preemption"):
        LLMEngine(model, num_blocks=8, preemption="evict")
    with pytest.raises(ValueError, match="temperature"):
        SamplingParams(temperature=-1.0)
    # The wrong kind of thing is a TypeError, a wrong value a ValueError (pagedlab.validate's rule).
    with pytest.raises(TypeError, match="SamplingParams.max_tokens must be an int, got float"):
        SamplingParams(temperature=0, max_tokens=2.5)
    with pytest.raises(TypeError, match="SamplingParams.top_p must be a number"):
        SamplingParams(top_p=True)
    with pytest.raises(TypeError, match="SamplingParams.temperature must be a number"):
        SamplingParams(temperature="0.7")
    with pytest.raises(ValueError, match="SamplingParams.top_k must be >= -1"):
        SamplingParams(top_k=-2)
    with pytest.raises(ValueError, match="n_heads"):
        GPTConfig(d_model=30, n_heads=4)
    with pytest.raises(TypeError, match="n_layers must be an int"):
        GPTConfig(n_layers=2.0)
    with pytest.raises(ValueError, match="max_num_seqs"):      # vLLM refuses it too
        LLMEngine(model, num_blocks=8, max_num_seqs=16, max_num_batched_tokens=8)
    with pytest.raises(TypeError, match="enable_chunked_prefill"):
        LLMEngine(model, num_blocks=8, enable_chunked_prefill="yes")


def test_the_newest_request_is_preempted(model):
    # Four 4-token prompts fill 4 of 5 blocks; at the next step each needs a second block, and one is free: request 0
    # (oldest) takes it; 1 cannot grow, so 3 (newest) is preempted and 1 grows into its block; then 2 cannot grow
    # and is itself the newest left, so it goes too. Both wait, oldest first, at the front of the queue.
    engine = LLMEngine(model, num_blocks=5, block_size=BLOCK_SIZE, watermark=0.0)
    for i in range(4):
        engine.add_request([1 + i, 2, 3, 4], SamplingParams(temperature=0, max_tokens=3))
    engine.step()
    engine.step()
    assert engine.metrics[-1].num_preemptions == 2
    assert [r.request_id for r in engine.scheduler.running] == ["0", "1"]
    assert [r.request_id for r in engine.scheduler.waiting] == ["2", "3"]
    assert (2, 0) not in engine.block_manager and (3, 0) not in engine.block_manager, "preempted blocks must be freed"
    while engine.has_unfinished_requests():
        engine.step()
    assert_no_leak(engine)


def test_a_big_swapped_request_comes_back_when_alone(model):
    # 20 blocks of 2 tokens, a watermark of 2. A (oldest, 8 tokens at most) and B (37 tokens at most, 18 blocks) run
    # together until A needs a block while B holds 18: B is swapped out with 18 blocks. Swapping in with headroom
    # would need 18 + 1 + 2 = 21 blocks, more than the pool; alone, B needs none and must come back to finish.
    engine = LLMEngine(model, num_blocks=20, block_size=2, num_cpu_blocks=20, preemption="swap", watermark=0.1)
    engine.add_request([7], SamplingParams(temperature=0, max_tokens=7))
    engine.add_request(list(range(1, 33)), SamplingParams(temperature=0, max_tokens=5))
    for _ in range(40):
        if not engine.has_unfinished_requests():
            break
        engine.step()
    assert max(m.num_swapped for m in engine.metrics) == 1
    assert_no_leak(engine)


def test_static_batching_is_a_policy_that_reserves_max_len_and_matches(model, prompts, reference):
    static = LLMEngine(model, num_blocks=11, block_size=BLOCK_SIZE, batching="static", static_max_len=20)
    assert static.scheduler.batch_size == 2        # 20 tokens = 5 blocks of 4 per request, 11 blocks
    outputs = static.generate(prompts, SamplingParams(temperature=0, max_tokens=MAX_TOKENS), use_tqdm=False)
    assert [o.outputs[0].token_ids for o in outputs] == reference
    # Two batches; each runs as long as its longest request: one step per token of the longest.
    assert len(static.metrics) == 2 * MAX_TOKENS
    assert [m.num_running_seqs for m in static.metrics] == [2] * 2 * MAX_TOKENS
    with pytest.raises(ValueError, match="static_max_len"):
        static.generate([[1] * 16], SamplingParams(temperature=0, max_tokens=5), use_tqdm=False)
    with pytest.raises(ValueError, match="n=1"):
        static.generate([[1]], SamplingParams(n=2, temperature=0, max_tokens=2), use_tqdm=False)
    with pytest.raises(ValueError, match="reservation"):
        LLMEngine(model, num_blocks=4, block_size=BLOCK_SIZE, batching="static", static_max_len=20)
    assert_no_leak(static)


def test_static_comparison_counts_do_not_depend_on_the_attention_backend(model, prompts):
    """compare_with_static passes its backend to both engines; notebook 10 counts steps with "auto" on a CPU."""
    from pagedlab.engine.bench import compare_with_static

    params = [SamplingParams(temperature=0, max_tokens=n) for n in (2, 5, 3, 6)][:len(prompts)]
    runs = {b: compare_with_static(model, prompts, params, num_blocks=11, block_size=BLOCK_SIZE, max_len=20,
                                   attention_backend=b) for b in ("triton", "torch")}
    for policy in ("continuous", "static"):
        triton_run, torch_run = runs["triton"][policy], runs["torch"][policy]
        assert (torch_run.steps, torch_run.max_concurrency, torch_run.computed_tokens, torch_run.token_ids) == \
               (triton_run.steps, triton_run.max_concurrency, triton_run.computed_tokens, triton_run.token_ids)
    assert runs["torch"]["continuous"].steps < runs["torch"]["static"].steps
    # Both engines run the backend passed in: a decode function that counts its calls.
    from pagedlab.engine.backends import torch_decode_attention

    calls = []

    def counting(*args):
        calls.append(1)
        return torch_decode_attention(*args)

    compare_with_static(model, prompts, params, num_blocks=11, block_size=BLOCK_SIZE, max_len=20,
                        attention_backend=counting)
    both = len(calls)
    LLMEngine(model, num_blocks=11, block_size=BLOCK_SIZE, max_num_seqs=len(prompts),
              max_num_batched_tokens=sum(map(len, prompts)), attention_backend=counting).generate(
        prompts, params, use_tqdm=False)
    assert 0 < both - (len(calls) - both) < both    # the static engine's decodes called it too


def test_bookkeeping_benchmark_runs_with_every_sequence_running():
    from pagedlab.engine.bench import bookkeeping_cost

    assert bookkeeping_cost(8, steps=3) > 0       # it asserts itself that all 8 ran in every timed step


@pytest.mark.parametrize("poison", ["normal", "nan"])
def test_a_block_reserved_but_never_computed_is_not_a_cache_hit(model, hf_model, prompts, poison):
    # Six 1-token requests and P (7 tokens, n=3) fill the 9 blocks of 4. At the second step sequence 0 of P copies
    # its shared block on write and fills it (its 8th slot reserved), sequence 1 cannot grow and nobody newer can be
    # preempted, so P preempts itself: the 8th token's K/V are never computed. A follow-up prompt that starts with
    # P and that token must not find the block in the prefix cache. The pool holds garbage (a GPU's unwritten
    # memory) or NaN, so a hit on the unwritten slot changes the tokens.
    engine = LLMEngine(model, num_blocks=9, block_size=BLOCK_SIZE, enable_prefix_caching=True, watermark=0.0,
                       max_num_seqs=16)
    if poison == "nan":
        engine.kv_cache.k.fill_(float("nan"))
        engine.kv_cache.v.fill_(float("nan"))
    else:
        engine.kv_cache.k.normal_(0, 3, generator=torch.Generator().manual_seed(5))
        engine.kv_cache.v.normal_(0, 3, generator=torch.Generator().manual_seed(6))
    prompt = prompts[1][:7]
    for i in range(6):
        engine.add_request([i + 1], SamplingParams(temperature=0, max_tokens=2))
    engine.add_request(prompt, SamplingParams(n=3, temperature=0, max_tokens=MAX_TOKENS), request_id="P")
    engine.step()
    engine.step()
    assert engine.metrics[-1].num_preemptions > 0, "the scenario needs P to preempt itself"
    follow_up = prompt + hf_greedy(hf_model, prompt, 1) + [3, 4, 5]
    engine.add_request(follow_up, SamplingParams(temperature=0, max_tokens=4), request_id="F")
    done = {}
    while engine.has_unfinished_requests():
        done.update({o.request_id: o for o in engine.step() if o.finished})
    assert done["F"].outputs[0].token_ids == hf_greedy(hf_model, follow_up, 4)
    assert done["F"].num_cached_tokens % BLOCK_SIZE == 0
    assert_no_leak(engine)


# Two configurations where a request preempted by recomputation came back too big for the token budget and was
# refused at admission on every step, forever: its prompt and generated tokens (x n after the fork).
HANGS = {
    "budget 24, two 20-token prompts": (
        dict(num_blocks=8, block_size=8, max_num_batched_tokens=24, max_num_seqs=8),
        [([i % 100 + 1 for i in range(20)], SamplingParams(temperature=0, max_tokens=30)),
         ([(7 * i) % 100 + 1 for i in range(20)], SamplingParams(temperature=0, max_tokens=30))]),
    "budget 64 = n_positions, a family of 2 x 32 tokens": (
        dict(num_blocks=32, block_size=4, max_num_batched_tokens=64, max_num_seqs=8),
        [([5, 6, 7, 8], SamplingParams(temperature=0, max_tokens=40)),
         ([(3 * i) % 100 + 1 for i in range(32)], SamplingParams(n=2, temperature=0, max_tokens=32))]),
}


def run_bounded(engine, steps=400):
    done = {}
    for _ in range(steps):
        if not engine.has_unfinished_requests():
            break
        done.update({o.request_id: o for o in engine.step() if o.finished})
    s = engine.scheduler
    assert not engine.has_unfinished_requests(), (
        f"no progress after {steps} steps: waiting {[(r.request_id, [len(q.token_ids) for q in r.live_seqs]) for r in s.waiting]}"
        f", running {[r.request_id for r in s.running]}")
    return done


@pytest.mark.parametrize("case", HANGS)
@pytest.mark.parametrize("chunked", [True, False])
def test_a_recomputed_request_always_makes_progress(model, hf_model, case, chunked):
    config, requests = HANGS[case]
    engine = LLMEngine(model, watermark=0.0, enable_chunked_prefill=chunked, **config)
    if not chunked and case.startswith("budget 24"):
        # Without chunks a sequence whose recomputation could not fit is refused up front (vLLM v0 refuses a
        # budget below the model's length at construction for the same reason).
        with pytest.raises(ValueError, match="enable_chunked_prefill"):
            engine.add_request(*requests[0])
        assert not engine.has_unfinished_requests()
        return
    for prompt, params in requests:
        engine.add_request(prompt, params)
    done = run_bounded(engine)
    assert sum(m.num_preemptions for m in engine.metrics) > 0, "the case needs a preemption by recomputation"
    for i, (prompt, params) in enumerate(requests):
        assert [c.token_ids for c in done[str(i)].outputs] == [hf_greedy(hf_model, prompt, params.max_tokens)] * params.n
    assert max(m.num_prefill_tokens + m.num_decode_tokens for m in engine.metrics) <= config["max_num_batched_tokens"]
    assert_no_leak(engine)


def test_generate_raises_instead_of_spinning(model, monkeypatch):
    from pagedlab.engine.scheduler import SchedulerOutput

    engine = LLMEngine(model, num_blocks=16, block_size=BLOCK_SIZE)
    monkeypatch.setattr(engine.scheduler, "schedule", SchedulerOutput)      # a scheduler that never schedules
    with pytest.raises(RuntimeError, match="scheduled nothing"):
        engine.generate([[1, 2, 3]], SamplingParams(temperature=0, max_tokens=2), use_tqdm=False)


def test_chunked_prefill_mixes_a_long_prompt_with_the_decodes(model):
    # Three decoding requests, then a 40-token prompt: whole, it makes one step of 43 tokens; in chunks of the
    # 16-token budget, every step stays within it and the decodes go on in every step.
    steps = {}
    for chunked in (False, True):
        engine = LLMEngine(model, num_blocks=64, block_size=BLOCK_SIZE, max_num_seqs=4, max_num_batched_tokens=48,
                           enable_chunked_prefill=chunked)
        if chunked:
            engine.scheduler.max_num_batched_tokens = 16
        for i in range(3):
            engine.add_request([1 + i, 2, 3], SamplingParams(temperature=0, max_tokens=12))
        engine.step()
        engine.add_request(list(range(1, 41)), SamplingParams(temperature=0, max_tokens=2))
        while engine.has_unfinished_requests():
            engine.step()
        steps[chunked] = [(m.num_prefill_tokens, m.num_decode_tokens) for m in engine.metrics[1:]]
        assert_no_leak(engine)
    assert steps[False][0] == (40, 3)
    assert max(p + d for p, d in steps[True]) <= 16
    assert [p for p, _ in steps[True][:3]] == [13, 13, 13] and all(d == 3 for _, d in steps[True][:4])


def test_abort_frees_everything_a_request_holds(model, prompts):
    engine = LLMEngine(model, num_blocks=8, block_size=BLOCK_SIZE, num_cpu_blocks=16, preemption="swap",
                       watermark=0.0)
    ids = [engine.add_request(p, SamplingParams(n=2, temperature=0, max_tokens=MAX_TOKENS)) for p in prompts[:3]]
    for _ in range(20):
        if engine.scheduler.swapped:
            break
        engine.step()
    assert engine.scheduler.swapped, "the case needs a swapped-out request"
    swapped = engine.scheduler.swapped[0].request_id
    engine.abort_request(swapped)
    assert all(s[0] != swapped for s in engine.block_manager.seq_ids)
    running = engine.scheduler.running[0].request_id
    engine.abort_request(running)
    engine.abort_request(running)               # gone already: ignored, as vLLM ignores it
    left = [i for i in ids if i not in (swapped, running)]
    done = run_bounded(engine)
    assert sorted(done) == sorted(left)
    assert_no_leak(engine)


def test_a_failed_generate_leaves_nothing_queued(model, prompts, reference):
    engine = LLMEngine(model, num_blocks=64, block_size=BLOCK_SIZE)
    with pytest.raises(ValueError, match="empty"):
        engine.generate([prompts[0], [], prompts[1]], SamplingParams(temperature=0, max_tokens=MAX_TOKENS), use_tqdm=False)
    assert not engine.has_unfinished_requests()
    assert_no_leak(engine)
    outputs = engine.generate([prompts[1]], SamplingParams(temperature=0, max_tokens=MAX_TOKENS), use_tqdm=False)
    assert [o.outputs[0].token_ids for o in outputs] == [reference[1]]


def test_request_ids_and_tokens_are_checked(model):
    engine = LLMEngine(model, num_blocks=64, block_size=BLOCK_SIZE)
    with pytest.raises(ValueError):
        engine.add_request([])
    assert engine.add_request([1]) == "0", "a refused request must not take an arrival number"
    assert engine.add_request([1], request_id="2") == "2"
    # Arrival 2's default id is taken by the explicit "2": it gets the next number not in use.
    assert engine.add_request([1]) == "3" and engine.add_request([1]) == "4", "a default id must skip the ids in use"
    with pytest.raises(TypeError, match="request_id"):
        engine.add_request([1], request_id=["not", "hashable"])
    with pytest.raises(TypeError, match="bool"):
        engine.add_request([1, True])
    assert [r.arrival for r in engine.scheduler.waiting] == [0, 1, 2, 3]


def test_swapped_requests_come_back_oldest_first(model):
    # As test_the_newest_request_is_preempted, swapping: 3 goes out first, then 2; they must come back 2 first.
    engine = LLMEngine(model, num_blocks=5, block_size=BLOCK_SIZE, num_cpu_blocks=8, preemption="swap",
                       watermark=0.0)
    for i in range(4):
        engine.add_request([1 + i, 2, 3, 4], SamplingParams(temperature=0, max_tokens=3))
    engine.step()
    engine.step()
    assert [r.request_id for r in engine.scheduler.swapped] == ["2", "3"]
    run_bounded(engine)
    assert_no_leak(engine)


def test_prefill_stall_benchmark_counts_the_longest_step(model):
    from pagedlab.engine.bench import prefill_stall

    whole = prefill_stall(model, prompt_len=40, budget=16, chunked=False, block_size=BLOCK_SIZE, decode_tokens=12)
    chunked = prefill_stall(model, prompt_len=40, budget=16, chunked=True, block_size=BLOCK_SIZE, decode_tokens=12)
    assert whole.longest_step_tokens == 40 + 4 and chunked.longest_step_tokens == 16
    assert chunked.token_ids == whole.token_ids


def test_requests_admitted_in_one_step_share_a_prefix_computed_in_that_step(model, hf_model):
    # Blocks are offered to the prefix cache once a step's batch is final, before the model runs: its run writes
    # every token's K/V before any attention reads, so a request admitted later in the same step reuses them.
    g = torch.Generator().manual_seed(4)
    system = torch.randint(0, 128, (2 * BLOCK_SIZE,), generator=g).tolist()
    prompts = [system + [5, 6], system + [7], system + [8, 9, 10]]
    engine = LLMEngine(model, num_blocks=32, block_size=BLOCK_SIZE, enable_prefix_caching=True)
    outputs = engine.generate(prompts, SamplingParams(temperature=0, max_tokens=MAX_TOKENS), use_tqdm=False)
    assert len(engine.metrics[0].batch) == 3, "all three should be admitted in the first step"
    assert [o.num_cached_tokens for o in outputs] == [0, 2 * BLOCK_SIZE, 2 * BLOCK_SIZE]
    assert [o.outputs[0].token_ids for o in outputs] == [hf_greedy(hf_model, p) for p in prompts]
    assert_no_leak(engine)
