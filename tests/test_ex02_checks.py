"""Exercise 2's checks catch the plausible wrong online-softmax updates and tiled attentions.

Each bug is the solution with one edit; the test runs the notebook with the edited work cell and expects the
check that guards against that mistake to fail with its hint.
"""

from pathlib import Path

import pytest

from nbrun import planted, run_cells

NB = Path(__file__).resolve().parent.parent / "solutions" / "ex02_online_softmax.ipynb"

UPDATE_L = "l_new = alpha * l + p.sum(dim=-1)"
UPDATE_ACC = "acc_new = alpha.unsqueeze(-1) * acc + p @ v_tile"

# name: (work cell, [(text in the solution, buggy replacement)], regex the failing check's message must match)
BUGS = {
    "forgetting to rescale (neither l nor acc)": (
        "update-work", [(UPDATE_L, "l_new = l + p.sum(dim=-1)"), (UPDATE_ACC, "acc_new = acc + p @ v_tile")],
        "exp\\(m_old - m_new\\)"),
    "rescaling l but not the output accumulator": (
        "update-work", [(UPDATE_ACC, "acc_new = acc + p @ v_tile")], "acc must be rescaled"),
    "rescaling the accumulator but not l": (
        "update-work", [(UPDATE_L, "l_new = l + p.sum(dim=-1)")], "l of the earlier tiles"),
    "dividing by l inside the update": (
        "update-work", [("return m_new, l_new, acc_new", "return m_new, l_new, acc_new / l_new.unsqueeze(-1)")],
        "unnormalized"),
    "max of the current tile only, not the running max": (
        "update-work", [("m_new = torch.maximum(m, s.amax(dim=-1))", "m_new = s.amax(dim=-1)")], "m after"),
    "very large scores overflow (exp(s) / exp(m) instead of exp(s - m))": (
        "update-work",
        [("p = torch.exp(s - m_new.unsqueeze(-1))", "p = torch.exp(s) / torch.exp(m_new).unsqueeze(-1)")],
        "inf/NaN"),
    "sums of exp(s) without the max": (
        "update-work", [("p = torch.exp(s - m_new.unsqueeze(-1))", "p = torch.exp(s)"),
                        ("alpha = torch.exp(m - m_new)", "alpha = torch.ones_like(m_new)")],
        "exponentiate s - m_new"),
    "dividing by l inside the tile loop": (
        "tiled-work", [("m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())",
                        "m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())\n"
                        "            acc = acc / l[:, None]\n            l = torch.ones_like(l)")],
        "divide acc by l once"),
    "state not reset for each query tile": (
        "tiled-work", [("        m = torch.full((rows,), -math.inf, device=q.device)\n"
                        "        l, acc = torch.zeros(rows, device=q.device), "
                        "torch.zeros(rows, d, device=q.device)\n", ""),
                       ("    for r0 in range(0, n_q, block_m):\n",
                        "    m = torch.full((block_m,), -math.inf, device=q.device)\n"
                        "    l, acc = torch.zeros(block_m, device=q.device), torch.zeros(block_m, d, device=q.device)\n"
                        "    for r0 in range(0, n_q, block_m):\n")],
        "afresh"),
    "length not a multiple of the tile (tail dropped)": (
        "tiled-work", [("range(0, n_q, block_m)", "range(0, n_q - block_m + 1, block_m)"),
                       ("range(0, n_k, block_n)", "range(0, n_k - block_n + 1, block_n)")],
        "not a multiple of the tile"),
    "causal mask off by one (diagonal hidden)": (
        "tiled-work", [("> torch.arange(r0, r0 + rows, device=q.device)[:, None] + (n_k - n_q))",
                        ">= torch.arange(r0, r0 + rows, device=q.device)[:, None] + (n_k - n_q))")],
        "causal"),
    "causal mask with tile-local positions": (
        "tiled-work", [("torch.arange(c0, c0 + s.shape[1]", "torch.arange(0, s.shape[1]"),
                       ("torch.arange(r0, r0 + rows", "torch.arange(0, rows")],
        "global row and key positions"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_check_catches(bug):
    cell, edits, message = BUGS[bug]
    with pytest.raises(AssertionError, match=message):
        run_cells(NB, replace=planted(NB, cell, *edits))


def test_solution_passes_every_check():
    namespace = run_cells(NB)
    assert "tiled_attention" in namespace
