"""Wrong online-softmax updates (a rescale forgotten, the tile's max for the running one, a division too early) and
wrong tiled loops built on them, planted in solutions/ex02_online_softmax.ipynb; and the one only Check 9 (the whole
input space) sees: float16 queries scaled before they are converted to float32."""

from __future__ import annotations

from planted import Plant

UPDATE_L = "l_new = alpha * l + p.sum(dim=-1)"
UPDATE_ACC = "acc_new = alpha.unsqueeze(-1) * acc + p @ v_tile"
HIDDEN = "> torch.arange(r0, r0 + rows, device=q.device)[:, None] + (n_k - n_q))"

BUGS: dict[str, Plant] = {
    "forgetting to rescale (neither l nor acc)": Plant(
        {"update-work": (
            (UPDATE_L, "l_new = l + p.sum(dim=-1)"),
            (UPDATE_ACC, "acc_new = acc + p @ v_tile"),
        )},
        2, "what the earlier tiles summed was relative to the old one"),
    "rescaling l but not the output accumulator": Plant(
        {"update-work": (
            (UPDATE_ACC, "acc_new = acc + p @ v_tile"),
        )},
        2, "acc is brought to the new max exactly as l is"),
    "rescaling the accumulator but not l": Plant(
        {"update-work": (
            (UPDATE_L, "l_new = l + p.sum(dim=-1)"),
        )},
        2, "what the earlier tiles summed"),
    "dividing by l inside the update": Plant(
        {"update-work": (
            ("return m_new, l_new, acc_new", "return m_new, l_new, acc_new / l_new.unsqueeze(-1)"),
        )},
        1, "unnormalized"),
    "max of the current tile only, not the running max": Plant(
        {"update-work": (
            ("m_new = torch.maximum(m, s.amax(dim=-1))", "m_new = s.amax(dim=-1)"),
        )},
        2, "m after"),
    "the row max not broadcast over the columns (s - m_new)": Plant(
        {"update-work": (
            ("p = torch.exp(s - m_new.unsqueeze(-1))", "p = torch.exp(s - m_new)"),
        )},
        1, r"m_new\[:, None\]"),
    "very large scores overflow (exp(s) / exp(m) instead of exp(s - m))": Plant(
        {"update-work": (
            ("p = torch.exp(s - m_new.unsqueeze(-1))", "p = torch.exp(s) / torch.exp(m_new).unsqueeze(-1)"),
        )},
        3, "inf/NaN"),
    "sums of exp(s) without the max": Plant(
        {"update-work": (
            ("p = torch.exp(s - m_new.unsqueeze(-1))", "p = torch.exp(s)"),
            ("alpha = torch.exp(m - m_new)", "alpha = torch.ones_like(m_new)"),
        )},
        1, "relative to the running max"),
    "missing 1/sqrt(d) scale": Plant(
        {"tiled-work": (
            ("q_i = q[r0:r0 + block_m].float() / math.sqrt(d)", "q_i = q[r0:r0 + block_m].float()"),
        )},
        4, r"WITHOUT the 1/sqrt\(d\) scale"),
    "scale 1/d instead of 1/sqrt(d)": Plant(
        {"tiled-work": (
            ("q_i = q[r0:r0 + block_m].float() / math.sqrt(d)", "q_i = q[r0:r0 + block_m].float() / d"),
        )},
        4, "scale is applied wrongly"),
    "dividing by l inside the tile loop": Plant(
        {"tiled-work": (
            ("m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())",
             "m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())\n"
             "            acc = acc / l[:, None]\n"
             "            l = torch.ones_like(l)"),
        )},
        5, "divide acc by l once"),
    "state not reset for each query tile": Plant(
        {"tiled-work": (
            ("        m = torch.full((rows,), -math.inf, device=q.device)\n"
             "        l, acc = torch.zeros(rows, device=q.device), torch.zeros(rows, d, device=q.device)\n",
             ""),
            ("    for r0 in range(0, n_q, block_m):\n",
             "    m = torch.full((block_m,), -math.inf, device=q.device)\n"
             "    l, acc = torch.zeros(block_m, device=q.device), torch.zeros(block_m, d, device=q.device)\n"
             "    for r0 in range(0, n_q, block_m):\n"),
        )},
        4, "afresh for each query tile with its real row count"),
    "last key tile dropped when the length is not a multiple": Plant(
        {"tiled-work": (
            ("range(0, n_k, block_n)", "range(0, n_k - block_n + 1, block_n)"),
        )},
        4, "l stayed 0 .*last, shorter key tile"),
    "length not a multiple of the tile (tail dropped)": Plant(
        {"tiled-work": (
            ("range(0, n_q, block_m)", "range(0, n_q - block_m + 1, block_m)"),
            ("range(0, n_k, block_n)", "range(0, n_k - block_n + 1, block_n)"),
        )},
        4, "never written .* the last, shorter tile"),
    "causal mask off by one (diagonal hidden)": Plant(
        {"tiled-work": (
            (HIDDEN, ">= torch.arange(r0, r0 + rows, device=q.device)[:, None] + (n_k - n_q))"),
        )},
        7, "diagonal is hidden"),
    "causal mask aligned top-left": Plant(
        {"tiled-work": (
            (HIDDEN, "> torch.arange(r0, r0 + rows, device=q.device)[:, None])"),
            ("c0 > r0 + rows - 1 + (n_k - n_q)", "c0 > r0 + rows - 1"),
        )},
        7, "top-left"),
    "causal flag ignored": Plant(
        {"tiled-work": (
            ("            if causal:\n"
             "                hidden",
             "            if False:\n"
             "                hidden"),
            ("if causal and c0 >", "if False and c0 >"),
        )},
        7, "nothing is masked"),
    "causal mask with tile-local positions": Plant(
        {"tiled-work": (
            ("torch.arange(c0, c0 + s.shape[1]", "torch.arange(0, s.shape[1]"),
            ("torch.arange(r0, r0 + rows", "torch.arange(0, rows"),
        )},
        7, "global positions"),
    "a key tile skipped one tile too early": Plant(
        {"tiled-work": (
            ("c0 > r0 + rows - 1 + (n_k - n_q)", "c0 >= r0 + rows - 1 + (n_k - n_q)"),
        )},
        7, r"skip only a tile whose\s+first key lies after"),
    "float32 returned for float16 inputs": Plant(
        {"tiled-work": (
            ("        out[r0:r0 + rows] = acc / l[:, None]",
             "        out[r0:r0 + rows] = acc / l[:, None]\n"
             "    return out"),
        )},
        8, "returned torch.float32: compute in float32, and return q's dtype"),
    "computed in float16": Plant(
        {"tiled-work": (
            ("q_i = q[r0:r0 + block_m].float() / math.sqrt(d)", "q_i = q[r0:r0 + block_m] / math.sqrt(d)"),
            ("s = q_i @ k[c0:c0 + block_n].float().T", "s = (q_i @ k[c0:c0 + block_n].T).float()"),
        )},
        8, "float16 holds at most 65504"),
    "queries scaled in float16, then converted": Plant(
        {"tiled-work": (
            ("q_i = q[r0:r0 + block_m].float() / math.sqrt(d)", "q_i = (q[r0:r0 + block_m] / math.sqrt(d)).float()"),
        )},
        9, r"tiled_attention of torch\.float16 inputs, .*d = 12.*elements differ.*what q / sqrt\(d\) rounded to "
           r"torch\.float16 gives: convert to float32 FIRST"),
    "hidden keys filled with -1e9 instead of -inf": Plant(
        {"tiled-work": (("s = s.masked_fill(hidden, -math.inf)", "s = s.masked_fill(hidden, -1e9)"),)},
        9, r"visible scores all below -1e30.*finite stand-in for -inf"),
    "the running max starts at 0": Plant(
        {"tiled-work": (("m = torch.full((rows,), -math.inf, device=q.device)", "m = torch.zeros(rows, device=q.device)"),)},
        9, r"visible scores all below -1e30.*finite stand-in for -inf"),
}
