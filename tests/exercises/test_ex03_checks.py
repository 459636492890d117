"""Exercise 3's checks, beyond its table of planted bugs: a store with an input's stride (which writes past `out` in
a real kernel, so it is not planted in this process) gets a hint that names the store, not the loads."""

import pytest
import torch

from pagedlab.exercise_checks import ex03


def test_a_strided_store_is_named_as_the_store():
    def stored_with_stride_7(x, y, block=64):
        out = torch.zeros(x.shape)
        out[::7] = (x + y)[:len(out[::7])]      # what a kernel storing at out_ptr + i * stride_x leaves inside out
        return out

    with pytest.raises(AssertionError, match=r"out\[::7\] holds the right sums: the store used a stride of 7"):
        ex03.check_strided_inputs(stored_with_stride_7)
