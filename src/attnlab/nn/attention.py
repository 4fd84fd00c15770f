"""Attention modules: thin ``nn.Module`` wrappers that own parameters and call ``functional``.

- ``MultiHeadAttention``: self- or cross-attention, GQA/MQA via ``num_kv_heads``.
- ``ScoredAttention`` and its two named forms, ``AdditiveAttention`` (Bahdanau et al., 2014)
  and ``LuongAttention`` (Luong et al., 2015), for encoder-decoder models.

Masks are bool with True = may attend, everywhere in attnlab. ``torch.nn.MultiheadAttention``
uses the opposite convention (True = blocked) for its bool masks: negate a mask when moving
between the two. Weights are returned, never stored on the module.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import functional as AF
from .positional import RotaryEmbedding
from .scores import make_score


class KVCache:
    """Keys and values of the positions seen so far, for decoding one token at a time.

    With ``max_len`` the storage ``(B, Hkv, max_len, D)`` is allocated once and written in
    place; without it, each append concatenates. ``k``, ``v`` are the filled part (or None).
    """

    def __init__(self, max_len: int | None = None) -> None:
        self.max_len = max_len
        self.k: Tensor | None = None
        self.v: Tensor | None = None
        self._kbuf: Tensor | None = None
        self._vbuf: Tensor | None = None
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add keys and values ``(B, Hkv, T, D)`` after those cached; returns all of them
        ``(B, Hkv, past + T, D)``. A cache serves one batch: another B, Hkv or D is an error."""
        self._check(k, v)
        T = k.shape[-2]
        if self.max_len is None:
            self.k = k if self.k is None else torch.cat([self.k, k], dim=-2)  # (B, Hkv, S + T, D)
            self.v = v if self.v is None else torch.cat([self.v, v], dim=-2)
        else:
            if self._len + T > self.max_len:
                raise ValueError(
                    f"KV cache holds {self.max_len} positions; {self._len} + {T} do not fit"
                )
            if self._kbuf is None:
                self._kbuf = k.new_empty((*k.shape[:-2], self.max_len, k.shape[-1]))
                self._vbuf = v.new_empty((*v.shape[:-2], self.max_len, v.shape[-1]))
            self._kbuf.narrow(-2, self._len, T).copy_(k)  # narrow: cheaper than indexing
            self._vbuf.narrow(-2, self._len, T).copy_(v)
            self.k = self._kbuf.narrow(-2, 0, self._len + T)
            self.v = self._vbuf.narrow(-2, 0, self._len + T)
        self._len += T
        return self.k, self.v

    def _check(self, k: Tensor, v: Tensor) -> None:
        if k.shape[:-2] != v.shape[:-2] or k.shape[-2] != v.shape[-2]:
            raise ValueError(
                f"KV cache: keys {tuple(k.shape)} and values {tuple(v.shape)} must share "
                "(B, Hkv, T)"
            )
        held = self.k
        if held is None:
            return
        if held.shape[:-2] != k.shape[:-2] or held.shape[-1] != k.shape[-1]:
            B, H, D = held.shape[0], held.shape[1], held.shape[-1]
            raise ValueError(
                f"KV cache holds batch {B} x {H} kv heads x d {D}; got keys "
                f"{tuple(k.shape)} (B, Hkv, T, D): a cache serves one batch, so start a new "
                "KVCache for another batch size"
            )


@dataclass(frozen=True)
class _Call:
    """What one forward call asks of a backend, besides q, k and v."""

    attn_mask: Tensor | None
    is_causal: bool
    need_weights: bool
    cache: KVCache | None
    cross: bool
    mask_shape: tuple[int, ...] = ()  # the mask's shape as given (for error messages)


def _split_heads(x: Tensor, num_heads: int) -> Tensor:
    B, T, _ = x.shape
    return x.view(B, T, num_heads, -1).transpose(1, 2)  # (B, T, H*D) -> (B, H, T, D)


def _check_mask(mask: Tensor, given: tuple[int, ...], B: int, H: int, T: int, S: int) -> None:
    """A mask that does not broadcast to the scores ``(B, H, T, S)`` is a one-line error."""
    shape = (1,) * (4 - mask.dim()) + tuple(mask.shape)  # (T, S) -> (1, 1, T, S)
    fits = 2 <= mask.dim() <= 4 and all(
        m in (1, n) for m, n in zip(shape, (B, H, T, S), strict=True)
    )
    if not fits:
        raise ValueError(
            f"attn_mask has shape {given}, which does not fit the scores (B={B}, "
            f"H={H}, T={T}, S={S}): expected (T, S), (B, T, S) or (B, H, T, S) with each size "
            "equal to those or 1"
        )


class MultiHeadAttention(nn.Module):
    """Multi-head attention over ``(B, T, d_model)`` inputs (an unbatched ``(T, d_model)`` works).

    ``num_kv_heads`` < ``num_heads`` gives grouped-query attention (1 = multi-query): keys and
    values get ``num_kv_heads`` heads, each shared by ``num_heads // num_kv_heads`` query heads.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        num_kv_heads: int | None = None,
        bias: bool = True,
        dropout: float = 0.0,
        rope: bool = False,
        rope_base: float = 10000.0,
    ):
        super().__init__()
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if num_heads < 1 or d_model % num_heads:
            raise ValueError(f"num_heads ({num_heads}) must divide d_model ({d_model})")
        if num_kv_heads < 1 or num_heads % num_kv_heads:
            raise ValueError(
                f"num_kv_heads ({num_kv_heads}) must divide num_heads ({num_heads}) for GQA"
            )
        self.d_model, self.num_heads, self.num_kv_heads = d_model, num_heads, num_kv_heads
        self.d_k = d_model // num_heads
        self.dropout = dropout
        self.kv_dim = num_kv_heads * self.d_k
        # one matrix for q, k and v (rows: q, then k, then v), as torch.nn.MultiheadAttention's
        # in_proj_weight: self-attention projects with one matmul; projections() splits it
        self.in_proj = nn.Linear(d_model, d_model + 2 * self.kv_dim, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.rotary = RotaryEmbedding(self.d_k, rope_base) if rope else None

    def forward(
        self,
        x: Tensor,
        context: Tensor | None = None,
        attn_mask: Tensor | None = None,
        is_causal: bool = False,
        need_weights: bool = False,
        cache: KVCache | None = None,
        context_parallel=None,
    ) -> Tensor | tuple[Tensor, Tensor]:
        """Attend from ``x`` ``(B, T, d_model)`` to ``context`` ``(B, S, d_model)`` (default x).

        attn_mask: bool (True = may attend) or float, shaped ``(T, S)``, ``(B, T, S)`` or
        ``(B, H, T, S)`` (unbatched: ``(T, S)`` or ``(H, T, S)``); combined with ``is_causal``
        when both are given.

        With ``cache`` (self-attention only), x holds the positions after those cached: their
        keys and values are appended, queries attend to everything cached too, and under
        ``is_causal`` the mask is aligned so that new position t sees cached + t + 1 keys.

        With ``context_parallel`` (an ``attnlab.nn.ring.ContextParallel``), x is this rank's
        shard of each sequence and attention runs around the ring (the "ring" backend:
        self-attention only; no mask but ``is_causal``, no cache, no weights, no dropout).

        Returns out ``(B, T, d_model)``, and weights ``(B, H, T, S)`` when ``need_weights``.
        """
        unbatched = x.dim() == 2
        given = () if attn_mask is None else tuple(attn_mask.shape)
        x, kv, attn_mask = self._batched(x, context, attn_mask)
        q, k, v = self._project(x, kv, cross=context is not None)
        call = _Call(attn_mask, is_causal, need_weights, cache, context is not None, given)
        backend = self._ring if context_parallel is not None else self._local
        out, weights = backend(q, k, v, call, context_parallel)  # (B, H, T, D), (B, H, T, S)
        B, H, T, D = out.shape
        out = self.out_proj(out.transpose(1, 2).reshape(B, T, H * D))  # (B, T, d_model)
        if unbatched:
            out = out[0]
            weights = None if weights is None else weights[0]
        return (out, weights) if need_weights else out

    def _batched(
        self, x: Tensor, context: Tensor | None, attn_mask: Tensor | None
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """Inputs as ``(B, T, d)``, ``(B, S, d)`` and a mask that broadcasts over heads."""
        if x.dim() == 2:  # unbatched: (T, d), (S, d), mask (T, S) or (H, T, S)
            x = x.unsqueeze(0)
            context = None if context is None else context.unsqueeze(0)
            if attn_mask is not None and attn_mask.dim() == 3:
                attn_mask = attn_mask.unsqueeze(0)  # (H, T, S) -> (1, H, T, S)
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must be (B, T, {self.d_model}), got {tuple(x.shape)}")
        kv = x if context is None else context
        if kv.dim() != 3 or kv.shape[0] != x.shape[0] or kv.shape[-1] != self.d_model:
            raise ValueError(
                f"context must be (B={x.shape[0]}, S, {self.d_model}), got {tuple(kv.shape)}"
            )
        if attn_mask is not None and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(1)  # (B, T, S) -> (B, 1, T, S): same for every head
        return x, kv, attn_mask

    def _project(self, x: Tensor, kv: Tensor, cross: bool) -> tuple[Tensor, Tensor, Tensor]:
        """q ``(B, H, T, D)``, k and v ``(B, Hkv, S, D)``: one matmul for self-attention."""
        d, W, b = self.d_model, self.in_proj.weight, self.in_proj.bias
        if not cross:
            q, k, v = F.linear(x, W, b).split([d, self.kv_dim, self.kv_dim], dim=-1)
        else:
            q = F.linear(x, W[:d], None if b is None else b[:d])
            kvb = None if b is None else b[d:]
            k, v = F.linear(kv, W[d:], kvb).split([self.kv_dim, self.kv_dim], dim=-1)
        return (
            _split_heads(q, self.num_heads),
            _split_heads(k, self.num_kv_heads),
            _split_heads(v, self.num_kv_heads),
        )

    def _local(self, q, k, v, call: _Call, _cp=None) -> tuple[Tensor, Tensor | None]:
        """The backend in one process: torch's fused kernel, or the explicit math for weights."""
        attn_mask, is_causal, past = call.attn_mask, call.is_causal, 0
        if call.cache is not None:
            if call.cross:
                raise ValueError("a KV cache is for self-attention; got a context as well")
            past = len(call.cache)
        if attn_mask is not None:
            S = past + k.shape[-2]
            _check_mask(attn_mask, call.mask_shape, q.shape[0], self.num_heads, q.shape[-2], S)
        if self.rotary is not None:
            q, k = self.rotary.pair(q, k, offset=past)
        if call.cache is not None:
            k, v = call.cache.append(k, v)  # (B, Hkv, past + T, D)
            attn_mask, is_causal = AF.cached_causal(attn_mask, is_causal, q.shape[-2], past, q)
        result = AF.attention_unchecked(
            q,
            k,
            v,
            attn_mask=attn_mask,
            dropout_p=self.dropout if self.training else 0.0,
            is_causal=is_causal,
            enable_gqa=self.num_kv_heads != self.num_heads,
            return_weights=call.need_weights,
        )
        return result if call.need_weights else (result, None)

    def _ring(self, q, k, v, call: _Call, cp) -> tuple[Tensor, None]:
        """The context-parallel backend: this rank's shard attends around the ring."""
        unsupported = call.cross or call.attn_mask is not None or call.cache is not None
        if unsupported or call.need_weights or (self.training and self.dropout > 0):
            raise ValueError(
                "context parallelism supports causal self-attention only: no context, mask, "
                "cache, weights or dropout"
            )
        if self.rotary is not None:
            q, k = self.rotary.pair(q, k, positions=cp.positions(q.shape[-2], q.device))
        return cp.attend(q, k, v, call.is_causal), None  # (B, H, T_local, D)

    def projections(self) -> dict[str, tuple[Tensor, Tensor | None]]:
        """(weight, bias) of the q, k, v and out projections, as views (nn.Linear layout:
        weight (d_out, d_in); attnlab.ref's W is weight.T)."""
        d, kv, W, b = self.d_model, self.kv_dim, self.in_proj.weight, self.in_proj.bias
        parts = {"q": slice(0, d), "k": slice(d, d + kv), "v": slice(d + kv, d + 2 * kv)}
        out = {n: (W[sl], None if b is None else b[sl]) for n, sl in parts.items()}
        out["out"] = (self.out_proj.weight, self.out_proj.bias)
        return out

    @classmethod
    def from_torch(cls, m: nn.MultiheadAttention) -> MultiHeadAttention:
        """An equivalent module with ``m``'s weights (copied, not shared).

        attnlab is always batch-first and its bool masks mean "may attend": pass ``~mask`` where
        ``m`` took ``mask``, and ``(B, T, d)`` inputs even if ``m.batch_first`` is False.
        """
        if not m._qkv_same_embed_dim:
            raise ValueError(
                f"from_torch needs kdim == vdim == embed_dim, got kdim={m.kdim}, vdim={m.vdim}, "
                f"embed_dim={m.embed_dim}"
            )
        if m.bias_k is not None or m.add_zero_attn:
            raise ValueError("from_torch does not support add_bias_kv or add_zero_attn")
        bias = m.in_proj_bias is not None
        new = cls(m.embed_dim, m.num_heads, bias=bias, dropout=m.dropout)
        new = new.to(device=m.in_proj_weight.device, dtype=m.in_proj_weight.dtype)
        with torch.no_grad():
            new.in_proj.weight.copy_(m.in_proj_weight)  # same layout: q, k, v stacked by rows
            if bias:
                new.in_proj.bias.copy_(m.in_proj_bias)
            new.out_proj.weight.copy_(m.out_proj.weight)
            if bias:
                new.out_proj.bias.copy_(m.out_proj.bias)
        return new


class ScoredAttention(nn.Module):
    """Attention of one decoder state (or a sequence of them) over encoder states.

    ``score`` names a function in ``attnlab.nn.scores.SCORES``. forward takes query
    ``(B, d_q)`` or ``(B, T, d_q)``, keys ``(B, S, d_k)``, values ``(B, S, d_v)`` (default: the
    keys) and ``valid_lengths`` ``(B,)`` for padded sources; returns ``(context, weights)``:
    ``(B, d_v)`` and ``(B, S)``, or ``(B, T, d_v)`` and ``(B, T, S)``.
    """

    def __init__(self, score: str, query_dim: int, key_dim: int, hidden_dim: int | None = None):
        super().__init__()
        self.score_kind = score
        self.score = make_score(score, query_dim, key_dim, hidden_dim)

    def forward(
        self,
        query: Tensor,
        keys: Tensor,
        values: Tensor | None = None,
        valid_lengths: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        values = keys if values is None else values
        single = query.dim() == 2
        q = query.unsqueeze(1) if single else query  # (B, T, d_q)
        if keys.dim() != 3 or values.shape[:2] != keys.shape[:2] or q.shape[0] != keys.shape[0]:
            raise ValueError(
                f"expected query (B, [T,] d_q), keys (B, S, d_k), values (B, S, d_v); got query "
                f"{tuple(query.shape)}, keys {tuple(keys.shape)}, values {tuple(values.shape)}"
            )
        scores = self.score(q, keys)  # (B, T, S)
        if valid_lengths is not None:
            mask = AF.padding_mask(valid_lengths, keys.shape[1])[:, 0]  # (B, 1, S)
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = AF.softmax(scores, dim=-1)  # (B, T, S)
        context = weights @ values  # (B, T, d_v)
        return (context[:, 0], weights[:, 0]) if single else (context, weights)


class AdditiveAttention(ScoredAttention):
    """Bahdanau attention: score = v^T tanh(W_q q + W_k k)."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int | None = None):
        super().__init__("additive", query_dim, key_dim, hidden_dim)


class LuongAttention(ScoredAttention):
    """Luong attention with ``score`` = "dot", "general" or "concat"."""

    def __init__(
        self,
        query_dim: int,
        key_dim: int | None = None,
        score: str = "general",
        hidden_dim: int | None = None,
    ):
        if score not in ("dot", "general", "concat"):
            raise ValueError(f"Luong score must be 'dot', 'general' or 'concat', got {score!r}")
        super().__init__(score, query_dim, query_dim if key_dim is None else key_dim, hidden_dim)
