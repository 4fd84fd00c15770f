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


def torch_safe_softmax(x):
    """Softmax over the last axis; a row of only -inf gives zeros (attnlab's rule), not NaN."""
    dead = torch.isneginf(x).all(-1, keepdim=True)
    return torch.where(dead, 0.0, torch.softmax(x, -1))


def torch_causal_mean(x):
    """Each position's mean of itself and the positions before it: x ``(..., T, D)``."""
    W = torch.ones(x.shape[-2], x.shape[-2], dtype=x.dtype).tril()
    return (W / W.sum(-1, keepdim=True)) @ x


def torch_sdpa(q, k, v, attn_mask=None):
    """torch's fused scaled dot-product attention (``attn_mask``: True = may attend)."""
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)


def torch_sdpa_grads(q, k, v, g):
    """Gradients (dq, dk, dv) of causal scaled dot-product attention for upstream ``g``."""
    with torch.enable_grad():
        q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
        F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(g)
    return q.grad, k.grad, v.grad


def torch_score(kind):
    """The alignment score of ``kind`` (dot, scaled_dot, general, additive, concat) for
    queries q ``(B, d_q)`` against keys k ``(B, S, d_k)``: ``(B, S)``."""

    def oracle(q, k, W, W_q, W_k, Wc, v):
        if kind in ("dot", "scaled_dot"):
            s = torch.einsum("bd,bsd->bs", q, k)
            return s / math.sqrt(q.shape[-1]) if kind == "scaled_dot" else s
        if kind == "general":
            return torch.einsum("bd,de,bse->bs", q, W, k)
        if kind == "additive":
            return torch.tanh((q @ W_q)[:, None] + k @ W_k) @ v
        qk = torch.cat([q[:, None].expand(-1, k.shape[1], -1), k], dim=-1)  # [q; k]
        return torch.tanh(qk @ Wc) @ v

    return oracle


def torch_sinusoidal(T: int, d: int, base: float, dtype: torch.dtype) -> torch.Tensor:
    """Sinusoidal position encodings ``(T, d)`` in the classic formulation: frequencies via
    exp(-2i * ln(base) / d)."""
    pe = torch.zeros(T, d, dtype=dtype)
    position = torch.arange(T, dtype=dtype)[:, None]
    div = torch.exp(torch.arange(0, d, 2, dtype=dtype) * (-math.log(base) / d))
    pe[:, 0::2] = torch.sin(position * div)
    pe[:, 1::2] = torch.cos(position * div)[:, : d // 2]
    return pe


def torch_rotary(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Rotary embedding of x ``(..., T, D)`` at ``positions`` ``(T,)``, independent of the
    rotate-half code: each pair (x_i, x_{i+D/2}) as one complex number, multiplied by
    e^{i * position * theta_i} (RoFormer's complex form)."""
    D = x.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)  # (D/2,)
    angle = positions.double()[:, None] * theta  # (T, D/2)
    turn = torch.polar(torch.ones_like(angle), angle)  # e^{i angle}, complex128
    z = torch.complex(x[..., : D // 2].double(), x[..., D // 2 :].double()) * turn
    return torch.cat((z.real, z.imag), dim=-1).to(x.dtype)
