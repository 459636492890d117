"""Exercise 8's checks catch the plausible wrong cost models, crossovers and decisions: for each bug below, the FIRST
failing check (the one a learner meets) must be the one that names it."""

from pathlib import Path

import pytest

from nbrun import assert_caught, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex08_swap_or_recompute.ipynb"


# (cell, solution text, buggy text, title of the first failing check, regex of its message)
BUGS = {
    "counts one direction only": (
        "costs-work", "    return 2 * copies_each_way * one_copy", "    return copies_each_way * one_copy",
        "Check 1: swapping", "both directions"),
    "one copy per block, not per layer": (
        "costs-work", "    copies_each_way = 2 * num_layers * blocks", "    copies_each_way = 2 * blocks",
        "Check 1: swapping", "number of layers"),
    "rounds the number of blocks down (the last block is forgotten)": (
        "costs-work", "    blocks = math.ceil(num_tokens / block_size)", "    blocks = num_tokens // block_size",
        "Check 1: swapping", "round the number of blocks up"),
    "ignores the per-copy latency": (
        "costs-work", "    one_copy = latency + block_size * chunk_bytes_per_token / bandwidth",
        "    one_copy = block_size * chunk_bytes_per_token / bandwidth", "Check 1: swapping", "every copy also pays the fixed latency"),
    "recompute without the attention term": (
        "costs-work", "    return (linear + attention) / flops", "    return linear / flops",
        "Check 2: recomputing", "attention term is missing"),
    "recompute at 1 FLOP per parameter": (
        "costs-work", "    linear = 2 * num_params * num_tokens", "    linear = num_params * num_tokens",
        "Check 2: recomputing", "2 FLOPs per parameter"),
    "swaps even when the CPU pool is full": (
        "choose-work", "    if not manager.can_swap_out(seq_id):\n        return \"recompute\"\n", "",
        "Check 5: what the block size, sharing, the model and the CPU pool decide", "cannot be swapped"),
    "picks the more expensive option": (
        "choose-work", "    return \"swap\" if t_swap < t_recompute else \"recompute\"",
        "    return \"swap\" if t_swap > t_recompute else \"recompute\"", "Check 5: what the block size, sharing, the model and the CPU pool decide", "expected 'recompute', got 'swap'"),
    "crossover: the bytes over the link forgotten": (
        "crossover-work", "    if per_token_budget <= bytes_time:\n        return math.inf\n    return latency / (per_token_budget - bytes_time)",
        "    return latency / per_token_budget", "Check 3: where swapping starts to win", "the bytes over the link cost time too"),
    "crossover: one direction only": (
        "crossover-work", "    per_token_budget = recompute_seconds / (4 * num_layers * num_tokens)",
        "    per_token_budget = recompute_seconds / (2 * num_layers * num_tokens)", "Check 3: where swapping starts to win", "count every copy"),
    "crossover: no infinite case for a slow link": (
        "crossover-work", "    if per_token_budget <= bytes_time:\n        return math.inf\n", "",
        "Check 3: where swapping starts to win", "expected math.inf"),
    "sharing: swap copies the shared blocks too": (
        "choose-work", "    private_blocks = shared.count(False)", "    private_blocks = len(shared)",
        "Check 4: a forked sequence costs less to preempt", "swap copies only the 4 private blocks"),
    "sharing: recomputes every token, cached prefix ignored": (
        "choose-work", "    cached = min(leading, table.num_tokens // bs) * bs", "    cached = 0",
        "Check 4: a forked sequence costs less to preempt", "you recompute all 1088 tokens"),
    "sharing: uncached tokens treated as a prefill of their own (attention to the prefix forgotten)": (
        "choose-work", """    t_recompute = (recompute_seconds(table.num_tokens, num_params, model.num_layers, d_model, flops)
                   - recompute_seconds(cached, num_params, model.num_layers, d_model, flops))""",
        "    t_recompute = recompute_seconds(table.num_tokens - cached, num_params, model.num_layers, d_model, flops)",
        "Check 4: a forked sequence costs less to preempt", "attend to every earlier token, the 1024 cached ones included"),
    "sharing: a partly filled shared block counted as cached": (
        "choose-work", "    cached = min(leading, table.num_tokens // bs) * bs", "    cached = leading * bs",
        "Check 4: a forked sequence costs less to preempt", "FULL"),
    "choose swaps all blocks (sharing ignored in the decision)": (
        "choose-work",
        "    t_swap, t_recompute = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)\n",
        "    t_swap, t_recompute = preemption_seconds(manager, seq_id, model, num_params, bandwidth, latency, flops)\n"
        "    table = manager.table(seq_id)\n"
        "    t_swap = swap_seconds(table.num_tokens, manager.block_size, model.num_layers,\n"
        "                          model.num_kv_heads * model.head_dim * 2, bandwidth, latency)\n",
        "Check 5: what the block size, sharing, the model and the CPU pool decide",
        r"expected 'swap', got 'recompute' \(only 4 private blocks to copy"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    cell, old, new, title, pattern = BUGS[bug]
    assert_caught(NB, cell, [(old, new)], title, pattern)


def test_solution_passes():
    from pagedlab.memory import OPT_13B
    from pagedlab.paged import BlockManager

    ns = run_cells(NB)
    victim = BlockManager(num_blocks=4096, block_size=64, num_cpu_blocks=4096)
    victim.add("victim", range(1024))
    assert ns["choose"](victim, "victim", OPT_13B, 12.9e9, 31.5e9, 10e-6, 156e12) == "swap"
