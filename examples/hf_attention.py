"""Hugging Face transformers' attention functions under ``attnlab conform``.

    attnlab conform examples/hf_attention.py:eager
    attnlab conform examples/hf_attention.py:sdpa

transformers (``pip install transformers``) is imported only when a function here is called;
attnlab does not depend on it. Each adapter turns the kit's call, torch's SDPA signature on
(B, H, T, D) tensors, into the call a transformers model makes:

- ``module``: what the functions read from the attention layer (the GQA group size
  ``num_key_value_groups``, ``training`` for dropout, ``is_causal``).
- masks: transformers builds its own mask from the padding and the cache positions, so a causal
  mask is aligned bottom-right (query t sits at position S - T + t), and the eager path adds a
  float mask whose blocked entries are ``finfo(dtype).min``; the adapter builds the same. The
  sdpa path gets torch's bool mask and ``is_causal`` as they are.
- the output comes back as (B, T, H, D); the adapter transposes it to (B, H, T, D).
"""

from __future__ import annotations

from types import SimpleNamespace

import torch


def _module(q: torch.Tensor, k: torch.Tensor, dropout_p: float, is_causal: bool):
    return SimpleNamespace(
        num_key_value_groups=q.shape[1] // k.shape[1], training=dropout_p > 0, is_causal=is_causal
    )


def _additive_mask(q, k, attn_mask, is_causal):
    """The float mask a transformers model hands to the eager path: 0 where a query may attend,
    finfo(dtype).min elsewhere (the causal part bottom-right aligned, from cache positions)."""
    T, S = q.shape[-2], k.shape[-2]
    allowed = torch.ones(T, S, dtype=torch.bool, device=q.device)
    if is_causal:
        allowed = allowed.tril(S - T)
    low = torch.finfo(q.dtype).min
    mask = torch.zeros(T, S, dtype=q.dtype, device=q.device).masked_fill(~allowed, low)
    if attn_mask is None:
        return mask if is_causal else None
    if attn_mask.dtype == torch.bool:
        return mask.masked_fill(~attn_mask, low)  # (..., T, S) like the mask
    return mask + attn_mask.to(q.dtype)


def eager(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """``eager_attention_forward`` of the Llama family (softmax in float32, GQA by repeat_kv)."""
    from transformers.models.llama.modeling_llama import eager_attention_forward

    scaling = q.shape[-1] ** -0.5 if scale is None else scale
    mask = _additive_mask(q, k, attn_mask, is_causal)
    out, _ = eager_attention_forward(
        _module(q, k, dropout_p, is_causal), q, k, v, mask, scaling=scaling, dropout=dropout_p
    )
    return out.transpose(1, 2)  # (B, T, H, Dv) -> (B, H, T, Dv)


def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """``sdpa_attention_forward``: torch's SDPA behind transformers' own rules (``is_causal``
    dropped for one query or when a mask is given, GQA packed or repeated)."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    out, _ = sdpa_attention_forward(
        _module(q, k, dropout_p, is_causal),
        q,
        k,
        v,
        attn_mask,
        dropout=dropout_p,
        scaling=scale,
        is_causal=is_causal,
    )
    return out.transpose(1, 2)
