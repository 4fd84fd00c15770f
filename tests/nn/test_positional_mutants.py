"""Positional modules at their edges, against the NumPy reference: explicit positions (a
context-parallel shard), another base, dropout, tables shared between dtypes, and the errors a
learner reads. Written from the mutants that survived tests/nn/test_positional.py
(tools/mutation.sh)."""

import numpy as np
import pytest
import torch

from attnlab import ref
from attnlab.nn import LearnedPositionalEmbedding, RotaryEmbedding, SinusoidalPositionalEncoding
from attnlab.nn.positional import rotate


def test_sinusoidal_adds_the_table_of_the_given_positions_and_base():
    m = SinusoidalPositionalEncoding(6, max_len=8, base=100.0)
    x = torch.zeros(1, 3, 6, dtype=torch.float64)
    table = ref.sinusoidal_positional_encoding(20, 6, base=100.0)
    np.testing.assert_allclose(m(x)[0].numpy(), table[:3], atol=1e-7)
    np.testing.assert_allclose(m(x, offset=5)[0].numpy(), table[5:8], atol=1e-7)  # fills max_len
    np.testing.assert_allclose(m(x, offset=6)[0].numpy(), table[6:9], atol=1e-7)  # one past it
    pos = torch.tensor([12, 0, 3])
    got = m(x, positions=pos)
    assert got.dtype == torch.float64
    np.testing.assert_allclose(got[0].numpy(), table[[12, 0, 3]], atol=1e-7)
    with pytest.raises(ValueError, match=r"^x must end in d_model=6, got \(1, 3, 4\)$"):
        m(torch.zeros(1, 3, 4))


def test_sinusoidal_dropout_acts_only_while_training():
    m = SinusoidalPositionalEncoding(4, dropout=0.5)
    x = torch.ones(1, 50, 4)
    m.eval()
    clean = m(x)
    m.train()
    torch.manual_seed(0)
    noisy = m(x)
    dropped = noisy == 0
    assert 0 < int(dropped.sum()) < dropped.numel()
    torch.testing.assert_close(noisy[~dropped], 2 * clean[~dropped])


def test_learned_embedding_at_explicit_positions_and_its_limit():
    m = LearnedPositionalEmbedding(5, 4)
    x = torch.zeros(1, 3, 4)
    pos = torch.tensor([4, 0, 2])
    torch.testing.assert_close(m(x, positions=pos)[0], m.emb.weight[[4, 0, 2]])
    torch.testing.assert_close(m(x, offset=2)[0], m.emb.weight[2:5])  # the last one is fine
    with pytest.raises(ValueError, match=r"^positions 1\.\.5 exceed the 5 learned positions$"):
        m(x, positions=torch.tensor([5, 1, 2]))


def test_rotary_at_explicit_positions_and_another_base():
    rope = RotaryEmbedding(6, base=50.0)
    x = np.random.default_rng(0).standard_normal((2, 4, 6))
    pos = np.array([9, 0, 70, 3])
    got = rope(torch.from_numpy(x), positions=torch.from_numpy(pos))
    np.testing.assert_allclose(got.numpy(), ref.rotary_embedding(x, pos, base=50.0), atol=1e-12)
    k = np.random.default_rng(1).standard_normal((2, 4, 6))
    rq, rk = rope.pair(torch.from_numpy(x), torch.from_numpy(k), positions=torch.from_numpy(pos))
    np.testing.assert_allclose(rk.numpy(), ref.rotary_embedding(k, pos, base=50.0), atol=1e-12)
    np.testing.assert_allclose(rq.numpy(), got.numpy(), rtol=0, atol=0)


def test_rotary_tables_of_one_dtype_do_not_serve_another():
    rope = RotaryEmbedding(8)
    x = np.random.default_rng(2).standard_normal((3, 8))
    rope(torch.from_numpy(x).float(), offset=1000)  # a float32 table first
    got = rope(torch.from_numpy(x), offset=1000)
    assert got.dtype == torch.float64
    want = ref.rotary_embedding(x, np.arange(1000, 1003))
    np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=1e-12)


def test_rotarys_width_is_checked_for_queries_and_keys():
    rope = RotaryEmbedding(4)
    with pytest.raises(ValueError, match=r"^rotary embedding needs an even head width, got 5$"):
        RotaryEmbedding(5)
    with pytest.raises(ValueError, match=r"^x must end in D=4, got \(2, 6\)$"):
        rope(torch.zeros(2, 6))
    with pytest.raises(ValueError, match=r"^x must end in D=4, got \(3, 2\)$"):
        rope.pair(torch.zeros(2, 4), torch.zeros(3, 2))


def test_rotate_turns_feature_i_with_feature_i_plus_half():
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    c, s = torch.tensor([[0.0, 0.0, 0.0, 0.0]]), torch.tensor([[-1.0, -1.0, 1.0, 1.0]])
    # a quarter turn: (a, b) -> (-b, a) for the pairs (1, 3) and (2, 4)
    assert rotate(x, c, s).tolist() == [[-3.0, -4.0, 1.0, 2.0]]


def test_rotary_keeps_float32_and_pairs_unbatched_queries_and_keys_from_position_zero():
    rope = RotaryEmbedding(4)
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    assert rope(x).dtype == torch.float32 and rope.pair(x, x)[1].dtype == torch.float32
    q, k = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 5, 4, dtype=torch.float64)
    rq, rk = rope.pair(q, k)  # (H, T, D) and (H, S, D), no offset: positions 0..
    np.testing.assert_allclose(rq.numpy(), ref.rotary_embedding(q.numpy()), atol=1e-12)
    np.testing.assert_allclose(rk.numpy(), ref.rotary_embedding(k.numpy()), atol=1e-12)
