"""The checks of exercise 4 catch the plausible wrong answers (each test plants one in the solution)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from nbrun import planted, run_cells  # noqa: E402

SOLUTION = Path(__file__).parents[1] / "solutions" / "ex04_flash_forward.ipynb"
WORK = "kernel-work"


# mistake -> (replacements in the loop body, the check that must catch it, words of its hint)
BUGS = {
    "acc not rescaled": ([("acc = alpha[:, None] * acc +", "acc = acc +")], "check-tiles", "alpha"),
    "l not rescaled": ([("l_i = alpha * l_i +", "l_i = l_i +")], "check-tiles", "alpha"),
    "exp instead of exp2": ([("p = tl.exp2(", "p = tl.exp("), ("alpha = tl.exp2(", "alpha = tl.exp(")],
                            "check-one-tile", "exp2, not exp"),
    "padding keys not masked": ([("keep = cols[None, :] < n_k", "keep = cols[None, :] >= 0")], "check-odd", "padding"),
    "masked to 0, not -inf": ([('tl.where(keep, s, float("-inf"))', "tl.where(keep, s, 0.0)")], "check-odd", "-inf"),
    "diagonal excluded": ([("cols[None, :] <= rows[:, None]", "cols[None, :] < rows[:, None]")], "check-causal",
                          "a query sees its own key"),
    "causal aligned top-left": ([("rows[:, None] + n_k - n_q", "rows[:, None]")], "check-causal", "bottom-right"),
    # Without a max there is nothing to rescale: exact until exp2 of a large score overflows.
    "no max subtracted": ([("p = tl.exp2(s - m_new[:, None])", "p = tl.exp2(s)"),
                           ("l_i = alpha * l_i +", "l_i = l_i +"), ("acc = alpha[:, None] * acc +", "acc = acc +")],
                          "check-large", "running max"),
}


@pytest.mark.parametrize("bug", list(BUGS))
def test_check_catches(bug):
    changes, check_id, hint = BUGS[bug]
    # Run up to the check that should catch the mistake: every earlier check must let it through or catch it.
    with pytest.raises(AssertionError, match=re.escape(hint)):
        run_cells(SOLUTION, replace=planted(SOLUTION, WORK, *changes), stop_after=check_id)
