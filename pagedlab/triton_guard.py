"""A Triton kernel's loads and stores outside every tensor it was given, stopped in the interpreter before they happen.

On a GPU a pointer past every tensor is an illegal address, and the launch fails with an error. In Triton's
interpreter (on a CPU) the same pointer is a plain address in this process: a store writes over whatever lives there
and a load may fault, and the Jupyter kernel dies with no message at all. Inside :func:`guarded`, each load and store
of an interpreted kernel is checked against the memory of the tensors its launch was given, and one that reaches
outside all of them raises :class:`OutOfBounds`, naming the kernel, before it touches memory.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

import numpy as np
import torch


class OutOfBounds(IndexError):
    """A load or store of an interpreted kernel outside every tensor its launch was given (stopped before it ran)."""


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """While inside, every launch of an interpreted Triton kernel on CPU tensors loads and stores only inside them.

    Raises:
        OutOfBounds: from the kernel's load or store (the interpreter wraps it in an error of its own; its
            ``__cause__`` is this one) that would reach memory outside every tensor the launch was given.
    """
    interpreter = sys.modules.get("triton.runtime.interpreter")
    if interpreter is None:  # Triton not imported: nothing is interpreted
        yield
        return
    builder, kernel_class = interpreter.interpreter_builder, interpreter.InterpretedFunction
    launch: list = [None]  # (kernel name, [(start, end) of each tensor's memory]) of the running launch, or None

    def run(fn, *args, **kwargs):
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
        outer = launch[0]
        # a tensor on a GPU is copied to the host by the interpreter: its addresses are not known here, so no guard
        launch[0] = (getattr(getattr(fn, "fn", fn), "__name__", "the kernel"),
                     [(s.data_ptr(), s.data_ptr() + s.nbytes()) for s in (t.untyped_storage() for t in tensors)]
                     ) if all(t.device.type == "cpu" for t in tensors) else None
        try:
            return original_run(fn, *args, **kwargs)
        finally:
            launch[0] = outer

    def outside(ptrs, mask) -> np.ndarray | None:
        """Which lanes of a load or store the mask lets through yet lie outside the launch's tensors (None: all in)."""
        if launch[0] is None:
            return None
        addresses = np.atleast_1d(ptrs.data).astype(np.uint64)
        inside = np.zeros(addresses.shape, dtype=bool)
        for start, end in launch[0][1]:
            inside |= (addresses >= start) & (addresses < end)
        taken = True if mask is None else np.broadcast_to(np.atleast_1d(mask.data).astype(bool), addresses.shape)
        lanes = taken & ~inside
        return lanes if lanes.any() else None

    def guarded_load(ptrs, mask, *args, **kwargs):
        lanes = outside(ptrs, mask)
        if lanes is not None:  # those lanes are read as masked off (their `other`): a check then shows what differs
            mask = interpreter.TensorHandle(np.atleast_1d(mask.data).astype(bool) & ~lanes, mask.dtype)
        return load(ptrs, mask, *args, **kwargs)

    def guarded_store(ptrs, value, mask, *args, **kwargs):
        lanes = outside(ptrs, mask)
        if lanes is not None:
            raise OutOfBounds(_message(launch[0][0], int(lanes.sum()), tuple(builder.grid_idx)))
        return store(ptrs, value, mask, *args, **kwargs)

    original_run, load, store = kernel_class.run, builder.create_masked_load, builder.create_masked_store
    kernel_class.run = run
    builder.create_masked_load, builder.create_masked_store = guarded_load, guarded_store
    try:
        yield
    finally:
        kernel_class.run, builder.create_masked_load, builder.create_masked_store = original_run, load, store


def _message(kernel: str, count: int, program: tuple[int, ...]) -> str:
    return (f"{kernel}'s store in program {program} reaches {count} element(s) outside every tensor the launch was "
            f"given, stopped before it ran (in Triton's interpreter it would write over this process's memory, and "
            f"the kernel could die without a message). A pointer "
            f"moved too far: an index times the wrong stride, two program ids taken the wrong way round, an offset "
            f"added twice, or a mask that lets lanes past the end through")
