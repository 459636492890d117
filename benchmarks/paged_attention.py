"""Benchmark the paged decode kernel: GB/s of K/V read against the GPU's measured copy bandwidth.

A decode step reads every cached K and V byte once and does about one multiply-add per byte, so its speed
limit is memory bandwidth, not FLOPs. This script measures that limit on the device (a device-to-device copy of
a large buffer: read + write bytes per second) and the kernel's K/V bytes per second, for Llama-3-8B's head
shapes (32 query heads, 8 K/V heads, head dim 128, bf16; ``--models`` adds SmolLM2-135M's 9, 3 and 64) over a
sweep of batch x context x block size, with two layouts of the same kernel:

* ``paged``: each sequence's blocks are a random permutation of the pool (the worst case for locality);
* ``contiguous``: the same pool, sequence ``s`` owning blocks ``s * n, ..., s * n + n - 1`` in order (an
  identity block table): what a contiguous K/V layout gives the same kernel.

``num_splits`` is the kernel's own choice (:func:`choose_num_splits`). The kernel is timed without its host
checks (``context_stats`` given, as the engine calls it): the checks read the context lengths on the host, a
device sync per call that at small batches costs as much as the kernel and would understate its GB/s. The
time with the checks is reported beside it (``ms_checked``). Bytes counted: K and V of every context
token of every sequence, ``2 * batch * context * kv_heads * head_dim * 2`` (q and the output add < 0.1%).
Writes, into one folder:

* ``paged_attention.csv``: one row per (batch, context, block size, layout): milliseconds, GB/s, % of copy bandwidth;
* ``paged_attention.png``: GB/s against context for each batch, paged and contiguous, with the copy bandwidth;
* ``paged_attention_summary.md``: the design's targets (>= 80% of copy bandwidth at batch 64 x 4K; paged within
  10% of contiguous), as measured, never asserted.

Usage::

    python benchmarks/paged_attention.py                 # the full sweep on an NVIDIA GPU (sm_80+), ~1 minute
    python benchmarks/paged_attention.py --quick         # batch 64 x 4K only
    python benchmarks/paged_attention.py --cpu-smoke     # tiny sizes in Triton's interpreter: checks the script
                                                         # runs; its timings measure NumPy, not a GPU
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

from pagedlab.records import publish, run_folder, write_rows
from pagedlab.validate import blocks_for

FIELDS = ["device", "model", "heads", "kv_heads", "head_dim", "batch", "context", "block_size", "layout", "num_splits",
          "ms", "ms_checked", "kv_gbps", "copy_gbps", "pct_of_copy", "torch", "triton"]
MODELS = {"llama3-8b": (32, 8, 128), "smollm2-135m": (9, 3, 64)}
"""Attention shapes (query heads, K/V heads, head dim) of the models ``--models`` names: Llama-3-8B's and
SmolLM2-135M's (the model of notebook 10), from their published configurations."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32, 64, 128])
    p.add_argument("--contexts", type=int, nargs="+", default=[512, 1024, 4096, 16384])
    p.add_argument("--block-sizes", type=int, nargs="+", default=[16, 32, 128])
    p.add_argument("--models", nargs="+", default=["llama3-8b"], choices=sorted(MODELS),
                   help="attention shapes to sweep (default llama3-8b)")
    p.add_argument("--max-tokens", type=int, default=2**21,
                   help="skip points with batch x context above this (default 2M tokens: 8 GiB of K/V)")
    p.add_argument("--out", type=Path, default=None, help="results folder (default benchmarks/results/<gpu>_<date>)")
    p.add_argument("--quick", action="store_true", help="batch 64 x context 4096, block sizes 16 and 128")
    p.add_argument("--no-plot", action="store_true", help="write the CSV only (no PNG, no summary)")
    p.add_argument("--cpu-smoke", action="store_true",
                   help="tiny sizes that run in Triton's interpreter (no GPU): proves the script works")
    args = p.parse_args(argv)
    if args.quick:
        args.batches, args.contexts, args.block_sizes = [64], [4096], [16, 128]
    if args.cpu_smoke:
        args.batches, args.contexts, args.block_sizes = [2], [40], [16]
        args.shapes = {"tiny": (4, 2, 16)}
    else:
        args.shapes = {name: MODELS[name] for name in args.models}
    return args


def timer(fn, gpu: bool) -> float:
    """Median milliseconds of ``fn()``: ``triton.testing.do_bench`` on a GPU, a few wall-clock runs otherwise."""
    if gpu:
        import triton.testing

        return float(triton.testing.do_bench(fn, warmup=25, rep=100))
    fn()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[1]


def copy_bandwidth(torch, gpu: bool, nbytes: int) -> float:
    """GB/s of a device-to-device copy of ``nbytes`` (bytes read + bytes written, per second)."""
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda" if gpu else "cpu")
    dst = torch.empty_like(src)
    ms = timer(lambda: dst.copy_(src), gpu)
    return 2 * nbytes / ms / 1e6


def make_case(torch, batch: int, context: int, block_size: int, shape: tuple[int, int, int], dtype, dev, layout: str,
              seed: int = 0):
    """q, k_cache, v_cache, block_tables, context_lens for one point of ``shape`` (heads, kv_heads, head_dim); the
    pool holds exactly the batch's blocks."""
    heads, kv_heads, head_dim = shape
    g = torch.Generator(device=dev).manual_seed(seed)
    per_seq = blocks_for(context, block_size)
    num_blocks = batch * per_seq
    k_cache = torch.randn((num_blocks, block_size, kv_heads, head_dim), generator=g, device=dev, dtype=dtype)
    v_cache = torch.randn(k_cache.shape, generator=g, device=dev, dtype=dtype)
    order = torch.arange(num_blocks, device=dev)
    if layout == "paged":
        order = torch.randperm(num_blocks, generator=g, device=dev)
    tables = order.reshape(batch, per_seq).to(torch.int32)
    lens = torch.full((batch,), context, dtype=torch.int32, device=dev)
    q = torch.randn(batch, heads, head_dim, generator=g, device=dev, dtype=dtype)
    return q, k_cache, v_cache, tables, lens


def run(args: argparse.Namespace) -> tuple[list[dict], str]:
    from pagedlab import device  # first: Triton's mode must be decided before triton is imported
    import torch
    import triton

    from pagedlab.kernels.paged_attention import choose_num_splits, paged_decode_attention

    gpu = not device.INTERPRET
    if not gpu and not args.cpu_smoke:
        sys.exit("benchmarks/paged_attention.py needs an NVIDIA GPU (compute capability >= 8.0); on a CPU run it "
                 "with --cpu-smoke (tiny sizes, timings of Triton's interpreter, not of a GPU)")
    dev = device.DEVICE
    dtype = torch.bfloat16 if gpu else torch.float32
    name = torch.cuda.get_device_name(0) if gpu else "cpu-interpreter"
    copy_gbps = copy_bandwidth(torch, gpu, 2**30 if gpu else 2**20)
    print(f"{name}: copy bandwidth {copy_gbps:.4g} GB/s")
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count if gpu else None
    rows = []
    points = [(model, shape, bs, batch, context) for model, shape in args.shapes.items() for bs in args.block_sizes
              for batch in args.batches for context in args.contexts if batch * context <= args.max_tokens]
    for model, (heads, kv_heads, head_dim), block_size, batch, context in points:
        splits = choose_num_splits(batch, kv_heads, context, num_sms)
        for layout in ("paged", "contiguous"):
            case = make_case(torch, batch, context, block_size, (heads, kv_heads, head_dim), dtype, dev, layout)
            # The kernel alone (context_stats skips the host checks' device sync), then with its checks.
            stats = (context, batch * context)
            ms = timer(lambda: paged_decode_attention(*case, context_stats=stats), gpu)
            ms_checked = timer(lambda: paged_decode_attention(*case), gpu)
            kv_bytes = 2 * batch * context * kv_heads * head_dim * case[1].element_size()
            gbps = kv_bytes / ms / 1e6
            rows.append(dict(device=name, model=model, heads=heads, kv_heads=kv_heads, head_dim=head_dim, batch=batch,
                             context=context, block_size=block_size, layout=layout, num_splits=splits,
                             ms=f"{ms:.4g}", ms_checked=f"{ms_checked:.4g}", kv_gbps=f"{gbps:.4g}",
                             copy_gbps=f"{copy_gbps:.4g}", pct_of_copy=f"{100 * gbps / copy_gbps:.3g}",
                             torch=torch.__version__, triton=triton.__version__))
            print(f"{model}  block {block_size:3d}  batch {batch:4d}  context {context:6d}  {layout:10s} "
                  f"splits {splits:2d}: {ms:8.3f} ms ({ms_checked:8.3f} checked)  {gbps:8.4g} GB/s  "
                  f"({100 * gbps / copy_gbps:5.3g}% of copy)")
            del case
    return rows, name


def plot(rows: list[dict], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    block_sizes = sorted({int(r["block_size"]) for r in rows})
    fig, axes = plt.subplots(1, len(block_sizes), figsize=(5 * len(block_sizes), 3.8), squeeze=False)
    for ax, bs in zip(axes[0], block_sizes):
        for batch in sorted({int(r["batch"]) for r in rows}):
            for layout, style in (("paged", "-o"), ("contiguous", "--x")):
                pts = [(int(r["context"]), float(r["kv_gbps"])) for r in rows
                       if int(r["block_size"]) == bs and int(r["batch"]) == batch and r["layout"] == layout]
                if pts:
                    ax.plot(*zip(*pts), style, label=f"batch {batch}, {layout}", markersize=4)
        ax.axhline(float(rows[0]["copy_gbps"]), color="black", linewidth=1, label="device copy bandwidth")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("context (tokens)")
        ax.set_ylabel("K/V read (GB/s)")
        ax.set_title(f"block_size {bs}")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"paged decode attention, {rows[0]['model']} heads, {rows[0]['device']}")
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def summary(rows: list[dict], name: str) -> str:
    def point(model, batch, context, bs, layout):
        return next((r for r in rows if (r["model"], int(r["batch"]), int(r["context"]), int(r["block_size"]),
                                         r["layout"]) == (model, batch, context, bs, layout)), None)

    lines = [f"# Paged decode attention on {name}", "",
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. Measured, never asserted. "
             "The course's targets: >= 80% of the copy bandwidth at batch 64 x context 4K; paged within 10% of "
             "contiguous (the same kernel with an identity block table).", "",
             "| model | block_size | batch | context | paged GB/s | % of copy | contiguous GB/s | paged / contiguous |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["layout"] != "paged":
            continue
        c = point(r["model"], int(r["batch"]), int(r["context"]), int(r["block_size"]), "contiguous")
        ratio = float(r["kv_gbps"]) / float(c["kv_gbps"]) if c and float(c["kv_gbps"]) else float("nan")
        lines.append(f"| {r['model']} | {r['block_size']} | {r['batch']} | {r['context']} | {r['kv_gbps']} | "
                     f"{r['pct_of_copy']}% | "
                     f"{c['kv_gbps'] if c else '-'} | {ratio:.2f} |")
    lines += ["", f"Copy bandwidth (device-to-device copy, read + write): {rows[0]['copy_gbps']} GB/s."]
    if name == "cpu-interpreter":
        lines += ["", "A --cpu-smoke run: Triton's interpreter on the CPU. These timings measure NumPy, not a GPU."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows, name = run(args)
    if not rows:
        sys.exit("no point fits --max-tokens")
    out = run_folder(name, args.out)
    write_rows(out / "paged_attention.csv", rows, FIELDS)
    if args.no_plot:
        print(f"{len(rows)} rows in {out / 'paged_attention.csv'}")
        return 0
    plot([r for r in rows if r["model"] == rows[0]["model"]], out / "paged_attention.png")
    publish(summary(rows, name), out / "paged_attention_summary.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
