"""Functional attention core in PyTorch, mirroring ``attnlab.ref`` name for name.

``scaled_dot_product_attention`` takes torch's arguments plus ``return_weights``. Without weights
it calls torch's fused kernel (flash / memory-efficient / math, whichever torch picks); with
weights it runs the explicit math so the weights can be returned. Both paths give zeros for a
query row that may attend to nothing, and finite gradients there.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from ..shapes import attention_shapes


def softmax(scores: Tensor, dim: int = -1) -> Tensor:
    """Softmax where a slice that is all ``-inf`` gives zeros (and zero gradient), not NaN."""
    dead = (scores == float("-inf")).all(dim=dim, keepdim=True)
    weights = torch.softmax(scores.masked_fill(dead, 0.0), dim=dim)
    return weights.masked_fill(dead, 0.0)


def causal_mask(T: int, S: int | None = None, device: torch.device | None = None) -> Tensor:
    """Bool ``(T, S)``, True where key s <= query t (top-left aligned, like ``is_causal``)."""
    S = T if S is None else S
    return torch.ones(T, S, dtype=torch.bool, device=device).tril()


def padding_mask(lengths: Tensor, S: int) -> Tensor:
    """Valid lengths ``(B,)`` -> bool ``(B, 1, 1, S)``, True for real (non-padding) keys.

    Broadcasts over heads and query rows of ``(B, H, T, S)`` scores.
    """
    return (torch.arange(S, device=lengths.device) < lengths[:, None])[:, None, None, :]


def _check_inputs(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None, enable_gqa: bool):
    for t, n in ((q, "q"), (k, "k"), (v, "v")):
        if not torch.is_floating_point(t):
            raise TypeError(f"{n} must be a floating-point tensor, got dtype {t.dtype}")
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(
            f"inputs must share one dtype, got q: {q.dtype}, k: {k.dtype}, v: {v.dtype}"
        )
    attention_shapes(tuple(q.shape), tuple(k.shape), tuple(v.shape), enable_gqa)
    if (
        attn_mask is not None
        and attn_mask.dtype != torch.bool
        and not attn_mask.is_floating_point()
    ):
        raise TypeError(
            f"attn_mask must be bool (True = may attend) or float (added), got {attn_mask.dtype}"
        )


def combine_masks(
    attn_mask: Tensor | None, is_causal: bool, T: int, S: int, like: Tensor, offset: int = 0
) -> Tensor | None:
    """One mask holding both ``attn_mask`` and the causal constraint (torch accepts only one).

    Bool stays bool (logical and); a float mask gets ``-inf`` above the diagonal. ``like`` gives
    the device and float dtype. ``offset`` shifts the diagonal: query t sees keys s <= t + offset
    (queries that follow ``offset`` cached positions).
    """
    if not is_causal:
        return attn_mask
    causal = torch.ones(T, S, dtype=torch.bool, device=like.device).tril(offset)  # (T, S)
    if attn_mask is None:
        return causal
    if attn_mask.dtype == torch.bool:
        return attn_mask & causal
    return attn_mask.to(like.dtype).masked_fill(~causal, float("-inf"))


def cached_causal(
    attn_mask: Tensor | None, is_causal: bool, T: int, past: int, like: Tensor
) -> tuple[Tensor | None, bool]:
    """(attn_mask, is_causal) for T new queries after ``past`` cached keys (S = past + T).

    The causal diagonal moves right by ``past``: new query t sees keys 0..past + t. One new
    query sees every key, so it needs no mask at all (the common decoding step).
    """
    if not is_causal or past == 0:
        return attn_mask, is_causal
    if T == 1:
        return attn_mask, False
    return combine_masks(attn_mask, True, T, past + T, like, offset=past), False


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
    return_weights: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """softmax(q k^T * scale + mask) v.

    Shapes: q ``(..., T, E)``, k ``(..., S, E)``, v ``(..., S, Ev)``; attn_mask broadcasts to
    ``(..., T, S)``, bool True = may attend or float added. Returns out ``(..., T, Ev)`` and, with
    ``return_weights``, the weights ``(..., T, S)`` before dropout.
    """
    _check_inputs(q, k, v, attn_mask, enable_gqa)
    return attention_unchecked(
        q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa, return_weights
    )


def attention_unchecked(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
    return_weights: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """``scaled_dot_product_attention`` without argument checks, for callers that built
    consistent inputs themselves (MultiHeadAttention: one token per decoding step counts)."""
    T, S = q.shape[-2], k.shape[-2]
    if is_causal and attn_mask is not None:
        attn_mask, is_causal = combine_masks(attn_mask, True, T, S, q), False
    if not return_weights:
        return F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=attn_mask,
            dropout_p=dropout_p,
            is_causal=is_causal,
            scale=scale,
            enable_gqa=enable_gqa,
        )
    if enable_gqa and q.dim() >= 3 and k.shape[-3] != q.shape[-3]:
        group = q.shape[-3] // k.shape[-3]
        k = k.repeat_interleave(group, dim=-3)  # (..., Hq, S, E)
        v = v.repeat_interleave(group, dim=-3)  # (..., Hq, S, Ev)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale  # (..., T, S)
    mask = combine_masks(attn_mask, is_causal, T, S, q)
    if mask is not None:
        scores = (
            scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
        )
    weights = softmax(scores, dim=-1)
    dropped = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    return dropped @ v, weights  # (..., T, Ev), (..., T, S)
