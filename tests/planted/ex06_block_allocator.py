"""Wrong block allocators planted in solutions/ex06_block_allocator.ipynb: reference counts ignored, blocks leaked
on failure, O(n) free lists, double frees, the number of blocks a length needs."""

from __future__ import annotations

from planted import Plant


BUGS: dict[str, Plant] = {
    "frees a shared block at the first free (ignores the count)": Plant(
        {"allocator-work": (
            ("        if self.ref_count[block] == 0:\n"
             "            self.free_list.append(block)",
             "        self.free_list.append(block)"),
        )},
        3, "still holds it"),
    "allocate_many leaks the blocks it took before running out": Plant(
        {"allocator-work": (
            ("        if n > len(self.free_list):\n"
             "            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)\n",
             ""),
        )},
        5, "leaked"),
    "takes blocks from the front of the list (pop(0), O(n))": Plant(
        {"allocator-work": (
            ("        block = self.free_list.pop()", "        block = self.free_list.pop(0)"),
        )},
        1, "a fresh pool should hand out 0, 1, 2, 3"),
    "pop(0) on a sorted list, sorting on free (the source's allocator)": Plant(
        {"allocator-work": (
            ("        block = self.free_list.pop()",
             "        self.free_list.sort(reverse=True)\n"
             "        block = self.free_list.pop()"),
        )},
        2, r"pop\(0\)"),
    "a double free pushes the block twice": Plant(
        {"allocator-work": (
            ("        if self.ref_count[block] == 0:\n"
             "            raise ValueError(f\"double free: block {block} is already free\")\n",
             ""),
        )},
        4, "double free"),
    "incref accepts a free block": Plant(
        {"allocator-work": (
            ("        if not 0 <= block < self.num_blocks or self.ref_count[block] == 0:",
             "        if not 0 <= block < self.num_blocks:"),
        )},
        3, r"incref\(\) of a free block"),
    "blocks_needed: n // B + 1 (one too many at the boundary)": Plant(
        {"boundary-work": (
            ("    return -(-num_tokens // block_size)", "    return num_tokens // block_size + 1"),
        )},
        7, "one too many"),
    "blocks_needed: n // B (rounds down)": Plant(
        {"boundary-work": (
            ("    return -(-num_tokens // block_size)", "    return num_tokens // block_size"),
        )},
        7, "round up"),
    "slot: logical block used as the physical block": Plant(
        {"boundary-work": (
            ("    return block_ids[position // block_size] * block_size + position % block_size", "    return position"),
        )},
        7, "INTO block_ids"),
    "slot: offset off by one": Plant(
        {"boundary-work": (
            ("    return block_ids[position // block_size] * block_size + position % block_size",
             "    return block_ids[position // block_size] * block_size + position % block_size + 1"),
        )},
        7, "offset"),
    "free checks only the upper bound, so free(-1) frees the last block (the "
"negative-index bug)": Plant(
        {"allocator-work": (
            ("        if not 0 <= block < self.num_blocks:\n"
             "            raise ValueError(f\"block {block} is not in this pool\")",
             "        if block >= self.num_blocks:\n"
             "            raise ValueError(f\"block {block} is not in this pool\")"),
        )},
        4, r"free\(\) of block -1 must raise ValueError. .*check both ends"),
    "incref checks only the upper bound (incref(-1) shares the last block)": Plant(
        {"allocator-work": (
            ("        if not 0 <= block < self.num_blocks or self.ref_count[block] == 0:",
             "        if block >= self.num_blocks or self.ref_count[block] == 0:"),
        )},
        4, r"incref\(\) of block -1"),
    "allocate on an empty pool raises IndexError (no OutOfBlocks)": Plant(
        {"allocator-work": (
            ("        if not self.free_list:\n"
             "            raise OutOfBlocks(1, 0, self.num_blocks)\n",
             ""),
        )},
        1, r"raised IndexError: pop from empty list\. Hint: running out is OutOfBlocks"),
    "double free found only after decrementing (count left at -1)": Plant(
        {"allocator-work": (
            ("        if self.ref_count[block] == 0:\n"
             "            raise ValueError(f\"double free: block {block} is already free\")\n"
             "        self.ref_count[block] -= 1\n",
             "        self.ref_count[block] -= 1\n"
             "        if self.ref_count[block] < 0:\n"
             "            raise ValueError(f\"double free: block {block} is already free\")\n"),
        )},
        4, r"ref counts \[0, 1, 1\] -> \[-1, 1, 1\]\. Hint: your function changed a count and "
           r"then raised"),
    "allocate's OutOfBlocks gives the free list's length as the pool's size": Plant(
        {"allocator-work": (
            ("            raise OutOfBlocks(1, 0, self.num_blocks)\n", "            raise OutOfBlocks(1, 0, len(self.free_list))\n"),
        )},
        1, r"allocate\(\) on an empty pool of 4 raised OutOfBlocks\(requested=1, free=0, total=0\).*OutOfBlocks\(1, 0, 4\)"),
    "allocate_many's OutOfBlocks reports one block, not the n asked for": Plant(
        {"allocator-work": (
            ("raise OutOfBlocks(n, len(self.free_list), self.num_blocks)", "raise OutOfBlocks(1, 0, self.num_blocks)"),
        )},
        5, r"raised OutOfBlocks\(requested=1, free=0, total=4\).*OutOfBlocks\(2, 1, 4\)"),
    "the bounds test is block > num_blocks (free(num_blocks) raises IndexError)": Plant(
        {"allocator-work": (
            ("        if not 0 <= block < self.num_blocks:\n"
             "            raise ValueError(f\"block {block} is not in this pool\")",
             "        if block < 0 or block > self.num_blocks:\n"
             "            raise ValueError(f\"block {block} is not in this pool\")"),
        )},
        4, r"free\(\) of block 3 of a pool of 3 \(ids 0 to 2: the first id past the end\) raised IndexError: list index "
           r"out of range; it must raise ValueError.*Hint: the last valid id is num_blocks - 1, so the test is "
           r"block >= num_blocks"),
    "blocks_needed: one block for an empty sequence (wrong only at 0 tokens)": Plant(
        {"boundary-work": (
            ("    return -(-num_tokens // block_size)", "    return max(1, -(-num_tokens // block_size))"),
        )},
        7, r"0 tokens in blocks of 16 need 0 block\(s\), got 1 \(wrong at \[0\] .*\)\. Hint: 0 tokens need 0 blocks: "
           r"an empty sequence holds no block"),
}
