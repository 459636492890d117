"""Wrong FlashAttention forward loops planted in solutions/ex04_flash_forward.ipynb: the online softmax's rescaling
and exp2 (the same edits as the paged kernel's, from ``planted``), the padding and causal masks; and those only
Check 6 (the whole input space) sees: hidden scores filled with -1e9 or -1e30 instead of -inf, the mask left off a
key tile one key too far past the diagonal."""

from __future__ import annotations

from planted import ACC_NOT_RESCALED, EXP_NOT_EXP2, L_NOT_RESCALED, NO_MAX_IN_P, Plant

CAUSAL = "keep = keep & (cols[None, :] <= rows[:, None] + n_k - n_q)"

BUGS: dict[str, Plant] = {
    "acc not rescaled": Plant({"kernel-work": ACC_NOT_RESCALED}, 2, "must shrink by alpha"),
    "l not rescaled": Plant({"kernel-work": L_NOT_RESCALED}, 2, "must shrink by alpha"),
    "exp instead of exp2": Plant({"kernel-work": EXP_NOT_EXP2}, 1, r"multiplied by log2\(e\)"),
    "padding keys not masked": Plant(
        {"kernel-work": (
            ("keep = cols[None, :] < n_k", "keep = cols[None, :] >= 0"),
        )},
        3, "padding keys of the last tile"),
    "masked to 0, not -inf": Plant(
        {"kernel-work": (
            ("tl.where(keep, s, float(\"-inf\"))", "tl.where(keep, s, 0.0)"),
        )},
        3, r"a score of\s+-inf"),
    "padding mask built with BLOCK_M (square-tile-only code)": Plant(
        {"kernel-work": (
            ("keep = cols[None, :] < n_k", "keep = (start_n + tl.arange(0, BLOCK_M))[None, :] < n_k"),
        )},
        3, r"BLOCK_M != BLOCK_N .* \(BLOCK_M, BLOCK_N\)"),
    "1-D causal mask (the hint's formula without broadcasting)": Plant(
        {"kernel-work": (
            (CAUSAL, "keep = keep & (cols <= rows + n_k - n_q)"),
        )},
        4, r"at `keep = keep & \(cols <= rows.*A 1-D comparison"),
    "diagonal excluded (NaN in row 0)": Plant(
        {"kernel-work": (
            (CAUSAL, "keep = keep & (cols[None, :] < rows[:, None] + n_k - n_q)"),
        )},
        4, r"rows \[0.*\] are NaN.*a query sees its own key"),
    "causal aligned top-left": Plant(
        {"kernel-work": (
            (CAUSAL, "keep = keep & (cols[None, :] <= rows[:, None])"),
        )},
        4, "aligned top-left"),
    "the causal mask left off key tiles one key past those wholly visible": Plant(  # (audit E1: 4 of 5 seeds passed)
        {"kernel-work": (
            ("if CAUSAL:\n            " + CAUSAL,
             "if CAUSAL:\n            if start_n + BLOCK_N - 1 > start_m + n_k - n_q + 1:\n                " + CAUSAL),
        )},
        6, r"n_q = 10, n_k = 40, causal = True, BLOCK_M = 16, BLOCK_N = 16.*rows \[0\] of 10 differ"),
    "causal mask forgotten": Plant({"kernel-work": ((CAUSAL, "keep = keep"),)}, 4, "without the causal mask"),
    "no max subtracted": Plant(
        {"kernel-work": (NO_MAX_IN_P, *L_NOT_RESCALED, *ACC_NOT_RESCALED)},
        5, "running max"),
    "hidden scores filled with -1e9, not -inf": Plant(
        {"kernel-work": (
            ("tl.where(keep, s, float(\"-inf\"))", "tl.where(keep, s, -1e9)"),
        )},
        6, r"n_q = 6, n_k = 9, causal = True.*huge scores.*rows \[0\] of 6 differ\. row 0 sees keys 0 to 3.*a finite "
           r"fill such as -1e9 or -1e30 is larger than every one of them"),
    "hidden scores filled with -1e30, not -inf": Plant(  # (round 38z20: every visible score was above -1e12 then)
        {"kernel-work": (
            ("tl.where(keep, s, float(\"-inf\"))", "tl.where(keep, s, -1e30)"),
        )},
        6, r"n_q = 6, n_k = 9, causal = True.*huge scores.*rows \[0\] of 6 differ\. row 0 sees keys 0 to 3.*a finite "
           r"fill such as -1e9 or -1e30 is larger than every one of them"),
    # The interpreter computes tl.dot in float32 whatever it is asked: only the source shows it
    "tl.dot without input_precision=\"ieee\" (TF32 on a GPU)": Plant(
        {"kernel-work": (
            ("tl.dot(q, k, input_precision=\"ieee\")", "tl.dot(q, k)"),
            ("tl.dot(p, v, input_precision=\"ieee\")", "tl.dot(p, v)"),
        )},
        7, r"2 tl\.dot call\(s\) without input_precision=\"ieee\": \['tl\.dot\(q, k\)', 'tl\.dot\(p, v\)'\]"),
    "the running max never updated (m_i = m_new left out)": Plant(
        {"kernel-work": (("        m_i = m_new\n", ""),)},
        2, r"your output is attention over the last key tile alone \(keys 48 to 63\).*m_i = m_new"),
}
