"""The package's layers: nothing imports from a layer above it (the course's layer rule)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPUTE = ["pagedlab/device.py", "pagedlab/validate.py", "pagedlab/testing.py", "pagedlab/trace.py",
           "pagedlab/attention.py", "pagedlab/memory.py", "pagedlab/transfer.py", "pagedlab/records.py",
           "pagedlab/roofline.py", "pagedlab/paged", "kernels", "pagedlab/model.py", "pagedlab/engine"]
PRESENTATION = ("pagedlab.widgets", "pagedlab.checks", "pagedlab.exercise_checks", "pagedlab.notebook",
                "pagedlab.grading", "pagedlab.authoring")


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def _files(entry: str) -> list[Path]:
    path = ROOT / entry
    return sorted(path.glob("*.py")) if path.is_dir() else [path]


@pytest.mark.parametrize("path", [f for e in COMPUTE for f in _files(e)], ids=lambda p: p.name)
def test_compute_layer_does_not_import_presentation(path):
    above = sorted(n for n in _imports(path) if n.startswith(PRESENTATION))
    assert not above, f"{path.relative_to(ROOT)} imports {above} from a layer above it"


@pytest.mark.parametrize("path", _files("pagedlab/paged"), ids=lambda p: p.name)
def test_allocator_core_is_plain_python(path):
    if path.name in ("kv_cache.py",):  # the tensor pool is where torch enters
        return
    assert not {n for n in _imports(path) if n.split(".")[0] in ("torch", "numpy", "triton")}, (
        f"{path.relative_to(ROOT)} imports torch/numpy/triton; the allocator core must stay plain Python")


def test_device_imports_nothing_from_pagedlab():
    assert not {n for n in _imports(ROOT / "pagedlab/device.py") if n.startswith("pagedlab")}


@pytest.mark.parametrize("path", _files("pagedlab/paged") + _files("kernels") + [ROOT / "pagedlab/model.py"],
                         ids=lambda p: p.name)
def test_engine_sits_above_paged_and_kernels(path):
    # The engine and the model use the paged cache and the kernels, never the other way round.
    above = sorted(n for n in _imports(path) if n.startswith("pagedlab.engine"))
    assert not above, f"{path.relative_to(ROOT)} imports {above}: the engine is the layer above it"


def test_model_does_not_depend_on_transformers():
    # transformers is a dev (test and notebook) dependency: from_gpt2 takes a model, it never imports one.
    assert not {n for n in _imports(ROOT / "pagedlab/model.py") if n.startswith("transformers")}


def test_scheduler_imports_no_torch():
    # The scheduler owns the block manager and moves no tensor: importing it (and running a step's bookkeeping
    # over a manager) must work where torch cannot be imported at all.
    code = """
import sys
sys.modules["torch"] = None          # any 'import torch' now raises ImportError
from pagedlab.engine.scheduler import Scheduler
from pagedlab.engine.sequence import Request
from pagedlab.paged import BlockManager

class Params:                        # SamplingParams lives with sampling, which needs torch
    n, max_tokens, greedy = 1, 2, True
    stop, stop_token_ids, ignore_eos = (), (), False

scheduler = Scheduler(BlockManager(4, 4, watermark=0.0), max_num_seqs=2, max_num_batched_tokens=8)
scheduler.add(Request(0, [1, 2, 3], Params(), 0))
out = scheduler.schedule()
assert out.num_new_tokens == [3], out
scheduler.postprocess(out, [[7]])
out = scheduler.schedule()
assert out.num_new_tokens == [1], out
scheduler.postprocess(out, [[8]])
assert not scheduler.running and scheduler.block_manager.num_free_blocks == 4
assert "torch" not in {m.split(".")[0] for m, mod in sys.modules.items() if mod is not None}
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                            env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert result.returncode == 0, result.stderr[-2000:]


def test_validate_imports_nothing_from_pagedlab_and_no_torch():
    # The argument checks sit below everything, the allocator core included, so they stay plain Python.
    names = _imports(ROOT / "pagedlab/validate.py")
    assert not {n for n in names if n.split(".")[0] in ("pagedlab", "torch", "numpy", "triton")}, names
