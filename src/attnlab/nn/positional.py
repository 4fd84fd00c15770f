"""Positional information for attention, which by itself ignores order.

- ``SinusoidalPositionalEncoding``: the fixed sin/cos table of Vaswani et al. (2017), added.
- ``LearnedPositionalEmbedding``: one trained vector per position (GPT-2), added.
- ``RotaryEmbedding``: rotates query/key pairs by a position-dependent angle (RoFormer, Su et al.
  2021), so q . k depends on the offset between positions only. "Rotate-half" layout: feature
  i is paired with feature i + D/2 (as in GPT-NeoX and Llama).

``offset`` is the position of the first token, for decoding with a key/value cache.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from ..ref.positional import sinusoidal_positional_encoding


class SinusoidalPositionalEncoding(nn.Module):
    """x ``(B, T, d_model)`` -> x + PE[offset : offset + T]; no parameters, any length."""

    def __init__(
        self, d_model: int, max_len: int = 4096, base: float = 10000.0, dropout: float = 0.0
    ):
        super().__init__()
        self.d_model, self.base = d_model, base
        self.drop = nn.Dropout(dropout)
        pe = torch.from_numpy(sinusoidal_positional_encoding(max_len, d_model, base))
        self.register_buffer("pe", pe.float(), persistent=False)  # (max_len, d_model)

    def table(self, T: int, offset: int = 0) -> Tensor:
        """The ``(T, d_model)`` encodings of positions offset..offset+T-1 (computed if past max_len)."""
        if offset + T > self.pe.shape[0]:
            full = sinusoidal_positional_encoding(offset + T, self.d_model, self.base)
            return torch.from_numpy(full[offset:]).to(self.pe)
        return self.pe[offset : offset + T]

    def forward(self, x: Tensor, offset: int = 0, positions: Tensor | None = None) -> Tensor:
        """``positions`` ``(T,)``: explicit positions (a context-parallel shard), else
        offset..offset+T-1."""
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must end in d_model={self.d_model}, got {tuple(x.shape)}")
        if positions is not None:
            pe = self.table(int(positions.max()) + 1)[positions.to(self.pe.device)]
            return self.drop(x + pe.to(x.dtype))
        return self.drop(x + self.table(x.shape[-2], offset).to(x.dtype))


class LearnedPositionalEmbedding(nn.Module):
    """x ``(B, T, d_model)`` -> x + E[offset : offset + T], E a trained ``(max_len, d_model)``."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.emb = nn.Embedding(max_len, d_model)

    def forward(self, x: Tensor, offset: int = 0, positions: Tensor | None = None) -> Tensor:
        T, max_len = x.shape[-2], self.emb.num_embeddings
        pos = torch.arange(offset, offset + T, device=x.device) if positions is None else positions
        if int(pos.max()) >= max_len:
            raise ValueError(
                f"positions {int(pos.min())}..{int(pos.max())} exceed the {max_len} learned positions"
            )
        return x + self.emb(pos.to(x.device))


class RotaryEmbedding(nn.Module):
    """Rotate ``x`` ``(..., T, D)`` (queries or keys, per head) by position; D must be even."""

    def __init__(self, dim: int, base: float = 10000.0):
        super().__init__()
        if dim % 2:
            raise ValueError(f"rotary embedding needs an even head width, got {dim}")
        inv_freq = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)  # (D/2,)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x: Tensor, offset: int = 0, positions: Tensor | None = None) -> Tensor:
        T, D = x.shape[-2], x.shape[-1]
        if D != 2 * self.inv_freq.shape[0]:
            raise ValueError(f"x must end in D={2 * self.inv_freq.shape[0]}, got {tuple(x.shape)}")
        if positions is not None:  # explicit positions (a context-parallel shard)
            pos = positions.to(device=x.device, dtype=torch.float64)
        else:
            pos = torch.arange(offset, offset + T, dtype=torch.float64, device=x.device)
        angle = pos[:, None] * self.inv_freq[None, :]  # (T, D/2)
        cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
        x1, x2 = x[..., : D // 2], x[..., D // 2 :]  # (..., T, D/2) each
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)  # (..., T, D)
