"""pagedlab.validate: the rule for TypeError (wrong kind) and ValueError (wrong value), the tensor check, and
blocks_for."""

from __future__ import annotations

import math

import pytest
import torch

from pagedlab.validate import blocks_for, check_count, check_number, check_same_dtype, check_scale, check_tensor


@pytest.mark.parametrize("value, error", [(2.0, TypeError), (True, TypeError), ("3", TypeError), (0, ValueError),
                                          (-1, ValueError)])
def test_check_count_names_the_argument(value, error):
    with pytest.raises(error, match="block_size"):
        check_count("block_size", value, 1)


def test_check_count_returns_the_count():
    assert check_count("n", 0, 0) == 0 and check_count("n", 7, 1) == 7


@pytest.mark.parametrize("value, error", [("1", TypeError), (True, TypeError), (0.0, ValueError),
                                          (-1.0, ValueError), (math.inf, ValueError), (math.nan, ValueError)])
def test_check_scale_refuses_what_is_no_scale(value, error):
    with pytest.raises(error, match="sm_scale"):
        check_scale("sm_scale", value, 0.125)


def test_check_scale_returns_the_default_for_none():
    assert check_scale("scale", None, 0.125) == 0.125 and check_scale("scale", 2, 0.125) == 2.0


@pytest.mark.parametrize("value", [True, "0.5", None, [0.5]])
def test_check_number_refuses_what_is_no_number(value):
    with pytest.raises(TypeError, match="top_p must be a number"):
        check_number("top_p", value)


def test_check_number_returns_a_float():
    assert check_number("top_p", 1) == 1.0 and type(check_number("top_p", 1)) is float


class _T:
    def __init__(self, dtype):
        self.dtype = dtype


def test_a_dtype_mismatch_is_a_type_error_naming_both():
    check_same_dtype(q=_T("f32"), k=_T("f32"))
    with pytest.raises(TypeError, match="v has dtype f16 but q has f32"):
        check_same_dtype(q=_T("f32"), k=_T("f32"), v=_T("f16"))


@pytest.mark.parametrize("value, dims, error, message", [
    ([1.0, 2.0], 1, TypeError, "q must be a torch.Tensor, got list"),
    (torch.zeros(2, 3), 3, ValueError, r"q must have shape \(batch, seq, d\), got shape \(2, 3\)"),
    (torch.zeros(2, 3, 4), (2, 4), ValueError, r"got shape \(2, 3, 4\)"),
])
def test_check_tensor_names_the_argument_and_the_shape_expected(value, dims, error, message):
    with pytest.raises(error, match=message):
        check_tensor("q", value, dims, "(batch, seq, d)")


def test_check_tensor_returns_the_tensor_of_any_rank_allowed():
    for t in (torch.zeros(2, 3), torch.zeros(1, 2, 3, 4)):
        assert check_tensor("q", t, (2, 4), "(seq, d) or (batch, heads, seq, d)") is t


@pytest.mark.parametrize("n, bs, want", [(0, 16, 0), (1, 16, 1), (16, 16, 1), (17, 16, 2),
                                         (2**70 + 1, 2**10, 2**60 + 1)])
def test_blocks_for_is_the_exact_ceiling(n, bs, want):
    assert blocks_for(n, bs) == want


def test_blocks_for_counts_elementwise_on_a_tensor():
    counts = torch.tensor([0, 1, 16, 17, 33], dtype=torch.int32)
    assert blocks_for(counts, 16).tolist() == [0, 1, 1, 2, 3]
