"""Wrong counts of the key tiles a query tile visits and masks, and rows that see no key left NaN, planted in
solutions/ex02_stretch_causal_tile_skipping.ipynb. The last three pass checks 1 to 5, which hold only float32 inputs;
check 6, over the whole stated space (float16 and bfloat16 among them), catches them."""

from __future__ import annotations

from planted import Plant

LOOP = """        for t in range(n_visit):
            c0 = t * block_n
            s = q_i @ k[c0:c0 + block_n].float().T
            if t >= n_full:
                hidden = (torch.arange(c0, c0 + s.shape[1])[None, :]
                          > torch.arange(r0, r0 + rows)[:, None] + (n_k - n_q))
                s = s.masked_fill(hidden, -math.inf)
"""
# A pattern learners write: compute the score tile, then find out from its mask that it was hidden.
SCORES_FIRST = """        for t in range(-(-n_k // block_n)):
            c0 = t * block_n
            s = q_i @ k[c0:c0 + block_n].float().T
            hidden = (torch.arange(c0, c0 + s.shape[1])[None, :]
                      > torch.arange(r0, r0 + rows)[:, None] + (n_k - n_q))
            if hidden.all():
                break
            s = s.masked_fill(hidden, -math.inf)
"""
BRUTE_COUNTS = """    visible = torch.ones(n_q, n_k, dtype=torch.bool).tril(n_k - n_q)[r0:r0 + rows]
    tiles = [visible[:, c0:c0 + block_n] for c0 in range(0, n_k, block_n)]
    n_visit = max((i + 1 for i, t in enumerate(tiles) if bool(t.any())), default=0)
    n_full = next((i for i, t in enumerate(tiles) if not bool(t.all())), len(tiles))
    return n_full, n_visit
"""
BOUNDS = """    shift = n_k - n_q
    n_tiles = -(-n_k // block_n)
    last_visible = r0 + rows - 1 + shift           # the last key the tile's last row sees
    n_visit = 0 if last_visible < 0 else last_visible // block_n + 1
    first_row_sees = r0 + shift                    # every key up to here is visible to every row
    if first_row_sees >= n_k - 1:
        n_full = n_tiles
    else:
        n_full = max(0, (first_row_sees + 1) // block_n)
    return n_full, n_visit
"""
GUARD = ("    alpha = torch.exp(m - m_ref)\n    p = torch.exp(s - m_ref[:, None])",
         "    alpha = torch.exp(m - m_new)\n    p = torch.exp(s - m_new[:, None])")

BUGS: dict[str, Plant] = {
    "n_visit negative when the last row sees no key (floor division of a negative number)": Plant(
        {"bounds-work": (
            ("n_visit = 0 if last_visible < 0 else ", "n_visit = "),
        )},
        1, "none: it is negative"),
    "n_full ignores the shorter last tile": Plant(
        {"bounds-work": (
            ("    if first_row_sees >= n_k - 1:\n"
             "        n_full = n_tiles\n"
             "    else:\n"
             "        n_full = max(0, (first_row_sees + 1) // block_n)",
             "    n_full = max(0, (first_row_sees + 1) // block_n)"),
        )},
        1, "the last tile is shorter"),
    "n_full rounded up (a partly visible tile taken as full)": Plant(
        {"bounds-work": (
            ("max(0, (first_row_sees + 1) // block_n)", "max(0, -(-(first_row_sees + 1) // block_n))"),
        )},
        1, "its LAST key"),
    "only the last visited tile masked": Plant(
        {"attention-work": (
            ("            if t >= n_full:", "            if t == n_visit - 1:"),
        )},
        2, "mask every tile from n_full on"),
    "key_tile_counts from the full N x N mask (not from the indices)": Plant(
        {"bounds-work": (
            (BOUNDS, BRUTE_COUNTS),
        )},
        1, r"key_tile_counts\(0, 64, 10000000, 10000000, 64\) failed.*indices alone"),
    "no -inf guard in the update (the final where hides the NaN state)": Plant(
        {"attention-work": (
            GUARD,
        )},
        3, r"l of rows \[0, 1\] is NaN.*subtract 0 instead"),
    "neither a guard nor a 0 for rows that see no key": Plant(
        {"attention-work": (
            GUARD,
            ("torch.where(seen[:, None], acc / l.clamp_min(1e-30)[:, None], 0.0)", "acc / l[:, None]"),
        )},
        3, r"is NaN: exp\(s - m\) with s = m = -inf"),
    "no 0 for rows whose l is 0 at the end": Plant(
        {"attention-work": (
            ("torch.where(seen[:, None], acc / l.clamp_min(1e-30)[:, None], 0.0)", "acc / l[:, None]"),
        )},
        4, r"NaN.*their l stays 0, so their output is 0 by\s+definition"),
    # no NaN anywhere: a row that sees no key gets every hidden key at weight exp(0) = 1, the plain average of values
    "hidden scores filled with -1e30 instead of -inf": Plant(
        {"attention-work": (
            ("s = s.masked_fill(hidden, -math.inf)", "s = s.masked_fill(hidden, -1e30)"),
        )},
        4, r"row 16 sees no key, yet its output is the plain average of the values of keys 0 to 7.*-1e30.*Fill hidden "
           r"scores with -inf"),
    "scores computed before deciding the tile is hidden (skip decided from the mask)": Plant(
        {"attention-work": (
            (LOOP, SCORES_FIRST),
        )},
        5, "decided from the indices BEFORE computing a tile"),
    "every visited tile masked": Plant(
        {"attention-work": (
            ("            if t >= n_full:", "            if True:"),
        )},
        5, "need no mask"),
    "every visited tile masked by an additive -inf bias": Plant(
        {"attention-work": (
            (LOOP,
             "        for t in range(n_visit):\n"
             "            c0 = t * block_n\n"
             "            s = q_i @ k[c0:c0 + block_n].float().T\n"
             "            hidden = (torch.arange(c0, c0 + s.shape[1])[None, :]\n"
             "                      > torch.arange(r0, r0 + rows)[:, None] + (n_k - n_q))\n"
             "            s = s + torch.zeros_like(s).masked_fill(hidden, -math.inf)\n"),
        )},
        5, r"operations applied\s+a boolean mask to a score tile"),
    "q scaled in its own dtype, then converted to float32": Plant(
        {"attention-work": (
            ("q_i = q[r0:r0 + block_m].float() / math.sqrt(d)", "q_i = (q[r0:r0 + block_m] / math.sqrt(d)).float()"),
        )},
        6, r"float16 inputs, n_q = 7, n_k = 19, d = 24, tiles 4 x 8.*your result is what q / sqrt\(d\) rounded to "
           r"torch.float16 gives: convert to float32 FIRST"),
    "k left in its dtype (only q converted)": Plant(
        {"attention-work": (
            ("s = q_i @ k[c0:c0 + block_n].float().T", "s = q_i @ k[c0:c0 + block_n].T"),
        )},
        6, r"RuntimeError: expected m1 and m2 to have the same dtype.*convert q, k AND v to float32"),
    "v left in its dtype (only q and k converted)": Plant(
        {"attention-work": (
            ("online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())",
             "online_softmax_update(m, l, acc, s, v[c0:c0 + block_n])"),
        )},
        6, r"RuntimeError: expected m1 and m2 to have the same dtype.*in online_softmax_update.*convert q, k AND v"),
    "the running max starts at -1e9": Plant(
        {"attention-work": (("m = torch.full((rows,), -math.inf)", "m = torch.full((rows,), -1e9)"),)},
        6, r"row 0's visible scores all below -1e30.*a running max that starts at a finite value"),
    # round 38z107: torch's attention over each query tile's visible strip, one mask over the strip's full tiles too
    "torch's attention over each query tile's visible keys, masked as one strip": Plant(
        {"attention-work": (
            (LOOP + "            m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())\n"
                    "        seen = l > 0\n"
                    "        out[r0:r0 + rows] = torch.where(seen[:, None], acc / l.clamp_min(1e-30)[:, None], 0.0)\n",
             "        end = min(n_k, n_visit * block_n)\n"
             "        if end == 0:\n"
             "            continue\n"
             "        keys = torch.arange(end)[None, :] <= torch.arange(r0, r0 + rows)[:, None] + (n_k - n_q)\n"
             "        o = torch.nn.functional.scaled_dot_product_attention(\n"
             "            q_i[None] * math.sqrt(d), k[:end].float()[None], v[:end].float()[None], attn_mask=keys[None])[0]\n"
             "        out[r0:r0 + rows] = torch.where(keys.any(-1)[:, None], o.nan_to_num(), 0.0)\n"),
        )},
        5, r"called torch's scaled_dot_product_attention"),
    "key tiles counted by a loop up to the first hidden one": Plant(
        {"bounds-work": (("    n_visit = 0 if last_visible < 0 else last_visible // block_n + 1",
                          "    n_visit = 0\n"
                          "    while n_visit < n_tiles and n_visit * block_n <= last_visible:\n"
                          "        n_visit += 1"),)},
        1, r"key_tile_counts\(999999936, 64, 1000000000, 1000000000, 1\) failed \(TimeoutError.*over the key tiles"),
}
