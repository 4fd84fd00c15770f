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


# ---- rotary ----------------------------------------------------------------------------------


def _rotation_matrix(pos: float, D: int, base: float = 10000.0) -> np.ndarray:
    """The (D, D) rotation that RoPE applies at ``pos``, written out pair by pair: feature i and
    feature i + D/2 turn by pos * base^(-2i/D). An oracle that shares no code with the library."""
    R = np.eye(D)
    for i in range(D // 2):
        a = pos * base ** (-2 * i / D)
        j = i + D // 2
        R[i, i], R[i, j] = np.cos(a), -np.sin(a)
        R[j, i], R[j, j] = np.sin(a), np.cos(a)
    return R


def _gptj_pairs(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The other common layout (GPT-J): neighbours (2i, 2i+1) are paired. Wrong here."""
    D = x.shape[-1]
    out = x.copy()
    for t, p in enumerate(positions):
        for i in range(D // 2):
            a = p * 10000.0 ** (-2 * i / D)
            u, v = x[..., t, 2 * i], x[..., t, 2 * i + 1]
            out[..., t, 2 * i] = u * np.cos(a) - v * np.sin(a)
            out[..., t, 2 * i + 1] = u * np.sin(a) + v * np.cos(a)
    return out


@pytest.mark.parametrize("offset", [0, 3, 1000])
def test_rotary_equals_explicit_rotation_matrices_with_offsets(offset):
    from attnlab.ref import rotary_embedding

    rng = np.random.default_rng(offset)
    x = rng.standard_normal((2, 5, 8))  # (B, T, D)
    positions = np.arange(offset, offset + 5)
    want = np.stack([x[:, t] @ _rotation_matrix(p, 8).T for t, p in enumerate(positions)], axis=1)
    np.testing.assert_allclose(rotary_embedding(x, positions), want, rtol=0, atol=1e-12)
    if offset:  # the oracle tells the layouts and the frequencies apart
        assert np.abs(_gptj_pairs(x, positions) - want).max() > 1e-2
        assert np.abs(rotary_embedding(x, positions, base=1000.0) - want).max() > 1e-2


def test_rotary_keeps_dtype_and_checks_its_arguments():
    from attnlab.ref import rotary_embedding

    x = np.ones((3, 4), dtype=np.float32)
    assert rotary_embedding(x).dtype == np.float32
    np.testing.assert_array_equal(rotary_embedding(x, np.zeros(3)), x)  # position 0: identity
    with pytest.raises(ValueError, match="even D"):
        rotary_embedding(np.ones((3, 5)))
    with pytest.raises(ValueError, match="positions must have shape"):
        rotary_embedding(x, np.arange(4))
