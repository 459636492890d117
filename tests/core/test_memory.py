"""pagedlab.memory: the KV-cache size formula and the model presets."""

import pytest

from pagedlab import memory
from pagedlab.memory import GB, GiB, LLAMA2_70B, LLAMA3_8B, LLAMA_7B, OPT_13B, PRESETS, kv_cache_bytes


# --- size ----------------------------------------------------------------------------------------

def test_source_llama_7b_example_is_256_gib_not_gb():
    # The figure often quoted: 2 x 2 x 32 x 32 x 128 x 32768 x 16 = 274,877,906,944 bytes, "about 256 GB".
    n = kv_cache_bytes(num_layers=32, num_kv_heads=32, head_dim=128, num_tokens=32768, batch=16,
                       bytes_per_element=2)
    assert n == 274_877_906_944
    assert n == 256 * GiB
    assert round(n / GB, 1) == 274.9


def test_presets_match_published_per_token_sizes():
    assert OPT_13B.kv_bytes_per_token() == 800 * 1024           # vLLM paper: "800 KB" per token
    assert OPT_13B.kv_cache_bytes(2048) == 1600 * 2**20         # and "1.6 GB" for a 2048-token request
    assert LLAMA_7B.kv_bytes_per_token() == 512 * 1024
    assert LLAMA3_8B.kv_bytes_per_token() == 128 * 1024         # GQA: 8 KV heads instead of 32
    assert LLAMA2_70B.kv_bytes_per_token() == 320 * 1024
    assert LLAMA_7B.kv_cache_bytes(32768, 16) == 256 * GiB
    assert set(PRESETS) == {"LLaMA-7B", "Llama-3-8B", "OPT-13B", "Llama-2-70B", "SmolLM2-135M"}
    for m in PRESETS.values():
        assert m.num_heads % m.num_kv_heads == 0 and m.source


def test_gqa_divides_the_cache_by_the_group_size():
    mha = kv_cache_bytes(32, 32, 128, 4096)
    gqa = kv_cache_bytes(32, 8, 128, 4096)
    assert mha == 4 * gqa


def test_bytes_per_element_and_batch_scale_linearly():
    base = kv_cache_bytes(2, 3, 5, 7, 1, 1)
    assert base == 2 * 2 * 3 * 5 * 7
    assert kv_cache_bytes(2, 3, 5, 7, 11, 4) == 44 * base
    assert OPT_13B.kv_bytes_per_token(memory.BYTES_PER_ELEMENT["fp32"]) == 2 * OPT_13B.kv_bytes_per_token()


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(num_layers=0), ValueError, "num_layers must be >= 1"),
    (dict(head_dim=-1), ValueError, "head_dim must be >= 1"),
    (dict(num_tokens=2.5), TypeError, "num_tokens must be an int"),
    (dict(batch=True), TypeError, "batch must be an int"),
])
def test_bad_sizes_name_the_argument(kwargs, error, words):
    args = dict(num_layers=1, num_kv_heads=1, head_dim=1, num_tokens=1, batch=1, bytes_per_element=2) | kwargs
    with pytest.raises(error, match=words):
        kv_cache_bytes(**args)
