"""Flag learner code that could change how the grader sees a check: those notebooks need a person's review.

Checks run in the same kernel as the learner's code, so code that touches IPython's execution machinery
(traceback display, custom exception handlers, input and AST transformers, event callbacks), installs a trace
or profile function, patches ``builtins``, runs code it builds at run time or loads from bytes, or replaces
attributes of modules (or names the pristine setup cells define or import) could make a failing check look like a
pass; code run in another process, in C or inside a PyTorch operator of the learner's is out of the watchers'
sight, and the exercise's reference code called before the graded calls out of its tripwires'. This module reads
the learner's cells (never runs them) and says which do what. It is deliberately broad: a false alarm costs an
instructor a minute, a missed one a wrong grade. A determined learner can hide code from any static reading;
the grader's probe of the kernel after the last cell (``pagedlab.grading.run.PROBE``) is the second net.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import re
import shlex
import symtable
import sys
import types
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from IPython.core.inputtransformer2 import TransformerManager

from pagedlab.grading.harness import compared_calls
from pagedlab.grading.similarity import magic_body, string_code

MACHINERY = ("_showtraceback", "showtraceback", "showsyntaxerror", "set_custom_exc", "custom_exceptions",
             "input_transformers_cleanup", "input_transformers_post", "input_transformer_manager",
             "ast_transformers", "settrace", "setprofile", "addaudithook", "run_cell", "run_ast_nodes", "run_code",
             "excepthook",
             "__builtins__", "meta_path", "path_hooks", "displayhook", "InteractiveShell")
# Ways to reach or rewrite what a check or the driver reads, whatever name they are reached through.
INTROSPECTION = ("vars", "__globals__", "__dict__", "modules", "_getframe", "__torch_function__", "__torch_dispatch__",
                 "f_back", "f_globals", "f_locals", "gi_frame", "__code__", "__closure__", "__class__", "__subclasses__",
                 "__mro__", "__bases__", "__setattr__", "__delattr__", "__getattribute__", "do_execute", "kernel",
                 "shell", "comm", "temp_original", "_python_dispatch", "_disable_current_modes",
                 "_DisableTorchDispatch", "_pop_torch_dispatch_stack", "redispatch", "DispatchKeySet", "DispatchKey",
                 "_dispatch_call_boxed")
# ``x.kernel`` is the learner's own where a Triton kernel is launched from it (``self.kernel[grid](...)``) or it is an
# attribute of ``self``: ipykernel's kernel object is reached from the shell (``get_ipython``, ``.shell``, ``.comm``).
_OWN = ("kernel",)
_WORDS = re.compile(r"\b(" + "|".join(map(re.escape, MACHINERY)) + r"|events\s*\.\s*register|builtins|get_ipython"
                    r"|exec|eval|compile|sys\s*\.\s*modules|_getframe|__globals__|__dict__|__torch_function__"
                    r"|do_execute)\b|/proc\b|\b__\w+__\b")
# Inside a string, exec/eval/compile count as a call written out ("compile(") rather than as a word of prose
# (a docstring's "a compile report"); reaching them through a string still needs a flagged name (getattr, builtins).
_STRING_WORDS = re.compile(_WORDS.pattern.replace("|exec|eval|compile|", "|").replace(r"\b__\w+__\b", r"\b(?!__main__\b)__\w+__\b")
                           + r"|\b(?:exec|eval|compile)\s*\(|_pagedlab")
# The grading harness's names in the kernel (pagedlab.grading.harness): no learner has a reason to mention them.
_HARNESS = re.compile(r"_pagedlab")
# Modules no exercise needs, by what they do (the start of the reason), flagged where imported with their submodules
# (``import m.x``, ``from m import x``, ``from torch import library``); a process module is flagged wherever it is in
# the path (``torch.multiprocessing``, ``asyncio.subprocess``) and reached as an attribute of an imported name, as is
# a dotted one (``torch.library``, ``t.library`` after ``import torch as t``).
SUSPECT_MODULES = ("builtins", "IPython", "ipykernel", "traitlets", "gc", "inspect", "importlib", "pkgutil", "runpy",
                   "zipimport", "pydoc", "unittest.mock", "mock", "logging.config", "yaml")
# Another process computes out of the grader's sight: no tripwire, op watcher or Triton watcher follows it there.
PROCESS_MODULES = ("subprocess", "multiprocessing", "concurrent", "pty", "posix", "nt", "_posixsubprocess",
                   "webbrowser")
MODULES = {"": SUSPECT_MODULES,
           "starts a process": PROCESS_MODULES,
           "runs C code": ("ctypes", "_ctypes", "cffi", "torch.utils.cpp_extension"),
           "installs a trace or profile hook": ("cProfile", "_lsprof", "profile", "trace", "pdb", "bdb",
                                                "sys.monitoring"),
           "rebuilds objects from bytes": ("pickle", "_pickle", "marshal", "copyreg", "dill", "cloudpickle", "shelve"),
           "defines a PyTorch operator": ("torch.library", "torch._library", "torch._custom_ops", "torch._custom_op"),
           "runs code later": ("weakref", "_weakref", "atexit", "signal", "_signal"),  # (a handler: at any moment)
           "runs code kept in a string": ("code", "codeop"),
           # interpreters of other languages, in C: what their programs compute no watcher of Python's sees
           "runs another language's interpreter": ("sqlite3", "_sqlite3", "tkinter", "_tkinter",
                                                   "torch.jit.CompilationUnit", "torch.jit.script", "torch.jit.load",
                                                   "torch._C.CompilationUnit", "torch._C.import_ir_module"),
           "reads a tensor's memory as bytes": ("struct", "array", "mmap", "zipfile"),
           "rewrites the text Python keeps of the cells": ("linecache",)}
# Reached as an attribute of any module that imports it (``traceback.linecache``, ``inspect.linecache``).
SOURCE_TEXT = ("linecache",)
# Flagged as an attribute of whatever imported name they are reached through (posix.fork, o.fork after
# ``import os as o``), not of a learner's object (``manager.fork(parent, child)`` forks a sequence's blocks).
PROCESS_CALLS = ("system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp",
                 "execl", "execlp", "execle", "execlpe", "execvpe", "spawnv", "spawnve", "spawnl", "spawnle",
                 "spawnlp", "spawnlpe", "spawnvp", "spawnvpe", "startfile", "fork_exec")
_NOT_PROCESS = ("platform.system",)  # the name of the operating system
_PICKLE = re.compile(rb"\x80|c[\w.]+\n[\w.]+\n")  # a pickle's first opcode: PROTO, or GLOBAL "module\nname\n"
# Code run from a string, and attributes reached by a computed name (``attrgetter("tile_budget")(module)``); type
# hints read as code (``get_type_hints`` evaluates an annotation's string: ``"lab.tile_budget"``, or any expression).
DYNAMIC = ("exec", "eval", "compile", "__import__", "globals", "locals", "setattr", "delattr", "vars", "getattr",
           "attrgetter", "methodcaller", "getattr_static", "get_field",  # (string.Formatter's: "0.tile_budget")
           "get_type_hints", "get_annotations", "ForwardRef", "_eval_type", "evaluate_forward_ref")
# Memory shared between a tensor and another library, with no PyTorch op between them: values written there pass no
# watcher (ex02's memory rule follows what PyTorch's ops make; ``.numpy()`` goes through one, DLPack does not).
SHARED = ("from_dlpack", "to_dlpack", "frombuffer")
# A tensor's memory read or written as bytes, with no op of PyTorch's that a watcher sees (``torch.save`` to a buffer,
# a storage's bytes): the values leave PyTorch uncounted (ex02's memory rule counts ``.tolist()`` and ``.item()``).
# Called on any object (``t.untyped_storage()``); ``save`` and ``load`` of torch's (the grading kernel also counts
# what ``torch.save`` writes, however it is reached).
BYTES = ("untyped_storage", "_typed_storage", "storage", "data_ptr", "tobytes")
_SERIAL = ("save", "load", "serialization")
ALLOWED_MAGICS = ("time", "timeit", "matplotlib", "autoreload")
# %config of what is shown only: the inline plots' options (figure_format = "retina") and which results a cell
# displays (ast_node_interactivity = "all"), each set to a literal (IPython runs the line as Python)
_ALLOWED_CONFIG = ("InlineBackend.", "InteractiveShell.ast_node_interactivity")
_ALLOWED_EXTENSIONS = ("autoreload",)  # %load_ext of these only: an extension runs code of its own
_TIMED = ("time", "timeit")
# Special methods that change how Python, torch or NumPy treat an object: its attributes, its class, its conversion to
# a number or an array, its pickling, its life. The rest (``__add__``, ``__eq__``, ``__call__``...) are a learner's
# ordinary Python: the driver turns every result into plain data by value, so they change no grade.
_SPECIAL_DUNDERS = ("__torch_function__", "__torch_dispatch__", "__getattr__", "__getattribute__", "__setattr__",
                    "__delattr__", "__del__", "__new__", "__init_subclass__", "__class_getitem__", "__set_name__",
                    "__get__", "__set__", "__delete__", "__instancecheck__", "__subclasscheck__", "__subclasshook__",
                    "__mro_entries__", "__prepare__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__",
                    "__getnewargs__", "__getnewargs_ex__", "__array__", "__array_function__", "__array_ufunc__",
                    "__array_interface__", "__array_priority__", "__dlpack__", "__dlpack_device__",
                    "__cuda_array_interface__", "__index__", "__int__", "__float__", "__complex__", "__trunc__",
                    "__floor__", "__ceil__", "__round__", "__import__", "__build_class__", "__init_extension__")
_NAMES = ("__name__", "__qualname__")  # read through .__class__: a class's name, nothing to reach with
# What a person reviewing the notebook should look for, by the start of the reason.
_WHY = {"touches": "IPython's execution machinery, which decides what a failing cell looks like",
        "uses .": "reaches objects by their internals, where the grader's state could be read or rewritten",
        "mentions": "code that could run code built at run time, which no reading can check",
        "imports": "a module that reaches into the kernel or its other modules, or loads them by a name no reading "
                   "sees",
        "starts": "work done in another process, where the grader cannot see what computes the result",
        "runs C code": "code the grader can neither read nor watch",
        "shares a tensor's memory": "values written into a tensor by another library, where no op watcher sees "
                                    "them (the memory rule of ex02 follows what PyTorch's ops compute)",
        "installs a trace": "a hook of its own, which replaces the grader's profile hook: calls of reference code go "
                            "unseen",
        "rebuilds objects": "a function or object rebuilt from bytes, reference code included, which no reading sees",
        "a bytes constant": "a pickle kept in the cell: loaded, it rebuilds any function, reference code included",
        "defines a PyTorch operator": "an operator run where the grader's op watcher cannot see inside it",
        "runs code kept in a string": "an interpreter of its own, which runs code kept in strings no reading "
                                      "checks",
        "runs another language's": "a program in another language (SQL, Tcl, TorchScript), kept in a string and run "
                                   "in C, out of the sight of the profile hook and the copy check",
        "runs code torch generates": "Dynamo runs code it generates from the function, with the op watcher switched "
                                     "off: what computes the result is out of the grader's sight",
        "reads a tensor's memory": "a tensor's values taken out of PyTorch as bytes, where no watcher counts them "
                                   "(ex02's memory rule counts .tolist() and .item())",
        "rewrites the text": "Triton's interpreter rebuilds a kernel (and can rebuild any function) from the text "
                             "Python keeps of each cell: rewritten, the code run is not the code shown here",
        "starts a process: the shell": "a shell command, another process, out of the grader's sight: check what it "
                                       "runs",
        "runs code later": "code run when an object is freed or the kernel ends: after the graded calls, where it "
                           "could rewrite what they wrote",
        "uses the exercise's reference code": "called while no tripwire is set, its results can stand in for the "
                                              "learner's (a table of answers built before the graded calls)",
        "a string mentions": "code kept in a string, to run later",
        "defines": "an object that changes how Python or torch treat it",
        "subclasses": "a result that may behave unlike the value it stands for",
        "aliases": "a second name for something the grader or the setup uses",
        "replaces": "an attribute of a module other code relies on",
        "redefines": "the checks and the graded calls rely on the setup's object, not the learner's",
        "assigns": "a special attribute that changes how Python treats an object",
        "in a %time": "code run by a timing magic",
        "in code kept in a string": "code a string holds (a doctest's examples, timeit's statement), which those "
                                    "modules run as a program",
        "uses ": "the kernel's shell or builtins themselves",
        "a name mixes": "a look-alike name (a Cyrillic о looks like o)"}
# A subclass of one of these can pass for a result while behaving otherwise (a custom ==, a faked isclose).
_VALUE_TYPES = ("int", "float", "bool", "str", "list", "tuple", "dict", "Tensor", "ndarray", "deque", "Step",
                "BlockTable")  # magics whose body is Python: it is reviewed like the cell's own code
_transform = TransformerManager().transform_cell
# A dtype is data (``acc_dtype = tl.float32``): a second name for it reaches nothing to rewrite.
DTYPES = frozenset(("float16", "float32", "float64", "bfloat16", "half", "float", "double", "int1", "int8", "int16",
                    "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "bool_", "long", "complex64",
                    "complex128", "float8e4nv", "float8e5"))
_NUMBERS = frozenset(("inf", "nan", "pi", "e", "tau"))  # a module's constants: a second name for a number runs nothing


def imported_names(sources: list[str]) -> set[str]:
    """Names that ``import`` statements in ``sources`` bind (``import torch.nn as nn`` binds ``nn``), and the second
    names of types for annotations (``Tensor = torch.Tensor``, as ``from torch import Tensor`` binds it): setting an
    attribute on any of them, in any cell, is flagged."""
    names = set()
    for tree in filter(None, map(_parse, sources)):
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif _type_alias(node):
                names.add(node.targets[0].id)
    return names


# Types a learner names in annotations by a second name (audit H: ``Tensor = torch.Tensor`` was flagged as an alias,
# where ``from torch import Tensor``, the same object, was not).
_TYPES = frozenset(("torch.Tensor", "torch.dtype", "torch.device", "torch.Size", "torch.Generator", "np.ndarray",
                    "numpy.ndarray", "tl.tensor", "tl.constexpr", "triton.language.tensor", "triton.language.constexpr"))


# The course's own settings, a device and a dtype (``dev = device.DEVICE``, as lecture 09 writes it; round 38z43):
# values, as a dtype is.
_SETTINGS = frozenset(("DEVICE", "DTYPE"))


def _type_alias(node: ast.AST) -> bool:
    """``Name = torch.Tensor`` and the like (:data:`_TYPES`)."""
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Attribute) and ast.unparse(node.value) in _TYPES)


def setup_names(sources: list[str]) -> set[str]:
    """What the pristine setup cells bind in the notebook's global scope (a learner's cell must leave each alone):
    every name a def, class, assignment or import binds there, and for an import also ``name=path`` (what it binds
    the name to), so that a learner's cell may import the same thing again (``import torch``,
    ``from collections import deque``)."""
    names = set()
    for tree in filter(None, map(_parse, sources)):
        for node in _top_level(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {b for name, path in _bindings(node) for b in (name, f"{name}={path}")}
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names |= {t.id for t in _targets(node) if isinstance(t, ast.Name)}
    return names


def bound_names(sources: list[str]) -> frozenset[str]:
    """The names :func:`setup_names` finds, less what each import binds them to."""
    return frozenset(n for n in setup_names(sources) if "=" not in n)


def unrun_reasons(submitted: list[tuple[str, str]], running: set[str], names: set[str]) -> list[str]:
    """Why a person must read the learner's cells that the grader does not run (empty when none matters).

    The grader runs the exercise's own setup and check cells in place of the learner's: a learner's cell that
    claims their role (an edited check, a copy of a setup cell with its tag, a cell at a check's place in a notebook
    matched by position) is left out. Where such a cell binds a name that the exercise's cells bind (the answer's
    function, a setup import), the notebook the learner ran ends with another definition than the one graded.

    Args:
        submitted: the learner's code cells, ``(where, source)`` in order (``where`` names the cell in a reason).
        running: the sources of the code cells that run, and of those the exercise hands out: a cell that is one
            of them but for its layout and comments changes nothing when it is left out.
        names: what the exercise's setup and work cells bind, and the globals the learner's answer reads besides
            (:func:`answer_helpers`): a left-out cell that binds a helper changes the answer too (round 38z41: a
            helper redefined in an edited check cell).
    """
    trees = [tree for tree in map(_parse, running) if tree]
    ran = {ast.dump(tree) for tree in trees}  # (line endings, layout and comments aside)
    given = {n for tree in trees for node in _top_level(tree) for n in _bound(node)}
    read = {n.id for tree in trees for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    reasons = []
    for where, source in submitted:
        tree = _parse(source)
        nodes = _top_level(tree) if tree and ast.dump(tree) not in ran else []
        # (a definition first: a copied setup cell's imports are rarely what it changes)
        bound = sorted({(isinstance(node, (ast.Import, ast.ImportFrom)), n) for node in nodes for n in _bound(node)
                        if n in names})
        # (round 38z58: ``import math`` added to a setup cell, which the grader runs as handed out)
        lost = sorted({n for node in nodes for n in _bound(node)} - given & read)
        if bound or lost:
            reasons.append(f"{where} is not run (the grader runs the exercise's own cell in its place) and binds "
                           + (f"{', '.join(repr(n) for n in lost[:3])}, which the graded notebook then lacks (a call "
                              f"that fails may fail for that)" if lost else
                              f"{', '.join(repr(n) for _, n in bound[:3])}: the notebook as the learner ran it ends "
                              f"with that definition, the grade with the work cell's")
                           + "; a person reads which one is the answer")
    return reasons


def answer_helpers(sources: list[str], answers: set[str]) -> set[str]:
    """The global names, other than ``answers``, that the learner's definitions of ``answers`` in ``sources`` read,
    and what those read in turn (a helper ``_launch`` that ``vector_add`` calls, a constant it reads)."""
    reads: dict[str, set[str]] = {}
    for tree in filter(None, map(_parse, sources)):
        for node in _top_level(tree):
            for name in _bound(node):
                reads.setdefault(name, set()).update(_globals_read(node))
    seen, todo = set(answers), list(answers)
    while todo:
        for name in reads.get(todo.pop(), ()):
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen - set(answers)


@dataclass(frozen=True)
class Machine:
    """What the learner's cells (and the setup's) say of the machine: the names bound from a question to it, the
    names of places for tensors, and what each imported name is (``gpu_ready`` is ``torch.cuda.is_available``)."""

    names: frozenset[str]
    places: frozenset[str]
    aliases: dict[str, str]
    defined: frozenset[str] = frozenset()  # the learner's functions and methods, by name
    passed: frozenset[tuple[str, str | int]] = frozenset()  # (function, parameter or position) given a place
    raisers: frozenset[str] = frozenset()  # the learner's functions that raise, or call one that raises, by machine
    caches: frozenset[str] = frozenset()  # globals bound to an empty dict: a place may key what they keep
    classes: frozenset[str] = frozenset()  # the learner's classes, but those raised for another exception caught
    placers: frozenset[str] = frozenset()  # the learner's functions that return a place (``return dev``)
    keyed: frozenset[str] = frozenset()  # caches (above) a place keys: read only by a key (round 38z63)
    made: frozenset[str] = frozenset()  # names bound to a tensor made where the notebook runs (``torch.empty(0)``)
    hosted: frozenset[tuple[str, str | int]] = frozenset()  # (function, parameter or position) given one, in code
    # the answer reads: no input's place (round 38z63)


class Scope(NamedTuple):
    """The names a statement's functions bind for themselves (parameters, locals: no global of the same name is read
    through them), those of them bound to a place (``dev = x.device``), and to inputs' places only (``devices =
    {t.device for t in tensors}``)."""

    local: frozenset[str] = frozenset()
    places: frozenset[str] = frozenset()
    inputs: frozenset[str] = frozenset()
    params: frozenset[str] = frozenset()  # parameters, and loop names over them only (``for t in tensors``)
    tensors: frozenset[str] = frozenset()  # names read as tensors (``q.shape``), or annotated so (``q: Tensor``)
    said: frozenset[int] = frozenset()  # the nodes of branches that only say why they raise (:func:`_said`)


def machine_names(sources: list[str]) -> Machine:
    """The names that statements of ``sources`` bind from a question to the machine (``ON_GPU =
    torch.cuda.is_available()``, ``FAST = ON_GPU``: round 38z47), and the names they bind to a place for tensors
    (``DEVICE = "cuda" if torch.cuda.is_available() else "cpu"``), which the answer may only place tensors with."""
    statements = [st for tree in filter(None, map(_parse, sources)) for st in tree.body]
    aliases = {name: path for st in statements for node in ast.walk(st) if isinstance(node, (ast.Import, ast.ImportFrom))
               for name, path in _bindings(node)}
    defined = frozenset(f.name for st in statements for f in ast.walk(st)
                        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
    translated = {_root(r.exc.func if isinstance(r.exc, ast.Call) else r.exc) for st in statements
                  for h in ast.walk(st) if isinstance(h, ast.ExceptHandler) for r in ast.walk(h)
                  if isinstance(r, ast.Raise) and r.exc is not None}  # (round 38z59: a failure renamed NoGPU)
    classes = frozenset(c.name for st in statements for c in ast.walk(st) if isinstance(c, ast.ClassDef)) - translated
    caches = frozenset(n for st in statements if isinstance(st, ast.Assign) and (
        isinstance(st.value, ast.Dict) and not st.value.keys or isinstance(st.value, ast.Call) and not st.value.args
        and ast.unparse(st.value.func).split(".")[-1] in ("dict", "OrderedDict")
        or isinstance(st.value, ast.Call) and ast.unparse(st.value.func).split(".")[-1] == "defaultdict")
        for n in _bound(st))
    bare = Machine(frozenset(), frozenset(), aliases)
    caches -= {_root(n) for st in statements for n in ast.walk(st)  # a table with a device's name among its keys
               if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and _fixed_place(n.slice, bare)
               or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("update", "setdefault")
               and any(_fixed_place(a, bare) for a in n.args)}  # (round 38z59: implementations by device)
    bare = replace(bare, defined=defined, caches=caches)
    keyed = frozenset(cache.id for st in statements for scope in [_scope(st, bare)] for n in ast.walk(st)
                      for cache, key in [_looked_up(n, bare)]
                      if key is not None and len(_unkeyed(key, bare, scope)) < len(_elements(key)))
    made = frozenset(t.id for st in statements for node in ast.walk(st) for t, v in _pairs(node)
                     if isinstance(t, ast.Name) and _made_here(v, bare, Scope()))
    bare = replace(bare, keyed=keyed, made=made)
    bare = replace(bare, hosted=_hosted(statements, bare))
    names, places = frozenset(), frozenset()
    while True:
        machine = replace(bare, names=names, places=places, classes=classes)
        asking = [st for st in statements if _asked(st, machine) is not None]
        found = {n for st in asking for node in _top_level(ast.Module([st], []))
                 if not _placing(node, machine) for n in _bound(node)}
        found |= {root for st in asking for scope in [_scope(st, machine)] for c in ast.walk(st)  # SETTINGS.update(...),
                  if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)  # RUN["fused"] = ... in a function
                  or isinstance(c, (ast.Subscript, ast.Attribute)) and isinstance(c.ctx, ast.Store)  # (38z53, 38z57)
                  for root in [_root(c.func if isinstance(c, ast.Call) else c)]
                  if root and root not in aliases and root not in scope.local}
        placed = {n for st in statements for node in _top_level(ast.Module([st], []))
                  if _placing(node, machine) for n in _bound(node)}
        if found <= names and placed <= places:
            break
        names, places = names | found, places | placed
    machine = replace(bare, names=names, places=places, classes=classes)
    passed = frozenset(
        given for st in statements for scope in [_scope(st, machine)] for call in ast.walk(st)
        if isinstance(call, ast.Call) and _callee(call) in defined
        for given in [*((_callee(call), k.arg) for k in call.keywords if _placed(k.value, machine, scope)),
                      *((_callee(call), i) for i, a in enumerate(_given(call)) if _placed(a, machine, scope))])
    functions = [(f, st) for st in statements for f in ast.walk(st) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    placers: frozenset[str] = frozenset()
    while True:  # (round 38z59: a check of the inputs' devices that returns the one they share)
        machine = replace(machine, passed=passed, placers=placers)
        found = frozenset(f.name for f, st in functions for scope in [_scope(st, machine)] for r in ast.walk(f)
                          if isinstance(r, ast.Return) and r.value is not None and _a_place(r.value, machine, scope))
        if found <= placers:
            break
        placers |= found
    raisers: frozenset[str] = frozenset()
    while True:  # a raise that a caller's try catches is a branch (round 38z53: ``if x.is_cuda: raise``, caught)
        machine = replace(machine, raisers=raisers)
        found = frozenset(f.name for f, st in functions for scope in [_scope(st, machine)] for n in ast.walk(f)
                          if isinstance(n, ast.If) and any(isinstance(b, ast.Raise) for b in ast.walk(n))
                          and _asked(n.test, machine, scope) is not None
                          or isinstance(n, ast.Call) and _callee(n) in raisers)
        if found <= raisers:
            return machine
        raisers |= found


# Torch's calls that make a tensor from nothing: it lives on the default device, where the notebook runs, unless a
# ``device=`` places it with an input.
_FACTORIES = frozenset(("empty", "zeros", "ones", "full", "tensor", "as_tensor", "asarray", "randn", "rand", "randint",
                        "arange", "linspace", "logspace", "eye", "empty_strided", "randperm", "scalar_tensor", "Tensor",
                        "FloatTensor", "LongTensor", "IntTensor", "BoolTensor", "HalfTensor"))


def _hosted(statements: list[ast.AST], machine: Machine) -> frozenset[tuple[str, str | int]]:
    """The parameters (:attr:`Machine.hosted`) of the learner's functions that a call in code the answer reads (a
    function's body, or a top-level statement that binds a name a function reads) gives a tensor made where the
    notebook runs: ``_same_device(q, torch.empty(0))`` compares ``q``'s place with the machine's (round 38z63). A
    test call at the top (``out = f(torch.randn(2, 4))``) is not read."""
    functions = [f for st in statements for f in ast.walk(st) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    read = {n.id for f in functions for n in ast.walk(f) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    code = [*functions, *(st for st in statements if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                         ast.ClassDef)) and read & set(_bound(st)))]
    def here(a: ast.AST) -> bool:
        return _made_here(a, machine, Scope())
    def given(call: ast.Call) -> list[ast.AST]:  # f(*[x, torch.empty(0)]): each by its position
        return [e for a in _given(call) for e in (a.value.elts if isinstance(a, ast.Starred)
                                                  and isinstance(a.value, (ast.List, ast.Tuple)) else [a])]
    return frozenset(g for c in code for call in ast.walk(c) if isinstance(call, ast.Call)
                     and _callee(call) in machine.defined
                     for g in [*((_callee(call), k.arg) for k in call.keywords if here(k.value)),
                               *((_callee(call), i) for i, a in enumerate(given(call)) if here(a))])


def _made_here(v: ast.AST, machine: Machine, scope: Scope) -> bool:
    """``torch.empty(0)``, ``torch.zeros_like(x, device="cpu")``, ``x.cpu()``: a tensor made from nothing, placed
    by a device named or the machine's, or moved to one; not on an input's place."""
    if isinstance(v, ast.Name):
        return v.id in machine.made and v.id not in scope.local
    if isinstance(v, ast.Subscript):
        return _made_here(v.value, machine, scope)
    if not isinstance(v, ast.Call):
        return False
    path, attr = _resolved(v.func, machine, scope), getattr(v.func, "attr", None)
    if attr and attr not in ("to", "cuda") + tuple(_NUMBERS_OF) and _made_here(v.func.value, machine, scope):
        return True  # torch.zeros(1).float() (round 38z65)
    placed = [k.value for k in v.keywords if k.arg == "device"]
    if attr in ("cpu", "cuda") or attr == "to" and any(_placed(a, machine, scope) for a in [*v.args[:1], *placed]):
        return not any(_inputs(a, machine, scope) for a in [*v.args[:1], *placed])
    if placed:
        return not _inputs(placed[0], machine, scope)
    return bool(path) and path.startswith("torch.") and path.split(".")[-1] in _FACTORIES


def _callee(call: ast.Call) -> str | None:
    """The name of the function ``call`` calls: ``f`` of ``f(x)``, of ``self.f(x)`` and of ``partial(f, x)``."""
    name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
    if name == "partial" and call.args and isinstance(call.args[0], ast.Name):  # (round 38z59)
        return call.args[0].id
    return name


def _given(call: ast.Call) -> list[ast.AST]:
    """The positional arguments ``call`` gives its callee (:func:`_callee`): those after ``f`` of ``partial(f, ...)``."""
    partial = (call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)) == "partial"
    return call.args[1:] if partial and call.args and isinstance(call.args[0], ast.Name) else call.args


def _fixed_place(v: ast.AST, machine: Machine) -> bool:
    """Whether ``v`` holds a device named in the code: ``"cuda"``, ``torch.device("cpu")``, ``device.DEVICE``."""
    return any(_device_name(n) or isinstance(n, ast.Call) and _resolved(n.func, machine, Scope()) == "torch.device"
               or _resolved(n, machine, Scope()) == "pagedlab.device.DEVICE" for n in ast.walk(v))


def machine_reasons(source: str, answers: set[str], helpers: set[str] = frozenset(),
                    machine: Machine = Machine(frozenset(), frozenset(), {})) -> list[str]:
    """Why a person must read a learner's cell whose statement that binds one of ``answers``, or code among
    ``helpers`` (:func:`answer_helpers`), asks which machine it runs on (:func:`_asked`): the grade is of what this
    machine's branch computes; on a GPU, Colab's, the notebook may compute another way (rounds 38z37 to 38z47:
    ``x + y`` or ``torch.softmax`` there)."""
    tree = _parse(source)
    reasons = []
    for statement in tree.body if tree else ():
        nodes = _top_level(ast.Module([statement], []))
        bound = sorted({n for node in nodes for n in _bound(node)} & answers
                       | {n for node in nodes if _code(node) for n in _bound(node)} & set(helpers))
        asked = _asked(statement, machine) if bound else None
        if asked is not None:
            reasons.append(f"asks which machine it runs on ({ast.unparse(asked)[:60]}, line {asked.lineno}) where it "
                           f"defines {', '.join(map(repr, bound[:3]))}: the grade is of this machine's branch, and on "
                           f"a GPU (Colab's) the notebook may compute another way; a person reads every branch")
    return reasons


# The machine is asked through modules, whatever the name of the function or attribute read from one (rounds 38z37 to
# 38z47 found a new name each time: is_available, is_cpu, find_spec, cpu_count, environ...): a GPU, the platform, the
# environment, the file system, the installed packages, the course's own choice of device and sizes; autocast computes
# in another precision on a GPU only (round 38z44). A few of their values are the same on every machine.
_MACHINE_MODULES = ("torch.cuda", "torch.backends", "torch.version", "torch.mps", "torch.xpu", "torch.cpu",
                    "torch.accelerator", "torch.autocast", "torch.amp", "torch.get_default_device",
                    "torch.get_num_threads", "torch.get_num_interop_threads", "torch.__config__", "torch.has_cuda",
                    "torch.has_mps", "torch._C", "torch.get_device_module", "torch.utils.collect_env", "torch.utils.cpp_extension",
                    "torch.distributed", "triton.runtime", "triton.backends", "pagedlab.device", "platform", "os",
                    "sys", "shutil", "subprocess", "socket", "multiprocessing", "psutil", "importlib", "pkgutil",
                    "sysconfig", "site", "locale", "getpass", "ctypes", "pathlib", "glob", "tempfile", "open",
                    "time", "timeit")  # (round 38z59: how fast a call ran)
_SAME_EVERYWHERE = ("os.path.join", "os.path.basename", "os.path.dirname", "os.path.splitext", "os.sep",
                    "sys.maxsize", "sys.float_info", "sys.int_info", "sys.stdout", "sys.stderr")
# What a tensor says of where it lives (``x.device`` is a place: :func:`_place`); and, where no import says what an
# object is (``globals()["torch"].cuda``), the names only a device's module answers with (a second net).
_PLACE_ATTRS = frozenset(("is_cuda", "is_cpu", "is_mps", "is_xpu", "is_meta", "is_ipu", "is_xla", "is_hpu", "is_mtia",
                          "is_maia", "is_vulkan", "is_mkldnn", "get_device", "is_pinned"))
_ANSWERS = frozenset(("is_available", "device_count", "get_device_name", "get_device_capability",
                      "get_device_properties", "current_device", "is_built", "current_accelerator"))
_DEVICES = frozenset(("cuda", "cpu", "mps", "xpu", "hip", "meta"))
_SAME = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
# What may fail, or give another object, on one machine and not another: a move, a view of host memory (``.numpy()``
# of a GPU tensor raises; ``q.cpu() is q`` holds on a CPU only: round 38z55).
_MOVES = frozenset(("to", "cuda", "cpu", "numpy", "pin_memory", "share_memory_"))
_IDENTITY = frozenset(("data_ptr", "untyped_storage", "storage"))
_AUTOCASTS = frozenset(("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"))


def _asked(node: ast.AST, machine: Machine, scope: Scope | None = None) -> ast.AST | None:
    """The first expression in ``node`` whose value may differ from one machine to another, or None: a value read
    from a module of :data:`_MACHINE_MODULES` (after the learner's imports), a name bound from one
    (:func:`machine_names`), what a tensor says of where it lives, whether a move gave the same object, a place
    (``x.device``, ``DEVICE``) used for anything but placing tensors, keying the learner's cache, or comparing or
    counting the inputs' own places (``x.device != y.device``), or a ``try`` that may fail on one machine only
    (:func:`_tried`). What only prints, logs, warns, raises or asserts, and binds nothing, changes no result and is
    not read (``if VERBOSE: print(x.shape)``, round 38z47)."""
    scope = scope or _scope(node, machine)
    if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))) and (_swallows(node) or not all(
            h.body and isinstance(h.body[-1], ast.Raise) for h in node.handlers)):  # (round 38z51: pass)
        tried = _tried(node, machine, scope)
        if tried is not None:
            return tried
    if isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            caught = item.context_expr
            if isinstance(caught, ast.Call) and _resolved(caught.func, machine, scope) in ("contextlib.suppress",
                                                                                          "suppress") \
                    and not (caught.args and all(_data_errors(a, machine, node.body) for a in caught.args)):
                body = next((n for b in node.body for n in ast.walk(b) if isinstance(n, ast.Call)), None)
                if body is not None:  # (round 38z59: contextlib.suppress, a try that goes on)
                    return body
    if (isinstance(node, ast.If) and all(map(_only_says, node.body + node.orelse)) and _binds_nothing(node.test)
            or _only_says(node) or isinstance(node, ast.Assert) and _binds_nothing(node)
            or _placing(node, machine, scope)):
        return None
    children = list(ast.iter_child_nodes(node))
    if isinstance(node, ast.withitem) and isinstance(node.context_expr, ast.Call) \
            and _resolved(node.context_expr.func, machine, scope) == "torch.device" \
            and all(_placed(a, machine, scope) for a in node.context_expr.args):
        return None  # with torch.device(dev): tensors placed (round 38z59)
    if isinstance(node, ast.Return) and node.value is not None and _a_place(node.value, machine, scope):
        return None  # a place handed back: read where it is used (:attr:`Machine.placers`)
    if len(_pairs(node)) > 1 or _pairs(node) and _pairs(node)[0][1] is not node.value:  # n, dev = x.shape[0], x.device
        children = [v for _, v in _pairs(node) if not _a_place(v, machine, scope)]
    if isinstance(node, ast.Compare) and all(isinstance(o, (ast.Is, ast.IsNot)) for o in node.ops) \
            and all(isinstance(o, ast.Constant) and o.value is None or _place(o, machine, scope)
                    for o in [node.left, *node.comparators]):
        return None  # ``device is None``: whether a place was given (round 38z59)
    if isinstance(node, ast.Compare) and all(isinstance(o, _SAME) for o in node.ops) \
            and all(_inputs(o, machine, scope) for o in [node.left, *node.comparators]) \
            or isinstance(node, ast.Call) and _callee(node) == "len" and node.args and _inputs(node.args[0], machine, scope):
        return None  # inputs' places compared, or counted (rounds 38z49, 38z51: a place made here is the machine's)
    if _moved_identity(node):
        return node
    cache, key = _looked_up(node, machine)
    if key is not None:  # key in CACHE, CACHE[key], CACHE.get(key): by a key, not by a device named (round 38z63)
        if _fixed_place(key, machine):
            return node
        children = [*([cache] if cache.id in machine.names else []), *_unkeyed(key, machine, scope),
                    *(node.args[1:] + node.keywords if isinstance(node, ast.Call) else [])]
    if isinstance(node, ast.Call) and key is None:
        if _resolved(node.func, machine, scope) in _AUTOCASTS and any(
                k.arg == "enabled" and isinstance(k.value, ast.Constant) and k.value.value is False for k in node.keywords):
            return None  # (autocast switched off: the same precision everywhere, round 38z55)
        if _callee(node) in machine.defined:  # a place handed to the learner's own function: read where it is used
            children = [node.func, *(a for a in node.args if not _placed(a, machine, scope)),  # (partial's f too)
                        *(k for k in node.keywords if not _placed(k.value, machine, scope))]
        else:  # a place handed to torch's (``device=``, ``x.to(DEVICE)``): a tensor placed, or moved
            children = [node.func, *(a for a in node.args if not (getattr(node.func, "attr", None) in ("to", "cuda")
                                                                  and _placed(a, machine, scope))),
                        *(k for k in node.keywords if k.arg not in ("device", "device_type")
                          and not (k.arg is None and _place(k.value, machine, scope)))]  # (**factory_kwargs)
    path = _resolved(node, machine, scope)
    if (isinstance(node, ast.Name) and node.id not in scope.local and (
            node.id in machine.names or node.id in machine.keyed and isinstance(node.ctx, ast.Load))
            or _string_form(node, machine, scope)
            or path and path != "pagedlab.device.DEVICE" and (path.split(".")[-1] == "__version__" or (
                path not in _SAME_EVERYWHERE and any(path == m or path.startswith(m + ".") for m in _MACHINE_MODULES)))
            or _last(node) in _PLACE_ATTRS or path is None and _last(node) in _ANSWERS
            or _place(node, machine, scope)):
        return node
    if path and isinstance(node, (ast.Name, ast.Attribute)) and _path(node)[0] in machine.aliases:
        return None  # (a module's name read for it, ``device`` of ``device.size``, is no question of its own)
    return next(filter(None, (_asked(c, machine, scope) for c in children)), None)


def _looked_up(node: ast.AST, machine: Machine) -> tuple[ast.Name | None, ast.AST | None]:
    """The cache and key of ``node`` where it looks one up in a cache of the learner's, or changes it by one (``key in CACHE``,
    ``CACHE[key]``, ``CACHE.get(key)``, ``CACHE.pop(key)``); a cache emptied or counted (``CACHE.clear()``,
    ``len(CACHE)``) has an empty key; anything else (None, None). What else reads a cache a place keys (:attr:`Machine.keyed`: a loop over it,
    its keys) reads which machines it ran on."""
    def cache(n: ast.AST) -> bool:
        return isinstance(n, ast.Name) and n.id in machine.caches
    if isinstance(node, ast.Compare) and all(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops) \
            and len(node.comparators) == 1 and cache(node.comparators[0]):
        return node.comparators[0], node.left
    if isinstance(node, ast.Subscript) and cache(node.value):
        return node.value, node.slice
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and cache(node.func.value) \
            and node.func.attr in ("get", "setdefault", "pop", "clear"):
        return node.func.value, node.args[0] if node.args else ast.Tuple([], ast.Load())
    if isinstance(node, ast.Call) and _callee(node) == "len" and len(node.args) == 1 and cache(node.args[0]):
        return node.args[0], ast.Tuple([], ast.Load())
    return None, None


# What a tensor has, and a number or string has not: a name read so is a tensor's (for :func:`_string_form`).
_TENSOR_ATTRS = frozenset(("shape", "dtype", "device", "dim", "ndim", "numel", "stride", "is_contiguous", "contiguous",
                           "float", "half", "to", "view", "reshape", "transpose", "unsqueeze", "squeeze", "amax",
                           "softmax", "exp", "masked_fill", "new_empty", "new_zeros", "new_ones", "new_full", "clone",
                           "detach", "cpu", "cuda", "mT", "matmul", "element_size", "data_ptr"))
_NUMBERS_OF = frozenset(("item", "tolist", "size", "dim", "numel", "stride", "element_size", "data_ptr", "is_contiguous",
                         "nelement", "storage_offset"))  # a tensor's methods that give numbers
_NOT_TENSORS = frozenset(("device", "dtype", "Size", "finfo", "iinfo", "get_default_dtype", "is_tensor", "numel"))


def _string_form(node: ast.AST, machine: Machine, scope: Scope) -> bool:
    """Whether ``node`` makes a tensor's string (``repr(t)``, ``str(t)``, ``f"{t}"``, ``"%s" % t``), which names its
    device where that is not the CPU (round 38z63: ``"device=" in repr(torch.empty(0, device=DEVICE))``)."""
    if id(node) in scope.said:
        return False
    path = _resolved(node.func, machine, scope) if isinstance(node, ast.Call) else None
    if path in ("repr", "str", "format", "ascii", "reprlib.repr", "pprint.pformat", "pprint.saferepr"):
        operands = node.args[:1]
    elif path == "print" and any(k.arg == "file" for k in node.keywords):  # print(x, file=buf): read back
        operands = node.args
    elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "format" and isinstance(node.func.value, ast.Constant):
        operands = [*node.args, *(k.value for k in node.keywords)]
    elif isinstance(node, ast.FormattedValue):
        operands = [node.value]
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
            and isinstance(node.left.value, str):
        operands = _elements(node.right)
    else:
        return False
    def tensor(o: ast.AST) -> bool:  # a tensor's name, a part of one (x[:1], x.T, x.float()), or torch's tensor
        path = _resolved(o.func, machine, scope) if isinstance(o, ast.Call) else None
        if bool(path) and path.startswith("torch."):
            return path.split(".")[-1] not in _NOT_TENSORS
        if isinstance(o, ast.Call) and isinstance(o.func, ast.Attribute) and o.func.attr not in _NUMBERS_OF:
            return tensor(o.func.value)
        return (isinstance(o, ast.Name) and (o.id in scope.tensors or o.id in machine.made and o.id not in scope.local)
                or isinstance(o, ast.Subscript) and tensor(o.value)
                or isinstance(o, ast.Attribute) and o.attr in ("T", "mT", "H", "data", "grad") and tensor(o.value))
    return any(map(tensor, operands))


def _elements(key: ast.AST) -> list[ast.AST]:
    return key.elts if isinstance(key, ast.Tuple) else [key]


def _unkeyed(key: ast.AST, machine: Machine, scope: Scope) -> list[ast.AST]:
    """What of ``key``, a key into a cache of the learner's (:attr:`Machine.caches`), is read as a value: not its
    places (round 38z53: masks cached under ``(r0, rows, ..., q.device)``, each made there)."""
    return [e for e in _elements(key) if not _keys_a_place(e, machine, scope)]


def _keys_a_place(e: ast.AST, machine: Machine, scope: Scope) -> bool:
    """A place, or its name in a key (``str(q.device)``, ``q.device.type``: round 38z61)."""
    return _placed(e, machine, scope) or (
        isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("str", "repr") and len(e.args) == 1
        and _placed(e.args[0], machine, scope)) or (
        isinstance(e, ast.Attribute) and e.attr in ("type", "index") and _placed(e.value, machine, scope))


def _moved_identity(node: ast.AST) -> bool:
    """``q.cpu() is q``, ``x.cpu().data_ptr()``, ``id(x.to("cpu"))``: whether a move gave the same object, which it
    does on one machine only; and ``x.type()``, a tensor's type named with its device."""
    def moved(v) -> bool:
        return isinstance(v, ast.Call) and getattr(v.func, "attr", None) in _MOVES
    if isinstance(node, ast.Compare) and any(isinstance(o, (ast.Is, ast.IsNot)) for o in node.ops):
        return any(map(moved, [node.left, *node.comparators]))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "id":
        return any(map(moved, node.args))
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "type" and not node.args + node.keywords:
        return True  # x.type(): "torch.cuda.FloatTensor" on a GPU (round 38z57)
    return isinstance(node, ast.Attribute) and node.attr in _IDENTITY and moved(node.value)


def _binds_nothing(node: ast.AST) -> bool:
    """No walrus (round 38z53: in a print) and no call of a method that changes its object (round 38z61:
    ``print(cfg.setdefault("gpu", torch.cuda.is_available()))``), a tensor's in place or into ``out=`` (round 38z65:
    ``print(out.copy_(other))``)."""
    return not any(isinstance(n, ast.NamedExpr) or isinstance(n, ast.Call) and (
        getattr(n.func, "attr", None) in _CHANGES or any(k.arg == "out" for k in n.keywords)
        or re.fullmatch(r"[a-z]\w*[a-z0-9]_", getattr(n.func, "attr", "") or "")) for n in ast.walk(node))


_CHANGES = frozenset(("setdefault", "update", "append", "extend", "insert", "pop", "popitem", "add", "clear", "remove",
                      "discard", "__setitem__", "put", "send", "appendleft", "extendleft"))


def _inputs(node: ast.AST, machine: Machine, scope: Scope) -> bool:
    """Whether ``node`` is where the inputs live, and nothing else: ``q.device``, ``outs[0].device``, a set of them
    (``{t.device for t in tensors}``), or a local name bound to one; not a place made here (``torch.empty(0).device``,
    the default device), a device named, nor the machine's (``DEVICE``)."""
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return bool(node.elts) and all(_inputs(e, machine, scope) for e in node.elts)
    if isinstance(node, (ast.SetComp, ast.ListComp, ast.GeneratorExp)):
        return _inputs(node.elt, machine, scope)
    if isinstance(node, ast.Name):
        return node.id in scope.inputs
    if _last(node) != "device" or not _place(node, machine, scope):
        return False
    held = node.value if isinstance(node, ast.Attribute) else node.args[0]
    while isinstance(held, (ast.Attribute, ast.Subscript)):
        held = held.value
    return isinstance(held, ast.Name) and held.id in scope.params


def _placed(v: ast.AST, machine: Machine, scope: Scope) -> bool:
    return _place(v, machine, scope) or _device_name(v)


def _tried(statement: ast.Try, machine: Machine, scope: Scope) -> ast.AST | None:
    """In a ``try``'s body, what may fail on one machine and not on another, so that which branch runs says which
    machine it is (``try: torch.empty(1, device="cuda")``, ``try: import triton``): a device, a move, an import of a
    package (the standard library is on every machine of one Python), a raise by machine; and any call, where a
    handler that goes on catches more than what the data says (:data:`_DATA_ERRORS`)."""
    broad = _swallows(statement) or any(not (h.body and isinstance(h.body[-1], ast.Raise))
                                        and not _data_errors(h.type, machine, statement.body)
                                        for h in statement.handlers)
    for n in (n for b in statement.body for n in ast.walk(b)):
        if (isinstance(n, ast.keyword) and n.arg == "device" or _device_name(n) or _place(n, machine, scope)
                or broad and isinstance(n, ast.Call)  # (round 38z57: a kernel launch, PyTorch where it fails)
                or isinstance(n, ast.Attribute) and n.attr in _MOVES
                or isinstance(n, (ast.Import, ast.ImportFrom)) and not _stdlib_import(n)
                or isinstance(n, ast.Call) and _callee(n) in machine.raisers):
            return n
    return None


# Errors that say what the data is, the same on every machine (a key missing, an index past the end): a handler of
# only these, or of the learner's own classes, passes over no failure of the machine's.
_DATA_ERRORS = frozenset(("KeyError", "IndexError", "LookupError", "StopIteration", "ZeroDivisionError",
                          "ArithmeticError", "OverflowError", "UnicodeError", "UnicodeDecodeError", "UnicodeEncodeError"))


def _swallows(statement: ast.Try) -> bool:
    """Whether ``statement``'s ``finally`` ends what its body raised (a ``return`` there: round 38z61)."""
    return any(isinstance(n, (ast.Return, ast.Break, ast.Continue)) for b in statement.finalbody for n in ast.walk(b))


def _data_errors(caught: ast.AST | None, machine: Machine, body: list[ast.AST] = ()) -> bool:
    """Whether ``caught`` names data errors only; a ``ValueError`` or ``TypeError`` is one where ``body`` calls only
    Python's builtins and methods of values (``items.index(block)``, ``int(text)``: round 38z65), not a module's
    function, a kernel or a function of the learner's (compiled Triton refuses a host tensor by a ValueError)."""
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    plain = bool(body) and all(
        _callee(n) not in machine.defined and (
            isinstance(n.func, ast.Name) and hasattr(builtins, n.func.id)
            or isinstance(n.func, ast.Attribute) and _root(n.func) not in machine.aliases and _root(n.func) is not None)
        for b in body for n in ast.walk(b) if isinstance(n, ast.Call))
    return caught is not None and all(isinstance(n, ast.Name) and (
        n.id in _DATA_ERRORS or n.id in machine.classes or plain and n.id in ("ValueError", "TypeError")) for n in names)


def _scope(statement: ast.AST, machine: Machine) -> Scope:
    """``statement``'s :class:`Scope`."""
    local, places, inputs, params = set(), set(), set(), set()
    for f in ast.walk(statement):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = f.args
            local |= {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x}
            # (one with a default is no input: ``_host=torch.empty(0)`` lives where the notebook runs, round 38z55)
            positional = [*a.posonlyargs, *a.args]
            given = positional[1:] if positional and positional[0].arg in ("self", "cls") else positional
            name = getattr(f, "name", None)
            hosted = {x.arg for i, x in enumerate(given) if (name, i) in machine.hosted or (name, x.arg) in machine.hosted}
            hosted |= {a.vararg.arg for h, i in machine.hosted if a.vararg and h == name
                       and isinstance(i, int) and i >= len(given)}
            params |= {x.arg for x in positional[:len(positional) - len(a.defaults)]} - hosted
            params |= {x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is None} - hosted
            params |= {x.arg for x in (a.vararg, a.kwarg) if x} - hosted
            if not isinstance(f, ast.Lambda):  # a parameter some call gives a place (round 38z49: device=q.device)
                places |= {x.arg for i, x in enumerate(given) if (f.name, i) in machine.passed}
                places |= {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs] if (f.name, x.arg) in machine.passed}
            local |= {n.id for b in (f.body if isinstance(f.body, list) else [f.body]) for n in ast.walk(b)
                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    tensors = {n.value.id for n in ast.walk(statement) if isinstance(n, ast.Attribute) and n.attr in _TENSOR_ATTRS
               and isinstance(n.value, ast.Name)}
    tensors |= {n.arg for n in ast.walk(statement) if isinstance(n, ast.arg) and n.annotation is not None
                and "Tensor" in ast.unparse(n.annotation)}
    said = _said(statement, machine, frozenset(local))
    loops = [(n.target, n.iter) for n in ast.walk(statement) if isinstance(n, (ast.For, ast.comprehension))]
    while True:  # (a loop over the parameters only, ``zip(outs, lses)`` or ``(a, b)``, gives parameters)
        over = {t.id for target, it in loops if all(
            n.id in params or isinstance(n.ctx, ast.Load) and n.id in ("zip", "enumerate", "reversed")
            for n in ast.walk(it) if isinstance(n, ast.Name)) for t in ast.walk(target) if isinstance(t, ast.Name)}
        if over <= params:
            break
        params |= over
    while True:
        scope = Scope(frozenset(local), frozenset(places), frozenset(inputs), frozenset(params), frozenset(tensors), said)
        bound = [(v, t.id) for n in ast.walk(statement) for t, v in _pairs(n)
                 if isinstance(t, ast.Name) and t.id in local]
        found = {name for v, name in bound if _a_place(v, machine, scope)}
        held = {name for v, name in bound if _inputs(v, machine, scope)}
        if found <= places and held <= inputs:
            return scope
        places, inputs = places | found | held, inputs | held


def _said(statement: ast.AST, machine: Machine, local: frozenset[str]) -> frozenset[int]:
    """The nodes of ``statement``'s branches that end by raising a builtin error no ``try`` of the statement catches
    (not a data error, nor the learner's own), and before it only bind local names or print: what they compute is
    only the error's message (round 38z65: ``msg = f"... got {x}"; raise TypeError(msg)``)."""
    tried = {id(n) for t in ast.walk(statement) if isinstance(t, (ast.Try, getattr(ast, "TryStar", ast.Try)))
             for b in t.body for n in ast.walk(b)}
    said: set[int] = set()
    for node in ast.walk(statement):
        for branch in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")):
            if not (isinstance(branch, list) and branch and isinstance(branch[-1], ast.Raise)) or id(branch[-1]) in tried:
                continue
            error = branch[-1].exc.func if isinstance(branch[-1].exc, ast.Call) else branch[-1].exc
            if not (isinstance(error, ast.Name) and hasattr(builtins, error.id)) or _data_errors(error, machine):
                continue
            if all(_only_says(b) or isinstance(b, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and _binds_nothing(b)
                   and all(isinstance(t, ast.Name) and t.id in local for t in _targets(b)) for b in branch[:-1]):
                said |= {id(n) for b in branch for n in ast.walk(b)}
    return frozenset(said)


def _placing(node: ast.AST, machine: Machine, scope: Scope = Scope()) -> bool:
    """Whether ``node`` binds a place for tensors (:func:`_a_place`) to one name, or to each name it unpacks to."""
    return bool(_pairs(node)) and all(_a_place(v, machine, scope) for _, v in _pairs(node))


def _a_place(v: ast.AST, machine: Machine, scope: Scope) -> bool:
    """Whether ``v`` is a place for tensors: a device's name, a place (:func:`_place`), one of them chosen (``"cuda"
    if torch.cuda.is_available() else "cpu"``), a key with one in it (``(r0, rows, dev)``), or factory keywords
    (``{"device": q.device, "dtype": torch.float32}``, round 38z57): a place's uses only, from then on."""
    if isinstance(v, ast.IfExp):
        return _a_place(v.body, machine, scope) and _a_place(v.orelse, machine, scope)
    if isinstance(v, ast.BoolOp):
        return _a_place(v.values[-1], machine, scope)
    if isinstance(v, ast.Tuple) and any(_keys_a_place(e, machine, scope) for e in v.elts):
        return all(_keys_a_place(e, machine, scope) or _asked(e, machine, scope) is None
                   for e in v.elts)  # (round 38z65: ``return x.device, x.is_cuda``)
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "dict" and not v.args:
        v = ast.Dict([ast.Constant(k.arg) for k in v.keywords], [k.value for k in v.keywords])  # dict(device=...)
    if isinstance(v, ast.Dict):
        placing = {id(x) for k, x in zip(v.keys, v.values)
                   if isinstance(k, ast.Constant) and k.value == "device" and _placed(x, machine, scope)}
        return bool(placing) and all(id(x) in placing or _asked(x, machine, scope) is None for x in v.values)
    return _device_name(v) or _place(v, machine, scope) or _inputs(v, machine, scope)


def _pairs(node: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """(target, value) of an assignment, each unpacked name with its own value (``n, dev = x.shape[0], x.device``,
    round 38z57); empty for anything else."""
    if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
        return []
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List)) \
            and len(targets[0].elts) == len(node.value.elts) and not any(isinstance(e, ast.Starred) for e in targets[0].elts):
        return list(zip(targets[0].elts, node.value.elts))
    return [(t, node.value) for t in targets]


def _resolved(node: ast.AST, machine: Machine, scope: Scope) -> str | None:
    """``torch.cuda.is_available`` for ``gpu_ready`` after ``from torch.cuda import is_available as gpu_ready``, or
    for ``getattr(torch, "cuda").is_available``; a name not imported stands for itself; None for a local one."""
    path = _path(node)
    if not path or path[0] in scope.local:
        return None
    return ".".join((machine.aliases.get(path[0], path[0]), *path[1:]))


def _place(node: ast.AST, machine: Machine, scope: Scope) -> bool:
    """A place for tensors: a tensor's ``.device``, a name bound to one (:func:`machine_names`, :func:`_scope`), the
    course's ``device.DEVICE``, or ``torch.device(...)``."""
    if isinstance(node, ast.Call) and _last(node) is None:
        return _resolved(node.func, machine, scope) == "torch.device" or _callee(node) in machine.placers
    if isinstance(node, ast.Name):
        return node.id in scope.places or node.id in machine.places and node.id not in scope.local
    path = _resolved(node, machine, scope)
    return path == "pagedlab.device.DEVICE" or _last(node) == "device" and path != "torch.device"


def _last(node: ast.AST) -> str | None:
    """The attribute ``node`` reads: ``device`` of ``x.device`` and of ``getattr(x, "device")``; None for others."""
    if isinstance(node, ast.Attribute):
        return node.attr
    path = _path(node) if isinstance(node, ast.Call) else None
    return path[-1] if path else None


def _device_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] in _DEVICES


def _only_says(statement: ast.AST) -> bool:
    """A statement that only prints (not to a file of the learner's), logs, warns or raises, or waits for a GPU's
    queued work before a clock is read (``torch.cuda.synchronize()``, the course's ``device.synchronize()``: round
    38z49), and binds nothing."""
    if not _binds_nothing(statement):
        return False
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.IfExp):  # a() if c else None (round 38z59)
        return all(isinstance(v, ast.Constant) and v.value is None or _only_says(ast.Expr(v))
                   for v in (statement.value.body, statement.value.orelse))
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return isinstance(statement, (ast.Pass, ast.Raise, ast.Assert))
    call, func = statement.value, ast.unparse(statement.value.func)
    attr = getattr(call.func, "attr", None)
    return (func == "print" and all(k.arg != "file" for k in call.keywords) or func in ("display", "warnings.warn")
            or attr in ("debug", "info", "warning", "error", "critical", "exception") and (
                func.split(".")[0] in ("logging", "logger", "log", "_log", "LOGGER", "LOG"))
            or attr == "synchronize" and not call.args)


def _globals_read(node: ast.AST) -> set[str]:
    """The global names a top-level ``node`` reads: a function's or class's free globals (not its parameters or
    locals), its decorators', defaults' and annotations'; an assignment's value's names."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        value = getattr(node, "value", None)
        return {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} if value is not None else set()
    try:
        table = symtable.symtable(ast.unparse(node), "<cell>", "exec")
    except (SyntaxError, ValueError, RecursionError):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    names = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    todo = list(table.get_children())
    while todo:
        scope = todo.pop()
        names |= {s.get_name() for s in scope.get_symbols() if s.is_global() and s.is_referenced()}
        todo += scope.get_children()
    return names


def conditional_reasons(source: str, answers: set[str], helpers: set[str] = frozenset()) -> list[str]:
    """Why a person must read a learner's cell that binds one of ``answers`` (the names the exercise's work cells
    bind) only under a condition: the grade is of the branch the grading machine takes, and another machine (a GPU,
    Colab) may take the other (round 38z37: ``if torch.cuda.is_available(): def vector_add(x, y): return x + y``). So
    for a function or class of ``helpers`` (:func:`answer_helpers`) the answer calls (round 38z41: ``_launch_add``
    defined as ``torch.add`` under that condition); a helper that is a value, a device or a dtype chosen by the
    machine (``DEVICE = "cuda" if ... else "cpu"``), is the learner's to choose."""
    tree = _parse(source)
    reasons = []
    for statement in tree.body if tree else ():
        nodes = _top_level(ast.Module([statement], []))
        if isinstance(statement, ast.If) and ast.unparse(statement.test) in _MAIN and not statement.orelse:
            # true in every notebook's kernel, a script's habit: no choice; what its body chooses is
            reasons += conditional_reasons("\n".join(ast.unparse(n) for n in statement.body), answers, helpers)
            continue
        if isinstance(statement, ast.Try) and _imports_from_the_library(statement):
            continue  # try: from math import prod / except ImportError: a fallback for an older Python, no choice
        if isinstance(statement, _BRANCHING):
            chosen = nodes  # (a context manager may suppress what its body raises: contextlib.suppress)
        else:  # a value that chooses: ``f = (lambda x: x + 1) if torch.cuda.is_available() else f``, ``a or b``
            chosen = [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.AugAssign))
                      and n.value is not None and isinstance(n.value, (ast.IfExp, ast.BoolOp, ast.Subscript))]
        bound = sorted({n for node in chosen for n in _bound(node)} & answers
                       | {n for node in chosen if _code(node) for n in _bound(node)} & set(helpers))
        if bound:
            head = ast.unparse(statement).splitlines()[0]
            reasons.append(f"binds {', '.join(map(repr, bound[:3]))} only under a condition (line {statement.lineno}: "
                           f"{head[:60]}): the grade is of the branch this machine took, and another machine (a GPU, "
                           f"Colab) may take the other; a person reads both")
    return reasons


def _code(node: ast.AST) -> bool:
    """Whether ``node`` binds code: a def or class, or a value that may be a function (:func:`_holds_code`)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    value = getattr(node, "value", None)
    return value is not None and _holds_code(value)


def _holds_code(v: ast.AST) -> bool:
    """Whether what expression ``v`` gives may be a function: a lambda, a name, an attribute that is no dtype
    (``torch.add``), a call given one (``functools.partial(torch.add)``), or one of them chosen (``a if c else b``,
    ``a or b``, ``table[key]``); a constant, a dtype, or a call of constants (``torch.device("cuda")``) is not."""
    if isinstance(v, ast.IfExp):
        return _holds_code(v.body) or _holds_code(v.orelse)
    if isinstance(v, ast.BoolOp):
        return any(map(_holds_code, v.values))
    if isinstance(v, ast.Subscript):
        return _holds_code(v.value)
    if isinstance(v, (ast.Tuple, ast.List, ast.Set)):
        return any(map(_holds_code, v.elts))
    if isinstance(v, ast.Dict):
        return any(_holds_code(x) for x in v.values if x is not None)
    if isinstance(v, ast.Call):
        return any(_holds_code(a) for a in [*v.args, *(k.value for k in v.keywords)])
    if isinstance(v, ast.Attribute):
        return v.attr not in DTYPES
    return isinstance(v, (ast.Lambda, ast.Name))


_MAIN = ("__name__ == '__main__'", "'__main__' == __name__")


def _imports_from_the_library(statement: ast.Try) -> bool:
    """``try:`` of imports of Python's standard library only, whose handlers catch ImportError only: what it picks
    depends on the Python version, the same on every machine of one (a package that only a GPU machine has is not
    the standard library's)."""
    return (all(map(_stdlib_import, statement.body)) and not statement.orelse
            and all(h.type is not None and ast.unparse(h.type) in ("ImportError", "ModuleNotFoundError")
                    for h in statement.handlers))


def _stdlib_import(n: ast.AST) -> bool:
    if isinstance(n, ast.ImportFrom):
        return bool(n.module) and n.level == 0 and n.module.split(".")[0] in sys.stdlib_module_names
    return isinstance(n, ast.Import) and all(a.name.split(".")[0] in sys.stdlib_module_names for a in n.names)


_BRANCHING = (ast.If, ast.Try, getattr(ast, "TryStar", ast.Try), ast.While, ast.For, ast.AsyncFor, ast.Match, ast.With,
              ast.AsyncWith)


def _bound(node: ast.AST) -> list[str]:
    """The global names that a top-level ``node`` binds, or whose attributes or items it sets."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [name for name, _ in _bindings(node)]
    roots = []
    for t in _targets(node):
        while isinstance(t, (ast.Attribute, ast.Subscript)):
            t = t.value
        if isinstance(t, ast.Name):
            roots.append(t.id)
    return roots


def review_reasons(source: str, protected: set[str], modules: set[str] = frozenset(),
                   tripwires: tuple[str, ...] = (), memory: bool = True) -> list[str]:
    """Why a learner cell needs review (empty when it looks harmless).

    Args:
        source: the cell's source (IPython syntax allowed).
        protected: what the pristine setup cells bind (:func:`setup_names`); rebinding one of its names at the
            cell's top level (or through ``global``), by a def, class, assignment or an import of something else,
            is flagged; a function's own local of that name is the learner's.
        modules: names that any cell of the notebook imports; setting an attribute on one of them, on a
            protected name or on a module this cell imports is flagged (``json.dump = ...`` after ``import json``
            in an earlier cell).
        tripwires: the exercise's :attr:`pagedlab.grading.specs.Spec.tripwires`; a reference to one of its
            ``"module:attr"`` functions through a name the notebook imports (``perf_lab.tile_budget``,
            ``getattr(ref, "naive_attention")``) is flagged: called at notebook time, before the driver sets its
            tripwires, it can fill a table of answers.
        memory: the exercise is graded on the memory its calls hold (:attr:`pagedlab.grading.specs.Spec.memory`);
            elsewhere a tensor's bytes read out of PyTorch (``array``, ``struct``) escape no rule, and are not flagged.
    """
    wired = {tuple(t.partition(":")[2].split(".")) for t in tripwires if ":" in t}
    return sorted(f"{r}: {_explain(r)}" for r in set(_reasons(source, protected, set(modules), 0, wired))
                  if memory or "reads a tensor's memory as bytes" not in r)


def _explain(reason: str) -> str:
    return next((why for start, why in sorted(_WHY.items(), key=lambda kv: -len(kv[0])) if reason.startswith(start)),
                "look at what it does")


def _reasons(source: str, protected: set[str], modules: set[str], depth: int,
             wired: set[tuple[str, ...]] = frozenset()) -> list[str]:
    tree = _parse(source)
    if tree is None:  # it will fail to run anyway; still report what it mentions
        return [f"mentions {m.group(0)}" for m in _WORDS.finditer(source)] + (
            ["mentions the grading harness (_pagedlab)"] if _HARNESS.search(source) else [])
    modules = protected | modules | imported_names([source])
    top = {id(n) for n in _top_level(tree)}
    declared_global = {n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names}
    names = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in _NAMES}
    # A docstring is prose ("compares by __eq__"): running it takes exec, eval or compile, each flagged.
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    # A cell magic's body is code (reviewed as such, below), not a string that mentions words.
    magic = {id(a) for n in ast.walk(tree) if isinstance(n, ast.Call) and _timed_body(n) is not None for a in n.args}
    magic |= {id(n.args[1]) for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr == "run_line_magic" and len(n.args) > 1 and isinstance(n.args[0], ast.Constant)
              and n.args[0].value == "config" and _allowed_config(n.args[1])}  # (its option's name is no code)
    launched = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}  # x.kernel[grid]
    # ``"google.colab" in sys.modules``, as the setup cells ask where they run: a name's presence, no module reached
    asked = {id(n.comparators[0]) for n in ast.walk(tree) if isinstance(n, ast.Compare) and len(n.ops) == 1
             and isinstance(n.ops[0], (ast.In, ast.NotIn)) and isinstance(n.left, ast.Constant)
             and isinstance(n.left.value, str)}
    # ``"name" in globals()``: whether the notebook defined a name yet (round 38z40), no object reached
    asked |= {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and id(n) in asked
              and isinstance(n.func, ast.Name) and n.func.id in ("globals", "locals") and not n.args and not n.keywords}
    jitted = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              and any("jit" in ast.unparse(d) for d in f.decorator_list) for n in ast.walk(f)}
    instance, shell = _own_instance(tree), _shell_commands(tree)
    # a command that only reports, or installs a named package, run as ``!cmd`` (its output printed, not kept)
    reporting = {i for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "system" and isinstance(n.func.value, ast.Call)
                 for i in [id(n.func.value.func)] if i in shell and (_installs(shell[i]) or _looks(shell[i]))}
    # a reference function's call whose value only a comparison with another answer reads (an honest check against
    # the course's reference, as the exercise's own checks make): no table of answers comes of it
    compared = {id(n) for call in (compared_calls(tree) if wired else ())
                if all(isinstance(n, (ast.Name, ast.Attribute, ast.expr_context)) for n in ast.walk(call.func))
                for n in ast.walk(call.func)}
    found, kept = [], set()
    for node in ast.walk(tree):
        line = f" (line {node.lineno})" if hasattr(node, "lineno") else ""
        if (isinstance(node, ast.Attribute) and node.attr == "__class__" and id(node) in names
                and isinstance(node.ctx, ast.Load)):
            continue  # self.__class__.__name__ in a __repr__
        if isinstance(node, ast.Attribute) and node.attr in MACHINERY:
            found.append(f"touches .{node.attr}{line}")
        elif isinstance(node, ast.Attribute) and node.attr in INTROSPECTION and not (
                node.attr in _OWN and (id(node) in launched or _root(node) in ("self", "cls"))
                or node.attr == "__dict__" and id(node.value) in instance
                or node.attr == "modules" and id(node) in asked and ast.unparse(node) == "sys.modules"):
            found.append(f"uses .{node.attr}{line}")
        elif isinstance(node, ast.Attribute) and node.attr == "compile" and _root(node) in modules | {"torch"}:
            found.append(f"runs code torch generates: {ast.unparse(node)}{line}")
        elif isinstance(node, ast.Attribute) and node.attr in DYNAMIC:
            found.append(f"uses .{node.attr}{line}")
        elif isinstance(node, ast.Attribute) and node.attr in SOURCE_TEXT:
            found.append(f"rewrites the text Python keeps of the cells: uses .{node.attr}{line}")
        elif isinstance(node, ast.Attribute) and node.attr in SHARED:
            found.append(f"shares a tensor's memory: .{node.attr}{line}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in BYTES:
            found.append(f"reads a tensor's memory as bytes: .{node.func.attr}(){line}")
        elif isinstance(node, ast.Attribute) and node.attr in _SERIAL and _root(node) == "torch":
            found.append(f"reads a tensor's memory as bytes: {ast.unparse(node)}{line}")
        elif isinstance(node, ast.Attribute) and _submodule(node, modules):  # torch.multiprocessing: torch imports it
            found.append(f"{_submodule(node, modules)}{line}")
        elif (isinstance(node, ast.Attribute) and node.attr in PROCESS_CALLS and _root(node) in modules
              and ast.unparse(node) not in _NOT_PROCESS):  # posix.fork, o.system after import os as o
            found.append(f"starts a process: {ast.unparse(node)}{line}")
        elif (isinstance(node, ast.Attribute) and node.attr == "register" and isinstance(node.value, ast.Attribute)
              and node.value.attr == "events"):
            found.append("touches .events.register")
        elif isinstance(node, ast.Name) and _HARNESS.search(node.id):
            found.append(f"mentions the grading harness ({node.id}){line}")
        elif isinstance(node, ast.Attribute) and _HARNESS.search(node.attr):
            found.append(f"mentions the grading harness (.{node.attr}){line}")
        elif isinstance(node, ast.Name) and node.id == "get_ipython" and id(node) in shell and id(node) not in reporting:
            found.append(f"starts a process: the shell command {shell[id(node)]!r}{line}")
        elif (isinstance(node, ast.Name) and node.id in ("__builtins__", "get_ipython")
              and not _allowed_magic(node, tree)):
            found.append(f"uses {node.id}{line}")
        elif (isinstance(node, ast.Name) and node.id in DYNAMIC + INTROSPECTION[1:3] and id(node) not in instance
              and id(node) not in asked):
            found.append(f"mentions {node.id}{line}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if not (isinstance(node, ast.ImportFrom) and node.module == "IPython.display" and node.level == 0
                    and {a.name for a in node.names} <= _DISPLAYS):
                found += [f"{what}imports {m}{line}" for m in mods for what in [_module(m)] if what is not None]
            if isinstance(node, ast.ImportFrom):
                found += [f"{what}imports {a.name} from {node.module}{line}" for a in node.names
                          for what in [_module(f"{node.module}.{a.name}")]
                          if what is not None and _module(node.module or "") is None]
                found += [f"starts a process: imports {a.name} from {node.module}{line}" for a in node.names
                          if a.name in PROCESS_CALLS]
                found += [f"imports {a.name} from {node.module}{line}" for a in node.names
                          if a.name in DYNAMIC + INTROSPECTION or a.name.startswith("_")]
                found += [f"shares a tensor's memory: imports {a.name} from {node.module}{line}" for a in node.names
                          if a.name in SHARED]
                found += [f"uses the exercise's reference code: from {node.module} import {a.name}{line}"
                          for a in node.names if (a.name,) in wired]
            found += [f"redefines {name}, which a setup cell defines or imports{line}" for name, path in _bindings(node)
                      if name in protected and f"{name}={path}" not in protected
                      and (id(node) in top or name in declared_global)]
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and id(node) not in magic):
            found += [f"a string mentions {m.group(0)}{line}" for m in _STRING_WORDS.finditer(node.value)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, bytes) and _PICKLE.match(node.value):
            found.append(f"a bytes constant is a pickle: {node.value[:40]!r}{line}")
        if isinstance(node, (ast.Name, ast.Attribute, ast.Call)) and wired and id(node) not in compared:
            path = _path(node)
            if path and path[0] in modules and any(path[-len(t):] == t for t in wired if len(path) >= len(t)):
                found.append(f"uses the exercise's reference code: {ast.unparse(node)}{line}")
            elif (isinstance(node, ast.Attribute) and any(len(t) == 2 and t[1] == node.attr for t in wired)
                  and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                # a method of a reference class, called on any object (an instance made at notebook time)
                found.append(f"uses the exercise's reference code: {ast.unparse(node)}{line}")
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and wired
                and re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", node.value.strip())):
            # a name in a string that typing, pydoc or a resolver turns into the object (a string annotation read
            # back by typing.get_type_hints)
            path = tuple(node.value.strip().split("."))
            if path[0] in modules and any(path[-len(t):] == t for t in wired if len(path) >= len(t)):
                found.append(f"uses the exercise's reference code: a string names {node.value.strip()}{line}")
        if isinstance(node, ast.MatchClass) and wired:  # case ModuleType(tile_budget=f): an attribute by a pattern
            found += [f"uses the exercise's reference code: a pattern reads .{attr}{line}" for attr in node.kwd_attrs
                      if any(t[-1] == attr for t in wired)]
        if isinstance(node, ast.Call) and depth < 3:
            body = _timed_body(node)
            if body is not None:
                found += [f"in a %time/%%time body: {why}"
                          for why in _reasons(body, protected, modules, depth + 1, wired)]
        if isinstance(node, (ast.Constant, ast.Call)) and depth < 3 and id(node) not in kept:
            code = string_code(node, magics=False)  # (a %time body is read above, as one)
            kept.update(id(n) for n in ast.walk(node))  # (a call's strings are read once, with the call)
            if code:
                found += [f"in code kept in a string{line}: {why}"
                          for why in _reasons(code, protected, modules, depth + 1, wired)]
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("__")
                and node.name.endswith("__") and node.name in _SPECIAL_DUNDERS):
            found.append(f"defines {node.name}{line}")
        if isinstance(node, ast.ClassDef):
            found += [f"subclasses {ast.unparse(b)}{line}" for b in node.bases
                      if (getattr(b, "id", None) or getattr(b, "attr", None)) in _VALUE_TYPES]
        if isinstance(node, (ast.Name, ast.Attribute, ast.FunctionDef, ast.ClassDef, ast.arg)):
            name = getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "name", None) or node.arg
            if mixed_script(name):
                found.append(f"a name mixes scripts: {name!r}{line}")
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            root = _root(node.value)
            if (isinstance(node.value, (ast.Name, ast.Attribute)) and root in modules | {"check", "assert_close"}
                    and id(node) not in jitted and getattr(node.value, "attr", None) not in DTYPES | _SETTINGS
                    and not (_type_alias(node) and id(node) in top)
                    and getattr(node.value, "attr", None) not in _NUMBERS):
                found.append(f"aliases {ast.unparse(node.value)}{line}")
        for target in _targets(node):
            root = _root(target)
            if isinstance(target, ast.Attribute) and target.attr.startswith("__") and target.attr.endswith("__"):
                found.append(f"assigns {ast.unparse(target)}{line}")
            elif root in modules and target is not None and not isinstance(target, ast.Name):
                found.append(f"replaces {ast.unparse(target)}{line}")
            elif (isinstance(target, ast.Name) and target.id in protected
                  and (id(node) in top or target.id in declared_global) and not _plain_value(node)):
                found.append(f"redefines {target.id}, which a setup cell defines or imports{line}")
            elif (isinstance(target, ast.Name) and target.id.startswith("__") and target.id.endswith("__")
                  and target.id != "__slots__"  # (a class's fixed attributes: ordinary Python)
                  and isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr))):
                found.append(f"assigns {target.id}{line}")
    return found


def reference_reasons(source: str, setup: list[str] = (), answers: frozenset[str] | None = None) -> list[str]:
    """Where a learner cell imports a module of ``pagedlab`` that holds the exercise's reference code (``answers``:
    the modules of its tripwires and the exercise checks, or a package above one of them; None: every module of
    ``pagedlab``), other than as the ``setup`` cells import it (``from pagedlab.memory import GiB`` again binds what
    the setup bound). A course module with none of it (``pagedlab.testing``'s inputs) is the learner's to use.

    Reference code reached any other way (an attribute, a string, pickle, an interpreter) is caught where it is
    called, by the grading kernel's tripwires (:mod:`pagedlab.grading.harness`), not by reading names here.
    """
    tree = _parse(source)
    if tree is None:
        return []
    given = _setup_imports(tuple(setup))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or all(
                i in given or _data_of_a_setup_module(i, given) for i in _imports_of(node)):
            continue
        line = f" (line {node.lineno})"
        mods = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                [f"{node.module}.{a.name}" if node.module and _is_module(f"{node.module}.{a.name}")
                 else node.module or "" for a in node.names])
        found += [f"imports {m}, which holds reference code{line}" for m in mods if m.split(".")[0] == "pagedlab"
                  and (answers is None or any(m == a or m.startswith(a + ".") or a.startswith(m + ".")
                                              for a in answers))]
    return sorted(set(found))


def _data_of_a_setup_module(imported: tuple[str, str, str], given: frozenset) -> bool:
    """``imported`` (:func:`_imports_of`) takes a value that computes nothing (a constant, a preset: not callable, not
    a module) from a module the setup imports from: ex05's ``from pagedlab.memory import LLAMA3_8B`` beside the
    setup's ``OPT_13B``. What its methods compute, the setup's own names reach as well, and the tripwires see."""
    module, name, _ = imported
    if not name or module not in {m for m, n, _ in given if n}:
        return False
    try:  # (a module the setup imports: the grader's process may import it too)
        value = getattr(importlib.import_module(module), name, None)
    except Exception:  # noqa: BLE001 - a module that cannot be read here is no setup module's data
        return False
    return value is not None and not callable(value) and not isinstance(value, types.ModuleType)


@functools.lru_cache(maxsize=None)
def _is_module(name: str) -> bool:
    """``name`` (dotted, under ``pagedlab``) is a module or package of the course's, found without importing it."""
    import pagedlab

    parts, base = name.split(".")[1:], Path(pagedlab.__file__).parent
    if parts[:1] == ["kernels"] and not (base / "kernels").is_dir():
        base = base.parent  # (a checkout's kernels/ folder beside the package, as pagedlab maps it)
    path = base.joinpath(*parts)
    return name.startswith("pagedlab.") and (path.with_suffix(".py").is_file() or (path / "__init__.py").is_file())


@functools.lru_cache(maxsize=64)
def _setup_imports(setup: tuple[str, ...]) -> frozenset[tuple[str, str, str]]:
    """What the ``setup`` cells import (:func:`_imports_of`), read once for every learner cell of an exercise."""
    return frozenset().union(*(_imports_of(t) for t in map(_parse, setup) if t is not None))


def _imports_of(tree: ast.AST) -> set[tuple[str, str, str]]:
    """``(module, name, bound as)`` of each import in ``tree`` (``import a.b``: ``("a.b", "", "a")``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {(a.name, "", a.asname or a.name.partition(".")[0]) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out |= {(f"{'.' * node.level}{node.module or ''}", a.name, a.asname or a.name) for a in node.names}
    return out


def _top_level(tree: ast.Module) -> list[ast.AST]:
    """The nodes that run in the cell's own (global) scope: not inside a function, lambda, class body or
    comprehension (a def or class statement itself is top level: it binds its name there)."""
    out, todo = [], list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo += node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        elif isinstance(node, ast.ClassDef):
            todo += node.decorator_list + node.bases
        elif not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            todo += list(ast.iter_child_nodes(node))
    return out


def _own_instance(tree: ast.Module) -> set[int]:
    """The ids of the ``self`` in ``self.__dict__`` and of ``vars`` in ``vars(self)``, where ``self`` is the first
    parameter of a method of a class the cell defines, never rebound there: an instance's own attributes, which an
    attribute assignment reaches as well (a module's ``__dict__`` is what the rule on ``__dict__`` guards)."""
    found = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for method in (n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            args = method.args.posonlyargs + method.args.args
            if not args or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list):
                continue
            me = args[0].arg
            if any(isinstance(n, ast.Name) and n.id == me and not isinstance(n.ctx, ast.Load) for n in ast.walk(method)):
                continue
            for n in ast.walk(method):
                if isinstance(n, ast.Attribute) and n.attr == "__dict__" and isinstance(n.value, ast.Name) \
                        and n.value.id == me:
                    found.add(id(n.value))
                elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "vars"
                      and len(n.args) == 1 and not n.keywords and isinstance(n.args[0], ast.Name)
                      and n.args[0].id == me):
                    found.add(id(n.func))
    return found


def _shell_commands(tree: ast.Module) -> dict[int, str]:
    """``{id of get_ipython: the command}`` for each shell command a cell runs (``!cmd``, ``x = !cmd``, which IPython
    turns into ``get_ipython().system("cmd")`` and ``.getoutput``; ``%%bash``, ``%%sh``, ``%%script``)."""
    found = {}
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Call)
                and isinstance(n.func.value.func, ast.Name) and n.func.value.func.id == "get_ipython"
                and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in n.args)):
            continue
        args = [a.value for a in n.args]
        if n.func.attr in ("system", "getoutput") and len(args) == 1:
            found[id(n.func.value.func)] = args[0]
        elif n.func.attr == "run_cell_magic" and len(args) == 3 and args[0] in ("bash", "sh", "script", "system"):
            found[id(n.func.value.func)] = f"%%{args[0]} {args[1]}".rstrip() + "\n" + args[2]
    return found


def _timed_body(call: ast.Call) -> str | None:
    """The Python body of ``%time``/``%%time``/``%timeit``/``%%timeit`` (as IPython rewrites them), else None."""
    body = magic_body(call)
    if body is None or not (isinstance(call.args[0], ast.Constant) and call.args[0].value in _TIMED):
        return None
    return body.value if isinstance(body, ast.Constant) and isinstance(body.value, str) else "exec('<not a string>')"


def _plain_value(node: ast.AST) -> bool:
    """True for ``name = <data>``: a number, a string, None, a tuple of them, or one of several chosen by a condition
    (``device = "cuda" if torch.cuda.is_available() else "cpu"``): plain data runs nothing when a check or a graded
    call uses the name, so rebinding a setup name to it fools neither (it only breaks the learner's own code)."""
    def plain(v: ast.AST) -> bool:
        if isinstance(v, ast.IfExp):
            return plain(v.body) and plain(v.orelse)
        if isinstance(v, ast.Tuple):
            return all(map(plain, v.elts))
        return isinstance(v, ast.Constant) and not isinstance(v.value, bytes)
    return isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and plain(node.value)


def mixed_script(name: str) -> bool:
    """True when ``name``'s letters come from more than one script (Latin and Cyrillic, say)."""
    scripts = {unicodedata.name(ch, "?").split()[0] for ch in name if ch.isalpha()}
    return len(scripts) > 1


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
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):  # and what it declares global (round 38z51)
        return [ast.Name(id=node.name), *(ast.Name(id=g) for n in ast.walk(node) if isinstance(n, ast.Global)
                                          for g in n.names)]
    elif isinstance(node, ast.ClassDef):
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


def _bindings(node: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
    """``(name, what it is bound to)`` for each name an import binds: ``import a.b`` binds ``a`` to ``a``,
    ``import a.b as c`` ``c`` to ``a.b``, ``from a import b as c`` ``c`` to ``a.b``."""
    if isinstance(node, ast.Import):
        return [(a.asname, a.name) if a.asname else (a.name.split(".")[0],) * 2 for a in node.names]
    module = "." * node.level + (node.module or "")
    return [(a.asname or a.name, f"{module}.{a.name}") for a in node.names if a.name != "*"]


# What a notebook shows its results with (audit H: ``from IPython.display import Markdown, display`` was flagged): objects
# that are shown, and the functions that show them; nothing that reaches the kernel or its shell.
_DISPLAYS = frozenset(("display", "update_display", "clear_output", "Markdown", "HTML", "Latex", "Math", "Image",
                       "SVG", "JSON", "Pretty", "Code", "Audio", "Video", "IFrame", "FileLink", "FileLinks",
                       "ProgressBar", "Javascript"))


def _module(path: str) -> str | None:
    """The start of the reason for importing module ``path`` (``""``, ``"starts a process: "``), None if fine."""
    return next((f"{what}: " if what else "" for what, mods in MODULES.items() for m in mods
                 if path == m or path.startswith(m + ".") or m in PROCESS_MODULES and m in path.split(".")), None)


def _submodule(node: ast.Attribute, modules: set[str]) -> str | None:
    """The reason for reaching a flagged module as an attribute of an imported name (``torch.multiprocessing``,
    ``t.library`` after ``import torch as t``), else None."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.insert(0, node.attr)
        node = node.value
    return next((f"{what + ': ' if what else ''}uses .{'.'.join(attrs)}" for what, mods in MODULES.items()
                 for m in mods if isinstance(node, ast.Name) and node.id in modules
                 and (m.split(".")[1:] == attrs or m in PROCESS_MODULES and [m] == attrs)), None)


def _path(node: ast.AST) -> tuple[str, ...] | None:
    """``("perf_lab", "tile_budget")`` for ``perf_lab.tile_budget`` or ``getattr(perf_lab, "tile_budget")``."""
    if isinstance(node, ast.Name):
        return (node.id,)
    if isinstance(node, ast.Attribute):
        inner = _path(node.value)
        return inner + (node.attr,) if inner else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
        inner = _path(node.args[0])
        return inner + tuple(node.args[1].value.split(".")) if inner else None
    return None


def _root(node: ast.AST) -> str | None:
    """``torch`` for ``torch.nn.functional.softmax`` or ``torch.x[0]``; None for anything else."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _allowed_config(arg: ast.AST) -> bool:
    """``%config``'s line is one of :data:`_ALLOWED_CONFIG`'s options, set to a literal or only read."""
    if not isinstance(arg, ast.Constant) or not str(arg.value).strip().startswith(_ALLOWED_CONFIG):
        return False
    _, equals, value = str(arg.value).partition("=")
    try:
        if equals:
            ast.literal_eval(value.strip())  # (raises for anything but a literal)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


# ``pip install`` of packages by name and version only, as the setup cells' comments advise on Colab
# (``%pip install -q "triton==3.6.*"``): the grading kernel has no network and a read-only environment, so it installs
# nothing there; a path, a URL, an index or a requirements file would name code of the learner's, and is flagged.
_PIP_OPTIONS = frozenset(("-q", "-qq", "-qqq", "--quiet", "-U", "--upgrade", "--no-deps"))
_REQUIREMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?"
                          r"((==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!-]+(,(==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!-]+)*)?")


# Shell commands that only report on the machine, as a first cell on Colab runs them (``!nvidia-smi``): each word of
# the command one of these (a command, then its options and plain names), no shell syntax (``;``, ``|``, ``>``, ``$``).
_LOOKS = {("nvidia-smi",): r"-L|-q|--query-gpu=[a-z_.,]+|--format=[a-z,]+", ("nproc",): "", ("lscpu",): "",
          ("pwd",): "", ("free",): r"-[hmgb]", ("uname",): r"-[asrmnpo]+", ("df",): r"-h", ("nvcc",): r"--version|-V",
          ("python",): r"--version|-V", ("python3",): r"--version|-V", ("ls",): r"-[lahtr1]+|[\w./-]+",
          ("pip", "list"): "", ("pip", "freeze"): "", ("pip", "show"): r"[A-Za-z0-9._-]+"}


def _looks(command: str) -> bool:
    """True for a shell command that only reports on the machine (:data:`_LOOKS`)."""
    if re.search(r"[;&|<>$`(){}\n\\*?]", command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return any(tuple(words[:len(head)]) == head and all(re.fullmatch(rest, w) for w in words[len(head):])
               for head, rest in _LOOKS.items() if rest or len(words) == len(head))


def _installs(command: str) -> bool:
    """True for ``pip install`` (``pip3``, ``python -m pip``) of packages named by name and version only."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for start in (["pip"], ["pip3"], ["python", "-m", "pip"], ["python3", "-m", "pip"]):
        if words[:len(start) + 1] == [*start, "install"]:
            rest = words[len(start) + 1:]
            return bool(rest) and all(w in _PIP_OPTIONS or _REQUIREMENT.fullmatch(w) for w in rest) and any(
                w not in _PIP_OPTIONS for w in rest)
    return False


def _allowed_magic(name: ast.Name, tree: ast.Module) -> bool:
    """True for ``get_ipython().run_line_magic('timeit', ...)`` and the like (IPython's rewrite of ``%timeit``)."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "system"
                and isinstance(node.func.value, ast.Call) and node.func.value.func is name and len(node.args) == 1
                and isinstance(node.args[0], ast.Constant)):
            return _installs(str(node.args[0].value)) or _looks(str(node.args[0].value))  # ``!nvidia-smi``
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("run_line_magic", "run_cell_magic") and isinstance(node.func.value, ast.Call)
                and node.func.value.func is name and node.args and isinstance(node.args[0], ast.Constant)):
            magic = node.args[0].value
            if magic == "config":
                return len(node.args) > 1 and _allowed_config(node.args[1])
            if magic == "pip":
                return len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and _installs(
                    f"pip {node.args[1].value}")
            if magic == "load_ext":
                return (len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
                        and str(node.args[1].value).strip() in _ALLOWED_EXTENSIONS)
            return magic in ALLOWED_MAGICS
    return False
