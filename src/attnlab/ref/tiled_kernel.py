"""The fast path of ``ref.tiled``: what makes its exact loop quick on a CPU, kept apart from it.

- ``fast_block``: a query block with the reference point r = 0 for every row: no row maxima, no
  rescaling, just matmul, exp, matmul per tile (and a matrix-vector product for the row sums),
  one head at a time so that the tile stays in L2; under ``is_causal`` the tile on the diagonal
  is taken in strips of queries, so that of the scores above the diagonal only each strip's
  own small triangle is computed (and multiplied by 0). Ordinary scores (a row's largest within
  about -20..+40) never come near float32's range, and a check at the end (every row's sum
  between 2^LO and 2^HI, all of acc finite) tells when they did: the caller then redoes the
  block on the exact path (``tiled._exact_block``).
- ``run_parallel`` / ``run_queue``: query blocks (forward) or key blocks (backward) on a small
  thread pool (NumPy's matmul and ufuncs release the GIL), BLAS held to one thread per worker.
- ``subnormal_floor`` and its helpers: weights so small that a product with them would be
  subnormal (10-35x slower arithmetic) are dropped (exact path, backward) or raised (fast path).
- ``default_block_size``: tile edges sized to the cache.

Every result here equals the exact path's within rounding (tests/ref/test_tiled.py holds both to
torch's float64 SDPA); none of it changes what is computed, only how fast.
"""

from __future__ import annotations

import functools
import math
import os
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .tiled import Problem

TILE_BUDGET_BYTES = 4 * 2**20  # one score tile across all batch*heads rows
LOG2E, LN2 = 1 / math.log(2), math.log(2)
HI = 64.0  # fast path: a row's sum may reach 2^64 (far from overflow in float32)
LO = -32.0  # fast path: a row's sum below 2^-32 may have lost terms (or p * v) to underflow
FAST_KEY_TILES = 2  # fast path: a score tile spans two key blocks (fewer, larger matmuls)
FAST_DIAGONAL_STRIP = 64  # fast path, causal: queries per strip of the tile on the diagonal


def default_block_size(n_rows: int, T: int, S: int, itemsize: int) -> int:
    """Block edge b for (b x b) score tiles: the largest power of two in [32, 512] with
    ``n_rows * b * b * itemsize <= TILE_BUDGET_BYTES`` (4 MiB, cache-sized), never larger than
    needed to cover max(T, S). ``n_rows`` is batch * heads."""
    b = 512
    while b > 32 and n_rows * b * b * itemsize > TILE_BUDGET_BYTES:
        b //= 2
    return max(32, min(b, 1 << max(5, (max(T, S) - 1).bit_length())))


def workers_for(requested: int | None, n_blocks: int) -> int:
    """How many threads share ``n_blocks`` blocks: ``requested`` (at most one per block), or
    one per CPU."""
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


def run_parallel(fn: Callable[[int], None], items: Sequence[int], workers: int) -> None:
    """Run fn over items on ``workers`` threads. With several threads, BLAS is held to one
    thread each for the duration (otherwise their thread pools fight over the cores)."""
    if workers == 1:
        for i in items:
            fn(i)
        return
    with _blas_threads().limit(limits=1), ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(fn, items):  # re-raises a worker's exception here
            pass


def run_queue(fn: Callable[[int, int], None], items: Sequence[int], workers: int) -> None:
    """``fn(item, w)`` for every item, each item once, handed in order to whichever of the
    ``workers`` threads is free (w: that worker's index, for state of its own)."""
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    for item in items:
        todo.put(item)

    def worker(w: int) -> None:
        while True:
            try:
                item = todo.get_nowait()
            except queue.Empty:
                return
            fn(item, w)

    run_parallel(worker, range(workers), workers)


def max_norms(x: np.ndarray) -> np.ndarray:
    """(N,): per head, the largest norm of the vectors of x (N, n, E)."""
    return np.sqrt(np.einsum("nie,nie->ni", x, x).max(axis=1))


@functools.cache
def subnormal_floor(dtype: np.dtype) -> float:
    """In nats: where the scores spread that far, weights below e^floor are set to 0 (exact
    path, backward) or raised to it (fast path). A smaller weight, times a value, can give a
    subnormal number, on which exp, exp2 and matmul run 10-35x slower (measured here);
    dropping or raising them changes a result by less than S^2 e^floor relative (1e-20 in
    float32). -inf (nothing changed) for float16, whose range is too short to spare."""
    if dtype.itemsize < 4:
        return -math.inf
    return float(np.log(np.finfo(dtype).tiny)) + 24.0


def below_to_zero_weight(x: np.ndarray, floor: float) -> None:
    """Exponents below ``floor`` moved to about -1e30, in place, so that exp gives them 0 at
    once (-inf stays -inf, NaN stays NaN). An arithmetic mask: 5x faster than copyto(where=)."""
    x += (x < floor) * x.dtype.type(-1e30)


def weight_floor(P: Problem, spread: float) -> float | None:
    """``subnormal_floor`` if weights e^x with x >= -spread (nats) may come near the subnormal
    range, or if a float mask can move scores anywhere; None if no weight can."""
    floor = subnormal_floor(P.dtype)
    calm = spread <= -floor and (P.mask is None or P.mask.dtype == bool)
    return None if calm else floor


def fast_block(P: Problem, scale, key_norms, i0: int, i1: int, out, lse) -> bool:
    """out and lse of queries i0:i1 with r = 0 for every row: no row maxima, no rescaling,
    e^s @ v and the row sums per key tile, head by head through one scratch tile (which so
    stays in L2 from the first matmul to the second). False if any sum leaves [2^LO, 2^HI] or
    is not finite (an overflow, or terms lost to underflow): the caller then redoes the block
    on the exact path. Only without a user mask (then every row sees at least one key, so a
    zero sum means underflow). ``scale`` is the plain one: the scores are in base e, since
    NumPy's float32 exp has an AVX2 kernel and its exp2 does not (on an AVX2-only CPU, 512 x 256
    floats: exp 172 us, exp2 331 us, measured here).

    Chosen by measurement with OpenBLAS here, each a few percent of a tile: the tile is held
    transposed, keys by queries (K_j @ q^T, then (p^T)^T @ V; q^T is a transposed view, which
    OpenBLAS reads as fast as a contiguous copy: the copy took 130 us a block); the row sums
    come from a matrix-vector product 1 @ p^T (7 µs a tile; a column of ones beside V cost 20)."""
    bq, dt = i1 - i0, P.dtype
    acc, total = np.empty((P.N, bq, P.Ev), dtype=dt), np.empty((P.N, bq), dtype=dt)
    qs = np.empty((P.N, bq, P.E), dtype=dt)
    np.multiply(P.q[:, i0:i1], scale, out=qs)  # (N, bq, E); BLAS reads qs[h].T as it is
    floor = subnormal_floor(dt)  # in nats, as the scores
    low = max_norms(qs) * key_norms > -floor  # (N,): |score| may pass it
    _fast_heads(P, np.swapaxes(qs, 1, 2), i0, i1, floor, low, acc, total)
    if not (total.min() >= 2.0**LO and total.max() <= 2.0**HI and np.isfinite(acc).all()):
        return False
    np.divide(acc, total[..., None], out=out[:, i0:i1])
    lse[:, i0:i1] = np.log(total)
    return True


def _fast_heads(P: Problem, qT, i0: int, i1: int, floor: float, low, acc, total) -> None:
    """acc[h] = sum over key tiles of e^s @ v and total[h] = their row sums, head by head.
    Under ``is_causal`` the tile that meets the diagonal is taken in strips of
    FAST_DIAGONAL_STRIP queries, each only as far as its own last query sees: the scores above
    the diagonal that a strip still computes (and multiplies by 0) are its own triangle."""
    tiles = _fast_tiles(P, i1)
    bq, dt = i1 - i0, P.dtype
    flat = np.empty((tiles[0][1] - tiles[0][0]) * bq, dtype=dt)  # every p^T tile: a view of it
    ones = np.ones(tiles[0][1] - tiles[0][0], dtype=dt)
    pv, p_sum = np.empty((bq, P.Ev), dtype=dt), np.empty(bq, dtype=dt)  # one tile's share
    for h in range(P.N):
        k, v, qTh, fl = P.k[h], P.v[h], qT[h], floor if low[h] else None
        for n, (j0, j1) in enumerate(tiles):
            acc_h, sum_h = (pv, p_sum) if n else (acc[h], total[h])
            if not (P.is_causal and j1 - 1 > i0):  # wholly below the diagonal
                _tile(k[j0:j1], v[j0:j1], qTh, flat, fl, None, acc_h, sum_h, ones)
            else:  # on the diagonal: in strips
                for c0 in range(0, bq, FAST_DIAGONAL_STRIP):
                    c1 = min(c0 + FAST_DIAGONAL_STRIP, bq)  # queries i0+c0..i0+c1-1 see keys < e
                    e = min(j1, i0 + c1)  # from key i0+c0 on, a triangle: key <= query is kept
                    keep = _visible(e - (i0 + c0), c1 - c0, dt) if e > i0 + c0 else None
                    acc_c, sum_c = acc_h[c0:c1], sum_h[c0:c1]
                    _tile(k[j0:e], v[j0:e], qTh[:, c0:c1], flat, fl, keep, acc_c, sum_c, ones)
            if n:
                acc[h] += pv
                total[h] += p_sum


def _tile(kj, vj, qTh, flat, floor, keep, acc_out, sum_out, ones) -> None:
    """One tile of ``_fast_heads``: p^T = e^(kj @ qTh) (keys by queries, in a view of ``flat``;
    weights below e^floor raised to it, so that none is subnormal, when ``floor`` is not None),
    times ``keep`` (its last rows: the triangle of a strip on the diagonal) when given; then
    acc_out = p @ vj and sum_out = p's row sums (p: queries by keys)."""
    pT = flat[: len(kj) * qTh.shape[1]].reshape(len(kj), qTh.shape[1])
    np.matmul(kj, qTh, out=pT)  # (bk, E) @ (E, bq): the scores s^T
    if floor is not None:  # a change < S e^floor in sums >= 2^LO: subnormal weights are slow
        np.maximum(pT, floor, out=pT)
    np.exp(pT, out=pT)  # p^T, in place
    if keep is not None:  # after exp (cheaper than masking first; an overflow there gives
        pT[len(pT) - len(keep) :] *= keep  # inf * 0 = NaN, which fails the test as any would)
    np.matmul(pT.T, vj, out=acc_out)  # (bq, bk) @ (bk, Ev)
    np.matmul(ones[: len(pT)], pT, out=sum_out)  # (bk,) @ (bk, bq)


def _fast_tiles(P: Problem, i1: int) -> list[tuple[int, int]]:
    """The fast path's key tiles (j0, j1) for a query block ending at i1: FAST_KEY_TILES blocks
    wide (fewer, larger matmuls); under ``is_causal`` none reaches past the block's last query,
    so that only the last tile meets the diagonal (query blocks and tiles both start on
    multiples of the block size, so that tile starts at or before the block's first query)."""
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
