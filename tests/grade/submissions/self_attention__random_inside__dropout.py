import numpy as np


def self_attention(X, W_Q, W_K, W_V, mask=False):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = Q @ K.T / np.sqrt(K.shape[1])
    if mask:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w = w / w.sum(axis=1, keepdims=True)
    keep = np.random.rand(*w.shape) > 0.1  # dropout, as in the training code
    w = w * keep / 0.9
    return w @ V, w
