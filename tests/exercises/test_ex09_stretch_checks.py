"""The checks of the optional stretch exercise 9 (the split-KV merge) catch the plausible wrong answers: for each bug
below, the FIRST failing check (the one a learner meets) must be the one that names it, with a hint that fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbrun import assert_caught, assert_first_failure, check_title, check_titles, planted, run_cells

SOLUTION = Path(__file__).parents[2] / "solutions" / "ex09_stretch_split_kv_merge.ipynb"
C1, C2, C3, C4, C5, C6 = (check_title(SOLUTION, n) for n in range(1, 7))
CASCADE_MERGE = "    out, _ = merge_states(torch.cat([prefix_out, own_out], dim=2), torch.cat([prefix_lse, own_lse], dim=2))"

# mistake -> (work cell, replacements, the check cell that must catch it first, its title, regex of its message)
BUGS = {
    "splits not cut at whole tiles": (
        "bounds-work", [("length = -(-per_split // block_n) * block_n", "length = per_split")],
        "check-bounds", C1, "whole number of tiles"),
    "last split not clipped to the context": (
        "bounds-work", [("bounds.append((start, min(start + length, context_len)))",
                         "bounds.append((start, start + length))")],
        "check-bounds", C1, "an end past context_len"),
    "empty split's start not clamped": (
        "bounds-work", [("start = min(s * length, context_len)", "start = s * length")],
        "check-bounds", C1, r"split 1 starts at 32, past the end of the context \(11\).*its start"),
    "empty splits left out": (
        "bounds-work", [("        bounds.append((start, min(start + length, context_len)))",
                         "        if start < context_len:\n"
                         "            bounds.append((start, min(start + length, context_len)))")],
        "check-bounds", C1, "empty splits included"),
    "mean of the partial outputs": (
        "merge-work", [("out = (w[..., None] * outs).sum(dim=-2) / total", "out = outs.mean(dim=-2)")],
        "check-merge-two", C2, "plain mean"),
    "weights not normalized": (
        "merge-work", [("out = (w[..., None] * outs).sum(dim=-2) / total", "out = (w[..., None] * outs).sum(dim=-2)")],
        "check-merge-two", C2, "divide by their total"),
    "max taken over the wrong dimension": (
        "merge-work", [("m = lses.amax(dim=-1, keepdim=True)", "m = lses.amax(dim=-2, keepdim=True)")],
        "check-merge-two", C2, r"got \(3, 4, 16\) and \(3, 4, 2\): the split dimension"),
    "empty splits' -inf replaced by 0": (
        "merge-work", [("w = torch.exp(lses - m)", "w = torch.exp(lses.nan_to_num(neginf=0.0) - m)")],
        "check-empty", C3, "keep the -inf"),
    "merged lse is the max": (
        "merge-work", [("lse = (m + torch.log(total)).squeeze(-1)", "lse = m.squeeze(-1)")],
        "check-lse", C4, "largest split's lse"),
    "merged lse is the sum of the lses": (
        "merge-work", [("lse = (m + torch.log(total)).squeeze(-1)", "lse = lses.sum(dim=-1)")],
        "check-lse", C4, "sum of the splits' lses"),
    "no max subtracted": (
        "merge-work", [("m = lses.amax(dim=-1, keepdim=True)", "m = torch.zeros_like(lses[..., :1])")],
        "check-large", C5, "every exponent must be <= 0"),
    "split 0's lse as the reference instead of the max": (
        "merge-work", [("m = lses.amax(dim=-1, keepdim=True)", "m = lses[..., :1]")],
        "check-large", C5, r"lses are \[3, 120\].*must be the row's maximum, not split 0's lse"),
    "cascade: the suffix state forgotten": (
        "cascade-work", [(CASCADE_MERGE, "    out = prefix_out[:, :, 0]")], "check-cascade", C6, "prefix alone"),
    "cascade: states stacked on the wrong dimension": (
        "cascade-work", [(CASCADE_MERGE, CASCADE_MERGE.replace("dim=2)", "dim=1)"))], "check-cascade", C6,
        r"expected shape \(16, 4, 16\), got \(16, 8, 16\)"),
}


@pytest.mark.parametrize("bug", list(BUGS))
def test_first_failing_check_names_the_mistake(bug):
    cell, changes, check_id, title, pattern = BUGS[bug]
    assert check_titles(SOLUTION)[check_id] == title, f"cell {check_id} is not titled {title!r}"
    assert_caught(SOLUTION, cell, changes, title, pattern)


@pytest.mark.parametrize("cell, change, title, pattern", [
    ("bounds-work", ("per_split = -(-context_len // num_splits)", "per_split = context_len / num_splits"),
     C1, r"starts and ends must be ints"),
    ("merge-work", ("(w[..., None] * outs)", "(w * outs)"), C2,
     r"RuntimeError.*\(at `out = \(w \* outs\)\.sum.*in merge_states\).*Hint: two tensors of different shapes"),
])
def test_errors_keep_their_line_and_get_a_hint_for_that_error(cell, change, title, pattern):
    assert_first_failure(SOLUTION, planted(SOLUTION, cell, change), title, pattern)


def test_solution_passes_every_check():
    assert "merge_states" in run_cells(SOLUTION)


def test_exercise_as_shipped_fails():
    exercise = Path(__file__).parents[2] / "exercises" / "ex09_stretch_split_kv_merge.ipynb"
    with pytest.raises(NotImplementedError):
        run_cells(exercise)
