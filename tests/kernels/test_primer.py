"""The small kernels of the Triton primer (notebook 03), in the interpreter on CPU and compiled on a GPU."""

from __future__ import annotations

import pytest
import torch

from pagedlab import device
from pagedlab.kernels import primer

DEV = device.DEVICE


@pytest.mark.parametrize("n,block", [(1, 16), (20, 8), (64, 64), (1000, 256)])
def test_program_ids_cover_every_element_once(n, block):
    ids = primer.program_ids(n, block).cpu()
    assert torch.equal(ids, torch.arange(n, dtype=torch.int32) // block)


@pytest.mark.parametrize("n", [1, 17, 256, 1000])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
def test_vector_add_any_length(n, dtype):
    x = torch.arange(n, device=DEV).to(dtype)
    y = (3 * torch.arange(n, device=DEV) + 1).to(dtype)
    assert torch.equal(primer.vector_add(x, y, block=64), x + y)


def test_vector_add_writes_nothing_past_the_end():
    buffer = torch.full((100,), -1.0, device=DEV)
    x, y = torch.ones(70, device=DEV), torch.ones(70, device=DEV)
    primer._add_kernel[(2,)](x, y, buffer, 70, BLOCK=64)  # the second program's last 58 lanes are masked
    assert torch.all(buffer[:70] == 2) and torch.all(buffer[70:] == -1)


@pytest.mark.parametrize("cols", [1, 5, 64, 100])
def test_row_softmax_matches_torch(cols):
    x = torch.randn(7, cols, generator=torch.Generator().manual_seed(cols)).to(DEV)
    torch.testing.assert_close(primer.row_softmax(x), torch.softmax(x, dim=-1), atol=1e-6, rtol=1e-5)


def test_row_softmax_strided_rows_large_values_and_half():
    x = 1000 * torch.randn(6, 64, generator=torch.Generator().manual_seed(0)).to(DEV)
    view = x[:, 3:53]
    out = primer.row_softmax(view)
    assert out.is_contiguous() and torch.isfinite(out).all()
    torch.testing.assert_close(out, torch.softmax(view, dim=-1), atol=1e-6, rtol=1e-5)
    half = x[:, :33].half() / 1000
    torch.testing.assert_close(primer.row_softmax(half), torch.softmax(half.float(), -1).half(), atol=1e-3, rtol=1e-2)


def test_atomic_count_is_exact():
    assert primer.count_programs(300, atomic=True) == 300


@pytest.mark.skipif(not device.INTERPRET, reason="on a GPU the racy count is whatever the race gives")
def test_interpreter_hides_the_race():
    assert primer.count_programs(300, atomic=False) == 300


def test_tile_matmul_loads_a_transposed_view_through_its_strides():
    g = torch.Generator().manual_seed(4)
    a = torch.randn(32, 64, generator=g).to(DEV)
    bt = torch.randn(16, 64, generator=g).to(DEV)  # stored (N, K): b = bt.T is a view with strides (1, 64)
    torch.testing.assert_close(primer.tile_matmul(a, bt.T).double(), a.double() @ bt.T.double(), atol=1e-4, rtol=1e-5)
    with pytest.raises(ValueError, match="transposed view"):
        primer.tile_matmul(a, torch.randn(64, 32, device=DEV)[:, ::2])


def test_tile_matmul_ieee_is_float32_exact():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(32, 64, generator=g).to(DEV), torch.randn(64, 16, generator=g).to(DEV)
    torch.testing.assert_close(primer.tile_matmul(a, b, "ieee").double(), a.double() @ b.double(), atol=1e-4, rtol=1e-5)


@pytest.mark.skipif(not device.INTERPRET, reason="device_print goes to the process's stdout on a GPU")
def test_debug_row_max_prints_one_row(capsys):
    primer.debug_row_max(torch.arange(12.0, device=DEV).reshape(3, 4), watch_row=2)
    printed = capsys.readouterr().out
    assert "row max" in printed and "11" in printed and printed.count("row max") == 1


@pytest.mark.parametrize("call,error,message", [
    (lambda: primer.program_ids(0, 8), ValueError, "n must be"),
    (lambda: primer.program_ids(8, 24), ValueError, "block must be a power of two"),
    (lambda: primer.program_ids(8.0, 8), TypeError, "n must be an int, got float"),
    (lambda: primer.program_ids(8, True), TypeError, "block must be an int, got bool"),
    (lambda: primer.count_programs("4", True), TypeError, "n_programs must be an int"),
    (lambda: primer.vector_add([1.0], torch.ones(1)), TypeError, "x must be a torch.Tensor"),
    (lambda: primer.vector_add(torch.ones(2, 2), torch.ones(2, 2)), ValueError, r"x must have shape \(n,\)"),
    (lambda: primer.vector_add(torch.ones(4)[::2], torch.ones(2)), ValueError, "x must be contiguous"),
    (lambda: primer.vector_add(torch.ones(3), torch.ones(4)), ValueError, "one length"),
    (lambda: primer.vector_add(torch.ones(3), torch.ones(3).double()), TypeError, "one dtype"),
    (lambda: primer.vector_add(torch.ones(3), torch.ones(3, device="meta")), ValueError, "one device"),
    (lambda: primer.row_softmax(torch.ones(3, 3, dtype=torch.int32)), TypeError, "floating"),
    (lambda: primer.row_softmax(torch.ones(3)), ValueError, "2-D"),
    (lambda: primer.row_softmax(torch.ones(4, 3).t()), ValueError, "contiguous"),
    (lambda: primer.count_programs(0, True), ValueError, "n_programs"),
    (lambda: primer.tile_matmul(torch.ones(16, 16).double(), torch.ones(16, 16)), TypeError, "a must be a float32"),
    (lambda: primer.tile_matmul(torch.ones(16, 24), torch.ones(24, 16)), ValueError, "power-of-two sides"),
    (lambda: primer.tile_matmul(torch.ones(16, 32), torch.ones(16, 16)), ValueError, "a's columns"),
    (lambda: primer.tile_matmul(torch.ones(16, 16), torch.ones(16, 16), "fp16"), ValueError, "precision"),
    (lambda: primer.debug_row_max(torch.ones(2, 4), watch_row=2), ValueError, "watch_row"),
    (lambda: primer.debug_row_max(torch.ones(2, 4, dtype=torch.int64), watch_row=0), TypeError, "floating"),
    # Meta tensors have shapes but no memory: the size checks run before any launch.
    (lambda: primer.row_softmax(torch.empty(2**20, 2**12, device="meta")), ValueError, "int32 offsets"),
    (lambda: primer.vector_add(*[torch.empty(2**31, device="meta")] * 2), ValueError, "int32 offsets"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_bad_input_names_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_constexpr_source_resolves_flag_branches_like_the_compiler():
    import ast

    from pagedlab.kernels import flash_forward

    plain = primer.constexpr_source(flash_forward.fwd_tiles, MASK=False, TRACE=False, TMA=False)
    ast.parse(plain)  # still Python, indentation intact
    body = plain.split('"""')[-1]
    assert "tl.where" not in body and "if MASK" not in body and "tl.store" not in body and "desc" not in body
    assert "k = tl.load(k_ptrs + start_n * stride_kn)\n" in body  # the else: branch, dedented
    masked = primer.constexpr_source(flash_forward.fwd_tiles, MASK=True, TRACE=False, TMA=False)
    ast.parse(masked)
    assert "tl.where(keep, qk * qk_scale" in masked and "if CAUSAL:" in masked and "mask=cols" in masked
    with pytest.raises(ValueError, match="MASKED"):
        primer.constexpr_source(flash_forward.fwd_tiles, MASKED=False)
