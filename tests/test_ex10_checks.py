"""Exercise 10's checks catch the plausible wrong scheduler steps: each bug below must fail a check, with a hint."""

from pathlib import Path

import pytest

from nbrun import planted, run_cells

NB = Path(__file__).resolve().parent.parent / "solutions" / "ex10_scheduler_step.ipynb"
CELL = "schedule-work"

# (solution text, buggy text, words the failing check's message must contain)
BUGS = {
    "forgets to free the preempted request (leaks its blocks)": (
        "            manager.free(victim.seq_id)                 # its blocks go back now; it recomputes later\n", "",
        r"manager.free\(victim.seq_id\)"),
    "preempts the oldest request instead of the newest": (
        "victim = queue.pop() if queue else req", "victim = queue.popleft() if queue else req",
        "newest running request, D"),
    "keeps going after preempting itself": (
        "            if victim is req:\n                break\n", "", "break"),
    "puts the preempted request at the back of waiting": (
        "waiting.appendleft(victim)", "waiting.append(victim)", "FRONT of waiting"),
    "admits in a step that preempted": (
        "while waiting and not step.preempted:", "while waiting:", "not step.preempted"),
    "admits past the watermark": (
        "blocks + manager.watermark_blocks > manager.num_free_blocks", "blocks > manager.num_free_blocks",
        "watermark"),
    "ignores the token budget": (
        "\n                or step.num_tokens + len(req.tokens) > max_num_batched_tokens", "", "budget of 20 tokens"),
    "counts blocks rounding down (off by one)": (
        "blocks = -(-len(req.tokens) // manager.block_size)", "blocks = len(req.tokens) // manager.block_size",
        "round up"),
    "skips a request that does not fit and admits the next one": (
        "            break\n        waiting.popleft()",
        "            waiting.rotate(-1)\n            if waiting[0] is req:\n                break\n"
        "            continue\n        waiting.popleft()",
        "first come"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_check_catches(bug):
    old, new, words = BUGS[bug]
    with pytest.raises(AssertionError, match=words):
        run_cells(NB, replace=planted(NB, CELL, (old, new)))


def test_solution_passes():
    ns = run_cells(NB)
    assert ns["m"].num_free_blocks == 24
