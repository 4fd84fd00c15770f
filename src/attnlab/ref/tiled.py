"""Exact attention without the T x S score table: online softmax over key/value blocks.

Rabe & Staats (2021), "Self-attention does not need O(n^2) memory"; Dao et al. (2022),
"FlashAttention". For each block of queries we walk the key/value blocks, keeping per query row a
reference point r, an unnormalised output acc = sum 2^(s - r) v and its running sum
l = sum 2^(s - r). Scores are in base 2 (log2(e) is folded into the scale): NumPy's exp2 is
faster than its exp. At the end out = acc / l and lse = (r + log2 l) ln 2.

Two paths. The fast one keeps r = 0 for every row: no row maxima, no rescaling, just matmul,
exp2, matmul per tile (and a matrix-vector product for l), one head at a time so that the tile
stays in L2. Ordinary scores (a row's largest within about -20..+40) never come near float32's
range, and a check at the end (every row's sum between 2^-32 and 2^64, all of acc finite) tells
when they did: then the block is redone on the exact path, where r follows each row's maximum as
in FlashAttention (also the path under a user mask).

Extra memory is O(T * d + block^2) per worker: a tile of scores, never the table. Under
``is_causal`` key blocks that lie wholly above the diagonal are skipped (about half the work).
Query blocks are independent, so they are spread over a small thread pool (NumPy's matmul and
ufuncs release the GIL); the result does not depend on the number of workers.

``tiled_attention_backward`` is FlashAttention's backward pass: it recomputes each tile's
probabilities from q, k and lse, so it also needs only O(T * d + block^2) extra memory.
"""

from __future__ import annotations

import functools
import math
import os
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._checks import mask_array
from .sdpa import prepare_qkv

TILE_BUDGET_BYTES = 4 * 2**20  # one score tile across all batch*heads rows
LOG2E, LN2 = 1 / math.log(2), math.log(2)
HI = 64.0  # fast path: a row's sum may reach 2^64 (far from overflow in float32)
LO = -32.0  # fast path: a row's sum below 2^-32 may have lost terms (or p * v) to underflow
FAST_KEY_TILES = 2  # fast path: a score tile spans two key blocks (fewer, larger matmuls)


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


@functools.cache
def _blas_threads():
    """threadpoolctl's view of the loaded BLAS libraries, made once (a scan of every loaded
    library: about 1 ms a time). NumPy's BLAS is loaded with NumPy, so it is in the view."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


def _map(fn: Callable[[int], None], items: Sequence[int], workers: int) -> None:
    """Run fn over items on ``workers`` threads. With several threads, BLAS is held to one
    thread each for the duration (otherwise their thread pools fight over the cores)."""
    if workers == 1:
        for i in items:
            fn(i)
        return
    with _blas_threads().limit(limits=1), ThreadPoolExecutor(max_workers=workers) as pool:
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
    """out (N, T, Ev) and lse (N, T) of a prepared problem, in its dtype: each query block
    fills its own rows of out and lse."""
    N, T, Ev, dt = P.N, P.T, P.Ev, P.dtype
    if P.S == 0:  # no keys: every row attends to nothing -> zeros
        return np.zeros((N, T, Ev), dtype=dt), np.full((N, T), -np.inf, dtype=dt)
    out, lse = np.empty((N, T, Ev), dtype=dt), np.empty((N, T), dtype=dt)
    # scores in base 2 (exp2 is cheaper than exp): log2(e) goes into the scale
    scale = dt.type(P.scale * LOG2E)
    key_norms = _max_norms(P.k)  # (N,)

    def query_block(i0: int) -> None:
        i1 = min(i0 + P.block, T)
        with np.errstate(all="ignore"):  # the fast path may overflow: it is then redone
            if P.mask is None and _fast_block(P, scale, key_norms, i0, i1, out, lse):
                return
            acc = np.zeros((N, i1 - i0, Ev + 1), dtype=dt)  # sum 2^(s - r) [v | 1] per row
            r = np.zeros((N, i1 - i0), dtype=dt)  # each row's reference point (base 2)
            _exact_block(P, scale, key_norms, i0, i1, acc, r)
            _finish_block(acc, r, out[:, i0:i1], lse[:, i0:i1])

    starts = list(range(0, T, P.block))[::-1]  # longest (causal) first
    _map(query_block, starts, _workers(workers, len(starts)))
    return out, lse


def _fast_block(P: _Problem, scale, key_norms, i0: int, i1: int, out, lse) -> bool:
    """out and lse of queries i0:i1 with r = 0 for every row: no row maxima, no rescaling,
    2^s @ v and the row sums per key tile, head by head through one scratch tile (which so
    stays in L2 from the first matmul to the second). False if any sum leaves [2^LO, 2^HI] or
    is not finite (an overflow, or terms lost to underflow): the caller then redoes the block
    with ``_exact_block``. Only without a user mask (then every row sees at least one key, so a
    zero sum means underflow).

    Chosen by measurement with OpenBLAS here, each a few percent of a tile: the tile is held
    transposed, keys by queries (K_j @ q^T, then (p^T)^T @ V); the row sums come from a
    matrix-vector product 1 @ p^T (7 µs a tile; a column of ones beside V cost 20)."""
    tiles = _fast_tiles(P, i0, i1)
    bq, dt = i1 - i0, P.dtype
    tile = np.empty((tiles[0][1] - tiles[0][0], bq), dtype=dt)  # p^T: (bk, bq)
    ones = np.ones(len(tile), dtype=dt)
    acc, total = np.empty((P.N, bq, P.Ev), dtype=dt), np.empty((P.N, bq), dtype=dt)
    pv, p_sum = np.empty((bq, P.Ev), dtype=dt), np.empty(bq, dtype=dt)  # one tile's share
    qT = np.empty((P.N, P.E, bq), dtype=dt)
    np.multiply(np.swapaxes(P.q[:, i0:i1], 1, 2), scale, out=qT)  # (N, E, bq), contiguous
    floor = _subnormal_floor(dt) / LN2  # in base 2
    low = _max_norms(np.swapaxes(qT, 1, 2)) * key_norms > -floor  # (N,): |score| may pass it
    for h in range(P.N):
        k, v = P.k[h], P.v[h]  # (S, E), (S, Ev)
        for n, (j0, j1) in enumerate(tiles):
            pT = tile[: j1 - j0]  # (bk, bq)
            np.matmul(k[j0:j1], qT[h], out=pT)  # (bk, E) @ (E, bq): the scores s^T
            if low[h]:  # weights below 2^floor are raised to it (a change < S 2^floor in sums
                np.maximum(pT, floor, out=pT)  # >= 2^LO): subnormal ones would be slow
            np.exp2(pT, out=pT)  # p^T, in place
            if P.is_causal and j1 - 1 > i0:  # the tile meets the diagonal: keys i0:j1 need keeping
                # p is multiplied by 0 above the diagonal after exp2 (exp2 is slow on -inf; an
                # overflow there gives inf * 0 = NaN, which fails the test like any overflow)
                pT[i0 - j0 :] *= _visible(j1 - i0, bq, dt)
            np.matmul(pT.T, v[j0:j1], out=pv if n else acc[h])  # (bq, bk) @ (bk, Ev)
            np.matmul(ones[: j1 - j0], pT, out=p_sum if n else total[h])  # (bk,) @ (bk, bq)
            if n:
                acc[h] += pv
                total[h] += p_sum
    if not (total.min() >= 2.0**LO and total.max() <= 2.0**HI and np.isfinite(acc).all()):
        return False
    np.divide(acc, total[..., None], out=out[:, i0:i1])
    lse[:, i0:i1] = np.log2(total) * LN2
    return True


def _max_norms(x: np.ndarray) -> np.ndarray:
    """(N,): per head, the largest norm of the vectors of x (N, n, E)."""
    return np.sqrt(np.einsum("nie,nie->ni", x, x).max(axis=1))


@functools.cache
def _subnormal_floor(dtype: np.dtype) -> float:
    """In nats: where the scores spread that far, weights below e^floor are set to 0 (exact
    path, backward) or raised to it (fast path). A smaller weight, times a value, can give a
    subnormal number, on which exp, exp2 and matmul run 10-35x slower (measured here);
    dropping or raising them changes a result by less than S^2 e^floor relative (1e-20 in
    float32). -inf (nothing changed) for float16, whose range is too short to spare."""
    if dtype.itemsize < 4:
        return -math.inf
    return float(np.log(np.finfo(dtype).tiny)) + 24.0


def _below_to_zero_weight(x: np.ndarray, floor: float) -> None:
    """Exponents below ``floor`` moved to about -1e30, in place, so that exp gives them 0 at
    once (-inf stays -inf, NaN stays NaN). An arithmetic mask: 5x faster than copyto(where=)."""
    x += (x < floor) * x.dtype.type(-1e30)


def _weight_floor(P: _Problem, spread: float) -> float | None:
    """``_subnormal_floor`` if weights e^x with x >= -spread (nats) may come near the subnormal
    range, or if a float mask can move scores anywhere; None if no weight can."""
    floor = _subnormal_floor(P.dtype)
    calm = spread <= -floor and (P.mask is None or P.mask.dtype == bool)
    return None if calm else floor


def _fast_tiles(P: _Problem, i0: int, i1: int) -> list[tuple[int, int]]:
    """The fast path's key tiles (j0, j1) for queries i0:i1: FAST_KEY_TILES blocks wide (fewer,
    larger matmuls); under ``is_causal`` none reaches past the block's last query, so that
    only the last tile meets the diagonal, and from key i0 on (j0 <= i0)."""
    stop = min(P.S, i1) if P.is_causal else P.S  # key s is visible to t iff s <= t
    width = FAST_KEY_TILES * P.block
    return [(j0, min(j0 + width, stop)) for j0 in range(0, stop, width)]


@functools.lru_cache(maxsize=16)
def _visible(keys: int, queries: int, dtype: np.dtype) -> np.ndarray:
    """(keys, queries), keys and queries counted from the same position: 1 where key <= query
    (the query may see it), 0 where it lies in the query's future; read-only."""
    keep = np.ascontiguousarray(np.tri(queries, keys, dtype=dtype).T)
    keep.flags.writeable = False
    return keep


def _exact_block(P: _Problem, scale, key_norms, i0: int, i1: int, acc, r: np.ndarray) -> None:
    """acc and r (zeros on entry) over the key tiles of queries i0:i1, each row's reference r
    following its maximum as in FlashAttention: all heads at once, for any scores and masks."""
    buf = np.empty((P.N, i1 - i0, min(P.block, P.S)), dtype=P.dtype)
    qs = P.q[:, i0:i1] * scale  # (N, bq, E)
    # scores (base 2) lie within +-B, B = max |q| max |k| (Cauchy-Schwarz): s - r >= -2B - log2 S
    bound = (_max_norms(qs) * key_norms).max()
    floor = _weight_floor(P, (2 * bound + math.log2(P.S)) * LN2)
    kT = np.swapaxes(P.k, -1, -2)  # (N, E, S), a view: BLAS reads it transposed
    for j0 in P.key_blocks(i0, i1):
        j1 = min(j0 + P.block, P.S)
        s = P.scores(qs, kT, i0, i1, j0, j1, buf, LOG2E)  # (N, bq, bk), base 2
        _add_tile_rebased(s, P.v[:, j0:j1], acc, r, floor)


def _add_tile_rebased(s: np.ndarray, vj: np.ndarray, acc: np.ndarray, r: np.ndarray, floor) -> None:
    """Move each row's reference r (N, bq) to max(tile max, r + log2 of its running sum), in
    place, rescaling acc so that every term and the running sum are <= 1; then
    acc += 2^(s - r) @ [vj | 1]. ``s`` (N, bq, bk): scores in base 2, overwritten. Weights
    below e^floor become 0 (``floor``: from ``_weight_floor``; None: there are none)."""
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
        _below_to_zero_weight(s, floor)
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
    P = _Problem(q, k, v, attn_mask, is_causal, scale, enable_gqa, block_size, need_same_batch=True)
    N, T, S, E, Ev, b, dt = P.N, P.T, P.S, P.E, P.Ev, P.block, P.dtype
    out_ = np.asarray(out, dtype=dt).reshape(N, T, Ev)
    dO = np.asarray(grad_out, dtype=dt).reshape(N, T, Ev)
    L = np.asarray(lse, dtype=dt).reshape(N, T)
    L_use = np.where(np.isneginf(L), np.inf, L)  # exp(s - inf) = 0 for rows that saw nothing
    Dsum = np.einsum("ntv,ntv->nt", dO, out_)  # rowsum(dO * O): (N, T)
    qs = P.q * dt.type(P.scale)
    # scores lie within +-B, B = max |q| max |k| (Cauchy-Schwarz), and lse <= B + ln S
    bound = (_max_norms(qs) * _max_norms(P.k)).max() if S and T else 0.0
    floor = _weight_floor(P, 2 * bound + math.log(max(S, 1)))  # s - lse >= -2B - ln S
    kT = P.keys_transposed()  # (N, E, S)
    dk = np.zeros((N, S, E), dtype=dt)
    dv = np.zeros((N, S, Ev), dtype=dt)
    starts = list(range(0, S, b))
    n_workers = _workers(workers, len(starts))
    dq_parts = [np.zeros((N, T, E), dtype=dt) for _ in range(n_workers)]  # one per worker: no races

    # unmasked: one head at a time, so that its two tiles stay in L2 through the five matmuls
    heads = [slice(None)] if P.mask is not None else [slice(h, h + 1) for h in range(N)]

    def key_block(j0: int, dq: np.ndarray) -> None:
        j1 = min(j0 + b, S)
        buf = np.empty((N if P.mask is not None else 1, min(b, T), j1 - j0), dtype=dt)
        dp_buf = np.empty_like(buf)
        first_q = (j0 // b) * b if P.is_causal else 0  # causal: queries before j0 never see key j0
        for hs in heads:
            kj, vj = P.k[hs, j0:j1], P.v[hs, j0:j1]
            for i0 in range(first_q, T, b):
                i1 = min(i0 + b, T)
                s = P.scores(qs[hs, i0:i1], kT[hs], i0, i1, j0, j1, buf)  # (n, bq, bk)
                s -= L_use[hs, i0:i1, None]
                if floor is not None:  # weights below e^floor: 0 (see _subnormal_floor)
                    _below_to_zero_weight(s, floor)
                np.exp(s, out=s)  # P
                dv[hs, j0:j1] += np.swapaxes(s, -1, -2) @ dO[hs, i0:i1]  # (n, bk, bq) @ (n, bq, Ev)
                dp = dp_buf[:, : i1 - i0]  # (n, bq, bk)
                np.matmul(dO[hs, i0:i1], np.swapaxes(vj, -1, -2), out=dp)  # dO V^T
                dp -= Dsum[hs, i0:i1, None]
                dp *= s  # dS
                dq[hs, i0:i1] += dp @ kj  # (n, bq, bk) @ (n, bk, E)
                dk[hs, j0:j1] += np.swapaxes(dp, -1, -2) @ qs[hs, i0:i1]  # scale folded into qs

    todo = queue.SimpleQueue()  # key blocks, longest first (causal): handed to whoever is free
    for j0 in starts:
        todo.put(j0)

    def worker(w: int) -> None:
        while True:  # each key block (and its dk, dv rows) has one owner
            try:
                j0 = todo.get_nowait()
            except queue.Empty:
                return
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
