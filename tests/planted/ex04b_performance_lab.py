"""The plausible wrong answers planted in solutions/ex04b_performance_lab.ipynb, each with the check that must
catch it first."""

from __future__ import annotations

from planted import Plant


BUGS: dict[str, Plant] = {
    "shared memory in bytes, not KiB": Plant(
        {"read-work": (
            ("report[\"shared_bytes\"] / 1024", "report[\"shared_bytes\"]"),
        )},
        1, "a KiB is 1024 bytes"),
    "a matrix instruction guessed, not read": Plant(
        {"read-work": (
            ("\"HGMMA\" if sass[\"HGMMA\"] > 0 else \"HMMA\"", "\"HMMA\""),
        )},
        1, "decide from the counts"),
    "forgot the masked copy of the loop": Plant(
        {"exp-work": (
            ("(2 * scores_per_thread)", "scores_per_thread"),
        )},
        2, "two copies of the loop"),
    "divided by the whole tile, not one thread's share": Plant(
        {"exp-work": (
            ("/ (32 * report[\"num_warps\"])", ""),
        )},
        2, "ONE thread"),
    "one product per pass instead of two": Plant(
        {"budget-work": (
            ("flops = 2 * (2 * block_m", "flops = (2 * block_m"),
        )},
        3, "TWO products"),
    "the query tile counted in every pass": Plant(
        {"budget-work": (
            ("nbytes = 2 * block_n * head_dim * 2", "nbytes = 2 * block_n * head_dim * 2 + 2 * block_m * head_dim"),
        )},
        3, "loaded once per program"),
    "the conventional five backward products": Plant(
        {"bwd-work": (
            ("(7 * 2 * head_dim", "(5 * 2 * head_dim"),
        )},
        4, "seven"),
    "the fewest registers picked as the winner": Plant(
        {"predict-work": (
            ("return max(hopper, key=lambda i: (reports[i][\"block_m\"], reports[i][\"block_n\"]))",
             "return min(hopper, key=lambda i: reports[i][\"registers\"])"),
        )},
        5, "Registers only have to fit"),
    "the most work per warp picked though it spills": Plant(
        {"predict-work": (
            ("and r[\"spill_bytes\"] == 0]", "]"),
            ("(reports[i][\"block_m\"], reports[i][\"block_n\"])",
             "(reports[i][\"block_m\"], -reports[i][\"num_warps\"])"),
        )},
        5, "spills"),
}
