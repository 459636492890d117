"""Write a class's grades: ``grades.csv``, ``grades.md`` and ``results.json`` (what ``merge`` reads).

A learner's name and the messages are the learner's text: escaped for the terminal, for Markdown and HTML, and for
spreadsheets (no cell that starts like a formula).
"""

from __future__ import annotations

import csv
import html
import json
from dataclasses import asdict
from pathlib import Path

from pagedlab.grading.judge import ERROR, FAIL, PASS, REVIEW, UNEXPECTED, Result


def one_line(text: str) -> str:
    """``text`` on one line, control characters escaped (for the terminal)."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in str(text))


def md(text: str) -> str:
    """``text`` safe inside a Markdown table cell: HTML and Markdown syntax escaped, on one line."""
    text = html.escape(one_line(text), quote=False)
    return "".join("\\" + ch if ch in "\\`*_[]|~" else ch for ch in text)


def _csv_cell(text: str) -> str:
    """A spreadsheet must not read a learner's text as a formula (spreadsheets skip leading whitespace too)."""
    return "'" + text if text[:1] in ("\t", "\r") or text.lstrip()[:1] in ("=", "+", "-", "@") else text


def write_tables(results: list[Result], out: Path, notes: list[str] = ()) -> tuple[Path, Path]:
    """Write ``grades.csv`` (one row per learner and exercise or unexpected file), ``grades.md`` and, for
    :func:`merge`, ``results.json``; rows in (learner, exercise) order, unexpected files last."""
    out.mkdir(parents=True, exist_ok=True)
    results = sorted(results, key=lambda r: (r.verdict == UNEXPECTED, r.student, r.exercise))
    header = "\n".join(f"- {md(n)}" for n in notes)
    (out / "results.json").write_text(json.dumps({"notes": list(notes), "results": [asdict(r) for r in results]},
                                                 ensure_ascii=False, indent=0), encoding="utf-8")
    csv_path, md_path = out / "grades.csv", out / "grades.md"
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "exercise", "result", "first_failure"])
        for r in results:
            w.writerow([_csv_cell(r.student), _csv_cell(r.exercise), r.verdict, _csv_cell(r.message)])
    graded = [r for r in results if r.verdict != UNEXPECTED]
    students = sorted({r.student for r in graded})
    exercises = sorted({r.exercise for r in graded})
    by = {(r.student, r.exercise): r for r in graded}
    lines = [header, ""] if header else []
    lines += ["| student | " + " | ".join(map(md, exercises)) + " | score |", "|---" * (len(exercises) + 2) + "|"]
    for s in students:
        row = [by[s, e].verdict if (s, e) in by else "" for e in exercises]
        lines.append(f"| {md(s)} | " + " | ".join(row) + f" | {row.count(PASS)}/{len(row)} |")
    for title, verdict in (("Needs review", REVIEW), ("Grader errors (grade these again)", ERROR),
                           ("First failure of each failed exercise", FAIL),
                           ("Not graded: unexpected files", UNEXPECTED)):
        chosen = [r for r in results if r.verdict == verdict]
        if chosen:
            lines += ["", f"## {title}", ""]
            lines += [f"- **{md(r.student)}** / {md(r.exercise)}" + (f": {md(r.message)}" if r.message else "")
                      for r in chosen]
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return csv_path, md_path


def write_similarity(pairs: list[tuple[str, str, str, float]], out: Path) -> Path:
    """``out/similarity.md``: pairs of learners whose work on an exercise is near-identical (for a person to look)."""
    lines = ["# Near-identical work", "",
             "Pairs of learners whose own code in an exercise shares most of its fingerprints "
             "(pagedlab.grading.similarity). A lead for a person, not a verdict.", ""]
    if pairs:
        lines += ["| exercise | learner | learner | shared |", "|---|---|---|---|"]
        lines += [f"| {md(e)} | {md(a)} | {md(b)} | {share:.0%} |" for e, a, b, share in pairs]
    else:
        lines.append("No pair.")
    path = out / "similarity.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
