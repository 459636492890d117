"""The warm-up's checks catch the plausible wrong softmaxes."""

from pathlib import Path

import pytest

from nbrun import run_cells

NB = Path(__file__).resolve().parent.parent / "solutions" / "ex00_warmup.ipynb"

BUGS = {
    "no max subtraction (overflows)": "def softmax_rows(x):\n    e = torch.exp(x)\n    return e / e.sum(-1, keepdim=True)",
    "normalized over the wrong dim": "def softmax_rows(x):\n    return torch.softmax(x, dim=0)",
    "not normalized": "def softmax_rows(x):\n    return torch.exp(x - x.amax(-1, keepdim=True))",
    "global max instead of row max": (
        "def softmax_rows(x):\n    e = torch.exp(x - x.max())\n    return e / e.sum(-1, keepdim=True)"),
    "returns float64": "def softmax_rows(x):\n    return torch.softmax(x.double(), -1)",
}


@pytest.mark.parametrize("bug", BUGS)
def test_check_catches(bug):
    with pytest.raises(AssertionError):
        run_cells(NB, replace={"softmax-work": BUGS[bug]})
