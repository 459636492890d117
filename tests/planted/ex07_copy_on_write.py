"""Wrong fork and copy-on-write planted in solutions/ex07_copy_on_write.ipynb: writes into a shared block, a
reference leaked or dropped before the copy, the block boundary off by one, fork without incref."""

from __future__ import annotations

from planted import Plant

COW = """        elif self.allocator.refcount(table.block_ids[-1]) > 1:
            new = self.allocator.allocate()          # first, so that OutOfBlocks changes nothing
            shared = table.block_ids[-1]
            self.allocator.free(shared)
"""
BRANCHES = """        if position % self.block_size == 0:
            table.block_ids.append(self.allocator.allocate())
        elif self.allocator.refcount(table.block_ids[-1]) > 1:
"""
# The shared block tested first, then the boundary (the two plants that follow it differ in elif / if).
SHARED_FIRST = """        if table.block_ids and self.allocator.refcount(table.block_ids[-1]) > 1:
            new = self.allocator.allocate()          # first, so that OutOfBlocks changes nothing
            shared = table.block_ids[-1]
            self.allocator.free(shared)
            table.block_ids[-1] = new
            copy = (shared, new)
"""
TAIL = """        table.num_tokens = position + 1
        return table.slot(position), copy
"""

BUGS: dict[str, Plant] = {
    "forgets to copy on write (writes into the shared block)": Plant(
        {"manager-work": (
            ("        elif self.allocator.refcount(table.block_ids[-1]) > 1:", "        elif False:"),
        )},
        4, "without a copy"),
    "copies but keeps its reference to the shared block (leak)": Plant(
        {"manager-work": (
            ("            self.allocator.free(shared)\n", ""),
        )},
        4, "must free its reference"),
    "drops the shared reference before allocating (changes state on failure)": Plant(
        {"manager-work": (
            (COW,
             "        elif self.allocator.refcount(table.block_ids[-1]) > 1:\n"
             "            shared = table.block_ids[-1]\n"
             "            self.allocator.free(shared)\n"
             "            new = self.allocator.allocate()\n"),
        )},
        5, "allocate the new block first"),
    "new block one token too early (off by one at the boundary)": Plant(
        {"manager-work": (
            ("        if position % self.block_size == 0:",
             "        if (position + 1) % self.block_size == 0 or not table.block_ids:"),
        )},
        2, "holds 2. Hint: a new block is needed when"),
    "copies whenever the block has an owner (refcount > 0 instead of > 1)": Plant(
        {"manager-work": (
            ("        elif self.allocator.refcount(table.block_ids[-1]) > 1:",
             "        elif self.allocator.refcount(table.block_ids[-1]) > 0:"),
        )},
        2, "nothing is shared.*refcount > 1"),
    "returns the copy as (dst, src)": Plant(
        {"manager-work": (
            ("            copy = (shared, new)", "            copy = (new, shared)"),
        )},
        4, "copy FROM the shared block"),
    "fork without incref (frees a shared block too early)": Plant(
        {"manager-work": (
            ("        for block in table.block_ids:\n"
             "            self.allocator.incref(block)\n",
             ""),
        )},
        1, "each shared block gains an owner"),
    "fork aliases the parent's block list": Plant(
        {"manager-work": (
            ("BlockTable(list(table.block_ids), table.num_tokens, self.block_size)",
             "BlockTable(table.block_ids, table.num_tokens, self.block_size)"),
        )},
        1, "list object itself"),
    "shared tested before the boundary (copies a full shared block, then IndexError)": Plant(
        {"manager-work": (
            (BRANCHES,
             SHARED_FIRST + "        elif position % self.block_size == 0:\n"
             "            table.block_ids.append(self.allocator.allocate())\n"
             "        elif False:\n"),
        )},
        3, r"IndexError.*\(at `return table.slot\(position\), copy`, in append\).*the "
           r"boundary comes first"),
    "shared tested before the boundary (copies a full shared block, then a new block)": Plant(
        {"manager-work": (
            (BRANCHES,
             SHARED_FIRST + "        if position % self.block_size == 0:\n"
             "            table.block_ids.append(self.allocator.allocate())\n"
             "        elif False:\n"),
        )},
        3, r"block \d+ is full .* the block boundary comes\s+first"),
    "slot asked before num_tokens is incremented": Plant(
        {"manager-work": (
            (TAIL,
             "        slot = table.slot(position)\n"
             "        table.num_tokens = position + 1\n"
             "        return slot, copy\n"),
        )},
        2, r"IndexError.*BEFORE table.slot\(position\)"),
    "num_tokens never incremented": Plant(
        {"manager-work": (
            (TAIL, "        return table.slot(position), copy\n"),
        )},
        2, r"IndexError.*table.num_tokens = position \+ 1 BEFORE"),
    "num_tokens set before allocating (changed on failure)": Plant(
        {"manager-work": (
            ("        copy = None\n",
             "        copy = None\n"
             "        table.num_tokens = position + 1\n"),
            (TAIL, "        return table.slot(position), copy\n"),
        )},
        5, r"'child': \(\[0, 1\], 7\).*Hint: the child's num_tokens changed"),
    "fork allocates fresh blocks (a copy, not a share)": Plant(
        {"manager-work": (
            ("        for block in table.block_ids:\n"
             "            self.allocator.incref(block)\n"
             "        self.tables[child] = BlockTable(list(table.block_ids),",
             "        self.tables[child] = BlockTable([self.allocator.allocate() for _ in "
             "table.block_ids],"),
        )},
        1, r"should list the parent's blocks \[0, 1\].*got BlockTable\(block_ids=\[2, 3\]"),
}
