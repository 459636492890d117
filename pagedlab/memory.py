"""How big the KV cache is: the size formula and the shapes of a few real models.

Every layer keeps a key and a value vector per KV head for every token, so
``bytes = 2 × num_layers × num_kv_heads × head_dim × num_tokens × batch × bytes_per_element``
(:func:`kv_cache_bytes`). :data:`PRESETS` holds the shapes of a few real models (:class:`ModelShape`), each with
its source.

How much of that memory contiguous and paged allocation waste while serving is :mod:`pagedlab.waste`; what
moving it between the GPU and the host costs, as swapping does, is :mod:`pagedlab.transfer`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagedlab.validate import check_count

GiB = 2**30
"""A gibibyte. The "256 GB" often quoted for LLaMA-7B (batch 16, 32K) is 256 GiB: 274,877,906,944 bytes is 2**38."""
GB = 10**9
"""A gigabyte (decimal), what GPU vendors print on the box: an "80 GB" A100 has 80 × 10**9 bytes."""

BYTES_PER_ELEMENT = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}
"""Bytes per stored K or V element for the usual cache dtypes."""


def kv_cache_bytes(num_layers: int, num_kv_heads: int, head_dim: int, num_tokens: int, batch: int = 1,
                   bytes_per_element: int = 2) -> int:
    """Bytes of KV cache for ``batch`` sequences of ``num_tokens`` tokens each.

    ``2 × num_layers × num_kv_heads × head_dim × num_tokens × batch × bytes_per_element``: the 2 is one
    key and one value vector. ``num_kv_heads`` is the number of *key/value* heads, which is smaller than
    the number of query heads in models with grouped-query attention (GQA, Ainslie et al. 2023).

    Args:
        num_layers, num_kv_heads, head_dim, num_tokens, batch, bytes_per_element: positive ints
            (``bytes_per_element``: 2 for fp16/bf16, 4 for fp32, 1 for fp8; see :data:`BYTES_PER_ELEMENT`).

    Returns:
        The size in bytes, an exact int (divide by :data:`GiB` for gibibytes).

    Raises:
        TypeError: an argument is not an int. ValueError: an argument is not positive.
    """
    args = dict(num_layers=num_layers, num_kv_heads=num_kv_heads, head_dim=head_dim, num_tokens=num_tokens,
                batch=batch, bytes_per_element=bytes_per_element)
    n = 2
    for name, value in args.items():
        n *= check_count(name, value, 1)
    return n


@dataclass(frozen=True)
class ModelShape:
    """The attention shape of a decoder-only model: all the KV-cache size depends on.

    Attributes:
        name: the model's name.
        num_layers: transformer blocks, each with its own KV cache.
        num_heads: query heads.
        num_kv_heads: key/value heads (= ``num_heads`` without GQA).
        head_dim: dimension of one head.
        max_len: the longest sequence the model was trained for (its context window).
        source: where the numbers come from.
    """

    name: str
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    max_len: int
    source: str

    def kv_bytes_per_token(self, bytes_per_element: int = 2) -> int:
        """KV-cache bytes one token occupies across all layers (``2 × layers × kv_heads × head_dim × bytes``)."""
        return kv_cache_bytes(self.num_layers, self.num_kv_heads, self.head_dim, 1, 1, bytes_per_element)

    def kv_cache_bytes(self, num_tokens: int, batch: int = 1, bytes_per_element: int = 2) -> int:
        """:func:`kv_cache_bytes` for this model."""
        return kv_cache_bytes(self.num_layers, self.num_kv_heads, self.head_dim, num_tokens, batch,
                              bytes_per_element)


LLAMA_7B = ModelShape("LLaMA-7B", num_layers=32, num_heads=32, num_kv_heads=32, head_dim=128, max_len=2048,
                      source="Touvron et al. 2023, LLaMA, Table 2: dimension 4096, 32 heads, 32 layers")
LLAMA3_8B = ModelShape("Llama-3-8B", num_layers=32, num_heads=32, num_kv_heads=8, head_dim=128, max_len=8192,
                       source="meta-llama/Meta-Llama-3-8B config.json: hidden_size 4096, num_attention_heads 32, "
                              "num_key_value_heads 8, num_hidden_layers 32, max_position_embeddings 8192")
OPT_13B = ModelShape("OPT-13B", num_layers=40, num_heads=40, num_kv_heads=40, head_dim=128, max_len=2048,
                     source="Zhang et al. 2022, OPT, Table 1: 40 layers, 40 heads, d_model 5120; the vLLM paper's "
                            "example: 800 KB of KV cache per token")
LLAMA2_70B = ModelShape("Llama-2-70B", num_layers=80, num_heads=64, num_kv_heads=8, head_dim=128, max_len=4096,
                        source="meta-llama/Llama-2-70b-hf config.json: hidden_size 8192, num_attention_heads 64, "
                               "num_key_value_heads 8, num_hidden_layers 80, max_position_embeddings 4096")

SMOLLM2_135M = ModelShape("SmolLM2-135M", num_layers=30, num_heads=9, num_kv_heads=3, head_dim=64, max_len=8192,
                          source="HuggingFaceTB/SmolLM2-135M-Instruct config.json: hidden_size 576, "
                                 "num_attention_heads 9, num_key_value_heads 3, num_hidden_layers 30, "
                                 "max_position_embeddings 8192 (the model notebook 10 serves; tests/engine/test_llm.py "
                                 "checks these against the loaded model)")

PRESETS = {m.name: m for m in (LLAMA_7B, LLAMA3_8B, OPT_13B, LLAMA2_70B, SMOLLM2_135M)}
"""The model shapes used in the course, by name."""
