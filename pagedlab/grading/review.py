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
import functools
import importlib
import math
import operator
import re
import shlex
import symtable
import sys
import types
import unicodedata
from pathlib import Path


from pagedlab.grading.harness import compared_calls, kept_names
from pagedlab.grading.similarity import _transform, magic_body, string_code

MACHINERY = ("_showtraceback", "showtraceback", "showsyntaxerror", "set_custom_exc", "custom_exceptions",
             "input_transformers_cleanup", "input_transformers_post", "input_transformer_manager",
             "ast_transformers", "settrace", "setprofile", "addaudithook", "run_cell", "run_ast_nodes", "run_code",
             "excepthook", "_render_traceback_",
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
# (``concurrent.futures`` starts a process only through its ProcessPoolExecutor, a call below; its thread pool runs
# in the kernel, where the watchers and the count of threads see it: round 38z184, an honest demo's thread pool.)
PROCESS_MODULES = ("subprocess", "multiprocessing", "concurrent.futures.process", "pty", "posix", "nt",
                   "_posixsubprocess", "webbrowser")
MODULES = {"": SUSPECT_MODULES,
           "starts a process": PROCESS_MODULES,
           "runs C code": ("ctypes", "_ctypes", "cffi", "torch.utils.cpp_extension"),
           "installs a trace or profile hook": ("cProfile", "_lsprof", "profile", "trace", "pdb", "bdb",
                                                "sys.monitoring", "sys.settrace", "sys.setprofile",  # (round 38z150:
                                                "threading.settrace", "threading.setprofile",  # Python 3.12's
                                                "threading.settrace_all_threads",  # hooks of every thread)
                                                "threading.setprofile_all_threads"),
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
                 "spawnlp", "spawnlpe", "spawnvp", "spawnvpe", "startfile", "fork_exec", "ProcessPoolExecutor")
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
# The special names a parsed cell is flagged for defining or reaching (the rest are a learner's ordinary Python).
_FLAGGED_DUNDERS = frozenset(n for n in (*_SPECIAL_DUNDERS, *MACHINERY, *INTROSPECTION, *DYNAMIC)
                             if n.startswith("__") and n.endswith("__"))
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
        for node in _walk(tree):
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
# torch's switches that let float32 products run in TF32 on a GPU (``torch.backends.cuda.matmul.allow_tf32``), and
# the values that switch it off: setting one off is no replaced attribute, and gives the products a CPU computes.
_TF32 = frozenset(("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
                   "fp32_precision"))
_TF32_OFF = (False, "ieee")


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
    read = {n.id for tree in trees for n in _walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
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


def _globals_read(node: ast.AST) -> set[str]:
    """The global names a top-level ``node`` reads: a function's or class's free globals (not its parameters or
    locals), its decorators', defaults' and annotations'; an assignment's value's names."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        value = getattr(node, "value", None)
        return {n.id for n in _walk(value) if isinstance(n, ast.Name)} if value is not None else set()
    try:
        table = symtable.symtable(ast.unparse(node), "<cell>", "exec")
    except (SyntaxError, ValueError, RecursionError):
        return {n.id for n in _walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    names = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    todo = list(table.get_children())
    while todo:
        scope = todo.pop()
        names |= {s.get_name() for s in scope.get_symbols() if s.is_global() and s.is_referenced()}
        todo += scope.get_children()
    return names


def conditional_reasons(source: str, answers: set[str], helpers: set[str] = frozenset(),
                        aliases: dict[str, str] | None = None) -> list[str]:
    """Why a person must read a learner's cell that binds one of ``answers`` (the names the exercise's work cells
    bind) only under a condition: the grade is of the branch the grading machine takes, and another machine (a GPU,
    Colab) may take the other (round 38z37: ``if torch.cuda.is_available(): def vector_add(x, y): return x + y``). So
    for a function or class of ``helpers`` (:func:`answer_helpers`) the answer calls (round 38z41: ``_launch_add``
    defined as ``torch.add`` under that condition); a helper that is a value, a device or a dtype chosen by the
    machine (``DEVICE = "cuda" if ... else "cpu"``), is the learner's to choose. What runs its body the same way on
    every machine is no condition, and its body is read as the cell's (round 38z208): a ``for`` over numbers the
    code writes, with no ``break`` or ``continue``; a ``with`` of managers that let every failure through
    (``torch.no_grad()``, by the modules the notebook imports, ``aliases``: :data:`PROPAGATING`); a table read by
    a key the code writes."""
    tree = _parse(source)
    reasons = []
    for statement in tree.body if tree else ():
        nodes = _top_level(ast.Module([statement], []))
        if isinstance(statement, ast.If) and ast.unparse(statement.test) in _MAIN and not statement.orelse \
                or _unconditional(statement, aliases or {}):
            # true in every notebook's kernel, a script's habit: no choice; what its body chooses is
            body = statement.body + getattr(statement, "orelse", [])
            reasons += conditional_reasons("\n".join(ast.unparse(n) for n in body), answers, helpers, aliases)
            continue
        if isinstance(statement, ast.Try) and (_imports_from_the_library(statement) or _progress_bar(statement)):
            continue  # try: from math import prod / except ImportError: a fallback for an older Python, no choice
        if isinstance(statement, _BRANCHING):
            chosen = nodes  # (a context manager may suppress what its body raises: contextlib.suppress)
        else:  # a value that chooses: ``f = (lambda x: x + 1) if torch.cuda.is_available() else f``, ``a or b``
            chosen = [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.AugAssign))
                      and n.value is not None and isinstance(n.value, (ast.IfExp, ast.BoolOp, ast.Subscript))
                      and not (isinstance(n.value, ast.Subscript) and _written(n.value.slice))]
        bound = sorted({n for node in chosen for n in _bound(node)} & answers
                       | {n for node in chosen if _code(node) for n in _bound(node)} & set(helpers))
        if bound:
            head = ast.unparse(statement).splitlines()[0]
            reasons.append(f"binds {', '.join(map(repr, bound[:3]))} only under a condition (line {statement.lineno}: "
                           f"{head[:60]}): the grade is of the branch this machine took, and another machine (a GPU, "
                           f"Colab) may take the other; a person reads both")
    return reasons


# Modules whose context managers never end what their body raised (torch's, the course's, a file's, a lock's ...): a
# ``with`` of theirs runs its body alike everywhere, or stops the cell; one over any other may go on after a failure,
# as a ``try`` does
PROPAGATING = ("torch", "pagedlab", "triton", "numpy", "matplotlib", "IPython", "tqdm", "warnings", "threading",
               "tempfile", "io", "open", "os", "time", "concurrent.futures", "multiprocessing", "unittest.mock",
               "contextlib.nullcontext", "contextlib.closing", "contextlib.redirect_stdout",
               "contextlib.redirect_stderr", "contextlib.chdir", "decimal.localcontext")


def _written(node: ast.AST) -> bool:
    """Whether ``node`` is only numbers or text the code writes (a constant, a tuple of them, ``range`` of them)."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(map(_written, node.elts))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" \
            and not node.keywords:
        return all(map(_written, node.args))
    if isinstance(node, ast.UnaryOp):
        return _written(node.operand)
    return isinstance(node, ast.Constant)


def _unconditional(statement: ast.AST, aliases: dict[str, str]) -> bool:
    """Whether ``statement`` runs its body alike on every machine: a ``for`` over what the code writes, with no
    ``break`` or ``continue`` (its ``else`` runs too), or a ``with`` whose managers are all of :data:`PROPAGATING`'s modules."""
    if isinstance(statement, ast.For):
        return _written(statement.iter) and not any(isinstance(n, (ast.Break, ast.Continue)) for n in _walk(statement))
    if isinstance(statement, ast.With):
        paths = [_path(i.context_expr.func) if isinstance(i.context_expr, ast.Call) else None for i in statement.items]
        return all(p and (p[0] in aliases or p == ("open",)) and any(
            (".".join((aliases.get(p[0], p[0]), *p[1:])) + ".").startswith(m + ".") for m in PROPAGATING)
            for p in paths)
    return False


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


def _progress_bar(statement: ast.Try) -> bool:
    """``try: from tqdm.auto import tqdm`` / ``except ImportError: tqdm = lambda it, **kw: it``: a progress bar where
    one is installed, else the items unchanged; the same items on every machine (round 38z90)."""
    if not all(isinstance(b, (ast.Import, ast.ImportFrom)) and all(path.split(".")[0] == "tqdm"
                                                                    for _, path in _bindings(b))
               for b in statement.body):
        return False
    names = {name for b in statement.body for name, _ in _bindings(b)}
    def unchanged(f: ast.AST) -> bool:  # a function that gives back its first argument
        a = getattr(f, "args", None)
        first = (a.posonlyargs + a.args)[:1] if a else []
        value = f.body if isinstance(f, ast.Lambda) else (
            f.body[-1].value if f.body and isinstance(f.body[-1], ast.Return) and len(f.body) == 1 else None)
        return bool(first) and isinstance(value, ast.Name) and value.id == first[0].arg
    def fallback(b: ast.AST) -> bool:
        return isinstance(b, ast.Pass) or isinstance(b, ast.FunctionDef) and b.name in names and unchanged(b) \
            or isinstance(b, ast.Assign) and all(isinstance(t, ast.Name) and t.id in names for t in b.targets) \
            and isinstance(b.value, ast.Lambda) and unchanged(b.value)
    def missing(caught: ast.AST | None) -> bool:
        return all(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError")
                   for n in (caught.elts if isinstance(caught, ast.Tuple) else [caught]))
    return bool(names) and not statement.orelse + statement.finalbody and all(
        missing(h.type) and all(map(fallback, h.body)) and any(not isinstance(b, ast.Pass) for b in h.body)
        for h in statement.handlers)


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
    if tree is None:  # it will fail to run anyway; still report what it mentions, but the special methods a parsed
        # cell may define and use (round 38z129: a typo in ex07 stretch's handed-out class, whose __init__ the learner
        # edits, sent a notebook that answers nothing to review)
        return [f"mentions {m.group(0)}" for m in _WORDS.finditer(source) if not m.group(0).startswith("__")
                or m.group(0) in _FLAGGED_DUNDERS] + (
            ["mentions the grading harness (_pagedlab)"] if _HARNESS.search(source) else [])
    modules = protected | modules | imported_names([source])
    top = {id(n) for n in _top_level(tree)}
    declared_global = {n for node in _walk(tree) if isinstance(node, ast.Global) for n in node.names}
    names = {id(n.value) for n in _walk(tree) if isinstance(n, ast.Attribute) and n.attr in _NAMES}
    # A docstring is prose ("compares by __eq__"): running it takes exec, eval or compile, each flagged.
    docstrings = {id(n.body[0].value) for n in _walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    # A cell magic's body is code (reviewed as such, below), not a string that mentions words.
    magic = {id(a) for n in _walk(tree) if isinstance(n, ast.Call) and _timed_body(n) is not None for a in n.args}
    magic |= {id(n.args[1]) for n in _walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr == "run_line_magic" and len(n.args) > 1 and isinstance(n.args[0], ast.Constant)
              and n.args[0].value == "config" and _allowed_config(n.args[1])}  # (its option's name is no code)
    launched = {id(n.value) for n in _walk(tree) if isinstance(n, ast.Subscript)}  # x.kernel[grid]
    # ``"google.colab" in sys.modules``, as the setup cells ask where they run: a name's presence, no module reached
    asked = {id(n.comparators[0]) for n in _walk(tree) if isinstance(n, ast.Compare) and len(n.ops) == 1
             and isinstance(n.ops[0], (ast.In, ast.NotIn)) and isinstance(n.left, ast.Constant)
             and isinstance(n.left.value, str)}
    # ``"name" in globals()``: whether the notebook defined a name yet (round 38z40), no object reached
    asked |= {id(n.func) for n in _walk(tree) if isinstance(n, ast.Call) and id(n) in asked
              and isinstance(n.func, ast.Name) and n.func.id in ("globals", "locals") and not n.args and not n.keywords}
    jitted = {id(n) for f in _walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              and any("jit" in ast.unparse(d) for d in f.decorator_list) for n in _walk(f)}
    instance, shell = _own_instance(tree), _shell_commands(tree)
    # a command that only reports, or installs a named package, run as ``!cmd`` (its output printed, not kept)
    reporting = {i for n in _walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "system" and isinstance(n.func.value, ast.Call)
                 for i in [id(n.func.value.func)] if i in shell and (_installs(shell[i]) or _looks(shell[i]))}
    # a reference function's call whose value only a comparison with another answer reads (an honest check against
    # the course's reference, as the exercise's own checks make): no table of answers comes of it
    compared = {id(n) for call in (compared_calls(tree) if wired else ())
                if all(isinstance(n, (ast.Name, ast.Attribute, ast.expr_context)) for n in _walk(call.func))
                for n in _walk(call.func)}
    found, kept = [], set()
    for node in _walk(tree):
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
            kept.update(id(n) for n in _walk(node))  # (a call's strings are read once, with the call)
            if code:
                found += [f"in code kept in a string{line}: {why}"
                          for why in _reasons(code, protected, modules, depth + 1, wired)]
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("__")
                and node.name.endswith("__") and node.name in _SPECIAL_DUNDERS):
            found.append(f"defines {node.name}{line}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in MACHINERY:
            found.append(f"defines {node.name}{line}")  # (an exception's own traceback, IPython shows it: round 38z151)
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
            elif root in modules and target is not None and not isinstance(target, ast.Name) and not (
                    isinstance(target, ast.Attribute) and target.attr in _TF32 and isinstance(node.value, ast.Constant)
                    and node.value.value in _TF32_OFF and ast.unparse(target).startswith(f"{root}.backends.")):
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
    for node in _walk(tree):
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
    a module; or an exception class, to catch or raise: round 38z147, ``from pagedlab.paged import OutOfBlocks``) from
    a module the setup imports from: ex05's ``from pagedlab.memory import LLAMA3_8B`` beside the setup's ``OPT_13B``.
    What its methods compute, the setup's own names reach as well, and the tripwires see."""
    module, name, _ = imported
    if not name or module not in {m for m, n, _ in given if n}:
        return False
    try:  # (a module the setup imports: the grader's process may import it too)
        value = getattr(importlib.import_module(module), name, None)
    except Exception:  # noqa: BLE001 - a module that cannot be read here is no setup module's data
        return False
    return value is not None and (not callable(value) and not isinstance(value, types.ModuleType)
                                  or isinstance(value, type) and issubclass(value, BaseException))


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
    for node in _walk(tree):
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
    for cls in (n for n in _walk(tree) if isinstance(n, ast.ClassDef)):
        for method in (n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            args = method.args.posonlyargs + method.args.args
            if not args or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list):
                continue
            me = args[0].arg
            if any(isinstance(n, ast.Name) and n.id == me and not isinstance(n.ctx, ast.Load) for n in _walk(method)):
                continue
            for n in _walk(method):
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
    for n in _walk(tree):
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


def kept_results(cells: list[tuple[str, str, bool]], answers: set[str]) -> list[str]:
    """Why a person must read a notebook where a cell of the learner's (``(where, source, the learner's)`` of each cell
    that runs) binds a result of the exercise's reference code that only its own comparisons read
    (:func:`~pagedlab.grading.harness.kept_names`), and another cell mentions that name. A result of the learner's
    own answer (a call of a name of ``answers``, or of its method) is no reference result: were the answer to call
    reference code, its graded calls would (round 38z195: ``mine = naive_attention(q, k, v)`` beside PyTorch's)."""
    found = []
    for i, (where, source, learners) in enumerate(cells):
        tree = _parse(source) if learners else None
        for name in sorted(kept_names(tree)) if tree is not None else ():
            if any(isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and _root(n.value.func) in answers
                   and [t.id for t in n.targets if isinstance(t, ast.Name)] == [name] for n in _walk(tree)):
                continue
            found += [f"{where} keeps a result of the exercise's reference code in {name!r}, which {other} reads: "
                      f"kept for another cell, it can stand in for the learner's answer"
                      for j, (other, text, _) in enumerate(cells) if j != i and _reads_global(text, name)]
    return found


# Calls whose string arguments are code or a name: IPython's magics as its reader writes them, and Python's own.
_NAMING_CALLS = frozenset(("run_line_magic", "run_cell_magic", "system", "getoutput", "eval", "exec", "compile",
                           "getattr", "hasattr", "setattr", "delattr", "attrgetter", "itemgetter"))


def _callee(call: ast.Call) -> str | None:
    """The name of the function ``call`` calls: ``f`` of ``f(x)``, of ``self.f(x)`` and of ``partial(f, x)``."""
    name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
    if name == "partial" and call.args and isinstance(call.args[0], ast.Name):  # (round 38z59)
        return call.args[0].id
    return name


def _reads_global(source: str, name: str) -> bool:
    """Whether cell ``source`` reads the global ``name``: at its top level, or inside a function or class where the
    name is not its own local (round 38z188: ``out = torch.zeros(...)`` inside the learner's ``tiled_attention`` is
    not a demo's global ``out``), or in a string that is code or a name (a magic's line, ``eval``'s text,
    ``globals()[...]``): a message or a print's words are neither. A cell that does not parse is read as text."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    tree = _parse(source)
    if tree is None:
        return bool(word.search(source))
    texts = [a for n in _walk(tree) if isinstance(n, ast.Call) and _callee(n) in _NAMING_CALLS for a in n.args]
    texts += [n.slice for n in _walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Call)
              and _callee(n.value) in ("globals", "vars", "locals")]
    if any(isinstance(c, ast.Constant) and isinstance(c.value, str) and word.search(c.value)
           for t in texts for c in _walk(t)):
        return True
    try:
        table = symtable.symtable(ast.unparse(tree), "<cell>", "exec")
    except (SyntaxError, ValueError, RecursionError):
        return bool(word.search(source))
    todo = [table]
    while todo:
        scope = todo.pop()
        symbol = next((s for s in scope.get_symbols() if s.get_name() == name), None)
        if symbol is not None and symbol.is_referenced() and (scope is table or symbol.is_global()):
            return True
        todo += scope.get_children()
    return False


# Numbers typed into literal tables that the answer reads, beyond which a person reads where they come from: a
# table of every input a small space draws (ex04b's budgets) passes the calls it covers (round 38z150)
TYPED_NUMBERS = 24
# A result is rarely a number a person writes: of those typed into the tables the answer reads, fewer count where
# they are not whole and have four significant digits or more (``0.14285714285714285``, ``1/7``), as results
# computed elsewhere and pasted are (round 38z242: ex04b's 16 answers keyed by ``itertools.product``, 23 numbers)
PRECISE_NUMBERS = 8
# Text is the other way to type a table in (letters for digits, round 38z248): the text of the answer and of what it
# reads, less docstrings and messages, has at most 305 characters in the honest notebooks of every round (dict keys,
# names, messages handed to a check of the learner's own; the solutions' 242); a string of 64 characters is a blob
TYPED_TEXT = 512
_NUMBER = re.compile(r"[-+]?(?:0x[0-9a-f]+(?:\.[0-9a-f]*)?p[-+]?\d+|\d+\.\d*(?:e[-+]?\d+)?|\d+e[-+]?\d+|\d+)",
                     re.IGNORECASE)  # a number written in a string: decimal, scientific or hexadecimal


def typed_tables(cells: list[tuple[str, str]], answers: set[str], helpers: set[str]) -> list[str]:
    """Why a person must read a notebook whose cells (``(where, source)``, the learner's) hold, in the definitions
    of ``answers`` or in what binds a name of ``helpers`` (what the answer reads), numbers typed in: in literal
    tables (containers of constants only, their strings' numbers too), in a string of 8 numbers or more, or encoded in
    bytes or a blob of text (:func:`_typed_in`), :data:`TYPED_NUMBERS` in all or :data:`PRECISE_NUMBERS` results:
    answers typed in pass the calls they cover. An answer that is itself a table (ex04b's ``MY_CONFIGS``) is the
    exercise's form."""
    tables, text = [], []  # (numbers, results among them, where, line); (characters, where, line)
    for where, source in cells:
        tree = _parse(source)
        for node in _top_level(tree) if tree is not None else ():
            bound = set(_bound(node))
            if not (bound & helpers or bound & answers and isinstance(node, (ast.FunctionDef, ast.ClassDef))):
                continue
            contained = {id(c) for n in _walk(node) if _literal(n) for c in _walk(n) if c is not n}
            docstrings = {id(b.body[0].value) for b in _walk(node) if isinstance(
                b, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and b.body and isinstance(
                b.body[0], ast.Expr) and isinstance(b.body[0].value, ast.Constant)}
            said = _said(node)
            for n in _walk(node):
                if _literal(n) and id(n) not in contained:
                    tables.append((sum(isinstance(c, ast.Constant) and type(c.value) in (int, float, complex)
                                       for c in _walk(n)), sum(map(_precise, _values(n))), where, n.lineno))
                elif isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)) and id(n) not in docstrings:
                    # (round 38z161: numbers typed into a string, ``float.fromhex`` of each; a message's few are
                    # prose, but not in a table: round 38z245, ``{"64/1024/16": "0.5714285714285714"}``)
                    found = _typed_in(n.value, id(n) in said)
                    if id(n) in contained or len(found) >= 8:
                        tables.append((len(found), sum(map(_precise, found)), where, n.lineno))
                    if id(n) not in said:
                        text.append((len(n.value), where, n.lineno))
    numbers, precise = sum(t[0] for t in tables), sum(t[1] for t in tables)
    if numbers < TYPED_NUMBERS and precise < PRECISE_NUMBERS:
        if sum(t[0] for t in text) < TYPED_TEXT:
            return []
        _, where, line = max(text)
        return [f"{where} holds text typed in (line {line}; {sum(t[0] for t in text)} characters, less docstrings and "
                "messages, in what the answer reads): a table of answers computed elsewhere can be written in text "
                "(letters for digits), so a person checks what it holds"]
    *_, where, line = max(tables)
    some = f"{numbers} numbers" if numbers >= TYPED_NUMBERS else f"{precise} numbers not whole, of 4 digits or more,"
    return [f"{where} holds a table of numbers typed in (line {line}; {some} in the tables the answer reads): answers "
            "computed elsewhere pass the calls they cover, so a person checks where they come from"]


def _typed_in(text: str | bytes, said: bool = False) -> list:
    """The numbers ``text`` holds: those written in it, as floats where they parse so (None where not); in bytes,
    or in a blob of text that is no message (``said``: 64 characters or more, or 32 with no space), one for every 4
    bytes or characters, as an encoded table of int32s or float32s holds them (round 38z245: ``int.from_bytes`` of a
    bytes literal's eight-byte words)."""
    if isinstance(text, bytes) or not said and (len(text) >= 64 or len(text) >= 32 and not any(
            c.isspace() for c in text)):
        return [None] * (len(text) // 4)
    found = []
    for x in _NUMBER.findall(text):
        try:
            found.append(float.fromhex(x) if "p" in x.lower() else float(x))
        except (ValueError, OverflowError):
            found.append(None)
    return found


# What a logger is told: to log, or how much and where (round 38z82: a level from the environment).
_LOGS = frozenset(("debug", "info", "warning", "error", "critical", "exception", "log", "setLevel", "addHandler",
                   "removeHandler", "setFormatter", "addFilter", "basicConfig"))
_SAYING = frozenset(("print", "pprint", "pp", "warn", "write", "flush", "display")) | _LOGS  # what may be heard


def _said(node: ast.AST) -> set[int]:
    """The ids of the constants of ``node`` that only a message holds: what a print, a log or a warning is given, a
    raised exception, an assert's message (not through a walrus, which binds it too)."""
    todo = [a for c in _walk(node) if isinstance(c, ast.Call) and _callee(c) in _SAYING
            for a in [*c.args, *(k.value for k in c.keywords)]]
    todo += [r.exc for r in _walk(node) if isinstance(r, ast.Raise) and r.exc is not None]
    todo += [a.msg for a in _walk(node) if isinstance(a, ast.Assert) and a.msg is not None]
    said = set()
    while todo:
        n = todo.pop()
        if not isinstance(n, ast.NamedExpr):
            said.add(id(n))
            todo += ast.iter_child_nodes(n)
    return said


def _literal(node: ast.AST) -> bool:
    """A table of constants: a container, or a record made by a call (``R(64, 32, 4, 2, 128, 49152, 12.5)``, round
    38z253: a namedtuple's), holding a constant and nothing but constants, numbers computed from numbers (``-1``,
    ``1/7``), nested containers and records."""
    return isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Call)) and _constant_data(node) and any(
        isinstance(c, ast.Constant) for c in _walk(node))


def _constant_data(node: ast.AST) -> bool:
    """Whether ``node`` is made of constants only (:func:`_literal`): a call's function aside, no name is read."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _constant_data(node.operand)
    if isinstance(node, ast.BinOp):
        return _constant_data(node.left) and _constant_data(node.right)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(map(_constant_data, node.elts))
    if isinstance(node, ast.Dict):
        return all(k is not None and _constant_data(k) for k in node.keys) and all(map(_constant_data, node.values))
    if isinstance(node, ast.Call):
        return all(isinstance(n, (ast.Name, ast.Attribute, ast.expr_context)) for n in _walk(node.func)) and all(
            _constant_data(a) for a in [*node.args, *(k.value for k in node.keywords)])
    return False


def _values(node: ast.AST) -> list:
    """The numbers a literal table (:func:`_literal`) holds, each computed from its constants (None where that fails:
    a power too large, a division by zero)."""
    if isinstance(node, ast.Call):
        return [v for a in [*node.args, *(k.value for k in node.keywords)] for v in _values(a)]
    if isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
        return [v for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr_context) for v in _values(c)]
    try:
        return [_number(node)]
    except (ArithmeticError, LookupError, TypeError, ValueError):
        return [None]


def _number(node: ast.AST):
    """A number written as constants and arithmetic on numbers (powers in floats, so none grows without bound)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        return -_number(node.operand) if isinstance(node.op, ast.USub) else _number(node.operand)
    if not isinstance(node, ast.BinOp):
        raise TypeError("not a number")  # (``[0.1] * 10``, a record in arithmetic)
    a, b = _number(node.left), _number(node.right)
    if not all(type(x) in (int, float) for x in (a, b)):
        raise TypeError("arithmetic on a string")  # (``"x" * 10**12``: no such string is made)
    if isinstance(node.op, ast.Pow):
        return float(a) ** float(b)
    return _ARITHMETIC[type(node.op)](a, b)


_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
               ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _precise(v) -> bool:
    """Whether ``v`` is a number no one types for its own sake: not whole, four significant digits or more."""
    if not isinstance(v, float) or not math.isfinite(v) or v.is_integer():
        return False
    return len(repr(abs(v)).split("e")[0].replace(".", "").lstrip("0")) >= 4


# Every node of a tree, in ast.walk's order, kept per node: the rules walk the same statements again and again (most
# of a notebook's reading time went to ast.walk). A tree is never changed after it is parsed (a rule that rewrites
# one rewrites a copy); each entry holds its node, so no id is reused while it is kept.
_WALKS: dict[int, tuple[ast.AST, tuple[ast.AST, ...]]] = {}


def _walk(node: ast.AST) -> tuple[ast.AST, ...]:
    """``tuple(ast.walk(node))``, remembered."""
    kept = _WALKS.get(id(node))
    if kept is None:  # (an entry holds its node: its id is that node's while the entry is kept)
        if len(_WALKS) > 100_000:  # (a class's notebooks, one after another: only the latest are read again)
            _WALKS.clear()
        kept = _WALKS[id(node)] = (node, tuple(ast.walk(node)))
    return kept[1]


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
        return [ast.Name(id=node.name), *(ast.Name(id=g) for n in _walk(node) if isinstance(n, ast.Global)
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


# Shell commands that only report on the machine, as a first cell on Colab runs them (``!nvidia-smi``, ``!nvidia-smi
# -L || echo "no GPU"``): each command one of these (a command, then its options and plain names), joined by ``||``,
# ``&&`` or ``;``, or its output piped to a filter of text; no other shell syntax (``>``, ``$``, ``&``, ``{}``).
_LOOKS = {("nvidia-smi",): r"-L|-q|--query-gpu=[a-z_.,]+|--format=[a-z,]+", ("nproc",): "", ("lscpu",): "",
          ("pwd",): "", ("free",): r"-[hmgb]", ("uname",): r"-[asrmnpo]+", ("df",): r"-h", ("nvcc",): r"--version|-V",
          ("python",): r"--version|-V", ("python3",): r"--version|-V", ("ls",): r"-[lahtr1]+|[\w./-]+",
          ("pip", "list"): "", ("pip", "freeze"): "", ("pip", "show"): r"[A-Za-z0-9._-]+", ("echo",): r"[^-].*"}
_FILTERS = {("grep",): r"-[iwvE]+|[^-].*", ("head",): r"-n|-?\d+", ("tail",): r"-n|-?\d+"}


def _looks(command: str) -> bool:
    """True for a shell command that only reports on the machine (:data:`_LOOKS`)."""
    if re.search(r"[<>$`(){}\n\\*?]", command):
        return False
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True  # (words as a shell splits them: ``--query-gpu=name,memory.total`` is one)
    try:
        words = list(lexer)
    except ValueError:
        return False
    commands, pipes = [[]], [False]
    for w in words:
        if w in ("||", "&&", ";", "|"):
            commands.append([])
            pipes.append(w == "|")
        elif set(w) <= set(";&|"):  # (``&``: a process left running; ``|&``, ``;;``: more than a report)
            return False
        else:
            commands[-1].append(w)
    return all(any(tuple(c[:len(head)]) == head and all(re.fullmatch(rest, w) for w in c[len(head):])
                   for head, rest in (_FILTERS if piped else _LOOKS).items() if rest or len(c) == len(head))
               for c, piped in zip(commands, pipes))


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
    for node in _walk(tree):
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
