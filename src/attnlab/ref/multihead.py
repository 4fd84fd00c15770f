"""Multi-head attention in NumPy: one projection split into heads, attention per head, concat.

Following "Attention Is All You Need" (Vaswani et al., 2017), section 3.2.2. The per-head matrices
W_i^Q of the paper are column blocks of one big W_q: head i owns columns i*d_k .. (i+1)*d_k.
Weights are ``(d_in, d_out)`` matrices applied as ``x @ W`` (torch's ``nn.Linear`` stores the
transpose: ``W = linear.weight.T``).
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_weight, same_dtype
from .sdpa import scaled_dot_product_attention


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """``(..., T, d_model)`` -> ``(..., H, T, d_k)`` with ``d_k = d_model // H``."""
    *lead, T, d_model = x.shape
    x = x.reshape(*lead, T, num_heads, d_model // num_heads)  # (..., T, H, d_k)
    return np.swapaxes(x, -2, -3)  # (..., H, T, d_k)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """``(..., H, T, d_k)`` -> ``(..., T, H * d_k)``: the heads' outputs side by side."""
    x = np.swapaxes(x, -2, -3)  # (..., T, H, d_k)
    return x.reshape(*x.shape[:-2], -1)  # (..., T, d_model)


def _project(x: np.ndarray, W: np.ndarray, b: np.ndarray | None, xn: str, wn: str) -> np.ndarray:
    check_weight(W, wn, x, xn)
    y = x @ W
    if b is not None:
        if b.shape != (W.shape[1],):
            raise ValueError(f"bias for {wn} must have shape ({W.shape[1]},), got {b.shape}")
        y = y + b
    return y


def multi_head_attention(
    query: np.ndarray,
    key: np.ndarray,
    value: np.ndarray,
    W_q: np.ndarray,
    W_k: np.ndarray,
    W_v: np.ndarray,
    W_o: np.ndarray,
    num_heads: int,
    b_q: np.ndarray | None = None,
    b_k: np.ndarray | None = None,
    b_v: np.ndarray | None = None,
    b_o: np.ndarray | None = None,
    attn_mask: np.ndarray | None = None,
    is_causal: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention.

    Shapes: query ``(..., T, d_q)``, key ``(..., S, d_kin)``, value ``(..., S, d_vin)``;
    W_q ``(d_q, d_model)``, W_k ``(d_kin, d_model)``, W_v ``(d_vin, d_model)``,
    W_o ``(d_model, d_out)``; biases are 1-D. attn_mask (True = may attend) broadcasts to
    ``(..., num_heads, T, S)``; a ``(T, S)`` mask applies to every batch and head.
    Returns ``(out (..., T, d_out), weights (..., num_heads, T, S))``.
    """
    arrays = {
        n: as_float_array(a, n)
        for n, a in dict(
            query=query,
            key=key,
            value=value,
            W_q=W_q,
            W_k=W_k,
            W_v=W_v,
            W_o=W_o,
            b_q=b_q,
            b_k=b_k,
            b_v=b_v,
            b_o=b_o,
        ).items()
        if a is not None
    }
    same_dtype(**arrays)
    a = arrays
    if isinstance(num_heads, bool) or not isinstance(num_heads, (int, np.integer)) or num_heads < 1:
        raise ValueError(f"num_heads must be a positive int, got {num_heads!r}")
    d_model = a["W_q"].shape[-1]
    if d_model % num_heads:
        raise ValueError(
            f"num_heads ({num_heads}) must divide d_model ({d_model}, from W_q {a['W_q'].shape})"
        )
    for n in ("W_k", "W_v"):
        if a[n].ndim != 2 or a[n].shape[1] != d_model:
            raise ValueError(f"{n} must be (d_in, d_model={d_model}), got {a[n].shape}")
    Q = _project(a["query"], a["W_q"], a.get("b_q"), "query", "W_q")  # (..., T, d_model)
    K = _project(a["key"], a["W_k"], a.get("b_k"), "key", "W_k")  # (..., S, d_model)
    V = _project(a["value"], a["W_v"], a.get("b_v"), "value", "W_v")  # (..., S, d_model)
    Q, K, V = (split_heads(x, num_heads) for x in (Q, K, V))  # (..., H, T|S, d_k)
    out, weights = scaled_dot_product_attention(
        Q, K, V, attn_mask=attn_mask, is_causal=is_causal, return_weights=True
    )  # (..., H, T, d_k), (..., H, T, S)
    out = _project(merge_heads(out), a["W_o"], a.get("b_o"), "concatenated heads", "W_o")
    return out, weights  # (..., T, d_out), (..., H, T, S)
