"""Multi-head attention where the first tests did not look (mutation testing of ref/multihead.py,
README "Mutation testing"): biases, a mask, widths other than d_model, and each input error
naming its own argument. The oracle is torch, step by step in float64 (nn.MultiheadAttention
takes d_model-wide inputs only)."""

import math

import numpy as np
import pytest
import torch

from attnlab.oracles import torch_mha
from attnlab.ref import multi_head_attention


def _torch_mha(q, k, v, W, b, H, mask=None):
    """Projections with their biases, heads as column blocks, softmax(QK^T / sqrt(d_k)) with
    blocked keys at -inf, heads side by side, the output projection: (out, weights)."""
    t = torch.from_numpy
    Q, K, V = (t(x) @ t(W[n]) + t(b[n]) for x, n in ((q, "q"), (k, "k"), (v, "v")))
    d_k = Q.shape[-1] // H

    def heads(x):  # (B, L, d_model) -> (B, H, L, d_k)
        return x.reshape(*x.shape[:-1], H, d_k).transpose(-2, -3)

    scores = heads(Q) @ heads(K).transpose(-1, -2) / math.sqrt(d_k)  # (B, H, T, S)
    if mask is not None:
        scores = scores.masked_fill(~t(mask), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = (weights @ heads(V)).transpose(-2, -3).flatten(-2)  # (B, T, d_model)
    return (out @ t(W["o"]) + t(b["o"])).numpy(), weights.numpy()


def _problem(rng, d_q=5, d_kin=7, d_vin=3, d_model=8, d_out=6, B=2, T=4, S=6):
    """Cross-attention whose widths all differ, with random weights and biases."""
    q, k, v = (rng.standard_normal((B, L, d)) for L, d in ((T, d_q), (S, d_kin), (S, d_vin)))
    widths = {"q": (d_q, d_model), "k": (d_kin, d_model), "v": (d_vin, d_model)}
    widths["o"] = (d_model, d_out)
    W = {n: rng.standard_normal(s) / math.sqrt(s[0]) for n, s in widths.items()}
    b = {n: rng.standard_normal(s[1]) for n, s in widths.items()}
    return q, k, v, W, b


def _ours(q, k, v, W, b, H, **kw):
    biases = {f"b_{n}": b[n] for n in b}
    return multi_head_attention(q, k, v, W["q"], W["k"], W["v"], W["o"], H, **biases, **kw)


@pytest.mark.parametrize("H", [1, 2, 4])
def test_every_width_and_bias_as_torch_step_by_step(rng, H):
    q, k, v, W, b = _problem(rng)
    out, weights = _ours(q, k, v, W, b, H)
    want, want_w = _torch_mha(q, k, v, W, b, H)
    assert out.shape == (2, 4, 6) and weights.shape == (2, H, 4, 6)
    np.testing.assert_allclose(out, want, atol=1e-12)
    np.testing.assert_allclose(weights, want_w, atol=1e-12)


def test_each_bias_that_can_change_the_output_does(rng):
    """A bias on the keys adds the same q . b_k to every score of a row, which softmax ignores;
    the query, value and output biases each change the output."""
    q, k, v, W, b = _problem(rng)
    base, _ = _ours(q, k, v, W, b, 2)
    for n in "qvo":
        moved, _ = _ours(q, k, v, W, {**b, n: b[n] + 1.0}, 2)
        assert np.abs(moved - base).max() > 1e-3, n
    same, _ = _ours(q, k, v, W, {**b, "k": b["k"] + 1.0}, 2)
    np.testing.assert_allclose(same, base, atol=1e-12)


def test_the_mask_reaches_every_head(rng):
    q, k, v, W, b = _problem(rng)
    mask = rng.random((2, 1, 4, 6)) < 0.6  # (B, 1, T, S): each batch its own, every head
    mask[..., 0] = True  # every query sees a key
    out, weights = _ours(q, k, v, W, b, 2, attn_mask=mask)
    want, want_w = _torch_mha(q, k, v, W, b, 2, mask)
    np.testing.assert_allclose(out, want, atol=1e-12)
    np.testing.assert_allclose(weights, want_w, atol=1e-12)
    assert (weights[np.broadcast_to(~mask, weights.shape)] == 0).all()


def test_key_padding_and_causal_as_nn_multiheadattention(rng):
    d, H, T = 8, 2, 5
    X = rng.standard_normal((2, T, d))
    W = [rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(4)]
    biases = [rng.standard_normal(d) for _ in range(4)]
    pad = np.ones((2, T), dtype=bool)
    pad[1, 3:] = False  # the second sequence's last two keys are padding
    mask = pad[:, None, None, :] & np.tri(T, dtype=bool)  # (B, 1, T, T)
    with torch.no_grad():
        want, want_w = torch_mha(X, X, X, *W, H, biases=biases, key_padding=pad, causal=True)
    b = dict(zip(("b_q", "b_k", "b_v", "b_o"), biases, strict=True))
    out, weights = multi_head_attention(X, X, X, *W, H, **b, attn_mask=pad[:, None, None, :],
                                        is_causal=True)  # fmt: skip
    np.testing.assert_allclose(out, want.numpy(), atol=1e-12)
    np.testing.assert_allclose(weights, want_w.numpy(), atol=1e-12)
    again, _ = multi_head_attention(X, X, X, *W, H, **b, attn_mask=mask)
    np.testing.assert_allclose(again, out, atol=1e-12)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"k": np.zeros((2, 6, 5))},
            r"W_k must be \(d_in, d_out\) with d_in = key\.shape\[-1\] = 5, got W_k \(7, 8\) for key \(2, 6, 5\)",
        ),
        (
            {"v": np.zeros((2, 6, 4))},
            r"W_v must be \(d_in, d_out\) with d_in = value\.shape\[-1\] = 4, got W_v \(3, 8\) for value \(2, 6, 4\)",
        ),
        (
            {"W_o": np.zeros((6, 6))},
            r"W_o must be \(d_in, d_out\) with d_in = concatenated heads\.shape\[-1\] = 8, got W_o \(6, 6\)",
        ),
        ({"W_k": np.zeros((7, 6))}, r"W_k must be \(d_in, d_model=8\), got \(7, 6\)"),
        ({"W_v": np.zeros((3, 8, 1))}, r"W_v must be \(d_in, d_model=8\), got \(3, 8, 1\)"),
        ({"b_k": np.zeros(7)}, r"bias for W_k must have shape \(8,\), got \(7,\)"),
        ({"b_v": np.zeros(3)}, r"bias for W_v must have shape \(8,\), got \(3,\)"),
        ({"b_o": np.zeros(8)}, r"bias for W_o must have shape \(6,\), got \(8,\)"),
        ({"b_k": np.zeros(8, dtype=int)}, r"b_k must be a floating-point array"),
        ({"v": np.zeros((2, 6, 3), dtype=int)}, r"value must be a floating-point array"),
    ],
)
def test_each_input_error_names_its_own_argument(rng, change, message):
    q, k, v, W, b = _problem(rng)
    args = {"q": q, "k": k, "v": v, **{f"W_{n}": W[n] for n in W}, **{f"b_{n}": b[n] for n in b}}
    args.update(change)
    with pytest.raises((ValueError, TypeError), match=message):
        multi_head_attention(args["q"], args["k"], args["v"], args["W_q"], args["W_k"],
                             args["W_v"], args["W_o"], 2, b_q=args["b_q"], b_k=args["b_k"],
                             b_v=args["b_v"], b_o=args["b_o"])  # fmt: skip


@pytest.mark.parametrize("H", [True, 2.0, -2])
def test_num_heads_is_a_positive_int_not_a_bool_or_a_float(rng, H):
    q, k, v, W, b = _problem(rng)
    with pytest.raises(ValueError, match=rf"num_heads must be a positive int, got {H!r}"):
        _ours(q, k, v, W, b, H)
