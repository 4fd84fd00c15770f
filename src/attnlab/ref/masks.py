"""Boolean attention masks (True = may attend) and the causal average that motivates them."""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, min_ndim


def causal_mask(T: int, S: int | None = None) -> np.ndarray:
    """Lower-triangular bool mask of shape ``(T, S)``; entry (t, s) is True when s <= t.

    Top-left aligned like ``torch``'s ``is_causal``: with T > S the last rows see every key,
    with T < S the last keys are never seen.
    """
    S = T if S is None else S
    for name, n in (("T", T), ("S", S)):
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
            raise ValueError(f"causal_mask: {name} must be a non-negative int, got {n!r}")
    return np.tril(np.ones((T, S), dtype=bool))


def padding_mask(lengths: np.ndarray, S: int) -> np.ndarray:
    """Key-padding mask from valid lengths: ``(B,)`` lengths -> bool ``(B, 1, S)``.

    Key s of sequence b may be attended to when ``s < lengths[b]``; the middle axis broadcasts
    over query rows, so the result can be passed as ``attn_mask`` for ``(B, T, S)`` scores
    (add an axis for heads: ``mask[:, None]``).
    """
    lengths = np.asarray(lengths)
    if lengths.dtype.kind not in "iu" or lengths.ndim != 1:
        raise ValueError(
            f"lengths must be a 1-D integer array, got {lengths.dtype} {lengths.shape}"
        )
    if np.any(lengths < 0) or np.any(lengths > S):
        raise ValueError(f"lengths must lie in [0, {S}], got {lengths.tolist()}")
    return (np.arange(S) < lengths[:, None])[:, None, :]


def causal_mean(x: np.ndarray) -> np.ndarray:
    """Row t of the result is the mean of rows 0..t of ``x`` (shape ``(..., T, D)``).

    Written as one matrix product with the lower-triangular averaging matrix
    ``W = tril(ones) / row_sums`` — the same "weights @ values" shape as attention, with the
    weights fixed instead of computed from the content.
    """
    x = as_float_array(x, "x")
    min_ndim(x, 2, "x", "(..., T, D)")
    T = x.shape[-2]
    W = causal_mask(T).astype(x.dtype)  # (T, T)
    W /= np.maximum(W.sum(axis=-1, keepdims=True), 1)
    return W @ x  # (T, T) @ (..., T, D) -> (..., T, D)
