"""Read a learner's notebook whatever its state, and put the pristine setup and check cells back into it.

A learner's notebook may be anything: invalid JSON, an old nbformat (4.0-4.4, as Colab writes, has no cell ids),
a re-created notebook, tags that are not a list. :func:`read_submission` repairs what is harmless (malformed tags
are dropped, outputs cleared) and refuses what is not a notebook. :func:`restore` then builds the notebook that
runs: every ``setup`` and ``check`` cell comes from the pristine exercise, every ``work`` cell (and any extra
cell) from the learner. Cells are matched

1. by cell id, when the learner's notebook still has pristine ids (a deleted check is put back after the cell
   that preceded it; a learner cell that claims a restored role under an unknown id is dropped);
2. else by tag order (the k-th ``work`` cell is the learner's answer to the k-th pristine ``work`` cell; where a
   run of consecutive ``work`` cells makes the count right, a cell split in two, the run is one answer; where fewer
   cells define, in order, every name of the exercise's work cells, cells merged, each answers those it defines);
3. else by position, when the learner's notebook has exactly as many code cells as the pristine one.

When none applies, the notebook cannot be graded automatically: :class:`Unalignable` ("needs review").
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass

import nbformat

from pagedlab.authoring.exercises import CODE_TAGS

RESTORED = ("setup", "check")
_ID = re.compile(r"[a-zA-Z0-9-_]{1,64}")  # what nbformat 4.5 allows


class SubmissionError(ValueError):
    """The learner's file is not a notebook the grader can run; the message says why (it is a fail)."""


class Unalignable(ValueError):
    """The learner's cells cannot be matched to the pristine ones; a person must look ("needs review")."""


@dataclass(frozen=True)
class Cell:
    """One code cell of the notebook that runs: where it came from."""

    index: int  # position in the notebook that runs
    id: str
    role: str  # setup/check (pristine), work/demo (the learner's answer to a pristine cell), extra (learner's own)
    pristine_sha256: str | None  # of the source that must run, for pristine cells
    late: tuple[tuple[int, str], ...] = ()  # (last line, name) of what the answer reads that the cell binds from
    # its first line that may fail on (:func:`~pagedlab.grading.machine.late_bindings`)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def role(cell) -> str | None:
    """The one role tag of a code cell (``setup``/``work``/``check``/``demo``), or None; never raises."""
    tags = cell.get("metadata", {}).get("tags", [])
    found = [t for t in tags if t in CODE_TAGS] if isinstance(tags, list) else []
    return found[0] if len(found) == 1 else None


def read_submission(data: bytes, max_cells: int | None = None) -> tuple[nbformat.NotebookNode, list[str]]:
    """Parse, repair and validate a learner's notebook file.

    Returns:
        (notebook, notes): the notebook (nbformat 4, outputs cleared, learner cell ids kept where they were
        valid) and what was repaired, one short sentence each.

    Args:
        max_cells: refuse a notebook with more cells than this (of every kind), before any other work on it.

    Raises:
        SubmissionError: not UTF-8 JSON, not a notebook, too many cells, or invalid after the repairs.
    """
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SubmissionError(f"unreadable notebook: {type(e).__name__}: {str(e)[:200]}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("cells", raw.get("worksheets")), list):
        raise SubmissionError("unreadable notebook: the file is JSON but not a notebook (no list of cells)")
    n_cells = len(raw.get("cells", raw.get("worksheets")))
    if max_cells is not None and n_cells > max_cells:
        raise SubmissionError(f"too many cells: {n_cells} (the limit is {max_cells}, cells of every kind); not run")
    if raw.get("nbformat") != 4:
        try:
            raw = nbformat.reads(json.dumps(raw), as_version=4)
        except Exception as e:
            raise SubmissionError(f"unreadable notebook: nbformat {raw.get('nbformat')!r}: {str(e)[:200]}") from None
    notes, seen, cells = [], set(), []
    for i, cell in enumerate(raw["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            notes.append(f"cell {i} is not a code, markdown or raw cell: ignored")
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            notes.append(f"cell {i} has no text source: ignored")
            continue
        meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        tags = meta.get("tags", [])
        if not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
            notes.append(f"cell {i} has malformed tags ({json.dumps(tags)[:40]}): ignored")
            tags = []
        fixed = {"cell_type": cell["cell_type"], "metadata": {"tags": tags} if tags else {}, "source": source}
        cid = cell.get("id")
        if not (isinstance(cid, str) and _ID.fullmatch(cid) and cid not in seen):
            cid = f"no-id-{i}"  # matches no pristine cell: restore() aligns such notebooks by tags or position
        fixed["id"] = cid
        seen.add(cid)
        if cell["cell_type"] == "code":
            fixed.update(outputs=[], execution_count=None)
        cells.append(fixed)
    nb = nbformat.v4.new_notebook(metadata={})
    nb.cells = [nbformat.from_dict(c) for c in cells]
    try:
        nbformat.validate(nb)
    except Exception as e:
        raise SubmissionError(f"invalid notebook: {str(e).splitlines()[0][:200]}") from None
    return nb, notes


def restore(submitted: nbformat.NotebookNode, pristine: nbformat.NotebookNode,
            checks: bool = True) -> tuple[nbformat.NotebookNode, list[Cell], str]:
    """The notebook to run: pristine ``setup``/``check`` cells, the learner's other code cells, matched as above.

    The pristine setup cells that precede the exercise's first ``work`` cell always run first, before any learner
    cell (a learner's cell placed above them, before the first markdown cell say, runs after them). A learner's
    own cell tagged ``check`` or ``setup`` is dropped. With ``checks=False`` the pristine check cells are left out
    too (their exercise is graded by graded calls instead).

    Returns:
        (notebook, cells, method): the notebook (nbformat 4.5, validated, every cell with a unique id), what each
        of its code cells is, and how cells were matched (``"id"``, ``"tag order"`` or ``"position"``).

    Raises:
        Unalignable: no method applies.
    """
    pristine_code_ids = {c.get("id") for c in pristine.cells if c.cell_type == "code"}
    if any(c.get("id") in pristine_code_ids for c in submitted.cells if c.cell_type == "code"):
        cells, method = _by_id(submitted, pristine), "id"
    else:
        cells, method = _by_role(submitted, pristine)
    first_work = next((i for i, c in enumerate(pristine.cells) if c.cell_type == "code" and role(c) == "work"),
                      len(pristine.cells))
    leading = {c.get("id") for c in pristine.cells[:first_work] if c.cell_type == "code" and role(c) == "setup"}
    checks_ids = set() if checks else {c.get("id") for c in pristine.cells if c.cell_type == "code" and role(c) == "check"}
    cells = [c for c in cells if c.get("id") not in checks_ids]
    first = [c for c in cells if c.get("id") in leading and c.get("cell_type") == "code" and role(c) == "setup"]
    rest = [c for c in cells if not any(c is f for f in first)]
    code = next((i for i, c in enumerate(rest) if c.get("cell_type") == "code"), len(rest))
    cells = rest[:code] + first + rest[code:]  # unchanged unless a learner's code cell came before them
    nb = nbformat.v4.new_notebook(metadata=dict(pristine.metadata))
    used = set()
    for n, cell in enumerate(cells):
        cell = nbformat.from_dict(cell)
        if not cell.get("id") or cell.id in used:
            cell.id = f"learner-cell-{n}"
        used.add(cell.id)
        nb.cells.append(cell)
    nbformat.validate(nb)
    by_id = {c.get("id"): c for c in pristine.cells if c.cell_type == "code"}
    info = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        origin = by_id.get(cell.id)
        r = (role(origin) or "extra") if origin is not None else "extra"
        pristine_sha = sha256(origin.source) if r in RESTORED else None
        info.append(Cell(index, cell.id, r, pristine_sha))
    return nb, info, method


def _clean(cell) -> dict:
    """A learner's cell as it runs: no outputs, no metadata (tags such as ``raises-exception`` do not count)."""
    out = {"cell_type": cell.cell_type, "metadata": {}, "source": cell.source}
    if cell.get("id"):
        out["id"] = cell.id
    if cell.cell_type == "code":
        out.update(outputs=[], execution_count=None)
    return out


def _pristine(cell) -> dict:
    return json.loads(json.dumps(cell))


def _by_id(submitted, pristine) -> list[dict]:
    """Match by cell id; restored cells replace, or are re-inserted after the cell that preceded them."""
    pristine_ids = [c.get("id") for c in pristine.cells]
    restored = {c.get("id"): c for c in pristine.cells if c.cell_type == "code" and role(c) in RESTORED}
    cells = [_clean(c) for c in submitted.cells
             if c.get("id") not in restored and not (c.cell_type == "code" and role(c) in RESTORED)]
    for cid, pristine_cell in restored.items():
        pos = 0
        for prev_id in reversed(pristine_ids[: pristine_ids.index(cid)]):
            idx = next((i for i, c in enumerate(cells) if c.get("id") == prev_id), None)
            if idx is not None:
                pos = idx + 1
                break
        cells.insert(pos, _pristine(pristine_cell))
    return cells


def _by_role(submitted, pristine) -> tuple[list[dict], str]:
    """Match a notebook without pristine ids: by the order of its role tags, else by code-cell position."""
    p_code = [c for c in pristine.cells if c.cell_type == "code"]
    s_code = [c for c in submitted.cells if c.cell_type == "code"]
    p_work = [c for c in p_code if role(c) == "work"]
    roles = [role(c) for c in s_code]
    if roles.count("work") != len(p_work):
        # a work cell split in two keeps its tag on both halves (JupyterLab's split): the later cells of a run of
        # consecutive work cells run after the first, as the learner's own
        runs = [None if r == "work" and i and roles[i - 1] == "work" else r for i, r in enumerate(roles)]
        # a copy of a handed-out work cell kept as it was (round 38z40: the stub pasted above the answer, its tag
        # with it): the learner's own cell, which runs where it stands
        stubs = {_shape(c.source) for c in p_work}
        kept = [None if r == "work" and _shape(c.source) in stubs else r for c, r in zip(s_code, roles)]
        roles = next((option for option in (runs, kept) if option.count("work") == len(p_work)), roles)
    work = [c.source for c, r in zip(s_code, roles) if r == "work"]
    covers = _covers(work, [c.source for c in p_work]) if 0 < len(work) < len(p_work) else None
    if len(work) == len(p_work) and p_work:
        method, answers, last = "tag order", work, list(range(len(work)))
    elif covers is not None:  # work cells merged into one: each answers the cells whose every name it defines
        method, answers, last = "tag order", [""] * len(p_work), [group[-1] for group in covers]
        for source, group in zip(work, covers):
            answers[group[0]] = source
    elif len(s_code) == len(p_code):
        roles, method = [role(c) for c in p_code], "position"
        answers = [c.source for c, r in zip(s_code, roles) if r == "work"]
        last = list(range(len(answers)))
    else:
        raise Unalignable(
            f"cannot match this notebook's cells to the exercise: no cell ids of the exercise, "
            f"{roles.count('work')} cells tagged 'work' (the exercise has {len(p_work)}), and "
            f"{len(s_code)} code cells (the exercise has {len(p_code)})")
    answers = iter(answers)
    skeleton = []  # the pristine notebook, each work cell holding the learner's answer
    for cell in pristine.cells:
        if cell.cell_type == "code" and role(cell) == "work":
            skeleton.append({**_pristine(cell), "source": next(answers)})
        else:
            skeleton.append(_pristine(cell))
    # The learner's own untagged code cells run where they were: after the pristine cell matching the learner's
    # previous work cell (the last it answers), or at the start.
    extras_after: dict[int, list[dict]] = {}
    k, answered = -1, iter(last)
    for cell, r in zip(s_code, roles):
        if r == "work":
            k = next(answered)
        elif r is None:
            extras_after.setdefault(k, []).append({key: v for key, v in _clean(cell).items() if key != "id"})
    k = -1
    out = extras_after.get(-1, [])
    for cell in skeleton:
        out.append(cell)
        if cell["cell_type"] == "code" and role(cell) == "work":
            k += 1
            out += extras_after.get(k, [])
    return out, method


def _shape(source: str) -> str:
    """A cell's code, layout and comments aside (its source where it does not parse)."""
    try:
        return ast.dump(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source


def _covers(work: list[str], pristine: list[str]) -> list[list[int]] | None:
    """For learner work cells that merged the exercise's (fewer than it has, in its order): the pristine work cells
    each one answers, those whose every name it defines, in order and all of them; None if they do not so."""
    names = [_defined(source) for source in pristine]
    groups, k = [], 0
    for source in work:
        mine, group = _defined(source), []
        while k < len(names) and names[k] and names[k] <= mine:
            group.append(k)
            k += 1
        if not group:
            return None
        groups.append(group)
    return groups if k == len(names) else None


def _defined(source: str) -> set[str]:
    """The names a cell's top-level defs, classes and assignments bind (empty if it does not parse)."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return ({n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
            | {t.id for n in body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)})
