"""Exercise 1's checks catch the plausible wrong causal masks and naive attentions.

Each bug is the solution with one edit; the test runs the notebook with the edited work cell and expects the
check that guards against that mistake to fail with its hint.
"""

from pathlib import Path

import pytest

from nbrun import planted, run_cells

NB = Path(__file__).resolve().parent.parent / "solutions" / "ex01_naive_attention.ipynb"

# name: (work cell, text in the solution, buggy replacement, regex the failing check's message must match)
BUGS = {
    "mask hides the diagonal (off by one)": (
        "mask-work", "return j <= i + (n_k - n_q)", "return j < i + (n_k - n_q)", "diagonal is visible"),
    "mask shows the next key (off by one)": (
        "mask-work", "return j <= i + (n_k - n_q)", "return j <= i + (n_k - n_q) + 1", "off by one"),
    "mask aligned top-left": (
        "mask-work", "return j <= i + (n_k - n_q)", "return j <= i", "bottom-right"),
    "mask is 0/1 floats, not bool": (
        "mask-work", "return j <= i + (n_k - n_q)", "return (j <= i + (n_k - n_q)).float()", "bool"),
    "softmax without subtracting the max overflows": (
        "attention-work", "torch.softmax(s, dim=-1)", "(torch.exp(s) / torch.exp(s).sum(-1, keepdim=True))",
        "overflow"),
    "no 1/sqrt(d) scale": ("attention-work", " / math.sqrt(q.shape[-1])", "", "scale"),
    "softmax over the queries": ("attention-work", "torch.softmax(s, dim=-1)", "torch.softmax(s, dim=-2)", "dim=-1"),
    "causal mask not applied": ("attention-work", "if causal:", "if False:", "causal"),
    "hidden scores zeroed instead of -inf": ("attention-work", "-math.inf)", "0.0)", "causal"),
    "float32 returned for float16 inputs": ("attention-work", ".to(q.dtype)", "", "float16"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_check_catches(bug):
    cell, old, new, message = BUGS[bug]
    with pytest.raises(AssertionError, match=message):
        run_cells(NB, replace=planted(NB, cell, (old, new)))


def test_solution_passes_every_check():
    namespace = run_cells(NB)
    assert "naive_attention" in namespace
