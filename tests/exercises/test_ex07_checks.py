"""Exercise 7's checks catch the plausible wrong forks and appends: for each bug below, the FIRST failing check (the
one a learner meets) must be the one that names it, with a hint."""

from pathlib import Path

import pytest

from nbrun import assert_caught, assert_first_failure, planted, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex07_copy_on_write.ipynb"
CELL = "manager-work"

COW = """        elif self.allocator.refcount(table.block_ids[-1]) > 1:
            new = self.allocator.allocate()          # first, so that OutOfBlocks changes nothing
            shared = table.block_ids[-1]
            self.allocator.free(shared)
"""
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
TAIL = """        table.num_tokens = position + 1
        return table.slot(position), copy
"""

# name: ([(solution text, buggy text)], title of the first failing check, regex of its message)
BUGS = {
    "forgets to copy on write (writes into the shared block)": (
        [("        elif self.allocator.refcount(table.block_ids[-1]) > 1:", "        elif False:")],
        "Check 4: copy-on-write, once", "without a copy"),
    "copies but keeps its reference to the shared block (leak)": (
        [("            self.allocator.free(shared)\n", "")], "Check 4: copy-on-write, once", "must free its reference"),
    "drops the shared reference before allocating (changes state on failure)": (
        [(COW, COW.replace("            new = self.allocator.allocate()          # first, so that OutOfBlocks changes "
                           "nothing\n", "")
                  .replace("            self.allocator.free(shared)\n",
                           "            self.allocator.free(shared)\n            new = self.allocator.allocate()\n"))],
        "Check 5: running out changes nothing, finishing returns every block", "allocate the new block first"),
    "new block one token too early (off by one at the boundary)": (
        [("        if position % self.block_size == 0:",
          "        if (position + 1) % self.block_size == 0 or not table.block_ids:")],
        "Check 2: a new block exactly at each block boundary", r"holds 2. Hint: a new block is needed when"),
    "copies whenever the block has an owner (refcount > 0 instead of > 1)": (
        [("        elif self.allocator.refcount(table.block_ids[-1]) > 1:",
          "        elif self.allocator.refcount(table.block_ids[-1]) > 0:")],
        "Check 2: a new block exactly at each block boundary", r"nothing is shared.*refcount > 1"),
    "returns the copy as (dst, src)": (
        [("            copy = (shared, new)", "            copy = (new, shared)")],
        "Check 4: copy-on-write, once", "copy FROM the shared block"),
    "fork without incref (frees a shared block too early)": (
        [("        for block in table.block_ids:\n            self.allocator.incref(block)\n", "")],
        "Check 1: fork shares, it does not copy", "each shared block gains an owner"),
    "fork aliases the parent's block list": (
        [("BlockTable(list(table.block_ids), table.num_tokens, self.block_size)",
          "BlockTable(table.block_ids, table.num_tokens, self.block_size)")],
        "Check 1: fork shares, it does not copy", "list object itself"),
    "shared tested before the boundary (copies a full shared block, then IndexError)": (
        [(BRANCHES, "        if table.block_ids and self.allocator.refcount(table.block_ids[-1]) > 1:\n" + COPY_BODY
          + "        elif position % self.block_size == 0:\n            table.block_ids.append(self.allocator.allocate())\n"
          + "        elif False:\n")],
        "Check 3: fork at a full block, then append", r"IndexError.*\(at `return table.slot\(position\), copy`, in append\).*the boundary comes first"),
    "shared tested before the boundary (copies a full shared block, then a new block)": (
        [(BRANCHES, "        if table.block_ids and self.allocator.refcount(table.block_ids[-1]) > 1:\n" + COPY_BODY
          + "        if position % self.block_size == 0:\n            table.block_ids.append(self.allocator.allocate())\n"
          + "        elif False:\n")],
        "Check 3: fork at a full block, then append", r"block \d+ is full .* the block boundary comes\s+first"),
    "slot asked before num_tokens is incremented": (
        [(TAIL, "        slot = table.slot(position)\n        table.num_tokens = position + 1\n        return slot, copy\n")],
        "Check 2: a new block exactly at each block boundary", r"IndexError.*BEFORE table.slot\(position\)"),
    "num_tokens never incremented": (
        [(TAIL, "        return table.slot(position), copy\n")],
        "Check 2: a new block exactly at each block boundary", r"IndexError.*table.num_tokens = position \+ 1 BEFORE"),
    "num_tokens set before allocating (changed on failure)": (
        [("        copy = None\n", "        copy = None\n        table.num_tokens = position + 1\n"),
         (TAIL, "        return table.slot(position), copy\n")],
        "Check 5: running out changes nothing, finishing returns every block",
        r"'child': \(\[0, 1\], 7\).*Hint: the child's num_tokens changed"),
    "fork allocates fresh blocks (a copy, not a share)": (
        [("        for block in table.block_ids:\n            self.allocator.incref(block)\n"
          "        self.tables[child] = BlockTable(list(table.block_ids),",
          "        self.tables[child] = BlockTable([self.allocator.allocate() for _ in table.block_ids],")],
        "Check 1: fork shares, it does not copy", r"should list the parent's blocks \[0, 1\].*got "
                                                  r"BlockTable\(block_ids=\[2, 3\]"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    assert_caught(NB, CELL, *BUGS[bug])


def test_random_check_wraps_errors_with_a_hint():
    """An append that takes two blocks passes the targeted checks only if it is rare; the random check still names it."""
    replace = {"check-fork-full": 'with check("Check 3: skipped"):\n    pass'}
    replace.update(planted(NB, CELL, (BRANCHES, "        if table.block_ids and self.allocator.refcount(table.block_ids[-1]) > 1:\n"
                                      + COPY_BODY + "        if position % self.block_size == 0:\n"
                                      "            table.block_ids.append(self.allocator.allocate())\n        elif False:\n")))
    assert_first_failure(NB, replace, "Check 6: the K/V survive", r"OutOfBlocks.*never both")


def test_solution_passes():
    assert "MiniManager" in run_cells(NB)
