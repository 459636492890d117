"""The stretch exercise of Part III (prefix-cache match), beyond its table of planted bugs (``tests/planted``): an
error gets a hint for that error."""

from pathlib import Path

from nbrun import assert_first_failure, check_title, planted

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex07_stretch_prefix_cache_match.ipynb"


def test_errors_get_a_hint_for_that_error():
    bug = planted(NB, "cache-work", ("key = self.hash_fn(key, tuple(tokens[start:start + bs]))",
                                     "key = self.hash_fn(key, tokens[start:start + bs])"))
    assert_first_failure(NB, bug, check_title(NB, 1), r"TypeError: unhashable type: 'list'.*Hint: .*stored as a tuple")


def test_keys_are_named_not_printed_so_every_run_shows_the_same_message():
    """Python's hash of a key chained from None differs from one process to the next (before 3.12): checks 1 and 6
    name the keys (key_0, hash_fn(None, block_1)) instead of printing their values, so a learner can compare two runs."""
    import re
    import subprocess
    import sys

    from nbrun import first_failure

    bug = planted(NB, "cache-work", ("            key = self.hash_fn(key, tuple(", "            key = self.hash_fn(None, tuple("))
    cell, message = first_failure(NB, bug)
    assert cell == "check-keys" and not re.search(r"\d{6,}", message), message

    # check 6, under the default hash: a keys() wrong for blocks of 4 only (checks 1 to 5 use blocks of 2 and 3)
    code = (
        "import sys; sys.path.insert(0, 'tests')\n"
        "from pathlib import Path\nfrom nbrun import run_cells\n"
        "from pagedlab.exercise_checks import ex07_stretch\n"
        f"ns = run_cells({str(NB)!r}, stop_after='cache-work')\n"
        "class Bad(ns['MiniPrefixCache']):\n"
        "    def keys(self, tokens):\n"
        "        k = super().keys(tokens)\n"
        "        if self.block_size == 4 and len(k) > 1:\n"
        "            k[1] = self.hash_fn(None, tuple(tokens[4:8]))\n"
        "        return k\n"
        "try:\n    ex07_stretch.check_over_the_space(Bad)\nexcept AssertionError as e:\n    print(e)\n")
    root = NB.parents[1]
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True,
                           env={"PYTHONPATH": str(root), "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")]
    assert runs[0] == runs[1] and "got [key_0, hash_fn(None, block_1)]" in runs[0], runs


def test_a_whole_cached_prompt_in_check_5_is_blamed_on_the_limit_not_on_the_parent():
    """Check 3 names a match that may cover the whole prompt; Check 5, run alone on that mistake, names the limit too
    (it read "cached after [2], while here they come after [2]", the same prefix)."""
    import pytest

    from nbrun import run_cells
    from pagedlab.exercise_checks import ex07_stretch

    ns = run_cells(str(NB), stop_after="cache-work")

    class WholePrompt(ns["MiniPrefixCache"]):
        def match(self, tokens):
            hits, prefix_id = [], None
            for i, key in enumerate(self.keys(tokens)):
                block = self.block_of.get(key)
                entry = None if block is None else self.entry[block]
                if entry is None or (entry.parent_id, entry.tokens) != (prefix_id, tuple(tokens[2 * i:2 * i + 2])):
                    break
                hits.append(block)
                prefix_id = entry.prefix_id
            return hits

    with pytest.raises(AssertionError) as failed:
        ex07_stretch.check_random_prompts(WholePrompt)
    message = str(failed.value)
    assert "holds this very prefix" in message and "(len(prompt) - 1) // block_size" in message, message
    assert "while here they come after" not in message, message
