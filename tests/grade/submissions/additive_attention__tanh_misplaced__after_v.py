import numpy as np


def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh((query @ W_q + keys @ W_k) @ v)
    e = np.exp(scores - scores.max())
    w = e / e.sum()
    return w @ keys, w
