"""Wrong fork and copy-on-write planted in solutions/ex07_copy_on_write.ipynb: writes into a shared block, a
reference leaked or dropped before the copy, the block boundary off by one, fork without incref; and those only
Check 7 (the whole input space) sees: a block size of 4 written as a number, a failed append at a block boundary that
changes the table, the copy-on-write test made on the token's block computed with 4."""

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
    "the block boundary tested with 4, not self.block_size": Plant(
        {"manager-work": (("        if position % self.block_size == 0:", "        if position % 4 == 0:"),)},
        7, r"pool of 2 blocks of 1 token, .*append\('s0'\) \(at a block boundary, 0 free block\(s\)\).*the "
           r"instructions' manager raised 'OutOfBlocks', yours raised 'IndexError.*agreed on every pool of blocks of 4"),
    "the child's table made with a block size of 4": Plant(
        {"manager-work": (("BlockTable(list(table.block_ids), table.num_tokens, self.block_size)",
                           "BlockTable(list(table.block_ids), table.num_tokens, 4)"),)},
        7, r"pool of 2 blocks of 1 token, .*returned \(1, None\), yours returned \(4, None\).*self\.block_size"),
    "the shared test on block position // 4": Plant(
        {"manager-work": (("elif self.allocator.refcount(table.block_ids[-1]) > 1:",
                           "elif self.allocator.refcount(table.block_ids[position // 4]) > 1:"),)},
        7, r"pool of 3 blocks of 2 tokens, .*\(inside a private block, 0 free block\(s\)\).*returned \(1, None\), "
           r"yours raised 'OutOfBlocks'.*self\.block_size"),
    "num_tokens counted before a boundary's allocation (changed when it fails)": Plant(
        {"manager-work": (("            table.block_ids.append(self.allocator.allocate())\n",
                           "            table.num_tokens = position + 1\n"
                           "            table.block_ids.append(self.allocator.allocate())\n"),)},
        7, r"pool of 1 block of 4 tokens, .*\(at a block boundary, 0 free block\(s\)\).*afterwards your tables "
           r"\{'s0': \(\[0\], 5\)\}.*expected \{'s0': \(\[0\], 4\)\}.*raised OutOfBlocks, so nothing may change"),
    "a placeholder block appended before allocating (left when it fails)": Plant(
        {"manager-work": (("            table.block_ids.append(self.allocator.allocate())\n",
                           "            table.block_ids.append(None)\n"
                           "            table.block_ids[-1] = self.allocator.allocate()\n"),)},
        7, r"afterwards your tables \{'s0': \(\[0, None\], 4\)\}.*raised OutOfBlocks, so nothing may change"),
    "append replaces the table with a new BlockTable (not in place)": Plant(
        {"manager-work": ((TAIL, "        self.tables[seq] = table = BlockTable(list(table.block_ids), position + 1, "
                                 "self.block_size)\n        return table.slot(position), copy\n"),)},
        2, r"appending token 0 replaced the sequence's BlockTable with a new object: append changes "
           r"table\.block_ids and table\.num_tokens in place"),
    "copy-on-write appends the new block after the shared one": Plant(
        {"manager-work": (("            table.block_ids[-1] = new\n", "            table.block_ids.append(new)\n"),)},
        4, r"the child's table should be \[\d+, \d+\]: the new block \d+ in the PLACE of the shared block \d+, got "
           r"\[\d+, \d+, \d+\]\. Hint: the new block was added after the shared one"),
    "copy-on-write replaces the table with a new BlockTable": Plant(
        {"manager-work": (("            table.block_ids[-1] = new\n",
                           "            table.block_ids[-1] = new\n"
                           "            self.tables[seq] = table = BlockTable(list(table.block_ids), position, "
                           "self.block_size)\n"),)},
        4, r"the child's copy-on-write replaced its BlockTable with a new object: append changes"),
}
