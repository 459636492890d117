"""Exercise 6's checks catch the plausible wrong allocators: for each bug below, the FIRST failing check (the one a
learner meets) must be the one that names it, with a hint."""

from pathlib import Path

import pytest

from nbrun import assert_caught, run_cells

NB = Path(__file__).resolve().parents[2] / "solutions" / "ex06_block_allocator.ipynb"


# (cell, solution text, buggy text, title of the first failing check, regex of its message)
BUGS = {
    "frees a shared block at the first free (ignores the count)": (
        "allocator-work",
        "        if self.ref_count[block] == 0:\n            self.free_list.append(block)",
        "        self.free_list.append(block)",
        "Check 3: a shared block stays allocated until its last owner frees it", "still holds it"),
    "allocate_many leaks the blocks it took before running out": (
        "allocator-work",
        "        if n > len(self.free_list):\n            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)\n",
        "",
        "Check 5: all or nothing", "leaked"),
    "takes blocks from the front of the list (pop(0), O(n))": (
        "allocator-work", "        block = self.free_list.pop()", "        block = self.free_list.pop(0)",
        "Check 1: allocate until the pool is empty", "a fresh pool should hand out 0, 1, 2, 3"),
    "pop(0) on a sorted list, sorting on free (the source's allocator)": (
        "allocator-work",
        "        block = self.free_list.pop()",
        "        self.free_list.sort(reverse=True)\n        block = self.free_list.pop()",
        "Check 2: the free list is a stack", "pop\\(0\\)"),
    "a double free pushes the block twice": (
        "allocator-work",
        "        if self.ref_count[block] == 0:\n"
        "            raise ValueError(f\"double free: block {block} is already free\")\n",
        "",
        "Check 4: wrong frees are errors, and change nothing", "double free"),
    "incref accepts a free block": (
        "allocator-work",
        "        if not 0 <= block < self.num_blocks or self.ref_count[block] == 0:",
        "        if not 0 <= block < self.num_blocks:",
        "Check 3: a shared block stays allocated until its last owner frees it", "incref\\(\\) of a free block"),
    "blocks_needed: n // B + 1 (one too many at the boundary)": (
        "boundary-work", "    return -(-num_tokens // block_size)", "    return num_tokens // block_size + 1",
        "Check 7: at the boundaries", "one too many"),
    "blocks_needed: n // B (rounds down)": (
        "boundary-work", "    return -(-num_tokens // block_size)", "    return num_tokens // block_size",
        "Check 7: at the boundaries", "round up"),
    "slot: logical block used as the physical block": (
        "boundary-work", "    return block_ids[position // block_size] * block_size + position % block_size",
        "    return position", "Check 7: at the boundaries", "INTO block_ids"),
    "slot: offset off by one": (
        "boundary-work", "    return block_ids[position // block_size] * block_size + position % block_size",
        "    return block_ids[position // block_size] * block_size + position % block_size + 1", "Check 7: at the boundaries", "offset"),
    "free checks only the upper bound, so free(-1) frees the last block (the negative-index bug)": (
        "allocator-work", "        if not 0 <= block < self.num_blocks:\n            raise ValueError(f\"block {block} is not in this pool\")",
        "        if block >= self.num_blocks:\n            raise ValueError(f\"block {block} is not in this pool\")",
        "Check 4: wrong frees are errors, and change nothing", r"free\(\) of block -1 must raise ValueError. .*check both ends"),
    "incref checks only the upper bound (incref(-1) shares the last block)": (
        "allocator-work", "        if not 0 <= block < self.num_blocks or self.ref_count[block] == 0:",
        "        if block >= self.num_blocks or self.ref_count[block] == 0:",
        "Check 4: wrong frees are errors, and change nothing", r"incref\(\) of block -1"),
    "allocate on an empty pool raises IndexError (no OutOfBlocks)": (
        "allocator-work", "        if not self.free_list:\n            raise OutOfBlocks(1, 0, self.num_blocks)\n", "",
        "Check 1: allocate until the pool is empty", r"raised IndexError: pop from empty list\. Hint: running out is "
                                                     r"OutOfBlocks"),
    "double free found only after decrementing (count left at -1)": (
        "allocator-work",
        "        if self.ref_count[block] == 0:\n"
        "            raise ValueError(f\"double free: block {block} is already free\")\n"
        "        self.ref_count[block] -= 1\n",
        "        self.ref_count[block] -= 1\n"
        "        if self.ref_count[block] < 0:\n"
        "            raise ValueError(f\"double free: block {block} is already free\")\n",
        "Check 4: wrong frees are errors, and change nothing",
        r"ref counts \[0, 1, 1\] -> \[-1, 1, 1\]\. Hint: your function changed a count and then raised"),
    "allocate_many's OutOfBlocks reports one block, not the n asked for": (
        "allocator-work", "raise OutOfBlocks(n, len(self.free_list), self.num_blocks)",
        "raise OutOfBlocks(1, 0, self.num_blocks)",
        "Check 5: all or nothing", r"raised OutOfBlocks\(requested=1, free=0, total=4\).*OutOfBlocks\(2, 1, 4\)"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_first_failing_check_names_the_mistake(bug):
    cell, old, new, title, pattern = BUGS[bug]
    assert_caught(NB, cell, [(old, new)], title, pattern)


def test_solution_passes():
    ns = run_cells(NB)
    assert ns["blocks_needed"](33, 16) == 3
