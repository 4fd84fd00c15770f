"""ALiBi (Press et al., 2022): no position embeddings; each head adds a linear penalty
-slope * distance to its scores, with head slopes in a geometric sequence."""

from __future__ import annotations

import numpy as np


def alibi_slopes(H: int) -> np.ndarray:
    """float64 ``(H,)``: 2^(-8/H), 2^(-16/H), ... for H a power of 2; otherwise the slopes of the
    nearest lower power of 2, n, then every other slope of 2n (the paper's recipe)."""
    if not isinstance(H, (int, np.integer)) or isinstance(H, bool) or H < 1:
        raise ValueError(f"H must be a positive int, got {H!r}")

    def geometric(n: int) -> list[float]:
        return [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]

    n = 1 << (int(H).bit_length() - 1)  # the largest power of 2 <= H
    slopes = geometric(n) + geometric(2 * n)[0::2][: H - n]
    return np.array(slopes, dtype=np.float64)


def alibi_bias(slopes: np.ndarray, T: int, S: int) -> np.ndarray:
    """float64 ``(..., H, T, S)`` bias -slope * |s - p|, p = t + S - T the query's key position
    (bottom-right, as FlashAttention's ``alibi_slopes``); ``slopes`` is ``(H,)`` or ``(B, H)``."""
    slopes = np.asarray(slopes, dtype=np.float64)
    dist = np.abs(np.arange(S)[None, :] - (np.arange(T)[:, None] + S - T))  # (T, S)
    return -slopes[..., None, None] * dist
