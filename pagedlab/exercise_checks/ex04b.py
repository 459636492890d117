"""Exercise 4b's checks (the performance lab): the learner's configurations and the resources predicted for them
before compiling, reading the compiler's reports, exponentials per score, a tile's budget, the backward's budget and
the predicted winner.

The compile reports are the notebook's own (``perf_lab.compile_reports`` of the learner's configurations, for sm_90
and sm_80), joined by synthetic and shuffled ones, and the per-clock rates are drawn, so that no constant answer and
no rule other than the right one passes; the predictions and budgets are compared with the course's models
(``perf_lab``, ``pagedlab.kernels.flash_autotune``). Each hint is picked from what came back: a byte count where KiB
were asked, a count twice or a thousandth of the right one, a budget with one product or with the query tile, a
winner that spills, runs on another GPU or is narrower than one that fits.

The input space the instructions state: configurations ``(BLOCK_M, BLOCK_N, num_warps, num_stages)`` of the forward's
``CONFIG_SPACE`` (BLOCK_M 64 or 128, BLOCK_N 32, 64 or 128, 4 or 8 warps, 2 to 4 stages: 36), d = 128, bf16, compiled
for sm_90 and sm_80 (the compiler refuses 4 stages of 128-wide key tiles: too much shared memory); reports as
``perf_lab.compile_report`` gives them (``sass`` counts HGMMA, HMMA, LDGSTS, UTMALDG, MUFU.EX2); tile budgets at
BLOCK_M 32 to 256, BLOCK_N 16 to 128, d 64 to 256 and any per-clock rates (their ratio matters: the H100's and
others); ``predict`` over sets with spills, sm_80 compiles, equal BLOCK_M, and ties (the first of equal maxima).
Check 2 runs the whole space; check 4 the learner's compiles and eight made-up reports; ``tests/exercises/
test_ex04b_checks.py`` runs every configuration through the solution on the recorded compiles.
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


def _space() -> list[tuple[int, int, int, int]]:
    from ..kernels.flash_autotune import CONFIG_SPACE

    return CONFIG_SPACE["fwd"]


def compile_mine(configs, archs: tuple[int, ...] = (90, 80)) -> list[dict]:
    """The compile reports of the learner's configurations for each GPU of ``archs`` (``perf_lab.compile_reports``,
    in a fresh process), the ones the compiler refused left out and named (a configuration whose buffers pass the
    GPU's shared memory is a result of the lab, not an error).

    It prints how many kernels it compiles before it starts and how long that took: a compile takes a few seconds of
    one core (``ptxas``), many more on a machine busy with other work. Interrupted (Jupyter's stop button, or
    ``pytest --nbval-cell-timeout``), it raises ``KeyboardInterrupt`` with one line saying so instead of the
    traceback of the waiting subprocess.

    Raises:
        KeyboardInterrupt: interrupted while compiling. RuntimeError: the compiling process failed.
    """
    import time

    wanted = [dict(kind="fwd", block_m=bm, block_n=bn, num_warps=warps, num_stages=stages, arch=arch)
              for arch in archs for bm, bn, warps, stages in configs]
    print(f"compiling {len(wanted)} kernels (each configuration for sm_{' and sm_'.join(map(str, archs))}) in a "
          f"separate process: a few seconds each on an idle core, longer on a busy machine", flush=True)
    start = time.perf_counter()
    try:
        every = perf_lab.compile_reports(wanted)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(
            f"compiling {len(wanted)} kernels was interrupted after {time.perf_counter() - start:.0f} s (a busy "
            f"machine compiles slowly): run the cell again and let it finish, or with pytest give it more time "
            f"(--nbval-cell-timeout=600)") from None
    refused = [r for r in every if r["status"] != "ok"]
    for r in refused:
        print(f"the compiler refused {r['block_m']}x{r['block_n']}, {r['num_warps']} warps, {r['num_stages']} "
              f"stages for sm_{r['arch']}: {r['status']}")
    print(f"compiled in {time.perf_counter() - start:.0f} s")
    return [r for r in every if r["status"] == "ok"]


def check_choice(configs) -> None:
    """Check 1: the learner's configurations: three or more distinct ones of the forward's autotuning space, two of
    them with the same BLOCK_M and different BLOCK_N (so that the compile shows what the key tile changes)."""
    __tracebackhide__ = True
    space = _space()
    assert isinstance(configs, (list, tuple)) and len(configs) >= 3, (
        f"MY_CONFIGS should be a list of three or more (BLOCK_M, BLOCK_N, num_warps, num_stages) tuples, got "
        f"{configs!r}")
    chosen = [tuple(c) if isinstance(c, (list, tuple)) else c for c in configs]
    outside = [c for c in chosen if c not in space]
    assert not outside, (
        f"{outside} are not in the forward's autotuning space (BLOCK_M in (64, 128), BLOCK_N in (32, 64, 128), "
        f"num_warps in (4, 8), num_stages in (2, 3, 4)), as (BLOCK_M, BLOCK_N, num_warps, num_stages) tuples")
    assert len(set(chosen)) == len(chosen), f"MY_CONFIGS lists a configuration twice: {chosen}"
    pairs = [(a, b) for a in chosen for b in chosen if a[0] == b[0] and a[1] < b[1]]
    assert pairs, (
        f"no two of your configurations share BLOCK_M with different BLOCK_N ({[c[:2] for c in chosen]}): choose two "
        f"that do, so that the compile shows what the key tile changes at the same query tile")


def _shared_formulas(bm: int, bn: int, stages: int) -> dict[str, float]:
    """Shared bytes (sm_90, d = 128, bf16) by the right formula and by plausible wrong ones, each with its hint."""
    kv, q = 2 * bn * 128 * 2, bm * 128 * 2
    return {
        "the query tile is missing: the program loads it once and keeps it in shared memory": stages * kv,
        "one buffer of K and V is counted, but the pipeline keeps num_stages of them in flight": q + kv,
        ("num_stages - 1 buffers of K and V is what the sm_80 compiles report (one buffer fewer than sm_90 at "
         "128-row tiles, in the compile table below); the prediction is for sm_90, which keeps num_stages of them"):
            q + (stages - 1) * kv,
        "a stage buffers a tile of K AND one of V": q + stages * kv / 2,
        "bf16 is 2 bytes per element, not 4": 2 * (q + stages * kv),
        "bf16 is 2 bytes per element: this counts elements, not bytes": (q + stages * kv) / 2,
    }


def _register_formulas(bm: int, bn: int, warps: int) -> dict[str, float]:
    """Registers of the live tiles by plausible wrong formulas, each with its hint."""
    threads = 32 * warps
    return {
        "the score tile is S in float32 AND its bf16 copy P: 1.5 registers per score":
            (bm * 128 + bm * bn) / threads,
        "the tiles are spread over the program's 32 * num_warps threads": (bm * 128 + 1.5 * bm * bn),
        "the tiles are spread over 32 * num_warps threads (a warp is 32 threads)": (bm * 128 + 1.5 * bm * bn) / warps,
        "the accumulator O is BLOCK_M x d in float32, one register per element, and it is missing":
            1.5 * bm * bn / threads,
    }


def _matching(got: dict, formulas: dict, close) -> str | None:
    """The hint of the formula that ``got`` ({config: value}) matches at every config, if exactly one does."""
    hits = [hint for hint in formulas[next(iter(got))] if all(close(got[c], formulas[c][hint]) for c in got)]
    return hits[0] if len(hits) == 1 else None


def check_predictions(predict_resources: Callable[..., dict], configs) -> None:
    """Check 2: the resources predicted before compiling (sm_90, d = 128, bf16), for the learner's configurations
    and then for every configuration of the stated space, against the course's models: shared memory, the live
    tiles' registers, and a spill when they alone pass 255. The first message names the first configuration that
    differs; its hint names the wrong formula that the learner's numbers follow at every configuration, if one does."""
    __tracebackhide__ = True
    from ..kernels.flash_autotune import shared_memory_bytes

    order = [tuple(c) for c in configs] + [c for c in _space() if c not in [tuple(c) for c in configs]]
    shared, registers = {}, {}
    for bm, bn, warps, stages in order:
        name = f"{bm}x{bn}, {warps} warps, {stages} stages"
        got = _dict(predict_resources(bm, bn, warps, stages), ("shared_bytes", "registers", "spills"),
                    f"predict_resources({bm}, {bn}, {warps}, {stages})")
        shared[bm, bn, warps, stages] = _number(got["shared_bytes"], f"{name}: shared_bytes")
        registers[bm, bn, warps, stages] = (_number(got["registers"], f"{name}: registers"), got["spills"])
    wrong = [c for c in order if shared[c] != shared_memory_bytes("fwd", c[0], c[1], c[3], 128, 2)]
    if wrong:
        bm, bn, warps, stages = c = wrong[0]
        want = shared_memory_bytes("fwd", bm, bn, stages, 128, 2)
        why = _matching({c: shared[c] for c in order},
                        {c: _shared_formulas(c[0], c[1], c[3]) for c in order}, lambda a, b: a == b) or (
            f"the query tile ({bm * 128 * 2} bytes) plus num_stages buffers of a K and a V tile "
            f"({2 * bn * 128 * 2} bytes each stage)")
        raise AssertionError(f"{bm}x{bn}, {warps} warps, {stages} stages: shared_bytes should be {want}, got "
                             f"{shared[c]:g} ({len(wrong)} of the {len(order)} configurations differ). Hint: {why}.")
    live = {c: perf_lab.live_tile_registers(c[0], c[1], c[2], 128) for c in order}
    wrong = [c for c in order if abs(registers[c][0] - live[c]) > 1]
    if wrong:
        bm, bn, warps, stages = c = wrong[0]
        why = _matching({c: registers[c][0] for c in order}, {c: _register_formulas(*c[:3]) for c in order},
                        lambda a, b: abs(a - b) <= 1) or (
            "the float32 accumulator O (BLOCK_M x d) and the score tile (1.5 registers per score), over "
            "32 * num_warps threads")
        raise AssertionError(f"{bm}x{bn}, {warps} warps, {stages} stages: registers should be about {live[c]:.1f} "
                             f"(the live tiles), got {registers[c][0]:g} ({len(wrong)} of the {len(order)} "
                             f"configurations differ). Hint: {why}.")
    for c in order:
        spills = registers[c][1]
        name = f"{c[0]}x{c[1]}, {c[2]} warps, {c[3]} stages"
        assert isinstance(spills, bool), f"{name}: spills should be a bool, got {spills!r}"
        assert spills == (live[c] > 255), (
            f"{name}: the live tiles take {live[c]:.0f} registers per thread, so spills should be {live[c] > 255}, "
            f"got {spills}. Hint: a thread holds at most 255 registers; the prediction spills when the live tiles "
            f"alone pass that.")


def check_reports_read(read_report: Callable[[dict], dict], reports: list[dict]) -> None:
    """Check 3: your compiles, read (shuffled, with a synthetic sm_90 report that uses HMMA): registers, spills,
    shared memory in KiB, matrix instruction, loads."""
    __tracebackhide__ = True
    small = dict(reports[0], block_m=16, block_n=32, num_warps=4, arch=90,
                 sass=dict(reports[0]["sass"], HGMMA=0, HMMA=64))   # a tile below wgmma's 64 rows: warp-level mma
    every = [small] + list(reports)
    random.Random().shuffle(every)
    for r in every:
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
        want = "HGMMA" if r["sass"]["HGMMA"] > 0 else "HMMA"
        assert got["matrix"] == want, (
            f"{name}: matrix is {got['matrix']!r}, but this sm_{r['arch']} compile has {r['sass']['HGMMA']} HGMMA and "
            f"{r['sass']['HMMA']} HMMA instructions. Hint: decide from the counts, not from the GPU: on an sm_90 "
            f"a tile too small for a warpgroup's 64-row wgmma runs the warp-level mma.")
        assert got["loads"] == "LDGSTS", (
            f"{name}: loads is {got['loads']!r}, but it has {r['sass']['UTMALDG']} UTMALDG and {r['sass']['LDGSTS']} "
            "LDGSTS: these compiles use plain pointers (TMA is the `tma=True` variant)")
    tma = dict(reports[0], sass=dict(reports[0]["sass"], LDGSTS=0, UTMALDG=12))
    loads = _dict(read_report(tma), _REPORT_KEYS, "read_report (a TMA report)")["loads"]
    assert loads == "UTMALDG", (
        f"a report with 12 UTMALDG and 0 LDGSTS instructions loads through TMA ('UTMALDG'), got {loads!r}")


def _scores_per_thread(report: dict) -> float:
    return report["block_m"] * report["block_n"] / (32 * report["num_warps"])


def _made_up_ex2(seed: int = 4) -> list[dict]:
    """Reports of the forward's stated space, both GPUs, with MUFU.EX2 counts drawn (seeded): no constant and no
    band of values passes them, only the division the exercise defines."""
    rng = random.Random(seed)
    reports = []
    for bm, bn, warps, stages in rng.sample(_space(), 8):
        r = _synthetic(rng.choice((80, 90)), bm, bn, warps, stages, 0)
        r["sass"]["MUFU.EX2"] = 2 * rng.randint(9, 160)
        reports.append(r)
    return reports


def check_exp2_per_score(exp2_per_score: Callable[[dict], float], reports: list[dict]) -> None:
    """Check 4: exponentials per score: the static MUFU.EX2 count over one thread's scores in both loops, compared
    with that division on the learner's compiles, then on made-up reports. What is accepted follows from each report
    (its count, BLOCK_M, BLOCK_N, num_warps), never from a band: 8 warps over a 64-row tile for sm_90 gives 2.125 or
    2.25, a 64x32 tile for sm_80 1.5, and both are right."""
    __tracebackhide__ = True
    for k, r in enumerate(list(reports) + _made_up_ex2()):
        name = _name(r) + ("" if k < len(reports) else " (a made-up report)")
        count, scores = r["sass"]["MUFU.EX2"], _scores_per_thread(r)
        want = count / (2 * scores)
        got = _number(exp2_per_score(dict(r, sass=dict(r["sass"]))), f"{name}: exp2_per_score")
        if math.isclose(got, want, rel_tol=1e-9):
            continue
        shown = f"{name}: {got:.6g} per score, expected {want:.6g} = {count} MUFU.EX2 / (2 loops x {scores:g} scores)"
        if math.isclose(got, 2 * want, rel_tol=1e-9):
            why = ("twice the right value: the kernel has two copies of the loop (unmasked and masked), each with "
                   "its own exp2 instructions, so a thread's static count covers the scores of one pass of BOTH")
        elif math.isclose(got, want / (32 * r["num_warps"]), rel_tol=1e-9) or \
                math.isclose(got, 2 * want / (32 * r["num_warps"]), rel_tol=1e-9):
            why = ("divide by the scores ONE thread computes (BLOCK_M * BLOCK_N over 32 * num_warps threads), not "
                   "by the whole tile")
        elif math.isclose(got, want * r["num_warps"], rel_tol=1e-9) or \
                math.isclose(got, want / r["num_warps"], rel_tol=1e-9):
            why = "a program has 32 * num_warps threads: 32 per warp"
        else:
            why = ("the count is per thread and static; divide it by 2 * BLOCK_M * BLOCK_N / (32 * num_warps), from "
                   "this report's own fields")
        raise AssertionError(f"{shown}. Hint: {why}.")


def check_tile_budget(tile_budget: Callable[..., dict]) -> None:
    """Check 5: the budget of one pass of the forward's loop, at sizes and per-clock rates drawn now, against
    ``perf_lab.tile_budget``."""
    __tracebackhide__ = True
    rng = random.Random()
    # Per-clock rates (tensor-core FLOPs, exp2): only their ratio moves exp_fraction, so the first case always has a
    # ratio other than the H100's 4096 / 16.
    other = [(1024, 16), (2048, 32), (4096, 8), (8192, 16), (2048, 4)]
    rates = [rng.choice(other)] + [rng.choice(other + [(4096, 16)]) for _ in range(4)]
    for mma, exp in rates:
        bm, bn, d = rng.choice([32, 64, 128, 256]), rng.choice([16, 32, 64, 128]), rng.choice([64, 128, 256])
        case = f"B_M={bm}, B_N={bn}, d={d}"
        case += f", {mma} FLOPs and {exp} exp2 per clock"
        got = _dict(tile_budget(bm, bn, d, mma, exp), _BUDGET_KEYS, f"tile_budget({bm}, {bn}, {d}, {mma}, {exp})")
        want = perf_lab.tile_budget(bm, bn, d, mma, exp)
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
        default = perf_lab.tile_budget(bm, bn, d)["exp_fraction"]
        assert mma / exp == 4096 / 16 or not math.isclose(values["exp_fraction"], default), (
            f"{case}: exp_fraction {values['exp_fraction']:g} is the H100's, at 4096 FLOPs and 16 exp2 per clock. "
            f"Hint: compute it from the rates passed in (mma_flops_per_clock, exp_per_clock).")
        for key in want:
            assert abs(values[key] - want[key]) <= 1e-9 * abs(want[key]), (
                f"{case}: {key} should be {want[key]}, got {values[key]}")
    fraction = _number(tile_budget(128, 64, 128)["exp_fraction"], "tile_budget(128, 64, 128)['exp_fraction']")
    assert fraction == 0.5, f"B_M=128, B_N=64, d=128: exp_fraction should be 0.5, got {fraction}"
    print(f"forward, d = 128: the exponentials take {fraction:.0%} of the matmul time")


def check_backward_fraction(backward_exp_fraction: Callable[..., float]) -> None:
    """Check 6: the backward's exponentials against its seven products, against ``perf_lab.exp_time_fraction``, at
    the H100's rates and at others (only their ratio matters; the first case after the defaults is not the H100's)."""
    __tracebackhide__ = True
    cases = [(d, None, None) for d in (64, 128, 256)] + [
        (128, 1024, 16), (64, 4096, 8), (256, 2048, 32), (96, 8192, 16), (128, 4096, 16)]
    for d, mma, exp in cases:
        if mma is None:
            what, got = f"d = {d}", backward_exp_fraction(d)
            mma, exp = perf_lab.H100_RATES["mma_flops_per_clock"], perf_lab.H100_RATES["exp_per_clock"]
        else:
            what, got = f"d = {d}, {mma} FLOPs and {exp} exp2 per clock", backward_exp_fraction(d, mma, exp)
        got = _number(got, f"{what}: backward_exp_fraction")
        want = perf_lab.exp_time_fraction(d, "bwd", mma, exp)
        if abs(got - want) <= 1e-12 * want:
            continue
        if math.isclose(got, want * 7 / 5, rel_tol=1e-9):
            why = "it uses the conventional five backward products; this course's kernels run seven"
        elif math.isclose(got, want / 2, rel_tol=1e-9):
            why = "it counts one exp2 per score; the backward recomputes P twice"
        elif math.isclose(got, perf_lab.exp_time_fraction(d, "bwd"), rel_tol=1e-9):
            why = ("it is the H100's value (4096 FLOPs and 16 exp2 per clock) whatever the rates: compute it from "
                   "the rates passed in (mma_flops_per_clock, exp_per_clock)")
        elif math.isclose(got, 1 / want, rel_tol=1e-9):
            why = "it is the products' clocks over the exponentials' clocks; the fraction is the other way round"
        else:
            why = "two exp2 per score over exp_per_clock, against seven products of 2 * d FLOPs over mma_flops_per_clock"
        raise AssertionError(f"{what}: backward_exp_fraction should be {want:.6g}, got {got:.6g}. Hint: {why}.")
    print(f"backward, d = 128: exponentials {backward_exp_fraction(128):.0%} of the matmul time")


def _synthetic(arch: int, bm: int, bn: int, warps: int, stages: int, spill: int, registers: int = 0) -> dict:
    """A compile report with made-up but consistent figures (shared memory from the course's model); ``registers``
    where the set needs a count of its own (255 without a spill: every register used, none spilled)."""
    from ..kernels.flash_autotune import shared_memory_bytes

    hopper = arch == 90
    return {"kind": "fwd", "arch": arch, "block_m": bm, "block_n": bn, "num_warps": warps, "num_stages": stages,
            "head_dim": 128, "registers": registers or (255 if spill else int(60 + perf_lab.live_tile_registers(bm, bn, warps, 128))),
            "spill_bytes": spill,
            "shared_bytes": shared_memory_bytes("fwd", bm, bn, stages, 128, 2),
            "sass": {"HGMMA": 32 if hopper else 0, "HMMA": 0 if hopper else 256, "LDGSTS": 96, "UTMALDG": 0,
                     "MUFU.EX2": 132, "FFMA": 100, "FMUL": 50}}


SYNTHETIC_SETS = {
    "the biggest tile spills": [(90, 128, 128, 4, 3, 1984), (90, 128, 64, 8, 3, 0), (90, 64, 128, 8, 3, 0),
                                (90, 64, 64, 4, 3, 0)],
    "sm_80 has the biggest tile": [(80, 128, 128, 8, 2, 0), (90, 128, 32, 8, 3, 0), (90, 64, 128, 8, 2, 0),
                                   (90, 64, 64, 4, 2, 0)],
    "two that fit share BLOCK_M; the most shared memory is not the winner": [
        (90, 64, 128, 8, 4, 0), (90, 128, 32, 8, 4, 0), (90, 128, 64, 8, 2, 0), (80, 128, 64, 8, 4, 0)],
    "the winner uses all 255 registers and spills nothing": [
        (90, 128, 128, 8, 3, 0, 255), (90, 64, 128, 8, 3, 0), (90, 128, 64, 4, 3, 1024), (80, 128, 128, 8, 2, 0)],
    "two that fit tie on BLOCK_M and BLOCK_N": [
        (90, 128, 64, 8, 2, 0), (90, 128, 64, 8, 3, 0), (90, 64, 128, 8, 3, 0), (80, 128, 128, 8, 2, 0)],
}
"""Report sets on which every rule but the right one (the widest query tile among the sm_90 compiles that do not
spill, then the widest key tile, the first of equal maxima on a tie) picks another report: the biggest tile, the fewest registers, the most shared
memory after the fewest spills, a constant index."""


def _right(reports: list[dict]) -> int | None:
    fits = [i for i, r in enumerate(reports) if r["arch"] == 90 and r["spill_bytes"] == 0]
    return max(fits, key=lambda i: (reports[i]["block_m"], reports[i]["block_n"])) if fits else None


def _judge(i, reports: list[dict], what: str) -> None:
    """Fail, saying why, unless ``i`` is the index of the report the facts favour in ``reports``."""
    __tracebackhide__ = True
    assert isinstance(i, Integral) and not isinstance(i, bool) and 0 <= i < len(reports), (
        f"{what}: predict should return an index into the {len(reports)} reports, got {type(i).__name__} {i!r}")
    r, want = reports[i], _right(reports)
    w = reports[want]
    name = f"report {i} ({_name(r)})"
    assert r["arch"] == 90, f"{what}: {name} was compiled for sm_{r['arch']}: it does not run on an H100"
    assert r["spill_bytes"] == 0, (
        f"{what}: {name} spills {r['spill_bytes']} bytes per thread to local memory, inside its loop: a spill is "
        "paid on every tile")
    assert r["block_m"] >= w["block_m"] or w["registers"] < 255, (
        f"{what}: {name} has a {r['block_m']}-row query tile, but report {want} ({_name(w)}) fits with "
        f"{w['block_m']} rows: it uses all {w['registers']} registers per thread and spills 0 bytes. Only "
        "spill_bytes says whether a kernel spills; a full register file is not a spill.")
    assert r["block_m"] >= w["block_m"], (
        f"{what}: {name} has a {r['block_m']}-row query tile, but report {want} ({_name(w)}) fits with "
        f"{w['block_m']} rows: K and V are loaded once per query tile, so FLOPs per byte grow with BLOCK_M. "
        "Registers and shared memory only have to fit.")
    assert (r["block_m"], r["block_n"]) == (w["block_m"], w["block_n"]), (
        f"{what}: {name} and report {want} ({_name(w)}) share BLOCK_M = {r['block_m']}; expected report {want}: at "
        f"equal BLOCK_M a wider BLOCK_N gives each wgmma more work (the most shared memory is not the criterion)")
    assert i == want, (
        f"{what}: {name} and report {want} ({_name(w)}) tie: both fit on sm_90 with the same BLOCK_M and BLOCK_N. "
        f"The rule for a tie is the first of equal maxima in the given order, as max() does: report {want}.")


def check_prediction(predict: Callable[[list[dict]], int], reports: list[dict],
                     results: Path = Path("..", "benchmarks", "results")) -> None:
    """Check 7: the prediction, on the notebook's compiles and on shuffled synthetic sets (:data:`SYNTHETIC_SETS`)
    against the compiler's facts; then against the timings of a GPU run recorded under ``results`` (relative to the
    notebook's folder) when there is one, else against a model of HBM traffic, labelled as such (printed, not
    compared)."""
    __tracebackhide__ = True
    rng = random.Random()
    for k, (what, rows) in enumerate(SYNTHETIC_SETS.items()):
        synthetic = [_synthetic(*row) for row in rows]
        rng.shuffle(synthetic)
        right = _right(synthetic)
        where = (k + 1) % len(synthetic)    # the winner at index 1, 2, 3 in turn: no constant index passes
        synthetic[right], synthetic[where] = synthetic[where], synthetic[right]
        i = predict([dict(r) for r in synthetic])
        _judge(i, synthetic, f"a synthetic set where {what}")
    assert _right(reports) is not None, (
        "none of your configurations compiled for sm_90 without spilling, so no compile of yours can win: add one "
        "whose live tiles take well under 255 registers per thread")
    i = predict(reports)
    _judge(i, reports, "your compiles")
    r = reports[i]
    mine = tuple(r[k] for k in ("block_m", "block_n", "num_warps", "num_stages"))
    recorded = perf_lab.recorded_forward_timings(results)
    if recorded is None:
        fits = [x for x in reports if x["arch"] == 90 and x["spill_bytes"] == 0]
        modelled = ", ".join(f"{_name(x)}: {perf_lab.forward_hbm_bytes(x['block_m'], 4096, 128) / 2**20:.0f} MiB"
                             for x in fits)
        print(f"no GPU timings recorded; a model instead, not a measurement (HBM bytes of Q, K, V and O per (batch, "
              f"head) at N = 4096, d = 128, causal: FlashAttention's IO count): {modelled}; you predicted {_name(r)}")
    else:
        run, times = recorded  # (ratios, not milliseconds: the printout is the same on every machine)
        best = min(times, key=times.get)
        ranked = sorted(times, key=times.get)
        where = (f"ranks {ranked.index(mine) + 1} of {len(times)}, {times[mine] / times[best]:.2f}x the fastest's "
                 "time" if mine in times else f"was not among the {len(times)} timed")
        print(f"recorded run {run}: the fastest configuration timed is {best}; your prediction {mine} {where}")
