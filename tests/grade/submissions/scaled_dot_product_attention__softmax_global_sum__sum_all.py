import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=False):
    s = Q @ K.T / np.sqrt(Q.shape[1])
    if mask:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / np.sum(e)) @ V
