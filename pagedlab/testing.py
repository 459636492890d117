"""Test inputs and measures shared by the tests, the notebooks, the exercises and the grading specs.

:func:`random_paged_batch` is a decode batch in a block pool booby-trapped with NaN and inf wherever the paged
kernel must not read, so a kernel that reads one slot too far returns NaN instead of a plausible number.
:func:`exact_huge_scores` gives scores below -1e30 that float32 computes exactly, where a finite stand-in for -inf
shows.
:func:`product_elements` counts the work a tiled attention's matrix products did, whatever it calls them, and
:func:`masking_ops` the masks it applied to score tiles.
"""

from __future__ import annotations

import signal
import threading
import time
import weakref
from collections.abc import Callable, Sequence

import torch
from torch.overrides import TorchFunctionMode

from pagedlab import device
from pagedlab.validate import blocks_for


def random_paged_batch(context_lens: Sequence[int], block_size: int, heads: int, kv_heads: int, head_dim: int,
                       dtype: torch.dtype = torch.float32, *, spare_blocks: int = 3, extra_columns: int = 1,
                       padding: int | str = -1, shuffle: bool = True, poison: bool = True, magnitude: float = 1.0,
                       seed: int = 0
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A random decode batch in a pool booby-trapped with NaN/inf wherever the kernel must not read.

    Each sequence gets ``ceil(n / block_size)`` blocks (a random permutation of the pool with ``shuffle``, else
    in order). With ``poison`` the slots past its context in its last block hold NaN (K) and inf (V), and the
    ``spare_blocks`` blocks nobody owns hold NaN (without, they keep random values). Tables are padded with
    ``extra_columns`` entries of ``padding`` (an int, or ``"spare"``:
    the id of a NaN-filled spare block, the worst garbage a table can hold).

    Returns:
        ``(q, k_cache, v_cache, block_tables, context_lens)`` on ``pagedlab.device.DEVICE``, made on the CPU with a
        seeded generator (the same numbers on every machine); q and K are scaled by ``magnitude``; tables and
        lengths int32.
    """
    g = torch.Generator().manual_seed(seed)
    owned = [blocks_for(n, block_size) for n in context_lens]
    num_blocks = sum(owned) + spare_blocks
    k_cache = torch.randn(num_blocks, block_size, kv_heads, head_dim, generator=g) * magnitude
    v_cache = torch.randn(num_blocks, block_size, kv_heads, head_dim, generator=g)
    order = torch.randperm(num_blocks, generator=g) if shuffle else torch.arange(num_blocks)
    if padding == "spare" and spare_blocks < 1:
        raise ValueError("padding='spare' needs spare_blocks >= 1")
    fill = int(order[-1]) if padding == "spare" else padding
    tables = torch.full((len(context_lens), max(owned) + extra_columns), fill, dtype=torch.int64)
    used = 0
    for s, (n, nb) in enumerate(zip(context_lens, owned)):
        tables[s, :nb] = order[used:used + nb]
        used += nb
        last, tail = int(tables[s, nb - 1]), (n - 1) % block_size + 1
        if poison:
            k_cache[last, tail:] = float("nan")
            v_cache[last, tail:] = float("inf")
    if poison:
        k_cache[order[used:]] = float("nan")
        v_cache[order[used:]] = float("nan")
    q = torch.randn(len(context_lens), heads, head_dim, generator=g) * magnitude
    lens = torch.tensor(list(context_lens), dtype=torch.int32)
    dev = device.DEVICE
    return (q.to(dev, dtype), k_cache.to(dev, dtype), v_cache.to(dev, dtype), tables.to(dev, torch.int32),
            lens.to(dev))


def exact_huge_scores(g: torch.Generator, n_q: int, n_k: int, d: int = 16
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Float32 ``q`` ``(n_q, d)``, ``k`` and ``v`` ``(n_k, d)`` whose scores reach ~1e32 and are computed exactly in any
    order: small integers times 2**50, so each score is an integer times 2**100 times ``1 / sqrt(d)`` (a power of two
    for d = 16). Row 0's visible keys under the causal mask aligned bottom-right (0 .. n_k - n_q, so ``n_q <= n_k``)
    all score below -1e30: a finite stand-in for -inf (a hidden key filled with -1e9 or -1e30, a running max that
    starts there or at 0) is above every one of them."""
    scale = 2.0 ** 50
    q = torch.randint(-3, 4, (n_q, d), generator=g) * scale
    k = torch.randint(-3, 4, (n_k, d), generator=g) * scale
    seen = n_k - n_q + 1
    q[0] = -scale
    k[:seen] = k[:seen].abs().clamp(min=scale)
    return q.float(), k.float(), torch.randn(n_k, d, generator=g)


def within(seconds: float, fn: Callable, *args):
    """``fn(*args)``, raising ``TimeoutError`` after ``seconds`` of wall time (a timer signal where the platform has one
    and this is the main thread; else measured after the call): a bound on work that must not grow with a size."""
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        def expire(signum, frame):
            raise TimeoutError(f"still running after {seconds:g} s")

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return fn(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    start = time.perf_counter()
    result = fn(*args)
    if time.perf_counter() - start > seconds:
        raise TimeoutError(f"took {time.perf_counter() - start:.1f} s")
    return result


class ProductCounter(TorchFunctionMode):
    """Counts, while active, the elements every matrix product produces (``@``, ``matmul``, ``mm``, ``bmm``,
    ``einsum``, ``tensordot``, ``addmm``, ``baddbmm``): the score tiles and P V products a tiled attention computed."""

    PRODUCTS = frozenset(("matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "einsum", "tensordot", "addmm",
                          "baddbmm"))

    def __init__(self) -> None:
        super().__init__()
        self.product_elements = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        self.note_product(func, result)
        return result

    def note_product(self, func, result) -> None:
        if getattr(func, "__name__", "") in self.PRODUCTS and isinstance(result, torch.Tensor):
            self.product_elements += result.numel()


def product_elements(call: Callable[[], object]) -> int:
    """How many elements the matrix products of ``call()`` produced (:class:`ProductCounter`)."""
    with ProductCounter() as counter:
        call()
    return counter.product_elements


def score_tiles(values, floating: bool = True) -> list[torch.Tensor]:
    """The 2-D tensors of more than one column among ``values`` (tuples and lists opened): the float ones (score
    tiles), or with ``floating=False`` the boolean ones (their masks). A tensor of one column is a per-row state."""
    flat = [a for v in values for a in (v if isinstance(v, (tuple, list)) else (v,))]
    return [a for a in flat if isinstance(a, torch.Tensor) and a.dim() == 2 and a.shape[1] > 1
            and (a.is_floating_point() if floating else a.dtype == torch.bool)]


def applies_mask(inputs, result) -> bool:
    """Whether an operation on ``inputs`` that gave ``result`` applied a boolean mask to a score tile: a mask among
    its inputs of the shape of a score tile among its inputs or its results (``masked_fill``, ``where``, item
    assignment, a product with the mask, a tile of ``-inf`` made from the mask), whatever it is called; no value is
    read."""
    tiles = score_tiles([*inputs, result])
    return any(m.shape == t.shape for m in score_tiles(inputs, floating=False) for t in tiles)


class MaskCounter(TorchFunctionMode):
    """Counts, while active, the operations that apply a boolean mask to a score tile (:func:`applies_mask`).

    A mask turned into floats and back is one mask, applied once: ``m = visible.float()`` counts (a tile made from the
    mask), and the first operation whose every mask was made back from ``m`` (``s.masked_fill(m == 0, -inf)``, with
    ``m``'s elementwise derivatives such as ``1 - m``, and the made-back mask's, such as ``~(m > 0)``) is not counted
    again. A slice of ``m`` is a new tile, not ``m``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.masking_ops = 0
        # Float tiles made from a mask, and masks made back from them, each with its origin: [the first counted
        # operation that made a float tile from a mask, not yet paired with an application of a mask made back].
        # Weak references: a tile the call has let go of is not kept alive here (the memory rule counts what is held).
        self._float_masks: list[tuple[weakref.ref, list[bool]]] = []
        self._made_back: list[tuple[weakref.ref, list[bool]]] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        self.note_masks(list(args) + list(kwargs.values()), result)
        return result

    def note_masks(self, inputs, result) -> None:
        masks, floats = score_tiles(inputs, floating=False), score_tiles(inputs)
        if applies_mask(inputs, result):
            origins = [_origin(self._made_back, m) for m in masks]
            if all(o is not None and o[0] for o in origins):
                for o in origins:
                    o[0] = False  # (the float tile it came from was counted: this is the same mask, applied)
            else:
                self.masking_ops += 1
            if not floats:  # float tiles made from the mask alone: the mask in floats
                origin = [True]
                self._float_masks += [(weakref.ref(t), origin) for t in score_tiles([result])]
            return
        # A float mask's elementwise derivatives (1 - m, m * -1e9) stay float masks; a boolean made from one (m == 0,
        # m > 0, m.bool()) is the mask made back, and so are that boolean's own (~b, b & b2 of two made back).
        if floats:
            sources = [o for t in floats if (o := _origin(self._float_masks, t)) is not None]
            complete = len(sources) == len(floats)
        else:
            sources = [o for t in masks if (o := _origin(self._made_back, t)) is not None]
            complete = bool(masks) and len(sources) == len(masks)
        if complete and sources:
            shape = (floats or masks)[0].shape
            if floats:
                self._float_masks += [(weakref.ref(t), sources[0]) for t in score_tiles([result]) if t.shape == shape]
            self._made_back += [(weakref.ref(t), sources[0]) for t in score_tiles([result], floating=False)
                                if t.shape == shape]


def _origin(tiles: list[tuple[weakref.ref, list[bool]]], tensor: torch.Tensor) -> list[bool] | None:
    return next((origin for t, origin in tiles if t() is tensor), None)


def masking_ops(call: Callable[[], object]) -> int:
    """How many operations of ``call()`` applied a boolean mask to a score tile (:class:`MaskCounter`)."""
    with MaskCounter() as counter:
        call()
    return counter.masking_ops
