"""Exact attention without the T x S score table: online softmax over key/value blocks.

Rabe & Staats (2021), "Self-attention does not need O(n^2) memory"; Dao et al. (2022),
"FlashAttention". For each block of queries we walk the key/value blocks, keeping per query row a
reference point r, an unnormalised output acc = sum 2^(s - r) v and its running sum
l = sum 2^(s - r). Scores are in base 2 (log2(e) is folded into the scale), so that the
reference points move by powers of two; the weights themselves are taken with exp (NumPy's
float32 exp has an AVX2 kernel, its exp2 not). At the end out = acc / l and lse = (r + log2 l) ln 2.

This module is that loop as a learner reads it (``_exact_block``, ``_add_tile_rebased``,
``_finish_block``): r follows each row's maximum as in FlashAttention, for any scores and
masks. What makes it fast on a CPU lives beside it in ``tiled_kernel``: a query block is first
tried with r = 0 for every row (no maxima, no rescaling; ``tiled_kernel.fast_block``), which a
check at the end sends back to the exact loop when the scores left float32's comfortable range;
blocks run on a small thread pool with BLAS held to one thread each; weights small enough to
make subnormal (slow) numbers are dropped. The result does not depend on the number of workers.

Extra memory is O(T * d + block^2) per worker: a tile of scores, never the table. Under
``is_causal`` key blocks that lie wholly above the diagonal are skipped (about half the work).

``tiled_attention_backward`` is FlashAttention's backward pass: it recomputes each tile's
probabilities from q, k and lse, so it also needs only O(T * d + block^2) extra memory.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import tiled_kernel as kernel
from ._checks import mask_array
from .sdpa import prepare_qkv
from .tiled_kernel import LN2, LOG2E, default_block_size


class Problem:
    """Inputs flattened to (N, T, E) / (N, S, E) with N = batch * heads, plus the mask."""

    def __init__(
        self, q, k, v, attn_mask, is_causal, scale, enable_gqa, block_size, need_same_batch=False
    ):
        q, k, v, self.dtype, batch, self.group = prepare_qkv(q, k, v, enable_gqa)
        if need_same_batch and not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]):
            raise ValueError(
                f"the backward pass needs q, k, v with the same leading dims (GQA aside), got "
                f"q {q.shape}, k {k.shape}, v {v.shape}"
            )
        self.batch, self.T, self.S = batch, q.shape[-2], k.shape[-2]
        self.E, self.Ev = q.shape[-1], v.shape[-1]
        N = int(np.prod(batch, dtype=np.int64))
        self.N = N
        self.q = np.broadcast_to(q, (*batch, self.T, self.E)).reshape(N, self.T, self.E)
        self.k = np.broadcast_to(k, (*batch, self.S, self.E)).reshape(N, self.S, self.E)
        self.v = np.broadcast_to(v, (*batch, self.S, self.Ev)).reshape(N, self.S, self.Ev)
        self.scale = 1.0 / math.sqrt(self.E) if scale is None else float(scale)
        self.is_causal = bool(is_causal)
        self.mask = None
        if attn_mask is not None:
            m = mask_array(attn_mask, (*batch, self.T, self.S))
            # a 2-D mask is sliced directly; otherwise a broadcast view (nothing copied) that
            # mask_tile slices and flattens to (N, bq, bk) one tile at a time
            self.mask = m if m.ndim <= 2 else np.broadcast_to(m, (*batch, self.T, self.S))
        if block_size is None:
            block_size = default_block_size(N, self.T, self.S, self.dtype.itemsize)
        if (
            isinstance(block_size, bool)
            or not isinstance(block_size, (int, np.integer))
            or block_size < 1
        ):
            raise ValueError(f"block_size must be a positive int, got {block_size!r}")
        self.block = int(block_size)

    def keys_transposed(self) -> np.ndarray:
        """K^T as one contiguous (N, E, S) array (fast tile matmuls)."""
        return np.ascontiguousarray(np.swapaxes(self.k, -1, -2))

    def mask_tile(self, i0: int, i1: int, j0: int, j1: int) -> np.ndarray | None:
        """The user mask for queries i0:i1 and keys j0:j1, shaped to broadcast to (N, bq, bk)."""
        if self.mask is None:
            return None
        if self.mask.ndim <= 2:
            return self.mask[..., i0:i1, j0:j1] if self.mask.ndim == 2 else self.mask
        return self.mask[..., i0:i1, j0:j1].reshape(self.N, i1 - i0, j1 - j0)

    def key_blocks(self, i0: int, i1: int) -> range:
        """Key block starts to visit for queries i0:i1 (causal: none wholly above the diagonal)."""
        stop = min(self.S, i1) if self.is_causal else self.S  # key s is visible to t iff s <= t
        return range(0, stop, self.block)

    def scores(
        self,
        qb: np.ndarray,
        kT: np.ndarray,
        i0: int,
        i1: int,
        j0: int,
        j1: int,
        buf: np.ndarray,
        unit: float = 1.0,
    ) -> np.ndarray:
        """Masked scores (N, bq, bk) of prepared queries qb against keys j0:j1 of ``kT``
        (N, E', S), written into ``buf`` (a reusable (N, block, block) tile). ``unit``
        multiplies a float mask (LOG2E when the scores are in base 2)."""
        s = buf[:, : i1 - i0, : j1 - j0]
        np.matmul(qb, kT[:, :, j0:j1], out=s)  # (N, bq, E') @ (N, E', bk)
        # masks are added (0 or -inf for bool ones): 5x cheaper than a masked copy
        zero, ninf = self.dtype.type(0), self.dtype.type(-np.inf)
        user = self.mask_tile(i0, i1, j0, j1)
        if user is not None:
            if user.dtype == bool:
                s += np.where(user, zero, ninf)
            else:
                add = user.astype(self.dtype, copy=False)
                s += add if unit == 1 else add * self.dtype.type(unit)
        above = self.above_diagonal(i0, i1, j0, j1)
        if above is not None:
            s += np.where(above, ninf, zero)
        return s

    def above_diagonal(self, i0: int, i1: int, j0: int, j1: int) -> np.ndarray | None:
        """(bq, bk) True where key s > query t, if ``is_causal`` and the tile touches the
        diagonal; None otherwise."""
        if not (self.is_causal and j1 - 1 > i0):
            return None
        return np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None]


def tiled_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    attn_mask: np.ndarray | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    block_size: int | None = None,
    return_lse: bool = False,
    enable_gqa: bool = False,
    workers: int | None = None,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Same arguments and result as ``scaled_dot_product_attention`` (weights aside), in
    O(T * d + block^2) extra memory.

    Shapes: q ``(..., T, E)``, k ``(..., S, E)``, v ``(..., S, Ev)`` -> out ``(..., T, Ev)``;
    with ``return_lse`` also lse ``(..., T)``: log sum_s exp(score[t, s]) over the keys t may
    attend to (``-inf`` for a row that may attend to none, whose output is zeros).
    ``block_size`` defaults to ``default_block_size``; ``workers`` threads (default: CPU count).
    """
    P = Problem(q, k, v, attn_mask, is_causal, scale, enable_gqa, block_size)
    if P.dtype == np.float16:  # sums in float32, as GPU kernels keep them; float16 out
        P.q, P.k, P.v = (a.astype(np.float32) for a in (P.q, P.k, P.v))
        P.dtype = np.dtype(np.float32)
        out, lse = _forward(P, workers)
        out, lse = out.astype(np.float16), lse.astype(np.float16)
    else:
        out, lse = _forward(P, workers)
    out = out.reshape(*P.batch, P.T, P.Ev)
    return (out, lse.reshape(*P.batch, P.T)) if return_lse else out


def _forward(P: Problem, workers: int | None) -> tuple[np.ndarray, np.ndarray]:
    """out (N, T, Ev) and lse (N, T) of a prepared problem, in its dtype: each query block
    fills its own rows of out and lse."""
    N, T, Ev, dt = P.N, P.T, P.Ev, P.dtype
    if P.S == 0:  # no keys: every row attends to nothing -> zeros
        return np.zeros((N, T, Ev), dtype=dt), np.full((N, T), -np.inf, dtype=dt)
    out, lse = np.empty((N, T, Ev), dtype=dt), np.empty((N, T), dtype=dt)
    # the exact path's scores in base 2 (its reference points move by powers of two): log2(e)
    # goes into the scale
    scale = dt.type(P.scale * LOG2E)
    scale_e = dt.type(P.scale)  # the fast path's scores are in base e (exp over exp2: below)
    key_norms = kernel.max_norms(P.k)  # (N,)

    def query_block(i0: int) -> None:
        i1 = min(i0 + P.block, T)
        with np.errstate(all="ignore"):  # the fast path may overflow: it is then redone
            fast = P.mask is None and kernel.fast_block(P, scale_e, key_norms, i0, i1, out, lse)
            if fast:
                return
            acc = np.zeros((N, i1 - i0, Ev + 1), dtype=dt)  # sum 2^(s - r) [v | 1] per row
            r = np.zeros((N, i1 - i0), dtype=dt)  # each row's reference point (base 2)
            _exact_block(P, scale, key_norms, i0, i1, acc, r)
            _finish_block(acc, r, out[:, i0:i1], lse[:, i0:i1])

    starts = list(range(0, T, P.block))[::-1]  # longest (causal) first
    kernel.run_parallel(query_block, starts, kernel.workers_for(workers, len(starts)))
    return out, lse


def _exact_block(P: Problem, scale, key_norms, i0: int, i1: int, acc, r: np.ndarray) -> None:
    """acc and r (zeros on entry) over the key tiles of queries i0:i1, each row's reference r
    following its maximum as in FlashAttention: all heads at once, for any scores and masks."""
    buf = np.empty((P.N, i1 - i0, min(P.block, P.S)), dtype=P.dtype)
    qs = P.q[:, i0:i1] * scale  # (N, bq, E)
    # scores (base 2) lie within +-B, B = max |q| max |k| (Cauchy-Schwarz): s - r >= -2B - log2 S
    bound = (kernel.max_norms(qs) * key_norms).max()
    floor = kernel.weight_floor(P, (2 * bound + math.log2(P.S)) * LN2)
    kT = np.swapaxes(P.k, -1, -2)  # (N, E, S), a view: BLAS reads it transposed
    for j0 in P.key_blocks(i0, i1):
        j1 = min(j0 + P.block, P.S)
        s = P.scores(qs, kT, i0, i1, j0, j1, buf, LOG2E)  # (N, bq, bk), base 2
        _add_tile_rebased(s, P.v[:, j0:j1], acc, r, floor)


def _add_tile_rebased(s: np.ndarray, vj: np.ndarray, acc: np.ndarray, r: np.ndarray, floor) -> None:
    """Move each row's reference r (N, bq) to max(tile max, r + log2 of its running sum), in
    place, rescaling acc so that every term and the running sum are <= 1; then
    acc += 2^(s - r) @ [vj | 1]. ``s`` (N, bq, bk): scores in base 2, overwritten. Weights
    below e^floor become 0 (``floor``: from ``tiled_kernel.weight_floor``; None: there are none)."""
    total = acc[..., -1]
    r_new = np.fmax(s.max(axis=-1), r + np.log2(total))  # (N, bq)
    r_new = np.where(np.isfinite(r_new), r_new, r)  # rows with nothing yet (or NaN) keep r
    # acc is 0 where its sum is 0: skip those rows, whose factor could overflow (0 * inf)
    factor = np.where(total > 0, np.exp2((r - r_new).astype(np.float64)), 1.0)
    acc *= factor[..., None]
    r[...] = r_new
    s -= r_new[..., None]
    s *= LN2  # base e from here: NumPy's exp is fast on -inf (masked scores), its exp2 is not
    if floor is not None:
        kernel.below_to_zero_weight(s, floor)
    np.exp(s, out=s)
    acc[..., :-1] += s @ vj  # (N, bq, bk) @ (N, bk, Ev)
    acc[..., -1] += s.sum(axis=-1)


def _finish_block(acc: np.ndarray, r: np.ndarray, out: np.ndarray, lse: np.ndarray) -> None:
    """out = acc / l and lse = (r + log2 l) ln 2 for one query block; rows with l = 0 (no key
    visible) get zeros and -inf, NaN rows become NaN."""
    total = acc[..., -1]  # (N, bq)
    out[...] = 0
    np.divide(acc[..., :-1], total[..., None], out=out, where=total[..., None] != 0)
    lse[...] = np.where(total > 0, (r + np.log2(total)) * LN2, -np.inf)
    nan_rows = np.isnan(total)
    if nan_rows.any():  # NaN in real inputs propagates
        out[nan_rows] = np.nan
        lse[nan_rows] = np.nan


def merge_attention(
    parts: Sequence[tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray]:
    """Combine results over disjoint key ranges into the result over their union.

    Each part is ``(out, lse)`` from ``tiled_attention(..., return_lse=True)`` over some keys:
    out ``(..., T, Ev)``, lse ``(..., T)``. The union's lse is logaddexp of the parts', and its
    output the parts' outputs weighted by exp(lse_part - lse). Rows no part can attend to stay 0.
    """
    if not parts:
        raise ValueError("merge_attention needs at least one (out, lse) part")
    outs = [np.asarray(o) for o, _ in parts]
    lses = [np.asarray(s) for _, s in parts]
    for o, s in zip(outs, lses, strict=True):
        if o.shape[:-1] != s.shape:
            raise ValueError(
                f"each part needs out (..., T, Ev) and lse (..., T); got {o.shape} and {s.shape}"
            )
    lse = lses[0]
    for s in lses[1:]:
        lse = np.logaddexp(lse, s)
    safe = np.where(np.isneginf(lse), 0, lse)
    out = np.zeros_like(outs[0])
    for o, s in zip(outs, lses, strict=True):
        out += np.exp(s - safe)[..., None] * o  # weight 0 for parts that saw nothing
    return out, lse


def tiled_attention_backward(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    out: np.ndarray,
    lse: np.ndarray,
    grad_out: np.ndarray,
    attn_mask: np.ndarray | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    block_size: int | None = None,
    enable_gqa: bool = False,
    workers: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients (dq, dk, dv) of sum(out * grad_out) by recomputation (FlashAttention-2).

    ``out`` and ``lse`` come from ``tiled_attention(..., return_lse=True)`` with the same
    arguments. For each tile: P = exp(S - lse), dV += P^T dO, dP = dO V^T,
    dS = P * (dP - rowsum(dO * O)), dQ += dS K * scale, dK += dS^T Q * scale.
    q, k, v must share their leading dims (GQA heads aside: dk, dv are summed per group).
    """
    P = Problem(q, k, v, attn_mask, is_causal, scale, enable_gqa, block_size, need_same_batch=True)
    B = _Backward.of(P, out, lse, grad_out)
    starts = list(range(0, P.S, P.block))  # key blocks, longest first (causal)
    n_workers = kernel.workers_for(workers, len(starts))
    dq_parts = [np.zeros((P.N, P.T, P.E), P.dtype) for _ in range(n_workers)]  # one a worker
    # each key block (and its rows of dk, dv) has one owner: whichever worker is free
    kernel.run_queue(lambda j0, w: _backward_key_block(B, j0, dq_parts[w]), starts, n_workers)
    dq = sum(dq_parts[1:], dq_parts[0]) * P.dtype.type(P.scale)
    return _unflatten_grads(P, dq, B.dk, B.dv)


@dataclass
class _Backward:
    """What every tile of the backward pass reads (and dk, dv, which its key block writes):
    all (N, ...) as ``Problem`` flattens them."""

    P: Problem
    qs: np.ndarray  # q * scale: (N, T, E)
    kT: np.ndarray  # K^T: (N, E, S)
    dO: np.ndarray  # (N, T, Ev)
    L_use: np.ndarray  # lse, +inf where it is -inf: exp(s - inf) = 0 for rows that saw nothing
    Dsum: np.ndarray  # rowsum(dO * O): (N, T)
    floor: float | None  # weights below e^floor: 0 (see tiled_kernel.subnormal_floor)
    dk: np.ndarray  # (N, S, E)
    dv: np.ndarray  # (N, S, Ev)

    @classmethod
    def of(cls, P: Problem, out, lse, grad_out) -> _Backward:
        N, T, S, E, Ev, dt = P.N, P.T, P.S, P.E, P.Ev, P.dtype
        out_ = np.asarray(out, dtype=dt).reshape(N, T, Ev)
        dO = np.asarray(grad_out, dtype=dt).reshape(N, T, Ev)
        L = np.asarray(lse, dtype=dt).reshape(N, T)
        qs = P.q * dt.type(P.scale)
        # scores lie within +-B, B = max |q| max |k| (Cauchy-Schwarz), and lse <= B + ln S
        bound = (kernel.max_norms(qs) * kernel.max_norms(P.k)).max() if S and T else 0.0
        return cls(
            P,
            qs,
            P.keys_transposed(),
            dO,
            np.where(np.isneginf(L), np.inf, L),
            np.einsum("ntv,ntv->nt", dO, out_),
            kernel.weight_floor(P, 2 * bound + math.log(max(S, 1))),  # s - lse >= -2B - ln S
            np.zeros((N, S, E), dtype=dt),
            np.zeros((N, S, Ev), dtype=dt),
        )


def _backward_key_block(B: _Backward, j0: int, dq: np.ndarray) -> None:
    """dk and dv of keys j0:j0+block, and their share of dq, over every query block that sees
    them. Unmasked: one head at a time, so that its two tiles stay in L2 through the five
    matmuls."""
    P, b = B.P, B.P.block
    j1 = min(j0 + b, P.S)
    heads = [slice(None)] if P.mask is not None else [slice(h, h + 1) for h in range(P.N)]
    buf = np.empty((P.N if P.mask is not None else 1, min(b, P.T), j1 - j0), dtype=P.dtype)
    dp_buf = np.empty_like(buf)
    first_q = (j0 // b) * b if P.is_causal else 0  # causal: queries before j0 never see key j0
    for hs in heads:
        kj, vj = P.k[hs, j0:j1], P.v[hs, j0:j1]
        for i0 in range(first_q, P.T, b):
            i1 = min(i0 + b, P.T)
            s = P.scores(B.qs[hs, i0:i1], B.kT[hs], i0, i1, j0, j1, buf)  # (n, bq, bk)
            s -= B.L_use[hs, i0:i1, None]
            if B.floor is not None:
                kernel.below_to_zero_weight(s, B.floor)
            np.exp(s, out=s)  # P
            dO = B.dO[hs, i0:i1]
            B.dv[hs, j0:j1] += np.swapaxes(s, -1, -2) @ dO  # (n, bk, bq) @ (n, bq, Ev)
            dp = dp_buf[:, : i1 - i0]  # (n, bq, bk)
            np.matmul(dO, np.swapaxes(vj, -1, -2), out=dp)  # dO V^T
            dp -= B.Dsum[hs, i0:i1, None]
            dp *= s  # dS
            dq[hs, i0:i1] += dp @ kj  # (n, bq, bk) @ (n, bk, E)
            B.dk[hs, j0:j1] += np.swapaxes(dp, -1, -2) @ B.qs[hs, i0:i1]  # scale folded into qs


def _unflatten_grads(P: Problem, dq, dk, dv) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N, ...) gradients back to the inputs' leading dims; under GQA, dk and dv summed over
    the query heads each key/value head served."""
    T, S, E, Ev = P.T, P.S, P.E, P.Ev
    dq = dq.reshape(*P.batch, T, E)
    dk = dk.reshape(*P.batch, S, E)
    dv = dv.reshape(*P.batch, S, Ev)
    if P.group > 1:
        *lead, H, _, _ = dk.shape
        dk = dk.reshape(*lead, H // P.group, P.group, S, E).sum(axis=-3)
        dv = dv.reshape(*lead, H // P.group, P.group, S, Ev).sum(axis=-3)
    return dq, dk, dv
