"""What a newcomer sees in JupyterLab, in a real browser: every lecture, its stored pictures, Run All, the widgets.

For each lecture in ``notebooks/`` (found, not listed): open it in a fresh, untrusted session and check that every
stored picture renders as an image (no SVG text blob, no "Error displaying widget"), and again once trusted (for the
lectures with widgets). In the first lecture: Run All from the menu; in each lecture with a live view, the cells
through the one that drives its first live view of each class (Run All Above Selected Cell, or Run All where that
is the last code cell); wait until they have run; check there is no error output and no console or page error.
(Every lecture's cells run under nbval in ``make test``, and what they draw is a stored picture, checked here: a
live view is what only a browser shows, and the page draws every view of one class with the same code.) In the
first lecture that shows each live widget (the tile widget in 02, the block-table widget in 06) run every view of
it, operate every control and check the picture changes. Last, open an exercise from the file browser. A full-page
screenshot of each notebook, as stored and after Run All, goes to ``tests/browser/screenshots/`` (or
``$PAGEDLAB_SCREENSHOTS``).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from jlab import (SVG_IMG, PageErrors, cells, control, full_page_screenshot, open_notebook, picture,
                  pictures_render, run_all, set_slider, shut_down_kernels, trust_notebook, wait_for_picture)
from stored import SVG_IMG as STORED_IMG

from lab import ROOT
from pagedlab.widgets._base import svg_title

# Last lecture first: the later ones run longest (10 builds engines), so with two workers (make test-browser) the
# short ones fill in beside them instead of leaving one worker alone at the end.
LECTURES = sorted((ROOT / "notebooks").glob("*.ipynb"), reverse=True)


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


def shown_live(nb: nbformat.NotebookNode, operated: set[str]) -> dict[int, str]:
    """The live views the test runs: the first of each class, and every view of a class whose controls it operates
    (the block-table views of one manager must follow the one operated). A later view of a class draws with the
    same code in the page as the first: what it shows differs by the kernel's state, which nbval checks (lecture
    10's second engine view follows the real model, after a minute of measurements that draw no live view)."""
    shown = {}
    for i, kind in sorted(live_views(nb).items()):
        if kind in operated or kind not in shown.values():
            shown[i] = kind
    return shown


def last_driven(nb: nbformat.NotebookNode, views: dict[int, str]) -> int | None:
    """The index of the cell after the code cell that drives the last of ``views`` (the first code cell below it), or
    None where no code cell follows that one: the cells those views need are those above it."""
    driver = next((i for i in range(max(views) + 1, len(nb.cells)) if nb.cells[i].cell_type == "code"), None)
    rest = [i for i in range(driver + 1, len(nb.cells)) if nb.cells[i].cell_type == "code"] if driver else []
    return driver + 1 if rest else None


def first_lecture_with(kind: str) -> str | None:
    return next((p.stem for p in sorted(LECTURES) if kind in live_views(nbformat.read(p, as_version=4)).values()), None)


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
        expected = len(STORED_IMG.findall(html)) + html.count("<svg")   # bare SVG is a picture that must show too
        if not expected:
            continue
        outputs = dom.nth(i).locator(".jp-OutputArea-output")
        assert outputs.locator(SVG_IMG).count() == expected, f"cell {cell.id}: stored pictures not shown as images"
        assert pictures_render(dom.nth(i)), f"cell {cell.id}: a stored picture does not load"
        text = outputs.locator(".jp-RenderedHTMLCommon").all_inner_texts()
        assert not "".join(text).strip(), f"cell {cell.id}: a picture shows as text: {''.join(text)[:200]!r}"
    assert page.get_by_text("Error displaying widget").count() == 0


def exercise_tile_widget(widget) -> list[str]:
    """Operate every control of a TileWidget and wait for the picture each should give; return the controls."""
    def at_start(svg: str) -> bool:
        return title(svg).startswith("step 0 of")

    def at_end(svg: str) -> bool:
        match = re.match(r"step (\d+) of (\d+)", title(svg))
        return bool(match) and match.group(1) == match.group(2) != "0"

    set_slider(widget, "step", 0)
    wait_for_picture(widget, at_start)
    widget.locator(".widget-play button").first.click()                        # play: runs to the last step
    wait_for_picture(widget, at_end)
    set_slider(widget, "steps/s", 20)        # speed: sets the play interval; the picture itself does not change
    set_slider(widget, "step", 0)
    wait_for_picture(widget, at_start)
    widget.locator(".widget-play button").first.click()
    wait_for_picture(widget, at_end)
    for label, value, shown in (("seq len", 20, "n_q = 20,"), ("block_m", 4, "block_m = 4,"),
                                ("block_n", 5, "block_n = 5,")):
        set_slider(widget, label, value)
        wait_for_picture(widget, lambda svg: shown in svg)
    widget.locator(".widget-checkbox", has_text=re.compile("causal")).locator("input[type=checkbox]").click()
    wait_for_picture(widget, lambda svg: "not causal" in svg)
    return ["step", "play", "steps/s", "seq len", "block_m", "block_n", "causal"]


def exercise_block_table_widget(views) -> list[str]:
    """Operate every control of the last view of a BlockTableWidget; every view must follow."""
    widget = views[-1]

    def click(label: str, shows) -> None:
        widget.locator("button.widget-button", has_text=re.compile(f"^{label}$")).click()
        wait_for_picture(widget, shows)
        for other in views[:-1]:
            # Compare with the operated view's picture as it is now, not as first seen: a redraw may still follow.
            wait_for_picture(other, lambda svg: svg == picture(widget))

    tokens = control(widget, "widget-text", "tokens").locator("input")
    tokens.fill("5")
    tokens.press("Tab")
    sequences = int(re.match(r"(\d+) sequence", title(picture(widget))).group(1))
    def count(n: int):
        return lambda svg: re.match(rf"{n} sequences? ", title(svg)) is not None

    click("add", lambda svg: count(sequences + 1)(svg) and ": 5 tokens" in svg)
    menu = control(widget, "widget-dropdown", "sequence").locator("select")
    menu.select_option(index=0)
    chosen = menu.evaluate("s => s.options[s.selectedIndex].text")
    click("append", lambda svg: f"append {chosen}:" in svg)
    click("fork", lambda svg: count(sequences + 2)(svg) and f"fork {chosen} →" in svg)
    click("free", lambda svg: count(sequences + 1)(svg) and re.search(r"free [^<]*: drops blocks", svg) is not None)
    return ["tokens", "add", "sequence", "append", "fork", "free"]


@pytest.mark.parametrize("path", LECTURES, ids=lambda p: p.stem)
def test_lecture(page, lab, screenshots, path):
    page, errors = page
    nb = nbformat.read(path, as_version=4)
    open_notebook(page, lab, f"notebooks/{path.name}")
    check_stored_outputs(page, nb)                  # a fresh clone: untrusted, its HTML sanitized
    full_page_screenshot(page, screenshots / f"{path.stem}-stored.png")
    if live_views(nb):
        trust_notebook(page)
        check_stored_outputs(page, nb)              # trusted: no sanitizer, and a widget view would need state

    if not live_views(nb) and path != min(LECTURES):
        assert not errors.messages, "\n".join(errors.messages)
        return
    operated = {kind for kind in ("TileWidget", "BlockTableWidget") if path.stem == first_lecture_with(kind)}
    views = shown_live(nb, operated)
    try:
        run_all(page, last_driven(nb, views) if views else None)
    except Exception:
        full_page_screenshot(page, screenshots / f"{path.stem}-failed.png")
        raise
    stderr = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert stderr.count() == 0, f"error output after Run All: {stderr.first.inner_text()[:500]}"
    assert page.get_by_text("Error displaying widget").count() == 0
    dom = cells(page)
    widgets = {i: dom.nth(i).locator(".jp-OutputArea-output .widget-vbox").first for i in views}
    for i, widget in widgets.items():
        assert "<svg" in picture(widget), f"cell {nb.cells[i].id}: the live {views[i]} shows no picture"

    controls = []
    if "TileWidget" in operated:
        controls += exercise_tile_widget(next(w for i, w in widgets.items() if views[i] == "TileWidget"))
    if "BlockTableWidget" in operated:
        controls += exercise_block_table_widget([w for i, w in widgets.items() if views[i] == "BlockTableWidget"])
    full_page_screenshot(page, screenshots / f"{path.stem}.png")
    if controls:
        print(f"{path.stem}: operated {', '.join(controls)}")
    assert not errors.messages, "\n".join(errors.messages)


def test_an_exercise_opens_from_the_file_browser(page, lab, screenshots):
    page, errors = page
    page.goto(f"{lab['url']}/lab?reset&token={lab['token']}")
    page.locator(".jp-FileBrowser .jp-BreadCrumbs-home").click()               # the server's root: the repository
    listing = page.locator(".jp-FileBrowser .jp-DirListing-content")
    listing.locator(".jp-DirListing-itemText", has_text=re.compile(r"^exercises$")).dblclick()
    exercise = sorted(p.name for p in (ROOT / "exercises").glob("*.ipynb"))[0]
    listing.locator(".jp-DirListing-itemText", has_text=re.compile(f"^{re.escape(exercise)}$")).dblclick()
    page.locator(".jp-NotebookPanel .jp-MarkdownOutput").first.wait_for()
    assert page.locator(".lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel", has_text=exercise).count() >= 1
    full_page_screenshot(page, screenshots / f"file-browser-{Path(exercise).stem}.png")
    assert not errors.messages, "\n".join(errors.messages)
