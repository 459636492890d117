"""LiveView's outputs: a live widget where one can run, an image of the SVG everywhere else, snapshots of a moment."""

import base64
import re
import xml.etree.ElementTree as ET

import nbformat
import pytest

from pagedlab.authoring.execute import WIDGET_VIEW, execute, store_static_widgets
from pagedlab.widgets._base import LIVE_VIEW_CLASS, SNAPSHOT_CLASS, LiveView, Picture, Svg, static_outputs

IMG = re.compile(r'^<img class="([\w-]+)" alt="([^"]*)" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)">$')


class Counter(LiveView):
    """A minimal live view: a number, drawn as the picture's title."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def to_svg(self) -> str:
        svg = Svg(200, 40)
        svg.text(10, 20, f"n = {self.n}", data_role="title")
        return str(svg)


def decoded(html: str) -> tuple[str, str, str]:
    """(class, alt, svg) of an <img> output; fails when the HTML is anything else (bare SVG, say)."""
    match = IMG.match(html)
    assert match, f"not a single data-URI <img>: {html[:80]!r}"
    svg = base64.b64decode(match.group(3)).decode("utf-8")
    assert ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"
    return match.group(1), match.group(2), svg


def test_the_bundle_holds_the_live_widget_and_an_image_of_the_static_svg():
    view = Counter()
    bundle = view._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == view.box.model_id
    css, alt, svg = decoded(bundle["text/html"])
    assert (css, svg) == (LIVE_VIEW_CLASS, view.static_svg()) and "n = 0" in alt
    assert "<svg" not in bundle["text/html"] and bundle["text/plain"] == "Counter()"


def test_static_outputs_draws_every_displayed_view_as_it_is_now():
    view, hidden = Counter(), Counter()
    view._repr_mimebundle_()
    view.n = 7
    outputs = static_outputs()
    assert view.box.model_id in outputs and hidden.box.model_id not in outputs
    assert WIDGET_VIEW not in outputs[view.box.model_id]
    assert decoded(outputs[view.box.model_id]["text/html"])[2] == view.to_svg()


def test_a_subclass_static_svg_is_what_is_stored():
    class Framed(Counter):
        def static_svg(self) -> str:
            return self.to_svg().replace("n = ", "final n = ")

    view = Framed()
    view._repr_mimebundle_()
    assert "final n = 0" in decoded(static_outputs()[view.box.model_id]["text/html"])[2]


def test_a_snapshot_keeps_its_moment():
    view = Counter()
    view.n = 3
    shot = view.snapshot()
    view.n = 4
    css, alt, svg = decoded(shot._repr_mimebundle_()["text/html"])
    assert css == SNAPSHOT_CLASS and "n = 3" in svg and "n = 3" in alt and "n = 4" not in svg
    assert shot._repr_mimebundle_()["text/plain"] == alt


def test_a_picture_needs_an_svg():
    with pytest.raises(ValueError, match="svg"):
        Picture("<p>not a picture</p>", "alt")
    with pytest.raises(TypeError, match="svg must be an SVG document string, got bytes"):
        Picture(b"<svg/>", "alt")


def _output(model_id: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("display_data", data={"text/plain": "X()", WIDGET_VIEW: {"model_id": model_id}})


def test_store_static_widgets_replaces_live_views_and_drops_references_without_state():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(outputs=[_output("live")]), nbformat.v4.new_code_cell(outputs=[_output("other")]),
                nbformat.v4.new_code_cell(outputs=[_output("kept")])]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {"kept": {}}}}
    static = {"text/plain": "Counter()", "text/html": "<img>"}
    assert store_static_widgets(nb, {"live": static}) == 1
    assert nb.cells[0].outputs[0].data == static                   # a course live view: its static picture
    assert nb.cells[1].outputs[0].data == {"text/plain": "X()"}     # another widget: its fallback only
    assert WIDGET_VIEW in nb.cells[2].outputs[0].data               # a widget whose state is stored stays live


@pytest.mark.slow
def test_execute_stores_each_live_view_as_drawn_at_the_end(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print('setup')"),
                nbformat.v4.new_code_cell("from pagedlab.paged import BlockManager\nfrom pagedlab.widgets import BlockTableWidget\n"
                                          "m = BlockManager(num_blocks=4, block_size=4)\nw = BlockTableWidget(m)\nw"),
                nbformat.v4.new_code_cell("m.add('A', range(5))\nw.snapshot()"),
                nbformat.v4.new_code_cell("m.add('B', range(3))")]
    path = tmp_path / "demo.ipynb"
    nbformat.write(nb, path)
    execute(path)
    out = nbformat.read(path, as_version=4)
    assert len(out.cells) == 4 and "widgets" not in out.metadata
    live, snap = out.cells[1].outputs[0].data, out.cells[2].outputs[0].data
    assert WIDGET_VIEW not in live and WIDGET_VIEW not in snap
    assert 'data-seq="B"' in decoded(live["text/html"])[2]           # the end of the run: A and B
    assert 'data-seq="A"' in decoded(snap["text/html"])[2] and 'data-seq="B"' not in decoded(snap["text/html"])[2]
