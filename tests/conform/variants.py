"""The opt-in rows' options written out plainly in torch (masks from index arithmetic, not from
``attnlab.ref``), correct by default, with one switch per bug; and torch's own SDPA with its
``causal_lower_right`` bias, the anchor of the bottom-right row."""

from __future__ import annotations

import math
from functools import partial

import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right


def attention(
    q,
    k,
    v,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
    causal_alignment="top_left",
    window_size=None,
    softcap=None,
    alibi_slopes=None,
    key_lengths=None,
    cache_seqlens=None,
    bug=None,
):
    """softmax(cap(q k^T * scale) + alibi + mask, over the allowed keys) v (float32 inside)."""
    dtype = q.dtype
    q, k, v = (x.float() if x.dtype in (torch.float16, torch.bfloat16) else x for x in (q, k, v))
    B, H, T, D = q.shape
    S = k.shape[-2]
    if enable_gqa and k.shape[1] != H:
        k, v = (x.repeat_interleave(H // x.shape[1], dim=1) for x in (k, v))
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    s = q @ k.transpose(-2, -1) * scale  # (B, H, T, S)
    if softcap is not None:
        if bug == "softcap_before_scale":
            s = softcap * torch.tanh(q @ k.transpose(-2, -1) / softcap) * scale
        else:
            s = softcap * torch.tanh(s / softcap)
    i, j = torch.arange(T)[:, None], torch.arange(S)[None, :]
    pos = i + S - T  # each query's key position, bottom-right aligned: (T, 1)
    if alibi_slopes is not None:
        sign = -1.0 if bug == "alibi_sign" else 1.0
        s = s - sign * alibi_slopes.view(1, H, 1, 1) * (j - pos).abs()
    allowed = torch.ones(B, 1, T, S, dtype=torch.bool)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            allowed = allowed & attn_mask
        else:
            s = s + attn_mask
    if cache_seqlens is not None:
        n = torch.full_like(cache_seqlens, S) if bug == "cache_ignored" else cache_seqlens
        n = n.long().view(B, 1, 1, 1)
        allowed = allowed & (j < n)
        if is_causal:
            allowed = allowed & (j <= n - T + i)
    elif is_causal:
        bottom = causal_alignment == "bottom_right" and bug != "top_left"
        allowed = allowed & (j <= (pos if bottom else i))
    if window_size is not None:
        left, right = window_size
        left = left + 1 if bug == "window_wide" and left >= 0 else left
        if left >= 0:
            allowed = allowed & (j - pos >= -left)
        if right >= 0:
            allowed = allowed & (j - pos <= right)
    if key_lengths is not None:
        n = key_lengths.long().view(B, 1, 1, 1)
        allowed = allowed & ((j <= n) if bug == "lengths_inclusive" else (j < n))
    s = s.masked_fill(~allowed, float("-inf"))
    m = s.amax(-1, keepdim=True)
    e = torch.exp(s - torch.where(torch.isinf(m), 0.0, m))
    total = e.sum(-1, keepdim=True)
    return ((e @ v) / torch.where(total > 0, total, 1.0)).to(dtype)


def torch_lower_right(
    q,
    k,
    v,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
    causal_alignment="top_left",
):
    """torch's SDPA; bottom-right causal through torch's own ``causal_lower_right`` bias."""
    if is_causal and causal_alignment == "bottom_right":
        if attn_mask is not None or enable_gqa:
            raise NotImplementedError("causal_lower_right with a mask or GQA")
        bias = causal_lower_right(q.shape[-2], k.shape[-2])
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=scale)
    return F.scaled_dot_product_attention(
        q, k, v, attn_mask, is_causal=is_causal, scale=scale, enable_gqa=enable_gqa
    )


top_left = partial(attention, bug="top_left")
window_wide = partial(attention, bug="window_wide")
softcap_before_scale = partial(attention, bug="softcap_before_scale")
alibi_sign = partial(attention, bug="alibi_sign")
cache_ignored = partial(attention, bug="cache_ignored")
lengths_inclusive = partial(attention, bug="lengths_inclusive")
