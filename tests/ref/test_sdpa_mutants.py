"""Tests written against the survivors of a mutation run of ref/sdpa.py (issue 35, item 2).

Each asserts what a user sees (the output, its dtype, the weights, an error's one line) against
torch in float64 or known numbers.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlab.ref import scaled_dot_product_attention as sdpa
from attnlab.ref import self_attention
from attnlab.ref.sdpa import prepare_qkv


def _rand(seed, *shape, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _torch(q, k, v, **kw):
    t = [torch.from_numpy(np.asarray(a, np.float64)) for a in (q, k, v)]
    mask = kw.pop("attn_mask", None)
    if mask is not None:
        kw["attn_mask"] = torch.from_numpy(np.asarray(mask))
        if mask.dtype != bool:
            kw["attn_mask"] = kw["attn_mask"].double()
    return F.scaled_dot_product_attention(*t, **kw).numpy()


@pytest.mark.parametrize("mask_kind", ["bool", "float64"])
def test_float32_inputs_with_a_mask_give_float32_out_and_weights(mask_kind):
    q, k, v = (_rand(s, 2, 4, 3, dtype=np.float32) for s in (1, 2, 3))
    mask = np.tril(np.ones((4, 4), bool))
    if mask_kind == "float64":
        mask = np.where(mask, 0.5, -np.inf)
    out, w = sdpa(q, k, v, attn_mask=mask, return_weights=True)
    assert out.dtype == np.float32 and w.dtype == np.float32
    np.testing.assert_allclose(out, _torch(q, k, v, attn_mask=mask), rtol=1e-5, atol=1e-6)


def test_explicit_scale_matches_torch_and_differs_from_the_default():
    q, k, v = (_rand(s, 2, 5, 8) for s in (4, 5, 6))
    out = sdpa(q, k, v, scale=0.3)
    np.testing.assert_allclose(out, _torch(q, k, v, scale=0.3), rtol=1e-12, atol=1e-12)
    assert not np.allclose(out, sdpa(q, k, v))
    np.testing.assert_allclose(sdpa(q, k, v), _torch(q, k, v), rtol=1e-12, atol=1e-12)


def test_integer_scale_is_taken_as_a_number():
    q, k, v = (_rand(s, 3, 4) for s in (7, 8, 9))
    np.testing.assert_allclose(sdpa(q, k, v, scale=2), _torch(q, k, v, scale=2.0), rtol=1e-12)


def test_causal_with_more_keys_than_queries_is_aligned_top_left_like_torch():
    q, k, v = _rand(1, 3, 4), _rand(2, 5, 4), _rand(3, 5, 2)
    out, w = sdpa(q, k, v, is_causal=True, return_weights=True)
    np.testing.assert_allclose(out, _torch(q, k, v, is_causal=True), rtol=1e-12, atol=1e-12)
    assert (w[np.triu_indices(3, 1, 5)] == 0).all() and (w[0, 0] == 1.0)


def test_float_mask_is_added_to_the_scores():
    q, k, v = (_rand(s, 4, 3) for s in (1, 2, 3))
    mask = _rand(4, 4, 4)
    out = sdpa(q, k, v, attn_mask=mask)
    np.testing.assert_allclose(out, _torch(q, k, v, attn_mask=mask), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("q_shape,kv_heads", [((4, 3, 2), 2), ((1, 6, 3, 2), 3), ((1, 6, 3, 2), 1)])
def test_gqa_matches_torch_with_and_without_a_batch(q_shape, kv_heads):
    q = _rand(1, *q_shape)
    kv_shape = (*q_shape[:-3], kv_heads, 5, q_shape[-1])
    k, v = _rand(2, *kv_shape), _rand(3, *kv_shape)
    out = sdpa(q, k, v, enable_gqa=True)
    np.testing.assert_allclose(out, _torch(q, k, v, enable_gqa=True), rtol=1e-12, atol=1e-12)
    *_, group = prepare_qkv(q, k, v, True)
    assert group == q_shape[-3] // kv_heads


def test_gqa_with_equal_heads_is_plain_attention_and_group_one():
    q, k, v = (_rand(s, 2, 3, 4) for s in (1, 2, 3))
    assert prepare_qkv(q, k, v, True)[-1] == 1
    assert prepare_qkv(q, k, v, False)[-1] == 1
    np.testing.assert_array_equal(sdpa(q, k, v, enable_gqa=True), sdpa(q, k, v))


def test_different_heads_without_gqa_is_one_line_value_error():
    q, k = _rand(1, 4, 3, 2), _rand(2, 2, 3, 2)
    with pytest.raises(ValueError) as err:
        sdpa(q, k, k)
    assert "\n" not in str(err.value) and "(4, 3, 2)" in str(err.value)


def test_self_attention_different_q_and_k_widths_names_both_shapes():
    X = _rand(1, 3, 4)
    with pytest.raises(ValueError) as err:
        self_attention(X, _rand(2, 4, 2), _rand(3, 4, 5), _rand(4, 4, 2))
    msg = str(err.value)
    assert msg.startswith("W_q and W_k must project to the same width d_k: (4, 2) vs (4, 5)")
    assert "\n" not in msg


def test_self_attention_one_dim_x_names_x_and_its_layout():
    with pytest.raises(ValueError, match=r"X must have at least 2 dims \(\.\.\., T, d_model\)"):
        self_attention(_rand(1, 4), _rand(2, 4, 2), _rand(3, 4, 2), _rand(4, 4, 2))


def test_self_attention_mixed_dtypes_name_each_input():
    with pytest.raises(TypeError, match="X: float64, W_q: float32"):
        self_attention(
            _rand(1, 3, 4), _rand(2, 4, 2, dtype=np.float32), _rand(3, 4, 2), _rand(4, 4, 2)
        )


def test_self_attention_bad_weight_names_it():
    with pytest.raises(ValueError, match=r"W_v must be \(d_model, d_out\)"):
        self_attention(_rand(1, 3, 4), _rand(2, 4, 2), _rand(3, 4, 2), _rand(4, 3, 2))


def test_self_attention_matches_torch_causal_and_not():
    X, Wq, Wk, Wv = _rand(1, 2, 5, 4), _rand(2, 4, 3), _rand(3, 4, 3), _rand(4, 4, 2)
    for causal in (False, True):
        out, w = self_attention(X, Wq, Wk, Wv, causal=causal)
        ref = _torch(X @ Wq, X @ Wk, X @ Wv, is_causal=causal)
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
        assert w.shape == (2, 5, 5) and (np.triu(w[0], 1) == 0).all() == causal


@pytest.mark.parametrize("bad", ["q", "k", "v"])
def test_an_integer_input_error_names_that_input(bad):
    args = {n: _rand(i, 3, 4) for i, n in enumerate("qkv")}
    args[bad] = np.ones((3, 4), dtype=int)
    with pytest.raises(TypeError) as err:
        sdpa(**args)
    assert str(err.value).startswith(f"{bad} must be a floating-point array")


def test_v_of_another_dtype_is_named():
    q, k = _rand(1, 3, 4), _rand(2, 3, 4)
    with pytest.raises(TypeError, match="q: float64, k: float64, v: float32"):
        sdpa(q, k, _rand(3, 3, 4, dtype=np.float32))


def test_gqa_flag_on_two_dim_inputs_is_plain_attention():
    q, k, v = (_rand(s, 3, 4) for s in (1, 2, 3))
    np.testing.assert_array_equal(sdpa(q, k, v, enable_gqa=True), sdpa(q, k, v))


def test_gqa_group_is_an_integer():
    q, k = _rand(1, 4, 3, 2), _rand(2, 2, 3, 2)
    group = prepare_qkv(q, k, k, True)[-1]
    assert group == 2 and isinstance(group, int)


@pytest.mark.parametrize("bad", ["X", "W_q", "W_k", "W_v"])
def test_self_attention_integer_input_names_it(bad):
    args = {
        "X": _rand(1, 3, 4),
        "W_q": _rand(2, 4, 2),
        "W_k": _rand(3, 4, 2),
        "W_v": _rand(4, 4, 2),
    }
    args[bad] = np.ones(args[bad].shape, dtype=int)
    with pytest.raises(TypeError) as err:
        self_attention(*args.values())
    assert str(err.value).startswith(f"{bad} must be a floating-point array")


def test_self_attention_messages_name_x_exactly():
    with pytest.raises(ValueError) as err:
        self_attention(_rand(1, 4), _rand(2, 4, 2), _rand(3, 4, 2), _rand(4, 4, 2))
    assert str(err.value) == "X must have at least 2 dims (..., T, d_model), got shape (4,)"
    with pytest.raises(ValueError) as err:
        self_attention(_rand(1, 3, 4), _rand(2, 4, 2), _rand(3, 4, 2), _rand(4, 3, 2))
    assert str(err.value) == (
        "W_v must be (d_model, d_out) with d_model = X.shape[-1] = 4, got W_v (3, 2) for X (3, 4)"
    )
