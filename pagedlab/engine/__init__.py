"""A small continuous-batching engine over the paged KV cache, named after vLLM's API.

``LLM("HuggingFaceTB/SmolLM2-135M-Instruct")`` with ``generate`` and ``chat`` (text in, text out);
``LLMEngine(model, num_blocks, ...)`` with ``add_request`` / ``step`` (streaming) or ``generate`` (a batch),
``SamplingParams(n, temperature, max_tokens, seed, top_p, top_k, stop, ...)``, ``RequestOutput`` /
``CompletionOutput``. Read it in
this order: :mod:`~pagedlab.engine.sampling`, :mod:`~pagedlab.engine.sequence`,
:mod:`~pagedlab.engine.scheduler`, :mod:`~pagedlab.engine.attention`, :mod:`~pagedlab.engine.model_runner`,
:mod:`~pagedlab.engine.llm_engine`, :mod:`~pagedlab.engine.llm`; :mod:`~pagedlab.engine.backends` holds the
attention backends, :mod:`~pagedlab.engine.detokenizer` the incremental text, :mod:`~pagedlab.engine.static`
the static-batching baseline, :mod:`~pagedlab.engine.serving` the arrival-trace measurement.
"""

from pagedlab.engine.llm import LLM
from pagedlab.engine.llm_engine import LLMEngine
from pagedlab.engine.outputs import CompletionOutput, RequestMetrics, RequestOutput, StepMetrics
from pagedlab.engine.sampling import SamplingParams

__all__ = ["LLM", "CompletionOutput", "LLMEngine", "RequestMetrics", "RequestOutput", "SamplingParams", "StepMetrics"]
