"""Wrong softmaxes planted in solutions/ex00_warmup.ipynb: no max subtracted, the wrong dimension or max, no
normalization, the wrong dtype, a reduction without keepdim; and those only Check 4 (the whole input space) sees: the
caller's x changed in place, an epsilon in the sum (1e-6, and 1e-9 that only float64 shows), a reshape that breaks
on one row of shape (n,), a row of shape (n,) squeezed back to 0-d for n = 1, the maximum subtracted only when
positive or only when the scores are large (NaN on rows of large negative scores), float32 returned for float16."""

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
    "the max subtracted in place (the caller's x changes)": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    x -= x.amax(-1, keepdim=True)\n"
                         "    e = torch.exp(x)\n"
                         "    return e / e.sum(-1, keepdim=True)"},
        4, r"x of shape \(7,\).*your function changed its argument x.*x -= m"),
    "an epsilon added to the sum": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    e = torch.exp(x - x.amax(-1, keepdim=True))\n"
                         "    return e / (e.sum(-1, keepdim=True) + 1e-6)"},
        4, r"torch\.float64: 7 of 7 elements differ.*Hint: your row 0 sums to 0\.9999997.*needs no epsilon"),
    "rows flattened with flatten(0, -2) (breaks on one row of shape (n,))": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    rows = x.flatten(0, -2)\n"
                         "    e = torch.exp(rows - rows.amax(1, keepdim=True))\n"
                         "    return (e / e.sum(1, keepdim=True)).view(x.shape)"},
        4, r"x of shape \(7,\).*raised IndexError.*a single row of shape \(n,\)"),
    "a row of shape (n,) made 2-d and squeezed back (0-d for n = 1)": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    rows = x.unsqueeze(0) if x.dim() == 1 else x\n"
                         "    e = torch.exp(rows - rows.amax(-1, keepdim=True))\n"
                         "    p = e / e.sum(-1, keepdim=True)\n"
                         "    return p.squeeze() if x.dim() == 1 else p"},
        4, r"x of shape \(1,\): one row of one score.*expected shape \(1,\), got \(\)"),
    "the max subtracted only when positive (clamp(min=0))": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    e = torch.exp(x - x.amax(-1, keepdim=True).clamp(min=0))\n"
                         "    return e / e.sum(-1, keepdim=True)"},
        4, r"rows of one score, torch\.float16: .*NaN in rows whose largest score is -.*whatever its sign"),
    "the max subtracted only when some score is large": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    if x.numel() and x.max() > 80:\n"
                         "        x = x - x.amax(-1, keepdim=True)\n"
                         "    e = torch.exp(x)\n"
                         "    return e / e.sum(-1, keepdim=True)"},
        4, r"every score near -1e4.*15 elements are NaN.*NaN in rows whose largest score is -999\d"),
    "float64 computed in float32 (x.float() ... .to(x.dtype))": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    y = x.float()\n"
                         "    e = torch.exp(y - y.amax(-1, keepdim=True))\n"
                         "    return (e / e.sum(-1, keepdim=True)).to(x.dtype)"},
        4, r"x of shape \(7,\): one row.*torch\.float64: your result is a float32 computation.*"
           r"at \(0,\): expected (0\.16009\d+), got (?!\1\b)0\.16009\d+.*Hint: x\.float\(\)"),
    "an epsilon of 1e-9 added to the sum (float64 shows it)": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    e = torch.exp(x - x.amax(-1, keepdim=True))\n"
                         "    return e / (e.sum(-1, keepdim=True) + 1e-9)"},
        4, r"x of shape \(7,\).*torch\.float64: 7 of 7 elements differ.*at \(0,\): expected (0\.16009\d+), "
           r"got (?!\1\b)0\.16009\d+.*Hint: your row 0 sums to 0\.99999999.*needs no epsilon"),
    "float16 computed and returned as float32": Plant(
        {"softmax-work": "def softmax_rows(x):\n"
                         "    y = x if x.dtype == torch.float64 else x.float()\n"
                         "    e = torch.exp(y - y.amax(-1, keepdim=True))\n"
                         "    return e / e.sum(-1, keepdim=True)"},
        4, r"torch\.float16: returned torch\.float32"),
}
