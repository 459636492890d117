"""The warm-up's checks catch the plausible wrong softmaxes: the FIRST failing check names each mistake."""

from pathlib import Path

import pytest

from nbrun import assert_first_failure, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex00_warmup.ipynb"

# name: (the learner's softmax_rows, title of the first failing check, regex of its message)
BUGS = {
    "no max subtraction (overflows)": (
        "def softmax_rows(x):\n    e = torch.exp(x)\n    return e / e.sum(-1, keepdim=True)",
        "Check 2: large scores", "subtract each row's maximum"),
    "normalized over the wrong dim": (
        "def softmax_rows(x):\n    return torch.softmax(x, dim=0)", "Check 1: small scores", r"elements differ.*the softmax\s+ran over dim=0"),
    "not normalized": (
        "def softmax_rows(x):\n    return torch.exp(x - x.amax(-1, keepdim=True))", "Check 1: small scores",
        "exponentials are divided by that row's sum"),
    "global max instead of row max": (
        "def softmax_rows(x):\n    e = torch.exp(x - x.max())\n    return e / e.sum(-1, keepdim=True)",
        "Check 2: large scores", "subtract each row's maximum"),
    "returns float64": (
        "def softmax_rows(x):\n    return torch.softmax(x.double(), -1)", "Check 1: small scores", "expected dtype"),
    "reduces without keepdim (breaks on 4-D inputs)": (
        "def softmax_rows(x):\n    e = torch.exp(x - x.amax(-1, keepdim=True))\n    return (e.transpose(0, -1) / "
        "e.sum(-1).transpose(0, -1)).transpose(0, -1) if x.dim() == 2 else e / e.sum(-1)",
        "Check 3: any number of leading dimensions", "keepdim=True|broadcast back"),
    "float64 input returned as float32 (x.float())": (
        "def softmax_rows(x):\n    x = x.float()\n    e = torch.exp(x - x.amax(-1, keepdim=True))\n"
        "    return e / e.sum(-1, keepdim=True)",
        "Check 3: any number of leading dimensions", r"float64 tensor returned torch.float32"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    source, title, pattern = BUGS[bug]
    assert_first_failure(NB, {"softmax-work": source}, title, pattern)


def test_solution_passes_every_check():
    assert "softmax_rows" in run_cells(NB)
