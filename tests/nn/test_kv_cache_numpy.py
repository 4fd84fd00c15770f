"""The NumPy decoding pieces (attnlab.nn.kv_cache_numpy) against torch's modules."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlab.nn import MultiHeadAttention
from attnlab.nn import kv_cache_numpy as K


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("rows", [(), (3,), (2, 5)])
def test_a_folded_layer_norm_and_linear_equal_torch(affine, rows):
    torch.manual_seed(0)
    ln = torch.nn.LayerNorm(12, elementwise_affine=affine)
    if affine:
        with torch.no_grad():
            ln.weight.uniform_(0.5, 2.0)
            ln.bias.normal_(0, 1)
    lin = torch.nn.Linear(12, 7)
    x = torch.randn(*rows, 12) * 3 + 1  # a mean away from 0
    want = lin(ln(x)).detach()
    got = K.linear(K.normalize(x.numpy(), ln.eps), *K.folded(lin.weight, lin.bias, ln))
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)
    # the scales: out multiplies weight and bias, in the weight only
    w_t, b = K.folded(lin.weight, lin.bias, out_scale=0.5, in_scale=4.0)
    np.testing.assert_allclose(w_t, 2.0 * lin.weight.detach().numpy().T, rtol=1e-6)
    np.testing.assert_allclose(b, 0.5 * lin.bias.detach().numpy(), rtol=1e-6)


def test_the_scaled_gelu_with_its_scales_folded_back_is_torchs_gelu():
    x = torch.linspace(-6, 6, 301, dtype=torch.float64)
    u = (x * K.GELU_SCALE).float().numpy()
    got = K.gelu_scaled(u.copy()) * K.GELU_SCALE  # u (1 + erf u) / sqrt 2 = gelu(x)
    np.testing.assert_allclose(got, F.gelu(x).numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("rows", [(), (2,)])
def test_the_gelu_row_buffers_equal_the_linear_and_gelu_call_after_call(rows):
    # a float64 oracle: F.gelu of the linear, with the scales folded as the decoder folds them
    torch.manual_seed(1)
    lin = torch.nn.Linear(6, 10).double()
    w_t, b = K.folded(lin.weight, lin.bias, out_scale=K.GELU_SCALE)
    row = K.GeluRow((*rows, 10))
    for _ in range(3):  # the same buffers reused: each call's result is its own input's
        x = torch.randn(*rows, 6, dtype=torch.float64)
        got = row(x.float().numpy(), w_t, b) * K.GELU_SCALE
        assert got.shape == (*rows, 10)
        want = F.gelu(lin(x)).detach().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    got = row(x.float().numpy(), w_t, None)  # no bias
    np.testing.assert_allclose(got, K.gelu_scaled(x.float().numpy() @ w_t), rtol=1e-6, atol=1e-6)


def test_causal_bias_lets_each_new_position_see_the_cache_and_itself():
    b = K.causal_bias(3, 2)  # 2 cached, 3 new
    assert b.shape == (3, 5) and b.dtype == np.float32
    assert (np.isinf(b) == np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]])).all()
    assert K.causal_bias(1, 7) is None


@pytest.mark.parametrize(
    ("kv", "rope", "bias"), [(4, False, True), (2, True, False), (1, True, True)]
)
@pytest.mark.parametrize("batch", [1, 2])
def test_attention_over_the_cache_equals_multi_head_attention(kv, rope, bias, batch):
    # a prefill of 5 positions (attend) then 3 steps (attend_one), against the module on all 8
    torch.manual_seed(1)
    m = MultiHeadAttention(32, 4, kv, bias=bias, rope=rope).eval()
    ln = torch.nn.LayerNorm(32)
    x = torch.randn(batch, 8, 32)
    with torch.no_grad():
        want = m(ln(x), is_causal=True).numpy()
    w = K.NumpyAttention.of(m, ln)
    cache = K.NumpyKV(batch, kv, 8, max_len=8)
    xs = x.numpy()
    h = K.normalize(xs[:, :5], ln.eps)
    outs = [K.attend(h, w, cache, _rope(m, 0, 5, rope), K.causal_bias(5, 0))]
    for t in range(5, 8):
        row = xs[:, t] if batch > 1 else xs[0, t]  # one sequence: a vector
        r = None if not rope else tuple(a[:, 0] for a in _rope(m, t, 1, rope))
        outs.append(K.attend_one(K.normalize(row, ln.eps), w, cache, r).reshape(batch, 1, 32))
    np.testing.assert_allclose(np.concatenate(outs, 1), want, rtol=1e-5, atol=1e-5)
    assert len(cache) == 8
    with pytest.raises(ValueError, match="holds 8 positions"):
        K.attend_one(K.normalize(row, ln.eps), w, cache, r)


def _rope(m, start, T, on):
    if not on:
        return None
    cos, sin = m.rotary.angles(start + T, torch.zeros(1))
    return cos[start:, None].numpy(), sin[start:, None].numpy()  # (T, 1, D)


def test_one_blas_thread_holds_blas_to_one_thread_and_restores_it():
    libs = K._blas_libraries()
    if not libs:
        pytest.skip("no BLAS library that threadpoolctl controls")
    before = [lib.get_num_threads() for lib in libs]
    with K.one_blas_thread():
        assert all(lib.get_num_threads() == 1 for lib in libs)
    assert [lib.get_num_threads() for lib in libs] == before


def test_the_scores_scale_sits_on_the_queries():
    m = MultiHeadAttention(16, 2, bias=False)
    w = K.NumpyAttention.of(m)
    q_rows = m.in_proj.weight.detach()[:16].numpy().T
    np.testing.assert_allclose(w.in_wt[:, :16], q_rows / math.sqrt(8), rtol=1e-6)
    np.testing.assert_allclose(w.in_wt[:, 16:], m.in_proj.weight.detach()[16:].numpy().T)
