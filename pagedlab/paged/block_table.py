"""A sequence's block table: logical blocks (in token order) -> physical block ids.

Token ``position`` of a sequence lives in logical block ``position // block_size`` at offset
``position % block_size``; the block table says which physical block that logical block is, so the
token's *slot* in the pool (the row of a ``[num_blocks * block_size, ...]`` view of the KV tensors) is

    slot = block_ids[position // block_size] * block_size + position % block_size

The ``slot_mapping`` of a batch is that slot for every token being written: it is what the attention
layer uses to scatter new K/V into the pool, and the block table is what it uses to read them back.
"""

from __future__ import annotations

from typing import Literal

Device = Literal["gpu", "cpu"]


class BlockTable:
    """The physical blocks of one sequence, in logical order, and how many tokens they hold.

    Who owns a table. A table is plain data; whoever creates it owns it and is the only one to change it.
    The :class:`~pagedlab.paged.BlockManager` owns the tables it returns from ``add``/``fork``/``table``:
    they stay current as the sequence grows, and its reference counts and prefix cache describe them, so
    everyone else only reads them. Code that plays the manager's role (exercise ex07's ``MiniManager``)
    creates its own tables and updates them itself.

    The owner keeps two invariants: ``len(block_ids) == ceil(num_tokens / block_size)`` (the last block
    holds at least one token) and every token's block is allocated to this sequence. Adding the token at
    position ``p = num_tokens`` therefore goes in this order:

    1. make block ``p // block_size`` exist and be writable: at a block boundary (``p % block_size == 0``)
       append a newly allocated block id to ``block_ids``; when the last block is shared, replace it by
       its private copy (copy-on-write);
    2. then ``num_tokens = p + 1``;
    3. only now is ``slot(p)`` defined (it refuses positions ``>= num_tokens``); write the token's K/V there.

    Attributes:
        block_ids: physical block ids, logical block ``i`` -> ``block_ids[i]`` (a list of ints).
        num_tokens: tokens stored; the last block holds ``num_tokens - (len(block_ids) - 1) * block_size``.
        block_size: tokens per block.
        device: ``"gpu"`` while the sequence is in the GPU pool, ``"cpu"`` while swapped out (then the
            ids are blocks of the CPU pool).
    """

    __slots__ = ("block_ids", "num_tokens", "block_size", "device")

    def __init__(self, block_ids: list[int], num_tokens: int, block_size: int, device: Device = "gpu") -> None:
        self.block_ids = block_ids
        self.num_tokens = num_tokens
        self.block_size = block_size
        self.device = device

    @property
    def num_blocks(self) -> int:
        """Number of blocks in the table (``ceil(num_tokens / block_size)`` for a table the manager keeps)."""
        return len(self.block_ids)

    def slot(self, position: int) -> int:
        """The pool slot of token ``position`` (``0 <= position < num_tokens``).

        Raises:
            TypeError: ``position`` is not an int.
            IndexError: ``position`` is outside the tokens stored.
        """
        if not isinstance(position, int) or isinstance(position, bool):
            raise TypeError(f"position must be an int, got {type(position).__name__}")
        if not 0 <= position < self.num_tokens:
            raise IndexError(f"position {position} is outside this sequence's {self.num_tokens} tokens")
        return self.block_ids[position // self.block_size] * self.block_size + position % self.block_size

    def slot_mapping(self, start: int = 0, end: int | None = None) -> list[int]:
        """The slots of positions ``start .. end - 1`` (default: every token), in order.

        Raises:
            IndexError: the range is not inside ``0 .. num_tokens``.
        """
        end = self.num_tokens if end is None else end
        if not 0 <= start <= end <= self.num_tokens:
            raise IndexError(f"positions {start}..{end} are not inside this sequence's {self.num_tokens} tokens")
        bs, ids = self.block_size, self.block_ids
        return [ids[p // bs] * bs + p % bs for p in range(start, end)]

    def __repr__(self) -> str:
        where = "" if self.device == "gpu" else ", device='cpu'"
        return f"BlockTable(block_ids={self.block_ids}, num_tokens={self.num_tokens}{where})"
