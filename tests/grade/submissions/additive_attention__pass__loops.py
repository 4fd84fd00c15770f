import math

import numpy as np


def additive_attention(query, keys, W_q, W_k, v):
    q = query @ W_q
    scores = [float(v @ np.tanh(q + k @ W_k)) for k in keys]
    m = max(scores)
    e = [math.exp(s - m) for s in scores]
    w = np.array([x / sum(e) for x in e])
    return w @ keys, w
