import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.ref import sinusoidal_positional_encoding as pe


def test_known_values():
    P = pe(4, 6)
    np.testing.assert_array_equal(P[0], [0, 1, 0, 1, 0, 1])
    np.testing.assert_allclose(P[1, :2], [np.sin(1), np.cos(1)])
    np.testing.assert_allclose(
        P[3, 2:4], [np.sin(3 / 10000 ** (2 / 6)), np.cos(3 / 10000 ** (2 / 6))]
    )
    assert pe(5, 7).shape == (5, 7) and pe(3, 8, dtype=np.float32).dtype == np.float32


@given(k=st.integers(0, 40), d=st.sampled_from([4, 8, 16, 64]))
def test_shift_by_k_is_one_fixed_linear_map(k, d):
    """PE[pos + k] = PE[pos] @ M_k with M_k block-diagonal 2x2 rotations (independent of pos)."""
    P = pe(200 + k, d)
    M = np.zeros((d, d))
    freqs = 10000.0 ** (-np.arange(0, d, 2) / d)
    for i, w in enumerate(freqs):
        c, s = np.cos(k * w), np.sin(k * w)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]
    np.testing.assert_allclose(P[:200] @ M, P[k : 200 + k], atol=1e-9)
    # a least-squares fit over 200 positions (200 equations per column, d unknowns) leaves
    # ~zero residual: some linear map explains the shift for every position at once
    fit, *_ = np.linalg.lstsq(P[:200], P[k : 200 + k], rcond=None)
    np.testing.assert_allclose(P[:200] @ fit, P[k : 200 + k], atol=1e-8)


def test_bad_arguments():
    with pytest.raises(ValueError, match="d must be a non-negative int"):
        pe(4, -1)
    with pytest.raises(ValueError, match="base must be positive"):
        pe(4, 4, base=0)
