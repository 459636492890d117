"""Llama: the decoder architecture most served models share (SmolLM2, Llama 2/3, Mistral, Qwen 2 ...).

Against :class:`~pagedlab.models.tiny_gpt.TinyGPT` (GPT-2) it changes four things, each a line or two below:

* **RMSNorm** instead of LayerNorm: ``x / rms(x) * weight``, no mean subtracted, no bias.
* **Rotary position embeddings (RoPE)** instead of a learned position table: each pair of channels of a
  query or key is rotated by an angle ``position * theta ** (-2i / head_dim)``. The dot product of a
  rotated query and key then depends only on their *distance*, and positions need no weights.
* **SwiGLU** MLP: ``down(silu(gate(x)) * up(x))``.
* **Grouped-query attention (GQA)**: fewer K/V heads than query heads (SmolLM2-135M: 9 and 3), so the KV
  cache is ``n_heads / n_kv_heads`` times smaller; query head ``h`` reads K/V head ``h // group``.

RoPE and the paged cache. The rotation is applied to K *before* it is written to the cache, so a cached
key never changes. What the rotation needs is each token's position *in its own sequence*, not its row in
the step's batch: the engine passes ``positions`` with the tokens (a decoding sequence's one token sits at
position ``len(seq) - 1`` although it is row 0 of the batch), and :meth:`Llama.forward` rotates with them.

The model does not own a KV cache: like TinyGPT it calls ``attention(layer, q, k, v)``, with ``q`` of
``n_heads`` heads and ``k, v`` of ``n_kv_heads``. The parameter names are those of Hugging Face's
``LlamaForCausalLM``, so :meth:`Llama.from_hf` is a plain copy.

A family that differs from Llama in a detail (Qwen 2: biases on Q, K and V) subclasses the three classes here
and overrides only their hooks: :attr:`LlamaConfig.model_type` and :meth:`LlamaConfig.check_hf`,
:attr:`LlamaBlock.qkv_bias`, and :attr:`Llama.config_class` / :attr:`Llama.block_class`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn
from torch.nn import functional as F

from pagedlab.models.base import Attention, ModelSizes, check_inputs, check_positive_fields, load_weights


@dataclass(frozen=True)
class LlamaConfig(ModelSizes):
    """Sizes of a :class:`Llama` (Hugging Face's ``LlamaConfig`` fields, under the engine's names).

    Attributes:
        vocab_size: token ids ``0 .. vocab_size - 1``. n_positions: the longest sequence (``max_position_embeddings``).
        d_model: width of the residual stream (``hidden_size``). n_layers: blocks.
        n_heads, n_kv_heads: query heads and K/V heads; ``n_kv_heads`` divides ``n_heads``.
        head_dim: width of one head (even: RoPE rotates pairs of channels).
        d_ff: the MLP's hidden width (``intermediate_size``).
        rms_norm_eps: RMSNorm epsilon. rope_theta: RoPE's base (SmolLM2: 100000).
        tie_word_embeddings: the output layer is the token embedding (SmolLM2 ties them).
    """

    n_kv_heads: int = 2
    head_dim: int = 16
    d_ff: int = 128
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    tie_word_embeddings: bool = True

    model_type: ClassVar[str] = "llama"
    """The Hugging Face ``model_type`` that :meth:`from_hf` accepts (a subclass names its own)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_fields(self, ("n_kv_heads", "head_dim", "d_ff"))
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads {self.n_heads} must be a multiple of n_kv_heads {self.n_kv_heads} (GQA)")
        if self.head_dim % 2:
            raise ValueError(f"head_dim must be even (RoPE rotates channel pairs), got {self.head_dim}")

    @classmethod
    def from_hf(cls, c: object) -> LlamaConfig:
        """The sizes of a Hugging Face config of :attr:`model_type` (``transformers.LlamaConfig`` here).

        Raises:
            ValueError: another ``model_type``, or a feature this model does not implement (see :meth:`check_hf`).
        """
        if getattr(c, "model_type", cls.model_type) != cls.model_type:
            raise ValueError(f"this is a {c.model_type!r} model; {cls.__module__} implements model_type "
                             f"{cls.model_type!r}")
        cls.check_hf(c)
        rope = getattr(c, "rope_parameters", None) or {"rope_type": "default",
                                                       "rope_theta": getattr(c, "rope_theta", 10000.0)}
        if rope.get("rope_type", "default") != "default":
            raise ValueError(f"RoPE scaling {rope.get('rope_type')!r} is not implemented (only plain RoPE)")
        if c.hidden_act != "silu":
            raise ValueError(f"the MLP must use SiLU (SwiGLU), the model uses {c.hidden_act!r}")
        return cls(vocab_size=c.vocab_size, n_positions=c.max_position_embeddings, d_model=c.hidden_size,
                   n_layers=c.num_hidden_layers, n_heads=c.num_attention_heads,
                   n_kv_heads=c.num_key_value_heads or c.num_attention_heads,
                   head_dim=getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads,
                   d_ff=c.intermediate_size, rms_norm_eps=float(c.rms_norm_eps),
                   rope_theta=float(rope["rope_theta"]), tie_word_embeddings=bool(c.tie_word_embeddings))

    @classmethod
    def check_hf(cls, c: object) -> None:
        """Raise ``ValueError`` for a feature of the Hugging Face config ``c`` that this family does not implement
        (the hook a family overrides; :meth:`from_hf` checks what all share: the RoPE and the activation)."""
        if getattr(c, "attention_bias", False) or getattr(c, "mlp_bias", False):
            raise ValueError("attention or MLP biases are not implemented (Llama has none)")


class RMSNorm(nn.Module):
    """``x / sqrt(mean(x^2) + eps) * weight``, computed in float32 (as Hugging Face does) and cast back."""

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


def rope_cos_sin(positions: torch.Tensor, head_dim: int, theta: float, dtype: torch.dtype
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """The rotation of every token: ``cos`` and ``sin``, each ``(*positions.shape, head_dim)`` in ``dtype``.

    Channel ``i`` and ``i + head_dim/2`` form a pair, rotated by ``position * theta ** (-2i / head_dim)``
    (the "rotate half" layout of Hugging Face's Llama; the original RoPE pairs neighbouring channels).
    """
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, device=positions.device).float() / head_dim)
    angles = positions.float()[..., None] * inv_freq
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` ``(..., tokens, heads, head_dim)`` by ``cos, sin`` ``(..., tokens, head_dim)``."""
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos[..., None, :] + rotated * sin[..., None, :]


def causal_gqa_attention(layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal attention over contiguous ``(batch, seq, heads, head_dim)`` tensors, K/V with fewer heads (GQA)."""
    out = F.scaled_dot_product_attention(q.transpose(-3, -2), k.transpose(-3, -2), v.transpose(-3, -2),
                                         is_causal=True, enable_gqa=True)
    return out.transpose(-3, -2)


class LlamaBlock(nn.Module):
    """One block: ``x + o_proj(attention(rope(q), rope(k), v))``, then ``x + down(silu(gate) * up)``."""

    qkv_bias: ClassVar[bool] = False
    """Whether the Q, K and V projections add a bias (Llama: no; a subclass may say yes)."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        c = config
        self.n_heads, self.n_kv_heads, self.head_dim = c.n_heads, c.n_kv_heads, c.head_dim
        self.input_layernorm = RMSNorm(c.d_model, c.rms_norm_eps)
        self.q_proj = nn.Linear(c.d_model, c.n_heads * c.head_dim, bias=self.qkv_bias)
        self.k_proj = nn.Linear(c.d_model, c.n_kv_heads * c.head_dim, bias=self.qkv_bias)
        self.v_proj = nn.Linear(c.d_model, c.n_kv_heads * c.head_dim, bias=self.qkv_bias)
        self.o_proj = nn.Linear(c.n_heads * c.head_dim, c.d_model, bias=False)
        self.post_attention_layernorm = RMSNorm(c.d_model, c.rms_norm_eps)
        self.gate_proj = nn.Linear(c.d_model, c.d_ff, bias=False)
        self.up_proj = nn.Linear(c.d_model, c.d_ff, bias=False)
        self.down_proj = nn.Linear(c.d_ff, c.d_model, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layer: int,
                attention: Attention) -> torch.Tensor:
        h = self.input_layernorm(x)
        lead = x.shape[:-1]
        q = apply_rope(self.q_proj(h).view(*lead, self.n_heads, self.head_dim), cos, sin)
        k = apply_rope(self.k_proj(h).view(*lead, self.n_kv_heads, self.head_dim), cos, sin)
        v = self.v_proj(h).view(*lead, self.n_kv_heads, self.head_dim)
        x = x + self.o_proj(attention(layer, q, k, v).reshape(*lead, -1))
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Llama(nn.Module):
    """A Llama-architecture language model (see the module docstring).

    Args:
        config: the sizes. Weights start random (normal, std 0.02; seed torch first) or come from
            :meth:`from_hf` / :meth:`from_state_dict`.
    """

    config_class: ClassVar[type[LlamaConfig]] = LlamaConfig
    """The config a checkpoint is read into (:meth:`from_checkpoint`); a family subclass names its own."""
    block_class: ClassVar[type[LlamaBlock]] = LlamaBlock
    """The class of each of the ``n_layers`` blocks."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.d_model)
        self.layers = nn.ModuleList(self.block_class(config) for _ in range(config.n_layers))
        self.norm = RMSNorm(config.d_model, config.rms_norm_eps)
        self.lm_head = None if config.tie_word_embeddings else nn.Linear(config.d_model, config.vocab_size, bias=False)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor | None = None,
                attention: Attention = causal_gqa_attention, rows: torch.Tensor | None = None) -> torch.Tensor:
        """Logits of every position.

        Args:
            input_ids: int64 token ids, ``(batch, seq)`` for the reference path, or ``(num_tokens,)`` with a
                paged ``attention``.
            positions: each token's position in its sequence, shaped like ``input_ids`` (default
                ``0 .. seq - 1``); RoPE rotates with them.
            attention: ``attention(layer, q, k, v) -> out``, ``q`` with ``n_heads`` heads, ``k, v`` with
                ``n_kv_heads``.
            rows: with flat ``(num_tokens,)`` inputs, compute logits only at these rows (the engine samples from
                each sequence's last token: a prompt's other rows would cost a vocabulary-sized product each).

        Returns:
            ``(*input_ids.shape, vocab_size)`` logits in the model's dtype, or ``(len(rows), vocab_size)``.

        Raises:
            ValueError: a token id outside the vocabulary, or a position past ``n_positions``.
        """
        cfg = self.config
        positions = check_inputs(input_ids, positions, cfg.vocab_size, cfg.n_positions)
        x = self.embed_tokens(input_ids)
        cos, sin = rope_cos_sin(positions, cfg.head_dim, cfg.rope_theta, x.dtype)
        for layer, block in enumerate(self.layers):
            x = block(x, cos, sin, layer, attention)
        x = self.norm(x if rows is None else x[rows])
        return x @ self.embed_tokens.weight.T if self.lm_head is None else self.lm_head(x)

    @classmethod
    def from_hf(cls, hf_model: nn.Module) -> Llama:
        """Copy the weights of a Hugging Face ``transformers.LlamaForCausalLM`` (no download: pass a model).

        Returns a model in eval mode, in the HF model's dtype and on its device.

        Raises:
            ValueError: a configuration this model does not implement (see :meth:`LlamaConfig.from_hf`).
        """
        return cls.from_checkpoint(hf_model.config, hf_model.state_dict())

    @classmethod
    def from_checkpoint(cls, hf_config: object, hf_weights: dict[str, torch.Tensor]) -> Llama:
        """A model holding ``hf_weights`` (see :meth:`from_state_dict`), sized by ``hf_config``, a Hugging Face
        config of :attr:`config_class`'s ``model_type`` (the registry's entry point).

        Raises:
            ValueError: as :meth:`LlamaConfig.from_hf` and :meth:`from_state_dict`.
        """
        return cls.from_state_dict(cls.config_class.from_hf(hf_config), hf_weights)

    @classmethod
    def from_state_dict(cls, config: LlamaConfig, hf_weights: dict[str, torch.Tensor]) -> Llama:
        """A model holding ``hf_weights``, a ``LlamaForCausalLM`` state dict (names like
        ``model.layers.0.self_attn.q_proj.weight``), e.g. read from a safetensors file. The tensors are copied.

        Raises:
            ValueError: a missing, unexpected or misshapen weight (the message names it).
        """
        ours = {}
        for name, tensor in hf_weights.items():
            if name == "lm_head.weight" and config.tie_word_embeddings:
                continue                                    # the same tensor as the embedding
            ours[name.removeprefix("model.").replace("self_attn.", "").replace("mlp.", "")] = tensor
        return load_weights(cls, config, ours)
