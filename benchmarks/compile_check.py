"""Compile the FlashAttention kernels ahead of time for a GPU architecture, without a GPU (CPU only).

Triton compiles a kernel to PTX and then, with the ``ptxas`` it bundles, to machine code for a target it is told,
whether or not that GPU is present. For each configuration of ``CONFIG_SPACE`` (or a subset) this script
compiles a kernel and reports what the compiler says it needs: shared memory (Triton's count), registers per
thread and bytes spilled to local memory (``ptxas -v``), next to the estimates that ``prune_configs`` uses, and
whether pruning keeps the configuration, and counts SASS instructions of the machine code (``HGMMA``/``HMMA``,
``LDGSTS``/``UTMALDG``, ``MUFU.EX2``; :mod:`pagedlab.perf_lab` does the compiling). It checks that every
configuration still compiles for Ampere (sm_80) and Hopper (sm_90) and shows where the pruning model and the
compiler disagree.

It does not run anything: speed needs a GPU (``make benchmark``). Each compile takes seconds (2 to 6 s for the
forward at d = 128 on a 2-core machine doing nothing else; ``compile_s`` records the time each took where it ran, so
compiles that shared the machine record far more); a kernel's whole space for one head dim takes minutes.

Usage::

    python benchmarks/compile_check.py --arch 90 --kind fwd --head-dim 128
    python benchmarks/compile_check.py --arch 80 --kind dq --head-dim 64 --limit 4 --out results.csv
    python benchmarks/compile_check.py --record      # the whole record: compile/bf16_causal_triton<version>.csv
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
from pathlib import Path

FIELDS = ["triton", "arch", "tma", "kind", "head_dim", "dtype", "causal", "block_m", "block_n", "num_warps",
          "num_stages", "shared_kib", "shared_kib_model", "registers", "spill_bytes", "registers_model",
          "kept_by_pruning", "hgmma", "hmma", "ldgsts", "utmaldg", "mufu_ex2", "compile_s", "compile_cpu_s", "status"]
"""The columns of the CSV it writes (``benchmarks/compile/*.csv``; older records lack the model and SASS columns)."""
RECORD = [(90, "fwd", 64, False), (90, "fwd", 128, False), (90, "fwd", 256, False), (90, "dkdv", 128, False),
          (90, "dq", 128, False), (80, "fwd", 128, False), (90, "fwd", 128, True)]
"""``(arch, kind, head_dim, tma)`` of the runs ``--record`` compiles, bf16 and causal: the record the tests check the
pruning models against."""
RECORD_DIR = Path(__file__).parent / "compile"
"""``--record`` writes ``bf16_causal_triton<major>.<minor>.csv`` here (the tests read the Triton 3.9 one)."""
SMEM_LIMIT_KIB = {80: 163, 86: 99, 89: 99, 90: 227}
"""The most shared memory one block may opt in to, per compute capability (CUDA programming guide)."""


def check(arch: int, kind: str, head_dim: int, dtype: str = "bf16", causal: bool = True,
          limit: int | None = None, tma: bool = False) -> list[dict]:
    """Compile each configuration of ``CONFIG_SPACE[kind]`` (the first ``limit``) for ``sm_<arch>``; one row each."""
    from pagedlab.perf_lab import compile_report, compiled_kernels

    compiled_kernels()  # first: the kernel modules must be imported compiling, not interpreting
    from pagedlab.kernels import flash_autotune as tune

    elem = 4 if dtype == "fp32" else 2
    limit_bytes = SMEM_LIMIT_KIB[arch] * 1024
    kept = set(tune.prune_configs(kind, tune.CONFIG_SPACE[kind], head_dim, elem, limit_bytes, arch // 10))
    rows = []
    for bm, bn, warps, stages in tune.CONFIG_SPACE[kind][:limit]:
        report = compile_report(kind, bm, bn, warps, stages, head_dim, arch, dtype, causal, tma)
        row = {k: report[k] for k in ("triton", "arch", "tma", "kind", "head_dim", "dtype", "causal", "block_m",
                                      "block_n", "num_warps", "num_stages", "compile_s", "compile_cpu_s")}
        row.update(shared_kib_model=tune.shared_memory_bytes(kind, bm, bn, stages, head_dim, elem) // 1024,
                   registers_model=tune.registers_per_thread(kind, bm, bn, warps, head_dim),
                   kept_by_pruning=(bm, bn, warps, stages) in kept, status=report["status"])
        if report["status"] == "ok":
            row.update(registers=report["registers"], spill_bytes=report["spill_bytes"],
                       shared_kib=report["shared_bytes"] // 1024,
                       **{op.lower().replace(".", "_"): n for op, n in report["sass"].items() if op.lower().replace(
                           ".", "_") in FIELDS})
            if report["shared_bytes"] > limit_bytes:
                row["status"] = "too much shared memory"
        rows.append(row)
        print(", ".join(f"{k}={row.get(k, '')}" for k in FIELDS), flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", type=int, choices=sorted(SMEM_LIMIT_KIB), default=90)
    parser.add_argument("--kind", choices=["fwd", "dkdv", "dq"], default="fwd")
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    parser.add_argument("--not-causal", action="store_true")
    parser.add_argument("--tma", action="store_true", help="the forward's tensor-descriptor variant (sm_90)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N configurations")
    parser.add_argument("--out", type=Path, default=None, help="write the rows to this CSV file")
    parser.add_argument("--record", action="store_true",
                        help="compile every run of RECORD (bf16, causal) into --out (default "
                             "compile/bf16_causal_triton<version>.csv)")
    args = parser.parse_args(argv)
    # A Triton cache of its own: every compile is a real one (compile_s is a compile's time, not a cache hit's), and
    # no other process compiling the same kernels races this one for the cache's files.
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="compile_check_")
    if args.record:
        import triton

        args.out = args.out or RECORD_DIR / f"bf16_causal_triton{'.'.join(triton.__version__.split('.')[:2])}.csv"
        rows = [row for arch, kind, head_dim, tma in RECORD for row in check(arch, kind, head_dim, tma=tma)]
    else:
        rows = check(args.arch, args.kind, args.head_dim, args.dtype, not args.not_causal, args.limit, args.tma)
    if args.out:
        with open(args.out, "w", newline="") as f:
            writer = csv.DictWriter(f, FIELDS)
            writer.writeheader()
            writer.writerows(rows)
    spills = [r for r in rows if r.get("spill_bytes", 0) > 0]
    fits = sum(r["status"] == "ok" for r in rows)
    print(f"{len(rows)} configurations, {fits} compiled within the shared memory limit, {len(spills)} spill "
          f"registers ({sum(r['kept_by_pruning'] for r in spills)} of those kept by pruning)")


if __name__ == "__main__":
    sys.exit(main())
