import numpy as np


def softmax_rows(x):
    e = np.exp(x - np.max(x))  # one maximum for the whole array
    return e / e.sum(axis=1, keepdims=True)
