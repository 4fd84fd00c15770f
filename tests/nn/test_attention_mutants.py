"""attnlab.nn.attention where its first tests did not look (written from mutmut's survivors of
nn/attention.py: ``tools/mutation.sh src/attnlab/nn/attention.py tests/nn/test_attention.py
tests/nn/test_attention_mutants.py``): modules without biases, one head, unbatched decoding
through a preallocated cache, the cache's own errors, a user's mask beside cached keys, masks
of the wrong rank, ``from_torch`` options, and the scored attentions' hidden width. Each
compared with torch or with a float64 computation written out here."""

import math

import pytest
import torch
import torch.nn.functional as F

from attnlab.nn import AdditiveAttention, LuongAttention, MultiHeadAttention
from attnlab.nn.attention import KVCache

torch.manual_seed(0)


def reference(m: MultiHeadAttention, x, context=None, mask=None) -> torch.Tensor:
    """m's output written out in float64 from its weights: project, split heads, softmax of
    q k^T / sqrt(d_k) (mask True = may attend), merge, project."""
    context = x if context is None else context
    d, kv, H, Hk = m.d_model, m.kv_dim, m.num_heads, m.num_kv_heads
    W = m.in_proj.weight.double()
    b = m.in_proj.bias.double() if m.in_proj.bias is not None else torch.zeros(len(W)).double()
    q = x.double() @ W[:d].T + b[:d]
    k = context.double() @ W[d : d + kv].T + b[d : d + kv]
    v = context.double() @ W[d + kv :].T + b[d + kv :]
    heads = lambda t, n: t.unflatten(-1, (n, m.d_k)).transpose(-3, -2)  # noqa: E731
    q, k, v = heads(q, H), heads(k, Hk), heads(v, Hk)
    k, v = (t.repeat_interleave(H // Hk, dim=-3) for t in (k, v))
    s = q @ k.transpose(-1, -2) / math.sqrt(m.d_k)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    out = (torch.softmax(s, -1) @ v).transpose(-3, -2).flatten(-2)
    ob = m.out_proj.bias.double() if m.out_proj.bias is not None else 0.0
    return out @ m.out_proj.weight.double().T + ob


def test_one_head_and_no_biases_are_a_module_of_their_own():
    m = MultiHeadAttention(8, 1, bias=False).double()
    assert m.in_proj.bias is None and m.out_proj.bias is None
    x, c = torch.randn(2, 5, 8).double(), torch.randn(2, 3, 8).double()
    torch.testing.assert_close(m(x), reference(m, x), rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(m(x, c), reference(m, x, c), rtol=1e-10, atol=1e-12)  # cross
    parts = m.projections()
    assert [parts[n][1] for n in "qkv"] == [None, None, None]
    torch.testing.assert_close(torch.cat([parts[n][0] for n in "qkv"]), m.in_proj.weight)


def test_the_rotary_base_is_the_one_asked_for():
    default = MultiHeadAttention(8, 2, rope=True)
    asked = MultiHeadAttention(8, 2, rope=True, rope_base=500.0)
    for m, base in ((default, 10000.0), (asked, 500.0)):
        expected = base ** (-torch.arange(0, 4, 2, dtype=torch.float64) / 4)
        torch.testing.assert_close(m.rotary.inv_freq, expected)
    assert MultiHeadAttention(8, 2).rotary is None


def test_unbatched_decoding_through_a_preallocated_cache_is_the_causal_pass():
    m = MultiHeadAttention(8, 4, num_kv_heads=2).double().eval()
    x = torch.randn(6, 8).double()  # (T, d_model), no batch
    causal = torch.tril(torch.ones(6, 6, dtype=torch.bool))
    whole = reference(m, x, mask=causal)
    cache = KVCache(max_len=6)
    steps = [m(x[:2], is_causal=True, cache=cache)]  # a prompt of two, then one at a time
    steps += [m(x[t : t + 1], cache=cache) for t in range(2, 6)]
    torch.testing.assert_close(torch.cat(steps), whole, rtol=1e-10, atol=1e-12)
    assert len(cache) == 6 and cache.k.shape == (1, 2, 6, 2)  # (B=1, Hkv, T, D)


def test_a_users_mask_still_counts_beside_cached_keys():
    m = MultiHeadAttention(8, 2).double().eval()
    x = torch.randn(1, 4, 8).double()
    cache = KVCache()
    m(x[:, :3], is_causal=True, cache=cache)
    blind = torch.tensor([[False, True, True, True]])  # the new query may not see position 0
    out = m(x[:, 3:], attn_mask=blind, cache=cache)
    full = torch.tril(torch.ones(4, 4, dtype=torch.bool))
    full[3, 0] = False
    torch.testing.assert_close(out, reference(m, x, mask=full)[:, 3:], rtol=1e-10, atol=1e-12)


def test_the_cache_says_what_does_not_fit():
    cache = KVCache(max_len=4)
    k = torch.zeros(1, 2, 3, 4)
    cache.append(k, k)
    with pytest.raises(ValueError, match=r"^KV cache holds 4 positions; 3 \+ 2 do not fit$"):
        cache.append(k[:, :, :2], k[:, :, :2])
    assert len(cache) == 3  # nothing written
    with pytest.raises(ValueError) as e:
        KVCache().append(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 2, 4))
    assert str(e.value).startswith("KV cache: keys (1, 2, 3, 4) and values (1, 2, 2, 4) must share")
    assert "(B, Hkv, T)" in str(e.value)
    with pytest.raises(ValueError, match="keys"):
        KVCache().append(torch.zeros(1, 2, 3, 4), torch.zeros(2, 2, 3, 4))  # another B
    cache = KVCache()
    cache.append(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    for other in (torch.zeros(2, 2, 1, 4), torch.zeros(1, 2, 1, 5)):  # another batch, or D
        with pytest.raises(ValueError):
            cache.append(other, other)


def test_a_cache_with_a_context_is_refused_in_words():
    m = MultiHeadAttention(8, 2)
    x, c = torch.randn(1, 2, 8), torch.randn(1, 3, 8)
    with pytest.raises(
        ValueError, match=r"^a KV cache is for self-attention; got a context as well$"
    ):
        m(x, c, cache=KVCache())


def test_a_mask_of_five_dimensions_or_the_wrong_rank_is_refused_in_words():
    m = MultiHeadAttention(8, 2)
    x = torch.randn(2, 3, 8)
    words = r"expected \(T, S\), \(B, T, S\) or \(B, H, T, S\) with each size equal to those or 1$"
    for mask in (torch.ones(1, 2, 2, 3, 3, dtype=torch.bool), torch.ones(3, dtype=torch.bool)):
        with pytest.raises(ValueError, match=words):
            m(x, attn_mask=mask)


def test_from_torch_keeps_no_bias_dropout_and_dtype_and_refuses_what_it_cannot_copy():
    theirs = torch.nn.MultiheadAttention(8, 2, bias=False, dropout=0.25, batch_first=True)
    theirs = theirs.double().eval()
    ours = MultiHeadAttention.from_torch(theirs).eval()
    assert ours.in_proj.bias is None and ours.dropout == 0.25
    assert ours.in_proj.weight.dtype == torch.float64
    x = torch.randn(2, 5, 8).double()
    torch.testing.assert_close(ours(x), theirs(x, x, x, need_weights=False)[0])
    biased = torch.nn.MultiheadAttention(8, 2, batch_first=True).double().eval()
    with torch.no_grad():  # torch starts its biases at 0, which would hide one left behind
        biased.in_proj_bias.normal_(), biased.out_proj.bias.normal_()
    ours = MultiHeadAttention.from_torch(biased).eval()
    torch.testing.assert_close(ours(x), biased(x, x, x, need_weights=False)[0])
    for kwargs in ({"add_bias_kv": True}, {"add_zero_attn": True}):
        m = torch.nn.MultiheadAttention(8, 2, **kwargs)
        with pytest.raises(ValueError, match=r"^from_torch does not support add_bias_kv or add_"):
            MultiHeadAttention.from_torch(m)


def test_the_scored_attentions_take_their_hidden_width_and_luong_defaults_to_general():
    add = AdditiveAttention(query_dim=3, key_dim=5, hidden_dim=7)
    assert {tuple(p.shape) for p in add.parameters()} >= {(7, 3), (7, 5)}  # W_q, W_k
    luong = LuongAttention(4)
    assert luong.score_kind == "general"
    q, keys = torch.randn(2, 4), torch.randn(2, 6, 4)
    _, w = luong(q, keys)
    W = next(p for p in luong.parameters() if p.shape == (4, 4))
    scores = torch.einsum("bd,de,bse->bs", q, W, keys)  # q W k, for either orientation of W
    scores_t = torch.einsum("bd,ed,bse->bs", q, W, keys)
    assert any(torch.allclose(w, F.softmax(s, -1), atol=1e-6) for s in (scores, scores_t))
    with pytest.raises(ValueError, match="expected query"):
        luong(q, torch.randn(2, 4))  # keys without their positions
