"""The options of ``ref.variant_attention`` that tests/conform/test_ref_variants.py left unread
(top-left causal with T != S, a sliding window, an explicit mask, GQA, an odd number of heads,
float32), each against torch's SDPA with a mask built from index arithmetic here; and the input
errors of ``windows`` and ``alibi``, each naming its own argument (mutation testing of
ref/variants.py, windows.py and alibi.py, README "Mutation testing")."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlab import ref

rng = np.random.default_rng(7)


def _qkv(B=2, H=3, Hk=3, T=4, S=6, D=8, dtype=np.float64):
    shapes = ((B, H, T, D), (B, Hk, S, D), (B, Hk, S, D))
    return (rng.standard_normal(s).astype(dtype) for s in shapes)


def _torch(q, k, v, mask=None, **kw) -> np.ndarray:
    t = [torch.from_numpy(x) for x in (q, k, v)]
    m = None if mask is None else torch.from_numpy(np.asarray(mask))
    return F.scaled_dot_product_attention(*t, attn_mask=m, **kw).numpy()


def _window_by_loops(T, S, left, right) -> np.ndarray:
    """(T, S): query t sits on key p = t + S - T and sees p - left .. p + right (-1: no bound)."""
    ok = np.zeros((T, S), bool)
    for t in range(T):
        p = t + S - T
        for s in range(S):
            ok[t, s] = (left < 0 or s >= p - left) and (right < 0 or s <= p + right)
    return ok


@pytest.mark.parametrize("T, S", [(4, 6), (6, 4)])
def test_top_left_causal_is_torchs_is_causal_when_t_and_s_differ(T, S):
    q, k, v = _qkv(T=T, S=S)
    got = ref.variant_attention(q, k, v, is_causal=True)  # top_left is the default
    assert got.shape == (2, 3, T, 8)
    assert np.allclose(got, _torch(q, k, v, is_causal=True), atol=1e-12, rtol=0)


@pytest.mark.parametrize("window", [(1, 0), (2, 1), (-1, 1), (0, -1)])
def test_sliding_window_is_torch_with_the_window_mask(window):
    q, k, v = _qkv(T=5, S=7)
    got = ref.variant_attention(q, k, v, window_size=window)
    want = _torch(q, k, v, _window_by_loops(5, 7, *window))
    assert np.allclose(got, want, atol=1e-12, rtol=0)


def test_window_and_causal_and_lengths_combine_as_and():
    q, k, v = _qkv(T=5, S=7)
    lengths = np.array([7, 4])
    got = ref.variant_attention(
        q,
        k,
        v,
        is_causal=True,
        causal_alignment="bottom_right",
        window_size=(2, 3),
        key_lengths=lengths,
    )
    ok = _window_by_loops(5, 7, 2, 3) & _window_by_loops(5, 7, -1, 0)  # (T, S)
    ok = ok[None, None] & (np.arange(7) < lengths[:, None])[:, None, None, :]  # (B, 1, T, S)
    assert np.allclose(got, _torch(q, k, v, ok), atol=1e-12, rtol=0)


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_an_explicit_mask_is_torchs_attn_mask(kind):
    q, k, v = _qkv(T=4, S=6)
    mask = rng.random((2, 3, 4, 6)) < 0.7
    mask[..., 0] = True  # every row sees a key: torch gives NaN on empty rows
    if kind == "float":
        mask = rng.standard_normal((2, 3, 4, 6))
    got = ref.variant_attention(q, k, v, attn_mask=mask)
    assert np.allclose(got, _torch(q, k, v, mask), atol=1e-12, rtol=0)


def test_grouped_keys_need_enable_gqa_and_then_match_torch():
    q, k, v = _qkv(H=6, Hk=2)
    with pytest.raises(ValueError):
        ref.variant_attention(q, k, v)
    got = ref.variant_attention(q, k, v, enable_gqa=True, is_causal=True)
    assert np.allclose(got, _torch(q, k, v, is_causal=True, enable_gqa=True), atol=1e-12, rtol=0)


def test_float32_in_float32_out_within_torchs_own_error():
    q, k, v = _qkv(T=5, S=5, dtype=np.float32)
    got = ref.variant_attention(q, k, v, is_causal=True, window_size=(2, 0))
    assert got.dtype == np.float32
    want = _torch(*(x.astype(np.float64) for x in (q, k, v)), _window_by_loops(5, 5, 2, 0))
    assert np.abs(got - want).max() < 1e-5


def test_an_unknown_alignment_is_named():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="causal_alignment must be top_left or bottom_right"):
        ref.variant_attention(q, k, v, is_causal=True, causal_alignment="bottom_left")


@pytest.mark.parametrize(
    "f", [ref.causal_lower_right, lambda T, S: ref.sliding_window_mask(T, S, 1, 0)]
)
def test_window_masks_take_empty_sequences_and_name_a_bad_length(f):
    assert f(0, 3).shape == (0, 3) and f(3, 0).shape == (3, 0)
    for bad in (-1, True, 2.0):
        with pytest.raises(ValueError, match=rf"^T must be a non-negative int, got {bad!r}$"):
            f(bad, 3)
        with pytest.raises(ValueError, match=rf"^S must be a non-negative int, got {bad!r}$"):
            f(3, bad)


def test_a_bad_window_side_is_named():
    for left, right, name in [
        (-2, 0, "left"),
        (True, 0, "left"),
        (0, -3, "right"),
        (0, 1.5, "right"),
    ]:
        with pytest.raises(ValueError, match=rf"^window {name} must be an int >= -1"):
            ref.sliding_window_mask(3, 5, left, right)


def test_alibi_one_head_and_bad_head_counts():
    assert ref.alibi_slopes(1).tolist() == [2.0**-8]
    assert ref.alibi_slopes(np.int64(2)).tolist() == [2.0**-4, 2.0**-8]
    for bad in (0, -4, True, 2.0):
        with pytest.raises(ValueError, match=rf"^H must be a positive int, got {bad!r}$"):
            ref.alibi_slopes(bad)


def test_alibi_bias_is_float64_even_from_integer_slopes():
    bias = ref.alibi_bias(np.array([1, 2]), 2, 3)  # (H, T, S)
    assert bias.dtype == np.float64
    assert bias[1].tolist() == [[-2.0, 0.0, -2.0], [-4.0, -2.0, 0.0]]
