"""The stored pictures render where no kernel runs: nbconvert's HTML (what nbviewer serves), shown in Chromium.

(GitHub and VS Code render notebooks with their own code, which no test here can run; they show ``text/html``
outputs with ``<img>`` data URIs as nbconvert does.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from lab import ROOT

PICTURES = "img.pagedlab-live-view, img.pagedlab-snapshot"
WITH_PICTURES = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if "pagedlab-live-view" in p.read_text())


def nbconvert_html(path: Path, monkeypatch) -> str:
    nbconvert = pytest.importorskip("nbconvert")
    # A virtualenv with system site packages finds nbconvert's templates under the base interpreter's prefix.
    shared = Path(sys.base_prefix) / "share" / "jupyter"
    if shared.is_dir():
        monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join(filter(None, [os.environ.get("JUPYTER_PATH"), str(shared)])))
    return nbconvert.HTMLExporter().from_filename(str(path))[0]


@pytest.mark.parametrize("path", WITH_PICTURES, ids=lambda p: p.stem)
def test_pictures_render_in_nbconvert_html(browser, tmp_path, monkeypatch, path):
    html = tmp_path / f"{path.stem}.html"
    html.write_text(nbconvert_html(path, monkeypatch), encoding="utf-8")
    page = browser.new_page()
    try:
        page.goto(html.as_uri())
        pictures = page.evaluate(f"""() => [...document.querySelectorAll("{PICTURES}")]
                                     .map(i => ({{loaded: i.complete && i.naturalWidth > 0, alt: i.alt}}))""")
        assert pictures, f"{path.name}: no stored picture in nbconvert's HTML"
        broken = [p["alt"] for p in pictures if not p["loaded"]]
        assert not broken, f"{path.name}: pictures that do not render: {broken}"
        assert page.get_by_text("Error displaying widget").count() == 0
    finally:
        page.close()
