import numpy as np


def causal_mask(T):
    mask = np.zeros((T, T), dtype=bool)
    for t in range(T):
        for s in range(t + 1):
            mask[t, s] = True
    return mask
