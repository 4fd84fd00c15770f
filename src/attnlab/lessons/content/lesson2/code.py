# Lesson 2: masked self-attention with NumPy alone, on an example small enough to check by hand.
# The prose of each step is in en.md, ja.md and zh.md beside this file.

# %% setup
import numpy as np

from attnlab import ref
from attnlab.grade import check
from attnlab.lessons import check_answer, quiz
from attnlab.lessons.show import heat, matrix, plot, table

SEED = 0
LANG = "en"
WORDS = ["w1", "w2", "w3"]

# %% step projections
X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (T, d_model) = (3, 2): three words
W_Q = np.array([[1.0, 0.0], [2.0, 2.0]])  # (d_model, d_k) = (2, 2)
W_K = np.eye(2)
W_V = np.array([[0.5, 1.0], [1.5, -1.0]])
Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (3, 2) each
for name, m in (("Q", Q), ("K", K), ("V", V)):
    print(f"{name} =")
    print(matrix(m, 1))

# %% step score_table
d_k = K.shape[1]
scores = Q @ K.T / np.sqrt(d_k)  # (3, 3): row i = how much word i wants each word
print("Q @ K.T =")
print(matrix(Q @ K.T, 1))
print("Q @ K.T / sqrt(d_k) =")
print(matrix(scores, 3))

# %% step mask_table
mask = np.tril(np.ones((3, 3), dtype=bool))  # True = may attend: the lower-left triangle
print(table(["", *WORDS], [[WORDS[i], *("○" if m else "×" for m in mask[i])] for i in range(3)]))
masked = np.where(mask, scores, -np.inf)
print("np.where(mask, scores, -np.inf) =")
print(matrix(masked, 3))

# %% step keepdims
e = np.exp(masked - masked.max(axis=1, keepdims=True))  # subtract each row's max first
right = e / e.sum(axis=1, keepdims=True)  # (3, 3) / (3, 1): each row by its own sum
wrong = e / e.sum(axis=1)  # (3, 3) / (3,): column j divided by row j's sum
print("keepdims=True  ->")
print(matrix(right, 3))
print("right.sum(axis=1) =", right.sum(axis=1).round(3).tolist())
print("keepdims=False ->")
print(matrix(wrong, 3))
print("wrong.sum(axis=1) =", wrong.sum(axis=1).round(3).tolist())

# %% step weights_tables
e_all = np.exp(scores - scores.max(axis=1, keepdims=True))
unmasked = e_all / e_all.sum(axis=1, keepdims=True)  # every word sees every word
weights = right  # the masked weights of the step before
out = weights @ V  # (3, 2): each word's new vector
rows = [
    [
        WORDS[i],
        " · ".join(f"{x:.3f}" for x in unmasked[i]),
        " · ".join(f"{x:.3f}" for x in weights[i]),
    ]
    for i in range(3)
]
print(table(["", "unmasked", "weights"], rows))
print("out = weights @ V =")
print(matrix(out, 3))
plot("lesson2_5_unmasked", heat(unmasked, WORDS, WORDS))
plot("lesson2_5_masked", heat(weights, WORDS, WORDS))

# %% step against_torch
import torch
import torch.nn.functional as F

rng = np.random.default_rng([SEED, 6])
rows, worst = [], 0.0
for trial in (1, 2, 3):
    T, d = int(rng.integers(2, 7)), int(rng.integers(2, 9))
    q, k, v = rng.standard_normal((3, T, d))  # float64
    for causal in (False, True):
        ours = ref.scaled_dot_product_attention(q, k, v, is_causal=causal)
        theirs = F.scaled_dot_product_attention(*map(torch.from_numpy, (q, k, v)), is_causal=causal)
        diff = np.abs(ours - theirs.numpy()).max()
        worst = max(worst, diff)
        rows.append((trial, f"T={T}, d={d}", causal, f"{diff:.1e}"))
print(table(["trial", "T, d", "is_causal", "diff"], rows))

# %% step comparison
T = 1000
rnn_path, attention_path = T - 1, 1  # steps between token 1 and token T
rnn_sequential, attention_sequential = T, 1  # steps that must run one after another
print("rnn_path =", rnn_path, "  attention_path =", attention_path)
print("rnn_sequential =", rnn_sequential, "  attention_sequential =", attention_sequential)
print("attention scores per head =", T * T)


# %% exercise self_attention grade=self_attention
def self_attention(X, W_Q, W_K, W_V, mask=False):
    """X (T, d_model), W_* (d_model, d_k) -> (output (T, d_k), weights (T, T))."""
    raise NotImplementedError("TODO: Q, K, V; scores; mask; row-wise softmax; weights @ V")


# %% solution self_attention
def self_attention(X, W_Q, W_K, W_V, mask=False):
    """X (T, d_model), W_* (d_model, d_k) -> (output (T, d_k), weights (T, T))."""
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T / np.sqrt(K.shape[1])  # (T, T)
    if mask:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1, keepdims=True)  # each row sums to 1
    return weights @ V, weights


# %% mistake self_attention missing_keepdims
def self_attention(X, W_Q, W_K, W_V, mask=False):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T / np.sqrt(K.shape[1])
    if mask:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1)  # no keepdims: column j divided by row j's sum
    return weights @ V, weights


# %% exercise row3 answer=w3
q3 = Q[2]  # the query of word 3
w3 = np.exp(q3 @ K.T / np.sqrt(d_k))
w3 = w3 / w3.sum()
print("w3 =", w3.round(3))
w3 = w3  # TODO: word 3 may not see word 1 either: mask it and renormalise

# %% solution row3
q3 = Q[2]
s3 = q3 @ K.T / np.sqrt(d_k)
s3 = np.where([False, True, True], s3, -np.inf)  # word 1 hidden
w3 = np.exp(s3 - s3.max())
w3 = w3 / w3.sum()
print("w3 =", w3.round(3))

# %% mistake row3 zero_after
q3 = Q[2]
w3 = np.exp(q3 @ K.T / np.sqrt(d_k))
w3 = w3 / w3.sum()
w3 = w3 * np.array([0.0, 1.0, 1.0])  # zeroed after the softmax: no longer sums to 1
