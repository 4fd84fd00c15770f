"""scaled_dot_product_attention / self_attention: properties, edge cases and bad input."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from attnlab.parity import compare
from attnlab.ref import causal_mask, scaled_dot_product_attention, self_attention

sizes = st.integers(1, 7)


def _rand(seed, *shape, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@given(T=sizes, S=sizes, E=sizes, seed=st.integers(0, 2**16), causal=st.booleans())
def test_weight_rows_sum_to_one(T, S, E, seed, causal):
    q, k, v = _rand(seed, 2, T, E), _rand(seed + 1, 2, S, E), _rand(seed + 2, 2, S, 3)
    _, w = scaled_dot_product_attention(q, k, v, is_causal=causal, return_weights=True)
    assert w.shape == (2, T, S)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
    if causal:
        assert np.all(w[:, ~causal_mask(T, S)] == 0)


@given(T=st.integers(2, 8), cut=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_causal_future_tokens_never_change_past_outputs(T, cut, seed):
    cut = min(cut, T - 1)
    q, k, v = (_rand(seed + i, T, 4) for i in range(3))
    k2, v2 = k.copy(), v.copy()
    k2[cut:] += _rand(seed + 9, T - cut, 4) * 10
    v2[cut:] += _rand(seed + 10, T - cut, 4) * 10
    a = scaled_dot_product_attention(q, k, v, is_causal=True)
    b = scaled_dot_product_attention(q, k2, v2, is_causal=True)
    np.testing.assert_array_equal(a[:cut], b[:cut])
    assert not np.allclose(a[cut:], b[cut:])


@given(T=st.integers(2, 8), seed=st.integers(0, 2**16))
def test_self_attention_is_permutation_equivariant(T, seed):
    X, (Wq, Wk, Wv) = _rand(seed, T, 6), (_rand(seed + i, 6, 4) for i in (1, 2, 3))
    perm = np.random.default_rng(seed).permutation(T)
    out, w = self_attention(X, Wq, Wk, Wv)
    out_p, w_p = self_attention(X[perm], Wq, Wk, Wv)
    np.testing.assert_allclose(out_p, out[perm], atol=1e-12)
    np.testing.assert_allclose(w_p, w[perm][:, perm], atol=1e-12)


@given(
    B=st.integers(1, 2),
    H=st.integers(1, 3),
    T=sizes,
    S=sizes,
    E=sizes,
    seed=st.integers(0, 2**16),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_random_shapes_match_torch_under_the_precision_rule(B, H, T, S, E, seed, dtype):
    q, k, v = _rand(seed, B, H, T, E), _rand(seed + 1, B, H, S, E), _rand(seed + 2, B, H, S, 5)
    mask = np.random.default_rng(seed).random((B, 1, T, S)) < 0.7
    q, k, v = (a.astype(dtype) for a in (q, k, v))
    t64 = [torch.from_numpy(a.astype(np.float64)) for a in (q, k, v)]
    t32 = [torch.from_numpy(a.astype(np.float32)) for a in (q, k, v)]
    m = torch.from_numpy(mask)
    oracle = F.scaled_dot_product_attention(*t64, attn_mask=m)
    naive = F.scaled_dot_product_attention(*t32, attn_mask=m)
    out = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert out.dtype == dtype
    p = compare(out, oracle, None if dtype == np.float64 else naive)
    assert p.ok, p.message


def test_fully_masked_rows_and_empty_keys_give_zeros():
    q, k, v = _rand(0, 3, 4), _rand(1, 5, 4), _rand(2, 5, 2)
    mask = np.ones((3, 5), bool)
    mask[1] = False
    out, w = scaled_dot_product_attention(q, k, v, attn_mask=mask, return_weights=True)
    assert np.array_equal(out[1], np.zeros(2)) and np.array_equal(w[1], np.zeros(5))
    assert np.isfinite(out).all()
    # float mask of -inf does the same
    fmask = np.where(mask, 0.0, -np.inf)
    np.testing.assert_array_equal(scaled_dot_product_attention(q, k, v, attn_mask=fmask), out)
    # no keys at all (S = 0): every row attends to nothing -> zeros, like torch
    empty = scaled_dot_product_attention(q, k[:0], v[:0])
    assert empty.shape == (3, 2) and not empty.any()


def test_zero_length_query_is_empty():
    out, w = scaled_dot_product_attention(
        _rand(0, 2, 0, 4), _rand(1, 2, 5, 4), _rand(2, 2, 5, 3), return_weights=True
    )
    assert out.shape == (2, 0, 3) and w.shape == (2, 0, 5)


def test_nan_and_inf_in_unmasked_inputs_propagate():
    q, k, v = _rand(0, 3, 4), _rand(1, 5, 4), _rand(2, 5, 2)
    v[2, 0] = np.nan
    out = scaled_dot_product_attention(q, k, v)
    assert np.isnan(out[:, 0]).all() and np.isfinite(out[:, 1]).all()
    q[0, 0] = np.inf
    assert not np.isfinite(scaled_dot_product_attention(q, k, v)[0]).all()


def test_mask_and_causal_combine():
    q, k, v = _rand(0, 4, 3), _rand(1, 4, 3), _rand(2, 4, 3)
    pad = np.array([True, True, True, False])
    both = scaled_dot_product_attention(q, k, v, attn_mask=pad, is_causal=True)
    explicit = scaled_dot_product_attention(q, k, v, attn_mask=pad & causal_mask(4))
    np.testing.assert_array_equal(both, explicit)


def test_gqa_equals_repeated_heads():
    q, k, v = _rand(0, 1, 6, 3, 4), _rand(1, 1, 2, 5, 4), _rand(2, 1, 2, 5, 4)
    got = scaled_dot_product_attention(q, k, v, enable_gqa=True)
    want = scaled_dot_product_attention(q, np.repeat(k, 3, axis=1), np.repeat(v, 3, axis=1))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("shapes", "kwargs", "exc", "pattern"),
    [
        (((3, 4), (5, 3), (5, 2)), {}, ValueError, r"same width E: q \(3, 4\) has 4, k \(5, 3\)"),
        (((3, 4), (5, 4), (6, 2)), {}, ValueError, r"same length S: k \(5, 4\) has 5, v \(6, 2\)"),
        (((4,), (5, 4), (5, 2)), {}, ValueError, r"q must have at least 2 dims"),
        (((1, 6, 3, 4), (1, 4, 5, 4), (1, 4, 5, 4)), {"enable_gqa": True}, ValueError, "multiple"),
        (((1, 6, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)), {}, ValueError, "enable_gqa=True"),
        (((3, 4), (5, 4), (5, 2)), {"attn_mask": np.ones((2, 5), bool)}, ValueError, "broadcast"),
        (((3, 4), (5, 4), (5, 2)), {"attn_mask": np.ones((3, 5), int)}, TypeError, "int64"),
    ],
)
def test_bad_input_names_the_shapes(shapes, kwargs, exc, pattern):
    q, k, v = (np.zeros(s) for s in shapes)
    with pytest.raises(exc, match=pattern):
        scaled_dot_product_attention(q, k, v, **kwargs)


def test_integer_and_mixed_dtypes_are_type_errors():
    with pytest.raises(TypeError, match=r"q must be a floating-point array.*int64"):
        scaled_dot_product_attention(np.ones((2, 2), int), np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(TypeError, match="q: float32, k: float64"):
        scaled_dot_product_attention(np.ones((2, 2), np.float32), np.ones((2, 2)), np.ones((2, 2)))


def test_self_attention_scales_by_key_width_and_checks_weights():
    X = _rand(0, 5, 16)
    Wq, Wk, Wv = _rand(1, 16, 8), _rand(2, 16, 8), _rand(3, 16, 3)
    out, w = self_attention(X, Wq, Wk, Wv, causal=True)
    scores = (X @ Wq) @ (X @ Wk).T / np.sqrt(8)
    scores[~causal_mask(5)] = -np.inf
    e = np.exp(scores - scores.max(-1, keepdims=True))
    np.testing.assert_allclose(w, e / e.sum(-1, keepdims=True), atol=1e-14)
    assert out.shape == (5, 3)
    with pytest.raises(ValueError, match=r"W_k must be \(d_model, d_out\).*\(15, 8\)"):
        self_attention(X, Wq, _rand(2, 15, 8), Wv)
