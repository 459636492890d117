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
    """The source article's pool: 6 blocks of 16 tokens; requests of 20 and 10 tokens."""
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
    assert w._repr_html_().startswith("<svg")
    bundle = w._repr_mimebundle_()
    assert bundle["text/html"] == w.to_svg()
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
    with pytest.raises(ValueError, match="delay"):
        BlockTableWidget(BlockManager(2, 2), delay=-1)


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
