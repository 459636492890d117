"""Sphinx configuration of the course site: the stored notebooks rendered as they are, never executed.

``docs/site/build_site.py`` (``make site``) lays out the source folder this file configures (``index.md``, copies of
``notebooks/``, ``exercises/``, ``solutions/``, ``docs/`` and ``README.md``) and puts MathJax into
its ``_vendor`` folder, served as ``_static/mathjax``; run Sphinx through it, not on its own.

The repository, the branch and so every launch button and link back to a notebook come from
``pagedlab.notebook.REPO_URL``, the one line a publisher changes.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pagedlab.notebook import REPO_URL, SETUP_CELL  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from site_links import BRANCH, repository, site_url  # noqa: E402

project = "pagedlab"
author = "the pagedlab authors"
copyright = "the pagedlab authors, MIT license"
html_title = "pagedlab: from naive attention to a paged KV cache"

extensions = ["myst_nb"]
root_doc = "index"
# Only the landing page and the notebooks are pages: README.md and docs/ are there for the pictures and the
# course map that index.md includes.
exclude_patterns = ["README.md", "docs/**", "_build", "**/.ipynb_checkpoints"]
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
    "options": {"enableSpeech": False, "enableBraille": False, "enableEnrichment": False,
                "enableExplorer": False, "menuOptions": {"settings": {"enrich": False, "speech": False,
                                                                       "braille": False}}},
}

html_theme = "sphinx_book_theme"
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"      # a browser asks for one; without it every page logs a 404
html_css_files = ["pagedlab.css"]
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
}
html_baseurl = site_url(REPO_URL)
# Light by default: the figures and widget pictures were drawn for a white page.
html_context = {"default_mode": "light"}


def _hide_install_cell(app, docname, content):
    """Leave out each notebook's install cell (``pagedlab.notebook.SETUP_CELL``): a reader of the site installs
    nothing, and the buttons open the notebook with that cell where it runs. The notebooks are not changed: the
    cell is recognised by its source, which a test keeps equal to ``SETUP_CELL`` in every notebook."""
    if app.env.doc2path(docname).suffix != ".ipynb":
        return
    notebook = json.loads(content[0])
    for cell in notebook["cells"]:
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if cell["cell_type"] == "code" and source == SETUP_CELL:
            cell.setdefault("metadata", {}).setdefault("tags", []).append("remove-cell")
    content[0] = json.dumps(notebook)


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
    # MathJax on every page, not only on those with equations: the navigation shows lecture 01's title, which has
    # math, on every page.
    app.set_html_assets_policy("always")
    app.connect("config-inited", _serve_vendored)
    app.connect("source-read", _hide_install_cell)
    # After the theme has filled the header buttons.
    app.connect("html-page-context", _github_buttons, priority=900)
    app.connect("build-finished", _copy_notebooks)
