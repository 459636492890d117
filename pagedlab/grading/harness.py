"""The grading kernel's side: one silent cell, after the notebook's last, that makes the graded calls.

Nothing of the driver is in the kernel while learner cells run. The supervisor (:mod:`pagedlab.grading.run`) sends
this module's source, the job (the cases, their arrays, a one-time token, where to write) and a call to
:func:`drive` as one cell (:func:`driver_cell`) only after the last learner cell has run. So no learner cell can
find the graded inputs in memory (``gc.get_objects()``), reach a driver function or its flags, or know the token
the grader expects back. (Before the first learner cell, another silent cell (:func:`watch_cell`) starts a
:class:`Watch` of the reference functions the grading copy keeps: it holds no input and no token, only counts; and
before the notebook's first cell, one puts the grader's :func:`version_sum` in ``builtins.sum``'s place.)
The driver then

* resolves the given constants (``pagedlab.memory:LLAMA_7B``): a graded call's names come from the spec, never from
  the learner's namespace;
* wraps the functions that compute the exercise's answer, where the grading copy of ``pagedlab`` still holds them
  (:mod:`pagedlab.grading.sandbox` leaves most of them out), in tripwires in every loaded module, and pushes a
  ``TorchDispatchMode`` that sees torch's softmax and attention ops whatever path reached them;
* for a Triton exercise, refuses PyTorch computing values while the learner's function runs (it may allocate, copy
  and view: :data:`LAUNCHER_OPS`), and watches Triton's launch path: a graded result counts only if a
  ``@triton.jit`` kernel defined in the notebook wrote it from the inputs, and nothing changed it after
  (:class:`Launches`);
* records what leaves the watchers' sight: an operator defined outside PyTorch, an installed package's code other
  than :data:`PACKAGES`, a profile hook replaced, a fork, a Triton kernel not the notebook's, TorchScript run
  (:class:`Scripts`), code no cell shows (:class:`Sources`), reference code called before the calls (:class:`Watch`);
* runs every step in the notebook's namespace, catching every exception (``SystemExit`` included) as an outcome,
  and records a thread a graded call starts (the op watcher sees only its own thread);
* writes ``{"token", "outcomes", "tripped"}`` with its own small encoder to a file name the learner could not know,
  and stops the kernel's process the moment it is written (:func:`_seal`): no code of the notebook's runs after.

The grader reads that file only from a kernel stopped so, and parses it as untrusted text
(:mod:`pagedlab.grading.calls`). Learner code that hooks the kernel's execution machinery can still change what
this cell does: the static review and the kernel probe flag that, and the threat model (docs/threat_model.md)
says what remains. This module imports nothing from ``pagedlab`` at import time.
"""

from __future__ import annotations

import __future__
import ast
import dataclasses
import functools
import gc
import importlib
import importlib.util
import itertools
import json
import math
import numbers
import operator
import os
import sys
import weakref

# aten ops whose call, during a graded call, is reference code for the exercises that list "torch-softmax" or
# "torch-attention" (matched on the op's name without the overload).
ATEN = {"torch-softmax": ("_softmax", "softmax", "_log_softmax", "log_softmax", "_safe_softmax", "special_softmax"),
        "torch-attention": ("scaled_dot_product_attention", "_scaled_dot_product_attention_math",
                            "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu",
                            "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
                            "_fused_sdp_choice")}
# Each group is also a family: any aten op or torch C function whose name holds one of the family's words is the same
# reference code by another route (``torch.sparse.softmax`` runs aten ``_sparse_softmax``, ``torch._masked_softmax``
# its own op, ``nn.MultiheadAttention``'s fast path ``_native_multi_head_attention``), whatever the list above names.
# A fused op computes what it fuses, out of the op watcher's sight (a dispatch mode sees the op, not its insides):
# attention holds a softmax (``sdpa`` with a one-hot query and identity values is a softmax), a transformer layer
# (``_transformer_encoder_layer_fwd``) holds attention.
_FUSED = ("attention", "transformer", "multi_head")
FAMILY = {"torch-softmax": ("softmax", *_FUSED), "torch-attention": _FUSED}
# Python-level entry points wrapped for the same two groups (their aten ops are caught by the dispatch mode too;
# composite ops decompose before a dispatch mode sees them, so their Python entry points in torch.ops.aten are wired).
PYTHON = {"torch-softmax": ("torch:softmax", "torch:log_softmax", "torch.nn.functional:softmax",
                            "torch.nn.functional:log_softmax", "torch.nn.functional:softmin",
                            "torch.special:softmax", "torch.special:log_softmax", "torch:Tensor.softmax",
                            "torch:Tensor.log_softmax", "torch._refs:softmax", "torch._refs:log_softmax",
                            "torch._refs.nn.functional:softmax", "torch._decomp.decompositions:_softmax",
                            "torch._decomp.decompositions:_log_softmax", "torch.sparse:softmax",
                            "torch.sparse:log_softmax"),
          # multi_head_attention_forward computes attention from bmm and softmax when asked for its weights: no
          # attention op runs, so its Python entry point is wired (nn.MultiheadAttention calls it through F)
          "torch-attention": ("torch.nn.functional:scaled_dot_product_attention",
                              "torch.nn.functional:multi_head_attention_forward",
                              *(f"torch.ops.aten:{name}" for name in ATEN["torch-attention"]
                                if not name.startswith("_fused")))}


def drive(job_text: str, namespace: dict, path_out: str, kernel: bool = False) -> None:
    """Make the job's graded calls in ``namespace`` and write their outcomes to ``path_out`` (a new file).

    ``kernel``: this is the grading kernel, whose other threads must stay still while the calls run
    (:class:`Others`); a test that drives in its own process, among its runner's threads, leaves it False.
    In the grading kernel it does not return: it stops the process once the outcomes are written (:func:`_seal`).
    Otherwise everything it wraps is put back before it returns (a test that drives in its own process goes on).
    """
    job = json.loads(job_text)
    state = {"on": False, "learner": False, "tripped": [], "refused": [], "where": ""}
    undo: list = []
    others = scripts = None

    def record(label: str) -> None:
        if state["on"] and len(state["tripped"]) < 50:
            state["tripped"].append(f"{state['where']} called {label}")

    def tripwire(f, label: str):
        def wrapped(*args, **kwargs):
            record(label)
            return f(*args, **kwargs)
        wrapped.__name__, wrapped.__qualname__ = getattr(f, "__name__", "f"), getattr(f, "__qualname__", "f")
        wrapped.__doc__ = getattr(f, "__doc__", None)
        return wrapped

    def put(owner, attr: str, new) -> None:
        own = owner if isinstance(owner, dict) else getattr(owner, "__dict__", None)
        # (an attribute the object only inherits is taken off again, not left on it as a copy)
        undo.append((owner, attr, owner[attr] if isinstance(owner, dict) else getattr(owner, attr),
                     own is None or attr in own or attr == "__class__"))
        if isinstance(owner, dict):
            owner[attr] = new
        else:
            setattr(owner, attr, new)

    try:
        # (read before the tripwires wrap the same functions)
        watch_reasons, watched = _watched(job["watch"]) if job.get("watch") is not None else ([], None)
        moved = _wire(job.get("tripwires", ()), tripwire, put)
        for target in ("_thread:start_new_thread", "threading:_start_new_thread"):  # (the op watcher is per thread)
            moved.update(_wire((target,), lambda f, label: tripwire(f, "a new thread, out of the op watcher's sight"),
                               put))
        for module in list(sys.modules.values()):  # ``from x import f`` copies, the notebook's own included
            d = getattr(module, "__dict__", None)
            for key, value in list(d.items()) if isinstance(d, dict) else ():
                hit = moved.get(id(value))
                if hit is not None and hit[0] is value:
                    put(d, key, hit[1])
        sources = Sources(job["cells"], globals()) if job.get("cells") is not None else None
        for code in watched.codes() if watched is not None and sources is not None else ():
            sources.trust(code)
        for name in _WATCH_HELPERS if watched is not None and sources is not None else ():
            # (the watch was made by the setup's copy of this module: its helpers are that copy's objects, trusted
            # where their code is this module's own, so that a reference call's count is not told as foreign code)
            theirs, ours = (getattr(f, "__wrapped__", f) for f in (type(watched).count.__globals__.get(name),
                                                                    globals()[name]))
            if getattr(theirs, "__code__", None) == ours.__code__:
                sources.trust(theirs.__code__)
        launches = Launches(put, record, sources, job.get("full_precision", False)) if job.get("triton") else None
        if launches is not None and watched is not None:
            launches.held, launches.undo = watched.held, undo

        memory = Memory(job["memory"], record) if job.get("memory") else None

        def made(op: str, inputs: list, outputs: list, numbers: list, view: bool) -> None:
            """:func:`follow`; where the watchers cannot read an op's tensors (a sparse tensor has no storage), the call
            is refused, and the refusal stands even where the notebook catches the error (it was raised after the op
            ran: what the op did is out of the rules' sight)."""
            try:
                follow(op, inputs, outputs, numbers, view)
            except Refused:
                raise
            except Exception as e:
                why = (f"{state['where']}: the grader could not follow torch's {op} ({type(e).__name__}: "
                       f"{str(e)[:120]}), so the rules cannot say what the call computed or held")
                for watcher in (launches, memory):
                    if watcher is not None and not watcher.refusal:
                        watcher.refusal = why
                raise Refused(why) from None

        def follow(op: str, inputs: list, outputs: list, numbers: list, view: bool) -> None:
            """An op ran on ``inputs`` (and the Python ``numbers``) and made ``outputs`` (tensors) while the learner's
            function ran: in a Triton exercise only memory may be asked of PyTorch (a constant fill is noted,
            :meth:`Launches.filled`); under a memory rule, :meth:`Memory.op` follows it."""
            if not state["learner"]:
                return
            name = op.split("::")[-1].split(".")[0]
            if launches is not None and name in FILLS:
                launches.filled(outputs, FILLS[name] if FILLS[name] is not None else (numbers or [None])[0])
            if launches is not None and name in ("clone", "_to_copy", "copy_") and outputs:
                launches.copied(inputs[-1], outputs[0], torch)
            if (launches is not None and name not in LAUNCHER_OPS and not launches.computed
                    and any(t.is_floating_point() or t.is_complex() for t in outputs)):
                launches.computed = f"torch's {op}"  # (refused at the next launch: :meth:`Launches.computed`)
            if memory is not None:
                if name == "_local_scalar_dense":
                    memory.read_out(1, ".item(), float() or int() of a tensor")
                memory.op(op, name, inputs, outputs, state["where"], view)
        mode = _mode(job, record, made if launches is not None or memory else None)
        aten = {name for group in job.get("tripwires", ()) if group in ATEN for name in ATEN[group]}
        family = _family(job)
        answers, blocks = _answer_code(job.get("tripwires", ()))
        course = os.path.dirname(getattr(sys.modules.get("pagedlab"), "__file__", None) or "/nowhere") + os.sep

        packages: set = set()
        vetted: dict = {}  # the code objects the profile hook has checked (each once), by id
        # What no rule below can concern, read once (the hook runs at every call: most are of neither kind): the
        # names of C functions no rule names, and the code objects (by id; ``vetted`` holds them) no rule concerns.
        quiet_names: dict = {}
        quiet_codes: set = set()

        def loud_name(name) -> bool:
            return (_named(name, aten, family) or name in ("run_backward", "_make_dual", "_dispatch_call_boxed")
                    or name in MODES_OFF or (memory is not None and name in READ_OUT))

        def loud_code(code) -> bool:
            file, name, package = code.co_filename, code.co_qualname, _package(code.co_filename)
            return ((file, name.split(".")[0]) in answers or (file, "*") in answers or (file, name) in blocks
                    or (package is not None and package not in PACKAGES)
                    or (package == "torch" and (any(word in name.lower() for word in family)
                                                or code.co_name in (*MODES_OFF, "redispatch", "save", "_save"))))

        def profile(frame, event, arg) -> None:
            """A torch C function of an answer's name called from Python, a function of an answer module's file (a
            fresh copy of it, from ``runpy`` or ``importlib``, has no tripwire), torch's Python code whose name holds
            the answer's family word (``MultiheadAttention.forward`` of any module), torch's dispatch modes switched
            off by the notebook (:data:`MODES_OFF`), or the code of an installed package other than those a learner's
            answer runs through (:data:`PACKAGES`)."""
            if event == "c_call":
                name = getattr(arg, "__name__", None)
                quiet = quiet_names.get(name) if isinstance(name, str) else False
                if quiet is None:
                    quiet = quiet_names[name] = not loud_name(name)
                if quiet and type(getattr(arg, "__self__", None)).__module__ not in INTERPRETERS:
                    return  # (an interpreter's method goes on to its rule below)
            elif event != "call" or id(frame.f_code) in quiet_codes:
                return
            if event == "c_call" and _named(getattr(arg, "__name__", None), aten, family):
                record(f"torch's {arg.__name__}")
            elif event == "c_call" and family and getattr(arg, "__name__", None) in ("run_backward", "_make_dual"):
                record(f"PyTorch's autograd ({arg.__name__}): its derivative formulas compute what the exercise asks "
                       "(the derivative of log-sum-exp is softmax, backward or forward)")
            elif event == "c_call" and getattr(arg, "__name__", None) == "_dispatch_call_boxed" and not _in_torch(frame):
                record("an op below the op watcher (torch's _dispatch_call_boxed, from the notebook): what it "
                       "computes or holds is out of the watcher's sight")
            elif event == "c_call" and type(getattr(arg, "__self__", None)).__module__ in INTERPRETERS:
                record(f"a program of another language, run by its interpreter ({type(arg.__self__).__module__}."
                       f"{type(arg.__self__).__name__}.{arg.__name__}): what it computes is out of the grader's sight")
            elif event == "c_call" and getattr(arg, "__name__", None) in MODES_OFF and not _in_torch(frame):
                record(f"torch's {arg.__name__}, which switches the op watcher off")
            elif (event == "c_call" and memory is not None and state["learner"] and getattr(arg, "__name__", None)
                  in READ_OUT and type(getattr(arg, "__self__", None)).__module__.startswith("torch")):
                owner = arg.__self__  # a tensor, or a storage (its bytes)
                memory.read_out(owner.numel() if hasattr(owner, "numel") else owner.nbytes(), f".{arg.__name__}()")
            elif event == "call":
                file, name = frame.f_code.co_filename, frame.f_code.co_qualname
                if sources is not None and id(frame.f_code) not in vetted:
                    vetted[id(frame.f_code)] = frame.f_code  # (kept: an id is not reused while it is held)
                    problem = sources.foreign(frame)
                    if problem:
                        record(f"{name}, {problem}: the code run is not the code the notebook shows")
                if (file, name.split(".")[0]) in answers or (file, "*") in answers:
                    record(f"{name} of {file.rpartition('/')[2]}")
                elif (file, name) in blocks and not frame.f_back.f_code.co_filename.startswith(course):
                    record(f"{name} of {file.rpartition('/')[2]}, which the exercise's answer is built on")
                package = _package(file)
                if (package == "torch" and memory is not None and state["learner"] and name in ("save", "_save")
                        and file.endswith("serialization.py")):  # a tensor's bytes written out, as ``.tolist()`` would
                    memory.read_out(memory.inputs, "torch.save")
                if package == "torch" and any(word in name.lower() for word in family):
                    record(f"torch's {name} ({file.rpartition('/')[2]}), whose name says it computes the answer")
                elif package == "torch" and frame.f_code.co_name in MODES_OFF and not _in_torch(frame.f_back):
                    record(f"torch's {name}, which switches the op watcher off")
                elif package == "torch" and frame.f_code.co_name == "redispatch" and not _in_torch(frame.f_back):
                    record(f"an op below the op watcher (torch's {name}, from the notebook): what it computes "
                           "or holds is out of the watcher's sight")
                if package and package not in PACKAGES and package not in packages:
                    packages.add(package)
                    record(f"code of the installed package {package} ({frame.f_code.co_qualname}), which may "
                           f"compute the answer: a person checks what it does")
                if not loud_code(frame.f_code):
                    vetted[id(frame.f_code)] = frame.f_code
                    quiet_codes.add(id(frame.f_code))
        torch = sys.modules.get("torch")
        if torch is None and (mode or job.get("arrays")):
            import torch
        device = importlib.import_module("pagedlab.device").DEVICE if job.get("device") else None

        given = {name: _resolve(target) for name, target in job.get("given", {}).items()}

        def T(i: int):
            a = job["arrays"][i]
            t = torch.tensor(a["data"], dtype=getattr(torch, a["dtype"])).reshape(a["shape"])
            return t.to(device) if device is not None else t

        # A process started during a graded call computes out of every watcher's sight, by whatever library
        # starts it: noted, from Python's audit events (a hook cannot be removed: it checks this run's state, off
        # once the calls are made), and from the processes and child CPU time the kernel has before and after each
        # call. Not ended: a pool waiting for its workers would wait for ever.
        def started(event: str, frame) -> None:
            if _from_triton(frame):
                state["tool"] = True  # Triton's compiler (ptxas, the C launcher) on a GPU: not the notebook's
            else:
                record(f"a new process ({event}), out of the grader's sight")
        if not _AUDITED:  # one hook per process (a test drives many times): it calls this run's, while it runs
            sys.addaudithook(_audit)
            _AUDITED.append(True)
        _AUDITED[1:] = [started]
        state["tripped"] += _written_modules() + watch_reasons
        running = _children()[1]
        if running:
            state["tripped"].append(f"the notebook left {len(running)} process(es) running (pid "
                                    f"{', '.join(map(str, running))}), which may answer the graded calls")
        for module, cls in (("triton.runtime.interpreter", "InterpretedFunction"), ("triton.runtime.jit", "JITFunction")):
            owner = getattr(sys.modules.get(module), cls, None)
            if owner is not None:  # a kernel of the course's, reached by any route, is not the notebook's work
                put(owner, "run", _foreign_launches(owner.run, record, memory is not None))
        if kernel:
            others = Others(state["tripped"])
        if torch is not None:
            scripts = others.starting(Scripts, torch, state["tripped"]) if others is not None else \
                Scripts(torch, state["tripped"])
        sums = _sums(put, sources.trust if sources is not None else lambda code: None)
        if sums is None:
            state["tripped"].append("builtins.sum is not the grader's (replaced by the notebook): which Python's "
                                    "sum of floats the answer computes with is out of the grader's sight")
            sums = {"differed": False}  # (the notebook's own sum runs: nothing to switch)

        def make(n: int, case: dict, again: str = "") -> list:
            """The steps of ``case`` (the ``n``-th), in a namespace of their own: their outcomes."""
            ns = dict(namespace)
            ns.update(given)
            ns["T"] = T
            steps = []
            for kind, source in case["steps"]:
                state["where"] = f"graded call {n} ({case['label']}){again}"
                state["on"] = True
                if memory is not None:  # (a call that raised after its start, at a time bound, left it begun: round
                    memory.called = False  # 38z199, the next call's state refused as if computed elsewhere)
                children = _children()
                if launches is not None:
                    launches.reset(state["where"])
                active = mode()
                try:
                    if launches is None and (aten or answers or sources):  # (Triton's interpreter: too slow)
                        sys.setprofile(profile)
                    active.__enter__()
                    try:
                        if kind == "do":
                            exec(_driver_code(source, "exec", sources), ns)
                            steps.append(None)
                        else:
                            arguments = launches.arguments if launches is not None else []
                            value = eval(_driver_code(_arguments_kept(source, ns, launches.keep if launches is not None
                                                                      else (memory.start if memory is not None else None),
                                                                      state), "eval", sources), ns)
                            if memory is not None:
                                memory.result(value, state["where"])
                            if launches is not None:
                                launches.check(value, arguments, torch, state["where"])
                            unwritten = launches.unwritten(value, torch) if launches is not None else ""
                            steps.append({"value": _plain(value, torch, record), **(
                                {"unwritten": unwritten} if unwritten else {})})
                    finally:
                        state["learner"] = False
                        if launches is None and (aten or answers or sources) and sys.getprofile() is not profile \
                                and not _unset_by(sys.exc_info()[1], profile):
                            record("a profile hook of the notebook's (sys.setprofile, cProfile) in place of the "
                                   "grader's, which sees reference code called by any route")
                        sys.setprofile(None)
                        active.__exit__(None, None, None)
                except BaseException as e:  # SystemExit and KeyboardInterrupt too: a graded call's outcome
                    steps.append(_raised(e))
                    if isinstance(e, Refused):
                        state["refused"].append(str(e))
                    elif launches is not None and launches.refusal:  # raised inside the interpreter, which wraps it
                        state["refused"].append(launches.refusal)
                finally:
                    after, tool = _children(), state.pop("tool", False)
                    if (after[0] > children[0] and not tool) or set(after[1]) - set(children[1]):
                        record("a new process (a child of the kernel's), out of the grader's sight")
                    for name in others.ran() if others is not None else ():
                        record(f"work on the kernel's thread {name}, which ran during the call: the op watcher and "
                               "the profile hook see the calling thread only")
                    state["on"] = False
                    refusal = memory.refusal if memory is not None else None  # (stands even where it was caught)
                    if memory is not None:
                        memory.refusal = None
                    if refusal and refusal not in state["refused"]:
                        state["refused"].append(refusal)
            return steps

        outcomes, other = [], {}  # (other: the cases made again with the other side of Python 3.12's sums)
        for n, case in enumerate(job["cases"], 1):
            sums.update(on=True, other=False, differed=False)
            outcomes.append(make(n, case))
            if sums["differed"]:
                sums.update(other=True)
                other[str(n - 1)] = make(n, case, f", again with Python {'3.11' if _COMPENSATING else '3.12'}'s sum")
            sums.update(on=False, other=False)
        if scripts is not None:
            state["tripped"] += scripts.stop()
        elif "torch" in sys.modules:
            state["tripped"].append("torch, imported during the graded calls: what its interpreter of TorchScript "
                                    "runs is out of the grader's sight")
        state["tripped"] += [m for m in _written_modules() if m not in state["tripped"]]
        # What the calls made is freed now, before the results exist: a finalizer of the notebook's (weakref,
        # __del__) runs here, with nothing to rewrite, not after the write and before the grader reads.
        if launches is not None:
            launches.reset()
        gc.collect()
        text = []
        _encode({"token": job["token"], "outcomes": outcomes, "tripped": state["tripped"], "refused": state["refused"],
                 **({"other": other} if other else {})}, text)
        if kernel:
            _seal(path_out, "".join(text).encode())
        fd = os.open(path_out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            _write(os.write, fd, "".join(text).encode())
        finally:
            os.close(fd)
    finally:
        del _AUDITED[1:]
        if scripts is not None:
            scripts.stop()
        if others is not None:
            others.close()
        for owner, attr, original, own in reversed(undo):
            if isinstance(owner, dict):
                owner[attr] = original
            elif own:
                setattr(owner, attr, original)
            else:
                delattr(owner, attr)


def _write(write, fd: int, data: bytes) -> None:
    while data:
        data = data[write(fd, data):]


SIGSTOP = 19  # (Linux's number, as a literal: the signal module's constant is the notebook's to change)


def _seal(path: str, data: bytes) -> None:
    """Write the results to ``path`` (a new file), then stop this process on the spot: no code of the notebook's runs
    after them, however it was set to (a hook IPython runs after a cell, a figure drawn there, a timer or a function
    waiting on an event loop, a signal handler, a finalizer, a trace function, a replaced ``os.close``). The
    supervisor reads the results only from a kernel it finds stopped (:mod:`pagedlab.grading.run`), then kills it.

    From here to the stop only C functions of Python's own modules run, each checked to be one (a function of the
    notebook's in their place is refused before anything is written), with the collector off and every signal
    handler of Python's unset.

    Raises:
        RuntimeError: a function it needs is not Python's own, or the process did not stop.
    """
    builtin, module = type([].append), type(sys)
    need = {"posix": ("open", "write"), "_signal": ("raise_signal", "signal", "getsignal"),
            "sys": ("settrace", "setprofile"), "gc": ("disable",)}
    f = {}
    for name, functions in need.items():
        for function in functions:
            c = getattr(sys.modules.get(name), function, None)
            owner = getattr(c, "__self__", None)
            if type(c) is not builtin or type(owner) is not module or owner.__name__ != name or c.__name__ != function:
                raise RuntimeError(f"{name}.{function} is not Python's own: the results are not written")
            f[function] = c
    f["disable"](), f["settrace"](None), f["setprofile"](None)
    monitoring = getattr(sys, "monitoring", None)  # (Python 3.12 and later)
    for tool in range(6) if monitoring is not None else ():
        for event in [e for e in vars(monitoring.events).values() if type(e) is int and e and not e & (e - 1)]:
            monitoring.register_callback(tool, event, None)
    for number in range(1, 65):
        try:
            if type(f["getsignal"](number)) is not int and f["getsignal"](number) is not None:
                f["signal"](number, 1)  # SIG_IGN: a handler of Python's would run between two lines below
        except (ValueError, OSError, TypeError):
            pass
    fd = f["open"](path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    _write(f["write"], fd, data)
    f["raise_signal"](SIGSTOP)
    raise RuntimeError("the kernel went on after stopping itself: the results are not to be read")


PROCESS_EVENTS = frozenset(("os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system",
                            "subprocess.Popen", "pty.spawn", "os.startfile"))
"""Python's audit events that start a process (whichever library raises them: subprocess, multiprocessing,
webbrowser, ...)."""


_AUDITED: list = []  # [True, the running drive's callback] once the audit hook is in place


def _audit(event: str, args: tuple) -> None:
    if event in PROCESS_EVENTS and len(_AUDITED) > 1:
        _AUDITED[1](event, sys._getframe(1))


def _from_triton(frame) -> bool:
    """Whether the code that started a process (the first frame from ``frame`` out that is not the standard
    library's) is Triton's own: its compiler on a GPU runs ptxas and builds its C launcher."""
    import sysconfig

    stdlib = sysconfig.get_paths()["stdlib"]
    while frame is not None and frame.f_code.co_filename.startswith(stdlib):
        frame = frame.f_back
    return frame is not None and f"{os.sep}triton{os.sep}" in frame.f_code.co_filename


INTERPRETERS = frozenset(("sqlite3", "_sqlite3", "_tkinter"))
"""The modules of the interpreters of other languages (SQL, Tcl) whose objects' methods run a program in C."""


class Scripts:
    """The programs torch's own interpreters run during the graded calls (TorchScript, however it was made: scripted,
    loaded, or a graph parsed from text; its mobile and static runtimes), seen by torch's profiler restricted to
    those scopes. They run in C++: no profile hook reads them and no copy check compares them.

    The profiler is the calling thread's, as the other watchers are. Two functions of the grader's, each named when
    it runs, mark the start and the stop: a trace without both, in that order, is not this one (a notebook that
    switched the profiler off, or swapped it for one of its own, is seen).
    """

    SCOPES = ("TORCHSCRIPT_FUNCTION", "LITE_INTERPRETER", "STATIC_RUNTIME_OP", "STATIC_RUNTIME_MODEL")

    def __init__(self, torch, tripped: list):
        self.on = False
        os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # (the profiler's start and stop lines, unread here)
        try:
            # the two marks, made before the profiler starts (making a function's first one records events of its own)
            graph = torch._C.parse_ir("graph():\n  %0 : NoneType = prim::Constant()\n  return (%0)\n")
            self.marks = [torch._C._create_function_from_graph(f"grader_{os.urandom(8).hex()}", graph) for _ in "ab"]
            profiler, self.autograd = torch._C._profiler, torch._C._autograd
            config, activities = torch.autograd.profiler.profile(use_cpu=True).config(), {profiler.ProfilerActivity.CPU}
            self.autograd._prepare_profiler(config, activities)
            self.autograd._enable_profiler(config, activities, {getattr(profiler.RecordScope, s) for s in self.SCOPES})
            self.on = True
            self.marks[0]()
        except Exception as e:  # noqa: BLE001 - a profiler of the notebook's left running, most likely
            tripped.append(f"torch's profiler, which sees the TorchScript a graded call runs, did not start ({e})")

    def stop(self) -> list[str]:
        """What ran, as reasons (none: nothing did); the profiler is off afterwards. Once only: later calls return []."""
        if not self.on:
            return []
        self.on = False
        start, stop = (mark.name for mark in self.marks)
        try:
            self.marks[1]()
            events = [e.name() for e in sorted(self.autograd._disable_profiler().events(), key=lambda e: e.start_ns())]
        except Exception as e:  # noqa: BLE001
            return [f"torch's profiler, which sees the TorchScript a graded call runs, was switched off during the "
                    f"graded calls ({e})"]
        if events.count(start) != 1 or events.count(stop) != 1 or events.index(start) > events.index(stop):
            return ["torch's profiler, which sees the TorchScript a graded call runs, was switched off or replaced "
                    "during the graded calls"]
        ran = events[events.index(start) + 1:events.index(stop)]
        names = sorted(set(ran) - {"defaults"})  # ("defaults": a function's first run, binding its defaults)
        return [f"TorchScript during the graded calls ({', '.join(names) or 'a function'}): a program run in C++, "
                "out of the grader's sight"] if ran else []


def _unset_by(error: BaseException | None, hook) -> bool:
    """Whether ``error``, which ends a graded call, was raised while the grader's profile ``hook`` ran, so that Python
    unset the hook (round 38z187: ``pagedlab.testing.within``'s timer signal, whose handler raised TimeoutError in
    the hook's frame): no hook of the notebook's took its place, and the call's outcome is that error."""
    import traceback

    return sys.getprofile() is None and error is not None and any(
        frame.f_code is hook.__code__ for frame, _ in traceback.walk_tb(error.__traceback__))


def _started() -> float | None:
    """When this process started, in seconds since the epoch (a second early), from Linux's ``/proc``; else None."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rpartition(")")[2].split()[19])  # field 22: the start, in clock ticks after boot
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK") - 1  # (the boot time is in whole seconds)


class Sources:
    """The text of each code cell the notebook was handed in with (``job["cells"]``), against which the code that
    runs is checked: Python keeps each cell's text in its line cache (IPython puts it there), and Triton's
    interpreter rebuilds a kernel from what it reads there, so a notebook that rewrites that cache (or the file a
    function came from) would run code that no cell shows, and that the review never read."""

    def __init__(self, cells: list[str], harness: dict | None = None):
        from IPython.core.inputtransformer2 import TransformerManager

        transform = TransformerManager().transform_cell
        texts = set()
        for source in cells:
            try:
                texts.add(tuple(transform(source).splitlines()))  # (as IPython caches it: magics made Python)
            except Exception:  # (IPython's own transform cannot read it: the cell fails to run anyway)
                texts.add(tuple(source.splitlines()))
        self.texts = frozenset(texts)
        # the bodies of %time and %%time, which IPython compiles under a name of its own ("<timed exec>")
        self.timed = frozenset(transform(body) for text in texts for body in _timed_bodies("\n".join(text)))
        self.started = _started()
        self.compiled: dict = {}  # (a text, future flags) -> the code objects it compiles to, nested ones included
        self.generated: dict = {}  # id of a class of the notebook's -> the methods Python's generators give it
        # the grader's own code (this module, run from a string by the driver cell) and the graded steps it compiles
        self.trusted: dict = {}
        for value in (harness or {}).values():
            for code in _codes(value):
                self.trusted[id(code)] = code

    def trust(self, code) -> None:
        for c in _nested(code):
            self.trusted[id(c)] = c

    def foreign(self, frame) -> str | None:
        """Why the code ``frame`` runs (in a graded call) is neither code the review read nor Python's own, else None.
        Accepted: a function compiled from a cell of the notebook's (:meth:`problem`, :meth:`compiled_from_cell`);
        one compiled from a file that was there before the kernel started, as the file's text gives it (the
        standard library, torch, an installed package: the tripwires and the profile hook judge what they do); a
        method ``dataclasses`` or ``collections.namedtuple`` generated for a class, as they generate it for that
        class; the grader's own. Anything else was compiled while the notebook ran from a text no cell shows (a
        decoded string handed to ``exec`` by any route: ``timeit``, ``doctest``, ``typing``, ``site``, a template)."""
        code = frame.f_code
        if id(code) in self.trusted:
            return None
        problem = self.problem(code)
        if problem is not None:
            return problem
        file = code.co_filename
        if _cell_text(file) is not None:
            return None if self.compiled_from_cell(code) else (
                "code its cell's text does not compile to (built from another text: Triton's interpreter rebuilds a "
                "function from Python's line cache)")
        if file in ("<timed exec>", "<timed eval>"):
            return None if any(code in (self._compiled_text(body, code) or ()) for body in self.timed) else (
                "code compiled from a text that is in no %time or %%time of its cells")
        if file.startswith("<frozen ") and file.endswith(">"):  # Python's own modules, frozen into it
            file = getattr(sys.modules.get(file[8:-1]), "__file__", None) or file
        if os.path.isfile(file):
            if file not in _FILE_CODES:
                _FILE_CODES[file] = _file_codes(file)
            if _FILE_CODES[file] is None:
                return f"code named after a file that is not Python source ({os.path.basename(file)})"
            if code in _FILE_CODES[file]:
                return None
            return f"code its file ({os.path.basename(file)}) does not compile to"
        if code.co_name in _GENERATED and self._generated_for(frame, code):
            return None
        return f"code compiled while the notebook ran, from a text no cell shows ({file})"

    def _generated_for(self, frame, code) -> bool:
        """Whether ``code`` is a method ``dataclasses`` or ``namedtuple`` generates, as they generate it for the
        class of the object it runs on (rebuilt from that class's fields: a twin class, compared code for code)."""
        import collections
        import dataclasses

        names = code.co_varnames[:1]
        owner = frame.f_locals.get(names[0]) if names else None
        for cls in (owner if isinstance(owner, type) else type(owner)).__mro__:
            if id(cls) not in self.generated:
                twin = None
                try:
                    if "__dataclass_fields__" in cls.__dict__:
                        # the class as written: its own fields (their Field objects), methods and attributes, less
                        # what the generators put there, decorated again with the same parameters
                        params, fields = cls.__dict__["__dataclass_params__"], cls.__dict__["__dataclass_fields__"]
                        own = dict(cls.__dict__.get("__annotations__", {}))
                        body = {k: v for k, v in cls.__dict__.items() if k not in _GENERATED and k not in own
                                and k not in _DATACLASS_MADE}
                        body.update({name: fields[name] for name in own if name in fields}, __annotations__=own)
                        twin = dataclasses.dataclass(**{k: getattr(params, k) for k in (
                            "init", "repr", "eq", "order", "unsafe_hash", "frozen")})(
                            type(cls.__name__, cls.__bases__, body))
                    elif isinstance(getattr(cls, "_fields", None), tuple) and hasattr(cls, "_make"):
                        twin = collections.namedtuple(cls.__name__, cls._fields)
                except Exception:  # (a class the generators cannot rebuild: nothing of it is accepted)
                    twin = None
                self.generated[id(cls)] = (cls, {c for v in (vars(twin).values() if twin is not None else ())
                                                 for c in _codes(v)})
            if code in self.generated[id(cls)][1]:
                return True
        return False

    def problem(self, code) -> str | None:
        """Why ``code`` (a function's code object) was not compiled from the notebook's text, else None: its cell's
        text in the line cache is in no cell of the notebook's, or the file it was read from was written while the
        notebook ran (code of installed packages and of files that were there before is not the notebook's)."""
        file = code.co_filename
        text = _cell_text(file)
        if text is not None:
            if tuple(text.splitlines()) not in self.texts:
                return f"code read from a text that is in none of its cells (Python's line cache holds another for {file})"
            return None
        try:
            written = self.started is not None and os.stat(file).st_ctime >= self.started
        except (OSError, ValueError):
            return None
        return f"code read from a file written while it ran ({os.path.basename(file)})" if written else None

    def compiled_from_cell(self, code) -> bool:
        """Whether ``code`` (a function run from a cell, whose text :meth:`problem` found the notebook's) is one that
        cell's text compiles to: not one built from another text (Triton's interpreter rebuilding a function from a
        line cache since put back)."""
        text = _cell_text(code.co_filename)
        found = self._compiled_text(text, code) if text is not None else None
        return found is None or code in found

    def _compiled_text(self, text: str, code) -> set | None:
        """The code objects ``text`` compiles to, as IPython may compile it (None: it does not compile): one
        top-level statement at a time (a name the text imports is then not its own, which changes the bytecode that
        loads it), the last expression as an interactive one or an ``eval``, all but it at once (``%%time``), and the
        whole text at once (``exec``); with the ``from __future__`` flags ``code`` was compiled with (an earlier
        cell's import passes them on)."""
        key = (text, code.co_flags & _FUTURE_FLAGS)
        if key not in self.compiled:
            try:
                tree = ast.parse(text)
                units = [(text, "exec"), *((ast.Module([node], []), "exec") for node in tree.body)]
                if tree.body and isinstance(tree.body[-1], ast.Expr):
                    units += [(ast.Interactive([tree.body[-1]]), "single"),
                              (ast.Expression(tree.body[-1].value), "eval"), (ast.Module(tree.body[:-1], []), "exec")]
                found = set()
                for unit, mode in units:
                    found |= _nested(compile(unit, code.co_filename, mode, key[1], dont_inherit=True))
            except (SyntaxError, ValueError):
                found = None
            self.compiled[key] = found
        return self.compiled[key]

    def kernel_problem(self, jit) -> str | None:
        """Why the body Triton runs for ``jit`` (a ``@triton.jit`` function of the notebook's), or for one of the
        notebook's jit functions it calls, is not built from the notebook's text, else None: the text it is read from
        (:meth:`problem`). (What the interpreter builds from that text and runs: :meth:`Launches.rebuilt`.)"""
        import linecache

        for inner in _notebook_jit(jit):
            fn = getattr(inner, "fn", None)
            code = getattr(fn, "__code__", None)
            if code is None:
                continue
            problem = self.problem(code)
            if problem is None and code.co_filename not in linecache.cache and not os.path.isfile(code.co_filename):
                # (a cell's text taken out of the cache: the interpreter would read it from the module's loader)
                problem = "code whose text is neither a cell's nor a file's"
            if problem:
                return f"the Triton function {getattr(fn, '__name__', '?')}: {problem}"
        return None


_FUTURE_FLAGS = functools.reduce(operator.or_, (getattr(__future__, name).compiler_flag
                                                 for name in __future__.all_feature_names), 0)
"""The flags of ``from __future__`` imports, which a code object carries in its ``co_flags``."""


_FILE_CODES: dict = {}


def _file_codes(file: str) -> set | None:
    """The code objects the Python source ``file`` compiles to, nested ones included (None: it is not Python source:
    a program, a shared library). Read from the bytecode Python cached for it where that cache is the source's
    (its recorded size and time, or hash, match), as an import does: a tenth of compiling it."""
    import importlib.util
    import marshal
    import tokenize

    try:
        with open(importlib.util.cache_from_source(file), "rb") as f:
            data = f.read()
        flags, stat = int.from_bytes(data[4:8], "little"), os.stat(file)
        fresh = (data[:4] == importlib.util.MAGIC_NUMBER and flags == 0
                 and int.from_bytes(data[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
                 and int.from_bytes(data[12:16], "little") == stat.st_size & 0xFFFFFFFF)
        if fresh:
            return _nested(marshal.loads(data[16:]))
    except (OSError, ValueError, EOFError, TypeError, NotImplementedError):
        pass
    try:
        with tokenize.open(file) as f:
            return _nested(compile(f.read(), file, "exec", dont_inherit=True))
    except Exception:  # (not Python source: a program, a shared library)
        return None
"""A file that was there before the kernel started -> the code objects its text compiles to (None: not Python
source), read once per process."""

_GENERATED = frozenset(("__init__", "__repr__", "__eq__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
                        "__setattr__", "__delattr__", "<lambda>"))
"""The names of the methods ``dataclasses`` and ``collections.namedtuple`` compile from a text of their own
(``namedtuple``'s ``__new__`` is a lambda)."""


_DATACLASS_MADE = frozenset(("__dict__", "__weakref__", "__dataclass_fields__", "__dataclass_params__",
                             "__match_args__", "__slots__"))
"""What ``dataclasses`` (or Python, for the class) puts in a dataclass's namespace besides the methods it generates."""


def _cell_text(file: str) -> str | None:
    """The text Python's line cache holds in memory for ``file``, as IPython keeps a cell's (no file behind it), else
    None."""
    import linecache

    entry = linecache.cache.get(file)
    return "".join(entry[2]) if isinstance(entry, tuple) and len(entry) == 4 and entry[1] is None else None


def _timed_bodies(text: str) -> list[str]:
    """The bodies of the ``%time`` and ``%%time`` magics in ``text`` (a cell as IPython transformed it)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [node.args[-1].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("run_cell_magic", "run_line_magic") and node.args
            and isinstance(node.args[0], ast.Constant) and node.args[0].value == "time"
            and isinstance(node.args[-1], ast.Constant) and isinstance(node.args[-1].value, str)]


def _nested(code) -> set:
    """``code`` and every code object nested in it."""
    import types

    todo, found = [code], set()
    while todo:
        c = todo.pop()
        found.add(c)
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return found


def _codes(value, depth: int = 0) -> set:
    """The code objects of a function, of a class's functions (and what they wrap), nested ones included."""
    import types

    if depth > 3:
        return set()
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, types.FunctionType):
        found = _nested(value.__code__)
        wrapped = getattr(value, "__wrapped__", None)
        cells = [c.cell_contents for c in value.__closure__ or () if _filled(c)]
        for inner in ([wrapped] if wrapped is not None else []) + cells:
            if isinstance(inner, types.FunctionType):
                found |= _codes(inner, depth + 1)
        return found
    if isinstance(value, type):
        return {c for v in list(vars(value).values()) for c in _codes(v, depth + 1)}
    return set()


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _driver_code(source, mode: str, sources: Sources | None):
    """``source`` (a graded step, or its code) compiled by the driver, trusted as the grader's own."""
    code = compile(source, "<graded call>", mode) if isinstance(source, str) else source
    if sources is not None:
        sources.trust(code)
    return code


def _notebook_jit(jit, seen: set | None = None) -> list:
    """``jit`` (a ``@triton.jit`` function) and the jit functions of the notebook's (``__main__``) that its body
    calls, at any depth."""
    seen = set() if seen is None else seen
    seen.add(id(jit))
    found = [jit]
    fn = _run_function(jit)
    for name in _global_names(getattr(fn, "__code__", None)):
        target = getattr(fn, "__globals__", {}).get(name)
        if (getattr(target, "fn", None) is not None and not _triton_file(target.fn) and id(target) not in seen
                and _home(target).startswith("triton")):
            found += _notebook_jit(target, seen)
    return found


def _written_modules() -> list[str]:
    """The modules imported from files written (or touched) since this process started, or removed since, or from
    an archive written since: code the notebook wrote, which is in no cell and which the review cannot read (a
    file's change time cannot be set back)."""
    started = _started()
    if started is None:
        return []  # not Linux: the review's rules only
    kept = [os.path.join(os.path.realpath(p), "") for p in (*os.environ.get("PYTHONPATH", "").split(os.pathsep),
                                                          sys.prefix) if p]  # the grader's copy of pagedlab
    found = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file.endswith((".py", ".pyc", ".pyw")):
            continue  # (a module Triton compiles on a GPU, its launcher, is a shared library in its cache)
        relative = not os.path.isabs(file)  # (a relative sys.path entry; or a made-up name: torch.ops's "_ops.py")
        path = file = os.path.abspath(file)
        while not os.path.exists(path) and os.path.dirname(path) != path:
            path = os.path.dirname(path)  # (in a zip archive, zipimport's: the archive is the file)
        try:
            written = not os.path.isfile(path) or os.stat(path).st_ctime >= started  # (a file since removed: too)
        except OSError:
            continue
        if written and not any(os.path.realpath(path).startswith(k) for k in kept) and not (
                relative and not os.path.isfile(path)):
            found.append(f"the notebook ran code from a file written while it ran, which no cell shows: module "
                         f"{name} ({os.path.basename(file)})")
    return found


def _children() -> tuple[float, list[int]]:
    """The CPU seconds of this process's children that have ended and been waited for, and the pids of those it
    has now (Linux's ``/proc``; none elsewhere)."""
    times = os.times()
    pids = []
    try:
        tasks = os.listdir("/proc/self/task")  # (not glob: this runs twice a graded call, and glob's matching costs)
    except OSError:
        tasks = []
    for task in tasks:  # (os.open and os.read: a third of the time of open(), twice a graded call)
        try:
            fd = os.open(f"/proc/self/task/{task}/children", os.O_RDONLY)
        except OSError:
            continue
        try:
            text = b"".join(iter(lambda: os.read(fd, 1 << 16), b""))
            pids += [int(p) for p in text.split()]
        except OSError:
            pass
        finally:
            os.close(fd)
    return times.children_user + times.children_system, sorted(pids)


# Installed packages whose code a learner's answer may run through: torch (its own dependencies included: it imports
# sympy on first use of some paths), NumPy, Triton, einops, the kernel's own (a print goes through ipykernel), and a
# progress bar's (round 38z92: ``for r0 in tqdm(range(...))`` in the answer; its threads and processes are watched as
# any are); any other package's code during a graded call needs a person's look.
PACKAGES = frozenset(("torch", "numpy", "triton", "einops", "pagedlab", "typing_extensions", "sympy", "mpmath",
                      "networkx", "jinja2", "markupsafe", "filelock", "fsspec", "setuptools", "_distutils_hack",
                      "IPython", "ipykernel", "zmq", "traitlets", "jupyter_client", "jupyter_core", "comm", "tornado",
                      "tqdm"))


# torch's functions that take dispatch modes off their stack, the op watcher among them, or switch its profiler off
# (which sees TorchScript run): called from the notebook's code (torch's own printing of a tensor takes modes off,
# and is not recorded).
MODES_OFF = frozenset(("_disable_current_modes", "_pop_mode", "_pop_mode_temporarily", "_pop_torch_dispatch_stack",
                       "_unset_dispatch_mode", "_disable_profiler", "_disable_profiler_legacy"))


def _in_torch(frame) -> bool:
    return frame is not None and _package(frame.f_code.co_filename) == "torch"


def _package(file: str) -> str | None:
    """The installed package (the folder under ``site-packages``) a code object's file belongs to, else None."""
    for root in ("/site-packages/", "/dist-packages/"):
        if root in file:
            return file.split(root, 1)[1].split("/", 1)[0].removesuffix(".py")
    return None


def _foreign_launches(run, record, memory: bool = False):
    """``run`` (a Triton launcher's) recording each launch of a kernel not defined in the notebook, and each jit
    function not the notebook's nor Triton's that the notebook's kernel calls, at any depth (the course's own
    ``merge_splits_kernel`` called as a device function does the work inside the notebook's launch); with
    ``memory`` (an exercise graded on the memory its call holds), any launch: what a kernel holds (a block of every
    query-key pair) is out of the memory rule's sight."""
    def watched(fn, *args, **kwargs):
        kernel = getattr(fn, "fn", None)
        name = f"{getattr(kernel, '__module__', '?')}.{getattr(kernel, '__name__', '?')}"
        if getattr(kernel, "__module__", "__main__") != "__main__":
            record(f"the Triton kernel {name}, not the notebook's")
        else:
            for inner in _borrowed_jit(fn):
                record(f"the Triton function {inner}, not the notebook's, called from its kernel")
        if memory:
            record(f"the Triton kernel {name}: the memory a kernel holds (its blocks, in registers on a GPU, in NumPy "
                   "in the interpreter) is out of the sight of this exercise's rule on memory")
        return run(fn, *args, **kwargs)
    return watched


def _borrowed_jit(jit, seen: set | None = None) -> list[str]:
    """``module.name`` of each jit function that the body of ``jit`` (a ``@triton.jit`` function) calls, at any
    depth, from the course or another installed package other than Triton (one in a file the notebook wrote is the
    notebook's: :func:`_python_calls` reads it as such, and :func:`_written_modules` records the file)."""
    course = os.path.dirname(getattr(sys.modules.get("pagedlab"), "__file__", None) or "/nowhere") + os.sep
    seen = set() if seen is None else seen
    seen.add(id(getattr(jit, "fn", None)))
    fn = _run_function(jit)
    found = []
    for name in sorted(_global_names(getattr(fn, "__code__", None))):
        target = getattr(fn, "__globals__", {}).get(name)
        inner = getattr(target, "fn", None)  # a jit function (an object of Triton's) holds its Python function
        module = str(getattr(inner, "__module__", ""))
        if inner is None or id(inner) in seen or not _home(target).startswith("triton") or _triton_file(inner):
            continue
        file = getattr(getattr(inner, "__code__", None), "co_filename", "")
        if module.split(".")[0] == "pagedlab" or file.startswith(course) or _package(file):
            found.append(f"{module}.{getattr(inner, '__name__', name)}")
        found += _borrowed_jit(target, seen)
    return found


def _resolve(target: str):
    module, _, attr = target.partition(":")
    owner = importlib.import_module("torch").ops.aten if module == "torch.ops.aten" else importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        owner = getattr(owner, part)
    return owner


def _wire(targets, tripwire, put) -> dict:
    """Wrap each tripwire target (a function, a class's methods, an aten operator's overloads) that exists in this
    kernel; ``{id(original): (original, wrapper)}`` for the plain functions, to replace their copies too."""
    moved = {}
    for target in targets:
        for t in PYTHON.get(target, ()) if target in ATEN else (target,):
            module, _, attr = t.partition(":")
            try:
                owner = _resolve(f"{module}:{attr.rpartition('.')[0]}" if "." in attr else module)
                f = getattr(owner, attr.split(".")[-1])
            except (ImportError, AttributeError):
                continue  # not in this kernel's copy of pagedlab: a route that is not there needs no tripwire
            label = t.replace(":", ".")
            if module == "torch.ops.aten":  # each overload gets a subclass whose call records
                for op in [f] + [getattr(f, n) for n in f.overloads()]:
                    base = type(op)
                    put(op, "__class__", type(base.__name__, (base,), {"__call__": tripwire(base.__call__, label)}))
            elif isinstance(f, type):  # a class: every method it defines, properties' getters included
                for name, member in list(vars(f).items()):
                    if isinstance(member, property) and member.fget is not None:
                        put(f, name, property(tripwire(member.fget, f"{label}.{name}"), member.fset, member.fdel))
                    elif isinstance(member, (staticmethod, classmethod)):
                        put(f, name, type(member)(tripwire(member.__func__, f"{label}.{name}")))
                    elif callable(member) and (not name.startswith("__") or name in ("__init__", "__call__")):
                        put(f, name, tripwire(member, f"{label}.{name}"))
            else:
                new = tripwire(f, label)
                put(owner, attr.split(".")[-1], new)
                if not isinstance(owner, type):
                    moved[id(f)] = (f, new)
    return moved


def _answer_code(targets) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(file, top-level name, or "*" for the whole file) of each pagedlab tripwire target this kernel's copy holds;
    and (file, name) of each function the modules of those targets import from another module of pagedlab (the
    answer's building blocks: ``perf_lab`` computes its registers with ``tile_model.tile_elements``), which their own
    code calls too."""
    found, blocks = set(), set()
    for module in {target.partition(":")[0] for target in targets if target.startswith("pagedlab")}:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            continue
        if spec is None or not spec.origin:
            continue
        found |= {(spec.origin, t.partition(":")[2].split(".")[0]) for t in targets if t.partition(":")[0] == module}
        try:
            with open(spec.origin, encoding="utf-8") as f:
                tree = ast.parse(f.read())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("pagedlab"):
                home = sys.modules.get(node.module)
                for alias in node.names:
                    f = getattr(home, alias.name, None)
                    code = getattr(f, "__code__", None)
                    if code is not None:  # (a function: a class's objects are the setup's to use)
                        blocks.add((code.co_filename, code.co_qualname))
    return found, blocks


# Tensor methods that hand every value to Python: the list, or a Python function called on each element (``apply_``).
READ_OUT = ("tolist", "apply_", "map_", "map2_")


# Ops that write each element of their result once, where it is undefined which write lands when an index repeats
# (torch's documentation of index_put_, scatter_, index_copy_ and put_): a CPU writes in order, a GPU in any.
ONE_WRITE_EACH = frozenset(("index_put_", "index_put", "_index_put_impl_", "index_copy_", "index_copy", "scatter_",
                            "scatter", "put_", "put"))
CLASH_LIMIT = 1 << 24  # elements of the written tensor beyond which the check is not made: a person looks instead


def _clashing(op: str, args: tuple, kwargs: dict) -> bool:
    """Whether torch's ``op`` (one of :data:`ONE_WRITE_EACH`) writes two different values to one element (round
    38z91: ``m.index_put_((rows,), sorted_values)``, each row's last value its max on a CPU only). Too large a tensor
    to check counts as clashing."""
    import torch

    name = op.split("::")[-1].split(".")[0]
    if name in ("scatter_", "scatter") and kwargs.get("reduce") is not None \
            or name not in ("scatter_", "scatter", "index_copy_", "index_copy") \
            and (args[3] if len(args) > 3 else kwargs.get("accumulate", False)):
        return False  # accumulated or reduced: every write counts
    self = args[0]
    if self.numel() > CLASH_LIMIT:
        return True
    ids = torch.arange(self.numel(), device=self.device).view(self.shape)
    if name in ("index_put_", "index_put", "_index_put_impl_"):
        indices = args[1]
        if any(i is not None and i.dtype == torch.bool for i in indices):
            return False  # a mask writes each element once
        dest = ids[tuple(slice(None) if i is None else i for i in indices)]
        values = torch.broadcast_to(args[2], dest.shape)
    elif name in ("scatter_", "scatter"):
        dim, index, src = args[1], args[2], args[3] if len(args) > 3 else kwargs.get("src", kwargs.get("value"))
        if not isinstance(src, torch.Tensor):
            return False  # one value written everywhere
        dest = ids.gather(dim, index)
        values = src[tuple(slice(0, n) for n in index.shape)]
    elif name in ("index_copy_", "index_copy"):
        dim, index, values = args[1], args[2], args[3]
        dest = ids.index_select(dim, index)
    else:  # put_, put: into the flattened tensor
        dest, values = args[1].reshape(-1) % max(self.numel(), 1), args[2].reshape(-1)
    dest, values = dest.reshape(-1), values.reshape(-1)
    order = torch.argsort(dest, stable=True)
    dest, values = dest[order], values[order]
    differ = values[1:] != values[:-1]
    if values.is_floating_point() or values.is_complex():
        differ &= ~(values[1:].isnan() & values[:-1].isnan())
    return bool(((dest[1:] == dest[:-1]) & differ).any())


# Ops that convert a tensor's values to another dtype (``x.long()``, ``x.to(torch.int32)``, ``out[:] = x``).
CONVERSIONS = frozenset(("_to_copy", "copy_"))


def _out_of_range(source, out) -> bool:
    """Whether a conversion of ``source`` into ``out`` (:data:`CONVERSIONS`) took a floating value to an integer
    dtype that cannot hold it: NaN, an infinity or a number past the dtype's range, whose result C++ and CUDA leave
    undefined (round 38z110: INT64_MIN on a CPU, INT64_MAX on a GPU; round 38z119: ``(2.0**31 * x).to(torch.int32)``).
    Checked on the values converted, whatever code wrote the conversion."""
    import torch

    if not (isinstance(source, torch.Tensor) and isinstance(out, torch.Tensor) and source.is_floating_point()) \
            or out.dtype.is_floating_point or out.dtype.is_complex or out.dtype == torch.bool \
            or "meta" in (source.device.type, out.device.type):
        return False
    info, whole = torch.iinfo(out.dtype), source.detach().double().trunc()
    return bool((whole.isnan() | (whole < info.min) | (whole >= float(info.max) + 1)).any())


def _family(job: dict) -> tuple[str, ...]:
    """The family words of the job's aten groups (see :data:`FAMILY`)."""
    return tuple(dict.fromkeys(w for group in job.get("tripwires", ()) if group in FAMILY for w in FAMILY[group]))


def _named(name, aten, family) -> bool:
    """Whether an aten op or torch C function of this name is reference code: listed, or of a listed family."""
    return isinstance(name, str) and (name in aten or any(word in name for word in family))


# What a Triton exercise's launcher may ask PyTorch for during a graded call: memory (allocate, fill with a constant,
# copy, convert), and views of it. Any other op that makes floating-point values computes part of the answer.
LAUNCHER_OPS = frozenset((
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "new_zeros",
    "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "fill", "fill_", "zero_", "clone", "copy",
    "copy_", "_to_copy", "contiguous", "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "expand",
    "permute", "transpose", "t", "unsqueeze", "squeeze", "select", "slice", "narrow", "split", "split_with_sizes",
    "chunk", "unbind", "alias", "detach", "lift_fresh", "lift_fresh_copy", "view_as_real", "view_as_complex", "cat",
    "stack", "flatten", "unflatten", "resize_", "set_", "index_select", "movedim", "_local_scalar_dense"))
# A Triton exercise's kernel may be given this many different floating-point scalars (or strings) in one graded call:
# constants (a scale, log2(e), a finite mask value, an epsilon), not data; an answer handed over this way holds at most
# this many values, and every Triton exercise has graded calls whose results hold more.
MAX_FLOATS = 8
# Ops that fill a tensor with one constant (the value, or None where it is the op's first number argument): what a Triton
# kernel reads there is known, like zeros (a running max started at -inf by the launcher).
FILLS = {"full": None, "full_like": None, "new_full": None, "fill": None, "fill_": None, "ones": 1.0, "ones_like": 1.0,
         "new_ones": 1.0}
# Under a memory rule, tensors of up to this many elements are allowed whatever the inputs (a buffer sized by the
# tile, not by the input, is no matrix of every query-key pair), in a call that does not name its tiles; in one that
# does (``block_m=``, ``block_n=``), a few of its tiles, and this much besides.
MEMORY_FLOOR, MEMORY_SMALL = 4096, 256
# Operators of these namespaces are PyTorch's own; any other was defined by someone (torch.library), and its body,
# Python included, runs where a dispatch mode cannot see inside it.
TORCH_NAMESPACES = frozenset(("aten", "prims", "_c10d_functional", "quantized", "profiler", "triton"))


def _mode(job: dict, record, made=None):
    """A TorchDispatchMode class that records the job's aten ops and operators defined outside PyTorch, and, where
    ``made`` is given (a Triton exercise, a memory rule), calls ``made(op, inputs, outputs, numbers, view)`` with each
    op's tensors, the numbers among its positional arguments and whether it only views its input (``slice``);
    on in every job: an op's undefined result (:data:`ONE_WRITE_EACH`, :data:`CONVERSIONS`) is no job's in particular."""
    aten = {name for group in job.get("tripwires", ()) if group in ATEN for name in ATEN[group]}
    family = _family(job)
    import torch
    from torch import Tensor
    from torch.utils._python_dispatch import TorchDispatchMode

    def tensors(values) -> list:
        """The tensors among an op's arguments or results, and in their lists and tuples (``cat``'s)."""
        return [t for v in values for t in ((v,) if isinstance(v, Tensor) else v if isinstance(v, (list, tuple))
                                            else ()) if isinstance(t, Tensor)]

    class Tripwires(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # Else torch wraps __torch_dispatch__ to keep torch.compile out of it, and the wrapper's first call
            # imports torch._dynamo: about 2 s of CPU in every grading kernel, guarding nothing (Dynamo compiles no
            # frame while a dispatch mode like this one is on the stack).
            return False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            # The watcher's own work runs with the profile hook off (it watches the notebook's code: with it on, a
            # graded call of many small ops took twice as long); the op runs with it on, and so does the watcher's
            # work wherever an argument or result is not of a plain type, whose methods could be the notebook's.
            hook = sys.getprofile()
            sys.setprofile(None)
            try:
                op, named, foreign, writes, view, once, convert = (ops.get(id(func)) or read(func))[:7]
                if named:
                    record(f"torch's {op}")
                if foreign:
                    record(f"the operator {op}, defined outside PyTorch (torch.library): the op watcher does not see "
                           f"what its body runs")
            finally:
                sys.setprofile(hook)
            out = func(*args, **(kwargs or {}))
            if not once and not convert and made is None:
                return out
            plain = _plain_values((out, *args, *(kwargs or {}).values()))
            if plain:
                sys.setprofile(None)
            try:
                if once:
                    try:
                        clash = _clashing(op, args, kwargs or {})
                    except Exception:  # noqa: BLE001 - indices it cannot read: a person reads them
                        clash = True
                    if clash:
                        record(f"torch's {op} writing two different values to one element: which one lands is the "
                               f"order the machine runs the writes in (a CPU's in turn, a GPU's in any), so a person "
                               f"checks")
                if convert and _out_of_range(args[1] if op.split("::")[-1].startswith("copy_") else args[0], out):
                    record(f"torch's {op} converting a NaN, an infinity or a number past the integer dtype's range to "
                           f"{out.dtype}: what it gives is undefined (a CPU's number is not a GPU's), so a person checks")
                if made is not None:
                    # what it made, and every argument it wrote (``_foreach_copy_`` returns None: its writes are its
                    # ``self`` list; ``out=`` tensors)
                    written = [args[i] if isinstance(i, int) else kwargs[i] for i in writes
                               if (isinstance(i, int) and i < len(args)) or (isinstance(i, str) and i in (kwargs or {}))]
                    outputs = list({id(t): t for t in tensors((out, *written))}.values())
                    made(op, tensors((*args, *(kwargs or {}).values())), outputs,
                         [a for a in args if isinstance(a, (int, float))], view)
            finally:
                if plain:
                    sys.setprofile(hook)
            return out

    PLAIN = frozenset((Tensor, int, float, bool, complex, str, type(None), torch.dtype, torch.device, torch.layout,
                       torch.memory_format, torch.Size))

    def _plain_values(values) -> bool:
        """Every value of ``values`` (and of its lists and tuples) is of a type whose methods are torch's or Python's,
        asked by ``type``, which runs no code of the notebook's."""
        return all(type(v) in PLAIN or type(v) in (list, tuple) and _plain_values(v) for v in values)

    ops: dict = {}  # what the watcher reads of an op, once: id -> (name, named, foreign, writes, view, once, the op)

    def read(func) -> tuple:
        op = str(func.name())
        written = [(i, a.name) for i, a in enumerate(func._schema.arguments) if a.alias_info and a.alias_info.is_write]
        short = op.split("::")[-1].split(".")[0]
        facts = (op, _named(short, aten, family), getattr(func, "namespace", "aten") not in TORCH_NAMESPACES,
                 [i for i, _ in written] + [name for _, name in written], bool(getattr(func, "is_view", False)),
                 short in ONE_WRITE_EACH, short in CONVERSIONS)
        ops[id(func)] = facts = facts + (func,)  # (the op kept: an id is not reused while it is held)
        return facts
    return Tripwires


class Memory:
    """The memory rule of an exercise that computes one tile at a time (ex02 and its stretch): while the learner's
    function runs, what it computes with is followed through PyTorch's ops, so that no copy of every query-key
    pair is kept, in whatever dtype.

    * Every storage an op of the call makes is *held* until it is freed, counted by the bits it holds in float32
      elements (32 bits), whatever the dtype it is read as: scores kept as integer bit patterns, as complex numbers,
      or as Python numbers written back into an integer buffer count as floats do. A mask (a storage every tensor on
      which is bool) holds one bit an element: a mask of every pair fits, the scores' bits spread over 32 masks (bit
      planes) do not; a mask read as another dtype holds a value in each byte.
    * No held storage may have more than ``factor`` times the elements of the largest input (and
      :data:`MEMORY_FLOOR`), and all of them together no more than ``factor`` times all the inputs.
    * A view (``slice``, ``view``) makes no storage: a table made before the call (positions ``arange(4096)``) and
      only viewed is not held; one that an op of the call writes into is.
    * A tensor detached (which ``.numpy()`` does, handing NumPy its memory) is recorded: the rule follows only what
      PyTorch computes. So is a tensor of more than one element that enters an op without an op of the call, or of
      an earlier graded call, having made it, and that was not alive before the graded calls began (from NumPy, a
      Python list, a buffer), once the call has also read more than half its inputs' values out of its tensors into
      Python or detached one: without that, what it holds cannot depend on the inputs enough to hold their scores. (An earlier call's tensor was followed then, and from
      other inputs: round 38z148, positions ``arange(n)`` kept by ``(n, device)`` beside a ``bool(vis.any())`` that
      skips a tile; a tensor alive before the calls was made before any of their inputs was drawn: round 38z205, the
      same cache filled by the notebook's own checks.)
    * The result must derive from the inputs: an op made it, or wrote into it, from a tensor that does (the inputs
      do; an op that takes a tensor only for its shape, ``zeros_like``, does not pass it on). One computed elsewhere
      (NumPy) and handed back is refused.
    """

    # Ops that read a tensor argument for its shape, dtype or device only: what they make holds none of its values.
    SHAPE_ONLY = frozenset(("empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
                            "randint_like", "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full",
                            "empty_strided", "scalar_tensor"))

    def __init__(self, factor: float, record):
        self.factor, self.record = factor, record
        self.refusal: str | None = None
        self.held: dict[int, list] = {}  # storage address -> [float32 elements, a mask?, weak reference to it]
        self.made: dict[int, weakref.ref] = {}  # storages an op of this or an earlier graded call made, while alive
        self.derived: set[int] = set()  # storage addresses whose values derive from the inputs
        self.seen: set[int] = set()  # storage addresses an op of the call made or was given
        self.given: set[int] = set()  # the inputs' storages
        self.total = self.largest = self.inputs = self.tile = 0
        self.floor = MEMORY_FLOOR
        self.called = False  # a graded call began since the last result
        self.shared = False  # the call has detached a tensor (NumPy shares its memory)
        self.read = 0  # values the call has read out of tensors into Python
        self.foreign: str | None = None  # the first tensor that entered an op with no op of the call having made it
        import gc

        import torch

        # What is alive now, before the calls, holds nothing of their inputs (a subclass's methods would run its code)
        for t in gc.get_objects():
            if type(t) in (torch.Tensor, torch.nn.Parameter) and t.layout is torch.strided and not t.is_meta:
                storage = t.untyped_storage()
                ptr = storage.data_ptr()
                if ptr and ptr not in self.made:
                    self.made[ptr] = weakref.ref(storage, functools.partial(self._freed, ptr))

    def start(self, arguments, keywords: dict | None = None) -> None:
        """A graded call begins with ``arguments`` (``keywords`` among them, by name): its inputs derive from
        themselves. A call that names its tiles (``block_m``, ``block_n``) may hold ``factor`` of them beside what
        its inputs allow, and little else: a matrix of scores is refused where it is small too, once it outgrows
        both (keeping it only for small inputs is no way past the rule); one that does not, :data:`MEMORY_FLOOR`."""
        import torch

        tensors = [a for a in arguments if isinstance(a, torch.Tensor)]
        self.largest = max((a.numel() for a in tensors if a.is_floating_point()), default=1)
        self.inputs = sum(a.numel() for a in tensors if a.is_floating_point())
        bm, bn = ((keywords or {}).get(k) for k in ("block_m", "block_n"))
        if type(bm) is int and type(bn) is int and tensors and tensors[0].dim():
            # (a tile of scores, or of the accumulator: block_m rows of block_n scores or of d values)
            self.tile = self.factor * bm * max(bn, tensors[0].shape[-1])
            self.floor = MEMORY_SMALL
        else:
            self.tile, self.floor = 0, MEMORY_FLOOR
        self.held.clear()
        self.mask, self.wide, self.called = torch.bool, torch.float64, True
        self.given = {a.untyped_storage().data_ptr() for a in tensors}
        self.derived, self.seen, self.total = set(self.given), set(self.given), 0
        self.shared, self.read, self.foreign = False, 0, None

    def op(self, op: str, name: str, inputs: list, outputs: list, where: str, view: bool = False) -> None:
        """Follow one op (``name``: its name without namespace and overload; ``view``: it only views its input);
        raise :class:`Refused` when the call holds more than the rule allows."""
        if name == "detach" and not self.shared:  # (``.numpy()`` runs it, not an op)
            self.shared = True
            self.record("a tensor detached (.numpy(), .detach(), .data, or .view(dtype)): NumPy can then read and "
                        "write its memory, where the memory rule does not follow, so a person checks what it does")
            self._foreign()
        ptrs = [t.untyped_storage().data_ptr() for t in inputs]
        for t, ptr in zip(inputs, ptrs):
            if ptr not in self.seen:
                self.seen.add(ptr)
                if t.numel() > 1 and self.foreign is None and ptr not in self.made:
                    self.foreign = f"a tensor of {t.numel()} values"
                    self._foreign()
        derived = name not in self.SHAPE_ONLY and any(ptr in self.derived for ptr in ptrs)
        for t in outputs:
            storage = t.untyped_storage()
            ptr = storage.data_ptr()
            self.seen.add(ptr)
            if derived:
                self.derived.add(ptr)
            if ptr in self.given or not storage.nbytes() or (view and ptr not in self.held):
                continue
            entry = self.held.get(ptr)
            if entry is None:
                entry = self.held[ptr] = [0, t.dtype is self.mask, self.made.get(ptr) or weakref.ref(
                    storage, functools.partial(self._freed, ptr))]
                self.made[ptr] = entry[2]
            elif entry[1] and t.dtype is not self.mask:
                entry[1] = False  # a mask read as another dtype: each of its bytes holds a value now
            else:
                continue
            # (a bool holds one bit; a float64 value is one value, computed wider: the exercise's float32 may be
            # worked in float64; a storage of a few bytes counts as a whole float32 element)
            size = -(-storage.nbytes() // (32 if entry[1] else 8 if t.dtype is self.wide else 4))
            self.total += size - entry[0]
            entry[0] = size
            if size > max(self.factor * self.largest, self.tile, self.floor):
                self._refuse(where, f"torch's {op} made or read a {tuple(t.shape)} {str(t.dtype)[6:]} tensor on "
                             f"{storage.nbytes()} bytes ({size} float32 elements)",
                             f"{self.factor:g} times the largest input ({self.largest} elements)"
                             f"{f', or {self.tile} for its tiles' if self.tile else ''}")
        if self.total > max(self.factor * self.inputs + self.tile, self.floor):  # (a float32 copy of each input fits)
            self._refuse(where, f"the tensors it made and still held took {self.total} float32 elements at once "
                         f"(after torch's {op})", f"{self.factor:g} times all its inputs ({self.inputs} elements)"
                         f"{f' and {self.tile} for its tiles' if self.tile else ''}")

    def read_out(self, values: int, how: str) -> None:
        """The call read ``values`` values out of tensors into Python (``how``: ``tolist``, ``item``): past half its
        inputs and past the tensor the rule would let it hold whatever its inputs (its floor), recorded (the scores of
        every pair can be kept in Python's lists, where this rule does not follow)."""
        self.read += values
        if self.read > max(self.inputs / 2, self.floor) >= self.read - values:
            self.record(f"{self.read} values read out of tensors into Python ({how}), more than half of its inputs: "
                        "the memory rule follows what PyTorch holds, so a person checks that Python does not keep "
                        "every score")
        self._foreign()

    def _foreign(self) -> None:
        """Record the tensor no op of the call made, once values have also left PyTorch: detached, or read out past
        half the inputs (:meth:`read_out`'s bound). A few values read (``hidden.all().item()`` to skip a tile) carry
        too little of the inputs for a tensor made in Python to hold their scores (round 38z214: a tile's positions
        made by ``torch.tensor(list(range(...)))``, a mask by NumPy from the tile's indices)."""
        if self.foreign and (self.read > max(self.inputs / 2, self.floor) or self.shared):
            self.record(f"{self.foreign} not made by PyTorch's ops during the call (from NumPy, a Python list, a "
                        "buffer), while the call also took values out of PyTorch: the "
                        "memory rule follows only what PyTorch computes, so a person checks where its values come "
                        "from")
            self.foreign = ""  # (said once a call)

    def result(self, value, where: str) -> None:
        """The step returned ``value``: where it was a graded call, each of its tensors must derive from the inputs."""
        import torch

        called, self.called = self.called, False
        for t in () if not called else (value if isinstance(value, (tuple, list)) else (value,)):
            if isinstance(t, torch.Tensor) and t.numel() and t.untyped_storage().data_ptr() not in self.derived:
                self.refusal = (f"{where}: the result was not computed from the inputs by PyTorch's ops (it came "
                                "from NumPy, Python numbers or a buffer), where this exercise's memory rule follows "
                                "them: compute it with PyTorch, one tile at a time")
                raise Refused(self.refusal)

    def _freed(self, ptr: int, _ref) -> None:
        entry = self.held.pop(ptr, None)
        if entry is not None:
            self.total -= entry[0]
        self.derived.discard(ptr)
        self.made.pop(ptr, None)

    def _refuse(self, where: str, what: str, limit: str) -> None:
        self.refusal = (f"{where}: {what}, more than {limit}: this exercise computes one tile at a time, so its "
                        "memory grows with the inputs, not with the number of query-key pairs")
        raise Refused(self.refusal)


def _nothing() -> None:
    pass


class Others:
    """The grading kernel's other threads (ipykernel's output, control and shell threads, ZeroMQ's), held still
    while the graded calls run, so that one that runs is seen: the op watcher and the profile hook are the calling
    thread's, and a function handed to a thread the kernel already has would run out of their sight.

    What would wake a thread honestly is stopped first: output goes to nowhere (``sys.stdout``, ``sys.stderr``, and
    file descriptors 1 and 2, which ipykernel's pipe threads read) and what was pending is sent; each event loop on
    another thread waits in a function of this class's until the calls end. The kernel runs with no history thread,
    no parent poller and no heartbeat (:mod:`pagedlab.grading.run`). A thread ran when the
    number of times the system switched away from it changed (``/proc/self/task/*/status``), however short its work.
    """

    SETTLE_S = 5.0
    own: frozenset[int] = frozenset()  # native threads the grader itself started (:meth:`starting`): not watched

    def __init__(self, tripped: list):
        import io
        import threading
        import time

        self.me = threading.get_native_id()
        self.names = {t.native_id: t.name for t in threading.enumerate()}
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()  # (ipykernel's waits until its output thread has sent what was pending)
            except Exception:
                pass
        self.saved = (sys.stdout, sys.stderr, os.dup(1), os.dup(2))
        # A handler that kept the kernel's own stream (logging's) still writes to it: what it writes goes nowhere too,
        # and its flush does not wait for the output thread, which waits here (ipykernel's would, 10 s a flush).
        self.streams = [(stream, {name: vars(stream).get(name) for name in ("write", "flush")})
                        for stream in self.saved[:2] if hasattr(stream, "__dict__") and hasattr(stream, "pub_thread")]
        for stream, _ in self.streams:
            stream.write, stream.flush = len, _nothing
        sink = os.open(os.devnull, os.O_WRONLY)
        os.dup2(sink, 1), os.dup2(sink, 2), os.close(sink)
        sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
        # Each event loop the kernel runs on another thread (ipykernel's output, control and shell threads) is
        # handed one function that waits until the calls end: a function handed to that loop later cannot run
        # before it, and the loop's own timers (ipykernel's output thread wakes every 10 s) wait too.
        self.release = threading.Event()
        ioloop = sys.modules.get("tornado.ioloop")
        for loop in list(getattr(getattr(ioloop, "IOLoop", None), "_ioloop_for_asyncio", {}).values()):
            if getattr(loop.asyncio_loop, "_thread_id", None) not in (None, threading.get_ident()):
                parked = threading.Event()
                loop.add_callback(self._park, parked)
                parked.wait(self.SETTLE_S)
        # The cell's own messages (its "busy" status) may still be on their way out: wait until nothing runs and
        # nothing waits to run. (A thread ready to run but not given a core on a loaded machine switches no more
        # than a sleeping one, and neither does one that keeps a core to itself: only its state tells them apart.)
        end, busy = time.monotonic() + self.SETTLE_S, []
        while time.monotonic() < end:
            self.last = self.counts()
            time.sleep(0.02)
            busy = self.ran() or [f"{self.names.get(tid, 'a native one')} ({tid})" for tid in sorted(self.ready)]
            if not busy:
                break
        if busy:
            tripped.append(f"the kernel's thread(s) {', '.join(busy)} kept running when the graded calls began: "
                           "work there is out of the op watcher's sight")
        # (:meth:`ran` left ``self.last``, what the first call is compared with: from here on no moment goes unseen)

    def starting(self, make, *args):
        """``make(*args)``, whose new native threads are the grader's own and not watched: torch's profiler starts
        one (round 38z20: it wakes every 5 s, runs no Python, and once woke during ex10's longest call). A thread of
        the notebook's that ran meanwhile, to start one of its own then, is seen by the next :meth:`ran`."""
        import threading

        before = set(os.listdir("/proc/self/task"))
        made = make(*args)
        python = {t.native_id for t in threading.enumerate()}
        self.own = self.own | {int(tid) for tid in set(os.listdir("/proc/self/task")) - before} - python
        return made

    def _park(self, parked) -> None:
        parked.set()
        self.release.wait()

    def counts(self) -> dict[int, int]:
        """Each other thread of this process (its id) and how many times the system switched away from it; which
        of them are running or ready to run is left in ``self.ready``."""
        out, self.ready = {}, set()
        for tid in os.listdir("/proc/self/task"):
            if int(tid) == self.me or int(tid) in self.own:
                continue
            try:
                with open(f"/proc/self/task/{tid}/status") as f:
                    lines = f.read().splitlines()
            except OSError:  # (it ended)
                continue
            if lines and lines[0].split()[-1].startswith(("cuda", "ZMQbg/")):
                # CUDA's own threads wake on their own, and ZeroMQ's I/O threads move the kernel's messages on the
                # network; neither runs Python. Renaming a thread takes /proc or prctl (reviewed)
                continue
            out[int(tid)] = sum(int(line.split()[1]) for line in lines
                                if line.split(":")[0].endswith("ctxt_switches"))
            if any(line.split()[:2] == ["State:", "R"] for line in lines):
                self.ready.add(int(tid))
        return out

    def ran(self) -> list[str]:
        """The threads that ran, began or ended since the last look (the settling before the calls, or the end of
        the call before: work between two calls is seen too), by name."""
        before, after = self.last, self.counts()
        self.last = after
        return [f"{self.names.get(tid, 'a native one')} ({tid})" for tid in sorted(set(before) | set(after))
                if before.get(tid) != after.get(tid)]

    def close(self) -> None:
        self.release.set()
        for stream, own in self.streams:
            for name, value in own.items():
                if value is None:
                    vars(stream).pop(name, None)  # (the class's method again)
                else:
                    setattr(stream, name, value)
        sys.stdout, sys.stderr, out, err = self.saved
        os.dup2(out, 1), os.dup2(err, 2), os.close(out), os.close(err)


class Launches:
    """Triton's launch path, watched during graded calls: which storages a ``@triton.jit`` kernel defined in the
    notebook (``__main__``) wrote, what they held right after, and what it read.

    Both the interpreter's and the compiled launcher's ``run`` are wrapped; a launch of any other kernel (the
    course's own, were it reachable) writes nothing that counts. In the interpreter the kernel's loads and stores
    are seen address by address: a storage it stored into counts as written, even where the values were already
    there (memory reused from an earlier, equal result, or fresh zeros for a zero result). A compiled launch shows
    only the storages it was given, and those whose bytes it changed.
    """

    def __init__(self, put, record, sources: Sources | None = None, full_precision: bool = False):
        self.full_precision = full_precision  # every tl.dot of float32 operands must ask for float32 products
        self.loose_dot = ""  # the precision a tl.dot of float32 operands asked for in the call, where not float32
        self.written: dict[int, object] = {}  # storage address -> its bytes right after the notebook's kernel
        self.given: dict[int, int] = {}  # storage address -> its size in bytes, of each tensor the kernel was given
        self.current: dict[int, int] = {}  # the same, of the tensors the running launch was given
        self.reads: list = []  # the addresses its loads read (interpreted launches)
        self.accesses: list = []  # the current launch's loads and stores in order: (is a store, addresses)
        self.compiled = False  # a compiled launch ran: its loads cannot be seen
        self.arguments: list = []  # the graded call's arguments, as it passes them (before any launch)
        self.given_bytes: dict = {}  # the bytes under each of those tensors then, by storage address
        self.foreign: list[str] = []  # floating-point tensors read that neither the call passed nor a kernel wrote
        self.fills: dict[int, float] = {}  # storage address -> the constant PyTorch filled it with in this call
        self.copies: set[int] = set()  # storage addresses PyTorch copied whole from what the kernel wrote
        self.stores: list = []  # the addresses its stores wrote, every launch of the graded call (interpreted)
        self.held: Held | None = None  # what the interpreter computes with, as the setup cells left it
        self.undo: list = []  # what the grader itself wrapped: (owner, name, the original, whether its own)
        self.strays: list = []  # the addresses loads read outside every tensor their launch was given (interpreted)
        self.unmasked = 0  # how many of them a load without a mask read
        self.grids: list = []  # the grids of the notebook's kernel's launches, where given as a tuple
        self.floats: set = set()  # the floating-point scalars and strings its launches were given
        self.constants: dict = {}  # the numbers its kernels load as globals, by name, at the call's first launch
        self.host = True  # every tensor its launches were given is in this process's memory (the CPU)
        self.where = ""  # the graded call, for a refusal raised inside a launch
        self.computed = ""  # the first op by which PyTorch computed floating-point values in the call, if any
        self.refusal = ""  # a refusal raised inside a launch (the interpreter wraps the exception)
        self.inside = False
        self.launch: tuple | None = None  # (tensors, their bytes, the kernel) of the interpreted launch under way
        self.programs: frozenset = frozenset()  # while its programs run: the code the interpreter runs for the kernel
        self.record = record
        self.sources = sources  # the notebook's cells as handed in: a kernel's body must be built from them
        for module, cls in (("triton.runtime.interpreter", "InterpretedFunction"), ("triton.runtime.jit", "JITFunction")):
            try:
                owner = getattr(importlib.import_module(module), cls)
            except (ImportError, AttributeError):
                continue
            put(owner, "run", self._watch(owner.run, compiled=cls == "JITFunction"))
        builder = getattr(sys.modules.get("triton.runtime.interpreter"), "interpreter_builder", None)
        if builder is not None:  # every load of the interpreter (plain, masked, block pointer) goes through it
            put(builder, "set_grid_dim", self._programs_start(builder.set_grid_dim))
            put(builder, "create_masked_load", self._watch_memory(builder.create_masked_load, False, 0))
            put(builder, "create_masked_store", self._watch_memory(builder.create_masked_store, True, 1))
            if full_precision and hasattr(builder, "create_dot"):
                put(builder, "create_dot", self._watch_dot(builder.create_dot))
            for name, at in (("create_atomic_rmw", (1, 3)), ("create_atomic_cas", (0, None))):  # (their own route)
                if hasattr(builder, name):
                    put(builder, name, self._watch_atomic(getattr(builder, name), *at))
        interpreter = sys.modules.get("triton.runtime.interpreter")
        self.rewriter = getattr(interpreter, "FunctionRewriter", None)
        self.bodies: dict = {}  # id of a function the interpreter runs -> (it and its parts, what is wrong with it)
        self.rebuilt_codes: set = set()  # the code of those it rebuilt as the grader rebuilds them, nested code too
        self.rebuilding: str | None = None  # while the interpreter rebuilds a function: the file it is named after
        self.notebook = vars(sys.modules["__main__"])  # (the notebook's globals, whatever its __name__ says)
        self.vetted: dict = {}  # id of code run inside the programs -> (it, what is wrong with it): judged once
        self.fine: dict = {}  # id of code found the library's inside the programs -> (it, the globals it ran with)
        function = getattr(interpreter, "InterpretedFunction", None)
        if function is not None and self.rewriter is not None:  # (a jit function called inside a kernel: tl.softmax)
            put(function, "__call__", self._checked_call(function.__call__))

    def reset(self, where: str = "") -> None:
        self.written.clear(), self.given.clear(), self.reads.clear(), self.arguments.clear(), self.foreign.clear()
        self.given_bytes.clear()
        self.stores.clear(), self.strays.clear(), self.grids.clear(), self.floats.clear(), self.current.clear()
        self.unmasked = 0
        self.constants.clear(), self.fills.clear(), self.copies.clear()
        self.compiled, self.host, self.where, self.refusal, self.computed = False, True, where, "", ""
        self.loose_dot = ""

    def filled(self, outputs: list, value) -> None:
        """PyTorch filled ``outputs`` with the constant ``value``: the kernel may read it. The constant counts with
        the call's floating-point scalars (a fill is another way to hand a kernel a number)."""
        if not isinstance(value, (int, float)):
            return
        for t in outputs:  # (a fill of part of a storage puts a chosen value at chosen places: data, not a constant)
            if t.numel() * t.element_size() == t.untyped_storage().nbytes():
                self.fills[t.untyped_storage().data_ptr()] = value
        if any(t.is_floating_point() or t.is_complex() for t in outputs) and _counted(value) is not None:
            self.floats.add(_counted(value))  # (an integer written into floats is the float it becomes)
        if len(self.floats) > MAX_FLOATS and not self.refusal:
            self.refusal = (f"{self.where}: the notebook's launcher filled tensors with, or gave its Triton kernel, "
                            f"{len(self.floats)} different floating-point constants in one graded call: a kernel's "
                            f"data comes through its tensors (at most {MAX_FLOATS} constants, infinities, 0 and 1 not "
                            "counted)")
            raise Refused(self.refusal)

    def copied(self, source, copy, torch) -> None:
        """PyTorch copied ``source`` into ``copy`` (``.contiguous()`` of a transposed output, a dtype conversion):
        where the notebook's kernel wrote every element of ``source`` (or left it zero), unchanged since, the copy
        counts as the kernel's result too."""
        wrote = self.written.get(source.untyped_storage().data_ptr())
        if wrote is None or not source.is_floating_point() or _bytes(source) != wrote:
            return
        if source.untyped_storage().data_ptr() not in self.copies:  # (a copy of a copy: checked when first made)
            missing = self._unstored(source, torch)
            if missing is None or bool((source.detach()[torch.from_numpy(missing)] != 0).any()):
                return
        self.written[copy.untyped_storage().data_ptr()] = _bytes(copy)
        self.copies.add(copy.untyped_storage().data_ptr())

    def keep(self, arguments: tuple, keywords: dict | None = None) -> None:
        """Note the graded call's ``arguments`` as it passes them, and the bytes under each tensor among them."""
        self.arguments.extend(arguments)
        self.given_bytes.update((a.untyped_storage().data_ptr(), _bytes(a)) for a in arguments
                                if hasattr(a, "untyped_storage"))

    def _watch_memory(self, access, store: bool, mask_at: int):
        """``access`` (the interpreter's masked load, or store) recording the addresses it touches in
        :attr:`accesses` (a load's in :attr:`reads` too); its mask is the argument after ``mask_at`` more (a load's
        comes right after the pointers, a store's after the value)."""
        import numpy

        def watched(ptrs, *args, **kwargs):
            if self.inside:
                mask = args[mask_at]
                data = numpy.atleast_1d(ptrs.data)
                taken = data if mask is None else data[numpy.broadcast_to(numpy.atleast_1d(mask.data), data.shape)]
                self.accesses.append((store, taken.astype(numpy.uint64)))
                if not store:
                    self.reads.append(self.accesses[-1][1])
                    outside = self._outside_of(self.accesses[-1][1])
                    if outside.any():  # (a tensor an earlier launch was given is outside: each launch reads its own)
                        self.strays.append(self.accesses[-1][1][outside])
                        self.unmasked += int(outside.sum()) if mask is None else 0
                else:
                    self.stores.append(self.accesses[-1][1])
                    outside = self._outside_of(self.accesses[-1][1]) if self.host else None
                    if outside is not None and outside.any():
                        # stopped BEFORE the store: in the interpreter it would write over this process's memory
                        # (another tensor, the allocator's own records) and crash the kernel, or worse
                        self.refusal = (f"{self.where}: the notebook's Triton kernel stored {int(outside.sum())} "
                                        "element(s) outside every tensor its launch was given, stopped before they "
                                        "were written (in the interpreter they would overwrite this process's memory "
                                        "and kill the kernel): a pointer moved too far (a batch or head index times the "
                                        "wrong stride, batch and head taken from program id 1 the wrong way round, a "
                                        "program past the last tile) or a store's mask that lets rows past the end "
                                        f"through{self._past(self.accesses[-1][1][outside])}")
                        raise Refused(self.refusal)
            return access(ptrs, *args, **kwargs)
        return watched

    def _watch_dot(self, dot):
        """``dot`` (the interpreter's ``tl.dot``, ``(a, b, acc, input_precision, max_num_imprecise_acc)``) noting a
        product of float32 operands asked for in less than float32: the interpreter computes it in float32 anyway,
        so only the request shows what a GPU would do (TF32 by default: about 1e-3 relative error)."""
        def watched(a, b, *args):
            if self.inside and not self.loose_dot and len(args) > 1 and "IEEE" not in str(args[1]).upper() and any(
                    getattr(getattr(x, "dtype", None), "name", "") == "fp32" for x in (a, b)):
                self.loose_dot = str(args[1]).rpartition(".")[2].lower() or "the default"
            return dot(a, b, *args)
        return watched

    def _programs_start(self, set_grid_dim):
        """``set_grid_dim`` (the interpreter's, called once per launch just before the kernel's first program, after
        Triton ran the launch's grid function and pre-run hooks, Python of the notebook's): the launch's tensors are
        read again there, so what that Python wrote into them counts as written before the kernel ran."""
        def watched(*args):
            if self.launch is not None:
                tensors, before, kernel = self.launch
                before.update({t.untyped_storage().data_ptr(): _bytes(t) for t in tensors})
                self._unchanged_inputs(tensors, before)
                changed = (self.held.changed({(id(o), a) for o, a, *_ in self.undo})
                           if self.held is not None and not self.refusal else [])
                if changed:
                    self.refusal = (f"{self.where}: what Triton's interpreter computes with was changed after the "
                                    f"setup cells ({', '.join(changed)}): the kernel's values would be the notebook's "
                                    "Python's, not the kernel's work")
                    raise Refused(self.refusal)
                self.programs = _kernel_codes(kernel)  # (from here on, only these of the notebook's may run)
                sys.setprofile(self._in_programs())  # (taken off when the launch returns)
            return set_grid_dim(*args)
        return watched

    def _in_programs(self):
        """A profile hook while a launch's programs run: code other than the kernel's own that is the notebook's (a
        cell's, or run with the notebook's globals, or compiled from a text while it ran: one the interpreter calls in
        place of a library's, ``numpy.exp`` replaced) is refused. Judged by the code, not by the ``__name__`` its
        globals hold (which a ``for __name__ in ...`` rebinds); each code object once, and once found the library's,
        passed at the cost of a lookup while it runs with the same globals (the interpreter makes millions of calls:
        the whole judgement on each made a launch four times slower)."""
        # (by id: a code object's hash is computed again at each lookup, from its bytecode and constants)
        programs, fine, judge = frozenset(map(id, self.programs)), self.fine, self._judge

        def hook(frame, event, arg) -> None:
            if event != "call":
                return
            code, where = id(frame.f_code), frame.f_globals
            if code in programs or (fine.get(code, (None, None))[1] is where and where.get("__name__") != "__main__"):
                return
            if judge(frame):
                fine[code] = (frame.f_code, where)  # (the code kept alive: its id stays its own)
        return hook

    def _judge(self, frame) -> bool:
        """Whether the code ``frame`` runs inside the programs is not the notebook's (:meth:`_in_programs`); if it is,
        the launch is refused."""
        if self.refusal:
            return False
        if frame.f_code.co_name == "<module>" and frame.f_code.co_filename == self.rebuilding:
            return False  # (the interpreter defining a body it rebuilt from that file's text: :meth:`rebuilt`)
        seen = self.vetted.get(id(frame.f_code))
        if seen is None:
            seen = self.vetted[id(frame.f_code)] = (frame.f_code, self._foreign(frame))
        if seen[1] or frame.f_globals is self.notebook or frame.f_globals.get("__name__") == "__main__":
            self.refusal = (f"{self.where}: Python of the notebook's ({frame.f_code.co_qualname}) ran inside its "
                            "Triton kernel's programs (a library function the interpreter calls, replaced by the "
                            "notebook's): what it computes is not the kernel's work")
            return False
        return True

    def _foreign(self, frame) -> bool:
        """Whether the code ``frame`` runs is the notebook's: a cell's, or not what its file compiles to, or compiled
        while it ran from a text that is neither a file nor a cell (:meth:`Sources.foreign`); the bodies Triton's
        interpreter rebuilds, named after their files, are judged apart (:meth:`rebuilt`)."""
        if _cell_text(frame.f_code.co_filename) is not None:
            return True
        return (frame.f_code not in self.rebuilt_codes and self.sources is not None
                and self.sources.foreign(frame) is not None)

    def _checked_call(self, call):
        """``call`` (the interpreter's call of a jit function inside a kernel: ``tl.softmax(x)``), run only when what
        it will run is what the interpreter builds from the function's text (:meth:`rebuilt`)."""
        def checked(jit, *args, **kwargs):
            problem = self.rebuilt(jit) if self.inside and not self.refusal else None
            if problem:
                self.refusal = f"{self.where}: {problem}"
                raise Refused(self.refusal)
            return call(jit, *args, **kwargs)
        return checked

    def rebuilt(self, jit) -> str | None:
        """Why the function Triton's interpreter runs for ``jit`` (the notebook's kernel, a jit function it calls, or
        Triton's own ``tl.softmax``) is not the one the interpreter builds from that function's text, else None.

        The interpreter keeps what it built in a dict of its class's (``rewritten_fn``) and runs what it finds there:
        a callable the notebook put there (``functools.partial(next, tiles)``, which no profile hook sees run) would
        hand out values computed before the launch. So ``jit`` may hide none of its class's attributes, and what it
        will run must be a function with the code, globals and defaults of the grader's own rebuild, from the cell's
        text or from the file's on disk (not the line cache's copy of it)."""
        import types

        fn = getattr(jit, "fn", None)
        name = f"the Triton function {getattr(fn, '__name__', type(jit).__name__)}"
        hidden = [k for k in vars(jit) if not isinstance(getattr(type(jit), k, ""), (str, type(None)))]  # (not __doc__)
        if hidden:
            return (f"{name}: an attribute of its own ({hidden[0]}) hides its class's, which Triton's interpreter "
                    "calls: what it runs would not be what it builds from the function's text")
        if type(fn) is not types.FunctionType:
            return f"{name}: a {type(fn).__name__} in place of the Python function Triton builds a kernel from"
        self.rebuilding = fn.__code__.co_filename
        try:
            kept = type(jit).rewrite(jit)  # (what the interpreter runs: built now if not yet, as it builds it)
            parts = (kept, getattr(kept, "__code__", None), getattr(kept, "__defaults__", None),
                     getattr(kept, "__kwdefaults__", None))
            seen = self.bodies.get(id(kept))
            if seen is None or any(a is not b for a, b in zip(seen[0], parts)):
                seen = self.bodies[id(kept)] = (parts, self._body_problem(fn, kept))
                if not seen[1] and parts[1] is not None:
                    self.rebuilt_codes |= _nested(parts[1])
        finally:
            self.rebuilding = None
        return f"{name}: {seen[1]}" if seen[1] else None

    def _body_problem(self, fn, kept) -> str | None:
        """Why ``kept`` is not what the interpreter builds from the text of ``fn``, else None."""
        import linecache
        import types

        why = (f"a {type(kept).__name__} kept where Triton's interpreter keeps the function it builds from the "
               "function's text, and runs it")
        if type(kept) is not types.FunctionType:
            return why
        file = fn.__code__.co_filename
        held = linecache.cache.pop(file, None) if os.path.isfile(file) else None  # (the file's own text, read anew)
        try:
            fresh = self.rewriter(fn).rewrite_ast()
        except Exception:  # (no text it can be built from: what is kept cannot be its)
            return why
        finally:
            if held is not None:
                linecache.cache[file] = held
        if fresh is fn:  # (no text: the interpreter runs the function itself, as Python the profile hook sees)
            return None if kept is fn else why
        same = (fresh.__code__ == kept.__code__ and fresh.__code__.co_filename == kept.__code__.co_filename
                and fresh.__globals__ is kept.__globals__ and kept.__closure__ is None
                and _same_values(fresh.__defaults__, kept.__defaults__)
                and _same_values(fresh.__kwdefaults__, kept.__kwdefaults__))
        return None if same else why

    def _watch_atomic(self, access, ptrs_at: int, mask_at: int | None):
        """``access`` (an atomic of the interpreter's, which reads memory and writes it back), recording its
        addresses as a load's and a store's (:meth:`_watch_memory`): what it reads is read, however it is used."""
        load, store = (self._watch_memory(lambda *args: None, kind, 0) for kind in (False, True))

        def watched(*args):
            mask = args[mask_at] if mask_at is not None else None
            load(args[ptrs_at], mask), store(args[ptrs_at], mask)
            return access(*args)
        return watched

    def _watch(self, run, compiled: bool):
        def watched(fn, *args, **kwargs):
            if getattr(getattr(fn, "fn", None), "__module__", None) != "__main__":
                return run(fn, *args, **kwargs)
            if self.computed:
                # Values PyTorch computed reach the result only through a later launch, or by being written into
                # the result (which :meth:`check` refuses): a check of the result after the last launch is free.
                self.refusal = (f"{self.where}: PyTorch computed floating-point values during the call "
                                f"({self.computed}), before the notebook's Triton kernel was launched: this exercise "
                                "is graded on its Triton kernel, and until its last launch PyTorch may only allocate, "
                                "copy and view memory for it (the kernel computes every value; a check of its result "
                                "may follow)")
                raise Refused(self.refusal)
            problem = self.sources.kernel_problem(fn) if self.sources is not None else None
            if problem:
                self.record(f"{problem}: the code Triton runs is not the code the notebook shows")
            problem = self.rebuilt(fn) if not compiled else None
            if problem:
                self.refusal = f"{self.where}: {problem}"
                raise Refused(self.refusal)
            calls, constants = _python_calls(fn)
            params = set(getattr(fn, "arg_names", ()))  # the kernel's arguments, not the launcher's (grid, warmup)
            values = [a.value if type(a).__name__ == "constexpr" and type(a).__module__.startswith("triton") else a
                      for a in (*args, *(v for k, v in kwargs.items() if k in params))]  # a tl.constexpr: what it holds
            calls += [f"an argument {type(v).__name__}" for v in values
                      if callable(v) and not hasattr(v, "untyped_storage") and type(v).__module__.split(".")[0]
                      not in ("triton", "torch")]
            other = [type(v).__name__ for v in _flat(values) if not callable(v) and not _plain_argument(v)]
            if other and not calls:
                self.refusal = (f"{self.where}: the notebook's Triton kernel was given an argument of type {other[0]}: "
                                "a kernel's arguments are torch's tensors, numbers, strings and Triton's constants (its "
                                "data comes through its tensors; Triton's interpreter hands anything else to the kernel "
                                "as it is, where a GPU compiles no such argument, and calls a tensor subclass's "
                                "methods, Python of the notebook's, inside the launch)")
                raise Refused(self.refusal)
            if calls:  # stopped before the interpreter runs that Python: what it writes is not the kernel's work
                self.refusal = (f"{self.where}: the notebook's Triton kernel calls Python from inside it ("
                                f"{', '.join(dict.fromkeys(calls))}): Triton's interpreter runs that, a GPU compiles "
                                "no such call, and what it computes is not the kernel's work")
                raise Refused(self.refusal)
            tensors = [a for a in (*args, *kwargs.values()) if hasattr(a, "untyped_storage")]
            self.host &= all(t.device.type == "cpu" for t in tensors)
            if isinstance(kwargs.get("grid"), tuple):
                self.grids.append(tuple(kwargs["grid"]))
            before = {t.untyped_storage().data_ptr(): _bytes(t) for t in tensors}
            self._unchanged_inputs(tensors, before)
            self.current = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}
            self.given.update(self.current)
            self.compiled |= compiled
            self.accesses.clear()
            earlier = list(self.stores)
            scalars = [float(v) if isinstance(v, numbers.Real) else v for v in _flat(values)  # (in tuples too)
                       if isinstance(v, (numbers.Number, str, bytes)) and not isinstance(v, numbers.Integral)]
            text = max((len(v) for v in scalars if isinstance(v, (str, bytes))), default=0)
            if text > MAX_TEXT:
                self.refusal = (f"{self.where}: the notebook's Triton kernel was given a string of {text} characters: "
                                "a kernel's data comes through its tensors, and a string argument is a short constant "
                                "(a name)")
                raise Refused(self.refusal)
            # (infinities, zero and one are markers, not data: -inf as a running max's start, 1.0 as a default)
            self.floats.update(_counted(v) for v in scalars if _counted(v) is not None)
            # (a global is a constant handed over another way: 512 of them hold an answer as well as arguments do)
            self.floats.update(_counted(v) for _, v in constants if isinstance(v, float) and _counted(v) is not None)
            changed = [name for name, v in constants if self.constants.setdefault(name, v) != v]
            if changed:
                self.refusal = (f"{self.where}: a global the notebook's Triton kernel reads ({changed[0]}) changed "
                                "between its launches in one graded call: a kernel's data comes through its tensors, "
                                "and a global is a constant")
                raise Refused(self.refusal)
            if len(self.floats) > MAX_FLOATS:
                self.refusal = (f"{self.where}: the notebook's Triton kernel was given {len(self.floats)} different "
                                "floating-point scalars or strings in one graded call (its arguments and the "
                                "globals it reads): a kernel's "
                                "data comes through its tensors, and a scalar is a constant of the call (a scale, "
                                f"log2(e)); at most {MAX_FLOATS}, infinities, 0 and 1 not counted")
                raise Refused(self.refusal)
            self.inside, self.launch = True, None if compiled else (tensors, before, fn)
            try:
                result = run(fn, *args, **kwargs)
            finally:
                if self.programs:
                    sys.setprofile(None)
                self.inside, self.launch, self.programs = False, None, frozenset()
            if not compiled:
                self._provenance(tensors, before, earlier)
            for t in tensors:
                after = _bytes(t)
                if after != before.get(t.untyped_storage().data_ptr()) or (not compiled and self._stored_in(t)):
                    self.written[t.untyped_storage().data_ptr()] = after
            return result
        return watched

    def _unchanged_inputs(self, tensors, before: dict) -> None:
        """Refuse a launch given one of the graded call's own tensors with other bytes than the call passed (and
        than the notebook's kernel last stored there), unless all zeros (an output cleared first): values computed
        outside the kernel and written into an input, for the kernel to copy, are not the kernel's work."""
        for t in tensors:
            ptr = t.untyped_storage().data_ptr()
            now = before[ptr]
            if ptr in self.given_bytes and now not in (self.given_bytes[ptr], self.written.get(ptr)) and now.strip(
                    b"\0"):
                self.refusal = (f"{self.where}: the notebook's Triton kernel was launched with a tensor of the graded "
                                f"call's own (shape {tuple(t.shape)}) whose values were changed outside the kernel "
                                "after the call passed it: the kernel must compute the result from the inputs as "
                                "given, not read values computed elsewhere and written into them")
                raise Refused(self.refusal)

    def _provenance(self, tensors, before: dict, earlier: list) -> None:
        """Note each tensor from which this launch loaded values that came from outside the kernel: a tensor that
        is not the graded call's own (an argument, or a view of one), nor an integer copy of one's values (block
        tables or lengths cast to int32), whose loaded elements were not all zero, nor stored by the notebook's
        kernel (``earlier``: the addresses earlier launches of this call stored, their bytes unchanged since; or this
        launch, before the load). Values PyTorch or Python computed and handed to the kernel to copy, into a tensor
        of its own (of any dtype: an integer view of floats is bit-cast back in one instruction), into a tensor the
        kernel also stored a few elements of, or into the output itself, are such values; a kernel that reads back
        what it stored (a second pass over its output) is not."""
        import numpy

        own = set(self.given_bytes)  # the storages the call passed (``x.set_(other)`` later makes no other its own)
        for t in tensors:
            ptr, width = t.untyped_storage().data_ptr(), t.element_size()
            size = t.untyped_storage().nbytes() // width * width  # (a storage of 4n + 1 bytes read as float32: n)
            if ptr in own or not _touches(self.reads, t):
                continue
            now = numpy.frombuffer(before.get(ptr, bytes(size))[:size], dtype=numpy.uint8).reshape(-1, width)
            if ptr in self.fills:  # filled whole: elements still holding that constant (other values were put there)
                known = (now == _element(self.fills[ptr], t.dtype)).all(axis=1)
            else:  # zero elements: nothing from outside to copy (an accumulator cleared first)
                known = ~now.any(axis=1)
            if not t.is_floating_point() and self._copies_an_argument(t):  # the view's own elements, not its storage's
                known[_storage_index(t).reshape(-1)] = True
            wrote = self.written.get(ptr)
            if wrote is not None:  # stored by an earlier launch, and still holding what that launch left there
                same = (numpy.frombuffer(wrote[:size], dtype=numpy.uint8).reshape(-1, width) == now).all(axis=1)
                hit = numpy.zeros(len(known), dtype=bool)
                for addresses in earlier:
                    hit[self._elements(addresses, ptr, size, width)] = True
                known |= hit & same
            for is_store, addresses in self.accesses:
                index = self._elements(addresses, ptr, size, width)
                if is_store:
                    known[index] = True
                elif not known[index].all():
                    self.foreign.append(f"a tensor of shape {tuple(t.shape)}")
                    break

    @staticmethod
    def _elements(addresses, ptr: int, size: int, width: int):
        """The element indices (of ``width`` bytes) of the storage at ``ptr`` among ``addresses``."""
        import numpy

        inside = addresses[(addresses >= numpy.uint64(ptr)) & (addresses < numpy.uint64(ptr + size))]
        return ((inside - numpy.uint64(ptr)) // numpy.uint64(width)).astype(numpy.int64)

    def _copies_an_argument(self, t) -> bool:
        """Whether integer tensor ``t`` holds the values of one of the graded call's integer tensors, in order."""
        return any(hasattr(a, "is_floating_point") and not a.is_floating_point() and a.numel() == t.numel()
                   and bool((a.reshape(-1).long() == t.reshape(-1).long()).all()) for a in self.arguments)

    def check(self, value, arguments, torch, where: str) -> None:
        """Raise :class:`Refused` unless every floating-point tensor in ``value`` (a tensor, or a tuple or list of
        them) lies in a storage the notebook's kernel wrote, unchanged since, and the kernel read each floating-point
        tensor among the graded call's ``arguments`` where it lies (not a copy of it: every Triton exercise reads
        its inputs in place), and read no floating-point values from outside it (:meth:`_provenance`); a refusal
        raised inside a launch stands even where the notebook caught it."""
        import numpy

        if self.refusal:
            raise Refused(self.refusal)
        if self.loose_dot:
            raise Refused(f"{where}: a tl.dot of the notebook's Triton kernel multiplies float32 values in "
                          f"{self.loose_dot.upper()} (its input_precision): on a GPU its products lose float32's "
                          "precision (about 1e-3 relative error, past this exercise's tolerance), though Triton's "
                          "interpreter computes them in float32 anyway. The exercise asks for "
                          "input_precision=\"ieee\" on every tl.dot")
        for t in value if isinstance(value, (tuple, list)) else (value,):
            if not isinstance(t, torch.Tensor) or not t.is_floating_point() or t.numel() == 0:
                continue
            wrote = self.written.get(t.untyped_storage().data_ptr())
            if wrote is None and t.untyped_storage().data_ptr() in self.given:
                grids = f" (its grid{'s' if len(set(self.grids)) > 1 else ''}: " \
                        f"{', '.join(str(g) for g in dict.fromkeys(self.grids))})" if self.grids else ""
                raise Refused(f"{where}: its result was not written by a @triton.jit kernel defined in the notebook: "
                              f"the notebook's kernel was launched with it{grids} but stored none of its "
                              f"{t.numel()} elements. A grid with no program along a dimension (a count of tiles "
                              "rounded down, n // BLOCK, is 0 when n < BLOCK: cdiv(n, BLOCK) counts a last partial "
                              "tile), or stores masked off")
            if wrote is None:
                by = f": PyTorch computed floating-point values during the call ({self.computed})" \
                    if self.computed else ""
                raise Refused(f"{where}: its result was not written by a @triton.jit kernel defined in the notebook"
                              f"{by} (this exercise is graded on its Triton kernel: PyTorch alone does not count)")
            if _bytes(t) != wrote:
                raise Refused(f"{where}: its result was changed after the notebook's Triton kernel wrote it")
            missing = self._unstored(t, torch)
            if missing is not None and bool((t.detach()[torch.from_numpy(missing)] != 0).any()):
                # the kernel stored into this storage, but not these elements, and they are not the zeros of a
                # cleared output: their values were put there by something else (or left from torch.empty)
                raise Refused(f"{where}: its result holds values the notebook's Triton kernel never stored: "
                              f"{int(missing.sum())} of its {missing.size} elements, {_positions(missing)}, were "
                              "not written by the kernel and are not zeros: values computed outside it, or memory "
                              "left as torch.empty gave it where the grid or a store's mask does not reach")
        if self.foreign:
            raise Refused(f"{where}: the notebook's Triton kernel read values computed outside it ("
                          f"{', '.join(dict.fromkeys(self.foreign))}: neither an input of the graded call nor "
                          "written by the kernel): the kernel must compute the result from the inputs, not copy it")
        outside = self._outside()
        if outside:
            if self.unmasked:
                raise Refused(f"{where}: the notebook's Triton kernel read {outside} element(s) outside every tensor "
                              f"its launch was given, {self.unmasked} of them by a load without a mask (or with the "
                              "wrong one): "
                              "on a GPU that reads another allocation's memory, or faults")
            # every load that strayed had a mask: the mask let the addresses through, so they are where the pointer
            # put them; a wrong offset and a wrong mask both give that, and the message says both, the offset first
            raise Refused(f"{where}: the notebook's Triton kernel read {outside} element(s) outside every tensor its "
                          "launch was given, through masked loads: their pointers lie past the tensor (a batch or head "
                          "offset times another tensor's stride, or the wrong head count), or a mask lets rows past "
                          "the end through; on a GPU that reads another allocation's memory, or faults"
                          f"{self._past(numpy.concatenate(self.strays))}")
        for n, t in enumerate(arguments, 1):
            if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel() and not self._read(t):
                raise Refused(f"{where}: the notebook's Triton kernel never read argument {n} (a tensor of shape "
                              f"{tuple(t.shape)}) where it lies: it read a copy (.contiguous(), .clone()), or "
                              "computed the result from something else")

    def _outside(self) -> int:
        """How many of the interpreted loads' addresses lie in no storage their launch was given (0 where the loads
        were not seen)."""
        return 0 if self.compiled else sum(len(a) for a in self.strays)

    def _outside_of(self, addresses):
        """Which of ``addresses`` (a numpy array) lie in no storage the running launch was given."""
        import numpy

        inside = numpy.zeros(addresses.shape, dtype=bool)
        for lo, size in self.current.items():
            inside |= (addresses >= numpy.uint64(lo)) & (addresses < numpy.uint64(lo + size))
        return ~inside

    def _past(self, addresses) -> str:
        """``" (the first N bytes past a tensor's end)"`` for the lowest of ``addresses`` (outside
        every storage given), measured from the nearest given storage that ends below it; ``""`` if none does."""
        if not len(addresses):
            return ""
        first = int(addresses.min())
        ends = [(lo + size, size) for lo, size in self.given.items() if lo + size <= first]
        if not ends:
            return ""
        end, size = max(ends)
        return f" (the first {first - end} bytes past a tensor's end)"

    def unwritten(self, value, torch) -> str:
        """Which elements of a graded result (a tensor, or a tuple or list of them) the notebook's kernel never
        stored into, in interpreted launches that did store into it: ``""`` when none, or where stores were not
        seen. Not a refusal when they hold zeros (an output zeroed first may keep zeros it was right not to store:
        :meth:`check` refuses other values); the grader says it when the result differs."""
        for n, t in enumerate(value if isinstance(value, (tuple, list)) else (value,)):
            missing = self._unstored(t, torch)
            if missing is not None and missing.any():
                which = "its result" if not isinstance(value, (tuple, list)) else f"result {n} of its {len(value)}"
                return (f"the notebook's kernel never wrote {int(missing.sum())} of the {missing.size} elements of "
                        f"{which}, {_positions(missing)}: its grid may not cover them (a count of tiles rounded "
                        f"down, n // BLOCK, drops a last partial tile: cdiv(n, BLOCK) counts it), or a store's mask "
                        f"leaves them out")
        return ""

    def _unstored(self, t, torch):
        """A boolean numpy array shaped like tensor ``t``: True where no interpreted store of the graded call wrote
        the element; None where that is not known (not a floating-point tensor on the CPU, compiled launches, no
        store into its storage at all)."""
        import numpy

        if (self.compiled or not self.stores or not self.host or not isinstance(t, torch.Tensor)
                or not t.is_floating_point() or t.numel() == 0):
            return None
        stores = numpy.concatenate(self.stores)
        storage, size = t.untyped_storage(), t.element_size()
        lo = storage.data_ptr()
        mine = stores[(stores >= numpy.uint64(lo)) & (stores < numpy.uint64(lo + storage.nbytes()))]
        if not len(mine):
            return None
        stored = numpy.zeros(storage.nbytes() // size, dtype=bool)
        stored[((mine - numpy.uint64(lo)) // numpy.uint64(size)).astype(numpy.int64)] = True
        return ~stored[_storage_index(t)]

    def _read(self, t) -> bool:
        if self.compiled or t.device.type != "cpu":  # loads not seen: the storage handed to the kernel must do
            return t.untyped_storage().data_ptr() in self.given
        return _touches(self.reads, t)

    def _stored_in(self, t) -> bool:
        return _touches([addresses for store, addresses in self.accesses if store], t)


def _storage_index(t):
    """A NumPy array shaped like tensor ``t``: the index, in its storage's elements, of each of its elements (no torch
    op: the graded call's op watcher may be on)."""
    import numpy

    index = numpy.arange(t.untyped_storage().nbytes() // t.element_size())[t.storage_offset():]
    return numpy.lib.stride_tricks.as_strided(index, tuple(t.shape), [n * index.itemsize for n in t.stride()])


def _element(value, dtype):
    """The bytes of one element of ``dtype`` (a torch dtype) holding ``value``, as a NumPy uint8 array."""
    import numpy

    name = str(dtype).removeprefix("torch.")
    if name == "bfloat16":  # (NumPy has none: a float32's upper half)
        return (numpy.array([value], numpy.float32).view(numpy.uint32) >> 16).astype(numpy.uint16).view(numpy.uint8)
    return numpy.array([value], dtype=name).view(numpy.uint8)


def _positions(missing) -> str:
    """Where the True elements of ``missing`` (a numpy boolean array) lie: a box of index ranges, one per dimension
    (``[:, :, 16:21, :]``), when they fill one, else the count and the first."""
    import numpy

    ranges = []
    for dim in range(missing.ndim):
        hit = numpy.flatnonzero(missing.any(axis=tuple(d for d in range(missing.ndim) if d != dim)))
        ranges.append(hit)
    box = numpy.ones(missing.shape, dtype=bool)
    for dim, hit in enumerate(ranges):
        mask = numpy.zeros(missing.shape[dim], dtype=bool)
        mask[hit] = True
        box &= mask.reshape([-1 if d == dim else 1 for d in range(missing.ndim)])
    if (box == missing).all() and all(len(h) and h[-1] - h[0] + 1 == len(h) for h in ranges):
        parts = [":" if len(h) == missing.shape[d] else f"{h[0]}:{h[-1] + 1}" for d, h in enumerate(ranges)]
        spans = [f"index {h[0]} to {h[-1]} of dimension {d} (size {missing.shape[d]})"
                 for d, h in enumerate(ranges) if len(h) != missing.shape[d]]
        others = ", all of every other dimension" if len(spans) < missing.ndim else ""
        return f"[{', '.join(parts)}]: {', '.join(spans)}{others}"
    first = tuple(int(i) for i in numpy.argwhere(missing)[0])
    return f"the first at {first}"


MAX_TEXT = 32
"""The longest string a kernel may be given or read as a global: a name of a mode, not data."""


def _flat(values):
    """``values`` with the items of every tuple and list among them, at any depth (a ``tl.constexpr`` by what it
    holds)."""
    for v in values:
        v = v.value if type(v).__name__ == "constexpr" and type(v).__module__.startswith("triton") else v
        if isinstance(v, (tuple, list)):
            yield from _flat(v)
        else:
            yield v


def _python_calls(jit, seen: set | None = None) -> tuple[list[str], list]:
    """The globals of plain Python that the body of ``jit`` (a ``@triton.jit`` function) and the jit functions it
    calls (other than Triton's own) load: anything but a number, a string, None, and Triton's modules, functions,
    types, ``constexpr`` holding those, and jit functions: a function, class, module or object whose methods the
    interpreter would run as Python, or a Triton value made in Python (a ``tl.tensor`` holding data) (read from the
    bytecode: a notebook's source is not always at hand), and a parameter's default that is such an object; and the
    numbers and strings they load, ``(name, value)``
    (a ``constexpr`` by what it holds), which must not change between launches."""
    import builtins
    import types

    seen = set() if seen is None else seen
    seen.add(id(getattr(jit, "fn", None)))
    fn = _run_function(jit)
    # (both the body the interpreter rebuilds and the decorated function's own: tl.reduce calls a combine function's)
    bodies = [f for f in dict.fromkeys((fn, getattr(jit, "fn", None))) if getattr(f, "__code__", None) is not None]
    names = frozenset().union(*(_global_names(f.__code__) for f in bodies))
    namespace, plain = getattr(fn, "__globals__", {}), (types.FunctionType, types.BuiltinFunctionType, type)
    found = list(dict.fromkeys(f"the default of its parameter {name}" for f in bodies for name in _python_defaults(f)))
    constants = []
    if any("handle" in _attribute_names(f.__code__) for f in bodies):  # (no kernel compiled for a GPU has it)
        found.append(".handle, the interpreter's own values (NumPy arrays), read or written as Python")
    for chain in sorted(frozenset().union(*(_global_chains(f.__code__) for f in bodies))):  # tl.load, X.attr
        why = None if chain[0] in REWRITER_NAMES else _chain_problem(
            namespace.get(chain[0], getattr(builtins, chain[0], None)), chain)
        if why:
            found.append(why)
    for name in sorted(names):
        target = namespace.get(name, getattr(builtins, name, None))
        if name in KERNEL_BUILTINS and _builtin(name, target):
            continue
        if name in REWRITER_NAMES and target is getattr(sys.modules.get("triton.runtime.interpreter"), name, None):
            continue  # (put there by the interpreter's rewrite of the kernel's source: Triton's own)
        home = _home(target)
        held = target.value if type(target).__name__ == "constexpr" and str(home).startswith("triton") else target
        inner_fn = getattr(target, "fn", None)
        if isinstance(held, (str, bytes)) and len(held) > MAX_TEXT:
            found.append(f"{name}, a string of {len(held)} characters")
        elif isinstance(held, (numbers.Number, str, bytes)):
            constants.append((name, held))
        elif held is None:
            pass
        elif str(home).split(".")[0] != "triton" or held is not target:  # Python, or a constexpr holding Python
            found.append(name)
        elif _added(target):  # data or Python hung on a Triton object, reached through it however it is named
            found += [f"{name}.{attr}, set by the notebook on a Triton object" for attr in _added(target)]
        elif inner_fn is None and isinstance(target, (types.ModuleType, *plain)) and not _language(home):
            found.append(f"{name}, of Triton's {home}, not of its language")  # (the interpreter's TensorHandle)
        elif inner_fn is not None:  # another jit function: Triton's own library, or written by the notebook (in a
            # cell, or in a file it wrote and imported), whose body is read the same way
            if not _triton_file(inner_fn) and id(inner_fn) not in seen:
                inner = _python_calls(target, seen)
                found += [f"{name}: {call}" for call in inner[0]]
                constants += [(f"{name}.{inner_name}", v) for inner_name, v in inner[1]]
        elif not isinstance(target, (types.ModuleType, *plain)) and type(target).__name__ not in TRITON_CONSTANTS:
            found.append(f"{name}, a {type(target).__name__} made in Python")  # a tl.tensor holding data, ...
    return found, constants


def _counted(v):
    """How the constant ``v`` counts among a call's floating-point constants (:data:`MAX_FLOATS`): a string as
    itself, a number as the float it is, a NaN by its bits (its payload can carry data); None for the markers
    infinities, 0 and 1, which count for nothing."""
    import struct

    if isinstance(v, (str, bytes)):
        return v
    v = complex(v) if isinstance(v, complex) else float(v)
    if isinstance(v, complex):
        return v if v and abs(v) != 1 and not (math.isinf(v.real) or math.isinf(v.imag)) else None
    if math.isnan(v):
        return ("NaN", struct.pack("<d", v))
    return v if math.isfinite(v) and abs(v) != 1 and v else None


def _kernel_codes(jit, seen: set | None = None) -> frozenset:
    """The code objects Triton's interpreter runs for ``jit`` (a ``@triton.jit`` function) and the jit functions it
    calls, at any depth, with the functions nested in them (the lambdas its rewrite adds)."""
    seen = set() if seen is None else seen
    seen.add(id(jit))
    fn = _run_function(jit)
    # (the rebuilt body, and the decorated function's own: tl.reduce and tl.associative_scan call a combine function's)
    codes = set()
    for code in (getattr(fn, "__code__", None), getattr(getattr(jit, "fn", None), "__code__", None)):
        if code is not None:
            codes |= _nested(code)
    for name in _global_names(getattr(fn, "__code__", None)):
        target = getattr(fn, "__globals__", {}).get(name)
        if getattr(target, "fn", None) is not None and _home(target).startswith("triton") \
                and id(target) not in seen:
            codes |= _kernel_codes(target, seen)
    return frozenset(codes)


def _language(module: str) -> bool:
    """Whether ``module`` is Triton's language (``triton.language`` and below) or ``triton`` itself (``triton.cdiv``):
    what a kernel's body may reach; the rest of Triton (``triton.runtime.interpreter``: NumPy, its ``TensorHandle``)
    is Python that no kernel compiled for a GPU calls."""
    return module == "triton" or module.startswith("triton.language")


def _triton_file(fn) -> bool:
    """Whether the code of ``fn`` (a jit function's Python function) is named after a file of Triton's (its library:
    ``tl.softmax``); what the interpreter runs for it is rebuilt from that file's text on disk (:meth:`Launches.rebuilt`),
    whatever ``__module__`` it names."""
    file = getattr(getattr(fn, "__code__", None), "co_filename", "")
    top = os.path.dirname(getattr(sys.modules.get("triton"), "__file__", None) or "/nowhere") + os.sep
    return file.startswith(top) and os.path.isfile(file)


def _home(obj) -> str:
    """The module ``obj`` comes from: a module's own name; for a function or class, and for any other object its
    class, the module named as theirs only where that module holds them under their name (a function or class of
    the notebook's may name any module: the modules that count are held, :class:`Held`); else ``__main__``."""
    import types

    if isinstance(obj, types.ModuleType):
        return obj.__name__
    owner = obj if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type)) else type(obj)
    module, name = getattr(owner, "__module__", None), getattr(owner, "__qualname__", None)
    found = sys.modules.get(module) if isinstance(module, str) else None
    for part in name.split(".") if isinstance(name, str) and found is not None else ():
        found = getattr(found, part, None)
    return module if found is owner else "__main__"


def _same_values(a, b) -> bool:
    """Whether ``a`` and ``b`` (a function's defaults: a tuple, a dict or None) hold the same values: the same
    objects, or equal numbers, strings and None."""
    if a is None or b is None:
        return a is b
    pairs = zip(a.values(), b.values()) if isinstance(a, dict) else zip(a, b)
    return (len(a) == len(b) and (not isinstance(a, dict) or list(a) == list(b))
            and all(x is y or (type(x) is type(y) and isinstance(x, (numbers.Number, str, bytes)) and x == y)
                    for x, y in pairs))


def _chain_problem(target, chain: tuple[str, ...]) -> str | None:
    """Why the attributes ``chain[1:]`` read off ``target`` (the global ``chain[0]``) are not the kernel's to read,
    else None: a module's attribute only within Triton's language, and no attribute of an object other than a module
    or one of Triton's types (a jit function's, a constexpr's: what the notebook hung there)."""
    import types

    obj, path = target, chain[0]
    for attr in chain[1:]:
        if isinstance(obj, types.ModuleType):
            if not _language(obj.__name__):
                return f"{path}.{attr}, of {obj.__name__}"
        elif type(obj).__name__ in TRITON_CONSTANTS and _home(obj).startswith("triton"):
            # (tl.float32.primitive_bitwidth; not an attribute the notebook set there)
            return f"{path}.{attr}, set by the notebook on a Triton object" if attr in _added(obj) else None
        else:
            return f"{path}.{attr}, an attribute of a {type(obj).__name__}"
        obj, path = getattr(obj, attr, None), f"{path}.{attr}"
    if isinstance(obj, types.ModuleType) and not _language(obj.__name__):
        return f"{path}, of {obj.__name__}"
    return None


def _added(obj) -> list[str]:
    """The attributes the notebook set on ``obj``, an interpreted jit function, a constexpr or a dtype of Triton's:
    those a new one like it lacks (a jit function compiled for a GPU fills caches of its own, and runs no Python)."""
    kind = type(obj)
    make = {"constexpr": lambda: kind(0), "dtype": lambda: kind(obj.name), "InterpretedFunction": lambda: kind(_added)}
    if not kind.__module__.startswith("triton") or kind.__name__ not in make:
        return []
    try:
        own = vars(make[kind.__name__]())
    except Exception:  # (one that needs more to make: nothing is compared)
        return []
    return sorted(set(getattr(obj, "__dict__", {})) - set(own))


def _global_chains(code) -> frozenset[tuple[str, ...]]:
    """``(global, attribute, ...)`` for each global that ``code`` and the functions nested in it load, with the
    attributes read off it in a row (``tl.load`` is ``("tl", "load")``)."""
    import dis
    import types

    codes, chains = [code], set()
    while codes:
        code = codes.pop()
        if code is None:
            continue
        chain: list = []
        for ins in dis.get_instructions(code):
            if ins.opname == "LOAD_GLOBAL":
                chains.add(tuple(chain)) if chain else None
                chain = [ins.argval]
            elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and chain:
                chain.append(ins.argval)
            elif chain:
                chains.add(tuple(chain))
                chain = []
        chains.add(tuple(chain)) if chain else None
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return frozenset(chains)


def _builtin(name: str, target) -> bool:
    """Whether ``target`` is Python's own built-in ``name``, not an object of the notebook's bound to that name (a
    global ``print`` of its own, or ``builtins.print`` replaced: the interpreter would run it inside the kernel):
    a C function or a static type, whose name cannot be changed, of that name."""
    import types

    if isinstance(target, types.BuiltinFunctionType):
        return target.__name__ == name and getattr(target.__self__, "__name__", None) == "builtins"
    return (isinstance(target, type) and not target.__flags__ & 1 << 9  # (Py_TPFLAGS_HEAPTYPE: a class made in Python)
            and target.__name__ == name and target.__module__ == "builtins")


def _run_function(jit):
    """The Python function Triton runs for ``jit`` (a ``@triton.jit`` function): the interpreter builds its own from
    the source text ``inspect.getsourcelines`` finds (which follows ``__wrapped__``), from its last line that starts
    with ``def``, so it need not be ``jit.fn`` (a kernel whose body is a string holding another ``def``, or
    ``functools.wraps(other)`` on an empty one); elsewhere ``jit.fn``."""
    rewrite = getattr(jit, "rewrite", None)
    if callable(rewrite):
        try:
            return rewrite()
        except Exception:  # (no source to rebuild from: the interpreter then fails the launch itself)
            pass
    return getattr(jit, "fn", None)


def _plain_argument(v) -> bool:
    """Whether ``v`` may be a Triton kernel's argument: a number, a string, None, an object of torch's (a tensor, a
    dtype) or one of Triton's types and constants; a tensor of a subclass of the notebook's is not: its methods, which
    Triton calls inside the launch (after the kernel's programs, to copy the arguments back), are Python of the
    notebook's; nor is a ``tl.tensor`` made in Python, which holds data."""
    if v is None or isinstance(v, (numbers.Number, str, bytes)) or type(v).__module__.split(".")[0] == "torch":
        return True
    # of Triton's objects, its types and a constexpr holding a plain value (a tl.tensor made in Python holds data)
    return type(v).__module__.split(".")[0] == "triton" and (
        type(v).__name__ in TRITON_CONSTANTS or type(v).__name__ == "constexpr" and _plain_argument(v.value))


def _python_defaults(fn) -> list[str]:
    """The parameters of ``fn`` (a ``@triton.jit`` function's Python function) whose default is neither a plain
    argument (:func:`_plain_argument`) nor a function of Triton's: where the launch leaves it out, the interpreter hands
    the kernel that default, and runs it as Python."""
    import inspect

    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    values = {p.name: p.default.value if type(p.default).__name__ == "constexpr" else p.default for p in parameters
              if p.default is not p.empty}
    return [name for name, v in values.items() if not _plain_argument(v) or callable(v) and not hasattr(
        v, "untyped_storage") and type(v).__module__.split(".")[0] not in ("triton", "torch")]


KERNEL_BUILTINS = frozenset(("range", "min", "max", "len", "int", "float", "bool", "print", "isinstance", "tuple",
                             "zip", "enumerate", "abs"))
"""Python's built-ins a kernel body may name (Triton's compiler handles them, the interpreter runs them as Python),
where the name is the built-in itself (:func:`_builtin`)."""

REWRITER_NAMES = frozenset(("interpreter_semantic", "_InterpreterComparison"))
"""The globals Triton's interpreter adds to the kernel it rebuilds from the source (:func:`_run_function`), for its
assignments and chained comparisons (Triton 3.6 and 3.9): Triton's own objects, where they are the interpreter's."""

TRITON_CONSTANTS = frozenset(("dtype", "pointer_type", "block_type", "tuple_type"))
"""Triton's objects a kernel may read as globals besides modules, functions and jit functions: its types."""


@functools.cache
def _global_names(code) -> frozenset[str]:
    """The names that ``code`` and the functions nested in it load as globals (read once per code object: a kernel
    is launched many times, its globals' values are looked up at each launch)."""
    import dis
    import types

    codes, names = [code], set()
    while codes:
        code = codes.pop()
        if code is not None:
            names |= {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return frozenset(names)


@functools.cache
def _attribute_names(code) -> frozenset[str]:
    """The attributes that ``code`` and the functions nested in it load or store (``x.handle``)."""
    import dis
    import types

    codes, names = [code], set()
    while codes:
        code = codes.pop()
        if code is not None:
            names |= {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_ATTR", "STORE_ATTR",
                                                                                   "LOAD_METHOD", "DELETE_ATTR")}
            # (a class pattern's keywords, case tl.tensor(handle=h), and a name in a string are attributes too)
            names |= {v for c in code.co_consts for v in (c if isinstance(c, tuple) else (c,)) if isinstance(v, str)}
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return frozenset(names)


def _touches(addresses: list, t) -> bool:
    """Whether any of ``addresses`` (arrays of them) lies in the storage under tensor ``t``."""
    import numpy

    lo = t.untyped_storage().data_ptr()
    hi = numpy.uint64(lo + t.untyped_storage().nbytes())
    return any(bool(((a >= numpy.uint64(lo)) & (a < hi)).any()) for a in addresses)


def _arguments_kept(source: str, ns: dict, keep, state: dict):
    """``source`` (an expression) compiled so that, when it is a call and ``keep`` is not None, its positional and
    keyword arguments are given to ``keep`` as they are passed (each evaluated once, in order, by a helper put in
    ``ns``), and ``state["learner"]`` is True while the called function runs (not while the grader's arguments are
    computed)."""
    tree = ast.parse(source, mode="eval")
    if keep is not None and isinstance(tree.body, ast.Call):
        def graded_call(f, /, *a, **k):
            keep((*a, *k.values()), k)
            state["learner"] = True
            try:
                return f(*a, **k)
            finally:
                state["learner"] = False
        ns["__graded_call__"] = graded_call
        call = tree.body
        tree.body = ast.Call(ast.Name("__graded_call__", ast.Load()), [call.func, *call.args], call.keywords)
        ast.fix_missing_locations(tree)
    return compile(tree, "<graded call>", "eval")


def _bytes(t) -> bytes:
    """The bytes of the whole storage under tensor ``t``, read from memory in one go (iterating a storage reads it
    a byte at a time, through any dispatch mode on the stack: minutes for a paged pool)."""
    import ctypes

    storage = t.untyped_storage()
    if storage.device.type != "cpu":
        storage = storage.cpu()
    return ctypes.string_at(storage.data_ptr(), storage.nbytes()) if storage.nbytes() else b""


class Refused(Exception):
    """A graded call the grader refuses: a Triton exercise's result its own kernel did not write, PyTorch computing
    in a Triton exercise, a tensor past a memory rule."""


_SCALARS = frozenset((int, float, str, bool, type(None)))
"""The types whose values are plain data as they are (subclasses excepted: their values are read as below)."""


def _plain(v, torch, record, depth: int = 0):
    """``v`` as plain data (numbers by value, tensors as dtype, shape and a flat list)."""
    if type(v) in _SCALARS:
        return v
    if depth > 12:
        raise ValueError("nested too deeply")
    if torch is not None and isinstance(v, torch.Tensor):
        if type(v) is not torch.Tensor:
            record(f"a {type(v).__name__} (a torch.Tensor subclass) as its result")
        t = torch.Tensor.cpu(torch.Tensor.detach(v))
        return {"tensor": str(t.dtype).removeprefix("torch."), "shape": [int(n) for n in t.shape],
                "data": torch.Tensor.tolist(torch.Tensor.reshape(t, (-1,)))}
    if v is None or v is True or v is False:
        return v
    if isinstance(v, numbers.Integral):  # int, numpy integers: by value
        return int(operator.index(v))
    if isinstance(v, numbers.Real):  # float, numpy floats
        return float(v)
    if isinstance(v, str):
        return str.__str__(v)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {"fields": {f.name: _plain(getattr(v, f.name), torch, record, depth + 1) for f in dataclasses.fields(v)}}
    if isinstance(v, dict):
        return {"dict": [[_plain(k, torch, record, depth + 1), _plain(x, torch, record, depth + 1)]
                         for k, x in sorted(dict.items(v), key=lambda kv: repr(kv[0]))]}
    if isinstance(v, (list, tuple)) or type(v).__name__ == "deque":
        if all(type(x) in _SCALARS for x in v):  # (a token list, a block table: each is its own plain value)
            return list(v)
        return [_plain(x, torch, record, depth + 1) for x in v]
    return {"object": type(v).__name__}


def _raised(e: BaseException) -> dict:
    names = []
    for cls in type(e).__mro__:
        module = getattr(cls, "__module__", "")
        names.append(cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}")
    return {"raised": names[:12]}


def _encode(v, out: list) -> None:
    """JSON of plain data by type (not by ``json.dumps``, which learner code could have replaced)."""
    if v is None or v is True or v is False:
        out.append({None: "null", True: "true", False: "false"}[v])
    elif type(v) is int:
        out.append(int.__repr__(v))
    elif type(v) is float:
        out.append("NaN" if math.isnan(v) else "Infinity" if v == math.inf else "-Infinity" if v == -math.inf
                   else float.__repr__(v))
    elif type(v) is str:
        out.append(json.encoder.encode_basestring_ascii(v))
    elif type(v) is dict:
        out.append("{")
        for n, (k, x) in enumerate(v.items()):
            out.append(("," if n else "") + json.encoder.encode_basestring_ascii(k) + ":")
            _encode(x, out)
        out.append("}")
    else:
        out.append("[")
        for n, x in enumerate(v):
            if n:
                out.append(",")
            _encode(x, out)
        out.append("]")


class Held:
    """What Triton's interpreter computes with, as it was when the setup cells had run: every attribute of NumPy's,
    ``math``'s and the builtins' modules and of Triton's, every attribute of the classes of the interpreter and of
    its semantics, and no attribute of their objects hiding one of their class's methods. ``triton.language``'s three
    modules and its tensor classes, which the interpreter patches for each launch and puts back, are compared apart
    (:attr:`patched`): there a value may differ only by that patch, and an attribute added counts. In the
    interpreter a kernel's ``tl.exp`` is the builder's ``create_exp`` calling ``numpy.exp``: any of them swapped for
    a callable that hands out answers computed before the launch (``functools.partial(next, tiles)``, which no
    profile hook sees run), or ``tl`` given a tensor made in Python, would make the kernel's values the notebook's."""

    PATCHED = frozenset(("triton.language", "triton.language.core", "triton.language.math"))
    REBOUND = frozenset(("_", "__", "___", "input", "raw_input"))  # (the builtins IPython and ipykernel rebind)

    def __init__(self):
        # each value with its class (an object's class can be set: a jit function made a subclass's whose __call__
        # hands out answers)
        self.modules = {name: (m, _kinds(vars(m))) for name, m in list(sys.modules.items())
                        if isinstance(m, type(sys)) and name not in self.PATCHED
                        and (name in ("math", "builtins") or name.split(".")[0] in ("numpy", "triton"))}
        owners = [sys.modules.get(n) for n in ("triton.runtime.interpreter", "triton.language.semantic")]
        self.classes = {c: _kinds(vars(c)) for m in owners if m is not None for c in vars(m).values()
                        if isinstance(c, type) and c.__module__ == m.__name__}
        # what the interpreter patches for each launch (triton.language, its tensor classes): held too, and while the
        # programs run a value may differ only by Triton's own patch of it
        lang = sys.modules.get("triton.language")
        patched = [sys.modules.get(n) for n in self.PATCHED] + [getattr(lang, "tensor", None), getattr(getattr(
            lang, "core", None), "tensor_descriptor_base", None)]
        self.patched = {o: _kinds(vars(o)) for o in patched if o is not None}
        self.interpreter = getattr(owners[0], "__file__", None)
        self.copied = dict(vars(owners[0])) if owners[0] is not None else {}
        self.objects = [o for m in owners[:1] if m is not None
                        for o in (vars(m).get("interpreter_builder"), vars(m).get("interpreter_semantic")) if o is not None]

    def changed(self, ours: set) -> list[str]:
        """What differs now (``module.name``, ``Class.name``), first few; less what the grader itself put there
        (``ours``: ``(id(owner), name)`` of each of its wrappers)."""
        import types

        found = [name for name, (m, _) in self.modules.items() if sys.modules.get(name) is not m]
        for owner, held, name in ([(m, h, n) for n, (m, h) in self.modules.items()]
                                  + [(c, h, c.__qualname__) for c, h in self.classes.items()]):
            now = vars(owner)
            found += [f"{name}.{k}" for k, (v, kind) in held.items() if (now.get(k, self) is not v or type(v) is not kind)
                      and (id(owner), k) not in ours and not (name == "builtins" and k in self.REBOUND)]
            # (a function or class added under its own name counts too: one of the notebook's would pass for this
            # module's, :func:`_home`)
            found += [f"{name}.{k} (added)" for k, v in list(now.items()) if k not in held and (id(owner), k) not in ours
                      and isinstance(v, (types.FunctionType, type)) and getattr(v, "__qualname__", None) == k
                      and self.copied.get(k, self) is not v]  # (the interpreter's, copied where it rebuilds)
        for o in self.objects:  # (a method of its class bound to it is what its class gives: code put back so)
            found += [f"{type(o).__qualname__}.{k} (on its object)" for k, v in list(vars(o).items())
                      if callable(getattr(type(o), k, None)) and (id(o), k) not in ours
                      and not (getattr(v, "__self__", None) is o and getattr(v, "__func__", None) is getattr(type(o), k))]
        for owner, held in self.patched.items():
            name = getattr(owner, "__name__", "?")
            found += [f"{name}.{k}" for k, v in list(vars(owner).items()) if held.get(k, (self,))[0] is not v
                      and (id(owner), k) not in ours and k != "__annotations__"
                      and not self._patch(v, held.get(k, (None,))[0])
                      and not any(vars(base).get(k) is v for base in getattr(owner, "__mro__", ())[1:])]
            found += [f"{name}.{k} (its class)" for k, (v, kind) in held.items() if type(v) is not kind]
        # (Triton puts an inherited method back into the class's own namespace when it undoes a launch's patch)
        return found[:5]

    def _patch(self, value, held) -> bool:
        """Whether ``value`` is the interpreter's own patch of ``held``: a function of its file (or a
        ``functools.partial`` of one) holding, in its defaults, closure and bound arguments, no callable but ``held``
        and Triton's; or one of Python's built-in functions (``print`` for ``static_print``)."""
        import functools

        if type(value) is type(print) and getattr(value, "__self__", None) is sys.modules["builtins"]:
            return True
        bound = []
        if isinstance(value, functools.partial):
            value, bound = value.func, [*value.args, *value.keywords.values()]
        value = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        code = getattr(value, "__code__", None)
        if code is None or code.co_filename != self.interpreter:
            return False
        inner = [*bound, *(getattr(value, "__defaults__", None) or ()),
                 *(getattr(value, "__kwdefaults__", None) or {}).values(),
                 *(c.cell_contents for c in getattr(value, "__closure__", None) or () if _filled(c))]
        return all(v is held or not callable(v) or str(getattr(v, "__module__", "")).split(".")[0] == "triton"
                   for v in inner)


def _kinds(namespace) -> dict:
    """``{name: (value, its class)}`` of ``namespace``, a dict."""
    return {k: (v, type(v)) for k, v in dict(namespace).items()}


# What a learner's cell may do with a reference function's result and leave no table of answers behind: compare it
# with its own answer (``assert_close``, ``allclose``, ``equal``, whose value is discarded, asserted or printed, or an
# ``assert``), or print one number it reduces to (the largest difference), through arithmetic and methods; never where
# a ``try`` or a ``with`` could read how the comparison went, nor with an argument that could keep the message
# (``msg=``, ``file=``). The result may first be bound to a name, at the cell's top level (or in a top-level
# ``with``'s body: a timer), which the cell reads only so (round 38z138: ``o2 = ref.naive_attention(q, q, q)``, then
# ``print((o1 - o2).abs().max())``); the review sees where another cell reads that name (:func:`kept_names`).
COMPARISONS = frozenset(("assert_close", "allclose", "equal", "assert_allclose"))
_REDUCTIONS = frozenset(("max", "min", "amax", "amin", "sum", "mean", "norm", "all", "any"))
_THROUGH = _REDUCTIONS | {"abs", "item", "float", "double", "cpu", "to", "sub", "eq", "ne"}
_TOLERANCES = frozenset(("rtol", "atol", "equal_nan", "check_dtype", "check_device", "check_stride"))


def compared_calls(tree: ast.AST) -> list[ast.Call]:
    """The calls of ``tree`` (a learner's cell) whose value goes only into a comparison with another answer (see
    :data:`COMPARISONS`): an honest learner checks an answer against the course's reference so, and what such a cell
    keeps of the result (a bool, None, a printed largest difference) answers no graded call."""
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _compared(n, parents, tree)]


def kept_names(tree: ast.AST) -> set[str]:
    """The names that a compared call's result is bound to in ``tree`` (:func:`compared_calls`): another cell that
    reads one reads a reference result."""
    return {parent.targets[0].id for call in compared_calls(tree) for parent in ast.walk(tree)
            if isinstance(parent, ast.Assign) and parent.value is call}


def _compared(call: ast.AST, parents: dict, tree: ast.AST) -> bool:
    node, reduced, differenced = call, False, False
    while True:
        p = parents.get(id(node))
        if isinstance(p, ast.Assign) and p.value is node and node is call and _kept_to_compare(p, parents, tree):
            return True
        if reduced and differenced and _kept_number(node, p):
            return True
        if isinstance(p, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.FormattedValue, ast.JoinedStr)) or (
                isinstance(p, ast.IfExp) and node is not p.test):  # (a branch's value goes where the choice goes)
            differenced = differenced or isinstance(p, ast.BinOp) and isinstance(p.op, ast.Sub) and not any(
                isinstance(side, ast.Constant) for side in (p.left, p.right))
            node = p
        elif (isinstance(p, ast.Attribute) and p.attr in _THROUGH and isinstance(parents.get(id(p)), ast.Call)
              and parents[id(p)].func is p):
            node, reduced = parents[id(p)], reduced or p.attr in _REDUCTIONS
        elif isinstance(p, ast.Call) and node in p.args:
            name = p.func.attr if isinstance(p.func, ast.Attribute) else getattr(p.func, "id", None)
            keywords = {k.arg for k in p.keywords}
            if name in COMPARISONS and keywords <= _TOLERANCES:
                told, sink = _told(p, parents)
                done = isinstance(sink, ast.Expr) or (isinstance(sink, ast.Assert) and sink.test is told)
                break
            if name == "print" and reduced and not keywords - {"sep", "end"}:
                done = isinstance(parents.get(id(p)), ast.Expr)
                break
            if name not in ("float", "abs", "round"):
                return False
            node = p
        elif isinstance(p, ast.Assert) and p.test is node:  # assert mine == ref.f(x): it passes or stops the cell
            done = True
            break
        else:
            return False
    while done and p is not None:  # no try or with around it (a comparison's outcome read from its exception)
        done = not isinstance(p, (ast.Try, ast.With, ast.AsyncWith, getattr(ast, "TryStar", ast.Try)))
        p = parents.get(id(p))
    return done


def _kept_number(node: ast.AST, p: ast.AST | None) -> bool:
    """Whether ``node``, a largest difference between the reference's result and another answer (reduced to one
    number), is kept: bound, returned, appended or collected by a comprehension, as a learner gathers errors to plot
    them (round 38z220). One number of a tensor answer answers no graded call; a table of the reference's own values
    (``(ref.f(x) - 0).abs().max()``) is no difference."""
    return (isinstance(p, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)) and p.value is node
            or isinstance(p, (ast.ListComp, ast.SetComp, ast.GeneratorExp)) and p.elt is node
            or isinstance(p, ast.Call) and isinstance(p.func, ast.Attribute) and p.func.attr == "append"
            and p.args == [node] and not p.keywords)


def _kept_to_compare(bound: ast.Assign, parents: dict, tree: ast.AST) -> bool:
    """``name = <call>`` at the cell's top level or in a top-level ``with``'s body, the name bound nowhere else in the
    cell and every read of it compared (:func:`_compared`)."""
    where = parents.get(id(bound))
    if not (len(bound.targets) == 1 and isinstance(bound.targets[0], ast.Name) and (
            isinstance(where, ast.Module) or isinstance(where, (ast.With, ast.AsyncWith))
            and isinstance(parents.get(id(where)), ast.Module))):
        return False
    name = bound.targets[0].id
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and n is not bound.targets[0]]
    return bool(uses) and not any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names
                                  for n in ast.walk(tree)) \
        and all(isinstance(n.ctx, ast.Load) and _compared(n, parents, tree) for n in uses)


def _told(node: ast.AST, parents: dict) -> tuple[ast.AST, ast.AST | None]:
    """Where a comparison's outcome goes, through ``not``, an f-string, a choice of two constants and ``print``: one
    bit printed, as a learner prints ``torch.allclose(mine, ref.f(x))`` (round 38z50), is one bit kept."""
    p = parents.get(id(node))
    while isinstance(p, (ast.UnaryOp, ast.FormattedValue, ast.JoinedStr)) or (
            isinstance(p, ast.IfExp) and p.test is node and all(isinstance(b, ast.Constant) for b in (p.body, p.orelse))
    ) or (isinstance(p, ast.Call) and getattr(p.func, "id", None) == "print" and node in p.args
          and not {k.arg for k in p.keywords} - {"sep", "end"}):
        node, p = p, parents.get(id(p))
    return node, p


@functools.lru_cache(maxsize=64)
def _compared_positions(text: str) -> frozenset:
    """Where (line, end line, column, end column) the calls of a cell's ``text`` that only a comparison reads are:
    read once a cell, however many reference calls it makes."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset((n.lineno, n.end_lineno, n.col_offset, n.end_col_offset) for n in compared_calls(tree))


def _compared_in_cell(frame) -> bool:
    """Whether ``frame``, a cell's, is making a call whose value only a comparison reads (:func:`compared_calls`)."""
    text = _cell_text(frame.f_code.co_filename)
    if text is None:
        return False
    where = next(itertools.islice(frame.f_code.co_positions(), frame.f_lasti // 2, None), None)
    return where in _compared_positions(text)


_WATCH_HELPERS = ("_cell_text", "_compared_in_cell", "_compared_positions", "compared_calls", "_compared",
                  "_kept_number", "_kept_to_compare", "_told")
"""The module's functions that :meth:`Watch.count` calls, directly or not."""

WATCH = "__pagedlab_watch__"
"""The global name, in each watched module, of the :class:`Watch` its functions' code calls."""


class Watch:
    """The exercise's reference functions the grading copy keeps (its tripwire targets that are functions or methods,
    and each exercise check kept whole), watched from the setup cells on: the tripwires are the graded calls', and a
    table of answers built before them (ex04b's inputs come from a small set) would let the graded functions answer
    without computing.

    Each function's code is swapped for its own, compiled again from its file with a first statement that counts
    the call, so that every route to the function object counts (a name, a table of functions, a
    ``functools.partial``, ``map``), and no copy of it that does not count is kept. A call counts unless the course's
    own code made it, naming the function (a reference function calling another), or it comes from a cell the
    exercise hands out as it is, a setup or a demonstration cell (the innermost cell on the stack is one: a function
    of the notebook's that such a cell calls is the notebook's), or a cell's call whose value only a comparison with
    another answer reads (:func:`compared_calls`). The driver reads the counts when it starts (:func:`drive`).
    """

    def __init__(self, targets: list[str], given: list[str], triton: bool = False):
        self.held = Held() if triton else None  # (a Triton exercise: what its interpreter computes with, as it is now)
        self.given = Sources(given)  # (a given cell's code must be one its text compiles to: not one named after it)
        self.course = os.path.dirname(importlib.import_module("pagedlab").__file__) + os.sep
        self.calls: dict[str, int] = {}
        self.counting: dict[str, object] = {}  # label -> the code that counts (the function's own, compiled again)
        self.swapped: list = []  # the functions whose code counts, to put back (compiled again without the count)
        for target in targets:
            for label, f in _functions(target):
                self._swap(label, f)
        vars(importlib.import_module("pagedlab"))[WATCH] = self  # (where the driver finds it)

    def _swap(self, label: str, f) -> None:
        # The function's own source compiled again, with a first statement that counts: no copy of it that does not
        # count is kept anywhere (one kept for the watch to call would be a route to the function that no count sees).
        if f.__code__.co_freevars or label in self.counting:  # (a closure's code cannot be swapped for one without)
            return
        counting = _recompiled(f, f"{WATCH}.count({label!r})")
        if counting is None:
            return
        f.__globals__[WATCH] = self
        f.__code__ = self.counting[label] = counting
        self.swapped.append(f)

    def count(self, label: str) -> None:
        """A call of the function ``label`` starts (its first statement): counted unless the course's own code made
        it, naming the function (a reference function calling another; not course code that runs a callable of the
        notebook's, ``map`` over the function handed to it), or it comes from a given cell."""
        caller = sys._getframe(2)  # (above this call and the function's own frame)
        name = label.rpartition(".")[2]
        if not ((caller.f_code.co_filename.startswith(self.course) and name in caller.f_code.co_names)
                or self._from_given(caller) or _compared_in_cell(caller)):
            self.calls[label] = self.calls.get(label, 0) + 1

    def _from_given(self, frame) -> bool:
        while frame is not None:
            text = _cell_text(frame.f_code.co_filename)
            if text is not None:
                return tuple(text.splitlines()) in self.given.texts and self.given.compiled_from_cell(frame.f_code)
            frame = frame.f_back
        return False

    def codes(self) -> set:
        """The code objects of the watch (trusted by :class:`Sources`)."""
        return set().union(*(_codes(v) for v in vars(Watch).values()), *map(_nested, self.counting.values()))

    def close(self) -> None:
        """Put every function's own code back, compiled again from its source (a test that watches in its own
        process goes on)."""
        for f in reversed(self.swapped):
            f.__code__ = _recompiled(f)
            f.__globals__.pop(WATCH, None)
        self.swapped.clear()
        vars(importlib.import_module("pagedlab")).pop(WATCH, None)


def _recompiled(f, first: str | None = None):
    """The code of function ``f`` compiled again from the text of its module's file, with the statement ``first``
    put before its body (after its docstring), at the body's first line; None where that text does not give the code
    ``f`` has (its file changed)."""
    import tokenize
    import types

    code = f.__code__
    try:
        with tokenize.open(code.co_filename) as file:
            tree = ast.parse(file.read())
    except (OSError, SyntaxError, ValueError):
        return None
    node = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == code.co_name
                 and min([n.lineno, *(d.lineno for d in n.decorator_list)]) == code.co_firstlineno), None)
    if node is None:
        return None
    if first is not None:
        doc = ast.get_docstring(node, clean=False) is not None and len(node.body) > 1
        node.body.insert(int(doc), ast.copy_location(ast.parse(first).body[0], node.body[int(doc)]))
        ast.fix_missing_locations(tree)
    todo = [compile(tree, code.co_filename, "exec", dont_inherit=True)]
    while todo:
        found = todo.pop()
        if found.co_qualname == code.co_qualname and found.co_firstlineno == code.co_firstlineno:
            return found
        todo += [c for c in found.co_consts if isinstance(c, types.CodeType)]
    return None


def _functions(target: str) -> list[tuple[str, object]]:
    """(label, function) of a pagedlab target this kernel's copy holds: a function, a method, or every function a
    module defines (``module:*``); a class is left out (its answers depend on a history of calls, not a table)."""
    import types

    module, _, attr = target.partition(":")
    if not module.startswith("pagedlab"):
        return []
    try:
        owner = importlib.import_module(module)
        if attr == "*":
            return [(f"{module}.{k}", v) for k, v in vars(owner).items()
                    if isinstance(v, types.FunctionType) and v.__module__ == module]
        f = owner
        for part in attr.split("."):
            f = f.__dict__[part] if isinstance(f, type) else getattr(f, part)
    except (ImportError, AttributeError, KeyError):
        return []  # not in this kernel's copy of pagedlab: a route that is not there needs no watch
    f = f.__func__ if isinstance(f, (staticmethod, classmethod)) else f.fget if isinstance(f, property) else f
    return [(target.replace(":", "."), f)] if isinstance(f, types.FunctionType) else []


def watch(job_text: str) -> Watch:
    """Start watching the job's reference functions (:func:`pagedlab.grading.calls.watch_text`)."""
    job = json.loads(job_text)
    return Watch(job["targets"], job["given"], job.get("triton", False))


def _watched(targets: list[str]) -> tuple[list[str], object]:
    """Why the notebook needs review, from the watch of ``targets`` (:class:`Watch`: its counts, or its absence);
    and the watch (None where nothing is watched)."""
    found = vars(sys.modules.get("pagedlab", sys)).get(WATCH)
    if type(found).__name__ != "Watch":
        return ["the grader's watch of the reference code was taken off before the graded calls"], None
    for target in targets:
        for label, f in _functions(target):
            if f.__globals__.get(WATCH) is not found or f.__code__ is not found.counting.get(label):
                return [f"the grader's watch of the reference code ({label}) was taken off before the graded calls"], None
    return [f"{label} was called {n} time(s) before the graded calls, from the notebook's cells: the exercise's "
            "reference code (a table of its answers would answer the graded calls)"
            for label, n in found.calls.items()], found


# Python's own ``sum`` of floats changed in 3.12 (Neumaier's compensated summation, CPython gh-100425): the same code
# on the same inputs may answer otherwise on Colab's Python 3.12 than on a grader's 3.11, and the other way round
# (round 38z218: ``sum([scale, latency, -scale]) == 0`` chose the formula). The grading kernel's ``sum`` is
# :func:`version_sum`, put in the builtin's place before the notebook's first cell (:func:`sums_cell`): during a
# graded call it notes where the other side of 3.12 would have summed to another value, and the driver makes that
# call's case again with the other side's sums (the judge reads both).
_SUM_STATE = {"on": False, "other": False, "differed": False}
_NATIVE_SUM = sum
_COMPENSATING = sys.version_info >= (3, 12)  # this Python's sum compensates


def version_sum(iterable, /, start=0):
    """Python's ``sum``: this version's value, or, while a case is made again (``_SUM_STATE["other"]``), the other
    side of 3.12's where the two differ (:func:`other_sum`)."""
    state = _SUM_STATE
    if not state["on"]:
        return _NATIVE_SUM(iterable, start)
    items = list(iterable)
    here = _NATIVE_SUM(items, start)
    if type(start) is float or any(type(x) is float for x in items):
        there = other_sum(items, start)
        if not (type(here) is float and type(there) is float and here.hex() == there.hex() or here is there):
            state["differed"] = True
            if state["other"]:
                return there
    return here


def other_sum(items: list, start=0, compensated: bool = not _COMPENSATING):
    """``sum(items, start)`` as CPython computes it with (3.12 on) or without (3.11 and before) compensating a float
    sum's rounding: its fast paths for exact ints, then exact floats (an int that fits a C long is added as a float,
    uncompensated), then ``+`` for what follows."""
    it, result, long = iter(items), start, range(-2 ** 63, 2 ** 63)
    if type(result) is int and result in long:
        for item in it:
            if type(item) in (int, bool) and item in long and result + item in long:
                result += item
                continue
            result = result + item
            break
        else:
            return result
    if type(result) is float:
        f, c = result, 0.0
        for item in it:
            if type(item) is float:
                if compensated:
                    t = f + item
                    c += (f - t) + item if abs(f) >= abs(item) else (item - t) + f
                    f = t
                else:
                    f += item
            elif isinstance(item, int) and item in long:
                f += float(item)
            else:
                result = (f + c if c and math.isfinite(c) else f) + item
                break
        else:
            return f + c if c and math.isfinite(c) else f
    for item in it:
        result = result + item
    return result


def install_sums() -> None:
    """:func:`version_sum` in ``builtins.sum``'s place, for every cell of the kernel (:func:`sums_cell`)."""
    import builtins

    global _NATIVE_SUM
    _NATIVE_SUM = builtins.sum
    version_sum.__name__ = version_sum.__qualname__ = "sum"
    builtins.sum = version_sum


def _sums(put, trust) -> dict | None:
    """The state of the :func:`version_sum` in ``builtins.sum``'s place (compiled from this module's code, around the
    builtin; its code is ``trust``-ed), else None; where the builtin is there (a test that drives in its own process),
    one is put in its place for the calls."""
    import builtins

    f, builtin = builtins.sum, type(len)
    if type(f) is builtin and getattr(f, "__self__", None) is builtins and f.__name__ == "sum":
        globals()["_NATIVE_SUM"] = f
        put(builtins, "sum", version_sum)
        f = version_sum
    g = getattr(f, "__globals__", {})
    theirs = [getattr(getattr(x, "__code__", None), "co_code", None) for x in (f, g.get("other_sum"))]
    if theirs != [version_sum.__code__.co_code, other_sum.__code__.co_code] or type(g.get("_NATIVE_SUM")) is not \
            builtin or type(g.get("_SUM_STATE")) is not dict:
        return None
    trust(f.__code__), trust(g["other_sum"].__code__)
    return g["_SUM_STATE"]


def sums_cell(source: str) -> str:
    """The silent cell, before the notebook's first, that defines this module (``source``) in a namespace of its own
    and puts :func:`version_sum` in ``builtins.sum``'s place (:func:`install_sums`)."""
    return ("def _pagedlab_sums(source):\n"
            "    ns = {'__name__': 'pagedlab_grading_harness'}\n"
            "    exec(source, ns)\n"
            "    ns['install_sums']()\n"
            f"try:\n    _pagedlab_sums({source!r})\n"
            "finally:\n    del _pagedlab_sums\n")


def watch_cell(source: str, job_text: str) -> str:
    """The silent cell, before the notebook's first cell that is not a setup cell, that defines this module
    (``source``) in a namespace of its own and starts the :class:`Watch`; it leaves the cache of cells' texts too."""
    return ("def _pagedlab_watch(source, job):\n"
            "    import linecache, sys\n"
            "    linecache.cache.pop(sys._getframe(1).f_code.co_filename, None)\n"
            "    ns = {'__name__': 'pagedlab_grading_harness'}\n"
            "    exec(source, ns)\n"
            "    ns['watch'](job)\n"
            f"try:\n    _pagedlab_watch({source!r}, {job_text!r})\n"
            "finally:\n    del _pagedlab_watch\n")


def driver_cell(source: str, job_text: str, path_out: str) -> str:
    """The silent cell, after the notebook's last, that defines this module (``source``) in a namespace of its own
    and makes the graded calls: nothing of it existed while learner cells ran, and its text (the token, the file
    name) leaves the cache IPython keeps of each cell's text. It ends by stopping the kernel (:func:`_seal`)."""
    return ("def _pagedlab_driver(source, job, path):\n"
            "    import linecache, sys\n"  # (IPython keeps each cell's text there: the token and the file name)
            "    linecache.cache.pop(sys._getframe(1).f_code.co_filename, None)\n"
            "    ns = {'__name__': 'pagedlab_grading_harness'}\n"
            "    exec(source, ns)\n"
            "    ns['drive'](job, globals(), path, kernel=True)\n"
            f"try:\n    _pagedlab_driver({source!r}, {job_text!r}, {path_out!r})\n"
            "finally:\n    del _pagedlab_driver\n")
