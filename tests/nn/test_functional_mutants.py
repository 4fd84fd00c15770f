"""The functional core's edges against explicit float64 math written here: masks combined with
the causal constraint (bool and float, shifted by a cache), decoding after cached keys,
dropout after the weights, and the errors a learner reads. Written from the mutants that
survived tests/nn/test_functional.py (tools/mutation.sh)."""

import math

import pytest
import torch

from attnlab.nn import functional as AF


def _qkv(T=4, S=6, E=8, Ev=5, H=2, Hk=None):
    g = torch.Generator().manual_seed(3)
    Hk = H if Hk is None else Hk
    q = torch.randn(1, H, T, E, generator=g, dtype=torch.float64)
    k = torch.randn(1, Hk, S, E, generator=g, dtype=torch.float64)
    v = torch.randn(1, Hk, S, Ev, generator=g, dtype=torch.float64)
    return q, k, v


def _explicit(q, k, v, allowed=None, add=None, scale=None):
    """softmax(q k^T scale + add, only over allowed keys) v, one row at a time."""
    s = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if add is not None:
        s = s + add
    if allowed is not None:
        s = s.masked_fill(~allowed, float("-inf"))
    w = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return w @ v, w


def test_causal_and_padding_masks_are_top_left_and_per_sequence():
    assert AF.causal_mask(2, 3).tolist() == [[True, False, False], [True, True, False]]
    assert AF.causal_mask(3).shape == (3, 3) and AF.causal_mask(3).dtype == torch.bool
    m = AF.padding_mask(torch.tensor([0, 3]), 3)
    assert m[:, 0, 0].tolist() == [[False] * 3, [True] * 3]


def test_combine_masks_keeps_bool_bool_and_puts_minus_inf_above_the_shifted_diagonal():
    like = torch.zeros(1, dtype=torch.float64)
    user = torch.tensor([[True, False, True], [True, True, True]])
    assert AF.combine_masks(user, False, 2, 3, like) is user
    assert AF.combine_masks(None, False, 2, 3, like) is None
    assert AF.combine_masks(None, True, 2, 3, like).tolist() == [
        [True, False, False],
        [True, True, False],
    ]
    assert AF.combine_masks(user, True, 2, 3, like, offset=1).tolist() == [
        [True, False, False],
        [True, True, True],
    ]
    add = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float32)
    got = AF.combine_masks(add, True, 2, 3, like)
    inf = float("-inf")
    assert got.dtype == torch.float64
    assert got.tolist() == [[1.0, inf, inf], [4.0, 5.0, inf]]


def test_decoding_after_cached_keys_sees_every_past_key():
    like = torch.zeros(1)
    user = torch.ones(3, 5, dtype=torch.bool)
    assert AF.cached_causal(user, False, 3, 2, like) == (user, False)
    assert AF.cached_causal(None, True, 3, 0, like) == (None, True)
    assert AF.cached_causal(None, True, 1, 4, like) == (None, False)
    mask, causal = AF.cached_causal(None, True, 3, 2, like)
    assert causal is False
    assert mask.tolist() == [[True] * 3 + [False] * 2, [True] * 4 + [False], [True] * 5]
    user = torch.ones(3, 5, dtype=torch.bool)
    user[:, 0] = False  # the user's mask is kept beside the shifted diagonal
    mask, _ = AF.cached_causal(user, True, 3, 2, like)
    assert mask.tolist() == [
        [False] + [True] * 2 + [False] * 2,
        [False] + [True] * 3 + [False],
        [False] + [True] * 4,
    ]


@pytest.mark.parametrize("weights", [False, True])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_a_mask_and_is_causal_together_apply_both(weights, kind):
    q, k, v = _qkv()
    allowed = torch.rand(4, 6, generator=torch.Generator().manual_seed(0)) < 0.6
    allowed[:, 0] = True
    causal = torch.ones(4, 6, dtype=torch.bool).tril()
    if kind == "bool":
        mask, add = allowed, None
    else:
        mask = torch.zeros(4, 6, dtype=torch.float64).masked_fill(~allowed, float("-inf")) + 0.5
        add = mask.masked_fill(~allowed, 0.0)
    got = AF.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, is_causal=True, return_weights=weights
    )
    want = _explicit(q, k, v, allowed & causal, add)
    torch.testing.assert_close(got[0] if weights else got, want[0], rtol=0, atol=1e-12)
    if weights:
        torch.testing.assert_close(got[1], want[1], rtol=0, atol=1e-12)


def test_the_weights_path_scales_by_the_given_scale_and_repeats_grouped_heads():
    q, k, v = _qkv(H=4, Hk=2)
    out, w = AF.scaled_dot_product_attention(
        q, k, v, scale=0.3, enable_gqa=True, return_weights=True
    )
    kk, vv = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
    want = _explicit(q, kk, vv, scale=0.3)
    torch.testing.assert_close(out, want[0], rtol=0, atol=1e-12)
    torch.testing.assert_close(w, want[1], rtol=0, atol=1e-12)
    # unbatched (H, T, E) with grouped heads
    out3, _ = AF.scaled_dot_product_attention(
        q[0], k[0], v[0], enable_gqa=True, return_weights=True
    )
    torch.testing.assert_close(out3, _explicit(q[0], kk[0], vv[0])[0], rtol=0, atol=1e-12)


def test_dropout_drops_after_the_weights_which_come_back_undropped():
    q, k, v = _qkv()
    torch.manual_seed(0)
    out, w = AF.scaled_dot_product_attention(q, k, v, dropout_p=0.3, return_weights=True)
    plain_out, plain_w = _explicit(q, k, v)
    torch.testing.assert_close(w, plain_w, rtol=0, atol=1e-12)
    assert not torch.allclose(out, plain_out)
    torch.manual_seed(0)
    kept = torch.nn.functional.dropout(plain_w, p=0.3)
    torch.testing.assert_close(out, kept @ v, rtol=0, atol=1e-12)
    fused = AF.scaled_dot_product_attention(q, k, v, dropout_p=0.3)  # torch's kernel drops too
    assert not torch.allclose(fused, plain_out)


def test_unbatched_and_two_dim_inputs_with_a_mask_and_is_causal():
    q, k, v = _qkv(T=3, S=3, E=8)
    allowed = torch.tensor([[True, False, True], [True, True, False], [False, True, True]])
    got = AF.scaled_dot_product_attention(
        q[0], k[0], v[0], attn_mask=allowed, is_causal=True, return_weights=True
    )
    want = _explicit(q[0], k[0], v[0], allowed & torch.ones(3, 3, dtype=torch.bool).tril())
    torch.testing.assert_close(got[1], want[1], rtol=0, atol=1e-12)
    _, w = AF.scaled_dot_product_attention(
        q[0, 0], k[0, 0], v[0, 0], enable_gqa=True, return_weights=True
    )
    torch.testing.assert_close(w, _explicit(q[0, 0], k[0, 0], v[0, 0])[1], rtol=0, atol=1e-12)


def test_each_bad_input_is_named():
    q, k, v = _qkv()
    for bad, name in ((q.long(), "q"), (k.long(), "k"), (v.int(), "v")):
        args = {"q": q, "k": k, "v": v, name: bad}
        with pytest.raises(TypeError, match=rf"^{name} must be a floating-point tensor, got dtype"):
            AF.scaled_dot_product_attention(**args)
    with pytest.raises(
        TypeError,
        match=r"^inputs must share one dtype, got q: torch.float64, k: torch.float32, "
        r"v: torch.float64$",
    ):
        AF.scaled_dot_product_attention(q, k.float(), v)
    with pytest.raises(TypeError, match=r"^attn_mask must be bool .* got torch.int32$"):
        AF.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(4, 6, dtype=torch.int32))


def test_softmax_of_a_dead_row_is_zero_along_the_given_dim():
    x = torch.tensor([[float("-inf"), 0.0], [float("-inf"), 0.0]])
    assert AF.softmax(x, dim=0).tolist() == [[0.0, 0.5], [0.0, 0.5]]
