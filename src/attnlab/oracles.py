"""Independent PyTorch answers that attnlab is held against: by the tests, ``attnlab check``,
the grader and the lessons. One place, so every comparison uses the same oracle.

Weights come in ``attnlab.ref``'s layout, ``(d_in, d_out)`` applied as ``x @ W``; torch's
``nn.Linear`` and ``nn.MultiheadAttention`` store the transpose, which is handled here.
Masks follow attnlab's convention (True = may attend) and are negated for torch where needed.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor


def _t(a) -> Tensor:
    return a if isinstance(a, Tensor) else torch.from_numpy(a)


def torch_mha(
    query,
    key,
    value,
    W_q,
    W_k,
    W_v,
    W_o,
    num_heads: int,
    biases: tuple | None = None,
    key_padding=None,
    causal: bool = False,
) -> tuple[Tensor, Tensor]:
    """``torch.nn.MultiheadAttention`` with ref-layout weights: query ``(B, T, d_model)``, key and
    value ``(B, S, d_model)`` -> (output ``(B, T, d_model)``, weights ``(B, H, T, S)``).

    ``biases`` = (b_q, b_k, b_v, b_o) or None (no biases); ``key_padding`` ``(B, S)`` bool, True =
    may attend; ``causal`` blocks key j > query i. Arrays or tensors; runs in the input's dtype.
    """
    query, key, value = _t(query), _t(key), _t(value)
    W_q, W_k, W_v, W_o = (_t(w) for w in (W_q, W_k, W_v, W_o))
    d_model = W_q.shape[0]
    m = torch.nn.MultiheadAttention(
        d_model, num_heads, bias=biases is not None, batch_first=True, dtype=query.dtype
    )
    with torch.no_grad():
        m.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T]))
        m.out_proj.weight.copy_(W_o.T)
        if biases is not None:
            b_q, b_k, b_v, b_o = (_t(b) for b in biases)
            m.in_proj_bias.copy_(torch.cat([b_q, b_k, b_v]))
            m.out_proj.bias.copy_(b_o)
        T, S = query.shape[-2], key.shape[-2]
        blocked = ~torch.ones(T, S, dtype=torch.bool).tril() if causal else None
        pad = None if key_padding is None else ~_t(key_padding)  # torch: True = ignore
        return m(
            query,
            key,
            value,
            key_padding_mask=pad,
            attn_mask=blocked,
            average_attn_weights=False,
        )


def sdpa_with_weights(q, k, v, causal: bool = False, scale: float | None = None):
    """(output, weights) of scaled dot-product attention: the output from torch's fused
    ``F.scaled_dot_product_attention``, the weights from the same scaled, masked scores.
    q ``(..., T, D)``, k ``(..., S, D)``, v ``(..., S, Dv)``; arrays or tensors."""
    q, k, v = _t(q), _t(k), _t(v)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    s = (q @ k.transpose(-2, -1)) * scale
    if causal:
        s = s.masked_fill(~torch.ones(s.shape[-2:], dtype=torch.bool).tril(), float("-inf"))
    return out, torch.softmax(s, -1)
