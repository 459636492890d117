"""The command line: ``python -m pagedlab.grading SUBMISSIONS/`` and ``python -m pagedlab.grading merge``.

Usage::

    python -m pagedlab.grading SUBMISSIONS/ [--out grades/] [--timeout 300] [--jobs N] [--shard I/N]
                               [--no-sandbox] [--unsafe]
    python -m pagedlab.grading merge grades-1/ grades-2/ ... --out grades/
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from pagedlab.grading.grade import SandboxMissing, grade_class
from pagedlab.grading.integrity import Changed, verify
from pagedlab.grading.procs import Limits
from pagedlab.grading.shards import merge, parse_shard
from pagedlab.grading.tables import write_similarity, write_tables


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        verify()  # before anything: a grader changed by an earlier run's learner code must not grade
    except Changed as e:
        sys.stderr.write(f"refusing to grade: {e}\n")
        return 2
    if argv[:1] == ["merge"]:
        parser = argparse.ArgumentParser(prog="python -m pagedlab.grading merge",
                                         description="merge the reports of shards into one")
        parser.add_argument("shards", type=Path, nargs="+", help="output folders of the shards")
        parser.add_argument("--out", type=Path, required=True, help="where the merged report goes")
        args = parser.parse_args(argv[1:])
        try:
            csv_path, md_path = merge(args.shards, args.out)
        except ValueError as e:
            parser.exit(2, f"{e}\n")
        print(f"wrote {csv_path} and {md_path}")
        return 0
    parser = argparse.ArgumentParser(description="Grade a class: run each learner's notebook isolated, make its graded calls, compare them outside, tabulate.")
    parser.add_argument("submissions", type=Path, help="folder with one sub-folder per learner")
    parser.add_argument("--exercises", type=Path, default=Path("exercises"), help="pristine exercise notebooks")
    parser.add_argument("--solutions", type=Path, default=None,
                        help="solution notebooks (default: solutions/ beside the exercises)")
    parser.add_argument("--out", type=Path, default=Path("grades"), help="where grades.csv and grades.md go")
    parser.add_argument("--timeout", type=int, default=Limits.wall_s,
                        help="seconds per notebook, kernel start included")
    parser.add_argument("--max-cells", type=int, default=Limits.max_cells, help="cells (of any kind) a notebook may have")
    parser.add_argument("--jobs", type=int, default=None, help="notebooks graded at once (default: CPU cores)")
    parser.add_argument("--shard", type=parse_shard, default=(1, 1), metavar="I/N",
                        help="grade only the I-th of N shares of the learners (then: merge)")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="do not use bubblewrap even where it works (also PAGEDLAB_GRADE_SANDBOX=0)")
    parser.add_argument("--solutions-private", action="store_true",
                        help="the class never had solutions/: do not send work that matches them to review")
    parser.add_argument("--unsafe", action="store_true",
                        help="grade even without a sandbox (learner code can then change what this user can)")
    args = parser.parse_args(argv)
    sandbox = not args.no_sandbox and os.environ.get("PAGEDLAB_GRADE_SANDBOX", "1") != "0"
    limits = Limits(wall_s=args.timeout, max_cells=args.max_cells)
    start, notes, similar = time.monotonic(), [], []
    try:
        results = grade_class(args.submissions.resolve(), args.exercises.resolve(), limits, args.jobs, sandbox,
                              protected=[args.out.resolve()], notes=notes, unsafe=args.unsafe, shard=args.shard,
                              solutions=args.solutions.resolve() if args.solutions else None,
                              published=not args.solutions_private, similar=similar)
    except (SandboxMissing, ValueError) as e:
        parser.exit(2, f"{e}\n")
    notes.append(f"graded in {time.monotonic() - start:.0f} s; credit comes from graded calls on inputs drawn for "
                 "this run, compared outside the kernels with the solution's (visible checks, for exercises "
                 "without graded calls)")
    csv_path, md_path = write_tables(results, args.out, notes)
    print(f"wrote {csv_path}, {md_path} and {write_similarity(similar, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
