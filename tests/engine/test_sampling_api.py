"""vLLM's sampling fields against references: log-probabilities against Hugging Face's log-softmax, the penalties
against Hugging Face's ``RepetitionPenaltyLogitsProcessor`` and the OpenAI formula, top-k/top-p/min-p against
Hugging Face's warpers, ``min_tokens`` against ``generate(min_new_tokens=)``; processors; vLLM's defaults.

A small random Llama on the PyTorch backend keeps this file to seconds.
"""

import pagedlab.kernels  # noqa: F401  (first: decides Triton's mode before transformers imports triton)

import math

import pytest
import torch
from transformers import LlamaConfig as HFLlamaConfig
from transformers import LlamaForCausalLM
from transformers.generation.logits_process import (MinPLogitsWarper, RepetitionPenaltyLogitsProcessor,
                                                    TopKLogitsWarper, TopPLogitsWarper)
from transformers.utils import logging as hf_logging

from pagedlab.engine import LLMEngine, Logprob, SamplingParams
from pagedlab.engine.sampler import Row, apply_penalties, apply_top_k_top_p_min_p
from pagedlab.models.llama import Llama

hf_logging.set_verbosity_error()
VOCAB = 128


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    config = HFLlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=64,
                           initializer_range=0.3, tie_word_embeddings=True)
    hf = LlamaForCausalLM(config).eval()
    return hf, Llama.from_hf(hf)


def engine_for(model, **kwargs):
    return LLMEngine(model, num_blocks=32, block_size=4, attention_backend="torch", **kwargs)


def test_vllm_defaults():
    p = SamplingParams()
    assert (p.temperature, p.top_p, p.top_k, p.min_p, p.max_tokens, p.n, p.logprobs, p.detokenize) == \
           (1.0, 1.0, 0, 0.0, 16, 1, None, True)
    assert not p.greedy and SamplingParams(temperature=0).greedy
    p.max_tokens = 3                                   # vLLM's params are assigned after creation (generate.py)
    assert p.clone().max_tokens == 3 and p.clone().seed is not None


def test_logprobs_and_prompt_logprobs_equal_hugging_face_log_softmax(tiny):
    hf, model = tiny
    prompt = [5, 17, 42, 7, 99, 3, 11]
    out = engine_for(model).generate([prompt], SamplingParams(temperature=0, max_tokens=6, logprobs=3,
                                                              prompt_logprobs=2), use_tqdm=False)[0]
    c = out.outputs[0]
    full = torch.tensor([prompt + c.token_ids])
    with torch.no_grad():
        ref = torch.log_softmax(hf(full).logits[0].float(), dim=-1)        # (tokens, vocab)
    assert len(c.logprobs) == len(c.token_ids) == 6
    total = 0.0
    for i, (token, entry) in enumerate(zip(c.token_ids, c.logprobs)):
        row = ref[len(prompt) - 1 + i]
        assert list(entry)[0] == token and isinstance(entry[token], Logprob)
        assert entry[token].logprob == pytest.approx(row[token].item(), abs=1e-4)
        assert entry[token].rank == 1 + int((row > row[token]).sum())
        top = row.topk(3).indices.tolist()
        assert set(entry) == set(top) | {token}
        assert [entry[t].rank for t in top] == [1, 2, 3]
        total += row[token].item()
    assert c.cumulative_logprob == pytest.approx(total, abs=1e-3)
    assert out.prompt_logprobs[0] is None and len(out.prompt_logprobs) == len(prompt)
    for p in range(1, len(prompt)):
        entry, row = out.prompt_logprobs[p], ref[p - 1]
        assert list(entry)[0] == prompt[p]
        assert entry[prompt[p]].logprob == pytest.approx(row[prompt[p]].item(), abs=1e-4)
        assert len(set(entry) - {prompt[p]}) <= 2


def test_prompt_logprobs_are_whole_with_chunks_and_prefix_caching(tiny):
    _, model = tiny
    prompt = list(range(3, 23))
    engine = engine_for(model, max_num_batched_tokens=6, max_num_seqs=2, enable_prefix_caching=True)
    first = engine.generate([prompt], SamplingParams(temperature=0, max_tokens=2, prompt_logprobs=0),
                            use_tqdm=False)[0]
    again = engine.generate([prompt], SamplingParams(temperature=0, max_tokens=2, prompt_logprobs=0),
                            use_tqdm=False)[0]
    assert all(e is not None for e in first.prompt_logprobs[1:])
    assert [list(e.values())[0].logprob for e in again.prompt_logprobs[1:]] == pytest.approx(
        [list(e.values())[0].logprob for e in first.prompt_logprobs[1:]], abs=1e-5)


def rows_for(params, prompts, outputs):
    return [Row(p, prompt, out, 0) for p, prompt, out in zip(params, prompts, outputs)]


def test_repetition_penalty_is_hugging_faces_and_presence_frequency_are_openais():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, VOCAB, generator=g) * 3
    prompts, outputs = [[1, 2, 3], [4, 4, 5], [6]], [[7, 7, 2], [], [6, 6, 6, 9]]
    params = [SamplingParams(repetition_penalty=1.7), SamplingParams(repetition_penalty=0.6),
              SamplingParams(presence_penalty=0.5, frequency_penalty=1.25)]
    got = logits.clone()
    apply_penalties(got, rows_for(params, prompts, outputs))
    for i in range(2):     # Hugging Face: over the prompt and the output
        ids = torch.tensor([prompts[i] + outputs[i]])
        ref = RepetitionPenaltyLogitsProcessor(params[i].repetition_penalty)(ids, logits[i:i + 1].clone())
        assert torch.allclose(got[i], ref[0]), i
    counts = torch.zeros(VOCAB)
    for t in outputs[2]:
        counts[t] += 1
    ref = logits[2] - 1.25 * counts - 0.5 * (counts > 0)          # OpenAI: over the output only
    assert torch.allclose(got[2], ref)
    assert not torch.equal(got, logits)


@pytest.mark.parametrize("top_k, top_p, min_p", [(0, 0.9, 0.0), (20, 1.0, 0.0), (10, 0.8, 0.0), (0, 1.0, 0.05),
                                                  (0, 0.999, 0.0)])
def test_top_k_top_p_min_p_keep_what_hugging_faces_warpers_keep(top_k, top_p, min_p):
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(4, VOCAB, generator=g) * torch.tensor([[0.3], [1.0], [3.0], [8.0]])
    params = [SamplingParams(top_k=top_k, top_p=top_p, min_p=min_p)] * 4
    got = apply_top_k_top_p_min_p(logits.clone(), rows_for(params, [[1]] * 4, [[]] * 4))
    ref = logits.clone()
    if min_p:
        ref = MinPLogitsWarper(min_p)(None, ref)
    if top_k:
        ref = TopKLogitsWarper(top_k)(None, ref)
    if top_p < 1:
        ref = TopPLogitsWarper(top_p)(None, ref)
    assert torch.equal(torch.isinf(got), torch.isinf(ref))
    assert (~torch.isinf(got)).sum(dim=-1).min() >= 1


def test_min_tokens_matches_generate_min_new_tokens(tiny):
    hf, model = tiny
    prompt = [9, 8, 7, 6]
    free = engine_for(model).generate([prompt], SamplingParams(temperature=0, max_tokens=8), use_tqdm=False)
    stop = free[0].outputs[0].token_ids[1]            # a token greedy decoding produces early
    params = SamplingParams(temperature=0, max_tokens=8, min_tokens=4, stop_token_ids=[stop])
    got = engine_for(model).generate([prompt], params, use_tqdm=False)[0].outputs[0]
    ids = torch.tensor([prompt])
    with torch.no_grad():
        ref = hf.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=8,
                          min_new_tokens=4, eos_token_id=stop, pad_token_id=0)[0, len(prompt):].tolist()
    assert got.token_ids == ref
    assert len(got.token_ids) >= 4 and stop not in got.token_ids[:4]
    unlimited = SamplingParams(temperature=0, max_tokens=8, stop_token_ids=[stop])
    assert len(engine_for(model).generate([prompt], unlimited, use_tqdm=False)[0].outputs[0].token_ids) == 2


def test_allowed_token_ids_logit_bias_and_max_tokens_none(tiny):
    _, model = tiny
    engine = engine_for(model)
    allowed = engine.generate([[1, 2, 3]], SamplingParams(max_tokens=8, allowed_token_ids=[5, 6], seed=0),
                              use_tqdm=False)[0].outputs[0].token_ids
    assert set(allowed) <= {5, 6}
    biased = engine.generate([[1, 2, 3]], SamplingParams(temperature=0, max_tokens=5, logit_bias={77: 100}),
                             use_tqdm=False)[0].outputs[0].token_ids
    assert biased == [77] * 5
    longest = engine.generate([[1, 2, 3]], SamplingParams(temperature=0, max_tokens=None), use_tqdm=False)[0]
    assert len(longest.outputs[0].token_ids) == 64 - 3         # up to max_model_len
    with pytest.raises(ValueError, match="allowed token id"):
        engine.generate([[1]], SamplingParams(allowed_token_ids=[VOCAB]), use_tqdm=False)
    assert not engine.has_unfinished_requests()


def test_sampled_tokens_follow_the_distribution(tiny):
    """The inverse-CDF draw: over many seeds, the first token's frequencies match softmax(logits / T)."""
    hf, model = tiny
    prompt = [3, 1, 4, 1, 5]
    engine = LLMEngine(model, num_blocks=128, block_size=4, attention_backend="torch", max_num_seqs=64)
    params = [SamplingParams(temperature=1.5, max_tokens=1, seed=s) for s in range(600)]
    firsts = [o.outputs[0].token_ids[0] for o in engine.generate([prompt] * 600, params, use_tqdm=False)]
    with torch.no_grad():
        probs = torch.softmax(hf(torch.tensor([prompt])).logits[0, -1] / 1.5, dim=-1)
    seen = torch.bincount(torch.tensor(firsts), minlength=VOCAB).float() / len(firsts)
    top = probs.topk(5).indices
    assert (seen[top] - probs[top]).abs().max() < 4 * math.sqrt(0.25 / 600), (seen[top], probs[top])


@pytest.mark.parametrize("bad, error, words", [
    (dict(temperature=2.5), ValueError, "temperature"), (dict(min_p=1.5), ValueError, "min_p"),
    (dict(presence_penalty=3), ValueError, "presence_penalty"), (dict(repetition_penalty=0), ValueError,
                                                                 "repetition_penalty"),
    (dict(min_tokens=5, max_tokens=2), ValueError, "min_tokens"), (dict(logprobs=-2), ValueError, "logprobs"),
    (dict(stop_token_ids="12"), TypeError, "stop_token_ids"), (dict(logit_bias=[1, 2]), TypeError, "logit_bias"),
    (dict(allowed_token_ids=[]), ValueError, "allowed_token_ids"), (dict(stop="x", detokenize=False), ValueError,
                                                                    "detokenize"),
])
def test_sampling_params_are_checked(bad, error, words):
    with pytest.raises(error, match=words):
        SamplingParams(**bad)


def test_engine_settings_are_named_in_errors(tiny):
    _, model = tiny
    with pytest.raises(TypeError, match="num_gpu_blocks"):
        LLMEngine(model, num_gpu_blocks=4)
    with pytest.raises(ValueError, match="max_model_len"):
        LLMEngine(model, max_model_len=65)
    with pytest.raises(ValueError, match="kv_cache_space"):
        LLMEngine(model, kv_cache_space=1e-6)
    engine = LLMEngine(model, kv_cache_space=0.001, attention_backend="torch")
    # K and V x 2 layers x 16 tokens x 2 heads x 16 dims x 4 bytes per block
    assert engine.engine_config.num_blocks == int(0.001 * 2**30) // (2 * 2 * 16 * 2 * 16 * 4)
