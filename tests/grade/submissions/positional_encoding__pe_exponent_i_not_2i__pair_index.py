import numpy as np


def positional_encoding(T, d):
    pe = np.zeros((T, d))
    for pos in range(T):
        for i in range(d // 2):
            angle = pos / 10000 ** (i / d)  # i, not 2i
            pe[pos, 2 * i] = np.sin(angle)
            pe[pos, 2 * i + 1] = np.cos(angle)
    return pe
