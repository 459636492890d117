"""Driving JupyterLab 4 and core ipywidgets 8 from Playwright, the way a learner would: menus, clicks, typing."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Locator, Page

# Run All of one lecture, Triton's interpreter on a small shared CPU included.
RUN_TIMEOUT_MS = int(os.environ.get("PAGEDLAB_BROWSER_RUN_TIMEOUT_S", 900)) * 1000
UI_TIMEOUT_MS = 60_000
SVG_IMG = "img[src^='data:image/svg+xml;base64,']"


class PageErrors:
    """Console errors and uncaught exceptions of one page, collected as they happen."""

    def __init__(self, page: Page) -> None:
        self.messages: list[str] = []
        page.on("console", lambda msg: self.messages.append(f"console: {msg.text}") if msg.type == "error" else None)
        page.on("pageerror", lambda error: self.messages.append(f"page error: {error}"))


def open_notebook(page: Page, lab: dict, relpath: str) -> None:
    """Open ``relpath`` (relative to the server's root) in a fresh workspace; wait for its cells and kernel."""
    page.goto(f"{lab['url']}/lab/tree/{relpath}?reset&token={lab['token']}")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=UI_TIMEOUT_MS)
    wait_for_kernel_idle(page)


def cells(page: Page) -> Locator:
    return page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")


def wait_for_kernel_idle(page: Page, timeout_ms: int = UI_TIMEOUT_MS) -> None:
    page.locator(".jp-NotebookPanel:visible .jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(
        timeout=timeout_ms)


def trust_notebook(page: Page) -> None:
    """Command palette ▸ Trust Notebook ▸ Trust: its stored outputs render again, trusted (HTML not sanitized)."""
    page.locator(".jp-NotebookPanel:visible .jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+Shift+C")
    page.locator(".lm-CommandPalette-input").fill("Trust Notebook")
    page.locator(".lm-CommandPalette-item", has_text=re.compile(r"^Trust Notebook")).first.click()
    page.locator(".jp-Dialog-button", has_text=re.compile(r"^Trust$")).click()
    page.locator(".jp-Dialog").wait_for(state="detached", timeout=UI_TIMEOUT_MS)


def run_all(page: Page, before: int | None = None) -> None:
    """Run ▸ Run All Cells from the menu bar, then wait until no cell is queued or running and the kernel is idle.

    ``before``: only the cells above the cell of that index, which is selected first (Run ▸ Run All Above Selected
    Cell)."""
    if before is not None:
        cells(page).nth(before).locator(".jp-InputPrompt").first.click()
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    label = "Run All Cells" if before is None else "Run All Above Selected Cell"
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{label}$")).click()
    page.wait_for_function(
        """n => {
            const cells = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')];
            const prompts = cells.slice(0, n ?? cells.length).filter(c => c.classList.contains('jp-CodeCell'))
                .map(c => c.querySelector('.jp-InputArea-prompt'));
            return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p.textContent.trim()));
        }""", arg=before, timeout=RUN_TIMEOUT_MS, polling=1000)
    wait_for_kernel_idle(page)


def pictures_render(output: Locator) -> bool:
    """Every data-URI SVG <img> in ``output`` has loaded and has a size (a broken image has naturalWidth 0)."""
    return output.evaluate(
        f"""el => [...el.querySelectorAll("{SVG_IMG}")].every(i => i.complete && i.naturalWidth > 0)""")


def full_page_screenshot(page: Page, path: Path) -> None:
    """Screenshot the whole notebook: JupyterLab scrolls inside a panel, so grow the window until the last cell fits.

    (The notebook's padding after its last cell grows with the window, so the scroll height cannot be used.)
    """
    size = page.viewport_size
    missing = """() => {
        const outer = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
        const cells = outer ? outer.querySelectorAll('.jp-Cell') : [];
        if (!cells.length) return 0;
        outer.scrollTop = 0;
        const bottom = cells[cells.length - 1].getBoundingClientRect().bottom;
        return Math.ceil(bottom - outer.getBoundingClientRect().bottom) + 40;
    }"""
    for _ in range(5):   # the outputs lay out again in the taller window
        grow = page.evaluate(missing)
        if grow <= 0:
            break
        page.set_viewport_size({"width": size["width"], "height": min(page.viewport_size["height"] + grow, 30_000)})
        page.wait_for_timeout(300)
    page.evaluate(missing)   # scrolls to the top
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)


def shut_down_kernels(lab: dict) -> None:
    """Delete every session (and so its kernel) through the REST API, as closing and shutting down would."""
    def call(method: str, path: str) -> bytes:
        request = urllib.request.Request(f"{lab['url']}{path}", method=method,
                                         headers={"Authorization": f"token {lab['token']}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.read()

    for session in json.loads(call("GET", "/api/sessions")):
        call("DELETE", f"/api/sessions/{session['id']}")


# ---------------------------------------------------------------------------------------------- ipywidgets 8


def control(widget: Locator, kind: str, label: str) -> Locator:
    """The control of class ``kind`` (``widget-hslider``, ``widget-checkbox``, ...) whose description is ``label``."""
    return widget.locator(f".{kind}").filter(
        has=widget.page.locator(".widget-label", has_text=re.compile(f"^{re.escape(label)}$"))).first


def set_slider(widget: Locator, label: str, value: int) -> None:
    """Type ``value`` into the slider's editable readout and press Enter, as a learner can."""
    readout = control(widget, "widget-hslider", label).locator(".widget-readout")
    readout.click()
    readout.press("Control+A")
    readout.type(str(value))
    readout.press("Enter")


def picture(widget: Locator) -> str:
    """The SVG the live view shows now."""
    return widget.locator(".widget-html-content").first.inner_html()


def wait_for_picture(widget: Locator, shows, timeout_s: float = 120) -> str:
    """Wait until the live picture satisfies ``shows(svg)``; return it (the kernel redraws, the comm carries it)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        now = picture(widget)
        if "<svg" in now and shows(now):
            return now
        widget.page.wait_for_timeout(100)
    raise AssertionError(f"the picture never showed what was expected; it shows:\n{picture(widget)[:300]}")
