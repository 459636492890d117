"""The grading kernel's side: armed before any learner cell runs, it makes the graded calls after the last one.

The supervisor (:mod:`pagedlab.grading.run`) sends this module's source into the kernel as a silent cell before the
notebook's first cell (:func:`arm_cell`), and one more silent cell after its last (:func:`driver_cell`). Arming

* reads the job (the cases, their arrays, the exercise's given constants and tripwires) while no learner code has
  run, and keeps it in a closure;
* captures every function the driver needs to serialize outcomes (``open``, ``isinstance``, ``Tensor.tolist``...),
  so a learner who later replaces ``json.dump`` or ``Tensor.tolist`` changes nothing the driver does (it writes JSON
  with its own small encoder);
* resolves the given constants (``pagedlab.memory:LLAMA_7B``, ``pagedlab.testing:random_paged_batch``): a graded
  call's names come from the spec, never from the learner's namespace;
* wraps the functions that compute the exercise's answer (torch's softmax family, ``scaled_dot_product_attention``,
  pagedlab's reference for the exercise, its allocator/manager/scheduler classes) in tripwires, in every module
  that holds them, and during the graded calls pushes a ``TorchDispatchMode`` that sees their aten ops whatever
  path reached them (a string lookup, pickle, pydoc, an interpreter, a Tensor subclass). A tripwire records only
  while a graded call (or the serialization of its result) runs, and never inside a given helper.

The driver then writes ``{"outcomes": [...], "tripped": [...]}``; the grader parses it as untrusted text
(:mod:`pagedlab.grading.calls`). Learner code can still rewrite anything in its kernel: what it writes is only
data, compared outside with the solution's; the tripwires make the honest path the easy one, they are not a proof.

This module imports nothing from ``pagedlab`` at import time (its source runs in the kernel, where
``pagedlab.grading`` does not exist).
"""

from __future__ import annotations

from typing import Callable

# aten ops whose call, during a graded call, is reference code for the exercises that list "torch-softmax" or
# "torch-attention" (matched on the op's name without the overload).
ATEN = {"torch-softmax": ("_softmax", "softmax", "_log_softmax", "log_softmax", "_safe_softmax", "special_softmax"),
        "torch-attention": ("scaled_dot_product_attention", "_scaled_dot_product_attention_math",
                            "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu",
                            "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
                            "_fused_sdp_choice")}
# Python-level entry points wrapped for the same two groups (their aten ops are caught by the dispatch mode too).
PYTHON = {"torch-softmax": ("torch:softmax", "torch:log_softmax", "torch.nn.functional:softmax",
                            "torch.nn.functional:log_softmax", "torch.nn.functional:softmin",
                            "torch.special:softmax", "torch.special:log_softmax", "torch:Tensor.softmax",
                            "torch:Tensor.log_softmax"),
          "torch-attention": ("torch.nn.functional:scaled_dot_product_attention",
                              # composite ops: a dispatch mode sees only what they decompose into, so their Python
                              # entry points in torch.ops.aten are wired too
                              *(f"torch.ops.aten:{name}" for name in ATEN["torch-attention"]
                                if not name.startswith("_fused")))}


def arm(job_text: str, namespace_modules: tuple[str, ...] = ()) -> Callable:
    """Arm the kernel for ``job_text`` (see the module docstring); return the driver ``graded(namespace, path)``.

    The returned function has a ``disarm()`` attribute that puts every wrapped function back (for tests that arm
    in their own process; the grading kernel never disarms).
    """
    import builtins
    import dataclasses
    import importlib
    import json
    import math
    import numbers
    import operator
    import os
    import sys

    job = json.loads(job_text)
    _isinstance, _type, _len, _repr, _sorted, _list, _str = (builtins.isinstance, builtins.type, builtins.len,
                                                             builtins.repr, builtins.sorted, builtins.list,
                                                             builtins.str)
    _int_repr, _float_repr, _index = int.__repr__, float.__repr__, operator.index
    _is_dc, _fields, _getattr = dataclasses.is_dataclass, dataclasses.fields, builtins.getattr
    _open, _write, _close = os.open, os.write, os.close
    _encode_str = json.encoder.encode_basestring_ascii  # C function: a learner can rebind the name, not it
    _Integral, _Real = numbers.Integral, numbers.Real
    state = {"on": False, "paused": 0, "tripped": [], "where": ""}
    undo: list = []

    def resolve(target: str):
        module, _, attr = target.partition(":")
        if module == "torch.ops.aten":  # not a module: the namespace of aten's operators
            owner = importlib.import_module("torch").ops.aten
        else:
            owner = importlib.import_module(module)
        for part in attr.split(".")[:-1]:
            owner = _getattr(owner, part)
        return owner, attr.split(".")[-1]

    def record(label: str) -> None:
        if state["on"] and not state["paused"] and _len(state["tripped"]) < 50:
            state["tripped"].append(f"{state['where']} called {label}")

    def tripwire(f, label: str):
        def wrapped(*args, **kwargs):
            record(label)
            return f(*args, **kwargs)
        wrapped.__name__, wrapped.__qualname__ = _getattr(f, "__name__", "f"), _getattr(f, "__qualname__", "f")
        wrapped.__doc__, wrapped.__wrapped_by_grader__ = _getattr(f, "__doc__", None), f
        return wrapped

    moved: dict = {}  # id(original function) -> (original, wrapper): replaced in every module at once, below

    def wire_op(packet, label: str) -> None:
        """An aten operator and each of its overloads get a subclass whose call records (``__class__`` changed in
        place, so every reference to them, and torch's own tables, keep working)."""
        for op in [packet] + [_getattr(packet, n) for n in packet.overloads()]:
            base = _type(op)
            op.__class__ = _type(base.__name__, (base,), {"__call__": tripwire(base.__call__, label)})
            undo.append((op, "__class__", base))

    def wire(target: str) -> None:
        owner, name = resolve(target)
        label = target.replace(":", ".")
        f = _getattr(owner, name)
        if target.startswith("torch.ops.aten:"):
            wire_op(f, label)
            return
        if _isinstance(f, type):  # a class: every method it defines, properties' getters included
            for attr, member in _list(vars(f).items()):
                if _isinstance(member, property) and member.fget is not None:
                    new = property(tripwire(member.fget, f"{label}.{attr}"), member.fset, member.fdel)
                elif _isinstance(member, (staticmethod, classmethod)):
                    new = _type(member)(tripwire(member.__func__, f"{label}.{attr}"))
                elif callable(member) and (not attr.startswith("__") or attr in ("__init__", "__call__")):
                    new = tripwire(member, f"{label}.{attr}")
                else:
                    continue
                undo.append((f, attr, member))
                setattr(f, attr, new)
            return
        new = tripwire(f, label)
        undo.append((owner, name, f))
        setattr(owner, name, new)
        if not _isinstance(owner, type):
            moved[id(f)] = (f, new)

    def replace_everywhere() -> None:
        """Put each wrapper wherever a loaded module holds its function as a global (``from x import f`` copies)."""
        for module in _list(sys.modules.values()):
            d = _getattr(module, "__dict__", None)
            if not _isinstance(d, dict):
                continue
            for key, value in _list(d.items()):
                hit = moved.get(id(value))
                if hit is not None and hit[0] is value:
                    d[key] = hit[1]
                    undo.append((d, key, value))

    groups = [t for t in job.get("tripwires", ()) if t in ATEN]
    for target in job.get("tripwires", ()):
        for t in PYTHON.get(target, (target,)) if target in ATEN else (target,):
            wire(t)
    replace_everywhere()
    aten = {name for g in groups for name in ATEN[g]}

    torch = sys.modules.get("torch")
    if torch is None and (aten or job.get("device") or job.get("arrays")):
        import torch  # noqa: F811  (the setup imports it too)
    mode = None
    if aten:
        from torch.utils._python_dispatch import TorchDispatchMode

        class Tripwires(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls) -> bool:
                # Else torch wraps __torch_dispatch__ to keep torch.compile out of it, and the wrapper's first call
                # imports torch._dynamo: about 2 s of CPU in every grading kernel. It would guard nothing: Dynamo
                # compiles no frame while a dispatch mode like this one is on the stack.
                return False

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if _str(func.name()).split("::")[-1].split(".")[0] in aten:
                    record(f"torch's {func.name()}")
                return func(*args, **(kwargs or {}))
        mode = Tripwires
    if torch is not None:
        _tensor, _Tensor, _detach, _cpu, _tolist, _reshape = (torch.tensor, torch.Tensor, torch.Tensor.detach,
                                                              torch.Tensor.cpu, torch.Tensor.tolist,
                                                              torch.Tensor.reshape)
        dtypes = {n: _getattr(torch, n) for n in ("float16", "bfloat16", "float32", "float64", "int32", "int64")}
    device = None
    if job.get("device"):
        device = importlib.import_module("pagedlab.device").DEVICE

    def paused(f):
        def helper(*args, **kwargs):
            state["paused"] += 1
            try:
                return f(*args, **kwargs)
            finally:
                state["paused"] -= 1
        return helper

    given = {}
    for name, target in job.get("given", {}).items():
        owner, attr = resolve(target)
        value = _getattr(owner, attr)
        given[name] = paused(value) if callable(value) and not _isinstance(value, type) else value
    arrays = job.get("arrays", [])

    def T(i: int):
        a = arrays[i]
        t = _reshape(_tensor(a["data"], dtype=dtypes[a["dtype"]]), a["shape"])
        return t.to(device) if device is not None else t

    def plain(v, depth=0):
        if depth > 12:
            raise ValueError("nested too deeply")
        if torch is not None and _isinstance(v, _Tensor):
            if _type(v) is not _Tensor:
                record(f"a {_type(v).__name__} (a torch.Tensor subclass) as its result")
            t = _cpu(_detach(v))
            return {"tensor": _str(t.dtype).removeprefix("torch."), "shape": [int(n) for n in t.shape],
                    "data": _tolist(_reshape(t, (-1,)))}
        if v is None or v is True or v is False:
            return v
        if _isinstance(v, _Integral):  # int, numpy integers: by value
            return int(_index(v))
        if _isinstance(v, _Real):  # float, numpy floats
            return float(v)
        if _isinstance(v, _str):
            return _str.__str__(v)
        if _is_dc(v) and not _isinstance(v, type):
            return {"fields": {f.name: plain(_getattr(v, f.name), depth + 1) for f in _fields(v)}}
        if _isinstance(v, dict):
            return {"dict": [[plain(k, depth + 1), plain(x, depth + 1)]
                             for k, x in _sorted(dict.items(v), key=lambda kv: _repr(kv[0]))]}
        if _isinstance(v, (_list, tuple)) or _type(v).__name__ == "deque":
            return [plain(x, depth + 1) for x in v]
        return {"object": _type(v).__name__}

    def raised(e: BaseException) -> dict:
        names = []
        for cls in _type(e).__mro__:
            module = _getattr(cls, "__module__", "")
            names.append(cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}")
        return {"raised": names[:12]}

    def encode(v, out: list) -> None:
        if v is None or v is True or v is False:
            out.append({None: "null", True: "true", False: "false"}[v])
        elif _type(v) is int:
            out.append(_int_repr(v))
        elif _type(v) is float:
            out.append("NaN" if math.isnan(v) else "Infinity" if v == math.inf else "-Infinity" if v == -math.inf
                       else _float_repr(v))
        elif _type(v) is str:
            out.append(_encode_str(v))
        elif _type(v) is dict:
            out.append("{")
            for n, (k, x) in enumerate(v.items()):
                out.append(("," if n else "") + _encode_str(k) + ":")
                encode(x, out)
            out.append("}")
        else:
            out.append("[")
            for n, x in enumerate(v):
                if n:
                    out.append(",")
                encode(x, out)
            out.append("]")

    def graded(namespace: dict, path_out: str) -> None:
        outcomes, state["tripped"] = [], []
        for n, case in enumerate(job["cases"], 1):
            ns = dict(namespace)
            ns.update(given)
            ns["T"] = T
            steps = []
            for kind, source in case["steps"]:
                state["where"] = f"graded call {n} ({case['label']})"
                state["on"] = True
                active = mode() if mode is not None else None
                try:
                    if active is not None:
                        active.__enter__()
                    try:
                        if kind == "do":
                            exec(source, ns)
                            steps.append(None)
                        else:
                            steps.append({"value": plain(eval(source, ns))})
                    finally:
                        if active is not None:
                            active.__exit__(None, None, None)
                except Exception as e:
                    steps.append(raised(e))
                finally:
                    state["on"] = False
            outcomes.append(steps)
        for owner, attr, original in undo:  # a wrapper removed by learner code is itself worth a look
            current = (owner.get(attr) if _isinstance(owner, dict) else _type(owner) if attr == "__class__"
                       else vars(owner).get(attr))
            if current is original:
                state["tripped"].append(f"a tripwire was removed ({attr})")
        text = []
        encode({"outcomes": outcomes, "tripped": state["tripped"]}, text)
        fd = _open(path_out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            data = "".join(text).encode()
            while data:
                data = data[_write(fd, data):]
        finally:
            _close(fd)

    def disarm() -> None:
        for owner, attr, original in reversed(undo):
            if _isinstance(owner, dict):
                owner[attr] = original
            else:
                setattr(owner, attr, original)
        undo.clear()

    graded.disarm = disarm
    return graded


def arm_cell(source: str, job_text: str) -> str:
    """The silent cell that arms a kernel: ``source`` is this module's text (the kernel cannot import it)."""
    return ("def _pagedlab_boot(source, job):\n"
            "    ns = {'__name__': 'pagedlab_grading_harness'}\n"
            "    exec(source, ns)\n"
            "    return ns['arm'](job)\n"
            f"_pagedlab_graded = _pagedlab_boot({source!r}, {job_text!r})\n"
            "del _pagedlab_boot\n")


def driver_cell(path_out: str) -> str:
    """The silent cell, after the notebook's last, that makes the graded calls and writes their outcomes."""
    return f"_pagedlab_graded(globals(), {path_out!r})\n"
