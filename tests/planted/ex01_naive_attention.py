"""Wrong causal masks (off by one, aligned top-left, 0/1 floats, not applied) and wrong attention (no scale,
softmax over the queries, overflow, the wrong dtype) planted in solutions/ex01_naive_attention.ipynb."""

from __future__ import annotations

from planted import Plant


BUGS: dict[str, Plant] = {
    "mask hides the diagonal (off by one)": Plant(
        {"mask-work": (
            ("return j <= i + (n_k - n_q)", "return j < i + (n_k - n_q)"),
        )},
        1, "diagonal is visible"),
    "mask shows the next key (off by one)": Plant(
        {"mask-work": (
            ("return j <= i + (n_k - n_q)", "return j <= i + (n_k - n_q) + 1"),
        )},
        1, "off by one"),
    "mask aligned top-left": Plant(
        {"mask-work": (
            ("return j <= i + (n_k - n_q)", "return j <= i"),
        )},
        2, "bottom-right"),
    "mask is 0/1 floats, not bool": Plant(
        {"mask-work": (
            ("return j <= i + (n_k - n_q)", "return (j <= i + (n_k - n_q)).float()"),
        )},
        1, "bool"),
    "softmax without subtracting the max overflows": Plant(
        {"attention-work": (
            ("torch.softmax(s, dim=-1)", "(torch.exp(s) / torch.exp(s).sum(-1, keepdim=True))"),
        )},
        5, "subtract each row's maximum"),
    "no 1/sqrt(d) scale": Plant({"attention-work": ((" / math.sqrt(q.shape[-1])", ""),)}, 3, "unscaled scores"),
    "softmax over the queries": Plant(
        {"attention-work": (
            ("torch.softmax(s, dim=-1)", "torch.softmax(s, dim=-2)"),
        )},
        3, "over the queries"),
    "causal mask not applied": Plant({"attention-work": (("if causal:", "if False:"),)}, 4, "without the mask"),
    "hidden scores zeroed instead of -inf": Plant({"attention-work": (("-math.inf)", "0.0)"),)}, 4, "-inf"),
    "float32 returned for float16 inputs": Plant({"attention-work": ((".to(q.dtype)", ""),)}, 6, "float16"),
}
