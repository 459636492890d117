"""Generate learner notebooks (``exercises/``) from solved ones (``solutions/``).

The solutions are the single source. In a solution notebook every code cell carries one tag that
says what it is for, and markdown cells are instructions:

=============  ===============================================================================
tag            meaning
=============  ===============================================================================
``setup``      imports and data; restored from the pristine exercise when grading
``work``       where the learner writes code: holds ``### BEGIN SOLUTION`` / ``### END SOLUTION``
``check``      ``assert``-based checks that explain failures; restored when grading. Each starts with
               ``with check("Check N: <title>"):`` (:class:`pagedlab.checks.check`), numbered 1, 2, ...
               in notebook order, so a failure names the check the learner sees
``demo``       anything else that runs (a plot, a printout)
=============  ===============================================================================

Generating an exercise replaces each solution region with ``raise NotImplementedError(...)`` at the
region's indentation, clears every output and execution count, and keeps cell ids, so the grader
can put the pristine check cells back into a learner's notebook.

Usage::

    python -m pagedlab.authoring.exercises            # solutions/*.ipynb -> exercises/*.ipynb
    python -m pagedlab.authoring.exercises --check    # exit 1 if exercises/ is out of date
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from pathlib import Path

import nbformat

CODE_TAGS = ("setup", "work", "check", "demo")
BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
_REGION = re.compile(rf"^(?P<indent>[ \t]*){re.escape(BEGIN)}[^\n]*\n.*?^[ \t]*{re.escape(END)}[^\n]*(\n|$)",
                     re.MULTILINE | re.DOTALL)
STUB = 'raise NotImplementedError("Exercise: replace this line with your code")'
_CHECKS_SOMETHING = re.compile(r"\bassert|\bcheck_\w+\(", re.IGNORECASE)  # assert, AssertionError, check_*(
_CHECK_TITLE = re.compile(r'with check\("Check (?P<number>\d+): [^"]+"')


class ExerciseFormatError(ValueError):
    """A solution notebook breaks the tagging rules above; the message names the notebook and cell."""


def cell_tag(cell: nbformat.NotebookNode) -> str | None:
    """The one role tag of a code cell (``setup``/``work``/``check``/``demo``), or None."""
    tags = [t for t in cell.get("metadata", {}).get("tags", []) if t in CODE_TAGS]
    return tags[0] if len(tags) == 1 else None


def strip_solutions(source: str) -> str:
    """Replace every ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region of ``source`` by a stub.

    The stub keeps the indentation of the ``BEGIN`` line, so a region inside a function body
    leaves a function that raises ``NotImplementedError`` when called.
    """
    return _REGION.sub(lambda m: f"{m.group('indent')}{STUB}\n", source).rstrip("\n")


def validate(nb: nbformat.NotebookNode, name: str) -> None:
    """Raise :class:`ExerciseFormatError` unless every code cell has one role tag and regions sit in ``work`` cells."""
    n_work = n_check = 0
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tag = cell_tag(cell)
        where = f"{name}, cell {i} (id {cell.get('id')!r})"
        if tag is None:
            raise ExerciseFormatError(f"{where}: a code cell needs exactly one tag of {CODE_TAGS}")
        has_region = BEGIN in cell.source
        if has_region != (tag == "work"):
            raise ExerciseFormatError(f"{where}: solution regions belong in cells tagged 'work', and every "
                                      f"'work' cell needs one (tag {tag!r}, region: {has_region})")
        if cell.source.count(BEGIN) != cell.source.count(END):
            raise ExerciseFormatError(f"{where}: unbalanced {BEGIN!r} / {END!r} markers")
        if tag == "check" and not _CHECKS_SOMETHING.search(cell.source.split("\n", 1)[-1]):
            raise ExerciseFormatError(f"{where}: a 'check' cell must check something with assert (or a helper "
                                      f"named assert_* or check_* that asserts)")
        if tag == "check":
            n_check += 1
            title = _CHECK_TITLE.match(cell.source)
            if title is None or int(title.group("number")) != n_check:
                raise ExerciseFormatError(f"{where}: a 'check' cell must start with "
                                          f'with check("Check {n_check}: <title>"): (checks are numbered in order)')
        n_work += tag == "work"
    if n_work == 0:
        raise ExerciseFormatError(f"{name}: no 'work' cell, so there is nothing for the learner to do")


def make_exercise(solution: nbformat.NotebookNode, name: str = "notebook") -> nbformat.NotebookNode:
    """Return the learner's version of a solution notebook (outputs cleared, solutions stubbed)."""
    validate(solution, name)
    nb = copy.deepcopy(solution)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs = []
        cell.execution_count = None
        cell.metadata.pop("execution", None)
        if cell_tag(cell) == "work":
            cell.source = strip_solutions(cell.source)
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    """The exact text ``nbformat.write`` produces, so generating twice gives identical bytes."""
    return nbformat.writes(nb) + "\n"


def generate(solutions: Path, exercises: Path, check: bool = False) -> list[Path]:
    """Write (or with ``check``, compare) ``exercises/X.ipynb`` for every ``solutions/X.ipynb``.

    Returns:
        The exercise paths that were written, or with ``check`` the ones that are out of date
        (including exercises whose solution no longer exists).
    """
    changed = []
    exercises.mkdir(parents=True, exist_ok=True)
    expected_names = set()
    for src in sorted(solutions.glob("*.ipynb")):
        text = render(make_exercise(nbformat.read(src, as_version=4), src.name))
        dst = exercises / src.name
        expected_names.add(dst.name)
        if dst.exists() and dst.read_text(encoding="utf-8") == text:
            continue
        changed.append(dst)
        if not check:
            dst.write_text(text, encoding="utf-8")
    stale = [p for p in sorted(exercises.glob("*.ipynb")) if p.name not in expected_names]
    changed += stale
    if not check:
        for p in stale:
            p.unlink()
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solutions", type=Path, default=Path("solutions"))
    parser.add_argument("--exercises", type=Path, default=Path("exercises"))
    parser.add_argument("--check", action="store_true", help="only report exercises that are out of date")
    args = parser.parse_args(argv)
    changed = generate(args.solutions, args.exercises, check=args.check)
    verb = "out of date" if args.check else "written"
    for p in changed:
        print(f"{verb}: {p}")
    if args.check and changed:
        print("run `make exercises` to regenerate them from solutions/", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
