"""The site's own pieces, without building it: the course's reading order and what a page changes in a notebook."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import ROOT

import course_map
import notebook_pages

LECTURES = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
EXERCISES = sorted(p.stem for p in (ROOT / "exercises").glob("*.ipynb"))


def test_course_order_puts_each_lectures_exercises_after_it():
    order = course_map.course_order(LECTURES, EXERCISES)
    assert sorted(order) == sorted([f"notebooks/{s}" for s in LECTURES] + [f"exercises/{s}" for s in EXERCISES])
    assert order[:3] == ["notebooks/00_setup", "exercises/ex00_warmup", "notebooks/01_naive_attention"]
    at = order.index("notebooks/04a_flash_attention_forward")
    assert order[at:at + 5] == [
        "notebooks/04a_flash_attention_forward", "exercises/ex04_flash_forward", "exercises/ex04_stretch_gqa_forward",
        "notebooks/04b_flash_attention_backward_and_speed", "exercises/ex04b_performance_lab"]
    assert order[-1] == "exercises/ex10_scheduler_step"


def test_an_exercise_without_its_lecture_is_an_error():
    with pytest.raises(ValueError, match="ex11_speculative_decoding.*lecture 11"):
        course_map.course_order(LECTURES, EXERCISES + ["ex11_speculative_decoding"])
    with pytest.raises(ValueError, match="'bonus' does not start with its number"):
        course_map.lecture_of("bonus", LECTURES)


def markdown(text: str) -> dict:
    return {"cell_type": "markdown", "source": text, "metadata": {}}


def test_headings_lose_their_tex_and_unknown_tex_is_an_error():
    notebook = {"cells": [markdown("# 1 · Naive attention and the $N \\times N$ memory wall\n\nKeep $x^2$ here."),
                          markdown("### Memory: $O(N)$ extra")]}
    notebook_pages.plain_headings(notebook, "notebooks/01")
    assert notebook["cells"][0]["source"] == "# 1 · Naive attention and the N × N memory wall\n\nKeep $x^2$ here."
    assert notebook["cells"][1]["source"] == "### Memory: O(N) extra"
    with pytest.raises(ValueError, match=r"notebooks/99: .*\$\\frac\{a\}\{b\}\$"):
        notebook_pages.plain_headings({"cells": [markdown("## Ratio $\\frac{a}{b}$")]}, "notebooks/99")


def test_nbval_marker_lines_go_and_nothing_else():
    cell = {"cell_type": "code", "source": "# NBVAL_IGNORE_OUTPUT\nx = 1  # not NBVAL_SKIP\n  # NBVAL_SKIP\nprint(x)",
            "metadata": {}, "outputs": []}
    notebook_pages.strip_nbval_markers({"cells": [cell]})
    assert cell["source"] == "x = 1  # not NBVAL_SKIP\nprint(x)"


def test_guide_pages_link_repository_files_on_github(tmp_path):
    """docs/*.md pages keep links to pages and pictures; other repository files open on GitHub (a relative link to
    README.md failed the build: it is not a page)."""
    import conf
    from pagedlab.notebook import REPO_URL
    from site_links import BRANCH, repository

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "tile_widget.png").write_bytes(b"")
    app = SimpleNamespace(srcdir=str(tmp_path), env=SimpleNamespace(
        doc2path=lambda doc: Path(f"{doc}.md"), found_docs={"docs/instructors", "notebooks/02_tiling"}))
    text = ("[a](../README.md#course-map) [b](../notebooks/02_tiling.ipynb) [c](instructors.md#grading) "
            "![d](tile_widget.png) [e](../tools/) [f](https://example.org/x.md) [g](#steps)")
    content = [text]
    conf._guide_links(app, "docs/publishing", content)
    github = f"{repository(REPO_URL)}/"
    assert content[0] == (f"[a]({github}blob/{BRANCH}/README.md#course-map) [b](../notebooks/02_tiling.ipynb) "
                          f"[c](instructors.md#grading) ![d](tile_widget.png) [e]({github}tree/{BRANCH}/tools) "
                          "[f](https://example.org/x.md) [g](#steps)")
    notebook_page = ["[a](../README.md)"]
    conf._guide_links(app, "notebooks/02_tiling", notebook_page)
    assert notebook_page == ["[a](../README.md)"], "only docs/ pages are changed"
