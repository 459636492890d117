"""Wrong Triton kernels planted in solutions/ex03_triton_basics.ipynb: the vector add's masks, grid, program
offset and strides; the row softmax's masks, passes, rows and rescaling."""

from __future__ import annotations

import re

from planted import Plant

FIRST_PASS = """    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, 0))
        l = l * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m = m_new
"""
THREE_PASSES = """    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"))
        m = tl.maximum(m, tl.max(x, 0))
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"))
        l += tl.sum(tl.exp(x - m), 0)
"""

BUGS: dict[str, Plant] = {
    "store without mask": Plant(
        {"add-work": (
            ("tl.store(out_ptr + offsets, x + y, mask=mask)", "tl.store(out_ptr + offsets, x + y)"),
        )},
        1, re.escape("past the end of out")),
    "loads without mask": Plant(
        {"add-work": (
            ("x = tl.load(x_ptr + offsets * stride_x, mask=mask)", "x = tl.load(x_ptr + offsets * stride_x)"),
        )},
        1, re.escape("read 28 elements of x past n = 100 (indices 100 to 127)")),
    "grid n // block": Plant(
        {"add-work": (
            ("grid = (triton.cdiv(x.numel(), block),)", "grid = (x.numel() // block,)"),
        )},
        2, re.escape("the last, partial block, are wrong")),
    "no pid offset": Plant(
        {"add-work": (
            ("offsets = pid * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.arange(0, BLOCK)"),
        )},
        2, re.escape("pid * BLOCK")),
    "strides ignored": Plant(
        {"add-work": (
            ("x_ptr + offsets * stride_x", "x_ptr + offsets"),
            ("y_ptr + offsets * stride_y", "y_ptr + offsets"),
        )},
        3, re.escape("the strides were ignored")),
    "y's stride passed for x": Plant(
        {"add-work": (
            ("x.stride(0), y.stride(0)", "y.stride(0), y.stride(0)"),
        )},
        3, re.escape("read x with stride 2 and y with stride 2; x.stride(0) = 7")),
    "mask on the memory offset": Plant(
        {"add-work": (
            ("mask = offsets < n", "mask = offsets * stride_x < n"),
        )},
        3, re.escape("elements 0 to 7 are right and the rest wrong: 8 = ceil(n / stride_x)")),
    "softmax store without mask": Plant(
        {"softmax-work": (
            ("tl.exp(x - m) / l, mask=mask)", "tl.exp(x - m) / l)"),
        )},
        4, r"wrote 9 element\(s\) of out past n_cols = 13 .*columns \[13, 14, 15\] of rows \[0, 1, 2\]"),
    "softmax loads without mask": Plant(
        {"softmax-work": (
            (", mask=mask, other=float(\"-inf\"))", ")"),
        )},
        4, re.escape("read columns [13, 14, 15] of x, past n_cols = 13")),
    "three passes over the row": Plant(
        {"softmax-work": (
            (FIRST_PASS, THREE_PASSES),
        )},
        4, re.escape("read some elements of x 3 times")),
    "divide by max": Plant(
        {"softmax-work": (
            ("tl.exp(x - m) / l", "tl.exp(x - m) / m"),
        )},
        5, re.escape("divided by their sum")),
    "one tile only": Plant(
        {"softmax-work": (
            ("range(0, n_cols, BLOCK)", "range(0, BLOCK, BLOCK)"),
        )},
        6, re.escape("softmax of the first tile alone")),
    "running sum not rescaled": Plant(
        {"softmax-work": (
            ("l = l * tl.exp(m - m_new) + ", "l = l + "),
        )},
        6, re.escape("relative to the OLD max")),
    "padding loads 0": Plant(
        {"softmax-work": (
            ("other=float(\"-inf\")", "other=0.0"),
        )},
        7, re.escape("padding columns of the last tile were counted")),
    "rows n_cols apart": Plant(
        {"softmax-work": (
            ("x_ptr + row * stride_x", "x_ptr + row * n_cols"),
        )},
        4, re.escape("the program of row 1 read elements of row(s) [0] of x (rows of 13 columns, stride_x = 16)")),
    "x's rows read stride_out apart": Plant(
        {"softmax-work": (
            ("x_ptr + row * stride_x", "x_ptr + row * stride_out"),
        )},
        8, re.escape("stride_x = 64 apart")),
    "no max subtraction": Plant(
        {"softmax-work": (
            ("l = l * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)", "l = l + tl.sum(tl.exp(x), 0)"),
            ("tl.exp(x - m) / l", "tl.exp(x) / l"),
        )},
        9, re.escape("a score minus a max")),
    "mask off by one (offsets <= n)": Plant(
        {"add-work": (("mask = offsets < n", "mask = offsets <= n"),)},
        1, r"wrote 1 element\(s\) past the end of out \(n = 100\), at index 100\. Hint: only element n itself"),
    "running max starts at 0, not -inf": Plant(
        {"softmax-work": (('m = float("-inf")', "m = 0.0"),)},
        9, r"scores are all about -200.*NaN.*must start at -inf"),
    "running max and padding at -1e4, not -inf": Plant(
        {"softmax-work": (('m = float("-inf")', "m = -1e4"), ('other=float("-inf"))', "other=-1e4)")),},
        9, r"all below -1e30.*Start at -inf and pad with -inf"),
    "running sum rescaled the wrong way round (exp(m_new - m))": Plant(
        {"softmax-work": (("l = l * tl.exp(m - m_new)", "l = l * tl.exp(m_new - m)"),)},
        5, r"whole rows are NaN: the first tile already rescales the empty state"),
    "vector_add copies its inputs (.contiguous()), the copy the instructions forbid": Plant(
        {"add-work": (
            ("    grid = (triton.cdiv(x.numel(), block),)",
             "    x, y = x.contiguous(), y.contiguous()\n    grid = (triton.cdiv(x.numel(), block),)"),
        )},
        3, r"vector_add's result is right, but 100 of the 100 elements its kernel read lie outside the memory of x .*"
           r"it read a copy\. Hint: \.contiguous\(\)"),
    "the loops over the tiles one short (range(0, n_cols - 1, BLOCK))": Plant(
        {"softmax-work": (
            ("range(0, n_cols, BLOCK)", "range(0, n_cols - 1, BLOCK)"),
        )},
        7, r"your kernel never read columns 0 to 0 of a 1-column row: its loop over the tiles stops short"),
}
