"""tiled_attention, merge_attention and tiled_attention_backward against torch and the reference."""

import tracemalloc

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from attnlab import ref
from attnlab.parity import compare
from attnlab.ref import tiled, tiled_kernel


def _rand(seed, *shape, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _torch_fwd_bwd(q, k, v, g, **kw):
    qt, kt, vt = (torch.from_numpy(a).requires_grad_() for a in (q, k, v))
    kw = {n: torch.from_numpy(x) if isinstance(x, np.ndarray) else x for n, x in kw.items()}
    out = F.scaled_dot_product_attention(qt, kt, vt, **kw)
    out.backward(torch.from_numpy(g))
    return out.detach().numpy(), qt.grad.numpy(), kt.grad.numpy(), vt.grad.numpy()


@given(
    T=st.integers(1, 40),
    S=st.integers(1, 40),
    block=st.integers(1, 17),
    causal=st.booleans(),
    masked=st.booleans(),
    seed=st.integers(0, 999),
)
def test_forward_and_gradients_match_torch(T, S, block, causal, masked, seed):
    q, k, v = _rand(seed, 2, 3, T, 8), _rand(seed + 1, 2, 3, S, 8), _rand(seed + 2, 2, 3, S, 5)
    g = _rand(seed + 3, 2, 3, T, 5)
    mask = np.random.default_rng(seed).random((2, 1, T, S)) < 0.7 if masked and not causal else None
    kw = {"is_causal": causal} | ({"attn_mask": mask} if mask is not None else {})
    out, lse = ref.tiled_attention(q, k, v, block_size=block, return_lse=True, **kw)
    want, dq_t, dk_t, dv_t = _torch_fwd_bwd(q, k, v, g, **kw)
    np.testing.assert_allclose(out, want, atol=1e-10)
    dq, dk, dv = ref.tiled_attention_backward(q, k, v, out, lse, g, block_size=block, **kw)
    for got, exp in ((dq, dq_t), (dk, dk_t), (dv, dv_t)):
        np.testing.assert_allclose(got, exp, atol=1e-10)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_float32_within_twice_torch_float32_error(workers):
    q, k, v = (_rand(i, 1, 4, 300, 32, dtype=np.float32) for i in range(3))
    oracle = F.scaled_dot_product_attention(
        *(torch.from_numpy(a).double() for a in (q, k, v)), is_causal=True
    )
    naive = F.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), is_causal=True
    )
    out = ref.tiled_attention(q, k, v, is_causal=True, block_size=64, workers=workers)
    assert out.dtype == np.float32
    p = compare(out, oracle, naive)
    assert p.ok, p.message


def test_same_answer_for_any_block_size_and_worker_count():
    q, k, v = _rand(0, 2, 50, 8), _rand(1, 2, 70, 8), _rand(2, 2, 70, 4)
    base = ref.scaled_dot_product_attention(q, k, v, is_causal=True)
    for block in (1, 7, 16, 64, 500):
        for workers in (1, 2):
            np.testing.assert_allclose(
                ref.tiled_attention(q, k, v, is_causal=True, block_size=block, workers=workers),
                base,
                atol=1e-12,
            )


def test_gqa_forward_and_backward():
    q, k, v = _rand(0, 1, 6, 20, 8), _rand(1, 1, 2, 20, 8), _rand(2, 1, 2, 20, 8)
    g = _rand(3, 1, 6, 20, 8)
    out, lse = ref.tiled_attention(
        q, k, v, is_causal=True, enable_gqa=True, block_size=8, return_lse=True
    )
    want, dq_t, dk_t, dv_t = _torch_fwd_bwd(q, k, v, g, is_causal=True, enable_gqa=True)
    np.testing.assert_allclose(out, want, atol=1e-12)
    dq, dk, dv = ref.tiled_attention_backward(
        q, k, v, out, lse, g, is_causal=True, enable_gqa=True, block_size=8
    )
    assert dk.shape == k.shape and dv.shape == v.shape
    for got, exp in ((dq, dq_t), (dk, dk_t), (dv, dv_t)):
        np.testing.assert_allclose(got, exp, atol=1e-12)


def test_float_mask_and_fully_masked_rows():
    q, k, v = _rand(0, 6, 4), _rand(1, 9, 4), _rand(2, 9, 3)
    fmask = _rand(3, 6, 9)
    np.testing.assert_allclose(
        ref.tiled_attention(q, k, v, attn_mask=fmask, block_size=4),
        ref.scaled_dot_product_attention(q, k, v, attn_mask=fmask),
        atol=1e-12,
    )
    mask = np.ones((6, 9), bool)
    mask[2] = False
    out, lse = ref.tiled_attention(q, k, v, attn_mask=mask, block_size=4, return_lse=True)
    assert np.array_equal(out[2], np.zeros(3)) and np.isneginf(lse[2]) and np.isfinite(out).all()
    g = _rand(4, 6, 3)
    dq, dk, dv = ref.tiled_attention_backward(q, k, v, out, lse, g, attn_mask=mask, block_size=4)
    assert np.isfinite(dk).all() and np.isfinite(dv).all()
    assert np.isfinite(dq).all() and np.array_equal(dq[2], np.zeros(4))
    empty = ref.tiled_attention(q, k[:0], v[:0])
    assert empty.shape == (6, 3) and not empty.any()


def test_nan_propagates():
    q, k, v = _rand(0, 6, 4), _rand(1, 9, 4), _rand(2, 9, 3)
    q[1, 0] = np.nan
    out = ref.tiled_attention(q, k, v, block_size=4)
    assert np.isnan(out[1]).all() and np.isfinite(np.delete(out, 1, axis=0)).all()


@given(split=st.integers(1, 29), seed=st.integers(0, 999))
def test_lse_merge_of_two_key_ranges_equals_the_whole(split, seed):
    q, k, v = _rand(seed, 2, 11, 8), _rand(seed + 1, 2, 30, 8), _rand(seed + 2, 2, 30, 4)
    whole, whole_lse = ref.tiled_attention(q, k, v, return_lse=True, block_size=8)
    parts = [
        ref.tiled_attention(q, k[:, a:b], v[:, a:b], return_lse=True, block_size=8)
        for a, b in ((0, split), (split, 30))
    ]
    out, lse = ref.merge_attention(parts)
    np.testing.assert_allclose(out, whole, atol=1e-12)
    np.testing.assert_allclose(lse, whole_lse, atol=1e-12)
    scores = np.einsum("bte,bse->bts", q, k) / np.sqrt(8)
    np.testing.assert_allclose(lse, np.log(np.exp(scores).sum(-1)), atol=1e-12)


def test_memory_stays_far_below_the_score_table():
    T, d, block = 4096, 32, 128
    q, k, v = (_rand(i, 1, T, d) for i in range(3))
    table = T * T * 8  # one float64 T x T table: 128 MiB
    tracemalloc.start()
    ref.tiled_attention(q, k, v, is_causal=True, block_size=block, workers=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < table / 8, f"peak {peak / 2**20:.1f} MiB vs table {table / 2**20:.0f} MiB"
    # O(T d + block^2): a handful of (T, d) working arrays and a few tiles, nothing T x S
    assert peak < 8 * T * d * 8 + 4 * block * block * 8, f"peak {peak / 2**20:.1f} MiB"


def test_naive_reference_does_build_the_table():
    T = 1024
    q, k, v = (_rand(i, 1, T, 16) for i in range(3))
    tracemalloc.start()
    ref.scaled_dot_product_attention(q, k, v, is_causal=True)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak > T * T * 8  # so the bound above is a real difference, not a measuring artefact


def test_default_block_size_rule():
    assert ref.default_block_size(8, 4096, 4096, 4) == 256  # 8 * 256^2 * 4 B = 2 MiB <= 4 MiB
    assert ref.default_block_size(1, 4096, 4096, 4) == 512
    assert ref.default_block_size(1, 40, 40, 8) == 64  # never much past the sequence
    assert ref.default_block_size(4096, 10, 10, 8) == 32


def test_bad_input():
    q = np.zeros((3, 4))
    with pytest.raises(ValueError, match="block_size must be a positive int"):
        ref.tiled_attention(q, q, q, block_size=0)
    with pytest.raises(ValueError, match="same width E"):
        ref.tiled_attention(q, np.zeros((3, 5)), q)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        ref.tiled_attention(q, q, q, workers=0)
    with pytest.raises(ValueError, match="same leading dims"):
        ref.tiled_attention_backward(
            np.zeros((2, 3, 4)), q, q, np.zeros((2, 3, 4)), np.zeros((2, 3)), np.zeros((2, 3, 4))
        )
    with pytest.raises(ValueError, match="at least one"):
        ref.merge_attention([])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_whose_scores_all_lie_far_below_zero_are_not_nan(dtype):
    # the first rescale once multiplied the empty accumulator by exp(100) = inf: 0 * inf = NaN
    q = np.ones((1, 1, 3, 1), dtype=dtype)
    k = np.full((1, 1, 70, 1), -1000.0, dtype=dtype)
    k[..., 5, 0] = -990.0
    v = np.random.default_rng(0).standard_normal((1, 1, 70, 2)).astype(dtype)
    got = ref.tiled_attention(q, k, v, scale=1.0, block_size=32)
    want = ref.scaled_dot_product_attention(q, k, v, scale=1.0)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_float16_sums_stay_in_float32():
    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((1, 1, 8, 16)).astype(np.float16) for _ in range(2))
    v = rng.uniform(0.9, 1.1, (1, 1, 1024, 16)).astype(np.float16)
    k = np.repeat(k, 128, axis=-2)  # 1024 keys of nearly equal weight: float16 sums would drift
    got = ref.tiled_attention(q, k, v, block_size=4)
    want = ref.scaled_dot_product_attention(*(a.astype(np.float64) for a in (q, k, v)))
    assert got.dtype == np.float16
    assert np.abs(got - want).max() < 2 * np.finfo(np.float16).eps


def _exact_block_calls(monkeypatch) -> list:
    calls = []
    real = tiled._exact_block
    monkeypatch.setattr(tiled, "_exact_block", lambda *a: calls.append(a[3:5]) or real(*a))
    return calls


def test_ordinary_scores_take_the_fast_path_only(monkeypatch):
    calls = _exact_block_calls(monkeypatch)
    q, k, v = (_rand(i, 1, 2, 100, 16, dtype=np.float32) for i in range(3))
    ref.tiled_attention(q, k, v, is_causal=True, block_size=32)
    assert calls == []  # the rescaling path would cost a pass over every tile


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("heads", ["both", "the second"])
def test_scores_out_of_the_fast_paths_range_are_redone_exactly(monkeypatch, dtype, causal, heads):
    # keys 40.. give scores of hundreds (2^hundreds: the fast path's sums overflow); under
    # is_causal only the last query block sees them, and the blocks before stay fast. With
    # only the second head's keys large, the first head's sums pass the test: the whole block
    # is still redone.
    calls = _exact_block_calls(monkeypatch)
    q, k, v = _rand(0, 1, 2, 48, 8), _rand(1, 1, 2, 48, 8), _rand(2, 1, 2, 48, 4)
    k[:, slice(None) if heads == "both" else 1, 40:, :] *= 300 if dtype == np.float64 else 30
    q, k, v = (a.astype(dtype) for a in (q, k, v))
    got = ref.tiled_attention(q, k, v, is_causal=causal, block_size=16)
    assert sorted(calls) == ([(32, 48)] if causal else [(0, 16), (16, 32), (32, 48)])
    t = [torch.from_numpy(a) for a in (q, k, v)]
    oracle = F.scaled_dot_product_attention(*(a.double() for a in t), is_causal=causal)
    naive = F.scaled_dot_product_attention(*t, is_causal=causal)
    p = compare(got, oracle, naive)
    assert p.ok, p.message


def test_large_values_whose_products_overflow_on_the_fast_path_are_redone():
    # scores near 25 (p ~ 2^36) times values near 1e30 overflow float32 unless rescaled
    q, k, v = (_rand(i, 1, 2, 40, 8, dtype=np.float32) for i in range(3))
    q *= 6
    v *= np.float32(1e30)
    got = ref.tiled_attention(q, k, v, block_size=16)
    t = [torch.from_numpy(a) for a in (q, k, v)]
    oracle = F.scaled_dot_product_attention(*(a.double() for a in t))
    p = compare(got, oracle, F.scaled_dot_product_attention(*t))
    assert np.isfinite(got).all() and p.ok, p.message


def _peaked(dtype, seed=0, T=48):
    """q, k, v whose scores also reach far below the point where exp's weights turn subnormal
    (every third key from key 1 on points against every query; the queries' entries are
    positive), while each row's largest score stays small: ordinary for the fast path."""
    rng = np.random.default_rng(seed)
    q = np.abs(rng.standard_normal((1, 2, T, 8)))
    k = rng.standard_normal((1, 2, T, 8))
    k[..., 1::3, :] = -np.abs(k[..., 1::3, :]) * (40 if dtype == np.float32 else 400)
    v, g = rng.standard_normal((1, 2, T, 4)), rng.standard_normal((1, 2, T, 4))
    scores = np.einsum("bhte,bhse->bhts", q, k) / np.sqrt(8)
    floor = tiled_kernel.subnormal_floor(np.dtype(dtype))
    assert scores.min() < floor - 20 and scores.max(-1).max() < 20  # the premise
    return tuple(a.astype(dtype) for a in (q, k, v, g))


def _agrees_with_torch(got, q, k, v, **kw):
    t = [torch.from_numpy(a) for a in (q, k, v)]
    kw = {n: torch.from_numpy(x) if isinstance(x, np.ndarray) else x for n, x in kw.items()}
    oracle = F.scaled_dot_product_attention(*(a.double() for a in t), **kw)
    if got.dtype == np.float64:
        np.testing.assert_allclose(got, oracle.numpy(), atol=1e-12)
    else:
        p = compare(got, oracle, F.scaled_dot_product_attention(*t, **kw))
        assert p.ok, p.message


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("causal", "strip"), [(False, 64), (True, 64), (True, 5)])
def test_scores_far_below_zero_stay_on_the_fast_path_and_agree_with_torch(
    monkeypatch, dtype, causal, strip
):
    # the fast path raises weights below 2^floor to it (subnormal ones are 10-35x slower),
    # in the diagonal's strips too (strip 5: blocks of 16 in strips of 5, 5, 5 and 1)
    monkeypatch.setattr(tiled_kernel, "FAST_DIAGONAL_STRIP", strip)
    calls = _exact_block_calls(monkeypatch)
    q, k, v, _ = _peaked(dtype)
    got = ref.tiled_attention(q, k, v, is_causal=causal, block_size=16)
    assert calls == []
    _agrees_with_torch(got, q, k, v, is_causal=causal)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mask", ["bool", "float"])
def test_scores_far_below_zero_on_the_exact_path_agree_with_torch(dtype, mask):
    # the exact path sets weights below e^floor to 0; masked keys and rows stay exactly 0
    q, k, v, _ = _peaked(dtype)
    keep = np.random.default_rng(1).random((48, 48)) < 0.7
    keep[5] = False  # a row that sees nothing
    attn_mask = keep if mask == "bool" else np.where(keep, 0.0, -1e4).astype(dtype)
    out, lse = ref.tiled_attention(q, k, v, attn_mask=attn_mask, block_size=16, return_lse=True)
    if mask == "bool":
        assert not out[..., 5, :].any() and np.isneginf(lse[..., 5]).all()
        out_ = np.delete(out, 5, axis=-2)
        keep_ = np.delete(keep, 5, axis=0)
        _agrees_with_torch(out_, np.delete(q, 5, axis=-2), k, v, attn_mask=keep_)
    else:
        _agrees_with_torch(out, q, k, v, attn_mask=attn_mask)


@pytest.mark.parametrize("causal", [False, True])
def test_backward_with_scores_far_below_zero_matches_torch(causal):
    q, k, v, g = _peaked(np.float64)
    out, lse = ref.tiled_attention(q, k, v, is_causal=causal, block_size=16, return_lse=True)
    dq, dk, dv = ref.tiled_attention_backward(q, k, v, out, lse, g, is_causal=causal, block_size=16)
    _, *want = _torch_fwd_bwd(q, k, v, g, is_causal=causal)
    for got, exp in zip((dq, dk, dv), want, strict=True):
        np.testing.assert_allclose(got, exp, atol=1e-10)


@pytest.mark.parametrize(
    ("T", "S", "block", "strip"),
    [(37, 37, 8, 3), (45, 45, 16, 5), (37, 50, 8, 1), (50, 37, 16, 7), (40, 40, 16, 64)],
)
def test_causal_fast_path_in_diagonal_strips_matches_torch(monkeypatch, T, S, block, strip):
    # the tile on the diagonal is taken in strips of `strip` queries; T not a multiple of the
    # block or the strip, and keys beyond the queries (S > T) or fewer (S < T: top-left causal)
    monkeypatch.setattr(tiled_kernel, "FAST_DIAGONAL_STRIP", strip)
    calls = _exact_block_calls(monkeypatch)
    q, k, v, g = (
        _rand(0, 2, 3, T, 8),
        _rand(1, 2, 3, S, 8),
        _rand(2, 2, 3, S, 5),
        _rand(3, 2, 3, T, 5),
    )
    out, lse = ref.tiled_attention(q, k, v, is_causal=True, block_size=block, return_lse=True)
    assert calls == []  # the fast path, strips and all
    want, *_ = _torch_fwd_bwd(q, k, v, g, is_causal=True)
    np.testing.assert_allclose(out, want, atol=1e-10)
    scores = np.einsum("nhte,nhse->nhts", q, k) / np.sqrt(8)
    rows, cols = np.triu_indices(T, 1, S)  # key s > query t: not visible
    scores[..., rows, cols] = -np.inf
    np.testing.assert_allclose(lse, np.log(np.exp(scores).sum(-1)), atol=1e-10)
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    got = ref.tiled_attention(q32, k32, v32, is_causal=True, block_size=block)
    _agrees_with_torch(got, q32, k32, v32, is_causal=True)


def test_causal_fast_path_computes_above_the_diagonal_only_each_strips_triangle(monkeypatch):
    # T = S = 100, blocks of 32 (the last one 4 queries), strips of 8: per head, every visible
    # score once, plus w(w-1)/2 above the diagonal for each strip of w queries
    monkeypatch.setattr(tiled_kernel, "FAST_DIAGONAL_STRIP", 8)
    computed = []
    real = tiled_kernel._tile
    monkeypatch.setattr(
        tiled_kernel,
        "_tile",
        lambda kj, v, qTh, *a: computed.append(len(kj) * qTh.shape[1]) or real(kj, v, qTh, *a),
    )
    q, k, v = (_rand(i, 1, 2, 100, 16, dtype=np.float32) for i in range(3))
    ref.tiled_attention(q, k, v, is_causal=True, block_size=32, workers=1)
    strips = [8] * 12 + [4]  # 3 blocks of 4 strips, and the last block's 4 queries
    assert sum(computed) == 2 * (100 * 101 // 2 + sum(w * (w - 1) // 2 for w in strips))
