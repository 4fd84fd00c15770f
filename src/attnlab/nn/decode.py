"""One new token through self-attention on plain tensors: the per-token core of cached decoding.

Decoding a small model on a CPU is bound by per-call overhead, not arithmetic: every
``nn.Module`` call and parameter look-up costs about as much as a small matmul. So a model's
``generate`` gathers each layer's tensors once (``AttentionStep.of``) and then, per token, calls
``attention_step``: torch's functional ops on those tensors, queries and keys rotated together,
the new key and value written in place into the preallocated ``KVCache``. The arithmetic is
``MultiHeadAttention.forward``'s for one causal query after the cached positions (the tests
hold the two against each other).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor

from .attention import KVCache, MultiHeadAttention
from .positional import LearnedPositionalEmbedding, rotate


class AttentionStep(NamedTuple):
    """A ``MultiHeadAttention``'s tensors and sizes, gathered once per decoding run; weights
    transposed (views), as ``linear_t`` takes them."""

    in_wt: Tensor  # (d, d + 2 * Hkv * D): columns q, k, v
    in_b: Tensor | None
    out_wt: Tensor  # (d, d)
    out_b: Tensor | None
    heads: int
    kv_heads: int
    d_k: int

    @classmethod
    def of(cls, m: MultiHeadAttention) -> AttentionStep:
        return cls(
            m.in_proj.weight.t(),
            m.in_proj.bias,
            m.out_proj.weight.t(),
            m.out_proj.bias,
            m.num_heads,
            m.num_kv_heads,
            m.d_k,
        )


def attention_step(
    x: Tensor, w: AttentionStep, cache: KVCache, rope: tuple[Tensor, Tensor] | None = None
) -> Tensor:
    """x ``(B, d)``: one new position per sequence after those in ``cache`` -> ``(B, d)``.

    ``rope``: the new position's rotary tables ``(D,)`` (``RotaryEmbedding.angles``), or None.
    The new key and value are appended to ``cache``; the query sees every cached key (one
    causal query needs no mask).
    """
    B, H, Hkv, D = x.shape[0], w.heads, w.kv_heads, w.d_k
    qkv = linear_t(x, w.in_wt, w.in_b).view(B, H + 2 * Hkv, 1, D)  # heads of q, k, v
    if rope is None:
        q, k, v = qkv.split([H, Hkv, Hkv], dim=1)  # (B, H or Hkv, 1, D)
    else:  # queries and keys rotated in one go
        q, k = rotate(qkv.narrow(1, 0, H + Hkv), *rope).split([H, Hkv], dim=1)
        v = qkv.narrow(1, H + Hkv, Hkv)
    k_all, v_all = cache.append(k, v)  # (B, Hkv, S, D)
    out = F.scaled_dot_product_attention(q, k_all, v_all, enable_gqa=H != Hkv)
    return linear_t(out.reshape(B, H * D), w.out_wt, w.out_b)  # (B, H, 1, D) -> (B, d)


def linear_t(x: Tensor, w_t: Tensor, b: Tensor | None = None) -> Tensor:
    """``F.linear(x, w_t.T, b)`` for x ``(B, d_in)``, straight to the matmul: one op instead of
    linear's transpose and dispatch. w_t ``(d_in, d_out)`` is ``weight.t()``, taken once."""
    return torch.mm(x, w_t) if b is None else torch.addmm(b, x, w_t)


@contextmanager
def one_thread() -> Iterator[None]:
    """torch's intra-op threads set to 1 for the duration (then restored): one token's ops are
    far too small to split, and a second thread only adds a barrier per op, which costs
    milliseconds per op while other work keeps the cores busy."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(n)


def position_table(model) -> Tensor | None:
    """(block_size, C): what the model adds to the token embedding at each position; None
    under rotary positions (they enter inside attention). model: a ``GPT``."""
    if isinstance(model.wpe, LearnedPositionalEmbedding):
        return model.wpe.emb.weight
    return None if model.wpe is None else model.wpe.table(model.config.block_size)
