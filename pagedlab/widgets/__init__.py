"""Live widgets of the course: core ipywidgets controls around pictures drawn as SVG in Python.

:func:`static_outputs` is the static picture of every live view made so far, which
``pagedlab.authoring.execute`` stores in place of the live widgets once a notebook has run.
"""

from pagedlab.widgets._base import static_outputs
from pagedlab.widgets.block_table import BlockTableWidget
from pagedlab.widgets.tile import TileWidget

__all__ = ["BlockTableWidget", "TileWidget", "static_outputs"]
