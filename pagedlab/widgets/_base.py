"""What every course widget shares: an SVG builder, and a live view with a static picture beside it.

The widgets are drawn in Python as SVG and shown through core ipywidgets (an ``HTML`` widget plus
controls), with no custom JavaScript, so they render wherever core widgets do: JupyterLab 4 with
ipywidgets 8, Colab with ipywidgets 7.7, VS Code.

Where no live widget can run (a notebook opened before its cells run, GitHub, nbviewer, ``pytest
--nbval``), the static picture is what shows. It is stored as ``text/html`` holding an ``<img>`` whose
source is the SVG as a base64 ``data:`` URI, never as bare ``<svg>`` markup: JupyterLab's sanitizer
removes ``<svg>`` from the HTML of an untrusted notebook (which every fresh clone is), leaving a run-on
blob of its text, but keeps an ``<img>`` (it does not check the scheme of ``src``); GitHub, nbviewer,
VS Code and Colab show such an image too.

``make notebooks`` (:mod:`pagedlab.authoring.execute`) stores, for each live view, :meth:`LiveView.static_svg`
drawn at the end of the run, which is what a live view shows after *Run All*, and drops the
widget-view reference (the widget state is not stored, so it would point at nothing). To keep the
picture of one moment, display :meth:`LiveView.snapshot` there.
"""

from __future__ import annotations

import base64
import re
import weakref
from html import escape, unescape
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


# The class of the <img> that stands for a live view, so tools can tell it from a snapshot: its picture is
# drawn at the end of the run, not when the cell ran (tests/nbval_sanitize.cfg masks it for that reason).
LIVE_VIEW_CLASS = "pagedlab-live-view"
SNAPSHOT_CLASS = "pagedlab-snapshot"


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


def svg_image_html(svg: str, alt: str, css_class: str) -> str:
    """An ``<img>`` tag showing ``svg`` through a base64 ``data:image/svg+xml`` URI (see the module docstring)."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img class="{escape(css_class)}" alt="{escape(alt)}" src="data:image/svg+xml;base64,{data}">'


def svg_title(svg: str, default: str) -> str:
    """The text of the picture's ``data-role="title"`` line (what it shows, in words), else ``default``."""
    match = re.search(r'data-role="title"[^>]*>([^<]*)<', svg)
    return unescape(match.group(1)) if match else default


class Picture:
    """A static picture that displays as an image everywhere (see the module docstring).

    Attributes:
        svg: the picture. alt: what it shows, in words (also its ``text/plain`` form).
    """

    def __init__(self, svg: str, alt: str) -> None:
        if not isinstance(svg, str):
            raise TypeError(f"svg must be an SVG document string, got {type(svg).__name__}")
        if not svg.lstrip().startswith("<svg"):
            raise ValueError(f"svg must be an SVG document string starting with '<svg', got {str(svg)[:40]!r}")
        self.svg, self.alt = svg, alt

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.alt, "text/html": svg_image_html(self.svg, self.alt, SNAPSHOT_CLASS)}


# Every live view displayed in this kernel, by the model id of its box: make notebooks asks for their
# static pictures at the end of the run (static_outputs). Weak, so a view nobody holds can go.
_displayed: "weakref.WeakValueDictionary[str, LiveView]" = weakref.WeakValueDictionary()


def static_outputs() -> dict[str, dict[str, str]]:
    """``{model_id: display bundle}``: the static picture of every live view displayed in this kernel, drawn now.

    :mod:`pagedlab.authoring.execute` calls this once the last cell has run and stores each bundle in place of the
    live view's output, so a notebook that has not run shows what a live view would show after *Run All*.
    """
    return {model_id: view.static_bundle() for model_id, view in list(_displayed.items())}


class LiveView:
    """Base class: a picture (``to_svg``) shown in an ``HTML`` widget above some controls.

    Subclasses implement :meth:`to_svg` and build their controls in ``self.controls`` (a list of
    widgets); calling :meth:`redraw` after a state change updates what the learner sees at once,
    even from inside a running cell (the update travels as a comm message). Displaying the view shows
    the live widget where a widget front end runs and the static picture (:meth:`static_svg`) elsewhere.
    """

    def __init__(self) -> None:
        self.picture = widgets.HTML()
        self.controls: list[widgets.Widget] = []
        self._box: widgets.Box | None = None

    def to_svg(self) -> str:
        """The current picture as an SVG string (what the live view shows now)."""
        raise NotImplementedError

    def static_svg(self) -> str:
        """The picture stored for a live view in an executed notebook; by default the current picture.

        A subclass may draw more here (its final state plus how it got there), since a reader without a
        kernel sees only this.
        """
        return self.to_svg()

    def snapshot(self) -> Picture:
        """A static picture of the view as it is now, to display beside the live view.

        A live view keeps changing as later cells run, so after *Run All* it shows the final state; a
        snapshot keeps the moment the text around it describes.
        """
        svg = self.to_svg()
        return Picture(svg, f"{type(self).__name__} snapshot: {svg_title(svg, 'the picture at this point')}")

    def static_bundle(self) -> dict[str, str]:
        """The display bundle that stands for the live view where no widget can run (no widget-view entry)."""
        svg = self.static_svg()
        name = type(self).__name__
        alt = f"{name} (static picture; run the notebook for the live widget): {svg_title(svg, name)}"
        return {"text/plain": f"{name}()", "text/html": svg_image_html(svg, alt, LIVE_VIEW_CLASS)}

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

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # Widget front ends pick the live view; the others (and nbval) fall back to the static picture.
        box = self.box
        _displayed[box.model_id] = self
        return {**self.static_bundle(),
                "application/vnd.jupyter.widget-view+json": {"version_major": 2, "version_minor": 0,
                                                             "model_id": box.model_id}}
