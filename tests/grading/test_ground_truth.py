"""Ground truth for every exercise's graded calls: the untouched exercise fails, the solution passes, and every
planted bug of the exercise's table (tests/planted) fails, on each of five seeds.

The graded calls run in this process through the grader's own preparation, harness, driver and comparison
(tests/graded_in_process.py); tests/grading/test_grade_class.py grades real notebooks end to end in the sandbox.
A bug the graded calls cannot see by design is listed in ``INVISIBLE`` with why (and in the instructors' guide).
"""

from __future__ import annotations

import functools

import pytest

import planted
from graded_in_process import ROOT, SEEDS, differences, notebook_bytes, run_graded, run_graded_isolated
from pagedlab.grading.specs import SPECS

TABLES = planted.tables()

# (exercise, bug): why the graded calls cannot see it. Each is caught by a visible check (the planted table says
# which); the graded calls compare results, and these bugs change none.
_TILES = "the output is the same; only which tiles are computed and masked differs (check 5 counts them)"
_READS = "the stored values are the same; what is read past the end, or read twice, is what checks 1, 4 and 6 measure"
_MESSAGE = "the exception's class is compared, not its message (check 4 reads the message)"
_CASCADE = ("cascade_attention is not graded: it runs the split kernel in Triton's interpreter, seconds a call on a "
            "CPU, for each seed and each bug (check 6 catches both)")
INVISIBLE: dict[tuple[str, str], str] = {
    ("ex02_stretch_causal_tile_skipping", "scores computed before deciding the tile is hidden (skip decided from the "
                                          "mask)"): _TILES,
    ("ex02_stretch_causal_tile_skipping", "every visited tile masked"): _TILES,
    ("ex02_stretch_causal_tile_skipping", "every visited tile masked by an additive -inf bias"): _TILES,
    ("ex03_triton_basics", "loads without mask"): _READS,
    ("ex03_triton_basics", "three passes over the row"): _READS,
    ("ex09_paged_attention", "block-table load without a mask (reads padding entries)"): _READS.replace(
        "checks 1, 4 and 6", "check 5"),
    ("ex09_paged_attention", "K loaded without a mask (its NaN scores hidden by tl.where)"): _READS.replace(
        "checks 1, 4 and 6", "check 5"),
    ("ex09_stretch_split_kv_merge", "cascade: the suffix state forgotten"): _CASCADE,
    ("ex09_stretch_split_kv_merge", "cascade: states stacked on the wrong dimension"): _CASCADE,
    ("ex09_paged_attention", 'tl.dot without input_precision="ieee" (TF32 on a GPU; the interpreter cannot show it)'):
        "Triton's interpreter computes tl.dot in float32 whatever it is asked; check 9 reads the kernel's source",
    ("ex04b_performance_lab", "no two configurations with the same BLOCK_M and different BLOCK_N"):
        "the configurations to compile are the learner's choice, a list no graded call makes (check 1 reads it)",
    ("ex04_stretch_gqa_forward", "ValueError that does not name k"): _MESSAGE,
    ("ex04_stretch_gqa_forward", "ValueError that names the count, not k (a bare letter k elsewhere does not count)"):
        _MESSAGE,
    # Boundaries the visible checks try and the graded calls' draws (so far) do not: each is a wrong answer only there.
    ("ex03_triton_basics", "the loops over the tiles one short (range(0, n_cols - 1, BLOCK))"):
        "wrong only when n_cols - 1 is a multiple of the tile (1, 17, 33 columns in tiles of 16): check 7 tries 1",
    ("ex06_block_allocator", "blocks_needed: one block for an empty sequence (wrong only at 0 tokens)"):
        "wrong only at 0 tokens, which blocks_needed's draws (0 to 100) rarely hit: check 7 tries 0",
    ("ex08_swap_or_recompute", "crossover: < where the text says at equality too (ZeroDivisionError at zero room)"):
        "wrong only when the bytes alone cost exactly the prefill, which drawn floats never do: check 3 builds it",
    ("ex10_scheduler_step", "the token appended is req.tokens[-1], not len(req.tokens)"):
        "the graded calls read how many tokens each request holds, not their ids: check 2 reads the ids",
}


@pytest.fixture(autouse=True, scope="module")
def _no_compile():
    """ex04b's setup compiles four kernels in a subprocess (~25 s on 2 cores) for its visible checks and demo; its
    graded calls read reports drawn by the spec, never those. Here the setup gets reports of the same layout drawn
    by the spec's own generator (the grader's kernels compile for real)."""
    import ast
    import random

    from pagedlab import perf_lab
    from pagedlab.grading.specs import _report

    real = perf_lab.compile_reports
    perf_lab.compile_reports = lambda configs, *a, **k: [
        {**ast.literal_eval(_report(random.Random(i), c.get("arch", 90))), **c, "status": "ok"}
        for i, c in enumerate(configs)]
    yield
    perf_lab.compile_reports = real


@functools.lru_cache(maxsize=None)
def solution(exercise: str):
    return run_graded(exercise, (ROOT / "solutions" / f"{exercise}.ipynb").read_bytes())


def test_every_exercise_has_graded_calls_and_a_table_of_planted_bugs():
    stems = {p.stem for p in (ROOT / "exercises").glob("*.ipynb")}
    assert set(SPECS) == stems
    assert set(TABLES) == stems, f"no table of planted bugs for {sorted(stems - set(TABLES))}"
    assert {e for e, _ in INVISIBLE} <= stems and all(b in TABLES[e] for e, b in INVISIBLE), "a stale INVISIBLE entry"


@pytest.mark.parametrize("exercise", sorted(SPECS))
def test_the_solution_passes_and_raises_only_what_the_exercise_asks(exercise):
    """A graded call whose solution outcome is an exception the exercise does not ask for (a NameError for a
    constant no solution defines, an IndexError of the spec's own statement) tests nothing: refused here."""
    got = solution(exercise)
    assert not got.cell_errors, got.cell_errors
    assert not got.tripped, f"the solution sets off a tripwire (the spec wires what the solution uses): {got.tripped}"
    spec = SPECS[exercise]
    for seed, outcomes in got.outcomes.items():
        cases = spec.cases(seed).cases
        for case, steps in zip(cases, outcomes):
            for (kind, source), outcome in zip(case["steps"], steps):
                if isinstance(outcome, tuple) and outcome[0] == "raised":
                    name = outcome[1][0].rsplit(".", 1)[-1]
                    assert name in spec.raises, (f"seed {seed}, {case['label']}: {source!r} raises {name} in the "
                                                 f"solution; the exercise asks for {spec.raises or 'none'}")
    assert all(d is None for d in differences(exercise, got, got).values())


@pytest.mark.parametrize("exercise", sorted(SPECS))
def test_the_untouched_exercise_fails_on_every_seed(exercise):
    untouched = run_graded(exercise, (ROOT / "exercises" / f"{exercise}.ipynb").read_bytes())
    passed = [seed for seed, d in differences(exercise, solution(exercise), untouched).items() if d is None]
    assert not passed, f"{exercise} handed back untouched passes the graded calls on seeds {passed}"


@pytest.mark.parametrize("exercise", sorted(SPECS))
def test_every_planted_bug_fails_the_graded_calls_on_every_seed(exercise):
    path = ROOT / "solutions" / f"{exercise}.ipynb"
    want, survivors = solution(exercise), []
    # Each variant runs in a child process: a Triton kernel that writes out of bounds can crash the interpreter, a
    # scheduler that never stops preempting loops forever (in the grader: a dead kernel, a timeout; both fail).
    for bug, plant in TABLES[exercise].items():
        got = run_graded_isolated(exercise, notebook_bytes(path, planted.replacements(path, plant)))
        if got is None:
            continue  # the process died or ran out of time, as the grading kernel would: a fail
        passed = [seed for seed, d in differences(exercise, want, got).items() if d is None and not got.tripped]
        if (exercise, bug) in INVISIBLE:
            assert len(passed) == len(SEEDS), f"{bug!r} is listed as invisible but the graded calls see it: unlist it"
        elif passed:
            survivors.append(f"{bug!r} passes on seeds {passed}")
    assert not survivors, f"{exercise}: planted bugs the graded calls miss:\n" + "\n".join(survivors)
