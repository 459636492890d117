"""The landing page, lectures 02, 04b, 06 and 10 and exercise 02 read in headless Chromium, on a desktop and on a
phone, as served from the built site; the menus tapped; and the site's search.

Each page must typeset its math with the site's own MathJax (no raw ``\\(`` left, nothing fetched from elsewhere),
log no error, fit a 390 px wide screen without scrolling sideways, and fit each display equation in its column.
Screenshots (the top of each page, the screen that shows its first widget picture, and each menu open) go to
``tests/site/screenshots/``.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

PAGES = ["index", "notebooks/02_tiling_and_online_softmax", "notebooks/04b_flash_attention_backward_and_speed",
         "notebooks/06_paged_kv_allocator", "notebooks/10_mini_serving_engine", "exercises/ex02_online_softmax"]
VIEWPORTS = {"desktop": {"width": 1400, "height": 1000}, "phone": {"width": 390, "height": 844}}

# Elements whose right edge passes the screen's, unless an ancestor that scrolls sideways holds them within it.
# (Under a phone's emulation the page's own width grows with its content, so window.innerWidth cannot tell.)
WIDER_THAN_SCREEN = """(screen) => {
  const inside = (e) => { for (let a = e.parentElement; a; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== "visible" && a.getBoundingClientRect().right <= screen + 1) return true; }
    return false; };
  return [...document.querySelectorAll("body *")].filter(e => { const r = e.getBoundingClientRect();
      return r.width > 0 && r.right > screen + 1 && getComputedStyle(e).visibility !== "hidden" && !inside(e); })
    .map(e => `${e.tagName.toLowerCase()}.${e.className} to ${Math.round(e.getBoundingClientRect().right)} px: `
              + (e.textContent || "").trim().slice(0, 60)).slice(0, 5); }"""
# Display equations whose typeset width passes their column's edge (a scroll bar hidden until touched is no way to
# read the end of a formula).
MATH_PAST_COLUMN = """() => [...document.querySelectorAll('mjx-container[display="true"]')].map(c => {
    const column = c.parentElement.getBoundingClientRect(), math = c.firstElementChild.getBoundingClientRect();
    return {over: Math.round(math.right - column.right), width: Math.round(math.width),
            column: Math.round(column.width)};
  }).filter(m => m.over > 1)"""
# The landing page's widget pictures against the article's column (side by side they were 392 of 784 px).
PICTURE_WIDTHS = """() => { const article = document.querySelector(".bd-article"), style = getComputedStyle(article);
  const column = article.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return [...article.querySelectorAll('img[src*="_images/"]')].map(i => i.getBoundingClientRect().width / column); }"""

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
        if page.locator(".math").count():       # Sphinx loads MathJax on the pages that have math
            page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                                   timeout=30_000)
            page.evaluate("() => MathJax.startup.promise")
            assert page.locator("mjx-container").count() > 0, f"{name}: no formula typeset"
        assert page.evaluate(UNTYPESET) == [], f"{name}: math left untypeset"
        text = page.inner_text("body")      # the navigation too: lecture 01's title had math
        assert "\\(" not in text and "\\[" not in text, f"{name}: raw TeX delimiters in the page's text"
        pictures = page.evaluate("""() => [...document.querySelectorAll("main img")]
                                     .map(i => i.complete && i.naturalWidth > 0)""")
        assert pictures and all(pictures), f"{name}: {pictures.count(False)} of {len(pictures)} pictures do not load"
        if viewport == "phone":
            wider = page.evaluate(WIDER_THAN_SCREEN, VIEWPORTS["phone"]["width"])
            assert not wider, f"{name}: wider than a 390 px phone screen: {wider}"
        assert page.evaluate(MATH_PAST_COLUMN) == [], f"{name}: display math past its column's edge"
        if name == "index":
            widths = page.evaluate(PICTURE_WIDTHS)
            assert len(widths) >= 2 and min(widths) >= 0.9, (
                f"the landing page's pictures take {[f'{w:.0%}' for w in widths]} of the column's width")
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


@pytest.mark.parametrize("width", [390, 900, 1400], ids=lambda w: f"{w}px")
def test_menus_open_and_their_links_work(chromium, server, screenshots, width):
    """The ☰ button opens the course's navigation (a dialog on a phone or a tablet; on a desktop it folds the
    sidebar away and back), whose links work; on a narrow screen "Contents" opens the page's sections. Before,
    both buttons did nothing (the themes' handlers sat on a hidden duplicate button)."""
    phone = width == 390
    context = chromium.new_context(viewport={"width": width, "height": 844}, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    try:
        page.goto(f"{server}solutions/ex07_copy_on_write.html", wait_until="load")
        menu = page.locator(".primary-toggle:visible")
        expect(menu).to_have_count(1)
        press = menu.tap if phone else menu.click
        target = 'a[href$="exercises/ex10_scheduler_step.html"]'
        if width >= 992:
            link = page.locator(f"#pst-primary-sidebar {target}")
            expect(link).to_be_visible()
            press()
            expect(link).to_be_hidden(timeout=3_000)
            press()
        else:
            link = page.locator(f"#pst-primary-sidebar-modal {target}")
            press()
        expect(link).to_be_visible(timeout=3_000)
        page.screenshot(path=str(screenshots / f"solution-menu-{width}px.png"))
        link.click()
        page.wait_for_url("**/exercises/ex10_scheduler_step.html", timeout=10_000)
        contents = page.locator(".secondary-toggle:visible")
        if width < 1200:            # the theme shows the page's sections beside it from 1200 px on
            expect(contents).to_have_count(1)
            (contents.tap if phone else contents.click)()
            section = page.locator("#pst-secondary-sidebar-modal a.nav-link").first
            expect(section).to_be_visible(timeout=3_000)
            section.click()
            page.wait_for_function("() => location.hash.length > 1", timeout=5_000)
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
