"""KVCache: K/V written through slot mappings come back bit for bit, through copy-on-write and swapping."""

from __future__ import annotations

import random

import pytest
import torch

from pagedlab.paged import BlockManager, KVCache


def bits(t: torch.Tensor) -> torch.Tensor:
    """The raw bits of a float tensor, so equality is bit for bit (NaN payloads and -0.0 included)."""
    return t.contiguous().view({2: torch.int16, 4: torch.int32}[t.element_size()]).cpu()


class Engine:
    """A manager and a KV cache driven together, with the expected K/V of every sequence kept contiguously."""

    def __init__(self, device="cpu", dtype=torch.float32, num_blocks=12, block_size=4, num_cpu_blocks=12,
                 layers=2, kv_heads=2, head_dim=8, prefix=False, staging_blocks=None):
        self.m = BlockManager(num_blocks, block_size, num_cpu_blocks, enable_prefix_caching=prefix)
        self.kv = KVCache(layers, num_blocks, block_size, kv_heads, head_dim, num_cpu_blocks, dtype, device,
                          staging_blocks=staging_blocks)
        self.expected: dict[str, list[tuple[torch.Tensor, torch.Tensor]]] = {}
        self.gen = torch.Generator().manual_seed(0)

    def _kv(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        shape = (self.kv.num_layers, n, self.kv.kv_heads, self.kv.head_dim)
        k, v = torch.randn(shape, generator=self.gen), torch.randn(shape, generator=self.gen)
        return k.to(self.kv.dtype), v.to(self.kv.dtype)

    def add(self, seq, tokens):
        table = self.m.add(seq, tokens)
        k, v = self._kv(len(tokens))
        cached = self.m.num_cached_tokens(seq)
        if cached:
            # A cache hit: those K/V are already in the pool (computed by an earlier sequence).
            for layer in range(self.kv.num_layers):
                got_k, got_v = self.kv.gather(layer, table)
                k[layer, :cached], v[layer, :cached] = got_k[:cached].cpu(), got_v[:cached].cpu()
        slots = table.slot_mapping(cached, len(tokens))
        for layer in range(self.kv.num_layers):
            self.kv.write(layer, slots, k[layer, cached:], v[layer, cached:])
        self.expected[seq] = [(k[layer], v[layer]) for layer in range(self.kv.num_layers)]

    def append(self, seq, token):
        slot, copy = self.m.append(seq, token)
        if copy is not None:
            self.kv.copy_blocks([copy])
        k, v = self._kv(1)
        for layer in range(self.kv.num_layers):
            self.kv.write(layer, [slot], k[layer], v[layer])
            ek, ev = self.expected[seq][layer]
            self.expected[seq][layer] = (torch.cat([ek, k[layer]]), torch.cat([ev, v[layer]]))

    def fork(self, parent, child):
        self.m.fork(parent, child)
        self.expected[child] = list(self.expected[parent])

    def free(self, seq):
        self.m.free(seq)
        del self.expected[seq]

    def swap_out(self, seqs):
        """One sequence or a group (a list)."""
        self.kv.swap_out(self.m.swap_out(seqs))

    def swap_in(self, seqs):
        self.kv.swap_in(self.m.swap_in(seqs))

    def check(self):
        for seq, per_layer in self.expected.items():
            table = self.m.table(seq)
            if table.device == "cpu":
                continue
            for layer, (ek, ev) in enumerate(per_layer):
                k, v = self.kv.gather(layer, table)
                assert torch.equal(bits(k), bits(ek)), f"K of {seq!r}, layer {layer}, differs"
                assert torch.equal(bits(v), bits(ev)), f"V of {seq!r}, layer {layer}, differs"


def test_write_then_gather_is_exact():
    e = Engine()
    e.add("a", range(9))
    e.add("b", range(3))
    e.check()
    k, _ = e.kv.gather(1, e.m.table("a"))
    assert k.shape == (9, 2, 8) and k.dtype == torch.float32


def test_copy_on_write_keeps_both_sequences_intact():
    e = Engine()
    e.add("p", range(6))
    e.fork("p", "c")
    e.append("c", 1)   # copies the shared last block
    e.append("p", 2)   # now private: written in place
    e.check()
    assert e.m.table("c").block_ids[-1] != e.m.table("p").block_ids[-1]


def test_a_missing_copy_is_caught(monkeypatch):
    e = Engine()
    e.add("p", range(6))
    e.fork("p", "c")
    monkeypatch.setattr(e.kv, "copy_blocks", lambda pairs: None)  # "forget" to copy on write
    e.append("c", 1)
    with pytest.raises(AssertionError, match="K of 'c'"):
        e.check()


def test_swap_round_trip_is_bit_exact_even_after_the_blocks_are_reused():
    e = Engine(num_blocks=4, num_cpu_blocks=4, dtype=torch.bfloat16)
    e.add("a", range(10))
    before = [e.kv.gather(layer, e.m.table("a")) for layer in range(2)]
    e.swap_out("a")
    e.add("b", range(16))           # takes every GPU block, overwriting a's old blocks
    e.check()
    e.free("b")
    e.swap_in("a")
    for layer, (k, v) in enumerate(before):
        k2, v2 = e.kv.gather(layer, e.m.table("a"))
        assert torch.equal(bits(k2), bits(k)) and torch.equal(bits(v2), bits(v))
    e.check()


def test_group_swap_of_a_fork_family_is_exact_and_stays_shared():
    e = Engine(num_blocks=8, num_cpu_blocks=8, dtype=torch.bfloat16)
    e.add("p", range(10))
    e.fork("p", "c")
    e.append("c", 1)                    # copy-on-write of the partial block
    e.append("p", 2)
    group = ["p", "c"]
    e.swap_out(group)
    assert e.m.cpu_allocator.num_free == 8 - 4, "2 shared full blocks once, 2 private last blocks"
    e.add("x", range(32))               # every GPU block, overwritten
    e.check()
    e.free("x")
    e.swap_in(group)
    e.check()
    assert e.m.table("p").block_ids[:2] == e.m.table("c").block_ids[:2]


def test_swap_in_reuses_cached_blocks_and_their_values():
    e = Engine(num_blocks=6, num_cpu_blocks=6, prefix=True)
    e.add("a", range(10))               # 2 full blocks (cached) and a partial one
    e.swap_out("a")
    copies = e.kv.num_copies
    e.swap_in("a")                      # the full blocks are still cached: only the partial one comes back
    assert e.kv.num_copies == copies + 1
    e.check()


@pytest.mark.parametrize("staging_blocks, copies", [(None, 1), (2, 3), (1, 5)])
def test_swaps_copy_through_the_staging_buffers(staging_blocks, copies):
    e = Engine(num_blocks=6, num_cpu_blocks=6, staging_blocks=staging_blocks)
    assert e.kv.staging_blocks == (6 if staging_blocks is None else staging_blocks)
    e.add("a", range(18))               # 5 blocks
    before = e.kv.num_copies
    e.swap_out("a")
    assert e.kv.num_copies == before + copies, f"one copy per {e.kv.staging_blocks} blocks"
    e.add("b", range(20))               # overwrites a's old blocks
    e.free("b")
    e.swap_in("a")
    assert e.kv.num_copies == before + 2 * copies
    e.check()


def test_swaps_use_no_temporary_host_tensors(monkeypatch):
    # Before, swap_out made a pageable temporary per call (``self.k[:, src].cpu()``) and swap_in indexed the
    # host pool into a new tensor before ``.to(device)``. Now every host-side byte goes through the staging
    # buffer, which is preallocated.
    e = Engine()
    e.add("a", range(10))
    made = []
    real_cpu = torch.Tensor.cpu
    monkeypatch.setattr(torch.Tensor, "cpu", lambda t, *a, **k: made.append(t.shape) or real_cpu(t, *a, **k))
    e.swap_out("a")
    e.swap_in("a")
    assert not [shape for shape in made if len(shape) > 1], f"temporary host copies of blocks: {made}"


def test_prefix_cache_hits_read_the_cached_values():
    e = Engine(prefix=True)
    e.add("a", [1, 2, 3, 4, 5, 6, 7, 8, 9])
    e.add("b", [1, 2, 3, 4, 5, 6, 7, 8, 0])
    assert e.m.num_cached_tokens("b") == 8
    e.check()


@pytest.mark.parametrize("seed", range(3))
def test_random_workload_stays_exact(seed):
    rng = random.Random(seed)
    e = Engine(prefix=seed == 2, staging_blocks=[None, 3, 1][seed])
    for step in range(150):
        live = [s for s in e.expected if not e.m.is_swapped(s)]
        swapped = [s for s in e.expected if e.m.is_swapped(s)]
        op = rng.choice(["add", "append", "append", "append", "fork", "free", "swap_out", "swap_in",
                         "swap_out_group", "swap_in_group"])
        if op == "add" and e.m.can_add(8):
            e.add(f"s{step}", [rng.randint(0, 1) for _ in range(rng.randint(1, 8))])
        elif op == "append" and live:
            s = rng.choice(live)
            if e.m.can_append(s):
                e.append(s, rng.randint(0, 1))
        elif op == "fork" and live:
            e.fork(rng.choice(live), f"s{step}")
        elif op == "free" and e.expected:
            e.free(rng.choice(list(e.expected)))
        elif op == "swap_out" and live:
            s = rng.choice(live)
            if e.m.can_swap_out(s):
                e.swap_out(s)
        elif op == "swap_in" and swapped:
            s = rng.choice(swapped)
            if e.m.can_swap_in(s):
                e.swap_in(s)
        elif op == "swap_out_group" and live:
            group = rng.sample(live, rng.randint(1, len(live)))
            if e.m.can_swap_out(group):
                e.swap_out(group)
        elif op == "swap_in_group" and swapped:
            group = rng.sample(swapped, rng.randint(1, len(swapped)))
            if e.m.can_swap_in(group):
                e.swap_in(group)
        e.check()


def test_bad_arguments_are_explained():
    kv = KVCache(1, 4, 2, 1, 4, device="cpu")
    with pytest.raises(ValueError, match=r"k must have shape \(2, 1, 4\)"):
        kv.write(0, [0, 1], torch.zeros(2, 4), torch.zeros(2, 1, 4))
    with pytest.raises(ValueError, match="outside the pool"):
        kv.write(0, [8], torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))
    with pytest.raises(ValueError, match="layer must be"):
        kv.write(1, [0], torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))
    with pytest.raises(TypeError, match="layer must be an int, got str"):
        kv.write("0", [0], torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))
    with pytest.raises(TypeError, match="slot_mapping must hold integer slots"):
        kv.write(0, [0.5], torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))  # would truncate to slot 0
    with pytest.raises(TypeError, match="v must be a torch.Tensor"):
        kv.write(0, [0], torch.zeros(1, 1, 4), None)
    with pytest.raises(ValueError, match="outside the pool of 0 blocks"):
        kv.swap_out([(0, 0)])
    with pytest.raises(ValueError, match="num_layers must be >= 1"):
        KVCache(0, 4, 2, 1, 4)
    assert kv.bytes_per_block == 2 * 1 * 2 * 1 * 4 * 4


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_swaps_go_through_the_pinned_staging_buffer():
    e = Engine(device="cuda", dtype=torch.bfloat16, num_blocks=6, num_cpu_blocks=6, staging_blocks=2)
    assert e.kv.k.is_cuda and e.kv._stage_host.is_pinned() and e.kv._stage_device.is_cuda
    e.add("a", range(10))
    e.fork("a", "b")
    e.append("b", 1)
    e.swap_out("a")
    e.add("c", range(12))
    e.check()
    e.free("c")
    e.swap_in("a")
    e.swap_out("b")                     # reuses the host buffer right after swap_in's asynchronous copy
    e.swap_in("b")
    e.kv.synchronize()
    e.check()
