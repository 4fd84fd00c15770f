"""The sinusoidal table and rotary embedding: exact values against formulas written out here,
the edges of each argument and the errors a learner reads. Written from the mutants that
survived tests/ref/test_positional.py (tools/mutation.sh)."""

import math

import numpy as np
import pytest

from attnlab.ref import rotary_embedding
from attnlab.ref import sinusoidal_positional_encoding as pe


def _table(T: int, d: int, base: float) -> np.ndarray:
    """The table cell by cell, from the paper's formula."""
    out = np.zeros((T, d))
    for pos in range(T):
        for c in range(d):
            angle = pos / base ** (2 * (c // 2) / d)
            out[pos, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return out


@pytest.mark.parametrize(("T", "d", "base"), [(6, 7, 10000.0), (5, 4, 100.0), (3, 1, 10.0)])
def test_the_table_is_the_papers_formula_cell_by_cell(T, d, base):
    got = pe(T, d, base=base)
    assert got.dtype == np.float64 and got.shape == (T, d)
    np.testing.assert_allclose(got, _table(T, d, base), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(pe(T, d, base, np.float32), got.astype(np.float32))


def test_the_tables_arguments_are_checked_by_name():
    assert pe(0, 4).shape == (0, 4) and pe(3, 0).shape == (3, 0)
    assert pe(np.int64(2), np.int32(2)).shape == (2, 2)
    for T, d, name, value in [(-1, 4, "T", "-1"), (2.0, 4, "T", "2.0"), (True, 4, "T", "True"),
                              (3, False, "d", "False"), (3, 2.5, "d", "2.5")]:  # fmt: skip
        with pytest.raises(ValueError, match=rf"^{name} must be a non-negative int, got {value}$"):
            pe(T, d)
    np.testing.assert_allclose(pe(3, 2, base=0.5), _table(3, 2, 0.5), atol=1e-15)  # 0 < base < 1
    for base in (0, -10.0, float("nan")):
        with pytest.raises(ValueError, match=r"^base must be positive, got "):
            pe(2, 2, base=base)


def _rotated(x: np.ndarray, positions, base: float) -> np.ndarray:
    """Rotate-half written out feature pair by feature pair (i with i + D/2)."""
    D = x.shape[-1]
    out = np.empty_like(x, dtype=np.float64)
    for t, p in enumerate(positions):
        for i in range(D // 2):
            a = p * base ** (-2 * i / D)
            x1, x2 = x[..., t, i], x[..., t, i + D // 2]
            out[..., t, i] = x1 * math.cos(a) - x2 * math.sin(a)
            out[..., t, i + D // 2] = x1 * math.sin(a) + x2 * math.cos(a)
    return out


def test_rotary_is_each_pair_turned_by_its_angle():
    x = np.random.default_rng(0).standard_normal((2, 5, 6))
    np.testing.assert_allclose(rotary_embedding(x), _rotated(x, range(5), 10000.0), atol=1e-14)
    pos = np.array([7, 0, 3, 3, 100])
    np.testing.assert_allclose(
        rotary_embedding(x, pos, base=50.0), _rotated(x, pos, 50.0), atol=1e-13
    )
    np.testing.assert_array_equal(rotary_embedding(x[..., :1, :])[..., 0, :], x[..., 0, :])
    x32 = x.astype(np.float32)
    got = rotary_embedding(x32, pos)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, _rotated(x, pos, 10000.0), atol=1e-5)


def test_rotarys_arguments_are_checked_with_the_shapes_in_the_message():
    with pytest.raises(
        ValueError, match=r"^x must be \(\.\.\., T, D\) with an even D, got shape \(2, 3\)$"
    ):
        rotary_embedding(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"even D, got shape \(4,\)$"):
        rotary_embedding(np.ones(4))
    with pytest.raises(ValueError, match=r"^positions must have shape \(2,\), got \(3,\)$"):
        rotary_embedding(np.ones((2, 4)), positions=np.arange(3))
    x = np.ones((1, 2, 4))
    np.testing.assert_allclose(
        rotary_embedding(x, base=0.5), _rotated(x, range(2), 0.5), atol=1e-15
    )
    for base in (0, -1.0):
        with pytest.raises(ValueError, match=rf"^base must be positive, got {base}$"):
            rotary_embedding(np.ones((2, 4)), base=base)
