"""pagedlab: the helper package of the course, from naive attention to a paged KV cache.

Layers, from the bottom (nothing imports from a layer above it):

* ``pagedlab.device``: where the course runs (torch device, Triton compiled or interpreted, sizes);
* ``pagedlab.attention``, ``pagedlab.paged``, ``pagedlab.memory``, ``pagedlab.kernels``: compute and state;
* ``pagedlab.widgets``, ``pagedlab.checks``, ``pagedlab.notebook``: what the notebooks show;
* ``pagedlab.authoring`` (executing notebooks, making exercises) and ``pagedlab.grading``: course tooling,
  kept out of the modules a learner reads.

This file imports nothing on purpose: the allocator core (``pagedlab.paged``) is plain Python and must
stay importable and timeable without torch.
"""

__version__ = "0.1.0"
