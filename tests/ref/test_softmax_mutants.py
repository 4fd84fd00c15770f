"""Tests written against the survivors of a mutation run of ref/softmax.py (issue 35, item 2).

What a user sees: the error names ``x``; float16 rows are as exact as float16 can hold (the sum
is taken in float32); rows that overflow on the way or hold +inf give their answer without a
RuntimeWarning. Oracle: torch in float64.
"""

import warnings

import numpy as np
import pytest
import torch

from attnlab.ref import softmax


def _torch64(x, axis=-1):
    return torch.softmax(torch.from_numpy(np.asarray(x, np.float64)), dim=axis).numpy()


def test_integer_input_error_names_x():
    with pytest.raises(TypeError) as err:
        softmax(np.arange(3))
    assert str(err.value).startswith("x must be a floating-point array")


def test_float16_long_rows_are_rounded_once_from_float32():
    # summing 4000 float16 terms in float16 loses several ulps; the float32 sum does not
    x = np.random.default_rng(0).standard_normal((4, 4000)).astype(np.float16)
    got = softmax(x)
    assert got.dtype == np.float16
    want = _torch64(x.astype(np.float64)).astype(np.float16)
    ulps = np.abs(got.view(np.int16).astype(int) - want.view(np.int16).astype(int))
    assert ulps.max() <= 1


def test_huge_spread_row_overflows_silently_to_one_hot():
    x = np.array([[1e308, -1e308, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = softmax(x)
    np.testing.assert_array_equal(got, [[1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(got, _torch64(x))


def test_plus_inf_row_is_nan_without_a_warning_and_other_rows_untouched():
    x = np.array([[np.inf, 0.0], [1.0, 2.0], [-np.inf, -np.inf]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = softmax(x)
    assert np.isnan(got[0]).all()
    np.testing.assert_allclose(got[1], _torch64(x[1]), rtol=1e-15)
    np.testing.assert_array_equal(got[2], [0.0, 0.0])  # fully masked: zeros, never NaN


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_masked_rows_give_zeros_along_any_axis(axis):
    x = np.random.default_rng(1).standard_normal((3, 4))
    x[1, :] = -np.inf
    x[:, 2] = -np.inf
    got = softmax(x, axis=axis)
    assert not np.isnan(got).any()
    want = np.nan_to_num(_torch64(x, axis), nan=0.0)  # torch gives NaN where we give 0
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
