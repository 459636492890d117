"""The checks of exercise 3 catch the plausible wrong answers: each test plants one in the solution and expects the
FIRST failing check to be the one that names it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nbrun import assert_caught, check_title, run_cells

SOLUTION = Path(__file__).parents[2] / "solutions" / "ex03_triton_basics.ipynb"


C1, C2, C3, C4, C6 = (check_title(SOLUTION, n) for n in (1, 2, 3, 4, 6))

FIRST_PASS = """    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, 0))
        l = l * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m = m_new
"""
THREE_PASSES = """    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"))
        m = tl.maximum(m, tl.max(x, 0))
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"))
        l += tl.sum(tl.exp(x - m), 0)
"""

# (work cell, [(correct code, the mistake)], title of the first failing check, words of the expected message)
BUGS = {
    "store without mask": ("add-work", [("tl.store(out_ptr + offsets, x + y, mask=mask)",
                                         "tl.store(out_ptr + offsets, x + y)")], C1, "past the end of out"),
    "loads without mask": ("add-work", [("x = tl.load(x_ptr + offsets * stride_x, mask=mask)",
                                         "x = tl.load(x_ptr + offsets * stride_x)")],
                           C1, "read 28 elements of x past n = 100 (indices 100 to 127)"),
    "grid n // block": ("add-work", [("grid = (triton.cdiv(x.numel(), block),)", "grid = (x.numel() // block,)")],
                        C2, "the last, partial block, are wrong"),
    "no pid offset": ("add-work", [("offsets = pid * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.arange(0, BLOCK)")],
                      C2, "pid * BLOCK"),
    "strides ignored": ("add-work", [("x_ptr + offsets * stride_x", "x_ptr + offsets"),
                                     ("y_ptr + offsets * stride_y", "y_ptr + offsets")], C3, "the strides were ignored"),
    "y's stride passed for x": ("add-work", [("x.stride(0), y.stride(0)", "y.stride(0), y.stride(0)")], C3,
                                "read x with stride 2 and y with stride 2; x.stride(0) = 7"),
    "mask on the memory offset": ("add-work", [("mask = offsets < n", "mask = offsets * stride_x < n")], C3,
                                  "elements 0 to 7 are right and the rest wrong: 8 = ceil(n / stride_x)"),
    "softmax store without mask": ("softmax-work", [("tl.exp(x - m) / l, mask=mask)", "tl.exp(x - m) / l)")], C4,
                                   "wrote 9 padding columns"),
    "softmax loads without mask": ("softmax-work", [(', mask=mask, other=float("-inf"))', ")")], C4,
                                   "read columns [13, 14, 15] of x, past n_cols = 13"),
    "three passes over the row": ("softmax-work", [(FIRST_PASS, THREE_PASSES)], C4,
                                  "read some elements of x 3 times"),
    "divide by max": ("softmax-work", [("tl.exp(x - m) / l", "tl.exp(x - m) / m")],
                      "Check 5: row softmax, one tile", "divided by their sum"),
    "one tile only": ("softmax-work", [("range(0, n_cols, BLOCK)", "range(0, BLOCK, BLOCK)")], C6,
                      "softmax of the first tile alone"),
    "running sum not rescaled": ("softmax-work", [("l = l * tl.exp(m - m_new) + ", "l = l + ")], C6,
                                 "relative to the OLD max"),
    "padding loads 0": ("softmax-work", [('other=float("-inf")', "other=0.0")],
                        "Check 7: row softmax, any number of columns", "padding columns of the last tile were counted"),
    "rows n_cols apart": ("softmax-work", [("x_ptr + row * stride_x", "x_ptr + row * n_cols")], C4,
                          "the program of row 1 read elements of row(s) [0] of x (rows of 13 columns, stride_x = 16)"),
    "x's rows read stride_out apart": ("softmax-work", [("x_ptr + row * stride_x", "x_ptr + row * stride_out")],
                                       "Check 8: row softmax, strided rows", "stride_x = 64 apart"),
    "no max subtraction": ("softmax-work", [("l = l * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)",
                                             "l = l + tl.sum(tl.exp(x), 0)"), ("tl.exp(x - m) / l", "tl.exp(x) / l")],
                           "Check 9: row softmax, large scores", "a score minus a max"),
}


@pytest.mark.parametrize("bug", list(BUGS))
def test_first_failing_check_names_the_mistake(bug):
    cell_id, edits, title, message = BUGS[bug]
    assert_caught(SOLUTION, cell_id, edits, title, re.escape(message))


def test_solution_passes_every_check():
    assert "softmax_kernel" in run_cells(SOLUTION)
