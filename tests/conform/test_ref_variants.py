"""``attnlab.ref``'s opt-in references against torch (float64) or formulas written out by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlab import ref

rng = np.random.default_rng(0)


def torch_lower_right(T: int, S: int):
    """torch's bottom-right causal bias, imported here: its module brings much of torch's
    compiler with it, about 2 s that every test process would pay at collection."""
    from torch.nn.attention.bias import causal_lower_right

    return causal_lower_right(T, S)


def _qkv(B=2, H=2, T=4, S=6, D=8):
    return (rng.standard_normal(s) for s in ((B, H, T, D), (B, H, S, D), (B, H, S, D)))


def _torch(q, k, v, **kw):
    t = (torch.from_numpy(x) for x in (q, k, v))
    return F.scaled_dot_product_attention(*t, **kw).numpy()


@pytest.mark.filterwarnings("ignore:Lower right causal bias will produce NaNs")
@pytest.mark.parametrize("T, S", [(3, 5), (5, 3), (1, 6), (4, 4)])
def test_bottom_right_causal_is_torchs_causal_lower_right(T, S):
    q, k, v = _qkv(T=T, S=S)
    want = _torch(q, k, v, attn_mask=torch_lower_right(T, S))
    got = ref.variant_attention(q, k, v, is_causal=True, causal_alignment="bottom_right")
    want = np.nan_to_num(want)  # rows that see nothing: torch may give NaN there, we give zeros
    assert np.allclose(got, want, atol=1e-12, rtol=0)
    assert (ref.causal_lower_right(T, S) == np.tril(np.ones((T, S), bool), S - T)).all()


def test_sliding_window_mask_by_loops():
    for T, S, left, right in [(6, 6, 2, 0), (4, 9, 3, 1), (7, 5, -1, 1), (3, 3, 0, -1)]:
        want = np.zeros((T, S), bool)
        for t in range(T):
            p = t + S - T
            for s in range(S):
                want[t, s] = (left < 0 or s >= p - left) and (right < 0 or s <= p + right)
        assert (ref.sliding_window_mask(T, S, left, right) == want).all()
    assert (ref.sliding_window_mask(3, 5, -1, 0) == ref.causal_lower_right(3, 5)).all()
    assert ref.sliding_window_mask(3, 5, -1, -1).all()
    with pytest.raises(ValueError, match="window left must be an int >= -1"):
        ref.sliding_window_mask(3, 5, -2, 0)


def test_alibi_slopes_and_bias_by_the_papers_formula():
    assert ref.alibi_slopes(8).tolist() == [2.0**-i for i in range(1, 9)]
    assert ref.alibi_slopes(4).tolist() == [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8]
    # 6 heads: the 4 slopes of 4 heads, then the odd ones of 8 heads (2^-1, 2^-3)
    assert ref.alibi_slopes(6).tolist() == [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8, 2.0**-1, 2.0**-3]
    slopes, T, S = ref.alibi_slopes(2), 3, 5
    bias = ref.alibi_bias(slopes, T, S)
    for h in range(2):
        for t in range(T):
            for s in range(S):
                assert bias[h, t, s] == -slopes[h] * abs(s - (t + S - T))


def test_softcap_and_alibi_attention_by_hand():
    q, k, v = _qkv(B=1, T=3, S=5)
    slopes, cap, scale = ref.alibi_slopes(2), 2.0, 0.4
    got = ref.variant_attention(q, k, v, scale=scale, softcap=cap, alibi_slopes=slopes)
    want = np.zeros_like(got)
    for h in range(2):
        for t in range(3):
            s = np.array([cap * np.tanh(q[0, h, t] @ k[0, h, j] * scale / cap) for j in range(5)])
            s -= slopes[h] * np.abs(np.arange(5) - (t + 2))
            w = np.exp(s - s.max())
            want[0, h, t] = (w / w.sum()) @ v[0, h]
    assert np.allclose(got, want, atol=1e-13, rtol=0)


def test_key_lengths_are_a_bool_mask_to_torch_and_zero_length_gives_zeros():
    q, k, v = _qkv(B=3, T=4, S=6)
    lengths = np.array([6, 2, 0])
    mask = np.arange(6)[None, :] < lengths[:, None]  # (B, S)
    want = _torch(q, k, v, attn_mask=torch.from_numpy(mask[:, None, None, :]))
    got = ref.variant_attention(q, k, v, key_lengths=lengths)
    assert np.allclose(got[:2], want[:2], atol=1e-12, rtol=0) and (got[2] == 0).all()


def test_kv_cache_is_attention_over_each_sequence_alone():
    """Decoding T queries at the end of a cache of cache_seqlens[b] keys = torch's SDPA over that
    sequence's keys alone, bottom-right causal; what lies past the length is never read."""
    q, k, v = _qkv(B=2, T=2, S=9)
    lengths = np.array([5, 9])
    k[0, :, 5:], v[0, :, 5:] = 1e6, -1e6  # garbage past the first length
    got = ref.variant_attention(q, k, v, is_causal=True, cache_seqlens=lengths)
    for b, n in enumerate(lengths):
        want = _torch(
            q[b : b + 1],
            k[b : b + 1, :, :n],
            v[b : b + 1, :, :n],
            attn_mask=torch_lower_right(2, int(n)),
        )
        assert np.allclose(got[b], want[0], atol=1e-12, rtol=0)
