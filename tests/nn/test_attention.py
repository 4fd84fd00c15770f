import numpy as np
import pytest
import torch

from attnlab import ref
from attnlab.nn import AdditiveAttention, LuongAttention, MultiHeadAttention, ScoredAttention
from attnlab.nn import functional as AF
from attnlab.nn.attention import KVCache


def _np(t):
    return t.detach().numpy()


def _ref_weights(m: MultiHeadAttention):
    p = m.projections()
    W = [_np(p[n][0]).T for n in ("q", "k", "v", "out")]
    b = [_np(p[n][1]) for n in ("q", "k", "v", "out")]
    return W, b


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_matches_reference_self_and_cross(need_weights):
    m = MultiHeadAttention(12, 3).double()
    x, ctx = torch.randn(2, 5, 12, dtype=torch.float64), torch.randn(2, 7, 12, dtype=torch.float64)
    mask = AF.padding_mask(torch.tensor([7, 4]), 7)
    (Wq, Wk, Wv, Wo), (bq, bk, bv, bo) = _ref_weights(m)
    for context, is_causal, attn_mask in ((None, True, None), (ctx, False, mask)):
        got = m(x, context, attn_mask=attn_mask, is_causal=is_causal, need_weights=need_weights)
        kv = _np(x if context is None else context)
        want = ref.multi_head_attention(
            _np(x),
            kv,
            kv,
            Wq,
            Wk,
            Wv,
            Wo,
            3,
            bq,
            bk,
            bv,
            bo,
            attn_mask=None if attn_mask is None else attn_mask.numpy(),
            is_causal=is_causal,
        )
        out = got[0] if need_weights else got
        np.testing.assert_allclose(_np(out), want[0], atol=1e-12)
        if need_weights:
            np.testing.assert_allclose(_np(got[1]), want[1], atol=1e-12)


def test_from_torch_matches_torch_with_the_mask_negated():
    tm = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(tm).eval()
    x = torch.randn(2, 6, 16)
    may_attend = torch.rand(6, 6) < 0.8
    may_attend.fill_diagonal_(True)
    want, want_w = tm(x, x, x, attn_mask=~may_attend, average_attn_weights=False)
    got, got_w = ours(x, attn_mask=may_attend, need_weights=True)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(got_w, want_w, atol=1e-6, rtol=1e-5)
    with pytest.raises(ValueError, match="kdim == vdim == embed_dim"):
        MultiHeadAttention.from_torch(torch.nn.MultiheadAttention(16, 4, kdim=8, vdim=8))


def test_gqa_equals_full_mha_with_repeated_kv_heads():
    m = MultiHeadAttention(16, 4, num_kv_heads=2).double()
    full = MultiHeadAttention(16, 4).double()
    d_k = 4
    with torch.no_grad():
        pm, pf = m.projections(), full.projections()
        for n in ("k", "v"):  # repeat each kv head for its group of query heads
            pf[n][0].copy_(pm[n][0].view(2, d_k, 16).repeat_interleave(2, 0).reshape(16, 16))
            pf[n][1].copy_(pm[n][1].view(2, d_k).repeat_interleave(2, 0).reshape(16))
        for n in ("q", "out"):
            pf[n][0].copy_(pm[n][0])
            pf[n][1].copy_(pm[n][1])
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    assert m.projections()["k"][0].shape == (8, 16)
    torch.testing.assert_close(m(x, is_causal=True), full(x, is_causal=True))
    _, w = m(x, is_causal=True, need_weights=True)
    assert w.shape == (2, 4, 5, 5)


def test_unbatched_and_3d_mask():
    m = MultiHeadAttention(8, 2).eval()
    x = torch.randn(5, 8)
    mask = torch.ones(5, 5, dtype=torch.bool).tril()
    torch.testing.assert_close(m(x, attn_mask=mask), m(x[None], attn_mask=mask[None])[0])
    torch.testing.assert_close(m(x, is_causal=True), m(x, attn_mask=mask))
    per_head = mask.expand(2, 5, 5)  # unbatched 3-D mask is (H, T, S)
    torch.testing.assert_close(m(x, attn_mask=per_head), m(x, attn_mask=mask))
    assert not torch.allclose(m(x, attn_mask=mask), m(x))


@pytest.mark.parametrize("batched", [False, True])
def test_each_head_attends_under_its_own_mask(batched):
    """A per-head mask, (H, T, S) unbatched or (B, H, T, S): head h's weights are zero exactly
    where head h's mask says no (not head 0's, not the union), and the output is the float64
    reference's under that same mask."""
    m = MultiHeadAttention(12, 3).double().eval()
    x = torch.randn(6, 12, dtype=torch.float64)
    mask = torch.rand(3, 6, 6, generator=torch.Generator().manual_seed(1)) < 0.6
    mask |= torch.eye(6, dtype=torch.bool)  # every query sees itself
    assert not torch.equal(mask[0], mask[1]) and not torch.equal(mask[1], mask[2])
    xs, ms = (x[None], mask[None]) if batched else (x, mask)
    out, w = m(xs, attn_mask=ms, need_weights=True)
    w = w[0] if batched else w  # (H, T, S)
    for h in range(3):
        assert torch.all(w[h][~mask[h]] == 0) and torch.all(w[h][mask[h]] > 0), h
    (Wq, Wk, Wv, Wo), (bq, bk, bv, bo) = _ref_weights(m)
    want, want_w = ref.multi_head_attention(
        _np(x), _np(x), _np(x), Wq, Wk, Wv, Wo, 3, bq, bk, bv, bo, attn_mask=mask.numpy()
    )
    np.testing.assert_allclose(_np(out[0] if batched else out), want, atol=1e-12)
    np.testing.assert_allclose(_np(w), want_w, atol=1e-12)


def test_unbatched_cross_attention_attends_to_the_context():
    m = MultiHeadAttention(12, 3).double().eval()
    x, ctx = torch.randn(4, 12, dtype=torch.float64), torch.randn(7, 12, dtype=torch.float64)
    out, w = m(x, ctx, need_weights=True)
    assert out.shape == (4, 12) and w.shape == (3, 4, 7)  # (H, T, S): S is the context's
    (Wq, Wk, Wv, Wo), (bq, bk, bv, bo) = _ref_weights(m)
    c = _np(ctx)
    want, want_w = ref.multi_head_attention(_np(x), c, c, Wq, Wk, Wv, Wo, 3, bq, bk, bv, bo)
    np.testing.assert_allclose(_np(out), want, atol=1e-12)
    np.testing.assert_allclose(_np(w), want_w, atol=1e-12)
    with pytest.raises(ValueError, match=r"context must be \(B=2, S, 12\), got \(3, 7, 12\)"):
        m(x.expand(2, 4, 12), ctx.expand(3, 7, 12))
    with pytest.raises(ValueError, match=r"context must be \(B=1, S, 12\), got \(1, 7, 8\)"):
        m(x[None], torch.randn(1, 7, 8, dtype=torch.float64))


@pytest.mark.parametrize("rope", [False, True])
def test_decoding_with_a_kv_cache_equals_the_whole_causal_pass(rope):
    """Three positions at once, then one at a time: each position's output is what the
    causal pass over the whole sequence gives it (positions, rotary offsets and the mask
    aligned with what is cached)."""
    m = MultiHeadAttention(12, 3, num_kv_heads=1, rope=rope).double().eval()
    x = torch.randn(2, 6, 12, dtype=torch.float64)
    whole = m(x, is_causal=True)
    cache = KVCache(max_len=6)
    parts = [m(x[:, :3], is_causal=True, cache=cache)]
    parts += [m(x[:, t : t + 1], is_causal=True, cache=cache) for t in range(3, 6)]
    torch.testing.assert_close(torch.cat(parts, dim=1), whole)
    assert len(cache) == 6
    with pytest.raises(ValueError, match="a KV cache is for self-attention"):
        m(x, x, cache=KVCache())


def test_dropout_only_while_training():
    m = MultiHeadAttention(12, 3, dropout=0.5).double()
    x = torch.randn(2, 5, 12, dtype=torch.float64)
    m.eval()
    torch.testing.assert_close(m(x), m(x))  # no dropout: the same output each call
    m.train()
    torch.manual_seed(1)
    a = m(x)
    torch.manual_seed(2)
    assert not torch.allclose(a, m(x))


def test_mha_gradients_finite_with_fully_masked_rows():
    m = MultiHeadAttention(8, 2)
    x = torch.randn(2, 4, 8, requires_grad=True)
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False
    for need_weights in (False, True):
        out = m(x, attn_mask=mask, need_weights=need_weights)
        (out[0] if need_weights else out).sum().backward()
        assert torch.isfinite(x.grad).all()
        assert all(torch.isfinite(p.grad).all() for p in m.parameters())


def test_mha_errors():
    with pytest.raises(ValueError, match=r"num_heads \(3\) must divide d_model \(8\)"):
        MultiHeadAttention(8, 3)
    with pytest.raises(ValueError, match=r"num_kv_heads \(3\) must divide num_heads \(4\)"):
        MultiHeadAttention(8, 4, num_kv_heads=3)
    with pytest.raises(ValueError, match=r"x must be \(B, T, 8\), got \(2, 5, 6\)"):
        MultiHeadAttention(8, 2)(torch.randn(2, 5, 6))


@pytest.mark.parametrize(
    ("module", "kind"),
    [
        (lambda: AdditiveAttention(6, 4, 5), "additive"),
        (lambda: LuongAttention(4, score="dot"), "dot"),
        (lambda: LuongAttention(6, 4, score="general"), "general"),
        (lambda: LuongAttention(6, 4, score="concat", hidden_dim=5), "concat"),
    ],
)
def test_seq2seq_attention_matches_reference_scores(module, kind):
    m = module().double()
    d_q = 4 if kind == "dot" else 6
    q, keys = torch.randn(3, d_q, dtype=torch.float64), torch.randn(3, 7, 4, dtype=torch.float64)
    values = torch.randn(3, 7, 2, dtype=torch.float64)
    ctx, w = m(q, keys, values)
    s = m.score
    params = {
        "dot": {},
        "general": {"W": _np(s.W.weight).T} if kind == "general" else {},
        "additive": {
            "W_q": _np(s.W_q.weight).T,
            "W_k": _np(s.W_k.weight).T,
            "v": _np(s.v.weight)[0],
        }
        if kind == "additive"
        else {},
        "concat": {"W": _np(s.W.weight).T, "v": _np(s.v.weight)[0]} if kind == "concat" else {},
    }[kind]
    want_w = ref.softmax(ref.score(_np(q), _np(keys), kind, **params))
    np.testing.assert_allclose(_np(w), want_w, atol=1e-12)
    np.testing.assert_allclose(_np(ctx), (want_w[:, None] @ _np(values))[:, 0], atol=1e-12)


def test_valid_lengths_ignore_padding():
    m = AdditiveAttention(4, 4).double()
    q, keys = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 6, 4, dtype=torch.float64)
    lengths = torch.tensor([6, 3])
    ctx, w = m(q, keys, valid_lengths=lengths)
    assert w.shape == (2, 3, 6) and torch.all(w[1, :, 3:] == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, dtype=torch.float64))
    keys2 = keys.clone()
    keys2[1, 3:] = 1e3  # garbage in the padding changes nothing
    torch.testing.assert_close(m(q, keys2, valid_lengths=lengths)[0][1], ctx[1])


def test_scored_attention_errors():
    with pytest.raises(ValueError, match="unknown score kind 'cosine'"):
        ScoredAttention("cosine", 4, 4)
    with pytest.raises(ValueError, match="Luong score must be"):
        LuongAttention(4, score="additive")
    with pytest.raises(ValueError, match="dot score needs query_dim == key_dim"):
        LuongAttention(4, 6, score="dot")
    with pytest.raises(ValueError, match=r"keys \(B, S, d_k\)"):
        AdditiveAttention(4, 4)(torch.randn(2, 4), torch.randn(3, 5, 4))


@pytest.mark.parametrize(
    ("shape", "why"),
    [((5, 6), "T, S"), ((3, 5, 5), "B of 3"), ((2, 3, 5, 5), "H of 3"), ((5,), "1-D")],
)
def test_a_mask_that_does_not_fit_is_a_one_line_error_naming_both_shapes(shape, why):
    m = MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    mask = torch.ones(shape, dtype=torch.bool)
    with pytest.raises(ValueError) as err:
        m(x, attn_mask=mask)
    msg = str(err.value)
    assert "\n" not in msg and str(tuple(shape)) in msg and "(B=2, H=2, T=5, S=5)" in msg
    for good in ((5, 5), (2, 5, 5), (2, 2, 5, 5), (1, 1, 1, 5), (2, 1, 5, 1)):  # broadcasts
        m(x, attn_mask=torch.ones(good, dtype=torch.bool))


def test_a_mask_for_cached_decoding_counts_the_cached_keys():
    from attnlab.nn import KVCache

    m = MultiHeadAttention(8, 2).eval()
    cache = KVCache()
    m(torch.randn(2, 3, 8), is_causal=True, cache=cache)
    new = torch.randn(2, 1, 8)
    with pytest.raises(ValueError, match=r"S=4\)"):
        m(new, attn_mask=torch.ones(1, 3, dtype=torch.bool), cache=cache)
    assert len(cache) == 3  # the refused call left the cache as it was
    m(new, attn_mask=torch.ones(1, 4, dtype=torch.bool), cache=cache)
    assert len(cache) == 4


@pytest.mark.parametrize("max_len", [None, 16])
def test_a_cache_given_another_batch_is_a_one_line_error(max_len):
    from attnlab.nn import KVCache

    m = MultiHeadAttention(8, 2, num_kv_heads=1).eval()
    cache = KVCache(max_len)
    m(torch.randn(2, 3, 8), is_causal=True, cache=cache)
    with pytest.raises(ValueError) as err:
        m(torch.randn(3, 1, 8), is_causal=True, cache=cache)
    msg = str(err.value)
    assert "\n" not in msg and "holds batch 2 x 1 kv heads x d 4" in msg
    assert "(3, 1, 1, 4)" in msg and "new KVCache" in msg
    assert len(cache) == 3
