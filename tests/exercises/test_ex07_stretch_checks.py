"""The stretch exercise of Part III (prefix-cache match): the FIRST failing check names each planted mistake."""

from pathlib import Path

import pytest

from nbrun import assert_caught, assert_first_failure, planted, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex07_stretch_prefix_cache_match.ipynb"
C1, C2, C3, C4, C5 = ("Check 1: chained keys, full blocks only", "Check 2: the longest cached prefix, and no further",
                      "Check 3: a prompt never hits entirely", "Check 4: a collision is a miss",
                      "Check 5: random prompts against a brute-force oracle")
COMPARE = "            if stored.tokens != tuple(tokens[i * bs:(i + 1) * bs]) or stored.parent_id != prefix_id:"

# name: ([(solution text, buggy text)], title of the first failing check, regex of its message)
BUGS = {
    "keys not chained (a key stands for one block, not its prefix)": (
        [("            key = self.hash_fn(key, tuple(", "            key = self.hash_fn(None, tuple(")], C1,
        "the second key ignores the first"),
    "a key for the partly filled last block": (
        [("range(0, len(tokens) - bs + 1, bs)", "range(0, len(tokens), bs)")], C1, "partly filled last block"),
    "prefix id not carried forward": (
        [("            prefix_id = stored.prefix_id\n", "")], C2, "prefix id is carried from hit to hit"),
    "the whole prompt may hit": (
        [("self.keys(tokens)[:(len(tokens) - 1) // bs]", "self.keys(tokens)")], C3, r"\(len\(tokens\) - 1\) // block_size"),
    "tokens not compared (a colliding key is a hit)": (
        [(COMPARE, "            if stored.parent_id != prefix_id:")], C4, "stored tokens"),
    "predecessor not compared (tokens alone)": (
        [(COMPARE, "            if stored.tokens != tuple(tokens[i * bs:(i + 1) * bs]):")], C4, "stored parent_id"),
    "predecessor compared by key, not by prefix id": (
        [(COMPARE, "            if stored.tokens != tuple(tokens[i * bs:(i + 1) * bs]):"),
         ("            block = self.block_of.get(key)\n",
          "            block = self.block_of.get(key)\n            if i and self.block_of.get(self.keys(tokens)[i - 1]) is None:\n"
          "                break\n")], C4, "stored parent_id"),
    "a miss skipped instead of ending the match": (
        [("            if block is None:\n                break", "            if block is None:\n                continue"),
         ("                break  # a collision", "                continue  # a collision")], C5, "the first miss ends the match"),
    "stored tokens (a tuple) compared with a list slice: never equal": (
        [(COMPARE, "            if stored.tokens != tokens[i * bs:(i + 1) * bs] or stored.parent_id != prefix_id:")],
        C2, r"found no hit at all, yet the first block \(1, 2\) is cached.*a tuple never equals a\s+list"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    assert_caught(NB, "cache-work", *BUGS[bug])


def test_errors_get_a_hint_for_that_error():
    bug = planted(NB, "cache-work", ("key = self.hash_fn(key, tuple(tokens[start:start + bs]))",
                                     "key = self.hash_fn(key, tokens[start:start + bs])"))
    assert_first_failure(NB, bug, C1, r"TypeError: unhashable type: 'list'.*Hint: .*stored as a tuple")


def test_solution_passes_every_check():
    assert "MiniPrefixCache" in run_cells(NB)
