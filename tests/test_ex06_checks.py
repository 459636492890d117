"""Exercise 6's checks catch the plausible wrong allocators: each bug below must fail a check, with a hint."""

from pathlib import Path

import pytest

from nbrun import planted, run_cells

NB = Path(__file__).resolve().parent.parent / "solutions" / "ex06_block_allocator.ipynb"


# (cell, solution text, buggy text, words the failing check's message must contain)
BUGS = {
    "frees a shared block at the first free (ignores the count)": (
        "allocator-work",
        "        if self.ref_count[block] == 0:\n            self.free_list.append(block)",
        "        self.free_list.append(block)",
        "still holds it"),
    "allocate_many leaks the blocks it took before running out": (
        "allocator-work",
        "        if n > len(self.free_list):\n            raise OutOfBlocks(n, len(self.free_list), self.num_blocks)\n",
        "",
        "leaked"),
    "takes blocks from the front of the list (pop(0), O(n))": (
        "allocator-work", "        block = self.free_list.pop()", "        block = self.free_list.pop(0)",
        "a fresh pool should hand out 0, 1, 2, 3"),
    "pop(0) on a sorted list, sorting on free (the source's allocator)": (
        "allocator-work",
        "        block = self.free_list.pop()",
        "        self.free_list.sort(reverse=True)\n        block = self.free_list.pop()",
        "pop\\(0\\)"),
    "a double free pushes the block twice": (
        "allocator-work",
        "        if self.ref_count[block] == 0:\n"
        "            raise ValueError(f\"double free: block {block} is already free\")\n",
        "",
        "double free"),
    "incref accepts a free block": (
        "allocator-work",
        "        if not 0 <= block < self.num_blocks or self.ref_count[block] == 0:",
        "        if not 0 <= block < self.num_blocks:",
        "incref\\(\\) of a free block"),
    "blocks_needed: n // B + 1 (one too many at the boundary)": (
        "boundary-work", "    return -(-num_tokens // block_size)", "    return num_tokens // block_size + 1",
        "one too many"),
    "blocks_needed: n // B (rounds down)": (
        "boundary-work", "    return -(-num_tokens // block_size)", "    return num_tokens // block_size",
        "round up"),
    "slot: logical block used as the physical block": (
        "boundary-work", "    return block_ids[position // block_size] * block_size + position % block_size",
        "    return position", "INTO block_ids"),
    "slot: offset off by one": (
        "boundary-work", "    return block_ids[position // block_size] * block_size + position % block_size",
        "    return block_ids[position // block_size] * block_size + position % block_size + 1", "offset"),
}


@pytest.mark.parametrize("bug", BUGS)
def test_check_catches(bug):
    cell, old, new, words = BUGS[bug]
    with pytest.raises(AssertionError, match=words) as info:
        run_cells(NB, replace=planted(NB, cell, (old, new)))
    assert str(info.value), "a failing check must say what is wrong"


def test_solution_passes():
    ns = run_cells(NB)
    assert ns["blocks_needed"](33, 16) == 3
