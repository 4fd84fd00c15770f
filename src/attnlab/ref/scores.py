"""Score functions: how well a query matches each key, before the softmax.

A small registry chosen by name, so new variants add an entry instead of a flag:

    dot         q . k                               (Luong et al., 2015)
    scaled_dot  q . k / sqrt(d)                      (Vaswani et al., 2017)
    general     q^T W k            W (d_q, d_k)     (Luong "general")
    additive    v^T tanh(q W_q + k W_k)              (Bahdanau et al., 2014)
                W_q (d_q, d_a), W_k (d_k, d_a), v (d_a,)
    concat      v^T tanh([q; k] W)  W (d_q + d_k, d_a), v (d_a,)   (Luong "concat")

All take query ``(..., d_q)`` and keys ``(..., S, d_k)`` and return scores ``(..., S)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ._checks import as_float_array, same_dtype


def _dot(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    return (k @ q[..., :, None])[..., 0]  # (..., S, d) @ (..., d, 1) -> (..., S)


def _scaled_dot(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    return _dot(q, k) / q.dtype.type(math.sqrt(q.shape[-1]))


def _general(q: np.ndarray, k: np.ndarray, W: np.ndarray) -> np.ndarray:
    return _dot(q @ W, k)  # (..., d_q) @ (d_q, d_k) -> (..., d_k), then . k


def _additive(q: np.ndarray, k: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, v: np.ndarray):
    hidden = np.tanh((q @ W_q)[..., None, :] + k @ W_k)  # (..., 1, d_a) + (..., S, d_a)
    return hidden @ v  # (..., S, d_a) @ (d_a,) -> (..., S)


def _concat(q: np.ndarray, k: np.ndarray, W: np.ndarray, v: np.ndarray) -> np.ndarray:
    d_q = q.shape[-1]
    # [q; k] W = q W[:d_q] + k W[d_q:]: the same network as additive with W split in two.
    return _additive(q, k, W[:d_q], W[d_q:], v)


SCORES: dict[str, tuple[Callable[..., np.ndarray], tuple[str, ...]]] = {
    "dot": (_dot, ()),
    "scaled_dot": (_scaled_dot, ()),
    "general": (_general, ("W",)),
    "additive": (_additive, ("W_q", "W_k", "v")),
    "concat": (_concat, ("W", "v")),
}


def _check_widths(kind: str, q: np.ndarray, k: np.ndarray, p: dict[str, np.ndarray]) -> None:
    d_q, d_k = q.shape[-1], k.shape[-1]
    expected: dict[str, tuple[int, ...]] = {}
    if kind in ("dot", "scaled_dot") and d_q != d_k:
        raise ValueError(f"{kind} score needs equal widths: query {q.shape}, keys {k.shape}")
    if "v" in p and p["v"].ndim != 1:  # additive, concat: d_a is read from v
        raise ValueError(f"{kind} score: v must be a vector (d_a,), got shape {p['v'].shape}")
    if kind == "general":
        expected = {"W": (d_q, d_k)}
    elif kind == "additive":
        d_a = p["v"].shape[0]
        expected = {"W_q": (d_q, d_a), "W_k": (d_k, d_a)}
    elif kind == "concat":
        d_a = p["v"].shape[0]
        expected = {"W": (d_q + d_k, d_a)}
    for n, shape in expected.items():
        if p[n].shape != shape:
            raise ValueError(
                f"{kind} score: {n} must have shape {shape} for query {q.shape} and keys "
                f"{k.shape}, got {p[n].shape}"
            )


def score(query: np.ndarray, keys: np.ndarray, kind: str, **params: np.ndarray) -> np.ndarray:
    """Scores ``(..., S)`` of one query ``(..., d_q)`` against keys ``(..., S, d_k)``.

    ``kind`` is one of ``SCORES``; ``params`` are that kind's weights (see the module docstring).
    """
    if kind not in SCORES:
        raise ValueError(f"unknown score kind {kind!r}; choose one of {sorted(SCORES)}")
    fn, names = SCORES[kind]
    if set(params) != set(names):
        raise TypeError(
            f"{kind} score takes parameters {list(names) or 'none'}, got {sorted(params) or 'none'}"
        )
    q, k = as_float_array(query, "query"), as_float_array(keys, "keys")
    p = {n: as_float_array(params[n], n) for n in names}
    same_dtype(query=q, keys=k, **p)
    if q.ndim < 1 or k.ndim < 2:
        raise ValueError(
            f"query must be (..., d_q) and keys (..., S, d_k); got {q.shape}, {k.shape}"
        )
    _check_widths(kind, q, k, p)
    return fn(q, k, **p)
