import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnlab import ref
from attnlab.nn import LearnedPositionalEmbedding, RotaryEmbedding, SinusoidalPositionalEncoding


def test_sinusoidal_module_adds_the_reference_table_beyond_max_len_too():
    m = SinusoidalPositionalEncoding(8, max_len=10)
    x = torch.zeros(2, 6, 8, dtype=torch.float64)
    np.testing.assert_allclose(
        m(x, offset=7)[0].numpy(), ref.sinusoidal_positional_encoding(13, 8)[7:], atol=1e-7
    )
    assert len(m.state_dict()) == 0  # a fixed table, not a parameter


def test_learned_embedding_offsets_and_limit():
    m = LearnedPositionalEmbedding(5, 4)
    x = torch.zeros(1, 3, 4)
    torch.testing.assert_close(m(x, offset=2)[0], m.emb.weight[2:5])
    with pytest.raises(ValueError, match=r"positions 3..5 exceed the 5 learned positions"):
        m(x, offset=3)


@given(m=st.integers(0, 50), n=st.integers(0, 50), shift=st.integers(0, 100))
def test_rope_scores_depend_only_on_relative_position(m, n, shift):
    rope = RotaryEmbedding(8)
    g = torch.Generator().manual_seed(0)
    q, k = (
        torch.randn(1, 8, generator=g, dtype=torch.float64),
        torch.randn(1, 8, generator=g, dtype=torch.float64),
    )
    a = (rope(q, offset=m) * rope(k, offset=n)).sum()
    b = (rope(q, offset=m + shift) * rope(k, offset=n + shift)).sum()
    torch.testing.assert_close(a, b)


def test_rope_preserves_norms_and_offset_equals_slice():
    rope = RotaryEmbedding(6)
    x = torch.randn(2, 3, 10, 6, dtype=torch.float64)
    y = rope(x)
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1))
    torch.testing.assert_close(rope(x[..., 4:, :], offset=4), y[..., 4:, :])
    torch.testing.assert_close(y[..., 0, :], x[..., 0, :])  # position 0 is not rotated
    with pytest.raises(ValueError, match="even head width"):
        RotaryEmbedding(5)


@pytest.mark.parametrize("offset", [0, 5, 4096])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_rotary_module_matches_the_numpy_reference_with_offsets(offset, dtype):
    from attnlab.ref import rotary_embedding

    x = np.random.default_rng(offset).standard_normal((2, 3, 7, 10))  # (B, H, T, D)
    got = RotaryEmbedding(10)(torch.from_numpy(x).to(dtype), offset=offset)
    want = rotary_embedding(x, np.arange(offset, offset + 7))
    tol = 1e-12 if dtype == torch.float64 else 2e-6 * (1 + offset / 100)
    np.testing.assert_allclose(got.double().numpy(), want, rtol=0, atol=tol)


def test_rotary_tables_grow_and_pair_rotates_queries_and_keys_of_different_lengths():
    from attnlab.ref import rotary_embedding

    rope = RotaryEmbedding(10)  # one module: its cached tables grow as offsets grow
    rng = np.random.default_rng(1)
    for offset in (0, 70, 3, 300):
        q, k = rng.standard_normal((2, 3, 4, 10)), rng.standard_normal((2, 3, 9, 10))
        rq, rk = rope.pair(torch.from_numpy(q), torch.from_numpy(k), offset=offset)
        np.testing.assert_allclose(rq.numpy(), rotary_embedding(q, np.arange(offset, offset + 4)))
        np.testing.assert_allclose(rk.numpy(), rotary_embedding(k, np.arange(offset, offset + 9)))


def test_rotary_tables_made_while_decoding_serve_training_afterwards():
    rope = RotaryEmbedding(8)
    with torch.inference_mode():
        rope(torch.randn(1, 5, 8))  # tables made under inference mode ...
    x = torch.randn(1, 5, 8, requires_grad=True)
    rope(x).sum().backward()  # ... can still be saved for backward
    assert x.grad is not None and torch.isfinite(x.grad).all()
