"""Wrong paged decode kernels planted in solutions/ex09_paged_attention.ipynb: the tail's mask, the block-table
lookup, the online softmax (the same edits as the forward kernel's, from ``planted``), the GQA heads."""

from __future__ import annotations

from planted import ACC_NOT_RESCALED, EXP_NOT_EXP2, L_NOT_RESCALED, NO_MAX_IN_P, Plant

LOAD_TABLE = "physical = tl.load(table + tokens // BLOCK_SIZE, mask=valid, other=0).to(tl.int64)"
V_LOAD = "mask=valid[:, None], other=0.0)"
SCORE_MASK = 's = tl.where(valid[None, :], s, float("-inf"))'
K_LOAD_MASK = "mask=valid[None, :], other=0.0)"

BUGS: dict[str, Plant] = {
    "exp instead of exp2": Plant({"kernel-work": EXP_NOT_EXP2}, 1, r"multiplied by log2\(e\)"),
    "tail scores masked to 0, not -inf": Plant(
        {"kernel-work": (
            (SCORE_MASK, "s = tl.where(valid[None, :], s, 0.0)"),
        )},
        2, "unless its score is -inf"),
    "tail scores not masked": Plant(
        {"kernel-work": (
            (SCORE_MASK, ""),
        )},
        2, "tokens past context_len load as zero keys"),
    "off-by-one at the tail (<=)": Plant(
        {"kernel-work": (
            ("valid = tokens < context_len", "valid = tokens <= context_len"),
        )},
        2, "21 tokens instead of 20"),
    "mask by block, not by token": Plant(
        {"kernel-work": (
            ("valid = tokens < context_len", "valid = tokens // BLOCK_SIZE < tl.cdiv(context_len, BLOCK_SIZE)"),
        )},
        2, "all 32 tokens of the sequence's block"),
    "acc not rescaled": Plant({"kernel-work": ACC_NOT_RESCALED}, 3, "must shrink by"),
    "l not rescaled": Plant({"kernel-work": L_NOT_RESCALED}, 3, "must shrink by"),
    "block table ignored (logical used as physical)": Plant(
        {"kernel-work": (
            (LOAD_TABLE, "physical = (tokens // BLOCK_SIZE).to(tl.int64)"),
        )},
        4, "logical block was used as the physical one"),
    "one block looked up per tile": Plant(
        {"kernel-work": (
            (LOAD_TABLE, "physical = (tl.load(table + start_n // BLOCK_SIZE) + 0 * tokens).to(tl.int64)"),
        )},
        4, "spans 4 blocks"),
    "slot taken modulo the tile": Plant(
        {"kernel-work": (
            ("slot = tokens % BLOCK_SIZE", "slot = tokens % BLOCK_N"),
        )},
        4, "spans 4 blocks"),
    "block-table load without a mask (reads padding entries)": Plant(
        {"kernel-work": (
            (LOAD_TABLE, "physical = tl.load(table + tokens // BLOCK_SIZE).to(tl.int64)"),
        )},
        5, "read entry 1 of its own row, past its 1 block.*block-table load needs the token mask"),
    "K loaded without a mask (its NaN scores hidden by tl.where)": Plant(
        {"kernel-work": (
            (K_LOAD_MASK, ")"),
        )},
        5, "the K load .*holds no token of sequence 0.*K load needs"),
    "V loaded without a mask (NaN leaks from padding blocks)": Plant(
        {"kernel-work": (
            (V_LOAD, ")"),
        )},
        5, "the V load .*V load needs the token mask"),
    "K and V loaded without masks": Plant({"kernel-work": ((V_LOAD, ")"), (K_LOAD_MASK, ")"))}, 5, "the K load"),
    "interleaved group mapping (h uses K/V head h % kv_heads)": Plant(
        {"kernel-work": (
            ("heads = kv_head * group + offs_h", "heads = kv_head + offs_h * tl.num_programs(1)"),
        )},
        7, r"query heads \[1, 3, 4, 6\] are wrong"),
    "no max subtracted": Plant(
        {"kernel-work": (
            NO_MAX_IN_P,
            ("alpha = tl.exp2(m_i - m_new)", "alpha = 1.0 + 0.0 * m_new"),
        )},
        2, r"underflows to 0.*with no max subtracted, the exponent is the raw score"),  # was check 8, overflow
    "running max taken before the mask (the masked tokens' 0 scores win it)": Plant(
        {"kernel-work": ((SCORE_MASK + "\n        m_new = tl.maximum(m_i, tl.max(s, 1))",
                          "m_new = tl.maximum(m_i, tl.max(s, 1))\n        " + SCORE_MASK),)},
        2, r"are NaN\. The 20 valid scores are all about -120.*taken over the tile before the mask, the masked "
           r"tokens' 0 wins it.*set the invalid scores to -inf BEFORE tl.max"),
    "tl.dot without input_precision=\"ieee\" (TF32 on a GPU; the interpreter cannot show it)": Plant(
        {"kernel-work": (('s = tl.dot(q, k, input_precision="ieee")', "s = tl.dot(q, k)"),)},
        9, r"1 tl.dot call\(s\) without input_precision=\"ieee\": \['tl.dot\(q, k\)'\].*runs in TF32"),
    "the block offset in int32 (overflows for pools past 2**31 elements)": Plant(
        {"kernel-work": ((LOAD_TABLE, LOAD_TABLE.removesuffix(".to(tl.int64)")),)},
        10, r"block 1048581 of a pool of 2048 elements per block starts 2,147,493,888 elements in, past 2\*\*31 = "
            r"2,147,483,648: \d+ of the 5120 K/V addresses .*Hint: .*physical.to\(tl.int64\) \* stride_kb"),
    "slot without the modulo (the token's position used as its slot)": Plant(
        {"kernel-work": (("slot = tokens % BLOCK_SIZE", "slot = tokens"),)},
        3, r"Your output is attention over the rows physical \* BLOCK_SIZE \+ t: the slot of token t is its position "
           r"within its block"),
    "m_new from the tile only (the running max forgotten)": Plant(
        {"kernel-work": (("m_new = tl.maximum(m_i, tl.max(s, 1))", "m_new = tl.max(s, 1)"),)},
        8, r"are NaN\. .*m_new is the larger of the running max and the tile's max; taken from the tile alone"),
    "the K/V head added twice (k_head already points at it)": Plant(
        {"kernel-work": (("k = tl.load(k_head + physical", "k = tl.load(k_head + kv_head * stride_kh + physical"),
                         ("v = tl.load(v_head + physical", "v = tl.load(v_head + kv_head * stride_kh + physical"))},
        1, r"They are attention with K/V head 2 x kv_head, not kv_head: k_head and v_head already point at this "
           r"program's K/V head"),
    "heads without the K/V head (every program serves the first group)": Plant(
        {"kernel-work": (("heads = kv_head * group + offs_h", "heads = offs_h"),)},
        1, r"The output of query head 0 is that head's attention with K/V head 1, not with K/V head 0 .*heads = offs_h "
           r"alone"),
    "invalid tokens' scores set to -1e30 instead of -inf": Plant(
        {"kernel-work": (('s = tl.where(valid[None, :], s, float("-inf"))', "s = tl.where(valid[None, :], s, -1e30)"),)},
        11, r"every valid score is below -1e30 here"),
}
