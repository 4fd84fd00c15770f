# Lesson 1: attention, from a running average to one causal head.
# The prose of each step is in en.md, ja.md and zh.md beside this file.

# %% setup
import numpy as np

from attnlab import ref
from attnlab.grade import check
from attnlab.lessons import check_answer, quiz
from attnlab.lessons.show import bars, heat, labeled, matrix, plot, table

SEED = 0
LANG = "en"
CHARS = list("床前明月光")
TIMED = (1000, 2000, 4000)  # the lengths the timing exercise times, each twice the one before

# %% step averaging
import torch

T, D = len(CHARS), 4
ids = np.arange(T)  # the sentence as character ids: 床 0, 前 1, 明 2, 月 3, 光 4
E = np.random.default_rng([SEED, 1]).standard_normal((T, D))  # (vocabulary, D): one row each
one_hot = np.eye(T)[ids]  # (T, vocabulary): a 1 in the column of each character
x = one_hot @ E  # (T, D): a one-hot row times E picks one row of E
emb = torch.nn.Embedding.from_pretrained(torch.from_numpy(E))  # PyTorch's lookup table
lookup_same = np.allclose(emb(torch.from_numpy(ids)).numpy(), x) and np.allclose(x, E[ids])
W = np.tril(np.ones((T, T)))  # (T, T): 1 where position t may see s <= t
W = W / W.sum(axis=1, keepdims=True)  # each row: 1 / (number of visible positions)
out = W @ x  # (T, D): weights × values, every position at once
print("one-hot @ E == E[ids] == nn.Embedding(ids):", lookup_same)
print("W =")
print(matrix(W))
print("np.allclose(out[2], x[:3].mean(axis=0)) =", np.allclose(out[2], x[:3].mean(axis=0)))
plot("lesson1_1_average", heat(W, CHARS, CHARS))

# %% step query_key
# feature 0: "in the sky", feature 1: "a place or a direction"
KEYS = np.array([[0.1, 0.9], [0.0, 1.0], [0.9, 0.1], [1.0, 0.0], [0.8, 0.2]])  # (T, 2)
q = np.array([1.0, 0.0])  # the query of 光: it looks for things in the sky
scores = KEYS @ q  # (T,): one dot product per key
w = ref.softmax(scores)
w5 = ref.softmax(5 * scores)
mixed = w @ x  # (D,): what 光 gathers, weights × values as in step 1
print("scores          ", labeled(CHARS, scores))
print("softmax(scores) ", labeled(CHARS, w))
print("softmax(5 * s)  ", labeled(CHARS, w5))
plot("lesson1_2_scores", bars({"softmax(s)": w, "softmax(5 s)": w5}, CHARS))

# %% step values
rng = np.random.default_rng([SEED, 2])
W_v = rng.standard_normal((D, D)) / 2  # (D, D): the value projection, random until trained
v = x @ W_v  # (T, D): one value per character, made from its x of step 1
got = w @ v  # (D,): what 光 receives: step 2's weights × the values
v_new = v.copy()
v_new[3] += 1.0  # 月 hands over another vector; its key, and so every weight, stays
moved = w @ v_new - got  # (D,): how far each number of 光's output moved
echo = w @ KEYS  # what 光 would receive if the keys were handed over
print("v = x @ W_v =")
print(matrix(v))
print("w @ v              =", matrix(got, indent=""))
print("w @ v_new - w @ v  =", matrix(moved, 3, indent=""))
print("w[3]               =", round(float(w[3]), 3))
print("w @ KEYS           =", matrix(echo, indent=""))

# %% step causal_mask
rng = np.random.default_rng([SEED, 3])
q, k = rng.standard_normal((2, T, 8))  # (T, d) each: random queries and keys, d = 8
s = q @ k.T / np.sqrt(8)  # (T, T): row t holds query t's scores; why / √8: step 5
mask = np.tril(np.ones((T, T), dtype=bool))  # True = may attend
s = np.where(mask, s, -np.inf)  # the future gets -inf, and exp(-inf) = 0
a = ref.softmax(s)  # (T, T)
print(matrix(a))
print("a.sum(axis=1) =", a.sum(axis=1).round(6).tolist())
plot("lesson1_4_causal", heat(a, CHARS, CHARS))

# %% step sqrt_d
rows, raw_max, scaled_max, grads = [], [], [], {}
for d in (16, 64, 256, 1024):
    rng = np.random.default_rng([SEED, 4, d])
    qs, ks = rng.standard_normal((2, 400, T, d))  # 400 random sequences, (400, T, d) each
    s = qs @ ks.swapaxes(-1, -2)  # (400, T, T)
    raw = ref.softmax(s).max(axis=-1).mean()  # how much of a row its largest weight takes
    scaled = ref.softmax(s / np.sqrt(d)).max(axis=-1).mean()
    raw_max.append(raw)
    scaled_max.append(scaled)
    upstream = torch.from_numpy(rng.standard_normal(s.shape))  # a random gradient from above
    for name, z in (("raw", s), ("scaled", s / np.sqrt(d))):
        z = torch.tensor(z, requires_grad=True)
        torch.softmax(z, dim=-1).backward(upstream)  # z.grad: the gradient for the scores
        grads[d, name] = z.grad.abs().mean().item()
    stds = f"{s.std():.2f}", f"{np.sqrt(d):.2f}", f"{(s / np.sqrt(d)).std():.2f}"
    grad = f"{grads[d, 'raw']:.1e}", f"{grads[d, 'scaled']:.1e}"
    rows.append((d, *stds, f"{raw:.2f}", f"{scaled:.2f}", *grad))
head = ["d", "s.std()", "√d", "(s/√d).std()", "max raw", "max /√d", "grad raw", "grad /√d"]
print(table(head, rows))
fade = grads[16, "raw"] / grads[1024, "raw"]  # how much the raw gradient shrank
largest = {"unscaled": raw_max, "/√d": scaled_max}
plot("lesson1_5_sqrt_d", bars(largest, ["16", "64", "256", "1024"]))

# %% step full_head
import torch.nn.functional as F

rng = np.random.default_rng([SEED, 5])
d_model, d_head = 16, 8
X = rng.standard_normal((T, d_model)).astype(np.float32)  # (T, d_model): the input
W_q, W_k, W_v = (rng.standard_normal((3, d_model, d_head)) / 4).astype(np.float32)
Q, K, V = X @ W_q, X @ W_k, X @ W_v  # 1. project: (T, d_head) each
S = Q @ K.T  # 2. score: (T, T)
S = S / np.sqrt(d_head)  # 3. scale
S = np.where(mask, S, -np.inf)  # 4. mask
A = ref.softmax(S)  # 5. softmax: each row sums to 1
out = A @ V  # 6. weights × values, as in step 3: (T, d_head)
theirs = F.scaled_dot_product_attention(*map(torch.from_numpy, (Q, K, V)), is_causal=True)
diff = np.abs(out - theirs.numpy()).max()
print("X", X.shape, "-> Q, K, V", Q.shape, "-> out", out.shape)
print(f"diff = max|out - theirs| = {diff:.1e}  (float32)")
plot("lesson1_6_head", heat(A, CHARS, CHARS))

# %% step learned
LR = 0.02  # the learning rate: how big a step
Wq = torch.tensor(W_q, requires_grad=True)  # (d_model, d_head): step 6's W_q, to be learned
x_light, K_t = torch.from_numpy(X[4]), torch.from_numpy(K)  # the input of 光; the keys


def light_row(Wq):
    """光's attention weights (T,) for the query matrix Wq."""
    return torch.softmax((x_light @ Wq) @ K_t.T / np.sqrt(d_head), dim=-1)


learned = [round(light_row(Wq)[3].item(), 3)]  # the weight 光 gives 月
for _ in range(2):
    loss = -torch.log(light_row(Wq)[3])  # small when 光 takes what 月 hands over
    loss.backward()  # Wq.grad: the way the loss rises (W_q steps the other way)
    with torch.no_grad():
        Wq -= LR * Wq.grad  # one step of gradient descent
        Wq.grad.zero_()
    learned.append(round(light_row(Wq)[3].item(), 3))
print("Wq.grad.shape =", tuple(Wq.grad.shape))
print("the weight of 月 in 光's row, step by step:", learned)
dW = np.abs(Wq.detach().numpy() - W_q).max()  # the largest change of any entry
print(f"dW = max|Wq - W_q| = {dW:.3f}")

# %% step cost
rows = [
    (f"{n:,}", f"{n * n:,}", f"{n * n * 4 / 2**20:,.0f} MiB")
    for n in (1_000, 2_000, 4_000, 8_000, 128_000)
]
print(table(["T", "T × T", "float32"], rows))

# %% step recap

# %% exercise query answer=w
q = np.array([1.0, 0.0])  # TODO: a query that looks for places and directions
w = ref.softmax(KEYS @ q)
print(labeled(CHARS, w))

# %% solution query
q = np.array([0.0, 1.0])  # feature 1: a place or a direction
w = ref.softmax(KEYS @ q)
print(labeled(CHARS, w))
top = [CHARS[i] for i in np.argsort(-w)[:2]]

# %% mistake query both
q = np.array([1.0, 1.0])
w = ref.softmax(KEYS @ q)
print(labeled(CHARS, w))

# %% exercise no_mask answer=A_all
S_all = Q @ K.T / np.sqrt(d_head)  # the head of step 6
S_all = np.where(mask, S_all, -np.inf)  # TODO: attend to every position
A_all = ref.softmax(S_all)
out_all = A_all @ V
theirs = F.scaled_dot_product_attention(*map(torch.from_numpy, (Q, K, V)), is_causal=False)
print(matrix(A_all))
print(f"max|out_all - theirs| = {np.abs(out_all - theirs.numpy()).max():.1e}")

# %% solution no_mask
S_all = Q @ K.T / np.sqrt(d_head)  # no mask: every query sees every key
A_all = ref.softmax(S_all)
out_all = A_all @ V
theirs = F.scaled_dot_product_attention(*map(torch.from_numpy, (Q, K, V)), is_causal=False)
print(matrix(A_all))
print(f"max|out_all - theirs| = {np.abs(out_all - theirs.numpy()).max():.1e}")
future = int((np.triu(A_all, 1) > 0).sum())
last_row_same = bool(np.allclose(out_all[-1], out[-1], atol=1e-6))

# %% mistake no_mask flipped
S_all = Q @ K.T / np.sqrt(d_head)
S_all = np.where(~mask, S_all, -np.inf)
A_all = ref.softmax(S_all)
print(matrix(A_all))

# %% exercise timing answer=times compare=structure
import time

rng = np.random.default_rng([SEED, 103])
times = {}
for n in TIMED[:1]:  # TODO: time every n in TIMED
    q_n, k_n, v_n = rng.standard_normal((3, n, 8)).astype(np.float32)  # (n, 8) each
    start = time.perf_counter()
    ref.scaled_dot_product_attention(q_n, k_n, v_n, is_causal=True)
    times[n] = time.perf_counter() - start
print(table(["T", "ms"], [(n, f"{t * 1e3:.1f}") for n, t in times.items()]))

# %% solution timing
import time

rng = np.random.default_rng([SEED, 103])
times = {}
for n in TIMED:
    q_n, k_n, v_n = rng.standard_normal((3, n, 8)).astype(np.float32)  # (n, 8) each
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        ref.scaled_dot_product_attention(q_n, k_n, v_n, is_causal=True)
        runs.append(time.perf_counter() - start)
    times[n] = float(np.median(runs))
ratio = times[TIMED[-1]] / times[TIMED[-2]]  # one doubling of T
print(table(["T", "ms"], [(n, f"{t * 1e3:.1f}") for n, t in times.items()]))
print(f"ratio = {ratio:.1f}")


# %% exercise head grade=scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=False):
    """Q (T, d), K (S, d), V (S, d_v) -> (T, d_v). mask=True: query t sees keys 0..t."""
    raise NotImplementedError("TODO: score, scale, mask, softmax, weighted sum")


# %% solution head
def scaled_dot_product_attention(Q, K, V, mask=False):
    """Q (T, d), K (S, d), V (S, d_v) -> (T, d_v). mask=True: query t sees keys 0..t."""
    S = Q @ K.T / np.sqrt(Q.shape[-1])  # (T, S)
    if mask:
        S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    S = S - S.max(axis=-1, keepdims=True)  # exp never overflows
    A = np.exp(S)
    A = A / A.sum(axis=-1, keepdims=True)  # (T, S): each row sums to 1
    return A @ V


# %% mistake head softmax_axis
def scaled_dot_product_attention(Q, K, V, mask=False):
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask:
        S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(axis=0, keepdims=True))
    A = A / A.sum(axis=0, keepdims=True)  # over the queries: the wrong axis
    return A @ V


# %% exercise heatmap answer=drawn
from matplotlib.figure import Figure

fig = Figure(figsize=(4, 4))
ax = fig.subplots()
# TODO: draw A of step 6 with ax.imshow, the characters on both axes, and a colour bar
drawn = {  # what the check reads from your figure
    "cells": [im.get_array() for im in ax.images],
    "keys": [label.get_text() for label in ax.get_xticklabels()],
    "queries": [label.get_text() for label in ax.get_yticklabels()],
    "colour bar": len(fig.axes) > 1,
}
plot("lesson1_mine", lambda: fig)

# %% solution heatmap
from matplotlib.figure import Figure

fig = Figure(figsize=(4, 4))
ax = fig.subplots()
im = ax.imshow(A, vmin=0, vmax=1, cmap="viridis")  # one cell per weight, 0 to 1
ax.set_xticks(range(T), CHARS)  # column s: key s
ax.set_yticks(range(T), CHARS)  # row t: query t
ax.set(xlabel="key", ylabel="query", title="A")
fig.colorbar(im, ax=ax)  # which colour is which weight
drawn = {
    "cells": [im.get_array() for im in ax.images],
    "keys": [label.get_text() for label in ax.get_xticklabels()],
    "queries": [label.get_text() for label in ax.get_yticklabels()],
    "colour bar": len(fig.axes) > 1,
}
plot("lesson1_mine", lambda: fig)

# %% mistake heatmap transposed
from matplotlib.figure import Figure

fig = Figure(figsize=(4, 4))
ax = fig.subplots()
im = ax.imshow(A.T, vmin=0, vmax=1)
ax.set_xticks(range(T), CHARS)
ax.set_yticks(range(T), CHARS)
fig.colorbar(im, ax=ax)
drawn = {
    "cells": [im.get_array() for im in ax.images],
    "keys": [label.get_text() for label in ax.get_xticklabels()],
    "queries": [label.get_text() for label in ax.get_yticklabels()],
    "colour bar": len(fig.axes) > 1,
}
