"""The event log's one rule for a subscriber that raises, on its own and through the block manager."""

from __future__ import annotations

import pytest

from pagedlab.paged import BlockEvent, BlockManager
from pagedlab.paged.events import EventLog, notify


def test_a_raising_subscriber_stops_no_one_and_the_first_error_propagates():
    seen = []

    def first(e):
        seen.append(("first", e))
        raise KeyError(e)

    def second(e):
        seen.append(("second", e))
        raise ValueError(e)

    with pytest.raises(KeyError) as info:
        notify([first, second, lambda e: seen.append(("third", e))], [1, 2])
    assert info.value.args == (1,), "the first exception raised is the one that propagates"
    assert seen == [("first", 1), ("second", 1), ("third", 1), ("first", 2), ("second", 2), ("third", 2)]


def test_the_log_keeps_the_last_events_and_counts_them_all():
    log = EventLog(maxlen=2)
    seen = []
    unsubscribe = log.subscribe(seen.append)
    log.emit([1, 2, 3])
    assert list(log.events) == [2, 3] and log.num_emitted == 3 and seen == [1, 2, 3]
    unsubscribe()
    unsubscribe()                                  # twice is harmless
    log.emit([4])
    assert seen == [1, 2, 3] and list(log.events) == [3, 4]
    with pytest.raises(TypeError, match="callable"):
        log.subscribe(42)


def test_a_subscriber_may_unsubscribe_while_it_is_told():
    log = EventLog()
    seen = []
    unsubscribe = log.subscribe(lambda e: (seen.append(e), unsubscribe()))
    log.emit(["a", "b"])
    assert seen == ["a", "b"], "the subscribers of an emit are fixed when it starts"
    log.emit(["c"])
    assert seen == ["a", "b"]


def test_the_manager_logs_and_tells_everyone_before_a_subscriber_error_propagates():
    m = BlockManager(4, 2)
    seen = []

    def broken(e):
        raise RuntimeError("a broken widget")

    m.subscribe(broken)
    m.subscribe(lambda e: seen.append(e.kind))
    with pytest.raises(RuntimeError, match="broken widget"):
        m.add("a", [1, 2, 3])
    assert "a" in m and m.table("a").num_tokens == 3, "the operation happened"
    assert seen == ["allocate"] and [e.kind for e in m.events] == ["allocate"]
    assert m.events[-1].step == 0


def test_every_kind_of_event_is_a_record_with_its_fields_named():
    """The manager's events were positional tuples unpacked into BlockEvent(*fields): a field out of place would
    have shifted every later one silently. Each kind's fields are checked here against what the operation did."""
    manager = BlockManager(4, 2, num_cpu_blocks=4, enable_prefix_caching=True, watermark=0.0)
    manager.add("a", [1, 2, 3])
    manager.fork("a", "b")
    copy = manager.append("b", 5).copy                # b's last block is shared with a: copy-on-write
    slot = manager.append("a", 4).slot
    pairs = manager.swap_out(["a", "b"])
    manager.swap_in(["a", "b"])
    manager.free("b")
    events = list(manager.events)
    assert all(type(e) is BlockEvent for e in events) and [e.step for e in events] == list(range(len(events)))
    by_kind = {}
    for e in events:
        by_kind.setdefault(e.kind, []).append(e)
    append = by_kind["append"][1]
    assert (append.seq_id, append.slot, append.parent, append.pairs) == ("a", slot, None, ())
    fork = by_kind["fork"][0]
    assert (fork.seq_id, fork.parent, fork.slot) == ("b", "a", None)
    cow = by_kind["copy_on_write"][0]
    assert (cow.seq_id, cow.pairs, cow.blocks) == ("b", (copy,), copy)
    assert sorted({p for e in by_kind["swap_out"] for p in e.pairs}) == sorted(pairs) and pairs
    assert [e.seq_id for e in by_kind["swap_in"]] == ["a", "b"]
    free = by_kind["free"][0]
    assert (free.seq_id, free.device, free.parent, free.slot) == ("b", "gpu", None, None)
    with pytest.raises(ValueError, match="kind"):
        BlockEvent("apend", "a")
