"""Wrong causal masks (off by one, aligned top-left, 0/1 floats, not applied) and wrong attention (no scale, a scale
of 1/d or 1/sqrt(n_q), q scaled in place, softmax over the queries, overflow, the wrong dtype) planted in
solutions/ex01_naive_attention.ipynb; and those only Check 7 (the whole input space) sees: dimensions counted from
the front (4-D only), bfloat16 computed in bfloat16, hidden keys filled with -1e9 or -1e30."""

from __future__ import annotations

from planted import Plant


BUGS: dict[str, Plant] = {
    # (round 38z204) a result kept by the inputs' shapes, dtype and causal: right the first time a shape is seen
    "a result kept by its inputs' shapes, returned for other values": Plant(
        {"attention-work": "_SEEN = {}\n\n\n"
                           "def naive_attention(q, k, v, causal=False):\n"
                           "    key = (q.shape, k.shape, v.shape, q.dtype, causal)\n"
                           "    if key not in _SEEN:\n"
                           "        s = q.float() @ k.float().transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                           "        if causal:\n"
                           "            s = s.masked_fill(~causal_mask(q.shape[-2], k.shape[-2]), -math.inf)\n"
                           "        _SEEN[key] = (torch.softmax(s, dim=-1) @ v.float()).to(q.dtype)\n"
                           "    return _SEEN[key]"},
        3, r"^CheckError: Check 3: attention: naive_attention of other values.*Hint: the first call's result came "
           r"back for other q, k and v of the same shapes"),
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
    "scores divided by d, not sqrt(d)": Plant(
        {"attention-work": ((" / math.sqrt(q.shape[-1])", " / q.shape[-1]"),)},
        3, r"^CheckError: Check 3: attention: naive_attention\(q, k, v\).*Hint: your scores are divided by d = 8, not "
           r"by sqrt\(d\) = 2\.828"),
    "scores divided by sqrt(n_q), not sqrt(d)": Plant(
        {"attention-work": ((" / math.sqrt(q.shape[-1])", " / math.sqrt(q.shape[-2])"),)},
        3, r"Hint: your scores are divided by sqrt\(10\) = 3\.162, the square root of the number of queries "
           r"\(q\.shape\[-2\]\).*not of the head dimension d = q\.shape\[-1\] = 8"),
    "q scaled in place (q /= sqrt(d) changes the caller's float32 q)": Plant(
        {"attention-work": "def naive_attention(q, k, v, causal=False):\n"
                           "    dtype = q.dtype\n"
                           "    q = q.float()\n"
                           "    q /= math.sqrt(q.shape[-1])\n"
                           "    s = q @ k.float().transpose(-2, -1)\n"
                           "    if causal:\n"
                           "        s = s.masked_fill(~causal_mask(q.shape[-2], k.shape[-2]), -math.inf)\n"
                           "    return (torch.softmax(s, dim=-1) @ v.float()).to(dtype)"},
        3, r"^CheckError: Check 3: attention: naive_attention\(q, k, v\), q, k and v of shape \(2, 3, 10, 8\): your "
           r"function changed its argument q: .*divided by 2\.828.*q \*= scale or q /= "),
    "softmax over the queries": Plant(
        {"attention-work": (
            ("torch.softmax(s, dim=-1)", "torch.softmax(s, dim=-2)"),
        )},
        3, "over the queries"),
    "causal mask not applied": Plant({"attention-work": (("if causal:", "if False:"),)}, 4, "without the mask"),
    "hidden scores zeroed instead of -inf": Plant({"attention-work": (("-math.inf)", "0.0)"),)}, 4, "-inf"),
    "float32 returned for float16 inputs": Plant({"attention-work": ((".to(q.dtype)", ""),)}, 6, "float16"),
    "k transposed with transpose(2, 3) (4-D inputs only)": Plant(
        {"attention-work": (("k.float().transpose(-2, -1)", "k.float().transpose(2, 3)"),)},
        7, r"q of shape \(5, 16\).*raised IndexError.*0 leading dimension\(s\) here.*count the dimensions from the end"),
    "einsum over four named dimensions (4-D inputs only)": Plant(
        {"attention-work": (("q.float() @ k.float().transpose(-2, -1)",
                             "torch.einsum('bhqd,bhkd->bhqk', q.float(), k.float())"),)},
        7, r"q of shape \(5, 16\).*raised RuntimeError: einsum\(\).*count the dimensions from the end"),
    "the mask's sizes read as q.shape[2] and k.shape[2] (4-D inputs only)": Plant(
        {"attention-work": (("causal_mask(q.shape[-2], k.shape[-2])", "causal_mask(q.shape[2], k.shape[2])"),)},
        7, r"q of shape \(5, 16\).*causal=True: raised IndexError.*count the dimensions from the end"),
    "only float16 computed in float32 (bfloat16 stays bfloat16)": Plant(
        {"attention-work": "def naive_attention(q, k, v, causal=False):\n"
                           "    half = q.dtype == torch.float16\n"
                           "    if half:\n"
                           "        q, k, v = q.float(), k.float(), v.float()\n"
                           "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                           "    if causal:\n"
                           "        s = s.masked_fill(~causal_mask(q.shape[-2], k.shape[-2]), -math.inf)\n"
                           "    out = torch.softmax(s, dim=-1) @ v\n"
                           "    return out.half() if half else out"},
        7, r"torch\.bfloat16, ordinary scores.*elements differ.*compute in float32 from the scores on.*whatever their "
           r"half-precision dtype"),
    "hidden keys filled with -1e9 instead of -inf": Plant(
        {"attention-work": (("-math.inf)", "-1e9)"),)},
        7, r"torch\.float32, huge scores, causal=True: .*elements differ.*visible scores are all below .*Hide them "
           r"with -inf"),
    "hidden keys filled with -1e30 instead of -inf": Plant(  # (round 38z20: every visible score was above -1e12 then)
        {"attention-work": (("-math.inf)", "-1e30)"),)},
        7, r"torch\.float32, huge scores, causal=True: .*elements differ.*visible scores are all below .*Hide them "
           r"with -inf"),
}
