"""The stretch exercise of Part II (GQA in the forward kernel): the FIRST failing check names each planted mistake."""

from pathlib import Path

import pytest

from nbrun import assert_caught, planted, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex04_stretch_gqa_forward.ipynb"
POINTERS = """    Q = Q + b * stride_qb + h * stride_qh
    K = K + b * stride_kb + h_kv * stride_kh
    V = V + b * stride_vb + h_kv * stride_vh
    Out = Out + b * stride_ob + h * stride_oh
"""
# Right for contiguous (batch, heads, seq, d) tensors only.
CONTIGUOUS = """    n_kv_heads = n_heads // group
    Q = Q + (b * n_heads + h) * n_q * HEAD_DIM
    K = K + (b * n_kv_heads + h_kv) * n_k * HEAD_DIM
    V = V + (b * n_kv_heads + h_kv) * n_k * HEAD_DIM
    Out = Out + (b * n_heads + h) * n_q * HEAD_DIM
"""

# name: ([(solution text, buggy text)], title of the first failing check, regex of its message)
BUGS = {
    "grid without the batch": (
        [("grid = (triton.cdiv(n_q, block_m), batch * n_heads)", "grid = (triton.cdiv(n_q, block_m), n_heads)")],
        "Check 1: batch and heads, one K/V head per query head", r"batch 0 is right.*batch × n_heads"),
    "query heads interleaved over the K/V heads (h % n_kv_heads)": (
        [("    h_kv = h // group  # consecutive query heads share one K/V head",
          "    h_kv = h % (n_heads // group)")],
        "Check 2: grouped-query attention", r"read K/V head h % 2: the heads of a group are CONSECUTIVE"),
    "offsets computed for contiguous tensors instead of from the strides": (
        [(POINTERS, CONTIGUOUS)], "Check 3: inputs that are views, not contiguous tensors", "come from the strides"),
    "no check that the K/V heads divide the query heads": (
        [("    if n_heads % n_kv_heads:\n        raise ValueError(f\"k has {n_kv_heads} heads, which must divide the "
          "{n_heads} query heads of q\")\n", "")],
        "Check 4: heads that do not divide", "cannot share 4 K/V heads equally"),
    "Out moved with q's strides (right only while out and q are laid out alike)": (
        [("Out = Out + b * stride_ob + h * stride_oh", "Out = Out + b * stride_qb + h * stride_qh")],
        "Check 3: inputs that are views, not contiguous tensors", r"checks 1 and 2 passed on contiguous tensors"),
    "ValueError that does not name k": (
        [('raise ValueError(f"k has {n_kv_heads} heads, which must divide the {n_heads} query heads of q")',
          'raise ValueError("the heads do not divide")')],
        "Check 4: heads that do not divide", r"should name the argument k, got: the heads do not divide"),
    "ValueError that names the count, not k (a bare letter k elsewhere does not count)": (
        [('raise ValueError(f"k has {n_kv_heads} heads, which must divide the {n_heads} query heads of q")',
          'raise ValueError(f"{n_heads} query heads do not split into {n_kv_heads} groups")')],
        "Check 4: heads that do not divide", r"should name the argument k, got: 6 query heads"),
    "assert instead of a ValueError": (
        [("    if n_heads % n_kv_heads:\n        raise ValueError(f\"k has {n_kv_heads} heads, which must divide the "
          "{n_heads} query heads of q\")\n", "    assert n_heads % n_kv_heads == 0\n")],
        "Check 4: heads that do not divide", r"raised AssertionError\(''\) .*a ValueError that names k"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    assert_caught(NB, "kernel-work", *BUGS[bug])


def test_solution_passes_every_check():
    assert "gqa_forward" in run_cells(NB)
