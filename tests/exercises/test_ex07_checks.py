"""Exercise 7's checks, beyond its table of planted bugs (``tests/planted``): the random check names an append that
takes two blocks, should the targeted checks miss it."""

from pathlib import Path

from nbrun import assert_first_failure, check_title, planted

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex07_copy_on_write.ipynb"
CELL = "manager-work"

BRANCHES = """        if position % self.block_size == 0:
            table.block_ids.append(self.allocator.allocate())
        elif self.allocator.refcount(table.block_ids[-1]) > 1:
"""
COPY_BODY = """            new = self.allocator.allocate()          # first, so that OutOfBlocks changes nothing
            shared = table.block_ids[-1]
            self.allocator.free(shared)
            table.block_ids[-1] = new
            copy = (shared, new)
"""


def test_random_check_wraps_errors_with_a_hint():
    """An append that takes two blocks passes the targeted checks only if it is rare; the random check still names it."""
    replace = {"check-fork-full": 'with check("Check 3: skipped"):\n    pass'}
    replace.update(planted(NB, CELL, (BRANCHES, "        if table.block_ids and self.allocator.refcount(table.block_ids[-1]) > 1:\n"
                                      + COPY_BODY + "        if position % self.block_size == 0:\n"
                                      "            table.block_ids.append(self.allocator.allocate())\n        elif False:\n")))
    assert_first_failure(NB, replace, check_title(NB, 6), r"OutOfBlocks.*never both")
