"""The checks of the optional stretch exercise 9 (the split-KV merge) catch the plausible wrong answers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from nbrun import planted, run_cells  # noqa: E402

SOLUTION = Path(__file__).parents[1] / "solutions" / "ex09_stretch_split_kv_merge.ipynb"

# mistake -> (work cell, replacements, the check that must catch it, its title, words of its hint)
BUGS = {
    "splits not cut at whole tiles": (
        "bounds-work", [("length = -(-per_split // block_n) * block_n", "length = per_split")],
        "check-bounds", "Check 1: the splits' key ranges", "whole tiles"),
    "last split not clipped to the context": (
        "bounds-work", [("bounds.append((start, min(start + length, context_len)))",
                         "bounds.append((start, start + length))")],
        "check-bounds", "Check 1: the splits' key ranges", "no end past context_len"),
    "empty splits left out": (
        "bounds-work", [("        bounds.append((start, min(start + length, context_len)))",
                         "        if start < context_len:\n"
                         "            bounds.append((start, min(start + length, context_len)))")],
        "check-bounds", "Check 1: the splits' key ranges", "empty splits included"),
    "mean of the partial outputs": (
        "merge-work", [("out = (w[..., None] * outs).sum(dim=-2) / total", "out = outs.mean(dim=-2)")],
        "check-merge-two", "Check 2: merging two splits", "plain mean"),
    "weights not normalized": (
        "merge-work", [("out = (w[..., None] * outs).sum(dim=-2) / total", "out = (w[..., None] * outs).sum(dim=-2)")],
        "check-merge-two", "Check 2: merging two splits", "divide by the total"),
    "max taken over the wrong dimension": (
        "merge-work", [("m = lses.amax(dim=-1, keepdim=True)", "m = lses.amax(dim=-2, keepdim=True)")],
        "check-merge-two", "Check 2: merging two splits", "split dimension"),
    "empty splits' -inf replaced by 0": (
        "merge-work", [("w = torch.exp(lses - m)", "w = torch.exp(lses.nan_to_num(neginf=0.0) - m)")],
        "check-empty", "Check 3: empty splits", "keep the -inf"),
    "merged lse is the max": (
        "merge-work", [("lse = (m + torch.log(total)).squeeze(-1)", "lse = m.squeeze(-1)")],
        "check-lse", "Check 4: the merged log-sum-exp", "log of the total sum"),
    "merged lse is the sum of the lses": (
        "merge-work", [("lse = (m + torch.log(total)).squeeze(-1)", "lse = lses.sum(dim=-1)")],
        "check-lse", "Check 4: the merged log-sum-exp", "log of the total sum"),
    "no max subtracted": (
        "merge-work", [("m = lses.amax(dim=-1, keepdim=True)", "m = torch.zeros_like(lses[..., :1])")],
        "check-large", "Check 5: large scores", "Subtract the max first"),
}


@pytest.mark.parametrize("bug", list(BUGS))
def test_check_catches(bug):
    cell, changes, check_id, title, hint = BUGS[bug]
    with pytest.raises(AssertionError) as caught:
        run_cells(SOLUTION, replace=planted(SOLUTION, cell, *changes), stop_after=check_id)
    message = str(caught.value)
    assert message.startswith(title), f"caught by another check: {message[:200]}"
    assert hint in message, f"the hint does not name the cause: {message[-400:]}"


def test_exercise_as_shipped_fails():
    exercise = Path(__file__).parents[1] / "exercises" / "ex09_stretch_split_kv_merge.ipynb"
    with pytest.raises(NotImplementedError):
        run_cells(exercise)
