"""Cached decoding in NumPy: self-attention over a KV cache on arrays gathered once.

A small model decoding on a CPU is bound by per-call overhead, not arithmetic: a torch op on a
``(1, 96)`` row costs several microseconds of dispatch, a NumPy op about one. So a float32 CPU
model's ``generate`` copies each layer's weights into NumPy once per call and runs every new
token (and every window's prefill) through these functions. What they compute is
``MultiHeadAttention.forward``'s arithmetic in float32 (the tests hold the logits against the
model's own forward and against a float64 oracle under ``attnlab.parity``); only the rounding
of the BLAS calls differs.

Rotary positions cost one matmul here: the projection also produces each q and k head with its
halves swapped (``rotate``'s roll by D/2 moved into the weights, exact since it only reorders
columns), so rotating is ``a * cos + b * sin``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor, nn

from .attention import MultiHeadAttention


def as_array(t: Tensor | None, transpose: bool = False) -> np.ndarray | None:
    """A float32 C-contiguous NumPy copy of a CPU tensor (transposed first if asked)."""
    if t is None:
        return None
    t = t.detach()
    return np.ascontiguousarray((t.t() if transpose else t).numpy(), dtype=np.float32)


def folded(
    weight: Tensor,
    bias: Tensor | None,
    ln: nn.LayerNorm | None = None,
    out_scale: float = 1.0,
    in_scale: float = 1.0,
) -> tuple[np.ndarray, np.ndarray | None]:
    """``nn.Linear`` weight ``(out, in)`` and bias as ``linear``'s ``(w_t, b)`` arrays, with the
    LayerNorm ``ln`` that feeds it folded in: LN(x) W^T + c = norm(x) (g W^T) + (beta W^T + c),
    computed in float64, rounded once. ``linear(normalize(x), ...)`` then costs no affine ops.
    ``out_scale`` multiplies the output (weight and bias), ``in_scale`` the input (weight)."""
    w_t = weight.detach().t().double() * (out_scale * in_scale)  # (in, out)
    b = None if bias is None else bias.detach().double() * out_scale
    if ln is not None:
        if ln.bias is not None:
            b = ln.bias.detach().double() @ w_t + (0 if b is None else b)
        if ln.weight is not None:
            w_t = ln.weight.detach().double()[:, None] * w_t
    return as_array(w_t.float()), as_array(None if b is None else b.float())


def normalize(x: np.ndarray, eps: float) -> np.ndarray:
    """``F.layer_norm`` without its affine part, over the last axis: (x - mean) / sqrt(var +
    eps) (the affine part is folded into the next linear: ``folded``)."""
    n = 1.0 / x.shape[-1]
    if x.ndim == 1:  # one row (a decoding step of one sequence): scalar statistics
        xc = x - np.add.reduce(x) * n
        xc *= 1.0 / math.sqrt(float(np.dot(xc, xc)) * n + eps)
        return xc
    xc = x - np.add.reduce(x, -1, keepdims=True) * n
    v = np.add.reduce(xc * xc, -1, keepdims=True)
    v *= n
    v += eps
    np.sqrt(v, out=v)
    xc /= v
    return xc


@functools.cache
def _blas_libraries() -> list:
    """threadpoolctl's controllers of the loaded BLAS libraries (found once: a scan of every
    loaded library costs about a millisecond)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas").lib_controllers


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """NumPy's BLAS held to one thread for the duration (then restored): a decoding step's
    matmuls are far too small to split, and under load a second BLAS thread made them about
    five times slower here. (``threadpool_limits`` would do it at about 70 us a call.)"""
    libs = _blas_libraries()
    before = [lib.get_num_threads() for lib in libs]
    for lib in libs:
        lib.set_num_threads(1)
    try:
        yield
    finally:
        for lib, n in zip(libs, before, strict=True):
            lib.set_num_threads(n)


class NumpyKV:
    """Keys and values of one layer, preallocated for ``max_len`` positions and written in
    place: keys stored transposed ``(B, Hkv, D, max_len)`` so that the scores are one matmul
    on a slice, values ``(B, Hkv, max_len, D)``."""

    def __init__(self, batch: int, kv_heads: int, d_k: int, max_len: int) -> None:
        self.kt = np.empty((batch, kv_heads, d_k, max_len), np.float32)
        self.v = np.empty((batch, kv_heads, max_len, d_k), np.float32)
        self.max_len, self.len = max_len, 0
        # what ``attend_one`` writes and reads: one sequence's rows go without the batch axis
        self.kt_one, self.v_one = (self.kt[0], self.v[0]) if batch == 1 else (self.kt, self.v)

    def __len__(self) -> int:
        return self.len

    def append(self, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """k, v ``(B, T, Hkv, D)`` after the cached positions -> all keys transposed
        ``(B, Hkv, D, S)`` and values ``(B, Hkv, S, D)`` (views)."""
        T = k.shape[1]
        n = self.len + T
        if n > self.max_len:
            raise ValueError(
                f"KV cache holds {self.max_len} positions; {self.len} + {T} do not fit"
            )
        self.kt[..., self.len : n] = k.transpose(0, 2, 3, 1)
        self.v[:, :, self.len : n] = v.transpose(0, 2, 1, 3)
        self.len = n
        return self.kt[..., :n], self.v[:, :, :n]


class NumpyAttention(NamedTuple):
    """A ``MultiHeadAttention``'s weights as arrays, gathered once per ``generate``.

    ``in_wt`` ``(d, d + 2 Hkv D)``: columns q, k, v; under rotary positions followed by the q
    and k columns again with each head's halves swapped (``(H + Hkv) D`` more)."""

    in_wt: np.ndarray
    in_b: np.ndarray | None
    out_wt: np.ndarray
    out_b: np.ndarray | None
    heads: int
    kv_heads: int
    d_k: int
    rotary: bool

    @classmethod
    def of(cls, m: MultiHeadAttention, ln: nn.LayerNorm | None = None) -> NumpyAttention:
        """``ln``: the LayerNorm before the attention, folded into the projection (``folded``)."""
        H, Hkv, D = m.num_heads, m.num_kv_heads, m.d_k
        W, b = m.in_proj.weight.detach().to(torch.float64, copy=True), m.in_proj.bias
        b = None if b is None else b.detach().to(torch.float64, copy=True)  # float64 till folded
        W[: H * D] /= math.sqrt(D)  # the scores' scale, on the queries
        if b is not None:
            b[: H * D] /= math.sqrt(D)
        if m.rotary is not None:  # rows of q and k heads, halves swapped: rotate's roll
            n = (H + Hkv) * D
            W = torch.cat([W, W[:n].view(H + Hkv, D, -1).roll(D // 2, dims=1).reshape(n, -1)])
            if b is not None:
                b = torch.cat([b, b[:n].view(H + Hkv, D).roll(D // 2, dims=1).reshape(n)])
        in_wt, in_b = folded(W, b, ln)
        out_wt, out_b = folded(m.out_proj.weight, m.out_proj.bias)
        return cls(in_wt, in_b, out_wt, out_b, H, Hkv, D, m.rotary is not None)


def linear(x: np.ndarray, w_t: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """x ``(..., d_in)`` @ w_t ``(d_in, d_out)`` (+ b): a matrix-vector product (BLAS gemv) for
    one row ``(d_in,)``, else one 2-D matmul."""
    if x.ndim <= 2:
        y = np.dot(x, w_t)
    else:
        y = np.dot(x.reshape(-1, x.shape[-1]), w_t).reshape(*x.shape[:-1], w_t.shape[1])
    if b is not None:
        y += b
    return y


GELU_SCALE = math.sqrt(0.5)  # gelu_scaled's input and output scale, folded into the linears


def gelu_scaled(u: np.ndarray) -> np.ndarray:
    """u (1 + erf u) = sqrt(2) gelu(sqrt(2) u), ``F.gelu``'s erf form with its scales moved
    out: the linear before computes u = x / sqrt(2), the one after takes the factor
    1 / sqrt(2) (``folded``'s scales, GELU_SCALE). NumPy has no erf: torch's runs on the same
    memory."""
    e = np.empty_like(u)
    return _times_one_plus_erf(u, e, torch.from_numpy(u), torch.from_numpy(e))


def _times_one_plus_erf(u: np.ndarray, e: np.ndarray, tu, te) -> np.ndarray:
    """e = u (1 + erf u), in ``e``; ``tu``, ``te``: torch tensors on u's and e's memory."""
    torch.erf(tu, out=te)
    e += 1.0
    e *= u
    return e


class GeluRow:
    """``gelu_scaled(linear(x, w_t, b))`` for a decoding step, into arrays allocated once per
    window: u and erf(u) each with a torch tensor on the same memory, so a step makes no new
    array or tensor for them (``torch.from_numpy`` and ``.numpy()`` cost microseconds a call).
    The result is overwritten by the next call: use it before calling again."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.u = np.empty(shape, np.float32)
        self.e = np.empty(shape, np.float32)
        self.tu, self.te = torch.from_numpy(self.u), torch.from_numpy(self.e)

    def __call__(self, x: np.ndarray, w_t: np.ndarray, b: np.ndarray | None) -> np.ndarray:
        np.dot(x, w_t, out=self.u)
        if b is not None:
            self.u += b
        return _times_one_plus_erf(self.u, self.e, self.tu, self.te)


def causal_bias(T: int, past: int) -> np.ndarray | None:
    """``(T, past + T)``: 0 where new position t may attend (keys up to past + t), -inf after;
    None for a single new position (it sees every key)."""
    if T == 1:
        return None
    S = past + T
    keep = np.arange(S)[None, :] <= past + np.arange(T)[:, None]
    return np.where(keep, np.float32(0.0), np.float32(-np.inf))


def attend(
    x: np.ndarray,
    w: NumpyAttention,
    cache: NumpyKV,
    rope: tuple[np.ndarray, np.ndarray] | None,
    bias: np.ndarray | None,
) -> np.ndarray:
    """Causal self-attention of x ``(B, T, d)`` (positions after those in ``cache``; already
    normalized when a LayerNorm was folded in) -> ``(B, T, d)``. The queries come out of the
    projection already scaled by 1/sqrt(D) (``NumpyAttention.of``). rope: cos, sin ``(T, 1,
    D)`` of the new positions; bias: ``causal_bias(T, past)``."""
    B, T, _ = x.shape
    H, Hkv, D = w.heads, w.kv_heads, w.d_k
    n = (H + Hkv) * D
    if (rope is not None) != w.rotary:  # the swapped columns are there iff rotary positions
        have = "has" if w.rotary else "has no"
        raise ValueError(f"rope must match the weights: the attention {have} rotary positions")
    y = linear(x, w.in_wt, w.in_b)  # (B, T, d + 2 Hkv D [+ n])
    qk = y[..., :n].reshape(B, T, H + Hkv, D)
    if rope is not None:  # rotate: x cos + roll(x) sin, roll(x) computed by the weights
        qk = qk * rope[0] + y[..., n + Hkv * D :].reshape(B, T, H + Hkv, D) * rope[1]
    v = y[..., n : n + Hkv * D].reshape(B, T, Hkv, D)
    kt, vs = cache.append(qk[:, :, H:], v)  # (B, Hkv, D, S), (B, Hkv, S, D)
    q = qk[:, :, :H].reshape(B, T, Hkv, H // Hkv, D).transpose(0, 2, 3, 1, 4)  # (B,Hkv,G,T,D)
    s = q @ kt[:, :, None]  # (B, Hkv, G, T, S): each group of query heads shares its kv head
    if bias is not None:
        s += bias
    s -= s.max(-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(-1, keepdims=True)
    o = (s @ vs[:, :, None]).transpose(0, 3, 1, 2, 4).reshape(B, T, H * D)  # heads in order
    return linear(o, w.out_wt, w.out_b)


def attend_one(
    x: np.ndarray, w: NumpyAttention, cache: NumpyKV, rope: tuple[np.ndarray, np.ndarray] | None
) -> np.ndarray:
    """``attend`` for one new position per sequence, in fewer calls (a decoding step's cost is
    mostly calls): x ``(B, d)``, or ``(d,)`` for a cache of one sequence -> the same shape;
    rope: cos, sin ``(D,)``."""
    lead = x.shape[:-1]  # (B,) or ()
    H, Hkv, D = w.heads, w.kv_heads, w.d_k
    y = linear(x, w.in_wt, w.in_b).reshape(*lead, -1, D)  # (..., heads of q, k, v [q, k], D)
    qk = y[..., : H + Hkv, :]
    if rope is not None:  # rotate: x cos + roll(x) sin, roll(x) computed by the weights
        qk = qk * rope[0] + y[..., H + 2 * Hkv :, :] * rope[1]
    pos, kt, vs = cache.len, cache.kt_one, cache.v_one
    if pos >= cache.max_len:
        raise ValueError(f"KV cache holds {cache.max_len} positions; {pos} + 1 do not fit")
    kt[..., pos] = qk[..., H:, :]
    vs[..., pos, :] = y[..., H + Hkv : H + 2 * Hkv, :]
    cache.len = pos = pos + 1
    q = qk[..., :H, None, :] if H == Hkv else qk[..., :H, :].reshape(*lead, Hkv, H // Hkv, D)
    s = q @ kt[..., :pos]  # (..., Hkv, G, S): each group of query heads shares its kv head
    s -= np.maximum.reduce(s, -1, keepdims=True)  # the ufuncs: ndarray.max/sum wrap these
    np.exp(s, out=s)
    s /= np.add.reduce(s, -1, keepdims=True)
    return linear((s @ vs[..., :pos, :]).reshape(*lead, H * D), w.out_wt, w.out_b)
