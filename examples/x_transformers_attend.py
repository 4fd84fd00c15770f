"""x-transformers' ``Attend`` (the attention core of its ``Attention`` layer) under
``attnlab conform``:

    attnlab conform examples/x_transformers_attend.py:attend
    attnlab conform examples/x_transformers_attend.py:attend_flash

x-transformers (``pip install x-transformers``) is imported only when a function here is called;
attnlab does not depend on it. ``Attend`` takes a bool ``mask`` (True = may attend) and a float
``attn_bias`` added to the scores; the adapter passes the kit's bool mask as the first and its
float mask as the second, ``is_causal`` as ``causal``, and ``scale`` as the module's scale.
"""

from __future__ import annotations

import torch


def _attend(q, k, v, attn_mask, dropout_p, is_causal, scale, flash):
    from x_transformers.attend import Attend

    module = Attend(causal=is_causal, scale=scale, dropout=dropout_p, flash=flash)
    module.train(dropout_p > 0)
    mask = bias = None
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        mask = attn_mask.expand(*q.shape[:-1], k.shape[-2])  # (B, H, T, S)
    elif attn_mask is not None:
        bias = attn_mask
    out, _ = module(q, k, v, mask=mask, attn_bias=bias)
    return out


def attend(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """``Attend(flash=False)``: the einsum path."""
    return _attend(q, k, v, attn_mask, dropout_p, is_causal, scale, flash=False)


def attend_flash(
    q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    """``Attend(flash=True)``: through torch's SDPA."""
    return _attend(q, k, v, attn_mask, dropout_p, is_causal, scale, flash=True)
