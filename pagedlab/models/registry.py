"""Which model class serves a checkpoint: the Hugging Face config's ``architectures`` names its family.

A family is a class with ``from_checkpoint(hf_config, hf_weights)`` (:class:`ModelFamily`). Adding one is a
module beside :mod:`pagedlab.models.llama` and one line in :data:`FAMILIES`; the loader builds every model
through :func:`build`.
"""

from __future__ import annotations

from typing import Protocol

import torch
from torch import nn

from pagedlab.models.llama import Llama
from pagedlab.models.qwen2 import Qwen2
from pagedlab.models.tiny_gpt import TinyGPT


class ModelFamily(Protocol):
    """What the registry needs of a model class."""

    @classmethod
    def from_checkpoint(cls, hf_config: object, hf_weights: dict[str, torch.Tensor]) -> nn.Module: ...


FAMILIES: dict[str, type[ModelFamily]] = {
    "GPT2LMHeadModel": TinyGPT,
    "LlamaForCausalLM": Llama,
    "Qwen2ForCausalLM": Qwen2,
}
"""Hugging Face architecture name -> the course's model class."""


def family(hf_config: object) -> type[ModelFamily]:
    """The model class of a Hugging Face config, found by the first of its ``architectures`` that is registered.

    Raises:
        ValueError: a config without ``architectures``, or none of them registered (the message lists both).
    """
    names = list(getattr(hf_config, "architectures", None) or [])
    for name in names:
        if name in FAMILIES:
            return FAMILIES[name]
    raise ValueError(f"the config's architectures {names} name no model family of pagedlab; known: "
                     f"{sorted(FAMILIES)} (a new family is a module in pagedlab/models and a line in FAMILIES)")


def build(hf_config: object, hf_weights: dict[str, torch.Tensor]) -> nn.Module:
    """The course's model for a checkpoint: its family's ``from_checkpoint(hf_config, hf_weights)``, in eval mode.

    Raises:
        ValueError: as :func:`family`, and the family's own for a configuration or weights it cannot take.
    """
    return family(hf_config).from_checkpoint(hf_config, hf_weights)
