"""The engine serving SmolLM2-135M-Instruct on this CPU against Hugging Face ``generate``: tokens per second.

The same chat prompts, greedy, every completion exactly ``--tokens`` tokens long (EOS ignored on both sides,
so both generate the same number of tokens):

* **batch 1**: one request at a time, the engine (``LLM.generate`` with one prompt) against
  ``LlamaForCausalLM.generate`` with one prompt (its own contiguous KV cache, no padding);
* **batch 8**: the engine with the 8 requests at once (continuous batching, the paged cache) against one
  ``generate`` call on the 8 prompts left-padded to the longest, with an attention mask.

* **to EOS** (``--eos``): 32 chat requests answered greedily until EOS (up to ``--eos-cap`` tokens), answers of
  different lengths: the engine with all 32 at once (continuous batching) against ``generate`` on padded batches
  of 8 (the usual way: each batch runs until its longest answer ends; finished rows wait). Tokens/s counts each
  answer's tokens up to its EOS; requests/s is 32 over the wall time; one run each after a short warm-up.

The engine runs the PyTorch attention backend (``attention_backend="torch"``). Tokens/s is generated tokens
over wall time (prefill included), the median of ``--repeats`` runs after one warm-up. Times depend on the
machine and on what else runs on it: report them with the machine, never assert them.

Usage::

    python benchmarks/llm_cpu.py                  # 8 prompts x 32 tokens, batch 1 and 8
    python benchmarks/llm_cpu.py --tokens 64 --repeats 3 --threads 2
    python benchmarks/llm_cpu.py --eos --threads 2    # the 32-request workload answered to EOS
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import pagedlab.kernels  # noqa: F401  (decides Triton's mode first)
import torch

from pagedlab import device, loader
from pagedlab.engine import LLM, SamplingParams

QUESTIONS = ["What is the capital of France?", "Give me three tips for staying healthy.",
             "Write a haiku about the sea.", "Explain what a GPU is in one sentence.",
             "Name a famous painting by Leonardo da Vinci.", "What color is the sky? Answer in one word.",
             "How do plants make food?", "Tell me a fun fact about octopuses."]
EOS_QUESTIONS = QUESTIONS + [
    "Say hello.", "What is 2 + 2?", "Why do cats purr?", "Describe the moon in one sentence.",
    "List three fruits.", "What is the boiling point of water?", "Who wrote Hamlet?", "Translate 'thank you' to French.",
    "Give me a synonym for happy.", "What is photosynthesis?", "Write a short poem about autumn.",
    "How many legs does a spider have?", "What is the largest planet?", "Suggest a name for a pet dog.",
    "Explain gravity to a child.", "What is the capital of Japan?", "Name two primary colors.",
    "What does a compiler do?", "Describe a rainbow.", "What is the speed of light?", "Give one tip for sleeping well.",
    "What is an atom?", "Why is the sea salty?", "What language is spoken in Brazil?"]


def _median_seconds(fn, repeats: int) -> float:
    fn()                                  # warm-up: first calls allocate and pick kernels
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=32, help="tokens generated per request")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--eos", action="store_true", help="run the 32-request workload answered to EOS")
    parser.add_argument("--eos-cap", type=int, default=256, help="most tokens per answer in the EOS workload")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    llm = LLM(loader.SMOLLM2, attention_backend="torch", num_blocks=256, block_size=16)
    print(f"loaded in {llm.loaded.seconds:.1f} s (converted: {llm.loaded.converted}); "
          f"{device.describe()}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    hf, tok, _, _ = loader.load_hf(llm.loaded.folder)
    prompts = [llm.chat_prompt([{"role": "user", "content": q}]) for q in QUESTIONS]
    params = SamplingParams(temperature=0, max_tokens=args.tokens, ignore_eos=True)

    def engine(batch):
        outs = llm.generate([{"prompt_token_ids": p} for p in batch], params, use_tqdm=False)
        assert all(len(o.outputs[0].token_ids) == args.tokens for o in outs)

    def hf_generate(batch):
        width = max(map(len, batch))
        ids = torch.tensor([[tok.pad_token_id] * (width - len(p)) + p for p in batch])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in batch])
        with torch.no_grad():
            out = hf.generate(ids, attention_mask=mask, do_sample=False, max_new_tokens=args.tokens,
                              min_new_tokens=args.tokens, pad_token_id=tok.pad_token_id)
        assert out.shape[1] == width + args.tokens

    if args.eos:
        return eos_workload(llm, hf, tok, args.eos_cap)
    print(f"\n{len(prompts)} chat prompts ({min(map(len, prompts))}-{max(map(len, prompts))} tokens), "
          f"{args.tokens} greedy tokens each, median of {args.repeats}:")
    print(f"{'batch':>6} {'engine tok/s':>13} {'HF tok/s':>9} {'engine / HF':>12}")
    for batch in (1, 8):
        groups = [prompts[i:i + batch] for i in range(0, len(prompts), batch)]
        tokens = len(prompts) * args.tokens
        ours = tokens / _median_seconds(lambda: [engine(g) for g in groups], args.repeats)
        theirs = tokens / _median_seconds(lambda: [hf_generate(g) for g in groups], args.repeats)
        print(f"{batch:>6} {ours:>13.1f} {theirs:>9.1f} {ours / theirs:>11.2f}x", flush=True)
    return 0


def eos_workload(llm, hf, tok, cap: int) -> int:
    """The engine against padded batches of 8, on 32 chat requests answered to EOS (see the module docstring)."""
    prompts = [llm.chat_prompt([{"role": "user", "content": q}]) for q in EOS_QUESTIONS]
    eos = tok.eos_token_id
    params = SamplingParams(temperature=0, max_tokens=cap)

    def engine():
        outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
        return [len(o.outputs[0].token_ids) for o in outs]

    def padded():
        lengths = []
        for i in range(0, len(prompts), 8):
            batch = prompts[i:i + 8]
            width = max(map(len, batch))
            ids = torch.tensor([[tok.pad_token_id] * (width - len(p)) + p for p in batch])
            mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in batch])
            with torch.no_grad():
                out = hf.generate(ids, attention_mask=mask, do_sample=False, max_new_tokens=cap, eos_token_id=eos,
                                  pad_token_id=tok.pad_token_id)[:, width:].tolist()
            lengths += [row.index(eos) + 1 if eos in row else len(row) for row in out]
        return lengths

    llm.generate([{"prompt_token_ids": prompts[0]}], SamplingParams(temperature=0, max_tokens=4), use_tqdm=False)
    with torch.no_grad():       # warm-up: first calls allocate and pick kernels
        hf.generate(torch.tensor([prompts[0]]), do_sample=False, max_new_tokens=4, pad_token_id=tok.pad_token_id)
    print(f"\n{len(prompts)} chat requests answered greedily to EOS (at most {cap} tokens), one run after a warm-up:")
    print(f"{'':>22} {'tokens':>6} {'seconds':>8} {'tokens/s':>9} {'requests/s':>11}")
    rates = {}
    for name, fn in (("engine (continuous)", engine), ("HF generate, pad x 8", padded)):
        start = time.perf_counter()
        lengths = fn()
        seconds = time.perf_counter() - start
        rates[name] = sum(lengths) / seconds
        print(f"{name:>22} {sum(lengths):>6} {seconds:>8.1f} {sum(lengths) / seconds:>9.1f} "
              f"{len(prompts) / seconds:>11.2f}", flush=True)
        print(f"{'':>22} answer lengths {sorted(lengths)}")
    ours, theirs = rates.values()
    print(f"engine / padded batches: {ours / theirs:.2f}x tokens/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
