"""Read a class before any learner code runs: the pristine exercises, their solutions, every learner's files.

Every notebook in ``exercises/`` and its solution in ``solutions/`` is read and hashed, and every learner's
folder read, once; nothing is read again. Dot-folders (``.ipynb_checkpoints``) and ``__MACOSX`` are skipped,
symbolic links refused, files with other names listed as "not graded: unexpected file".
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import nbformat

from pagedlab.grading.align import role
from pagedlab.grading.review import _parse, bound_names, setup_names
from pagedlab.grading.similarity import (THRESHOLD, course_code, course_words, fingerprints, library_prints,
                                         library_share, overlap, sentences_in)
from pagedlab.grading.specs import SPECS, Spec

_SKIPPED = ("__MACOSX",)  # besides every name that starts with a dot


@dataclass(frozen=True)
class Pristine:
    """An exercise as handed out, read once at the start."""

    name: str  # file name, e.g. ex00_warmup.ipynb
    notebook: nbformat.NotebookNode
    sha256: str
    setup_imports: frozenset[str]
    spec: Spec | None = None
    solution: bytes | None = None  # the solution notebook, read at the start like the rest
    solution_work: dict[str, str] = field(default_factory=dict)  # its work cells by id (to see copies of them)
    # every other exercise's published work cells, "exercise:cell id" -> (source, the fingerprints this exercise's
    # own solution and handed-out code already hold, and that exercise hands out): a solution pasted across exercises
    others: dict[str, tuple[str, frozenset]] = field(default_factory=dict)

    @cached_property
    def setup_sources(self) -> list[str]:
        """The setup cells' sources, as handed out."""
        return self._sources("setup")

    @cached_property
    def work_names(self) -> frozenset[str]:
        """The names the work cells bind: the answer's."""
        return bound_names(self._sources("work"))

    @cached_property
    def own_names(self) -> frozenset[str]:
        """The names the setup and work cells bind: a learner's cell the grader leaves out that binds one changes the
        notebook the learner ran (:func:`~pagedlab.grading.review.unrun_reasons`)."""
        return bound_names(self._sources("setup", "work"))

    @cached_property
    def work_methods(self) -> dict[str, frozenset[str]]:
        """The methods and attributes of each class the work cells hand out: what the graded calls may reach."""
        return {c.name: frozenset(n.name if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) else n.attr
                                  for n in ast.walk(c) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                                  or isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self")
                for tree in filter(None, map(_parse, self._sources("work"))) for c in tree.body
                if isinstance(c, ast.ClassDef)}

    def _sources(self, *roles: str) -> list[str]:
        return [c.source for c in self.notebook.cells if c.cell_type == "code" and role(c) in roles]

    @cached_property
    def library(self) -> dict[str, str]:
        """The course's code (:func:`~pagedlab.grading.similarity.course_code`), less what the published solution
        holds whole (an exercise check's reference class is the solution: a copy of it is the solution's copy)."""
        solved = frozenset().union(*map(fingerprints, self.solution_work.values()))
        return {name: source for name, source in course_code(self.spec.tripwires if self.spec else ()).items()
                if overlap(solved, fingerprints(source)) is None or overlap(solved, fingerprints(source)) < THRESHOLD}

    @cached_property
    def handed_words(self) -> str:
        """The words of every comment, string and text of the exercise as handed out, the lectures and the library
        (:func:`~pagedlab.grading.similarity.sentences_in`): a sentence of the solution's found there is anybody's."""
        return sentences_in([(c.cell_type, c.source) for c in self.notebook.cells]) + " | " + course_words()

    @cached_property
    def stated_names(self) -> frozenset[str]:
        """The names the exercise's text writes as code (```position```): the statement's, not the solution's."""
        return frozenset(w for c in self.notebook.cells if c.cell_type == "markdown"
                         for span in re.findall(r"`([^`]+)`", c.source) for w in re.findall(r"[A-Za-z_]\w*", span))

    @cached_property
    def library_floors(self) -> dict[str, float]:
        """{work cell id: the share of the solution's own cell that is :attr:`library`'s code}: a learner's cell is
        flagged as the library's only past it (ex09's solution kernel is notebook 09's)."""
        handed_out = {c.get("id"): c.source for c in self.notebook.cells if c.cell_type == "code"}
        modules = library_prints(self.library)
        return {c: library_share(fingerprints(source) - fingerprints(handed_out.get(c, "")), modules)[0]
                for c, source in self.solution_work.items()}



@dataclass
class Learner:
    """One learner's folder, read once at the start: notebook bytes by file name, or why a file was refused."""

    name: str
    files: dict[str, bytes] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    unexpected: list[str] = field(default_factory=list)


def load_pristine(exercises: Path, solutions: Path | None = None) -> dict[str, Pristine]:
    """Every ``*.ipynb`` of ``exercises`` (whatever exercises exist), read and hashed once, with its solution."""
    out = {}
    for path in sorted(exercises.glob("*.ipynb")):
        data = path.read_bytes()
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        setup = [c.source for c in nb.cells if c.cell_type == "code" and role(c) == "setup"]
        spec = SPECS.get(path.name.removesuffix(".ipynb"))
        solution = solutions / path.name if solutions is not None else None
        solved = solution.read_bytes() if spec and solution and solution.is_file() else None
        work = {c.get("id"): c.source for c in nbformat.reads(solved.decode("utf-8"), as_version=4).cells
                if c.cell_type == "code" and role(c) == "work"} if solved else {}
        out[path.name] = Pristine(path.name, nb, hashlib.sha256(data).hexdigest(), frozenset(setup_names(setup)),
                                  spec, solved, work)
    if not out:
        raise ValueError(f"exercises: no exercise notebooks in {str(exercises)!r}")
    handed = {name: {c.get("id"): c.source for c in p.notebook.cells if c.cell_type == "code"} for name, p in out.items()}
    for name, p in out.items():
        ours = frozenset().union(*map(fingerprints, [*p.solution_work.values(), *handed[name].values()]))
        p.others.update({f"{other.removesuffix('.ipynb')}:{c}": (source, ours | fingerprints(handed[other].get(c, "")))
                         for other, q in out.items() if other != name for c, source in q.solution_work.items()})
    return out


def collect(submissions: Path, names: set[str], max_bytes: int) -> tuple[list[Learner], list[str]]:
    """Read every learner folder of ``submissions``: (learners, names of skipped top-level entries)."""
    if not submissions.is_dir():
        raise ValueError(f"submissions: expected a folder with one sub-folder per learner, got {str(submissions)!r}")
    learners, skipped = [], []
    for entry in sorted(os.scandir(submissions), key=lambda e: e.name):
        if entry.name.startswith(".") or entry.name in _SKIPPED:
            skipped.append(entry.name)
        elif entry.is_symlink():
            learner = Learner(entry.name)
            learner.refused = {n: "refused: the learner's folder is a symbolic link" for n in names}
            learners.append(learner)
        elif entry.is_dir(follow_symlinks=False):
            learners.append(_read_learner(Path(entry.path), names, max_bytes))
        else:
            skipped.append(entry.name)  # a loose file beside the learner folders
    return learners, skipped


def _read_learner(folder: Path, names: set[str], max_bytes: int) -> Learner:
    learner = Learner(folder.name)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        learner.refused = {n: f"unreadable folder: {e.strerror}" for n in names}
        return learner
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _SKIPPED:
            continue
        if entry.name in names and entry.is_symlink():
            learner.refused[entry.name] = "refused: a symbolic link (submit the notebook file itself)"
        elif entry.name in names and entry.is_file(follow_symlinks=False):
            try:
                fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
                with os.fdopen(fd, "rb") as f:
                    data = f.read(max_bytes + 1)
            except OSError as e:
                learner.refused[entry.name] = f"unreadable file: {e.strerror}"
                continue
            if len(data) > max_bytes:
                learner.refused[entry.name] = f"refused: larger than {max_bytes:,} bytes"
            else:
                learner.files[entry.name] = data
        elif entry.is_dir(follow_symlinks=False):
            inner = [p for p in _walk(Path(entry.path)) if not any(part.startswith(".") for part in p.parts)]
            learner.unexpected += [f"{entry.name}/{p}" for p in inner] or [f"{entry.name}/"]
        else:
            learner.unexpected.append(entry.name)
    return learner


def _walk(folder: Path, limit: int = 50) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(folder):  # os.walk does not follow symbolic links
        found += [Path(root, f).relative_to(folder) for f in files]
        if len(found) >= limit:
            break
    return sorted(found)[:limit]
