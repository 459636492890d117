"""The checks of exercise 3 catch the plausible wrong answers (each test plants one in the solution)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from nbrun import planted, run_cells  # noqa: E402

SOLUTION = Path(__file__).parents[1] / "solutions" / "ex03_triton_basics.ipynb"


# (work cell, correct code, the mistake, the check that must catch it, words of the expected message)
BUGS = {
    "store without mask": ("add-work", "tl.store(out_ptr + offsets, x + y, mask=mask)",
                           "tl.store(out_ptr + offsets, x + y)", "mask-check", "past the end of out"),
    "grid n // block": ("add-work", "grid = (triton.cdiv(x.numel(), block),)", "grid = (x.numel() // block,)",
                        "add-check", "triton.cdiv(n, BLOCK)"),
    "no pid offset": ("add-work", "offsets = pid * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.arange(0, BLOCK)",
                      "add-check", "pid * BLOCK"),
    "softmax store without mask": ("softmax-work", "num / tl.sum(num, 0), mask=mask)", "num / tl.sum(num, 0))",
                                   "softmax-check-mask", "padding columns"),
    "divide by max": ("softmax-work", "num / tl.sum(num, 0)", "num / tl.max(num, 0)", "softmax-check-basic",
                      "sum of the exponentials"),
    "padding loads 0": ("softmax-work", "other=float(\"-inf\")", "other=0.0", "softmax-check-odd", "padding"),
    "rows n_cols apart": ("softmax-work", "x_ptr + row * stride_x", "x_ptr + row * n_cols", "softmax-check-strided",
                          "stride_x"),
    "no max subtraction": ("softmax-work", "tl.exp(x - tl.max(x, 0))", "tl.exp(x)", "softmax-check-large",
                           "subtract the row max"),
}


@pytest.mark.parametrize("bug", list(BUGS))
def test_check_catches(bug):
    cell_id, old, new, check_id, message = BUGS[bug]
    # Run up to the check that should catch the mistake; the earlier checks must pass (or catch it too).
    with pytest.raises(AssertionError, match=re.escape(message)):
        run_cells(SOLUTION, replace=planted(SOLUTION, cell_id, (old, new)), stop_after=check_id)
