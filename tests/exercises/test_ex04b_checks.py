"""Exercise 4b's checks (the performance lab) catch the plausible wrong readings of a compiler report, of the SASS
and of a tile's budget: the FIRST failing check names each one. The compiles run once for all the cases (the
reports are memoized in ``pagedlab.perf_lab``)."""

from pathlib import Path

import pytest

from nbrun import assert_caught, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex04b_performance_lab.ipynb"

# (cell, (old, new) edits of the solution, title of the first failing check, regex of its message)
BUGS = {
    "shared memory in bytes, not KiB": (
        "read-work", [('report["shared_bytes"] / 1024', 'report["shared_bytes"]')],
        "Check 1: the four reports, read", "a KiB is 1024 bytes"),
    "a matrix instruction guessed, not read": (
        "read-work", [('"HGMMA" if sass["HGMMA"] > 0 else "HMMA"', '"HMMA"')],
        "Check 1: the four reports, read", "decide from the counts"),
    "forgot the masked copy of the loop": (
        "exp-work", [("(2 * scores_per_thread)", "scores_per_thread")],
        "Check 2: one exponential per score", "two copies of the loop"),
    "divided by the whole tile, not one thread's share": (
        "exp-work", [("/ (32 * report[\"num_warps\"])", "")],
        "Check 2: one exponential per score", "ONE thread"),
    "one product per pass instead of two": (
        "budget-work", [("flops = 2 * (2 * block_m", "flops = (2 * block_m")],
        "Check 3: the budget, at sizes drawn now", "TWO products"),
    "the query tile counted in every pass": (
        "budget-work", [("nbytes = 2 * block_n * head_dim * 2",
                         "nbytes = 2 * block_n * head_dim * 2 + 2 * block_m * head_dim")],
        "Check 3: the budget, at sizes drawn now", "loaded once per program"),
    "the conventional five backward products": (
        "bwd-work", [("(7 * 2 * head_dim", "(5 * 2 * head_dim")],
        "Check 4: the backward", "seven"),
    "the fewest registers picked as the winner": (
        "predict-work", [('return max(hopper, key=lambda i: (reports[i]["block_m"], reports[i]["block_n"]))',
                          'return min(hopper, key=lambda i: reports[i]["registers"])')],
        "Check 5: the prediction", "Registers only have to fit"),
    "the most work per warp picked though it spills": (
        "predict-work", [('and r["spill_bytes"] == 0]', ']'),
                         ('(reports[i]["block_m"], reports[i]["block_n"])',
                          '(reports[i]["block_m"], -reports[i]["num_warps"])')],
        "Check 5: the prediction", "spills"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    assert_caught(NB, *BUGS[bug])


def test_solution_passes():
    ns = run_cells(NB)
    assert ns["predict"](ns["reports"]) == 0
    assert ns["tile_budget"](128, 64, 128)["exp_fraction"] == 0.5
