"""The landing page and lectures 02, 06 and 10 read in headless Chromium, on a desktop and on a phone, as served
from the built site; and the site's search.

Each page must typeset its math with the site's own MathJax (no raw ``\\(`` left, nothing fetched from elsewhere),
log no error, and fit a 390 px wide screen without scrolling sideways. Screenshots (the top of each page, and the
screen that shows its first widget picture) go to ``tests/site/screenshots/``.
"""

from __future__ import annotations

import pytest

PAGES = ["index", "notebooks/02_tiling_and_online_softmax", "notebooks/06_paged_kv_allocator",
         "notebooks/10_mini_serving_engine"]
VIEWPORTS = {"desktop": {"width": 1400, "height": 1000}, "phone": {"width": 390, "height": 844}}

UNTYPESET = """() => [...document.querySelectorAll(".math")]
                  .filter(m => !m.querySelector("mjx-container")).map(m => m.textContent.slice(0, 60))"""


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=str)
@pytest.mark.parametrize("name", PAGES, ids=lambda n: n.split("/")[-1][:5])
def test_page_renders_offline_with_typeset_math(chromium, server, screenshots, name, viewport):
    context = chromium.new_context(viewport=VIEWPORTS[viewport], is_mobile=viewport == "phone")
    page = context.new_page()
    errors, elsewhere = [], []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("requestfailed", lambda request: errors.append(f"failed: {request.url}"))
    page.on("response", lambda response: response.status >= 400 and errors.append(f"{response.status}: {response.url}"))
    page.on("request", lambda request: request.url.startswith(server) or request.url.startswith("data:")
            or elsewhere.append(request.url))
    try:
        page.goto(f"{server}{name}.html", wait_until="load")
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30_000)
        page.evaluate("() => MathJax.startup.promise")
        assert page.locator("mjx-container").count() > 0, f"{name}: no formula typeset"
        assert page.evaluate(UNTYPESET) == [], f"{name}: math left untypeset"
        text = page.inner_text("body")      # the navigation too: lecture 01's title has math
        assert "\\(" not in text and "\\[" not in text, f"{name}: raw TeX delimiters in the page's text"
        pictures = page.evaluate("""() => [...document.querySelectorAll("main img")]
                                     .map(i => i.complete && i.naturalWidth > 0)""")
        assert pictures and all(pictures), f"{name}: {pictures.count(False)} of {len(pictures)} pictures do not load"
        if viewport == "phone":
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{name}: the page is {overflow} px wider than a 390 px phone screen"
        stem = name.split("/")[-1]
        page.screenshot(path=str(screenshots / f"{stem}-{viewport}.png"))
        widget = page.locator("img.pagedlab-live-view")        # the first widget picture, as a reader sees it
        if widget.count():
            widget.first.scroll_into_view_if_needed()
            page.screenshot(path=str(screenshots / f"{stem}-{viewport}-widget.png"))
        assert not elsewhere, f"{name}: requests that leave the site: {elsewhere}"
        assert not errors, f"{name}: the page logged errors: {errors}"
    finally:
        context.close()


def test_search_finds_the_lectures_offline(chromium, server):
    """The site's own search (Sphinx's index, no service) finds the lecture that teaches the online softmax."""
    page = chromium.new_page()
    try:
        page.goto(f"{server}search.html?q=online+softmax", wait_until="load")
        page.wait_for_selector("#search-results ul li", timeout=30_000)
        found = page.eval_on_selector_all("#search-results ul li a", "links => links.map(a => a.getAttribute('href'))")
        assert any("02_tiling_and_online_softmax" in link for link in found), f"search found {found[:10]}"
    finally:
        page.close()
