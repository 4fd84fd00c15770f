import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=False):
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask:
        T, Sk = S.shape
        m = np.tril(np.ones((T, Sk), dtype=bool))
        S = np.where(m, S, -1e9)
    S = S - S.max(axis=0, keepdims=True)
    W = np.exp(S)
    W = W / W.sum(axis=0, keepdims=True)
    return W @ V
