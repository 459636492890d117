"""Exercise 10's checks: one scheduler step over the Part III ``BlockManager`` (grow, preempt the newest, admit).

Each check builds a scene (a manager, running and waiting requests), runs the learner's ``schedule_step`` once and
says what it expected. An error raised inside the step keeps the learner's own line in the message (the check names
the line of ``schedule_step`` that made the failing manager call); its hint depends on which manager call refused.

The input space the instructions state: a ``BlockManager`` of a few to 64 blocks of 4 tokens (the checks'; blocks
are counted by ``manager.block_size``, and the grader draws blocks of 1, 3 and 16 tokens as well), watermark 0 to 25%;
running requests oldest first, at a block boundary (a new block needed to grow) or inside a block; waiting requests
of 1 token to a few blocks; a token budget that a prompt reaches exactly, passes by one, or that decode tokens fill;
boundaries: blocks plus watermark exactly equal to the free blocks and one more, no free block, the request that
cannot grow being itself the newest, two preemptions in one step. Token ids are positions (``len(req.tokens)``). The
scenes of checks 1 to 4 are these boundaries; check 5 draws 400 steps of arrivals and lengths (seeded).
"""

from __future__ import annotations

import random
import traceback
from collections import deque
from pathlib import Path
from typing import Callable

from ..paged import BlockManager, OutOfBlocks

ScheduleStep = Callable[..., object]


def scene(request: type, num_blocks: int, block_size: int, running=(), waiting=(), watermark: float = 0.0):
    """A manager with ``running`` requests added (oldest first) and ``waiting`` ones queued: (manager, running,
    waiting), each request ``request(name, list(range(n)))`` for ``(name, n)``."""
    manager = BlockManager(num_blocks, block_size, watermark=watermark)
    run = [request(name, list(range(n))) for name, n in running]
    for req in run:
        manager.add(req.seq_id, req.tokens)
    return manager, run, deque(request(name, list(range(n))) for name, n in waiting)


def _manager_call(exc: BaseException) -> str | None:
    """The ``BlockManager`` method that ``schedule_step`` called and that raised ``exc`` (``append``, ``add``...)."""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.endswith("manager.py") and Path(frame.filename).parent.name == "paged":
            return frame.name
    return None


def error_hint(exc: BaseException) -> str:
    """The hint for an error raised by ``schedule_step``, from the manager call that refused (if any)."""
    call = _manager_call(exc)
    if isinstance(exc, OutOfBlocks) and call == "add":
        return ("manager.add ran out of blocks: a request was admitted although its blocks, plus the watermark, did "
                "not fit in manager.num_free_blocks (a partly filled block is a whole block).")
    if isinstance(exc, OutOfBlocks) and call == "append":
        return ("manager.append ran out of blocks: a request grew although manager.can_append said no; preempt "
                "first, and ask again after each preemption.")
    if isinstance(exc, KeyError) and call in ("append", "can_append", "free", "table"):
        return (f"manager.{call} was called for a request the manager does not hold: one already freed (preempted) "
                f"in this step. A request that was itself preempted must not grow afterwards, nor be freed twice.")
    if isinstance(exc, ValueError) and call == "add":
        return "manager.add refused a request it already holds: a running request was admitted a second time."
    if isinstance(exc, IndexError):
        return ("an index or a pop on an empty sequence: when no request newer than the one that cannot grow is "
                "left, that request itself is the one to preempt.")
    return ""


def _ids(requests) -> list[str]:
    return [r.seq_id for r in requests]


def check_admission(schedule_step: ScheduleStep, request: type) -> None:
    """Check 1: with nothing running, admission counts whole blocks, keeps the watermark, the budget and the order."""
    __tracebackhide__ = True
    # Three small scenes first, whose outcomes together tell the mistakes apart: one request admitted where three fit
    # (no loop), two exactly full blocks refused (a full block counted as two, or an exact fit refused), two partly
    # filled ones refused (an exact fit refused: their count cannot be off).
    admitted = {}
    for name, blocks, prompts in [("loop", 64, [("A", 1), ("B", 1), ("C", 1)]), ("full", 2, [("A", 4), ("B", 4)]),
                                  ("partial", 2, [("A", 3), ("B", 3)])]:
        m, running, waiting = scene(request, blocks, 4, waiting=prompts)
        admitted[name] = (schedule_step(m, running, waiting, 1000).admitted, [p for p, _ in prompts])
    got, want = admitted["loop"]
    if got != want:
        why = ("admission takes requests from the front of waiting WHILE they fit (a loop), not just the first one"
               if len(got) == 1 else "each of them needs 1 block of the 64 and 1 token of the 1000")
        raise AssertionError(f"64 free blocks of 4 tokens and a budget of 1000: A, B and C (1 token each) all fit; "
                             f"admitted {got}. Hint: {why}.")
    if admitted["full"][0] != admitted["full"][1]:
        exact = admitted["partial"][0] != admitted["partial"][1]
        why = ("a request whose blocks (plus the watermark) equal the free blocks fits: it is refused only when they "
               "are MORE than the free blocks (>, not >=)" if exact else
               "an exactly full block needs no extra one: 4 tokens in blocks of 4 are ceil(4 / 4) = 1 block, not "
               "4 // 4 + 1 = 2 (3 tokens each, one partly filled block, were admitted)")
        raise AssertionError(f"2 free blocks of 4 tokens: A and B (4 tokens each) take one full block each, and "
                             f"both fit; admitted {admitted['full'][0]}. Hint: {why}.")
    m, running, waiting = scene(request, 4, 4, waiting=[("A", 5), ("B", 5), ("C", 1)])
    step = schedule_step(m, running, waiting, 1000)
    if step.admitted != ["A", "B"]:
        if step.admitted == ["A", "B", "C"]:
            why = "C (1 token) still needs a whole block, and none is left"
        elif step.admitted == ["A"] and m.num_free_blocks == 2:
            why = ("B's 2 blocks are exactly the 2 blocks left free, and a request whose blocks (plus the watermark, "
                   "0 here) equal the free blocks fits: it is refused only when they are MORE than the free blocks")
        else:
            why = "each takes ceil(5 / 4) = 2 blocks: a partly filled block is a whole block"
        raise AssertionError(f"4 blocks of 4 tokens, prompts of 5, 5 and 1 tokens: A and B take 2 blocks each and C "
                             f"must wait; admitted {step.admitted}. Hint: {why}.")
    m, running, waiting = scene(request, 8, 4, waiting=[("A", 16), ("B", 8), ("C", 4)], watermark=0.25)
    step = schedule_step(m, running, waiting, 1000)
    if step.admitted != ["A", "B"]:
        exactly = (" B's 2 blocks plus the watermark's 2 are exactly the 4 blocks free after A: that fits (only more "
                   "than the free blocks does not)." if step.admitted == ["A"] else "")
        raise AssertionError(
            f"the watermark keeps {m.watermark_blocks} of 8 blocks free: A (4 blocks) and B (2) fit, C (1) does not; "
            f"admitted {step.admitted}.{exactly} Hint: a request is admitted only if its blocks plus "
            f"manager.watermark_blocks fit in manager.num_free_blocks.")
    m, running, waiting = scene(request, 64, 4, waiting=[("A", 12), ("B", 9), ("C", 2)])
    step = schedule_step(m, running, waiting, 20)
    if step.admitted != ["A"] or step.num_tokens != 12:
        if step.admitted == ["A", "C"]:
            hint = ("C was admitted past B, which did not fit: first come, first served, so admission stops at the "
                    "first request that does not fit.")
        elif step.admitted[:2] == ["A", "B"]:
            hint = "A + B is 21 tokens, past the budget of 20: count every admitted prompt's tokens."
        else:
            hint = "num_tokens counts 1 token per grown request and len(req.tokens) per admitted one."
        raise AssertionError(f"a budget of 20 tokens holds A (12) but not A + B (21), and C waits behind B; admitted "
                             f"{step.admitted}, num_tokens {step.num_tokens}. Hint: {hint}")
    if _ids(waiting) != ["B", "C"] or _ids(running) != ["A"]:
        raise AssertionError(f"admitted requests leave the front of waiting for the back of running; waiting "
                             f"{_ids(waiting)}, running {_ids(running)}")
    m, running, waiting = scene(request, 64, 4, waiting=[("A", 12), ("B", 8), ("C", 1)])
    step = schedule_step(m, running, waiting, 20)
    if step.admitted != ["A", "B"] or step.num_tokens != 20:
        hint = ("a request whose tokens bring the step to exactly max_num_batched_tokens fits: it is refused only "
                "when they go past it" if step.admitted == ["A"] else
                "count every admitted prompt's tokens, and stop at the first request that does not fit")
        raise AssertionError(f"a budget of 20 tokens holds A (12) + B (8) exactly, and C (1) no more; admitted "
                             f"{step.admitted}, num_tokens {step.num_tokens}. Hint: {hint}.")


def check_growth(schedule_step: ScheduleStep, request: type) -> None:
    """Check 2: with room for everyone, every running request grows by one token, oldest first, then D is admitted."""
    __tracebackhide__ = True
    m, running, waiting = scene(request, 16, 4, running=[("A", 3), ("B", 4), ("C", 8)], waiting=[("D", 2)])
    step = schedule_step(m, running, waiting, 1000)
    if step.grown != ["A", "B", "C"] or step.preempted:
        raise AssertionError(f"with room for everyone, A, B and C each grow by one token, oldest first; grown "
                             f"{step.grown}, preempted {step.preempted}")
    wrong = {r.seq_id: r.tokens for r in running if r.tokens != list(range(len(r.tokens)))}
    if wrong:
        name, tokens = next(iter(wrong.items()))
        raise AssertionError(
            f"{name}'s tokens after growing are {tokens}, expected {list(range(len(tokens)))}: the token a grown "
            f"request gets is len(req.tokens), its position ({len(tokens) - 1} here), passed to manager.append and "
            f"appended to req.tokens. Hint: req.tokens[-1] repeats the last token; read len(req.tokens) before "
            f"appending.")
    lengths = {r.seq_id: (len(r.tokens), m.table(r.seq_id).num_tokens) for r in running}
    if lengths != {"A": (4, 4), "B": (5, 5), "C": (9, 9), "D": (2, 2)}:
        raise AssertionError(
            f"(tokens, tokens in the manager) per request should be A (4, 4), B (5, 5), C (9, 9), D (2, 2); got "
            f"{lengths}. Hint: a grown request gets one token in the manager (manager.append) and the same token in "
            f"req.tokens, so that the two agree.")
    if step.num_tokens != 3 + 2 or _ids(running) != ["A", "B", "C", "D"]:
        raise AssertionError(f"3 decode tokens and D's 2 prompt tokens, running oldest first A, B, C, D; got "
                             f"num_tokens {step.num_tokens}, running {_ids(running)}")
    # the same tokens, not only as many: with prefix caching on, the manager hashes the tokens it is told, and a
    # prompt of A's own tokens finds A's full blocks cached only if they were A's
    m = BlockManager(16, 2, enable_prefix_caching=True)
    running = [request("A", [0, 1, 2])]
    m.add("A", running[0].tokens)
    for _ in range(3):
        schedule_step(m, running, deque(), 1000)
    m.add("probe", running[0].tokens + [9])
    if m.num_cached_tokens("probe") != 6:
        raise AssertionError(
            f"with prefix caching on, A grew three times to {running[0].tokens}; a prompt of those tokens and one more "
            f"should find A's three full blocks cached (6 tokens), found {m.num_cached_tokens('probe')}. Hint: the "
            f"manager was told other tokens than A holds: token = len(req.tokens), then manager.append(req.seq_id, "
            f"token), then req.tokens.append(token), the same token in both.")


def check_budget_counts_decode(schedule_step: ScheduleStep, request: type) -> None:
    """Check 3: the token budget holds this step's decode tokens too, not only the admitted prompts."""
    __tracebackhide__ = True
    m, running, waiting = scene(request, 64, 4, running=[("A", 3), ("B", 6)], waiting=[("C", 19), ("D", 1)])
    step = schedule_step(m, running, waiting, 20)
    if step.admitted:
        raise AssertionError(
            f"A and B grow by 1 token each, so 18 of the budget's 20 tokens are left and C (19 tokens) must wait, "
            f"with D behind it; admitted {step.admitted}, num_tokens {step.num_tokens}. Hint: the budget is for "
            f"every token this step computes: the decode tokens of the grown requests count before any prompt.")
    if step.num_tokens != 2:
        raise AssertionError(f"A and B grew, nobody was admitted: num_tokens should be 2, got {step.num_tokens}")


def check_preemption(schedule_step: ScheduleStep, request: type) -> None:
    """Check 4: out of blocks, the newest request is preempted, freed and put back at the front of waiting."""
    __tracebackhide__ = True
    # Every request sits at a block boundary (4, 8, 4, 8 tokens): each needs a new block, and 1 of 7 is free.
    m, running, waiting = scene(request, 7, 4, running=[("A", 4), ("B", 8), ("C", 4), ("D", 8)], waiting=[("E", 1)])
    step = schedule_step(m, running, waiting, 1000)
    if step.preempted[:1] != ["D"]:
        raise AssertionError(
            f"A takes the free block, then B cannot grow: the newest running request, D, must go first (it arrived "
            f"last and has done the least work; vLLM preempts the same way); preempted {step.preempted}. Hint: the "
            f"newest request is the last of running, and only one that has not grown in this step can be preempted.")
    if "D" in m:
        raise AssertionError("D was preempted but the manager still holds it, so its blocks never come back. "
                             "Hint: a preempted request's blocks go back to the pool (manager.free) when it leaves.")
    if step.preempted != ["D"] or step.grown != ["A", "B", "C"]:
        raise AssertionError(f"D's two blocks let B and C grow; expected grown [A, B, C] and preempted [D], got grown "
                             f"{step.grown}, preempted {step.preempted}")
    if _ids(waiting)[:1] != ["D"]:
        raise AssertionError(f"D goes to the FRONT of waiting, ahead of E, which arrived after it; waiting "
                             f"{_ids(waiting)}")
    if step.admitted:
        raise AssertionError(f"nobody is admitted in a step that preempted (admitting now would only recompute into "
                             f"the same shortage); admitted {step.admitted}")
    if step.num_tokens != 3:
        raise AssertionError(
            f"A, B and C grew and D was preempted: this step computes 3 tokens, got num_tokens {step.num_tokens}. "
            f"Hint: a preempted request computes nothing in this step; count the grown requests once growth is "
            f"done, not the running ones before it.")
    m, running, waiting = scene(request, 4, 4, running=[("A", 4), ("B", 4), ("C", 4), ("D", 4)], waiting=[("E", 1)])
    step = schedule_step(m, running, waiting, 1000)
    if step.preempted != ["D", "C"] or step.grown != ["A", "B"]:
        raise AssertionError(f"4 requests of one full block each and no free block: A needs D's block, B needs C's; "
                             f"expected preempted [D, C] and grown [A, B], got preempted {step.preempted}, grown "
                             f"{step.grown}")
    if _ids(waiting) != ["C", "D", "E"]:
        raise AssertionError(
            f"C and D, preempted in this step (D first), go back to the front of waiting in the order they arrived, "
            f"C before D, both ahead of E: expected waiting [C, D, E], got {_ids(waiting)}. Hint: putting each "
            f"preempted request at the front as it is preempted gives that order.")
    m, running, waiting = scene(request, 3, 4, running=[("A", 3), ("B", 8)])     # no free block
    step = schedule_step(m, running, waiting, 1000)
    if step.preempted != ["B"] or step.grown != ["A"]:
        raise AssertionError(
            f"A grows inside its own block; B needs a new one, none is free, and B is itself the newest, so B is "
            f"preempted, not A; got grown {step.grown}, preempted {step.preempted}")
    if step.admitted:
        raise AssertionError(
            f"B was preempted in this step, so nobody is admitted until the next one (admitting B again at once would "
            f"only recompute it into the same shortage); admitted {step.admitted}")
    tokens = waiting[0].tokens if _ids(waiting) == ["B"] else None
    if tokens is not None and tokens != list(range(8)):
        raise AssertionError(
            f"B was preempted in this step without growing, so it keeps the 8 tokens it had, {list(range(8))}; it "
            f"has {tokens}. Hint: a request gets its token only once the manager has a slot for it: append to "
            f"req.tokens after the growth check (manager.can_append) and manager.append, not before.")
    if "B" in m or _ids(waiting) != ["B"]:
        raise AssertionError(f"B was preempted: the manager must no longer hold it, and waiting must be [B]; B held: "
                             f"{'B' in m}, waiting {_ids(waiting)}")


def check_busy_server(schedule_step: ScheduleStep, request: type) -> None:
    """Check 5: 400 steps of random arrivals and lengths in a small pool; the manager and running must agree."""
    __tracebackhide__ = True
    rng = random.Random(0)
    m = BlockManager(24, 4, watermark=0.05)
    running, waiting, done, order, target = [], deque(), [], {}, {}
    for t in range(400):
        if t < 200 and rng.random() < 0.3:
            name = f"r{t}"
            order[name], target[name] = t, rng.randint(3, 20) + 20
            waiting.append(request(name, list(range(rng.randint(3, 20)))))
        if not running and not waiting:
            continue
        schedule_step(m, running, waiting, 48)
        for req in [r for r in running if len(r.tokens) >= target[r.seq_id]]:
            running.remove(req)
            m.free(req.seq_id)
            done.append(req.seq_id)
        held, ids = set(m.seq_ids), _ids(running)
        if held - set(ids):
            raise AssertionError(f"step {t}: the manager holds {sorted(held - set(ids), key=order.get)}, which are not "
                                 f"running: a preempted request must be freed (manager.free) as it leaves running.")
        if set(ids) - held:
            raise AssertionError(f"step {t}: running holds {sorted(set(ids) - held, key=order.get)}, which the "
                                 f"manager does not: a preempted request must leave running.")
        if [order[i] for i in ids] != sorted(order[i] for i in ids):
            raise AssertionError(
                f"step {t}: running is not oldest first: {ids} (arrival steps {[order[i] for i in ids]}). Hint: "
                f"grown requests keep their order, and admitted ones, taken from the front of waiting, follow them; "
                f"so waiting must be in arrival order too, preempted requests included.")
    if running or waiting or len(done) != len(order):
        raise AssertionError(f"after 400 steps {len(done)} of {len(order)} requests finished ({len(running)} "
                             f"running, {len(waiting)} waiting)")
    if m.num_free_blocks != 24:
        raise AssertionError(f"{24 - m.num_free_blocks} blocks leaked")
    print(f"{len(done)} requests finished, every block free again")
