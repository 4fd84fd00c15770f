import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnlab.oracles import torch_mha
from attnlab.ref import merge_heads, multi_head_attention, self_attention, split_heads


def _weights(rng, d_model):
    return [rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]


@given(H=st.sampled_from([1, 2, 4]), T=st.integers(1, 6), seed=st.integers(0, 999))
def test_heads_are_independent_self_attentions_on_column_blocks(H, T, seed):
    rng = np.random.default_rng(seed)
    d_model, d_k = 8, 8 // H
    X = rng.standard_normal((T, d_model))
    Wq, Wk, Wv, Wo = _weights(rng, d_model)
    out, w = multi_head_attention(X, X, X, Wq, Wk, Wv, Wo, H, is_causal=True)
    per_head = [
        self_attention(X, *(W[:, h * d_k : (h + 1) * d_k] for W in (Wq, Wk, Wv)), causal=True)
        for h in range(H)
    ]
    np.testing.assert_allclose(w, np.stack([p[1] for p in per_head]), atol=1e-13)
    np.testing.assert_allclose(out, np.concatenate([p[0] for p in per_head], -1) @ Wo, atol=1e-13)


def test_split_and_merge_are_inverse(rng):
    x = rng.standard_normal((2, 5, 12))
    assert split_heads(x, 3).shape == (2, 3, 5, 4)
    np.testing.assert_array_equal(merge_heads(split_heads(x, 3)), x)


def test_matches_torch_multihead_attention_d512_h8(rng):
    d_model, H, T = 512, 8, 6
    X = rng.standard_normal((1, T, d_model))
    Wq, Wk, Wv, Wo = _weights(rng, d_model)
    with torch.no_grad():
        want, want_w = torch_mha(X, X, X, Wq, Wk, Wv, Wo, H)
    out, w = multi_head_attention(X, X, X, Wq, Wk, Wv, Wo, H)
    assert w.shape == (1, H, T, T)
    np.testing.assert_allclose(out, want.numpy(), atol=1e-10)
    np.testing.assert_allclose(w, want_w.numpy(), atol=1e-12)


def test_bad_input(rng):
    X = rng.standard_normal((4, 12))
    Wq, Wk, Wv, Wo = _weights(rng, 12)
    with pytest.raises(ValueError, match=r"num_heads \(5\) must divide d_model \(12"):
        multi_head_attention(X, X, X, Wq, Wk, Wv, Wo, 5)
    with pytest.raises(ValueError, match=r"W_q must be \(d_in, d_out\).*query \(4, 10\)"):
        multi_head_attention(X[:, :10], X, X, Wq, Wk, Wv, Wo, 3)
    with pytest.raises(ValueError, match=r"bias for W_q must have shape \(12,\)"):
        multi_head_attention(X, X, X, Wq, Wk, Wv, Wo, 3, b_q=np.zeros(3))
    with pytest.raises(ValueError, match="num_heads must be a positive int"):
        multi_head_attention(X, X, X, Wq, Wk, Wv, Wo, 0)
