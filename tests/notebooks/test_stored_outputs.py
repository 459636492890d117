"""Stored outputs render without a kernel: in an untrusted JupyterLab (a fresh clone), GitHub, nbviewer, VS Code.

JupyterLab's sanitizer strips ``<svg>`` (and scripts) from the HTML of an untrusted notebook, so a picture must be
stored as an ``<img>`` (a data URI is kept) or a PNG; a widget-view reference needs the widget state stored with it,
or a trusted JupyterLab shows "Error displaying widget: model not found". The browser test checks the rendering.
"""

import base64
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest
from stored import SVG_IMG

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p for folder in ("notebooks", "solutions", "exercises") for p in (ROOT / folder).glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STRIPPED = re.compile(r"<(svg|script|iframe|object|embed)\b", re.IGNORECASE)


def problems(nb: nbformat.NotebookNode) -> list[str]:
    """What in ``nb``'s stored outputs would not render as a picture without a kernel (empty: nothing)."""
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            where = f"cell {cell.get('id')}"
            if WIDGET_VIEW in data and data[WIDGET_VIEW].get("model_id") not in state:
                found.append(f"{where}: a widget view whose state is not stored (re-execute with `make notebooks`)")
            html = data.get("text/html", "")
            if isinstance(html, list):
                html = "".join(html)
            tag = STRIPPED.search(html)
            if tag:
                found.append(f"{where}: text/html holds <{tag.group(1)}>, which JupyterLab strips from untrusted HTML")
            for payload in SVG_IMG.findall(html):
                try:
                    root = ET.fromstring(base64.b64decode(payload, validate=True))
                except Exception as error:  # noqa: BLE001 - any failure to decode or parse is the finding
                    found.append(f"{where}: an <img> whose SVG does not decode and parse ({error})")
                    continue
                if root.tag != "{http://www.w3.org/2000/svg}svg":
                    found.append(f"{where}: an <img> whose data URI is not an SVG document ({root.tag})")
            if "image/svg+xml" in data and not ({"image/png", "text/html"} & set(data)):
                found.append(f"{where}: image/svg+xml alone, which an untrusted JupyterLab does not render")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_stored_outputs_render_without_a_kernel(path):
    found = problems(nbformat.read(path, as_version=4))
    assert not found, f"{path.name}:\n" + "\n".join(found)


def test_live_views_are_stored_as_images():
    """The lectures with live widgets store each as an image (a check that the scan above sees them at all)."""
    images = {}
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        if any("Widget(" in cell.source for cell in nb.cells):
            html = [o.get("data", {}).get("text/html", "") for c in nb.cells for o in c.get("outputs", [])]
            images[path.stem] = sum(len(SVG_IMG.findall(h)) for h in html)
    assert images and all(images.values()), f"lectures with widgets but no stored image: {images}"


def test_the_scan_catches_what_jupyterlab_cannot_render():
    bare = nbformat.v4.new_output("display_data", data={"text/html": "<svg><text>0 sequences</text></svg>"})
    dangling = nbformat.v4.new_output("display_data", data={"text/plain": "W()", WIDGET_VIEW: {"model_id": "x"}})
    broken = nbformat.v4.new_output("display_data", data={"text/html": '<img src="data:image/svg+xml;base64,PHA+">'})
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[bare, dangling, broken])])
    assert len(problems(nb)) == 3


def test_a_conversion_in_a_notebook_leaves_the_stored_outputs_valid():
    # A notebook run whose model cache was deleted converts again and prints one line before the cell's own output;
    # nbval's sanitize file must drop that line (and only it), or that run fails against the stored outputs.
    from nbval.plugin import get_sanitize_patterns

    patterns = get_sanitize_patterns((ROOT / "tests" / "nbval_sanitize.cfg").read_text())
    assert any("converting" in regex for regex, _ in patterns), "the sanitize file has no pattern for the line"

    def sanitize(text: str) -> str:
        for regex, replace in patterns:
            text = re.sub(regex, replace, text)
        return text

    stored = "SmolLM2-135M, layer 15: 37 prompt tokens\n"
    for news in ("pagedlab: converting SmolLM2-135M-Instruct.Q4_1.gguf to float32 once (about 15 s); later loads "
                 "read the cache\n", "pagedlab: waiting for another process that is converting SmolLM2\n"):
        assert sanitize(news + stored) == sanitize(stored) == stored
    assert sanitize("converting by hand\n" + stored) != stored


# What a print of a Python object's default repr looks like: a method or function printed where its value was meant
# (notebook 10 once printed "static reserves <bound method Scheduler.max_len of ...> tokens"), or an object's address.
REPR = re.compile(r"<bound method |<function [\w.<>]+ at 0x| object at 0x[0-9a-f]+>")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_stored_text_output_is_a_default_repr(path):
    """nbval's sanitizer hides addresses, so such an output passes nbval; here it fails."""
    nb = nbformat.read(path, as_version=4)
    found = [f"cell {cell.get('id')}: {m.group(0)!r}" for cell in nb.cells for out in cell.get("outputs", [])
             for text in (out.get("text", ""), out.get("data", {}).get("text/plain", ""))
             for m in [REPR.search("".join(text) if isinstance(text, list) else text)] if m]
    assert not found, f"{path.name}:\n" + "\n".join(found)
