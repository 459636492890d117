"""Qwen 2 (and 2.5): Llama with a bias on the Q, K and V projections.

Hugging Face's ``Qwen2ForCausalLM`` is :mod:`pagedlab.models.llama`'s architecture, RMSNorm, RoPE, SwiGLU and
grouped-query attention, with the parameter names of ``LlamaForCausalLM``. Two things differ:

* ``q_proj``, ``k_proj`` and ``v_proj`` add a bias (``o_proj`` and the MLP do not). A bias on K is added before
  RoPE rotates it, so the cached key holds it, like the rest of the projection.
* Layers may use a sliding window (``use_sliding_window``); the released models switch it off, and so does this
  module: it refuses a config with a sliding layer, since the engine's attention reads the whole context.

So this module only names what differs: each class below overrides one hook of its Llama class, and the
registry's line ``"Qwen2ForCausalLM": Qwen2`` makes the loader and the engine serve it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagedlab.models.llama import Llama, LlamaBlock, LlamaConfig


@dataclass(frozen=True)
class Qwen2Config(LlamaConfig):
    """Sizes of a :class:`Qwen2`: those of :class:`~pagedlab.models.llama.LlamaConfig`, read from a Hugging Face
    ``transformers.Qwen2Config``."""

    model_type = "qwen2"

    @classmethod
    def check_hf(cls, c: object) -> None:
        """Refuse a config with a sliding-window layer (Hugging Face's ``layer_types``): this model attends to the
        whole context, as the released Qwen 2 models do."""
        if "sliding_attention" in (getattr(c, "layer_types", None) or ()):
            raise ValueError("sliding-window attention (use_sliding_window=True) is not implemented: "
                             "pagedlab's attention reads the whole context")


class Qwen2Block(LlamaBlock):
    """A :class:`~pagedlab.models.llama.LlamaBlock` whose Q, K and V projections add a bias."""

    qkv_bias = True


class Qwen2(Llama):
    """A Qwen2-architecture language model; everything but its blocks and config is :class:`Llama`'s."""

    config_class = Qwen2Config
    block_class = Qwen2Block
