"""The package's layers: nothing imports from a layer above it (the course's layer rule)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMPUTE = ["pagedlab/device.py", "pagedlab/validate.py", "pagedlab/testing.py", "pagedlab/trace.py",
           "pagedlab/attention.py", "pagedlab/memory.py", "pagedlab/transfer.py", "pagedlab/records.py",
           "pagedlab/roofline.py", "pagedlab/paged", "kernels", "pagedlab/models", "pagedlab/engine"]
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


@pytest.mark.parametrize("path", _files("pagedlab/paged") + _files("kernels") + _files("pagedlab/models"),
                         ids=lambda p: p.name)
def test_engine_sits_above_paged_and_kernels(path):
    # The engine and the model use the paged cache and the kernels, never the other way round.
    above = sorted(n for n in _imports(path) if n.startswith("pagedlab.engine"))
    assert not above, f"{path.relative_to(ROOT)} imports {above}: the engine is the layer above it"


@pytest.mark.parametrize("path", _files("pagedlab/models"), ids=lambda p: p.name)
def test_models_do_not_depend_on_transformers(path):
    # transformers is a dev (test and notebook) dependency: the models take its configs and weights, never import it.
    assert not {n for n in _imports(path) if n.startswith("transformers")}


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


def _module_graph(root: Path) -> dict[str, set[str]]:
    """Every module of ``pagedlab/`` and ``kernels/`` (as ``pagedlab.kernels``) under ``root`` -> the modules of
    the two it imports, read with ast: every import statement, in functions and under TYPE_CHECKING too."""
    files = {}
    for base, package in ((root / "pagedlab", "pagedlab"), (root / "kernels", "pagedlab.kernels")):
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("").parts
            if package == "pagedlab" and rel[0] == "kernels":
                continue                                  # a link to kernels/, if a checkout has one
            name = ".".join((package, *rel)).removesuffix(".__init__")
            files[name] = path
    graph = {}
    for name, path in files.items():
        targets = set()
        for imported in _imports(path):
            # "from a.b import c" gives a.b and a.b.c: keep each that is one of our modules
            while imported and imported not in files:
                imported = imported.rpartition(".")[0] if imported.startswith("pagedlab") else ""
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm), each sorted."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle():
    circles = _circles(_module_graph(ROOT))
    assert not circles, (f"modules that import each other in a circle: {circles}; move what they share into a "
                         f"module below both, or pass it in (see docs/architecture.md, Layers)")


def test_a_planted_circle_is_found(tmp_path):
    # The check above must be able to fail: plant usage -> manager -> usage in a copy of the package.
    import shutil

    shutil.copytree(ROOT / "pagedlab", tmp_path / "pagedlab", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "kernels"))
    shutil.copytree(ROOT / "kernels", tmp_path / "kernels", ignore=shutil.ignore_patterns("__pycache__"))
    manager = tmp_path / "pagedlab" / "paged" / "manager.py"
    manager.write_text(manager.read_text() + "\nfrom pagedlab.paged.usage import Usage\n")
    assert ["pagedlab.paged.manager", "pagedlab.paged.usage"] in _circles(_module_graph(tmp_path))
