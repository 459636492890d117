"""BlockManager: a hypothesis state machine against a simple model of what each sequence holds.

The state machine plays the engine: it writes a fake K/V "value" into every slot the manager hands out
(the value of token ``p`` is the tuple of tokens ``0..p``, since real K/V depend on the whole prefix),
performs the copy-on-write and swap copies the manager asks for, and after every step reads each
sequence back through its block table. A block freed too early, a missed copy, a wrong swap mapping or
a wrong prefix-cache hit all show up as a sequence that reads back the wrong values.

It also plays a scheduler that reserves slots before the model runs (``computed=False``): a step's growth
of a fork family can run out of blocks halfway and preempt the family before anything is written. The pool
starts poisoned (NaN in every slot, as unwritten GPU memory holds garbage), so a block that the prefix cache
offers before its K/V are computed (see ``mark_computed``) shows up as a hit that reads back NaN.
"""


from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from manager_checks import check_invariants, sharing, state

from pagedlab.paged import BlockManager, OutOfBlocks

NAN = float("nan")



# Rules pick sequences by index into the live ones (so most operations are valid), and now and then an
# id that is not live, to exercise the error paths.
PICK = st.integers(0, 63)
# A two-letter alphabet and short prompts make shared prefixes (cache hits) common.
PROMPTS = st.lists(st.integers(0, 1), min_size=0, max_size=8)
TOKENS = st.lists(st.integers(0, 1), min_size=1, max_size=6)


class ManagerMachine(RuleBasedStateMachine):
    """Random add/append/fork/free/swap sequences against a model of what each sequence holds.

    Swaps move single sequences and groups (random sets, and whole fork families); adds repeat live
    sequences' tokens, so that prompts whose every block is cached are common.
    """

    @initialize(num_blocks=st.integers(2, 16), block_size=st.integers(1, 4), num_cpu_blocks=st.integers(0, 12),
                prefix=st.sampled_from(["off", "on", "colliding"]))
    def create(self, num_blocks, block_size, num_cpu_blocks, prefix):
        self.m = BlockManager(num_blocks, block_size, num_cpu_blocks, enable_prefix_caching=prefix != "off")
        if prefix == "colliding":
            # Keys that ignore the prefix and collide often: only the collision check keeps hits correct.
            self.m.prefix_cache.hash_fn = lambda parent, tokens: sum(tokens) % 3
        self.tokens: dict[int, list[int]] = {}          # the model: each live sequence's tokens
        self.pool = {"gpu": [NAN] * (num_blocks * block_size), "cpu": [NAN] * (num_cpu_blocks * block_size)}
        self.computed: dict[int, int] = {}              # tokens of each sequence whose values are written
        self.history: list[list[int]] = []              # tokens of preempted sequences, for later prompts
        self.next_id = 0
        self.root: dict[int, int] = {}                  # each sequence's fork family (its first ancestor)
        self.swapped_groups: list[tuple[list[int], list[list[int]]]] = []   # (group, its CPU tables)

    def _pick(self, pick):
        """A live sequence id, or (one time in eight, or when none is live) one that is not live."""
        live = sorted(self.tokens)
        if not live or pick % 8 == 7:
            return self.next_id + 1000  # never used
        return live[pick % len(live)]

    def _new_id(self, pick):
        """Mostly a fresh id; one time in eight a live one (which add and fork must refuse)."""
        if self.tokens and pick % 8 == 7:
            return sorted(self.tokens)[pick % len(self.tokens)]
        self.next_id += 1
        return self.next_id

    # -- the engine's side: write values, perform copies --

    def _copy(self, src_pool, dst_pool, pairs):
        bs = self.m.block_size
        for src, dst in pairs:
            self.pool[dst_pool][dst * bs:(dst + 1) * bs] = self.pool[src_pool][src * bs:(src + 1) * bs]

    def _write(self, seq_id, positions):
        toks, t = self.tokens[seq_id], self.m.table(seq_id)
        for p in positions:
            self.pool["gpu"][t.slot(p)] = tuple(toks[:p + 1])
        self.computed[seq_id] = len(toks)

    def _run_model(self, seq_id):
        """Compute a sequence's reserved tokens (write them) and tell the manager."""
        if self.computed[seq_id] < len(self.tokens[seq_id]):
            self._write(seq_id, range(self.computed[seq_id], len(self.tokens[seq_id])))
            self._attempt(self.m.mark_computed, seq_id, len(self.tokens[seq_id]))

    def _attempt(self, op, *args, expect_failure=None):
        """Run an operation; if it raises, the manager must be exactly as before."""
        before = state(self.m)
        try:
            return op(*args)
        except (OutOfBlocks, ValueError, KeyError) as e:
            assert state(self.m) == before, f"{op.__name__}{args} raised {e!r} but changed the manager"
            if expect_failure is not None:
                assert isinstance(e, expect_failure), f"{op.__name__}{args}: expected {expect_failure}, got {e!r}"
            raise

    def _query(self, query, *args):
        """Ask the manager something; asking must change nothing."""
        before = state(self.m)
        try:
            return query(*args)
        finally:
            assert state(self.m) == before, f"{query.__name__}{args} changed the manager"

    def _group(self, picks, family, swapped=False):
        """A whole fork family of a live sequence; or distinct live sequences on the GPU (``swapped``: on the
        CPU); or, when a pick says so (one in eight), a list with a dead, repeated or misplaced id."""
        live = sorted(self.tokens)
        if family and live:
            root = self.root[live[(picks[0] if picks else 0) % len(live)]]
            return [s for s in live if self.root[s] == root]
        if any(p % 8 == 7 for p in picks):
            return [self._pick(p) if p % 8 == 7 else live[p % len(live)] if live else p for p in picks]
        where = [s for s in live if self.m.is_swapped(s) == swapped]
        return list(dict.fromkeys(where[p % len(where)] for p in picks)) if where else []

    def _valid(self, group, swapped):
        return bool(group) and len(set(group)) == len(group) and all(
            s in self.tokens and self.m.is_swapped(s) == swapped for s in group)

    # -- rules --

    @rule(pick=PICK, prompt=PROMPTS, computed=st.booleans())
    def add(self, pick, prompt, computed=True):
        seq_id = self._new_id(pick)
        fits = self.m.can_add(len(prompt))
        try:
            self._attempt(self.m.add, seq_id, prompt, computed)
        except ValueError:
            assert seq_id in self.tokens
            return
        except OutOfBlocks:
            assert not fits, "can_add said the prompt fits, but add ran out of blocks"
            return
        assert seq_id not in self.tokens
        self._admitted(seq_id, prompt, computed)

    @rule(pick=PICK, computed=st.booleans(), preempted=st.booleans())
    def add_again(self, pick, computed, preempted):
        """A new request whose prompt is a live sequence's tokens, or a preempted one's (a follow-up turn):
        every full block may be cached."""
        source = self._pick(pick)
        if preempted and self.history:
            prompt = list(self.history[pick % len(self.history)])
        elif source in self.tokens:
            prompt = list(self.tokens[source])
        else:
            return
        seq_id = self._new_id(0)
        try:
            self._attempt(self.m.add, seq_id, prompt, computed)
        except OutOfBlocks:
            return
        self._admitted(seq_id, prompt, computed)

    def _admitted(self, seq_id, prompt, computed=True):
        m, bs = self.m, self.m.block_size
        cached = m.num_cached_tokens(seq_id)
        if m.prefix_cache is not None and prompt:
            # Cache hits are whole blocks, and never the last token: it is computed for its logits.
            assert cached <= len(prompt) - 1 and cached % bs == 0
            table = m.table(seq_id)
            assert m.allocator.refcount(table.block_ids[-1]) == 1, (
                f"the last prompt token of {seq_id} would be written into shared block {table.block_ids[-1]}")
            if len(prompt) % bs == 0 and cached == len(prompt) - bs:
                event("full-prompt hit")
        else:
            assert cached == 0
        self.tokens[seq_id] = list(prompt)
        self.root[seq_id] = seq_id
        self.computed[seq_id] = cached
        if computed:
            self._write(seq_id, range(cached, len(prompt)))

    @rule(pick=PICK)
    def run_model(self, pick):
        """A prefill (or a step) computes every reserved token of a sequence."""
        seq_id = self._pick(pick)
        if seq_id in self.tokens and not self.m.is_swapped(seq_id):
            self._run_model(seq_id)

    @rule(pick=PICK, run=st.booleans(), swap=st.booleans())
    def grow_family(self, pick, run, swap):
        """A scheduler's decode step for a fork family: reserve one slot per member (``computed=False``),
        copying on write where a block is shared; a member that cannot grow preempts the whole family on the
        spot (freed for recomputation, or swapped out), leaving slots reserved and never computed. Else the
        model runs (``run``) and the manager is told."""
        live = [s for s in sorted(self.tokens) if not self.m.is_swapped(s)]
        if not live:
            return
        root = self.root[live[pick % len(live)]]
        family = [s for s in live if self.root[s] == root]
        if any(self.m.is_swapped(s) for s in self.tokens if self.root[s] == root):
            return
        for seq_id in family:
            self._run_model(seq_id)          # the previous step's tokens are computed
        for seq_id in family:
            self.next_id += 1
            try:
                result = self._attempt(self.m.append, seq_id, 1000 + self.next_id, False)
            except OutOfBlocks:
                event("preempted mid-growth")
                self.history += [list(self.tokens[s]) for s in family]
                if swap and self._query(self.m.can_swap_out, family):
                    self._swap_out(family)
                else:
                    self._free_group(family)
                return
            if result.copy is not None:
                self._copy("gpu", "gpu", [result.copy])
            self.tokens[seq_id].append(1000 + self.next_id)
        if run:
            for seq_id in family:
                self._run_model(seq_id)

    @rule(pick=PICK, tokens=TOKENS, fresh=st.booleans())
    def append(self, pick, tokens, fresh):
        seq_id = self._pick(pick)
        for token in tokens:
            if fresh:
                # Tokens no other sequence has: a write into a block another sequence still reads shows up.
                self.next_id += 1
                token = 1000 + self.next_id
            self._append(seq_id, token)

    def _append(self, seq_id, token):
        if seq_id in self.tokens and not self.m.is_swapped(seq_id):
            self._run_model(seq_id)          # computed=True promises every earlier token is written
        ok = seq_id in self.tokens and not self.m.is_swapped(seq_id) and self.m.can_append(seq_id)
        try:
            result = self._attempt(self.m.append, seq_id, token)
        except (OutOfBlocks, ValueError, KeyError):
            assert not ok
            return
        assert ok
        if result.copy is not None:
            self._copy("gpu", "gpu", [result.copy])
        self.tokens[seq_id].append(token)
        position = len(self.tokens[seq_id]) - 1
        assert result.slot == self.m.table(seq_id).slot(position)
        self._write(seq_id, [position])

    @rule(pick=PICK, child_pick=PICK)
    def fork(self, pick, child_pick):
        parent, child = self._pick(pick), self._new_id(child_pick)
        try:
            self._attempt(self.m.fork, parent, child)
        except (ValueError, KeyError):
            assert parent not in self.tokens or child in self.tokens or self.m.is_swapped(parent)
            return
        self.tokens[child] = list(self.tokens[parent])
        self.computed[child] = self.computed[parent]
        self.root[child] = self.root[parent]

    @rule(pick=PICK, n=st.integers(1, 3))
    def sample_in_parallel(self, pick, n):
        """Parallel sampling: fork ``n`` children, then every member of the group appends its own token."""
        parent = self._pick(pick)
        group = [parent]
        for _ in range(n):
            child = self._new_id(0)
            try:
                self._attempt(self.m.fork, parent, child)
            except (ValueError, KeyError):
                return
            self.tokens[child] = list(self.tokens[parent])
            self.computed[child] = self.computed[parent]
            self.root[child] = self.root[parent]
            group.append(child)
        for seq_id in group:
            self.next_id += 1
            self._append(seq_id, 1000 + self.next_id)

    @rule(pick=PICK)
    def free(self, pick):
        seq_id = self._pick(pick)
        self._free_group([seq_id])

    @rule(pick=PICK)
    def free_family(self, pick):
        """Preemption by recomputation of a whole fork family: it gives back num_freeable_blocks blocks."""
        self._free_group(self._group([pick], family=True))

    def _free_group(self, group):
        if not group:
            return
        freeable = self._query(self.m.num_freeable_blocks, group) if self._valid_ids(group) else None
        free = self.m.num_free_blocks
        for seq_id in group:
            try:
                self._attempt(self.m.free, seq_id, expect_failure=KeyError)
            except KeyError:
                assert seq_id not in self.tokens
                return
            del self.tokens[seq_id]
        assert self.m.num_free_blocks == free + freeable, "num_freeable_blocks broke its contract"

    def _valid_ids(self, group):
        return bool(group) and len(set(group)) == len(group) and all(s in self.tokens for s in group)

    @rule(pick=PICK)
    def swap_out(self, pick):
        self._swap_out(self._pick(pick))

    @rule(picks=st.lists(PICK, min_size=1, max_size=4), family=st.booleans())
    def swap_out_group(self, picks, family):
        self._swap_out(self._group(picks, family))

    @rule(pick=PICK, n=st.integers(1, 3), other=PROMPTS, back=st.booleans())
    def fork_then_preempt_the_family(self, pick, n, other, back):
        """The review's case: parallel samples that still share everything are preempted together (then,
        maybe, another request runs and the family comes back)."""
        parent = self._pick(pick)
        if parent not in self.tokens or self.m.is_swapped(parent):
            parent = self.next_id + 1
            self.add(0, other)                  # a new request to sample from
            if parent not in self.tokens:
                return
        for _ in range(n):
            child = self._new_id(0)
            self._attempt(self.m.fork, parent, child)
            self.tokens[child] = list(self.tokens[parent])
            self.computed[child] = self.computed[parent]
            self.root[child] = self.root[parent]
        family = [s for s in self._group([sorted(self.tokens).index(parent)], family=True) if not self.m.is_swapped(s)]
        self._swap_out(family)
        if back:
            self.free(pick)                     # its cached blocks (if any) are more recently used than the family's
            self.add(0, other)
            self._swap_in(family)

    def _swap_out(self, seq_ids):
        group = seq_ids if isinstance(seq_ids, list) else [seq_ids]
        valid = self._valid(group, swapped=False)
        if valid:
            freeable = self._query(self.m.num_freeable_blocks, seq_ids)
            fits = self._query(self.m.can_swap_out, seq_ids)
            before = sharing(self.m, group)
        free = self.m.num_free_blocks
        try:
            pairs = self._attempt(self.m.swap_out, seq_ids)
        except (OutOfBlocks, ValueError, KeyError):
            assert not valid or not fits, f"can_swap_out({seq_ids}) said yes, but swap_out failed"
            return
        assert valid and fits
        assert self.m.num_free_blocks == free + freeable, "num_freeable_blocks broke its contract"
        assert sharing(self.m, group) == before, "the CPU tables must share exactly as the GPU tables did"
        assert len(pairs) == len({b for s in group for b in self.m.table(s).block_ids}), "one copy per block"
        if len(group) > 1:
            event("group swap out" + (", sharing" if len(pairs) < sum(map(len, before)) else ""))
        self._copy("gpu", "cpu", pairs)
        self.swapped_groups.append((group, [list(self.m.table(s).block_ids) for s in group]))

    @rule(pick=PICK)
    def swap_in(self, pick):
        self._swap_in(self._pick(pick))

    @rule(picks=st.lists(PICK, min_size=1, max_size=4), recorded=st.booleans())
    def swap_in_group(self, picks, recorded):
        """A group swapped out together (exact sharing expected back), or a random list of ids."""
        intact = [g for g, tables in self.swapped_groups if self._valid(g, swapped=True)
                  and [self.m.table(s).block_ids for s in g] == tables]
        if recorded and intact:
            self._swap_in(list(intact[picks[0] % len(intact)]))
        else:
            self._swap_in(self._group(picks, family=False, swapped=True))

    def _swap_in(self, seq_ids):
        group = seq_ids if isinstance(seq_ids, list) else [seq_ids]
        valid = self._valid(group, swapped=True)
        if valid:
            advised = self._query(self.m.can_swap_in, seq_ids)
            cpu_tables = [list(self.m.table(s).block_ids) for s in group]
            exact = (group, cpu_tables) in self.swapped_groups
            before = sharing(self.m, group)
        try:
            pairs = self._attempt(self.m.swap_in, seq_ids)
        except (OutOfBlocks, ValueError, KeyError):
            assert not valid or not advised, f"can_swap_in({seq_ids}) said yes, but swap_in failed"
            return
        assert valid
        self._copy("cpu", "gpu", pairs)
        gpu_of = {}
        for s, cpu_blocks in zip(group, cpu_tables):
            for c, g in zip(cpu_blocks, self.m.table(s).block_ids):
                assert gpu_of.setdefault(c, g) == g, f"CPU block {c} came back as two GPU blocks: sharing lost"
        if exact:
            assert sharing(self.m, group) == before, "a group swapped out and in together must share as before"
            event("group swapped back" if len(group) > 1 else "single swapped back")
        if len(pairs) < len(gpu_of):
            event("swap_in reused cached blocks")

    @rule()
    def free_everything(self):
        if len(self.tokens) < 4:
            return
        for s in list(self.tokens):
            self.m.free(s)
        self.tokens.clear()
        assert self.m.num_free_blocks == self.m.num_blocks
        assert all(self.m.allocator.refcount(b) == 0 for b in range(self.m.num_blocks))
        if self.m.cpu_allocator is not None:
            assert self.m.cpu_allocator.num_free == self.m.cpu_allocator.num_blocks

    def teardown(self):
        event(f"steps: {getattr(self, 'steps', 0) // 10 * 10}")

    # -- invariants after every step --

    @invariant()
    def bookkeeping(self):
        self.steps = getattr(self, "steps", 0) + 1
        check_invariants(self.m)
        assert sorted(self.m.seq_ids) == sorted(self.tokens)

    @invariant()
    def every_sequence_reads_back_its_values(self):
        for s, toks in self.tokens.items():
            t = self.m.table(s)
            assert t.num_tokens == len(toks)
            n = self.computed[s]
            got = [self.pool[t.device][slot] for slot in t.slot_mapping(0, n)]
            expected = [tuple(toks[:p + 1]) for p in range(n)]
            assert got == expected, f"sequence {s} ({t}) reads back wrong K/V values"

    @invariant()
    def prefix_keys_follow_the_tokens(self):
        cache, bs = self.m.prefix_cache, self.m.block_size
        if cache is None:
            return
        for s, toks in self.tokens.items():
            keys, key = [], None
            for i in range(len(toks) // bs):
                key = cache.hash_fn(key, tuple(toks[i * bs:(i + 1) * bs]))
                keys.append(key)
            record = self.m._seqs.get(s)
            assert record.keys == keys, f"sequence {s}: block keys do not chain its tokens"
            computed_blocks = min(len(keys), self.computed[s] // bs)
            assert len(record.prefix_ids) == computed_blocks, (
                f"sequence {s}: {len(record.prefix_ids)} prefix ids for {computed_blocks} computed full blocks")
            if self.m.is_swapped(s):
                continue
            # On the GPU, every full block is cached under the sequence's own chain of prefix ids.
            for i, prefix_id in enumerate(record.prefix_ids):
                block = self.m.table(s).block_ids[i]
                if prefix_id == cache.BROKEN:
                    assert not cache.is_registered(block)
                else:
                    assert cache.prefix_id_of(block) == prefix_id, f"sequence {s}, block {i}: wrong prefix id"
                    parent = record.prefix_ids[i - 1] if i else None
                    assert cache._prefixes[prefix_id].parent == parent, f"sequence {s}, block {i}: broken chain"

        # The cache forgets what nothing needs: each prefix is held by a block or followed by one.
        children = Counter(p.parent for p in cache._prefixes.values())
        for prefix_id, p in cache._prefixes.items():
            assert p.children == children[prefix_id]
            assert p.parent is None or p.parent in cache._prefixes, f"prefix {prefix_id} follows a forgotten one"
            assert p.blocks or p.children, f"prefix {prefix_id} is held by nothing and followed by nothing"
            assert cache._prefix_of_key[p.key] is p
            hit = cache._hit_of_key.get(p.key)
            assert hit == ((p.parent, p.tokens, next(iter(p.blocks)), prefix_id) if p.blocks else None)
            for b in p.blocks:
                assert cache.prefix_id_of(b) == prefix_id
                # Findable means computed: each slot holds the K/V of the prefix's token there.
                values = self.pool["gpu"][b * bs:(b + 1) * bs]
                assert all(isinstance(v, tuple) and v[-1] == t for v, t in zip(values, p.tokens)), (
                    f"cached block {b} (prefix {prefix_id}) holds {values}, not the K/V of {p.tokens}")
                assert self.m.allocator.refcount(b) > 0 or cache.is_parked(b), f"cached block {b} is on the free list"
        assert len(cache) == sum(len(p.blocks) for p in cache._prefixes.values())

    @invariant()
    def each_token_has_one_owner_in_the_manager(self):
        # The record keeps only the tokens the prefix cache does not hold; the cached blocks before them give the rest.
        cache, bs = self.m.prefix_cache, self.m.block_size
        for s, toks in self.tokens.items():
            record = self.m._seqs.get(s)
            if cache is None:
                assert record.uncached_tokens == [], f"sequence {s}: tokens kept without prefix caching"
                continue
            first = record.uncached_from
            assert record.uncached_tokens == toks[first * bs:], f"sequence {s}: uncached tokens are not its tail"
            if self.m.is_swapped(s):
                assert first == 0, f"sequence {s} is swapped out, yet relies on the cache for {first} blocks"
                continue
            assert first <= len(record.prefix_ids) and cache.BROKEN not in record.prefix_ids[:first]
            if first < len(record.prefix_ids):   # what the record keeps starts at a block the cache refused
                assert record.prefix_ids[first] == cache.BROKEN, f"sequence {s}: keeps tokens of a cached block"
            blocks = self.m.table(s).block_ids[:first]
            assert [t for b in blocks for t in cache.tokens_of(b)] == toks[:first * bs], (
                f"sequence {s}: the cached blocks' tokens are not its tokens")


ManagerMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=40, deadline=None,
                                            suppress_health_check=[HealthCheck.too_slow])
TestManagerMachine = ManagerMachine.TestCase
