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
        2, r"shared_bytes should be 229376, got 196608 \(36 of the 36 configurations differ\)\. Hint: the query tile is "
           r"missing"),
    "shared memory with sm_80's stage count (num_stages - 1 buffers)": Plant(
        {"predict-resources-work": (("num_stages * 2 * block_n * head_dim", "(num_stages - 1) * 2 * block_n * head_dim"),)},
        2, r"128x128, 8 warps, 3 stages: shared_bytes should be 229376, got 163840 .*Hint: num_stages - 1 buffers of "
           r"K and V is what the sm_80 compiles report"),
    "one K/V buffer, whatever num_stages": Plant(
        {"predict-resources-work": (("num_stages * 2 * block_n * head_dim", "2 * block_n * head_dim"),)},
        2, r"the pipeline keeps num_stages of them in flight"),
    "registers without P's bf16 copy (1 per score)": Plant(
        {"predict-resources-work": (("1.5 * block_m * block_n", "block_m * block_n"),)},
        2, r"registers should be about 160\.0 \(the live tiles\), got 128 \(36 of the 36 configurations differ\)\. Hint: "
           r"the score tile is S in float32 AND "
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
        4, r"128x128, 8 warps, sm_90: 2\.0625 per score, expected 1\.03125 = 132 MUFU\.EX2 / \(2 loops x 64 scores\)\. "
           r"Hint: twice the right value: the kernel has two copies of the loop"),
    "a constant near one exponential per score": Plant(
        {"exp-work": (('return report["sass"]["MUFU.EX2"] / (2 * scores_per_thread)', "return 1.0625"),)},
        4, r"128x128, 8 warps, sm_90: 1\.0625 per score, expected 1\.03125 = 132 MUFU\.EX2 / \(2 loops x 64 scores\)\. "
           r"Hint: the count is per thread and static"),
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
        6, r"d = 64: backward_exp_fraction should be 0\.571429, got 0\.8\. Hint: it uses the conventional five"),
    "backward_exp_fraction ignores the rates it is given (the H100's always)": Plant(
        {"bwd-work": (("(2 / exp_per_clock) / (7 * 2 * head_dim / mma_flops_per_clock)",
                       "(2 / 16) / (7 * 2 * head_dim / 4096)"),)},
        6, r"d = 128, 1024 FLOPs and 16 exp2 per clock: backward_exp_fraction should be 0\.0714286, got 0\.285714\. "
           r"Hint: it is the H100's value"),
    "a tie broken by the last of equal maxima": Plant(
        {"predict-work": ((WINNER, 'return max(reversed(hopper), key=lambda i: (reports[i]["block_m"], '
                                   'reports[i]["block_n"]))'),)},
        7, r"tie: both fit on sm_90 with the same BLOCK_M and BLOCK_N\. The rule for a tie is the first of equal "
           r"maxima"),
    "the fewest registers picked as the winner": Plant(
        {"predict-work": ((WINNER, 'return min(hopper, key=lambda i: reports[i]["registers"])'),)},
        7, r"has a 64-row query tile, but report \d+ \(128x\d+, 8 warps, sm_90\) fits with 128 rows.*only have to fit"),
    "the most work per warp picked though it spills": Plant(
        {"predict-work": (('and r["spill_bytes"] == 0]', ']'),
                          ('(reports[i]["block_m"], reports[i]["block_n"])',
                           '(reports[i]["block_m"], -reports[i]["num_warps"])'))},
        7, r"the biggest tile spills: report \d+ \(128x128, 4 warps, sm_90\) spills 1984 bytes"),
    "a spill read from the registers (255 of them) instead of spill_bytes": Plant(
        {"predict-work": (('and r["spill_bytes"] == 0]', 'and r["registers"] < 255]'),)},
        7, r"the winner uses all 255 registers and spills nothing: .* spills 0 bytes\. Only spill_bytes says"),
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
