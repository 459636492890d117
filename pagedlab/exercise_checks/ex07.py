"""Exercise 7's checks: fork shares blocks, append copies a shared block once, running out changes nothing.

The input space the instructions state, which the differential check (:func:`check_over_the_space`) draws from, its
boundaries always included: ``MiniManager(num_blocks, block_size)`` with pools of 1 to 12 blocks and blocks of 1, 2,
3, 4 and 16 tokens; sequences added with 0 tokens (no block) up to what the free blocks hold (an exact fit of whole
blocks included); ``fork`` of a parent with no block, at a block boundary (its last block full) or inside a block,
forks of forks (a block shared by three sequences or more) and of a sequence that has already copied; ``append`` to
an empty sequence, at a block boundary, inside a private block, inside a block shared by two or more; zero room: no
free block when the append needs one (at a boundary, or for a copy: ``OutOfBlocks``, nothing changed) and when it
needs none (a write in place must still succeed); ``free``. The reference is the instructions' ``fork`` and
``append`` over the same ``BlockAllocator`` (:class:`_Reference`), so the block ids must agree too.
"""

from __future__ import annotations

import random
import traceback

import torch

from ..paged import BlockAllocator, BlockTable, KVCache, OutOfBlocks
from ..validate import blocks_for

ORDER = ("table.slot(position) only accepts positions < table.num_tokens and reads block_ids[position // block_size]: "
         "the token's block must be in the table and table.num_tokens = position + 1 BEFORE table.slot(position).")


def _in_slot(exc: BaseException) -> bool:
    return any(frame.name == "slot" for frame in traceback.extract_tb(exc.__traceback__))


def order_hint(exc: BaseException) -> str:
    """The hint for an error raised by ``BlockTable.slot`` called too early."""
    return ORDER if _in_slot(exc) else ""


def boundary_hint(exc: BaseException) -> str:
    """Check 3's hint: at a block boundary the token goes into a new block, shared or not."""
    if _in_slot(exc) or isinstance(exc, OutOfBlocks):
        return ("at a block boundary the token goes into a NEW block, whether or not the last one is shared: the "
                "boundary comes first. " + (ORDER if _in_slot(exc) else ""))
    return ""


def random_hint(exc: BaseException) -> str:
    """Check 6's hint, for an error in the random operations."""
    if isinstance(exc, OutOfBlocks):
        return ("OutOfBlocks here means an append took more than one block (it runs only when a block is free): an "
                "append needs at most one new block, a new one at a boundary OR a copy of a shared, partly filled "
                "block, never both.")
    return order_hint(exc)


def _forked(MiniManager, num_blocks: int, parent_tokens: int):
    """A ``MiniManager`` with ``num_blocks`` blocks of 4: "parent" holds ``parent_tokens`` tokens, "child" is its fork."""
    m = MiniManager(num_blocks=num_blocks, block_size=4)
    m.add("parent", parent_tokens)
    m.fork("parent", "child")
    return m


def check_fork_shares(MiniManager) -> None:
    """Check 1: fork shares, it does not copy."""
    __tracebackhide__ = True
    m = MiniManager(num_blocks=8, block_size=4)
    m.add("parent", 6)
    free_before = m.allocator.num_free
    child = m.fork("parent", "child")
    parent_blocks = m.tables["parent"].block_ids
    assert isinstance(child, BlockTable) and child.block_ids == parent_blocks and child.num_tokens == 6, (
        f"the child should list the parent's blocks {parent_blocks} with its 6 tokens, got {child}")
    assert m.allocator.num_free == free_before, (
        f"fork allocated {free_before - m.allocator.num_free} block(s); it should share the parent's, not copy them")
    counts = [m.allocator.refcount(b) for b in parent_blocks]
    assert counts == [2, 2], (
        f"after the fork every shared block should have 2 owners, got ref counts {counts}. Hint: each shared "
        f"block gains an owner; without it, freeing the parent would put blocks the child still reads back on the free list.")
    assert child.block_ids is not m.tables["parent"].block_ids, (
        "the child's block_ids is the parent's list object itself, so changing one table changes the other. "
        "Hint: the child gets a new list holding the same block ids.")


def check_new_block_at_boundary(MiniManager) -> None:
    """Check 2: a new block exactly at each block boundary."""
    __tracebackhide__ = True
    m = MiniManager(num_blocks=8, block_size=4)
    m.add("s", 0)
    owned = m.tables["s"]
    for n in range(1, 13):
        slot, copy = m.append("s")
        table = m.tables["s"]
        assert table is owned, (
            f"appending token {n - 1} replaced the sequence's BlockTable with a new object: append changes "
            f"table.block_ids and table.num_tokens in place (the instructions' \"who owns the table\"): whoever "
            f"holds the table (the KVCache, a widget) reads it again after each append, and a replaced one still "
            f"says {owned.num_tokens} token(s).")
        assert len(table.block_ids) == blocks_for(n, 4), (
            f"after appending token {n - 1} (so {n} tokens), the sequence should hold {blocks_for(n, 4)} block(s) of 4, "
            f"holds {len(table.block_ids)}. Hint: a new block is needed when the token's position is a multiple of "
            f"block_size, i.e. when the last block is full, not one token earlier or later.")
        assert table.num_tokens == n, f"after {n} appends num_tokens should be {n}, got {table.num_tokens}"
        assert slot == table.slot(n - 1) and copy is None, (
            f"token {n - 1}: expected slot {table.slot(n - 1)} and no copy (nothing is shared), "
            f"got {(slot, copy)}. Hint: copy only when the last block is shared (refcount > 1); a block with one "
            f"owner is written in place.")


def check_fork_at_full_block(MiniManager) -> None:
    """Check 3: fork at a full block, then append."""
    __tracebackhide__ = True
    m = _forked(MiniManager, num_blocks=8, parent_tokens=8)
    shared = list(m.tables["parent"].block_ids)
    slot, copy = m.append("child")
    child = m.tables["child"]
    assert copy is None, (
        f"appending token 8 to the child returned copy {copy}: block {copy[0]} is full and the child's token 8 goes "
        f"into a new block, so nothing is written into it and it stays shared. Hint: the block boundary comes "
        f"first: only a token that lands inside a shared block needs a copy.")
    assert child.block_ids[:2] == shared and len(child.block_ids) == 3, (
        f"the child should keep the shared blocks {shared} and add one new block, got {child.block_ids}. Hint: at a "
        f"boundary append a new block; leave the full shared ones alone.")
    assert [m.allocator.refcount(b) for b in shared] == [2, 2], (
        f"the full shared blocks {shared} should still have 2 owners, got ref counts "
        f"{[m.allocator.refcount(b) for b in shared]}.")
    assert slot == child.block_ids[2] * 4 and child.num_tokens == 9, (
        f"token 8 goes to offset 0 of the new block {child.block_ids[2]}: slot {child.block_ids[2] * 4} with 9 tokens, "
        f"got slot {slot} with {child.num_tokens} tokens")


def check_copy_on_write_once(MiniManager) -> None:
    """Check 4: copy-on-write, once."""
    __tracebackhide__ = True
    m = _forked(MiniManager, num_blocks=8, parent_tokens=6)
    shared, held = m.tables["parent"].block_ids[-1], m.tables["child"]
    slot, copy = m.append("child")
    assert m.tables["child"] is held, (
        "the child's copy-on-write replaced its BlockTable with a new object: append changes table.block_ids and "
        "table.num_tokens in place (the instructions' \"who owns the table\"), the new block in the shared one's "
        "place (block_ids[-1] = new).")
    assert copy is not None, (
        f"the child appended into block {shared}, which the parent shares (ref count 2), without a copy: its token "
        f"would land in the parent's block. Hint: when the last block's refcount is > 1, allocate a new one and "
        f"return (shared, new).")
    src, dst = copy
    assert src == shared and dst != shared, (
        f"copy should be (src, dst) = ({shared}, <a new block>): copy FROM the shared block INTO the new one; "
        f"got {copy}")
    child_ids, parent_ids = m.tables["child"].block_ids, m.tables["parent"].block_ids
    want_child = parent_ids[:-1] + [dst]
    assert child_ids[-1] == dst and parent_ids[-1] == shared, (
        f"after the copy the child's last block should be {dst} and the parent's still {shared}; "
        f"got child {child_ids}, parent {parent_ids}")
    assert child_ids == want_child, (
        f"after the copy the child's table should be {want_child}: the new block {dst} in the PLACE of the shared "
        f"block {shared}, got {child_ids}"
        + (f". Hint: the new block was added after the shared one (block_ids.append); replace the last entry "
           f"instead (block_ids[-1] = new): token 6 still maps to block_ids[6 // 4] = {shared}."
           if child_ids == parent_ids + [dst] else ""))
    assert slot == dst * 4 + 2, f"token 6 of the child goes to offset 2 of its new block {dst}: slot {dst * 4 + 2}, got {slot}"
    assert (m.allocator.refcount(shared), m.allocator.refcount(dst)) == (1, 1), (
        f"after the copy, block {shared} belongs to the parent alone and {dst} to the child: ref counts (1, 1), got "
        f"({m.allocator.refcount(shared)}, {m.allocator.refcount(dst)}). Hint: the child must free its reference "
        f"to the shared block.")
    assert m.tables["parent"].num_tokens == 6, "appending to the child changed the parent's num_tokens"
    again = m.append("child")
    assert again[1] is None, f"the child's block {dst} is private now: its next append needs no copy, got copy {again[1]}"
    parent_slot, parent_copy = m.append("parent")
    assert parent_copy is None and parent_slot == shared * 4 + 2, (
        f"the parent is now the only owner of block {shared}: it writes in place (slot {shared * 4 + 2}, no copy), "
        f"got {(parent_slot, parent_copy)}")


def check_running_out(MiniManager) -> None:
    """Check 5: running out changes nothing, finishing returns every block."""
    __tracebackhide__ = True
    m = _forked(MiniManager, num_blocks=2, parent_tokens=6)   # both blocks
    before = ({s: (list(t.block_ids), t.num_tokens) for s, t in m.tables.items()}, [m.allocator.refcount(b) for b in range(2)])
    try:
        m.append("child")
    except OutOfBlocks:
        pass
    else:
        raise AssertionError("with no free block, copy-on-write cannot get a copy: append must raise OutOfBlocks")
    after = ({s: (list(t.block_ids), t.num_tokens) for s, t in m.tables.items()}, [m.allocator.refcount(b) for b in range(2)])
    if after[0]["child"][1] != before[0]["child"][1]:
        hint = ("the child's num_tokens changed although no slot was reserved: change the table only once the "
                "allocation has succeeded.")
    else:
        hint = ("allocate the new block first; drop the reference to the shared block only once the allocation has "
                "succeeded.")
    assert after == before, f"the failed append changed the manager: {before} -> {after}. Hint: {hint}"
    m = MiniManager(num_blocks=8, block_size=4)
    m.add("a", 5)
    m.fork("a", "b")
    m.append("b")
    m.append("a")
    m.fork("b", "c")
    m.append("c")
    for s in ["a", "b", "c"]:
        m.free(s)
    assert m.allocator.num_free == 8, (
        f"after freeing every sequence only {m.allocator.num_free} of 8 blocks are free: blocks leaked. Hint: a "
        f"copy-on-write must drop the sequence's reference to the shared block it stops using.")


def check_kv_survive(MiniManager) -> None:
    """Check 6: the K/V survive."""
    __tracebackhide__ = True
    rng = random.Random(0)
    m = MiniManager(num_blocks=32, block_size=4)
    kv = KVCache(num_layers=1, num_blocks=32, block_size=4, kv_heads=1, head_dim=4, dtype=torch.float32, device="cpu")
    expected = {}
    for step in range(400):
        op, live = rng.choice(["add", "fork", "append", "append", "append", "free"]), sorted(expected)
        if op == "add" and m.allocator.num_free >= 4:
            n = rng.randint(1, 10)
            k = torch.randn(n, 1, 4)
            kv.write(0, m.add(f"s{step}", n).slot_mapping(), k, k)
            expected[f"s{step}"] = k
        elif op == "fork" and live:
            parent = rng.choice(live)
            m.fork(parent, f"s{step}")
            expected[f"s{step}"] = expected[parent]
        elif op == "append" and live and m.allocator.num_free:
            seq = rng.choice(live)
            slot, copy = m.append(seq)
            if copy is not None:
                kv.copy_blocks([copy])
            k = torch.randn(1, 1, 4)
            kv.write(0, [slot], k, k)
            expected[seq] = torch.cat([expected[seq], k])
        elif op == "free" and live:
            seq = rng.choice(live)
            m.free(seq)
            del expected[seq]
        for seq, k in expected.items():
            got = kv.gather(0, m.tables[seq])[0]
            bad = (got != k).any(dim=(1, 2)).nonzero().flatten().tolist()
            assert not bad, (
                f"step {step} ({op}): sequence {seq} reads wrong K/V at positions {bad[:8]} (table {m.tables[seq]}). "
                f"Another sequence wrote into a block it shares, or a block it still uses was handed out again.")


class _Reference:
    """The instructions' ``MiniManager``: ``add`` and ``free`` as given, ``fork`` and ``append`` as described."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.allocator = BlockAllocator(num_blocks)
        self.block_size = block_size
        self.tables: dict[str, BlockTable] = {}

    def add(self, seq: str, num_tokens: int) -> BlockTable:
        blocks = self.allocator.allocate_many(-(-num_tokens // self.block_size))
        self.tables[seq] = BlockTable(blocks, num_tokens, self.block_size)
        return self.tables[seq]

    def free(self, seq: str) -> None:
        for block in self.tables.pop(seq).block_ids:
            self.allocator.free(block)

    def fork(self, parent: str, child: str) -> BlockTable:
        table = self.tables[parent]
        for block in table.block_ids:
            self.allocator.incref(block)
        self.tables[child] = BlockTable(list(table.block_ids), table.num_tokens, self.block_size)
        return self.tables[child]

    def append(self, seq: str) -> tuple[int, tuple[int, int] | None]:
        table, copy = self.tables[seq], None
        position = table.num_tokens
        if position % self.block_size == 0:                          # a boundary: a new block
            table.block_ids.append(self.allocator.allocate())
        elif self.allocator.refcount(table.block_ids[-1]) > 1:       # inside a shared block: copy-on-write
            new = self.allocator.allocate()
            shared = table.block_ids[-1]
            self.allocator.free(shared)
            table.block_ids[-1] = new
            copy = (shared, new)
        table.num_tokens = position + 1
        return table.slot(position), copy


def _state(m, num_blocks: int) -> tuple[dict, list[int]]:
    """Every table as (block ids, num_tokens), and every block's reference count."""
    tables = {seq: (list(t.block_ids), t.num_tokens) for seq, t in sorted(m.tables.items())}
    return tables, [m.allocator.refcount(b) for b in range(num_blocks)]


def _where_append(ref: _Reference, seq: str) -> str:
    """Where ``seq``'s next token lands, in the reference, before the append: the case of the instructions it is."""
    table = ref.tables[seq]
    if table.num_tokens % ref.block_size == 0:
        where = "at a block boundary" if table.block_ids else "of an empty sequence"
    else:
        count = ref.allocator.refcount(table.block_ids[-1])
        where = f"inside a block shared by {count}" if count > 1 else "inside a private block"
    return f"{where}, {ref.allocator.num_free} free block(s)"


def _append_hint(want, got, block_size: int) -> str:
    if block_size != 4:
        return (f"blocks hold {block_size} token(s) here, and your manager agreed on every pool of blocks of 4: every "
                f"boundary and offset comes from self.block_size (and the child's BlockTable is made with it), never "
                f"from a number such as 4.")
    if want[0] == "raised":
        return ("no block is free and this append needs one: allocate() raises OutOfBlocks; let it through, before "
                "anything changes.")
    if got[0] == "raised":
        return ("this append needs no new block (a write in place): only a token at a boundary or inside a shared "
                "block takes one.")
    (want_slot, want_copy), got_value = want[1], got[1]
    if not (isinstance(got_value, tuple) and len(got_value) == 2):
        return "append returns (slot, copy)."
    if want_copy is None and got_value[1] is not None:
        return "copy only when the token lands inside a block that another sequence also holds (refcount > 1)."
    if want_copy is not None and got_value[1] is None:
        return ("the last block is shared by more than one sequence: copy-on-write whatever the number of owners "
                "(refcount > 1, not == 2).")
    return "a new block at a boundary, a copy inside a shared block, else in place; then num_tokens, then slot."


def check_over_the_space(MiniManager) -> None:
    """Check 7: your manager and the instructions' side by side on operations drawn from the whole stated space (the
    module docstring), running out included: the first operation where the two differ is named, with what each
    returned or raised and the tables and reference counts before it."""
    __tracebackhide__ = True
    rng = random.Random(7)
    # the pools of blocks of 4 (the size of the checks above) first: a difference after them is the block size's
    for num_blocks, block_size in [(1, 4), (6, 4), (12, 4), (2, 1), (3, 2), (5, 3), (8, 16), (12, 2)]:
        mine, ref = MiniManager(num_blocks=num_blocks, block_size=block_size), _Reference(num_blocks, block_size)
        log: list[str] = []
        for step in range(120):
            live = sorted(ref.tables)
            op = rng.choice(["add", "fork", "fork", "append", "append", "append", "append", "free"])
            if op == "add" or not live:
                room = ref.allocator.num_free * block_size
                n = rng.choice([0, room, max(room - 1, 0), rng.randint(0, room)])
                if len(live) > 5:
                    continue
                op, args = "add", (f"s{step}", n)
            elif op == "fork":
                if len(live) > 6:
                    continue
                op, args = "fork", (rng.choice(live), f"s{step}")
            else:                                       # append or free
                args = (rng.choice(live),)
            call = f"{op}({', '.join(map(repr, args))})"
            context = _where_append(ref, args[0]) if op == "append" else ""
            before = _state(ref, num_blocks)
            held = mine.tables.get(args[0]) if op == "append" else None  # the table object the caller holds
            outcome = []
            for m in (ref, mine):
                try:
                    result = getattr(m, op)(*args)
                    if isinstance(result, BlockTable):   # fork's table, compared by what it holds
                        result = (list(result.block_ids), result.num_tokens)
                    outcome.append(("returned", result if op in ("append", "fork") else None))
                except OutOfBlocks:
                    outcome.append(("raised", "OutOfBlocks"))
                except NotImplementedError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the learner's error is the difference to report
                    outcome.append(("raised", f"{type(exc).__name__}: {exc}"))
            want, got = outcome
            pool = f"{num_blocks} block{'s' * (num_blocks > 1)} of {block_size} token{'s' * (block_size > 1)}"
            where = (f"pool of {pool}, after {'; '.join(log[-4:]) or 'nothing'}: "
                     f"{call}{f' ({context})' if context else ''}, with tables {before[0]} and ref counts {before[1]}")
            if got != want:
                hint = (_append_hint(want, got, block_size) if op == "append" else
                        f"blocks hold {block_size} token(s) here: use self.block_size." if block_size != 4 else
                        "fork shares every block of the parent: one more reference each, a new list, the same tokens.")
                raise AssertionError(f"{where}: the instructions' manager {want[0]} {want[1]!r}, yours {got[0]} "
                                     f"{got[1]!r}. Hint: {hint}")
            if held is not None and mine.tables.get(args[0]) is not held:
                raise AssertionError(f"{where}: your append replaced {args[0]!r}'s BlockTable with a new object. Hint: "
                                     f"append changes table.block_ids and table.num_tokens in place (the "
                                     f"instructions' \"who owns the table\"): whoever holds the table reads it again.")
            after, got_after = _state(ref, num_blocks), _state(mine, num_blocks)
            if got_after != after:
                changed = [s for s in set(after[0]) | set(got_after[0]) if after[0].get(s) != got_after[0].get(s)]
                raise AssertionError(
                    f"{where}: afterwards your tables {dict((s, got_after[0].get(s)) for s in sorted(changed))} and "
                    f"ref counts {got_after[1]}, expected {dict((s, after[0].get(s)) for s in sorted(changed))} and "
                    f"{after[1]}. Hint: "
                    + ("the append raised OutOfBlocks, so nothing may change: allocate first, then change the table "
                       "(block_ids, num_tokens)." if want[0] == "raised" else
                       "a new block at a boundary, a copy inside a shared block (dropping this sequence's reference "
                       "to it), else in place; num_tokens grows by one."))
            log.append(call)
