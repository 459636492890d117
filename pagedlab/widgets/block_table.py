"""A live picture of a :class:`~pagedlab.paged.BlockManager`: the block pools and every sequence's block table.

What it draws, top to bottom:

* the **GPU pool** (and, beside it, the **CPU pool** when the manager has one) as a grid of physical blocks.
  A block held by sequences is tinted with its owner's colour, with a bar along its bottom showing how many of
  its ``block_size`` slots hold tokens; a block shared by several sequences has a purple border and its
  reference count (``×2``); cached-free blocks (unreferenced but holding a reusable prefix) are green, free
  blocks blank;
* each sequence's **block table**: logical block ``i`` -> the physical block it maps to (``cpu 3`` while the
  sequence is swapped out);
* the **last events** the manager reported (allocate, append, fork, copy-on-write, ...).

The widget subscribes to the manager and redraws after every event, so a cell that calls
``manager.append(...)`` in a loop animates the picture displayed above it. Buttons add, append to, fork,
free (and swap) sequences, for play. Every shape carries ``data-*`` attributes (role, pool, block id, state,
owners, reference count, filled slots), so tests read the picture without a browser.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from html import escape

import ipywidgets as widgets

from pagedlab.paged import BlockEvent, BlockManager, OutOfBlocks
from pagedlab.widgets._base import COLORS, LiveView, Svg, owner_color

CELL_W, CELL_H, GAP = 46, 34, 4
BAR_H = 6


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


class BlockTableWidget(LiveView):
    """Watch a block manager's pools and block tables change, live.

    Args:
        manager: the :class:`~pagedlab.paged.BlockManager` to show; the widget subscribes to its events.
        delay: seconds to pause after each redraw, so a fast loop of operations is visible step by step.
        max_blocks: draw at most this many blocks of each pool (a note counts the rest).
        max_events: how many of the last events to list.

    Attributes:
        manager: what is shown.
        tokens, sequence: the prompt length for *add* and the sequence the other buttons act on.
        add_button, append_button, fork_button, free_button: the play controls; swap_out_button and
            swap_in_button too when the manager has a CPU pool (else None).
        status: one line saying what the last button did, or why it could not.

    Raises:
        TypeError: ``manager`` is not a BlockManager. ValueError: a negative ``delay`` or a limit below 1.
    """

    def __init__(self, manager: BlockManager, *, delay: float = 0.0, max_blocks: int = 256,
                 max_events: int = 8) -> None:
        if not isinstance(manager, BlockManager):
            raise TypeError(f"manager must be a pagedlab.paged.BlockManager, got {type(manager).__name__}")
        if delay < 0:
            raise ValueError(f"delay must be >= 0 seconds, got {delay}")
        if max_blocks < 1 or max_events < 1:
            raise ValueError(f"max_blocks and max_events must be >= 1, got {max_blocks} and {max_events}")
        super().__init__()
        self.manager, self.delay, self.max_blocks, self.max_events = manager, delay, max_blocks, max_events
        self._color_index: dict[Hashable, int] = {}   # stable: a sequence keeps its colour while others come and go
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
        self.controls = [widgets.HBox(row), self.status]
        self._unsubscribe = manager.subscribe(self._on_event)
        self.redraw()

    # ------------------------------------------------------------------ live updates

    def _on_event(self, event: BlockEvent) -> None:
        self.redraw()
        if self.delay:
            time.sleep(self.delay)

    def redraw(self) -> None:
        """Re-render the picture and refresh the sequence menu (called on every manager event)."""
        current = self.sequence.value
        ids = self.manager.seq_ids
        self.sequence.options = [(str(s), s) for s in ids]
        if current in ids:
            self.sequence.value = current
        elif ids:
            self.sequence.value = ids[-1]
        super().redraw()

    def close(self) -> None:
        """Stop following the manager (the picture stays as it is)."""
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
            self.redraw()

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
        self.redraw()                     # the menu must list the new sequence before it can be chosen
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

    def block_states(self, pool: str = "gpu") -> list[dict]:
        """For each block of ``pool`` (``"gpu"`` or ``"cpu"``): its state, owners, reference count and fill.

        Returns:
            One dict per block id: ``state`` (``"used"``, ``"shared"``, ``"cached"`` or ``"free"``),
            ``owners`` (sequence ids whose tables hold it, in the manager's order), ``refcount`` and
            ``filled`` (slots holding tokens).
        """
        m = self.manager
        alloc = m.allocator if pool == "gpu" else m.cpu_allocator
        if alloc is None:
            return []
        bs = m.block_size
        owners: dict[int, list] = {}
        filled: dict[int, int] = {}
        for s in m.seq_ids:
            t = m.table(s)
            if t.device != pool:
                continue
            for i, b in enumerate(t.block_ids):
                owners.setdefault(b, []).append(s)
                filled[b] = max(filled.get(b, 0), min(bs, t.num_tokens - i * bs))
        states = []
        for b in range(alloc.num_blocks):
            ref = alloc.refcount(b)
            state = "shared" if ref > 1 else "used" if ref == 1 else "cached" if alloc.is_cached(b) else "free"
            states.append(dict(state=state, owners=owners.get(b, []), refcount=ref, filled=filled.get(b, 0)))
        return states

    # ------------------------------------------------------------------ picture

    def to_svg(self) -> str:
        m = self.manager
        for s in m.seq_ids:
            self.color_of(s)
        gpu, cpu = self.block_states("gpu"), self.block_states("cpu")
        gpu_cols = min(16, len(gpu))
        cpu_cols = min(8, len(cpu))
        gpu_w = gpu_cols * (CELL_W + GAP)
        cpu_x = 10 + gpu_w + 30
        pool_h = max(self._grid_height(gpu, gpu_cols), self._grid_height(cpu, cpu_cols) if cpu else 0)
        seqs = m.seq_ids
        longest = max((m.table(s).num_blocks for s in seqs), default=0)
        tables_y = 56 + pool_h + 40
        events_y = tables_y + 28 + max(1, len(seqs)) * (CELL_H + GAP) + 30
        width = max(cpu_x + cpu_cols * (CELL_W + GAP) if cpu else gpu_w + 20, 150 + longest * (CELL_W + GAP),
                    720)
        height = events_y + 16 * self.max_events + 34

        svg = Svg(width, height)
        u = m.usage()
        svg.text(10, 20, f"{len(seqs)} sequence{'s' if len(seqs) != 1 else ''} · {u.tokens_stored} tokens in "
                 f"{u.blocks_used} of {u.num_blocks} blocks (block_size {m.block_size}) · {u.unused_slots} slots "
                 f"unused ({u.fragmentation:.0%})", size=14, weight="bold", data_role="title")
        svg.text(10, 38, f"free {u.blocks_free} · cached-free {u.blocks_cached} · shared {u.blocks_shared} · "
                 f"saved by sharing {u.blocks_saved_by_sharing} block{'s' if u.blocks_saved_by_sharing != 1 else ''}"
                 + (f" · swapped out {u.num_swapped}" if u.num_cpu_blocks else ""),
                 size=11, fill=COLORS["muted"], data_role="summary")
        self._draw_pool(svg, "gpu", gpu, 10, 56, gpu_cols)
        if cpu:
            self._draw_pool(svg, "cpu", cpu, cpu_x, 56, cpu_cols)
        self._draw_legend(svg, 10, tables_y - 14)
        self._draw_tables(svg, seqs, 10, tables_y)
        self._draw_events(svg, 10, events_y)
        return str(svg)

    def _grid_height(self, states: list[dict], cols: int) -> float:
        shown = min(len(states), self.max_blocks)
        rows = -(-shown // cols) if cols else 0
        return rows * (CELL_H + GAP) + (14 if len(states) > shown else 0)

    def _draw_pool(self, svg: Svg, pool: str, states: list[dict], x0: float, y0: float, cols: int) -> None:
        bs = self.manager.block_size
        svg.text(x0, y0 + 8, f"{pool.upper()} pool: {len(states)} blocks", size=12, weight="bold",
                 data_role="pool-title", data_pool=pool)
        y0 += 16
        for b, st in enumerate(states[:self.max_blocks]):
            x, y = x0 + (b % cols) * (CELL_W + GAP), y0 + (b // cols) * (CELL_H + GAP)
            owners = st["owners"]
            color = self.color_of(owners[0]) if owners else None
            fill = {"cached": COLORS["cached"], "free": COLORS["free"]}.get(st["state"], color)
            title = (f"block {b} ({pool}): {st['state']}, ref_count {st['refcount']}, {st['filled']}/{bs} slots"
                     + (f", held by {', '.join(map(str, owners))}" if owners else ""))
            svg.rect(x, y, CELL_W, CELL_H, fill, stroke=COLORS["shared"] if st["state"] == "shared" else COLORS["grid"],
                     title=title, fill_opacity=0.3 if owners else None,
                     stroke_width=3 if st["state"] == "shared" else None,
                     stroke_dasharray="3 2" if st["state"] == "cached" else None, data_role="block", data_pool=pool,
                     data_block=b, data_state=st["state"], data_owner=",".join(map(str, owners)),
                     data_refcount=st["refcount"], data_filled=st["filled"])
            if owners and st["filled"]:
                svg.rect(x, y + CELL_H - BAR_H, CELL_W * st["filled"] / bs, BAR_H, color, data_role="fill",
                         data_pool=pool, data_block=b)
            svg.text(x + 4, y + 13, str(b), size=11, weight="bold", data_role="block-id")
            if st["state"] == "shared":
                svg.text(x + CELL_W - 4, y + 13, f"×{st['refcount']}", size=11, anchor="end", fill=COLORS["shared"],
                         weight="bold", data_role="refcount", data_block=b)
            label = ",".join(map(str, owners)) if owners else "cached" if st["state"] == "cached" else ""
            if label:
                svg.text(x + 4, y + 25, label if len(label) <= 7 else label[:6] + "…", size=9,
                         fill=COLORS["text"] if owners else COLORS["muted"])
        hidden = len(states) - self.max_blocks
        if hidden > 0:
            rows = -(-self.max_blocks // cols)
            svg.text(x0, y0 + rows * (CELL_H + GAP) + 10, f"… and {hidden} more blocks not drawn", size=11,
                     fill=COLORS["muted"], data_role="hidden-blocks")

    def _draw_legend(self, svg: Svg, x: float, y: float) -> None:
        items = [(COLORS["free"], COLORS["grid"], "free"), (COLORS["cached"], COLORS["grid"], "cached-free"),
                 ("none", COLORS["shared"], "shared (×ref_count)")]
        for fill, stroke, label in items:
            svg.rect(x, y - 10, 12, 12, fill, stroke=stroke, stroke_width=2 if fill == "none" else None,
                     stroke_dasharray="3 2" if label == "cached-free" else None)
            svg.text(x + 16, y, label, size=11)
            x += 28 + 6 * len(label)
        svg.rect(x, y - 4, 18, BAR_H, COLORS["muted"])
        svg.text(x + 22, y, "slots holding tokens", size=11)

    def _draw_tables(self, svg: Svg, seqs: list, x0: float, y0: float) -> None:
        m, bs = self.manager, self.manager.block_size
        svg.text(x0, y0 + 8, "block tables: logical block → physical block", size=12, weight="bold",
                 data_role="tables-title")
        y0 += 20
        if not seqs:
            svg.text(x0, y0 + 20, "no sequences: add one", size=11, fill=COLORS["muted"])
        cx0 = x0 + 140
        for r, s in enumerate(seqs):
            t = m.table(s)
            y = y0 + r * (CELL_H + GAP)
            color = self.color_of(s)
            svg.rect(x0, y + 4, 12, 12, color, data_role="swatch", data_seq=s)
            svg.text(x0 + 16, y + 14, f"{s}: {t.num_tokens} tokens", size=11, data_role="seq-label", data_seq=s)
            if t.device == "cpu":
                svg.text(x0 + 16, y + 28, "swapped out to CPU", size=10, fill=COLORS["muted"], data_role="swapped",
                         data_seq=s)
            for i, b in enumerate(t.block_ids):
                x = cx0 + i * (CELL_W + GAP)
                filled = min(bs, t.num_tokens - i * bs)
                shared = t.device == "gpu" and m.allocator.refcount(b) > 1
                svg.rect(x, y, CELL_W, CELL_H, color, stroke=COLORS["shared"] if shared else COLORS["grid"],
                         fill_opacity=0.3, stroke_width=3 if shared else None,
                         stroke_dasharray="4 2" if t.device == "cpu" else None,
                         title=f"{s}: logical block {i} → {t.device} block {b}, {filled}/{bs} slots",
                         data_role="entry", data_seq=s, data_logical=i, data_physical=b, data_pool=t.device,
                         data_filled=filled)
                svg.rect(x, y + CELL_H - BAR_H, CELL_W * filled / bs, BAR_H, color)
                svg.text(x + 4, y + 11, f"L{i}", size=9, fill=COLORS["muted"])
                svg.text(x + CELL_W / 2, y + 24, f"{'cpu ' if t.device == 'cpu' else '→ '}{b}", size=12,
                         anchor="middle", weight="bold")

    def _draw_events(self, svg: Svg, x: float, y: float) -> None:
        events = list(self.manager.events)[-self.max_events:]
        svg.text(x, y, "last events", size=12, weight="bold", data_role="events-title")
        if not events:
            svg.text(x, y + 18, "none yet", size=11, fill=COLORS["muted"])
        for i, e in enumerate(reversed(events)):   # newest first
            svg.text(x, y + 18 + 16 * i, f"#{e.step} {describe_event(e)}", size=11,
                     weight="bold" if i == 0 else "normal", fill=COLORS["text"] if i == 0 else COLORS["muted"],
                     data_role="event", data_kind=e.kind, data_step=e.step)
