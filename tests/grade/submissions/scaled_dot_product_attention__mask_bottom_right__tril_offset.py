import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=False):
    T, S = Q.shape[0], K.shape[0]
    scores = Q @ K.T / np.sqrt(Q.shape[1])
    if mask:
        keep = np.tril(np.ones((T, S), dtype=bool), k=S - T)  # last query on the last key
        scores = np.where(keep, scores, -np.inf)
    scores = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=1, keepdims=True) @ V
