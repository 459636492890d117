"""Benchmark the block allocator per operation, from 10K to 1M blocks, against a naive allocator (sorted list, pop(0)).

Plain Python, CPU only (no torch). For each pool size it times, per block operation:

* ``allocate``, ``free``, ``fork_share`` (adding a reference) on ``pagedlab.paged.BlockAllocator`` and on
  ``pagedlab.paged.baseline.SourceAllocator`` (a naive one: ``pop(0)`` to allocate, sort on every free);
* ``fork`` (``BlockManager.fork`` of a 256-block sequence, per block) and ``cache_hit`` (``BlockManager.add``
  of a 32-block prompt whose blocks are all cached, per block, with half the pool cached): ours only, the
  source has no prefix cache.

Then two verdicts against the course's targets: every operation <= 1 µs, and <= 4x growth from the smallest
to the largest pool. Times depend on the machine and on what else runs on it (each is the best of a few
runs); the verdicts are for this machine.

Usage::

    python benchmarks/allocator.py                          # 10K, 100K, 1M blocks: about 15 s
    python benchmarks/allocator.py --sizes 10000 1000000 --csv benchmarks/results/allocator.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pagedlab.paged.bench import ALLOCATOR_OPS, allocator_costs, cache_hit_cost, fork_cost
from pagedlab.records import write_rows

TARGET_SECONDS = 1e-6
TARGET_GROWTH = 4.0


def source_ops(num_blocks: int) -> int:
    """How many operations to time on the source allocator: each costs O(num_blocks), so fewer when it is big."""
    return min(10_000, max(100, 200_000_000 // num_blocks))


def measure(sizes: list[int], ops: int = 20_000, repeats: int = 3) -> list[dict]:
    """One row per (pool size, operation): ``ours_ns``, ``source_ns`` (None where the source has no such operation)."""
    rows = []
    for n in sizes:
        ours = allocator_costs(n, ops=ops, repeats=repeats)
        source = allocator_costs(n, source=True, ops=source_ops(n), repeats=repeats)
        for op in ALLOCATOR_OPS:
            rows.append({"num_blocks": n, "op": op, "ours_ns": ours[op] * 1e9, "source_ns": source[op] * 1e9})
        rows.append({"num_blocks": n, "op": "fork", "ours_ns": fork_cost(n, repeats=repeats) * 1e9, "source_ns": None})
        rows.append({"num_blocks": n, "op": "cache_hit", "ours_ns": cache_hit_cost(n, repeats=repeats) * 1e9,
                     "source_ns": None})
        print(f"measured {n:,} blocks", flush=True)
    return rows


def report(rows: list[dict]) -> bool:
    """Print the table and the two verdicts (targets are measured, not enforced); return whether both are met."""
    print()
    print(f"{'blocks':>10}  {'operation':<10} {'ours':>10} {'source':>12} {'source/ours':>12}")
    for r in rows:
        src = "n/a" if r["source_ns"] is None else f"{r['source_ns']:,.0f} ns"
        ratio = "" if r["source_ns"] is None else f"{r['source_ns'] / r['ours_ns']:,.1f}x"
        print(f"{r['num_blocks']:>10,}  {r['op']:<10} {r['ours_ns']:>7,.0f} ns {src:>12} {ratio:>12}")
    sizes = sorted({r["num_blocks"] for r in rows})
    ops = list(dict.fromkeys(r["op"] for r in rows))
    at = {(r["num_blocks"], r["op"]): r["ours_ns"] for r in rows}
    worst = max(rows, key=lambda r: r["ours_ns"])
    growth = {op: at[sizes[-1], op] / at[sizes[0], op] for op in ops}
    worst_growth = max(growth, key=growth.get)
    fast = worst["ours_ns"] <= TARGET_SECONDS * 1e9
    flat = growth[worst_growth] <= TARGET_GROWTH
    print(f"\nslowest operation: {worst['op']} at {worst['num_blocks']:,} blocks, {worst['ours_ns']:,.0f} ns")
    print(f"every operation <= 1 µs: {fast}")
    print(f"largest growth {sizes[0]:,} -> {sizes[-1]:,} blocks: {worst_growth} x{growth[worst_growth]:.2f}")
    print(f"growth <= {TARGET_GROWTH:g}x: {flat}")
    return fast and flat


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000], metavar="N")
    p.add_argument("--ops", type=int, default=20_000, help="operations per timed run of our allocator")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per measurement; the best is kept")
    p.add_argument("--csv", type=Path, default=None, help="also write the rows to this CSV file")
    args = p.parse_args(argv)
    rows = measure(sorted(args.sizes), args.ops, args.repeats)
    report(rows)
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        write_rows(args.csv, rows, list(rows[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
