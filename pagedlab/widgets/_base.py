"""What every course widget shares: an SVG builder and a live view with a static fallback.

The widgets are drawn in Python as SVG and shown through core ipywidgets (an ``HTML`` widget plus
controls), with no custom JavaScript, so they render wherever core widgets do: JupyterLab 4 with
ipywidgets 8, Colab with ipywidgets 7.7, VS Code. Each widget's display bundle also carries the
static picture as ``text/html``, which GitHub, nbviewer and ``pytest --nbval`` see instead.
"""

from __future__ import annotations

from html import escape
from typing import Any

import ipywidgets as widgets

# One palette for every widget, so the same state has the same colour everywhere in the course.
COLORS = {
    "background": "#ffffff",
    "grid": "#d0d7de",
    "text": "#24292f",
    "muted": "#8c959f",
    "free": "#f6f8fa",
    "skipped": "#e1e4e8",
    "done": "#b6d4fe",
    "current": "#fd7e14",
    "masked": "#ffe8a3",
    "cached": "#d3f9d8",
    "shared": "#6f42c1",
}
# Owners (sequences) get colours in this order; colour-blind-safe (Okabe-Ito).
OWNER_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"]


def owner_color(index: int) -> str:
    """The colour of the ``index``-th owner, cycling through :data:`OWNER_COLORS`."""
    return OWNER_COLORS[index % len(OWNER_COLORS)]


def _attrs(attrs: dict[str, Any]) -> str:
    # Python names use underscores; SVG and data-* attributes use hyphens.
    return "".join(f' {k.rstrip("_").replace("_", "-")}="{escape(str(v))}"' for k, v in attrs.items() if v is not None)


class Svg:
    """A minimal SVG document builder: shapes are appended in drawing order, ``str()`` renders.

    Extra keyword arguments become attributes (``data_state="skipped"`` -> ``data-state="skipped"``),
    which is how tests find out what a picture shows without a browser.
    """

    def __init__(self, width: float, height: float) -> None:
        self.width, self.height = width, height
        self._parts: list[str] = []

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str | None = None,
             title: str | None = None, **attrs: Any) -> None:
        body = f"<title>{escape(title)}</title>" if title else ""
        tag = f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" fill="{fill}"'
        tag += f' stroke="{stroke}"' if stroke else ""
        tag += _attrs(attrs)
        self._parts.append(f"{tag}>{body}</rect>" if body else f"{tag}/>")

    def text(self, x: float, y: float, s: str, size: float = 12, anchor: str = "start",
             fill: str = COLORS["text"], weight: str = "normal", **attrs: Any) -> None:
        self._parts.append(f'<text x="{x:g}" y="{y:g}" font-size="{size:g}" text-anchor="{anchor}" fill="{fill}" '
                           f'font-weight="{weight}"{_attrs(attrs)}>{escape(s)}</text>')

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str = COLORS["grid"], width: float = 1,
             **attrs: Any) -> None:
        self._parts.append(f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" stroke="{stroke}" '
                           f'stroke-width="{width:g}"{_attrs(attrs)}/>')

    def __str__(self) -> str:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width:g}" height="{self.height:g}" '
                f'viewBox="0 0 {self.width:g} {self.height:g}" font-family="sans-serif">'
                f'<rect width="100%" height="100%" fill="{COLORS["background"]}"/>' + "".join(self._parts) + "</svg>")


class LiveView:
    """Base class: a picture (``to_svg``) shown in an ``HTML`` widget above some controls.

    Subclasses implement :meth:`to_svg` and build their controls in ``self.controls`` (a list of
    widgets); calling :meth:`redraw` after a state change updates what the learner sees at once,
    even from inside a running cell (the update travels as a comm message).
    """

    def __init__(self) -> None:
        self.picture = widgets.HTML()
        self.controls: list[widgets.Widget] = []
        self._box: widgets.Box | None = None

    def to_svg(self) -> str:
        """The current picture as an SVG string (the static view)."""
        raise NotImplementedError

    @property
    def box(self) -> widgets.VBox:
        """The whole widget: the picture with the controls underneath (built on first use)."""
        if self._box is None:
            self._box = widgets.VBox([self.picture, *self.controls])
            self.redraw()
        return self._box

    def redraw(self) -> None:
        """Re-render the picture into the live ``HTML`` widget."""
        self.picture.value = self.to_svg()

    def _repr_html_(self) -> str:
        return self.to_svg()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # Live frontends pick the widget view; GitHub, nbviewer and nbval fall back to the static SVG.
        box = self.box
        return {
            "text/plain": f"{type(self).__name__}()",
            "text/html": self.to_svg(),
            "application/vnd.jupyter.widget-view+json": {"version_major": 2, "version_minor": 0,
                                                         "model_id": box.model_id},
        }
