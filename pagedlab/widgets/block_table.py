"""A live picture of a :class:`~pagedlab.paged.BlockManager`: the block pools and every sequence's block table.

What it draws, top to bottom:

* a header: sequences, tokens, blocks, and the **unused slots** of the blocks in use (the empty end of each
  sequence's last block; see the note under the header for why that share looks large on a tiny pool);
* the **current event**, the one the history slider points at, with its blocks outlined in black, a
  copy-on-write drawn as an arrow from the shared block to its copy, and a swap as arrows between the pools;
* the **GPU pool** (and, beside it, the **CPU pool** when the manager has one) as a grid of physical blocks.
  A block held by sequences is tinted with its owner's colour, with a bar along its bottom showing how many of
  its ``block_size`` slots hold tokens; a block shared by several sequences has a purple border and its
  reference count (``×2``); cached-free blocks (unreferenced but holding a reusable prefix) are green, with
  their **eviction rank** in the prefix cache's eviction policy (``#1`` is evicted next), free blocks blank;
* each sequence's **block table**: logical block ``i`` -> the physical block it maps to (``cpu 3`` while the
  sequence is swapped out);
* the events up to the current one (allocate, append, fork, copy-on-write, ...).

**History.** The widget records a frame after every event the manager reports, from the moment it was
created. The slider under the picture steps back and forth through them; *play* replays them at the chosen
speed (events per second), from the first frame when pressed on the last. A new event moves the slider to it
when the slider was at the latest frame, so a cell that calls ``manager.append(...)`` in a loop animates the
picture, and the whole run can be replayed afterwards. Buttons add, append to, fork, free (and swap)
sequences, for play.

**Static views** (GitHub, nbviewer, nbval, the README): :meth:`static_svg` draws the final state and, under it,
a strip of small frames at the key events (allocations, forks, copies, cache hits, evictions, swaps, frees).

Every shape carries ``data-*`` attributes (role, pool, block id, state, owners, reference count, filled
slots, eviction rank, highlight), so tests read the picture without a browser.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from html import escape

import ipywidgets as widgets

from pagedlab.paged import BlockEvent, BlockManager, BlockState, OutOfBlocks, Usage, block_states
from pagedlab.validate import blocks_for
from pagedlab.widgets._base import COLORS, LiveView, Svg, owner_color

CELL_W, CELL_H, GAP = 46, 34, 4
BAR_H = 6
MINI_W, MINI_H, MINI_GAP = 12, 10, 2          # a block in the strip of key frames
KEY_KINDS = ("allocate", "fork", "copy_on_write", "cache_hit", "evict", "swap_out", "swap_in", "free")
"""Events worth a small frame in the static view (every event but ``append``, which only fills a slot)."""
MAX_ARROWS = 8
ARROW_LANE = 3                                 # pixels between the horizontal runs of two arrows
HIGHLIGHT = COLORS["text"]
"""Outline of the current event's blocks: dark, because one of the owners' colours is already orange."""


def describe_event(event: BlockEvent) -> str:
    """One line saying what an event did, for the event list ("fork A → B: shares blocks [0, 1]")."""
    s, blocks, kind = event.seq_id, list(event.blocks), event.kind
    if kind == "append":
        return f"append {s}: slot {event.slot} in block {blocks[0]}"
    if kind == "allocate":
        return f"allocate {s}: block{'s' if len(blocks) > 1 else ''} {blocks}"
    if kind == "free":
        return f"free {s}: drops blocks {blocks}" + (" (cpu pool)" if event.device == "cpu" else "")
    if kind == "fork":
        return f"fork {event.parent} → {s}: shares blocks {blocks}"
    if kind == "copy_on_write":
        src, dst = event.pairs[0]
        return f"copy-on-write {s}: block {src} is shared, {s} gets copy {dst}"
    if kind == "cache_hit":
        return f"cache hit {s}: reuses blocks {blocks}"
    if kind == "evict":
        return f"evict cached blocks {blocks} (for {s})"
    if kind == "swap_out":
        return f"swap out {s}: gpu→cpu " + ", ".join(f"{a}→{b}" for a, b in event.pairs)
    if kind == "swap_in":
        return f"swap in {s}: cpu→gpu " + ", ".join(f"{a}→{b}" for a, b in event.pairs)
    return f"{kind} {s}"


def _highlighted(event: BlockEvent | None) -> dict[str, set[int]]:
    """The blocks an event touched, per pool."""
    out: dict[str, set[int]] = {"gpu": set(), "cpu": set()}
    if event is None:
        return out
    if event.kind == "swap_out":
        out["gpu"] |= {a for a, _ in event.pairs}
        out["cpu"] |= {b for _, b in event.pairs}
    elif event.kind == "swap_in":
        out["cpu"] |= {a for a, _ in event.pairs}
        out["gpu"] |= {b for _, b in event.pairs}
    else:
        out[event.device] |= set(event.blocks)
    return out


@dataclass(frozen=True)
class Frame:
    """What the manager looked like right after one event (or, for the first frame, when the widget was made).

    Attributes:
        event: the event (None for the first frame).
        index: the frame's position in the widget's history (0: creation).
        gpu, cpu: :meth:`BlockTableWidget.block_states` of each pool at that moment.
        tables: ``(seq_id, device, block_ids, num_tokens)`` for every sequence, in the manager's order.
        usage: ``Usage.of(manager)`` at that moment.
    """

    event: BlockEvent | None
    index: int
    gpu: tuple[BlockState, ...]
    cpu: tuple[BlockState, ...]
    tables: tuple[tuple[Hashable, str, tuple[int, ...], int], ...]
    usage: Usage


class BlockTableWidget(LiveView):
    """Watch a block manager's pools and block tables change, live, and step back through their history.

    Args:
        manager: the :class:`~pagedlab.paged.BlockManager` to show; the widget subscribes to its events.
        max_blocks: draw at most this many blocks of each pool (a note counts the rest).
        max_events: how many events to list under the picture.
        max_history: frames kept (the oldest go first); each is a snapshot of the pools, so keep it modest.
        speed: events per second when *play* replays the history.

    Attributes:
        manager: what is shown.
        frames: the recorded history, oldest first (``frames[-1]`` is now).
        play, step_slider, speed_slider: replay controls; ``step_slider.value`` is the frame shown.
        tokens, sequence: the prompt length for *add* and the sequence the other buttons act on.
        add_button, append_button, fork_button, free_button: the play controls; swap_out_button and
            swap_in_button too when the manager has a CPU pool (else None).
        status: one line saying what the last button did, or why it could not.

    Raises:
        TypeError: ``manager`` is not a BlockManager. ValueError: a limit below 1 or a speed outside 1..50.
    """

    def __init__(self, manager: BlockManager, *, max_blocks: int = 256, max_events: int = 8,
                 max_history: int = 1000, speed: int = 4) -> None:
        if not isinstance(manager, BlockManager):
            raise TypeError(f"manager must be a pagedlab.paged.BlockManager, got {type(manager).__name__}")
        if min(max_blocks, max_events, max_history) < 1:
            raise ValueError(f"max_blocks, max_events and max_history must be >= 1, got {max_blocks}, "
                             f"{max_events} and {max_history}")
        if not 1 <= speed <= 50:
            raise ValueError(f"speed must be 1 to 50 events per second, got {speed}")
        super().__init__()
        self.manager, self.max_blocks, self.max_events, self.max_history = manager, max_blocks, max_events, max_history
        self._color_index: dict[Hashable, int] = {}   # stable: a sequence keeps its colour while others come and go
        self._dropped = 0                             # frames dropped from the front of the history
        self.frames: list[Frame] = []
        self.play = widgets.Play(min=0, max=0, interval=1000 // speed, description="replay the events")
        self.step_slider = widgets.IntSlider(min=0, max=0, description="event", continuous_update=True)
        self.speed_slider = widgets.IntSlider(value=speed, min=1, max=50, description="events/s")
        widgets.link((self.play, "value"), (self.step_slider, "value"))
        self.speed_slider.observe(lambda _: setattr(self.play, "interval", 1000 // self.speed_slider.value),
                                  "value")
        self.step_slider.observe(lambda _: LiveView.redraw(self), "value")
        # Pressing play on the last frame replays from the first (ipywidgets 8 calls the trait "playing", 7 "_playing").
        playing = "playing" if self.play.has_trait("playing") else "_playing"
        self.play.observe(self._on_play, playing)

        bs = manager.block_size
        self.tokens = widgets.BoundedIntText(value=bs + bs // 4 or 1, min=1, max=manager.num_blocks * bs,
                                             description="tokens", layout=widgets.Layout(width="150px"))
        self.sequence = widgets.Dropdown(description="sequence", layout=widgets.Layout(width="190px"))
        self.add_button = self._button("add", "add a sequence whose prompt is tokens 0, 1, ..., tokens-1", self._add)
        self.append_button = self._button("append", "append one token to the chosen sequence", self._append)
        self.fork_button = self._button("fork", "fork the chosen sequence: the child shares all its blocks", self._fork)
        self.free_button = self._button("free", "free the chosen sequence", self._free)
        row = [self.tokens, self.add_button, self.sequence, self.append_button, self.fork_button, self.free_button]
        self.swap_out_button = self.swap_in_button = None
        if manager.cpu_allocator is not None:
            self.swap_out_button = self._button("swap out", "move the chosen sequence to the CPU pool",
                                                lambda: self.manager.swap_out(self._selected()))
            self.swap_in_button = self._button("swap in", "bring the chosen sequence back to the GPU pool",
                                               lambda: self.manager.swap_in(self._selected()))
            row += [self.swap_out_button, self.swap_in_button]
        self.status = widgets.HTML()
        self.controls = [widgets.HBox([self.play, self.step_slider, self.speed_slider]), widgets.HBox(row),
                         self.status]
        self._record(None)
        self._unsubscribe = manager.subscribe(self._on_event)
        self.redraw()

    # ------------------------------------------------------------------ history

    def _record(self, event: BlockEvent | None) -> None:
        m = self.manager
        for s in m.seq_ids:
            self.color_of(s)
        tables = tuple((s, m.table(s).device, tuple(m.table(s).block_ids), m.table(s).num_tokens) for s in m.seq_ids)
        self.frames.append(Frame(event=event, index=self._dropped + len(self.frames),
                                 gpu=tuple(self.block_states("gpu")), cpu=tuple(self.block_states("cpu")),
                                 tables=tables, usage=Usage.of(m)))
        if len(self.frames) > self.max_history:
            del self.frames[0]
            self._dropped += 1

    def _on_event(self, event: BlockEvent) -> None:
        following = self.step_slider.value >= self.step_slider.max
        self._record(event)
        last = self._dropped + len(self.frames) - 1
        # Raise the maximum before the value and the minimum after, so the slider never clamps in between.
        for control in (self.step_slider, self.play):
            control.max = last
        if following:
            self.step_slider.value = last           # redraws through the slider's observer
        for control in (self.step_slider, self.play):
            control.min = self._dropped
        self._refresh_menu()

    def _on_play(self, change: dict) -> None:
        if change["new"] and self.step_slider.value >= self.step_slider.max:
            self.step_slider.value = self.step_slider.min

    def show_step(self, index: int) -> None:
        """Show frame ``index`` (0: when the widget was created; ``len(frames) - 1``: now), as the slider does."""
        self.step_slider.value = max(self.step_slider.min, min(index, self.step_slider.max))

    @property
    def current(self) -> Frame:
        """The frame the slider points at."""
        return self.frames[self.step_slider.value - self._dropped]

    def key_frames(self, limit: int = 8) -> list[Frame]:
        """The last ``limit`` frames whose event is one of :data:`KEY_KINDS` (what the static strip shows)."""
        return [f for f in self.frames if f.event is not None and f.event.kind in KEY_KINDS][-limit:]

    # ------------------------------------------------------------------ live updates

    def redraw(self) -> None:
        """Re-render the picture and refresh the sequence menu."""
        self._refresh_menu()
        super().redraw()

    def _refresh_menu(self) -> None:
        current = self.sequence.value
        ids = self.manager.seq_ids
        self.sequence.options = [(str(s), s) for s in ids]
        if current in ids:
            self.sequence.value = current
        elif ids:
            self.sequence.value = ids[-1]

    def close(self) -> None:
        """Stop following the manager (the picture and its history stay as they are)."""
        self._unsubscribe()

    # ------------------------------------------------------------------ buttons

    def _button(self, label: str, tooltip: str, action: Callable[[], object]) -> widgets.Button:
        button = widgets.Button(description=label, tooltip=tooltip, layout=widgets.Layout(width="80px"))
        button.on_click(lambda _: self._run(label, action))
        return button

    def _run(self, label: str, action: Callable[[], object]) -> None:
        # A button must never raise into the frontend's log: say what went wrong under the picture instead.
        try:
            action()
        except (OutOfBlocks, ValueError, KeyError, TypeError) as e:
            # KeyError wraps its message in quotes; the others do not.
            message = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
            self.status.value = f"<b>{escape(label)}</b> failed: {escape(str(message))}"
        else:
            self.status.value = ""
            self.show_step(self.step_slider.max)   # a button press shows its result, even after stepping back

    def _new_id(self) -> str:
        n = len(self._color_index)
        while True:
            name = chr(ord("A") + n) if n < 26 else f"S{n}"
            if name not in self.manager and name not in self._color_index:
                return name
            n += 1

    def _selected(self) -> Hashable:
        if self.sequence.value is None:
            raise ValueError("no sequence: add one first")
        return self.sequence.value

    def _add(self) -> None:
        # Every prompt is 0, 1, 2, ...: identical prefixes, so prefix caching (when on) has something to share.
        seq_id = self._new_id()
        self.manager.add(seq_id, range(self.tokens.value))
        self._refresh_menu()              # the menu must list the new sequence before it can be chosen
        self.sequence.value = seq_id      # the next append or fork most likely concerns the new sequence

    def _append(self) -> None:
        seq_id = self._selected()
        self.manager.append(seq_id, self.manager.table(seq_id).num_tokens)

    def _fork(self) -> None:
        self.manager.fork(self._selected(), self._new_id())

    def _free(self) -> None:
        self.manager.free(self._selected())

    # ------------------------------------------------------------------ what the picture shows

    def color_of(self, seq_id: Hashable) -> str:
        """The colour of a sequence, fixed the first time the widget sees it."""
        if seq_id not in self._color_index:
            self._color_index[seq_id] = len(self._color_index)
        return owner_color(self._color_index[seq_id])

    def block_states(self, pool: str = "gpu") -> list[BlockState]:
        """Each block of ``pool`` (``"gpu"`` or ``"cpu"``) now: :func:`pagedlab.paged.block_states` of the manager."""
        return block_states(self.manager, pool)

    # ------------------------------------------------------------------ picture

    def to_svg(self) -> str:
        """The frame the slider points at (by default the latest), as an SVG string."""
        return str(self._render(self.current))

    def static_svg(self) -> str:
        """The final state, and under it a strip of small frames at the key events: the picture for static views."""
        main = self._render(self.frames[-1])
        keys = self.key_frames()
        if not keys:
            return str(main)
        strip = self._strip(keys, main.width)
        width, height = max(main.width, strip.width), main.height + strip.height
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}" '
                f'viewBox="0 0 {width:g} {height:g}" font-family="sans-serif" data-role="static">'
                + str(main).replace("<svg ", '<svg x="0" y="0" ', 1)
                + str(strip).replace("<svg ", f'<svg x="0" y="{main.height:g}" ', 1) + "</svg>")

    def _layout(self, frame: Frame) -> dict[str, float]:
        gpu_cols = min(16, len(frame.gpu))
        cpu_cols = min(8, len(frame.cpu))
        gpu_w = gpu_cols * (CELL_W + GAP)
        cpu_x = 10 + gpu_w + 40
        pool_y = 104
        pool_h = max(self._grid_height(frame.gpu, gpu_cols), self._grid_height(frame.cpu, cpu_cols) if frame.cpu else 0)
        longest = max((len(t[2]) for t in frame.tables), default=0)
        arrows_y = pool_y + 16 + pool_h + 4     # the arrows' lanes run under the pools' last row
        tables_y = arrows_y + ARROW_LANE * MAX_ARROWS + 36
        events_y = tables_y + 28 + max(1, len(frame.tables)) * (CELL_H + GAP) + 30
        width = max(cpu_x + cpu_cols * (CELL_W + GAP) if frame.cpu else gpu_w + 20, 150 + longest * (CELL_W + GAP),
                    760)
        return dict(gpu_cols=gpu_cols, cpu_cols=cpu_cols, cpu_x=cpu_x, pool_y=pool_y, arrows_y=arrows_y,
                    tables_y=tables_y,
                    events_y=events_y, width=width, height=events_y + 16 * self.max_events + 34)

    def _render(self, frame: Frame) -> Svg:
        m, u, lay = self.manager, frame.usage, self._layout(frame)
        svg = Svg(lay["width"], lay["height"])
        n = len(frame.tables)
        svg.text(10, 20, f"{n} sequence{'s' if n != 1 else ''} · {u.tokens_stored} tokens in {u.blocks_used} of "
                 f"{u.num_blocks} blocks of {m.block_size} · {u.unused_slots} unused slots "
                 f"({u.fragmentation:.0%} of used blocks)", size=14, weight="bold", data_role="title")
        svg.text(10, 38, f"free {u.blocks_free} · cached-free {u.blocks_cached} · shared {u.blocks_shared} · "
                 f"saved by sharing {u.blocks_saved_by_sharing} block{'s' if u.blocks_saved_by_sharing != 1 else ''}"
                 + (f" · swapped out {u.num_swapped}" if u.num_cpu_blocks else ""),
                 size=11, fill=COLORS["muted"], data_role="summary")
        svg.text(10, 54, f"unused slots: the empty end of each last block, at most {m.block_size - 1} per sequence: "
                 f"many on a tiny pool, under 4% on a real one",
                 size=10, fill=COLORS["muted"], data_role="unused-note")
        last = self._dropped + len(self.frames) - 1
        caption = ("before any event" if frame.event is None
                   else f"event #{frame.event.step}: {describe_event(frame.event)}")
        svg.text(10, 76, f"frame {frame.index} of {last} · {caption}", size=12, weight="bold",
                 fill=COLORS["current"] if frame.event is not None else COLORS["muted"], data_role="current-event",
                 data_frame=frame.index, data_kind=frame.event.kind if frame.event else None)
        marked = _highlighted(frame.event)
        self._draw_pool(svg, "gpu", frame.gpu, 10, lay["pool_y"], lay["gpu_cols"], marked["gpu"])
        if frame.cpu:
            self._draw_pool(svg, "cpu", frame.cpu, lay["cpu_x"], lay["pool_y"], lay["cpu_cols"], marked["cpu"])
        self._draw_arrows(svg, frame, lay)
        self._draw_legend(svg, 10, lay["tables_y"] - 14)
        self._draw_tables(svg, frame, 10, lay["tables_y"])
        self._draw_events(svg, frame, 10, lay["events_y"])
        return svg

    def _grid_height(self, states: tuple[BlockState, ...], cols: int) -> float:
        shown = min(len(states), self.max_blocks)
        rows = blocks_for(shown, cols) if cols else 0
        return rows * (CELL_H + GAP) + (14 if len(states) > shown else 0)

    @staticmethod
    def _cell(x0: float, y0: float, b: int, cols: int) -> tuple[float, float]:
        return x0 + (b % cols) * (CELL_W + GAP), y0 + 16 + (b // cols) * (CELL_H + GAP)

    def _draw_pool(self, svg: Svg, pool: str, states: tuple[BlockState, ...], x0: float, y0: float, cols: int,
                   marked: set[int]) -> None:
        bs = self.manager.block_size
        svg.text(x0, y0 + 8, f"{pool.upper()} pool: {len(states)} blocks", size=12, weight="bold",
                 data_role="pool-title", data_pool=pool)
        for b, st in enumerate(states[:self.max_blocks]):
            x, y = self._cell(x0, y0, b, cols)
            owners = st.owners
            color = self.color_of(owners[0]) if owners else None
            fill = {"cached": COLORS["cached"], "free": COLORS["free"]}.get(st.state, color)
            title = (f"block {b} ({pool}): {st.state}, ref_count {st.refcount}, {st.filled}/{bs} slots"
                     + (f", held by {', '.join(map(str, owners))}" if owners else "")
                     + (f", eviction rank {st.eviction_rank} (1 = evicted next)" if st.eviction_rank else ""))
            hot = b in marked
            stroke = HIGHLIGHT if hot else COLORS["shared"] if st.state == "shared" else COLORS["grid"]
            svg.rect(x, y, CELL_W, CELL_H, fill, stroke=stroke, title=title, fill_opacity=0.3 if owners else None,
                     stroke_width=3 if hot or st.state == "shared" else None,
                     stroke_dasharray="3 2" if st.state == "cached" and not hot else None, data_role="block",
                     data_pool=pool, data_block=b, data_state=st.state, data_owner=",".join(map(str, owners)),
                     data_refcount=st.refcount, data_filled=st.filled, data_eviction_rank=st.eviction_rank,
                     data_highlight=1 if hot else None)
            if owners and st.filled:
                svg.rect(x, y + CELL_H - BAR_H, CELL_W * st.filled / bs, BAR_H, color, data_role="fill",
                         data_pool=pool, data_block=b)
            svg.text(x + 4, y + 13, str(b), size=11, weight="bold", data_role="block-id")
            if st.state == "shared":
                svg.text(x + CELL_W - 4, y + 13, f"×{st.refcount}", size=11, anchor="end", fill=COLORS["shared"],
                         weight="bold", data_role="refcount", data_block=b)
            if st.eviction_rank:
                svg.text(x + CELL_W - 4, y + 13, f"#{st.eviction_rank}", size=9, anchor="end", fill=COLORS["text"],
                         data_role="eviction-rank", data_block=b, data_rank=st.eviction_rank)
            label = ",".join(map(str, owners)) if owners else "cached" if st.state == "cached" else ""
            if label:
                svg.text(x + 4, y + 25, label if len(label) <= 7 else label[:6] + "…", size=9,
                         fill=COLORS["text"] if owners else COLORS["muted"])
        hidden = len(states) - self.max_blocks
        if hidden > 0:
            rows = blocks_for(self.max_blocks, cols)
            svg.text(x0, y0 + 16 + rows * (CELL_H + GAP) + 10, f"… and {hidden} more blocks not drawn", size=11,
                     fill=COLORS["muted"], data_role="hidden-blocks")

    def _draw_arrows(self, svg: Svg, frame: Frame, lay: dict[str, float]) -> None:
        """Copy-on-write: shared block → its copy. Swap: GPU block ↔ CPU block.

        Each arrow leaves the bottom of its source block, runs along its own lane under the pools (so arrows
        between blocks of one row do not overlap) and enters the bottom of its destination, head up.
        """
        e = frame.event
        if e is None or e.kind not in ("copy_on_write", "swap_out", "swap_in"):
            return
        origin = {"gpu": (10, lay["gpu_cols"]), "cpu": (lay["cpu_x"], lay["cpu_cols"])}
        src_pool, dst_pool = {"copy_on_write": ("gpu", "gpu"), "swap_out": ("gpu", "cpu"),
                              "swap_in": ("cpu", "gpu")}[e.kind]
        pairs = [(a, b) for a, b in e.pairs if max(a, b) < self.max_blocks][:MAX_ARROWS]
        for lane, (src, dst) in enumerate(pairs):
            (sx, sy), (dx, dy) = (self._cell(origin[p][0], lay["pool_y"], b, origin[p][1])
                                  for p, b in ((src_pool, src), (dst_pool, dst)))
            # Spread the ends over the cells, so arrows that share a block do not draw over each other.
            shift = (lane % 3 - 1) * 8
            x1, y1 = sx + CELL_W / 2 + shift, sy + CELL_H
            x2, y2 = dx + CELL_W / 2 + shift, dy + CELL_H
            y_lane = lay["arrows_y"] + ARROW_LANE * lane
            style = dict(stroke=COLORS["current"], width=2)
            svg.line(x1, y1, x1, y_lane, **style, data_role="arrow", data_kind=e.kind, data_src=src, data_dst=dst,
                     data_src_pool=src_pool, data_dst_pool=dst_pool)
            svg.line(x1, y_lane, x2, y_lane, **style)
            svg.line(x2, y_lane, x2, y2, **style)
            for side in (-1, 1):            # the head, pointing up into the destination block
                svg.line(x2, y2, x2 + side * 4, y2 + 6, **style, data_role="arrow-head", data_dst=dst)

    def _draw_legend(self, svg: Svg, x: float, y: float) -> None:
        items = [(COLORS["free"], COLORS["grid"], "free"),
                 (COLORS["cached"], COLORS["grid"], "cached-free (#eviction rank)"), ("none", COLORS["shared"], "shared (×ref_count)"), ("none", HIGHLIGHT, "this event's blocks")]
        for fill, stroke, label in items:
            svg.rect(x, y - 10, 12, 12, fill, stroke=stroke, stroke_width=2 if fill == "none" else None,
                     stroke_dasharray="3 2" if label.startswith("cached") else None)
            svg.text(x + 16, y, label, size=11)
            x += 28 + 6 * len(label)
        svg.rect(x, y - 4, 18, BAR_H, COLORS["muted"])
        svg.text(x + 22, y, "slots holding tokens", size=11)

    def _draw_tables(self, svg: Svg, frame: Frame, x0: float, y0: float) -> None:
        bs = self.manager.block_size
        svg.text(x0, y0 + 8, "block tables: logical block → physical block", size=12, weight="bold",
                 data_role="tables-title")
        y0 += 20
        if not frame.tables:
            svg.text(x0, y0 + 20, "no sequences: add one", size=11, fill=COLORS["muted"])
        cx0 = x0 + 140
        for r, (s, device, block_ids, num_tokens) in enumerate(frame.tables):
            y = y0 + r * (CELL_H + GAP)
            color = self.color_of(s)
            svg.rect(x0, y + 4, 12, 12, color, data_role="swatch", data_seq=s)
            svg.text(x0 + 16, y + 14, f"{s}: {num_tokens} tokens", size=11, data_role="seq-label", data_seq=s)
            if device == "cpu":
                svg.text(x0 + 16, y + 28, "swapped out to CPU", size=10, fill=COLORS["muted"], data_role="swapped",
                         data_seq=s)
            for i, b in enumerate(block_ids):
                x = cx0 + i * (CELL_W + GAP)
                filled = min(bs, num_tokens - i * bs)
                shared = device == "gpu" and frame.gpu[b].refcount > 1
                svg.rect(x, y, CELL_W, CELL_H, color, stroke=COLORS["shared"] if shared else COLORS["grid"],
                         fill_opacity=0.3, stroke_width=3 if shared else None,
                         stroke_dasharray="4 2" if device == "cpu" else None,
                         title=f"{s}: logical block {i} → {device} block {b}, {filled}/{bs} slots",
                         data_role="entry", data_seq=s, data_logical=i, data_physical=b, data_pool=device,
                         data_filled=filled)
                svg.rect(x, y + CELL_H - BAR_H, CELL_W * filled / bs, BAR_H, color)
                svg.text(x + 4, y + 11, f"L{i}", size=9, fill=COLORS["muted"])
                svg.text(x + CELL_W / 2, y + 24, f"{'cpu ' if device == 'cpu' else '→ '}{b}", size=12,
                         anchor="middle", weight="bold")

    def _draw_events(self, svg: Svg, frame: Frame, x: float, y: float) -> None:
        upto = frame.index - self._dropped
        events = [f.event for f in self.frames[1:upto + 1] if f.event is not None][-self.max_events:]
        svg.text(x, y, "events up to this frame" if upto < len(self.frames) - 1 else "last events", size=12,
                 weight="bold", data_role="events-title")
        if not events:
            svg.text(x, y + 18, "none yet", size=11, fill=COLORS["muted"])
        for i, e in enumerate(reversed(events)):   # newest first
            svg.text(x, y + 18 + 16 * i, f"#{e.step} {describe_event(e)}", size=11,
                     weight="bold" if i == 0 else "normal", fill=COLORS["text"] if i == 0 else COLORS["muted"],
                     data_role="event", data_kind=e.kind, data_step=e.step)

    def _strip(self, keys: list[Frame], min_width: float) -> Svg:
        """Small frames of the GPU (and CPU) pool at each key event, side by side, wrapping into rows."""
        num_gpu, num_cpu = len(keys[0].gpu), len(keys[0].cpu)
        cols = min(8, max(num_gpu, 1))
        gpu_rows = blocks_for(min(num_gpu, self.max_blocks), cols)
        cpu_rows = blocks_for(min(num_cpu, self.max_blocks), cols) if num_cpu else 0
        cell_w = max(cols * (MINI_W + MINI_GAP), 120) + 16
        cell_h = 34 + (gpu_rows + cpu_rows) * (MINI_H + MINI_GAP) + (8 if num_cpu else 0)
        per_row = max(1, int((min_width - 10) // cell_w))
        rows = blocks_for(len(keys), per_row)
        svg = Svg(max(min_width, 10 + per_row * cell_w), 26 + rows * cell_h)
        svg.text(10, 16, "key events (small frames: GPU pool, then CPU pool; dark outline: the event's blocks)",
                 size=12, weight="bold", data_role="strip-title")
        for k, frame in enumerate(keys):
            x0, y0 = 10 + (k % per_row) * cell_w, 26 + (k // per_row) * cell_h
            e = frame.event
            marked = _highlighted(e)
            svg.text(x0, y0 + 10, f"#{e.step} {e.kind.replace('_', '-')} {e.seq_id}"[:24], size=10, weight="bold",
                     data_role="key-frame", data_kind=e.kind, data_step=e.step, data_frame=frame.index)
            y = y0 + 18
            for pool, states in (("gpu", frame.gpu), ("cpu", frame.cpu)):
                for b, st in enumerate(states[:self.max_blocks]):
                    bx, by = x0 + (b % cols) * (MINI_W + MINI_GAP), y + (b // cols) * (MINI_H + MINI_GAP)
                    owners = st.owners
                    fill = (self.color_of(owners[0]) if owners else
                            COLORS["cached"] if st.state == "cached" else COLORS["free"])
                    hot = b in marked[pool]
                    svg.rect(bx, by, MINI_W, MINI_H, fill,
                             stroke=HIGHLIGHT if hot else COLORS["shared"] if st.state == "shared"
                             else COLORS["grid"], stroke_width=2 if hot or st.state == "shared" else None,
                             data_role="mini-block", data_pool=pool, data_block=b, data_state=st.state,
                             data_frame=frame.index, data_highlight=1 if hot else None)
                y += blocks_for(min(len(states), self.max_blocks), cols) * (MINI_H + MINI_GAP) + 8
        return svg
