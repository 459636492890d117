"""The package's layers: nothing imports from a layer above it (the course's layer rule)."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"


def _layers() -> list[tuple[str, list[str]]]:
    """The layers of docs/architecture.md, from the bottom: ``(title, [module paths])`` in the order the map lists
    them (each layer opens with a bold title, then a table of its modules; test_architecture.py checks that every
    module is on the map)."""
    layers: list[tuple[str, list[str]]] = []
    for line in DOC.read_text().splitlines():
        title = re.match(r"^\*\*([^*]+)\*\*", line)
        if title:
            layers.append((title.group(1), []))
        row = re.match(r"^\| `((?:pagedlab|kernels)/[\w/]+\.py)` \|", line)
        if row and layers:
            layers[-1][1].append(row.group(1))
    return layers


def _module(path: str) -> str:
    """``pagedlab/paged/manager.py`` -> ``pagedlab.paged.manager``; ``kernels/x.py`` is imported as ``pagedlab.kernels.x``."""
    name = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return "pagedlab." + name if name.startswith("kernels") else name


LAYERS = _layers()
LEVEL = {_module(path): level for level, (_, paths) in enumerate(LAYERS) for path in paths}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def _owner(name: str) -> str | None:
    """The module on the map that an imported name belongs to: the longest listed module it is, or is inside."""
    parts = name.split(".")
    return next((m for m in (".".join(parts[:i]) for i in range(len(parts), 0, -1)) if m in LEVEL), None)


def _files(entry: str) -> list[Path]:
    path = ROOT / entry
    return sorted(path.glob("*.py")) if path.is_dir() else [path]


def test_the_map_has_its_layers_in_order():
    titles = [title for title, _ in LAYERS]
    assert titles[:3] == ["Foundations", "Compute and state", "The engine"], titles
    assert all(paths for _, paths in LAYERS), f"a layer of docs/architecture.md lists no module: {titles}"


@pytest.mark.parametrize("path", [p for _, paths in LAYERS for p in paths], ids=str)
def test_no_module_imports_from_a_layer_above_it(path):
    level = LEVEL[_module(path)]
    above = sorted({f"{n} ({LAYERS[LEVEL[o]][0]})" for n in _imports(ROOT / path)
                    if (o := _owner(n)) is not None and LEVEL[o] > level})
    assert not above, f"{path} ({LAYERS[level][0]}) imports {above}, from a layer above it"


def test_the_layer_check_sees_an_import_from_above(tmp_path):
    # The check above must be able to fail: a compute module that imports a widget is caught.
    planted = tmp_path / "planted.py"
    planted.write_text("from pagedlab.widgets import TileWidget\n")
    assert any(LEVEL[o] > LEVEL["pagedlab.attention"] for n in _imports(planted) if (o := _owner(n)))


@pytest.mark.parametrize("path", _files("pagedlab/paged"), ids=lambda p: p.name)
def test_allocator_core_is_plain_python(path):
    if path.name in ("kv_cache.py",):  # the tensor pool is where torch enters
        return
    assert not {n for n in _imports(path) if n.split(".")[0] in ("torch", "numpy", "triton")}, (
        f"{path.relative_to(ROOT)} imports torch/numpy/triton; the allocator core must stay plain Python")


def test_device_imports_nothing_from_pagedlab():
    assert not {n for n in _imports(ROOT / "pagedlab/device.py") if n.startswith("pagedlab")}


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
