"""Which addresses a Triton kernel reads, program by program, recorded in Triton's interpreter.

A kernel that loads memory it must not (a padding entry of a block table, a stale slot past a context) can still
compute the right output when a later mask hides the value. Only the loads themselves show it: this runs the kernel
in the interpreter, on CPU tensors, whatever the device, and records every element each program's loads read.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import Callable, Iterator

import numpy as np
import torch


@contextlib.contextmanager
def recorded(kernel) -> Iterator[tuple[object, dict[tuple[int, ...], list[np.ndarray]]]]:
    """``kernel`` as an interpreted function to launch (``k[grid](...)``, CPU tensors), and what its loads read.

    Args:
        kernel: a ``@triton.jit`` function (compiled or already interpreted).

    Yields:
        ``(interpreted kernel, reads)``, reads being ``{program id (x, y, z): [addresses read by each load, in
        order]}``, filled as the kernel runs; the addresses are those of the elements a load's mask let through
        (``uint64`` arrays).
    """
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    original = builder.create_masked_load
    reads: dict[tuple[int, ...], list[np.ndarray]] = defaultdict(list)

    def recording_load(ptrs, mask, *rest, **options):  # (Triton 3.6 passes 6 arguments, later ones 5)
        data = np.atleast_1d(ptrs.data)
        taken = np.broadcast_to(np.atleast_1d(mask.data).astype(bool), data.shape)
        reads[tuple(builder.grid_idx)].append(data[taken].astype(np.uint64))
        return original(ptrs, mask, *rest, **options)

    builder.create_masked_load = recording_load
    try:
        yield interpreter.InterpretedFunction(kernel.fn), reads
    finally:
        builder.create_masked_load = original


@contextlib.contextmanager
def interpreted(launcher: Callable, kernel) -> Iterator[dict[tuple[int, ...], list[np.ndarray]]]:
    """Run ``launcher``'s ``kernel`` in Triton's interpreter while inside, and record what its loads read.

    Args:
        launcher: the Python function that launches ``kernel`` by its global name (``kernel[grid](...)``).
        kernel: a ``@triton.jit`` function (compiled or already interpreted).

    Yields:
        The reads, as :func:`recorded` gives them, filled as the launcher runs.
    """
    name = kernel.__name__
    namespace = launcher.__globals__
    if namespace.get(name) is not kernel:
        raise ValueError(f"{launcher.__name__} does not launch {name} by its global name")
    with recorded(kernel) as (interpreted_kernel, reads):
        namespace[name] = interpreted_kernel
        try:
            yield reads
        finally:
            namespace[name] = kernel


def elements(addresses: np.ndarray, tensor: torch.Tensor) -> np.ndarray:
    """The indices ``(n, tensor.dim())`` of the elements of contiguous ``tensor`` among ``addresses``."""
    base, size = tensor.data_ptr(), tensor.element_size()
    offsets = addresses.astype(np.int64) - base
    inside = (offsets >= 0) & (offsets < tensor.numel() * size)
    return np.stack(np.unravel_index(offsets[inside] // size, tuple(tensor.shape)), axis=-1)
