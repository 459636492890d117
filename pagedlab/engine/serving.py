"""Serve requests as they arrive, and measure what serving is judged by: throughput and latency.

A server does not get its requests at once: they arrive over time. :func:`poisson_arrivals` draws a seeded
trace (exponential gaps, the usual model of independent users), and :func:`serve_trace` plays it against an
engine (:class:`~pagedlab.engine.LLMEngine` or the static-batching baseline): before every step it adds
the requests that have arrived, stamped with their true arrival time, then runs one step.

Time is measured, not modelled: every step runs the model for real and takes the time it takes. Only the
idle gaps, when nothing is running and the next request has not arrived, are skipped instead of slept
through (:class:`SkippingClock`), so a trace of minutes plays in the seconds the steps take. Per request:

* **TTFT**, time to first token: arrival to the end of the step that produced its first token (queueing
  and prefill);
* **TPOT**, time per output token: the time between its first and last tokens over the tokens between.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

from pagedlab.engine.outputs import RequestOutput
from pagedlab.engine.sampling import SamplingParams


def poisson_arrivals(num_requests: int, rate: float, seed: int = 0) -> list[float]:
    """Arrival times (seconds from 0) of ``num_requests`` requests at ``rate`` requests per second on average."""
    rng = random.Random(seed)
    t, times = 0.0, []
    for _ in range(num_requests):
        t += rng.expovariate(rate)
        times.append(t)
    return times


class SkippingClock:
    """``time.perf_counter()``, plus the idle time skipped so far (:meth:`skip_to`); pass it as an engine's clock."""

    def __init__(self) -> None:
        self.skipped = 0.0

    def __call__(self) -> float:
        return time.perf_counter() + self.skipped

    def skip_to(self, t: float) -> None:
        """Jump forward to time ``t`` (no-op if it has passed)."""
        self.skipped += max(0.0, t - self())


@dataclass(frozen=True)
class TraceResult:
    """One engine on one trace.

    Attributes:
        outputs: the requests' final :class:`RequestOutput`, in trace order.
        steps: model steps. max_concurrency: most sequences in one step. tokens: tokens generated.
        seconds: first arrival to last finish, idle gaps skipped. tokens_per_s: ``tokens / seconds``.
        ttft, tpot: per request, seconds (TPOT: requests with at least two tokens).
    """

    outputs: list[RequestOutput]
    steps: int
    max_concurrency: int
    tokens: int
    seconds: float
    tokens_per_s: float
    ttft: list[float]
    tpot: list[float]

    def percentiles(self, values: Sequence[float], qs: Sequence[int] = (50, 90, 99)) -> dict[int, float]:
        """The ``qs`` percentiles of ``values`` (e.g. ``self.ttft``)."""
        cuts = statistics.quantiles(values, n=100, method="inclusive")
        return {q: cuts[q - 1] for q in qs}


def serve_trace(engine, prompts: Sequence[Sequence[int]], params: Sequence[SamplingParams],
                arrivals: Sequence[float], clock: SkippingClock) -> TraceResult:
    """Play a trace: request ``i`` (``prompts[i]``, ``params[i]``) arrives at ``arrivals[i]`` seconds.

    Args:
        engine: an engine built with ``clock=clock``, with ``add_request(prompt, params, request_id,
            arrival_time)``, ``step()`` and ``has_unfinished_requests()``, and nothing queued.
        arrivals: non-decreasing times, seconds after the start.

    Raises:
        ValueError: lengths that differ, arrivals out of order.
    """
    if not len(prompts) == len(params) == len(arrivals):
        raise ValueError(f"prompts, params and arrivals must have one entry per request, got {len(prompts)}, "
                         f"{len(params)} and {len(arrivals)}")
    if list(arrivals) != sorted(arrivals):
        raise ValueError("arrivals must be in non-decreasing order")
    start, nxt, steps, concurrency = clock(), 0, 0, 0
    done: dict[int, RequestOutput] = {}
    while nxt < len(prompts) or engine.has_unfinished_requests():
        if not engine.has_unfinished_requests() and clock() < start + arrivals[nxt]:
            clock.skip_to(start + arrivals[nxt])          # idle until the next arrival: skip, do not sleep
        while nxt < len(prompts) and start + arrivals[nxt] <= clock():
            engine.add_request(prompts[nxt], params[nxt], request_id=nxt, arrival_time=start + arrivals[nxt])
            nxt += 1
        outputs = engine.step()
        steps += 1
        concurrency = max(concurrency, sum(len(o.outputs) for o in outputs if not o.finished) +
                          sum(1 for o in outputs if o.finished))
        done.update((o.request_id, o) for o in outputs if o.finished)
    ordered = [done[i] for i in range(len(prompts))]
    tokens = sum(len(c.token_ids) for o in ordered for c in o.outputs)
    seconds = max(o.metrics.finished_time for o in ordered) - (start + arrivals[0])
    ttft = [o.metrics.time_to_first_token for o in ordered]
    tpot = [t for o in ordered if (t := o.time_per_output_token()) is not None]
    return TraceResult(ordered, steps, concurrency, tokens, seconds, tokens / seconds, ttft, tpot)
