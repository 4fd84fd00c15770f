"""What mutation testing of attnlab.nn.kv_cache_numpy found untested: a LayerNorm with its own
weight and bias folded in, scores far from zero, a cache filled exactly, a constant row, the
float32 the decoding runs in, and a module left as it was."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlab.nn import MultiHeadAttention
from attnlab.nn import kv_cache_numpy as K


def _module(kv=2, rope=False, bias=True, dtype=torch.float32):
    torch.manual_seed(3)
    return MultiHeadAttention(32, 4, kv, bias=bias, rope=rope).to(dtype).eval()


def _affine_ln():
    ln = torch.nn.LayerNorm(32)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 2.0)
        ln.bias.normal_(0, 1)
    return ln


def _decode(m, ln, x):
    """x (B, T, 32): a prefill of all but the last position, then the last one as a step."""
    B, T, _ = x.shape
    w = K.NumpyAttention.of(m, ln)
    cache = K.NumpyKV(B, m.num_kv_heads, m.d_k, max_len=T)
    xs = x.numpy()
    first = K.attend(K.normalize(xs[:, :-1], ln.eps), w, cache, None, K.causal_bias(T - 1, 0))
    last = K.attend_one(K.normalize(xs[:, -1], ln.eps), w, cache, None)
    return first, last.reshape(B, 1, 32)


def test_the_layer_norms_own_weight_and_bias_are_folded_in():
    m, ln = _module(), _affine_ln()
    x = torch.randn(2, 6, 32)
    with torch.no_grad():
        want = m(ln(x), is_causal=True).numpy()
    first, last = _decode(m, ln, x)
    np.testing.assert_allclose(np.concatenate([first, last], 1), want, rtol=1e-5, atol=1e-5)


def test_scores_in_the_hundreds_in_one_head_beside_small_ones_in_another():
    # each row's own largest score is taken off before exp: neither the sum (overflow) nor a
    # maximum over every head (rows of the quiet head would all underflow to 0 / 0)
    m, ln = _module(kv=4, bias=False), torch.nn.LayerNorm(32)
    with torch.no_grad():
        m.in_proj.weight[:8] *= 400.0  # head 0's queries: scores of a few hundred
    x = torch.randn(2, 6, 32)
    with torch.no_grad():
        want = m(ln(x), is_causal=True).numpy()
        q = m.in_proj.weight[:8] @ ln(x)[0].T / math.sqrt(8)
        k = m.in_proj.weight[32:40] @ ln(x)[0].T
    assert (q.T @ k).abs().max() > 200  # what the test is about
    first, last = _decode(m, ln, x)
    got = np.concatenate([first, last], 1)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_cache_filled_to_its_last_position_in_one_prefill_and_one_more_refused():
    m, ln = _module(), torch.nn.LayerNorm(32)
    w, cache = K.NumpyAttention.of(m, ln), K.NumpyKV(1, 2, 8, max_len=5)
    x = K.normalize(torch.randn(1, 5, 32).numpy(), ln.eps)
    K.attend(x, w, cache, None, K.causal_bias(5, 0))
    assert len(cache) == 5
    with pytest.raises(ValueError, match=r"holds 5 positions; 5 \+ 2 do not fit"):
        K.attend(x[:, :2], w, cache, None, K.causal_bias(2, 5))


def test_rope_given_to_weights_without_rotary_columns_is_refused_and_the_other_way_round():
    x = K.normalize(torch.randn(1, 3, 32).numpy(), 1e-5)
    plain = K.NumpyAttention.of(_module(rope=False))
    rotary = _module(rope=True)
    cos, sin = rotary.rotary.angles(3, torch.zeros(1))
    rope = cos[:, None].numpy(), sin[:, None].numpy()
    with pytest.raises(ValueError, match="has no rotary"):
        K.attend(x, plain, K.NumpyKV(1, 2, 8, 3), rope, K.causal_bias(3, 0))
    with pytest.raises(ValueError, match="has rotary"):
        K.attend(x, K.NumpyAttention.of(rotary), K.NumpyKV(1, 2, 8, 3), None, None)


@pytest.mark.parametrize("rows", [(), (3,)])
def test_a_constant_row_normalizes_to_zeros_as_torchs_layer_norm(rows):
    x = np.full((*rows, 16), 2.5, dtype=np.float32)
    got = K.normalize(x, 1e-5)
    want = F.layer_norm(torch.from_numpy(x), (16,), eps=1e-5).numpy()
    np.testing.assert_array_equal(got, want)  # both exactly 0


def test_decoding_stays_in_float32():
    m, ln = _module(), torch.nn.LayerNorm(32)
    first, last = _decode(m, ln, torch.randn(2, 4, 32))
    assert first.dtype == last.dtype == np.float32
    gelu = K.GeluRow((2, 8))
    assert gelu(np.ones((2, 4), np.float32), np.ones((4, 8), np.float32), None).dtype == np.float32
    t = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    a = K.as_array(t, transpose=True)
    assert a.dtype == np.float32 and a.flags.c_contiguous
    np.testing.assert_array_equal(a, t.numpy().T)


def test_the_projection_is_scaled_in_float64_and_rounded_once():
    m = _module(bias=True)
    w = K.NumpyAttention.of(m)
    W, b = m.in_proj.weight.detach().double(), m.in_proj.bias.detach().double()
    scale = math.sqrt(8)
    np.testing.assert_array_equal(w.in_wt[:, :32], (W[:32] / scale).float().numpy().T)
    np.testing.assert_array_equal(w.in_b[:32], (b[:32] / scale).float().numpy())
    np.testing.assert_array_equal(w.in_b[32:], b[32:].float().numpy())


def test_gathering_the_weights_leaves_a_float64_module_as_it_was():
    m = _module(rope=True, bias=True, dtype=torch.float64)
    before = {k: v.clone() for k, v in m.state_dict().items()}
    K.NumpyAttention.of(m, _affine_ln().double())
    for k, v in m.state_dict().items():
        assert torch.equal(v, before[k]), k


def test_causal_bias_adds_nothing_where_a_position_may_look():
    b = K.causal_bias(4, 3)
    assert (b[np.isfinite(b)] == 0).all() and np.isinf(b).sum() == 6
