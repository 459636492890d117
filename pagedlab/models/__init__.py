"""The model families the engine serves, each a module, and the registry that finds one by its checkpoint.

:mod:`pagedlab.models.tiny_gpt` (GPT-2's architecture), :mod:`pagedlab.models.llama` (SmolLM2's),
:mod:`pagedlab.models.qwen2` (Llama with Q/K/V biases), what they share (:mod:`pagedlab.models.base`) and
:mod:`pagedlab.models.registry` (architecture name -> class).
"""
