"""Exercise 3's checks: a vector add over strided inputs and a tiled (online) row softmax in Triton.

The input space the instructions state: ``vector_add(x, y, block)``: 1-D float32 ``x`` and ``y`` of the same length
``n`` >= 1 (1, one short of a block, a block, one past it, many blocks), each with any stride (contiguous, a column of
a matrix, every other element), read where they are (no copy), ``out`` contiguous; ``softmax(x, block)``: 2-D
float32 ``x`` of any number of rows and of columns >= 1 (one tile, exactly k tiles, a partial last tile, one column),
rows any stride apart (a slice of a wider matrix), scores of any size (near +-1000, all about -200, all below -1e30).
Nothing is read
or written past ``n`` or ``n_cols``, and each element is read at most twice.
"""

from __future__ import annotations

import numpy as np
import torch

from .. import device  # before triton: it decides TRITON_INTERPRET, which triton.language reads when imported
from ..checks import assert_close, differing_rows
from ..validate import blocks_for
from .ex09 import kernel_error as _kernel_error
from .triton_reads import elements, interpreted, recorded

import triton  # noqa: E402 - after pagedlab.device (above)

_RUNS = {"any length": 0, "strided": 0}
"""How many times each vector-add check ran in this process. Each run draws other inputs: an element the kernel never
stores keeps whatever its buffer held, and ``torch.empty`` often hands back the buffer of the last call, which held
the last call's (right) answer when the inputs were the same."""


def check_nothing_written_past_n(add_kernel) -> None:
    """Check 1: vector add, nothing written (nor read) past the end."""
    __tracebackhide__ = True
    n, block, sentinel = 100, 64, -7.0
    x_buf = torch.ones(2 * block, device=device.DEVICE)      # room past n, so unmasked loads stay in memory we own
    y_buf = torch.ones(2 * block, device=device.DEVICE)
    out_buf = torch.full((2 * block,), sentinel, device=device.DEVICE)
    add_kernel[(triton.cdiv(n, block),)](x_buf, y_buf, out_buf, n, 1, 1, BLOCK=block)
    written = [n + int(i) for i in (out_buf[n:] != sentinel).nonzero().flatten().tolist()]
    assert not written, (
        f"add_kernel wrote {len(written)} element(s) past the end of out (n = {n}), at {_indices(written)}. "
        f"Hint: {_past_end_hint(written, n, 'n', 'lanes of the last block')}")
    # The loads, recorded in Triton's interpreter (on the CPU, on any machine): the lanes past n must not read.
    x, y, out = (t.cpu() for t in (x_buf, y_buf, out_buf))
    with recorded(add_kernel) as (kernel, reads):
        kernel[(triton.cdiv(n, block),)](x, y, out, n, 1, 1, BLOCK=block)
    for name, tensor in (("x", x), ("y", y)):
        past = sorted({int(i) for loads in reads.values() for a in loads for i in elements(a, tensor)[:, 0]
                       if i >= n})
        assert not past, (
            f"add_kernel read {len(past)} elements of {name} past n = {n} (indices {past[0]} to {past[-1]}): in "
            f"memory that belongs to something else, that read can crash or return garbage. Hint: the loads need "
            f"the mask too, not only the store.")


def _indices(where: list[int]) -> str:
    """``index 100`` or ``indices [100, 101, 102]`` (the first 8), as written."""
    return f"index {where[0]}" if len(where) == 1 else f"indices {where[:8]}" + (" ..." if len(where) > 8 else "")


def _past_end_hint(where: list[int], n: int, name: str, lanes: str) -> str:
    """Why elements from ``n`` on were written: only element ``n`` itself is a mask off by one, else no mask."""
    if where == [n]:
        return (f"only element {name} itself was written, one past the last: the mask keeps offsets < {name}, and "
                f"offset {name} is already past the end (an off-by-one, <= instead of <).")
    return f"the store needs a mask, so that the {lanes} past {name} write nothing."


def check_any_length(vector_add) -> None:
    """Check 2: vector add, any length (contiguous inputs)."""
    __tracebackhide__ = True

    def add_hint(got, want, block):
        wrong = (got != want).nonzero().flatten().tolist()
        n_full = (len(want) // block) * block
        if wrong and wrong[0] >= n_full:
            return (f"elements {n_full} to {len(want) - 1}, the last, partial block, are wrong: the grid must cover "
                    f"all n elements, a partial block included (n // BLOCK rounds down)")
        if wrong and wrong[0] >= block:
            return "the first block is right and a later one is not: program pid handles the elements from pid * BLOCK"
        return "even the first block is wrong: out[i] = x[i] + y[i], loaded and stored at the same offsets"

    for n in [1, 17, 64, 1000]:
        _RUNS["any length"] += 1
        x = torch.arange(n, dtype=torch.float32, device=device.DEVICE)
        y = (1000 + _RUNS["any length"]) * torch.ones(n, device=device.DEVICE)
        got = vector_add(x, y)
        want = x + y                  # after the call, so that the kernel cannot be handed this buffer
        assert_close(got, want, name=f"vector_add with n = {n}", hint=add_hint(got.cpu(), want.cpu(), 64))


def check_strided_inputs(vector_add) -> None:
    """Check 3: vector add, strided inputs: a column of a matrix plus every other element of a vector."""
    __tracebackhide__ = True
    n, block = 50, 16
    _RUNS["strided"] += 1
    g = torch.Generator().manual_seed(3 + _RUNS["strided"])
    matrix = torch.randn(n, 7, generator=g).to(device.DEVICE)
    vector = torch.randn(2 * n, generator=g).to(device.DEVICE)
    x, y = matrix[:, 3], vector[::2]                          # strides 7 and 2
    got = vector_add(x, y, block)
    want = (x + y).cpu()                                      # after the call, as in check 2
    if got.shape == want.shape:
        got_cpu, flat_m, flat_v = got.cpu(), matrix.flatten().cpu(), vector.cpu()
        # x and y read with a stride s of 1, 2 or 7, wherever that stays inside their buffers
        xs = {st: flat_m[3::st][:n] for st in (1, 2, 7)}
        ys = {st: flat_v[::st][:n] for st in (1, 2, 7) if (n - 1) * st < 2 * n}
        wrong = (~torch.isclose(got_cpu, want, atol=1e-6)).nonzero().flatten().tolist()
        read_as = next(((sx, sy) for sx in xs for sy in ys
                        if (sx, sy) != (7, 2) and torch.allclose(got_cpu, xs[sx] + ys[sy], atol=1e-6)), None)
        # out stored with an input's stride: element i went to out[i * s], so out[::s] begins with the right sums
        stored_as = next((st for st in (7, 2) if torch.allclose(got_cpu[::st], want[:len(got_cpu[::st])],
                                                                atol=1e-6)), None)
        if stored_as:
            hint = (f"out[::{stored_as}] holds the right sums: the store used a stride of {stored_as}. out is "
                    f"contiguous (vector_add creates it): element i is stored at out_ptr + i; only the loads of x "
                    f"and y need their strides.")
        elif read_as == (1, 1):
            hint = ("your result is the sum of the n elements that follow x's and y's first ones in memory: the "
                    "strides were ignored. Element i of x lies i * stride_x elements after element 0.")
        elif read_as:
            hint = (f"your kernel read x with stride {read_as[0]} and y with stride {read_as[1]}; x.stride(0) = 7 and "
                    f"y.stride(0) = 2 here: each input has its own stride, and each load needs its own.")
        elif wrong and wrong[0] == (n // block) * block and torch.allclose(got_cpu[:wrong[0]], want[:wrong[0]]):
            hint = (f"elements 0 to {wrong[0] - 1} are right and {wrong[0]} to {n - 1}, the last, partial block of "
                    f"{block}, are wrong: the grid must cover all n elements (n // block rounds down; "
                    f"triton.cdiv(n, block) rounds up).")
        elif wrong and wrong[0] == blocks_for(n, 7) and all(i >= blocks_for(n, 7) for i in wrong):
            hint = (f"elements 0 to {wrong[0] - 1} are right and the rest wrong: {wrong[0]} = ceil(n / stride_x). The "
                    f"mask decides which ELEMENTS exist, so it compares the element index with n, not the memory "
                    f"offset i * stride_x.")
        elif wrong and all(i >= blocks_for(n, 2) for i in wrong):
            hint = (f"elements 0 to {wrong[0] - 1} are right and the rest wrong: the mask compares a memory offset "
                    f"(i * stride) with n, where it should compare the element index.")
        else:
            hint = f"elements {wrong[:8]} are wrong: element i of each input lies i * its stride after its first."
    else:
        hint = ""
    assert_close(got, want, name="vector_add(m[:, 3], v[::2]) with strides 7 and 2 (n = 50, block 16)", hint=hint)
    _assert_reads_in_place(vector_add, matrix.cpu(), vector.cpu(), block)


def _kernel_of(launcher):
    """The ``@triton.jit`` kernel that ``launcher`` launches by its global name (the first one it names)."""
    for name in launcher.__code__.co_names:
        found = launcher.__globals__.get(name)
        if hasattr(found, "fn") and hasattr(found, "__getitem__"):
            return found
    return None


def _assert_reads_in_place(vector_add, matrix: torch.Tensor, vector: torch.Tensor, block: int) -> None:
    """The stated requirement the results cannot show: ``vector_add`` reads ``x`` and ``y`` where they are. Its
    kernel runs in Triton's interpreter on CPU tensors, and every element its loads read must lie in the memory of
    ``x``'s matrix or ``y``'s vector, not in a copy (``.contiguous()``, ``.clone()``)."""
    __tracebackhide__ = True
    kernel = _kernel_of(vector_add)
    if kernel is None:
        return          # no kernel launched by a global name: check 3's comparison already judged the result
    x, y = matrix[:, 3], vector[::2]
    with interpreted(vector_add, kernel) as reads:
        vector_add(x, y, block)
    spans = {"x": (matrix.data_ptr(), matrix.data_ptr() + matrix.numel() * 4),
             "y": (vector.data_ptr(), vector.data_ptr() + vector.numel() * 4)}
    addresses = np.concatenate([a for loads in reads.values() for a in loads] or [np.zeros(0, np.uint64)])
    elsewhere = [a for a in addresses.tolist() if not any(lo <= a < hi for lo, hi in spans.values())]
    assert not elsewhere, (
        f"vector_add's result is right, but {len(elsewhere)} of the {len(addresses)} elements its kernel read lie "
        f"outside the memory of x (a column of a 50 x 7 matrix) and y (every other element of a vector): it read a "
        f"copy. Hint: .contiguous() (or .clone(), .to()) on a strided input copies it, one more pass over memory for "
        f"a kernel whose whole cost is moving memory; pass x and y themselves, with x.stride(0) and y.stride(0).")


def check_nothing_written_past_n_cols(softmax_kernel) -> None:
    """Check 4: row softmax, nothing read or written past n_cols, and each element read at most twice."""
    __tracebackhide__ = True
    rows, n_cols, block, sentinel = 3, 13, 8, -7.0
    width = 2 * block                                          # rows padded to whole tiles: stray accesses stay inside
    x_buf = torch.zeros(rows, width, device=device.DEVICE)
    x_buf[:, :n_cols] = torch.randn(rows, n_cols, device=device.DEVICE)
    out_buf = torch.full((rows, width), sentinel, device=device.DEVICE)
    softmax_kernel[(rows,)](x_buf, out_buf, n_cols, width, width, BLOCK=block)
    written = (out_buf[:, n_cols:] != sentinel).nonzero().tolist()
    assert not written, (
        f"softmax_kernel wrote {len(written)} element(s) of out past n_cols = {n_cols} (rows of {n_cols} columns in "
        f"tiles of {block}): columns {sorted({n_cols + c for _, c in written})} of rows "
        f"{sorted({r for r, _ in written})}. Hint: "
        f"{_past_end_hint(sorted({n_cols + c for _, c in written}), n_cols, 'n_cols', 'lanes of the last tile')}")
    x, out = x_buf.cpu(), torch.full((rows, width), sentinel)
    with recorded(softmax_kernel) as (kernel, reads):
        kernel[(rows,)](x, out, n_cols, width, width, BLOCK=block)
    read = {pid[0]: elements(np.concatenate(loads), x) for pid, loads in reads.items() if loads}
    for row, where in sorted(read.items()):
        others = sorted({int(r) for r in where[:, 0] if r != row})
        assert not others, (
            f"the program of row {row} read elements of row(s) {others} of x (rows of {n_cols} columns, "
            f"stride_x = {width}). Hint: row `row` of x starts row * stride_x elements after x_ptr.")
    past = sorted({int(c) for where in read.values() for c in where[:, 1] if c >= n_cols})
    assert not past, (
        f"softmax_kernel read columns {past} of x, past n_cols = {n_cols}: in memory that belongs to something "
        f"else, that read can crash or return garbage. Hint: the loads need the mask too, not only the store.")
    everything = np.concatenate([where for where in read.values()] or [np.zeros((0, 2), np.int64)])
    times = np.unique(everything[:, 0] * width + everything[:, 1], return_counts=True)[1].max(initial=0)
    assert times <= 2, (
        f"softmax_kernel read some elements of x {times} times: a pass for the max and the sum, and one to write, "
        f"read each element twice at most.")


def error_hint(exc: BaseException) -> str:
    """The hint for an error raised by a kernel: about shapes only for a shape error."""
    return _kernel_error(exc)


def _tiled(x: torch.Tensor, block: int, rescale: bool) -> torch.Tensor:
    """A tiled softmax of ``x``'s rows in float64, its running sum rescaled or not when the max rises."""
    x = x.double()
    m = torch.full((x.shape[0],), float("-inf"), dtype=torch.float64)
    l = torch.zeros(x.shape[0], dtype=torch.float64)
    for start in range(0, x.shape[1], block):
        tile = x[:, start:start + block]
        m_new = torch.maximum(m, tile.max(-1).values)
        l = (l * torch.exp(m - m_new) if rescale else l) + torch.exp(tile - m_new[:, None]).sum(-1)
        m = m_new
    return (torch.exp(x - m[:, None]) / l[:, None]).float()


def _assert_softmax(softmax, x: torch.Tensor, block: int, what: str, hint) -> None:
    """Compare ``softmax(x, block)`` with ``torch.softmax``; ``hint(got, want)`` explains a difference."""
    __tracebackhide__ = True
    got = softmax(x, block)
    want = torch.softmax(x, dim=-1)
    bad_rows = differing_rows(got, want, atol=1e-5, rtol=1e-4) if got.shape == want.shape else []
    text = hint(got.cpu(), want.cpu()) if bad_rows else ""
    assert_close(got, want, atol=1e-5, rtol=1e-4, name=f"softmax of {what}",
                 hint=f"rows {bad_rows[:6]} differ. {text}" if bad_rows else text)


def _sums(got: torch.Tensor) -> list[float]:
    return [round(v, 4) for v in got.sum(-1).tolist()]


def check_one_tile(softmax) -> None:
    """Check 5: row softmax, rows of exactly one tile."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(0)

    def hint(got, want):
        if torch.isnan(got).all(-1).any():
            return ("one tile per row and no padding, yet whole rows are NaN: the first tile already rescales the "
                    "empty state (l = 0, max -inf). exp(old max - new max) = exp(-inf) = 0 is right; the other way "
                    "round, exp(new max - old max) = exp(+inf) = inf, and 0 * inf is NaN.")
        return (f"one tile per row and no padding; your rows sum to {_sums(got)}: the softmax is the exponentials of "
                f"x minus the row max, divided by their sum.")

    _assert_softmax(softmax, torch.randn(6, 16, generator=g).to(device.DEVICE), 16, "a 6 x 16 matrix, block 16", hint)


def check_several_tiles(softmax) -> None:
    """Check 6: row softmax, rows of several tiles whose max rises from tile to tile."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(5)
    block, cols = 16, 64
    ramp = torch.arange(cols // block).repeat_interleave(block).float()   # tile t is about 2t higher than tile 0
    x = torch.randn(4, cols, generator=g) + 2 * ramp

    def hint(got, want):
        if torch.allclose(got[:, :block], torch.softmax(x[:, :block], -1), atol=1e-5):
            return (f"your first {block} columns are the softmax of the first tile alone: the max and the sum "
                    f"must cover all {cols // block} tiles of the row, in a loop over the tiles.")
        if torch.allclose(got, _tiled(x, block, rescale=False), atol=1e-5, rtol=1e-4):
            return (f"your rows sum to {_sums(got)}, less than 1, and this row's max rises from tile to tile: the "
                    f"terms summed before a tile raised the max were exponentials relative to the OLD max, and were "
                    f"added to the sum unchanged.")
        if torch.allclose(got[:, -block:], torch.softmax(x[:, -block:], -1), atol=1e-5):
            return "your last tile is the softmax of that tile alone: the running max and sum carry over the tiles."
        return (f"{cols} columns in tiles of {block}: one tile alone passed check 5, so the state carried from tile "
                f"to tile (the running max and sum) or the second pass is what differs; your rows sum to "
                f"{_sums(got)}.")

    _assert_softmax(softmax, x.to(device.DEVICE), block, f"a 4 x {cols} matrix in tiles of {block}, its max rising "
                                                         f"from tile to tile", hint)


def check_any_columns(softmax) -> None:
    """Check 7: row softmax, any number of columns (a partial last tile)."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(1)

    def hint(got, want):
        short = _unread_columns(softmax, got.shape[1], 16)
        if short:
            return (f"your kernel never read columns {short[0]} to {short[-1]} of a {got.shape[1]}-column row: its "
                    f"loop over the tiles stops short. range(0, n_cols, BLOCK) starts a tile at every multiple of "
                    f"BLOCK below n_cols, the last, partial one included.")
        if torch.isnan(got).any():
            return ("NaN, with rows of whole tiles right (checks 5 and 6): the partial last tile made it. Its padding "
                    "columns took part in the max or the sum with values that are not -inf (garbage), or an exponent "
                    "of the tile was -inf - (-inf).")
        if all(v < 0.9999 for v in _sums(got)):
            return (f"your rows sum to {_sums(got)}, less than 1: the padding columns of the last tile were counted "
                    f"in the sum. Load them as a value whose exponential is 0 and which never wins the max.")
        return ("the columns past n_cols are padding: they change neither the max nor the sum, and are not stored.")

    for cols in [1, 5, 33, 100]:
        _assert_softmax(softmax, (torch.randn(4, cols, generator=g) - 3).to(device.DEVICE), 16,
                        f"a 4 x {cols} matrix in tiles of 16", hint)


def _unread_columns(softmax, n_cols: int, block: int) -> list[int]:
    """The columns of a 1 x ``n_cols`` row that ``softmax``'s kernel never read (in Triton's interpreter)."""
    kernel = _kernel_of(softmax)
    if kernel is None:
        return []
    x = torch.randn(1, n_cols)
    with interpreted(softmax, kernel) as reads:
        softmax(x, block)
    read = {int(c) for loads in reads.values() for a in loads for c in elements(a, x)[:, 1]}
    return [c for c in range(n_cols) if c not in read]


def check_strided_rows(softmax) -> None:
    """Check 8: row softmax, strided rows."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(2)
    wide = torch.randn(5, 64, generator=g).to(device.DEVICE)
    x = wide[:, :40]
    packed = torch.softmax(wide.flatten()[:200].reshape(5, 40), dim=-1).cpu()

    def hint(got, want):
        if torch.allclose(got, packed, atol=1e-5):
            return ("your rows are those of the memory read as if rows were n_cols = 40 apart; they are "
                    "stride_x = 64 apart (a slice keeps its parent's stride).")
        padded = torch.cat([x.cpu(), torch.zeros(5, 48 - 40)], dim=1)      # the last tile's 8 padding columns as 0
        if torch.allclose(got, torch.softmax(padded, -1)[:, :40], atol=1e-5):
            return ("your rows are the softmax of each row with the 8 padding columns of its last tile counted as "
                    "zeros: the padding must load as -inf (exp(-inf) = 0, and it never wins the max).")
        return "row `row` starts stride_x elements after row 0, and out's rows stride_out apart."

    _assert_softmax(softmax, x, 16, "x[:, :40] of a 5 x 64 matrix (rows 64 apart), in tiles of 16", hint)


def check_large_scores(softmax) -> None:
    """Check 9: row softmax, large scores."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(3)
    big = 1000 * torch.randn(4, 40, generator=g).to(device.DEVICE)
    got = softmax(big, 16)
    assert torch.isfinite(got).all(), (
        f"softmax of scores near 1000, in tiles of 16, gave {(~torch.isfinite(got)).sum().item()} NaN or inf values: "
        f"exp(1000) overflows float32. Hint: every exponent must be a score minus a max, so that it is <= 0.")
    _assert_softmax(softmax, big, 16, "scores near +-1000 in tiles of 16",
                    lambda got, want: "every exponent must be a score minus a max, so that it is <= 0.")
    low = (torch.randn(4, 40, generator=g) - 200).to(device.DEVICE)       # every score of every row about -200
    got = softmax(low, 16)
    assert torch.isfinite(got).all(), (
        f"softmax of rows whose scores are all about -200, in tiles of 16, gave "
        f"{(~torch.isfinite(got)).sum().item()} NaN or inf values (scores near +-1000 passed). Hint: the running max "
        f"must start at -inf; started at 0 (or any finite value above the scores), it stays there for a row whose "
        f"scores are all lower, every exp(score - max) underflows to 0, and the sum is 0: 0 / 0.")
    _assert_softmax(softmax, low, 16, "rows whose scores are all about -200, in tiles of 16",
                    lambda got, want: "the running max starts at -inf and is the row's own maximum at the end.")
    # every score below -1e30 (round 38z36: a running max started at -1e4, the padding loaded as -1e4): exact in
    # float32, the softmax of such a row is 1 / (how many maxima) at its maxima and 0 elsewhere
    lowest = -1e35 * (1 + torch.tensor([[0.0, 2, 1, 3] * 10, [2.0, 1, 3, 1, 2] * 8, [4.0, 3, 1, 2, 1] * 8]))
    floor = ("any finite start for the running max, or value for the padding (-1e4, -1e30), sits above such a row: it "
             "stays the max, and every exp(score - max) underflows to 0 (a sum of 0, or of the padding's terms alone). "
             "Start at -inf and pad with -inf.")
    got = softmax(lowest.to(device.DEVICE), 16)
    assert torch.isfinite(got).all(), (
        f"softmax of rows whose scores are all below -1e30, in tiles of 16, gave {(~torch.isfinite(got)).sum().item()} "
        f"NaN or inf values (rows about -200 passed). Hint: {floor}")
    _assert_softmax(softmax, lowest.to(device.DEVICE), 16, "rows whose scores are all below -1e30, in tiles of 16",
                    lambda got, want: floor)


def check_over_the_space(vector_add, softmax) -> None:
    """Check 10: both functions against torch on inputs drawn from the stated space (the module docstring), seeded,
    boundaries included: lengths around a block, every stride pairing, columns around a tile, strided rows. The
    first input where yours differs is named."""
    __tracebackhide__ = True
    g = torch.Generator().manual_seed(10)
    for n in (1, 15, 16, 17, 100):
        for sx, sy in ((1, 1), (3, 1), (1, 2), (5, 3)):
            x = torch.randn(n * sx, generator=g).to(device.DEVICE)[::sx]
            y = torch.randn(n * sy, generator=g).to(device.DEVICE)[::sy]
            got = vector_add(x, y, 16)
            assert_close(got, x + y, name=f"vector_add of n = {n}, strides {sx} and {sy}, block 16",
                         hint="element i of each input lies i * its stride after its first; out[i] at out_ptr + i.")
    for rows, cols, width in ((1, 1, 1), (3, 15, 15), (2, 16, 20), (3, 17, 17), (2, 33, 40), (1, 100, 128)):
        x = (3 * torch.randn(rows, width, generator=g)).to(device.DEVICE)[:, :cols]
        _assert_softmax(softmax, x, 16, f"a {rows} x {cols} matrix (rows {width} apart) in tiles of 16",
                        lambda got, want: "the max and the sum cover every tile of the row, the partial last one "
                                          "included, and rows lie stride_x apart.")
