"""Every setting of the engine in one place, with its default and its check: :class:`EngineConfig`.

vLLM gathers its settings in ``EngineArgs`` (``vllm/engine/arg_utils.py``) and builds its configs from them;
here one frozen dataclass plays that part. :class:`~pagedlab.engine.LLM` and
:class:`~pagedlab.engine.LLMEngine` take the same keyword arguments and build it, so each default is written
once and a bad value is refused with the name the user passed.

The KV pool is sized as vLLM sizes it, unless ``num_blocks`` is given (vLLM's ``num_gpu_blocks_override``):

* on a GPU, ``gpu_memory_utilization`` (default 0.9) of the device's memory, less what is allocated already (the
  weights) and :data:`ACTIVATION_RESERVE` for a step's activations;
* on a CPU, ``kv_cache_space`` GiB, vLLM's CPU backend's ``VLLM_CPU_KVCACHE_SPACE``. pagedlab's default is
  :data:`CPU_KV_CACHE_SPACE` GiB (vLLM's is larger; course machines are shared);

never more blocks than ``max_num_seqs`` sequences of ``max_model_len`` tokens could fill at once, and never fewer
than one sequence of ``max_model_len`` tokens needs (then the error says what to change). ``max_model_len``
defaults to the model's ``n_positions``. ``swap_space`` GiB (or ``num_cpu_blocks``) sizes the CPU pool that
``preemption="swap"`` moves blocks to.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import torch

from pagedlab.validate import blocks_for, check_count, check_number

GIB = 1 << 30
CPU_KV_CACHE_SPACE = 1.0
"""GiB of KV pool on a CPU by default."""
ACTIVATION_RESERVE = 1.0
"""GiB left free on a GPU for a step's activations when the pool is sized from ``gpu_memory_utilization``."""

Batching = Literal["continuous", "static"]


@dataclass(frozen=True)
class EngineConfig:
    """The engine's settings (vLLM's names where vLLM has the setting); build it with :meth:`create`.

    Attributes:
        max_model_len: the longest sequence, prompt and output (default: the model's ``n_positions``).
        block_size: tokens per KV block (vLLM's default, 16).
        num_blocks: GPU blocks in the pool (None: sized from memory, see the module docstring).
        gpu_memory_utilization: fraction of a GPU's memory the engine may use (vLLM's default, 0.9).
        kv_cache_space: GiB of KV pool on a CPU (None: :data:`CPU_KV_CACHE_SPACE`).
        swap_space: GiB of CPU pool for preemption by swapping (ignored when ``num_cpu_blocks`` is given).
        num_cpu_blocks: CPU blocks for preemption by swapping (None: from ``swap_space``).
        max_num_seqs: most sequences in one step.
        max_num_batched_tokens: most tokens in one step, at least ``max_num_seqs``.
        enable_chunked_prefill: cut prefills to the budget a step has left (on by default, as vLLM V1); off, a
            sequence's whole prefill (a recomputation included) must fit in ``max_num_batched_tokens``.
        enable_prefix_caching: reuse the K/V of full blocks whose whole prefix was computed before (off by
            default here; vLLM V1 turns it on).
        preemption: ``"recompute"`` or ``"swap"`` (needs a CPU pool).
        watermark: fraction of the GPU pool admission leaves free for running sequences (vLLM v0's 1%).
        attention_backend: ``"auto"``, ``"torch"``, ``"triton"`` or a decode function
            (:func:`~pagedlab.engine.backends.select_backend`).
        batching: ``"continuous"`` (requests join and leave every step) or ``"static"`` (a batch of requests
            runs to its last finish before the next starts, each holding ``static_max_len`` tokens of the pool).
        static_max_len: tokens a static batch reserves per request (None: ``max_model_len``).
        seed: seeds the seeds that requests without one get (None: fresh randomness), vLLM's ``seed``.
    """

    max_model_len: int
    num_blocks: int
    block_size: int = 16
    num_cpu_blocks: int = 0
    max_num_seqs: int = 64
    max_num_batched_tokens: int = 2048
    enable_chunked_prefill: bool = True
    enable_prefix_caching: bool = False
    preemption: Literal["recompute", "swap"] = "recompute"
    watermark: float = 0.01
    attention_backend: object = "auto"
    batching: Batching = "continuous"
    static_max_len: int | None = None
    seed: int | None = None

    @classmethod
    def create(cls, model: torch.nn.Module, *, max_model_len: int | None = None, num_blocks: int | None = None,
               block_size: int = 16, gpu_memory_utilization: float = 0.9, kv_cache_space: float | None = None,
               swap_space: float = 0.0, num_cpu_blocks: int | None = None, max_num_seqs: int = 64,
               max_num_batched_tokens: int = 2048, enable_chunked_prefill: bool = True,
               enable_prefix_caching: bool = False, preemption: str = "recompute", watermark: float = 0.01,
               attention_backend: object = "auto", batching: str = "continuous",
               static_max_len: int | None = None, seed: int | None = None) -> EngineConfig:
        """The settings for ``model`` (a module with a ``config``: ``n_positions``, ``n_layers``, ``n_kv_heads``,
        ``head_dim``; its parameters give the dtype and the device). Arguments as the attributes.

        Raises:
            TypeError: an argument of the wrong kind (named). ValueError: a value out of range (named), or a pool
                that cannot hold one sequence of ``max_model_len`` tokens.
        """
        cfg = model.config
        max_model_len = cfg.n_positions if max_model_len is None else check_count("max_model_len", max_model_len, 1)
        if max_model_len > cfg.n_positions:
            raise ValueError(f"max_model_len={max_model_len} exceeds the model's n_positions={cfg.n_positions}")
        check_count("block_size", block_size, 1)
        check_count("max_num_seqs", max_num_seqs, 1)
        check_count("max_num_batched_tokens", max_num_batched_tokens, 1)
        if max_num_batched_tokens < max_num_seqs:
            raise ValueError(f"max_num_batched_tokens={max_num_batched_tokens} is smaller than max_num_seqs="
                             f"{max_num_seqs}: a step could not give every running sequence its token; raise it "
                             f"or lower max_num_seqs")
        for name, value in (("enable_chunked_prefill", enable_chunked_prefill),
                            ("enable_prefix_caching", enable_prefix_caching)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
        if preemption not in ("recompute", "swap"):
            raise ValueError(f"preemption must be 'recompute' or 'swap', got {preemption!r}")
        if not 0 <= check_number("watermark", watermark) < 1:
            raise ValueError(f"watermark must be in [0, 1), got {watermark!r}")
        if batching not in ("continuous", "static"):
            raise ValueError(f"batching must be 'continuous' or 'static', got {batching!r}")
        if static_max_len is not None:
            check_count("static_max_len", static_max_len, 1)
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
        param = next(model.parameters())
        block_bytes = 2 * cfg.n_layers * block_size * cfg.n_kv_heads * cfg.head_dim * param.element_size()
        if num_blocks is None:
            num_blocks = _blocks_from_memory(param.device, block_bytes, gpu_memory_utilization, kv_cache_space)
            if num_blocks < blocks_for(max_model_len, block_size):
                raise ValueError(f"the KV pool holds {num_blocks * block_size} tokens, fewer than one sequence of "
                                 f"max_model_len={max_model_len}: raise kv_cache_space (GiB, on a CPU) or "
                                 f"gpu_memory_utilization, lower max_model_len, or pass num_blocks")
            num_blocks = min(num_blocks, max_num_seqs * blocks_for(max_model_len, block_size))
        else:
            check_count("num_blocks", num_blocks, 1)
        if num_cpu_blocks is None:
            space = check_number("swap_space", swap_space)
            if not space >= 0:          # NaN too
                raise ValueError(f"swap_space must be >= 0 GiB, got {swap_space!r}")
            num_cpu_blocks = int(space * GIB // block_bytes)
        else:
            check_count("num_cpu_blocks", num_cpu_blocks, 0)
        if preemption == "swap" and not num_cpu_blocks:
            raise ValueError("preemption='swap' needs a CPU pool: pass swap_space (GiB) or num_cpu_blocks > 0")
        config = cls(max_model_len, num_blocks, block_size, num_cpu_blocks, max_num_seqs, max_num_batched_tokens,
                     enable_chunked_prefill, enable_prefix_caching, preemption, float(watermark), attention_backend,
                     batching, static_max_len, seed)
        return config

    @property
    def reserved_len(self) -> int:
        """Tokens a static batch reserves per request."""
        return self.static_max_len or self.max_model_len

    def replace(self, **changes) -> EngineConfig:
        """A copy with ``changes`` (no check: for settings already checked)."""
        return dataclasses.replace(self, **changes)


def _blocks_from_memory(device: torch.device, block_bytes: int, utilization: object, space: object) -> int:
    """Blocks of ``block_bytes`` that the memory rule of the module docstring gives on ``device``."""
    utilization = check_number("gpu_memory_utilization", utilization)
    if not 0 < utilization <= 1:
        raise ValueError(f"gpu_memory_utilization must be in (0, 1], got {utilization!r}")
    if device.type == "cuda":
        total = torch.cuda.get_device_properties(device).total_memory
        free = total * utilization - torch.cuda.memory_allocated(device) - ACTIVATION_RESERVE * GIB
        what = f"gpu_memory_utilization={utilization}"
    else:
        gib = CPU_KV_CACHE_SPACE if space is None else check_number("kv_cache_space", space)
        if not gib > 0:                 # NaN too
            raise ValueError(f"kv_cache_space must be > 0 GiB, got {space!r}")
        free, what = gib * GIB, f"kv_cache_space={gib} GiB"
    blocks = int(max(free, 0) // block_bytes)
    if blocks < 1:
        raise ValueError(f"{what} leaves no room for one KV block of {block_bytes} bytes: raise it, or pass "
                         f"num_blocks")
    return blocks
