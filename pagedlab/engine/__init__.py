"""A small continuous-batching engine over the paged KV cache, named after vLLM's API.

``LLM("HuggingFaceTB/SmolLM2-135M-Instruct")`` with ``generate`` and ``chat`` (text in, text out);
``LLMEngine(model, num_blocks=..., ...)`` with ``add_request`` / ``step`` (streaming) or ``generate`` (a batch),
its settings in one :class:`~pagedlab.engine.config.EngineConfig`; ``SamplingParams`` (vLLM's fields and
defaults), ``RequestOutput`` / ``CompletionOutput`` / ``Logprob``. Read it in
this order: :mod:`~pagedlab.engine.sampling`, :mod:`~pagedlab.engine.sampler`, :mod:`~pagedlab.engine.sequence`,
:mod:`~pagedlab.engine.scheduler`, :mod:`~pagedlab.engine.attention`, :mod:`~pagedlab.engine.model_runner`,
:mod:`~pagedlab.engine.config`, :mod:`~pagedlab.engine.llm_engine`, :mod:`~pagedlab.engine.llm`;
:mod:`~pagedlab.engine.backends` holds the attention backends, :mod:`~pagedlab.engine.detokenizer` the incremental
text, :mod:`~pagedlab.engine.static` the static-batching policy, :mod:`~pagedlab.engine.serving` the arrival-trace
measurement.

The scheduler's side (:mod:`~pagedlab.engine.scheduler`, :mod:`~pagedlab.engine.sequence`,
:mod:`~pagedlab.engine.outputs`, :mod:`~pagedlab.engine.sampling`, :mod:`~pagedlab.engine.static`) imports no torch,
so ``import pagedlab.engine.scheduler`` stays torch-free; the
names below are imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pagedlab.engine.config import EngineConfig
    from pagedlab.engine.llm import LLM
    from pagedlab.engine.llm_engine import LLMEngine
    from pagedlab.engine.outputs import CompletionOutput, Logprob, RequestMetrics, RequestOutput, StepMetrics
    from pagedlab.engine.sampling import SamplingParams

__all__ = ["LLM", "CompletionOutput", "EngineConfig", "LLMEngine", "Logprob", "RequestMetrics", "RequestOutput",
           "SamplingParams", "StepMetrics"]
_HOME = {"LLM": "llm", "LLMEngine": "llm_engine", "CompletionOutput": "outputs", "EngineConfig": "config",
         "Logprob": "outputs", "RequestMetrics": "outputs", "RequestOutput": "outputs", "StepMetrics": "outputs",
         "SamplingParams": "sampling"}


def __getattr__(name: str) -> Any:
    # PEP 562: the engine's public names, imported when first asked for (the scheduler alone needs no torch).
    if name in _HOME:
        return getattr(import_module(f"pagedlab.engine.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
