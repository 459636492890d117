"""The stretch exercise of Part III (prefix-cache match), beyond its table of planted bugs (``tests/planted``): an
error gets a hint for that error."""

from pathlib import Path

from nbrun import assert_first_failure, check_title, planted

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex07_stretch_prefix_cache_match.ipynb"


def test_errors_get_a_hint_for_that_error():
    bug = planted(NB, "cache-work", ("key = self.hash_fn(key, tuple(tokens[start:start + bs]))",
                                     "key = self.hash_fn(key, tokens[start:start + bs])"))
    assert_first_failure(NB, bug, check_title(NB, 1), r"TypeError: unhashable type: 'list'.*Hint: .*stored as a tuple")
