"""Attention written out plainly in torch, correct by default, with one switch per classic bug.

The conformance kit's own tests load these by path (``broken.py:bottom_right_causal``), as a
user would, and expect each bug to fail its feature and nothing else.
"""

from __future__ import annotations

import math
from functools import partial

import torch

HALF = (torch.float16, torch.bfloat16)


def attention(
    q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False, bug=None
):
    """softmax(q k^T * scale + mask) v, computed in float32 for half inputs; ``bug`` breaks it."""
    dt, T, S, D = q.dtype, q.shape[-2], k.shape[-2], q.shape[-1]
    work = torch.float32 if dt in HALF or bug == "float32_internals" else dt
    if bug == "causal_ignored":
        is_causal = False
    if bug == "causal_off_at_one" and T == 1:  # one query: "causal changes nothing" (it does)
        is_causal = False
    if enable_gqa and k.shape[-3] != q.shape[-3]:
        g = q.shape[-3] // k.shape[-3]
        if bug == "gqa_tile":  # head i uses kv head i % Hk instead of i // g
            k, v = (x.repeat(*([1] * (x.dim() - 3)), g, 1, 1) for x in (k, v))
        else:
            k, v = (x.repeat_interleave(g, dim=-3) for x in (k, v))
    if scale is None or bug == "scale_ignored":
        scale = 1.0 / D if bug == "default_scale" else 1.0 / math.sqrt(D)
    s = (q.to(work) @ k.to(work).transpose(-2, -1)) * scale  # (B, H, T, S)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            allowed = ~attn_mask if bug == "inverted_mask" else attn_mask
            if bug == "bool_mask_added":  # True / False added as 1 / 0
                s = s + attn_mask.to(work)
            elif bug == "fill_1e9":  # the tutorial habit: -1e9 in the scores' own dtype
                s = (q @ k.transpose(-2, -1) * scale).masked_fill(~allowed, -1e9).to(work)
            else:
                s = s.masked_fill(~allowed, float("-inf"))
        elif bug == "float_mask_as_bool":  # nonzero = may attend
            s = s.masked_fill(attn_mask == 0, float("-inf"))
        else:
            s = s + attn_mask.to(work)
    if is_causal:
        offset = S - T if bug == "bottom_right" else 0  # bottom-right: the KV-cache habit
        allowed = torch.ones(T, S, dtype=torch.bool, device=q.device).tril(offset)
        s = s.masked_fill(~allowed, float("-inf"))
    if bug == "drop_tail" and S > 32:  # a tiled loop that forgets the last partial tile
        s[..., S - S % 32 :] = float("-inf")
    if bug == "no_max_shift":
        e = torch.exp(s)
    else:
        m = s.amax(-1, keepdim=True)
        e = torch.exp(s - torch.where(torch.isinf(m), 0.0, m))
    if bug == "half_accumulation" and dt in HALF:
        return _accumulate_in(dt, e, v)
    if bug == "dropout":  # a module left in training mode: dropout 0.1 on the weights
        e = torch.nn.functional.dropout(e, 0.1, training=True)
    total = e.sum(-1, keepdim=True)
    if bug == "nan_dead_grads":  # zeros forward, but where() sends NaN back from 0 / 0
        return torch.where(total > 0, (e @ v.to(work)) / total, 0.0).to(dt)
    out = (e @ v.to(work)) / (total if bug == "nan_dead_rows" else torch.where(total > 0, total, 1))
    return out.to(dt)


def _accumulate_in(dt, e, v):
    """sum_j e_j v_j and sum_j e_j, key by key, each running sum rounded to ``dt``."""
    acc = torch.zeros((*e.shape[:-1], v.shape[-1]), dtype=dt)
    total = torch.zeros((*e.shape[:-1], 1), dtype=dt)
    for j in range(e.shape[-1]):
        p = e[..., j : j + 1]
        acc = acc + (p * v[..., j : j + 1, :].float()).to(dt)
        total = total + p.to(dt)
    return (acc.float() / torch.where(total > 0, total, 1).float()).to(dt)


def noisy(q, k, v, **kw):
    """Correct but for a last-bit wobble that differs from call to call."""
    out = attention(q, k, v, **kw)
    return out + out * torch.finfo(out.dtype).eps * torch.randint(0, 2, out.shape)


bottom_right = partial(attention, bug="bottom_right")
no_max_shift = partial(attention, bug="no_max_shift")
nan_dead_rows = partial(attention, bug="nan_dead_rows")
gqa_tile = partial(attention, bug="gqa_tile")
default_scale = partial(attention, bug="default_scale")
inverted_mask = partial(attention, bug="inverted_mask")
half_accumulation = partial(attention, bug="half_accumulation")
drop_tail = partial(attention, bug="drop_tail")
causal_off_at_one = partial(attention, bug="causal_off_at_one")
fill_1e9 = partial(attention, bug="fill_1e9")
nan_dead_grads = partial(attention, bug="nan_dead_grads")
causal_ignored = partial(attention, bug="causal_ignored")
float_mask_as_bool = partial(attention, bug="float_mask_as_bool")
bool_mask_added = partial(attention, bug="bool_mask_added")
scale_ignored = partial(attention, bug="scale_ignored")
float32_internals = partial(attention, bug="float32_internals")
dropout = partial(attention, bug="dropout")
