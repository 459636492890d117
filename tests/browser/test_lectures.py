"""What a newcomer sees in JupyterLab, in a real browser: every lecture, its stored pictures, Run All, the widgets.

For each lecture in ``notebooks/`` (found, not listed): open it in a fresh, untrusted session and check that every
stored picture renders as an image (no SVG text blob, no "Error displaying widget"); Run All from the menu; wait
until every cell has run; check there is no error output and no console or page error. In the first lecture that
shows each live widget (the tile widget in 02, the block-table widget in 06) operate every control and check the
picture changes. Last, open an exercise from the file browser. A full-page screenshot of each notebook, as stored
and after Run All, goes to ``tests/browser/screenshots/`` (or ``$PAGEDLAB_SCREENSHOTS``).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from jlab import (SVG_IMG, PageErrors, cells, control, full_page_screenshot, open_notebook, picture,
                  pictures_render, run_all, set_slider, shut_down_kernels, wait_for_new_picture)
from test_stored_outputs import SVG_IMG as STORED_IMG

from lab import ROOT
from pagedlab.widgets._base import svg_title

LECTURES = sorted((ROOT / "notebooks").glob("*.ipynb"))


def title(svg: str) -> str:
    return svg_title(svg, "")


def live_views(nb: nbformat.NotebookNode) -> dict[int, str]:
    """``{cell index: class name}`` of the cells whose stored output is a course live view (``TileWidget()``...)."""
    found = {}
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            text = out.get("data", {}).get("text/plain", "")
            if 'class="pagedlab-live-view"' in out.get("data", {}).get("text/html", ""):
                found[i] = text.removesuffix("()")
    return found


def first_lecture_with(kind: str) -> str | None:
    return next((p.stem for p in LECTURES if kind in live_views(nbformat.read(p, as_version=4)).values()), None)


@pytest.fixture
def page(browser, lab):
    page = browser.new_page()
    errors = PageErrors(page)
    yield page, errors
    page.close()
    shut_down_kernels(lab)


def check_stored_outputs(page, nb: nbformat.NotebookNode) -> None:
    """Before running: each cell shows as many SVG images as it stores, all loaded, and no text where a picture is."""
    dom = cells(page)
    page.wait_for_function(f"() => document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell').length == "
                           f"{len(nb.cells)}", timeout=60_000)   # every cell in the page (windowing off)
    for i, cell in enumerate(nb.cells):
        html = "".join(out.get("data", {}).get("text/html", "") for out in cell.get("outputs", []))
        expected = len(STORED_IMG.findall(html))
        if not expected:
            continue
        outputs = dom.nth(i).locator(".jp-OutputArea-output")
        assert outputs.locator(SVG_IMG).count() == expected, f"cell {cell.id}: stored pictures not shown as images"
        assert pictures_render(dom.nth(i)), f"cell {cell.id}: a stored picture does not load"
        text = outputs.locator(".jp-RenderedHTMLCommon").all_inner_texts()
        assert not "".join(text).strip(), f"cell {cell.id}: a picture shows as text: {''.join(text)[:200]!r}"
    assert page.get_by_text("Error displaying widget").count() == 0


def exercise_tile_widget(widget) -> list[str]:
    """Operate every control of a TileWidget; return the controls operated."""
    before = picture(widget)
    set_slider(widget, "step", 0)
    now = wait_for_new_picture(widget, before)
    assert title(now).startswith("step 0 of"), title(now)
    widget.locator(".widget-play button").first.click()                        # play
    now = wait_for_new_picture(widget, now)
    assert not title(now).startswith("step 0 of")
    set_slider(widget, "steps/s", 20)        # speed: sets the play interval; the picture itself does not change
    set_slider(widget, "step", 0)
    now = wait_for_new_picture(widget, picture(widget)) if not title(picture(widget)).startswith("step 0") else picture(widget)
    widget.locator(".widget-play button").first.click()
    last = wait_for_new_picture(widget, now)
    assert not title(last).startswith("step 0 of")
    for label, value, shown in (("seq len", 20, "n_q = 20"), ("block_m", 4, "block_m = 4"), ("block_n", 5, "block_n = 5")):
        before = picture(widget)
        set_slider(widget, label, value)
        now = wait_for_new_picture(widget, before)
        assert shown in now, f"{label} = {value} is not drawn"
    before = picture(widget)
    widget.locator(".widget-checkbox", has_text=re.compile("causal")).locator("input[type=checkbox]").click()
    assert "not causal" in wait_for_new_picture(widget, before)
    return ["step", "play", "steps/s", "seq len", "block_m", "block_n", "causal"]


def exercise_block_table_widget(views) -> list[str]:
    """Operate every control of the last view of a BlockTableWidget; every view must follow."""
    widget = views[-1]

    def click(label: str) -> str:
        before = picture(widget)
        widget.locator("button.widget-button", has_text=re.compile(f"^{label}$")).click()
        now = wait_for_new_picture(widget, before)
        for other in views[:-1]:
            assert picture(other) == now or wait_for_new_picture(other, picture(other)) == now
        return now

    tokens = control(widget, "widget-text", "tokens").locator("input")
    tokens.fill("5")
    tokens.press("Tab")
    sequences = int(re.match(r"(\d+) sequence", title(picture(widget))).group(1))
    now = click("add")
    assert title(now).startswith(f"{sequences + 1} sequence") and "5 tokens" in now, title(now)
    first = control(widget, "widget-dropdown", "sequence").locator("select")
    first.select_option(index=0)
    chosen = first.evaluate("s => s.options[s.selectedIndex].text")
    now = click("append")
    assert f"append {chosen}" in now
    now = click("fork")
    assert f"fork {chosen}" in now
    now = click("free")
    assert "free " in now
    return ["tokens", "add", "sequence", "append", "fork", "free"]


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_lecture(page, lab, screenshots, path):
    page, errors = page
    nb = nbformat.read(path, as_version=4)
    open_notebook(page, lab, f"notebooks/{path.name}")
    check_stored_outputs(page, nb)
    full_page_screenshot(page, screenshots / f"{path.stem}-stored.png")

    try:
        run_all(page)
    except Exception:
        full_page_screenshot(page, screenshots / f"{path.stem}-failed.png")
        raise
    stderr = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert stderr.count() == 0, f"error output after Run All: {stderr.first.inner_text()[:500]}"
    assert page.get_by_text("Error displaying widget").count() == 0
    views = live_views(nb)
    dom = cells(page)
    widgets = {i: dom.nth(i).locator(".jp-OutputArea-output .widget-vbox").first for i in views}
    for i, widget in widgets.items():
        assert "<svg" in picture(widget), f"cell {nb.cells[i].id}: the live {views[i]} shows no picture"

    operated = []
    if path.stem == first_lecture_with("TileWidget"):
        operated += exercise_tile_widget(next(w for i, w in widgets.items() if views[i] == "TileWidget"))
    if path.stem == first_lecture_with("BlockTableWidget"):
        operated += exercise_block_table_widget([w for i, w in widgets.items() if views[i] == "BlockTableWidget"])
    full_page_screenshot(page, screenshots / f"{path.stem}.png")
    if operated:
        print(f"{path.stem}: operated {', '.join(operated)}")
    assert not errors.messages, "\n".join(errors.messages)


def test_an_exercise_opens_from_the_file_browser(page, lab, screenshots):
    page, errors = page
    page.goto(f"{lab['url']}/lab?reset&token={lab['token']}")
    listing = page.locator(".jp-DirListing-content")
    listing.locator(".jp-DirListing-item", has_text=re.compile(r"^exercises$")).dblclick()
    exercise = sorted(p.name for p in (ROOT / "exercises").glob("*.ipynb"))[0]
    listing.locator(".jp-DirListing-item", has_text=exercise).dblclick()
    page.locator(".jp-NotebookPanel .jp-MarkdownOutput").first.wait_for()
    assert page.locator(".lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel", has_text=exercise).count() >= 1
    full_page_screenshot(page, screenshots / f"file-browser-{Path(exercise).stem}.png")
    assert not errors.messages, "\n".join(errors.messages)
