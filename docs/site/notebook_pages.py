"""What the site changes in a notebook before rendering it (the notebooks themselves, and their downloads, are not).

Each function takes the notebook as parsed JSON (a dict, changed in place): conf.py's ``source-read`` hook applies
them to every page. They only change what a reader of the site sees: titles in plain text, no test markers, a
banner on a solution or exercise page that links its exercise or lecture, and alt text for stored figures.
"""

from __future__ import annotations

import re

from pagedlab.notebook import SETUP_CELL

# Lines that only tell nbval how to compare a cell's output (`# NBVAL_IGNORE_OUTPUT`, `# NBVAL_SKIP`, ...).
NBVAL_MARKER = re.compile(r"^[ \t]*#[ \t]*NBVAL_[A-Z_]+[ \t]*(?:\n|$)", re.MULTILINE)
HEADING = re.compile(r"^(#{1,6}[ \t]+)(.*)$", re.MULTILINE)
INLINE_MATH = re.compile(r"\$([^$\n]+)\$")
# The TeX that headings use, as plain text (a title shows in the browser's tab, the navigation and the search).
TEX_TEXT = {r"\times": "×", r"\cdot": "·", r"\le": "≤", r"\ge": "≥", r"\to": "→", r"\approx": "≈",
            r"\Theta": "Θ", r"\log": "log", "^2": "²", r"\,": " ", "{": "", "}": ""}
# A figure's title in the cell that draws it: ax.set_title("..."), plt.title("..."), fig.suptitle("...").
PLOT_TITLE = re.compile(r"""(?:set_title|suptitle|\btitle)\(\s*(["'])(.+?)\1""")


def source(cell: dict) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def plain_tex(tex: str, where: str) -> str:
    """``tex`` (the inside of ``$...$``) as plain text, e.g. ``N \\times N`` -> ``N × N``.

    Raises:
        ValueError: TeX that :data:`TEX_TEXT` cannot write as text (``where`` names the notebook).
    """
    text = tex
    for macro in sorted(TEX_TEXT, key=len, reverse=True):     # \le before a shorter macro it starts with
        text = text.replace(macro, TEX_TEXT[macro])
    if "\\" in text or "^" in text or "_" in text:
        raise ValueError(f"{where}: a heading's math ${tex}$ has no plain-text form for the site's titles; "
                         f"add its macros to notebook_pages.TEX_TEXT or write the heading without math")
    return re.sub(r"\s+", " ", text).strip()


def plain_headings(notebook: dict, where: str) -> None:
    """Write the math in every Markdown heading as plain text: a page's title shows in the tab and the search
    results, where MathJax does not run (lecture 01's ``$N \\times N$`` showed as ``\\(N \\times N\\)``)."""
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown" and "$" in source(cell):
            cell["source"] = HEADING.sub(
                lambda h: h[1] + INLINE_MATH.sub(lambda m: plain_tex(m[1], where), h[2]), source(cell))


def strip_nbval_markers(notebook: dict) -> None:
    """Drop the ``# NBVAL_...`` lines from code cells: they tell the test how to compare, not the reader anything."""
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code" and "NBVAL_" in source(cell):
            cell["source"] = NBVAL_MARKER.sub("", source(cell))


def hide_install_cell(notebook: dict) -> None:
    """Leave out the install cell (``pagedlab.notebook.SETUP_CELL``): a reader of the site installs nothing, and
    the launch buttons open the notebook with that cell where it runs. The cell is recognised by its source, which
    a test keeps equal to ``SETUP_CELL`` in every notebook."""
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code" and source(cell) == SETUP_CELL:
            cell.setdefault("metadata", {}).setdefault("tags", []).append("remove-cell")


def title(notebook: dict) -> str:
    """The text of the notebook's first ``#`` heading.

    Raises:
        ValueError: the notebook has no level-1 heading.
    """
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            found = re.search(r"^#[ \t]+(.+)$", source(cell), re.MULTILINE)
            if found:
                return found[1].strip()
    raise ValueError("the notebook has no '# title' heading")


def _after_title(notebook: dict, markdown: str) -> None:
    """Put ``markdown`` right under the notebook's title, in the title's cell."""
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown" and re.search(r"^#[ \t]", source(cell), re.MULTILINE):
            text = source(cell)
            end = re.search(r"^#[ \t].*$", text, re.MULTILINE).end()
            cell["source"] = f"{text[:end]}\n\n{markdown}\n{text[end:]}"
            return
    raise ValueError("the notebook has no '# title' heading")


def mark_solution(notebook: dict, exercise: str, exercise_title: str) -> None:
    """Title a solution page "Solution · <exercise title>" and say under it that it is one, linking the exercise
    (``exercise``: the exercise's file name, e.g. ``ex07_copy_on_write.ipynb``)."""
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown" and re.search(r"^#[ \t]", source(cell), re.MULTILINE):
            cell["source"] = re.sub(r"^#[ \t]+", "# Solution · ", source(cell), count=1, flags=re.MULTILINE)
            break
    _after_title(notebook, "```{admonition} This page is a solution\n:class: important pagedlab-solution-banner\n"
                           f"The worked solution of [{exercise_title}](../exercises/{exercise}). "
                           "Try the exercise first: its checks say when your version works.\n```")


def link_lecture(notebook: dict, lecture: str, lecture_title: str) -> None:
    """Say under an exercise's title which lecture it practises, with a link (``lecture``: its file name)."""
    _after_title(notebook, f"```{{admonition}} Practice for lecture {lecture_title.split(' · ')[0]}\n"
                           ":class: tip pagedlab-lecture-link\n"
                           f"This exercise practises [{lecture_title}](../notebooks/{lecture}).\n```")


def figure_alt_text(notebook: dict) -> None:
    """Give each stored PNG figure alt text (it was the image's file path): the title the cell gives its plot, or
    else the section it sits in, set as myst-nb's ``mystnb.image.alt`` cell option."""
    section = title(notebook)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            headings = re.findall(r"^#{1,6}[ \t]+(.+)$", source(cell), re.MULTILINE)
            section = headings[-1].strip() if headings else section
        elif any("image/png" in output.get("data", {}) for output in cell.get("outputs", [])):
            titles = [t for _, t in PLOT_TITLE.findall(source(cell)) if "{" not in t]
            alt = f"Figure: {'; '.join(titles)}" if titles else f"Figure in the section “{section}”"
            options = cell.setdefault("metadata", {}).setdefault("mystnb", {}).setdefault("image", {})
            options.setdefault("alt", alt)
