"""Positions for attention: the sinusoidal encoding, and rotary embeddings.

Sinusoidal ("Attention Is All You Need", section 3.5), added to the input:

    PE[pos, 2i]   = sin(pos / base^(2i/d))
    PE[pos, 2i+1] = cos(pos / base^(2i/d))

Each (sin, cos) column pair is a point on a circle turning at its own frequency, so moving k
positions is a fixed rotation of every pair: PE[pos + k] = PE[pos] @ M_k for a matrix M_k that
depends on k alone. That is why relative offsets are easy for attention to read off.

Rotary (RoFormer, Su et al. 2021), applied to queries and keys: feature i and feature i + D/2
(the "rotate half" pairing of GPT-NeoX and Llama) are turned together by the angle
``position * base^(-2i/D)``. A rotation by m then n leaves q . k depending on n - m alone.
"""

from __future__ import annotations

import numpy as np


def sinusoidal_positional_encoding(
    T: int, d: int, base: float = 10000.0, dtype: type = np.float64
) -> np.ndarray:
    """Encoding of positions ``0..T-1`` as a ``(T, d)`` array (sin on even columns, cos on odd).

    An odd ``d`` keeps the last sine column without its cosine partner.
    """
    for name, n in (("T", T), ("d", d)):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"{name} must be a non-negative int, got {n!r}")
    if not base > 0:
        raise ValueError(f"base must be positive, got {base!r}")
    pos = np.arange(T, dtype=np.float64)[:, None]  # (T, 1)
    freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (ceil(d/2),)
    angle = pos * freq  # (T, ceil(d/2))
    pe = np.empty((T, d), dtype=np.float64)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d // 2])
    return pe.astype(dtype, copy=False)


def rotary_embedding(
    x: np.ndarray, positions: np.ndarray | None = None, base: float = 10000.0
) -> np.ndarray:
    """Rotate ``x`` ``(..., T, D)`` by position; ``positions`` ``(T,)`` defaults to ``0..T-1``.

    Pairs feature ``i`` with ``i + D/2`` and turns each pair by ``positions * base**(-2i/D)``:
    ``(a, b) -> (a cos - b sin, a sin + b cos)``. D must be even; the dtype is kept.
    """
    x = np.asarray(x)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError(f"x must be (..., T, D) with an even D, got shape {x.shape}")
    T, D = x.shape[-2:]
    pos = np.arange(T) if positions is None else np.asarray(positions)
    if pos.shape != (T,):
        raise ValueError(f"positions must have shape ({T},), got {pos.shape}")
    if not base > 0:
        raise ValueError(f"base must be positive, got {base!r}")
    freq = base ** (-np.arange(0, D, 2, dtype=np.float64) / D)  # (D/2,)
    angle = pos.astype(np.float64)[:, None] * freq  # (T, D/2)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    a, b = x[..., : D // 2], x[..., D // 2 :]  # (..., T, D/2) each
    return np.concatenate((a * cos - b * sin, a * sin + b * cos), axis=-1)  # (..., T, D)
