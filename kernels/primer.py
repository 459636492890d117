"""The small kernels of the Triton primer (notebook 03): which program does what, a masked vector add,
and a fused row softmax.

Each kernel is a few lines that show one idea of Triton's programming model:

* :func:`program_ids`: a grid of programs, each owning one block of ``BLOCK`` elements;
* :func:`vector_add`: a mask for the ragged last block, so any length works;
* :func:`row_softmax`: one program per row, the whole row in registers, and strides to find the row:
  the max, the exponentials, the sum and the division are fused, so each element is read once and
  written once (``torch.softmax`` on a GPU does the same; a chain of separate PyTorch ops would not);
* :func:`tile_matmul`: 2-D blocks of pointers, a transposed load through strides, and ``tl.dot``.

:func:`constexpr_source` prints a kernel as the compiler sees it for given ``tl.constexpr`` flags, so a
lecture can show one specialization of a kernel (its unmasked loop, say) without the others.
"""

from __future__ import annotations

import inspect
import re

import torch
import triton
import triton.language as tl

from pagedlab import device  # noqa: F401  (decides compiled vs interpreted before @triton.jit runs)
from pagedlab.validate import check_count, check_tensor


def _check_vector(name: str, x: object) -> torch.Tensor:
    if not check_tensor(name, x, 1, "(n,)").is_contiguous():
        raise ValueError(f"{name} must be contiguous, got a view with stride {x.stride(0)}")
    return x


_INT32_LIMIT = 2**31 - 2**20
"""The kernels here compute offsets in int32 (``program_id`` is int32), to stay short: a tensor spanning 2**31
elements, less the padding lanes of one block (at most 2**20, Triton's largest block), would wrap around to
negative offsets that pass the mask. The FlashAttention kernels compute offsets in int64 instead."""


def _check_span(name: str, x: torch.Tensor) -> None:
    span = 1 + sum((size - 1) * stride for size, stride in zip(x.shape, x.stride()))
    if span > _INT32_LIMIT:
        raise ValueError(f"{name} spans {span} elements, more than the 2**31 - 2**20 these kernels' int32 offsets "
                         f"reach; split it")


def _check_block(block: object) -> int:
    if check_count("block", block, 1) & (block - 1):
        raise ValueError(f"block must be a power of two (tl.arange needs one), got {block}")
    return block


@triton.jit
def _program_ids_kernel(out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    # Without the mask the last program would write past the end of `out` whenever BLOCK does not divide n.
    tl.store(out_ptr + offsets, tl.zeros([BLOCK], tl.int32) + pid, mask=offsets < n)


def program_ids(n: int, block: int) -> torch.Tensor:
    """Which program handles each of ``n`` elements when programs own blocks of ``block``.

    Returns:
        (n,) int32 tensor on ``device.DEVICE``: element ``i`` holds ``i // block``, written by that program.

    Raises:
        TypeError: ``n`` or ``block`` not an int. ValueError: ``n`` < 1, or ``block`` not a power of two.
    """
    n = check_count("n", n, 1)
    block = _check_block(block)
    out = torch.full((n,), -1, dtype=torch.int32, device=device.DEVICE)
    _program_ids_kernel[(triton.cdiv(n, block),)](out, n, BLOCK=block)
    return out


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n  # the last block may stick out past the end
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def vector_add(x: torch.Tensor, y: torch.Tensor, block: int = 256) -> torch.Tensor:
    """``x + y`` with a Triton kernel: ``cdiv(n, block)`` programs, each adding one block.

    Args:
        x, y: contiguous 1-D tensors of one length, dtype and device.
        block: elements per program, a power of two.

    Returns:
        A new tensor like ``x``.

    Raises:
        TypeError: a non-tensor, different dtypes, or a ``block`` that is not an int.
        ValueError: not 1-D contiguous, different lengths or devices, a ``block`` that is not a power of two, or
            about 2**31 elements.
    """
    x, y = _check_vector("x", x), _check_vector("y", y)
    _check_span("x", x)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have one length, got {x.numel()} and {y.numel()}")
    if x.dtype != y.dtype:
        raise TypeError(f"x and y must have one dtype, got {x.dtype} and {y.dtype}")
    if x.device != y.device:
        raise ValueError(f"x and y must be on one device, got {x.device} and {y.device}")
    block = _check_block(block)
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block)
    return out


@triton.jit
def _row_softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # Padding columns load as -inf: they change neither the max nor (as exp(-inf) = 0) the sum.
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf")).to(tl.float32)
    z = x - tl.max(x, 0)  # subtract the row max so exp never overflows
    num = tl.exp(z)
    out = num / tl.sum(num, 0)
    tl.store(out_ptr + row * stride_out + cols, out.to(out_ptr.dtype.element_ty), mask=mask)


def row_softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax of each row of a 2-D tensor, fused into one Triton kernel (one program per row).

    Args:
        x: (rows, cols) floating tensor; rows may be strided (a slice of a bigger matrix), the elements
            of a row must be contiguous. The whole row is one block, so cols is limited to 2**16.

    Returns:
        A new contiguous (rows, cols) tensor of ``x``'s dtype (computed in float32).

    Raises:
        TypeError: not a floating tensor. ValueError: not 2-D, empty, a row not contiguous, too wide, or
            spanning about 2**31 elements.
    """
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"x must be a floating torch.Tensor, got {type(x).__name__}"
                        + (f" of dtype {x.dtype}" if isinstance(x, torch.Tensor) else ""))
    if x.dim() != 2 or x.numel() == 0:
        raise ValueError(f"x must be a non-empty 2-D tensor (rows, cols), got shape {tuple(x.shape)}")
    if x.stride(1) != 1:
        raise ValueError(f"the elements of each row of x must be contiguous (stride 1), got strides {x.stride()}")
    if x.shape[1] > 2**16:
        raise ValueError(f"x has {x.shape[1]} columns; one row must fit in one block (at most {2**16})")
    _check_span("x", x)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(x.shape[1])
    _row_softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out


@triton.jit
def _count_kernel(counter_ptr, ATOMIC: tl.constexpr):
    if ATOMIC:
        tl.atomic_add(counter_ptr, 1)
    else:
        # Read, add, write: two programs that read the same old value both write old + 1, and one
        # increment is lost. Nothing orders programs on a GPU; the interpreter runs them one by one.
        tl.store(counter_ptr, tl.load(counter_ptr) + 1)


def count_programs(n_programs: int, atomic: bool) -> int:
    """Launch ``n_programs`` programs that each add 1 to one shared counter; return the final count.

    With ``atomic=False`` each program reads, adds and writes: a data race. In the interpreter the
    programs run one after another, so the count is always right; on a GPU they run at once and
    increments get lost. ``atomic=True`` uses ``tl.atomic_add``, right everywhere.

    Raises:
        TypeError: ``n_programs`` not an int. ValueError: ``n_programs`` < 1.
    """
    check_count("n_programs", n_programs, 1)
    counter = torch.zeros(1, dtype=torch.int32, device=device.DEVICE)
    _count_kernel[(n_programs,)](counter, ATOMIC=bool(atomic))
    return int(counter.item())


@triton.jit
def _tile_matmul_kernel(a_ptr, b_ptr, c_ptr, stride_bk, stride_bn, M: tl.constexpr, N: tl.constexpr,
                        K: tl.constexpr, PRECISION: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    # A 2-D block of addresses: a column of row offsets plus a row of column offsets, broadcast to (M, K).
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    # B through its strides: for a transposed view (stride_bk = 1) this is a transposed load, no copy.
    b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, input_precision=PRECISION))


def tile_matmul(a: torch.Tensor, b: torch.Tensor, precision: str = "ieee") -> torch.Tensor:
    """``a @ b`` for one tile, in one program, with ``tl.dot`` at the given ``input_precision``.

    ``"tf32"`` lets the GPU's tensor cores round fp32 inputs to 10 mantissa bits (errors near 1e-3);
    ``"ieee"`` keeps full fp32. The interpreter computes both exactly in NumPy, so on a CPU they agree.
    ``b`` may be a transposed view (``bt.T`` of a contiguous ``bt``): the kernel then loads it transposed
    through its strides, as the FlashAttention kernel loads K.

    Args:
        a: (M, K) contiguous float32; b: (K, N) float32, contiguous or a transposed view of a contiguous
            tensor; M, N, K powers of two from 16 to 128.
        precision: ``"ieee"`` or ``"tf32"``.

    Raises:
        TypeError: not float32 tensors. ValueError: bad shapes, layouts or precision.
    """
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor) or t.dtype != torch.float32:
            raise TypeError(f"{name} must be a float32 torch.Tensor")
        if t.dim() != 2 or any(s < 16 or s > 128 or s & (s - 1) for s in t.shape):
            raise ValueError(f"{name} must be a 2-D tile with power-of-two sides from 16 to 128, "
                             f"got shape {tuple(t.shape)}")
    if not a.is_contiguous() or not (b.is_contiguous() or b.t().is_contiguous()):
        raise ValueError("a must be contiguous and b contiguous or a transposed view of a contiguous tensor, "
                         f"got strides a {a.stride()}, b {b.stride()}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"a is {tuple(a.shape)} and b is {tuple(b.shape)}: a's columns must match b's rows")
    if precision not in ("ieee", "tf32"):
        raise ValueError(f"precision must be 'ieee' or 'tf32', got {precision!r}")
    c = torch.empty((a.shape[0], b.shape[1]), dtype=torch.float32, device=a.device)
    _tile_matmul_kernel[(1,)](a, b, c, *b.stride(), M=a.shape[0], N=b.shape[1], K=a.shape[1], PRECISION=precision)
    return c


@triton.jit
def _row_max_debug_kernel(x_ptr, n_cols, stride_x, watch_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=float("-inf"))
    # Print from one program only: all of them printing at once is unreadable.
    if row == watch_row:
        tl.device_print("row max ", tl.max(x, 0))


def debug_row_max(x: torch.Tensor, watch_row: int) -> None:
    """Launch one program per row of ``x`` and have only program ``watch_row`` print its row max.

    ``tl.device_print`` prints from inside a kernel. In the interpreter it prints like ``print``; on a GPU
    the device writes to the process's standard output when the kernel ends, which Jupyter shows in the
    notebook (perhaps under a later cell) or only in the terminal that runs it.

    Raises:
        TypeError: ``x`` not a floating tensor, ``watch_row`` not an int.
        ValueError: ``x`` not non-empty and 2-D with contiguous rows, or ``watch_row`` not one of its rows.
    """
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"x must be a floating torch.Tensor, got {type(x).__name__}")
    if x.dim() != 2 or x.numel() == 0 or x.stride(1) != 1:
        raise ValueError(f"x must be a non-empty 2-D tensor whose rows are contiguous, got shape {tuple(x.shape)}")
    if isinstance(watch_row, bool) or not isinstance(watch_row, int):
        raise TypeError(f"watch_row must be an int, got {type(watch_row).__name__}")
    if not 0 <= watch_row < x.shape[0]:
        raise ValueError(f"watch_row must be a row of x (0 to {x.shape[0] - 1}), got {watch_row}")
    _row_max_debug_kernel[(x.shape[0],)](x, x.shape[1], x.stride(0), watch_row,
                                         BLOCK=triton.next_power_of_2(x.shape[1]))
    device.synchronize()


def constexpr_source(kernel, **flags: bool) -> str:
    """The source of ``kernel`` with its ``if FLAG:`` / ``else:`` branches on the given ``tl.constexpr`` flags
    resolved, as the compiler resolves them (a branch on a constexpr is decided at compile time).

    Only branches whose whole condition is one flag name are resolved: ``if MASK:`` keeps its body when
    ``MASK=True`` and its ``else:`` body (dedented) when ``False``. Comments and other lines are kept.

    Args:
        kernel: a ``@triton.jit`` function (or a plain function). flags: ``NAME=True/False``.

    Returns:
        The resolved source, a string.

    Raises:
        ValueError: a flag the source never branches on (a typo would otherwise print the kernel unchanged).
    """
    lines = inspect.getsource(getattr(kernel, "fn", kernel)).splitlines()
    for name in flags:
        if not any(re.fullmatch(rf"\s*if {name}:", line) for line in lines):
            raise ValueError(f"the source never branches on `if {name}:`; flags given: {sorted(flags)}")

    def block_end(start: int, indent: int) -> int:
        end = start
        while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
            end += 1
        return end

    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        match = re.fullmatch(r"(\s*)if (\w+):", line)
        if not match or match.group(2) not in flags:
            out.append(line)
            i += 1
            continue
        indent = len(match.group(1))
        body_end = block_end(i + 1, indent)
        body, rest = lines[i + 1:body_end], []
        if body_end < len(lines) and lines[body_end] == " " * indent + "else:":
            else_end = block_end(body_end + 1, indent)
            rest, body_end = lines[body_end + 1:else_end], else_end
        chosen = body if flags[match.group(2)] else rest
        # Put the chosen branch back in place, dedented, so that branches nested in it are resolved too.
        lines[i:body_end] = [text[4:] if text.strip() else text for text in chosen]
    return "\n".join(out) + "\n"
