"""A class larger than one machine: ``--shard I/N`` picks a share of the learners; :func:`merge` joins the reports."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pagedlab.grading.judge import Result
from pagedlab.grading.tables import write_tables


def merge(folders: list[Path], out: Path) -> tuple[Path, Path]:
    """Merge the ``results.json`` of shards graded with ``--shard i/n`` into one report in ``out``.

    Raises:
        ValueError: a folder without results, shards graded against different exercises, or a learner graded twice.
    """
    results, notes, pristine = [], [], set()
    for folder in folders:
        path = folder / "results.json"
        if not path.is_file():
            raise ValueError(f"merge: no results.json in {str(folder)!r} (grade it with this version first)")
        data = json.loads(path.read_text(encoding="utf-8"))
        notes += [f"{folder.name}: {n}" for n in data["notes"]]
        pristine |= {n for n in data["notes"] if n.startswith("pristine exercises")}
        results += [Result(**r) for r in data["results"]]
    if len(pristine) > 1:
        raise ValueError("merge: the shards were graded against different exercise notebooks")
    keys = [(r.student, r.exercise) for r in results]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"merge: graded in more than one shard: {twice[:5]}")
    return write_tables(results, out, [f"merged from {len(folders)} shards"] + notes)


def parse_shard(text: str) -> tuple[int, int]:
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected i/n such as 1/4, got {text!r}") from None
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError(f"expected i/n with 1 <= i <= n, got {text!r}")
    return index, count
