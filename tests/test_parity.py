import numpy as np
import torch

from attnlab.parity import compare


def test_float64_tolerance_is_tight():
    ref = np.linspace(-1, 1, 11)
    assert compare(ref + 1e-12, ref).ok
    assert not compare(ref + 1e-8, ref).ok


def test_float32_bound_is_twice_the_naive_error(rng):
    ref = rng.standard_normal(100)
    naive = (ref + 1e-5 * rng.standard_normal(100)).astype(np.float32)
    naive_err = np.abs(naive.astype(np.float64) - ref).max()
    good = (ref + 1.5 * naive_err).astype(np.float32)
    bad = (ref + 3.0 * naive_err).astype(np.float32)
    assert compare(good, ref, naive).ok
    assert not compare(bad, ref, naive).ok


def test_nan_must_match_and_shape_dtype_are_checked():
    ref = np.array([1.0, np.nan, 0.0])
    assert compare(np.array([1.0, np.nan, 0.0]), ref).ok
    assert "NaN" in compare(np.array([1.0, np.nan, np.nan]), ref).message
    assert not compare(np.array([1.0, 2.0, 0.0]), ref).ok
    assert "shape" in compare(np.zeros(2), np.zeros(3)).message
    assert "dtype" in compare(np.zeros(3, dtype=int), np.zeros(3)).message
    assert not compare(np.array([np.inf]), np.array([-np.inf])).ok


def test_accepts_torch_tensors():
    t = torch.ones(3, dtype=torch.float64, requires_grad=True)
    assert compare(t * 2, np.full(3, 2.0)).ok
