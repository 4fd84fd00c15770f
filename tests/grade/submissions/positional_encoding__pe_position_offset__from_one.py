import numpy as np


def positional_encoding(T, d):
    pos = np.arange(1, T + 1)[:, None]
    freq = 10000 ** (-np.arange(0, d, 2) / d)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(pos * freq)
    pe[:, 1::2] = np.cos(pos * freq)
    return pe
