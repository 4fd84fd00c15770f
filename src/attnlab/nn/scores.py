"""Score functions as small modules, chosen by name from ``SCORES`` (mirrors ``attnlab.ref.scores``).

Each maps queries ``(B, T, d_q)`` and keys ``(B, S, d_k)`` to scores ``(B, T, S)`` and owns only
its parameters. ``nn.Linear`` stores ``(d_out, d_in)``, so the reference's ``W`` is ``weight.T``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class DotScore(nn.Module):
    """q . k (Luong "dot"); needs d_q == d_k."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int | None = None):
        super().__init__()
        if query_dim != key_dim:
            raise ValueError(f"dot score needs query_dim == key_dim, got {query_dim} and {key_dim}")

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ k.transpose(-2, -1)  # (B, T, d) @ (B, d, S) -> (B, T, S)


class ScaledDotScore(DotScore):
    """q . k / sqrt(d) (Vaswani et al.)."""

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        return super().forward(q, k) / math.sqrt(q.shape[-1])


class GeneralScore(nn.Module):
    """q^T W k (Luong "general"), W ``(d_q, d_k)``."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int | None = None):
        super().__init__()
        self.W = nn.Linear(query_dim, key_dim, bias=False)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        return self.W(q) @ k.transpose(-2, -1)  # (B, T, d_k) @ (B, d_k, S) -> (B, T, S)


class AdditiveScore(nn.Module):
    """v^T tanh(W_q q + W_k k) (Bahdanau), hidden width ``hidden_dim`` (default key_dim)."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int | None = None):
        super().__init__()
        hidden_dim = hidden_dim or key_dim
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        hidden = torch.tanh(self.W_q(q)[:, :, None, :] + self.W_k(k)[:, None, :, :])  # (B, T, S, h)
        return self.v(hidden).squeeze(-1)  # (B, T, S)


class ConcatScore(nn.Module):
    """v^T tanh(W [q; k]) (Luong "concat"), W ``(d_q + d_k, hidden_dim)``.

    ``[q; k] W`` is computed as ``q W[:d_q] + k W[d_q:]`` so no ``(B, T, S, d_q + d_k)``
    concatenation is ever built; the result is the same number.
    """

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int | None = None):
        super().__init__()
        hidden_dim = hidden_dim or key_dim
        self.query_dim = query_dim
        self.W = nn.Linear(query_dim + key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        W_q, W_k = self.W.weight[:, : self.query_dim], self.W.weight[:, self.query_dim :]
        hidden = torch.tanh((q @ W_q.T)[:, :, None, :] + (k @ W_k.T)[:, None, :, :])  # (B,T,S,h)
        return self.v(hidden).squeeze(-1)  # (B, T, S)


SCORES: dict[str, type[nn.Module]] = {
    "dot": DotScore,
    "scaled_dot": ScaledDotScore,
    "general": GeneralScore,
    "additive": AdditiveScore,
    "concat": ConcatScore,
}


def make_score(kind: str, query_dim: int, key_dim: int, hidden_dim: int | None = None) -> nn.Module:
    """Build the score module registered under ``kind``."""
    if kind not in SCORES:
        raise ValueError(f"unknown score kind {kind!r}; choose one of {sorted(SCORES)}")
    return SCORES[kind](query_dim, key_dim, hidden_dim)
