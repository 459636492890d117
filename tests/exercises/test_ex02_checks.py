"""Exercise 2's checks catch the plausible wrong online-softmax updates and tiled attentions.

Each bug is the solution with one edit; the test runs the notebook with the edited work cell, as a learner would,
and expects the FIRST failing check to be the one that guards against that mistake, with its hint.
"""

from pathlib import Path

import pytest

from nbrun import assert_caught, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex02_online_softmax.ipynb"

UPDATE_L = "l_new = alpha * l + p.sum(dim=-1)"
UPDATE_ACC = "acc_new = alpha.unsqueeze(-1) * acc + p @ v_tile"
HIDDEN = "> torch.arange(r0, r0 + rows, device=q.device)[:, None] + (n_k - n_q))"

# name: (work cell, [(text in the solution, buggy replacement)], title of the first failing check, regex of its hint)
BUGS = {
    "forgetting to rescale (neither l nor acc)": (
        "update-work", [(UPDATE_L, "l_new = l + p.sum(dim=-1)"), (UPDATE_ACC, "acc_new = acc + p @ v_tile")],
        "Check 2: several tiles", "what the earlier tiles summed was relative to the old one"),
    "rescaling l but not the output accumulator": (
        "update-work", [(UPDATE_ACC, "acc_new = acc + p @ v_tile")], "Check 2: several tiles", "acc is brought to the new max exactly as l is"),
    "rescaling the accumulator but not l": (
        "update-work", [(UPDATE_L, "l_new = l + p.sum(dim=-1)")], "Check 2: several tiles", "what the earlier tiles summed"),
    "dividing by l inside the update": (
        "update-work", [("return m_new, l_new, acc_new", "return m_new, l_new, acc_new / l_new.unsqueeze(-1)")],
        "Check 1: one tile", "unnormalized"),
    "max of the current tile only, not the running max": (
        "update-work", [("m_new = torch.maximum(m, s.amax(dim=-1))", "m_new = s.amax(dim=-1)")],
        "Check 2: several tiles", "m after"),
    "the row max not broadcast over the columns (s - m_new)": (
        "update-work", [("p = torch.exp(s - m_new.unsqueeze(-1))", "p = torch.exp(s - m_new)")],
        "Check 1: one tile", r"m_new\[:, None\]"),
    "very large scores overflow (exp(s) / exp(m) instead of exp(s - m))": (
        "update-work",
        [("p = torch.exp(s - m_new.unsqueeze(-1))", "p = torch.exp(s) / torch.exp(m_new).unsqueeze(-1)")],
        "Check 3: huge scores", "inf/NaN"),
    "sums of exp(s) without the max": (
        "update-work", [("p = torch.exp(s - m_new.unsqueeze(-1))", "p = torch.exp(s)"),
                        ("alpha = torch.exp(m - m_new)", "alpha = torch.ones_like(m_new)")],
        "Check 1: one tile", "relative to the running max"),
    "missing 1/sqrt(d) scale": (
        "tiled-work", [("q_i = q[r0:r0 + block_m].float() / math.sqrt(d)", "q_i = q[r0:r0 + block_m].float()")],
        "Check 4: one tile, and the scale", r"WITHOUT the 1/sqrt\(d\) scale"),
    "scale 1/d instead of 1/sqrt(d)": (
        "tiled-work", [("q_i = q[r0:r0 + block_m].float() / math.sqrt(d)", "q_i = q[r0:r0 + block_m].float() / d")],
        "Check 4: one tile, and the scale", "scale is applied wrongly"),
    "dividing by l inside the tile loop": (
        "tiled-work", [("m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())",
                        "m, l, acc = online_softmax_update(m, l, acc, s, v[c0:c0 + block_n].float())\n"
                        "            acc = acc / l[:, None]\n            l = torch.ones_like(l)")],
        "Check 5: tiles that divide the length", "divide acc by l once"),
    "state not reset for each query tile": (
        "tiled-work", [("        m = torch.full((rows,), -math.inf, device=q.device)\n"
                        "        l, acc = torch.zeros(rows, device=q.device), "
                        "torch.zeros(rows, d, device=q.device)\n", ""),
                       ("    for r0 in range(0, n_q, block_m):\n",
                        "    m = torch.full((block_m,), -math.inf, device=q.device)\n"
                        "    l, acc = torch.zeros(block_m, device=q.device), torch.zeros(block_m, d, device=q.device)\n"
                        "    for r0 in range(0, n_q, block_m):\n")],
        "Check 4: one tile, and the scale", "afresh for each query tile with its real row count"),
    "last key tile dropped when the length is not a multiple": (
        "tiled-work", [("range(0, n_k, block_n)", "range(0, n_k - block_n + 1, block_n)")],
        "Check 4: one tile, and the scale", r"l stayed 0 .*last, shorter key tile"),
    "length not a multiple of the tile (tail dropped)": (
        "tiled-work", [("range(0, n_q, block_m)", "range(0, n_q - block_m + 1, block_m)"),
                       ("range(0, n_k, block_n)", "range(0, n_k - block_n + 1, block_n)")],
        "Check 4: one tile, and the scale", r"never written .* the last, shorter tile"),
    "causal mask off by one (diagonal hidden)": (
        "tiled-work", [(HIDDEN, HIDDEN.replace("> torch", ">= torch"))], "Check 7: causal", "diagonal is hidden"),
    "causal mask aligned top-left": (
        "tiled-work", [(HIDDEN, HIDDEN.replace(" + (n_k - n_q))", ")")),
                       ("c0 > r0 + rows - 1 + (n_k - n_q)", "c0 > r0 + rows - 1")], "Check 7: causal", "top-left"),
    "causal flag ignored": (
        "tiled-work", [("            if causal:\n                hidden", "            if False:\n                hidden"),
                       ("if causal and c0 >", "if False and c0 >")],
        "Check 7: causal", "nothing is masked"),
    "causal mask with tile-local positions": (
        "tiled-work", [("torch.arange(c0, c0 + s.shape[1]", "torch.arange(0, s.shape[1]"),
                       ("torch.arange(r0, r0 + rows", "torch.arange(0, rows")],
        "Check 7: causal", "global positions"),
    "a key tile skipped one tile too early": (
        "tiled-work", [("c0 > r0 + rows - 1 + (n_k - n_q)", "c0 >= r0 + rows - 1 + (n_k - n_q)")],
        "Check 7: causal", r"skip only a tile whose\s+first key lies after"),
    "float32 returned for float16 inputs": (
        "tiled-work", [("        out[r0:r0 + rows] = acc / l[:, None]", "        out[r0:r0 + rows] = acc / l[:, None]\n    return out")],
        "Check 8: huge scores, and float16 inputs", "returned torch.float32: compute in float32, and return q's dtype"),
    "computed in float16": (
        "tiled-work", [("q_i = q[r0:r0 + block_m].float() / math.sqrt(d)", "q_i = q[r0:r0 + block_m] / math.sqrt(d)"),
                       ("s = q_i @ k[c0:c0 + block_n].float().T", "s = (q_i @ k[c0:c0 + block_n].T).float()")],
        "Check 8: huge scores, and float16 inputs", "float16 holds at most 65504"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    assert_caught(NB, *BUGS[bug])


def test_solution_passes_every_check():
    namespace = run_cells(NB)
    assert "tiled_attention" in namespace
