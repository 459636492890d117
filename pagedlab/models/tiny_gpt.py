"""TinyGPT: a GPT-2-architecture decoder small enough to read on one screen.

Pre-LayerNorm blocks, learned positions, a GELU (tanh) MLP and tied input/output embeddings, with the
parameter names of Hugging Face's ``GPT2LMHeadModel`` so :meth:`TinyGPT.from_gpt2` is a plain copy.

The model does not own a KV cache. Attention is a function the caller passes in,
``attention(layer, q, k, v) -> out`` with ``q, k, v`` of shape ``(..., tokens, heads, head_dim)``:

* :func:`causal_attention` (the default) attends over the tensors it is given: the contiguous
  reference, ``(batch, seq)`` in, ``(batch, seq, vocab)`` logits out;
* the engine passes :class:`pagedlab.engine.attention.PagedAttention`, which writes each token's K/V into
  the :class:`~pagedlab.paged.KVCache` and reads the context back through the block tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from pagedlab.models.base import Attention, ModelSizes, check_inputs, load_weights


@dataclass(frozen=True)
class GPTConfig(ModelSizes):
    """Sizes of a :class:`TinyGPT` (GPT-2's ``vocab_size``, ``n_positions``, ``n_embd``, ``n_layer``, ``n_head``).

    Attributes:
        vocab_size, n_positions, d_model, n_layers, n_heads: see :class:`ModelSizes`; ``n_heads`` must divide
            ``d_model``, and every head is a K/V head too (GPT-2 has no GQA).
        layer_norm_eps: LayerNorm epsilon (GPT-2: 1e-5).
    """

    layer_norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} must be a multiple of n_heads {self.n_heads}")

    @property
    def head_dim(self) -> int:
        """``d_model // n_heads``."""
        return self.d_model // self.n_heads

    @property
    def n_kv_heads(self) -> int:
        """K/V heads, what the KV cache stores: ``n_heads`` (GPT-2 has no grouped-query attention)."""
        return self.n_heads

    @classmethod
    def from_hf(cls, c: object) -> GPTConfig:
        """The sizes of a Hugging Face ``transformers.GPT2Config``.

        Raises:
            ValueError: a configuration TinyGPT does not implement (another activation, untied embeddings,
                unscaled attention).
        """
        if c.activation_function not in ("gelu_new", "gelu_pytorch_tanh"):
            raise ValueError(f"TinyGPT uses GELU with the tanh approximation, the model uses {c.activation_function!r}")
        if not getattr(c, "tie_word_embeddings", True) or not c.scale_attn_weights:
            raise ValueError("TinyGPT needs tied embeddings and attention scaled by 1/sqrt(head_dim)")
        return cls(vocab_size=c.vocab_size, n_positions=c.n_positions, d_model=c.n_embd,
                   n_layers=c.n_layer, n_heads=c.n_head, layer_norm_eps=c.layer_norm_epsilon)


def causal_attention(layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal attention over contiguous ``(batch, seq, heads, head_dim)`` tensors (the reference path)."""
    out = F.scaled_dot_product_attention(q.transpose(-3, -2), k.transpose(-3, -2), v.transpose(-3, -2),
                                         is_causal=True)
    return out.transpose(-3, -2)


class Block(nn.Module):
    """One pre-LayerNorm transformer block: ``x + attn(ln_1(x))``, then ``x + mlp(ln_2(x))``."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        d = config.d_model
        self.n_heads = config.n_heads
        self.ln_1 = nn.LayerNorm(d, eps=config.layer_norm_eps)
        self.c_attn = nn.Linear(d, 3 * d)          # Q, K and V in one product
        self.attn_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d, eps=config.layer_norm_eps)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor, layer: int, attention: Attention) -> torch.Tensor:
        heads = (*x.shape[:-1], self.n_heads, x.shape[-1] // self.n_heads)
        q, k, v = self.c_attn(self.ln_1(x)).chunk(3, dim=-1)
        a = attention(layer, q.reshape(heads), k.reshape(heads), v.reshape(heads))
        x = x + self.attn_proj(a.reshape(x.shape))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class TinyGPT(nn.Module):
    """A GPT-2-architecture language model.

    Args:
        config: the sizes. Weights start as GPT-2 initialises them (normal, std 0.02; seed torch first,
            or use :meth:`random`), or come from :meth:`from_gpt2`.
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.d_model)
        self.wpe = nn.Embedding(config.n_positions, config.d_model)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear):
                nn.init.zeros_(module.bias)

    @classmethod
    def random(cls, config: GPTConfig, seed: int = 0) -> TinyGPT:
        """A randomly initialised model, the same for the same ``seed`` (in eval mode)."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return cls(config).eval()

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor | None = None,
                attention: Attention = causal_attention, rows: torch.Tensor | None = None) -> torch.Tensor:
        """Logits of every position.

        Args:
            input_ids: int64 token ids, ``(batch, seq)`` for the reference path, or ``(num_tokens,)`` with a
                paged ``attention``.
            positions: the position of each token, shaped like ``input_ids`` (default ``0 .. seq - 1``).
            attention: ``attention(layer, q, k, v) -> out``, see the module docstring.
            rows: with flat ``(num_tokens,)`` inputs, compute logits only at these rows (what the engine samples).

        Returns:
            ``(*input_ids.shape, vocab_size)`` float logits (the output layer is the token embedding, tied), or
            ``(len(rows), vocab_size)``.

        Raises:
            ValueError: a position past ``n_positions`` or a token id outside the vocabulary.
        """
        cfg = self.config
        positions = check_inputs(input_ids, positions, cfg.vocab_size, cfg.n_positions)
        x = self.wte(input_ids) + self.wpe(positions)
        for layer, block in enumerate(self.blocks):
            x = block(x, layer, attention)
        return self.ln_f(x if rows is None else x[rows]) @ self.wte.weight.T

    @classmethod
    def from_gpt2(cls, hf_model: nn.Module) -> TinyGPT:
        """Copy the weights of a Hugging Face ``transformers.GPT2LMHeadModel`` (no download: pass a model).

        The returned model is in eval mode, in the HF model's dtype and on its device.

        Raises:
            ValueError: a configuration TinyGPT does not implement (see :meth:`GPTConfig.from_hf`).
        """
        return cls.from_checkpoint(hf_model.config, hf_model.state_dict())

    @classmethod
    def from_checkpoint(cls, hf_config: object, hf_weights: dict[str, torch.Tensor]) -> TinyGPT:
        """A model holding ``hf_weights``, a ``GPT2LMHeadModel`` state dict (``transformer.h.0.attn.c_attn.weight``
        ..., with or without the ``transformer.`` prefix), sized by ``hf_config`` (the registry's entry point).

        GPT-2 stores its linear layers as ``Conv1D`` with ``(in, out)`` weights, the transpose of ``nn.Linear``'s
        ``(out, in)``. The tensors are copied; the model is in eval mode, in their dtype and on their device.

        Raises:
            ValueError: a configuration TinyGPT does not implement, or a missing, unexpected or misshapen weight.
        """
        config = GPTConfig.from_hf(hf_config)
        renames = {"attn.c_attn": "c_attn", "attn.c_proj": "attn_proj", "mlp.c_fc": "c_fc", "mlp.c_proj": "mlp_proj"}
        ours = {}
        for name, tensor in hf_weights.items():
            name = name.removeprefix("transformer.")
            if name == "lm_head.weight" or name.endswith((".attn.bias", ".attn.masked_bias")):
                continue                                    # the tied embedding; old checkpoints' causal masks
            if name.startswith("h."):
                name = "blocks." + name[2:]
                for theirs, mine in renames.items():
                    if f".{theirs}.weight" in name:
                        tensor = tensor.T
                    name = name.replace(f".{theirs}.", f".{mine}.")
            ours[name] = tensor
        return load_weights(cls, config, ours)
