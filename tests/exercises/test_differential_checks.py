"""Each exercise's differential check (the one over its whole stated input space) passes the solution and fails the
untouched exercise at the learner's NotImplementedError; right answers that differ from the solution's form pass
every check; and the exactness the checks' boundary inputs rely on holds (hypothesis draws them)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbrun import _compile, first_failure, planted
from pagedlab.memory import PRESETS

ROOT = Path(__file__).resolve().parents[2]
SPACE_CHECKS = {"ex00_warmup": "check-space", "ex01_naive_attention": "check-space",
                "ex02_online_softmax": "check-space", "ex03_triton_basics": "check-space",
                "ex04_flash_forward": "check-space", "ex05_kv_cache_size": "check-space",
                "ex06_block_allocator": "check-space", "ex07_copy_on_write": "check-space",
                "ex08_swap_or_recompute": "check-space", "ex09_paged_attention": "check-space",
                "ex02_stretch_causal_tile_skipping": "check-space", "ex04_stretch_gqa_forward": "check-space",
                "ex07_stretch_prefix_cache_match": "check-space", "ex09_stretch_split_kv_merge": "check-space"}


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


@pytest.mark.parametrize("form", [
    "    d = recompute_seconds - 4 * num_layers * num_tokens * chunk_bytes_per_token / bandwidth\n"
    "    return math.inf if d <= 0 else 4 * num_layers * num_tokens * latency / d",
    "    r = recompute_seconds * bandwidth / (4 * num_layers * num_tokens * chunk_bytes_per_token)\n"
    "    return math.inf if r <= 1 else latency * bandwidth / (chunk_bytes_per_token * (r - 1))"])
def test_ex08_accepts_the_crossover_in_other_closed_forms(form):
    """B* written as 4 L n latency over the room left, or through the ratio of prefill to bytes, passes every check:
    where no room is left, each form finds exactly none (math.inf), not a residue of rounding."""
    solution = nbformat.read(EX08, as_version=4)
    cell = next(c for c in solution.cells if c.get("id") == "crossover-work").source
    head = cell[:cell.index("    ### BEGIN SOLUTION")]
    assert first_failure(EX08, {"crossover-work": head + form + "\n"}) is None


EX04S = ROOT / "solutions" / "ex04_stretch_gqa_forward.ipynb"


def test_ex04_stretch_accepts_other_right_launches():
    """A grid with one query tile too many when BLOCK_M divides n_q (its rows are masked) and the K/V head taken from
    the (batch, head) id itself are right: no check, the differential one included, may fail them."""
    other = planted(EX04S, "kernel-work",
                    ("    h_kv = h // group  #", "    h_kv = (bh // group) % (n_heads // group)  #"),
                    ("grid = (triton.cdiv(n_q, block_m), batch * n_heads)", "grid = (n_q // block_m + 1, batch * n_heads)"))
    assert first_failure(EX04S, other) is None


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


def test_ex09_stretch_accepts_a_running_merge():
    """A merge that folds the splits in one at a time with logaddexp is right; in float32 its running lse carries the
    lses' rounding (about |lse| * 2^-24 a split) into the weights, which check 7 allows for (an outside learner's
    correct answer failed it at 3.7e-5 against 1e-5, with lses in the hundreds)."""
    import torch

    from pagedlab.exercise_checks import ex09_stretch

    def merge_states(outs, lses):
        lse, out = lses[..., 0], outs[..., 0, :]
        for s in range(1, lses.shape[-1]):
            new = torch.logaddexp(lse, lses[..., s])
            a, b = torch.exp(lse - new).nan_to_num(0.0), torch.exp(lses[..., s] - new).nan_to_num(0.0)
            out, lse = a[..., None] * out + b[..., None] * outs[..., s, :], new
        return out, lse

    ex09_stretch.check_over_the_space(ex09_stretch.reference_bounds, merge_states)


def test_right_answers_in_other_forms_pass_the_space_checks():
    """The differential checks compare with a reference within each dtype's rounding, on inputs exact where rounding
    would decide: right answers written another way pass (PyTorch's SDPA, an einsum update, a float division for the
    budget, a manager that allocates with allocate_many(1))."""
    import math

    import torch

    from pagedlab.attention import causal_mask
    from pagedlab.exercise_checks import ex01, ex02, ex05, ex07
    from pagedlab.memory import GiB
    from pagedlab.paged import BlockTable

    def sdpa(q, k, v, causal=False):
        mask = causal_mask(q.shape[-2], k.shape[-2]) if causal else None
        return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                                attn_mask=mask).to(q.dtype)

    ex01.check_over_the_space(lambda n_q, n_k: torch.ones(n_q, n_k, dtype=torch.bool).tril(n_k - n_q), sdpa)

    def update(m, l, acc, s, v):
        m_new = torch.max(m, s.max(dim=1).values)
        alpha, p = (m - m_new).exp(), (s - m_new[:, None]).exp()
        return m_new, alpha * l + p.sum(1), alpha[:, None] * acc + torch.einsum("rc,cd->rd", p, v)

    def tiled(q, k, v, causal=False, block_m=16, block_n=16):
        n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
        out = torch.zeros(n_q, d)
        for r0 in range(0, n_q, block_m):
            q_i = q[r0:r0 + block_m].float()
            rows = q_i.shape[0]
            m, l, acc = torch.full((rows,), -math.inf), torch.zeros(rows), torch.zeros(rows, d)
            for c0 in range(0, n_k, block_n):
                s = (q_i @ k[c0:c0 + block_n].float().T) * d ** -0.5
                if causal:
                    hidden = torch.arange(c0, c0 + s.shape[1])[None] > torch.arange(r0, r0 + rows)[:, None] + n_k - n_q
                    s = s.masked_fill(hidden, -math.inf)
                m, l, acc = update(m, l, acc, s, v[c0:c0 + block_n].float())
            out[r0:r0 + rows] = acc / l[:, None]
        return out.to(q.dtype)

    ex02.check_over_the_space(tiled, update)

    def per_token(model, dtype):
        return math.prod((2, model.num_layers, model.num_kv_heads, model.head_dim, dtype.itemsize))

    ex05.check_over_the_space(lambda *args, **kw: math.prod((2, *args, *kw.values())), per_token,
                              lambda budget, model, max_len, dtype: math.floor(
                                  budget * GiB / (per_token(model, dtype) * max_len)))

    class Manager(ex07._Reference):
        def fork(self, parent, child):
            table = self.tables[parent]
            for block in reversed(table.block_ids):
                self.allocator.incref(block)
            self.tables[child] = BlockTable(table.block_ids[:], table.num_tokens, self.block_size)
            return self.tables[child]

        def append(self, seq):
            table = self.tables[seq]
            position, copy = table.num_tokens, None
            if len(table.block_ids) * self.block_size == position:
                table.block_ids.append(self.allocator.allocate_many(1)[0])
            elif self.allocator.refcount(table.block_ids[-1]) >= 2:
                new, old = self.allocator.allocate(), table.block_ids[-1]
                table.block_ids[-1] = new
                self.allocator.free(old)
                copy = (old, new)
            table.num_tokens += 1
            return table.slot(position), copy

    ex07.check_over_the_space(Manager)


@settings(max_examples=60, deadline=None)
@given(lead=st.sampled_from([(), (2,), (1, 2, 2)]), n_q=st.integers(1, 12), n_k=st.integers(1, 12),
       d=st.sampled_from([1, 16]), dtype=st.sampled_from(["float32", "float16", "bfloat16"]),
       seed=st.integers(0, 2**31 - 1))
def test_ex01_huge_scores_are_exact_in_float32_whatever_the_order(lead, n_q, n_k, d, dtype, seed):
    """ex01's (and ex04's) huge scores are a fair reference only if every right order of operations gives the same
    float32 scores: scaled before or after the product, or by d ** -0.25 on both sides (as SDPA does)."""
    import torch

    from pagedlab.exercise_checks import ex01

    q, k, _ = ex01._inputs(torch.Generator().manual_seed(seed), lead, n_q, n_k, d, "huge", getattr(torch, dtype))
    q, k = q.float(), k.float()
    exact = (q.double() @ k.double().transpose(-2, -1)) / d ** 0.5
    for scores in (q @ k.transpose(-2, -1) / d ** 0.5, (q / d ** 0.5) @ k.transpose(-2, -1),
                   (q * d ** -0.25) @ (k * d ** -0.25).transpose(-2, -1)):
        assert torch.equal(scores.double(), exact)
    if n_q <= n_k:  # row 0's visible scores: all below -1e9 in float32 (below 0 in the half dtypes)
        assert (exact[..., 0, :n_k - n_q + 1] < (-1e9 if dtype == "float32" else 0)).all()


@settings(max_examples=200, deadline=None)
@given(model=st.sampled_from(sorted(PRESETS)),
       itemsize=st.sampled_from([1, 2, 4]), max_len=st.integers(1, 8192), k=st.integers(1, 64))
def test_ex05_budgets_in_gib_are_exact(model, itemsize, max_len, k):
    """ex05's boundary budgets (exactly k reservations, one byte short of them) survive the trip through GiB: a
    budget_gib of bytes / 2**30 gives back the same bytes, so an exact fit is exact for the learner too."""
    from pagedlab.memory import GiB

    per_request = PRESETS[model].kv_bytes_per_token(itemsize) * max_len
    for budget in (k * per_request, k * per_request - 1, per_request - 1):
        assert (budget / GiB) * GiB == budget and int(budget / GiB * GiB) // per_request == budget // per_request
