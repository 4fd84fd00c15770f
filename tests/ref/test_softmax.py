import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlab.ref import softmax

finite = st.floats(-50, 50, allow_nan=False, width=64)


@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 9)), elements=finite))
def test_rows_sum_to_one_and_match_torch(x):
    w = softmax(x)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(w, torch.softmax(torch.from_numpy(x), -1).numpy(), atol=1e-14)


def test_all_neg_inf_row_is_zero_without_warnings():
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = softmax(x)
    assert np.array_equal(w[0], np.zeros(3))
    np.testing.assert_allclose(w[1].sum(), 1.0)


def test_huge_scores_do_not_overflow():
    x = np.array([1000.0, 1001.0, 999.0], dtype=np.float32)
    w = softmax(x)
    assert w.dtype == np.float32 and np.isfinite(w).all()
    np.testing.assert_allclose(w, softmax(x - 1000.0), rtol=1e-6)


def test_nan_propagates_to_its_row_only():
    x = np.array([[0.0, np.nan, 1.0], [0.0, 1.0, 2.0]])
    w = softmax(x)
    assert np.isnan(w[0]).all() and np.isfinite(w[1]).all()


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_axis_and_dtype(axis, rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = softmax(x, axis=axis)
    assert w.dtype == np.float32 and w.shape == x.shape
    np.testing.assert_allclose(w.sum(axis), 1.0, rtol=1e-6)


def test_float16_and_empty():
    assert softmax(np.array([0.0, 1.0], dtype=np.float16)).dtype == np.float16
    assert softmax(np.zeros((2, 0))).shape == (2, 0)


def test_integer_input_is_a_type_error():
    with pytest.raises(TypeError, match="int64"):
        softmax(np.array([1, 2, 3]))
