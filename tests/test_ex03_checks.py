"""The checks of exercise 3 catch the plausible wrong answers: each test plants one in the solution and expects the
FIRST failing check to be the one that names it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from nbrun import assert_first_failure, planted, run_cells  # noqa: E402

SOLUTION = Path(__file__).parents[1] / "solutions" / "ex03_triton_basics.ipynb"


C1 = "Check 1: vector add, nothing read or written past the end"

# (work cell, correct code, the mistake, title of the first failing check, words of the expected message)
BUGS = {
    "store without mask": ("add-work", "tl.store(out_ptr + offsets, x + y, mask=mask)",
                           "tl.store(out_ptr + offsets, x + y)", C1, "past the end of out"),
    "loads without mask": ("add-work", "x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets)",
                           C1, "read 28 elements of x past n = 100 (indices 100 to 127)"),
    "grid n // block": ("add-work", "grid = (triton.cdiv(x.numel(), block),)", "grid = (x.numel() // block,)",
                        "Check 2: vector add, any length", "the last, partial block, are wrong"),
    "no pid offset": ("add-work", "offsets = pid * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.arange(0, BLOCK)",
                      "Check 2: vector add, any length", "pid * BLOCK"),
    "softmax store without mask": ("softmax-work", "num / tl.sum(num, 0), mask=mask)", "num / tl.sum(num, 0))",
                                   "Check 3: row softmax, nothing written past n_cols", "padding columns"),
    "divide by max": ("softmax-work", "num / tl.sum(num, 0)", "num / tl.max(num, 0)", "Check 4: row softmax without padding",
                      "divided by their sum"),
    "padding loads 0": ("softmax-work", "other=float(\"-inf\")", "other=0.0", "Check 5: row softmax, any number of columns", "padding columns were counted in the sum"),
    "rows n_cols apart": ("softmax-work", "x_ptr + row * stride_x", "x_ptr + row * n_cols", "Check 6: row softmax, strided rows",
                          "stride_x = 64 apart"),
    "no max subtraction": ("softmax-work", "tl.exp(x - tl.max(x, 0))", "tl.exp(x)", "Check 7: row softmax, large scores",
                           "subtract the row max"),
}


@pytest.mark.parametrize("bug", list(BUGS))
def test_first_failing_check_names_the_mistake(bug):
    cell_id, old, new, title, message = BUGS[bug]
    assert_first_failure(SOLUTION, planted(SOLUTION, cell_id, (old, new)), title, re.escape(message))


def test_solution_passes_every_check():
    assert "softmax_kernel" in run_cells(SOLUTION)
