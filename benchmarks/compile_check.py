"""Compile the FlashAttention kernels ahead of time for a GPU architecture, without a GPU (CPU only).

Triton compiles a kernel to PTX and then, with the ``ptxas`` it bundles, to machine code for a target it is told,
whether or not that GPU is present. For each configuration of ``CONFIG_SPACE`` (or a subset) this script
compiles a kernel and reports what the compiler says it needs: shared memory (Triton's count), registers per
thread and bytes spilled to local memory (``ptxas -v``), next to the estimates that ``prune_configs`` uses, and
whether pruning keeps the configuration. It checks that every configuration still compiles for Ampere (sm_80)
and Hopper (sm_90) and shows where the pruning model and the compiler disagree.

It does not run anything: speed needs a GPU (``make benchmark``). Each compile takes seconds; a kernel's whole
space for one head dim takes minutes on a laptop.

Usage::

    python benchmarks/compile_check.py --arch 90 --kind fwd --head-dim 128
    python benchmarks/compile_check.py --arch 80 --kind dq --head-dim 64 --limit 4 --out results.csv
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIELDS = ["arch", "tma", "kind", "head_dim", "dtype", "causal", "block_m", "block_n", "num_warps", "num_stages",
          "shared_kib", "shared_kib_model", "registers", "spill_bytes", "registers_model", "kept_by_pruning",
          "compile_s", "status"]
SMEM_LIMIT_KIB = {80: 163, 86: 99, 89: 99, 90: 227}
"""The most shared memory one block may opt in to, per compute capability (CUDA programming guide)."""


def _kernels():
    # pagedlab.device chooses the interpreter on a machine without a GPU; compiling needs real JIT functions,
    # so the kernel modules are imported with TRITON_INTERPRET=0, after pagedlab.device has made its choice.
    import pagedlab.device  # noqa: F401

    os.environ["TRITON_INTERPRET"] = "0"
    from pagedlab.kernels import flash_attention, flash_backward, flash_forward

    return flash_attention, {"fwd": flash_forward.fwd_kernel, "dkdv": flash_backward.bwd_dkdv_kernel,
                             "dq": flash_backward.bwd_dq_kernel}


def _signature(kernel, dtype: str) -> tuple[dict[str, str], dict[str, int], dict[tuple[int], list]]:
    """(signature, constexprs, attrs) of a launch on contiguous (batch, heads, seq, head_dim) tensors, as the JIT
    would specialize it: the head-dim strides equal 1 (compiled as constants), the other strides and the
    pointers divisible by 16 (a hint that allows vectorized, asynchronous loads)."""
    constexprs = {"HEAD_DIM", "CAUSAL", "TRACE", "PRECISION", "BLOCK_M", "BLOCK_N", "TMA"}
    floats = {"qk_scale", "sm_scale"}
    fp32_buffers = {"Lse", "Trace", "Delta"}
    sig, ones, attrs = {}, {}, {}
    for i, name in enumerate(kernel.arg_names):
        if name in constexprs:
            sig[name] = "constexpr"
        elif name.startswith("stride_") and name.endswith("d"):
            sig[name], ones[name] = "constexpr", 1
        elif name in floats:
            sig[name] = "fp32"
        elif name in fp32_buffers or name[0].isupper():
            sig[name] = "*fp32" if name in fp32_buffers else f"*{dtype}"
            attrs[(i,)] = [["tt.divisibility", 16]]
        else:
            sig[name] = "i32"
            if name.startswith("stride_"):
                attrs[(i,)] = [["tt.divisibility", 16]]
    return sig, ones, attrs


def _ptxas_usage(ptx: str, arch: int) -> tuple[int, int]:
    """(registers per thread, spill store bytes) from ``ptxas -v``; Triton bundles two ptxas, use the newer."""
    import triton

    bin_dir = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
    suffix = "a" if arch == 90 else ""
    for ptxas in (bin_dir / "ptxas-blackwell", bin_dir / "ptxas"):
        if not ptxas.exists():
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
            f.write(ptx)
        try:
            out = subprocess.run([str(ptxas), f"-arch=sm_{arch}{suffix}", "-v", f.name, "-o", os.devnull],
                                 capture_output=True, text=True, timeout=300)
        finally:
            os.unlink(f.name)
        regs = re.search(r"Used (\d+) registers", out.stderr)
        spill = re.search(r"(\d+) bytes spill stores", out.stderr)
        if regs:
            return int(regs.group(1)), int(spill.group(1)) if spill else 0
    return -1, -1


def check(arch: int, kind: str, head_dim: int, dtype: str = "bf16", causal: bool = True,
          limit: int | None = None, tma: bool = False) -> list[dict]:
    """Compile each configuration of ``CONFIG_SPACE[kind]`` (the first ``limit``) for ``sm_<arch>``; one row each."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fa, kernels = _kernels()
    elem = 4 if dtype == "fp32" else 2
    limit_bytes = SMEM_LIMIT_KIB[arch] * 1024
    kept = set(fa.prune_configs(kind, fa.CONFIG_SPACE[kind], head_dim, elem, limit_bytes))
    rows = []
    for bm, bn, warps, stages in fa.CONFIG_SPACE[kind][:limit]:
        constexprs = dict(HEAD_DIM=head_dim, CAUSAL=causal, PRECISION="ieee" if dtype == "fp32" else "tf32",
                          BLOCK_M=bm, BLOCK_N=bn)
        if kind == "fwd":
            constexprs.update(TRACE=False, TMA=tma)
        row = dict(arch=arch, tma=tma, kind=kind, head_dim=head_dim, dtype=dtype, causal=causal, block_m=bm, block_n=bn,
                   num_warps=warps, num_stages=stages,
                   shared_kib_model=fa.shared_memory_bytes(kind, bm, bn, stages, head_dim, elem) // 1024,
                   registers_model=fa.registers_per_thread(kind, bm, bn, warps, head_dim),
                   kept_by_pruning=(bm, bn, warps, stages) in kept)
        start = time.perf_counter()
        signature, ones, attrs = _signature(kernels[kind], dtype)
        try:
            compiled = triton.compile(ASTSource(fn=kernels[kind], signature=signature,
                                                constexprs={**constexprs, **ones}, attrs=attrs),
                                      target=GPUTarget("cuda", arch, 32),
                                      options={"num_warps": warps, "num_stages": stages})
            row["registers"], row["spill_bytes"] = _ptxas_usage(compiled.asm["ptx"], arch)
            row["shared_kib"] = compiled.metadata.shared // 1024
            row["status"] = "ok" if compiled.metadata.shared <= limit_bytes else "too much shared memory"
        except Exception as error:  # a configuration the compiler refuses is a result, not a crash
            row["status"] = f"error: {type(error).__name__}: {str(error).splitlines()[0][:120]}"
        row["compile_s"] = round(time.perf_counter() - start, 1)
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
    args = parser.parse_args(argv)
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
