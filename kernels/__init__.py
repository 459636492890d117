"""Triton kernels of the course, imported as ``pagedlab.kernels``.

``pagedlab.device`` is imported first: it decides whether Triton compiles or interprets before any
``@triton.jit`` in this package runs; then, when the kernels will be interpreted, the interpreter fix that older
Triton releases need is applied (:func:`pagedlab.device.patch_interpreter_index`).
"""

from pagedlab import device as _device  # (side effect: sets TRITON_INTERPRET)

_device.patch_interpreter_index()
