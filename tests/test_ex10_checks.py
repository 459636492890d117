"""Exercise 10's checks catch the plausible wrong scheduler steps: for each bug below, the FIRST failing check (the one
a learner meets) must be the one that names it, with a hint."""

from pathlib import Path

import pytest

from nbrun import assert_first_failure, planted, run_cells

NB = Path(__file__).resolve().parent.parent / "solutions" / "ex10_scheduler_step.ipynb"
CELL = "schedule-work"

ADMIT = "Check 1: admission counts whole blocks, keeps the watermark, the token budget and the order"
PREEMPT = "Check 3: out of blocks, the newest request is preempted, and its blocks are freed"

# (solution text, buggy text, title of the first failing check, regex of its message)
BUGS = {
    "forgets to free the preempted request (leaks its blocks)": (
        "            manager.free(victim.seq_id)                 # its blocks go back now; it recomputes later\n", "",
        PREEMPT, r"manager.free\(victim.seq_id\)"),
    "preempts the oldest request instead of the newest": (
        "victim = queue.pop() if queue else req", "victim = queue.popleft() if queue else req",
        PREEMPT, "newest running request, D"),
    "keeps going after preempting itself": (
        "            if victim is req:\n                break\n", "", PREEMPT, "break"),
    "puts the preempted request at the back of waiting": (
        "waiting.appendleft(victim)", "waiting.append(victim)", PREEMPT, "FRONT of waiting"),
    "admits in a step that preempted": (
        "while waiting and not step.preempted:", "while waiting:", PREEMPT, "not step.preempted"),
    "admits past the watermark": (
        "blocks + manager.watermark_blocks > manager.num_free_blocks", "blocks > manager.num_free_blocks",
        ADMIT, "watermark"),
    "ignores the token budget": (
        "\n                or step.num_tokens + len(req.tokens) > max_num_batched_tokens", "",
        ADMIT, "budget of 20 tokens"),
    "counts blocks rounding down (off by one)": (
        "blocks = -(-len(req.tokens) // manager.block_size)", "blocks = len(req.tokens) // manager.block_size",
        ADMIT, "round up"),
    "skips a request that does not fit and admits the next one": (
        "            break\n        waiting.popleft()",
        "            waiting.rotate(-1)\n            if waiting[0] is req:\n                break\n"
        "            continue\n        waiting.popleft()",
        ADMIT, "first come"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    old, new, title, pattern = BUGS[bug]
    assert_first_failure(NB, planted(NB, CELL, (old, new)), title, pattern)


def test_errors_are_wrapped_with_a_hint():
    """A victim popped from an empty queue raises IndexError: the check names itself and the fallback to the request."""
    bug = planted(NB, CELL, ("victim = queue.pop() if queue else req", "victim = queue.pop()"))
    assert_first_failure(NB, bug, PREEMPT, r"IndexError.*queue.pop\(\) if queue else req")


def test_solution_passes():
    ns = run_cells(NB)
    assert ns["m"].num_free_blocks == 24
