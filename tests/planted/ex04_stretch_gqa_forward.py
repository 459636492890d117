"""Wrong grouped-query attention planted in solutions/ex04_stretch_gqa_forward.ipynb: the grid, which K/V head a
query head reads, offsets without strides or with another tensor's, the checks of the head counts and their
messages."""

from __future__ import annotations

from planted import Plant

POINTERS = """    Q = Q + b * stride_qb + h * stride_qh
    K = K + b * stride_kb + h_kv * stride_kh
    V = V + b * stride_vb + h_kv * stride_vh
    Out = Out + b * stride_ob + h * stride_oh
"""
# Right for contiguous (batch, heads, seq, d) tensors only.
CONTIGUOUS = """    n_kv_heads = n_heads // group
    Q = Q + (b * n_heads + h) * n_q * HEAD_DIM
    K = K + (b * n_kv_heads + h_kv) * n_k * HEAD_DIM
    V = V + (b * n_kv_heads + h_kv) * n_k * HEAD_DIM
    Out = Out + (b * n_heads + h) * n_q * HEAD_DIM
"""

BUGS: dict[str, Plant] = {
    "grid without the batch": Plant(
        {"kernel-work": (
            ("grid = (triton.cdiv(n_q, block_m), batch * n_heads)", "grid = (triton.cdiv(n_q, block_m), n_heads)"),
        )},
        1, "batch 0 is right.*batch × n_heads"),
    "grid rounded down (n_q // block_m: the last partial query tile never runs)": Plant(
        {"kernel-work": (
            ("grid = (triton.cdiv(n_q, block_m), batch * n_heads)", "grid = (n_q // block_m, batch * n_heads)"),
        )},
        1, r"rows 0 to 15 of every \(batch, head\) are right and rows 16 to 20 wrong: the grid has 1 query tiles of "
           r"BLOCK_M = 16 \(n_q // BLOCK_M = 21 // 16 = 1 rounds the last, partial tile away\).*cdiv\(n_q, BLOCK_M\) = 2"),
    # In Triton's interpreter the out-of-range store wrote over the process's memory and killed the kernel: no message
    "batch and head taken from program id 1 the wrong way round (b = bh % n_heads)": Plant(
        {"kernel-work": (
            ("    b = bh // n_heads\n    h = bh % n_heads", "    b = bh % n_heads\n    h = bh // n_heads"),
        )},
        1, r"gqa_kernel's store in program \(0, \d+, 0\) reaches \d+ element\(s\) outside every tensor the launch was "
           r"given, stopped before it ran.*two program ids taken the wrong way round"),
    "K/V head offset with q's head stride": Plant(
        {"kernel-work": (
            ("K = K + b * stride_kb + h_kv * stride_kh", "K = K + b * stride_kb + h_kv * stride_qh"),
            ("V = V + b * stride_vb + h_kv * stride_vh", "V = V + b * stride_vb + h_kv * stride_qh"),
        )},
        1, r"pairs \[\(0, 1\), \(0, 2\), \(1, 1\), \(1, 2\)\] are wrong, and exactly those whose head offset is 0.*"
           r"another tensor's stride"),
    "query heads interleaved over the K/V heads (h % n_kv_heads)": Plant(
        {"kernel-work": (
            ("    h_kv = h // group  # consecutive query heads share one K/V head", "    h_kv = h % (n_heads // group)"),
        )},
        2, "read K/V head h % 2: the heads of a group are CONSECUTIVE"),
    "offsets computed for contiguous tensors instead of from the strides": Plant(
        {"kernel-work": (
            (POINTERS, CONTIGUOUS),
        )},
        3, "come from the strides"),
    "K/V head h // n_kv_heads (h // (n_heads // group)): right only when n_kv_heads == group": Plant(
        {"kernel-work": (
            ("    h_kv = h // group  #", "    h_kv = h // (n_heads // group)  #"),
        )},
        1, r"query head 1 read K/V head 0, not h // group = 1.*CONSECUTIVE"),
    "group set to n_kv_heads (right only when n_kv_heads == group)": Plant(
        {"kernel-work": (
            ("    group = n_heads // n_kv_heads", "    group = n_kv_heads"),
        )},
        1, r"query head 1 read K/V head 0, not h // group = 1.*CONSECUTIVE"),
    # Right in checks 1 to 4, where n_q < n_k and k and v are always laid out alike; check 5 tries the whole space.
    "grid built from n_k instead of n_q (wrong when n_q > n_k)": Plant(
        {"kernel-work": (
            ("grid = (triton.cdiv(n_q, block_m), batch * n_heads)", "grid = (triton.cdiv(n_k, block_m), batch * n_heads)"),
        )},
        5, r"n_q = 17, n_k = 16.*rows 0 to 15 of every \(batch, head\) are right and rows 16 to 16 wrong: the grid has "
           r"1 query tiles.*built from the keys' length"),
    "grid built from the key tiles, cdiv(n_k, block_n) (wrong when n_q > n_k)": Plant(
        {"kernel-work": (
            ("grid = (triton.cdiv(n_q, block_m), batch * n_heads)", "grid = (triton.cdiv(n_k, block_n), batch * n_heads)"),
        )},
        5, r"n_q = 17, n_k = 16.*rows 0 to 15 of every \(batch, head\) are right and rows 16 to 16 wrong"),
    "V moved with K's strides (wrong when k and v are laid out differently)": Plant(
        {"kernel-work": (
            ("V = V + b * stride_vb + h_kv * stride_vh", "V = V + b * stride_kb + h_kv * stride_kh"),
        )},
        5, r"k and v slices of caches of different capacities.*exactly those whose batch and K/V head offsets are 0.*"
           r"Here k and v are not laid out alike"),
    "V's batch offset with K's batch stride": Plant(
        {"kernel-work": (
            ("V = V + b * stride_vb + h_kv * stride_vh", "V = V + b * stride_kb + h_kv * stride_vh"),
        )},
        5, r"caches of different capacities.*pairs \[\(1, 0\), \(1, 1\), \(1, 2\), \(1, 3\)\] are wrong, and "
           r"exactly those whose batch offset is 0"),
    "K moved with V's strides": Plant(
        {"kernel-work": (
            ("K = K + b * stride_kb + h_kv * stride_kh", "K = K + b * stride_vb + h_kv * stride_vh"),
        )},
        5, r"caches of different capacities.*exactly those whose batch and K/V head offsets are 0"),
    "no check that the K/V heads divide the query heads": Plant(
        {"kernel-work": (
            ("    if n_heads % n_kv_heads:\n"
             "        raise ValueError(f\"k has {n_kv_heads} heads, which must divide the {n_heads} query heads of q\")\n",
             ""),
        )},
        4, "cannot share 4 K/V heads equally"),
    "Out moved with q's strides (right only while out and q are laid out alike)": Plant(
        {"kernel-work": (
            ("Out = Out + b * stride_ob + h * stride_oh", "Out = Out + b * stride_qb + h * stride_qh"),
        )},
        3, r"with q made contiguous \(k and v still views\) your output is right.*Out by out's own \(stride_ob, "
           r"stride_oh\), never by q's"),
    "K and V moved as if contiguous (n_k * HEAD_DIM per head)": Plant(
        {"kernel-work": (
            ("K = K + b * stride_kb + h_kv * stride_kh", "K = K + (b * (n_heads // group) + h_kv) * n_k * HEAD_DIM"),
            ("V = V + b * stride_vb + h_kv * stride_vh", "V = V + (b * (n_heads // group) + h_kv) * n_k * HEAD_DIM"),
        )},
        3, r"with k and v made contiguous \(q still a view\) your output is right.*K and V move by their own strides"),
    "ValueError that does not name k": Plant(
        {"kernel-work": (
            ("raise ValueError(f\"k has {n_kv_heads} heads, which must divide the {n_heads} "
             "query heads of q\")",
             "raise ValueError(\"the heads do not divide\")"),
        )},
        4, "should name the argument k, got: the heads do not divide"),
    "ValueError that names the count, not k (a bare letter k elsewhere does not count)": Plant(
        {"kernel-work": (
            ("raise ValueError(f\"k has {n_kv_heads} heads, which must divide the {n_heads} "
             "query heads of q\")",
             "raise ValueError(f\"{n_heads} query heads do not split into {n_kv_heads} groups\")"),
        )},
        4, "should name the argument k, got: 6 query heads"),
    "assert instead of a ValueError": Plant(
        {"kernel-work": (
            ("    if n_heads % n_kv_heads:\n"
             "        raise ValueError(f\"k has {n_kv_heads} heads, which must divide the {n_heads} query heads of q\")\n",
             "    assert n_heads % n_kv_heads == 0\n"),
        )},
        4, r"raised AssertionError\(''\) .*a ValueError that names k"),
}
