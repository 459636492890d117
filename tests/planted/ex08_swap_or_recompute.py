"""Wrong costs of swapping and recomputing planted in solutions/ex08_swap_or_recompute.ipynb: copies counted one way
or per block, latency or attention left out, the wrong choice, the crossover block size."""

from __future__ import annotations

from planted import Plant


BUGS: dict[str, Plant] = {
    "counts one direction only": Plant(
        {"costs-work": (
            ("    return 2 * copies_each_way * one_copy", "    return copies_each_way * one_copy"),
        )},
        1, "both directions"),
    "one copy per block, not per layer": Plant(
        {"costs-work": (
            ("    copies_each_way = 2 * num_layers * blocks", "    copies_each_way = 2 * blocks"),
        )},
        1, "number of layers"),
    "rounds the number of blocks down (the last block is forgotten)": Plant(
        {"costs-work": (
            ("    blocks = math.ceil(num_tokens / block_size)", "    blocks = num_tokens // block_size"),
        )},
        1, "round the number of blocks up"),
    "ignores the per-copy latency": Plant(
        {"costs-work": (
            ("    one_copy = latency + block_size * chunk_bytes_per_token / bandwidth",
             "    one_copy = block_size * chunk_bytes_per_token / bandwidth"),
        )},
        1, "every copy also pays the fixed latency"),
    "recompute without the attention term": Plant(
        {"costs-work": (
            ("    return (linear + attention) / flops", "    return linear / flops"),
        )},
        2, "attention term is missing"),
    "recompute at 1 FLOP per parameter": Plant(
        {"costs-work": (
            ("    linear = 2 * num_params * num_tokens", "    linear = num_params * num_tokens"),
        )},
        2, "2 FLOPs per parameter"),
    "swaps even when the CPU pool is full": Plant(
        {"choose-work": (
            ("    if not manager.can_swap_out(seq_id):\n"
             "        return \"recompute\"\n",
             ""),
        )},
        5, "cannot be swapped"),
    "picks the more expensive option": Plant(
        {"choose-work": (
            ("    return \"swap\" if t_swap < t_recompute else \"recompute\"",
             "    return \"swap\" if t_swap > t_recompute else \"recompute\""),
        )},
        5, "expected 'recompute', got 'swap'"),
    "crossover: the bytes over the link forgotten": Plant(
        {"crossover-work": (
            ("    if per_token_budget <= bytes_time:\n"
             "        return math.inf\n"
             "    return latency / (per_token_budget - bytes_time)",
             "    return latency / per_token_budget"),
        )},
        3, "the bytes over the link cost time too"),
    "crossover: one direction only": Plant(
        {"crossover-work": (
            ("    per_token_budget = recompute_seconds / (4 * num_layers * num_tokens)",
             "    per_token_budget = recompute_seconds / (2 * num_layers * num_tokens)"),
        )},
        3, "count every copy"),
    "crossover: no infinite case for a slow link": Plant(
        {"crossover-work": (
            ("    if per_token_budget <= bytes_time:\n"
             "        return math.inf\n",
             ""),
        )},
        3, "expected math.inf"),
    "sharing: swap copies the shared blocks too": Plant(
        {"choose-work": (
            ("    private_blocks = shared.count(False)", "    private_blocks = len(shared)"),
        )},
        4, "swap copies only the 4 private blocks"),
    "sharing: recomputes every token, cached prefix ignored": Plant(
        {"choose-work": (
            ("    cached = min(leading, table.num_tokens // bs) * bs", "    cached = 0"),
        )},
        4, "you recompute all 1088 tokens"),
    "sharing: uncached tokens treated as a prefill of their own (attention to the "
"prefix forgotten)": Plant(
        {"choose-work": (
            ("    t_recompute = (recompute_seconds(table.num_tokens, num_params, model.num_layers, d_model, flops)\n"
             "                   - recompute_seconds(cached, num_params, model.num_layers, d_model, flops))",
             "    t_recompute = recompute_seconds(table.num_tokens - cached, num_params, "
             "model.num_layers, d_model, flops)"),
        )},
        4, "attend to every earlier token, the 1024 cached ones included"),
    "sharing: a block shared only when its count is 2 (a parent forked twice has blocks of 3)": Plant(
        {"choose-work": (
            ("    shared = [manager.allocator.refcount(b) > 1 for b in table.block_ids]",
             "    shared = [manager.allocator.refcount(b) == 2 for b in table.block_ids]"),
        )},
        4, r"with a sibling \(three owners of a shared block\).*Hint: a block is shared when its reference count is "
           r"above 1, not when it is 2: here the parent was forked twice, and 62 blocks have 3 owners"),
    "sharing: a partly filled shared block counted as cached": Plant(
        {"choose-work": (
            ("    cached = min(leading, table.num_tokens // bs) * bs", "    cached = leading * bs"),
        )},
        4, "FULL"),
    "choose swaps on a tie (a child that owns nothing costs 0 s both ways)": Plant(
        {"choose-work": (
            ('    return "swap" if t_swap < t_recompute else "recompute"',
             '    return "swap" if t_swap <= t_recompute else "recompute"'),
        )},
        5, "expected 'recompute', got 'swap' \\(forked at a block boundary"),
    "choose swaps all blocks (sharing ignored in the decision)": Plant(
        {"choose-work": (
            ("    t_swap, t_recompute = preemption_seconds(manager, seq_id, model, num_params, "
             "bandwidth, latency, flops)\n",
             "    t_swap, t_recompute = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)\n"
             "    table = manager.table(seq_id)\n"
             "    t_swap = swap_seconds(table.num_tokens, manager.block_size, model.num_layers,\n"
             "                          model.num_kv_heads * model.head_dim * 2, bandwidth, latency)\n"),
        )},
        5, r"expected 'swap', got 'recompute' \(only 4 private blocks to copy"),
    "crossover: < where the text says at equality too (ZeroDivisionError at zero room)": Plant(
        {"crossover-work": (("    if per_token_budget <= bytes_time:", "    if per_token_budget < bytes_time:"),)},
        3, r"the bytes alone take exactly the 125 ms prefill, and crossover_block_size raised ZeroDivisionError: "
           r"float division by zero\. Hint: .*equality included \(<=, not <\)"),
    "sharing: d_model from the KV heads (wrong for every GQA model)": Plant(
        {"choose-work": (("    d_model = model.num_heads * model.head_dim", "    d_model = model.num_kv_heads * model.head_dim"),)},
        4, r"Llama-3-8B, a child of 4160 tokens forked from 4096 \(4 of its 260 blocks private\): t_recompute should "
           r"be [\d.]+ ms \(within 0\.1%\), got [\d.]+ ms \(-[\d.]+e-02 relative\)\. Hint: d_model is num_heads x "
           r"head_dim = 4096"),
    "sharing: the cache counted in float32 (4 bytes per element)": Plant(
        {"choose-work": (("    chunk = model.num_kv_heads * model.head_dim * 2", "    chunk = model.num_kv_heads * model.head_dim * 4"),)},
        4, r"OPT-13B, a child of 1088 tokens .*: t_swap should be [\d.]+ ms, got [\d.]+ ms \(\+[\d.]+e-01 relative\)\. "
           r"Hint: the cache is bf16: 2 bytes per element, not 4"),
}
