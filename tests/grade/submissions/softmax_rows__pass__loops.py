import math


def softmax_rows(x):
    import numpy as np

    out = np.empty(x.shape)
    for i, row in enumerate(x):
        m = max(row)
        e = [math.exp(v - m) for v in row]
        s = sum(e)
        out[i] = [v / s for v in e]
    return out
