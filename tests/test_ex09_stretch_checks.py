"""The checks of the optional stretch exercise 9 (the split-KV merge) catch the plausible wrong answers: for each bug
below, the FIRST failing check (the one a learner meets) must be the one that names it, with a hint."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from nbrun import assert_first_failure, check_titles, planted, run_cells  # noqa: E402

SOLUTION = Path(__file__).parents[1] / "solutions" / "ex09_stretch_split_kv_merge.ipynb"

# mistake -> (work cell, replacements, the check cell that must catch it first, its title, words of its hint)
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
def test_first_failing_check_names_the_mistake(bug):
    cell, changes, check_id, title, hint = BUGS[bug]
    assert check_titles(SOLUTION)[check_id] == title, f"cell {check_id} is not titled {title!r}"
    assert_first_failure(SOLUTION, planted(SOLUTION, cell, *changes), title, re.escape(hint))


@pytest.mark.parametrize("cell, change, title, pattern", [
    ("bounds-work", ("per_split = -(-context_len // num_splits)", "per_split = context_len / num_splits"),
     "Check 1: the splits' key ranges", r"TypeError.*integer division"),
    ("merge-work", ("(w[..., None] * outs)", "(w * outs)"), "Check 2: merging two splits",
     r"RuntimeError.*w\[\.\.\., None\] \* outs"),
])
def test_errors_are_wrapped_with_a_hint(cell, change, title, pattern):
    assert_first_failure(SOLUTION, planted(SOLUTION, cell, change), title, pattern)


def test_solution_passes_every_check():
    assert "merge_states" in run_cells(SOLUTION)


def test_exercise_as_shipped_fails():
    exercise = Path(__file__).parents[1] / "exercises" / "ex09_stretch_split_kv_merge.ipynb"
    with pytest.raises(NotImplementedError):
        run_cells(exercise)
