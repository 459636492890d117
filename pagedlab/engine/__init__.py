"""A small continuous-batching engine over the paged KV cache, named after vLLM's API.

``LLMEngine(model, num_blocks, ...)`` with ``add_request`` / ``step`` (streaming) or ``generate`` (a batch),
``SamplingParams(n, temperature, max_tokens, seed)``, ``RequestOutput`` / ``CompletionOutput``. Read it in
this order: :mod:`~pagedlab.engine.sampling`, :mod:`~pagedlab.engine.sequence`,
:mod:`~pagedlab.engine.scheduler`, :mod:`~pagedlab.engine.attention`, :mod:`~pagedlab.engine.model_runner`,
:mod:`~pagedlab.engine.llm_engine`; :mod:`~pagedlab.engine.static` is the static-batching baseline.
"""

from pagedlab.engine.llm_engine import LLMEngine
from pagedlab.engine.outputs import CompletionOutput, RequestOutput, StepMetrics
from pagedlab.engine.sampling import SamplingParams

__all__ = ["CompletionOutput", "LLMEngine", "RequestOutput", "SamplingParams", "StepMetrics"]
