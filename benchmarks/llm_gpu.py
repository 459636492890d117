"""The engine on a GPU in SmolLM2-135M's shapes, with random weights: tokens per second against Hugging Face.

Speed does not depend on the weights' values, so this needs neither the 93 MB model file nor a tokenizer: a
``LlamaForCausalLM`` of SmolLM2-135M-Instruct's configuration (30 layers, hidden 576, 9 query and 3 K/V heads
of 64, MLP 1536, vocabulary 49152) is initialised at random, and the engine serves the same weights
(``Llama.from_hf``). Random prompts, greedy, every request exactly ``--tokens`` tokens (no EOS: there is no
tokenizer). For each batch size:

* the engine with the Triton kernels (``attention_backend="triton"``) and with the PyTorch backend;
* Hugging Face ``generate`` on the same prompts (one call, equal prompt lengths, so no padding).

Tokens/s is generated tokens over wall time (prefill included), median of ``--repeats`` after a warm-up (the
first Triton calls compile). It also checks the engine's greedy tokens against ``generate`` at batch 1 in
float32 (a verdict, not a timing). Writes a CSV and prints a table.

Usage::

    python benchmarks/llm_gpu.py --out benchmarks/results/llm_gpu      # needs an NVIDIA GPU (sm_80+)
    python benchmarks/llm_gpu.py --batches 1 8 64 --prompt-len 128 --tokens 128 --dtype bf16
    python benchmarks/llm_gpu.py --dry-run                             # tiny sizes on the CPU: the script works
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import pagedlab.kernels  # noqa: F401  (decides Triton's mode first)
import torch
import triton
from transformers import LlamaConfig as HFLlamaConfig
from transformers import LlamaForCausalLM
from transformers.utils import logging as hf_logging

from pagedlab import device
from pagedlab.engine import LLMEngine, SamplingParams
from pagedlab.models.llama import Llama
from pagedlab.records import write_rows
from pagedlab.validate import blocks_for

SMOLLM2_SHAPES = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                      num_attention_heads=9, num_key_value_heads=3, head_dim=64, max_position_embeddings=8192,
                      rope_theta=100000.0, rms_norm_eps=1e-5, tie_word_embeddings=True)
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _median_seconds(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        _sync()
        start = time.perf_counter()
        fn()
        _sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def build(shapes: dict, dtype: torch.dtype, seed: int = 0) -> tuple[LlamaForCausalLM, Llama]:
    """A random HF model of ``shapes`` and the same weights as a :class:`Llama`, both on the device in ``dtype``."""
    torch.manual_seed(seed)
    hf = LlamaForCausalLM(HFLlamaConfig(**shapes)).eval().to(device.DEVICE, dtype)
    return hf, Llama.from_hf(hf)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--prompt-len", type=int, default=128)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dtype", choices=DTYPES, default="bf16")
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--out", type=Path, default=None, help="folder for llm_gpu.csv")
    parser.add_argument("--dry-run", action="store_true", help="2 layers, short sequences, CPU allowed")
    args = parser.parse_args(argv)
    hf_logging.set_verbosity_error()
    shapes = dict(SMOLLM2_SHAPES)
    if args.dry_run:
        shapes.update(num_hidden_layers=2, vocab_size=512)
        args.batches, args.prompt_len, args.tokens, args.repeats = [1, 2], 8, 4, 1
        args.dtype = "fp32" if not device.ON_GPU else args.dtype
    elif not device.ON_GPU:
        print(f"needs an NVIDIA GPU with compute capability >= 8.0 ({device.MODE.reason}); use --dry-run here")
        return 2
    print(f"{device.describe()}, torch {torch.__version__}, triton {triton.__version__}")
    dtype = DTYPES[args.dtype]

    # Correctness first, in float32: the engine's greedy tokens equal generate's.
    hf, model = build(shapes, torch.float32)
    prompt = torch.randint(0, shapes["vocab_size"], (1, args.prompt_len), generator=torch.Generator().manual_seed(1))
    engine = LLMEngine(model, num_blocks=blocks_for(args.prompt_len + 16, args.block_size) + 2,
                       block_size=args.block_size, attention_backend="triton")
    ours = engine.generate([prompt[0].tolist()], SamplingParams(max_tokens=16), use_tqdm=False)[0].outputs[0].token_ids
    with torch.no_grad():
        ref = hf.generate(prompt.to(device.DEVICE), attention_mask=torch.ones_like(prompt).to(device.DEVICE),
                          do_sample=False, max_new_tokens=16, min_new_tokens=16, pad_token_id=0)
    same = ours == ref[0, args.prompt_len:].tolist()
    print(f"engine (triton, fp32) greedy tokens == Hugging Face generate: {same}")
    del hf, model, engine

    hf, model = build(shapes, dtype)
    rows = []
    for batch in args.batches:
        prompts = torch.randint(0, shapes["vocab_size"], (batch, args.prompt_len),
                                generator=torch.Generator().manual_seed(batch))
        params = SamplingParams(max_tokens=args.tokens)
        per_seq = blocks_for(args.prompt_len + args.tokens, args.block_size)
        tokens = batch * args.tokens
        for backend in ("triton", "torch"):
            engine = LLMEngine(model, num_blocks=batch * per_seq + 1, block_size=args.block_size,
                               max_num_seqs=batch, max_num_batched_tokens=batch * (args.prompt_len + args.tokens),
                               attention_backend=backend)
            run = lambda: engine.generate(prompts.tolist(), params, use_tqdm=False)  # noqa: E731
            rows.append(dict(provider=f"engine-{backend}", batch=batch, tokens_per_s=tokens / _median_seconds(
                run, args.repeats)))
        ids = prompts.to(device.DEVICE)

        def hf_run():
            with torch.no_grad():
                hf.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=args.tokens,
                            min_new_tokens=args.tokens, pad_token_id=0)
        rows.append(dict(provider="hf-generate", batch=batch, tokens_per_s=tokens / _median_seconds(hf_run,
                                                                                                   args.repeats)))
        for r in rows[-3:]:
            print(f"batch {r['batch']:>4} {r['provider']:>14}: {r['tokens_per_s']:>10.1f} tokens/s", flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        write_rows(args.out / "llm_gpu.csv", rows, ["provider", "batch", "tokens_per_s"])
        print(f"wrote {args.out / 'llm_gpu.csv'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
