"""Live widgets of the course: core ipywidgets controls around pictures drawn as SVG in Python."""

from pagedlab.widgets.block_table import BlockTableWidget
from pagedlab.widgets.tile import TileWidget

__all__ = ["BlockTableWidget", "TileWidget"]
