import numpy as np
import pytest

from attnlab.ref import SCORES, score


def test_course_example_dot_scores():
    keys = np.array([[0.1, 0.9], [0.0, 1.0], [0.9, 0.1], [1.0, 0.0], [0.8, 0.2]])
    np.testing.assert_allclose(score(np.array([1.0, 0.0]), keys, "dot"), [0.1, 0.0, 0.9, 1.0, 0.8])


def test_concat_is_additive_with_split_weights(rng):
    q, k = rng.standard_normal((2, 3)), rng.standard_normal((2, 5, 4))
    W, v = rng.standard_normal((7, 6)), rng.standard_normal(6)
    np.testing.assert_allclose(
        score(q, k, "concat", W=W, v=v), score(q, k, "additive", W_q=W[:3], W_k=W[3:], v=v)
    )
    # and literally [q; k] W per key
    qk = np.concatenate([np.broadcast_to(q[:, None], (2, 5, 3)), k], -1)
    np.testing.assert_allclose(score(q, k, "concat", W=W, v=v), np.tanh(qk @ W) @ v, atol=1e-14)


def test_general_with_identity_is_dot(rng):
    q, k = rng.standard_normal(4), rng.standard_normal((6, 4))
    np.testing.assert_allclose(score(q, k, "general", W=np.eye(4)), score(q, k, "dot"))


def test_errors_name_the_kind_and_parameters(rng):
    q, k = rng.standard_normal(4), rng.standard_normal((6, 4))
    with pytest.raises(ValueError, match="unknown score kind 'cosine'"):
        score(q, k, "cosine")
    with pytest.raises(TypeError, match=r"additive score takes parameters \['W_q', 'W_k', 'v'\]"):
        score(q, k, "additive", W=np.eye(4))
    with pytest.raises(ValueError, match=r"general score: W must have shape \(4, 4\)"):
        score(q, k, "general", W=np.eye(3))
    with pytest.raises(ValueError, match="dot score needs equal widths"):
        score(q[:3], k, "dot")
    assert sorted(SCORES) == ["additive", "concat", "dot", "general", "scaled_dot"]
