"""Render the two live widgets' static pictures to docs/*.png for the README.

The widgets draw SVG; this turns one frame of each into a PNG with cairosvg, which is not a course
dependency: ``pip install cairosvg`` first. Run from the repository root after changing a widget:

    python tools/render_widget_images.py
"""

from pathlib import Path

import cairosvg

from pagedlab.paged import BlockManager
from pagedlab.widgets import BlockTableWidget, TileWidget

DOCS = Path(__file__).resolve().parent.parent / "docs"


def main() -> None:
    # Notebook 02's widget: causal attention over 24 tokens in 8 x 8 tiles, at its last step, where the README's
    # caption says the error has fallen to zero.
    tiles = TileWidget(seq_len=24, block_m=8, block_n=8, causal=True)
    cairosvg.svg2png(bytestring=tiles.to_svg().encode(), write_to=str(DOCS / "tile_widget.png"), output_width=900)

    # Notebook 06's scenario: 6 blocks of 16 tokens, requests of 20 and 10 tokens,
    # 13 appends that cross a block boundary; then a fork and one append that copies on write. The picture is the
    # static one (the final state and a strip of key-event frames), as notebooks store it.
    manager = BlockManager(num_blocks=6, block_size=16, num_cpu_blocks=4)
    blocks = BlockTableWidget(manager)
    manager.add("A", list(range(20)))
    manager.add("B", list(range(100, 110)))
    for t in range(13):
        manager.append("A", 1000 + t)
    manager.fork("B", "C")
    manager.append("C", 7)
    cairosvg.svg2png(bytestring=blocks.static_svg().encode(), write_to=str(DOCS / "block_table_widget.png"),
                     output_width=900)


if __name__ == "__main__":
    main()
