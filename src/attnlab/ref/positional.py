"""Sinusoidal positional encoding ("Attention Is All You Need", section 3.5).

    PE[pos, 2i]   = sin(pos / base^(2i/d))
    PE[pos, 2i+1] = cos(pos / base^(2i/d))

Each (sin, cos) column pair is a point on a circle turning at its own frequency, so moving k
positions is a fixed rotation of every pair: PE[pos + k] = PE[pos] @ M_k for a matrix M_k that
depends on k alone. That is why relative offsets are easy for attention to read off.
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
