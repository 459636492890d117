"""Sphinx configuration of the course site: the stored notebooks rendered as they are, never executed.

``docs/site/build_site.py`` (``make site``) lays out the source folder this file configures (``index.md``, copies of
``notebooks/``, ``exercises/``, ``solutions/``, ``docs/`` and ``README.md``) and puts MathJax into
its ``_vendor`` folder, served as ``_static/mathjax``; run Sphinx through it, not on its own.

The repository, the branch and so every launch button and link back to a notebook come from
``pagedlab.notebook.REPO_URL``, the one line a publisher changes.
"""

from __future__ import annotations

import datetime
import json
import os
import posixpath
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import pagedlab  # noqa: E402
from pagedlab.notebook import REPO_URL  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import course_map  # noqa: E402
import notebook_pages  # noqa: E402
from site_links import BRANCH, repository, site_url  # noqa: E402

project = "pagedlab"
author = "the pagedlab authors"
copyright = "the pagedlab authors, MIT license"
html_title = "pagedlab: from naive attention to a paged KV cache"
version = release = pagedlab.__version__
# The day the site was built (UTC), or SOURCE_DATE_EPOCH's for a reproducible build: the footer says which release
# and which day a page shows.
BUILT = datetime.datetime.fromtimestamp(int(os.environ.get("SOURCE_DATE_EPOCH", 0)) or datetime.datetime.now(
    datetime.timezone.utc).timestamp(), datetime.timezone.utc).date().isoformat()

extensions = ["myst_nb"]
root_doc = "index"
# The landing page, the notebooks and the guides that build_site.py copies into docs/ are pages; README.md is there
# for the course map that index.md includes.
exclude_patterns = ["README.md", "_build", "**/.ipynb_checkpoints"]
# Pages keep their repository paths (notebooks/02_tiling_and_online_softmax.html): the README's links and the
# launch buttons map one to one.
html_copy_source = False          # the .ipynb beside each page is the download; no second copy under _sources/
html_show_sourcelink = False

# The stored outputs are the CPU run that `pytest --nbval` keeps honest: render them, run nothing.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
# Any warning fails `make site` and `make test-site` (sphinx-build -W); none is suppressed.

# MathJax 4, vendored from the npm registry by build_site.py into _static/mathjax: nothing is fetched from a CDN when
# a page is read. Fonts come from the same folder; the accessibility extensions that fetch speech rules are off.
mathjax_path = "mathjax/tex-chtml.js"
mathjax4_config = {
    "loader": {"paths": {"fonts": "[mathjax]/fonts"}},
    # A display equation wider than its column breaks into lines (ex02's update rule was 929 px in a 784 px column,
    # its end cut off); pagedlab.css makes the width right, and lets one that cannot break scroll inside its box.
    "output": {"displayOverflow": "linebreak"},
    "options": {"enableSpeech": False, "enableBraille": False, "enableEnrichment": False,
                "enableExplorer": False, "menuOptions": {"settings": {"enrich": False, "speech": False,
                                                                       "braille": False}}},
}

html_theme = "sphinx_book_theme"
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"      # a browser asks for one; without it every page logs a 404
html_css_files = ["pagedlab.css"]
html_js_files = [("pagedlab-sidebar-toggles.js", {"defer": "defer"})]
html_theme_options = {
    "repository_url": repository(REPO_URL),
    "repository_branch": BRANCH,
    "path_to_docs": "",
    "use_repository_button": False,   # conf.py links the repository, or on a notebook's page the notebook itself
    "use_source_button": False,       # it shows the notebook's JSON (?plain=1): conf.py links the rendered notebook
    "use_issues_button": False,
    "use_edit_page_button": False,
    "use_download_button": False,     # its .ipynb link points at _sources/, which html_copy_source drops
    "launch_buttons": {"colab_url": "https://colab.research.google.com", "binderhub_url": "https://mybinder.org",
                       "notebook_interface": "jupyterlab"},
    "show_toc_level": 2,
    # The landing page is one wide table (the course map): no "Contents" column beside it.
    "secondary_sidebar_items": {"**": ["page-toc"], "index": []},
    "home_page_in_toc": True,
    "extra_footer": f'<p class="pagedlab-release">pagedlab {version} · built {BUILT}</p>',
}
html_baseurl = site_url(REPO_URL)
# Light by default: the figures and widget pictures were drawn for a white page.
html_context = {"default_mode": "light"}


def _notebook_pages(app, docname, content):
    """Change what a notebook's page shows, not the notebook (see ``notebook_pages``): plain-text titles, no nbval
    markers, no install cell, alt text for figures, and on an exercise or solution page a banner that links its
    lecture or exercise."""
    path = app.env.doc2path(docname)
    if path.suffix != ".ipynb":
        return
    notebook = json.loads(content[0])
    notebook_pages.plain_headings(notebook, docname)
    notebook_pages.strip_nbval_markers(notebook)
    notebook_pages.hide_install_cell(notebook)
    notebook_pages.figure_alt_text(notebook)
    folder, stem = docname.split("/", 1)
    srcdir = Path(app.srcdir)
    if folder == "solutions":
        notebook_pages.mark_solution(notebook, f"{stem}.ipynb", _title(srcdir / "exercises" / f"{stem}.ipynb"))
    elif folder == "exercises":
        lectures = sorted(p.stem for p in (srcdir / "notebooks").glob("*.ipynb"))
        lecture = course_map.lecture_of(stem, lectures)
        notebook_pages.link_lecture(notebook, f"{lecture}.ipynb", _title(srcdir / "notebooks" / f"{lecture}.ipynb"))
    content[0] = json.dumps(notebook)


def _title(path: Path) -> str:
    """The plain-text title of the notebook at ``path``."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook_pages.plain_headings(notebook, str(path))
    return notebook_pages.title(notebook)


# A Markdown link or picture with a relative target: [text](target) or ![alt](target), target without a scheme.
_RELATIVE_LINK = re.compile(r"(\]\()(?![a-z][a-z0-9+.-]*:|#|/)([^)\s#]+)(#[^)\s]*)?(\))")


def _guide_links(app, docname, content):
    """A guide page (``docs/*.md``) links the repository's files as GitHub shows them (``../README.md``,
    ``../Makefile``): only the notebooks and the guides are pages of the site. Links to those, and docs/'s pictures,
    stay as they are."""
    if not docname.startswith("docs/") or app.env.doc2path(docname).suffix != ".md":
        return

    def retarget(link: re.Match) -> str:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(docname), link[2]))
        stem, suffix = posixpath.splitext(path)
        page = suffix in {".md", ".ipynb"} and stem in app.env.found_docs
        copied = suffix not in {".md", ".ipynb"} and (Path(app.srcdir) / path).is_file()     # docs/'s pictures
        if page or copied:
            return link[0]
        kind = "tree" if (ROOT / path).is_dir() else "blob"
        return f"{link[1]}{repository(REPO_URL)}/{kind}/{BRANCH}/{path}{link[3] or ''}{link[4]}"

    content[0] = _RELATIVE_LINK.sub(retarget, content[0])


# A Markdown table of pictures: a row of captions, the |---| row, then a row of ![alt](docs/<name>.png).
_PICTURE_TABLE = re.compile(r"^\|(?P<captions>.+)\|[ \t]*\n\|[-| :]+\|[ \t]*\n"
                            r"\|(?P<pictures>(?:[ \t]*!\[[^\]]*\]\([^)]+\)[ \t]*\|)+)[ \t]*$", re.MULTILINE)
_PICTURE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<path>[^)]+)\)")


def _widget_figures(app, relative_path, parent_docname, content):
    """On the landing page, show the README's table of widget pictures as one figure per picture, the column's
    width, each captioned and linking its full-size picture (side by side they were 392 and 357 px wide on a
    desktop, 188 and 135 px on a phone). The README keeps its table."""
    def figures(table: re.Match) -> str:
        captions = [c.strip() for c in table["captions"].split("|")]
        pictures = _PICTURE.findall(table["pictures"])
        if len(captions) != len(pictures):
            return table[0]
        return "\n".join(f"```{{figure}} {path}\n:alt: {alt}: {caption.replace('`', '')}\n"
                         f":target: _images/{Path(path).name}\n:figclass: pagedlab-widget-picture\n\n{caption}\n```\n"
                         for caption, (alt, path) in zip(captions, pictures))

    if parent_docname == root_doc and Path(relative_path).name == "README.md":
        content[0] = _PICTURE_TABLE.sub(figures, content[0])


def _github_buttons(app, pagename, templatename, context, doctree):
    """A notebook's page links its notebook on GitHub (branch main) and the ``.ipynb`` copied beside the page, to
    download; any other page links the repository."""
    buttons = context.setdefault("header_buttons", [])
    github = {"type": "link", "icon": "fab fa-github", "classes": "pst-navbar-icon"}
    if pagename not in app.env.all_docs or app.env.doc2path(pagename).suffix != ".ipynb":
        buttons.insert(0, {**github, "url": repository(REPO_URL), "tooltip": "The course's repository",
                           "label": "repository-button"})
        return
    buttons.insert(0, {"type": "link", "url": f"{Path(pagename).name}.ipynb", "icon": "fas fa-download",
                       "tooltip": "Download this notebook (.ipynb)", "label": "download-notebook-button",
                       "classes": "pst-navbar-icon"})
    buttons.insert(1, {**github, "url": f"{repository(REPO_URL)}/blob/{BRANCH}/{pagename}.ipynb",
                       "tooltip": "This notebook on GitHub", "label": "notebook-source-button"})


def _previous_next(app, pagename, templatename, context, doctree):
    """Previous and Next stay within a page's section of the navigation: the course runs lecture, its exercises,
    next lecture (the toctree's order), and ends at the last exercise rather than leading into the solutions or the
    guides; each of those sections runs on its own. (Sphinx's own links run through every toctree in turn.)"""
    folder = pagename.split("/", 1)[0]
    folders = {"notebooks", "exercises"} if folder in {"notebooks", "exercises"} else {folder}
    section = [doc for doc in app.env.toctree_includes.get(root_doc, []) if doc.split("/", 1)[0] in folders]
    if pagename not in section:
        return
    where = section.index(pagename)

    def link(doc):
        title = app.builder.render_partial(app.env.titles[doc])["title"]
        return {"link": app.builder.get_relative_uri(pagename, doc), "title": title}

    first_of_course = folder in {"notebooks", "exercises"} and where == 0
    context["prev"] = link(section[where - 1]) if where > 0 else (link(root_doc) if first_of_course else None)
    context["next"] = link(section[where + 1]) if where + 1 < len(section) else None


def _copy_notebooks(app, exception):
    """Copy each rendered notebook beside its page, for the download button."""
    if exception is not None or app.builder.name != "html":
        return
    for docname in app.env.all_docs:
        source = app.env.doc2path(docname)
        if source.suffix == ".ipynb":
            target = Path(app.outdir) / f"{docname}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    sources = Path(app.outdir) / "_sources"
    if sources.is_dir() and not any(sources.iterdir()):
        sources.rmdir()       # left empty by html_copy_source = False


def _serve_vendored(app, config):
    """Serve the source folder's ``_vendor`` (MathJax, put there by build_site.py) as static files."""
    vendor = Path(app.srcdir) / "_vendor"
    if vendor.is_dir():
        config.html_static_path.append(str(vendor))


def setup(app):
    app.connect("config-inited", _serve_vendored)
    app.connect("source-read", _notebook_pages)
    app.connect("source-read", _guide_links)
    app.connect("include-read", _widget_figures)
    # After the theme has filled the header buttons.
    app.connect("html-page-context", _github_buttons, priority=900)
    app.connect("html-page-context", _previous_next)
    app.connect("build-finished", _copy_notebooks)
