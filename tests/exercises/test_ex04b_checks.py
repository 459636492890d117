"""Exercise 4b's checks never fail a correct answer: every configuration of the stated space (the forward's
``CONFIG_SPACE``, sm_90 and sm_80), run through the solution's functions and the checks, on the compiler's recorded
reports (``benchmarks/compile/``, Triton 3.9: the counts a compile gives, without compiling)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import nbformat
import pytest

from pagedlab.exercise_checks import ex04b
from pagedlab.kernels.flash_autotune import CONFIG_SPACE

ROOT = Path(__file__).resolve().parents[2]
NB = ROOT / "solutions" / "ex04b_performance_lab.ipynb"
RECORDED = ROOT / "benchmarks" / "compile" / "bf16_causal_triton3.9.csv"
WORK = ("predict-resources-work", "read-work", "exp-work", "budget-work", "bwd-work", "predict-work")


def _solution() -> dict:
    """The solution's functions, from its work cells (no compile)."""
    cells = {c.get("id"): c.source for c in nbformat.read(NB, as_version=4).cells}
    namespace: dict = {"math": math}
    for cell_id in WORK:
        exec(compile(cells[cell_id], f"<{cell_id}>", "exec"), namespace)
    return namespace


def _recorded() -> dict[tuple, dict]:
    """``{(arch, block_m, block_n, num_warps, num_stages): report}`` of the forward, d = 128, without TMA, that
    compiled; a report as ``perf_lab.compile_report`` gives it (the opcodes the recording has)."""
    reports = {}
    with open(RECORDED, newline="") as f:
        for r in csv.DictReader(f):
            if r["kind"] != "fwd" or r["head_dim"] != "128" or r["tma"] != "False" or r["status"] != "ok":
                continue
            key = tuple(int(r[k]) for k in ("arch", "block_m", "block_n", "num_warps", "num_stages"))
            reports[key] = {
                "kind": "fwd", "arch": key[0], "block_m": key[1], "block_n": key[2], "num_warps": key[3],
                "num_stages": key[4], "head_dim": 128, "registers": int(r["registers"]),
                "spill_bytes": int(r["spill_bytes"]), "shared_bytes": int(float(r["shared_kib"]) * 1024),
                "sass": {"HGMMA": int(r["hgmma"]), "HMMA": int(r["hmma"]), "LDGSTS": int(r["ldgsts"]),
                         "UTMALDG": int(r["utmaldg"]), "MUFU.EX2": int(r["mufu_ex2"]), "FFMA": 0, "FMUL": 0},
                "status": "ok"}
    return reports


SOLUTION, REPORTS = _solution(), _recorded()
SPACE = CONFIG_SPACE["fwd"]
ISSUE_CONFIGS = [(64, 64, 8, 3), (64, 32, 4, 3), (128, 128, 4, 3)]   # 2.125, 2.25 and 1.5 exponentials per score


def _run_checks(configs: list[tuple]) -> None:
    """Checks 1 to 7 on ``configs`` with the solution's functions, as the notebook runs them."""
    reports = [REPORTS[(arch, *c)] for arch in (90, 80) for c in configs if (arch, *c) in REPORTS]
    ex04b.check_choice(configs)
    ex04b.check_predictions(SOLUTION["predict_resources"], configs)
    ex04b.check_reports_read(SOLUTION["read_report"], reports)
    ex04b.check_exp2_per_score(SOLUTION["exp2_per_score"], reports)
    ex04b.check_tile_budget(SOLUTION["tile_budget"])
    ex04b.check_backward_fraction(SOLUTION["backward_exp_fraction"])
    ex04b.check_prediction(SOLUTION["predict"], reports, results=ROOT / "no-recorded-run")


def test_the_recording_covers_the_stated_space():
    missing = [(arch, *c) for arch in (90, 80) for c in SPACE if (arch, *c) not in REPORTS]
    # the compiler refuses only what passes a GPU's shared memory (4 stages of 128-wide K and V tiles)
    assert all(c[2] == 128 and c[4] == 4 for c in missing), missing
    assert len(SPACE) == 36 and len(REPORTS) == 72 - len(missing)


def test_the_configurations_of_the_issue_pass():
    """2.125, 2.25 and 1.5 exponentials per score: all right; a band of 1.0 to 1.3 failed them."""
    per_score = {(r["arch"], r["block_m"], r["block_n"], r["num_warps"]): SOLUTION["exp2_per_score"](r)
                 for r in (REPORTS[(arch, *c)] for arch in (90, 80) for c in ISSUE_CONFIGS)}
    assert per_score[90, 64, 64, 8] == 2.125 and per_score[90, 64, 32, 4] == 1.125 and per_score[80, 64, 32, 4] == 1.5
    _run_checks(ISSUE_CONFIGS)


@pytest.mark.parametrize("config", SPACE, ids=lambda c: "x".join(map(str, c)))
def test_every_configuration_of_the_space_passes_with_the_solution(config):
    """Each configuration, with one of the same BLOCK_M and another BLOCK_N, and a small tile that fits."""
    partner = next(c for c in SPACE if c[0] == config[0] and c[1] != config[1] and c[2:] == config[2:])
    fits = (64, 64, 4, 3) if (64, 64, 4, 3) not in (config, partner) else (64, 32, 8, 2)
    _run_checks([config, partner, fits])


def test_exp2_per_score_rejects_a_constant_and_names_the_doubled_count():
    with pytest.raises(AssertionError, match=r"made-up report"):
        ex04b.check_exp2_per_score(lambda r: 1.0625, [REPORTS[90, 64, 64, 4, 3]])
    twice = lambda r: 2 * SOLUTION["exp2_per_score"](r)
    with pytest.raises(AssertionError, match=r"sm_80: 3 per score, expected 1\.5 .*two copies of the loop"):
        ex04b.check_exp2_per_score(twice, [REPORTS[80, 64, 32, 4, 3]])
