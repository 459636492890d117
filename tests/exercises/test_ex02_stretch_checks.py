"""The stretch exercise of Part I (causal tile skipping): the FIRST failing check names each planted mistake."""

from pathlib import Path

import pytest

from nbrun import assert_caught, check_title, planted, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex02_stretch_causal_tile_skipping.ipynb"
C1, C2, C3, C4, C5 = (check_title(NB, n) for n in range(1, 6))
LOOP = """        for t in range(n_visit):
            c0 = t * block_n
            s = q_i @ k[c0:c0 + block_n].float().T
            if t >= n_full:
                hidden = (torch.arange(c0, c0 + s.shape[1])[None, :]
                          > torch.arange(r0, r0 + rows)[:, None] + (n_k - n_q))
                s = s.masked_fill(hidden, -math.inf)
"""
# A pattern learners write: compute the score tile, then find out from its mask that it was hidden.
SCORES_FIRST = """        for t in range(-(-n_k // block_n)):
            c0 = t * block_n
            s = q_i @ k[c0:c0 + block_n].float().T
            hidden = (torch.arange(c0, c0 + s.shape[1])[None, :]
                      > torch.arange(r0, r0 + rows)[:, None] + (n_k - n_q))
            if hidden.all():
                break
            s = s.masked_fill(hidden, -math.inf)
"""

# Every visited tile masked by an additive bias, no masked_fill or where in sight.
BIAS = """            hidden = (torch.arange(c0, c0 + s.shape[1])[None, :]
                      > torch.arange(r0, r0 + rows)[:, None] + (n_k - n_q))
            s = s + torch.zeros_like(s).masked_fill(hidden, -math.inf)
"""
BRUTE_COUNTS = """    visible = torch.ones(n_q, n_k, dtype=torch.bool).tril(n_k - n_q)[r0:r0 + rows]
    tiles = [visible[:, c0:c0 + block_n] for c0 in range(0, n_k, block_n)]
    n_visit = max((i + 1 for i, t in enumerate(tiles) if bool(t.any())), default=0)
    n_full = next((i for i, t in enumerate(tiles) if not bool(t.all())), len(tiles))
    return n_full, n_visit
"""
BOUNDS = """    shift = n_k - n_q
    n_tiles = -(-n_k // block_n)
    last_visible = r0 + rows - 1 + shift           # the last key the tile's last row sees
    n_visit = 0 if last_visible < 0 else last_visible // block_n + 1
    first_row_sees = r0 + shift                    # every key up to here is visible to every row
    if first_row_sees >= n_k - 1:
        n_full = n_tiles
    else:
        n_full = max(0, (first_row_sees + 1) // block_n)
    return n_full, n_visit
"""
GUARD = ("    alpha = torch.exp(m - m_ref)\n    p = torch.exp(s - m_ref[:, None])",
         "    alpha = torch.exp(m - m_new)\n    p = torch.exp(s - m_new[:, None])")

# name: (cell, [(solution text, buggy text)], title of the first failing check, regex of its message)
BUGS = {
    "n_visit negative when the last row sees no key (floor division of a negative number)": (
        "bounds-work", [("n_visit = 0 if last_visible < 0 else ", "n_visit = ")], C1, r"none: it is negative"),
    "n_full ignores the shorter last tile": (
        "bounds-work", [("    if first_row_sees >= n_k - 1:\n        n_full = n_tiles\n    else:\n"
                         "        n_full = max(0, (first_row_sees + 1) // block_n)",
                         "    n_full = max(0, (first_row_sees + 1) // block_n)")], C1, "the last tile is shorter"),
    "n_full rounded up (a partly visible tile taken as full)": (
        "bounds-work", [("max(0, (first_row_sees + 1) // block_n)", "max(0, -(-(first_row_sees + 1) // block_n))")],
        C1, r"its LAST key"),
    "only the last visited tile masked": (
        "attention-work", [("            if t >= n_full:", "            if t == n_visit - 1:")], C2,
        "mask every tile from n_full on"),
    "key_tile_counts from the full N x N mask (not from the indices)": (
        "bounds-work", [(BOUNDS, BRUTE_COUNTS)], C1, r"key_tile_counts\(0, 64, 10\*\*7, 10\*\*7, 64\) failed.*indices alone"),
    "no -inf guard in the update (the final where hides the NaN state)": (
        "attention-work", [GUARD], C3, r"l of rows \[0, 1\] is NaN.*subtract 0 instead"),
    "neither a guard nor a 0 for rows that see no key": (
        "attention-work", [GUARD, ("torch.where(seen[:, None], acc / l.clamp_min(1e-30)[:, None], 0.0)", "acc / l[:, None]")],
        C3, r"is NaN: exp\(s - m\) with s = m = -inf"),
    "no 0 for rows whose l is 0 at the end": (
        "attention-work", [("torch.where(seen[:, None], acc / l.clamp_min(1e-30)[:, None], 0.0)", "acc / l[:, None]")],
        C4, r"NaN.*their l stays 0, so their output is 0 by\s+definition"),
    "scores computed before deciding the tile is hidden (skip decided from the mask)": (
        "attention-work", [(LOOP, SCORES_FIRST)], C5, "decided from the indices BEFORE computing a tile"),
    "every visited tile masked": (
        "attention-work", [("            if t >= n_full:", "            if True:")], C5, "need no mask"),
    "every visited tile masked by an additive -inf bias": (
        "attention-work", [(LOOP, LOOP.replace("""            if t >= n_full:
                hidden = (torch.arange(c0, c0 + s.shape[1])[None, :]
                          > torch.arange(r0, r0 + rows)[:, None] + (n_k - n_q))
                s = s.masked_fill(hidden, -math.inf)
""", BIAS))], C5, r"operations put\s+-inf into a score tile"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    assert_caught(NB, *BUGS[bug])


def test_solution_passes_every_check():
    assert run_cells(NB)["ex02_stretch"].tile_census(64, 64, 8, 8) == (36, 8)
