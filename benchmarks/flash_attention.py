"""Benchmark our Triton FlashAttention against PyTorch's attention backends and naive attention (GPU only).

For every dtype, head dim, causal flag and sequence length N, each provider runs the forward and the backward
(timed separately with ``triton.testing.do_bench``, median); forward+backward is their sum. Providers:

* ``triton``: ``pagedlab.kernels.flash_attention.flash_attention`` (autotuned on first use of each shape);
* ``sdpa-flash``, ``sdpa-cudnn``, ``sdpa-efficient``, ``sdpa-math``:
  ``torch.nn.functional.scaled_dot_product_attention`` forced to one backend with ``torch.nn.attention.sdpa_kernel``;
* ``naive``: ``pagedlab.attention.naive_attention``, the N x N definition.

TFLOP/s use the usual count (``attention_flops``: 4·B·H·N²·d for the forward, halved when causal, 2.5x for the
backward, the five products of FlashAttention-2), for every provider alike; our backward really runs seven
products (``attention_flops(..., count="kernel")``), so its hardware throughput is 1.4x the figure reported. Peak memory is the most the step
allocated beyond its inputs. The batch shrinks as N grows so that every point has the same number of tokens. Writes, into one folder:

* ``flash_attention.csv``: one row per (dtype, causal, head_dim, N, mode, provider), with the status
  (``ok``, ``oom``, ``unsupported``: the backend refuses the shape, ``skipped``: N x N too big to try); for our
  kernels also the configuration autotuning chose (``config``, per kernel ``BLOCK_M x BLOCK_N, warps, stages``)
  and the time autotuning measured for every configuration it tried (``config_ms``), and the versions;
* ``flash_attention.png``: TFLOP/s against N, and peak memory against N;
* ``summary.md``: the headline ratios against SDPA's flash backend (bf16, causal, d = 128, N >= 4K).

Usage (on a machine with an NVIDIA GPU of compute capability >= 8.0)::

    python benchmarks/flash_attention.py                  # the full grid (time: mostly autotuning compiles)
    python benchmarks/flash_attention.py --quick          # two lengths, bf16, d = 128
    python benchmarks/flash_attention.py --out benchmarks/results/mine --seq-lens 1024 4096
    python benchmarks/flash_attention.py --cpu-smoke --out /tmp/smoke   # no GPU: tiny sizes in the interpreter,
                                                                        # proves the script runs; times NumPy
"""

from __future__ import annotations

import argparse
import csv
import datetime
import sys
from pathlib import Path

from pagedlab.records import publish, run_folder, write_rows

PROVIDERS = ("triton", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "sdpa-math", "naive")
QUADRATIC = ("sdpa-math", "naive")  # materialize N x N scores: skipped above --quadratic-max-n
FIELDS = ["gpu", "dtype", "causal", "head_dim", "n", "batch", "heads", "mode", "provider", "ms", "tflops",
          "peak_mib", "status", "config", "config_ms", "torch", "triton"]
TUNED_KERNELS = {"fwd": ("fwd",), "bwd": ("dkdv", "dq")}
"""The kernels of our provider that each timed mode runs (their autotuned configurations go in the row)."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Writes flash_attention.csv, flash_attention.png and summary.md into --out.")
    p.add_argument("--seq-lens", type=int, nargs="+", default=[1024, 2048, 4096, 8192, 16384], metavar="N")
    p.add_argument("--head-dims", type=int, nargs="+", default=[64, 128], metavar="D")
    p.add_argument("--dtypes", nargs="+", default=["bf16", "fp16"], choices=["bf16", "fp16", "fp32"])
    p.add_argument("--causal", nargs="+", default=["true", "false"], choices=["true", "false"])
    p.add_argument("--providers", nargs="+", default=list(PROVIDERS), choices=PROVIDERS)
    p.add_argument("--tokens", type=int, default=16384, help="batch x N at every point (default 16384)")
    p.add_argument("--hidden", type=int, default=2048, help="heads x head_dim (default 2048)")
    p.add_argument("--quadratic-max-n", type=int, default=8192,
                   help="largest N for the providers that build the N x N matrix (default 8192)")
    p.add_argument("--out", type=Path, default=None,
                   help="results folder (default benchmarks/results/<gpu>_<date>)")
    p.add_argument("--quick", action="store_true", help="N = 1024 and 4096, bf16, d = 128, causal only")
    p.add_argument("--no-plot", action="store_true", help="write the CSV only (no PNG, no summary.md)")
    p.add_argument("--cpu-smoke", action="store_true",
                   help="no GPU: tiny sizes in Triton's interpreter, float32, our kernel and two SDPA backends; "
                        "proves the script runs (its timings measure NumPy)")
    args = p.parse_args(argv)
    if args.quick:
        args.seq_lens, args.head_dims, args.dtypes, args.causal = [1024, 4096], [128], ["bf16"], ["true"]
    if args.cpu_smoke:
        args.seq_lens, args.head_dims, args.dtypes = [64], [16], ["fp32"]
        args.providers, args.tokens, args.hidden = ["triton", "sdpa-cudnn", "sdpa-math"], 64, 32
    return args


def require_gpu() -> None:
    """Exit with a clear message unless Triton compiles for a CUDA GPU here."""
    import torch

    if not torch.cuda.is_available():
        sys.exit("benchmarks/flash_attention.py measures GPU kernels and needs an NVIDIA GPU with compute "
                 "capability >= 8.0; this machine has no CUDA device. (The kernels' correctness tests run on "
                 "the CPU: python -m pytest tests/kernels/test_flash_attention.py)")
    from pagedlab import device

    if device.INTERPRET:
        sys.exit(f"benchmarks/flash_attention.py needs Triton to compile for the GPU, but: {device.MODE.reason}")


def measure(step, inputs, warmup_ms: int = 10, rep_ms: int = 50) -> tuple[float, float]:
    """(median milliseconds, peak MiB allocated beyond the inputs) of ``step()``; on the CPU (``--cpu-smoke``) the
    wall-clock time of one more run and no memory figure."""
    import time

    import torch
    import triton

    step()  # the first call compiles and autotunes (whose buffers must not count as the step's memory)
    if not torch.cuda.is_available():
        start = time.perf_counter()
        step()
        return (time.perf_counter() - start) * 1e3, float("nan")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    step()
    torch.cuda.synchronize()
    peak = (torch.cuda.max_memory_allocated() - base) / 2**20
    ms = triton.testing.do_bench(step, warmup=warmup_ms, rep=rep_ms, grad_to_none=inputs, return_mode="median")
    return ms, peak


def tuned_configs(kinds: tuple[str, ...]) -> tuple[str, str]:
    """(``config``, ``config_ms``) of the kernels ``kinds`` as their autotuners last left them: the configuration
    chosen (``fwd 128x64 w8 s3``) and the median milliseconds of every configuration timed, ``;``-separated.
    Empty where a kernel was not autotuned (the interpreter, float32)."""
    from pagedlab.kernels.flash_autotune import tuned_kernel

    def name(c) -> str:
        return f"{c.kwargs['BLOCK_M']}x{c.kwargs['BLOCK_N']} w{c.num_warps} s{c.num_stages}"

    chosen, timed = [], []
    for kind in kinds:
        tuner = tuned_kernel(kind)
        if tuner is None or getattr(tuner, "best_config", None) is None:
            continue
        chosen.append(f"{kind} {name(tuner.best_config)}")
        for config, ms in (getattr(tuner, "configs_timings", None) or {}).items():
            ms = ms[0] if isinstance(ms, (list, tuple)) else ms
            timed.append(f"{kind} {name(config)}={ms:.4f}")
    return "; ".join(chosen), "; ".join(timed)


def run_case(provider: str, q, k, v, causal: bool) -> dict[str, tuple[float, float]]:
    """Time the forward and the backward of one provider; returns {mode: (ms, peak MiB)}, and for our provider
    {mode + "_config": (config, config_ms)} from :func:`tuned_configs`."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from pagedlab.attention import naive_attention
    from pagedlab.kernels.flash_attention import flash_attention

    backends = {"sdpa-flash": SDPBackend.FLASH_ATTENTION, "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
                "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION, "sdpa-math": SDPBackend.MATH}

    def forward():
        if provider == "triton":
            return flash_attention(q, k, v, causal=causal)
        if provider == "naive":
            return naive_attention(q, k, v, causal=causal)
        with sdpa_kernel(backends[provider]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    with torch.no_grad():
        results = {"fwd": measure(forward, None)}
    if provider == "triton":
        results["fwd_config"] = tuned_configs(TUNED_KERNELS["fwd"])
    out = forward()
    d_out = torch.randn_like(out)
    results["bwd"] = measure(lambda: out.backward(d_out, retain_graph=True), [q, k, v])
    if provider == "triton":
        results["bwd_config"] = tuned_configs(TUNED_KERNELS["bwd"])
    return results


def rows_for(args: argparse.Namespace, gpu: str):
    """Yield the CSV rows of the whole grid, one (dtype, causal, d, N, provider) at a time."""
    from pagedlab import device  # first, as in main()
    import torch
    import triton
    from tqdm.auto import tqdm

    from pagedlab.roofline import attention_flops

    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    dev = device.DEVICE
    cases = [(dt, c == "true", d, n, p) for dt in args.dtypes for c in args.causal for d in args.head_dims
             for n in args.seq_lens for p in args.providers]
    bar = tqdm(cases, desc="flash attention", unit="case")
    for dtype, causal, d, n, provider in bar:
        bar.set_postfix_str(f"{dtype} {'causal' if causal else 'full'} d={d} N={n} {provider}")
        batch, heads = max(1, args.tokens // n), max(1, args.hidden // d)
        base = dict(gpu=gpu, dtype=dtype, causal=causal, head_dim=d, n=n, batch=batch, heads=heads,
                    provider=provider, torch=torch.__version__, triton=triton.__version__)
        if provider in QUADRATIC and n > args.quadratic_max_n:
            results, status = {}, "skipped"
        else:
            g = torch.Generator(device=dev).manual_seed(0)
            q, k, v = (torch.randn(batch, heads, n, d, device=dev, dtype=dtypes[dtype], generator=g)
                       .requires_grad_() for _ in range(3))
            try:
                results, status = run_case(provider, q, k, v, causal), "ok"
            except torch.cuda.OutOfMemoryError:
                results, status = {}, "oom"
            except RuntimeError:
                if not provider.startswith("sdpa"):
                    raise  # a failure of ours is a bug to see, not a data point
                results, status = {}, "unsupported"  # SDPA: "No available kernel" for this shape or dtype
            del q, k, v
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        if results:
            results["fwd+bwd"] = (results["fwd"][0] + results["bwd"][0], results["bwd"][1])
            if "fwd_config" in results:
                results["fwd+bwd_config"] = tuple("; ".join(filter(None, pair))
                                                  for pair in zip(results["fwd_config"], results["bwd_config"]))
        for mode in ("fwd", "bwd", "fwd+bwd"):
            ms, peak = results.get(mode, (float("nan"), float("nan")))
            config, config_ms = results.get(mode + "_config", ("", ""))
            flops = attention_flops(batch, heads, n, n, d, causal, mode)
            yield {**base, "mode": mode, "ms": f"{ms:.4f}", "tflops": f"{flops / ms / 1e9:.1f}",
                   "peak_mib": f"{peak:.1f}", "status": status, "config": config, "config_ms": config_ms}


def load(csv_path: Path) -> list[dict]:
    with open(csv_path, newline="") as f:
        return list(csv.DictReader(f))


def plot(rows: list[dict], png: Path, dtype: str = "bf16", causal: str = "True") -> None:
    """One row of panels per head dim: forward TFLOP/s, forward+backward TFLOP/s and peak extra memory
    (forward+backward) against N, one line per provider."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sel = [r for r in rows if r["dtype"] == dtype and r["causal"] == causal and r["status"] == "ok"]
    dims = sorted({int(r["head_dim"]) for r in sel})
    if not sel:
        return
    fig, axes = plt.subplots(len(dims), 3, figsize=(15, 4 * len(dims)), squeeze=False)
    for row_axes, d in zip(axes, dims):
        for ax, (mode, column, label) in zip(row_axes, [("fwd", "tflops", "TFLOP/s"), ("fwd+bwd", "tflops", "TFLOP/s"),
                                                       ("fwd+bwd", "peak_mib", "peak extra memory, MiB")]):
            for provider in PROVIDERS:
                pts = sorted((int(r["n"]), float(r[column])) for r in sel
                             if r["provider"] == provider and r["mode"] == mode and int(r["head_dim"]) == d)
                if pts:
                    ax.plot(*zip(*pts), "o-", label=provider)
            ax.set_xscale("log", base=2)
            if column == "peak_mib":
                ax.set_yscale("log")
            ax.set_title(f"{mode}, d = {d}")
            ax.set_xlabel("sequence length N")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"{sel[0]['gpu']}, {dtype}, {'causal' if causal == 'True' else 'not causal'}")
    fig.tight_layout()
    fig.savefig(png, dpi=100)


def summary(rows: list[dict]) -> str:
    """The design's targets as measured: our time against SDPA's flash backend, bf16, causal, d = 128, N >= 4K."""
    def ms(provider, mode, n):
        for r in rows:
            if (r["provider"], r["mode"], int(r["n"]), r["dtype"], r["causal"], int(r["head_dim"])) == \
                    (provider, mode, n, "bf16", "True", 128) and r["status"] == "ok":
                return float(r["ms"])
        return None

    lines = ["| N | fwd: ours / SDPA flash speed | bwd: ours / SDPA flash speed |", "|---|---|---|"]
    for n in sorted({int(r["n"]) for r in rows if int(r["n"]) >= 4096}):
        ratios = []
        for mode in ("fwd", "bwd"):
            ours, theirs = ms("triton", mode, n), ms("sdpa-flash", mode, n)
            ratios.append(f"{theirs / ours:.2f}x" if ours and theirs else "n/a")
        lines.append(f"| {n} | {ratios[0]} | {ratios[1]} |")
    return ("Speed ratio = SDPA flash time / our time (bf16, causal, head dim 128); the design targets >= 1.0x "
            "forward and >= 0.8x backward.\n\n" + "\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.cpu_smoke:
        require_gpu()
    from pagedlab import device  # noqa: F401  (first: Triton's mode must be decided before triton is imported)
    import torch
    import triton

    gpu = torch.cuda.get_device_name(0) if not args.cpu_smoke else "cpu-interpreter"
    out = run_folder(gpu, args.out)
    csv_path = out / "flash_attention.csv"
    write_rows(csv_path, rows_for(args, gpu), FIELDS)  # point by point: a run cut short keeps what it measured
    rows = load(csv_path)
    if args.no_plot:
        print(f"{len(rows)} rows in {csv_path}")
        return 0
    plot(rows, out / "flash_attention.png")
    publish(f"# FlashAttention benchmark\n\n{gpu}, {datetime.date.today():%Y-%m-%d}, torch {torch.__version__}, "
            f"triton {triton.__version__}, tokens per point {args.tokens}, heads x head_dim {args.hidden}\n\n"
            + summary(rows), out / "summary.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
