"""Attention with the options practitioners test beyond torch's SDPA (FlashAttention's test
suite is the anchor): bottom-right causal alignment, a sliding window, a logit soft-cap, ALiBi,
key padding given as valid lengths, and decoding over a KV cache at an offset.

    scores = q k^T * scale;  scores = cap * tanh(scores / cap)  (softcap)
    scores += alibi_bias + attn_mask;  blocked keys -> -inf;  out = softmax(scores) v

Rows that may see no key give zeros, as in ``scaled_dot_product_attention``.
"""

from __future__ import annotations

import math

import numpy as np

from .alibi import alibi_bias
from .masks import causal_mask
from .sdpa import _mask_to_bias, prepare_qkv
from .softmax import softmax
from .windows import causal_lower_right, length_mask, sliding_window_mask


def _allowed(T, S, is_causal, alignment, window, lengths) -> np.ndarray:
    """Bool, broadcastable to (B, H, T, S): the keys each query may see."""
    ok = np.ones((1, 1, T, S), dtype=bool)
    if is_causal:
        ok = ok & (causal_lower_right(T, S) if alignment == "bottom_right" else causal_mask(T, S))
    if window is not None:
        ok = ok & sliding_window_mask(T, S, *window)
    if lengths is not None:
        ok = ok & length_mask(lengths, S)
    return ok


def variant_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    attn_mask: np.ndarray | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
    *,
    causal_alignment: str = "top_left",
    window_size: tuple[int, int] | None = None,
    softcap: float | None = None,
    alibi_slopes: np.ndarray | None = None,
    key_lengths: np.ndarray | None = None,
    cache_seqlens: np.ndarray | None = None,
) -> np.ndarray:
    """q ``(B, H, T, E)``, k ``(B, Hk, S, E)``, v ``(B, Hk, S, Ev)`` -> out ``(B, H, T, Ev)``.

    ``causal_alignment``: ``"top_left"`` (torch's ``is_causal``) or ``"bottom_right"``.
    ``window_size=(left, right)``: see ``sliding_window_mask`` (-1: unbounded).
    ``alibi_slopes``: ``(H,)`` or ``(B, H)``. ``key_lengths`` ``(B,)``: keys s >= length are
    padding. ``cache_seqlens`` ``(B,)``: k, v are a cache whose first ``cache_seqlens[b]``
    positions hold sequence b (the last T of them are the queries' own); a query sees the cache
    up to its own position, bottom-right aligned within that length, when ``is_causal``.
    """
    if causal_alignment not in ("top_left", "bottom_right"):
        raise ValueError(
            f"causal_alignment must be top_left or bottom_right, got {causal_alignment!r}"
        )
    q, k, v, dtype, _, _ = prepare_qkv(q, k, v, enable_gqa)
    T, S, E = q.shape[-2], k.shape[-2], q.shape[-1]
    scale = 1.0 / math.sqrt(E) if scale is None else float(scale)
    x = (q @ np.swapaxes(k, -1, -2)) * scale  # (B, H, T, S)
    if softcap is not None:
        x = softcap * np.tanh(x / softcap)
    if alibi_slopes is not None:
        x = x + alibi_bias(alibi_slopes, T, S).astype(dtype)
    if attn_mask is not None:
        x = x + _mask_to_bias(np.asarray(attn_mask), dtype)
    if cache_seqlens is not None:
        ok = _cache_allowed(np.asarray(cache_seqlens), T, S, is_causal)
    else:
        ok = _allowed(T, S, is_causal, causal_alignment, window_size, key_lengths)
    x = np.where(ok, x, -np.inf)
    return (softmax(x, axis=-1) @ v).astype(dtype)


def _cache_allowed(lengths: np.ndarray, T: int, S: int, is_causal: bool) -> np.ndarray:
    """(B, 1, T, S): batch b's query t sits at cache position lengths[b] - T + t."""
    ok = length_mask(lengths, S)  # (B, 1, 1, S)
    if is_causal:
        pos = lengths[:, None] - T + np.arange(T)[None, :]  # (B, T)
        ok = ok & (np.arange(S)[None, None, :] <= pos[:, :, None])[:, None]
    return ok
