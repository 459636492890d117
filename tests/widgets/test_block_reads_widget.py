"""The picture of the decode kernel's block reads shows what the kernel's trace says, over the block tables."""

from __future__ import annotations

import re

import pytest
import torch

from pagedlab import device
from pagedlab.kernels.paged_attention import paged_decode_attention_traced
from pagedlab.widgets.block_reads import BlockReadsPicture


def traced():
    g = torch.Generator().manual_seed(0)
    k, v = (torch.randn(12, 16, 2, 16, generator=g).to(device.DEVICE) for _ in range(2))
    tables = torch.tensor([[3, 7, 1, 9, 11], [5, 0, -1, -1, -1]], dtype=torch.int32, device=device.DEVICE)
    lens = torch.tensor([70, 20], dtype=torch.int32, device=device.DEVICE)
    q = torch.randn(2, 4, 16, generator=g).to(device.DEVICE)
    _, reads = paged_decode_attention_traced(q, k, v, tables, lens, num_splits=2)
    return reads, tables.tolist()


def test_picture_marks_exactly_the_blocks_the_kernel_read():
    reads, tables = traced()
    svg = BlockReadsPicture(reads, tables, 12).to_svg()
    read = sorted(int(b) for b in re.findall(r'data-state="read" data-block="(\d+)"', svg))
    assert read == sorted([3, 7, 1, 9, 11, 5, 0])
    assert len(re.findall(r'data-state="unread"', svg)) == 12 - 7
    # Padding entries are drawn as padding, and no line leaves them.
    assert len(re.findall(r'data-state="padding"', svg)) == 3
    lines = re.findall(r'data-read="(\d+):(\d+):(\d+)"', svg)
    assert sorted((int(s), int(i)) for s, i, _ in lines) == [(0, i) for i in range(5)] + [(1, 0), (1, 1)]
    assert all(tables[int(s)][int(i)] == int(b) for s, i, b in lines)


def test_picture_shows_which_split_read_a_block():
    reads, tables = traced()
    # 70 tokens, key tile 32 (float32 traces use INTERPRET_BLOCK_N), 2 splits of 64 tokens: the last block is split 1's.
    svg = BlockReadsPicture(reads, tables, 12).to_svg()
    assert re.search(r'data-block="11" data-seq="0" data-split="1"', svg)
    assert re.search(r'data-block="3" data-seq="0" data-split="0"', svg)


def test_picture_checks_its_arguments():
    reads, tables = traced()
    with pytest.raises(ValueError, match="block_tables"):
        BlockReadsPicture(reads, tables[:1], 12)
    with pytest.raises(ValueError, match="kv_head"):
        BlockReadsPicture(reads, tables, 12, kv_head=2)
