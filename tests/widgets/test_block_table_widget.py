"""BlockTableWidget draws what the manager holds, redraws on every event, and its buttons drive the manager.

No browser: the SVG is parsed with xml.etree and read through the data-* attributes on its shapes.
"""

import xml.etree.ElementTree as ET

import pytest

from pagedlab.paged import BlockManager
from pagedlab.widgets import BlockTableWidget
from pagedlab.widgets.block_table import describe_event


def shapes(svg: str, role: str) -> list[dict]:
    root = ET.fromstring(svg)
    return [el.attrib | {"text": el.text} for el in root.iter() if el.get("data-role") == role]


def blocks(w: BlockTableWidget, pool: str = "gpu") -> dict[int, dict]:
    return {int(b["data-block"]): b for b in shapes(w.to_svg(), "block") if b["data-pool"] == pool}


def entries(w: BlockTableWidget) -> dict[str, list[tuple[str, int, int]]]:
    """seq -> [(pool, physical block, filled slots)] in logical order."""
    out: dict[str, list] = {}
    for e in sorted(shapes(w.to_svg(), "entry"), key=lambda e: int(e["data-logical"])):
        out.setdefault(e["data-seq"], []).append((e["data-pool"], int(e["data-physical"]), int(e["data-filled"])))
    return out


def assert_matches_manager(w: BlockTableWidget) -> None:
    """Every drawn GPU block agrees with the allocator and with the block tables that hold it."""
    m = w.manager
    holders: dict[int, list[str]] = {}
    for s in m.seq_ids:
        t = m.table(s)
        if t.device == "gpu":
            for b in t.block_ids:
                holders.setdefault(b, []).append(s)
    drawn = blocks(w)
    assert sorted(drawn) == list(range(m.num_blocks))
    for b, shape in drawn.items():
        ref = m.allocator.refcount(b)
        assert int(shape["data-refcount"]) == ref == len(holders.get(b, []))
        assert shape["data-owner"] == ",".join(holders.get(b, []))
        expected = ("shared" if ref > 1 else "used" if ref else
                    "cached" if m.allocator.is_cached(b) else "free")
        assert shape["data-state"] == expected
    assert {s: [x[:2] for x in v] for s, v in entries(w).items()} == {
        s: [(m.table(s).device, b) for b in m.table(s).block_ids] for s in m.seq_ids}


@pytest.fixture
def source_scenario():
    """Notebook 06's first pool: 6 blocks of 16 tokens; requests of 20 and 10 tokens."""
    m = BlockManager(num_blocks=6, block_size=16, num_cpu_blocks=4)
    w = BlockTableWidget(m)
    m.add("A", range(20))
    m.add("B", range(100, 110))
    return m, w


def test_add_draws_owners_fill_and_tables(source_scenario):
    m, w = source_scenario
    assert_matches_manager(w)
    drawn = blocks(w)
    assert [drawn[b]["data-state"] for b in range(6)] == ["used", "used", "used", "free", "free", "free"]
    assert [drawn[b]["data-owner"] for b in range(3)] == ["A", "A", "B"]
    assert [int(drawn[b]["data-filled"]) for b in range(6)] == [16, 4, 10, 0, 0, 0]
    assert entries(w) == {"A": [("gpu", 0, 16), ("gpu", 1, 4)], "B": [("gpu", 2, 10)]}
    # The owner's colour is the tint of its blocks and its swatch.
    swatch = {s["data-seq"]: s["fill"] for s in shapes(w.to_svg(), "swatch")}
    assert drawn[0]["fill"] == drawn[1]["fill"] == swatch["A"] != swatch["B"] == drawn[2]["fill"]


def test_every_append_redraws_the_live_picture(source_scenario):
    m, w = source_scenario
    seen = []
    w.picture.observe(lambda change: seen.append(change["new"]), "value")
    for i in range(13):   # 20 -> 33 tokens: crosses the boundary at 32 into a third block
        m.append("A", 20 + i)
    assert len(seen) >= 13
    assert w.picture.value == w.to_svg()
    assert entries(w)["A"] == [("gpu", 0, 16), ("gpu", 1, 16), ("gpu", 3, 1)]
    labels = [s["text"] for s in shapes(w.picture.value, "seq-label")]
    assert "A: 33 tokens" in labels
    newest = shapes(w.picture.value, "event")[0]
    assert newest["data-kind"] == "append" and int(newest["data-step"]) == m.events[-1].step
    assert_matches_manager(w)


def test_fork_marks_shared_blocks_with_their_refcount_and_copy_on_write_splits_them(source_scenario):
    m, w = source_scenario
    m.fork("B", "C")
    drawn = blocks(w)
    assert drawn[2]["data-state"] == "shared" and drawn[2]["data-refcount"] == "2"
    assert drawn[2]["data-owner"] == "B,C"
    assert [r["text"] for r in shapes(w.to_svg(), "refcount") if r["data-block"] == "2"] == ["×2"]
    assert_matches_manager(w)
    m.append("C", 7)   # B's block is shared and partly full: C gets a copy
    drawn = blocks(w)
    assert drawn[2]["data-state"] == "used" and drawn[2]["data-owner"] == "B"
    assert entries(w)["C"] == [("gpu", 3, 11)]
    kinds = [e["data-kind"] for e in shapes(w.to_svg(), "event")]
    assert kinds[:2] == ["append", "copy_on_write"]
    assert_matches_manager(w)


def test_free_returns_blocks_and_swap_moves_the_table_between_pools(source_scenario):
    m, w = source_scenario
    m.free("B")
    assert blocks(w)[2]["data-state"] == "free" and "B" not in entries(w)
    m.swap_out("A")
    cpu = blocks(w, "cpu")
    assert [cpu[b]["data-state"] for b in range(4)] == ["used", "used", "free", "free"]
    assert [cpu[b]["data-owner"] for b in range(2)] == ["A", "A"]
    assert entries(w)["A"] == [("cpu", 0, 16), ("cpu", 1, 4)]
    assert shapes(w.to_svg(), "swapped")[0]["data-seq"] == "A"
    assert all(b["data-state"] == "free" for b in blocks(w).values())
    m.swap_in("A")
    assert all(b["data-state"] == "free" for b in blocks(w, "cpu").values())
    assert_matches_manager(w)


def test_cached_free_blocks_are_distinct_from_free_ones():
    m = BlockManager(num_blocks=4, block_size=4, enable_prefix_caching=True)
    w = BlockTableWidget(m)
    m.add("A", range(10))     # two full blocks (cacheable) and a partial one
    m.free("A")
    states = [blocks(w)[b]["data-state"] for b in range(4)]
    assert states.count("cached") == 2 and states.count("free") == 2
    m.add("B", range(9))      # the same prefix and one more token: both cached blocks come back
    assert [e["data-kind"] for e in shapes(w.to_svg(), "event")][:2] == ["allocate", "cache_hit"]   # newest first
    assert_matches_manager(w)


def test_buttons_drive_the_manager():
    m = BlockManager(num_blocks=4, block_size=4)
    w = BlockTableWidget(m)
    assert w.swap_out_button is None and w.swap_in_button is None   # no CPU pool, no swap buttons
    w.tokens.value = 5
    w.add_button.click()
    assert m.seq_ids == ["A"] and m.table("A").num_tokens == 5 and w.sequence.value == "A"
    w.append_button.click()
    assert m.table("A").num_tokens == 6
    w.fork_button.click()
    assert m.seq_ids == ["A", "B"] and m.table("B").block_ids == m.table("A").block_ids
    assert [o[1] for o in w.sequence.options] == ["A", "B"]
    w.sequence.value = "B"
    w.free_button.click()
    assert m.seq_ids == ["A"] and w.sequence.value == "A"
    assert_matches_manager(w)


def test_a_failing_button_reports_and_changes_nothing():
    m = BlockManager(num_blocks=2, block_size=4)
    w = BlockTableWidget(m)
    w.tokens.value = 8
    w.add_button.click()
    before = w.to_svg()
    w.add_button.click()          # needs 2 blocks, none free
    assert "failed" in w.status.value and "need 2 free blocks" in w.status.value
    assert m.seq_ids == ["A"] and w.to_svg() == before
    w.free_button.click()
    w.append_button.click()       # nothing to append to
    assert "no sequence" in w.status.value


def test_swap_buttons_with_a_cpu_pool():
    m = BlockManager(num_blocks=4, block_size=4, num_cpu_blocks=4)
    w = BlockTableWidget(m)
    w.add_button.click()
    w.swap_out_button.click()
    assert m.is_swapped("A")
    w.swap_in_button.click()
    assert not m.is_swapped("A")


def test_static_views_and_unsubscribe(source_scenario):
    m, w = source_scenario
    bundle = w._repr_mimebundle_()
    assert bundle["text/html"].startswith('<img class="pagedlab-live-view"')  # an image of static_svg (tests/widgets/test_live_view.py)
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == w.box.model_id
    w.close()
    frozen = w.picture.value
    m.append("A", 1)
    assert w.picture.value == frozen


def test_large_pools_are_cut_with_a_note():
    m = BlockManager(num_blocks=1000, block_size=16)
    w = BlockTableWidget(m, max_blocks=64)
    svg = w.to_svg()
    assert len(shapes(svg, "block")) == 64
    assert "936 more blocks" in shapes(svg, "hidden-blocks")[0]["text"]


def test_bad_arguments():
    with pytest.raises(TypeError, match="BlockManager"):
        BlockTableWidget(object())
    with pytest.raises(ValueError, match="max_history"):
        BlockTableWidget(BlockManager(2, 2), max_history=0)
    with pytest.raises(ValueError, match="speed"):
        BlockTableWidget(BlockManager(2, 2), speed=0)


def test_every_event_kind_has_a_description():
    m = BlockManager(num_blocks=8, block_size=2, num_cpu_blocks=4, enable_prefix_caching=True)
    m.add("A", [1, 2, 3])
    m.fork("A", "B")
    m.append("B", 9)
    m.free("A")
    m.free("B")
    m.add("C", [1, 2])
    for i in range(6):
        m.add(f"D{i}", [50 + i])
    m.swap_out("C")
    m.free("D0")
    m.swap_in("C")
    small = BlockManager(num_blocks=2, block_size=2, enable_prefix_caching=True)
    small.add("X", [1, 2])
    small.free("X")            # X's full block stays cached-free...
    small.add("Y", [5, 6, 7])  # ... until Y needs both blocks: evict
    events = list(m.events) + list(small.events)
    assert {e.kind for e in events} == {"allocate", "append", "free", "fork", "copy_on_write", "cache_hit", "evict",
                                        "swap_out", "swap_in"}
    for e in events:
        text = describe_event(e)
        assert str(e.seq_id) in text and text != f"{e.kind} {e.seq_id}", text   # not the generic fallback


# --- history, highlights, eviction ranks and the static view ------------------------------------------------

def frame_tables(w: BlockTableWidget) -> dict[str, list[int]]:
    return {s: [b for _, b, _ in v] for s, v in entries(w).items()}


def test_the_slider_steps_back_and_forth_through_every_event(source_scenario):
    m, w = source_scenario
    for i in range(13):
        m.append("A", 20 + i)
    m.free("B")
    n = len(m.events)
    assert len(w.frames) == n + 1 and w.step_slider.max == n and w.step_slider.value == n
    w.show_step(0)                                        # before any event: nothing allocated
    assert frame_tables(w) == {} and all(b["data-state"] == "free" for b in blocks(w).values())
    assert shapes(w.picture.value, "current-event")[0]["data-frame"] == "0"
    w.show_step(2)                                        # after "allocate B"
    assert frame_tables(w) == {"A": [0, 1], "B": [2]}
    assert [e["data-kind"] for e in shapes(w.to_svg(), "event")] == ["allocate", "allocate"]
    w.step_slider.value = n - 1                           # just before B is freed: A has its third block
    assert frame_tables(w) == {"A": [0, 1, 3], "B": [2]}
    assert w.picture.value == w.to_svg()                  # moving the slider redrew the live picture
    w.show_step(n)
    assert frame_tables(w) == {"A": [0, 1, 3]}
    assert_matches_manager(w)


def test_new_events_follow_only_when_the_slider_is_at_the_end(source_scenario):
    m, w = source_scenario
    w.show_step(1)
    m.append("A", 1)
    assert w.step_slider.value == 1 and w.step_slider.max == len(w.frames) - 1
    w.show_step(w.step_slider.max)
    m.append("A", 2)
    assert w.step_slider.value == w.step_slider.max == len(m.events)


def test_play_drives_the_slider_and_speed_sets_its_interval(source_scenario):
    m, w = source_scenario
    w.play.value = 1                                      # what the frontend does on each tick
    assert w.step_slider.value == 1 and frame_tables(w) == {"A": [0, 1]}
    w.speed_slider.value = 10
    assert w.play.interval == 100
    assert (w.play.min, w.play.max) == (w.step_slider.min, w.step_slider.max)
    w.show_step(w.step_slider.max)
    playing = "playing" if w.play.has_trait("playing") else "_playing"   # ipywidgets 8 / 7
    setattr(w.play, playing, True)                        # play pressed on the last frame: replay from the first
    assert w.step_slider.value == 0 and frame_tables(w) == {}


def test_copy_on_write_is_highlighted_with_an_arrow_from_the_shared_block_to_its_copy(source_scenario):
    m, w = source_scenario
    m.fork("B", "C")
    m.append("C", 7)
    cow = next(f.index for f in w.frames if f.event is not None and f.event.kind == "copy_on_write")
    w.show_step(cow)
    svg = w.to_svg()
    assert shapes(svg, "current-event")[0]["data-kind"] == "copy_on_write"
    hot = sorted(int(b["data-block"]) for b in shapes(svg, "block") if b.get("data-highlight") == "1")
    assert hot == [2, 3]
    [arrow] = shapes(svg, "arrow")
    assert (arrow["data-src"], arrow["data-dst"], arrow["data-kind"]) == ("2", "3", "copy_on_write")
    cells = {int(b["data-block"]): b for b in shapes(svg, "block") if b["data-pool"] == "gpu"}
    # The arrow leaves the bottom edge of block 2's cell and its head points into block 3's.
    heads = shapes(svg, "arrow-head")
    assert len(heads) == 2 and {h["data-dst"] for h in heads} == {"3"}
    for (x, y), b in (((arrow["x1"], arrow["y1"]), 2), ((heads[0]["x1"], heads[0]["y1"]), 3)):
        cell = cells[b]
        assert float(cell["x"]) < float(x) < float(cell["x"]) + float(cell["width"])
        assert float(y) == float(cell["y"]) + float(cell["height"])
    w.show_step(cow - 1)                                  # the fork before it: no arrow, the shared block lit
    assert shapes(w.to_svg(), "arrow") == []


def test_swap_draws_arrows_between_the_pools(source_scenario):
    m, w = source_scenario
    pairs = m.swap_out("A")
    arrows = shapes(w.to_svg(), "arrow")
    assert [(int(a["data-src"]), int(a["data-dst"])) for a in arrows] == [tuple(p) for p in pairs]
    assert {(a["data-src-pool"], a["data-dst-pool"]) for a in arrows} == {("gpu", "cpu")}
    lit = {(b["data-pool"], int(b["data-block"])) for b in shapes(w.to_svg(), "block") if b.get("data-highlight")}
    assert lit == {("gpu", a) for a, _ in pairs} | {("cpu", c) for _, c in pairs}


def test_cached_free_blocks_show_their_eviction_rank_and_rank_1_is_evicted_next():
    m = BlockManager(num_blocks=6, block_size=2, enable_prefix_caching=True)
    w = BlockTableWidget(m)
    m.add("A", [1, 2, 3, 4, 5])    # full blocks [1, 2] and [3, 4] are cacheable
    m.add("B", [9, 9, 8])
    m.free("A")
    m.free("B")
    ranks = {int(r["data-block"]): int(r["data-rank"]) for r in shapes(w.to_svg(), "eviction-rank")}
    parked = m.prefix_cache.parked()
    assert sorted(ranks.values()) == list(range(1, len(parked) + 1))
    assert [b for b, _ in sorted(ranks.items(), key=lambda kv: kv[1])] == parked
    assert all(blocks(w)[b]["data-state"] == "cached" for b in ranks)
    first = min(ranks, key=ranks.get)
    m.add("C", list(range(100, 100 + 2 * (m.allocator.num_free + 1))))   # one block more than the free list
    evicted = [b for e in m.events if e.kind == "evict" for b in e.blocks]
    assert evicted == [first]


def test_the_header_explains_unused_slots():
    m = BlockManager(num_blocks=4, block_size=16)
    w = BlockTableWidget(m)
    m.add("A", range(17))          # 2 blocks, 15 slots unused: 47% of the blocks in use
    title = shapes(w.to_svg(), "title")[0]["text"]
    assert "15 unused slots (47% of used blocks)" in title
    note = shapes(w.to_svg(), "unused-note")[0]["text"]
    assert "at most 15 per sequence" in note and "4%" in note


def test_static_svg_shows_the_final_state_and_a_strip_of_key_frames(source_scenario):
    m, w = source_scenario
    for i in range(13):
        m.append("A", 20 + i)
    m.fork("B", "C")
    m.append("C", 7)
    w.show_step(0)                                        # the static view does not depend on the slider
    svg = w.static_svg()
    root = ET.fromstring(svg)
    assert root.get("data-role") == "static"
    main = {int(b["data-block"]): b["data-state"] for b in shapes(svg, "block") if b["data-pool"] == "gpu"}
    assert main == {b: st.state for b, st in enumerate(w.frames[-1].gpu)}
    assert main == {0: "used", 1: "used", 2: "used", 3: "used", 4: "used", 5: "free"}
    keys = shapes(svg, "key-frame")
    kinds = [k["data-kind"] for k in keys]
    # Every event but the appends: A, B, A's third block, the fork, the copy (the copy's block comes with it).
    assert kinds == ["allocate", "allocate", "allocate", "fork", "copy_on_write"]
    cow = next(k for k in keys if k["data-kind"] == "copy_on_write")
    lit = [b for b in shapes(svg, "mini-block") if b["data-frame"] == cow["data-frame"] and b.get("data-highlight")]
    assert sorted((b["data-pool"], int(b["data-block"])) for b in lit) == [("gpu", 2), ("gpu", 4)]
    assert len(w.key_frames(limit=2)) == 2


def test_static_svg_without_key_events_is_the_picture():
    w = BlockTableWidget(BlockManager(4, 4))
    assert w.static_svg() == w.to_svg()


def test_history_is_capped_and_the_slider_follows_the_cap():
    m = BlockManager(num_blocks=4, block_size=4)
    w = BlockTableWidget(m, max_history=5)
    m.add("A", [1])
    for t in range(8):
        m.append("A", t)
    assert len(w.frames) == 5 and w.frames[0].index == len(m.events) - 4
    assert (w.step_slider.min, w.step_slider.max) == (w.frames[0].index, w.frames[-1].index)
    w.show_step(0)                                        # clamps to the oldest frame kept
    assert w.current is w.frames[0]
