"""The checks of exercise 4 catch the plausible wrong answers: each test plants one in the solution, runs the
notebook as a learner would, and expects the FIRST failing check to be the one that names the mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbrun import assert_caught, first_failure, planted, run_cells

SOLUTION = Path(__file__).parents[2] / "solutions" / "ex04_flash_forward.ipynb"
WORK = "kernel-work"
CAUSAL = "keep = keep & (cols[None, :] <= rows[:, None] + n_k - n_q)"

# mistake -> (replacements in the loop body, title of the first failing check, regex of its hint)
BUGS = {
    "acc not rescaled": ([("acc = alpha[:, None] * acc +", "acc = acc +")], "Check 2: several key tiles", "must shrink by alpha"),
    "l not rescaled": ([("l_i = alpha * l_i +", "l_i = l_i +")], "Check 2: several key tiles", "must shrink by alpha"),
    "exp instead of exp2": ([("p = tl.exp2(", "p = tl.exp("), ("alpha = tl.exp2(", "alpha = tl.exp(")],
                            "Check 1: one key tile", r"multiplied by log2\(e\)"),
    "padding keys not masked": ([("keep = cols[None, :] < n_k", "keep = cols[None, :] >= 0")],
                                "Check 3: padding keys, tiles of any shape", "padding keys of the last tile"),
    "masked to 0, not -inf": ([('tl.where(keep, s, float("-inf"))', "tl.where(keep, s, 0.0)")],
                              "Check 3: padding keys, tiles of any shape", "a score of\\s+-inf"),
    "padding mask built with BLOCK_M (square-tile-only code)": (
        [("keep = cols[None, :] < n_k", "keep = (start_n + tl.arange(0, BLOCK_M))[None, :] < n_k")],
        "Check 3: padding keys, tiles of any shape", r"BLOCK_M != BLOCK_N .* \(BLOCK_M, BLOCK_N\)"),
    "1-D causal mask (the hint's formula without broadcasting)": (
        [(CAUSAL, "keep = keep & (cols <= rows + n_k - n_q)")],
        "Check 4: causal, tiles of any shape", r"at `keep = keep & \(cols <= rows.*A 1-D comparison"),
    "diagonal excluded (NaN in row 0)": ([(CAUSAL, CAUSAL.replace("<=", "<"))], "Check 4: causal, tiles of any shape",
                                         r"rows \[0.*\] are NaN.*a query sees its own key"),
    "causal aligned top-left": ([(CAUSAL, "keep = keep & (cols[None, :] <= rows[:, None])")],
                                "Check 4: causal, tiles of any shape", "aligned top-left"),
    "causal mask forgotten": ([(CAUSAL, "keep = keep")], "Check 4: causal, tiles of any shape", "without the causal mask"),
    # Without a max there is nothing to rescale: exact until exp2 of a large score overflows.
    "no max subtracted": ([("p = tl.exp2(s - m_new[:, None])", "p = tl.exp2(s)"),
                           ("l_i = alpha * l_i +", "l_i = l_i +"), ("acc = alpha[:, None] * acc +", "acc = acc +")],
                          "Check 5: large scores", "running max"),
}


@pytest.mark.parametrize("bug", list(BUGS))
def test_first_failing_check_names_the_mistake(bug):
    assert_caught(SOLUTION, WORK, *BUGS[bug])


def test_solution_passes_every_check():
    assert "attention_kernel" in run_cells(SOLUTION)


def test_a_name_error_names_its_kernel_line_without_the_shapes_hint():
    bug = planted(SOLUTION, WORK, ("m_new = tl.maximum(m_i, tl.max(s, 1))", "m_new = tl.maximum(m, tl.max(s, 1))"))
    failure = first_failure(SOLUTION, bug)
    assert failure is not None
    text = failure[1]
    assert text.startswith("CheckError: Check 1: one key tile: your code raised NameError: name 'm' is not defined "
                           "(at `m_new = tl.maximum(m, tl.max(s, 1))`, in attention_kernel)"), text
    assert "shapes" not in text
