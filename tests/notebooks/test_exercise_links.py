"""Every lecture links its exercises, and every exercise (and the solution it is generated from) links back to its
lecture, as Markdown links to notebooks that exist: a reader of the site or of GitHub clicks through, in both
directions."""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
LECTURES = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXERCISES = sorted((ROOT / "exercises").glob("*.ipynb"))
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


def _links(path: Path, folder: str, first_markdown_only: bool = False) -> list[str]:
    """The notebook stems that ``path``'s Markdown cells link in ``../<folder>/`` (a link, not a path in backticks)."""
    cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]
    text = "\n".join(c.source for c in (cells[:1] if first_markdown_only else cells))
    return re.findall(rf"\]\(\.\./{folder}/([\w.-]+)\.ipynb\)", text)


def _missing(stems: list[str], folder: str) -> list[str]:
    return [s for s in stems if not (ROOT / folder / f"{s}.ipynb").exists()]


@pytest.mark.parametrize("lecture", LECTURES, ids=lambda p: p.stem)
def test_each_lecture_links_an_exercise_that_exists(lecture):
    linked = _links(lecture, "exercises")
    assert linked, f"{lecture.name} links no exercise (write [`exNN_name`](../exercises/exNN_name.ipynb))"
    assert not _missing(linked, "exercises"), f"{lecture.name} links exercises that do not exist: {_missing(linked, 'exercises')}"
    plain = re.findall(r"`exercises/[\w.-]+\.ipynb`", "\n".join(
        c.source for c in nbformat.read(lecture, as_version=4).cells if c.cell_type == "markdown"))
    assert not plain, f"{lecture.name} names {plain} as code, not as a link"


@pytest.mark.parametrize("notebook", EXERCISES + SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_exercise_links_back_to_its_lecture_which_links_it(notebook):
    back = _links(notebook, "notebooks", first_markdown_only=True)
    assert len(back) == 1, f"{notebook.parent.name}/{notebook.name}'s first cell links {back}, not its one lecture"
    assert not _missing(back, "notebooks"), f"{notebook.name} links a lecture that does not exist: {back}"
    assert notebook.stem in _links(ROOT / "notebooks" / f"{back[0]}.ipynb", "exercises"), (
        f"{notebook.name} links back to {back[0]}, which does not link it")


def test_every_exercise_is_linked_from_a_lecture():
    linked = {stem for lecture in LECTURES for stem in _links(lecture, "exercises")}
    assert {p.stem for p in EXERCISES} <= linked, f"linked from no lecture: {sorted({p.stem for p in EXERCISES} - linked)}"
