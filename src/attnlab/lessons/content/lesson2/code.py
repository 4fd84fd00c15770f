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
scores = Q @ K.T / np.sqrt(d_k)  # (3, 3): row i = word i's score for each word
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

# %% step heads
W_Q2 = np.array([[0.0, 1.0], [1.0, 0.0]])  # a second head, with projections of its own
W_K2 = np.array([[1.0, 0.0], [-1.0, 1.0]])
W_V2 = np.eye(2)
Qh = np.stack([X @ W_Q, X @ W_Q2])  # (H, T, d_k) = (2, 3, 2): one set of queries per head
Kh, Vh = np.stack([X @ W_K, X @ W_K2]), np.stack([X @ W_V, X @ W_V2])  # (H, T, d_k) each
out_h, w_h = ref.scaled_dot_product_attention(Qh, Kh, Vh, is_causal=True, return_weights=True)
joined = np.concatenate(list(out_h), axis=-1)  # (T, H * d_k) = (3, 4): the heads side by side
for h in range(2):
    print(f"w_h[{h}] =")
    print(matrix(w_h[h], 3))
print("np.allclose(w_h[0], weights) =", np.allclose(w_h[0], weights))
print("joined.shape =", joined.shape)

# %% step padding
B, H, T4, d = 2, 4, 4, 8  # a batch of 2 sequences, 4 heads, 4 positions, width 8
rng = np.random.default_rng([SEED, 7])
q4, k4, v4 = rng.standard_normal((3, B, H, T4, d))  # (B, H, T, d) each
lengths = np.array([4, 2])  # two sentences: 4 tokens, and 2 tokens padded to 4
keep = ref.padding_mask(lengths, T4)[:, None]  # (B, 1, 1, S): True where key s is no padding
out4 = ref.scaled_dot_product_attention(q4, k4, v4, attn_mask=keep)  # (B, H, T, d)
alone = ref.scaled_dot_product_attention(q4[1, :, :2], k4[1, :, :2], v4[1, :, :2])  # unpadded
pad_diff = np.abs(out4[1, :, :2] - alone).max()  # sequence 1's own tokens, batched vs alone
_, w4 = ref.scaled_dot_product_attention(q4, k4, v4, attn_mask=keep, return_weights=True)
print("keep[:, 0, 0] =", keep[:, 0, 0].astype(int).tolist())
print("weights of sequence 1, head 0 =")
print(matrix(w4[1, 0], 3))
print(f"pad_diff = max|batched - alone| = {pad_diff:.1e}")

# %% step batch_shapes
s4 = q4 @ k4.swapaxes(-1, -2) / np.sqrt(d)  # (B, H, T, T): one score table per sequence and head
t, s = np.arange(T4)[:, None], np.arange(T4)[None, :]  # query and key positions
masks = {
    "(T, S)": s <= t,  # causal: the same table for every sequence and head
    "(B, 1, 1, S)": keep,  # padding: per sequence, its length
    "(B, 1, T, S)": (s <= t) & keep,  # both at once
    "(B, H, T, S)": np.stack([(t - s <= np.arange(H)[:, None, None]) & (s <= t)] * B),
}  # the last mask: in every sequence, head h sees its own position and the h before it
rows = []
for name, m in masks.items():
    ours = ref.scaled_dot_product_attention(q4, k4, v4, attn_mask=m)  # bool: True = may attend
    bias = np.where(m, 0.0, -np.inf)  # the same mask, additive: 0 or -inf, added to the scores
    added = ref.scaled_dot_product_attention(q4, k4, v4, attn_mask=bias)
    theirs = F.scaled_dot_product_attention(*map(torch.from_numpy, (q4, k4, v4, m)))
    diffs = np.abs(added - ours).max(), np.abs(ours - theirs.numpy()).max()
    rows.append(
        (name, m.shape, np.broadcast_shapes(m.shape, s4.shape), *(f"{x:.0e}" for x in diffs))
    )
_, w_float = ref.scaled_dot_product_attention(
    q4, k4, v4, attn_mask=masks["(T, S)"].astype(float), return_weights=True
)  # the causal mask as 1.0 and 0.0: added to the scores, it hides nothing
leak = np.triu(w_float, 1).max()  # the largest weight on a future position
torch.manual_seed(SEED)
mha = torch.nn.MultiheadAttention(d, 1, batch_first=True, dtype=torch.float64)
x1 = torch.from_numpy(q4[0, 0])[None]  # (1, T, d): one sequence
causal = torch.from_numpy(s <= t)  # (T, S): True = may attend
_, w_mha = mha(x1, x1, x1, attn_mask=~causal)  # nn.MultiheadAttention: True = may NOT attend
_, w_same = mha(x1, x1, x1, attn_mask=causal)  # the causal table passed as it is
mha_future = np.triu(w_mha[0].detach().numpy(), 1).max()  # 0: inverted, the mask is right
only_future = torch.isnan(w_same[0, -1]).all().item()  # the last row may attend nowhere: NaN
print("q, k, v", q4.shape, "-> scores", s4.shape)
print(table(["mask", "shape", "broadcast to", "float vs bool", "vs torch"], rows))
print(f"a 0.0/1.0 float mask: largest weight on the future = {leak:.2f}")
print(f"nn.MultiheadAttention, attn_mask=~causal: largest weight on the future = {mha_future}")
print("nn.MultiheadAttention, attn_mask=causal: last row all NaN =", only_future)

# %% step fully_masked
left = s >= 2  # (1, S): a sequence padded on the left: keys 0 and 1 are padding
allowed = torch.from_numpy((s <= t) & left)  # (T, S): query 0 may see no key at all
scores_t = torch.from_numpy(s4[1, 0])  # (T, S): one head's scores
with_inf = scores_t.masked_fill(allowed == 0, float("-inf")).softmax(dim=-1)
with_big = scores_t.masked_fill(allowed == 0, -1e9).softmax(dim=-1)
ours = ref.softmax(np.where(allowed.numpy(), s4[1, 0], -np.inf))  # attnlab.ref
print("row 0 with -inf:", with_inf[0].numpy().round(3))
print("row 0 with -1e9:", with_big[0].numpy().round(3))
print("row 0, ref     :", ours[0].round(3))
rest_same = bool(torch.allclose(with_inf[2:], with_big[2:])) and np.allclose(ours[2:], with_big[2:])
print("rows 2 and 3 the same in all three:", rest_same)
try:
    torch.zeros(2, dtype=torch.float16).masked_fill(torch.tensor([True, False]), -1e9)
except RuntimeError as error:
    print("float16:", error)

# %% step rnn
rng = np.random.default_rng([SEED, 8])
W_x = rng.standard_normal((2, 3)) / 2  # (d_model, hidden): what the input adds
W_h = rng.standard_normal((3, 3)) / 2  # (hidden, hidden): what the last state adds
b_h = rng.standard_normal(3) / 2  # (hidden,)
h, hs = np.zeros(3), []  # h_0: nothing read yet
for x_t in X:  # the three words of step 1, one after the other
    h = np.tanh(x_t @ W_x + h @ W_h + b_h)  # h_t: the same weights at every step
    hs.append(h)
hs = np.array(hs)  # (T, hidden): one state per word
rnn = torch.nn.RNN(2, 3, batch_first=True, dtype=torch.float64)
with torch.no_grad():
    rnn.weight_ih_l0.copy_(torch.from_numpy(W_x.T))  # PyTorch keeps the transposes
    rnn.weight_hh_l0.copy_(torch.from_numpy(W_h.T))
    rnn.bias_ih_l0.copy_(torch.from_numpy(b_h))
    rnn.bias_hh_l0.zero_()  # PyTorch has a second bias; one is enough
    theirs, h_last = rnn(torch.from_numpy(X)[None])  # (1, T, hidden), (1, 1, hidden)
rnn_diff = np.abs(hs - theirs[0].numpy()).max()
print("hs =")
print(matrix(hs, 3))
print(f"rnn_diff = max|hs - torch.nn.RNN| = {rnn_diff:.1e}")

# %% step comparison
T = 1000
rnn_path, attention_path = T - 1, 1  # steps between token 1 and token T
rnn_sequential, attention_sequential = T, 1  # steps that must run one after another
print("rnn_path =", rnn_path, "  attention_path =", attention_path)
print("rnn_sequential =", rnn_sequential, "  attention_sequential =", attention_sequential)
print("attention scores per head =", T * T)

# %% step recap


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
