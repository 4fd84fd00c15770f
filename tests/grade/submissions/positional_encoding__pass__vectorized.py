import numpy as np


def positional_encoding(T, d):
    pos = np.arange(T)[:, None]
    div = np.exp(-np.log(10000.0) * np.arange(0, d, 2) / d)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(pos * div)
    pe[:, 1::2] = np.cos(pos * div)
    return pe
