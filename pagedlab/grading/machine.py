"""Which machine the learner's answer asks about, read from where each value comes from (issue 38's rounds 38z37 on).

A notebook graded here runs on a CPU, Triton's interpreter beside it; the learner ran it on a laptop or on Colab's GPU.
An answer that asks which machine it runs on (``torch.cuda.is_available()``, ``x.is_cuda``, a ``try`` around a move
to the GPU, the course's ``device.DEVICE`` compared with "cpu") may compute one way here and another there: the grade
is of this machine's branch. :func:`machine_reasons` names the statements of a cell that define the answer, or code
the answer calls, and ask so. What asks is decided by a value's origin, not by its name (each earlier round aimed at
a list of names found one it lacked): a module that answers the question, a tensor's word on where it lives, a
*place* (``x.device``, a device named) used for anything but placing tensors, keying a cache or comparing the inputs'
own, and every name bound from these (:func:`machine_names`). It reads, never runs; it narrows what a learner who
reads it can hide, and cannot close it (``docs/threat_model.md``): where a class ran on GPUs, grade it on one too.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import re
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from pagedlab.grading.review import (_LOGS, _SAYING, PROPAGATING, _TF32, _TF32_OFF, _bindings, _bound, _callee, _code,
                                     _parse, _path, _progress_bar, _root, _stdlib_import, _targets, _top_level, _walk)


@dataclass(frozen=True)
class Machine:
    """What the learner's cells (and the setup's) say of the machine: the names bound from a question to it, the
    names of places for tensors, and what each imported name is (``gpu_ready`` is ``torch.cuda.is_available``)."""

    names: frozenset[str]
    places: frozenset[str]
    aliases: dict[str, str]
    defined: frozenset[str] = frozenset()  # the learner's functions and methods, and classes built by __init__, by name
    passed: frozenset[tuple[str, str | int]] = frozenset()  # (function, parameter or position) given a place
    raisers: frozenset[str] = frozenset()  # the learner's functions that raise, or call one that raises, by machine
    caches: frozenset[str] = frozenset()  # globals bound to an empty dict: a place may key what they keep
    classes: frozenset[str] = frozenset()  # the learner's classes, but those raised for another exception caught
    renamed: frozenset[str] = frozenset()  # exceptions the learner's handlers raise for another one caught
    placers: frozenset[str] = frozenset()  # the learner's functions that return a place (``return dev``)
    sayers: frozenset[str] = frozenset()  # the learner's functions that only print, log or warn (:func:`_only_says`)
    pure: frozenset[str] = frozenset()  # the learner's functions that change nothing outside their locals, nor raise
    checkers: frozenset[str] = frozenset()  # the learner's functions that change nothing, give back nothing, may raise
    unread: frozenset[str] = frozenset()  # checkers no ``try`` or ``suppress`` calls: what they ask can only raise
    keyed: frozenset[str] = frozenset()  # caches (above) a place keys: read only by a key (round 38z63)
    made: frozenset[str] = frozenset()  # names bound to a tensor made where the notebook runs (``torch.empty(0)``)
    hosted: frozenset[tuple[str, str | int]] = frozenset()  # (function, parameter or position) given one, in code
    # the answer reads: no input's place (round 38z63)
    suppressors: frozenset[str] = frozenset()  # the learner's context managers that go on after a failure
    kernels: frozenset[str] = frozenset()  # the learner's ``@triton.jit`` kernels: a launch is their only use here
    loggers: frozenset[str] = frozenset()  # names (``self._log`` too) bound to a logger of ``logging``'s
    moved: frozenset[str] = frozenset()  # names bound to a move of a tensor made here (``host = marker.cpu()``)
    heard: frozenset[str] = frozenset()  # what the learner reads back of what is said: "print", "warn", "log"
    rebound: frozenset[str] = frozenset()  # names bound by more than one top-level statement
    api: dict[str, frozenset[str]] = field(default_factory=dict)  # what code outside a handed-out class may call
    bars: frozenset[str] = frozenset()  # progress bars, or a function that gives back the items (``_progress_bar``)
    logs: frozenset[str] = frozenset()  # globals bound to an empty container (``TIMINGS = defaultdict(list)``)
    sunk: dict[tuple[str, str], str] = field(default_factory=dict)  # (function, parameter): the log every call gives
    sinks: frozenset[str] = frozenset()  # what the learner keeps and nothing reads but to say (:func:`_sinks`)
    available: frozenset[str] = frozenset()  # places bound only to a device this machine has (:func:`_available`)
    formatters: frozenset[str] = frozenset()  # the learner's classes whose __str__, __repr__ or __format__ changes what
    # outlives the call (round 38z135)
    constants: dict[str, bool] = field(default_factory=dict)  # top-level names bound to a tensor made without the
    # inputs, and whether the machine's place holds it (:func:`_constant`)
    fragile: frozenset[str] = frozenset()  # names a cell binds on or after a line that may fail on one machine only
    stocked: frozenset[str] = frozenset()  # caches keyed by a place that a cell's own code stores into
    on_place: frozenset[str] = frozenset()  # top-level names bound to what a place of the machine's holds
    integral: frozenset[str] = frozenset()  # top-level names bound to an integer tensor (:func:`_integral`)
    deterministic: bool = False  # the notebook asks for deterministic algorithms, which a GPU refuses some ops under


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
    caught: frozenset[int] = frozenset()  # the nodes inside a ``try``'s body: a raise there may be caught
    told: frozenset[int] = frozenset()  # assignments to a local that only prints, logs or warns read (:func:`_told`)
    filled: frozenset[int] = frozenset()  # lookups that ask only whether to fill a cache (:func:`_fills`)


def machine_names(sources: list[str], handed: dict[str, frozenset[str]] | None = None) -> Machine:
    """The names that statements of ``sources`` bind from a question to the machine (``ON_GPU =
    torch.cuda.is_available()``, ``FAST = ON_GPU``: round 38z47), and the names they bind to a place for tensors
    (``DEVICE = "cuda" if torch.cuda.is_available() else "cpu"``), which the answer may only place tensors with.
    ``handed``: the methods of each class the exercise hands out (the graded calls call no other of its methods)."""
    statements = [st for tree in filter(None, map(_parse, sources)) for st in tree.body]
    aliases = {name: path for st in statements for node in _walk(st) if isinstance(node, (ast.Import, ast.ImportFrom))
               for name, path in _bindings(node)}
    defined = frozenset(f.name for st in statements for f in _walk(st)
                        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                        or isinstance(f, ast.ClassDef) and any(isinstance(b, ast.FunctionDef) and b.name == "__init__"
                                                               for b in f.body))
    translated = {_root(r.exc.func if isinstance(r.exc, ast.Call) else r.exc) for st in statements
                  for h in _walk(st) if isinstance(h, ast.ExceptHandler) for r in _walk(h)
                  if isinstance(r, ast.Raise) and r.exc is not None}  # (round 38z59: a failure renamed NoGPU)
    classes = frozenset(c.name for st in statements for c in _walk(st) if isinstance(c, ast.ClassDef)) - translated
    def empty(v: ast.AST) -> bool:
        return isinstance(v, ast.Dict) and not v.keys or isinstance(v, ast.Call) and (
            not v.args + v.keywords and ast.unparse(v.func).split(".")[-1] in ("dict", "OrderedDict", "set")
            or ast.unparse(v.func).split(".")[-1] == "defaultdict")
    caches = frozenset(n for st in statements if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None
                       and empty(st.value) for n in _bound(st))  # (round 38z82: ``_MASKS: dict[tuple, Tensor] = {}``)
    caches |= {_held(t) for st in statements for n in _walk(st) for t, v in _pairs(n)
               if empty(v) and isinstance(t, ast.Attribute) and _held(t)}  # self._built = {} (round 38z80)
    bound = Counter(n for st in statements for node in _top_level(ast.Module([st], [])) for n in _bound(node))
    # (round 38z90: ``self.created_at = time.monotonic()`` for an ``uptime()`` that no graded call reaches)
    def called(c: ast.ClassDef) -> set[str]:  # the attributes that functions outside ``c`` read
        inside = {id(n) for n in _walk(c)}
        return {a.attr for st in statements for f in _walk(st) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                and id(f) not in inside for a in _walk(f) if isinstance(a, ast.Attribute)}
    api = {c.name: frozenset(handed[c.name] | called(c)) for st in statements for c in _walk(st)
           if isinstance(c, ast.ClassDef) and c.name in (handed or {})}
    bars = frozenset(n for st in statements for t in _walk(st) if isinstance(t, ast.Try) and _progress_bar(t)
                     for b in t.body for n, _ in _bindings(b))
    bare = Machine(frozenset(), frozenset(), aliases, rebound=frozenset(n for n, k in bound.items() if k > 1), api=api,
                   bars=bars, renamed=frozenset(translated - {None}))
    defs: dict[str, ast.FunctionDef] = {}
    for g in (g for st in statements for g in _walk(st) if isinstance(g, ast.FunctionDef)):
        defs.setdefault(g.name, g)
    named = {(f.name, i) for st in statements for c in _walk(st) if isinstance(c, ast.Call)  # (round 38z83: a
             for f in [defs.get(_callee(c))] if f is not None  # decorator @_path_for("cuda"))
             for i, a in enumerate(c.args) if _device_name(a) and i < len(f.args.args)}
    caches -= {_held(n.value) for st in statements for f in _walk(st) if isinstance(f, ast.FunctionDef)
               for i, x in enumerate(f.args.args) if (f.name, i) in named for n in _walk(f)
               if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.slice, ast.Name)
               and n.slice.id == x.arg}
    caches -= {_held(n.value if isinstance(n, ast.Subscript) else n.func.value)  # a table with a device's name among
               for st in statements for n in _walk(st)  # its keys
               if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and _named_place(n.slice, bare)
               or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("update", "setdefault")
               and (any(_named_place(a, bare) for a in n.args) or any(k.arg in _DEVICES for k in n.keywords))}
    # (round 38z59: implementations by device; 38z67: ``dict(cuda=...)`` is no empty cache)
    functions = [(f, st) for st in statements for f in _walk(st) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    changes = _changes(functions, aliases)
    # (round 38z94: ``STEP_TIMES.append(_tick() - start)``, where ``_tick`` syncs and reads the clock)
    twice = {name for name, k in Counter(f.name for f, _ in functions).items() if k > 1}  # (one definition only)
    changing = twice | {f.name for f, _ in functions if changes.get(f.name)  # (what it says may be heard: round
                        or _changed_roots(f, aliases) & {a.arg for a in _walk(f.args) if isinstance(a, ast.arg)}
                        or any(isinstance(c, ast.Call) and _callee(c) in _SAYING for c in _walk(f))}  # 38z83)
    impure = changing | {f.name for f, _ in functions if any(isinstance(n, ast.Raise) for n in _walk(f))}
    while True:
        more = {f.name for f, _ in functions if any(_callee(c) in impure for c in _walk(f) if isinstance(c, ast.Call))}
        if more <= impure:
            break
        impure |= more
    bare = replace(bare, pure=frozenset(defined - impure - {c for c in classes}))
    sayers: frozenset[str] = frozenset()
    while True:  # (a docstring, then only what says)
        found = frozenset(f.name for f, _ in functions if all(
            _says(b, replace(bare, defined=defined, sayers=sayers))
            or i == 0 and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
            for i, b in enumerate(f.body)))
        if found <= sayers:
            break
        sayers |= found
    sayers -= twice
    checkers: frozenset[str] = frozenset()
    while True:  # (round 38z113: ``if COW_DEBUG: self._verify(child)``, a check that reads and raises, as an assert)
        found = frozenset(f.name for f, _ in functions if f.name not in changing and all(
            r.value is None or isinstance(r.value, ast.Constant) and r.value.value is None
            for r in _walk(f) if isinstance(r, ast.Return)) and not any(
            isinstance(y, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)) for y in _walk(f)) and all(
            _callee(c) not in defined or _callee(c) in bare.pure | checkers | {f.name}
            for c in _walk(f) if isinstance(c, ast.Call)))
        if found <= checkers:
            break
        checkers |= found
    def catching(n: ast.AST) -> bool:  # a try that may catch a check's raise (and read its message), or a context
        if isinstance(n, (ast.Try, getattr(ast, "TryStar", ast.Try))):  # that may swallow it
            return bool(n.handlers) or _swallows(n)
        return isinstance(n, (ast.With, ast.AsyncWith)) and any(
            _callee(i.context_expr) in defined | {"suppress"} for i in n.items if isinstance(i.context_expr, ast.Call))
    tried = {_callee(c) for st in statements for n in _walk(st) if catching(n)  # (round 38z116: ``if
             for b in n.body for c in _walk(b) if isinstance(c, ast.Call)}  # DEBUG_CHECKS:`` in a ``_check()``)
    calls = {f.name: {_callee(c) for c in _walk(f) if isinstance(c, ast.Call)} for f, _ in functions}
    while True:  # (and what they call: a raise goes up through every caller to the try)
        more = set().union(*(calls.get(n, set()) for n in tried)) - tried
        if not more:
            break
        tried |= more
    bare = replace(bare, defined=defined, caches=caches, sayers=sayers, checkers=checkers, unread=checkers - tried)
    suppressors = frozenset(  # (round 38z77: ``@contextmanager def _tolerant(): try: yield except ...: pass``)
        f.name for f, _ in functions if any(ast.unparse(d).split(".")[-1] in ("contextmanager", "asynccontextmanager")
                                            for d in f.decorator_list)
        for t in _walk(f) if isinstance(t, ast.Try) and any(isinstance(y, ast.Yield) for b in t.body for y in _walk(b))
        and (_swallows(t) or any(not (h.body and isinstance(h.body[-1], ast.Raise))
                                 and not _data_errors(h.type, replace(bare, classes=classes)) for h in t.handlers)))
    suppressors |= frozenset(  # (round 38z98: a class whose ``__exit__`` returns True swallows what its body raised)
        c.name for st in statements for c in _walk(st) if isinstance(c, ast.ClassDef)
        for f in c.body if isinstance(f, ast.FunctionDef) and f.name in ("__exit__", "__aexit__")
        for r in _walk(f) if isinstance(r, ast.Return) and r.value is not None
        and not (isinstance(r.value, ast.Constant) and not r.value.value))
    loggers = frozenset(_held(t) for st in statements for n in _walk(st) for t, v in _pairs(n)
                        if isinstance(v, ast.Call) and (_resolved(v.func, bare, Scope()) or "").startswith("logging.")
                        and _held(t))  # (round 38z82: ``_LOGGER = logging.getLogger(...)``, ``self._log``)
    kernels = frozenset(f.name for f, _ in functions if any(ast.unparse(d).split(".")[-1] == "jit"
                                                             for d in f.decorator_list))
    suppressors |= frozenset(  # (round 38z119: ``stack = ExitStack()``, then ``with stack:``)
        _held(t) for st in statements for n in _walk(st) for t, v in _pairs(n) if isinstance(v, ast.Call)
        and _held(t) and _may_swallow(v, [], replace(bare, suppressors=suppressors, classes=classes), Scope()))
    formatters = frozenset(  # (round 38z135: an object logged with %s, formatted inside logging's own try, where
        c.name for st in statements for c in _walk(st) if isinstance(c, ast.ClassDef)  # a failure is swallowed:
        for f in c.body if isinstance(f, ast.FunctionDef) and f.name in ("__str__", "__repr__", "__format__")
        and any(isinstance(n, ast.Attribute) and n.attr in _CHANGES or isinstance(n, (ast.Global, ast.Nonlocal))
                or isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)  # seen where it changes what
                for n in _walk(f)))  # outlives the call)
    bare = replace(bare, suppressors=suppressors, kernels=kernels, loggers=loggers, heard=_heard(statements),
                   formatters=formatters)
    logs = frozenset(n for st in statements if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None
                     and (isinstance(st.value, (ast.List, ast.Dict, ast.Set)) and not getattr(st.value, "elts", None)
                          and not getattr(st.value, "keys", None) or isinstance(st.value, ast.Call)
                          and ast.unparse(st.value.func).split(".")[-1] in _CONTAINERS
                          and (not st.value.args or ast.unparse(st.value.func).split(".")[-1] == "defaultdict"))
                     for n in _bound(st))
    bare = replace(bare, logs=logs, sunk=_sunk(statements, logs, defs))
    bare = replace(bare, sinks=_sinks(statements, bare))
    # a function run in a thread of its own: what fails there is swallowed, and what it changes tells which machine
    # ran it (round 38z79: ``CUDA_READY.set()`` after a matrix product on "cuda")
    threaded = {a.id for st in statements for c in _walk(st) if isinstance(c, ast.Call) and _starts(c, bare)
                for a in [*c.args, *(k.value for k in c.keywords if k.arg == "target")]
                if isinstance(a, ast.Name) and a.id in defined}
    bare = replace(bare, passed=_passed(statements, bare))  # (round 38z80: ``self.ones(n, x.device)`` keys by it)
    lookups = [(_held(cache), key, isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) or isinstance(
        n, ast.Call) and _callee(n) in ("setdefault", "update"), len(_unkeyed(key, bare, scope)) < len(_elements(key)))
               for st in statements for scope in [_scope(st, bare)] for n in _walk(st)
               for cache, key in [_looked_up(n, bare)] if key is not None]
    keyed = frozenset(cache for cache, _, _, placed in lookups if placed)
    # caches keyed by a place that a cell stores into itself, outside any function: what it stored is there for the
    # places the cell's tensors had where it ran, so a lookup that only asks whether to fill one asks where the
    # notebook ran before (round 38z185: a demo stores 1/sqrt(d) under a host tensor's device, the answer's own
    # filling stores 1/d)
    stocked = frozenset(_held(n.value if isinstance(n, ast.Subscript) else n.func.value)
                        for st in statements for n in _top_level(ast.Module([st], []))
                        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)
                        or isinstance(n, ast.Call) and getattr(n.func, "attr", None) in ("setdefault", "update")) & keyed
    # caches whose every entry is stored under a key with a place in it: what one machine stores there, under its
    # own places' keys, the other reads under none of them (round 38z109: a mask memo filled by a demo on the GPU)
    by_place = keyed - {cache for cache, _, store, placed in lookups if store and not placed}
    made = frozenset(t.id for st in statements for node in _walk(st) for t, v in _pairs(node)
                     if isinstance(t, ast.Name) and _made_here(v, bare, Scope()))
    loads = Counter(n.id for st in statements for n in _walk(st) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Load))
    moved = frozenset(t.id for st in statements for node in _walk(st) for t, v in _pairs(node)
                      if isinstance(t, ast.Name) and isinstance(v, ast.Call) and _a_move(v, bare)
                      and isinstance(v.func.value, ast.Name) and v.func.value.id in made
                      and loads[v.func.value.id] > 1)  # (round 38z127: a host tensor read only by its move, so no
    # write through the moved name can be seen through it)
    bare = replace(bare, keyed=keyed, stocked=stocked, made=made, moved=moved, constants=_constants(statements, {}))
    bare = replace(bare, hosted=_hosted(statements, bare))
    memos = _memos(statements, caches, bare)
    integral: set[str] = set()
    while True:  # (a name bound to an integer tensor, or to what one makes)
        more = {t.id for st in statements for node in _top_level(ast.Module([st], [])) for t, v in _pairs(node)
                if isinstance(t, ast.Name) and _integral(v, replace(bare, integral=frozenset(integral)))} - integral
        if not more:
            break
        integral |= more
    bare = replace(bare, integral=frozenset(integral), deterministic=any(  # (round 38z151)
        isinstance(c, ast.Call) and _resolved(c.func, bare, Scope()) == "torch.use_deterministic_algorithms"
        and not (c.args and isinstance(c.args[0], ast.Constant) and not c.args[0].value)
        for st in statements for c in _walk(st)))
    names, places = _IPYTHON_NAMES, frozenset()
    cells = [tree.body for tree in filter(None, map(_parse, sources))]
    bindings: dict[str, list[ast.AST]] = {}
    for st in statements:
        for node in _walk(st):
            for t, v in _pairs(node):
                if isinstance(t, ast.Name):
                    bindings.setdefault(t.id, []).append(v)
    while True:
        machine = replace(bare, names=names, places=places, classes=classes)
        machine = replace(machine, available=frozenset(n for n in places if n in bindings and all(
            _available(v, machine) for v in bindings[n])))
        machine = replace(machine, on_place=frozenset(  # (round 38z151: ``_shape = torch.tensor(..., device=DEV)``)
            t.id for st in statements for node in _top_level(ast.Module([st], [])) for t, v in _pairs(node)
            if isinstance(t, ast.Name) and _mentions_place(v, machine)))
        machine = replace(machine, fragile=frozenset(  # (round 38z148: a pinned buffer, then ``"staging" in dir()``)
            n for body in cells for i, st in enumerate(body) if _may_fail(st, machine) is not None
            for later in body[i:] for n in _bound(later)))
        asking = [piece for st in statements for piece in _pieces(st, machine) if _asked(piece, machine) is not None
                  or any(isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name in threaded
                         for f in _walk(piece))]
        found = {n for st in asking for node in _top_level(ast.Module([st], []))
                 if not _placing(node, machine) for n in _bound(node)}
        found |= {root for st in asking  # SETTINGS.update(...), RUN["fused"] = ... in a function (38z53, 38z57)
                  for root in _changed_roots(st, aliases, every_call=True) - _scope(st, machine).local}
        found |= _changed_through(statements, asking, machine)
        found |= {n for st in asking for c in _walk(st) if isinstance(c, ast.Call)  # (round 38z75: a print or
                  for n in changes.get(_callee(c), ())} - memos - by_place  # an assert by machine: ``_use_half()``)
        placed = {n for st in statements for node in _top_level(ast.Module([st], []))
                  if _placing(node, machine) for n in _bound(node)}
        if found <= names and placed <= places:
            break
        names, places = names | found, places | placed
    passed = _passed(statements, machine)
    placers: frozenset[str] = frozenset()
    while True:  # (round 38z59: a check of the inputs' devices that returns the one they share)
        machine = replace(machine, passed=passed, placers=placers)
        found = frozenset(f.name for f, st in functions for scope in [_scope(st, machine)] for r in _walk(f)
                          if isinstance(r, ast.Return) and r.value is not None and _a_place(r.value, machine, scope))
        if found <= placers:
            break
        placers |= found
    raisers: frozenset[str] = frozenset()
    while True:  # a raise that a caller's try catches is a branch (round 38z53: ``if x.is_cuda: raise``, caught)
        machine = replace(machine, raisers=raisers)
        found = frozenset(f.name for f, st in functions for scope in [_scope(st, machine)] for n in _walk(f)
                          if isinstance(n, ast.If) and any(isinstance(b, ast.Raise) for b in _walk(n))
                          and _asked(n.test, machine, scope) is not None
                          or isinstance(n, ast.Call) and _callee(n) in raisers)
        if found <= raisers:
            return machine
        raisers |= found


def _pieces(statement: ast.stmt, machine: Machine) -> list[ast.stmt]:
    """``statement``, or, where it is a loop that runs alike on every machine (a ``for`` over what no question of the
    machine gives, with no ``break``, ``continue``, ``raise``, ``assert`` or ``else`` to end it by one), the
    statements of its body, each asking for itself: a clock read in a timing loop asks for what it binds, not for
    every call beside it (round 38z243: a mask cache filled by the answer in a loop that times it)."""
    if isinstance(statement, ast.For) and not statement.orelse and _asked(statement.iter, machine) is None and not any(
            isinstance(n, (ast.Break, ast.Continue, ast.Raise, ast.Assert)) for n in _walk(statement)):
        return [piece for st in statement.body for piece in _pieces(st, machine)]
    return [statement]


def _passed(statements: list[ast.AST], machine: Machine) -> frozenset[tuple[str, str | int]]:
    """:attr:`Machine.passed`: the parameters of the learner's functions that a call gives a place."""
    return frozenset(
        given for st in statements for scope in [_scope(st, machine)] for call in _walk(st)
        if isinstance(call, ast.Call) and _callee(call) in machine.defined
        for given in [*((_callee(call), k.arg) for k in call.keywords if _placed(k.value, machine, scope)),
                      *((_callee(call), i) for i, a in enumerate(_given(call)) if _placed(a, machine, scope))])


# The names IPython binds in the notebook's namespace: a shell command's exit status (round 38z79: ``!nvidia-smi -L``,
# then ``_exit_code == 0`` on a GPU runtime), the outputs and inputs of earlier cells, the folders visited; and where
# the notebook's file lies, which some front ends bind (ipykernel's ``__session__``, VS Code's).
_IPYTHON_NAMES = frozenset(("_exit_code", "_", "__", "___", "_oh", "Out", "_ih", "In", "_i", "_ii", "_iii", "_dh",
                            "__file__", "__session__", "__vsc_ipynb_file__"))


def _heard(statements: list[ast.AST]) -> frozenset[str]:
    """What of what is said the learner's code reads back, so that saying it is no longer only saying: prints under
    ``redirect_stdout`` (round 38z79), warnings recorded or turned into errors (``catch_warnings(record=True)``:
    round 38z83), log records kept by a handler or filter of the learner's, or written to a buffer."""
    heard = set()
    for c in (n for st in statements for n in _walk(st)):
        name = _callee(c) if isinstance(c, ast.Call) else None
        if name in ("redirect_stdout", "redirect_stderr"):
            heard.add("print")
        if name == "catch_warnings" and any(k.arg == "record" and not (isinstance(k.value, ast.Constant) and not
                                                                       k.value.value) for k in c.keywords) \
                or name in ("simplefilter", "filterwarnings") and c.args and isinstance(c.args[0], ast.Constant) \
                and c.args[0].value == "error":
            heard.add("warn")
        if isinstance(c, ast.ClassDef) and any(ast.unparse(b).endswith(("Handler", "Filter")) for b in c.bases) \
                or name in ("MemoryHandler", "BufferingHandler", "QueueHandler") \
                or name == "StreamHandler" and isinstance(c, ast.Call) and (c.args or c.keywords):
            heard.add("log")
    return frozenset(heard)


def _starts(call: ast.Call, machine: Machine) -> bool:
    """Whether ``call`` starts a thread or process, or hands a function to a pool (``threading.Thread(target=f)``,
    ``pool.submit(f)``)."""
    path = _resolved(call.func, machine, Scope()) or ""
    return path in ("threading.Thread", "threading.Timer", "_thread.start_new_thread", "multiprocessing.Process") \
        or getattr(call.func, "attr", None) in ("submit", "apply_async", "run_in_executor", "start_new_thread")


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
    functions = [f for st in statements for f in _walk(st) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    read = {n.id for f in functions for local in [_locals(f)] for n in _walk(f)  # the globals they read (round
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local}  # 38z82: not a local)
    code = [*functions, *(st for st in statements if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                         ast.ClassDef)) and read & set(_bound(st)))]
    scopes: dict[int, Scope] = {}
    def here(a: ast.AST, c: ast.AST) -> bool:  # (round 38z67: ``_one_device([x, scratch])``)
        if isinstance(a, (ast.List, ast.Tuple, ast.Set)):
            return any(here(e, c) for e in a.elts)
        if isinstance(a, ast.Name) and c in functions and a.id in _locals(c):  # its own name, not a global's: made
            scope = scopes.setdefault(id(c), _scope(c, machine))  # where its function's inputs are not (38z96:
            return any(t.id == a.id and _made_here(v, machine, scope) for n in _walk(c)  # ``m = torch.full(...,
                       for t, v in _pairs(n) if isinstance(t, ast.Name))  # device=q.device)`` is q's; 38z82)
        return _made_here(a, machine, scopes.setdefault(id(c), _scope(c, machine)) if c in functions else Scope())
    def given(call: ast.Call, held: dict) -> list[ast.AST]:  # f(*[x, torch.empty(0)]), f(*probe): each by position
        def unpacked(a: ast.AST) -> list[ast.AST]:
            v = held.get(a.value.id, a.value) if isinstance(a.value, ast.Name) else a.value
            return v.elts if isinstance(v, (ast.List, ast.Tuple)) else [a]
        return [e for a in _given(call) for e in (unpacked(a) if isinstance(a, ast.Starred) else [a])]
    return frozenset(g for c in code for held in [{t.id: v for n in _walk(c) for t, v in _pairs(n)  # (38z73)
                                                    if isinstance(t, ast.Name) and isinstance(v, (ast.List, ast.Tuple))}]
                     for call in _walk(c) if isinstance(call, ast.Call) and _callee(call) in machine.defined
                     for g in [*((_callee(call), k.arg) for k in call.keywords if here(k.value, c)),
                               *((_callee(call), i) for i, a in enumerate(given(call, held)) if here(a, c))])


# Builtins that change their first argument (round 38z112: ``next(_BACKENDS)`` under a question of the GPU).
_MOVES_ON = frozenset(("next", "setattr", "delattr"))


def _changed_roots(node: ast.AST, aliases: dict[str, str], every_call: bool = False, names: bool = False) -> set[str]:
    """The names whose objects ``node`` changes: a store into an item or attribute (into a plain name too, with
    ``names``), a method that changes its object (any method, with ``every_call``), a module's function that changes
    its first argument (``operator.setitem(RUN, ...)``: round 38z67), a buffer stdout is redirected to. Imported names
    are not among them."""
    roots = set()
    for c in _walk(node):
        if isinstance(c, ast.Call) and c.args and _callee(c) in ("redirect_stdout", "redirect_stderr"):
            roots.add(_root(c.args[0]))  # what is printed is written there (round 38z79)
        elif isinstance(c, ast.Call) and c.args and isinstance(c.func, ast.Name) and c.func.id in _MOVES_ON:
            roots.add(_root(c.args[0]))  # ``next(it)``, ``setattr(cfg, ...)``: a builtin that changes its argument
        elif isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Call) \
                and _callee(c.func.value) == "vars" and c.func.value.args:
            roots.add(_root(c.func.value.args[0]))  # ``vars(cfg).update(...)`` (round 38z112)
        elif isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute):
            module = _root(c.func) in aliases and c.func.attr in _CHANGES and c.args
            if module or every_call or not _binds_nothing(ast.Expr(c)):
                roots.add(_root(c.args[0] if module else c.func))
        elif isinstance(c, (ast.Subscript, ast.Attribute, *((ast.Name,) if names else ()))) \
                and isinstance(c.ctx, ast.Store):
            roots.add(_root(c))
    return roots - set(aliases) - {None}


def _locals(f: ast.AST) -> set[str]:
    """The names function ``f`` binds for itself: its parameters and what it assigns, not what it declares global."""
    a = f.args
    return ({x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x}
            | {n.id for n in _walk(f) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}) - {
        g for n in _walk(f) if isinstance(n, (ast.Global, ast.Nonlocal)) for g in n.names}


def _changes(functions: list[tuple[ast.AST, ast.AST]], aliases: dict[str, str]) -> dict[str, set[str]]:
    """The globals each function of the learner's changes (a store into one, a method that changes it), itself or
    by the learner's functions it calls."""
    changes: dict[str, set[str]] = {}
    for f, _ in functions:
        changes.setdefault(f.name, set()).update(_changed_roots(f, aliases, names=True) - _locals(f))
    calls = {f.name: {_callee(c) for c in _walk(f) if isinstance(c, ast.Call)} for f, _ in functions}
    while True:
        grown = False
        for name, called in calls.items():
            more = set().union(*(changes.get(g, set()) for g in called if g != name)) - changes[name]
            changes[name] |= more
            grown |= bool(more)
        if not grown:
            return changes


def _changed_through(statements: list[ast.AST], asking: list[ast.AST], machine: Machine) -> set[str]:
    """The globals a function of the learner's that asks which machine it runs on changes through its parameters:
    those its calls hand it (``detect(SETTINGS)``, where ``settings["fast"] = torch.cuda.is_available()``), and
    its defaults (``def note(log=_SEEN): log.append(...)``) (round 38z73)."""
    changed: set[tuple[str, str | int]] = set()
    defaults: set[str] = set()
    for f in (f for st in asking for f in _walk(st) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))):
        a = f.args
        positional = [*a.posonlyargs, *a.args]
        given = positional[1:] if positional and positional[0].arg in ("self", "cls") else positional
        roots = _changed_roots(f, machine.aliases)
        changed |= {(f.name, i) for i, x in enumerate(given) if x.arg in roots}
        changed |= {(f.name, x.arg) for x in [*positional, *a.kwonlyargs] if x.arg in roots}
        defaults |= {d.id for x, d in [*zip(positional[len(positional) - len(a.defaults):], a.defaults),
                                      *zip(a.kwonlyargs, a.kw_defaults)]
                     if x.arg in roots and isinstance(d, ast.Name)}
    found = set(defaults)
    for st in statements:
        local = _scope(st, machine).local
        for call in (n for n in _walk(st) if isinstance(n, ast.Call)):
            given = [*((k.arg, k.value) for k in call.keywords), *enumerate(_given(call))]
            found |= {root for key, v in given if (_callee(call), key) in changed
                      for root in [_root(v)] if root and root not in machine.aliases and root not in local}
    return found


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
    placed = [k.value for k in v.keywords if k.arg == "device"]
    moved = attr in ("cpu", "cuda") or attr == "to" and (placed or any(_placed(a, machine, scope) for a in v.args[:1]))
    if attr and not moved and attr not in _NUMBERS_OF and _made_here(v.func.value, machine, scope):
        return True  # torch.zeros(1).float(), .to(x.dtype) (rounds 38z65, 38z71)
    if moved:
        return not any(_inputs(a, machine, scope) for a in [*v.args[:1], *placed])
    if placed:
        return not _inputs(placed[0], machine, scope)
    name = path.rsplit(".", 1)[-1] if path and path.startswith("torch.") else ""
    return name in _FACTORIES or name.startswith("from")  # (round 38z104: from_numpy, frombuffer)


def _given(call: ast.Call) -> list[ast.AST]:
    """The positional arguments ``call`` gives its callee (:func:`_callee`): those after ``f`` of ``partial(f, ...)``."""
    partial = (call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)) == "partial"
    return call.args[1:] if partial and call.args and isinstance(call.args[0], ast.Name) else call.args


def _fixed_place(v: ast.AST, machine: Machine) -> bool:
    """Whether ``v`` holds a device named in the code: ``"cuda"``, ``torch.device("cpu")``, ``device.DEVICE``."""
    return _named_place(v, machine) or any(_resolved(n, machine, Scope()) == "pagedlab.device.DEVICE"
                                           for n in _walk(v))


def _named_place(v: ast.AST, machine: Machine) -> bool:
    """Whether ``v`` holds a device the code names (``"cuda"``, ``torch.device("cpu")``): in a cache's key, one
    machine's entry (round 38z69). The course's ``device.DEVICE`` is not one: in a key it is the place the notebook
    runs on, as ``q.device`` is (round 38z147: sizes kept under ``(dtype, device.DEVICE)``)."""
    return any(_device_name(n) or isinstance(n, ast.Call) and _resolved(n.func, machine, Scope()) == "torch.device"
               for n in _walk(v))


def late_bindings(source: str, read: set[str], aliases: dict[str, str] | None = None) -> tuple[tuple[int, str], ...]:
    """(last line, name) of each binding of a name of ``read`` (what the answer reads) by cell ``source``'s top-level
    statements from its first one that may fail on: a definition whose defaults are constants or names, a class of
    such, an import of a package this machine has, a constant and ``pass`` fail nowhere. Where the cell fails here,
    the bindings ending on its failing line or after it did not happen, and on the learner's machine they may have
    (round 38z81: a GPU's warm-up raises here, then ``FUSED = True``; round 38z151: a ``def`` whose default takes
    12 GiB on the machine's device, an ``import`` of ``google.colab`` before a ``def``). An object made before,
    changed by the cell (``POOL.update(...)``), counts as bound where it is changed (round 38z157), made by an
    earlier cell or above in this one (round 38z183: ``STABLE = []``, then a loop whose 10 GiB allocation fails here
    before it appends)."""
    tree = _parse(source)
    if tree is None:  # (round 38z187: a line of a newer Python's syntax, ``f"{"x".join(...)}"``: the cell fails here,
        # and on Python 3.12 it runs; what it binds is read from its text)
        return tuple(sorted((i, n) for i, line in enumerate(source.splitlines(), 1) for n in read if re.search(
            rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(n)}\b|^\s*{re.escape(n)}\s*(?::[^=]*)?=(?!=)"
            rf"|\bas\s+{re.escape(n)}\b|^\s*for\s+{re.escape(n)}\b", line)))
    body = tree.body
    first = next((i for i, st in enumerate(body) if not _quiet(st)), len(body))
    found = set()
    for st in body[first:]:
        binds = {n for node in _top_level(ast.Module([st], [])) for n in _bound(node)}
        changes = _set_by(st, aliases or {})  # (an object made before, in an earlier cell or above in this one)
        found |= {(st.end_lineno or st.lineno, n) for n in (binds | changes) & read}
    return tuple(sorted(found))


def _set_by(statement: ast.AST, aliases: dict[str, str]) -> set[str]:
    """The global names a top-level ``statement`` binds, or whose objects it changes outside a definition
    (``POOL.update(stack=False)``: round 38z157)."""
    own = {n.id for c in _walk(statement) if isinstance(c, (ast.comprehension, ast.Lambda))
           for t in ([c.target] if isinstance(c, ast.comprehension) else []) for n in _walk(t)
           if isinstance(n, ast.Name)}  # (a comprehension's own names are no globals)
    calls = [] if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else [
        c for c in _walk(statement) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)]
    changed = {_root(c.func) for c in calls
               if c.func.attr in _CHANGES or c.func.attr.endswith("_") and not c.func.attr.startswith("_")}
    settings = {_root(c.func) for c in calls if _root(c.func) in aliases  # (a module's setting: round 38z160,
                and c.func.attr.startswith(("set_", "use_", "manual_seed"))}  # ``torch.set_default_dtype``)
    return {n for node in _top_level(ast.Module([statement], [])) for n in _bound(node)} | (
        changed - own - set(aliases) - {None}) | settings


def _quiet(statement: ast.AST) -> bool:
    """Whether ``statement`` fails on no machine: ``pass``, a constant, an import of what this machine has, a
    definition whose defaults are constants or names, a class of such."""
    simple = (ast.Constant, ast.Name, ast.Attribute)
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return all(isinstance(d, simple) for d in [*statement.args.defaults, *statement.args.kw_defaults] if d)
    if isinstance(statement, ast.ClassDef):
        return all(isinstance(b, simple) for b in [*statement.bases, *(k.value for k in statement.keywords)]) and all(
            map(_quiet, statement.body))
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return _everywhere(statement)
    return isinstance(statement, ast.Pass) or isinstance(statement, (ast.Assign, ast.AnnAssign, ast.Expr)) and (
        isinstance(statement.value, ast.Constant))


def machine_reasons(source: str, answers: set[str], helpers: set[str] = frozenset(),
                    machine: Machine = Machine(frozenset(), frozenset(), {})) -> list[str]:
    """Why a person must read a learner's cell whose statement that binds one of ``answers``, or code among
    ``helpers`` (:func:`answer_helpers`), asks which machine it runs on (:func:`_asked`): the grade is of what this
    machine's branch computes; on a GPU, Colab's, the notebook may compute another way (rounds 38z37 to 38z47:
    ``x + y`` or ``torch.softmax`` there)."""
    tree = _parse(source)
    reasons = []
    for statement in tree.body if tree else ():
        for find, why in _EVERYWHERE:  # (wherever the statement is: what it changes or reads reaches every answer)
            found = find(statement, machine)
            if found is not None:
                reasons.append(why.format(code=ast.unparse(found)[:60], line=found.lineno))
        nodes = _top_level(ast.Module([statement], []))
        # (a helper that changes nothing, a clock read for a caller: each caller asks where it uses what it gives,
        # round 38z94)
        bound = sorted({n for node in nodes for n in _bound(node)} & answers
                       | {n for node in nodes if _code(node) for n in _bound(node)} & (set(helpers) - machine.pure))
        asked = _asked(statement, machine) if bound else None
        if asked is not None:
            reasons.append(f"asks which machine it runs on ({ast.unparse(asked)[:60]}, line {asked.lineno}) where it "
                           f"defines {', '.join(map(repr, bound[:3]))}: the grade is of this machine's branch, and on "
                           f"a GPU (Colab's) the notebook may compute another way; a person reads every branch")
    body = tree.body if tree else []
    fails = next((i for i, st in enumerate(body) if _may_fail(st, machine) is not None), len(body))
    rebinds = {n for st in body[fails:] for node in _top_level(ast.Module([st], [])) for n in _bound(node)}
    changes = {n for st in body[fails:] for n in _set_by(st, machine.aliases)} - rebinds  # (an object made before,
    # changed after: where the line fails, its state before stays; round 38z157, ``POOL.update(stack=False)``)
    again = sorted(((rebinds & machine.rebound - set(machine.aliases)) | changes) & (set(answers) | set(helpers)))
    # (38z99: a module's setting by a store, ``torch.backends.cuda.matmul.allow_tf32 = False``, binds no name again)
    if again:
        line = _may_fail(body[fails], machine)
        reasons.append(f"binds or changes {', '.join(map(repr, again[:3]))} again after a line that may fail or not by which "
                       f"machine runs it ({ast.unparse(line)[:60]}, line {line.lineno}): where it fails, the cell "
                       f"stops there and the earlier binding stays, so on a GPU (Colab's) the answer may read another; "
                       f"a person reads which one it used")
    return reasons


_READ_BACK = frozenset(("item", "tolist"))


# What a tensor says of itself that is the same on every machine (its dtype's size, its shape), and its attributes
# that are the tensor itself, seen another way
_METADATA = frozenset(("element_size", "numel", "nelement", "dim", "ndimension", "size", "shape", "ndim", "dtype",
                       "itemsize", "is_floating_point", "is_complex"))
_SEEN_AS = frozenset(("T", "mT", "H", "mH", "real", "imag", "data"))


# What Python itself computes differently from one supported version to the next, from what the code writes (round
# 38z194: the course runs on 3.11, Colab on 3.12): a float sum's rounding (``sum`` compensates from 3.12), a
# character's Unicode properties (Unicode 14 on 3.11, 15 on 3.12), a string's hash (drawn for each process)
_UNICODE_TABLES = frozenset(("isprintable", "isidentifier", "isalpha", "isalnum", "isdecimal", "isdigit", "isnumeric",
                             "isspace", "isupper", "islower", "istitle", "upper", "lower", "casefold", "title",
                             "capitalize", "swapcase"))
# Builtins that give the same from the same arguments on every Python: of numbers the code writes, a number it writes
_PURE_BUILTINS = frozenset(("range", "len", "abs", "min", "max", "round", "int", "float", "bool", "pow", "divmod",
                            "chr", "ord", "complex"))


def _by_version(call: ast.Call, known: dict[str, bool]) -> bool | None:
    """Whether ``call``, of what the code writes, is one that Python's version decides: a ``sum`` that may add floats
    (anything but integers written out), ``hash`` of text, a Unicode property or the ``repr`` of text not all ASCII,
    a statistic (:data:`_STATISTICS`). None where it is not a call of those, or not of what the code writes."""
    name = _callee(call)
    if isinstance(call.func, ast.Name) and name in ("sum", "hash") and call.args and name not in known:
        given = [_constant(a, known) if not _text(a) else False for a in call.args]
        if any(x is None for x in given):
            return None
        called = {id(n.func) for a in call.args for n in _walk(a) if isinstance(n, ast.Call)}
        return name == "hash" and any(_text(a) for a in call.args) or name == "sum" and any(
            isinstance(n, ast.Name) and id(n) not in called or isinstance(n, ast.Constant) and not isinstance(
                n.value, int) or isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.Pow))
            for a in call.args for n in _walk(a))
    if isinstance(call.func, ast.Attribute) and name in _UNICODE_TABLES and _text(call.func.value):
        return _not_ascii(call.func.value)
    if isinstance(call.func, ast.Name) and name in ("repr", "ascii") and name not in known and len(call.args) == 1 \
            and _text(call.args[0]):  # (round 38z227: an emoji printed by one Unicode version, escaped by another)
        return _not_ascii(call.args[0])
    if name in _STATISTICS and name not in known and call.args:  # (round 38z227: ``fmean(data, weights)``, whose
        # products Python 3.12 takes exactly; each version has changed some of the module's algorithms)
        given = [_constant(a, known) for a in [*call.args, *(k.value for k in call.keywords)]]
        return None if any(x is None for x in given) else True
    return None


_STATISTICS = frozenset(("fmean", "mean", "geometric_mean", "harmonic_mean", "median_grouped", "stdev", "variance",
                         "pstdev", "pvariance", "correlation", "covariance", "linear_regression", "quantiles"))


def _not_ascii(text: ast.AST) -> bool:
    """Whether text the code writes (:func:`_text`) holds a character past ASCII, whose Unicode properties are its
    Python version's tables'."""
    return any(isinstance(c, ast.Constant) and isinstance(c.value, str) and not c.value.isascii()
               or isinstance(c, ast.Call) and _callee(c) == "chr" and c.args[0].value >= 128 for c in _walk(text))


def _text(v: ast.AST) -> bool:
    """Whether ``v`` is text the code writes: a string, ``chr`` of a number, or those joined."""
    if isinstance(v, ast.Constant):
        return isinstance(v.value, str)
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "chr":
        return len(v.args) == 1 and isinstance(v.args[0], ast.Constant) and isinstance(v.args[0].value, int)
    return isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Add, ast.Mult)) and (
        _text(v.left) and (_text(v.right) or isinstance(v.right, ast.Constant))
        or isinstance(v.left, ast.Constant) and _text(v.right))


def _constant(v: ast.AST, known: dict[str, bool]) -> bool | None:
    """Whether ``v`` is a number or tensor computed without the inputs, from numbers the code writes and draws (no
    name but those of ``known``): None where it is not; else whether the machine decides it: the machine's place holds
    it (``device=q.device``, ``.to(DEVICE)``, ``.cuda()``; round 38z137: ``torch.ones(1, 256, dtype=torch.float16,
    device=q.device)``; round 38z144: ``(-1.0 - torch.rand(4)).to(DEVICE)``, negative whatever the draw), or Python's
    version computes it (:func:`_by_version`; round 38z194: ``int(sum([0.1] * 10))``, 0 on 3.11 and 1 on 3.12). What
    a tensor says of itself (:data:`_METADATA`) is the same on every machine; memory as it was (``torch.empty``) is
    none of the code's."""
    if isinstance(v, ast.Constant):
        return False if type(v.value) in (int, float, bool, complex) else None
    if isinstance(v, ast.Call) and _by_version(v, known) is not None:
        return _by_version(v, known)
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in _PURE_BUILTINS \
            and v.func.id not in known and not v.keywords:  # (``range(10)``, ``float("inf")``)
        values = [False if _text(a) else _constant(a, known) for a in v.args]
        return None if any(x is None for x in values) else any(values)
    if isinstance(v, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):  # (``sum(t / 10 for t in range(3))``)
        inner, values = dict(known), []
        for g in v.generators:
            values.append(_constant(g.iter, inner))
            inner |= {n.id: bool(values[-1]) for n in _walk(g.target) if isinstance(n, ast.Name)}
            values += [_constant(c, inner) for c in g.ifs]
        values.append(_constant(v.elt, inner))
        return None if any(x is None for x in values) else any(values)
    if isinstance(v, ast.Name):
        return known.get(v.id)
    if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id == "torch":
        return False  # a dtype (torch.float16)
    if isinstance(v, ast.Attribute):  # ``ones.T``; ``ones.shape`` the same everywhere
        inner = _constant(v.value, known) if v.attr in _SEEN_AS | _METADATA else None
        return inner and v.attr in _SEEN_AS if inner is not None else None
    if isinstance(v, ast.Subscript):  # ``probe[0]``
        inner, index = _constant(v.value, known), _constant(v.slice, known)
        return None if inner is None or index is None else inner or index
    if isinstance(v, ast.Slice):
        values = [_constant(x, known) for x in (v.lower, v.upper, v.step) if x is not None]
        return None if any(x is None for x in values) else any(values)
    parts = [v.operand] if isinstance(v, ast.UnaryOp) else [v.left, v.right] if isinstance(v, ast.BinOp) \
        else v.elts if isinstance(v, (ast.Tuple, ast.List)) else [v.left, *v.comparators] \
        if isinstance(v, ast.Compare) else v.values if isinstance(v, ast.BoolOp) \
        else [v.test, v.body, v.orelse] if isinstance(v, ast.IfExp) else None
    if parts is None and isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) \
            and not v.func.attr.startswith("empty"):
        if v.func.attr in _METADATA:
            return None if _constant(v.func.value, known) is None else False
        device = [k.value for k in v.keywords if k.arg == "device"]
        placed = bool(device) and not (isinstance(device[0], ast.Constant) and device[0].value == "cpu") \
            or v.func.attr == "cuda" or v.func.attr == "to" and any(
                not (isinstance(a, ast.Constant) and a.value == "cpu") and _constant(a, known) is None
                for a in v.args[:1])
        torch_call = isinstance(v.func.value, ast.Name) and v.func.value.id == "torch"
        rest = [a for a in [*v.args, *(k.value for k in v.keywords if k.arg != "device")]
                if not (v.func.attr == "to" and a is (v.args or [None])[0] and placed)
                and not (torch_call and v.func.attr in _DRAWS)]  # (a draw's values are its generator's, whatever
        # its size: round 38z160, ``torch.rand(n, device=dev).tolist()`` compared with the host's draws)
        # (text the code writes, split or stripped, is text it writes: round 38z224, ``float(t) for t in "1e16 1
        # -1e16".split()`` summed)
        receiver = False if torch_call or _text(v.func.value) else _constant(v.func.value, known)
        values = [_constant(a, known) for a in rest]
        if receiver is None or any(x is None for x in values):
            return None
        return placed or receiver or any(values)
    if parts is None:
        return None
    values = [_constant(x, known) for x in parts]
    return None if any(x is None for x in values) else any(values)


def _constants(statements: list[ast.AST], known: dict[str, bool]) -> dict[str, bool]:
    """The names that ``statements`` bind only to what :func:`_constant` reads (with ``known`` besides), each written
    only with such values (``col[0] = 2048.0``), and whether the machine's place holds it."""
    # (a name the statements bind otherwise, a parameter or a loop's, is not the one ``known`` holds)
    known = {k: v for k, v in known.items() if k not in {
        n.id for st in statements for n in _walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        | {a.arg for st in statements for a in _walk(st) if isinstance(a, ast.arg)}}
    pairs = [(t.id, v) for st in statements for n in _walk(st) for t, v in _pairs(n) if isinstance(t, ast.Name)]
    pairs += [(n.target.id, n.value) for st in statements for n in _walk(st)
              if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)]
    writes = [(_root(t), v) for st in statements for n in _walk(st) if isinstance(n, (ast.Assign, ast.AugAssign))
              for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Subscript)
              for v in [n.value]]
    # (an in-place method given no argument counts as a write no reading follows: the name is not read as made so)
    writes += [(_root(c.func.value), a) for st in statements for c in _walk(st) if isinstance(c, ast.Call)
               and isinstance(c.func, ast.Attribute) and c.func.attr.endswith("_") for a in [*c.args, *(
                   k.value for k in c.keywords)] or [ast.Constant(None)]]
    found = dict(known)
    while True:
        now = dict(known)
        for name in {n for n, _ in pairs}:
            values = [_constant(v, found) for n, v in pairs if n == name]
            values += [_constant(v, found) for n, v in writes if n == name]
            if all(x is not None for x in values):
                now[name] = any(values)
        if now == found:
            return found
        found = now


def _probe(statement: ast.AST, machine: Machine) -> ast.AST | None:
    """Where ``statement`` reads back into Python (``.item()``, ``float()``, ``round()``, a comparison, a condition) a
    value computed without the inputs that the machine decides (:func:`_constant`): made before any input arrives,
    computing it can only tell machines apart by their arithmetic (round 38z137: a float16 sum compared with its
    exact value, its other branch PyTorch's attention; round 38z144: a draw made negative, converted to uint8; round
    38z194: a float sum, a character's Unicode properties, which Python 3.12 computes otherwise). What only prints or
    asserts is not read."""
    known = _constants([statement], machine.constants)
    for f in _walk(statement):  # a default, computed when the function is defined (round 38z230: a parameter
        # ``_tenths=sum([0.1] * 10)`` no call gives)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a, positional = f.args, [*f.args.posonlyargs, *f.args.args]
            for arg, default in [*zip(positional[len(positional) - len(a.defaults):], a.defaults),
                                 *zip(a.kwonlyargs, a.kw_defaults)]:
                if default is not None and _constant(default, machine.constants):
                    known[arg.arg] = True
    parents = {id(c): p for p in _walk(statement) for c in ast.iter_child_nodes(p)}

    def said(node: ast.AST) -> bool:
        while node is not None:
            if isinstance(node, ast.Assert) or isinstance(node, ast.Call) and _callee(node) == "print":
                return True
            node = parents.get(id(node))
        return False

    for n in _walk(statement):
        read = n.func.value if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
            and n.func.attr in _READ_BACK else n.args[0] if isinstance(n, ast.Call) and n.args and (
                isinstance(n.func, ast.Name) and n.func.id in ("float", "int", "bool", "round")
                or isinstance(n.func, ast.Attribute) and _root(n.func) == "math"
                and n.func.attr in ("floor", "ceil", "trunc")) else n if isinstance(n, ast.Compare) \
            else n.test if isinstance(n, (ast.If, ast.IfExp, ast.While)) else None
        if read is not None and _constant(read, known) and not said(n):
            return n
    return None


def _namespace(node: ast.AST) -> bool:
    """Whether ``node`` lists the names bound where it runs: ``dir()``, ``globals()``, ``locals()``, ``vars()``."""
    return isinstance(node, ast.Call) and not node.args and _callee(node) in ("globals", "locals", "vars", "dir")


def _may_fail(statement: ast.AST, machine: Machine) -> ast.AST | None:
    """The first expression of a top-level ``statement`` that may raise on one machine and not on another (round
    38z89: a demo's ``x.numpy()`` of a tensor made on ``DEVICE``, then ``FAST = False``): a question to the machine,
    a name bound from one or a place named so, a move (``.numpy()`` of a GPU's tensor raises, ``.cuda()`` on a CPU),
    pinned memory, a computation on the machine's place that a GPU does not implement (round 38z151: an int64
    product; ``torch.bincount`` with weights under deterministic algorithms) or that not every device is known to
    (:func:`_not_every_device`), an import of a package that not every machine running the course has
    (:func:`_everywhere`). A definition runs its decorators and defaults, a class its body."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = statement.args
        return next(filter(None, (_may_fail(ast.Expr(d), machine) for d in [*a.defaults, *a.kw_defaults] if d)), None)
    if isinstance(statement, ast.ClassDef):
        return next(filter(None, (_may_fail(b, machine) for b in statement.body)), None)
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return None if _everywhere(statement) else statement
    found = _asked(statement, machine) or next(
        (n for n in _walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
         and n.id in machine.names | machine.places - machine.available
         or isinstance(n, ast.Call) and getattr(n.func, "attr", None) in ("numpy", "__array__", "cuda", "pin_memory")
         or isinstance(n, ast.Call) and any(k.arg == "pin_memory" and not (  # (pinned memory needs an accelerator)
             isinstance(k.value, ast.Constant) and not k.value.value) for k in n.keywords)
         or isinstance(n, ast.Call) and _resolved(n.func, machine, Scope()) != "torch.device" and any(
             _device_name(a) and a.value.split(":")[0] not in ("cpu", "meta")  # (``.to("cuda")`` on a CPU)
             for a in [*n.args, *(k.value for k in n.keywords)])
         or isinstance(n, ast.Call) and any(  # a device by its index (``device=0``: the first GPU, round 38z157)
             isinstance(a, ast.Constant) and type(a.value) is int for a in [
                 *(k.value for k in n.keywords if k.arg == "device"),
                 *(n.args[:1] if _callee(n) in ("to", "device") else [])])),
        None)
    if found is not None or not _mentions_place(statement, machine):
        return found
    refused = machine.deterministic or _integral(statement, machine) or _hosted_here(statement)
    return (_computes(statement, machine) if refused else None) or _not_every_device(statement, machine)


def _hosted_here(statement: ast.AST) -> bool:
    """Whether ``statement`` makes a tensor in the host's memory (torch's factory, no ``device=``) beside the
    machine's place: on a GPU, an op of the two raises (round 38z169: ``torch.softmax(torch.zeros(2,
    device=DEVICE), 0) / torch.ones(2)`` before a second definition)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
               and n.func.value.id == "torch" and n.func.attr in _FACTORIES
               and not any(k.arg == "device" for k in n.keywords) for n in _walk(statement))


def _everywhere(statement: ast.Import | ast.ImportFrom) -> bool:
    """Whether every package ``statement`` imports is on every machine that runs the course: Python's own (less
    what a version the course runs on removed), the course's, or one its install requires (:func:`_required`). Another may be missing on the learner's machine, or
    here (``from google.colab import output``, round 38z151; ``import nbval``, which only the tools of ``make setup``
    bring, round 38z181)."""
    tops = [a.name.split(".")[0] for a in statement.names] if isinstance(statement, ast.Import) else [
        (statement.module or "").split(".")[0]] if statement.level == 0 else []
    return all(t in _STDLIB or t in _required() for t in tops)


# Modules of Python's own library that a version the course runs on (3.10 to 3.13) no longer has: 3.12 removed
# these by PEP 594's schedule and PEP 632 (distutils), 3.13 the rest of PEP 594's (round 38z187: ``import imp``
# before a second definition, which fails on Colab's 3.12 only).
_REMOVED = frozenset(("imp", "asynchat", "asyncore", "distutils", "smtpd", "aifc", "audioop", "cgi", "cgitb", "chunk",
                      "crypt", "imghdr", "mailcap", "msilib", "nis", "nntplib", "ossaudiodev", "pipes", "sndhdr",
                      "spwd", "sunau", "telnetlib", "uu", "xdrlib", "lib2to3"))
_STDLIB = sys.stdlib_module_names - _REMOVED


@functools.cache
def _required() -> frozenset[str]:
    """The top-level modules of ``pagedlab`` and of every distribution its install requires, at any depth (the
    extras, such as ``dev``'s nbval and pytest, left out): what a machine that installed the course has."""
    from importlib import metadata
    from pathlib import Path

    from packaging.requirements import Requirement

    def key(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    def requires(name: str) -> list[str]:
        try:
            return metadata.requires(name) or []
        except metadata.PackageNotFoundError:  # (the course run from a checkout it was not installed from: its file)
            pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
            try:
                import tomllib  # (Python 3.11: on 3.10 only Python's own modules and the course's count)
            except ImportError:
                return []
            return tomllib.loads(pyproject.read_text())["project"]["dependencies"] if (
                name == "pagedlab" and pyproject.exists()) else []

    names, todo = set(), ["pagedlab"]
    while todo:
        name = todo.pop()
        if key(name) in names:
            continue
        names.add(key(name))
        todo += [r.name for r in map(Requirement, requires(name))
                 if r.marker is None or r.marker.evaluate({"extra": ""})]
    return frozenset({"pagedlab"} | {module for module, dists in metadata.packages_distributions().items()
                                     if any(key(d) in names for d in dists)})


# What every device implements alike for floating tensors: elementwise math, reductions, reshaping, indexing, the
# products, softmax; and what only reads or compares. A call of torch's outside it, on the machine's place, may be
# implemented on one device only (round 38z181: ``torch.linalg.lstsq(..., driver="gelsd")``, a CPU's driver).
_EVERY_DEVICE = frozenset((
    "abs", "add", "sub", "mul", "div", "neg", "exp", "exp2", "expm1", "log", "log2", "log1p", "sqrt", "rsqrt", "pow",
    "square", "sin", "cos", "tanh", "sigmoid", "relu", "gelu", "silu", "clamp", "clip", "maximum", "minimum", "where",
    "sign", "floor", "ceil", "round", "reciprocal", "lerp", "sum", "mean", "max", "min", "amax", "amin", "argmax",
    "argmin", "logsumexp", "cumsum", "prod", "norm", "std", "var", "all", "any", "allclose", "isclose", "equal", "eq",
    "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "nan_to_num", "topk", "sort", "argsort",
    "softmax", "log_softmax", "matmul", "mm", "bmm", "einsum", "outer", "dot", "view", "reshape", "transpose",
    "permute", "unsqueeze", "squeeze", "flatten", "expand", "expand_as", "contiguous", "clone", "detach", "cat",
    "stack", "split", "chunk", "narrow", "select", "index_select", "gather", "scatter", "masked_fill", "tril", "triu",
    "repeat", "repeat_interleave", "flip", "roll", "float", "half", "bfloat16", "double", "type_as", "item", "tolist",
    "size", "numel", "dim", "element_size", "stride", "is_contiguous", "copy_", "fill_", "zero_", "add_", "mul_",
    "div_", "sub_", "cpu", "assert_close", "manual_seed", "no_grad", "inference_mode"))


def _not_every_device(statement: ast.AST, machine: Machine) -> ast.AST | None:
    """The first call in ``statement`` that may be implemented on one device only: not the learner's own, not a
    builtin, not one that only makes, moves or says, and not one of :data:`_EVERY_DEVICE`. Those lists name torch's
    functions and the methods of a tensor: another library's function of the same name (NumPy's ``exp``,
    ``asarray``), given what the machine's place holds, reads host memory, and a GPU's tensor raises there (round
    38z200: ``np.tanh(x)`` of a demo on the device, between two definitions)."""
    return next((n for n in _walk(statement) if isinstance(n, ast.Call) and not (
        isinstance(n.func, ast.Name) and (n.func.id in machine.defined or hasattr(builtins, n.func.id)))
        and (_callee(n) not in _MAKES_OR_MOVES | machine.sayers | _EVERY_DEVICE | machine.defined
             or _foreign(n, machine))), None)


def _foreign(call: ast.Call, machine: Machine) -> bool:
    """Whether ``call`` is of a module other than torch (NumPy's, math's) and is given what the machine's place holds:
    a tensor's values, not only its shape or dtype (``math.sqrt(q.shape[-1])`` reads no device memory)."""
    module = (_path(call.func) or ("",))[0]
    if module not in machine.aliases or (machine.aliases[module] + ".").startswith(("torch.", "pagedlab.")):
        return False
    parents = {id(c): p for a in [*call.args, *(k.value for k in call.keywords)] for p in _walk(a)
               for c in ast.iter_child_nodes(p)}
    return any(_mentions_place(n, machine) and not (
        isinstance(parents.get(id(n)), ast.Attribute) and parents[id(n)].attr in _METADATA)
        for a in [*call.args, *(k.value for k in call.keywords)] for n in _walk(a) if isinstance(n, ast.Name))


# What only makes a tensor, or puts one somewhere: on a device, it fails nowhere that device is
_MAKES_OR_MOVES = _FACTORIES | frozenset(("empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
                                          "randn_like", "device", "to", "print"))


_INTEGRAL_DTYPES = frozenset(("long", "int64", "int", "int32", "int16", "short", "int8", "uint8", "bool"))


def _integral(node: ast.AST, machine: Machine) -> bool:
    """Whether ``node`` makes or reads an integer tensor (``torch.tensor([[2, 32]])``, ``torch.arange(4)``,
    ``dtype=torch.long``, ``.long()``, a name bound to one): a GPU implements fewer of their ops than a CPU (no
    integer matrix product), so computing with one on the machine's place may fail there only (round 38z151)."""
    for n in _walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in machine.integral:
            return True
        if not isinstance(n, ast.Call):
            continue
        dtypes = [k.value for k in n.keywords if k.arg == "dtype"]
        if dtypes:
            if _last(dtypes[0]) in _INTEGRAL_DTYPES:
                return True
            continue
        if _callee(n) in ("long", "int", "short", "byte", "char", "bool") and isinstance(n.func, ast.Attribute) \
                and not n.args or _callee(n) == "to" and any(_last(a) in _INTEGRAL_DTYPES for a in n.args):
            return True
        if _callee(n) in ("randint", "randperm", "tril_indices", "triu_indices"):  # (integers, unless told: 38z200)
            return True
        if _callee(n) in ("tensor", "as_tensor", "arange", "full") and n.args and all(
                isinstance(c, ast.Constant) and type(c.value) is int for a in n.args for c in _walk(a)
                if isinstance(c, ast.Constant)):
            return True
    return False


def _mentions_place(node: ast.AST, machine: Machine) -> bool:
    """Whether ``node`` reads a place of the machine's, or a name bound to what one holds (:attr:`Machine.on_place`)."""
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
               and n.id in machine.places | machine.on_place - {"device"}
               or isinstance(n, ast.Attribute) and _resolved(n, machine, Scope()) == "pagedlab.device.DEVICE"
               for n in _walk(node))


def _computes(statement: ast.AST, machine: Machine) -> ast.AST | None:
    """The first computation in ``statement``: an operator, or a call that makes or moves nothing only."""
    return next((n for n in _walk(statement) if isinstance(n, ast.BinOp) and _folded(n) is None
                 or isinstance(n, ast.Call) and _callee(n) not in _MAKES_OR_MOVES and _callee(n) not in machine.sayers),
                None)


def _available(v: ast.AST, machine: Machine) -> bool:
    """Whether ``v`` is a device every machine has where it is chosen: ``"cuda" if torch.cuda.is_available() else
    "cpu"`` (or ``torch.device`` of it), the course's ``device.DEVICE``. Placing a tensor there fails nowhere (round
    38z123: a demo's ``torch.randn(3, 7, device=DEVICE)`` between two definitions of the answer)."""
    if isinstance(v, ast.Call) and _resolved(v.func, machine, Scope()) == "torch.device" and len(v.args) == 1 \
            and not v.keywords:
        return _available(v.args[0], machine)
    if isinstance(v, ast.IfExp):
        asks = {_resolved(c.func, machine, Scope()) for c in _walk(v.test) if isinstance(c, ast.Call)}
        names = {str(getattr(b, "value", "")).split(":")[0] for b in (v.body, v.orelse)}
        return names == {"cuda", "cpu"} and "torch.cuda.is_available" in asks and (
            isinstance(v.test, ast.Call) and v.body.value.startswith("cuda")
            or isinstance(v.test, ast.UnaryOp) and isinstance(v.test.op, ast.Not) and v.orelse.value.startswith("cuda"))
    return _resolved(v, machine, Scope()) == "pagedlab.device.DEVICE"


def _tf32(statement: ast.AST, machine: Machine) -> ast.AST | None:
    """Where ``statement`` lets float32 products run in TF32 (``torch.set_float32_matmul_precision("high")``,
    ``torch.backends.cuda.matmul.allow_tf32 = True``) or switches autocast on by a setter
    (``torch.set_autocast_dtype("cuda", torch.bfloat16)``), which a GPU honours and a CPU ignores."""
    # a setting restored (round 38z77): a name whose every binding in the statement is the setting read back (round
    # 38z177: ``prec = "high"``, then ``prec = torch.get_float32_matmul_precision()`` in a branch that never runs)
    saved: dict[str, set] = {}
    for n in _walk(statement):
        for t, v in _pairs(n):
            if isinstance(t, ast.Name):
                saved.setdefault(t.id, set()).add(_resolved(v.func if isinstance(v, ast.Call) else v, machine, Scope()))
    for n in _walk(statement):
        if isinstance(n, ast.Call) and _resolved(n.func, machine, Scope()) == "torch.set_float32_matmul_precision" \
                and not (n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value == "highest"
                         or n.args and saved.get(getattr(n.args[0], "id", None)) == {"torch.get_float32_matmul_precision"}):
            return n
        if isinstance(n, ast.Call) and (_resolved(n.func, machine, Scope()) or "").startswith("torch.set_autocast_") \
                and not any(isinstance(a, ast.Constant) and a.value is False for a in n.args[-1:]):
            return n  # (round 38z133: ``torch.set_autocast_enabled("cuda", True)``, then a dtype: bf16 products on a
            # GPU's tensors only)
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and any(
                (path := _resolved(t, machine, Scope()) or "").startswith("torch.backends.") and _last(t) in _TF32
                and not saved.get(getattr(n.value, "id", None)) == {path}
                for t in _targets(n)) and not (isinstance(n.value, ast.Constant) and n.value.value in _TF32_OFF):
            return n
    return None


def _default_by_machine(statement: ast.AST, machine: Machine) -> ast.AST | None:
    """Where ``statement`` sets torch's default dtype from a question to the machine (round 38z77:
    ``torch.set_default_dtype(device.DTYPE)``, bfloat16 on a GPU): the answer's factories make tensors of it."""
    return next((n for n in _walk(statement) if isinstance(n, ast.Call) and n.args
                 and _resolved(n.func, machine, Scope()) in ("torch.set_default_dtype", "torch.set_default_tensor_type")
                 and _asked(n.args[0], machine) is not None), None)


# What a statement may do that decides which machine's numbers every answer computes, wherever it is, and why a person
# reads it
_EVERYWHERE = (
    (_tf32, "switches float32 products to TF32 or autocast ({code}, line {line}): which machine it runs on decides "
            "their precision (a GPU from Ampere on keeps 10-bit mantissas in TF32, 7-bit in bfloat16; this machine "
            "float32); the grade is of this machine's products"),
    (_probe, "reads back a value computed without the inputs, from numbers or text the code writes or draws, on the "
             "machine's device or by what Python's version decides ({code}, line {line}): made before any input "
             "arrives, it can only tell which machine it runs on (a float16 or float32 sum's rounding, a conversion "
             "past a dtype's range; a float sum, compensated from Python 3.12, Colab's; a character's Unicode "
             "properties; a statistic), so a person reads what it decides"),
    (_default_by_machine, "sets torch's default dtype by which machine it runs on ({code}, line {line}): every tensor "
                          "the answer makes without a dtype is of it, so the grade is of this machine's precision and "
                          "on a GPU the notebook may compute in another"),
)



# The machine is asked through modules, whatever the name of the function or attribute read from one (rounds 38z37 to
# 38z47 found a new name each time: is_available, is_cpu, find_spec, cpu_count, environ...): a GPU, the platform, the
# environment, the file system, the installed packages, the course's own choice of device and sizes; autocast computes
# in another precision on a GPU only (round 38z44). A few of their values are the same on every machine.
_MACHINE_MODULES = ("torch.get_rng_state", "torch.random.get_rng_state", "torch.initial_seed",
                    "torch.random.initial_seed", "torch.default_generator",  # (round 38z119: which generator a draw
                    # on the input's device moved)
                    "torch.cuda", "torch.backends", "torch.version", "torch.mps", "torch.xpu", "torch.cpu",
                    "torch.accelerator", "torch.autocast", "torch.amp", "torch.get_default_device",
                    "torch.get_num_threads", "torch.get_num_interop_threads", "torch.__config__", "torch.has_cuda",
                    "torch.has_mps", "torch._C", "torch.get_device_module", "torch.utils.collect_env", "torch.utils.cpp_extension",
                    "torch.distributed", "pagedlab.device", "platform", "os",
                    "sys", "shutil", "subprocess", "socket", "multiprocessing", "psutil", "importlib", "pkgutil",
                    "sysconfig", "site", "locale", "getpass", "ctypes", "pathlib", "glob", "tempfile", "open",
                    "time", "timeit",  # (round 38z59: how fast a call ran)
                    "posixpath", "ntpath", "genericpath", "posix", "nt", "io.open", "io.open_code", "io.FileIO",
                    "uuid", "pwd", "grp", "resource", "torch.profiler",  # (round 38z69)
                    "datetime", "torch.utils.benchmark",  # (round 38z71: clocks)
                    "torch.typename", "torch._utils", "torch.save", "torch.serialization", "pickle", "marshal",
                    "inspect.getfile", "inspect.getsourcefile", "inspect.getabsfile",  # (round 38z89: installed files)
                    "linecache", "codecs.open", "fileinput", "mmap", "zipfile", "tarfile", "shelve", "dbm", "sqlite3",
                    "configparser", "netrc", "gzip.open", "bz2.open", "lzma.open",  # (38z93: files read by any module)
                    # Threads and what they share: what one has done by the time another reads it is a race each
                    # machine runs its own way (38z95: a count of threads, a loop's clock; 38z154: a thread's number;
                    # 38z181: a Timer's Event, set or not once a product on the machine's place returns)
                    "threading", "_thread", "asyncio", "concurrent.futures", "queue", "sched", "signal",
                    # what the language itself holds: its keywords, tokens and opcodes are its version's (round
                    # 38z185: ``len(keyword.softkwlist) == 3`` on Python 3.11, 4 on Colab's 3.12)
                    "keyword", "token", "tokenize", "opcode", "dis", "symtable",
                    "unicodedata",  # (and its tables, Unicode 14 on 3.11, 15 on 3.12: round 38z194)
                    # the course's modules that read pagedlab.device, where they answer with it (every one is
                    # here or in test_grade.py's list of those that only place tensors with it; round 38z121: a
                    # KVCache's default dtype, bfloat16 on a GPU; the engine's dtype "auto")
                    "pagedlab.roofline", "pagedlab.transfer", "pagedlab.engine", "pagedlab.paged.bench",
                    "pagedlab.paged.kv_cache", "pagedlab.paged.KVCache", "pagedlab.loader",
                    "pagedlab.testing.within", "pagedlab.perf_lab.compiled_kernels", "pagedlab.perf_lab.compile_report",
                    "pagedlab.perf_lab.compile_reports", "pagedlab.perf_lab.recorded_forward_timings",
                    "torch.library", "torch.ops",  # (round 38z100: an operator's kernels chosen by dispatch key)
                    "torch.nn.DataParallel", "torch.nn.parallel", "torch.nn.DistributedDataParallel",  # (38z102:
                    "torch.Stream", "torch.Event",  # device_ids; 38z108: the current accelerator's stream)
                    "torch.set_flush_denormal",
                    # what cuDNN computes in TF32 unless told not to (``torch.backends.cudnn.allow_tf32`` is on by
                    # default, on a GPU from Ampere on): float32 convolutions and recurrent layers (round 38z218: a
                    # one-element conv1d whose 1 + 2**-12 a GPU rounds to 1)
                    *(f"{m}.{c}{d}d" for m in ("torch", "torch.nn.functional") for c in ("conv", "conv_transpose")
                      for d in "123"),
                    *(f"torch.nn.{c}{d}d" for c in ("Conv", "ConvTranspose", "LazyConv", "LazyConvTranspose")
                      for d in "123"),
                    "torch.convolution", "torch.conv_tbc", "torch.nn.functional.conv_tbc", "torch.lstm", "torch.gru",
                    "torch.rnn_tanh", "torch.rnn_relu", "torch.nn.RNNBase", "torch.nn.LSTM", "torch.nn.GRU",
                    "torch.nn.RNN", "torch.nn.LSTMCell", "torch.nn.GRUCell", "torch.nn.RNNCell",
                    "numpy.lib.npyio", "numpy.lib._datasource", "numpy.DataSource", "numpy.load", "numpy.loadtxt",
                    "numpy.genfromtxt", "numpy.fromfile", "numpy.memmap",
                    "torch.load", "torch.from_file", "torch.UntypedStorage.from_file",  # (round 38z189: a byte of
                    "torch.TypedStorage.from_file",  # a file of the learner's machine, created empty here)
                    # where a package was installed, how it was built (round 38z124: ``np.get_include()``, under
                    # dist-packages on Colab)
                    "numpy.get_include", "numpy.show_config", "numpy.show_runtime", "numpy.f2py", "numpy.ctypeslib",
                    "numpy.testing", "torch.utils.cmake_prefix_path", "torch.hub", "torch.multiprocessing",
                    # a log record's clock (round 38z130: ``logging.makeLogRecord({}).created`` read twice)
                    "logging.makeLogRecord", "logging.LogRecord", "logging.Formatter")
# (round 38z108: the current accelerator's stream, the engine's automatic backend; 38z110: denormals flushed on a CPU
# only; 38z114: files read by NumPy)
# (round 38z98: the course's own helpers that measure or inspect the machine, ``measure_bandwidth()``)
# (round 38z87: "torch.cuda.FloatTensor", a tensor's bytes name its device)
# Triton's names that are the same on every machine: the language, launching, and configurations. The rest of it
# (``triton.runtime``, ``triton.knobs``, ``triton.testing``, ``triton.JITFunction``: a kernel's type is another under
# the interpreter, round 38z79) answers which machine this is.
# What a module says of how it was installed: its version, where its files lie (``site-packages`` or Colab's
# ``dist-packages``), how it was found.
# Where a frame's or a function's code lies (round 38z127: ``"dist-packages" in frame.filename`` over the call stack,
# ``err.__traceback__.tb_frame.f_code.co_filename``: IPython's own files are under dist-packages on Colab).
_CODES_FILES = frozenset(("co_filename", "tb_frame", "__traceback__", "__file__"))
_INSTALLED = frozenset(("__version__", "__file__", "__path__", "__spec__", "__loader__", "__cached__"))
# What a module says of the library it was built with, any module's (``zlib.ZLIB_RUNTIME_VERSION``,
# ``sqlite3.sqlite_version``, ``ssl.OPENSSL_VERSION``, ``hashlib.algorithms_available``): a fact of the machine's
# image (round 38z146: zlib 1.2.11 on Colab's, 1.2.13 here), whatever the module computes besides; a name that only
# holds the word (``conversion``, a model ``registry.build``) is not one
_BUILT = re.compile(r"(?i)(^|_)version(_info)?$|^algorithms_available$")
_TRITON_SAME = frozenset(("jit", "language", "cdiv", "next_power_of_2", "Config", "autotune", "heuristics"))
_SAME_EVERYWHERE = ("os.path.join", "os.path.basename", "os.path.dirname", "os.path.splitext", "os.sep",
                    "sys.maxsize", "sys.float_info", "sys.int_info", "sys.stdout", "sys.stderr",
                    "torch.profiler.record_function", "torch.autograd.profiler.record_function",  # (a label: 38z80)
                    "threading.Lock", "threading.RLock")  # (a lock only makes calls wait: it changes no value)


def _same_everywhere(path: str) -> bool:
    """One of :data:`_SAME_EVERYWHERE`, or a field of a value among them (``sys.float_info.min``: round 38z79)."""
    return path in _SAME_EVERYWHERE or path.startswith(("sys.float_info.", "sys.int_info."))


def _launch(node: ast.AST, machine: Machine) -> bool:
    """``add_kernel[grid](...)``: a launch of the learner's kernel."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) \
        and isinstance(node.func.value, ast.Name) and node.func.value.id in machine.kernels


def _kernel_object(node: ast.AST, machine: Machine, scope: Scope) -> bool:
    """A ``@triton.jit`` kernel read as an object, not launched (``add_kernel[grid](...)``): its type, attributes and
    text are the interpreter's here and the compiler's on a GPU (round 38z79)."""
    def kernel(n: ast.AST) -> bool:
        return isinstance(n, ast.Name) and n.id in machine.kernels and n.id not in scope.local
    return isinstance(node, ast.Attribute) and kernel(node.value) or isinstance(node, ast.FormattedValue) \
        and kernel(node.value) or isinstance(node, ast.Call) and _callee(node) in (
            "isinstance", "type", "repr", "str", "hasattr", "getattr", "format", "ascii", "id", "dir", "vars",
            "callable", "issubclass") and any(map(kernel, node.args))
# What a tensor says of where it lives (``x.device`` is a place: :func:`_place`); and, where no import says what an
# object is (``globals()["torch"].cuda``), the names only a device's module answers with (a second net).
_PLACE_ATTRS = frozenset(("is_cuda", "is_cpu", "is_mps", "is_xpu", "is_meta", "is_ipu", "is_xla", "is_hpu", "is_mtia",
                          "is_maia", "is_vulkan", "is_mkldnn", "get_device", "is_pinned",
                          "__dlpack_device__", "__cuda_array_interface__", "__array_interface__",  # (round 38z85)
                          "is_shared",  # (round 38z87: always True for a GPU's tensor)
                          "_cuda"))  # (round 38z114: the course's KVCache keeps where it lives so)
_ANSWERS = frozenset(("is_available", "device_count", "get_device_name", "get_device_capability",
                      "get_device_properties", "current_device", "is_built", "current_accelerator"))
_DEVICES = frozenset(("cuda", "cpu", "mps", "xpu", "hip", "meta"))
_SAME = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
# What may fail, or give another object, on one machine and not another: a move, a view of host memory (``.numpy()``
# of a GPU tensor raises; ``q.cpu() is q`` holds on a CPU only: round 38z55).
_MOVES = frozenset(("to", "cuda", "cpu", "numpy", "pin_memory", "share_memory_", "__array__"))  # (round 38z89)
_IDENTITY = frozenset(("data_ptr", "untyped_storage", "storage", "is_leaf", "grad_fn", "_version", "_base", "_is_view",
                       "is_view", "_cdata", "storage_offset", "stride", "is_contiguous"))
# (round 38z106: autograd's record of a move, ``probe.cpu().is_leaf``; 38z110: a view's offset after a move)
_AUTOCASTS = frozenset(("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"))


def _asked(node: ast.AST, machine: Machine, scope: Scope | None = None) -> ast.AST | None:
    """The first expression in ``node`` whose value may differ from one machine to another, or None: a value read
    from a module of :data:`_MACHINE_MODULES` (after the learner's imports), a name bound from one
    (:func:`machine_names`), what a tensor says of where it lives, whether a move gave the same object, a place
    (``x.device``, ``DEVICE``) used for anything but placing tensors, keying the learner's cache, or comparing or
    counting the inputs' own places (``x.device != y.device``), or a ``try`` that may fail on one machine only
    (:func:`_tried`). What only prints, logs, warns, raises or asserts, and binds nothing, changes no result and is
    not read (``if VERBOSE: print(x.shape)``, round 38z47)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in machine.unread:
        return None  # a check of the learner's own that no try calls: whatever it asks, it can only raise
    scope = scope or _scope(node, machine)
    if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))) and (_swallows(node) or not all(
            h.body and isinstance(h.body[-1], ast.Raise) for h in node.handlers)):  # (round 38z51: pass)
        tried = _tried(node, machine, scope)
        if tried is not None:
            return tried
    if isinstance(node, (ast.With, ast.AsyncWith)) and any(_may_swallow(i.context_expr, node.body, machine, scope)
                                                           for i in node.items):
        body = next((n for b in node.body for n in _walk(b) if isinstance(n, ast.Call)), None)
        if body is not None:  # (round 38z59: contextlib.suppress, a try that goes on)
            return body
    if isinstance(node, ast.Call) and _logged(node, machine):  # logging formats its arguments inside a try of its
        formatted = next((a for a in node.args[1:] if isinstance(a, ast.Call)  # own that goes on (handleError)
                          and _callee(a) in machine.formatters), None)
        if formatted is not None:
            return formatted
    if id(node) in scope.told:
        return None  # a value only printed or logged (round 38z80), or kept where no graded call reads it (38z90)
    if _launch(node, machine):
        return node  # a launch's value: None from the interpreter, the compiled kernel on a GPU (round 38z83)
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value in _TF32_OFF \
            and all(isinstance(t, ast.Attribute) and t.attr in _TF32 for t in node.targets):
        return None  # TF32 switched off: the products a CPU computes (round 38z84)
    if (isinstance(node, ast.If) and all(_only_says(b, machine, scope) or id(b) in scope.told or _checks(b, machine)
                                         for b in node.body + node.orelse)
            and _binds_nothing(node.test, machine) or _only_says(node, machine, scope)
            or isinstance(node, ast.Assert) and _binds_nothing(node, machine)
            or _placing(node, machine, scope)):
        return None
    children = list(ast.iter_child_nodes(node))
    if isinstance(node, ast.ClassDef) and node.name in machine.api:
        reached = _reached(node, machine.api[node.name])
        children = [*node.decorator_list, *node.bases, *node.keywords, *(
            b for b in node.body if not isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) or b.name in reached)]
    if isinstance(node, ast.Expr) and _launch(node.value, machine):  # a launch, its value unused
        children = [node.value.func.slice, *node.value.args, *(k.value for k in node.value.keywords)]
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
            and node.value.func.attr in _MAGICS and _shell(node.value.func.value):
        children = [*node.value.args, *(k.value for k in node.value.keywords)]  # ``%timeit f(x)``: its value unread
    if isinstance(node, ast.IfExp) and _same_but_moves([node.body], [node.orelse], machine) \
            or isinstance(node, ast.If) and node.orelse and _same_but_moves(node.body, node.orelse, machine):
        children = [b for b in ast.iter_child_nodes(node) if b is not node.test]  # (which branch runs says where
        # the values live, not what they are: round 38z147, ``out.cpu() if not q.is_cuda else out``)
    if isinstance(node, ast.arguments):  # a parameter's default place: read where the parameter is used (round 38z82)
        children = [d for d in [*node.defaults, *node.kw_defaults] if d is not None and not _placed(d, machine, scope)]
    if isinstance(node, ast.withitem) and _device_context(node.context_expr, machine, scope) \
            or isinstance(node, ast.IfExp) and _binds_nothing(node.test, machine) \
            and _device_context(node.body, machine, scope) and _device_context(node.orelse, machine, scope):
        return None  # with torch.device(dev): tensors placed (round 38z59); torch.cuda.device(x.device) if x.is_cuda
        # else nullcontext(): the current GPU made the input's (round 38z80)
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
    if _moved_identity(node) or _written_through_move(node, machine) or _aligned(node) or _unwaited(node, machine) \
            or _undefined_to_int(node):
        return node
    aliased = _aliasing(node, machine)
    if aliased is not None:
        return aliased
    unwritten = _unwritten(node, machine)
    if unwritten is not None:
        return unwritten
    if isinstance(node, ast.Call) and _drawn_on_a_device(node, machine, scope):
        return node
    drawn = _device_draw(node, machine)
    if drawn is not None:
        return drawn
    if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) \
            and any(_namespace(c) for c in node.comparators):
        # whether a name of the machine's is bound (round 38z81: ``"_GPU_SESSION" in globals()``), or one that a
        # cell binds after a line that may fail on one machine only (round 38z148: a pinned buffer's name)
        return node if node.left.value in machine.names | machine.fragile else None
    if _namespace(node) and machine.fragile:
        return node  # the names bound, listed: which cells ran to their end (round 38z148: ``for n in dir()``)
    if _holds(node, machine, scope):
        return node  # what a module or Python's own type holds: its version's (round 38z166: ``hasattr(itertools,
        # "batched")``, 3.12's; round 38z197: ``"override" in typing.__all__``, ``hasattr(1, "is_integer")``)
    cache, key = _looked_up(node, machine)
    if key is not None and _held(cache) in machine.keyed and (id(node) not in scope.filled
                                                              or _held(cache) in machine.stocked) and (
            isinstance(node, ast.Compare) or isinstance(node, ast.Call) and (
                _callee(node) in ("len", "get") or _callee(node) == "pop" and len(node.args) > 1)):
        return node  # whether a place's entry is there yet, or how many places have one: where the code ran before
        # (round 38z104: ``if len(_NEG_INF) > 1``, ``_ZERO.get(q.device)`` filled by a demo on the CPU only)
    if key is not None:  # key in CACHE, CACHE[key], CACHE.get(key): by a key, not by a device named (round 38z63)
        if _named_place(key, machine) or _held(cache) in machine.keyed and all(
                isinstance(e, ast.Constant) for e in _elements(key)) and _elements(key):
            return node  # (round 38z69: ``PLAN[0] = ...``, the index of cuda:0, where ``q.device.index`` keys)
        children = [*([cache] if _held(cache) in machine.names else []), *_unkeyed(key, machine, scope),
                    *(node.args[1:] + node.keywords if isinstance(node, ast.Call) else [])]
    if isinstance(node, ast.Call) and key is None:
        if _resolved(node.func, machine, scope) in _AUTOCASTS and any(
                k.arg == "enabled" and isinstance(k.value, ast.Constant) and k.value.value is False for k in node.keywords):
            return None  # (autocast switched off: the same precision everywhere, round 38z55)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _MAGICS and _shell(node.func.value):
            if node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in _TIMERS:
                return node  # what a timing magic gives back (``%timeit -o``): a clock's reading (round 38z157)
            children = [*node.args, *(k.value for k in node.keywords)]  # a magic's line: read as text
        elif isinstance(node.func, ast.Name) and node.func.id in machine.bars and node.func.id not in scope.local:
            children = node.args[:1]  # a progress bar, or the items unchanged (round 38z90)
        elif _callee(node) in machine.defined:  # a place handed to the learner's own function: read where it is used
            children = [node.func, *(a for a in node.args if not _placed(a, machine, scope)),  # (partial's f too)
                        *(k for k in node.keywords if not _placed(k.value, machine, scope))]
        elif machine.aliases.get((_path(node.func) or ("",))[0], "").split(".")[0] == "tqdm":
            children = [node.func, *node.args[:1]]  # a progress bar's options only draw it (round 38z80: disable=)
        else:  # a place handed to torch's (``device=``, ``x.to(DEVICE)``): a tensor placed, or moved; what binds a
            # name there is read (round 38z71: ``non_blocking=(gpu := torch.cuda.is_available())``)
            children = [node.func, *(a for a in node.args if not (getattr(node.func, "attr", None) in ("to", "cuda")
                                                                  and _placed(a, machine, scope) and _binds_nothing(a))),
                        *(k for k in node.keywords if not _binds_nothing(k.value) or (
                            k.arg not in ("device", "device_type", "non_blocking")
                            and not (k.arg is None and _place(k.value, machine, scope))))]  # (**factory_kwargs)
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return None  # a name bound, not read (round 38z80: a field ``device: torch.device`` of a NamedTuple)
    if _kernel_object(node, machine, scope) or _shell(node) or isinstance(node, ast.MatchClass) and any(
            a in _PLACE_ATTRS or a == "device" for a in node.kwd_attrs) or _attributes_named(node):
        return node  # (round 38z95: ``case torch.Tensor(is_cuda=True)``, ``attrgetter("device.type")``, the shell)
    path = _resolved(node, machine, scope)
    if (isinstance(node, ast.Name) and node.id not in scope.local and (
            node.id in machine.names or node.id in (machine.keyed | machine.bars) and isinstance(node.ctx, ast.Load))
            or isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _held(node) in machine.keyed
            or _string_form(node, machine, scope)
            or path and (_machine_path(path) or _other_package(node, path, machine)) or _probed(node, machine, scope)
            or _last(node) in _PLACE_ATTRS and not (  # (a method of the learner's own class: round 38z165,
                isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)  # ``self.is_shared(b)``)
                and node.value.id in ("self", "cls")
                and node.attr in machine.defined)
            or path is None and _last(node) in _ANSWERS - machine.defined
            or isinstance(node, ast.Attribute) and node.attr in _CODES_FILES
            or _place(node, machine, scope)):
        return node
    if path and isinstance(node, (ast.Name, ast.Attribute)) and _path(node)[0] in machine.aliases:
        return None  # (a module's name read for it, ``device`` of ``device.size``, is no question of its own)
    return next(filter(None, (_asked(c, machine, scope) for c in children)), None)


# Modules a course module holds under a name of its own (``pagedlab.attention.torch``): read as the module itself.
_REEXPORTED = {"torch": "torch", "triton": "triton", "os": "os", "sys": "sys", "platform": "platform", "np": "numpy",
               "numpy": "numpy", "shutil": "shutil", "subprocess": "subprocess", "time": "time",
               "importlib": "importlib"}


# Packages the answer may compute with, beside the standard library: their questions of the machine are named above
# (``torch.cuda``, ``pagedlab.device``); any other package's function may be one (round 38z121: transformers'
# ``is_torch_bf16_gpu_available()``, huggingface_hub's ``is_google_colab()``), and none computes an exercise's answer.
_COMPUTING = frozenset(("torch", "numpy", "triton", "pagedlab", "tqdm", "einops", "typing_extensions"))
# The standard library's modules an answer computes with, whose questions of the machine (``codecs.open``,
# ``io.open``) are named above; any other (files, processes, threads, the platform, clocks: round 38z124,
# ``filecmp.cmpfiles("/dev", "/dev", ["nvidia0"])``, ``mimetypes.read_mime_types``) may be one.
_PURE_STDLIB = frozenset((
    "__future__", "abc", "array", "ast", "base64", "binascii", "bisect", "builtins", "cmath", "codecs", "collections",
    "contextlib", "copy", "dataclasses", "decimal", "enum", "fractions", "functools", "hashlib", "heapq", "io",
    "itertools", "json", "logging", "math", "numbers", "operator", "pprint", "random", "re", "reprlib",
    "statistics", "string", "struct", "textwrap", "types", "typing", "warnings", "weakref", "zlib"))


def _other_package(node: ast.AST, path: str, machine: Machine) -> bool:
    """Whether ``node`` (whose dotted ``path`` it is) reads a module the learner imported that is neither one of
    :data:`_COMPUTING` nor of :data:`_PURE_STDLIB` (``IPython.display`` only shows)."""
    top = path.split(".")[0]
    imported = not _path(node) or _path(node)[0] in machine.aliases  # (no dotted name: ``__import__("x").y``)
    bar = top != "tqdm" or path.split(".")[-1] in ("tqdm", "trange")  # (round 38z135: tqdm's ``utils.envwrap``
    # sets a function's defaults from the environment; of tqdm, an answer uses the bar)
    return imported and not (top in _COMPUTING and bar or top in _PURE_STDLIB) \
        and not path.startswith("IPython.display") and not _same_everywhere(path)


def _machine_path(path: str) -> bool:
    """Whether what ``path`` names (``torch.cuda.is_available``, ``torch.__file__``) answers which machine this is: a
    module of :data:`_MACHINE_MODULES` or of Triton's but :data:`_TRITON_SAME`, torch's private modules (round 38z91:
    ``torch.utils._triton.has_triton()``, true where Triton compiles for a GPU), or what a module says of how it was
    installed (its version, its files: round 38z89, ``"dist-packages" in torch.__file__`` on Colab); NumPy's private
    modules and its dunders too."""
    parts = path.split(".")
    if parts[0] == "pagedlab" and any(p in _REEXPORTED for p in parts[1:]):  # (round 38z114: ``ref.torch.cuda``,
        i = next(i for i, p in enumerate(parts) if i and p in _REEXPORTED)  # torch as the course's module holds it)
        return _machine_path(".".join([_REEXPORTED[parts[i]], *parts[i + 1:]]))
    return path != "pagedlab.device.DEVICE" and (
        any(p in _INSTALLED for p in path.split("."))  # (round 38z112: ``torch.__version__.endswith(...)``)
        or any(_BUILT.search(p) for p in path.split(".")[1:])  # (round 38z146: ``zlib.ZLIB_RUNTIME_VERSION``)
        or path.startswith("pagedlab.") and ("device" in path.split(".")[1:-1] or "_device" in path.split(".")[1:-1])
        and path.split(".")[-1] != "DEVICE"  # (round 38z98: ``kv_cache._device.ON_GPU``, the module re-exported)
        or path.startswith("torch.") and any(p.startswith("_") and not p.endswith("__") for p in path.split(".")[1:])
        or path.startswith("numpy.") and any(p.startswith("_") for p in path.split(".")[1:])  # (round 38z122: the
        # processor's features, ``numpy._core._multiarray_umath.__cpu_features__``)
        or not _same_everywhere(path) and any(path == m or path.startswith(m + ".") for m in _MACHINE_MODULES)
        or path.startswith("triton.") and path.split(".")[1] not in _TRITON_SAME)


def _probed(node: ast.AST, machine: Machine, scope: Scope) -> bool:
    """``hasattr(q, "__cuda_array_interface__")``, ``hasattr(torch, "cuda")``: whether a value has an attribute that
    asks which machine this is (round 38z89), or one named by a string computed where it runs."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr"
            and node.func.id not in scope.local and len(node.args) == 2):
        return False
    name = node.args[1]
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        return True
    path = _resolved(node.args[0], machine, scope)
    return name.value in _PLACE_ATTRS or bool(path) and _machine_path(f"{path}.{name.value}")


def _reached(cls: ast.ClassDef, api: frozenset[str]) -> set[str]:
    """The methods of ``cls`` that a call from outside may run: those of ``api``, the special ones (``__init__``,
    ``__len__``), and those that a statement reached names (round 38z90: an ``uptime()`` that reads a clock is not
    among them where no graded call makes it)."""
    methods = {f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    def named(b: ast.AST) -> set[str]:
        return {n.attr if isinstance(n, ast.Attribute) else n.id for n in _walk(b)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) or isinstance(n, ast.Name)} & methods
    # The object itself, not read through (``self.x``), compared (``other is self``), only printed or only asked
    # its type: formatted, handed on, kept or given back, its string may reach a result (a dict keyed by it is sorted
    # by the keys' strings where the graded calls read it)
    inert = {id(x) for n in _walk(cls) for x in (
        [n.value] if isinstance(n, ast.Attribute) else [n.left, *n.comparators] if isinstance(n, ast.Compare)
        else n.args if isinstance(n, ast.Call) and _callee(n) in ("print", "isinstance", "type", "id") else [])}
    def formats(b: ast.AST) -> bool:  # where a ``__repr__`` that only reads may run
        return any(isinstance(x, ast.Name) and x.id == "self" and isinstance(x.ctx, ast.Load) and id(x) not in inert
                   for x in _walk(b))
    quiet = {f.name for f in cls.body if isinstance(f, ast.FunctionDef) and f.name in _FORMATS and _only_reads(f)}
    reached = {m for m in methods if m in api or m.startswith("__") and m.endswith("__") and m not in quiet}
    reached |= {m for b in cls.body if not isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) for m in named(b)}
    while True:
        bodies = [b for b in cls.body if not isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) or b.name in reached]
        more = {m for b in bodies for m in named(b)} | (quiet if any(map(formats, bodies)) else set())
        if more <= reached:
            return reached
        reached |= more


# The special methods that make an object's string: one that only reads runs only where something formats the
# object (round 38z147: a ``__repr__`` that names when the last block was taken, which no graded call formats)
_FORMATS = frozenset(("__repr__", "__str__", "__format__"))
_READERS = frozenset(("join", "format", "item", "tolist", "get", "keys", "values", "items", "count", "index", "upper",
                      "lower", "strip", "replace", "split", "numel", "size", "dim", "monotonic", "perf_counter",
                      "time", "monotonic_ns", "perf_counter_ns", "time_ns", "is_available", "device_count",
                      "get_device_name", "memory_allocated", "getenv"))
_UNSAFE_BUILTINS = frozenset(("exec", "eval", "compile", "setattr", "delattr", "globals", "vars", "locals", "open",
                              "__import__", "input", "breakpoint"))


def _only_reads(f: ast.FunctionDef) -> bool:
    """Whether ``f`` changes nothing outside its locals: it binds only local names and calls only builtins and
    functions and methods that read (:data:`_READERS`: a string's, a tensor's sizes, a clock, the GPU's name)."""
    return not any(isinstance(n, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)) or isinstance(
        getattr(n, "ctx", None), (ast.Store, ast.Del)) and not isinstance(n, ast.Name) or isinstance(n, ast.Call) and not (
            isinstance(n.func, ast.Name) and n.func.id in dir(builtins) and n.func.id not in _UNSAFE_BUILTINS
            or isinstance(n.func, ast.Attribute) and n.func.attr in _READERS) for n in _walk(f))


_CONTAINERS = frozenset(("list", "dict", "set", "defaultdict", "deque", "Counter", "OrderedDict"))
_FILLS = frozenset(("append", "appendleft", "extend", "insert", "add", "update"))  # what a log of records grows by


def _written(statement: ast.AST, machine: Machine, function: str | None = None
             ) -> tuple[str, list[ast.AST], ast.AST] | None:
    """(what it writes to, what is written, the node of what it writes to) where ``statement`` only writes to an
    attribute of the learner's own object (``self.elapsed = ...``, ``self.events.append(...)``, ``self.seen[k] =
    ...``: ``".elapsed"``, ``".events"``), of one of its functions (``wrapper.last_ms = ...``), or into a global of
    the learner's bound to an empty container (``TIMINGS[name].append(...)``: ``"TIMINGS"``); else None."""
    def own(t: ast.AST) -> str | None:
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and (
                t.value.id == "self" or t.value.id in machine.defined) and not t.attr.startswith("__"):
            return "." + t.attr
        if isinstance(t, ast.Name):  # a global log, or a parameter every call gives one (``sink.append(...)``)
            return t.id if t.id in machine.logs else machine.sunk.get((function, t.id))
        return None
    def into(t: ast.AST) -> tuple[str | None, ast.AST]:  # ``self.seen[k]``, ``TIMINGS[k]``: into what is indexed,
        if isinstance(t, ast.Call) and getattr(t.func, "attr", None) == "setdefault":  # or its entry got or made
            return own(t.func.value), t.func.value  # (round 38z123: ``TIMINGS.setdefault(name, []).append(dt)``)
        return (own(t.value), t.value) if isinstance(t, ast.Subscript) else (None, t)
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and statement.value is not None:
        targets = _targets(statement) if not isinstance(statement, ast.Assign) else statement.targets
        if len(targets) == 1 and isinstance(targets[0], ast.Attribute) and own(targets[0]):
            return own(targets[0]), [statement.value], targets[0]
        if len(targets) == 1 and into(targets[0])[0]:
            return *into(targets[0])[:1], [statement.value, targets[0].slice], into(targets[0])[1]
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr in _FILLS:
        call, receiver = statement.value, statement.value.func.value
        key, node = (own(receiver), receiver) if own(receiver) else into(receiver)
        if key:
            return key, [*call.args, *(k.value for k in call.keywords),
                         *([receiver.slice] if isinstance(receiver, ast.Subscript) else []),
                         *(receiver.args if isinstance(receiver, ast.Call) else [])], node
    return None


def _memos(statements: list[ast.AST], caches: frozenset[str], machine: Machine) -> frozenset[str]:
    """The caches (:attr:`Machine.caches`) that hold, for each key, a value made of the key alone (``_SIZES[dtype] =
    torch.empty(0, dtype=dtype).element_size()``) and are read by key only: whatever calls filled them, each key reads
    the same (round 38z96: a demo under a question of the GPU's memory fills one through the answer)."""
    known = set(machine.aliases) | set(dir(builtins))  # (modules and builtins: the same for every key)
    def names(node: ast.AST) -> set[str]:
        return {n.id for n in _walk(node) if isinstance(n, ast.Name)} - known
    every = replace(machine, caches=caches)  # (what is looked up in any cache; a memo is one of them still held)
    memos = set(caches)
    for n in (n for st in statements for n in _walk(st)):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in _targets(n):
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in memos and (
                        not isinstance(n, ast.Assign) or names(n.value) - names(t.slice)
                        or any(isinstance(c, ast.Call) and _callee(c) in machine.defined and (
                            isinstance(c.func, ast.Name) or _root(c.func) in ("self", "cls")) for c in _walk(n.value))):
                    memos.discard(t.value.id)  # a value not of the key alone
        cache, key = _looked_up(n, every)
        if cache is not None and (not _elements(key) or isinstance(n, ast.Call) and n.func.attr != "get"):
            memos.discard(_held(cache))  # read or changed other than by a key (``len``, ``clear``, ``pop``)
    reads = {id(x) for st in statements for n in _walk(st) for cache, _ in [_looked_up(n, every)]
             if cache is not None and _held(cache) in memos for x in _walk(n)}
    return frozenset(m for m in memos if not any(isinstance(n, ast.Name) and n.id == m and isinstance(n.ctx, ast.Load)
                                                 and id(n) not in reads for st in statements for n in _walk(st)))


def _sunk(statements: list[ast.AST], logs: frozenset[str], defs: dict) -> dict[tuple[str, str], str]:
    """(function, parameter) -> the global log (:attr:`Machine.logs`) that every call of the learner's function gives
    that parameter, and the function does not bind again (round 38z96: ``with _stopwatch(STEP_SECONDS):``, whose
    ``sink.append(...)`` keeps a clock's readings there)."""
    given: dict[tuple[str, str], set] = {}
    for call in (c for st in statements for c in _walk(st) if isinstance(c, ast.Call) and _callee(c) in defs):
        f = defs[_callee(call)]
        names = [a.arg for a in [*f.args.posonlyargs, *f.args.args]]
        if isinstance(call.func, ast.Attribute) and names[:1] in (["self"], ["cls"]):
            names = names[1:]  # (a method called on its object)
        for name, a in [*zip(names, call.args), *((k.arg, k.value) for k in call.keywords)]:
            given.setdefault((f.name, name), set()).add(a.id if isinstance(a, ast.Name) and a.id in logs else None)
    rebound = {(f.name, n.id) for f in defs.values() for n in _walk(f)
               if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return {key: next(iter(held)) for key, held in given.items()
            if len(held) == 1 and None not in held and key not in rebound}


def _saying(node: ast.AST, machine: Machine) -> set[int]:
    """The nodes of ``node``'s statements that only say (:func:`_only_says`), and the tests of ``if`` statements whose
    every branch only says."""
    saying = {id(n) for s in _walk(node) if isinstance(s, ast.Expr) and _only_says(s, machine) for n in _walk(s)}
    saying |= {id(n) for s in _walk(node) if isinstance(s, ast.For) and _says(s, machine)  # (a table printed)
               for n in [*_walk(s.iter), *_walk(s.target)]}
    return saying | {id(n) for s in _walk(node) if isinstance(s, ast.If) and s.body + s.orelse and all(
        isinstance(b, ast.Expr) and _only_says(b, machine) for b in s.body + s.orelse)  # (38z81: a warning if too
        and _binds_nothing(s.test, machine) for n in _walk(s.test)}                  # large)


def _sinks(statements: list[ast.AST], machine: Machine) -> frozenset[str]:
    """What the learner's code keeps (:func:`_written`) and reads only to say (print, log) or to keep in another such
    place: a clock's reading kept as ``self.elapsed``, appended to ``self.events`` or to a global ``TIMINGS[name]``,
    or set on a timing decorator's ``wrapper.last_ms`` (round 38z92). No graded call reads them: not the attributes of a class the
    exercise hands out (:attr:`Machine.api`), nor what a method of one that no graded call reaches reads (round 38z90:
    an ``uptime()``). Where the notebook reads attributes by name (``vars``, ``__dict__``, ``getattr``, a dataclass's
    fields), no attribute; where it reads globals by name (``globals()``, ``eval``, ``sys.modules``), nothing."""
    asked = {id(c) for st in statements for n in _walk(st) if isinstance(n, ast.Compare)  # "x" in sys.modules
             for c in n.comparators if all(isinstance(o, (ast.In, ast.NotIn)) for o in n.ops)}
    read = {n.id if isinstance(n, ast.Name) else n.attr for st in statements for n in _walk(st)
            if isinstance(n, (ast.Name, ast.Attribute)) and id(n) not in asked}
    by_name = read & {"vars", "getattr", "__dict__", "asdict", "astuple", "dataclass", "globals", "locals", "eval",
                      "exec", "modules"}  # (a dataclass's fields are its repr and its equality)
    unreached = {id(n) for st in statements for c in _walk(st) if isinstance(c, ast.ClassDef) and c.name in machine.api
                 for f in c.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and f.name not in _reached(c, machine.api[c.name]) for n in _walk(f)}
    inside = {id(n): f.name for st in statements for f in _walk(st)
              if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in _walk(f)}
    writes = [w for st in statements for n in _walk(st) if id(n) not in unreached
              for w in [_written(n, machine, inside.get(id(n)))] if w is not None]
    writes += [(n.targets[0].id, [n.value], n.targets[0]) for st in statements for n in _walk(st)  # a demo's
               if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)  # ``calls =
               and id(n) not in inside]  # TIMINGS[...]``, outside any function
    handed = {"." + a for api in machine.api.values() for a in api}
    sinks = {key for key, _, _ in writes if not by_name or not key.startswith(".") and not by_name - {
        "vars", "getattr", "__dict__", "asdict", "astuple", "dataclass"} and "__dict__" not in by_name} - handed
    said = set().union(*(_saying(st, machine) for st in statements)) | unreached | {id(t) for _, _, t in writes}
    said |= {id(a) for st in statements for c in _walk(st) if isinstance(c, ast.Call)  # handed to a sunk parameter
             for a in [*c.args, *(k.value for k in c.keywords)]
             if isinstance(a, ast.Name) and a.id in set(machine.sunk.values())
             and any(f == _callee(c) for f, _ in machine.sunk)}
    loads = [(n, key) for st in statements for n in _walk(st) if isinstance(n, (ast.Attribute, ast.Name))
             and isinstance(n.ctx, ast.Load) and id(n) not in said
             for key in ((n.id,) if isinstance(n, ast.Name) else ("." + n.attr, n.attr))]  # (``module.TIMINGS`` too)
    loads = [(n, key) for n, key in loads if key in sinks]
    ifs = [s for st in statements for s in _walk(st) if isinstance(s, ast.If)]
    while True:
        kept = {id(x) for key, values, _ in writes if key in sinks for v in values for x in _walk(v)}
        # (round 38z109: ``if STEP_LOG:`` before a total printed: a test whose branches only say or keep in sinks)
        kept |= {id(x) for s in ifs if all(id(b) in said or isinstance(b, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                                           and all(isinstance(t, ast.Name) and t.id in sinks for t in _targets(b))
                                           for b in s.body + s.orelse) for x in _walk(s.test)}
        read = {key for n, key in loads if id(n) not in kept}
        if not read & sinks:
            return frozenset(sinks)
        sinks -= read


def _held(node: ast.AST) -> str | None:
    """The name a cache is held by: ``_MASKS``, or ``self._built`` (an object's own, round 38z80)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _looked_up(node: ast.AST, machine: Machine) -> tuple[ast.AST | None, ast.AST | None]:
    """The cache and key of ``node`` where it looks one up in a cache of the learner's, or changes it by one (``key in CACHE``,
    ``CACHE[key]``, ``CACHE.get(key)``, ``CACHE.pop(key)``); a cache emptied or counted (``CACHE.clear()``,
    ``len(CACHE)``) has an empty key; anything else (None, None). What else reads a cache a place keys (:attr:`Machine.keyed`: a loop over it,
    its keys) reads which machines it ran on."""
    def cache(n: ast.AST) -> bool:
        return _held(n) in machine.caches
    if isinstance(node, ast.Compare) and all(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops) \
            and len(node.comparators) == 1 and cache(node.comparators[0]):
        return node.comparators[0], node.left
    if isinstance(node, ast.Subscript) and cache(node.value):
        return node.value, node.slice
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and cache(node.func.value) \
            and node.func.attr in ("get", "setdefault", "pop", "clear", "add", "discard", "remove"):
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
    elif path == "print" and (any(k.arg == "file" and not _stream(k.value, machine) for k in node.keywords)
                              or "print" in machine.heard):  # read back
        operands = node.args
    elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "format" and isinstance(node.func.value, ast.Constant):
        if ".device" in str(node.func.value.value):
            return True  # "{0.device}".format(x) (round 38z85)
        operands = [*node.args, *(k.value for k in node.keywords)]
    elif isinstance(node, ast.FormattedValue):
        operands = [node.value]
    elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("__repr__", "__str__", "__format__"):
        operands = node.args[:1] if path in ("torch.Tensor.__repr__", "torch.Tensor.__str__",  # (round 38z102:
                                             "torch.Tensor.__format__") else [node.func.value]  # t.__repr__())
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
    """A key's parts: a tuple's elements, an f-string's values (round 38z79: ``f"{rows}:{cols}@{device}"``)."""
    if isinstance(key, ast.JoinedStr):
        return [v.value for v in key.values if isinstance(v, ast.FormattedValue)]
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
        isinstance(e, ast.Attribute) and e.attr in ("type", "index") and _placed(e.value, machine, scope)) or (
        isinstance(e, ast.IfExp) and _keys_a_place(e.body, machine, scope)  # (round 38z123: ``str(device) if
        and _keys_a_place(e.orelse, machine, scope))  # device is not None else "cpu"``)


_MAGICS = frozenset(("run_line_magic", "run_cell_magic", "system", "getoutput"))  # what IPython's magics become
_TIMERS = frozenset(("timeit", "prun"))  # magics whose value (``-o``, ``-r``) is what the clock or profiler read


def _shell(node: ast.AST) -> bool:
    """IPython's shell read as a value (``"google.colab" in str(get_ipython())``: Colab's shell is another class), not
    as the call a magic (``%timeit``, ``!nvidia-smi``) becomes."""
    return isinstance(node, ast.Call) and _callee(node) == "get_ipython"  # (round 38z100: ``IPython.get_ipython()``)


def _attributes_named(node: ast.AST) -> bool:
    """``operator.attrgetter("device.type")``, ``methodcaller("is_pinned")``: a place's attribute read by its name."""
    return isinstance(node, ast.Call) and _callee(node) in ("attrgetter", "methodcaller") and any(
        isinstance(a, ast.Constant) and isinstance(a.value, str)
        and any(p in _PLACE_ATTRS or p == "device" for p in a.value.split(".")) for a in node.args)


def _aligned(node: ast.AST) -> bool:
    """An address's alignment asked (``x.data_ptr() % 512``): GPU allocators round every block up to 512 bytes, a
    CPU's to 64 (round 38z93); the difference of two addresses in one storage is the same everywhere."""
    return isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Add, ast.Sub)) and any(
        isinstance(c, ast.Call) and getattr(c.func, "attr", None) == "data_ptr"
        for side in (node.left, node.right) for c in _walk(side))


_EMPTY = frozenset(("empty", "empty_like", "new_empty", "empty_strided"))
_WRITES_ALL = frozenset(("copy_", "fill_", "zero_", "normal_", "uniform_", "random_", "exponential_", "geometric_",
                         "cauchy_", "log_normal_", "bernoulli_"))
_VIEWS = frozenset(("view", "view_as", "reshape", "reshape_as", "unsqueeze", "squeeze", "flatten", "narrow", "expand",
                    "expand_as", "transpose", "permute", "T", "mT", "unflatten", "as_strided", "select", "contiguous"))


def _unwritten(node: ast.AST, machine: Machine) -> ast.AST | None:
    """In a function, a tensor made by ``torch.empty`` (or a view of one) updated in place (``out += ...``,
    ``out.add_(...)``) before anything wrote it: it adds to whatever the allocator handed back, fresh zeroed pages on
    a CPU, a freed tensor's values from a GPU's caching allocator (round 38z114: a 64 MiB workspace). A launch of the
    learner's kernel writes the tensors it is handed (what it left unwritten is the Triton rule's: round 38z170)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    def base(v: ast.AST) -> ast.AST:  # through views and slices, to what they view
        while True:
            if isinstance(v, ast.Subscript) or isinstance(v, ast.Attribute) and v.attr in _VIEWS:
                v = v.value
            elif isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in _VIEWS:
                v = v.func.value
            else:
                return v
    group: dict[str, str] = {}  # a name bound to an empty tensor or a view of one -> the empty one's name
    for n in sorted((n for n in _walk(node) if isinstance(n, (ast.Assign, ast.AnnAssign))), key=lambda n: n.lineno):
        for t, v in _pairs(n):
            b = base(v)
            if isinstance(t, ast.Name) and isinstance(b, ast.Call) and _callee(b) in _EMPTY:
                group[t.id] = t.id
            elif isinstance(t, ast.Name) and isinstance(b, ast.Name) and b.id in group and b is not v:
                group[t.id] = group[b.id]
    if not group:
        return None
    def root(v: ast.AST) -> str | None:
        b = base(v)
        return group.get(b.id) if isinstance(b, ast.Name) else None
    written: dict[str, int] = {}
    updates = []
    for n in _walk(node):
        if isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in _targets(n):
                if isinstance(t, ast.Subscript) and root(t):
                    written[root(t)] = min(written.get(root(t), n.lineno), n.lineno)
        elif isinstance(n, ast.AugAssign) and root(n.target):
            updates.append((root(n.target), n.lineno, n))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and root(n.func.value):
            r = root(n.func.value)
            if n.func.attr in _WRITES_ALL:
                written[r] = min(written.get(r, n.lineno), n.lineno)
            elif re.fullmatch(r"[a-z]\w*[a-z0-9]_", n.func.attr):
                updates.append((r, n.lineno, n))
        if isinstance(n, ast.Call) and _launch(n, machine):
            for r in filter(None, map(root, n.args)):
                written[r] = min(written.get(r, n.lineno), n.lineno)
        if isinstance(n, ast.Call):
            for k in n.keywords:
                if k.arg == "out" and root(k.value):
                    written[root(k.value)] = min(written.get(root(k.value), n.lineno), n.lineno)
    return next((n for r, line, n in sorted(updates, key=lambda u: u[1]) if written.get(r, line + 1) > line), None)


def _aliasing(node: ast.AST, machine: Machine) -> ast.AST | None:
    """In a function, a move to a place bound to a name beside the tensor it was moved from (``result =
    out.to("cpu")``, ``torch.as_tensor(scores, device="cpu")``, ``torch.from_numpy(buf).to(q.device)``): on a CPU the
    two names hold one tensor, on a GPU two.
    A write into one read through the other after it, or the move's identity read through its name (autograd's
    record, a weak reference), differs (round 38z106)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    def source(v: ast.AST) -> str | None:  # what a move to a fixed place was made from
        if not isinstance(v, ast.Call):
            return None
        attr, path = getattr(v.func, "attr", None), _resolved(v.func, machine, Scope()) or ""
        places = [*v.args[:1], *(k.value for k in v.keywords if k.arg == "device")]
        if attr in ("cpu", "cuda", "numpy", "__array__") or attr == "to" and any(
                _fixed_place(a, machine) or isinstance(a, ast.Name) and a.id in machine.places
                or _place(a, machine, Scope()) for a in places):  # (round 38z127: to the input's place too)
            inner = v.func.value  # (``torch.from_numpy(buf).to(q.device)``: the buffer, which the tensor shares)
            if isinstance(inner, ast.Call) and inner.args and (_resolved(inner.func, machine, Scope()) or "") in (
                    "torch.from_numpy", "torch.as_tensor", "torch.asarray", "torch.frombuffer"):
                return _root(inner.args[0])
            return _root(inner)
        if path in ("torch.as_tensor", "torch.asarray") and v.args and any(
                _fixed_place(a, machine) or isinstance(a, ast.Name) and a.id in machine.places
                for a in [*v.args[2:3], *(k.value for k in v.keywords if k.arg == "device")]):
            return _root(v.args[0])
        return None
    moves = {t.id: (src, n.lineno, v) for n in _walk(node) for t, v in _pairs(n) if isinstance(t, ast.Name)
             for src in [source(v)] if src and src != t.id}
    if not moves:
        return None
    writes: dict[str, list[int]] = {}
    for n in _walk(node):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) or isinstance(n, ast.Call) and isinstance(
                n.func, ast.Attribute) and re.fullmatch(r"[a-z]\w*[a-z0-9]_", n.func.attr):
            writes.setdefault(_root(n.value if isinstance(n, ast.Subscript) else n.func.value), []).append(n.lineno)
        for k in getattr(n, "keywords", ()) if isinstance(n, ast.Call) else ():
            if k.arg == "out":
                writes.setdefault(_root(k.value), []).append(n.lineno)
        if isinstance(n, ast.Call) and _callee(n) in machine.defined - machine.pure:  # (round 38z127: the learner's
            for a in n.args:  # ``online_softmax_update(m, l, acc, s, v)``, which writes into its arguments)
                writes.setdefault(_root(a), []).append(n.lineno)
    shapes = {id(n.value) for n in _walk(node) if isinstance(n, ast.Attribute)  # (what a write leaves as it was)
              and n.attr in ("device", "dtype", "shape", "ndim", "is_cuda", "layout")}
    reads = [(n.id, n.lineno) for n in _walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and id(n) not in shapes]
    for name, (src, line, move) in moves.items():
        for one, other in ((src, name), (name, src)):
            if any(w >= line and r > w for w in writes.get(one, ()) for n, r in reads if n == other):
                return move
    return next((n for n in _walk(node) if isinstance(n, ast.Attribute) and n.attr in _IDENTITY
                 and isinstance(n.value, ast.Name) and n.value.id in moves or isinstance(n, ast.Call) and any(
                     isinstance(a, ast.Name) and a.id in moves for a in n.args)
                 and ast.unparse(n.func).startswith(("weakref.", "sys.getrefcount", "id"))), None)


def _moved_identity(node: ast.AST) -> bool:
    """``q.cpu() is q``, ``x.cpu().data_ptr()``, ``id(x.to("cpu"))``: whether a move gave the same object, which it
    does on one machine only; and ``x.type()``, a tensor's type named with its device."""
    def moved(v) -> bool:
        return isinstance(v, ast.Call) and getattr(v.func, "attr", None) in _MOVES
    if isinstance(node, ast.Compare) and any(isinstance(o, (ast.Is, ast.IsNot)) for o in node.ops):
        return any(map(moved, [node.left, *node.comparators]))
    if isinstance(node, ast.Call) and (isinstance(node.func, ast.Name) and node.func.id == "id"
                                       or ast.unparse(node.func).startswith(("weakref.", "sys.getrefcount"))):
        return any(map(moved, node.args))  # (round 38z106: ``weakref.ref(q.cpu())() is not None``)
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "type" and not node.args + node.keywords:
        return True  # x.type(): "torch.cuda.FloatTensor" on a GPU (round 38z57)
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "is_set_to":
        return any(map(moved, [node.func.value, *node.args]))  # x.is_set_to(x.cpu()) (round 38z102)
    return isinstance(node, ast.Attribute) and node.attr in _IDENTITY and moved(node.value)


_DRAWS = frozenset(("rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
                    "multinomial", "normal", "poisson", "Generator"))  # torch's random draws


# Draws on the device of the tensor they are given (``torch.rand_like(x)``, ``torch.bernoulli(p)``, ``p.bernoulli()``),
# a tensor's methods that fill it with draws, and torch's random dropouts: each on that tensor's device's generator.
_FOLLOWING = frozenset(("rand_like", "randn_like", "randint_like", "bernoulli", "multinomial", "poisson"))
_DRAWN_INTO = frozenset(("uniform_", "normal_", "bernoulli_", "exponential_", "random_", "geometric_", "cauchy_",
                         "log_normal_"))
_DROPOUTS = frozenset(("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
                       "rrelu", "dropout_", "rrelu_"))


def _device_draw(node: ast.AST, machine: Machine) -> ast.AST | None:
    """In a function, a draw not placed on the host (``torch.rand(1, device=x.device)``, ``torch.rand_like(x)``,
    ``x.new_zeros(1).uniform_()``, a dropout): a GPU's generator gives other numbers than a CPU's, seeded or not,
    so the draw says which it is (rounds 38z98, 38z127: the seed in the same function; round 38z185: in a helper it
    calls, or anywhere else)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    def drawn(c: ast.Call) -> bool:
        path = _resolved(c.func, machine, Scope()) or ""
        name = path.split(".")[-1] if path.startswith("torch.") else None
        device = next((k.value for k in c.keywords if k.arg == "device"), None)
        if isinstance(device, ast.Constant) and device.value == "cpu":
            return False
        if name in _DRAWS - _FOLLOWING:  # a shape's draw: on the host unless placed
            return device is not None
        # what follows its tensor's device: ``rand_like(x)``, ``bernoulli(p)``, a dropout, a tensor's method (round
        # 38z127: ``x.new_zeros(1).uniform_()``)
        return name in _FOLLOWING | _DROPOUTS or name is None and getattr(c.func, "attr", None) in (
            _DRAWN_INTO | _FOLLOWING | _DROPOUTS)
    return next((c for c in _walk(node) if isinstance(c, ast.Call) and drawn(c)), None)


def _drawn_on_a_device(call: ast.Call, machine: Machine, scope: Scope) -> bool:
    """A seeded draw by a device's generator (``torch.Generator(device=x.device)``, ``torch.rand(n, generator=g)``): a
    GPU's stream of numbers is another than a CPU's for one seed (round 38z81). An unseeded draw is random anywhere
    (round 38z86: a demo's ``torch.randn(..., device=DEVICE)`` is no question)."""
    path = _resolved(call.func, machine, scope) or ""
    return path.startswith("torch.") and path.split(".")[-1] in _DRAWS and (
        any(k.arg == "generator" for k in call.keywords)
        or path.endswith("Generator") and bool(call.args or call.keywords))


def _same_but_moves(a: list[ast.AST], b: list[ast.AST], machine: Machine) -> bool:
    """Whether the code of ``a`` and of ``b`` is the same but for moves of a tensor to another place (``x.cpu()``,
    ``x.cuda()``, ``x.to(dev)``), which give the same values wherever they run."""
    class Unmoved(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            attr = getattr(node.func, "attr", None)
            if attr in ("cpu", "cuda") and not node.args and not node.keywords \
                    or attr == "to" and len(node.args) + len(node.keywords) == 1 and _a_move(node, machine):
                return node.func.value
            return node

    def unmoved(code: list[ast.AST]) -> str:
        return ast.dump(Unmoved().visit(ast.Module(copy.deepcopy(code), [])))
    return unmoved(a) == unmoved(b)


def _a_move(call: ast.Call, machine: Machine) -> bool:
    """``x.cpu()``, ``x.numpy()``, ``x.to("cpu")``: a move to a place, not a cast (``x.to(torch.float32, copy=True)``:
    round 38z84)."""
    attr = getattr(call.func, "attr", None)
    return attr in _MOVES and attr != "to" or attr == "to" and (
        any(k.arg == "device" for k in call.keywords) or any(_placed(a, machine, Scope()) for a in call.args[:1]))


# Integer dtypes by name, and the range of the floats that fit, the upper end excluded (round 38z137: -1.0 converted
# to uint8, 255 on a CPU and 0 on a GPU).
_INTS = {"int8": (-2 ** 7, 2 ** 7), "char": (-2 ** 7, 2 ** 7), "uint8": (0, 2 ** 8), "byte": (0, 2 ** 8),
         "int16": (-2 ** 15, 2 ** 15), "short": (-2 ** 15, 2 ** 15), "int32": (-2 ** 31, 2 ** 31),
         "int": (-2 ** 31, 2 ** 31), "int64": (-2 ** 63, 2 ** 63), "long": (-2 ** 63, 2 ** 63)}


def _undefined_to_int(node: ast.AST) -> bool:
    """A conversion to an integer dtype (``.long()``, ``.to(torch.int32)``) of an expression in which the code writes an
    infinity, a NaN or a number the dtype cannot hold (``2.0 ** 31`` for int32): what such a conversion gives is
    undefined, and a CPU and a GPU give different numbers (round 38z110: INT64_MIN against INT64_MAX; round 38z119:
    ``(x.amax() * 2.0 ** 31).to(torch.int32)``, INT_MIN against INT_MAX; round 38z137: ``torch.tensor(-1.0).byte()``,
    255 against 0). The grader checks the values converted in
    its graded calls too (``harness.CONVERSIONS``): this reading is for a flag computed once, in a cell."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    attr = node.func.attr
    bound = _INTS.get(attr) if attr in ("long", "int", "short", "char", "byte") and not node.args else next(
        (_INTS[_last(a)] for a in [*node.args, *(k.value for k in node.keywords if k.arg == "dtype")]
         if (_last(a) or "") in _INTS), None) if attr in ("to", "type") else None
    return bound is not None and any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.strip().lower().lstrip("+-") in
        ("inf", "infinity", "nan") or isinstance(n, (ast.Attribute, ast.Name)) and _last(n) in ("inf", "nan")
        or not (bound[0] <= (_folded(n) or 0.0) < bound[1]) for n in _walk(node.func.value))


def _folded(node: ast.AST) -> float | None:
    """The value of ``node`` where it is arithmetic on numbers written in the code (``2.0 ** 31``, ``-1e10``; an
    overflow is infinite), else None."""
    if isinstance(node, ast.Constant):
        return float(node.value) if type(node.value) in (int, float) else None
    ops = {ast.Add: float.__add__, ast.Sub: float.__sub__, ast.Mult: float.__mul__, ast.Div: float.__truediv__,
           ast.Pow: float.__pow__}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _folded(node.operand)
        return None if value is None else -value if isinstance(node.op, ast.USub) else value
    if not (isinstance(node, ast.BinOp) and type(node.op) in ops):
        return None
    left, right = _folded(node.left), _folded(node.right)
    if left is None or right is None:
        return None
    try:
        value = ops[type(node.op)](left, right)
    except OverflowError:
        return float("inf")
    except (ArithmeticError, ValueError):  # 1 / 0, (-8) ** 0.5: Python raises before anything is converted
        return None
    return value if isinstance(value, float) else None


def _checks(statement: ast.AST, machine: Machine) -> bool:
    """A call, as a statement, of the learner's function that changes nothing and gives back nothing, and may raise
    (:attr:`Machine.checkers`): an assert of the learner's own, its arguments binding nothing."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    return isinstance(call, ast.Call) and _callee(call) in machine.checkers and all(
        _binds_nothing(a, machine) for a in [*call.args, *(k.value for k in call.keywords)])


def _unwaited(node: ast.AST, machine: Machine) -> bool:
    """A copy to the host that does not wait (``x.to("cpu", non_blocking=True)``): on a CPU the tensor itself, on a
    GPU pinned memory the host may read before the copy lands (round 38z104)."""
    if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("to", "copy_")):
        return False
    waits = [k.value for k in node.keywords if k.arg == "non_blocking"]
    if not waits or isinstance(waits[0], ast.Constant) and not waits[0].value:
        return False
    if node.func.attr == "copy_":  # into a tensor made here, from anything
        return _made_here(node.func.value, machine, Scope())
    return any(_fixed_place(a, machine) and any(isinstance(n, ast.Constant) and str(n.value).startswith("cpu")
                                                 for n in _walk(a))
               for a in [*node.args[:1], *(k.value for k in node.keywords if k.arg == "device")])


def _written_through_move(node: ast.AST, machine: Machine) -> bool:
    """A write into what a move gave (``marker.cpu().fill_(1)``, ``x.cpu()[0] = 1``, or through a name bound so from a
    tensor made here): on a CPU the move gives the tensor itself, on a GPU a copy (round 38z81)."""
    def moved(v: ast.AST) -> bool:
        return isinstance(v, ast.Call) and _a_move(v, machine) or isinstance(v, ast.Name) and v.id in machine.moved
    target = node.value if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) else \
        node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
            re.fullmatch(r"[a-z]\w*[a-z0-9]_", node.func.attr)) else None
    return target is not None and moved(target)


def _binds_nothing(node: ast.AST, machine: Machine | None = None) -> bool:
    """No walrus (round 38z53: in a print) and no call of a method that changes its object (round 38z61:
    ``print(cfg.setdefault("gpu", torch.cuda.is_available()))``), named or called (``operator.setitem(d, k, v)``:
    round 38z67), a tensor's in place or into ``out=`` (round 38z65: ``print(out.copy_(other))``), nor of a function
    of the learner's ``machine`` knows, but one that only prints (round 38z75: ``print(_use_half())``)."""
    calls = machine.defined - machine.sayers - machine.pure if machine else frozenset()
    return not any(isinstance(n, ast.NamedExpr) or isinstance(n, ast.Attribute) and n.attr in _CHANGES
                   or isinstance(n, ast.Call) and (any(k.arg == "out" for k in n.keywords) or _callee(n) in calls
                                                   or re.fullmatch(r"[a-z]\w*[a-z0-9]_", getattr(n.func, "attr", "") or ""))
                   for n in _walk(node))


_CHANGES = frozenset(("setdefault", "update", "append", "extend", "insert", "pop", "popitem", "add", "clear", "remove",
                      "discard", "__setitem__", "put", "send", "appendleft", "extendleft",
                      "setitem", "delitem", "iadd", "iconcat", "heappush", "heappop", "heapify", "heapreplace",
                      "heappushpop", "insort", "insort_left", "insort_right", "copyto"))  # a module's (round 38z67)


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
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _TAKEN and len(node.args) == 1 \
            or isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "pop" and not node.args:
        return _inputs(node.args[0] if node.args else node.func.value, machine, scope)  # next(iter(devices))
    if isinstance(node, ast.Subscript) and not isinstance(node.value, ast.Attribute):
        return _inputs(node.value, machine, scope)  # (round 38z67)
    if _last(node) != "device" or not _place(node, machine, scope):
        return False
    held = node.value if isinstance(node, ast.Attribute) else node.args[0]
    while isinstance(held, (ast.Attribute, ast.Subscript)):
        held = held.value
    return isinstance(held, ast.Name) and held.id in scope.params


# A tensor's methods whose result lives where the tensor does (:func:`_scope`: a local so made from an input is one).
_KEEPS = frozenset(("contiguous", "float", "half", "double", "bfloat16", "view", "reshape", "clone", "detach",
                    "transpose", "permute", "flatten", "unsqueeze", "squeeze", "expand", "narrow", "view_as",
                    "reshape_as", "to", "type_as"))
_TAKEN = frozenset(("next", "iter", "list", "tuple", "sorted", "set", "frozenset", "min", "max"))  # one out of many


def _keeps(v: ast.AST, params: set[str], machine: Machine) -> bool:
    """Whether ``v`` lives where the parameter it is made from does: the parameter, a part of one (``outs[0]``,
    ``x.T``), or what methods of :data:`_KEEPS` make of one without a place (``outs.contiguous()``)."""
    while True:
        if isinstance(v, ast.Name):
            return v.id in params
        if isinstance(v, ast.Subscript) or isinstance(v, ast.Attribute) and v.attr in ("T", "mT", "H", "mH", "data"):
            v = v.value
        elif isinstance(v, ast.BinOp):  # q.float() * scale: where q lives, or an error (round 38z84)
            return _keeps(v.left, params, machine) or _keeps(v.right, params, machine)
        elif isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in _KEEPS and all(
                _keeps(a.value, params, machine) if isinstance(a, ast.Attribute) and a.attr == "device"  # (an input's)
                else not _placed(a, machine, Scope()) for a in [*v.args, *(k.value for k in v.keywords
                                                                        if k.arg == "device")]):
            v = v.func.value
        else:
            return False


def _device_context(node: ast.AST, machine: Machine, scope: Scope) -> bool:
    """``torch.device(dev)``, ``torch.cuda.device(x.device)``, ``contextlib.nullcontext()``, a profiler's label
    (``torch.cuda.nvtx.range(name)``: round 38z83): a context that only says where tensors go, or nothing."""
    path = _resolved(node.func, machine, scope) if isinstance(node, ast.Call) else None
    return path in ("torch.device", "torch.cuda.device") and bool(node.args) \
        and all(_placed(a, machine, scope) for a in node.args) \
        or path == "torch.cuda.device_of" and len(node.args) == 1 \
        or path in ("torch.cuda.nvtx.range", "torch.profiler.record_function") \
        or path in ("contextlib.nullcontext", "nullcontext") and not node.args and not node.keywords


def _placed(v: ast.AST, machine: Machine, scope: Scope) -> bool:
    """A place, a device named, or a place's name (``str(q.device)``, handed to the learner's cached helper: round
    38z84)."""
    return _place(v, machine, scope) or _device_name(v) or isinstance(v, ast.Call) and isinstance(v.func, ast.Name) \
        and v.func.id == "str" and len(v.args) == 1 and _placed(v.args[0], machine, scope)


def _may_swallow(manager: ast.AST, body: list[ast.AST], machine: Machine, scope: Scope) -> bool:
    """Whether a ``with`` over ``manager`` may go on after ``body`` raised, so that what ran says which machine it is:
    ``contextlib.suppress`` of more than data errors, the learner's own manager that swallows
    (:attr:`Machine.suppressors`, or a name bound to one), and any manager not known to let a failure through
    (:data:`~pagedlab.grading.review.PROPAGATING`; round 38z119: ``contextlib.ExitStack`` with a callback that
    returns True): it may go on after a failure, as a ``try`` does."""
    if not isinstance(manager, ast.Call):
        return _held(manager) in machine.suppressors
    path = _resolved(manager.func, machine, scope) or ""
    if path in ("contextlib.suppress", "suppress"):
        return not (manager.args and all(_data_errors(a, machine, body) for a in manager.args))
    if _callee(manager) in machine.suppressors:
        return True
    if not path or _callee(manager) in machine.defined | machine.classes:
        return False
    return not any(path == p or path.startswith(p + ".") for p in PROPAGATING)


def _tried(statement: ast.Try, machine: Machine, scope: Scope) -> ast.AST | None:
    """In a ``try``'s body, what may fail on one machine and not on another, so that which branch runs says which
    machine it is (``try: torch.empty(1, device="cuda")``, ``try: import triton``): a device, a move, an import of a
    package (the standard library is on every machine of one Python), a raise by machine; and any call, where a
    handler that goes on catches more than what the data says (:data:`_DATA_ERRORS`)."""
    if _progress_bar(statement):
        return None
    broad = _swallows(statement) or any(not (h.body and isinstance(h.body[-1], ast.Raise))
                                        and not _data_errors(h.type, machine, statement.body)
                                        for h in statement.handlers)
    for n in (n for b in statement.body for n in _walk(b)):
        if (isinstance(n, ast.keyword) and n.arg == "device" or _device_name(n) or _place(n, machine, scope)
                or broad and isinstance(n, (ast.Call, ast.BinOp, ast.UnaryOp, ast.AugAssign, ast.Subscript, ast.Compare))
                # (round 38z57: a kernel launch, PyTorch where it fails; 38z77: ``q * HOST_SCALE`` on a GPU)
                or isinstance(n, ast.Attribute) and n.attr in _MOVES | _CPU_ONLY
                or isinstance(n, (ast.Import, ast.ImportFrom)) and not _stdlib_import(n)
                or isinstance(n, ast.Call) and _callee(n) in machine.raisers
                or broad and isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in machine.fragile):
            return n  # (round 38z148: a name read to see whether the cell that binds it ran to its end)
    return None


# Errors that say what the data is, the same on every machine (a key missing, an index past the end): a handler of
# only these, or of the learner's own classes, passes over no failure of the machine's.
_DATA_ERRORS = frozenset(("KeyError", "IndexError", "LookupError", "StopIteration", "ZeroDivisionError",
                          "ArithmeticError", "OverflowError", "UnicodeError", "UnicodeDecodeError", "UnicodeEncodeError"))


# A tensor's methods that only a tensor in the host's memory has: on a GPU's, a TypeError (round 38z108: ``map_`` in a
# ``try`` or under ``contextlib.suppress(TypeError)``, a probe of the machine).
_CPU_ONLY = frozenset(("map_", "map2_", "apply_"))


def _swallows(statement: ast.Try) -> bool:
    """Whether ``statement``'s ``finally`` ends what its body raised (a ``return`` there: round 38z61)."""
    return any(isinstance(n, (ast.Return, ast.Break, ast.Continue)) for b in statement.finalbody for n in _walk(b))


def _data_errors(caught: ast.AST | None, machine: Machine, body: list[ast.AST] = ()) -> bool:
    """Whether ``caught`` names data errors only; a ``ValueError`` or ``TypeError`` is one where ``body`` calls only
    Python's builtins and methods of values (``items.index(block)``, ``int(text)``: round 38z65), not a module's
    function, a kernel or a function of the learner's (compiled Triton refuses a host tensor by a ValueError)."""
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    plain = bool(body) and all(
        _callee(n) not in machine.defined and _callee(n) not in _CPU_ONLY and (
            isinstance(n.func, ast.Name) and hasattr(builtins, n.func.id)
            or isinstance(n.func, ast.Attribute) and _root(n.func) not in machine.aliases and _root(n.func) is not None)
        for b in body for n in _walk(b) if isinstance(n, ast.Call))
    return caught is not None and all(isinstance(n, ast.Name) and (
        n.id in _DATA_ERRORS - machine.renamed or n.id in machine.classes
        or plain and n.id in {"ValueError", "TypeError"} - machine.renamed)  # (round 38z110: a RuntimeError
        # of the CPU's, raised again as a ZeroDivisionError)
        or (_resolved(n, machine, Scope()) or "").startswith("pagedlab.")  # the course's (round 38z79: OutOfBlocks)
        for n in names)


def _scope(statement: ast.AST, machine: Machine) -> Scope:
    """``statement``'s :class:`Scope`."""
    local, places, inputs, params = set(), set(), set(), set()
    built = {id(f): c.name for c in _walk(statement) if isinstance(c, ast.ClassDef)  # Class(...) calls __init__
             for f in c.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"}  # (round 38z72)
    for f in _walk(statement):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = f.args
            local |= {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x}
            # (one with a default is no input: ``_host=torch.empty(0)`` lives where the notebook runs, round 38z55)
            positional = [*a.posonlyargs, *a.args]
            given = positional[1:] if positional and positional[0].arg in ("self", "cls") else positional
            names = {getattr(f, "name", None), built.get(id(f))} - {None}
            hosted = {x.arg for i, x in enumerate(given) if any((n, i) in machine.hosted or (n, x.arg) in machine.hosted
                                                                for n in names)}
            hosted |= {a.vararg.arg for h, i in machine.hosted if a.vararg and h in names
                       and isinstance(i, int) and i >= len(given)}
            params |= {x.arg for x in positional[:len(positional) - len(a.defaults)]} - hosted - {"self", "cls"}
            params |= {x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is None} - hosted
            params |= {x.arg for x in (a.vararg, a.kwarg) if x} - hosted
            if not isinstance(f, ast.Lambda):  # a parameter some call gives a place (round 38z49: device=q.device)
                places |= {x.arg for i, x in enumerate(given) if any((n, i) in machine.passed for n in names)}
                places |= {x.arg for x, d in [*zip(positional[len(positional) - len(a.defaults):], a.defaults),
                                              *zip(a.kwonlyargs, a.kw_defaults)]  # or its default (round 38z82:
                           if d is not None and _placed(d, machine, Scope())}  # ``device=DEVICE``)
                places |= {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]
                           if any((n, x.arg) in machine.passed for n in names)}
            local |= {n.id for b in (f.body if isinstance(f.body, list) else [f.body]) for n in _walk(b)
                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    tensors = {n.value.id for n in _walk(statement) if isinstance(n, ast.Attribute) and n.attr in _TENSOR_ATTRS
               and isinstance(n.value, ast.Name)}
    tensors |= {n.arg for n in _walk(statement) if isinstance(n, ast.arg) and n.annotation is not None
                and "Tensor" in ast.unparse(n.annotation)}
    said = _said(statement, machine, frozenset(local))
    caught = frozenset(id(n) for t in _walk(statement) if isinstance(t, (ast.Try, getattr(ast, "TryStar", ast.Try)))
                       for b in t.body for n in _walk(b))
    bound = [(t.id, v) for n in _walk(statement) for t, v in _pairs(n) if isinstance(t, ast.Name) and t.id in local]
    while True:  # tensors = [q, k, v] (round 38z69); o = outs.contiguous(), where the input lives (round 38z75)
        kept = {name for name, v in bound if isinstance(v, (ast.List, ast.Tuple)) and v.elts
                and all(isinstance(e, ast.Name) and e.id in params for e in v.elts) or _keeps(v, params, machine)}
        if kept <= params:
            break
        params |= kept
    # a parameter rebound to what may live elsewhere is no input (round 38z77: ``lses = lses.double().cpu()``)
    params -= {name for name, v in bound if name in params and not _keeps(v, params, machine)
               and not (isinstance(v, (ast.List, ast.Tuple)) and v.elts)}
    loops = [(n.target, n.iter) for n in _walk(statement) if isinstance(n, (ast.For, ast.comprehension))]
    while True:  # (a loop over the parameters only, ``zip(outs, lses)`` or ``(a, b)``, gives parameters)
        over = {t.id for target, it in loops if all(
            n.id in params or isinstance(n.ctx, ast.Load) and n.id in ("zip", "enumerate", "reversed")
            for n in _walk(it) if isinstance(n, ast.Name)) for t in _walk(target) if isinstance(t, ast.Name)}
        if over <= params:
            break
        params |= over
    told, filled = _told(statement, machine), _fills(statement, machine)
    while True:
        scope = Scope(frozenset(local), frozenset(places), frozenset(inputs), frozenset(params), frozenset(tensors), said,
                      caught, told, filled)
        bound = [(v, t.id) for n in _walk(statement) for t, v in _pairs(n)
                 if isinstance(t, ast.Name) and t.id in local]
        found = {name for v, name in bound if _a_place(v, machine, scope)}
        held = {name for v, name in bound if _inputs(v, machine, scope)}
        if found <= places and held <= inputs:
            return scope
        places, inputs = places | found | held, inputs | held


def _fills(statement: ast.AST, machine: Machine) -> frozenset[int]:
    """The lookups in ``statement`` that ask only whether to fill a cache, and those inside the filling: ``if key not
    in CACHE:``, ``if key in CACHE: ... else:``, ``v = CACHE.get(key)`` then ``if v is None:``, ``if key in CACHE:
    return CACHE[key]`` followed by the filling, where the branches only fill the cache (evicting too), bind locals,
    say or count where nothing reads. A call finds the same after a miss as after a hit, wherever the calls before it
    ran (round 38z104: a branch that does more tells which places the code ran on)."""
    declared = {n for g in _walk(statement) if isinstance(g, (ast.Global, ast.Nonlocal)) for n in g.names}
    def quiet(body: list[ast.AST], cache: str) -> bool:
        def fine(t: ast.AST) -> bool:
            return isinstance(t, ast.Name) and t.id not in declared or _held(
                t.value if isinstance(t, ast.Subscript) else t) == cache or _held(t) in machine.sinks or isinstance(
                t, ast.Attribute) and "." + t.attr in machine.sinks  # (a count of hits that only a print reads)
        return all(isinstance(b, ast.If) and quiet(b.body, cache) and quiet(b.orelse, cache)
                   or isinstance(b, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and all(map(fine, _targets(b)))
                   or isinstance(b, ast.Expr) and (_only_says(b, machine) or isinstance(b.value, ast.Call)
                                                   and isinstance(b.value.func, ast.Attribute)
                                                   and _held(b.value.func.value) == cache) for b in body)
    def fills(body: list[ast.AST], cache: str) -> bool:
        return any(isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and _held(n.value) == cache
                   or isinstance(n, ast.Call) and getattr(n.func, "attr", None) in ("setdefault", "add", "update")
                   and _held(n.func.value) == cache for b in body for n in _walk(b))
    found = set()
    for block in (b for n in _walk(statement) for f in ("body", "orelse", "finalbody")
                  for b in [getattr(n, f, None)] if isinstance(b, list)):
        for i, s in enumerate(block):
            test, got = (s.test, None) if isinstance(s, ast.If) else (None, None)
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                    and isinstance(s.value, ast.Call) and getattr(s.value.func, "attr", None) == "get" \
                    and len(s.value.args) == 1 and i + 1 < len(block) and isinstance(block[i + 1], ast.If):
                got, s = s.value, block[i + 1]  # v = CACHE.get(key); if v is None: (or ``if not v:``)
                test = s.test
                if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) or isinstance(test, ast.Compare)
                        and isinstance(test.ops[0], ast.Is)):
                    continue
                cache, miss, hit = _held(got.func.value), s.body, s.orelse
            elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.NotIn)):
                cache = _held(test.comparators[0])
                miss, hit = (s.body, s.orelse) if isinstance(test.ops[0], ast.NotIn) else (s.orelse, s.body)
                if not miss and isinstance(test.ops[0], ast.In) and len(hit) == 1 and isinstance(hit[0], ast.Return) \
                        and block[-1:] and isinstance(block[-1], ast.Return):  # if key in C: return C[key]
                    miss, hit = block[i + 1:-1], []  # (then the filling, to the function's return)
            elif test is not None and any(_callee(n) == "len" for n in _walk(test) if isinstance(n, ast.Call)):
                sized = {_held(n.args[0]) for n in _walk(test) if isinstance(n, ast.Call) and _callee(n) == "len"
                         and n.args}
                if len(sized) == 1 and None not in sized and quiet(s.body, *sized) and quiet(s.orelse, *sized):
                    found.add(id(test))  # if len(CACHE) > 64: CACHE.clear(): a trim, then misses fill it again
                    found |= {id(n) for n in _walk(test)}
                continue
            else:
                continue
            if cache and quiet(miss, cache) and quiet(hit, cache) and fills(miss, cache):
                found |= {id(got if got is not None else test)} | {
                    id(n) for b in miss + hit for n in _walk(b) if _looked_up(n, machine)[0] is not None}
    return frozenset(found)


def _told(statement: ast.AST, machine: Machine) -> frozenset[int]:
    """The assignments in ``statement``'s functions to a local name that only statements that print, log or warn read
    (round 38z80: ``in_use = torch.cuda.memory_allocated() if x.is_cuda else 0`` for a ``log.debug``)."""
    told = set()
    for f in (f for f in _walk(statement) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))):
        saying = _saying(f, machine)
        kept = [(n, w) for n in _walk(f) for w in [_written(n, machine, f.name)] if w is not None
                and w[0] in machine.sinks
                and all(_binds_nothing(v, machine) for v in w[1])]  # (round 38z92: ``self.elapsed = clock() - t0``)
        told |= {id(n) for n, _ in kept}
        saying |= {id(x) for n, _ in kept for x in _walk(n)}
        reads = {}
        for n in _walk(f):
            if isinstance(n, ast.Name):
                reads.setdefault(n.id, []).append(n)
        assigned = [(n, t.id) for n in _walk(f) if isinstance(n, ast.Assign) and len(n.targets) == 1
                    for t in n.targets if isinstance(t, ast.Name)]
        once = {name for _, name in assigned if sum(m == name for _, m in assigned) == 1} - {
            g for n in _walk(f) if isinstance(n, (ast.Global, ast.Nonlocal)) for g in n.names}
        mine = set()
        while True:  # (round 38z82: ``start`` read by ``elapsed = clock() - start``, which only a print reads)
            more = {id(n) for n, name in assigned if name in once and all(  # bound there only, read only by what says
                id(r) in saying for r in reads[name] if r is not n.targets[0]) and _binds_nothing(n.value, machine)
                and not any(_launch(x, machine) for x in _walk(n.value))}  # (a launch's arguments are read)
            if more <= mine:
                break
            mine |= more
            saying |= {id(x) for n, _ in assigned if id(n) in mine for x in _walk(n.value)}
        told |= mine
        a = f.args  # a parameter's default that only what says reads (round 38z92: ``verbose=VERBOSE``)
        defaults = [*zip([*a.posonlyargs, *a.args][len(a.posonlyargs) + len(a.args) - len(a.defaults):], a.defaults),
                    *((x, d) for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None)]
        told |= {id(d) for x, d in defaults if x.arg not in {name for _, name in assigned}
                 and all(id(r) in saying for r in reads.get(x.arg, ())) and _binds_nothing(d, machine)}
    return frozenset(told)


def _said(statement: ast.AST, machine: Machine, local: frozenset[str]) -> frozenset[int]:
    """The nodes of ``statement``'s branches that end by raising a builtin error no ``try`` of the statement catches
    (not a data error, nor the learner's own), and before it only bind local names or print: what they compute is
    only the error's message (round 38z65: ``msg = f"... got {x}"; raise TypeError(msg)``)."""
    tried = {id(n) for t in _walk(statement) if isinstance(t, (ast.Try, getattr(ast, "TryStar", ast.Try)))
             for b in t.body for n in _walk(b)}
    said: set[int] = set()
    for node in _walk(statement):
        for branch in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")):
            if not (isinstance(branch, list) and branch and isinstance(branch[-1], ast.Raise)) or id(branch[-1]) in tried:
                continue
            error = branch[-1].exc.func if isinstance(branch[-1].exc, ast.Call) else branch[-1].exc
            if not (isinstance(error, ast.Name) and hasattr(builtins, error.id)) or _data_errors(error, machine):
                continue
            if all(_only_says(b, machine) or isinstance(b, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                   and _binds_nothing(b, machine)
                   and all(isinstance(t, ast.Name) and t.id in local for t in _targets(b)) for b in branch[:-1]):
                said |= {id(n) for b in branch for n in _walk(b)}
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
    if isinstance(v, ast.BoolOp):  # each value it may give a place, or, where one is not, no value of it asks
        given = _results(v)  # (round 38z67: ``torch.cuda.is_available() and torch.float16 or "cpu"``)
        return _a_place(v.values[-1], machine, scope) and (
            all(_a_place(r, machine, scope) for r in given)
            or all(_asked(w, machine, scope) is None for w in v.values[:-1]))
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in machine.classes - machine.defined:
        v = ast.Tuple([*v.args, *(k.value for k in v.keywords)], ast.Load())  # a record (round 38z80: a NamedTuple)
    if isinstance(v, (ast.Tuple, ast.JoinedStr)) and any(_keys_a_place(e, machine, scope) for e in _elements(v)):
        return all(_keys_a_place(e, machine, scope) or _asked(e, machine, scope) is None
                   for e in _elements(v))  # (round 38z65: ``return x.device, x.is_cuda``)
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "dict" and not v.args:
        v = ast.Dict([ast.Constant(k.arg) for k in v.keywords], [k.value for k in v.keywords])  # dict(device=...)
    if isinstance(v, ast.Dict):
        placing = {id(x) for k, x in zip(v.keys, v.values)
                   if isinstance(k, ast.Constant) and k.value == "device" and _placed(x, machine, scope)}
        return bool(placing) and all(id(x) in placing or _asked(x, machine, scope) is None for x in v.values)
    return _placed(v, machine, scope) or _inputs(v, machine, scope)


def _results(v: ast.AST) -> list[ast.AST]:
    """The values ``v`` may evaluate to: ``a or b`` gives ``a`` only where it is true, ``a and b`` only where it is
    false, so ``c and X or Y`` gives ``X`` or ``Y``, never ``c``."""
    def given(v: ast.AST) -> list[tuple[ast.AST, bool | None]]:  # each with what it is known to be, true or false
        if isinstance(v, ast.IfExp):
            return given(v.body) + given(v.orelse)
        if not isinstance(v, ast.BoolOp):
            return [(v, None)]
        known = isinstance(v.op, ast.Or)
        return [(r, known) for w in v.values[:-1] for r, k in given(w) if k is not (not known)] + given(v.values[-1])
    return [r for r, _ in given(v)]


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


_BUILTIN_TYPES = frozenset(name for name, value in vars(builtins).items() if isinstance(value, type))


def _holds(node: ast.AST, machine: Machine, scope: Scope) -> bool:
    """Whether ``node`` asks which names a module the notebook imports, or a type of Python's own, holds: ``hasattr``,
    ``dir``, ``vars``, ``getattr`` with a default, a module's ``__all__`` or ``__dict__``. Each Python version and
    each build of a package holds its own."""
    if isinstance(node, ast.Attribute) and node.attr in ("__all__", "__dict__"):
        target = node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args and (
            node.func.id in ("hasattr", "dir", "vars") or node.func.id == "getattr" and len(node.args) == 3):
        target = node.args[0]
    else:
        return False
    return isinstance(target, ast.Constant) or isinstance(target, ast.Name) and target.id in _BUILTIN_TYPES \
        and target.id not in machine.aliases or isinstance(target, (ast.Name, ast.Attribute)) \
        and (_path(target) or ("",))[0] in machine.aliases and _resolved(target, machine, scope) is not None


def _resolved(node: ast.AST, machine: Machine, scope: Scope) -> str | None:
    """``torch.cuda.is_available`` for ``gpu_ready`` after ``from torch.cuda import is_available as gpu_ready``, or
    for ``getattr(torch, "cuda").is_available``; a name not imported stands for itself; None for a local one."""
    path = _path(node)
    if not path:  # ``__import__("torch").cuda``, ``importlib.import_module("torch.cuda").is_available`` (38z95)
        attrs, inner = [], node
        while isinstance(inner, ast.Attribute):
            attrs.insert(0, inner.attr)
            inner = inner.value
        module = _imported(inner, machine)
        return ".".join((module, *attrs)) if module else None
    if path[0] in scope.local:
        return None
    return ".".join((machine.aliases.get(path[0], path[0]), *path[1:]))


def _imported(node: ast.AST, machine: Machine) -> str | None:
    """``torch`` for ``__import__("torch")`` or ``importlib.import_module("torch")``: a module named by a string."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) and (
                isinstance(node.func, ast.Name) and node.func.id == "__import__"
                or _resolved(node.func, machine, Scope()) == "importlib.import_module"):
        return node.args[0].value
    return None


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


def _says(statement: ast.AST, machine: Machine) -> bool:
    """:func:`_only_says`, or an ``if`` or ``for`` of such statements (round 38z80: a check that raises for each
    field of its argument)."""
    if isinstance(statement, (ast.If, ast.For)):
        return _binds_nothing(statement.test if isinstance(statement, ast.If) else statement.iter, machine) \
            and all(_says(b, machine) for b in statement.body + statement.orelse)
    return _only_says(statement, machine)


def _only_says(statement: ast.AST, machine: Machine, scope: Scope = Scope()) -> bool:
    """A statement that only prints (not to a file of the learner's), logs, warns or raises (where no ``try`` of its
    own catches it: round 38z75), or waits for a GPU's queued work before a clock is read (``torch.cuda.
    synchronize()``, the course's ``device.synchronize()``: round 38z49, a module's, not the learner's own: round
    38z75), or calls a function of the learner's that does only these (:attr:`Machine.sayers`: round 38z69), and
    binds nothing."""
    if not _binds_nothing(statement, machine):
        return False
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.IfExp):  # a() if c else None (round 38z59)
        return all(isinstance(v, ast.Constant) and v.value is None or _only_says(ast.Expr(v), machine, scope)
                   for v in (statement.value.body, statement.value.orelse))
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return isinstance(statement, (ast.Pass, ast.Assert)) or isinstance(statement, ast.Raise) \
            and id(statement) not in scope.caught
    call, func = statement.value, ast.unparse(statement.value.func)
    attr = getattr(call.func, "attr", None)
    return (func in ("print", "pprint", "pprint.pprint", "pp", "pprint.pp") and "print" not in machine.heard
            and all(k.arg != "file" and k.arg != "stream" or _stream(k.value, machine) for k in call.keywords)
            or func == "display" or func == "warnings.warn" and "warn" not in machine.heard
            or attr in ("flush", "write") and _stream(call.func.value, machine)
            or attr in ("set_postfix", "set_description", "set_postfix_str", "set_description_str")  # a progress bar
            or isinstance(call.func, ast.Name) and call.func.id in machine.sayers
            or _logged(call, machine) and "log" not in machine.heard
            or attr in _WAITS and _root(call.func) in machine.aliases)


def _logged(call: ast.Call, machine: Machine) -> bool:
    """A call of a logger's, or of ``logging``'s (:data:`_LOGS`)."""
    return getattr(call.func, "attr", None) in _LOGS and isinstance(call.func, ast.Attribute) and (
        ast.unparse(call.func).split(".")[0] in ("logging", "logger", "log", "_log", "LOGGER", "LOG")
        or _held(call.func.value) in machine.loggers)


# A module's calls that wait for a GPU or hand its cached memory back, and change no value (round 38z77:
# ``torch.cuda.synchronize(t.device)``, ``torch.cuda.empty_cache()``).
_WAITS = frozenset(("synchronize", "empty_cache", "ipc_collect", "reset_peak_memory_stats", "range_push", "range_pop",
                    "mark"))  # (round 38z81: NVTX's labels for a profiler)


def _stream(node: ast.AST, machine: Machine) -> bool:
    """Whether ``node`` is the process's own output (``sys.stderr``): what is printed there is not read back."""
    return _resolved(node, machine, Scope()) in ("sys.stderr", "sys.stdout", "sys.__stderr__", "sys.__stdout__")
