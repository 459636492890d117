"""Each exercise's differential check (the one over its whole stated input space) passes the solution and fails the
untouched exercise at the learner's NotImplementedError; and right answers that differ from the solution's form
pass every check."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from nbrun import _compile, first_failure, planted

ROOT = Path(__file__).resolve().parents[2]
SPACE_CHECKS = {"ex00_warmup": "check-space", "ex01_naive_attention": "check-space",
                "ex02_online_softmax": "check-space", "ex03_triton_basics": "check-space",
                "ex04_flash_forward": "check-space", "ex05_kv_cache_size": "check-space",
                "ex06_block_allocator": "check-space", "ex07_copy_on_write": "check-space",
                "ex08_swap_or_recompute": "check-space", "ex09_paged_attention": "check-space"}


def _run_until(path: Path, check_id: str) -> None:
    """Run ``path``'s setup and work cells, then the check cell ``check_id`` (no other check, no demo)."""
    nb = nbformat.read(path, as_version=4)
    namespace: dict = {"__name__": "__main__"}
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "code" or "demo" in tags or ("check" in tags and cell.get("id") != check_id):
            continue
        exec(_compile(path, cell.get("id"), cell.source), namespace)
        if cell.get("id") == check_id:
            return
    raise KeyError(f"no check cell {check_id!r} in {path}")


@pytest.mark.parametrize("stem", sorted(SPACE_CHECKS))
def test_the_space_check_passes_the_solution(stem):
    _run_until(ROOT / "solutions" / f"{stem}.ipynb", SPACE_CHECKS[stem])


@pytest.mark.parametrize("stem", sorted(SPACE_CHECKS))
def test_the_space_check_fails_the_untouched_exercise(stem):
    with pytest.raises(Exception) as failed:
        _run_until(ROOT / "exercises" / f"{stem}.ipynb", SPACE_CHECKS[stem])
    assert "NotImplementedError" in repr(failed.value) + repr(failed.value.__cause__) + repr(failed.value.__context__)


EX08 = ROOT / "solutions" / "ex08_swap_or_recompute.ipynb"


def test_ex08_accepts_the_exact_sum_over_positions():
    """The instructions' "approximately": t_recompute as the exact sum of 2N + 4 L d_model p over the recomputed
    positions p, not the n^2 form, passes every check (10.939 ms where the n^2 form gives 10.940)."""
    exact = planted(EX08, "choose-work", (
        "    t_recompute = (recompute_seconds(table.num_tokens, num_params, model.num_layers, d_model, flops)\n"
        "                   - recompute_seconds(cached, num_params, model.num_layers, d_model, flops))",
        "    t_recompute = sum(2 * num_params + 4 * model.num_layers * d_model * p\n"
        "                      for p in range(cached, table.num_tokens)) / flops"))
    assert first_failure(EX08, exact) is None


EX06 = ROOT / "solutions" / "ex06_block_allocator.ipynb"


def test_ex06_accepts_a_learners_own_valueerror_subclass():
    """The instructions ask for ``ValueError``: a learner's ``class NotInPool(ValueError)`` is one, so no check (the
    side-by-side Check 8 included) may fail it; an ``IndexError`` for a block past the end still fails."""
    subclass = planted(EX06, "allocator-work",
                       ("class SimpleAllocator:", "class NotInPool(ValueError):\n    pass\n\n\nclass SimpleAllocator:"),
                       ('raise ValueError(f"block {block} is not in this pool")',
                        'raise NotInPool(f"block {block} is not in this pool")'))
    assert first_failure(EX06, subclass) is None
    index_error = planted(EX06, "allocator-work", ('raise ValueError(f"block {block} is not in this pool")',
                                                   'raise IndexError(f"block {block} is not in this pool")'))
    assert first_failure(EX06, index_error) is not None
