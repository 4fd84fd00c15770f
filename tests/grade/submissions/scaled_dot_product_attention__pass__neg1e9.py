import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=False):
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask:
        s = s + np.triu(np.full(s.shape, -1e9), k=1)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(axis=-1, keepdims=True)
    return w @ V
