"""Exact attention without the T x S score table: online softmax over key/value blocks.

Rabe & Staats (2021), "Self-attention does not need O(n^2) memory"; Dao et al. (2022),
"FlashAttention". For each block of queries we walk the key/value blocks, keeping per query row a
reference point r and an unnormalised output acc = sum exp(s - r) [v | 1] whose last column is the
running sum l (V gets a column of ones, so one matmul yields both p @ V and the row sums; q gets a
column -r, so the score matmul yields s - r directly). r follows the running maximum lazily: it
moves, and acc is rescaled by exp(r_old - r_new), only when the maximum drifts more than REBASE
from it (FlashAttention-4's conditional rescaling), which keeps every exp within e^REBASE of the
largest term while saving a pass over most tiles. At the end out = acc / l and lse = r + log(l).

Extra memory is O(T * d + block^2) per worker: a tile of scores, never the table. Under
``is_causal`` key blocks that lie wholly above the diagonal are skipped (about half the work).
Query blocks are independent, so they are spread over a small thread pool (NumPy's matmul and
ufuncs release the GIL); the result does not depend on the number of workers.

``tiled_attention_backward`` is FlashAttention's backward pass: it recomputes each tile's
probabilities from q, k and lse, so it also needs only O(T * d + block^2) extra memory.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._checks import mask_array
from .sdpa import prepare_qkv

TILE_BUDGET_BYTES = 4 * 2**20  # one score tile across all batch*heads rows
REBASE = 8.0  # how far a row's reference may sit from its running max (e^8 ~ 3000: no overflow)


def default_block_size(n_rows: int, T: int, S: int, itemsize: int) -> int:
    """Block edge b for (b x b) score tiles: the largest power of two in [32, 512] with
    ``n_rows * b * b * itemsize <= TILE_BUDGET_BYTES`` (4 MiB, cache-sized), never larger than
    needed to cover max(T, S). ``n_rows`` is batch * heads."""
    b = 512
    while b > 32 and n_rows * b * b * itemsize > TILE_BUDGET_BYTES:
        b //= 2
    return max(32, min(b, 1 << max(5, (max(T, S) - 1).bit_length())))


def _workers(requested: int | None, n_blocks: int) -> int:
    if requested is not None:
        if requested < 1:
            raise ValueError(f"workers must be >= 1, got {requested}")
        return min(requested, n_blocks)
    return max(1, min(os.cpu_count() or 1, n_blocks))


def _map(fn: Callable[[int], None], items: Sequence[int], workers: int) -> None:
    """Run fn over items on ``workers`` threads. With several threads, BLAS is held to one
    thread each for the duration (otherwise their thread pools fight over the cores)."""
    if workers == 1:
        for i in items:
            fn(i)
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(fn, items):  # re-raises a worker's exception here
            pass


class _Problem:
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

    def keys_transposed(self, extra_row: float | None = None) -> np.ndarray:
        """K^T as one contiguous (N, E, S) array (fast tile matmuls); with ``extra_row``, an
        (N, E + 1, S) array whose last row holds that constant, built in one pass."""
        N, E, S = self.N, self.E, self.S
        kT = np.empty((N, E + (extra_row is not None), S), dtype=self.dtype)
        kT[:, :E] = np.swapaxes(self.k, -1, -2)
        if extra_row is not None:
            kT[:, E] = extra_row
        return kT

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
        self, qb: np.ndarray, kT: np.ndarray, i0: int, i1: int, j0: int, j1: int, buf: np.ndarray
    ) -> np.ndarray:
        """Masked scores (N, bq, bk) of prepared queries qb against keys j0:j1 of ``kT``
        (N, E', S), written into ``buf`` (a reusable (N, block, block) tile)."""
        s = buf[:, : i1 - i0, : j1 - j0]
        np.matmul(qb, kT[:, :, j0:j1], out=s)  # (N, bq, E') @ (N, E', bk)
        user = self.mask_tile(i0, i1, j0, j1)
        if user is not None:
            if user.dtype == bool:
                np.copyto(s, -np.inf, where=~user)
            else:
                s += user.astype(self.dtype, copy=False)
        if self.is_causal and j1 - 1 > i0:  # the tile touches the diagonal
            above = np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None]  # (bq, bk)
            np.copyto(s, -np.inf, where=above)
        return s


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
    P = _Problem(q, k, v, attn_mask, is_causal, scale, enable_gqa, block_size)
    if P.dtype == np.float16:  # sums in float32, as GPU kernels keep them; float16 out
        P.q, P.k, P.v = (a.astype(np.float32) for a in (P.q, P.k, P.v))
        P.dtype = np.dtype(np.float32)
        out, lse = _forward(P, workers)
        out, lse = out.astype(np.float16), lse.astype(np.float16)
    else:
        out, lse = _forward(P, workers)
    out = out.reshape(*P.batch, P.T, P.Ev)
    return (out, lse.reshape(*P.batch, P.T)) if return_lse else out


def _forward(P: _Problem, workers: int | None) -> tuple[np.ndarray, np.ndarray]:
    """out (N, T, Ev) and lse (N, T) of a prepared problem, in its dtype."""
    N, T, E, Ev, b, dt = P.N, P.T, P.E, P.Ev, P.block, P.dtype
    out = np.zeros((N, T, Ev), dtype=dt)
    lse = np.full((N, T), -np.inf, dtype=dt)
    # q gets the scale and one extra column (-r, the row's reference point); K^T an extra row of
    # ones: one matmul then yields s - r directly, with no separate subtraction pass.
    q_aug = np.empty((N, T, E + 1), dtype=dt)
    np.multiply(P.q, dt.type(P.scale), out=q_aug[..., :E])
    kT_aug = P.keys_transposed(extra_row=1.0)  # (N, E + 1, S)
    v_ext = np.empty((N, P.S, Ev + 1), dtype=dt)  # (N, S, Ev + 1): [v | 1]
    v_ext[..., :Ev] = P.v
    v_ext[..., Ev] = 1

    def query_block(i0: int) -> None:
        i1 = min(i0 + b, T)
        buf = np.empty((N, i1 - i0, min(b, P.S)), dtype=dt)
        qb = q_aug[:, i0:i1]
        r = np.zeros((N, i1 - i0), dtype=dt)  # reference: acc holds sum exp(s - r) [v | 1]
        m = np.full((N, i1 - i0), -np.inf, dtype=dt)  # true running max of the scores
        acc = np.zeros((N, i1 - i0, Ev + 1), dtype=dt)
        for j0 in P.key_blocks(i0, i1):
            j1 = min(j0 + b, P.S)
            qb[..., E] = -r
            s = P.scores(qb, kT_aug, i0, i1, j0, j1, buf)  # s - r: (N, bq, bk)
            m = np.maximum(m, r + s.max(axis=-1))
            # move r to the max only where it drifted more than REBASE away (rare after the
            # first tile): exp(s - r) then stays within [e^-REBASE, e^REBASE] of the max term
            with np.errstate(invalid="ignore"):
                delta = np.where(np.isfinite(m) & (np.abs(m - r) > REBASE), m - r, dt.type(0))
            if delta.any():
                s -= delta[..., None]
                # r only moves down before the row's first finite score, when acc is still 0:
                # scaling by exp(-delta) there could overflow (0 * inf = NaN) and means nothing
                acc *= np.exp(-np.maximum(delta, 0))[..., None]
                r += delta
            np.exp(s, out=s)  # p, in place
            acc += s @ v_ext[:, j0:j1]  # (N, bq, bk) @ (N, bk, Ev + 1)
        total = acc[..., Ev]
        np.divide(acc[..., :Ev], total[..., None], out=out[:, i0:i1], where=total[..., None] != 0)
        with np.errstate(divide="ignore"):
            lse[:, i0:i1] = np.where(total > 0, r + np.log(total), -np.inf)
        nan_rows = np.isnan(total)
        if nan_rows.any():  # NaN in real inputs propagates
            out[:, i0:i1][nan_rows] = np.nan
            lse[:, i0:i1][nan_rows] = np.nan

    starts = list(range(0, T, b))
    if P.S == 0:
        starts = []  # no keys: every row attends to nothing -> zeros
    _map(query_block, starts[::-1], _workers(workers, len(starts)))  # longest (causal) first
    return out, lse


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
    P = _Problem(q, k, v, attn_mask, is_causal, scale, enable_gqa, block_size, need_same_batch=True)
    N, T, S, E, Ev, b, dt = P.N, P.T, P.S, P.E, P.Ev, P.block, P.dtype
    out_ = np.asarray(out, dtype=dt).reshape(N, T, Ev)
    dO = np.asarray(grad_out, dtype=dt).reshape(N, T, Ev)
    L = np.asarray(lse, dtype=dt).reshape(N, T)
    L_use = np.where(np.isneginf(L), np.inf, L)  # exp(s - inf) = 0 for rows that saw nothing
    Dsum = np.einsum("ntv,ntv->nt", dO, out_)  # rowsum(dO * O): (N, T)
    qs = P.q * dt.type(P.scale)
    kT = P.keys_transposed()  # (N, E, S)
    dk = np.zeros((N, S, E), dtype=dt)
    dv = np.zeros((N, S, Ev), dtype=dt)
    starts = list(range(0, S, b))
    n_workers = _workers(workers, len(starts))
    dq_parts = [np.zeros((N, T, E), dtype=dt) for _ in range(n_workers)]  # one per worker: no races

    def key_block(j0: int, dq: np.ndarray) -> None:
        j1 = min(j0 + b, S)
        buf = np.empty((N, min(b, T), j1 - j0), dtype=dt)
        kj, vj = P.k[:, j0:j1], P.v[:, j0:j1]
        first_q = (j0 // b) * b if P.is_causal else 0  # causal: queries before j0 never see key j0
        for i0 in range(first_q, T, b):
            i1 = min(i0 + b, T)
            s = P.scores(qs[:, i0:i1], kT, i0, i1, j0, j1, buf)  # (N, bq, bk)
            s -= L_use[:, i0:i1, None]
            np.exp(s, out=s)  # P
            dv[:, j0:j1] += np.swapaxes(s, -1, -2) @ dO[:, i0:i1]  # (N, bk, bq) @ (N, bq, Ev)
            dp = dO[:, i0:i1] @ np.swapaxes(vj, -1, -2)  # (N, bq, bk)
            dp -= Dsum[:, i0:i1, None]
            dp *= s  # dS
            dq[:, i0:i1] += dp @ kj  # (N, bq, bk) @ (N, bk, E)
            dk[:, j0:j1] += np.swapaxes(dp, -1, -2) @ qs[:, i0:i1]  # scale folded into qs

    def worker(w: int) -> None:
        for j0 in starts[w::n_workers]:  # each key block (and its dk, dv rows) has one owner
            key_block(j0, dq_parts[w])

    _map(worker, range(n_workers), n_workers)
    dq = sum(dq_parts[1:], dq_parts[0]) * dt.type(P.scale)
    dq = dq.reshape(*P.batch, T, E)
    dk = dk.reshape(*P.batch, S, E)
    dv = dv.reshape(*P.batch, S, Ev)
    if P.group > 1:  # GQA: each kv head served `group` query heads; add their gradients
        *lead, H, _, _ = dk.shape
        dk = dk.reshape(*lead, H // P.group, P.group, S, E).sum(axis=-3)
        dv = dv.reshape(*lead, H // P.group, P.group, S, Ev).sum(axis=-3)
    return dq, dk, dv
