import numpy as np


def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(query @ W_q + keys @ W_k) @ v[:, None]  # (S, 1)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    w = (e / e.sum(axis=1, keepdims=True))[:, 0]  # softmax over a length-1 axis
    return w @ keys, w
