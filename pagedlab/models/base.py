"""What every model of the course shares: the attention callable it is given, its sizes, its input checks.

A model family (:mod:`pagedlab.models.tiny_gpt`, :mod:`pagedlab.models.llama`) builds on these and adds one
line to :data:`pagedlab.models.registry.FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from pagedlab.validate import check_count

Attention = Callable[[int, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class ModelSizes:
    """The sizes every model of the course has, and all the engine reads of a config besides ``n_kv_heads`` and
    ``head_dim`` (which each model defines its own way).

    Attributes:
        vocab_size, n_positions: token ids ``0 .. vocab_size - 1``, positions ``0 .. n_positions - 1``.
        d_model: width of the residual stream. n_layers, n_heads: blocks, and query heads per block.

    Raises:
        ValueError: a size that is not a positive int (the message names it).
    """

    vocab_size: int = 256
    n_positions: int = 256
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4

    def __post_init__(self) -> None:
        check_positive_fields(self, ("vocab_size", "n_positions", "d_model", "n_layers", "n_heads"))


def check_positive_fields(config: object, names: tuple[str, ...]) -> None:
    """Raise for the first of ``names`` whose attribute of ``config`` is not a positive int, naming it
    (:func:`~pagedlab.validate.check_count`: ``TypeError`` for a non-int, ``ValueError`` below 1)."""
    for name in names:
        check_count(name, getattr(config, name), 1)


def check_inputs(input_ids: torch.Tensor, positions: torch.Tensor | None, vocab_size: int, n_positions: int
                 ) -> torch.Tensor:
    """A model's input check: the positions (default ``0 .. seq - 1``, shaped like ``input_ids``), validated.

    Raises:
        ValueError: a token id outside ``0 .. vocab_size - 1`` or a position past ``n_positions``.
    """
    if positions is None:
        positions = torch.arange(input_ids.shape[-1], device=input_ids.device).expand_as(input_ids)
    if input_ids.numel() and (int(input_ids.min()) < 0 or int(input_ids.max()) >= vocab_size):
        raise ValueError(f"input_ids must be token ids in 0 .. {vocab_size - 1}")
    if positions.numel() and int(positions.max()) >= n_positions:
        raise ValueError(f"position {int(positions.max())} is past the model's n_positions={n_positions}")
    return positions


def load_weights(cls: Callable[[ModelSizes], nn.Module], config: ModelSizes, weights: dict[str, torch.Tensor]
                 ) -> nn.Module:
    """``cls(config)`` holding ``weights`` (already under the model's own parameter names), in eval mode, in the
    weights' dtype and on their device. The model is built on the meta device first, so no time goes into
    drawing random weights that the copy overwrites; the tensors are copied.

    Raises:
        ValueError: a missing, unexpected or misshapen weight (the message names it).
    """
    with torch.device("meta"):
        model = cls(config)
    first = next(iter(weights.values()))
    model = model.to_empty(device=first.device).to(first.dtype)
    try:
        model.load_state_dict(weights, strict=True)
    except RuntimeError as e:
        raise ValueError(f"the weights do not fit a {getattr(cls, '__name__', cls)} of {config}: {e}") from e
    return model.eval()

