import math

import numpy as np


def self_attention(X, W_Q, W_K, W_V, mask=False):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    T, d = Q.shape
    weights = np.zeros((T, T))
    for i in range(T):
        row = []
        for j in range(T):
            if mask and j > i:
                row.append(-math.inf)
            else:
                row.append(sum(Q[i, k] * K[j, k] for k in range(d)) / math.sqrt(d))
        top = max(row)
        exps = [math.exp(s - top) for s in row]
        total = sum(exps)
        for j in range(T):
            weights[i, j] = exps[j] / total
    out = np.zeros((T, V.shape[1]))
    for i in range(T):
        for j in range(T):
            out[i] += weights[i, j] * V[j]
    return out, weights
