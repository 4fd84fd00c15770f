"""Scaled dot-product attention in NumPy: the reference every other implementation is held to.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + mask) V        (Vaswani et al., 2017)

Semantics follow ``torch.nn.functional.scaled_dot_product_attention``: a bool mask is True where a
query may attend, a float mask is added to the scores, the default scale is ``1/sqrt(E)``, and
grouped-query attention (GQA) shares each key/value head among ``Hq // Hk`` consecutive query
heads. Two deliberate extensions: ``attn_mask`` and ``is_causal`` may be combined (both apply),
and ``return_weights`` also returns the attention weights.

A query row that may attend to nothing (fully masked, or no keys at all: S = 0) gets zero weights
and a zero output, as torch >= 2.5 does — never NaN. NaN or Inf in unmasked inputs propagate.
"""

from __future__ import annotations

import math

import numpy as np

from ..shapes import attention_shapes
from ._checks import (
    as_float_array,
    check_weight,
    mask_array,
    min_ndim,
    same_dtype,
)
from .masks import causal_mask
from .softmax import softmax


def _mask_to_bias(attn_mask: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Bool mask -> 0 / -inf bias; float mask -> itself (in the scores' dtype)."""
    if attn_mask.dtype == bool:
        return np.where(attn_mask, 0.0, -np.inf).astype(dtype)
    return attn_mask.astype(dtype, copy=False)


def _expand_kv_heads(k: np.ndarray, v: np.ndarray, q_heads: int) -> tuple[np.ndarray, np.ndarray]:
    """GQA: repeat each key/value head for its group of query heads (head i uses i // group)."""
    group = q_heads // k.shape[-3]
    return np.repeat(k, group, axis=-3), np.repeat(v, group, axis=-3)  # (..., Hq, S, E)


def prepare_qkv(q, k, v, enable_gqa: bool):
    """Validated float arrays q, k, v (k, v with their heads repeated under GQA), their dtype,
    the broadcast batch shape, and the GQA group size (1 without GQA). Shared with tiled."""
    q, k, v = (as_float_array(a, n) for a, n in ((q, "q"), (k, "k"), (v, "v")))
    dtype = same_dtype(q=q, k=k, v=v)
    batch = attention_shapes(q.shape, k.shape, v.shape, enable_gqa)
    group = 1
    if enable_gqa and q.ndim >= 3 and k.ndim >= 3 and q.shape[-3] != k.shape[-3]:
        group = q.shape[-3] // k.shape[-3]
        k, v = _expand_kv_heads(k, v, q.shape[-3])
    return q, k, v, dtype, batch, group


def scaled_dot_product_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    attn_mask: np.ndarray | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
    return_weights: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Attention of queries ``q`` over keys ``k`` and values ``v``.

    Shapes: q ``(..., T, E)``, k ``(..., S, E)``, v ``(..., S, Ev)``; leading dims broadcast
    (with heads they are ``(B, H, ...)``). attn_mask broadcasts to ``(..., T, S)``.
    Returns out ``(..., T, Ev)`` and, with ``return_weights``, weights ``(..., T, S)``, both in
    the inputs' dtype.
    """
    q, k, v, dtype, batch, _ = prepare_qkv(q, k, v, enable_gqa)
    T, S, E = q.shape[-2], k.shape[-2], q.shape[-1]
    scale = 1.0 / math.sqrt(E) if scale is None else float(scale)

    scores = q @ np.swapaxes(k, -1, -2)  # (..., T, S), then changed in place (a copy of the
    scores *= dtype.type(scale)  # table per step costs time and memory at large T)
    if attn_mask is not None:
        scores = scores + _mask_to_bias(mask_array(attn_mask, (*batch, T, S)), dtype)
    if is_causal:
        np.copyto(scores, dtype.type(-np.inf), where=~causal_mask(T, S))  # the future: -inf
    weights = softmax(scores, axis=-1)  # fully masked rows -> 0
    out = weights @ v  # (..., T, S) @ (..., S, Ev) -> (..., T, Ev)
    return (out, weights) if return_weights else out


def self_attention(
    X: np.ndarray,
    W_q: np.ndarray,
    W_k: np.ndarray,
    W_v: np.ndarray,
    causal: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """One attention head over a sequence ``X`` ``(..., T, d_model)``.

    Q = X W_q, K = X W_k, V = X W_v with W_q, W_k ``(d_model, d_k)`` and W_v ``(d_model, d_v)``;
    scores are scaled by ``1/sqrt(d_k)`` (the key width, ``W_k.shape[1]``).
    Returns ``(out (..., T, d_v), weights (..., T, T))``.
    """
    X = as_float_array(X, "X")
    Ws = {n: as_float_array(w, n) for n, w in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v))}
    same_dtype(X=X, **Ws)
    min_ndim(X, 2, "X", "(..., T, d_model)")
    for n, w in Ws.items():
        check_weight(w, n, X, "X", d_in="d_model")
    if Ws["W_q"].shape[1] != Ws["W_k"].shape[1]:
        raise ValueError(
            f"W_q and W_k must project to the same width d_k: {Ws['W_q'].shape} vs "
            f"{Ws['W_k'].shape}"
        )
    Q, K, V = (
        X @ Ws["W_q"],
        X @ Ws["W_k"],
        X @ Ws["W_v"],
    )  # (..., T, d_k), (..., T, d_k), (..., T, d_v)
    return scaled_dot_product_attention(Q, K, V, is_causal=causal, return_weights=True)
