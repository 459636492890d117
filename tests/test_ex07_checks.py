"""Exercise 7's checks catch the plausible wrong forks and appends: each bug below must fail a check, with a hint."""

from pathlib import Path

import pytest

from nbrun import planted, run_cells

NB = Path(__file__).resolve().parent.parent / "solutions" / "ex07_copy_on_write.ipynb"
CELL = "manager-work"


COW = """        elif self.allocator.refcount(table.block_ids[-1]) > 1:
            new = self.allocator.allocate()          # first, so that OutOfBlocks changes nothing
            shared = table.block_ids[-1]
            self.allocator.free(shared)
"""

# (solution text, buggy text, words the failing check's message must contain)
BUGS = {
    "forgets to copy on write (writes into the shared block)": (
        "        elif self.allocator.refcount(table.block_ids[-1]) > 1:",
        "        elif False:",
        "without a copy"),
    "copies but keeps its reference to the shared block (leak)": (
        "            self.allocator.free(shared)\n", "",
        "must free its reference"),
    "drops the shared reference before allocating (changes state on failure)": (
        COW,
        COW.replace("            new = self.allocator.allocate()          # first, so that OutOfBlocks changes nothing\n",
                    "")
           .replace("            self.allocator.free(shared)\n",
                    "            self.allocator.free(shared)\n            new = self.allocator.allocate()\n"),
        "allocate the new block first"),
    "new block one token too early (off by one at the boundary)": (
        "        if position % self.block_size == 0:",
        "        if (position + 1) % self.block_size == 0 or not table.block_ids:",
        "position % block_size == 0"),
    "copies whenever the block has an owner (refcount > 0 instead of > 1)": (
        "        elif self.allocator.refcount(table.block_ids[-1]) > 1:",
        "        elif self.allocator.refcount(table.block_ids[-1]) > 0:",
        "nothing is shared"),
    "returns the copy as (dst, src)": (
        "            copy = (shared, new)", "            copy = (new, shared)", "copy FROM the shared block"),
    "fork without incref (frees a shared block too early)": (
        "        for block in table.block_ids:\n            self.allocator.incref(block)\n", "",
        "incref each block"),
    "fork aliases the parent's block list": (
        "BlockTable(list(table.block_ids), table.num_tokens, self.block_size)",
        "BlockTable(table.block_ids, table.num_tokens, self.block_size)",
        "list object itself"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_check_catches(bug):
    old, new, words = BUGS[bug]
    with pytest.raises(AssertionError, match=words):
        run_cells(NB, replace=planted(NB, CELL, (old, new)))


def test_solution_passes():
    ns = run_cells(NB)
    assert ns["m"].allocator.num_blocks == 32
