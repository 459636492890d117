"""A static picture of the paged decode kernel's block reads, drawn over the block tables.

Top: each sequence's block table, logical block ``i`` -> physical id, with the used part of the last block
shaded and the padding entries greyed out (never read). Bottom: the physical pool. A line joins each table
entry to the pool block a program of the kernel actually read for it (from
:func:`pagedlab.kernels.paged_attention.paged_decode_attention_traced`), in the reading sequence's colour and
labelled with the split that read it; blocks nobody read stay grey.
"""

from __future__ import annotations

from collections.abc import Sequence

from pagedlab.kernels.paged_attention import BlockReads
from pagedlab.validate import blocks_for
from pagedlab.widgets._base import COLORS, Picture, Svg, owner_color

CELL = 34
"""Side of one block in the picture (pixels)."""


class BlockReadsPicture:
    """The picture; shows itself as an image in a notebook (an SVG through :class:`~pagedlab.widgets._base.Picture`).

    Args:
        reads: the kernel's trace.
        block_tables: the table rows the kernel was given (lists of ints, padding included).
        num_blocks: blocks in the pool.
        kv_head: whose programs to draw (every K/V head reads the same blocks; 0 by default).

    Raises:
        ValueError: ``block_tables`` has not one row per traced sequence, or ``kv_head`` is out of range.
    """

    def __init__(self, reads: BlockReads, block_tables: Sequence[Sequence[int]], num_blocks: int,
                 kv_head: int = 0) -> None:
        tables = [list(map(int, row)) for row in block_tables]
        if len(tables) != len(reads.reads):
            raise ValueError(f"block_tables has {len(tables)} rows but the trace has {len(reads.reads)} sequences")
        if not 0 <= kv_head < len(reads.reads[0]):
            raise ValueError(f"kv_head must be in 0 .. {len(reads.reads[0]) - 1}, got {kv_head}")
        self.reads, self.tables, self.num_blocks, self.kv_head = reads, tables, num_blocks, kv_head

    def edges(self) -> list[tuple[int, int, int, int]]:
        """``(seq, split, logical, physical)`` for every block read, in reading order."""
        return [(s, x, logical, physical)
                for s, heads in enumerate(self.reads.reads)
                for x, split in enumerate(heads[self.kv_head])
                for logical, physical in split]

    def to_svg(self) -> str:
        bs = self.reads.block_size
        n_cols = max(len(t) for t in self.tables)
        pool_cols = min(self.num_blocks, 16)
        pool_rows = blocks_for(self.num_blocks, pool_cols)
        left, top = 110, 34
        table_h = len(self.tables) * (CELL + 8)
        pool_top = top + table_h + 70
        width = left + max(n_cols, pool_cols) * (CELL + 4) + 20
        height = pool_top + pool_rows * (CELL + 4) + 40
        svg = Svg(width, height)
        svg.text(8, 18, f"block tables (block_size {bs}, key tile {self.reads.block_n}, "
                        f"{self.reads.num_splits} split{'s' if self.reads.num_splits > 1 else ''})", 13, weight="bold")

        def pool_xy(b: int) -> tuple[float, float]:
            return left + (b % pool_cols) * (CELL + 4), pool_top + (b // pool_cols) * (CELL + 4)

        edges = self.edges()
        read_by = {physical: (s, x) for s, x, _, physical in edges}
        # One line per read, from the table entry to the block in the pool, drawn first so cells cover them.
        for s, split, logical, physical in edges:
            x1 = left + logical * (CELL + 4) + CELL / 2
            y1 = top + s * (CELL + 8) + CELL
            x2, y2 = pool_xy(physical)
            svg.line(x1, y1, x2 + CELL / 2, y2, stroke=owner_color(s), width=1.2, data_read=f"{s}:{logical}:{physical}",
                     opacity=0.7)
        # The tables.
        for s, row in enumerate(self.tables):
            y = top + s * (CELL + 8)
            n = self.reads.context_lens[s]
            owned = blocks_for(n, bs)
            svg.text(8, y + CELL / 2 + 4, f"seq {s} ({n} tok)", 12, fill=owner_color(s))
            for i, b in enumerate(row):
                x = left + i * (CELL + 4)
                if i < owned:
                    used = (n - i * bs) / bs if i == owned - 1 else 1.0
                    svg.rect(x, y, CELL, CELL, COLORS["free"], COLORS["grid"],
                             title=f"seq {s}, logical block {i} -> physical {b}", data_state="owned",
                             data_seq=s, data_logical=i, data_physical=b)
                    svg.rect(x, y + CELL * (1 - used), CELL, CELL * used, owner_color(s), data_state="used")
                    # White on the owner's colour, dark on a mostly empty last block.
                    svg.text(x + CELL / 2, y + CELL / 2 + 4, str(b), 12, anchor="middle",
                             fill="#ffffff" if used >= 0.5 else COLORS["text"], weight="bold")
                else:
                    svg.rect(x, y, CELL, CELL, COLORS["skipped"], COLORS["grid"],
                             title=f"seq {s}, padding entry {i}: never read", data_state="padding", data_seq=s,
                             data_logical=i)
                    svg.text(x + CELL / 2, y + CELL / 2 + 4, str(b), 10, anchor="middle", fill=COLORS["muted"])
        # The pool.
        svg.text(8, pool_top - 12, f"physical pool ({self.num_blocks} blocks): what the kernel read", 13,
                 weight="bold")
        for b in range(self.num_blocks):
            x, y = pool_xy(b)
            if b in read_by:
                s, split = read_by[b]
                svg.rect(x, y, CELL, CELL, owner_color(s), COLORS["text"],
                         title=f"block {b}: read by seq {s}, split {split}", data_state="read", data_block=b,
                         data_seq=s, data_split=split)
                svg.text(x + CELL / 2, y + 13, str(b), 11, anchor="middle", fill="#ffffff", weight="bold")
                svg.text(x + CELL / 2, y + 27, f"p{split}", 9, anchor="middle", fill="#ffffff")
            else:
                svg.rect(x, y, CELL, CELL, COLORS["free"], COLORS["grid"], title=f"block {b}: not read",
                         data_state="unread", data_block=b)
                svg.text(x + CELL / 2, y + CELL / 2 + 4, str(b), 11, anchor="middle", fill=COLORS["muted"])
        svg.text(8, height - 14, "p<k>: the split (program) that read the block; grey table entries are padding, "
                                 "grey pool blocks were never read", 11, fill=COLORS["muted"])
        return str(svg)

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        # As an image, like every static picture of the course, so it survives untrusted notebooks and GitHub.
        return Picture(self.to_svg(), repr(self))._repr_mimebundle_()

    def __repr__(self) -> str:
        return (f"BlockReadsPicture({len(self.tables)} sequences, {len(self.edges())} block reads, "
                f"{self.reads.num_splits} splits)")
