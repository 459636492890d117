"""Attention in plain PyTorch: the references every later part of the course is tested against.

* :func:`naive_attention` writes the definition out, ``softmax(Q Kᵀ · sm_scale) V``, and materializes the
  ``n_q × n_k`` score matrix: simple, exact, and quadratic in memory.
* :func:`chunked_attention_without_rescaling` is a common mistake (a softmax per key chunk, the chunks
  summed): kept so the course can show it is wrong, never use it.
* :func:`tiled_attention` is FlashAttention-2's forward algorithm (Dao, 2023, Algorithm 1) in PyTorch:
  query tiles in the outer loop, key tiles in the inner loop, a running max ``m``, a running sum ``l`` and
  a rescaled accumulator, so no ``n_q × n_k`` matrix ever exists. It is the oracle of the Triton kernel.
* :func:`gather_kv` and :func:`paged_decode_reference` are decode attention over a paged KV cache, the slow and
  obvious way (gather each sequence's K/V through its block table, then the definition): the oracle of the
  paged Triton kernel.
* :func:`max_error` compares results that may hold infinities (pattern first, then values).
* :func:`peak_tensor_bytes` measures the peak bytes of tensors a function allocates, on any device.

What the two algorithms move to and from HBM is modelled beside attention's FLOPs, in
:func:`pagedlab.roofline.attention_hbm_traffic`.

Conventions shared by the functions here:

* ``q`` is ``(batch, heads, n_q, d)``, ``k`` and ``v`` are ``(batch, heads, n_k, d)``; a 2-D ``(seq, d)``
  input is accepted for teaching, and the result then has no batch or head dimensions either.
* ``sm_scale``, the softmax scale (the name the kernels and Triton's tutorial use), defaults to ``d ** -0.5``.
* ``causal=True`` hides the keys after each query, aligned bottom-right as in FlashAttention-2: query row
  ``i`` sees key ``j`` when ``j <= i + n_k - n_q``. With ``n_q <= n_k`` every query sees at least one key.
  With ``n_q > n_k`` the first ``n_q - n_k`` queries see none: their output is defined as 0 and their
  ``lse`` as ``-inf`` (the log of an empty sum), where a plain softmax would give NaN. FlashAttention-2's
  CUDA kernels write ``+inf`` there instead, so that their backward's ``exp(S - lse)`` is 0 without a mask,
  and ``-inf`` only in the partial results of split-KV, which are merged by their lse
  (``csrc/flash_attn/src/softmax.h``, ``normalize_softmax_lse``: ``Split ? -INFINITY : INFINITY``). Our
  backward masks those rows instead, and ``-inf`` merges like split-KV's partials.
* Scores, softmax and accumulation are computed in float32 (float64 inputs stay float64); the output has
  the input dtype.
"""

from __future__ import annotations

import math
import weakref
from typing import Any, Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from pagedlab.trace import TileStep, TileTrace, tile_kind
from pagedlab.validate import blocks_for, check_count, check_same_dtype, check_scale, check_tensor

# ----------------------------------------------------------------------------------------------------
# Input checks: one place, so every function rejects bad input with the same clear message (and the
# package's rule for TypeError vs ValueError, see pagedlab.validate).


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, sm_scale: float | None) -> float:
    """Validate ``q``, ``k``, ``v`` and ``sm_scale``; return the softmax scale to use."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, t, (2, 4), "(batch, heads, seq, head_dim) or (seq, head_dim)")
        if not t.is_floating_point():
            raise TypeError(f"{name} must have a floating dtype (float32, float16, bfloat16, float64), got {t.dtype}")
        if t.shape[-2] == 0 or t.shape[-1] == 0:
            raise ValueError(f"{name} must have at least one position and one feature, got shape {tuple(t.shape)}")
    for name, t in (("k", k), ("v", v)):
        if t.dim() != q.dim():
            raise ValueError(f"{name} has {t.dim()} dimensions but q has {q.dim()}; give all three the same rank")
        if t.shape[:-2] != q.shape[:-2]:
            raise ValueError(f"{name} has batch/head dimensions {tuple(t.shape[:-2])} but q has {tuple(q.shape[:-2])}")
        if t.shape[-1] != q.shape[-1]:
            raise ValueError(f"{name} has head dim {t.shape[-1]} but q has head dim {q.shape[-1]}; "
                             f"q, k and v must share one head dim")
        if t.device != q.device:
            raise ValueError(f"{name} is on {t.device} but q is on {q.device}; move them to one device")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(f"v has {v.shape[-2]} positions but k has {k.shape[-2]}; every key needs one value")
    check_same_dtype(q=q, k=k, v=v)
    return check_scale("sm_scale", sm_scale, q.shape[-1] ** -0.5)


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    # Half precision loses too much in exp and in long sums; float64 inputs keep their precision.
    return torch.float64 if dtype == torch.float64 else torch.float32


def causal_mask(n_q: int, n_k: int, device: torch.device | str | None = None) -> torch.Tensor:
    """The causal mask, aligned bottom-right: ``mask[i, j]`` is True when query ``i`` may see key ``j``.

    Query ``i`` sees keys ``j <= i + n_k - n_q``, so the last query sees every key (the usual decoding
    setup: ``n_q`` new tokens appended after ``n_k - n_q`` cached ones). For ``n_q == n_k`` this is the
    lower triangle including the diagonal.

    Returns:
        A ``(n_q, n_k)`` bool tensor.
    """
    n_q, n_k = check_count("n_q", n_q, 1), check_count("n_k", n_k, 1)
    rows = torch.arange(n_q, device=device).unsqueeze(1)
    cols = torch.arange(n_k, device=device).unsqueeze(0)
    return cols <= rows + (n_k - n_q)


# ----------------------------------------------------------------------------------------------------
# The definition, with the whole score matrix.


def attention_scores(q: torch.Tensor, k: torch.Tensor, causal: bool = False,
                     sm_scale: float | None = None) -> torch.Tensor:
    """The scaled score matrix ``Q Kᵀ · sm_scale`` in float32, with hidden keys set to ``-inf``.

    Args:
        q: ``(batch, heads, n_q, d)`` or ``(n_q, d)``. k: the same with ``n_k`` positions.
        causal, sm_scale: see the module docstring.

    Returns:
        ``(..., n_q, n_k)`` float32 scores (float64 for float64 inputs). ``torch.logsumexp`` of a row
        is that row's ``lse``.

    Raises:
        ValueError, TypeError: bad shapes, dtypes or sm_scale (the message names the argument).
    """
    sm_scale = _check_qkv(q, k, k, sm_scale)
    dtype = _compute_dtype(q.dtype)
    s = (q.to(dtype) @ k.to(dtype).transpose(-2, -1)) * sm_scale
    if causal:
        s = s.masked_fill(~causal_mask(q.shape[-2], k.shape[-2], device=q.device), float("-inf"))
    return s


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                    sm_scale: float | None = None, return_weights: bool = False
                    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Attention as defined, ``softmax(Q Kᵀ · sm_scale) V``, with the full ``n_q × n_k`` matrix in memory.

    Args:
        q: ``(batch, heads, n_q, d)`` or ``(n_q, d)``. k, v: the same with ``n_k`` positions.
        causal: hide keys after each query (bottom-right aligned, see the module docstring).
        sm_scale: multiplies the scores; default ``d ** -0.5``.
        return_weights: also return the attention weights.

    Returns:
        ``out`` like ``q`` (same shape, dtype and device), or ``(out, weights)`` with ``weights`` the
        ``(..., n_q, n_k)`` float32 softmax (rows sum to one; rows that see no key are all zero).

    Raises:
        ValueError, TypeError: bad shapes, dtypes or sm_scale (the message names the argument).
    """
    _check_qkv(q, k, v, sm_scale)
    s = attention_scores(q, k, causal, sm_scale)
    if causal and q.shape[-2] > k.shape[-2]:
        # softmax of an all -inf row is 0/0 = NaN. Such a row attends to nothing (see the module docstring):
        # give it finite scores, then zero its weights, so neither the output nor its gradient is NaN.
        blind = ~causal_mask(q.shape[-2], k.shape[-2], device=q.device).any(dim=-1, keepdim=True)
        weights = torch.softmax(s.masked_fill(blind, 0.0), dim=-1).masked_fill(blind, 0.0)
    else:
        weights = torch.softmax(s, dim=-1)
    out = (weights @ v.to(weights.dtype)).to(q.dtype)
    return (out, weights) if return_weights else out


# ----------------------------------------------------------------------------------------------------
# A common wrong tiling (a softmax per key chunk), which is not attention.


def chunked_attention_without_rescaling(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                                        sm_scale: float | None = None, block_n: int = 64) -> torch.Tensor:
    """WRONG on purpose: a softmax over each chunk of ``block_n`` keys, and the chunks' outputs summed.

    This is a tiling often published as "flash chunk attention". Each chunk's weights sum to one,
    so a row that sees ``c`` chunks gets weights summing to ``c``, and every chunk is normalized by its own
    maximum and sum instead of the row's. It equals attention only when a row sees a single chunk.
    :func:`tiled_attention` shows the fix: carry the running max and sum across chunks and rescale.

    Args and Returns: as :func:`naive_attention` (without ``return_weights``); ``block_n`` is the chunk size.
    A chunk whose keys are all hidden from a row contributes nothing to it (the article never visits it).
    """
    block_n = check_count("block_n", block_n, 1)
    sm_scale = _check_qkv(q, k, v, sm_scale)
    dtype = _compute_dtype(q.dtype)
    s = attention_scores(q, k, causal, sm_scale)
    out = torch.zeros(q.shape, dtype=dtype, device=q.device)
    for start in range(0, k.shape[-2], block_n):
        chunk = slice(start, start + block_n)
        weights = torch.softmax(s[..., chunk], dim=-1).nan_to_num(0.0)  # all-hidden chunk: NaN -> nothing
        out += weights @ v[..., chunk, :].to(dtype)
    return out.to(q.dtype)


# ----------------------------------------------------------------------------------------------------
# FlashAttention-2, tile by tile.


def tiled_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                    sm_scale: float | None = None, block_m: int = 64, block_n: int = 64,
                    trace: TileTrace | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact attention computed tile by tile with an online softmax (FlashAttention-2, Algorithm 1).

    For each tile of ``block_m`` queries, walk the tiles of ``block_n`` keys keeping, per query row, the
    running max ``m`` of the scores seen so far, the running sum ``l`` of ``exp(score - m)`` and the
    accumulator ``acc = Σ exp(score - m) · v``. When a new tile raises the max from ``m`` to ``m_new``,
    the old ``l`` and ``acc`` were computed relative to ``m``, so both are multiplied by
    ``exp(m - m_new)`` before the tile is added. Only at the end is ``acc`` divided by ``l``. With
    ``causal``, tiles entirely above the diagonal are never visited and only tiles that straddle it
    are masked (see :func:`pagedlab.trace.tile_kind`).

    Args:
        q: ``(batch, heads, n_q, d)`` or ``(n_q, d)``. k, v: the same with ``n_k`` positions.
        causal, sm_scale: see the module docstring.
        block_m, block_n: query and key tile sizes, any positive ints (need not divide the lengths).
        trace: optional :class:`~pagedlab.trace.TileTrace`; it is restarted and then records every visited
            tile of the first (batch, head), with ``m``, ``l`` and the partial output ``acc / l``.

    Returns:
        ``(out, lse)``: ``out`` like ``q``; ``lse`` ``(batch, heads, n_q)`` (or ``(n_q,)``) float32
        (float64 for float64 inputs), the natural-log ``logsumexp`` of each row of scaled scores,
        ``m + log(l)``, which the backward pass needs. Rows that see no key get 0 and ``-inf``.

    Raises:
        ValueError, TypeError: bad shapes, dtypes, sm_scale or tile sizes (the message names the argument).
    """
    block_m, block_n = check_count("block_m", block_m, 1), check_count("block_n", block_n, 1)
    sm_scale = _check_qkv(q, k, v, sm_scale)
    if trace is not None and not isinstance(trace, TileTrace):
        raise TypeError(f"trace must be a pagedlab.trace.TileTrace or None, got {type(trace).__name__}")
    n_q, n_k = q.shape[-2], k.shape[-2]
    dtype = _compute_dtype(q.dtype)
    out = torch.empty(q.shape, dtype=dtype, device=q.device)
    lse = torch.empty(q.shape[:-1], dtype=dtype, device=q.device)
    if trace is not None:
        trace.start(n_q, n_k, block_m, block_n, causal, source="tiled_attention")
    first = (0,) * (q.dim() - 2)  # the (batch, head) the trace follows

    for i, r0 in enumerate(range(0, n_q, block_m)):
        rows = slice(r0, min(r0 + block_m, n_q))
        q_i = q[..., rows, :].to(dtype)
        m = torch.full(q_i.shape[:-1], float("-inf"), dtype=dtype, device=q.device)
        l = torch.zeros_like(m)
        acc = torch.zeros_like(q_i)
        for j, c0 in enumerate(range(0, n_k, block_n)):
            kind = tile_kind(i, j, n_q, n_k, block_m, block_n, causal)
            if kind == "skipped":
                break  # every later key tile is further above the diagonal
            cols = slice(c0, min(c0 + block_n, n_k))
            s = (q_i @ k[..., cols, :].to(dtype).transpose(-2, -1)) * sm_scale
            if kind == "masked":
                visible = torch.arange(c0, cols.stop, device=q.device) <= \
                    torch.arange(rows.start, rows.stop, device=q.device).unsqueeze(1) + (n_k - n_q)
                s = s.masked_fill(~visible, float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1))
            # A row that has seen no visible key yet has m_new = -inf; exp(-inf - (-inf)) would be NaN.
            # Subtracting 0 instead gives exp(-inf) = 0: no weight, no NaN.
            m_ref = m_new.masked_fill(m_new == float("-inf"), 0.0)
            p = torch.exp(s - m_ref.unsqueeze(-1))
            alpha = torch.exp(m - m_ref)  # rescales what was summed relative to the old max
            l = alpha * l + p.sum(dim=-1)
            acc = alpha.unsqueeze(-1) * acc + p @ v[..., cols, :].to(dtype)
            m = m_new
            if trace is not None:
                partial = acc[first] / l[first].unsqueeze(-1)
                trace.record(TileStep(i, j, kind, m=tuple(m[first].tolist()), l=tuple(l[first].tolist()),
                                      out=tuple(map(tuple, partial.nan_to_num(0.0).tolist()))))
        seen = l > 0  # rows that saw at least one key; the others output 0 and lse -inf
        normalized = acc / l.clamp_min(torch.finfo(dtype).tiny).unsqueeze(-1)
        out[..., rows, :] = torch.where(seen.unsqueeze(-1), normalized, 0.0)
        lse[..., rows] = torch.where(seen, m + torch.log(l), float("-inf"))
    return out.to(q.dtype), lse


def max_error(got: torch.Tensor, want: torch.Tensor) -> float:
    """Largest ``|got - want|``, for results that may hold infinities (an ``lse`` of ``-inf``): first the pattern,
    then the values.

    Returns ``inf`` when either holds a NaN, or when they are not infinite at the same places with the same
    sign (a kernel returning NaN or ``-inf`` everywhere must not pass); else the largest difference over the
    finite entries (0.0 if there are none).

    Raises:
        ValueError: different shapes.
    """
    if got.shape != want.shape:
        raise ValueError(f"got has shape {tuple(got.shape)} and want {tuple(want.shape)}; they must match")
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    if got.isnan().any() or want.isnan().any():
        return math.inf
    if not torch.equal(got.isinf(), want.isinf()) or not torch.equal(got[got.isinf()], want[want.isinf()]):
        return math.inf
    finite = got.isfinite()
    return (got[finite] - want[finite]).abs().max().item() if finite.any() else 0.0


# ----------------------------------------------------------------------------------------------------
# Paged decode: gather each sequence's K/V through its block table, then attention as defined (the
# oracle of the paged Triton kernel, pagedlab.kernels.paged_attention).


def gather_kv(k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor, context_len: int
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """One sequence's K and V as contiguous tensors, gathered through its block table (in PyTorch).

    Args:
        k_cache, v_cache: ``(num_blocks, block_size, kv_heads, head_dim)``.
        block_table: ``(max_blocks_per_seq,)`` integer tensor; only its first ``ceil(context_len / block_size)``
            entries are read.
        context_len: tokens of the sequence (>= 1).

    Returns:
        ``(k, v)``, each ``(context_len, kv_heads, head_dim)``, tokens in order.
    """
    block_size = k_cache.shape[1]
    owned = block_table[: blocks_for(context_len, block_size)].long()  # the padding after them is never touched
    k = k_cache[owned].flatten(0, 1)[:context_len]
    v = v_cache[owned].flatten(0, 1)[:context_len]
    return k, v


def paged_decode_reference(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_tables: torch.Tensor,
                           context_lens: torch.Tensor, sm_scale: float | None = None) -> torch.Tensor:
    """What :func:`~pagedlab.kernels.paged_attention.paged_decode_attention` computes, the slow and obvious way:
    for each sequence, gather its K/V (:func:`gather_kv`), repeat the K/V heads for GQA, and run
    :func:`naive_attention`.

    Arguments and result as the kernel's, without its checks; any float dtype (float32
    math for half inputs, float64 stays float64: the tests' oracle).
    """
    group = q.shape[1] // k_cache.shape[2]
    out = torch.empty_like(q)
    for s, n in enumerate(context_lens.tolist()):
        k, v = gather_kv(k_cache, v_cache, block_tables[s], n)
        # (n, kv_heads, d) -> (heads, n, d): query head h reads K/V head h // group.
        k, v = (t.transpose(0, 1).repeat_interleave(group, dim=0) for t in (k, v))
        out[s] = naive_attention(q[s, None, :, None, :], k[None], v[None], sm_scale=sm_scale)[0, :, 0, :]
    return out


# ----------------------------------------------------------------------------------------------------
# What each algorithm holds in memory (its HBM traffic is modelled in pagedlab.roofline).


class _LiveTensorBytes(TorchDispatchMode):
    """Counts the bytes of storages that operators create while the mode is active, and their peak.

    Every operator's output goes through ``__torch_dispatch__``; a storage is counted when it first
    appears there and uncounted when the last tensor seen using it is garbage collected. Storages that
    existed before (the inputs) and views of them are not counted.
    """

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, list[int]] = {}  # storage address -> [nbytes, tensors alive that use it]
        self.outside: set[int] = set()
        self.now = self.peak = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        for t in tree_flatten((args, kwargs))[0]:
            if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in self.live:
                self.outside.add(t.untyped_storage().data_ptr())
        result = func(*args, **kwargs)
        for t in tree_flatten(result)[0]:
            if not isinstance(t, torch.Tensor):
                continue
            storage = t.untyped_storage()
            address = storage.data_ptr()
            if address in self.outside or storage.nbytes() == 0:
                continue
            entry = self.live.setdefault(address, [storage.nbytes(), 0])
            if entry[1] == 0:
                self.now += entry[0]
                self.peak = max(self.peak, self.now)
            entry[1] += 1
            weakref.finalize(t, self._release, address)
        return result

    def _release(self, address: int) -> None:
        entry = self.live[address]
        entry[1] -= 1
        if entry[1] == 0:
            self.now -= entry[0]
            del self.live[address]


def peak_tensor_bytes(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> int:
    """Peak bytes of the tensors ``fn(*args, **kwargs)`` allocates, alive at the same time, on any device.

    It watches every PyTorch operator ``fn`` runs and adds up the storages they create until they are
    freed, so it measures on the CPU (where ``torch.cuda.max_memory_allocated`` does not exist and
    ``tracemalloc`` does not see PyTorch's allocator) the same way on every machine. Inputs that
    existed before the call are not counted; the result of ``fn`` is (it is alive at the end).
    On a GPU, ``torch.cuda.max_memory_allocated`` should agree up to the allocator's rounding.
    """
    counter = _LiveTensorBytes()
    with counter:
        result = fn(*args, **kwargs)
    del result
    return counter.peak
