import math

import numpy as np


def positional_encoding(T, d):
    pe = np.zeros((T, d))
    for pos in range(T):
        for i in range(0, d, 2):
            angle = pos / 10000 ** (i / d)
            pe[pos, i] = math.sin(angle)
            pe[pos, i + 1] = math.cos(angle)
    return pe
