"""Argument checks shared by the package: one vocabulary, and one rule for which error a bad argument gets.

The rule:

* ``TypeError``: the argument is the wrong *kind* of thing: not an int where a count is due (a bool is refused
  too: ``block_size=True`` is a bug, not a size), not a number, not a tensor, or a tensor of a dtype the
  operation does not take or that differs from its partners' (a dtype is the type of the elements);
* ``ValueError``: the right kind with a wrong *value*: out of range, not finite, a wrong shape, lengths that do
  not match, a tensor on the wrong device.

Every message names the argument and says what was expected. Plain Python: this module imports nothing from
pagedlab and no torch (a tensor is checked through its ``dtype`` attribute, or, in :func:`check_tensor`,
against the ``torch`` already imported), so the allocator core that uses it stays torch-free.
"""

from __future__ import annotations

import math
import sys
from typing import TypeVar

T = TypeVar("T")


def check_count(name: str, value: object, minimum: int) -> int:
    """Return ``value`` if it is an int >= ``minimum``; else raise an error that names the argument ``name``.

    Raises:
        TypeError: ``value`` is not an int (a bool is refused too). ValueError: ``value < minimum``.
    """
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_number(name: str, value: object) -> float:
    """Return ``value`` as a float if it is an int or a float (a bool is refused: ``top_p=True`` is a bug, not
    1.0); else raise a ``TypeError`` that names the argument ``name``. The caller checks the range.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number (an int or a float), got {type(value).__name__}")
    return float(value)


def check_scale(name: str, value: object, default: float) -> float:
    """The softmax scale to use: ``default`` for None, else ``value`` as a float.

    The caller computes ``default`` (``1 / sqrt(head_dim)``) as it always has: ``d ** -0.5`` and
    ``1 / math.sqrt(d)`` differ in the last bit for some ``d`` (8, 32, 128), and a reference's stored outputs
    should not move by a bit because its checks moved.

    Raises:
        TypeError: ``value`` is not None, an int or a float (a bool is refused). ValueError: it is not positive
            and finite.
    """
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a float or None (default head_dim ** -0.5), got {type(value).__name__}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be positive and finite, got {value}")
    return float(value)


def check_tensor(name: str, value: T, dims: int | tuple[int, ...], shape: str) -> T:
    """Return ``value`` if it is a ``torch.Tensor`` with ``dims`` dimensions (or any of them, for a tuple); else
    raise an error that names the argument ``name`` and the ``shape`` expected, as a reader writes it
    (``"(batch, heads, seq, head_dim)"``).

    Raises:
        TypeError: ``value`` is not a tensor. ValueError: it has another number of dimensions.
    """
    torch = sys.modules.get("torch")  # no import: a tensor exists only once torch is imported
    if torch is None or not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.dim() not in ((dims,) if isinstance(dims, int) else dims):
        raise ValueError(f"{name} must have shape {shape}, got shape {tuple(value.shape)}")
    return value


def check_same_dtype(**tensors: object) -> None:
    """Raise unless the named tensors (the first is the reference) have one ``dtype``.

    Raises:
        TypeError: a tensor's dtype differs from the first one's (the message names both).
    """
    (first, t0), *rest = tensors.items()
    for name, t in rest:
        if t.dtype != t0.dtype:
            raise TypeError(f"{name} has dtype {t.dtype} but {first} has {t0.dtype}; convert them to one dtype")


def blocks_for(n: T, block_size: int) -> T:
    """How many blocks of ``block_size`` hold ``n`` items (tokens, rows, cells): ``ceil(n / block_size)``.

    nano-vllm's ``Sequence.num_blocks``; exact for ints of any size (no float division), and elementwise for an
    integer tensor of counts.
    """
    return -(-n // block_size)
