"""Wrong split-KV decoding planted in solutions/ex09_stretch_split_kv_merge.ipynb: the splits' bounds, the merge's
weights and log-sum-exp, cascade attention's shared prefix. The last four pass checks 1 to 6 (wrong only at inputs
they do not hold: a split length that is a whole number of tiles, a context that num_splits divides, a row of one
sequence or one head, lses all far below zero); check 7, over the whole stated space, catches them."""

from __future__ import annotations

from planted import Plant

CASCADE_MERGE = "    out, _ = merge_states(torch.cat([prefix_out, own_out], dim=2), torch.cat([prefix_lse, own_lse], dim=2))"

BUGS: dict[str, Plant] = {
    "splits not cut at whole tiles": Plant(
        {"bounds-work": (
            ("length = -(-per_split // block_n) * block_n", "length = per_split"),
        )},
        1, "whole number of tiles"),
    "last split not clipped to the context": Plant(
        {"bounds-work": (
            ("bounds.append((start, min(start + length, context_len)))", "bounds.append((start, start + length))"),
        )},
        1, "an end past context_len"),
    "empty split's start not clamped": Plant(
        {"bounds-work": (
            ("start = min(s * length, context_len)", "start = s * length"),
        )},
        1, r"split 1 starts at 32, past the end of the context \(11\).*its start"),
    "empty splits left out": Plant(
        {"bounds-work": (
            ("        bounds.append((start, min(start + length, context_len)))",
             "        if start < context_len:\n"
             "            bounds.append((start, min(start + length, context_len)))"),
        )},
        1, "empty splits included"),
    "mean of the partial outputs": Plant(
        {"merge-work": (
            ("out = (w[..., None] * outs).sum(dim=-2) / total", "out = outs.mean(dim=-2)"),
        )},
        2, "plain mean"),
    "weights not normalized": Plant(
        {"merge-work": (
            ("out = (w[..., None] * outs).sum(dim=-2) / total", "out = (w[..., None] * outs).sum(dim=-2)"),
        )},
        2, "divide by their total"),
    "max taken over the wrong dimension": Plant(
        {"merge-work": (
            ("m = lses.amax(dim=-1, keepdim=True)", "m = lses.amax(dim=-2, keepdim=True)"),
        )},
        2, r"got \(3, 4, 16\) and \(3, 4, 2\): the split dimension"),
    "empty splits' -inf replaced by 0": Plant(
        {"merge-work": (
            ("w = torch.exp(lses - m)", "w = torch.exp(lses.nan_to_num(neginf=0.0) - m)"),
        )},
        3, "keep the -inf"),
    "merged lse is the max": Plant(
        {"merge-work": (
            ("lse = (m + torch.log(total)).squeeze(-1)", "lse = m.squeeze(-1)"),
        )},
        4, "largest split's lse"),
    "merged lse is the sum of the lses": Plant(
        {"merge-work": (
            ("lse = (m + torch.log(total)).squeeze(-1)", "lse = lses.sum(dim=-1)"),
        )},
        4, "sum of the splits' lses"),
    "no max subtracted": Plant(
        {"merge-work": (
            ("m = lses.amax(dim=-1, keepdim=True)", "m = torch.zeros_like(lses[..., :1])"),
        )},
        5, "every exponent must be <= 0"),
    "split 0's lse as the reference instead of the max": Plant(
        {"merge-work": (
            ("m = lses.amax(dim=-1, keepdim=True)", "m = lses[..., :1]"),
        )},
        5, r"lses are \[3, 120\].*must be the row's maximum, not split 0's lse"),
    "cascade: the suffix state forgotten": Plant(
        {"cascade-work": (
            (CASCADE_MERGE, "    out = prefix_out[:, :, 0]"),
        )},
        6, "prefix alone"),
    "cascade: states stacked on the wrong dimension": Plant(
        {"cascade-work": (
            (CASCADE_MERGE,
             "    out, _ = merge_states(torch.cat([prefix_out, own_out], dim=1), "
             "torch.cat([prefix_lse, own_lse], dim=1))"),
        )},
        6, r"expected shape \(16, 4, 16\), got \(16, 8, 16\)"),
    "one max over the whole tensor (lses.max()), not per row": Plant(
        {"merge-work": (("m = lses.amax(dim=-1, keepdim=True)", "m = lses.max()"),)},
        5, r"the rows that are NaN are those whose largest lse is at most \d+, far below the largest lse of the "
           r"whole tensor \(\d+\).*underflow.*not one maximum for the whole tensor"),
    "tiles rounded up with // block_n + 1 (one tile too many when block_n divides the split)": Plant(
        {"bounds-work": (
            ("length = -(-per_split // block_n) * block_n", "length = (per_split // block_n + 1) * block_n"),
        )},
        7, r"split_bounds\(2, 2, 1\): expected \[\(0, 1\), \(1, 2\)\], got \[\(0, 2\), \(2, 2\)\].*a // b \+ 1 is one too"),
    "split length context_len // num_splits + 1 (one too many when num_splits divides the context)": Plant(
        {"bounds-work": (
            ("per_split = -(-context_len // num_splits)", "per_split = context_len // num_splits + 1"),
        )},
        7, r"split_bounds\(2, 2, 1\): expected \[\(0, 1\), \(1, 2\)\]"),
    "merged lse squeezed of every size-1 dimension (one sequence, one head)": Plant(
        {"merge-work": (
            ("lse = (m + torch.log(total)).squeeze(-1)", "lse = (m + torch.log(total)).squeeze()"),
        )},
        7, r"merge_states\(one split, one row, outs \(1, 1, 4\), lses \(1, 1\)\): expected out \(1, 4\) and lse "
           r"\(1,\), got \(1, 4\) and \(\)"),
    "reference clamped at 0 (a guard for -inf that moves negative lses too)": Plant(
        {"merge-work": (
            ("m = lses.amax(dim=-1, keepdim=True)", "m = lses.amax(dim=-1, keepdim=True).clamp_min(0)"),
        )},
        7, r"lses all far below zero \(about -300\).*the merged output.*NaN.*subtract each row's own largest lse"),
    "a running merge from -inf with no guard (NaN when the first splits are empty)": Plant(
        {"merge-work": (
            ("""    m = lses.amax(dim=-1, keepdim=True)
    w = torch.exp(lses - m)
    total = w.sum(dim=-1, keepdim=True)
    out = (w[..., None] * outs).sum(dim=-2) / total
    lse = (m + torch.log(total)).squeeze(-1)
    return out, lse""",
             """    m, l = torch.full(lses.shape[:-1], float("-inf")), torch.zeros(lses.shape[:-1])
    acc = torch.zeros(outs.shape[:-2] + outs.shape[-1:])
    for s in range(lses.shape[-1]):
        m_new = torch.maximum(m, lses[..., s])
        a, b = torch.exp(m - m_new), torch.exp(lses[..., s] - m_new)
        l, acc, m = a * l + b, a[..., None] * acc + b[..., None] * outs[..., s, :], m_new
    return acc / l[..., None], m + torch.log(l)"""),
        )},
        7, r"NaN"),
    "an empty split's lse taken as -10000": Plant(
        {"merge-work": (("    m = lses.amax(dim=-1, keepdim=True)",
                         "    lses = lses.clamp(min=-1e4)\n    m = lses.amax(dim=-1, keepdim=True)"),)},
        7, r"lses near -20000 beside empty splits"),
}
