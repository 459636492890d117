"""Exercise 10's checks catch the plausible wrong scheduler steps: for each bug below, the FIRST failing check (the one
a learner meets) must be the one that names it, with a hint that fits what the step did."""

from pathlib import Path

import pytest

from nbrun import assert_caught, assert_first_failure, check_title, planted, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex10_scheduler_step.ipynb"
CELL = "schedule-work"

ADMIT, BUDGET, PREEMPT = (check_title(NB, n) for n in (1, 3, 4))
APPEND_LEFT = "            waiting.appendleft(victim)\n"

# (edits: (solution text, buggy text)..., title of the first failing check, regex of its message)
BUGS = {
    "forgets to free the preempted request (leaks its blocks)": (
        [("            manager.free(victim.seq_id)                 # its blocks go back now; it recomputes later\n",
          "")], PREEMPT, r"still holds it.*manager.free"),
    "preempts the oldest request instead of the newest": (
        [("victim = queue.pop() if queue else req", "victim = queue.popleft() if queue else req")],
        PREEMPT, "newest running request, D"),
    "keeps going after preempting itself (appends to a freed request)": (
        [("            if victim is req:\n                break\n", "")], PREEMPT,
        r"raised KeyError: unknown sequence 'B'.*\(at `while not manager.can_append\(req.seq_id\):`, in schedule_step\)"
        r".*Hint: manager.can_append was called for a request the manager does not hold"),
    "puts the preempted request at the back of waiting": (
        [("waiting.appendleft(victim)", "waiting.append(victim)")], PREEMPT, "FRONT of waiting"),
    "two preemptions put back in the wrong order (the newest first)": (
        [("    step = Step()\n", "    step = Step()\n    front = len(waiting)\n"),
         (APPEND_LEFT, "            waiting.insert(len(waiting) - front, victim)\n")],
        PREEMPT, r"expected waiting \[C, D, E\], got \['D', 'C', 'E'\]"),
    "admits in a step that preempted": (
        [("while waiting and not step.preempted:", "while waiting:")], PREEMPT, "nobody is admitted until the next one"),
    "admits past the watermark": (
        [("blocks + manager.watermark_blocks > manager.num_free_blocks", "blocks > manager.num_free_blocks")],
        ADMIT, "watermark"),
    "ignores the token budget": (
        [("\n                or step.num_tokens + len(req.tokens) > max_num_batched_tokens", "")],
        ADMIT, "A \\+ B is 21 tokens"),
    "budget ignores this step's decode tokens": (
        [("step.num_tokens + len(req.tokens) > max_num_batched_tokens",
          "step.num_tokens - len(step.grown) + len(req.tokens) > max_num_batched_tokens")],
        BUDGET, "decode tokens of the grown requests count"),
    "counts blocks rounding down (off by one)": (
        [("blocks = -(-len(req.tokens) // manager.block_size)", "blocks = len(req.tokens) // manager.block_size")],
        ADMIT, "partly filled block is a whole block"),
    "skips a request that does not fit and admits the next one": (
        [("            break\n        waiting.popleft()",
          "            waiting.rotate(-1)\n            if waiting[0] is req:\n                break\n"
          "            continue\n        waiting.popleft()")],
        ADMIT, "first come, first served"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    assert_caught(NB, CELL, *BUGS[bug])


def test_errors_keep_the_learners_line_and_get_a_hint_for_that_error():
    """A victim popped from an empty queue raises IndexError: the message quotes the line and explains the fallback."""
    bug = planted(NB, CELL, ("victim = queue.pop() if queue else req", "victim = queue.pop()"))
    assert_first_failure(NB, bug, PREEMPT, r"IndexError: pop from an empty deque \(at `victim = queue.pop\(\) .*`, in "
                                           r"schedule_step\).*Hint: .*that request itself is the one to preempt")


def test_solution_passes():
    ns = run_cells(NB)
    assert "schedule_step" in ns
