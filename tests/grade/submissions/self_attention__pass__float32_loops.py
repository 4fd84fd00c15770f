import math

import numpy as np


def self_attention(X, W_Q, W_K, W_V, mask=False):
    X, W_Q, W_K, W_V = (a.astype(np.float32) for a in (X, W_Q, W_K, W_V))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    T = X.shape[0]
    w = np.zeros((T, T), dtype=np.float32)
    for t in range(T):
        keys = range(t + 1) if mask else range(T)
        s = [float(Q[t] @ K[j]) / math.sqrt(K.shape[1]) for j in keys]
        m = max(s)
        e = [math.exp(x - m) for x in s]
        for j, x in zip(keys, e):
            w[t, j] = x / sum(e)
    return w @ V, w
