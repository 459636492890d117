"""Wrong softmaxes planted in solutions/ex00_warmup.ipynb: no max subtracted, the wrong dimension or max, no
normalization, the wrong dtype, a reduction without keepdim."""

from __future__ import annotations

from planted import Plant


BUGS: dict[str, Plant] = {
    "no max subtraction (overflows)": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    e = torch.exp(x)\n"
                         "    return e / e.sum(-1, keepdim=True)"},
        2, "subtract each row's maximum"),
    "normalized over the wrong dim": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    return torch.softmax(x, dim=0)"},
        1, r"elements differ.*the softmax\s+ran over dim=0"),
    "not normalized": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    return torch.exp(x - x.amax(-1, keepdim=True))"},
        1, "exponentials are divided by that row's sum"),
    "global max instead of row max": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    e = torch.exp(x - x.max())\n"
                         "    return e / e.sum(-1, keepdim=True)"},
        2, "subtract each row's maximum"),
    "returns float64": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    return torch.softmax(x.double(), -1)"},
        1, "expected dtype"),
    "reduces without keepdim (breaks on 4-D inputs)": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    e = torch.exp(x - x.amax(-1, keepdim=True))\n"
                         "    return (e.transpose(0, -1) / e.sum(-1).transpose(0, -1)).transpose(0, -1) if x.dim() == 2 else e / e.sum(-1)"},
        3, "keepdim=True|broadcast back"),
    "float64 input returned as float32 (x.float())": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    x = x.float()\n"
                         "    e = torch.exp(x - x.amax(-1, keepdim=True))\n"
                         "    return e / e.sum(-1, keepdim=True)"},
        3, "float64 tensor returned torch.float32"),
}
