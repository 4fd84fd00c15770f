import numpy as np


def positional_encoding(T, d):
    pos = np.arange(T)[:, None]
    freq = 10000 ** (-np.arange(0, d, 2) / d)
    return np.hstack([np.sin(pos * freq), np.cos(pos * freq)])
