"""pagedlab: the helper package of the course, from naive attention to a paged KV cache and a serving engine.

Layers, from the bottom (nothing imports from a layer above it; ``docs/architecture.md`` has one line per
module and the life of one request):

* ``pagedlab.device`` (where the course runs: torch device, Triton compiled or interpreted, sizes) and
  ``pagedlab.validate`` (argument checks, one rule for TypeError vs ValueError; imports nothing from pagedlab);
* compute and state, no display code: ``pagedlab.attention`` (PyTorch references), ``pagedlab.trace`` (tile
  schedules), ``pagedlab.roofline`` (memory hierarchy, roofline), ``pagedlab.memory`` (KV-cache sizes and
  waste), ``pagedlab.transfer`` (device-host copy timings), ``pagedlab.paged`` (the paged KV cache: allocator,
  block tables, block manager, prefix cache), ``pagedlab.kernels`` (Triton), ``pagedlab.models`` (TinyGPT,
  Llama, and the registry that finds a checkpoint's family), ``pagedlab.loader`` (weights, found and converted
  once), ``pagedlab.perf_lab`` (compiler reports without a GPU), ``pagedlab.records`` (where a benchmark run's
  files go) and ``pagedlab.testing`` (shared test inputs);
* ``pagedlab.engine``: continuous batching over the paged cache, the kernels and the models, behind vLLM's API
  (``LLM``, ``LLMEngine``, ``SamplingParams``);
* ``pagedlab.widgets``, ``pagedlab.checks``, ``pagedlab.exercise_checks``, ``pagedlab.notebook``: what the
  notebooks show;
* ``pagedlab.authoring`` (executing notebooks, making exercises) and ``pagedlab.grading``: course tooling,
  kept out of the modules a learner reads.

This file imports nothing on purpose: the allocator core (``pagedlab.paged``) is plain Python and must
stay importable and timeable without torch.
"""

__version__ = "0.1.0"
