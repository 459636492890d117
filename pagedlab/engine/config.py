"""Every setting of the engine in one place, with its default and its check: :class:`EngineConfig`.

vLLM gathers its settings in ``EngineArgs`` (``vllm/engine/arg_utils.py``) and builds its configs from them;
here one frozen dataclass plays that part. Its fields are the settings, and their defaults are the only place
each default is written: :class:`~pagedlab.engine.LLM`, :class:`~pagedlab.engine.LLMEngine` and the
:class:`~pagedlab.engine.scheduler.Scheduler` take the same keyword arguments and build it. Building it checks
every setting that does not depend on the model (kinds, ranges, the paged kernel's power-of-two ``block_size``,
unknown names), so :class:`~pagedlab.engine.LLM` refuses a bad setting before it loads the model;
:meth:`EngineConfig.for_model` then fills in what the model decides (``max_model_len``, the pool's size).
This module imports no torch (the scheduler reads it); sizing the pool does, when it runs.

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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pagedlab.validate import blocks_for, check_count, check_number

GIB = 1 << 30
CPU_KV_CACHE_SPACE = 1.0
"""GiB of KV pool on a CPU by default."""
ACTIVATION_RESERVE = 1.0
"""GiB left free on a GPU for a step's activations when the pool is sized from ``gpu_memory_utilization``."""

Batching = Literal["continuous", "static"]
EVICTION_POLICIES = ("lru", "least_often_hit")
"""The prefix cache's eviction policies by name (:mod:`pagedlab.paged.eviction`: ``LRU``, ``LeastOftenHit``)."""


@dataclass(frozen=True)
class EngineConfig:
    """The engine's settings (vLLM's names where vLLM has the setting), checked when built.

    ``EngineConfig(block_size=8, num_blocks=64)`` checks the settings alone; :meth:`for_model` (or
    :meth:`create`) gives the settings for one model, with ``max_model_len``, ``num_blocks`` and
    ``num_cpu_blocks`` filled in.

    Attributes:
        max_model_len: the longest sequence, prompt and output (None: the model's ``n_positions``).
        num_blocks: GPU blocks in the pool (None: sized from memory, see the module docstring).
        block_size: tokens per KV block (vLLM's default, 16); a power of two (the paged decode kernel's rule).
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
        eviction_policy: which cached-free block the prefix cache gives up first: ``"lru"`` (vLLM's),
            ``"least_often_hit"``, or an :class:`~pagedlab.paged.eviction.EvictionPolicy` subclass (one instance
            per engine).
        preemption: ``"recompute"`` or ``"swap"`` (needs a CPU pool).
        watermark: fraction of the GPU pool admission leaves free for running sequences (vLLM v0's 1%).
        attention_backend: ``"auto"``, ``"torch"``, ``"triton"`` or a decode function
            (:func:`~pagedlab.engine.backends.select_backend`).
        batching: ``"continuous"`` (requests join and leave every step) or ``"static"`` (a batch of requests
            runs to its last finish before the next starts, each holding ``static_max_len`` tokens of the pool).
        static_max_len: tokens a static batch reserves per request (None: ``max_model_len``).
        max_logprobs: the most ``logprobs`` and ``prompt_logprobs`` a request may ask for (vLLM's default, 20;
            -1: no limit, needed for ``logprobs=-1``, the whole vocabulary).
        seed: seeds the seeds that requests without one get (None: fresh randomness), vLLM's ``seed``.

    Raises:
        TypeError: a setting of the wrong kind (named). ValueError: a value out of range (named).
    """

    max_model_len: int | None = None
    num_blocks: int | None = None
    block_size: int = 16
    gpu_memory_utilization: float = 0.9
    kv_cache_space: float | None = None
    swap_space: float = 0.0
    num_cpu_blocks: int | None = None
    max_num_seqs: int = 64
    max_num_batched_tokens: int = 2048
    enable_chunked_prefill: bool = True
    enable_prefix_caching: bool = False
    eviction_policy: object = "lru"
    preemption: Literal["recompute", "swap"] = "recompute"
    watermark: float = 0.01
    attention_backend: object = "auto"
    batching: Batching = "continuous"
    static_max_len: int | None = None
    max_logprobs: int = 20
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.max_model_len is not None:
            check_count("max_model_len", self.max_model_len, 1)
        if self.num_blocks is not None:
            check_count("num_blocks", self.num_blocks, 1)
        if check_count("block_size", self.block_size, 1) & (self.block_size - 1):
            raise ValueError(f"block_size must be a power of two (the paged decode kernel's tl.arange needs one), "
                             f"got {self.block_size}")
        utilization = check_number("gpu_memory_utilization", self.gpu_memory_utilization)
        if not 0 < utilization <= 1:                    # NaN too
            raise ValueError(f"gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization!r}")
        if self.kv_cache_space is not None and not check_number("kv_cache_space", self.kv_cache_space) > 0:
            raise ValueError(f"kv_cache_space must be > 0 GiB, got {self.kv_cache_space!r}")
        if not check_number("swap_space", self.swap_space) >= 0:
            raise ValueError(f"swap_space must be >= 0 GiB, got {self.swap_space!r}")
        if self.num_cpu_blocks is not None:
            check_count("num_cpu_blocks", self.num_cpu_blocks, 0)
        check_count("max_num_seqs", self.max_num_seqs, 1)
        check_count("max_num_batched_tokens", self.max_num_batched_tokens, 1)
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ValueError(f"max_num_batched_tokens={self.max_num_batched_tokens} is smaller than max_num_seqs="
                             f"{self.max_num_seqs}: a step could not give every running sequence its token; raise "
                             f"it or lower max_num_seqs")
        for name in ("enable_chunked_prefill", "enable_prefix_caching"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")
        _check_eviction_policy(self.eviction_policy)
        if self.preemption not in ("recompute", "swap"):
            raise ValueError(f"preemption must be 'recompute' or 'swap', got {self.preemption!r}")
        cpu_pool = self.swap_space if self.num_cpu_blocks is None else self.num_cpu_blocks
        if self.preemption == "swap" and not cpu_pool:
            raise ValueError("preemption='swap' needs a CPU pool: pass swap_space (GiB) or num_cpu_blocks > 0")
        if not 0 <= check_number("watermark", self.watermark) < 1:
            raise ValueError(f"watermark must be in [0, 1), got {self.watermark!r}")
        _check_attention_backend(self.attention_backend)
        if self.batching not in ("continuous", "static"):
            raise ValueError(f"batching must be 'continuous' or 'static', got {self.batching!r}")
        if self.static_max_len is not None:
            check_count("static_max_len", self.static_max_len, 1)
        check_count("max_logprobs", self.max_logprobs, -1)
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)):
            raise TypeError(f"seed must be an int or None, got {type(self.seed).__name__}")

    @classmethod
    def names(cls) -> list[str]:
        """The settings' names, in order."""
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_settings(cls, owner: str, settings: Mapping[str, object]) -> EngineConfig:
        """The checked settings from keyword ``settings``; an unknown name is refused with the name of ``owner``
        (the class or function the user called).

        Raises:
            TypeError: a setting ``EngineConfig`` does not have; as the class.
        """
        unknown = sorted(set(settings) - set(cls.names()))
        if unknown:
            raise TypeError(f"{owner} got unknown argument(s) {unknown}; its engine settings are {cls.names()}")
        return cls(**settings)

    @classmethod
    def create(cls, model, **settings) -> EngineConfig:
        """``EngineConfig(**settings).for_model(model)``."""
        return cls.from_settings("EngineConfig.create", settings).for_model(model)

    def for_model(self, model) -> EngineConfig:
        """These settings for ``model`` (a module with a ``config``: ``n_positions``, ``n_layers``,
        ``n_kv_heads``, ``head_dim``; its parameters give the dtype and the device): ``max_model_len``,
        ``num_blocks`` and ``num_cpu_blocks`` filled in.

        Raises:
            ValueError: ``max_model_len`` past the model's ``n_positions``, or a pool sized from memory that cannot
                hold one sequence of ``max_model_len`` tokens.
        """
        cfg = model.config
        max_model_len = cfg.n_positions if self.max_model_len is None else self.max_model_len
        if max_model_len > cfg.n_positions:
            raise ValueError(f"max_model_len={max_model_len} exceeds the model's n_positions={cfg.n_positions}")
        param = next(model.parameters())
        block_bytes = 2 * cfg.n_layers * self.block_size * cfg.n_kv_heads * cfg.head_dim * param.element_size()
        num_blocks = self.num_blocks
        if num_blocks is None:
            num_blocks = _blocks_from_memory(param.device, block_bytes, self.gpu_memory_utilization,
                                             self.kv_cache_space)
            if num_blocks < blocks_for(max_model_len, self.block_size):
                raise ValueError(f"the KV pool holds {num_blocks * self.block_size} tokens, fewer than one sequence "
                                 f"of max_model_len={max_model_len}: raise kv_cache_space (GiB, on a CPU) or "
                                 f"gpu_memory_utilization, lower max_model_len, or pass num_blocks")
            num_blocks = min(num_blocks, self.max_num_seqs * blocks_for(max_model_len, self.block_size))
        num_cpu_blocks = self.num_cpu_blocks
        if num_cpu_blocks is None:
            num_cpu_blocks = int(self.swap_space * GIB // block_bytes)
            if self.preemption == "swap" and not num_cpu_blocks:
                raise ValueError(f"swap_space={self.swap_space} GiB holds no block of {block_bytes} bytes: raise it "
                                 f"or pass num_cpu_blocks")
        return self.replace(max_model_len=max_model_len, num_blocks=num_blocks, num_cpu_blocks=num_cpu_blocks)

    @property
    def reserved_len(self) -> int | None:
        """Tokens a static batch reserves per request."""
        return self.static_max_len or self.max_model_len

    def replace(self, **changes) -> EngineConfig:
        """A copy with ``changes``, checked."""
        return dataclasses.replace(self, **changes)

    def new_eviction_policy(self):
        """A fresh instance of ``eviction_policy`` for one block manager."""
        from pagedlab.paged import eviction

        policy = self.eviction_policy
        if isinstance(policy, str):
            policy = {"lru": eviction.LRU, "least_often_hit": eviction.LeastOftenHit}[policy]
        return policy()


def _check_eviction_policy(policy: object) -> None:
    if isinstance(policy, str):
        if policy not in EVICTION_POLICIES:
            raise ValueError(f"eviction_policy must be one of {EVICTION_POLICIES} or an EvictionPolicy subclass, "
                             f"got {policy!r}")
        return
    from pagedlab.paged.eviction import EvictionPolicy

    if not (isinstance(policy, type) and issubclass(policy, EvictionPolicy)):
        raise TypeError(f"eviction_policy must be one of {EVICTION_POLICIES} or an EvictionPolicy subclass (a class: "
                        f"each engine makes its own instance), got {policy!r}")


def _check_attention_backend(choice: object) -> None:
    """The backends' own check, without importing them (and torch) for the default."""
    if choice == "auto":
        return
    from pagedlab.engine.backends import AttentionBackend, BACKENDS

    if isinstance(choice, AttentionBackend) or callable(choice):
        return
    if not isinstance(choice, str):
        raise TypeError(f"attention_backend must be one of {BACKENDS} or a decode function "
                        f"decode(q, k_cache, v_cache, block_tables, context_lens), got {type(choice).__name__}")
    if choice not in BACKENDS:
        raise ValueError(f"attention_backend must be one of {BACKENDS} or a decode function, got {choice!r}")


def _blocks_from_memory(device, block_bytes: int, utilization: float, space: float | None) -> int:
    """Blocks of ``block_bytes`` that the memory rule of the module docstring gives on ``device`` (a
    ``torch.device``; the settings are checked already)."""
    if device.type == "cuda":
        import torch

        total = torch.cuda.get_device_properties(device).total_memory
        free = total * utilization - torch.cuda.memory_allocated(device) - ACTIVATION_RESERVE * GIB
        what = f"gpu_memory_utilization={utilization}"
    else:
        gib = CPU_KV_CACHE_SPACE if space is None else space
        free, what = gib * GIB, f"kv_cache_space={gib} GiB"
    blocks = int(max(free, 0) // block_bytes)
    if blocks < 1:
        raise ValueError(f"{what} leaves no room for one KV block of {block_bytes} bytes: raise it, or pass "
                         f"num_blocks")
    return blocks
