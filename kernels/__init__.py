"""Triton kernels of the course, imported as ``pagedlab.kernels``.

``pagedlab.device`` is imported first: it decides whether Triton compiles or interprets before any
``@triton.jit`` in this package runs.
"""

from pagedlab import device as _device  # noqa: F401  (side effect: sets TRITON_INTERPRET)
