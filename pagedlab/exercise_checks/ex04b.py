"""Exercise 4b's checks (the performance lab): reading a compiler report, exponentials per score, a tile's budget,
the backward's budget and the predicted winner.

The compile reports are the notebook's own (``perf_lab.compile_reports``); the budgets are compared with
``perf_lab``'s models. Each hint is picked from what came back: a byte count where KiB were asked, a count twice or
a thousandth of the right one, a budget with one product or with the query tile, a winner that spills.
"""

from __future__ import annotations

import math
import random
from numbers import Integral, Real
from pathlib import Path
from typing import Callable

from .. import perf_lab

_REPORT_KEYS = ("registers", "spill_bytes", "shared_kib", "matrix", "loads")
_BUDGET_KEYS = ("flops", "bytes", "exps", "flops_per_byte", "exp_fraction")


def error_hint(exc: BaseException) -> str:
    """The hint for an error raised by a learner's function: the keys a report has, for a ``KeyError``."""
    if isinstance(exc, KeyError):
        return ("a compile report's keys include arch, block_m, block_n, num_warps, num_stages, registers, "
                "spill_bytes, shared_bytes and sass; report['sass'] counts instructions by opcode "
                "(report['sass']['HGMMA']).")
    return ""


def _name(report: dict) -> str:
    return f"{report['block_m']}x{report['block_n']}, {report['num_warps']} warps, sm_{report['arch']}"


def _number(got, what: str) -> float:
    """``got`` as a float; fails naming ``what`` when it is not a real number, or is NaN."""
    __tracebackhide__ = True
    assert isinstance(got, Real) and not isinstance(got, bool), (
        f"{what} should be a number, got {type(got).__name__} {got!r}")
    assert not math.isnan(got), f"{what} is NaN"
    return float(got)


def _dict(got, keys: tuple[str, ...], what: str) -> dict:
    """``got``, which must be a dict with ``keys``; fails naming what it is or which keys are missing."""
    __tracebackhide__ = True
    assert isinstance(got, dict), f"{what} should return a dict with keys {list(keys)}, got {type(got).__name__}"
    missing = [key for key in keys if key not in got]
    assert not missing, f"{what} returned a dict without the keys {missing} (it has {list(got)})"
    return got


def check_reports_read(read_report: Callable[[dict], dict], reports: list[dict]) -> None:
    """Check 1: the four reports, read: registers, spills, shared memory in KiB, matrix instruction, loads."""
    __tracebackhide__ = True
    for r in reports:
        name = _name(r)
        got = _dict(read_report(r), _REPORT_KEYS, f"read_report ({name})")
        kib = _number(got["shared_kib"], f"{name}: shared_kib")
        assert kib != r["shared_bytes"], (
            f"{name}: shared_kib is {kib}, the byte count. Hint: a KiB is 1024 bytes.")
        assert kib != r["shared_bytes"] / 1000, (
            f"{name}: shared_kib is {kib}, the count in kB (1000 bytes). Hint: a KiB is 1024 bytes.")
        assert kib == r["shared_bytes"] / 1024, f"{name}: shared_kib should be {r['shared_bytes'] / 1024}, got {kib}"
        assert (got["registers"], got["spill_bytes"]) == (r["registers"], r["spill_bytes"]), (
            f"{name}: registers and spill_bytes are the report's own per-thread counts, "
            f"{r['registers']} and {r['spill_bytes']}; got {got['registers']} and {got['spill_bytes']}")
        assert got["matrix"] in ("HGMMA", "HMMA"), f"{name}: matrix should be 'HGMMA' or 'HMMA', got {got['matrix']!r}"
        want = "HGMMA" if r["arch"] == 90 else "HMMA"
        assert got["matrix"] == want, (
            f"{name}: matrix is {got['matrix']!r}, but this sm_{r['arch']} compile has {r['sass']['HGMMA']} HGMMA and "
            f"{r['sass']['HMMA']} HMMA instructions. Hint: decide from the counts, not from a guess per GPU.")
        assert got["loads"] == "LDGSTS", (
            f"{name}: loads is {got['loads']!r}, but it has {r['sass']['UTMALDG']} UTMALDG and {r['sass']['LDGSTS']} "
            "LDGSTS: these compiles use plain pointers (TMA is the `tma=True` variant)")
    tma = dict(reports[0], sass=dict(reports[0]["sass"], LDGSTS=0, UTMALDG=12))
    loads = _dict(read_report(tma), _REPORT_KEYS, "read_report (a TMA report)")["loads"]
    assert loads == "UTMALDG", (
        f"a report with 12 UTMALDG and 0 LDGSTS instructions loads through TMA ('UTMALDG'), got {loads!r}")


def check_exp2_per_score(exp2_per_score: Callable[[dict], float], reports: list[dict]) -> None:
    """Check 2: one exponential per score: the static MUFU.EX2 count over one thread's scores in both loops."""
    __tracebackhide__ = True
    for r in reports:
        name = _name(r)
        got = _number(exp2_per_score(r), f"{name}: exp2_per_score")
        assert not 1.9 < got < 2.5, (
            f"{name}: {got:.2f} per score, about twice one. Hint: the kernel has two copies of the loop "
            "(unmasked and masked), each with its own exp2 instructions.")
        assert got > 0.1, (f"{name}: {got:.4f} per score. Hint: divide by the scores ONE thread computes "
                           "(BLOCK_M * BLOCK_N over 32 * num_warps threads), not by the whole tile.")
        assert 1.0 <= got < 1.25, f"{name}: expected a little more than 1 exp2 per score, got {got:.3f}"


def check_tile_budget(tile_budget: Callable[..., dict]) -> None:
    """Check 3: the budget of one pass of the forward's loop, at sizes drawn now, against ``perf_lab.tile_budget``."""
    __tracebackhide__ = True
    rng = random.Random()
    for _ in range(5):
        bm, bn, d = rng.choice([32, 64, 128, 256]), rng.choice([16, 32, 64, 128]), rng.choice([64, 128, 256])
        case = f"B_M={bm}, B_N={bn}, d={d}"
        got = _dict(tile_budget(bm, bn, d), _BUDGET_KEYS, f"tile_budget({bm}, {bn}, {d})")
        want = perf_lab.tile_budget(bm, bn, d)
        values = {key: _number(got[key], f"{case}: {key}") for key in want}
        assert values["flops"] != want["flops"] // 2, (
            f"{case}: {values['flops']:g} FLOPs, half of {want['flops']}. Hint: a pass runs TWO products, QK^T and PV.")
        assert values["bytes"] != want["bytes"] + 2 * bm * d, (
            f"{case}: {values['bytes']:g} bytes counts the query tile too; it is loaded once per program, not per pass")
        assert values["bytes"] != want["bytes"] // 2, (
            f"{case}: {values['bytes']:g} bytes, half of {want['bytes']}. Hint: a pass loads a tile of K AND one of "
            "V, 2 bytes per element (bf16).")
        assert want["exp_fraction"] == 1 or not math.isclose(values["exp_fraction"], 1 / want["exp_fraction"]), (
            f"{case}: exp_fraction {values['exp_fraction']:g} is the products' clocks over the exponentials' clocks; "
            "it is the other way round")
        for key in want:
            assert abs(values[key] - want[key]) <= 1e-9 * abs(want[key]), (
                f"{case}: {key} should be {want[key]}, got {values[key]}")
    fraction = _number(tile_budget(128, 64, 128)["exp_fraction"], "tile_budget(128, 64, 128)['exp_fraction']")
    assert fraction == 0.5, f"B_M=128, B_N=64, d=128: exp_fraction should be 0.5, got {fraction}"
    print(f"forward, d = 128: the exponentials take {fraction:.0%} of the matmul time")


def check_backward_fraction(backward_exp_fraction: Callable[..., float]) -> None:
    """Check 4: the backward's exponentials against its seven products, against ``perf_lab.exp_time_fraction``."""
    __tracebackhide__ = True
    for d in (64, 128, 256):
        got = _number(backward_exp_fraction(d), f"d = {d}: backward_exp_fraction")
        want = perf_lab.exp_time_fraction(d, "bwd")
        assert not math.isclose(got, want * 7 / 5, rel_tol=1e-12), (
            f"d = {d}: {got:.3f} uses the conventional five backward products; this course's kernels run seven")
        assert not math.isclose(got, want / 2, rel_tol=1e-12), (
            f"d = {d}: {got:.3f} counts one exp2 per score; the backward recomputes P twice")
        assert abs(got - want) < 1e-12, f"d = {d}: expected {want:.4f}, got {got:.4f}"
    print(f"backward, d = 128: exponentials {backward_exp_fraction(128):.0%} of the matmul time")


def check_prediction(predict: Callable[[list[dict]], int], reports: list[dict],
                     results: Path = Path("..", "benchmarks", "results")) -> None:
    """Check 5: the prediction against the compiler's facts, and against the timings of a GPU run recorded under
    ``results`` (relative to the notebook's folder) when there is one (printed, not compared)."""
    __tracebackhide__ = True
    i = predict(reports)
    assert isinstance(i, Integral) and not isinstance(i, bool) and 0 <= i < len(reports), (
        f"predict should return an index into the {len(reports)} reports, got {type(i).__name__} {i!r}")
    r = reports[i]
    assert r["arch"] == 90, f"report {i} was compiled for sm_{r['arch']}: it does not run on an H100"
    assert r["spill_bytes"] == 0, (
        f"report {i} ({r['block_m']}x{r['block_n']}, {r['num_warps']} warps) spills {r['spill_bytes']} bytes per "
        "thread to local memory, inside its loop: a spill is paid on every tile")
    fewest = min((j for j, x in enumerate(reports) if x["arch"] == 90), key=lambda j: reports[j]["registers"])
    widest = max(x["block_m"] for x in reports if x["spill_bytes"] == 0 and x["arch"] == 90)
    assert not (i == fewest and r["block_m"] < widest), (
        f"report {i} uses the fewest registers, but its {r['block_m']}-row tile loads K and V for "
        f"{r['block_m'] / widest:.0%} as many queries as a {widest}-row one: fewer FLOPs per byte. Registers only "
        "have to fit.")
    assert i == 0, f"expected report 0 (128 x 128, 8 warps): no spill, the most reuse; got report {i}"
    recorded = perf_lab.recorded_forward_timings(results)
    if recorded is None:
        print("recorded GPU timings: not recorded yet; the prediction stands on the compiler's facts")
    else:
        run, times = recorded
        mine = tuple(r[k] for k in ("block_m", "block_n", "num_warps", "num_stages"))
        best = min(times, key=times.get)
        print(f"recorded run {run}: fastest configuration timed {best} ({times[best]:.3f} ms); "
              f"predicted {mine}: {times.get(mine, float('nan')):.3f} ms")
