import numpy as np
import pytest
import torch

from attnlab import ref
from attnlab.nn import functional as AF


def _qkv(*shape_q, S=6, Hk=None, dtype=torch.float64, grad=False):
    g = torch.Generator().manual_seed(0)
    B, H, T, E = shape_q
    Hk = H if Hk is None else Hk
    q = torch.randn(B, H, T, E, generator=g, dtype=dtype)
    k = torch.randn(B, Hk, S, E, generator=g, dtype=dtype)
    v = torch.randn(B, Hk, S, 5, generator=g, dtype=dtype)
    return [t.requires_grad_(grad) for t in (q, k, v)]


def _mask(T, S, dead_row=1):
    m = torch.rand(T, S, generator=torch.Generator().manual_seed(1)) < 0.7
    m[dead_row] = False
    return m


@pytest.mark.parametrize("weights", [False, True], ids=["fused", "weights"])
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"attn_mask": "bool"},
        {"attn_mask": "float"},
        {"is_causal": True},
        {"attn_mask": "bool", "is_causal": True},
        {"scale": 0.2},
    ],
    ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "plain",
)
def test_both_paths_match_the_reference(kw, weights):
    q, k, v = _qkv(2, 3, 4, 8)
    kw = dict(kw)
    if kw.get("attn_mask") == "bool":
        kw["attn_mask"] = _mask(4, 6)
    elif kw.get("attn_mask") == "float":
        kw["attn_mask"] = torch.randn(4, 6, dtype=torch.float64)
    result = AF.scaled_dot_product_attention(q, k, v, return_weights=weights, **kw)
    np_kw = {n: (x.numpy() if torch.is_tensor(x) else x) for n, x in kw.items()}
    want = ref.scaled_dot_product_attention(
        q.numpy(), k.numpy(), v.numpy(), return_weights=True, **np_kw
    )
    out = result[0] if weights else result
    np.testing.assert_allclose(out.numpy(), want[0], atol=1e-12)
    if weights:
        np.testing.assert_allclose(result[1].numpy(), want[1], atol=1e-12)


@pytest.mark.parametrize("weights", [False, True], ids=["fused", "weights"])
@pytest.mark.parametrize("mask_kind", ["bool", "float"])
def test_gradients_are_finite_with_fully_masked_rows(weights, mask_kind):
    q, k, v = _qkv(1, 2, 4, 8, dtype=torch.float32, grad=True)
    mask = _mask(4, 6)
    if mask_kind == "float":
        mask = torch.zeros(4, 6).masked_fill(~mask, float("-inf"))
    result = AF.scaled_dot_product_attention(q, k, v, attn_mask=mask, return_weights=weights)
    out = result[0] if weights else result
    assert torch.equal(out[:, :, 1], torch.zeros_like(out[:, :, 1]))
    out.square().sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    assert torch.equal(q.grad[:, :, 1], torch.zeros_like(q.grad[:, :, 1]))


def test_gqa_weights_path_matches_fused():
    q, k, v = _qkv(1, 6, 4, 8, Hk=2)
    fused = AF.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    out, w = AF.scaled_dot_product_attention(q, k, v, enable_gqa=True, return_weights=True)
    assert w.shape == (1, 6, 4, 6)
    torch.testing.assert_close(out, fused)


def test_softmax_keeps_nan():
    x = torch.tensor([[float("-inf")] * 3, [0.0, float("nan"), 1.0]])
    w = AF.softmax(x)
    assert torch.equal(w[0], torch.zeros(3)) and torch.isnan(w[1]).all()


def test_bad_input_is_named():
    q, k, v = _qkv(1, 2, 4, 8)
    with pytest.raises(ValueError, match=r"same width E"):
        AF.scaled_dot_product_attention(q, k[..., :3], v)
    with pytest.raises(TypeError, match=r"floating-point tensor, got dtype torch\.int64"):
        AF.scaled_dot_product_attention(q.long(), k, v)
    with pytest.raises(TypeError, match="attn_mask must be bool"):
        AF.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(4, 6, dtype=torch.int64))


def test_padding_mask():
    m = AF.padding_mask(torch.tensor([2, 4]), 4)
    assert m.shape == (2, 1, 1, 4) and m[0, 0, 0].tolist() == [True, True, False, False]
