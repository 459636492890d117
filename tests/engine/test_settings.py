"""The engine's settings: checked before the model loads, each default written once, and vLLM's rules for
requests that ask too much (``vllm/engine/arg_utils.py``, ``vllm/config/model.py``, ``vllm/v1/engine/processor.py``,
``vllm/v1/core/sched/utils.py``, ``vllm/v1/engine/output_processor.py``)."""

import dataclasses

import pytest
import torch

from pagedlab.engine import LLM, EngineConfig, LLMEngine, SamplingParams
from pagedlab.engine import llm as llm_module
from pagedlab.engine.scheduler import Scheduler
from pagedlab.models.tiny_gpt import GPTConfig, TinyGPT
from pagedlab.paged import BlockManager
from pagedlab.paged.eviction import LeastOftenHit, LRU


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return TinyGPT(GPTConfig(vocab_size=128, n_positions=64, d_model=32, n_layers=1, n_heads=2)).eval()


def engine_for(model, **settings):
    return LLMEngine(model, **dict(dict(num_blocks=32, block_size=4, attention_backend="torch"), **settings))


@pytest.mark.parametrize("settings, error, words", [
    (dict(foo=1), TypeError, r"unknown argument\(s\) \['foo'\]"),
    (dict(num_blocks=0), ValueError, "num_blocks must be >= 1"),
    (dict(block_size=12), ValueError, "block_size must be a power of two"),
    (dict(eviction_policy="fifo"), ValueError, "eviction_policy"),
    (dict(attention_backend="cuda-fast"), ValueError, "attention_backend"),
    (dict(max_num_seqs=8, max_num_batched_tokens=4), ValueError, "max_num_batched_tokens"),
    (dict(preemption="swap"), ValueError, "CPU pool"),
    (dict(max_logprobs=-2), ValueError, "max_logprobs"),
    (dict(override_generation_config={"temperature": 9}), ValueError, "temperature"),
])
def test_llm_refuses_a_bad_setting_before_loading_the_model(monkeypatch, settings, error, words):
    """``vllm/engine/arg_utils.py`` checks the arguments before anything loads; the model load here is replaced by
    one that fails the test, so a check that ran after it could not pass."""
    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded before the settings were checked")

    monkeypatch.setattr(llm_module, "load_model", no_load)
    with pytest.raises(error, match=words):
        LLM("HuggingFaceTB/SmolLM2-135M-Instruct", **settings)


def test_each_default_is_the_config_fields_own(model):
    """The scheduler reads EngineConfig; it had its own defaults (enable_chunked_prefill=False against True)."""
    defaults = EngineConfig()
    scheduler = Scheduler(BlockManager(8, 4))
    assert scheduler.config == dataclasses.replace(defaults, num_cpu_blocks=0)      # the block manager's CPU pool
    assert (scheduler.enable_chunked_prefill, scheduler.max_num_seqs, scheduler.max_num_batched_tokens,
            scheduler.preemption) == (defaults.enable_chunked_prefill, defaults.max_num_seqs,
                                      defaults.max_num_batched_tokens, defaults.preemption)
    engine = engine_for(model)
    got = engine.engine_config
    assert got == dataclasses.replace(defaults, num_blocks=32, block_size=4, attention_backend="torch",
                                      max_model_len=64, num_cpu_blocks=0)
    assert engine.scheduler.config is got


@pytest.mark.parametrize("name, policy", [("lru", LRU), ("least_often_hit", LeastOftenHit)])
def test_the_eviction_policy_is_an_engine_setting(model, name, policy):
    engines = [engine_for(model, enable_prefix_caching=True, eviction_policy=p) for p in (name, policy)]
    for engine in engines:
        assert type(engine.block_manager.prefix_cache.policy) is policy
    assert engines[0].block_manager.prefix_cache.policy is not engines[1].block_manager.prefix_cache.policy


def test_an_empty_stop_string_is_a_value_error():
    with pytest.raises(ValueError, match="stop must not contain an empty string"):
        SamplingParams(stop=[""])
    with pytest.raises(TypeError, match="stop"):
        SamplingParams(stop=[1])


def test_aborting_an_unknown_request_is_ignored(model):
    """``vllm/v1/engine/output_processor.py`` (``abort_requests``) skips ids it does not know."""
    engine = engine_for(model)
    engine.add_request([1, 2, 3], SamplingParams(temperature=0, max_tokens=2), request_id="a")
    engine.abort_request("nobody")
    engine.abort_request(["unhashable"])
    assert [r.request_id for r in engine.scheduler.waiting] == ["a"]
    engine.abort_request("a")
    engine.abort_request("a")                   # twice: the second is a no-op
    assert not engine.has_unfinished_requests() and engine.block_manager.num_free_blocks == 32


def test_logprobs_past_max_logprobs_are_refused_as_vllm_does(model):
    """``vllm/v1/engine/processor.py``: more than ``max_logprobs`` (20) is refused; -1 is the vocabulary."""
    engine = engine_for(model)
    for params in (SamplingParams(logprobs=21), SamplingParams(prompt_logprobs=21), SamplingParams(logprobs=-1)):
        with pytest.raises(ValueError, match="max_logprobs=20"):
            engine.add_request([1, 2, 3], params)
    assert not engine.has_unfinished_requests()
    engine.add_request([1, 2, 3], SamplingParams(logprobs=20, max_tokens=1))
    out = engine_for(model, max_logprobs=-1).generate([[1, 2, 3]], SamplingParams(logprobs=-1, max_tokens=1),
                                                      use_tqdm=False)
    assert len(out[0].outputs[0].logprobs[0]) == 128


def test_a_request_past_max_model_len_ends_there(model):
    """``vllm/v1/core/sched/utils.py`` (``check_stop``): the request is served and ends at ``max_model_len`` tokens,
    ``"length"``; a prompt longer than ``max_model_len`` is refused (vLLM's input processor)."""
    engine = engine_for(model, max_model_len=16)
    out = engine.generate([list(range(1, 11))], SamplingParams(temperature=0, max_tokens=20), use_tqdm=False)
    assert (len(out[0].outputs[0].token_ids), out[0].outputs[0].finish_reason) == (6, "length")
    with pytest.raises(ValueError, match="longer than max_model_len=16"):
        engine.add_request(list(range(1, 18)), SamplingParams(max_tokens=1))
    # A pool that cannot hold the request even at max_model_len: refused, naming the pool (the course's small pools).
    small = engine_for(model, num_blocks=3, max_model_len=64, watermark=0.0)
    with pytest.raises(ValueError, match="could never finish"):
        small.add_request([1, 2, 3], SamplingParams(max_tokens=20))


def test_get_default_sampling_params_reads_the_override(tmp_path):
    """``vllm/config/model.py`` (``get_diff_sampling_param``): the generation config's sampling values, then
    ``override_generation_config``; other keys ignored."""
    (tmp_path / "generation_config.json").write_text('{"temperature": 0.6, "top_p": 0.9, "max_new_tokens": 7, '
                                                     '"do_sample": true}')
    llm = LLM.__new__(LLM)                      # no model: only the defaults' reading is under test
    llm._generation_config, llm._override_generation_config = tmp_path, {"top_p": 0.5, "min_p": 0.1}
    assert llm.get_default_sampling_params() == SamplingParams(temperature=0.6, top_p=0.5, min_p=0.1, max_tokens=7)
