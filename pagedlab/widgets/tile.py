"""TileWidget: watch tiled attention walk the score matrix, tile by tile.

The picture is the ``n_q × n_k`` score matrix cut into ``block_m × block_n`` tiles. Stepping through a
:class:`~pagedlab.trace.TileTrace` highlights the query tile and key tile being combined, shades the tiles
already done, greys the tiles the causal mask lets the algorithm skip, and prints beside the grid the running
max ``m`` and running sum ``l`` of the current rows and how far the output so far is from the exact answer.

The same widget replays the PyTorch reference (``pagedlab.attention.tiled_attention``, with values) and the
Triton kernel's trace mode (schedule only), and follows a trace that is still being recorded.
"""

from __future__ import annotations

import math
from typing import Callable

import ipywidgets as widgets
import torch

from pagedlab.attention import naive_attention, tiled_attention
from pagedlab.trace import TileStep, TileTrace
from pagedlab.widgets._base import COLORS, LiveView, Svg

Tracer = Callable[[int, int, int, bool], "tuple[TileTrace, torch.Tensor | None]"]
"""``tracer(seq_len, block_m, block_n, causal) -> (trace, exact)``: records a fresh trace for the re-trace
controls; ``exact`` is the ``(n_q, d)`` exact output of the traced (batch, head), or None."""

GRID_PX = 300  # the longer side of the score matrix, in pixels
PANEL_W = 300
MAX_ROWS_SHOWN = 12
ERROR_FLOOR = 1e-6  # errors below this are rounding: shown as "< 1e-6", the same on every machine


def reference_trace(seq_len: int, block_m: int, block_n: int, causal: bool, head_dim: int = 4,
                    seed: int = 0) -> tuple[TileTrace, torch.Tensor]:
    """Trace ``tiled_attention`` on seeded random ``(seq_len, head_dim)`` inputs; return it and the exact output.

    Computed in float64 on the CPU, so the numbers the widget prints are the same on every machine.
    """
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(seq_len, head_dim, generator=g, dtype=torch.float64) for _ in range(3))
    trace = TileTrace()
    tiled_attention(q, k, v, causal=causal, block_m=block_m, block_n=block_n, trace=trace)
    return trace, naive_attention(q, k, v, causal=causal)


def _fmt(x: float) -> str:
    return "−∞" if x == -math.inf else f"{x:.3g}"


def _fmt_error(e: float) -> str:
    return f"< {ERROR_FLOOR:.0e}" if e < ERROR_FLOOR else f"{e:.1e}"


class TileWidget(LiveView):
    """Step through the tile schedule of tiled attention (FlashAttention-2's loop) and watch the softmax state.

    Args:
        trace: the trace to show; by default :func:`reference_trace` records one of ``seq_len`` positions.
            It may be empty or still growing: the widget follows it (see :meth:`TileTrace.watch`).
        exact: ``(n_q, d)`` exact output of the traced (batch, head), for the error read-out; optional.
        tracer: re-records a trace when the tile-size, length or causal controls change (see :data:`Tracer`);
            by default :func:`reference_trace` when no ``trace`` is given, else none (controls disabled).
        seq_len, block_m, block_n, causal: the first trace's geometry when no ``trace`` is given.
        step: how many steps are done in the first frame; default all of them.

    Attributes:
        trace, exact: what is shown. play, step_slider, speed, seq_len, block_m, block_n, causal: the controls.

    Raises:
        TypeError: ``trace`` is not a TileTrace. ValueError: ``exact`` does not have ``trace.n_q`` rows.
    """

    def __init__(self, trace: TileTrace | None = None, exact: torch.Tensor | None = None, *,
                 tracer: Tracer | None = None, seq_len: int = 24, block_m: int = 8, block_n: int = 8,
                 causal: bool = True, step: int | None = None) -> None:
        super().__init__()
        self.trace, self._watched, self._retracing = TileTrace(), None, False
        if trace is None:
            tracer = tracer or reference_trace
            trace, exact = tracer(seq_len, block_m, block_n, causal)
        self._tracer = tracer
        self.play = widgets.Play(min=0, max=0, interval=250, description="play")
        self.step_slider = widgets.IntSlider(min=0, max=0, description="step")
        self.speed = widgets.IntSlider(value=4, min=1, max=20, description="steps/s")
        self.seq_len = widgets.IntSlider(value=max(1, seq_len), min=1, max=64, description="seq len")
        self.block_m = widgets.IntSlider(value=max(1, block_m), min=1, max=32, description="block_m")
        self.block_n = widgets.IntSlider(value=max(1, block_n), min=1, max=32, description="block_n")
        self.causal = widgets.Checkbox(value=causal, description="causal")
        widgets.link((self.play, "value"), (self.step_slider, "value"))
        self.speed.observe(lambda _: setattr(self.play, "interval", 1000 // self.speed.value), "value")
        self.step_slider.observe(lambda _: self.redraw(), "value")
        for control in (self.seq_len, self.block_m, self.block_n, self.causal):
            control.disabled = tracer is None
            control.observe(lambda _: self.retrace(), "value")
        self.controls = [widgets.HBox([self.play, self.step_slider, self.speed]),
                         widgets.HBox([self.seq_len, self.block_m, self.block_n, self.causal])]
        self.set_trace(trace, exact, step=step)

    # ------------------------------------------------------------------ state

    def set_trace(self, trace: TileTrace, exact: torch.Tensor | None = None, step: int | None = None) -> None:
        """Show ``trace`` (and follow it while it grows), at ``step`` (default: the last step)."""
        if not isinstance(trace, TileTrace):
            raise TypeError(f"trace must be a pagedlab.trace.TileTrace, got {type(trace).__name__}")
        if exact is not None:
            exact = torch.as_tensor(exact).detach().to("cpu", torch.float64)
            if exact.dim() != 2 or (trace.n_q and exact.shape[0] != trace.n_q):
                raise ValueError(f"exact must be the (n_q, d) output of the traced head, n_q = {trace.n_q}; "
                                 f"got shape {tuple(exact.shape)}")
        if self._watched is not None:
            self._watched.unwatch(self._on_trace_change)
        self.trace, self.exact, self._watched = trace, exact, trace
        self._errors: list[tuple[float, float]] = []  # per step: (current rows, whole output)
        self._assembled: torch.Tensor | None = None
        trace.watch(self._on_trace_change)
        if trace.n_q:
            self._show_geometry(trace)
        self._sync_range(len(trace.steps) if step is None else step)
        self.redraw()

    def _show_geometry(self, trace: TileTrace) -> None:
        # Set the controls to the trace's geometry without triggering a re-trace.
        self._retracing = True
        try:
            for control, value in ((self.seq_len, trace.n_q), (self.block_m, trace.block_m),
                                   (self.block_n, trace.block_n)):
                control.max = max(control.max, value)
                control.value = value
            self.causal.value = trace.causal
        finally:
            self._retracing = False

    def retrace(self) -> None:
        """Record a new trace with the controls' geometry (needs a tracer) and show it, all steps done."""
        if self._retracing:
            return
        if self._tracer is None:
            raise ValueError("this TileWidget has no tracer, so it cannot re-record its trace; pass tracer=...")
        trace, exact = self._tracer(self.seq_len.value, self.block_m.value, self.block_n.value, self.causal.value)
        self.set_trace(trace, exact)

    def show_step(self, step: int) -> None:
        """Show the state after ``step`` steps (0: nothing computed yet), as moving the slider does."""
        self.step_slider.value = max(0, min(step, len(self.trace.steps)))

    @property
    def current_step(self) -> int:
        return self.step_slider.value

    def _sync_range(self, value: int) -> None:
        n = len(self.trace.steps)
        # Raise the maximum before the value and lower it after, so the slider never clamps in between.
        for control in (self.step_slider, self.play):
            control.max = max(control.max, n)
        self.step_slider.value = max(0, min(value, n))
        for control in (self.step_slider, self.play):
            control.max = n

    def _on_trace_change(self, trace: TileTrace) -> None:
        # Follow a growing trace when the learner is watching its end; stay put when they stepped back.
        at_end = self.step_slider.value >= self.step_slider.max
        if len(self._errors) > len(trace.steps):  # restarted
            self._errors, self._assembled = [], None
        self._sync_range(len(trace.steps) if at_end else self.step_slider.value)
        self.redraw()

    def tile_states(self) -> dict[tuple[int, int], str]:
        """``{(q_tile, k_tile): state}`` of the shown frame: ``current``, ``done``, ``skipped`` or ``todo``."""
        t, s = self.trace, self.current_step
        done = {(st.q_tile, st.k_tile) for st in t.steps[:s]}
        current = self._current()
        states = {}
        for i in range(t.n_q_tiles):
            for j in range(t.n_k_tiles):
                if current is not None and (i, j) == (current.q_tile, current.k_tile):
                    states[i, j] = "current"
                elif t.kind_of(i, j) == "skipped":
                    states[i, j] = "skipped"
                else:
                    states[i, j] = "done" if (i, j) in done else "todo"
        return states

    def _current(self) -> TileStep | None:
        s = self.current_step
        return self.trace.steps[s - 1] if 0 < s <= len(self.trace.steps) else None

    def errors(self) -> list[tuple[float, float]]:
        """Per recorded step: max |out − exact| over the current query tile's rows and over the whole output.

        The whole output counts rows of query tiles not started yet as 0, so its error reaches zero (up to
        rounding) only at the last step. Empty without values or without ``exact``.
        """
        t = self.trace
        if self.exact is None or not t.has_values:
            return []
        if self._assembled is None:
            self._assembled = torch.zeros_like(self.exact)
        for step in t.steps[len(self._errors):]:
            rows = slice(step.q_tile * t.block_m, step.q_tile * t.block_m + len(step.m))
            self._assembled[rows] = torch.tensor(step.out, dtype=torch.float64)
            here = (self._assembled[rows] - self.exact[rows]).abs().max().item()
            self._errors.append((here, (self._assembled - self.exact).abs().max().item()))
        return self._errors

    # ------------------------------------------------------------------ picture

    def to_svg(self) -> str:
        t = self.trace
        if not t.steps and not t.n_q:
            svg = Svg(420, 60)
            svg.text(10, 34, "waiting for a trace: no step recorded yet", fill=COLORS["muted"], data_role="title")
            return str(svg)
        cell = max(2, min(16, GRID_PX // max(t.n_q, t.n_k)))
        gx, gy = 70, 100
        grid_w, grid_h = t.n_k * cell, t.n_q * cell
        px = gx + grid_w + 36
        svg = Svg(px + PANEL_W, max(gy + grid_h + 60, gy + 330))
        current = self._current()
        s, n = self.current_step, len(t.steps)
        what = "nothing computed yet" if current is None else \
            f"query tile {current.q_tile} × key tile {current.k_tile} ({current.kind})"
        svg.text(10, 20, f"step {s} of {n}: {what}", size=14, weight="bold", data_role="title")
        svg.text(10, 38, f"n_q = {t.n_q}, n_k = {t.n_k}, block_m = {t.block_m}, block_n = {t.block_n}, "
                 f"{'causal' if t.causal else 'not causal'} · recorded by {t.source or 'unknown'}",
                 size=11, fill=COLORS["muted"])
        states = self.tile_states()
        n_skipped = sum(1 for st in states.values() if st == "skipped")
        svg.text(10, 54, f"{len(states) - n_skipped} tiles to visit, {n_skipped} skipped by the causal mask "
                 f"(never loaded)", size=11, fill=COLORS["muted"])
        self._draw_strips(svg, gx, gy, cell, current)
        self._draw_grid(svg, gx, gy, cell, states, current)
        self._draw_legend(svg, 10, gy + grid_h + 28)
        self._draw_panel(svg, px, gy, current)
        return str(svg)

    def _draw_strips(self, svg: Svg, gx: float, gy: float, cell: float, current: TileStep | None) -> None:
        t = self.trace
        svg.text(gx, gy - 30, "keys: K, V tiles →", size=11)
        mid = gy + t.n_q * cell / 2
        svg.text(gx - 44, mid, "queries: Q tiles →", size=11, anchor="middle",
                 transform=f"rotate(-90 {gx - 44:g} {mid:g})")
        for j in range(t.n_k_tiles):
            on = current is not None and current.k_tile == j
            x, width = gx + j * t.block_n * cell, (min((j + 1) * t.block_n, t.n_k) - j * t.block_n) * cell
            svg.rect(x, gy - 22, width, 14, COLORS["current" if on else "free"],
                     stroke=COLORS["grid"], data_role="k-tile", data_index=j, data_state="current" if on else "idle")
            if width >= 16:
                svg.text(x + width / 2, gy - 11, str(j), size=10, anchor="middle")
        for i in range(t.n_q_tiles):
            on = current is not None and current.q_tile == i
            y, height = gy + i * t.block_m * cell, (min((i + 1) * t.block_m, t.n_q) - i * t.block_m) * cell
            svg.rect(gx - 30, y, 14, height, COLORS["current" if on else "free"],
                     stroke=COLORS["grid"], data_role="q-tile", data_index=i, data_state="current" if on else "idle")
            if height >= 14:
                svg.text(gx - 23, y + height / 2 + 4, str(i), size=10, anchor="middle")

    def _draw_grid(self, svg: Svg, gx: float, gy: float, cell: float, states: dict, current: TileStep | None) -> None:
        t = self.trace
        fills = {"current": COLORS["current"], "done": COLORS["done"], "skipped": COLORS["skipped"],
                 "todo": COLORS["free"]}
        offset = t.n_k - t.n_q
        for (i, j), state in states.items():
            r0, r1 = i * t.block_m, min((i + 1) * t.block_m, t.n_q)
            c0, c1 = j * t.block_n, min((j + 1) * t.block_n, t.n_k)
            kind = t.kind_of(i, j)
            svg.rect(gx + c0 * cell, gy + r0 * cell, (c1 - c0) * cell, (r1 - r0) * cell, fills[state],
                     stroke=COLORS["grid"], title=f"query tile {i} × key tile {j}: {state} ({kind})",
                     data_role="tile", data_q_tile=i, data_k_tile=j, data_state=state, data_kind=kind)
            if kind == "masked":  # the scores the causal mask hides inside a diagonal tile
                for r in range(r0, r1):
                    first_hidden = max(c0, r + offset + 1)
                    if first_hidden < c1:
                        svg.rect(gx + first_hidden * cell, gy + r * cell, (c1 - first_hidden) * cell, cell,
                                 COLORS["skipped"], fill_opacity=0.8, data_role="hidden")
        if current is not None:  # outline the rows whose m, l and output are being updated
            r0, r1 = current.q_tile * t.block_m, min((current.q_tile + 1) * t.block_m, t.n_q)
            svg.rect(gx, gy + r0 * cell, t.n_k * cell, (r1 - r0) * cell, "none", stroke=COLORS["current"],
                     stroke_width=2, data_role="current-rows")

    def _draw_legend(self, svg: Svg, x: float, y: float) -> None:
        items = [("current", "current tile"), ("done", "done"), ("free", "not yet"),
                 ("skipped", "skipped / hidden by the mask")]
        for color, label in items:
            svg.rect(x, y - 10, 12, 12, COLORS[color], stroke=COLORS["grid"])
            svg.text(x + 16, y, label, size=11)
            x += 26 + 6.5 * len(label)

    def _draw_panel(self, svg: Svg, x: float, y: float, current: TileStep | None) -> None:
        t = self.trace
        if current is None:
            svg.text(x, y, "press play or move the step slider", size=12, fill=COLORS["muted"])
            y += 34
        elif current.m is None:
            svg.text(x, y, f"values not recorded by {t.source or 'this producer'}:", size=12, data_role="no-values")
            svg.text(x, y + 16, "the schedule only (which tiles, in which order)", size=12, fill=COLORS["muted"])
            return
        else:
            r0 = current.q_tile * t.block_m
            svg.text(x, y, f"rows {r0}–{r0 + len(current.m) - 1}: running max m and sum l", size=12,
                     weight="bold")
            y += 18
            for col, head in ((x, "row"), (x + 44, "m"), (x + 110, "l")):
                svg.text(col, y, head, size=11, fill=COLORS["muted"])
            l_max = max(max(current.l), 1e-30)
            for r, (m, l) in enumerate(zip(current.m[:MAX_ROWS_SHOWN], current.l[:MAX_ROWS_SHOWN])):
                y += 14
                svg.text(x, y, str(r0 + r), size=11)
                svg.text(x + 44, y, _fmt(m), size=11, data_role="m")
                svg.text(x + 110, y, _fmt(l), size=11, data_role="l")
                svg.rect(x + 160, y - 9, 120 * l / l_max, 9, COLORS["done"])
            if len(current.m) > MAX_ROWS_SHOWN:
                y += 14
                svg.text(x, y, f"… {len(current.m) - MAX_ROWS_SHOWN} more rows", size=11, fill=COLORS["muted"])
            y += 26
        errors = self.errors()
        if not errors:
            return
        s = self.current_step
        here = _fmt_error(errors[s - 1][0]) if s else "–"
        whole = errors[s - 1][1] if s else float(self.exact.abs().max())
        svg.text(x, y, "max |output so far − exact output|", size=12, weight="bold")
        svg.text(x, y + 16, f"these rows: {here}", size=11, data_role="error-rows")
        svg.text(x, y + 30, f"all rows: {_fmt_error(whole)}", size=11, data_role="error-all")
        self._draw_sparkline(svg, x, y + 42, [float(self.exact.abs().max())] + [e for _, e in errors], s)

    def _draw_sparkline(self, svg: Svg, x: float, y: float, values: list[float], at: int) -> None:
        w, h = 260, 54
        svg.rect(x, y, w, h, COLORS["free"], stroke=COLORS["grid"])
        top = max(values) or 1.0
        px = [x + w * i / max(1, len(values) - 1) for i in range(len(values))]
        py = [y + h - h * v / top for v in values]
        for i in range(1, len(values)):
            svg.line(px[i - 1], py[i - 1], px[i], py[i], stroke=COLORS["text"], width=1.5)
        svg.rect(px[at] - 3, py[at] - 3, 6, 6, COLORS["current"], data_role="error-marker")
        svg.text(x, y + h + 14, "error of all rows vs step", size=10, fill=COLORS["muted"])
