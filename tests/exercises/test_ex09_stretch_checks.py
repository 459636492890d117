"""The stretch exercise 9 (the split-KV merge), beyond its table of planted bugs (``tests/planted``): errors keep
their line and get a hint for that error; the exercise as shipped fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbrun import assert_first_failure, check_title, planted, run_cells

SOLUTION = Path(__file__).parents[2] / "solutions" / "ex09_stretch_split_kv_merge.ipynb"
C1, C2 = (check_title(SOLUTION, n) for n in (1, 2))


@pytest.mark.parametrize("cell, change, title, pattern", [
    ("bounds-work", ("per_split = -(-context_len // num_splits)", "per_split = context_len / num_splits"),
     C1, r"starts and ends must be ints"),
    ("merge-work", ("(w[..., None] * outs)", "(w * outs)"), C2,
     r"RuntimeError.*\(at `out = \(w \* outs\)\.sum.*in merge_states\).*Hint: two tensors of different shapes"),
])
def test_errors_keep_their_line_and_get_a_hint_for_that_error(cell, change, title, pattern):
    assert_first_failure(SOLUTION, planted(SOLUTION, cell, change), title, pattern)


def test_exercise_as_shipped_fails():
    exercise = Path(__file__).parents[2] / "exercises" / "ex09_stretch_split_kv_merge.ipynb"
    with pytest.raises(NotImplementedError):
        run_cells(exercise)
