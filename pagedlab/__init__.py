"""pagedlab: the helper package of the course, from naive attention to a paged KV cache and a serving engine.

Layers, from the bottom (nothing imports from a layer above it; ``docs/architecture.md`` has one line per
module and the life of one request):

* ``pagedlab.device`` (where the course runs: torch device, Triton compiled or interpreted, sizes) and
  ``pagedlab.validate`` (argument checks, one rule for TypeError vs ValueError; imports nothing from pagedlab);
* compute and state, no display code: ``pagedlab.attention`` (PyTorch references), ``pagedlab.trace`` (tile
  schedules), ``pagedlab.roofline`` (memory hierarchy, roofline), ``pagedlab.memory`` (KV-cache sizes),
  ``pagedlab.waste`` (the waste of contiguous and paged allocation while serving), ``pagedlab.transfer``
  (device-host copy timings), ``pagedlab.paged`` (the paged KV cache: allocator, block tables, block manager,
  prefix cache, eviction policies), ``pagedlab.kernels`` (Triton), ``pagedlab.models`` (TinyGPT,
  Llama, and the registry that finds a checkpoint's family), ``pagedlab.loader`` (weights, found and converted
  once), ``pagedlab.perf_lab`` (compiler reports without a GPU), ``pagedlab.tile_model`` (a FlashAttention
  program's tiles and registers), ``pagedlab.records`` (where a benchmark run's files go) and ``pagedlab.testing``
  (shared test inputs);
* ``pagedlab.engine``: continuous batching over the paged cache, the kernels and the models, behind vLLM's API
  (``LLM``, ``LLMEngine``, ``SamplingParams``);
* ``pagedlab.widgets``, ``pagedlab.checks`` (with ``pagedlab.triton_guard``, which stops a checked kernel's
  out-of-range store), ``pagedlab.exercise_checks``, ``pagedlab.notebook``: what the notebooks show;
* ``pagedlab.authoring`` (executing notebooks, making exercises) and ``pagedlab.grading``: course tooling,
  kept out of the modules a learner reads.

This file imports no torch on purpose: the allocator core (``pagedlab.paged``) is plain Python and must
stay importable and timeable without torch.

``pagedlab.kernels`` is the top-level ``kernels/`` folder. An install maps it through ``pyproject.toml``'s
``package-dir`` (a wheel holds the files under ``pagedlab/kernels/``); a source checkout used through
``PYTHONPATH`` has no install to map it, so this file adds one finder for that one name (see
``docs/architecture.md``, "One path per kernel file").
"""

import os as _os
import sys as _sys
from importlib.machinery import PathFinder as _PathFinder

__version__ = "0.1.0"

_HERE = _os.path.dirname(_os.path.abspath(__file__))
_CHECKOUT = _os.path.dirname(_HERE)


class _CheckoutKernels:
    """A meta path finder for ``pagedlab.kernels`` alone: the ``kernels/`` folder beside this package's folder."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> object:
        return _PathFinder.find_spec(name, [_CHECKOUT]) if name == "pagedlab.kernels" else None


if not _os.path.isdir(_os.path.join(_HERE, "kernels")) and _os.path.isfile(_os.path.join(_CHECKOUT, "kernels",
                                                                                          "__init__.py")):
    _sys.meta_path.insert(0, _CheckoutKernels)
