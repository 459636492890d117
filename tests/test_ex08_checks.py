"""Exercise 8's checks catch the plausible wrong cost models and decisions: each bug below must fail a check."""

from pathlib import Path

import pytest

from nbrun import planted, run_cells

NB = Path(__file__).resolve().parent.parent / "solutions" / "ex08_swap_or_recompute.ipynb"


# (cell, solution text, buggy text, words the failing check's message must contain)
BUGS = {
    "counts one direction only": (
        "costs-work", "    return 2 * copies_each_way * one_copy", "    return copies_each_way * one_copy",
        "both directions"),
    "one copy per block, not per layer": (
        "costs-work", "    copies_each_way = 2 * num_layers * blocks", "    copies_each_way = 2 * blocks",
        "number of layers"),
    "rounds the number of blocks down (the last block is forgotten)": (
        "costs-work", "    blocks = math.ceil(num_tokens / block_size)", "    blocks = num_tokens // block_size",
        "round the number of blocks up"),
    "ignores the per-copy latency": (
        "costs-work", "    one_copy = latency + block_size * chunk_bytes_per_token / bandwidth",
        "    one_copy = block_size * chunk_bytes_per_token / bandwidth", "latency"),
    "recompute without the attention term": (
        "costs-work", "    return (linear + attention) / flops", "    return linear / flops",
        "attention term is missing"),
    "recompute at 1 FLOP per parameter": (
        "costs-work", "    linear = 2 * num_params * num_tokens", "    linear = num_params * num_tokens",
        "2 FLOPs per parameter"),
    "swaps even when the CPU pool is full": (
        "choose-work", "    if not manager.can_swap_out(seq_id):\n        return \"recompute\"\n", "",
        "cannot be swapped"),
    "picks the more expensive option": (
        "choose-work", "    return \"swap\" if t_swap < t_recompute else \"recompute\"",
        "    return \"swap\" if t_swap > t_recompute else \"recompute\"", "expected 'recompute', got 'swap'"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_check_catches(bug):
    cell, old, new, words = BUGS[bug]
    with pytest.raises(AssertionError, match=words):
        run_cells(NB, replace=planted(NB, cell, (old, new)))


def test_solution_passes():
    ns = run_cells(NB)
    victim = ns["manager_with"](64, 1024, 4096)
    assert ns["choose"](victim, "victim", ns["OPT_13B"], 12.9e9, 31.5e9, 10e-6, 156e12) == "swap"
