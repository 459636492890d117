"""A small continuous-batching engine over the paged KV cache, named after vLLM's API.

``LLMEngine(model, num_blocks, ...)`` with ``add_request`` / ``step`` (streaming) or ``generate`` (a batch),
``SamplingParams(n, temperature, max_tokens, seed)``, ``RequestOutput`` / ``CompletionOutput``. Read it in
this order: :mod:`~pagedlab.engine.sampling`, :mod:`~pagedlab.engine.sequence`,
:mod:`~pagedlab.engine.scheduler`, :mod:`~pagedlab.engine.attention`, :mod:`~pagedlab.engine.model_runner`,
:mod:`~pagedlab.engine.llm_engine`; :mod:`~pagedlab.engine.static` is the static-batching baseline.

The scheduler's side (:mod:`~pagedlab.engine.scheduler`, :mod:`~pagedlab.engine.sequence`,
:mod:`~pagedlab.engine.outputs`) imports no torch, so ``import pagedlab.engine.scheduler`` stays torch-free; the
names below are imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pagedlab.engine.llm_engine import LLMEngine
    from pagedlab.engine.outputs import CompletionOutput, RequestOutput, StepMetrics
    from pagedlab.engine.sampling import SamplingParams

__all__ = ["CompletionOutput", "LLMEngine", "RequestOutput", "SamplingParams", "StepMetrics"]
_HOME = {"LLMEngine": "llm_engine", "CompletionOutput": "outputs", "RequestOutput": "outputs",
         "StepMetrics": "outputs", "SamplingParams": "sampling"}


def __getattr__(name: str) -> Any:
    # PEP 562: the engine's public names, imported when first asked for (the scheduler alone needs no torch).
    if name in _HOME:
        return getattr(import_module(f"pagedlab.engine.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
