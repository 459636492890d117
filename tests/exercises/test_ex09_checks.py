"""The checks of exercise 9 catch the plausible wrong answers (each test plants one in the solution).

The notebook runs as a learner would: for each bug the FIRST failing check (the one a learner meets) must be the
one named here, with a message that starts with its title and whose hint names the cause.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbrun import assert_caught, assert_first_failure, check_title, check_titles, planted, run_cells

SOLUTION = Path(__file__).parents[2] / "solutions" / "ex09_paged_attention.ipynb"
WORK = "kernel-work"

LOAD_TABLE = "physical = tl.load(table + tokens // BLOCK_SIZE, mask=valid, other=0)"
V_LOAD = "mask=valid[:, None], other=0.0)"
SCORE_MASK = 's = tl.where(valid[None, :], s, float("-inf"))'

K_LOAD_MASK = "mask=valid[None, :], other=0.0)"
C5 = check_title(SOLUTION, 5)

# mistake -> (replacements in the work cell, the check cell that must catch it first, its title, words of its message)
BUGS = {
    "exp instead of exp2": ([("p = tl.exp2(", "p = tl.exp("), ("alpha = tl.exp2(", "alpha = tl.exp(")],
                            "check-one-tile", "Check 1: one full tile", r"multiplied by log2\(e\)"),
    "tail scores masked to 0, not -inf": ([(SCORE_MASK, "s = tl.where(valid[None, :], s, 0.0)")],
                                          "check-partial", "Check 2: a partial tile", "unless its score is -inf"),
    "tail scores not masked": ([(SCORE_MASK, "")], "check-partial", "Check 2: a partial tile",
                               "tokens past context_len load as zero keys"),
    "off-by-one at the tail (<=)": ([("valid = tokens < context_len", "valid = tokens <= context_len")],
                                    "check-partial", "Check 2: a partial tile", "21 tokens instead of 20"),
    "mask by block, not by token": ([("valid = tokens < context_len",
                                      "valid = tokens // BLOCK_SIZE < tl.cdiv(context_len, BLOCK_SIZE)")],
                                    "check-partial", "Check 2: a partial tile", "all 32 tokens of the sequence's block"),
    "acc not rescaled": ([("acc = alpha[:, None] * acc +", "acc = acc +")], "check-tiles",
                         "Check 3: several key tiles", "must shrink by"),
    "l not rescaled": ([("l_i = alpha * l_i +", "l_i = l_i +")], "check-tiles", "Check 3: several key tiles",
                       "must shrink by"),
    "block table ignored (logical used as physical)": ([(LOAD_TABLE, "physical = tokens // BLOCK_SIZE")],
                                                       "check-table", "Check 4: a shuffled block table",
                                                       "logical block was used as the physical one"),
    "one block looked up per tile": ([(LOAD_TABLE, "physical = tl.load(table + start_n // BLOCK_SIZE) + 0 * tokens")],
                                     "check-table", "Check 4: a shuffled block table", "spans 4 blocks"),
    "slot taken modulo the tile": ([("slot = tokens % BLOCK_SIZE", "slot = tokens % BLOCK_N")],
                                   "check-table", "Check 4: a shuffled block table", "spans 4 blocks"),
    "block-table load without a mask (reads padding entries)": (
        [(LOAD_TABLE, "physical = tl.load(table + tokens // BLOCK_SIZE)")], "check-padding", C5,
        r"read entry 1 of its own row, past its 1 block.*block-table load needs the token mask"),
    "K loaded without a mask (its NaN scores hidden by tl.where)": (
        [(K_LOAD_MASK, ")")], "check-padding", C5, r"the K load .*holds no token of sequence 0.*K load needs"),
    "V loaded without a mask (NaN leaks from padding blocks)": (
        [(V_LOAD, ")")], "check-padding", C5, r"the V load .*V load needs the token mask"),
    "K and V loaded without masks": ([(V_LOAD, ")"), (K_LOAD_MASK, ")")], "check-padding", C5, "the K load"),
    "interleaved group mapping (h uses K/V head h % kv_heads)": (
        [("heads = kv_head * group + offs_h", "heads = kv_head + offs_h * tl.num_programs(1)")],
        "check-gqa", "Check 7: GQA and MQA", r"query heads \[1, 3, 4, 6\] are wrong"),
    "no max subtracted": ([("p = tl.exp2(s - m_new[:, None])", "p = tl.exp2(s)"),
                           ("alpha = tl.exp2(m_i - m_new)", "alpha = 1.0 + 0.0 * m_new")],
                          "check-large", "Check 8: large scores, blocks larger than the tile", "most likely an overflow"),
}


@pytest.mark.parametrize("bug", list(BUGS))
def test_first_failing_check_names_the_mistake(bug):
    changes, check_id, title, hint = BUGS[bug]
    assert check_titles(SOLUTION)[check_id] == title, f"cell {check_id} is not titled {title!r}"
    assert_caught(SOLUTION, WORK, changes, title, hint)


def test_shape_errors_name_the_kernel_line_and_get_the_shapes_hint():
    """A mask of the wrong shape makes Triton raise, not compute: the message quotes the kernel's line and explains."""
    bug = planted(SOLUTION, WORK, (V_LOAD, "mask=valid[None, :], other=0.0)"))
    assert_first_failure(SOLUTION, bug, "Check 1: one full tile",
                         r"raised ValueError: .*incompatible dimensions.*\(at `v = tl.load\(v_head.*in paged_decode_kernel\)"
                         r".*Hint: Triton could not combine two blocks of different shapes")


def test_a_name_error_is_reported_as_such_at_its_kernel_line_without_the_shapes_hint():
    bug = planted(SOLUTION, WORK, ("s = tl.dot(q, k, ", "s = tl.dot(q, kk, "))
    text = assert_first_failure(SOLUTION, bug, "Check 1: one full tile",
                                r"raised NameError: name 'kk' is not defined \(at `s = tl.dot\(q, kk,.*in paged_decode_kernel\)")
    assert "shapes" not in text


def test_solution_passes_every_check():
    run_cells(SOLUTION)


def test_exercise_as_shipped_fails():
    exercise = Path(__file__).parents[2] / "exercises" / "ex09_paged_attention.ipynb"
    # Inside a Triton kernel the stub's NotImplementedError arrives wrapped by the interpreter (or, compiled, as
    # a compilation error that names it).
    with pytest.raises(Exception, match="NotImplementedError|Exercise: replace this line"):
        run_cells(exercise)
