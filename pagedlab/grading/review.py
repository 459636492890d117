"""Flag learner code that could change how the grader sees a check: those notebooks need a person's review.

Checks run in the same kernel as the learner's code, so code that touches IPython's execution machinery
(traceback display, custom exception handlers, input and AST transformers, event callbacks), installs a trace
or profile function, patches ``builtins``, runs code it builds at run time, or replaces attributes of modules
(or names the pristine setup cells import) could make a failing check look like a pass. This module reads
the learner's cells (never runs them) and says which do what. It is deliberately broad: a false alarm costs an
instructor a minute, a missed one a wrong grade. A determined learner can hide code from any static reading;
the grader's probe of the kernel after the last cell (``pagedlab.grading.run.PROBE``) is the second net.
"""

from __future__ import annotations

import ast
import re

from IPython.core.inputtransformer2 import TransformerManager

MACHINERY = ("_showtraceback", "showtraceback", "showsyntaxerror", "set_custom_exc", "custom_exceptions",
             "input_transformers_cleanup", "input_transformers_post", "input_transformer_manager",
             "ast_transformers", "settrace", "setprofile", "run_cell", "run_ast_nodes", "run_code", "excepthook",
             "__builtins__", "meta_path", "path_hooks", "displayhook", "InteractiveShell")
_WORDS = re.compile(r"\b(" + "|".join(map(re.escape, MACHINERY)) + r"|events\s*\.\s*register|builtins|get_ipython)\b")
SUSPECT_MODULES = ("builtins", "IPython", "ipykernel", "traitlets", "ctypes", "gc", "inspect", "importlib")
DYNAMIC = ("exec", "eval", "compile", "__import__", "globals", "setattr", "delattr")
ALLOWED_MAGICS = ("time", "timeit", "matplotlib")
_transform = TransformerManager().transform_cell


def imported_names(sources: list[str]) -> set[str]:
    """Names that ``import`` statements in ``sources`` bind (``import torch.nn as nn`` binds ``nn``)."""
    names = set()
    for tree in filter(None, map(_parse, sources)):
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def review_reasons(source: str, protected: set[str]) -> list[str]:
    """Why a learner cell needs review (empty when it looks harmless).

    Args:
        source: the cell's source (IPython syntax allowed).
        protected: names the pristine setup cells import; rebinding one, or setting an attribute on it or on
            any module the notebook imports, is flagged.
    """
    tree = _parse(source)
    if tree is None:  # it will fail to run anyway; still report what it mentions
        return sorted({f"mentions {m.group(0)}" for m in _WORDS.finditer(source)})
    modules = protected | imported_names([source])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in MACHINERY:
            found.append(f"touches .{node.attr}")
        elif (isinstance(node, ast.Attribute) and node.attr == "register" and isinstance(node.value, ast.Attribute)
              and node.value.attr == "events"):
            found.append("touches .events.register")
        elif (isinstance(node, ast.Name) and node.id in ("__builtins__", "get_ipython")
              and not _allowed_magic(node, tree)):
            found.append(f"uses {node.id}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"imports {m}" for m in mods if m.split(".")[0] in SUSPECT_MODULES]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in DYNAMIC:
            found.append(f"calls {node.func.id}()")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [f"a string mentions {m.group(0)}" for m in _WORDS.finditer(node.value)]
        for target in _targets(node):
            root = _root(target)
            if root in modules and target is not None and not isinstance(target, ast.Name):
                found.append(f"replaces {ast.unparse(target)}")
            elif isinstance(target, ast.Name) and target.id in protected:
                found.append(f"rebinds {target.id}, which the exercise's setup imports")
    return sorted(set(found))


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(_transform(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _targets(node: ast.AST) -> list[ast.AST]:
    """What ``node`` binds or mutates: assignment and deletion targets, function and class names."""
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = list(node.targets)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [ast.Name(id=node.name)]
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        targets = [node.optional_vars]
    elif isinstance(node, ast.NamedExpr):
        targets = [node.target]
    else:
        return []
    flat = []
    while targets:
        t = targets.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            targets += t.elts
        elif isinstance(t, ast.Starred):
            targets.append(t.value)
        else:
            flat.append(t)
    return flat


def _root(node: ast.AST) -> str | None:
    """``torch`` for ``torch.nn.functional.softmax`` or ``torch.x[0]``; None for anything else."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _allowed_magic(name: ast.Name, tree: ast.Module) -> bool:
    """True for ``get_ipython().run_line_magic('timeit', ...)`` and the like (IPython's rewrite of ``%timeit``)."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("run_line_magic", "run_cell_magic") and isinstance(node.func.value, ast.Call)
                and node.func.value.func is name and node.args and isinstance(node.args[0], ast.Constant)):
            return node.args[0].value in ALLOWED_MAGICS
    return False
