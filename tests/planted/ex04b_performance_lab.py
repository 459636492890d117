"""Wrong readings of compile reports planted in solutions/ex04b_performance_lab.ipynb: shared memory, registers,
the matrix instruction, the exp share, the budget of a pass. Checks 1 and 2 come before the compiles; the later
ones share one compile of the solution's configurations (``perf_lab.compile_reports`` memoizes it in the
process)."""

from __future__ import annotations

from planted import Plant

WINNER = 'return max(hopper, key=lambda i: (reports[i]["block_m"], reports[i]["block_n"]))'
HOPPER = '    hopper = [i for i, r in enumerate(reports) if r["arch"] == 90 and r["spill_bytes"] == 0]\n'

BUGS: dict[str, Plant] = {
    "no two configurations with the same BLOCK_M and different BLOCK_N": Plant(
        {"choose-work": (("    (128, 64, 4, 3),", "    (128, 128, 4, 3),"),)},
        1, r"no two of your configurations share BLOCK_M with different BLOCK_N"),
    "shared memory without the query tile": Plant(
        {"predict-resources-work": (("(block_m * head_dim + num_stages * 2 * block_n * head_dim) * 2",
                                     "num_stages * 2 * block_n * head_dim * 2"),)},
        2, r"shared_bytes should be 229376, got 196608\. Hint: the query tile is missing"),
    "one K/V buffer, whatever num_stages": Plant(
        {"predict-resources-work": (("num_stages * 2 * block_n * head_dim", "2 * block_n * head_dim"),)},
        2, r"the pipeline keeps num_stages of them in flight"),
    "registers without P's bf16 copy (1 per score)": Plant(
        {"predict-resources-work": (("1.5 * block_m * block_n", "block_m * block_n"),)},
        2, r"registers should be about 160\.0 \(the live tiles\), got 128\. Hint: the score tile is S in float32 AND "
           r"its bf16 copy P"),
    "shared memory in bytes, not KiB": Plant(
        {"read-work": (('report["shared_bytes"] / 1024', 'report["shared_bytes"]'),)},
        3, "a KiB is 1024 bytes"),
    "a matrix instruction guessed, not read": Plant(
        {"read-work": (('"HGMMA" if sass["HGMMA"] > 0 else "HMMA"', '"HMMA"'),)},
        3, "decide from the counts"),
    "the matrix instruction decided by the GPU (HGMMA on every sm_90)": Plant(
        {"read-work": (('"HGMMA" if sass["HGMMA"] > 0 else "HMMA"', '"HGMMA" if report["arch"] == 90 else "HMMA"'),)},
        3, r"16x32, 4 warps, sm_90: matrix is 'HGMMA', but this sm_90 compile has 0 HGMMA and 64 HMMA instructions\. "
           r"Hint: decide from the counts, not from the GPU"),
    "forgot the masked copy of the loop": Plant(
        {"exp-work": (("(2 * scores_per_thread)", "scores_per_thread"),)},
        4, "two copies of the loop"),
    "divided by the whole tile, not one thread's share": Plant(
        {"exp-work": (("/ (32 * report[\"num_warps\"])", ""),)},
        4, "ONE thread"),
    "one product per pass instead of two": Plant(
        {"budget-work": (("flops = 2 * (2 * block_m", "flops = (2 * block_m"),)},
        5, "TWO products"),
    "the query tile counted in every pass": Plant(
        {"budget-work": (("nbytes = 2 * block_n * head_dim * 2",
                          "nbytes = 2 * block_n * head_dim * 2 + 2 * block_m * head_dim"),)},
        5, "loaded once per program"),
    "exp_fraction = 64 / head_dim (the H100's, whatever the rates)": Plant(
        {"budget-work": (('"exp_fraction": (exps / exp_per_clock) / (flops / mma_flops_per_clock)',
                          '"exp_fraction": 64 / head_dim'),)},
        5, r"is the H100's, at 4096 FLOPs and 16 exp2 per clock\. Hint: compute it from the rates passed in"),
    "the conventional five backward products": Plant(
        {"bwd-work": (("(7 * 2 * head_dim", "(5 * 2 * head_dim"),)},
        6, "seven"),
    "the fewest registers picked as the winner": Plant(
        {"predict-work": ((WINNER, 'return min(hopper, key=lambda i: reports[i]["registers"])'),)},
        7, r"has a 64-row query tile, but report \d+ \(128x\d+, 8 warps, sm_90\) fits with 128 rows.*only have to fit"),
    "the most work per warp picked though it spills": Plant(
        {"predict-work": (('and r["spill_bytes"] == 0]', ']'),
                          ('(reports[i]["block_m"], reports[i]["block_n"])',
                           '(reports[i]["block_m"], -reports[i]["num_warps"])'))},
        7, r"the biggest tile spills: report \d+ \(128x128, 4 warps, sm_90\) spills 1984 bytes"),
    "a constant answer (report 0)": Plant(
        {"predict-work": ((HOPPER, ""), (WINNER, "return 0"))},
        7, r"a synthetic set where [^:]+: report 0 \("),
    "the biggest tile, ignoring the GPU and the spills": Plant(
        {"predict-work": ((HOPPER, ""), (WINNER, 'return max(range(len(reports)), key=lambda i: reports[i]["block_m"] '
                                                 '* reports[i]["block_n"])'))},
        7, r"the biggest tile spills: report \d+ \(128x128, 4 warps, sm_90\) spills"),
    "the fewest spills, then the most shared memory": Plant(
        {"predict-work": ((HOPPER, ""), (WINNER, 'return min(range(len(reports)), key=lambda i: '
                                                 '(reports[i]["spill_bytes"], -reports[i]["shared_bytes"]))'))},
        7, r"the biggest tile spills: report \d+ \(64x128, 8 warps, sm_90\) has a 64-row query tile"),
    "the widest query tile among the sm_90 compiles that fit, its key tile ignored": Plant(
        {"predict-work": ((WINNER, 'return max(hopper, key=lambda i: reports[i]["block_m"])'),)},
        7, r"share BLOCK_M = 128; expected report \d+: at equal BLOCK_M a wider BLOCK_N"),
}
