"""How much KV memory contiguous and paged allocation waste while serving: request lengths and a simulation.

:func:`sample_requests` draws synthetic chat requests (log-normal lengths with ShareGPT's means);
:func:`simulate_serving` serves a stream of them under a fixed KV budget and measures, step by step, how much
of the budget holds tokens and how much is reserved for tokens not yet generated, lost to internal
fragmentation, or free. Contiguous reservation of ``max_len`` slots per request is the special case
``block_size=max_len`` (one block that covers any request), so the two policies are measured by the same
accounting. How big the cache is in the first place is :mod:`pagedlab.memory`.

The simulation is a model of block accounting, not the manager itself (``pagedlab.paged.BlockManager``):
it counts blocks per request, which is all the waste figures depend on, and runs a few hundred thousand
decode steps per second in plain Python. ``tests/core/test_waste.py`` checks that it agrees with the manager.

Reference for the waste figures: Kwon et al., "Efficient Memory Management for Large Language Model
Serving with PagedAttention", SOSP 2023 (the vLLM paper): existing systems keep only 20.4-38.2% of their
KV memory in token states (60-80% wasted); with PagedAttention waste is under 4%.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pagedlab.validate import blocks_for, check_count

# --- Request lengths ---------------------------------------------------------------------------------

SHAREGPT_PROMPT_MEAN = 161.3
"""Mean prompt length (tokens) of the ShareGPT conversations in the vLLM paper's evaluation (Fig. 11a)."""
SHAREGPT_OUTPUT_MEAN = 338.0
"""Mean output length (tokens) of the same data set (Fig. 11a)."""


def sample_requests(n: int, max_len: int = 2048, seed: int = 0, prompt_mean: float = SHAREGPT_PROMPT_MEAN,
                    output_mean: float = SHAREGPT_OUTPUT_MEAN, sigma: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` synthetic chat requests: prompt and output lengths, in tokens (no data set is downloaded).

    Both lengths are log-normal, the usual model for text lengths: most requests are short, a few are
    long. The means default to those the vLLM paper reports for ShareGPT (about 161 prompt and 338
    output tokens); ``sigma``, the standard deviation of the log-length, sets how heavy the tail is
    (1.0 puts a few percent of outputs above 1000 tokens, as in the paper's histogram). Lengths are
    rounded, at least 1, and clipped so that ``prompt + output <= max_len``, the longest request the
    model accepts. Prompt and output are drawn independently.

    Args:
        n: number of requests (positive int).
        max_len: longest allowed prompt + output (at least 2).
        seed: seed of the generator: the same call gives the same requests, on any NumPy version.
        prompt_mean, output_mean: means of the log-normal distributions before clipping (positive).
        sigma: standard deviation of the log of each length (positive).

    Returns:
        ``(prompt_lens, output_lens)``: two int64 arrays of shape ``(n,)``.

    Raises:
        TypeError: ``n`` or ``max_len`` is not an int. ValueError: a non-positive argument, or ``max_len < 2``.
    """
    n = check_count("n", n, 1)
    max_len = check_count("max_len", max_len, 2)    # room for one prompt and one output token
    for name, value in (("prompt_mean", prompt_mean), ("output_mean", output_mean), ("sigma", sigma)):
        if not value > 0:
            raise ValueError(f"{name} must be positive, got {value}")
    # The legacy generator's streams are frozen across NumPy versions (NEP 19), so the stored notebook
    # outputs are the same numbers on every machine; the newer Generator gives no such promise.
    rng = np.random.RandomState(seed)
    # A log-normal with log-mean mu has mean exp(mu + sigma**2 / 2); solve for mu.
    prompt = rng.lognormal(math.log(prompt_mean) - sigma**2 / 2, sigma, n)
    output = rng.lognormal(math.log(output_mean) - sigma**2 / 2, sigma, n)
    prompt = np.clip(np.rint(prompt), 1, max_len - 1).astype(np.int64)
    output = np.clip(np.rint(output), 1, max_len - prompt).astype(np.int64)
    return prompt, output


# --- Serving simulation ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ServingStats:
    """What :func:`simulate_serving` measured, averaged over the decode steps while requests were waiting.

    The four fractions split the KV budget and sum to 1:

    Attributes:
        block_size: slots per allocation unit (``max_len`` for contiguous reservation).
        budget_tokens: KV slots in the budget.
        tokens: fraction of the budget holding the KV of tokens already seen (useful).
        reserved: fraction allocated to requests for tokens they will generate later (useful only later).
        internal: fraction allocated that the request will never fill (internal fragmentation).
        free: fraction not allocated although requests were waiting (too small for the next one).
        mean_running: average number of requests decoding at once (the batch size).
        steps: decode steps measured (those with a non-empty queue: the server was saturated).
        preemptions: times a running request had to give its blocks back because the pool ran dry.
        finished: requests completed by the end of the run.
        prompt_tokens: tokens of all prompts, each prefilled once on first admission.
        generated_tokens: tokens decoded, one per running request per step (all outputs, in the end).
        recomputed_tokens: tokens prefilled *again* after a preemption: each preempted request's prompt plus
            what it had generated, recomputed when it is readmitted. Re-prefill is not free: this is the
            extra work preemption costs, which the step count of the simulation does not show (it charges
            no time for a prefill).
    """

    block_size: int
    budget_tokens: int
    tokens: float
    reserved: float
    internal: float
    free: float
    mean_running: float
    steps: int
    preemptions: int
    finished: int
    prompt_tokens: int = 0
    generated_tokens: int = 0
    recomputed_tokens: int = 0

    @property
    def recompute_overhead(self) -> float:
        """Recomputed tokens per token of useful work (prompts + generated): the extra compute preemption costs."""
        useful = self.prompt_tokens + self.generated_tokens
        return self.recomputed_tokens / useful if useful else 0.0

    @property
    def waste(self) -> float:
        """Fraction of the budget not holding tokens: ``reserved + internal + free``."""
        return 1.0 - self.tokens

    @property
    def waste_of_allocated(self) -> float:
        """Fraction of the *allocated* memory not holding tokens: ``(reserved + internal) / allocated``."""
        allocated = self.tokens + self.reserved + self.internal
        return (self.reserved + self.internal) / allocated if allocated else 0.0


def simulate_serving(prompt_lens: np.ndarray, output_lens: np.ndarray, budget_tokens: int,
                     block_size: int, watermark: float = 0.01) -> ServingStats:
    """Serve the requests with a KV budget of ``budget_tokens`` slots allocated in blocks of ``block_size``.

    The model of a serving step (iteration-level scheduling, as in Orca and vLLM):

    1. Admission: waiting requests, first come first served, start while the free blocks cover their
       prompt (``ceil(prompt / block_size)`` blocks); the first that does not fit waits, and so do all
       behind it. All requests are waiting at step 0 (a saturated server).
    2. Decode: every running request stores one more token, taking a new block when its last one is
       full. When no block is free, the most recently admitted request is preempted (vLLM's policy):
       its blocks are freed and it returns to the head of the queue, to be recomputed from its prompt
       plus the tokens it had generated (counted in ``recomputed_tokens``; the model charges no step for
       a prefill, so counting is all it does with them).
    3. Measurement, while the queue is not empty: tokens stored, slots reserved for future tokens,
       slots never to be used, free slots.
    4. Requests that stored ``prompt + output`` tokens finish and free their blocks.

    Contiguous reservation, where each request gets ``max_len`` slots up front, is ``block_size=max_len``:
    one block covers any request, so nothing is allocated after admission.

    Args:
        prompt_lens, output_lens: positive int arrays of the same shape ``(n,)`` (see :func:`sample_requests`).
        budget_tokens: KV slots available (positive int); its whole blocks form the pool.
        block_size: slots per block (positive int).
        watermark: fraction of the pool's blocks that admission leaves free, so that running requests can
            grow before one has to be preempted (vLLM's default, 0.01); 0 admits while a prompt fits.

    Returns:
        A :class:`ServingStats`; its fractions are 0 when the queue emptied at once (no saturated step).

    Raises:
        TypeError: ``budget_tokens`` or ``block_size`` is not an int.
        ValueError: arrays of different shapes or with non-positive lengths, non-positive sizes, a
            ``watermark`` outside [0, 1), or a request that could not run even alone (more blocks than the
            pool holds).
    """
    budget_tokens = check_count("budget_tokens", budget_tokens, 1)
    block_size = check_count("block_size", block_size, 1)
    if not 0 <= watermark < 1:
        raise ValueError(f"watermark must be a fraction of the pool in [0, 1), got {watermark}")
    prompt = np.asarray(prompt_lens)
    output = np.asarray(output_lens)
    if prompt.shape != output.shape or prompt.ndim != 1:
        raise ValueError(f"prompt_lens and output_lens must be 1-D arrays of one shape, got {prompt.shape} "
                         f"and {output.shape}")
    if prompt.size and (prompt.min() < 1 or output.min() < 1):
        raise ValueError("prompt_lens and output_lens must be positive (every request has a prompt and "
                         "generates at least one token)")
    num_blocks = budget_tokens // block_size
    final = [int(x) for x in prompt + output]
    longest = max(final, default=0)
    if blocks_for(longest, block_size) > num_blocks:
        raise ValueError(f"a request of {longest} tokens needs {blocks_for(longest, block_size)} blocks of "
                         f"{block_size} but budget_tokens={budget_tokens} holds only {num_blocks}: it could never run")

    queue = list(range(len(final)))[::-1]    # a stack: the head of the queue is queue[-1]
    length = [int(x) for x in prompt]        # tokens each request holds when (re)admitted
    running: list[int] = []                   # request ids in admission order
    blocks: dict[int, int] = {}               # blocks held by each running request
    free = num_blocks
    # Admission leaves a few blocks spare so running requests can grow without being preempted at once.
    spare = min(int(watermark * num_blocks), num_blocks - blocks_for(longest, block_size))
    sums = [0, 0, 0, 0]                       # tokens, reserved, internal, running (summed over steps)
    steps = preemptions = finished = generated = recomputed = 0

    while queue or running:
        while queue:                          # 1. admission, FCFS with head-of-line blocking
            rid = queue[-1]
            need = blocks_for(length[rid], block_size)
            if need > free - spare:
                break
            queue.pop()
            free -= need
            blocks[rid] = need
            running.append(rid)
        for rid in list(running):             # 2. decode one token per running request
            if rid not in blocks:             # preempted earlier in this step
                continue
            while length[rid] == blocks[rid] * block_size and free == 0:
                victim = running.pop()        # the most recently admitted
                free += blocks.pop(victim)
                queue.append(victim)
                preemptions += 1
                recomputed += length[victim]  # its prompt and generated tokens, prefilled again on readmission
                if victim == rid:
                    break
            if rid not in blocks:
                continue
            if length[rid] == blocks[rid] * block_size:
                blocks[rid] += 1
                free -= 1
            length[rid] += 1
            generated += 1
        if queue:                             # 3. measure while saturated
            steps += 1
            for rid in running:
                held = blocks[rid] * block_size
                sums[0] += length[rid]
                sums[1] += min(held, final[rid]) - length[rid]
                sums[2] += held - min(held, final[rid])
            sums[3] += len(running)
        for rid in [r for r in running if length[r] == final[r]]:   # 4. finish
            running.remove(rid)
            free += blocks.pop(rid)
            finished += 1

    scale = 1.0 / (steps * budget_tokens) if steps else 0.0
    tokens, reserved, internal = (s * scale for s in sums[:3])
    return ServingStats(block_size=block_size, budget_tokens=budget_tokens, tokens=tokens, reserved=reserved,
                        internal=internal, free=(1.0 - tokens - reserved - internal) if steps else 0.0,
                        mean_running=sums[3] / steps if steps else 0.0, steps=steps,
                        preemptions=preemptions, finished=finished, prompt_tokens=int(prompt.sum()),
                        generated_tokens=generated, recomputed_tokens=recomputed)
