"""Exercise 9's checks, beyond its table of planted bugs (``tests/planted``): errors raised inside the kernel name
their line and get the hint for that error; the exercise as shipped fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbrun import assert_first_failure, check_title, planted, run_cells
from pagedlab.attention import paged_decode_reference
from pagedlab.exercise_checks import ex09

SOLUTION = Path(__file__).parents[2] / "solutions" / "ex09_paged_attention.ipynb"
WORK = "kernel-work"

V_LOAD = "mask=valid[:, None], other=0.0)"


def test_shape_errors_name_the_kernel_line_and_get_the_shapes_hint():
    """A mask of the wrong shape makes Triton raise, not compute: the message quotes the kernel's line and explains."""
    bug = planted(SOLUTION, WORK, (V_LOAD, "mask=valid[None, :], other=0.0)"))
    assert_first_failure(SOLUTION, bug, check_title(SOLUTION, 1),
                         r"raised ValueError: .*incompatible dimensions.*\(at `v = tl.load\(v_head.*in paged_decode_kernel\)"
                         r".*Hint: Triton could not combine two blocks of different shapes")


def test_a_name_error_is_reported_as_such_at_its_kernel_line_without_the_shapes_hint():
    bug = planted(SOLUTION, WORK, ("s = tl.dot(q, k, ", "s = tl.dot(q, kk, "))
    text = assert_first_failure(SOLUTION, bug, check_title(SOLUTION, 1),
                                r"raised NameError: name 'kk' is not defined \(at `s = tl.dot\(q, kk,.*in paged_decode_kernel\)")
    assert "shapes" not in text


def test_exercise_as_shipped_fails():
    exercise = Path(__file__).parents[2] / "exercises" / "ex09_paged_attention.ipynb"
    # Inside a Triton kernel the stub's NotImplementedError arrives wrapped by the interpreter (or, compiled, as
    # a compilation error that names it).
    with pytest.raises(Exception, match="NotImplementedError|Exercise: replace this line"):
        run_cells(exercise)


def test_only_some_heads_wrong_points_at_the_head_mapping():
    """A launcher whose second head reads the wrong query (as ``heads = kv_head * BLOCK_H + offs_h`` does on a GPU,
    where that store lands past the output; planting that kernel here would write past a tensor in this process)."""
    def wrong_second_head(q, k, v, tables, lens):
        out = paged_decode_reference(q, k, v, tables, lens)
        out[:, 1] = 0
        return out

    with pytest.raises(AssertionError, match=r"Query heads \[1\] differ and \[0\] are right: .*name the wrong "
                                             r"query heads"):
        ex09.check_one_full_tile(wrong_second_head)
