"""What mutation testing of attnlab.ref.tiled_kernel found untested. Its code changes only how
fast the tiled forward runs, never what it computes (tests/ref/test_tiled.py holds the results
to torch), so these hold what can be seen without a clock: the memory its work buffers take,
the threads and BLAS threads it runs on, and the block size rule at its edges."""

import os
import threading
import time
import tracemalloc

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from attnlab import ref
from attnlab.ref import tiled_kernel


def _peak(dtype, causal):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 2048, 64)).astype(dtype) for _ in range(3))
    tracemalloc.start()
    ref.tiled_attention(q, k, v, is_causal=causal, workers=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


@pytest.mark.parametrize("causal", [True, False])
def test_float32_work_buffers_take_half_the_memory_of_float64(causal):
    # every buffer of the fast path in the inputs' dtype: a float64 one would also halve the
    # speed of the matmul it feeds
    assert _peak(np.float32, causal) <= 0.55 * _peak(np.float64, causal)


def test_worker_threads_run_at_most_as_many_as_asked_each_with_one_blas_thread():
    seen, blas = set(), []
    lock = threading.Lock()

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    def fn(i):
        with lock:
            seen.add(threading.get_ident())
            blas.append(blas_threads())
        time.sleep(0.01)  # long enough that a pool allowed more threads would start them

    with threadpool_limits(limits=2, user_api="blas"):  # BLAS may use two threads outside
        outside = blas_threads()
        tiled_kernel.run_parallel(fn, range(8), workers=2)
    assert outside and outside == [min(2, n) for n in outside]
    assert 1 <= len(seen) <= 2 and len(blas) == 8
    assert all(n == [1] * len(n) for n in blas)
    done = []
    tiled_kernel.run_queue(lambda item, w: done.append((item, w)), range(6), workers=3)
    assert sorted(i for i, _ in done) == list(range(6)) and {w for _, w in done} <= {0, 1, 2}


def test_one_worker_a_block_at_most_and_one_per_cpu_by_default():
    assert tiled_kernel.workers_for(None, 1) == 1
    assert tiled_kernel.workers_for(None, 64) == min(os.cpu_count() or 1, 64)
    assert tiled_kernel.workers_for(3, 2) == 2
    with pytest.raises(ValueError, match="workers must be >= 1, got 0"):
        tiled_kernel.workers_for(0, 4)


def test_block_size_at_the_edges_of_its_budget_and_of_the_sequence():
    size = tiled_kernel.default_block_size
    assert size(16, 4096, 4096, 4) == 256  # 16 * 256^2 * 4 B: exactly the 4 MiB budget
    assert type(size(16, 4096, 4096, 4)) is int
    assert size(17, 4096, 4096, 4) == 128  # one row more: over it
    assert size(1, 64, 64, 4) == 64 and size(1, 65, 65, 4) == 128  # the sequence, rounded up
    assert size(1, 10, 33, 4) == 64 and size(1, 10, 10, 4) == 32  # never below 32
