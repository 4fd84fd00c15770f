"""Masks and the causal average: the errors a learner reads and the edges of each argument.
Written from the mutants that survived tests/ref/test_masks.py (tools/mutation.sh)."""

import numpy as np
import pytest

from attnlab.ref import causal_mask, causal_mean, padding_mask


def test_causal_mask_names_the_bad_argument_and_its_value():
    with pytest.raises(ValueError, match=r"^causal_mask: S must be a non-negative int, got -1$"):
        causal_mask(3, -1)
    with pytest.raises(ValueError, match=r"^causal_mask: T must be a non-negative int, got 2\.0$"):
        causal_mask(2.0, 3)
    with pytest.raises(ValueError, match=r"S must be a non-negative int, got False"):
        causal_mask(2, False)
    assert causal_mask(np.int64(2)).tolist() == [[True, False], [True, True]]
    assert causal_mask(0, 0).shape == (0, 0) and causal_mask(2, 0).shape == (2, 0)


def test_padding_mask_edges_and_errors():
    m = padding_mask(np.array([3, 0], dtype=np.uint8), 3)  # unsigned lengths, one of S itself
    assert m.dtype == bool and m.shape == (2, 1, 3)
    assert m[:, 0].tolist() == [[True] * 3, [False] * 3]
    assert padding_mask([1], 2).tolist() == [[[True, False]]]  # a list is fine
    with pytest.raises(ValueError, match=r"^lengths must lie in \[0, 3\], got \[1, -1\]$"):
        padding_mask(np.array([1, -1]), 3)
    with pytest.raises(ValueError, match=r"^lengths must lie in \[0, 2\], got \[3\]$"):
        padding_mask(np.array([3]), 2)
    with pytest.raises(
        ValueError, match=r"^lengths must be a 1-D integer array, got float64 \(2,\)$"
    ):
        padding_mask(np.array([1.0, 2.0]), 3)
    with pytest.raises(
        ValueError, match=r"^lengths must be a 1-D integer array, got int64 \(1, 2\)$"
    ):
        padding_mask(np.array([[1, 2]]), 3)
    with pytest.raises(ValueError, match="1-D integer array, got bool"):
        padding_mask(np.array([True]), 3)


def test_causal_mean_exact_values_and_its_errors():
    x = np.array([[1.0, 10.0], [3.0, 20.0], [8.0, 0.0]])
    np.testing.assert_array_equal(causal_mean(x), [[1, 10], [2, 15], [4, 10]])
    assert causal_mean(np.zeros((0, 3))).shape == (0, 3)
    assert causal_mean(x.astype(np.float16)).dtype == np.float16
    with pytest.raises(
        ValueError, match=r"^x must have at least 2 dims \(\.\.\., T, D\), got shape \(3,\)$"
    ):
        causal_mean(np.ones(3))
    with pytest.raises(TypeError, match=r"^x must be a floating-point array .* got dtype int64"):
        causal_mean(np.ones((2, 2), dtype=np.int64))
