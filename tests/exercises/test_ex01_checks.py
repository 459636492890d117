"""Exercise 1's checks catch the plausible wrong causal masks and naive attentions.

Each bug is the solution with one edit; the test runs the notebook with the edited work cell, as a learner would, and
expects the FIRST failing check to be the one that guards against that mistake, with its hint.
"""

from pathlib import Path

import pytest

from nbrun import assert_caught, assert_first_failure, planted, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex01_naive_attention.ipynb"

# name: (work cell, text in the solution, buggy replacement, title of the first failing check, regex of its message)
BUGS = {
    "mask hides the diagonal (off by one)": (
        "mask-work", "return j <= i + (n_k - n_q)", "return j < i + (n_k - n_q)", "Check 1: square masks", "diagonal is visible"),
    "mask shows the next key (off by one)": (
        "mask-work", "return j <= i + (n_k - n_q)", "return j <= i + (n_k - n_q) + 1", "Check 1: square masks", "off by one"),
    "mask aligned top-left": (
        "mask-work", "return j <= i + (n_k - n_q)", "return j <= i", "Check 2: fewer queries than keys", "bottom-right"),
    "mask is 0/1 floats, not bool": (
        "mask-work", "return j <= i + (n_k - n_q)", "return (j <= i + (n_k - n_q)).float()", "Check 1: square masks", "bool"),
    "softmax without subtracting the max overflows": (
        "attention-work", "torch.softmax(s, dim=-1)", "(torch.exp(s) / torch.exp(s).sum(-1, keepdim=True))",
        "Check 5: huge scores", "subtract each row's maximum"),
    "no 1/sqrt(d) scale": ("attention-work", " / math.sqrt(q.shape[-1])", "", "Check 3: attention", "unscaled scores"),
    "softmax over the queries": ("attention-work", "torch.softmax(s, dim=-1)", "torch.softmax(s, dim=-2)", "Check 3: attention",
                                 "over the queries"),
    "causal mask not applied": ("attention-work", "if causal:", "if False:", "Check 4: causal attention", "without the mask"),
    "hidden scores zeroed instead of -inf": ("attention-work", "-math.inf)", "0.0)", "Check 4: causal attention", "-inf"),
    "float32 returned for float16 inputs": ("attention-work", ".to(q.dtype)", "", "Check 6: half precision", "float16"),
}

# Computing in float16: the scores themselves, then everything after them.
FP16 = [("q.float() @ k.float()", "q @ k"), ("@ v.float()", "@ v")]


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    cell, old, new, title, pattern = BUGS[bug]
    assert_caught(NB, cell, [(old, new)], title, pattern)


def test_computing_in_float16_is_caught_by_scores_that_overflow_it():
    assert_first_failure(NB, planted(NB, "attention-work", *FP16), "Check 6: half precision", "overflow float16")


def test_solution_passes_every_check():
    namespace = run_cells(NB)
    assert "naive_attention" in namespace
