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
    """Rotate ``x`` ``(..., T, D)`` (queries or keys, per head) by position; D must be even.

    The angles are computed in float64 once per dtype and device, for as many positions as
    asked so far (doubling), and sliced afterwards: decoding one token costs two slices. The
    tables are full width, ``[cos | cos]`` and ``[-sin | sin]``, so that a rotation is two
    products and a sum with the half-swapped x (4 ops, not 9).
    """

    def __init__(self, dim: int, base: float = 10000.0):
        super().__init__()
        if dim % 2:
            raise ValueError(f"rotary embedding needs an even head width, got {dim}")
        inv_freq = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)  # (D/2,)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._tables: dict[tuple, tuple[Tensor, Tensor]] = {}

    def _cos_sin(self, end: int, dtype: torch.dtype, device: torch.device) -> tuple[Tensor, Tensor]:
        """``[cos | cos]`` and ``[-sin | sin]`` ``(>= end, D)`` of the angles of positions 0, 1,
        ..., in ``dtype``."""
        key = (dtype, device, self.inv_freq.dtype)
        have = self._tables.get(key)
        if have is None or have[0].shape[0] < end:
            n = max(end, 64, 0 if have is None else 2 * have[0].shape[0])
            with torch.inference_mode(False), torch.no_grad():  # usable later by autograd too
                inv = self.inv_freq.to(device=device, dtype=torch.float64)
                angle = torch.arange(n, dtype=torch.float64, device=device)[:, None] * inv
                cos, sin = angle.cos().to(dtype), angle.sin().to(dtype)  # (n, D/2) each
                have = (torch.cat((cos, cos), dim=-1), torch.cat((-sin, sin), dim=-1))
            self._tables[key] = have
        return have

    def angles(
        self, T: int, like: Tensor, offset: int = 0, positions: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """``[cos | cos]`` and ``[-sin | sin]`` ``(T, D)`` for positions offset..offset+T-1, or
        ``positions`` ``(T,)``."""
        if positions is not None:  # explicit positions (a context-parallel shard)
            positions = positions.to(device=like.device)
            cos, sin = self._cos_sin(int(positions.max()) + 1, like.dtype, like.device)
            return cos[positions], sin[positions]
        cos, sin = self._cos_sin(offset + T, like.dtype, like.device)
        return cos[offset : offset + T], sin[offset : offset + T]

    def forward(self, x: Tensor, offset: int = 0, positions: Tensor | None = None) -> Tensor:
        """``positions`` ``(T,)``: explicit positions (a context-parallel shard), else
        offset..offset+T-1."""
        self._check(x)
        return rotate(x, *self.angles(x.shape[-2], x, offset, positions))

    def pair(
        self, q: Tensor, k: Tensor, offset: int = 0, positions: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """Queries and keys of the same positions rotated with one table look-up."""
        self._check(q)
        self._check(k)
        T, S = q.shape[-2], k.shape[-2]
        cos, sin = self.angles(max(T, S), q, offset, positions)
        return rotate(q, cos[:T], sin[:T]), rotate(k, cos[:S], sin[:S])

    def _check(self, x: Tensor) -> None:
        D = 2 * self.inv_freq.shape[0]
        if x.shape[-1] != D:
            raise ValueError(f"x must end in D={D}, got {tuple(x.shape)}")


def rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate-half: feature i pairs with i + D/2; cos ``[cos | cos]``, sin ``[-sin | sin]``
    ``(T, D)``: [x1 cos - x2 sin, x2 cos + x1 sin], with [x2, x1] = x rolled by D/2."""
    return x * cos + x.roll(x.shape[-1] // 2, dims=-1) * sin  # (..., T, D)
