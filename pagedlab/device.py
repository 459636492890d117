"""Where the course runs: the torch device, Triton's mode, default dtype and problem sizes.

Triton reads ``TRITON_INTERPRET`` when ``@triton.jit`` decorates a kernel, so the choice between
compiling kernels for a GPU and interpreting them on the CPU has to be made *before* any kernel
module is imported. Importing this module makes that choice once, for the whole process:

* an NVIDIA GPU with compute capability >= 8.0 (Ampere, Ada, Hopper, Blackwell): Triton compiles;
* no CUDA device, or an older GPU such as Colab's T4 (sm_75): Triton's interpreter runs the kernels
  on the CPU with NumPy, one program at a time (correct, slow, no speed to measure).

``pagedlab.kernels`` imports this module first, so ``import pagedlab.kernels`` is always safe.

Environment overrides (read once, at import):

* ``TRITON_INTERPRET=1`` (or ``0``) set by the user is respected.
* ``PAGEDLAB_DEVICE=cpu`` forces the CPU even when a GPU is present; ``make notebooks`` uses it so
  the stored notebook outputs are always the CPU run.

In interpreter mode, on Triton releases before 3.8 (Colab and the course's GPU machine ship 3.6), one upstream
interpreter fix, triton-lang/triton#9171, is needed: :func:`patch_interpreter_index`, which ``pagedlab.kernels``
calls. Not at the import of this module, which must not import Triton: a tool that compiles ahead of time on a
CPU (``pagedlab.perf_lab``) sets ``TRITON_INTERPRET=0`` after this module chose the interpreter and before Triton
is imported.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TypeVar

import torch

MIN_CAPABILITY = (8, 0)
"""Oldest compute capability our kernels compile for (bf16 and the tensor-core paths need Ampere)."""

T = TypeVar("T")


@dataclass(frozen=True)
class Mode:
    """The decision this module makes: where tensors live and how Triton runs.

    Attributes:
        device: ``"cuda"`` or ``"cpu"``, where the course puts its tensors.
        interpret: True when Triton kernels run in the interpreter (on CPU tensors).
        reason: one line saying why, for the setup report.
    """

    device: str
    interpret: bool
    reason: str


def choose_mode(
    cuda_available: bool,
    capability: tuple[int, int] | None,
    gpu_name: str = "GPU",
    force_cpu: bool = False,
    interpret_env: str | None = None,
) -> Mode:
    """Decide device and Triton mode from facts about the machine (pure, so it can be tested).

    Args:
        cuda_available: whether ``torch.cuda.is_available()``.
        capability: ``torch.cuda.get_device_capability()`` of device 0, or None without CUDA.
        gpu_name: the GPU's name, for the message.
        force_cpu: ``PAGEDLAB_DEVICE=cpu`` was set.
        interpret_env: the user's ``TRITON_INTERPRET`` value, or None when unset.

    Returns:
        The :class:`Mode`. Interpreted kernels always get CPU tensors: the interpreter computes with
        NumPy on the host, so CUDA tensors would only add copies.
    """
    if force_cpu:
        return Mode("cpu", True, "PAGEDLAB_DEVICE=cpu: running on the CPU, Triton in interpreter mode")
    if interpret_env is not None and interpret_env not in ("", "0"):
        return Mode("cpu", True, "TRITON_INTERPRET is set: Triton in interpreter mode on the CPU")
    if not cuda_available:
        return Mode("cpu", True, "no CUDA GPU found: Triton runs in interpreter mode on the CPU (small sizes)")
    if capability is None or tuple(capability) < MIN_CAPABILITY:
        cc = "unknown" if capability is None else f"{capability[0]}.{capability[1]}"
        return Mode(
            "cpu",
            True,
            f"{gpu_name} has compute capability {cc} < {MIN_CAPABILITY[0]}.{MIN_CAPABILITY[1]}: "
            "the kernels need Ampere or newer, so Triton runs in interpreter mode on the CPU",
        )
    return Mode("cuda", False, f"{gpu_name} (compute capability {capability[0]}.{capability[1]}): Triton compiles")


def _detect() -> Mode:
    force_cpu = os.environ.get("PAGEDLAB_DEVICE", "").lower() == "cpu"
    cuda = (not force_cpu) and torch.cuda.is_available()
    capability = torch.cuda.get_device_capability(0) if cuda else None
    name = torch.cuda.get_device_name(0) if cuda else "GPU"
    return choose_mode(cuda, capability, name, force_cpu, os.environ.get("TRITON_INTERPRET"))


MODE = _detect()
# Must happen before any @triton.jit runs; see the module docstring.
os.environ["TRITON_INTERPRET"] = "1" if MODE.interpret else "0"


INDEX_FIX_VERSION = (3, 8)
"""First Triton release whose interpreter has the upstream fix of triton-lang/triton#9171 (3.6 lacks it)."""


def needs_index_fix(triton_version: str, numpy_version: str) -> bool:
    """Whether Triton's interpreter needs :func:`patch_interpreter_index` with these versions (pure, for tests).

    NumPy 2.3 deprecated, and 2.4 refused, ``int()`` of an array that has one element but is not 0-d; Triton's
    interpreter before 3.8 converts its scalar tensors (1-element arrays) that way when Python asks for an index,
    as ``range(lo, hi, BLOCK_N)`` does with loop bounds computed in a kernel.
    """
    def major_minor(version: str) -> tuple[int, int]:
        major, minor = version.split(".")[:2]
        return int(major), int("".join(c for c in minor if c.isdigit()) or 0)

    return major_minor(triton_version) < INDEX_FIX_VERSION and major_minor(numpy_version) >= (2, 3)


def patch_interpreter_index() -> bool:
    """Apply the upstream interpreter fix triton-lang/triton#9171 where this Triton needs it; True if applied.

    Only when ``TRITON_INTERPRET=1`` (the kernels will be interpreted); otherwise it imports nothing and returns False.

    The fix is one line of ``triton/runtime/interpreter.py``: the interpreter's ``tl.tensor.__index__`` becomes
    ``int(self.handle.data.squeeze())`` instead of ``int(self.handle.data)``. Triton installs its patches of
    ``tl.tensor`` on every interpreted launch (``_patch_lang_tensor``), so this wraps that function and sets the
    fixed ``__index__`` after it, through the same restore scope when the release has one. Nothing else changes;
    compiled kernels never run this code.
    """
    if os.environ.get("TRITON_INTERPRET") != "1":
        return False
    import numpy
    import triton

    if not needs_index_fix(triton.__version__, numpy.__version__):
        return False
    from triton.runtime import interpreter

    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "pagedlab_index_fix", False):
        return original is not None

    def index(self) -> int:
        return int(self.handle.data.squeeze())

    def patched(tensor, *args, **kwargs):
        result = original(tensor, *args, **kwargs)
        scope = args[0] if args else kwargs.get("scope")
        if scope is not None and hasattr(scope, "set_attr"):
            scope.set_attr(tensor, "__index__", index)
        else:
            tensor.__index__ = index
        return result

    patched.pagedlab_index_fix = True
    interpreter._patch_lang_tensor = patched
    return True


DEVICE = torch.device(MODE.device)
"""The torch device every notebook puts its tensors on."""

INTERPRET = MODE.interpret
"""True when Triton kernels run in the interpreter."""

ON_GPU = DEVICE.type == "cuda"

IN_COLAB = "google.colab" in sys.modules
"""True inside Google Colab."""


def default_dtype() -> torch.dtype:
    """bf16 on GPUs that support it, else fp16 on GPU, fp32 on the CPU (where half precision is slow)."""
    if not ON_GPU:
        return torch.float32
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


DTYPE = default_dtype()


def size(cpu: T, gpu: T) -> T:
    """Pick a problem size: ``cpu`` in interpreter mode (small, so cells run in seconds), else ``gpu``.

    Every notebook gets its sizes through this one function, so a CPU run stays fast and a GPU run
    shows real numbers, from the same cell.
    """
    return cpu if INTERPRET else gpu


def describe() -> str:
    """A one-line description of the device, for reports (varies by machine: never compared)."""
    if ON_GPU:
        props = torch.cuda.get_device_properties(0)
        return f"{props.name}, {props.total_memory / 2**30:.0f} GiB, sm_{props.major}{props.minor}"
    return f"CPU ({os.cpu_count()} cores)"


def seed_everything(seed: int = 0) -> None:
    """Seed Python's, NumPy's and torch's generators, so every notebook output is reproducible."""
    import random

    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def synchronize() -> None:
    """Wait for queued GPU work (a no-op on the CPU); call before reading a clock."""
    if ON_GPU:
        torch.cuda.synchronize()
