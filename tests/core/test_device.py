"""pagedlab.device: the compiled-vs-interpreted decision, simulated for machines we don't have."""

import json
import os
import subprocess
import sys

import pytest
import torch

from pagedlab import device
from pagedlab.device import choose_mode


def test_no_cuda_means_interpreter_on_cpu():
    mode = choose_mode(cuda_available=False, capability=None)
    assert (mode.device, mode.interpret) == ("cpu", True)
    assert "no CUDA GPU" in mode.reason


@pytest.mark.parametrize("capability", [(7, 5), (6, 1), (7, 0)])
def test_old_gpu_falls_back_to_interpreter_and_says_why(capability):
    mode = choose_mode(cuda_available=True, capability=capability, gpu_name="Tesla T4")
    assert (mode.device, mode.interpret) == ("cpu", True)
    assert "Tesla T4" in mode.reason and f"{capability[0]}.{capability[1]}" in mode.reason and "8.0" in mode.reason


@pytest.mark.parametrize("capability", [(8, 0), (8, 6), (9, 0), (10, 0)])
def test_ampere_and_newer_compile(capability):
    mode = choose_mode(cuda_available=True, capability=capability, gpu_name="H100")
    assert (mode.device, mode.interpret) == ("cuda", False)


def test_overrides_win():
    assert choose_mode(True, (9, 0), force_cpu=True).interpret
    assert choose_mode(True, (9, 0), interpret_env="1").interpret
    assert not choose_mode(True, (9, 0), interpret_env="0").interpret


_PROBE = """
import json, os, sys, torch
os.environ.pop("TRITON_INTERPRET", None); os.environ.pop("PAGEDLAB_DEVICE", None)
torch.cuda.is_available = lambda: {cuda}
torch.cuda.get_device_capability = lambda i=0: {cap}
torch.cuda.get_device_name = lambda i=0: "Tesla T4"
import pagedlab.kernels  # must import pagedlab.device first, which decides the mode
from pagedlab import device
print(json.dumps({{"env": os.environ["TRITON_INTERPRET"], "device": str(device.DEVICE), "reason": device.MODE.reason,
                  "device_first": "pagedlab.device" in sys.modules}}))
"""


@pytest.mark.parametrize("cuda, cap, env", [(False, None, "1"), (True, (7, 5), "1")])
def test_import_sets_triton_interpret_before_kernels(cuda, cap, env):
    """Simulate a machine without CUDA and one with a T4: importing pagedlab.kernels selects the interpreter."""
    environ = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "PAGEDLAB_DEVICE")}
    out = subprocess.run([sys.executable, "-c", _PROBE.format(cuda=cuda, cap=cap)], capture_output=True, text=True,
                         env=environ, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result == {**result, "env": env, "device": "cpu", "device_first": True}
    if cuda:
        assert "7.5" in result["reason"]


def test_sizes_and_dtype_follow_the_mode():
    assert device.size(cpu=1, gpu=2) == (1 if device.INTERPRET else 2)
    if not device.ON_GPU:
        assert device.DTYPE == torch.float32 and device.DEVICE.type == "cpu"
    else:  # pragma: no cover - GPU machines only
        assert device.DTYPE in (torch.bfloat16, torch.float16)


@pytest.mark.parametrize("triton_version, numpy_version, needed", [
    ("3.6.0", "2.4.6", True), ("3.2.0", "2.3.0", True), ("3.6.0", "2.2.6", False), ("3.6.0", "1.26.4", False),
    ("3.8.0", "2.4.6", False), ("3.9.0", "2.4.6", False), ("3.10.0+git1a2b", "2.4.0", False)])
def test_the_interpreter_fix_is_gated_on_the_versions_that_need_it(triton_version, numpy_version, needed):
    assert device.needs_index_fix(triton_version, numpy_version) is needed


@pytest.mark.skipif(not device.INTERPRET, reason="the interpreter's loop bounds only")
def test_loop_bounds_computed_in_a_kernel_work_in_the_interpreter():
    """``range(start, n, BLOCK)`` with ``start`` from the program id: Triton 3.6's interpreter under NumPy 2.4
    raised ``only 0-dimensional arrays can be converted to Python scalars`` here without the fix."""
    import numpy
    import triton
    import triton.language as tl

    import pagedlab.kernels  # noqa: F401  (applies the fix where this Triton needs it)

    @triton.jit
    def count_tiles(Out, n, BLOCK: tl.constexpr):
        start = tl.program_id(0) * BLOCK
        visited = tl.program_id(0) * 0
        for _ in range(start, n, BLOCK):
            visited += 1
        tl.store(Out + tl.program_id(0), visited)

    out = torch.zeros(4, dtype=torch.int32)
    count_tiles[(4,)](out, 50, BLOCK=16)
    assert out.tolist() == [4, 3, 2, 1]  # tiles from 0, 16, 32, 48 up to 50
    # Applied once, by pagedlab.kernels, where needed; a second call changes nothing.
    assert device.patch_interpreter_index() == device.needs_index_fix(triton.__version__, numpy.__version__)
