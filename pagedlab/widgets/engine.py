"""A live picture of an :class:`~pagedlab.engine.LLMEngine`: its queues, its block pool and each step's batch.

Top to bottom:

* the **queues**: a chip per request in ``waiting``, ``running`` and ``swapped``, in the scheduler's order
  (the newest running request, the next to be preempted, is last);
* the **GPU pool** (and the CPU pool, with swapping) as a strip of blocks, each tinted with the colour of the
  request whose sequences hold it; shared blocks have a purple border, cached-free ones are green;
* the **last step's batch**: one bar per sequence, as wide as the tokens it computed (a prefill is wide,
  a decode one token), and the step's counters (prefill and decode tokens, cached tokens, preemptions);
* a **history** of running sequences and used blocks over the steps so far, with its axes (count, step).

A run ends with every queue empty and every block free, so the picture stored for a notebook that has not run
(:meth:`EngineWidget.static_svg`) is not the end state but the busiest step the widget saw, with a caption saying so.

The widget subscribes to the engine and redraws after every step, so a cell that runs ``engine.generate``
below it animates the picture. Buttons add a request, run one step, or run to the end. Shapes carry ``data-*``
attributes (role, queue, request, block state), so tests read the picture without a browser.
"""

from __future__ import annotations

import random
import time
from collections.abc import Hashable
from html import escape

import ipywidgets as widgets

from pagedlab.engine import LLMEngine, SamplingParams, StepMetrics
from pagedlab.paged import block_states
from pagedlab.validate import blocks_for
from pagedlab.widgets._base import COLORS, LiveView, Svg, owner_color

WIDTH = 760
CHIP_W, CHIP_H = 34, 20
CELL = 14


class EngineWidget(LiveView):
    """Watch an engine schedule, batch, preempt and free, step by step.

    Args:
        engine: the :class:`~pagedlab.engine.LLMEngine` to show; the widget subscribes to its steps.
        delay: seconds to pause after each redraw, so a fast ``generate`` is visible step by step.
        prompt_len, max_tokens: the request the *add request* button queues (random tokens).

    Attributes:
        add_button, step_button, run_button: the controls. status: what the last button did, or why not.

    Raises:
        TypeError: ``engine`` is not an LLMEngine. ValueError: a negative ``delay``.
    """

    def __init__(self, engine: LLMEngine, *, delay: float = 0.0, prompt_len: int = 12, max_tokens: int = 8) -> None:
        if not isinstance(engine, LLMEngine):
            raise TypeError(f"engine must be a pagedlab.engine.LLMEngine, got {type(engine).__name__}")
        if delay < 0:
            raise ValueError(f"delay must be >= 0 seconds, got {delay}")
        super().__init__()
        self.engine, self.delay = engine, delay
        self.prompt_len, self.max_tokens = prompt_len, max_tokens
        self._colors: dict[Hashable, str] = {}
        self._busiest: tuple[tuple[int, ...], str] | None = None     # (how busy, its picture), see static_svg
        self._rng = random.Random(0)
        self.add_button = self._button("add request", self._add)
        self.step_button = self._button("step", self.engine.step)
        self.run_button = self._button("run to the end", self._run_all)
        self.status = widgets.HTML()
        self.controls = [widgets.HBox([self.add_button, self.step_button, self.run_button]), self.status]
        self._unsubscribe = engine.subscribe(self._on_step)
        self.redraw()

    def close(self) -> None:
        """Stop following the engine (the picture stays as it is)."""
        self._unsubscribe()

    # ------------------------------------------------------------------ live updates and buttons

    def _on_step(self, metrics: StepMetrics) -> None:
        self.redraw()
        self._keep_if_busiest()
        if self.delay:
            time.sleep(self.delay)

    def _button(self, label: str, action) -> widgets.Button:
        button = widgets.Button(description=label, layout=widgets.Layout(width="130px"))

        def click(_) -> None:
            try:
                action()
            except ValueError as e:         # a request that can never run: say why, never raise into the frontend
                self.status.value = f"<b>{escape(label)}</b> failed: {escape(str(e))}"
            else:
                self.status.value = ""
                self.redraw()

        button.on_click(click)
        return button

    def _add(self) -> None:
        vocab = self.engine.config.vocab_size
        self.engine.add_request([self._rng.randrange(vocab) for _ in range(self.prompt_len)],
                                SamplingParams(temperature=0, max_tokens=self.max_tokens))

    def _run_all(self) -> None:
        while self.engine.has_unfinished_requests():
            self.engine.step()

    # ------------------------------------------------------------------ what the picture shows

    def color_of(self, request_id: Hashable) -> str:
        """The colour of a request, fixed the first time the widget sees it."""
        if request_id not in self._colors:
            self._colors[request_id] = owner_color(len(self._colors))
        return self._colors[request_id]

    def queues(self) -> dict[str, list[Hashable]]:
        """Request ids in each queue, in the scheduler's order (``"waiting"``, ``"running"``, ``"swapped"``)."""
        s = self.engine.scheduler
        return {name: [r.request_id for r in q] for name, q in
                (("waiting", s.waiting), ("running", s.running), ("swapped", s.swapped))}

    def block_owners(self, pool: str = "gpu") -> list[tuple[str, list[Hashable]]]:
        """For each block of ``pool``: its state (``"used"``, ``"shared"``, ``"cached"``, ``"free"``, as
        :func:`pagedlab.paged.block_states` classifies it) and the requests whose sequences hold it."""
        # A sequence id is (request_id, sample index): the samples of one request share its colour.
        return [(st.state, list(dict.fromkeys(seq_id[0] for seq_id in st.owners)))
                for st in block_states(self.engine.block_manager, pool)]

    # ------------------------------------------------------------------ picture

    def _keep_if_busiest(self) -> None:
        # Busiest: the most queues in use (waiting, running and swapped at once is what the lecture describes),
        # then the most requests swapped, then in the queues, then the most blocks used; the first such step wins.
        queues = self.queues()
        used = sum(1 for state, _ in self.block_owners("gpu") if state in ("used", "shared"))
        score = (sum(1 for ids in queues.values() if ids), len(queues["swapped"]),
                 sum(map(len, queues.values())), used)
        if self._busiest is None or score > self._busiest[0]:
            self._busiest = (score, self.to_svg(caption="Stored picture: the busiest step of the run (the most queues "
                                                        "in use), not its end. Run the notebook to watch every step."))

    def static_svg(self) -> str:
        """The busiest step this widget followed (see the module docstring), or the current picture before any."""
        return self._busiest[1] if self._busiest is not None else self.to_svg()

    def to_svg(self, caption: str | None = None) -> str:
        """The picture of the engine now; ``caption``, if given, is written under it."""
        metrics = self.engine.metrics
        last = metrics[-1] if metrics else None
        gpu, cpu = self.block_owners("gpu"), self.block_owners("cpu")
        cols = (WIDTH - 20) // CELL
        pool_rows = blocks_for(len(gpu), cols) + (blocks_for(len(cpu), cols) + 1 if cpu else 0)
        batch = last.batch if last else ()
        y_pool = 130
        y_batch = y_pool + 22 + pool_rows * CELL + 20
        y_hist = y_batch + 30 + 12 * len(batch[:24]) + 20
        svg = Svg(WIDTH, y_hist + 100 + (24 if caption else 0))
        used = sum(1 for st, _ in gpu if st in ("used", "shared"))
        svg.text(10, 20, f"step {len(metrics)} · {used} of {len(gpu)} blocks used · "
                 f"{sum(m.num_preemptions for m in metrics)} preemptions so far", size=14, weight="bold",
                 data_role="title")
        for row, (name, ids) in enumerate(self.queues().items()):
            self._draw_queue(svg, name, ids, 34 + row * (CHIP_H + 8))
        self._draw_pool(svg, "GPU", gpu, y_pool, cols)
        if cpu:
            self._draw_pool(svg, "CPU", cpu, y_pool + 22 + blocks_for(len(gpu), cols) * CELL + 8, cols)
        self._draw_batch(svg, last, y_batch)
        self._draw_history(svg, metrics, y_hist)
        if caption:
            svg.text(10, y_hist + 116, caption, size=11, fill=COLORS["muted"], data_role="caption")
        return str(svg)

    def _draw_queue(self, svg: Svg, name: str, ids: list[Hashable], y: float) -> None:
        svg.text(10, y + 14, f"{name} ({len(ids)})", size=12, weight="bold", data_role="queue", data_queue=name,
                 data_count=len(ids))
        shown = ids[:(WIDTH - 110) // (CHIP_W + 4)]
        for i, rid in enumerate(shown):
            x = 100 + i * (CHIP_W + 4)
            svg.rect(x, y, CHIP_W, CHIP_H, self.color_of(rid), fill_opacity=0.35, stroke=COLORS["grid"],
                     title=f"request {rid} ({name})", data_role="chip", data_queue=name, data_request=rid)
            svg.text(x + CHIP_W / 2, y + 14, str(rid)[:4], size=10, anchor="middle")
        if len(ids) > len(shown):
            svg.text(WIDTH - 8, y + 14, f"+{len(ids) - len(shown)}", size=10, anchor="end", fill=COLORS["muted"])

    def _draw_pool(self, svg: Svg, pool: str, states: list[tuple[str, list[Hashable]]], y0: float, cols: int) -> None:
        svg.text(10, y0 + 10, f"{pool} pool: {len(states)} blocks of {self.engine.block_manager.block_size} tokens",
                 size=12, weight="bold", data_role="pool-title", data_pool=pool.lower())
        y0 += 16
        for b, (state, owners) in enumerate(states):
            x, y = 10 + (b % cols) * CELL, y0 + (b // cols) * CELL
            fill = (self.color_of(owners[0]) if owners else
                    COLORS["cached"] if state == "cached" else COLORS["free"])
            svg.rect(x, y, CELL - 2, CELL - 2, fill, stroke=COLORS["shared"] if state == "shared" else COLORS["grid"],
                     stroke_width=2 if state == "shared" else None, fill_opacity=0.7 if owners else None,
                     title=f"block {b}: {state}" + (f", requests {owners}" if owners else ""), data_role="block",
                     data_pool=pool.lower(), data_block=b, data_state=state,
                     data_owner=",".join(map(str, owners)))

    def _draw_batch(self, svg: Svg, last: StepMetrics | None, y0: float) -> None:
        if last is None:
            svg.text(10, y0 + 10, "no step yet: add requests, then step", size=12, fill=COLORS["muted"],
                     data_role="batch-title")
            return
        seqs = f"{last.num_running_seqs} sequence{'' if last.num_running_seqs == 1 else 's'}"
        svg.text(10, y0 + 10, f"last step's batch: {seqs} · {last.num_prefill_tokens} "
                 f"prefill + {last.num_decode_tokens} decode tokens · {last.num_cached_tokens} cached · "
                 f"{last.num_preemptions} preempted", size=12, weight="bold", data_role="batch-title")
        scale = (WIDTH - 140) / max(max((n for _, n in last.batch), default=1), 16)
        for i, (seq_id, n) in enumerate(last.batch[:24]):
            y = y0 + 22 + 12 * i
            svg.text(10, y + 9, f"{seq_id[0]}.{seq_id[1]}", size=9, fill=COLORS["muted"])
            svg.rect(60, y, max(2.0, n * scale), 10, self.color_of(seq_id[0]), data_role="batch-seq",
                     data_request=seq_id[0], data_tokens=n, title=f"sequence {seq_id}: {n} token(s)")
        if len(last.batch) > 24:
            svg.text(10, y0 + 22 + 12 * 24 + 8, f"… and {len(last.batch) - 24} more", size=10, fill=COLORS["muted"])

    def _draw_history(self, svg: Svg, metrics: list[StepMetrics], y0: float) -> None:
        svg.text(10, y0 + 10, "history: running sequences (blue) and used blocks (orange) per step", size=12,
                 weight="bold", data_role="history-title")
        if not metrics:
            return
        x0, base = 44, y0 + 80                       # the axes' corner: counts up the left, steps along the bottom
        recent = metrics[-((WIDTH - x0 - 10) // 4):]
        top = max(max(m.num_running_seqs for m in recent), max(m.blocks_used for m in recent), 1)
        first = len(metrics) - len(recent) + 1
        muted = COLORS["muted"]
        svg.line(x0 - 2, base - 60, x0 - 2, base, data_role="history-axis", data_axis="count")
        svg.line(x0 - 2, base, x0 + 4 * len(recent), base, data_role="history-axis", data_axis="step")
        for value, y in ((top, base - 60), (0, base)):
            svg.text(x0 - 6, y + 3, str(value), size=9, anchor="end", fill=muted, data_role="history-tick",
                     data_axis="count", data_value=value)
        steps = f"step {first}" + (f" to {len(metrics)}" if len(metrics) > first else "")
        svg.text(x0, base + 12, steps, size=9, fill=muted, data_role="history-tick", data_axis="step")
        for series, color in (("num_running_seqs", owner_color(0)), ("blocks_used", owner_color(1))):
            for i, m in enumerate(recent):
                h = 60 * getattr(m, series) / top
                svg.rect(x0 + 4 * i + (2 if series == "blocks_used" else 0), base - h, 2, h, color,
                         data_role="history", data_series=series)
