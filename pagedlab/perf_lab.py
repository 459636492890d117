"""Performance without a GPU: compile the FlashAttention kernels ahead of time, read the compiler's answer, and
budget a tile's work.

Triton compiles a kernel for a GPU it is told about, present or not, and bundles NVIDIA's ``ptxas`` (PTX to machine
code, with ``-v``: registers and spills) and ``nvdisasm`` (machine code to SASS, the GPU's assembly). So a CPU-only
machine can answer what a configuration costs in registers, spills and shared memory, and which instructions it
runs: ``HGMMA`` (Hopper's warpgroup matrix multiply) or ``HMMA`` (Ampere's warp-level one), ``LDGSTS`` (an
asynchronous global-to-shared copy) or ``UTMALDG`` (a TMA tile load), ``MUFU.EX2`` (the special-function unit's
``exp2``). What it cannot answer is the time: that needs a GPU.

* :func:`compile_reports`: configurations compiled for ``sm_<arch>`` (in a fresh process, so that it works from a
  notebook whose kernels run in the interpreter): registers, spills, shared memory, SASS counts;
* :func:`score_budget` and :func:`exp_time_fraction`: per score, tensor-core FLOPs against exponentials, and how long
  the exponentials take next to the matrix products on a GPU of given per-clock rates (a model);
* :func:`tile_budget`: FLOPs, bytes and exponentials of one pass of the forward's loop (a model);
* :func:`live_tile_registers`: the registers the forward's live tiles take (a model, a lower bound);
* :func:`forward_hbm_bytes`: the forward's HBM traffic per (batch, head) for a query tile height (a model);
* :func:`makespan` and :func:`causal_work`: the launch-order model of notebook 04b.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pagedlab.tile_model import tile_elements
from pagedlab.validate import blocks_for, check_count

H100_RATES = {"mma_flops_per_clock": 4096, "exp_per_clock": 16}
"""Per SM and clock on an H100 SXM: dense bf16 tensor-core FLOPs and ``exp2`` results of the special-function units.
From FlashAttention-3 (Shah et al. 2024, section 3.1): 989 TFLOP/s of matmul against 3.9 TFLOP/s of special
functions; over 132 SMs at 1.83 GHz that is 4096 FLOPs and 16 exponentials per SM per clock."""

SASS_OPS = ("HGMMA", "HMMA", "LDGSTS", "UTMALDG", "MUFU.EX2", "FFMA", "FMUL")
"""The SASS opcodes :func:`compile_report` counts (a prefix: ``HGMMA.64x64x16.F32.BF16`` counts as ``HGMMA``)."""


def score_budget(head_dim: int, kind: str = "fwd") -> dict[str, int]:
    """Tensor-core FLOPs and exponentials per score (one query-key pair) of a kernel.

    Every matrix product touching a score costs ``2 * head_dim`` FLOPs for it. The forward runs two products
    (``Q K^T``, ``P V``) and one ``exp2``; the course's backward (``kind="bwd"``) runs seven products and recomputes
    P twice (once in the dK/dV kernel, once in the dQ kernel): two ``exp2``.

    Raises:
        ValueError: ``kind`` not ``"fwd"`` or ``"bwd"``, or a non-positive ``head_dim``. TypeError: ``head_dim`` not
            an int.
    """
    products = {"fwd": (2, 1), "bwd": (7, 2)}
    if kind not in products:
        raise ValueError(f"kind must be 'fwd' or 'bwd', got {kind!r}")
    check_count("head_dim", head_dim, 1)
    n_products, exps = products[kind]
    return {"products": n_products, "mma_flops": n_products * 2 * head_dim, "exps": exps}


def exp_time_fraction(head_dim: int, kind: str = "fwd", mma_flops_per_clock: float = 4096,
                      exp_per_clock: float = 16) -> float:
    """Clocks the exponentials of a score take, as a fraction of the clocks its matrix products take (a model).

    With :data:`H100_RATES` at ``head_dim = 128``: the forward's 512 FLOPs take 1/8 clock per SM, its ``exp2`` 1/16:
    the exponentials cost half the matmul time, unless they overlap with it (FlashAttention-3's ping-pong scheduling).
    """
    budget = score_budget(head_dim, kind)
    return (budget["exps"] / exp_per_clock) / (budget["mma_flops"] / mma_flops_per_clock)


def tile_budget(block_m: int, block_n: int, head_dim: int, mma_flops_per_clock: float = 4096,
                exp_per_clock: float = 16, elem_bytes: int = 2) -> dict[str, float]:
    """One pass of the forward's loop over key tiles, budgeted (a model; L2 hits count as loads).

    The pass loads a ``block_n x head_dim`` tile of K and one of V (``2 * block_n * head_dim * elem_bytes`` bytes;
    the query tile is loaded once per program, not per pass), runs two products on them (``2 * 2 * block_m *
    block_n * head_dim`` FLOPs) and one ``exp2`` per score (``block_m * block_n``).

    Returns:
        ``{"flops", "bytes", "exps", "flops_per_byte", "exp_fraction"}``: ``flops_per_byte`` is
        ``2 * block_m / elem_bytes``, whatever ``block_n`` and ``head_dim`` (only the query tile's height buys
        reuse); ``exp_fraction`` is the exponentials' clocks over the products' clocks at the given rates.
    """
    flops = 2 * (2 * block_m * block_n * head_dim)
    nbytes = 2 * block_n * head_dim * elem_bytes
    exps = block_m * block_n
    return {"flops": flops, "bytes": nbytes, "exps": exps, "flops_per_byte": flops / nbytes,
            "exp_fraction": (exps / exp_per_clock) / (flops / mma_flops_per_clock)}


def live_tile_registers(block_m: int, block_n: int, num_warps: int, head_dim: int) -> float:
    """32-bit registers per thread that the forward's live tiles take (a model, and a lower bound on ptxas's count).

    The tiles a forward program keeps in registers across its loop (:func:`pagedlab.tile_model.tile_elements`,
    the autotuner's model) are the float32 accumulator O (``block_m x head_dim``) and the score tile, float32 S
    (``block_m x block_n``) with its bf16 copy P (half a register per element), spread over ``32 * num_warps`` threads. Q, K and V are not counted: Triton keeps them in shared
    memory, where Hopper's ``wgmma`` reads its operands. In the sm_90 compiles of ``benchmarks/compile/`` that did
    not spill, ptxas used 35 to 142 registers more (addresses, masks, the running max and sum, loop state), and 26 to
    84 more in the variant that loads K and V through tensor descriptors (TMA), whose addresses the descriptor holds.
    """
    kept, scores, _ = tile_elements("fwd", block_m, block_n, head_dim)
    return (kept + 1.5 * scores) / (32 * num_warps)


def forward_hbm_bytes(block_m: int, n: int, head_dim: int, elem_bytes: int = 2, causal: bool = True) -> int:
    """HBM bytes the forward reads and writes for one (batch, head) at ``n`` queries and keys (a model: FlashAttention's
    IO count, no L2 cache): Q read and O written once, and K and V read once per query tile, up to the diagonal when
    ``causal`` (query tile ``i`` of ``ceil(n / block_m)`` reads ``min(n, (i + 1) * block_m)`` keys). Fewer, larger
    query tiles read K and V fewer times."""
    tiles = blocks_for(n, block_m)
    keys = sum(min(n, (i + 1) * block_m) if causal else n for i in range(tiles))
    return (2 * n * head_dim + 2 * keys * head_dim) * elem_bytes


def causal_work(n: int, batch_heads: int, block_m: int, heaviest_first: bool) -> list[int]:
    """Work of each program of a causal forward grid, in launch order (axis 0, the query tile, fastest): query
    tile ``i`` loads ``i + 1`` key tiles (square tiles, ``n_q = n_k = n``)."""
    tiles = blocks_for(n, block_m)
    order = range(tiles - 1, -1, -1) if heaviest_first else range(tiles)
    return [i + 1 for _ in range(batch_heads) for i in order]


def makespan(work: list[int], slots: int) -> int:
    """When the last program finishes if each of ``slots`` SMs takes the next program in launch order as soon as it
    is free (a model: dispatch in program-id order is what GPUs are observed to do, not a guarantee)."""
    finish = [0] * slots
    for w in work:
        i = finish.index(min(finish))
        finish[i] += w
    return max(finish)


# --------------------------------------------------------------------------------------------------
# Compiling ahead of time
# --------------------------------------------------------------------------------------------------

def compiled_kernels() -> dict:
    """The three FlashAttention kernels as JIT functions that compile, ``{"fwd": ..., "dkdv": ..., "dq": ...}``.

    ``pagedlab.device`` chooses the interpreter on a machine without a GPU; compiling needs real JIT functions, so
    the kernel modules must be imported with ``TRITON_INTERPRET=0``, after ``pagedlab.device`` has made its choice:
    call this before anything imports ``pagedlab.kernels`` (or use :func:`compile_reports`, which compiles in a
    fresh process).

    Raises:
        RuntimeError: the kernels were already imported in interpreter mode in this process.
    """
    import pagedlab.device  # noqa: F401

    os.environ["TRITON_INTERPRET"] = "0"
    from pagedlab.kernels import flash_backward, flash_forward

    if not hasattr(flash_forward.fwd_kernel, "cache_key"):
        raise RuntimeError("the kernels were imported in Triton's interpreter mode in this process; compile in a "
                           "fresh one (pagedlab.perf_lab.compile_reports does)")
    return {"fwd": flash_forward.fwd_kernel, "dkdv": flash_backward.bwd_dkdv_kernel, "dq": flash_backward.bwd_dq_kernel}


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


def _tool(name: str) -> Path | None:
    import triton

    path = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name
    return path if path.exists() else None


def ptxas_usage(ptx: str, arch: int) -> tuple[int, int]:
    """(registers per thread, spill store bytes) from ``ptxas -v``; Triton bundles two ptxas, use the newer.
    (-1, -1) when no bundled ptxas answers."""
    suffix = "a" if arch == 90 else ""
    for ptxas in filter(None, (_tool("ptxas-blackwell"), _tool("ptxas"))):
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


def sass_counts(cubin: bytes) -> dict[str, int]:
    """How many instructions of each of :data:`SASS_OPS` the machine code holds (static counts: an instruction in
    a loop counts once), by disassembling it with the ``nvdisasm`` Triton bundles; empty without one."""
    nvdisasm = _tool("nvdisasm")
    if nvdisasm is None:
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    try:
        text = subprocess.run([str(nvdisasm), "-c", f.name], capture_output=True, text=True, timeout=300).stdout
    finally:
        os.unlink(f.name)
    # A SASS line: /*0a50*/  @!P0 HGMMA.64x64x16.F32.BF16 gdesc[UR4], ... ;  the opcode follows an optional predicate.
    opcodes = re.findall(r"/\*[0-9a-f]+\*/\s+(?:@!?U?P[T\d]+\s+)?([A-Z][A-Z0-9_.]*)", text)
    counts = collections.Counter(opcodes)
    return {op: sum(n for name, n in counts.items() if name == op or name.startswith(op + "."))
            for op in SASS_OPS}


def compile_report(kind: str, block_m: int, block_n: int, num_warps: int, num_stages: int, head_dim: int = 128,
                   arch: int = 90, dtype: str = "bf16", causal: bool = True, tma: bool = False) -> dict:
    """Compile one configuration of a FlashAttention kernel for ``sm_<arch>`` and say what the compiler reports.

    Args:
        kind: ``"fwd"``, ``"dkdv"`` or ``"dq"``. block_m, block_n, num_warps, num_stages: the configuration.
        head_dim, dtype (``"bf16"``, ``"fp16"``, ``"fp32"``), causal: the specialization. arch: 80 (A100) or 90
            (H100/H200). tma: the forward's tensor-descriptor variant.

    Returns:
        A dict: the arguments; ``registers`` and ``spill_bytes`` per thread (``ptxas -v``), ``shared_bytes`` (Triton's
        count), ``sass`` (:func:`sass_counts`), ``compile_s`` (wall seconds this compile took here: depends on the
        machine and what else it runs), ``compile_cpu_s`` (the CPU seconds it used, ptxas included), ``status``
        (``"ok"``, or the compiler's error: a result, not a crash).

    Raises:
        ValueError: an unknown ``kind``.
    """
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    kernels = compiled_kernels()
    if kind not in kernels:
        raise ValueError(f"kind must be one of {sorted(kernels)}, got {kind!r}")
    constexprs = dict(HEAD_DIM=head_dim, CAUSAL=causal, PRECISION="ieee" if dtype == "fp32" else "tf32",
                      BLOCK_M=block_m, BLOCK_N=block_n)
    if kind == "fwd":
        constexprs.update(TRACE=False, TMA=tma)
    report = dict(kind=kind, block_m=block_m, block_n=block_n, num_warps=num_warps, num_stages=num_stages,
                  head_dim=head_dim, arch=arch, dtype=dtype, causal=causal, tma=tma, triton=triton.__version__)
    start, cpu_start = time.perf_counter(), _cpu_seconds()
    signature, ones, attrs = _signature(kernels[kind], dtype)
    try:
        compiled = triton.compile(ASTSource(fn=kernels[kind], signature=signature, constexprs={**constexprs, **ones},
                                            attrs=attrs),
                                  target=GPUTarget("cuda", arch, 32), options={"num_warps": num_warps,
                                                                                "num_stages": num_stages})
        report["registers"], report["spill_bytes"] = ptxas_usage(compiled.asm["ptx"], arch)
        report["shared_bytes"] = compiled.metadata.shared
        report["sass"] = sass_counts(compiled.asm["cubin"])
        report["status"] = "ok"
    except Exception as error:  # a configuration the compiler refuses is a result, not a crash
        report["status"] = f"error: {type(error).__name__}: {(str(error).splitlines() or [''])[0][:120]}"
    report["compile_s"] = round(time.perf_counter() - start, 1)
    report["compile_cpu_s"] = round(_cpu_seconds() - cpu_start, 1)
    return report


def _cpu_seconds() -> float:
    # This process's CPU time and its finished children's (ptxas, nvdisasm): unlike the wall clock, what a compile
    # costs, not how busy the machine was.
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def compile_reports(configs: list[dict], timeout_s: int = 600) -> list[dict]:
    """:func:`compile_report` of each dict of keyword arguments in ``configs``, compiled in one fresh Python process
    (this process may already run the kernels in Triton's interpreter, which cannot compile them).

    Raises:
        RuntimeError: the compiling process failed (its last lines of output say why).
    """
    key = json.dumps(configs, sort_keys=True)
    if key in _REPORTS:  # compiling is deterministic: a notebook run again in this process reuses the reports
        return [dict(r) for r in _REPORTS[key]]
    root = str(Path(__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory() as cache:
        # A cache of its own: every compile is a real one (its time is a compile's, not a cache hit's), and no other
        # process compiling the same kernel races it for the cache's files.
        env = {**os.environ, "TRITON_INTERPRET": "0", "TRITON_CACHE_DIR": cache,
               "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        done = subprocess.run([sys.executable, "-m", "pagedlab.perf_lab"], input=json.dumps(configs), text=True,
                              capture_output=True, env=env, timeout=timeout_s)
    if done.returncode != 0:
        raise RuntimeError("compiling failed: " + "\n".join((done.stdout + done.stderr).splitlines()[-5:]))
    _REPORTS[key] = json.loads(done.stdout.splitlines()[-1])
    return [dict(r) for r in _REPORTS[key]]


_REPORTS: dict[str, list[dict]] = {}


def recorded_forward_timings(results: Path, head_dim: int = 128, causal: bool = True) -> tuple[str, dict] | None:
    """The forward's autotuning times from the most recent GPU run recorded under ``results``
    (``benchmarks/results/<gpu>_<date>/flash_attention.csv``, column ``config_ms``), bf16, at the longest N.

    Returns:
        ``(run folder name, {(block_m, block_n, num_warps, num_stages): milliseconds})``, or None when no run with
        autotuning times is recorded.
    """
    import csv

    runs = sorted(Path(results).glob("*/flash_attention.csv"), key=lambda p: p.parent.name[-10:])
    for path in reversed(runs):
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r.get("config_ms") and r["provider"] == "triton"
                    and r["mode"] == "fwd" and r["dtype"] == "bf16" and r["causal"] == str(causal)
                    and int(r["head_dim"]) == head_dim]
        if rows:
            row = max(rows, key=lambda r: int(r["n"]))
            times = {}
            for item in row["config_ms"].split("; "):
                match = re.fullmatch(r"fwd (\d+)x(\d+) w(\d+) s(\d+)=([\d.]+)", item.strip())
                if match:
                    times[tuple(int(g) for g in match.groups()[:4])] = float(match.group(5))
            if times:
                return path.parent.name, times
    return None


if __name__ == "__main__":
    print(json.dumps([compile_report(**config) for config in json.load(sys.stdin)]))
