"""The paged decode kernel against naive attention over the gathered K/V.

Every case shuffles the block tables, pads them with -1 (or garbage), and plants NaN/inf in the blocks no
sequence owns and in the slots past each context's end, so a kernel that reads a padding entry, a stale
slot or a foreign block gives NaN or a wrong row. On a CPU the kernel runs in Triton's interpreter (small
head counts, float32 and float16); on a GPU the same tests run compiled, and the ``gpu`` tests add bfloat16.
"""

from __future__ import annotations

import pytest
import torch

from pagedlab import device
from pagedlab.attention import gather_kv, paged_decode_reference
from pagedlab.kernels import paged_attention as pa
from pagedlab.kernels.paged_attention import (BlockReads, choose_num_splits, merge_splits, paged_decode_attention,
                                              paged_decode_attention_traced, paged_decode_split)
from pagedlab.paged import BlockTable, KVCache
from pagedlab.testing import random_paged_batch

DEV = device.DEVICE
needs_gpu = pytest.mark.skipif(not device.ON_GPU, reason="needs an NVIDIA GPU with compute capability >= 8.0")


def make_batch(context_lens, block_size, heads, kv_heads, head_dim, dtype=torch.float32, **kwargs):
    """A shuffled pool with NaN/inf wherever no sequence may read (see ``random_paged_batch``)."""
    return random_paged_batch(context_lens, block_size, heads, kv_heads, head_dim, dtype, **kwargs)


def reference(q, k_cache, v_cache, tables, lens, sm_scale=None):
    return paged_decode_reference(q.double(), k_cache.double(), v_cache.double(), tables, lens, sm_scale)


def max_error(out, ref):
    assert not out.isnan().any(), "NaN in the kernel's output: it read a slot, a block or a padding entry it must not"
    return (out.double() - ref).abs().max().item()


# (block_size, heads, kv_heads, head_dim): MHA, GQA 4:1, MQA; blocks smaller than, equal to and larger than
# the interpreter's key tile (32).
CASES = [
    (16, 2, 2, 32),    # MHA
    (16, 8, 2, 32),    # GQA 4:1
    (32, 4, 1, 32),    # MQA
    (8, 8, 2, 16),     # blocks smaller than the key tile: one tile spans 4 blocks
    (64, 4, 2, 16),    # a block larger than the key tile: two tiles per block
    (128, 4, 1, 16),   # the largest block size: four tiles per block
]


@pytest.mark.parametrize("block_size,heads,kv_heads,head_dim", CASES)
@pytest.mark.parametrize("num_splits", [1, 3])
def test_matches_naive_attention_over_gathered_kv(block_size, heads, kv_heads, head_dim, num_splits):
    lens = [1, block_size - 1, block_size, block_size + 1, 5 * block_size + 3]
    batch = make_batch(lens, block_size, heads, kv_heads, head_dim)
    out = paged_decode_attention(*batch, num_splits=num_splits)
    assert out.shape == batch[0].shape and out.dtype == batch[0].dtype
    assert max_error(out, reference(*batch)) < 1e-5


@pytest.mark.parametrize("head_dim", [64, 128])
def test_head_dims_64_and_128(head_dim):
    batch = make_batch([1, 31, 77], 16, 4, 1, head_dim, seed=1)
    for num_splits in (1, 2):
        assert max_error(paged_decode_attention(*batch, num_splits=num_splits), reference(*batch)) < 1e-5


@pytest.mark.slow
def test_long_contexts_many_splits():
    batch = make_batch([1000, 513, 17], 16, 8, 2, 32, seed=2)
    ref = reference(*batch)
    for num_splits in (1, 4, 7):
        assert max_error(paged_decode_attention(*batch, num_splits=num_splits), ref) < 1e-5


def test_more_splits_than_tiles_leaves_empty_splits_harmless():
    # A 3-token context cut into 5 splits: four of them are empty (lse -inf, weight 0 in the merge).
    batch = make_batch([3, 40], 16, 2, 2, 16, seed=3)
    assert max_error(paged_decode_attention(*batch, num_splits=5), reference(*batch)) < 1e-5


def test_float16():
    batch = make_batch([5, 33, 70], 16, 8, 2, 32, dtype=torch.float16, seed=4)
    for num_splits in (1, 2):
        out = paged_decode_attention(*batch, num_splits=num_splits)
        assert out.dtype == torch.float16
        assert max_error(out, reference(*batch)) < 2e-3


@needs_gpu
@pytest.mark.gpu
def test_bfloat16_autotuned_long_context():
    batch = make_batch([4096, 1, 1000, 2047], 16, 32, 8, 128, dtype=torch.bfloat16, seed=5)
    ref = reference(*batch)
    for num_splits in (None, 1, 8):
        assert max_error(paged_decode_attention(*batch, num_splits=num_splits), ref) < 2e-2


def test_padding_entries_are_never_read():
    # Padding that would crash or read NaN if dereferenced: -1, a huge id, a negative garbage id, a NaN block.
    for padding in ("spare", -1, 2**31 - 1, -123456):
        batch = make_batch([7, 16, 20], 16, 2, 2, 16, padding=padding, extra_columns=3, seed=6)
        assert max_error(paged_decode_attention(*batch, num_splits=2), reference(*batch)) < 1e-5


def test_int64_tables_and_lengths_and_custom_scale():
    q, k, v, tables, lens = make_batch([9, 40], 8, 4, 2, 16, seed=7)
    ref = reference(q, k, v, tables, lens, sm_scale=0.3)
    out = paged_decode_attention(q, k, v, tables.long(), lens.long(), sm_scale=0.3)
    assert max_error(out, ref) < 1e-5


def test_reads_a_kv_cache_layer_straight():
    # cache.k[layer] and cache.v[layer] pass in as they are; KVCache.gather is an independent reference.
    cache = KVCache(num_layers=2, num_blocks=12, block_size=8, kv_heads=2, head_dim=16, dtype=torch.float32)
    g = torch.Generator().manual_seed(8)
    cache.k.copy_(torch.randn(cache.k.shape, generator=g))
    cache.v.copy_(torch.randn(cache.v.shape, generator=g))
    tables = [BlockTable([5, 2, 9], 19, 8), BlockTable([0], 4, 8)]
    q = torch.randn(2, 4, 16, generator=g).to(DEV)
    block_tables = torch.tensor([[5, 2, 9], [0, -1, -1]], dtype=torch.int32, device=DEV)
    lens = torch.tensor([19, 4], dtype=torch.int32, device=DEV)
    out = paged_decode_attention(q, cache.k[1], cache.v[1], block_tables, lens)
    for s, table in enumerate(tables):
        k, v = cache.gather(1, table)
        k, v = (t.transpose(0, 1).repeat_interleave(2, dim=0).double() for t in (k, v))
        scores = (q[s].double()[:, None, :] @ k.transpose(1, 2))[:, 0] / 4.0
        ref = (torch.softmax(scores, -1)[:, None, :] @ v)[:, 0]
        assert (out[s].double() - ref).abs().max().item() < 1e-5


def test_gather_kv_reads_only_owned_blocks():
    q, k, v, tables, lens = make_batch([20], 8, 2, 2, 16, seed=9)
    gk, gv = gather_kv(k, v, tables[0], 20)
    assert gk.shape == (20, 2, 16) and not gk.isnan().any() and not gv.isinf().any()
    assert torch.equal(gk[8:16], k[int(tables[0, 1])])


# --------------------------------------------------------------------------------------------------
# Split-KV: partials and the merge


def test_split_partials_merge_to_the_output():
    batch = make_batch([50, 9], 8, 4, 2, 16, seed=10)
    partial, lse = paged_decode_split(*batch, num_splits=3)
    assert partial.shape == (2, 4, 3, 16) and lse.shape == (2, 4, 3)
    # Sequence 1 (9 tokens, key tile 32) fits in split 0: splits 1 and 2 are empty.
    assert torch.isinf(lse[1, :, 1:]).all() and torch.isfinite(lse[:, :, 0]).all()
    # lse of split 0 of sequence 1 is the log-sum-exp over all its keys.
    k, _ = gather_kv(batch[1], batch[2], batch[3][1], 9)
    scores = torch.einsum("hd,nhd->hn", batch[0][1].double(), k.double().repeat_interleave(2, dim=1)) / 4.0
    assert torch.allclose(lse[1, :, 0].double(), torch.logsumexp(scores, -1), atol=1e-5)
    merged = merge_splits(partial, lse)
    assert max_error(merged, reference(*batch)) < 1e-5


def test_merge_splits_is_the_online_softmax_rescaling():
    g = torch.Generator().manual_seed(11)
    partial = torch.randn(2, 3, 4, 16, generator=g)
    lse = torch.randn(2, 3, 4, generator=g) * 5
    lse[0, 0, 2:] = float("-inf")
    w = torch.softmax(lse, dim=-1)  # exp(lse_s) / sum exp(lse): each split's share of the softmax sum
    expected = (w[..., None] * partial).sum(2)
    assert torch.allclose(merge_splits(partial.to(DEV), lse.to(DEV)).cpu(), expected, atol=1e-6)


def test_merge_splits_checks_inputs():
    with pytest.raises(TypeError, match="partial"):
        merge_splits(torch.zeros(1, 1, 2, 16, dtype=torch.float16, device=DEV), torch.zeros(1, 1, 2, device=DEV))
    with pytest.raises(ValueError, match="lse"):
        merge_splits(torch.zeros(1, 1, 2, 16, device=DEV), torch.zeros(1, 1, 3, device=DEV))


# --------------------------------------------------------------------------------------------------
# Trace mode


def test_trace_records_the_physical_blocks_of_each_program():
    q, k, v, tables, lens = make_batch([70, 5], 16, 4, 2, 16, seed=12)
    out, reads = paged_decode_attention_traced(q, k, v, tables, lens, num_splits=2)
    assert isinstance(reads, BlockReads) and reads.num_splits == 2 and reads.context_lens == (70, 5)
    assert max_error(out, reference(q, k, v, tables, lens)) < 1e-5
    t0 = tables[0].tolist()
    # Sequence 0: 70 tokens = 5 blocks; key tile 32 -> split length 64: split 0 reads blocks 0-3, split 1 block 4.
    for head in range(2):
        assert reads.reads[0][head] == (tuple((i, t0[i]) for i in range(4)), ((4, t0[4]),))
    assert reads.reads[1][1] == (((0, int(tables[1, 0])),), ())
    assert reads.physical(0) == t0[:5]


def test_choose_num_splits():
    # Many sequences fill a GPU by themselves: one split. One long sequence: many. In the interpreter: 1.
    assert choose_num_splits(64, 8, 4096, 132) == 1
    assert choose_num_splits(1, 8, 32768, 132) == 33
    assert choose_num_splits(1, 8, 1000, 132) == 3   # no split shorter than MIN_SPLIT_TOKENS keys
    assert choose_num_splits(1, 1, 10**6, 132) == pa.MAX_SPLITS
    assert choose_num_splits(1, 8, 100, 132) == 1
    assert choose_num_splits(1, 8, 32768, None) == 1


def test_choose_num_splits_weighs_the_work():
    # 63 sequences of 100 tokens and one of 32K fill the grid (512 programs on 132 SMs), but with one split a single
    # program streams all 32K keys: the longest context is cut until a piece is at most an SM's fair share.
    total = 63 * 100 + 32768
    assert choose_num_splits(64, 8, 32768, 132) == 1                     # every context 32K: occupancy rules
    assert choose_num_splits(64, 8, 32768, 132, total_context=total) == 14
    assert choose_num_splits(64, 8, 32768, 132, total_context=64 * 32768) == 1
    # Uniform batches (total = num_seqs * longest, the default) split as before.
    for batch, context in [(1, 32768), (8, 4096), (64, 512)]:
        assert choose_num_splits(batch, 8, context, 132) == choose_num_splits(batch, 8, context, 132,
                                                                              batch * context)


def test_autotuning_keeps_context_buckets_apart():
    assert "context_bucket" in pa.AUTOTUNE_KEY
    assert [pa.context_bucket(n) for n in (1, 2, 3, 16, 17, 4096, 4097)] == [1, 1, 2, 4, 5, 12, 13]


def test_context_stats_skip_the_value_checks_and_give_the_same_output():
    batch = make_batch([5, 40, 17], 8, 4, 2, 16, seed=14)
    checked = paged_decode_attention(*batch, num_splits=2)
    fast = paged_decode_attention(*batch, num_splits=2, context_stats=(40, 62))
    assert torch.equal(checked, fast)
    # The shapes are still checked, and the stats must be consistent.
    with pytest.raises(ValueError, match="context_stats"):
        paged_decode_attention(*batch, context_stats=(41 * 8, 62))
    with pytest.raises(ValueError, match="context_stats"):
        paged_decode_attention(*batch, context_stats=(40, 39))
    with pytest.raises(ValueError, match="q must have shape"):
        paged_decode_attention(batch[0][None], *batch[1:], context_stats=(40, 62))


# --------------------------------------------------------------------------------------------------
# Input checks


def _args(**change):
    q, k, v, tables, lens = make_batch([5, 20], 16, 4, 2, 16, seed=13)
    args = dict(q=q, k_cache=k, v_cache=v, block_tables=tables, context_lens=lens)
    args.update(change)
    return args


@pytest.mark.parametrize("change,error,match", [
    (dict(q="q"), TypeError, "q must be a torch.Tensor"),
    (dict(q=torch.zeros(2, 4, 1, 16)), ValueError, "q must have shape"),
    (dict(k_cache=torch.zeros(3, 16, 2)), ValueError, "k_cache must have shape"),
    (dict(v_cache=torch.zeros(4, 16, 2, 16)), ValueError, "k_cache and v_cache"),
    (dict(q=torch.zeros(2, 4, 32)), ValueError, "head_dim"),
    (dict(q=torch.zeros(2, 3, 16)), ValueError, "multiple of the number of K/V heads"),
    (dict(q=torch.zeros(2, 4, 16, dtype=torch.float16)), TypeError, "one dtype"),
    (dict(q=torch.zeros(2, 4, 16, dtype=torch.float64), k_cache=torch.zeros(5, 16, 2, 16, dtype=torch.float64),
          v_cache=torch.zeros(5, 16, 2, 16, dtype=torch.float64)), TypeError, "float16, bfloat16 or float32"),
    (dict(block_tables=torch.zeros(2, 2, dtype=torch.int16)), TypeError, "block_tables must be int32 or int64"),
    (dict(block_tables=torch.zeros(2, 2)), TypeError, "block_tables must be int32 or int64"),
    (dict(context_lens=torch.tensor([5.0, 20.0])), TypeError, "context_lens must be int32 or int64"),
    (dict(block_tables=torch.zeros(3, 2, dtype=torch.int32)), ValueError, "block_tables must have shape"),
    (dict(context_lens=torch.tensor([5], dtype=torch.int32)), ValueError, "context_lens must have shape"),
    (dict(context_lens=torch.tensor([0, 20], dtype=torch.int32)), ValueError, "context_lens must be >= 1"),
    (dict(context_lens=torch.tensor([5, 49], dtype=torch.int32)), ValueError, "longer than block_tables holds"),
    (dict(block_tables=torch.tensor([[0, -1, -1], [1, 99, -1]], dtype=torch.int32)), ValueError,
     r"block_tables\[1, 1\] = 99"),
    (dict(block_tables=torch.tensor([[-1, -1, -1], [1, 2, -1]], dtype=torch.int32)), ValueError,
     r"block_tables\[0, 0\] = -1"),
    (dict(k_cache=torch.zeros(5, 12, 2, 16), v_cache=torch.zeros(5, 12, 2, 16)), ValueError, "power of two"),
    (dict(sm_scale=-1.0), ValueError, "sm_scale"),
    (dict(sm_scale="0.5"), TypeError, "sm_scale"),
    (dict(num_splits=0), ValueError, "num_splits"),
    (dict(num_splits=2.0), TypeError, "num_splits"),
])
def test_bad_inputs_raise_naming_the_argument(change, error, match):
    args = _args()
    for name, value in change.items():
        if isinstance(value, torch.Tensor):
            value = value.to(DEV)
        args[name] = value
    with pytest.raises(error, match=match):
        paged_decode_attention(**args)


def test_bfloat16_is_refused_in_the_interpreter():
    if not device.INTERPRET:
        pytest.skip("bfloat16 runs compiled on a GPU")
    args = _args()
    for name in ("q", "k_cache", "v_cache"):
        args[name] = args[name].to(torch.bfloat16)
    with pytest.raises(TypeError, match="bfloat16"):
        paged_decode_attention(**args)


@pytest.mark.parametrize("name", ["v_cache", "block_tables", "context_lens"])
def test_tensors_on_two_devices_are_refused(name):
    args = _args()
    args[name] = torch.empty_like(args[name], device="meta")  # a second device on any machine
    with pytest.raises(ValueError, match=f"{name} is on meta"):
        paged_decode_attention(**args)


# --------------------------------------------------------------------------------------------------
# The benchmark runs (tiny sizes in the interpreter; the real sweep needs a GPU)


def test_benchmark_runs_and_writes_its_files(tmp_path):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[2] / "benchmarks" / "paged_attention.py"
    spec = importlib.util.spec_from_file_location("paged_attention_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    small = ["--batches", "2", "--contexts", "256", "--block-sizes", "16"]
    argv = ["--out", str(tmp_path)] + (["--cpu-smoke"] if device.INTERPRET else small)
    assert bench.main(argv) == 0
    rows = list(__import__("csv").DictReader(open(tmp_path / "paged_attention.csv")))
    assert {r["layout"] for r in rows} == {"paged", "contiguous"}
    assert all(float(r["kv_gbps"]) > 0 for r in rows)
    assert (tmp_path / "paged_attention.png").stat().st_size > 0
    assert "paged / contiguous" in (tmp_path / "paged_attention_summary.md").read_text()


def _strided(t: torch.Tensor, dim: int) -> torch.Tensor:
    """The same values as ``t`` in a view whose ``dim`` has stride 2 (every other element of a tensor twice as
    long along ``dim``, the rest filled with values that would be wrong to read)."""
    shape = list(t.shape)
    shape[dim] *= 2
    wide = torch.full(shape, 999, dtype=t.dtype, device=t.device) if not t.is_floating_point() else \
        torch.full(shape, float("nan"), dtype=t.dtype, device=t.device)
    index = [slice(None)] * t.dim()
    index[dim] = slice(0, None, 2)
    wide[tuple(index)] = t
    return wide[tuple(index)]


@pytest.mark.parametrize("arg", ["q", "k_cache", "v_cache", "block_tables", "context_lens"])
def test_strided_views_of_every_argument(arg):
    # A view that is not contiguous must be read through its strides: context_lens[::2] once crashed the
    # interpreter and a column view gave wrong rows, because the kernel indexed context_lens by its position.
    batch = make_batch([5, 40, 17], 8, 4, 2, 16, seed=12)
    names = ["q", "k_cache", "v_cache", "block_tables", "context_lens"]
    i = names.index(arg)
    views = list(batch)
    for dim in range(batch[i].dim()):
        views[i] = _strided(batch[i], dim)
        assert not views[i].is_contiguous() and torch.allclose(views[i], batch[i], rtol=0, atol=0, equal_nan=True)
        assert max_error(paged_decode_attention(*views, num_splits=2), reference(*batch)) < 1e-5, (arg, dim)
    if arg == "context_lens":
        column = torch.stack([batch[4], batch[4] + 1], dim=1)[:, 0]     # a column of a (num_seqs, 2) tensor
        assert max_error(paged_decode_attention(*batch[:4], column), reference(*batch)) < 1e-5
